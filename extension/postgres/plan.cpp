// optdp for PostgreSQL: the planner hook that takes the constant parameters
// out of the per-row work of the sums and the counts.
//
// nodeAgg evaluates every argument of an aggregate call on every row, the
// constants included: for staircase_sum(x, eps, lower, upper) that is three
// steps of the expression interpreter per row, which cost 2.5-4% of a serial
// sum's CPU time over 2M rows, where one costs about 1% (bench/README.md,
// "The sums' parameters as one array"). So, once PostgreSQL has planned a
// statement:
// - a call of staircase_sum or laplace_sum over a float8 x whose 2 or 3
//   parameters are all non-NULL float8 constants becomes a call of the same
//   aggregate's form (x float8, params float8[]) (sql/75-packed.sql), with the
//   parameters as one constant array in their order. That form has the same
//   transition, combine and final functions;
// - a call of private_count or gaussian_count whose parameter (its last
//   argument) is a non-NULL float8 constant keeps its aggregate, and the
//   parameter becomes its direct argument (Aggref->aggdirectargs), which
//   nodeAgg evaluates once per group for the final function and never per
//   row; the transition function gets the rows' arguments alone (none, or x),
//   as count_rows_trans (aggregate.hpp) expects (bench/README.md, "The
//   counts' parameter as a direct argument").
// read_call (optdp_pg.cpp) reads the array as the parameters it holds and a
// direct argument as the call's last, so the admission, the charge, the state
// and the release are the same, and so are the messages. The plan is the
// engine's own: only the Aggref's function and arguments change, never which
// rows are read or what is computed from them; the admission (release.cpp)
// then checks the plan as it will run.
//
// Only a module loaded when the statement is planned rewrites it: with optdp
// in shared_preload_libraries every statement, otherwise those planned after
// the backend's first use of optdp. Calls whose parameters are query
// parameters (a generic plan), NULL or of other forms (cost, numeric x) keep
// their form: only their speed differs.
#include <cstdint>
#include <cstring>

#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "access/htup_details.h"
#include "catalog/dependency.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
}

namespace optdp_pg {
namespace {

planner_hook_type previous_planner = nullptr;

// The functions of the aggregate fn that nodeAgg runs, and its state.
struct AggFunctions {
  Oid transtype, combinefn, finalfn;
};

bool agg_functions(Oid fn, AggFunctions& out) {
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(fn));
  if (!HeapTupleIsValid(tuple)) return false;
  const auto* g = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple));
  out = {g->aggtranstype, g->aggcombinefn, g->aggfinalfn};
  ReleaseSysCache(tuple);
  return true;
}

// Whether fn is a member of optdp's extension (never found by search_path:
// a user's aggregate of the same name and arguments is not).
bool optdp_member(Oid fn) {
  const Oid optdp = get_extension_oid("optdp", true);
  return OidIsValid(optdp) && getExtensionOfObject(ProcedureRelationId, fn) == optdp;
}

// Whether a is a call that the hook may rewrite: a plain aggregate computed
// from rows, not from partial states (the Finalize Aggregate of a parallel
// plan keeps its form, and read_call follows it to its partial call, which
// has the parameters), without ORDER BY, DISTINCT or direct arguments, whose
// arguments are all its own (no resjunk entry).
bool plain_call(const Aggref* a) {
  if (a->aggkind != AGGKIND_NORMAL || DO_AGGSPLIT_COMBINE(a->aggsplit) || a->aggorder != NIL ||
      a->aggdistinct != NIL || a->aggdirectargs != NIL)
    return false;
  ListCell* lc;
  foreach (lc, a->args)
    if (static_cast<const TargetEntry*>(lfirst(lc))->resjunk) return false;
  return true;
}

// Argument i of the plain call a when it is a non-NULL float8 constant, else nullptr.
const Const* float8_argument(const Aggref* a, int i) {
  const Node* e = reinterpret_cast<const Node*>(static_cast<const TargetEntry*>(list_nth(a->args, i))->expr);
  if (!IsA(e, Const)) return nullptr;
  const auto* c = reinterpret_cast<const Const*>(e);
  return c->consttype == FLOAT8OID && !c->constisnull ? c : nullptr;
}

// The form (x float8, params float8[]) of the aggregate fn, when fn is
// optdp's staircase_sum or laplace_sum over float8 x and 2 or 3 float8
// parameters: the aggregate of the same name and schema, of optdp's
// extension, with the same state, combine and final functions (and a
// transition function of the same C symbol, sql/75-packed.sql).
// InvalidOid otherwise.
Oid packed_form(Oid fn) {
  HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
  if (!HeapTupleIsValid(tuple)) return InvalidOid;
  const auto* p = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple));
  bool candidate = p->prokind == PROKIND_AGGREGATE && (p->pronargs == 3 || p->pronargs == 4) &&
                   (strcmp(NameStr(p->proname), "staircase_sum") == 0 || strcmp(NameStr(p->proname), "laplace_sum") == 0);
  for (int i = 0; candidate && i < p->pronargs; ++i) candidate = p->proargtypes.values[i] == FLOAT8OID;
  NameData name = p->proname;
  const Oid ns = p->pronamespace;
  ReleaseSysCache(tuple);
  if (!candidate) return InvalidOid;
  Oid types[2] = {FLOAT8OID, FLOAT8ARRAYOID};
  oidvector* args = buildoidvector(types, 2);
  tuple = SearchSysCache3(PROCNAMEARGSNSP, NameGetDatum(&name), PointerGetDatum(args), ObjectIdGetDatum(ns));
  if (!HeapTupleIsValid(tuple)) return InvalidOid;
  const Oid packed = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple))->oid;
  ReleaseSysCache(tuple);
  AggFunctions a, b;
  if (!optdp_member(fn) || !optdp_member(packed) || !agg_functions(fn, a) || !agg_functions(packed, b) ||
      a.transtype != b.transtype || a.combinefn != b.combinefn || a.finalfn != b.finalfn)
    return InvalidOid;
  return packed;
}

// The plain call a (plain_call), in its packed form when it has one
// (packed_form) and all its parameters are non-NULL float8 constants.
void pack_call(Aggref* a) {
  const int n = list_length(a->args);
  if (n != 3 && n != 4) return;
  Datum values[3];
  for (int i = 1; i < n; ++i) {
    const Const* c = float8_argument(a, i);
    if (c == nullptr) return;
    values[i - 1] = c->constvalue;
  }
  const Oid packed = packed_form(a->aggfnoid);
  if (!OidIsValid(packed)) return;
  ArrayType* array = construct_array(values, n - 1, FLOAT8OID, sizeof(double), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
  Const* c = makeConst(FLOAT8ARRAYOID, -1, InvalidOid, -1, PointerGetDatum(array), false, false);
  TargetEntry* x = static_cast<TargetEntry*>(linitial(a->args));
  a->args = list_make2(x, makeTargetEntry(reinterpret_cast<Expr*>(c), 2, nullptr, false));
  a->aggargtypes = list_make2_oid(FLOAT8OID, FLOAT8ARRAYOID);
  a->aggfnoid = packed;
}

// Whether fn is optdp's private_count or gaussian_count whose last argument is
// its float8 parameter: (alpha) or (x anyelement, alpha), and gaussian_count's
// (rho) or (x, rho).
bool direct_count(Oid fn) {
  HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
  if (!HeapTupleIsValid(tuple)) return false;
  const auto* p = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple));
  const bool candidate =
      p->prokind == PROKIND_AGGREGATE && (p->pronargs == 1 || p->pronargs == 2) &&
      p->proargtypes.values[p->pronargs - 1] == FLOAT8OID &&
      (strcmp(NameStr(p->proname), "private_count") == 0 || strcmp(NameStr(p->proname), "gaussian_count") == 0);
  ReleaseSysCache(tuple);
  return candidate && optdp_member(fn);
}

// The plain call a of a count (direct_count): its parameter, when it is a
// non-NULL float8 constant, moved from the call's arguments to its direct
// arguments, which nodeAgg evaluates once per group for the final function,
// not once per row. nodeAgg passes the value on
// to the final function as a second argument, which the counts' finals
// (non-strict, of one declared argument) never read: they read the call, as
// the transition does, through read_call. A transition state that the
// planner shares with a call of the same transition and arguments that keeps
// its form (private_count_state) counts the same rows either way.
void direct_call(Aggref* a) {
  const int n = list_length(a->args);
  if ((n != 1 && n != 2) || list_length(a->aggargtypes) != n) return;
  if (float8_argument(a, n - 1) == nullptr || !direct_count(a->aggfnoid)) return;
  a->aggdirectargs = list_make1(static_cast<TargetEntry*>(list_nth(a->args, n - 1))->expr);
  a->args = list_truncate(list_copy(a->args), n - 1);
  a->aggargtypes = list_truncate(list_copy(a->aggargtypes), n - 1);
}

bool pack_walker(Node* node, void* context) {
  if (node == nullptr) return false;
  if (IsA(node, Aggref)) {
    // A call is rewritten at most once: a packed sum's last argument is an
    // array, and a count with a direct argument is no longer plain_call.
    Aggref* a = reinterpret_cast<Aggref*>(node);
    if (plain_call(a)) {
      pack_call(a);
      direct_call(a);
    }
    return false;
  }
  return expression_tree_walker(node, walker_cast(pack_walker), context);
}

void pack_plan(Plan* plan);

void pack_plans(List* plans) {
  ListCell* lc;
  foreach (lc, plans) pack_plan(static_cast<Plan*>(lfirst(lc)));
}

// Every Agg node of the plan tree (Aggrefs sit only in Agg nodes' target
// lists and quals once the plan is final).
void pack_plan(Plan* plan) {
  if (plan == nullptr) return;
  if (IsA(plan, Agg)) {
    pack_walker(reinterpret_cast<Node*>(plan->targetlist), nullptr);
    pack_walker(reinterpret_cast<Node*>(plan->qual), nullptr);
  }
  pack_plan(plan->lefttree);
  pack_plan(plan->righttree);
  switch (nodeTag(plan)) {
    case T_Append: pack_plans(reinterpret_cast<Append*>(plan)->appendplans); break;
    case T_MergeAppend: pack_plans(reinterpret_cast<MergeAppend*>(plan)->mergeplans); break;
    case T_SubqueryScan: pack_plan(reinterpret_cast<SubqueryScan*>(plan)->subplan); break;
    case T_CustomScan: pack_plans(reinterpret_cast<CustomScan*>(plan)->custom_plans); break;
    case T_BitmapAnd: pack_plans(reinterpret_cast<BitmapAnd*>(plan)->bitmapplans); break;
    case T_BitmapOr: pack_plans(reinterpret_cast<BitmapOr*>(plan)->bitmapplans); break;
    default: break;
  }
}

PlannedStmt* pack_planner(Query* parse, const char* query_string, int cursor_options, ParamListInfo bound) {
  PlannedStmt* stmt = previous_planner ? previous_planner(parse, query_string, cursor_options, bound)
                                       : standard_planner(parse, query_string, cursor_options, bound);
  if (stmt != nullptr) {
    pack_plan(stmt->planTree);
    pack_plans(stmt->subplans);
  }
  return stmt;
}

}  // namespace

void install_plan_hook() {
  previous_planner = planner_hook;
  planner_hook = pack_planner;
}

}  // namespace optdp_pg
