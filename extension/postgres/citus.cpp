// optdp for PostgreSQL under Citus: the optdp call behind Citus's
// worker_partial_agg and coord_combine_agg (citus.hpp says why).
#include <cstring>

#include "postgres/citus.hpp"
#include "postgres/common.hpp"

extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/nodeAgg.h"
#include "nodes/execnodes.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pg_list.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/typcache.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

namespace optdp_pg {
namespace {

// One coord_combine_agg call of an execution and the worker query's call it
// finalises. The node lives in TopMemoryContext; the Aggrefs in the
// execution's memory, which outlives the entry (forgotten at ExecutorEnd and
// at the end of the execution's (sub)transaction: an execution aborted with
// its subtransaction never reaches ExecutorEnd, and its EState's address can
// be another execution's later).
struct Remembered {
  EState* estate;
  Aggref* coord;
  Aggref* worker;
  SubTransactionId subid;
  Remembered* next;
};
Remembered* remembered = nullptr;

// The parameters' cache of one optdp function (fn_oid) under one of Citus's
// Aggrefs in one execution (aggregate.hpp, citus_cache_new): the entry and
// its zeroed bytes in one TopMemoryContext allocation, forgotten with the
// execution.
struct Cached {
  EState* estate;
  Aggref* aggref;
  Oid fn;
  SubTransactionId subid;
  Cached* next;
};
Cached* cached = nullptr;

bool in_pg_catalog(Oid fn, const char* name) {
  if (get_func_namespace(fn) != PG_CATALOG_NAMESPACE) return false;
  char* n = get_func_name(fn);
  return n != nullptr && std::strcmp(n, name) == 0;
}

Expr* arg_expr(const Aggref* a, int i) {
  if (a->args == NIL || list_length(a->args) <= i) return nullptr;
  return static_cast<TargetEntry*>(list_nth(a->args, i))->expr;
}

// The worker_partial_agg calls of Citus's worker query, in order: its
// DistributedPlan is an extensible node in the CustomScan's custom_private,
// readable only through its text form (Citus's own output function), in
// which each call is an {AGGREF ...} of standard nodes.
List* worker_calls(CustomScan* scan) {
  List* calls = NIL;
  const char* text = nodeToString(scan->custom_private);
  for (const char* p = std::strstr(text, "{AGGREF "); p != nullptr; p = std::strstr(p + 1, "{AGGREF ")) {
    // the balanced braces from p (outToken escapes braces in names with '\')
    int depth = 0;
    const char* q = p;
    for (; *q; ++q) {
      if (*q == '\\' && q[1]) {
        ++q;
        continue;
      }
      if (*q == '{') ++depth;
      if (*q == '}' && --depth == 0) break;
    }
    if (*q == 0) break;
    char* one = pnstrdup(p, q - p + 1);
    Node* n = static_cast<Node*>(stringToNode(one));
    // The worker query is a parse tree: fold its constant expressions as the
    // planner folds the call's (a literal 1.0 is float8(1.0::numeric) here).
    if (n != nullptr) n = eval_const_expressions(nullptr, n);
    Oid inner;
    if (n != nullptr && IsA(n, Aggref) && citus_aggregate(reinterpret_cast<Aggref*>(n), &inner) == CitusAgg::WorkerPartial)
      calls = lappend(calls, n);
  }
  return calls;
}

// The fields of a constant record, as constants.
List* record_fields(const Const* c) {
  HeapTupleHeader header = DatumGetHeapTupleHeader(c->constvalue);
  TupleDesc desc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(header), HeapTupleHeaderGetTypMod(header));
  HeapTupleData tuple;
  tuple.t_len = HeapTupleHeaderGetDatumLength(header);
  ItemPointerSetInvalid(&tuple.t_self);
  tuple.t_tableOid = InvalidOid;
  tuple.t_data = header;
  const int n = desc->natts;
  Datum* values = static_cast<Datum*>(palloc(n * sizeof(Datum)));
  bool* nulls = static_cast<bool*>(palloc(n * sizeof(bool)));
  heap_deform_tuple(&tuple, desc, values, nulls);
  List* fields = NIL;
  for (int i = 0; i < n; ++i) {
    Form_pg_attribute att = TupleDescAttr(desc, i);
    fields = lappend(fields, makeConst(att->atttypid, att->atttypmod, att->attcollation, att->attlen,
                                       nulls[i] ? 0 : datumCopy(values[i], att->attbyval, att->attlen), nulls[i],
                                       att->attbyval));
  }
  ReleaseTupleDesc(desc);
  return fields;
}

bool find_custom_scan(PlanState* ps, void* out) {
  if (ps == nullptr) return false;
  if (IsA(ps, CustomScanState)) {
    *static_cast<CustomScan**>(out) = reinterpret_cast<CustomScan*>(ps->plan);
    return true;
  }
  using Walker = bool (*)();
  return planstate_tree_walker(ps, reinterpret_cast<Walker>(reinterpret_cast<void (*)(void)>(find_custom_scan)), out);
}

}  // namespace

CitusAgg citus_aggregate(const Aggref* a, Oid* inner) {
  *inner = InvalidOid;
  CitusAgg kind;
  if (in_pg_catalog(a->aggfnoid, "worker_partial_agg"))
    kind = CitusAgg::WorkerPartial;
  else if (in_pg_catalog(a->aggfnoid, "coord_combine_agg"))
    kind = CitusAgg::CoordCombine;
  else
    return CitusAgg::None;
  Expr* e = arg_expr(a, 0);
  if (e != nullptr && IsA(e, Const)) {
    const Const* c = reinterpret_cast<const Const*>(e);
    if (!c->constisnull && (c->consttype == OIDOID || c->consttype == REGPROCEDUREOID))
      *inner = DatumGetObjectId(c->constvalue);
  }
  return kind;
}

Aggref* citus_call(EState* estate, Aggref* a) {
  Oid inner;
  switch (citus_aggregate(a, &inner)) {
    case CitusAgg::None: return a;
    case CitusAgg::CoordCombine:
      for (Remembered* r = remembered; r; r = r->next)
        if (r->estate == estate && r->coord == a) return citus_call(estate, r->worker);
      return nullptr;
    case CitusAgg::WorkerPartial: break;
  }
  Expr* packed = arg_expr(a, 1);
  if (!OidIsValid(inner) || packed == nullptr || list_length(a->args) != 2) return nullptr;
  // worker_partial_agg(agg, arg) for one argument, (agg, ROW(arg, ...)) for
  // more; a ROW of constants only is folded into one constant record
  List* exprs;
  if (IsA(packed, RowExpr))
    exprs = reinterpret_cast<RowExpr*>(packed)->args;
  else if (IsA(packed, Const) && exprType(reinterpret_cast<Node*>(packed)) == RECORDOID &&
           !reinterpret_cast<Const*>(packed)->constisnull && get_func_nargs(inner) > 1)
    exprs = record_fields(reinterpret_cast<Const*>(packed));
  else
    exprs = list_make1(packed);
  Aggref* call = makeNode(Aggref);
  *call = *a;
  call->aggfnoid = inner;
  call->args = NIL;
  call->aggargtypes = NIL;
  ListCell* lc;
  int i = 0;
  foreach (lc, exprs) {
    Expr* e = static_cast<Expr*>(lfirst(lc));
    call->args = lappend(call->args, makeTargetEntry(e, ++i, nullptr, false));
    call->aggargtypes = lappend_oid(call->aggargtypes, exprType(reinterpret_cast<Node*>(e)));
  }
  return call;
}

bool citus_find_calls(AggState* as, EState* estate) {
  CustomScan* scan = nullptr;
  find_custom_scan(&as->ss.ps, &scan);
  List* calls = scan ? worker_calls(scan) : NIL;
  // the i-th coord_combine_agg of an aggregate finalises the i-th
  // worker_partial_agg of it (Citus makes both in one walk of the query)
  List* used = NIL;
  bool all = true;
  for (int i = 0; i < as->numaggs; ++i) {
    Aggref* coord = as->peragg[i].aggref;
    Oid inner;
    if (citus_aggregate(coord, &inner) != CitusAgg::CoordCombine || !OidIsValid(inner)) continue;
    Aggref* match = nullptr;
    ListCell* lc;
    foreach (lc, calls) {
      Aggref* w = static_cast<Aggref*>(lfirst(lc));
      Oid w_inner;
      citus_aggregate(w, &w_inner);
      if (w_inner == inner && !list_member_ptr(used, w)) {
        match = w;
        break;
      }
    }
    if (match == nullptr) {
      all = false;
      continue;
    }
    used = lappend(used, match);
    auto* r = static_cast<Remembered*>(MemoryContextAllocZero(TopMemoryContext, sizeof(Remembered)));
    r->estate = estate;
    r->coord = coord;
    r->worker = match;
    r->subid = GetCurrentSubTransactionId();
    r->next = remembered;
    remembered = r;
  }
  return all;
}

namespace {

// The execution and the Aggref of a call made through Citus's wrapper, or false.
bool citus_wrapped_call(FunctionCallInfo fcinfo, EState** estate, Aggref** aggref) {
  if (fcinfo->context == nullptr || !IsA(fcinfo->context, AggState)) return false;
  *aggref = AggGetAggref(fcinfo);
  if (*aggref == nullptr) return false;
  *estate = reinterpret_cast<AggState*>(fcinfo->context)->ss.ps.state;
  return true;
}

}  // namespace

void* citus_cache_find(FunctionCallInfo fcinfo) {
  EState* estate;
  Aggref* aggref;
  if (cached == nullptr || !citus_wrapped_call(fcinfo, &estate, &aggref)) return nullptr;
  for (Cached* c = cached; c; c = c->next)
    if (c->estate == estate && c->aggref == aggref && c->fn == fcinfo->flinfo->fn_oid) return c + 1;
  return nullptr;
}

void* citus_cache_new(FunctionCallInfo fcinfo, std::size_t size) {
  EState* estate;
  Aggref* aggref;
  Oid inner;
  if (!citus_wrapped_call(fcinfo, &estate, &aggref) || citus_aggregate(aggref, &inner) == CitusAgg::None)
    return nullptr;
  // Cached is a multiple of 8 bytes: the cache after it is aligned as palloc's
  static_assert(sizeof(Cached) % MAXIMUM_ALIGNOF == 0);
  auto* c = static_cast<Cached*>(MemoryContextAllocZero(TopMemoryContext, sizeof(Cached) + size));
  c->estate = estate;
  c->aggref = aggref;
  c->fn = fcinfo->flinfo->fn_oid;
  c->subid = GetCurrentSubTransactionId();
  c->next = cached;
  cached = c;
  return c + 1;
}

void citus_forget(EState* estate) {
  remove_nodes_if(remembered, [&](const Remembered& r) { return estate == nullptr || r.estate == estate; });
  remove_nodes_if(cached, [&](const Cached& c) { return estate == nullptr || c.estate == estate; });
}

void citus_subxact(SubXactEvent event, SubTransactionId sub, SubTransactionId parent) {
  if (event == SUBXACT_EVENT_ABORT_SUB) {
    remove_nodes_if(remembered, [&](const Remembered& r) { return r.subid == sub; });
    remove_nodes_if(cached, [&](const Cached& c) { return c.subid == sub; });
  } else if (event == SUBXACT_EVENT_COMMIT_SUB) {
    for (Remembered* r = remembered; r; r = r->next)
      if (r->subid == sub) r->subid = parent;
    for (Cached* c = cached; c; c = c->next)
      if (c->subid == sub) c->subid = parent;
  }
}

bool citus_internal_backend() {
  return application_name != nullptr && std::strncmp(application_name, "citus_internal gpid=", 20) == 0;
}

}  // namespace optdp_pg
