// optdp for PostgreSQL: admission and charge of the aggregate releases before
// the first row is read, and the final functions' side of it (release.hpp
// describes the sequence; docs/boundary.md what is decided when).
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ledger_rule.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/citus.hpp"
#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "access/parallel.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/nodeAgg.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "storage/lwlock.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
}

extern "C" {
Datum optdp_select_merge_final(PG_FUNCTION_ARGS);
Datum optdp_count_merge_final(PG_FUNCTION_ARGS);
Datum optdp_staircase_merge_final(PG_FUNCTION_ARGS);
Datum optdp_laplace_merge_final(PG_FUNCTION_ARGS);
Datum optdp_gaussian_count_merge_final(PG_FUNCTION_ARGS);
Datum optdp_gaussian_sum_merge_final(PG_FUNCTION_ARGS);
Datum optdp_avg_merge_final(PG_FUNCTION_ARGS);
Datum optdp_var_merge_final(PG_FUNCTION_ARGS);
Datum optdp_stddev_merge_final(PG_FUNCTION_ARGS);
Datum optdp_quantile_merge_final(PG_FUNCTION_ARGS);
Datum optdp_levels_merge_final(PG_FUNCTION_ARGS);
}

namespace optdp_pg {
namespace {

// The final functions that release (the *_state aggregates' final functions
// ship exact states under the state key and charge nothing), with the reader
// of each one's cost.
struct Release {
  PGFunction final;
  ReleaseCost (*cost)(FunctionCallInfo);
};
constexpr Release kReleases[] = {
    {optdp_count_final, count_cost},
    {optdp_staircase_final, staircase_cost},
    {optdp_laplace_final, staircase_cost},
    {optdp_gaussian_count_final, gaussian_count_cost},
    {optdp_gaussian_sum_final, gaussian_sum_cost},
    {optdp_avg_final, avg_cost},
    {optdp_var_final, var_cost},
    {optdp_stddev_final, stddev_cost},
    {optdp_quantile_final, quantile_cost},
    {optdp_select_final, select_cost},
    {optdp_select_merge_final, select_merge_cost},
    {optdp_levels_final, levels_cost},
    // the merges' (merges.cpp: the release's final function, wrapped)
    {optdp_count_merge_final, count_cost},
    {optdp_staircase_merge_final, staircase_cost},
    {optdp_laplace_merge_final, staircase_cost},
    {optdp_gaussian_count_merge_final, gaussian_count_cost},
    {optdp_gaussian_sum_merge_final, gaussian_sum_cost},
    {optdp_avg_merge_final, avg_cost},
    {optdp_var_merge_final, var_cost},
    {optdp_stddev_merge_final, stddev_cost},
    {optdp_quantile_merge_final, quantile_cost},
    {optdp_levels_merge_final, levels_cost},
};

const Release* release_of(PGFunction final) {
  for (const Release& r : kReleases)
    if (r.final == final) return &r;
  return nullptr;
}

// One admitted release: the Aggref (of the node whose final function
// releases) in one execution (EState). precharged: charged before the scan
// and not yet taken by a final function (an aggregate without GROUP BY);
// otherwise each final function charges its own release.
struct Admission {
  EState* estate;
  Aggref* aggref;
  SubTransactionId subid;
  double epsilon, rho;
  bool precharged;
  Admission* next;
};

// An execution already admitted (ExecutorRun runs again for each FETCH of a
// cursor: admitted and charged once).
struct Admitted {
  EState* estate;
  SubTransactionId subid;
  Admitted* next;
};

Admission* admissions = nullptr;  // in TopMemoryContext
Admitted* admitted = nullptr;     // in TopMemoryContext

ExecutorRun_hook_type previous_run = nullptr;
ExecutorEnd_hook_type previous_end = nullptr;
bool installed = false;

void forget_estate(EState* estate) {
  citus_forget(estate);
  remove_nodes_if(admissions, [&](const Admission& a) { return a.estate == estate; });
  remove_nodes_if(admitted, [&](const Admitted& a) { return a.estate == estate; });
}

Admission* admission_of(EState* estate, Aggref* aggref) {
  for (Admission* a = admissions; a; a = a->next)
    if (a->estate == estate && a->aggref == aggref) return a;
  return nullptr;
}

bool was_admitted(EState* estate) {
  for (Admitted* a = admitted; a; a = a->next)
    if (a->estate == estate) return true;
  return false;
}

// Refuses a grouped release that the ledger would not allow once: the charge
// each group makes later would be refused anyway, and now no row is read.
void admit_grouped(const ReleaseCost& c) {
  connect_ledger(c.function);
  const bool seeded = backend_seeded();
  Failure f;
  run_cpp(f, c.function, [&] {
    optdp::LedgerAccount account;
    optdp::zcdp::History history;
    if (!read_ledger(account, history)) return;
    if (seeded)
      throw std::runtime_error("refused: a privacy ledger is attached, and a known seed makes the noise predictable");
    const std::string why = optdp::ledger_refusal(account, history, optdp::ledger_charge(c.epsilon, 0.0, c.rho, c.shift),
                                                  "dp_ledger_attach(total_epsilon, total_delta)");
    if (!why.empty()) throw std::runtime_error(why);
  });
  raise(f);
}

void add_admission(EState* estate, Aggref* aggref, const ReleaseCost& c, bool precharged) {
  auto* a = static_cast<Admission*>(MemoryContextAllocZero(TopMemoryContext, sizeof(Admission)));
  a->estate = estate;
  a->aggref = aggref;
  a->subid = GetCurrentSubTransactionId();
  a->epsilon = c.epsilon;
  a->rho = c.rho;
  a->precharged = precharged;
  a->next = admissions;
  admissions = a;
}

// The final function of the aggregate aggfnoid (nullptr without one).
PGFunction final_of(Oid aggfnoid) {
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
  if (!HeapTupleIsValid(tuple)) return nullptr;
  const Oid finalfn = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggfinalfn;
  ReleaseSysCache(tuple);
  if (!OidIsValid(finalfn)) return nullptr;
  FmgrInfo flinfo;
  fmgr_info(finalfn, &flinfo);
  return flinfo.fn_addr;
}

// Whether optdp.ledger_conninfo names a ledger (another server's database).
bool ledger_named() {
  const char* conninfo = GetConfigOption("optdp.ledger_conninfo", true, false);
  return conninfo != nullptr && conninfo[0] != 0;
}

// Refuses, before the scan, a release in a query that Citus sent from
// another node when this server has no ledger but its own: the coordinator's
// budget would not bind it (docs/scale.md, "On Citus"). Depends on the
// server's settings and the connection alone.
[[noreturn]] void refuse_unbound_worker(AggStatePerAgg pa) {
  const char* name = get_func_name(pa->aggref->aggfnoid);
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("%s: this server runs a query that Citus sent from another node, and optdp.ledger_conninfo "
                         "names no ledger, so the coordinator's budget would not bind the release: set it on every "
                         "worker to the coordinator's database",
                         name ? name : "optdp")));
  pg_unreachable();
}

// Whether the function fn declares an argument of a polymorphic type.
bool polymorphic_args(Oid fn) {
  HeapTuple tuple = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
  if (!HeapTupleIsValid(tuple)) return false;
  const Form_pg_proc proc = reinterpret_cast<Form_pg_proc>(GETSTRUCT(tuple));
  bool any = false;
  for (int i = 0; i < proc->pronargs; ++i) any = any || IsPolymorphicType(proc->proargtypes.values[i]);
  ReleaseSysCache(tuple);
  return any;
}

bool optdp_aggregate(Oid aggfnoid);

// Refuses, before the scan, Citus's partial plan of the optdp aggregate fn,
// with why (a fixed text): the statement alone decides, never its rows. An
// argument of a polymorphic type (an x of a type without a form of its own,
// extension/postgres/sql/65-types.sql), a release or a *_state form: Citus's
// worker_partial_agg checks the argument's type against the declared one at
// a shard's first row and fails, so the statement would fail with rows and
// return a value (a release, or a state) without them. (A *_merge runs: its
// partial states carry the nonces of the states they opened, states.cpp.)
[[noreturn]] void refuse_partial(Oid fn, const char* why) {
  const char* name = get_func_name(fn);
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s: %s", name ? name : "optdp", why)));
  pg_unreachable();
}

// Whether the Agg node makes one release per scan: no GROUP BY, no grouping sets.
bool one_per_scan(const AggState* as) {
  const Agg* plan = reinterpret_cast<const Agg*>(as->ss.ps.plan);
  return plan->aggstrategy == AGG_PLAIN && plan->groupingSets == NIL;
}

// The releases of one Agg node: parameters read and checked by the release's
// own reader, with the node as its context (as its final function will
// have), then admitted and, without GROUP BY, charged.
void admit_agg(AggState* as, EState* estate) {
  const bool plain = one_per_scan(as);
  bool citus_read = false;
  for (int i = 0; i < as->numaggs; ++i) {
    AggStatePerAgg pa = &as->peragg[i];
    if (!OidIsValid(pa->finalfn_oid)) continue;  // a partial aggregate: no release here
    const Release* r = release_of(pa->finalfn.fn_addr);
    Oid inner;
    if (r == nullptr && citus_aggregate(pa->aggref, &inner) == CitusAgg::CoordCombine && OidIsValid(inner)) {
      // Citus's combine and final step on the coordinator: the release is
      // the wrapped aggregate's, its parameters those of Citus's worker query
      // (citus.hpp), read now, before the scan.
      if (!citus_read) {
        citus_find_calls(as, estate);
        citus_read = true;
      }
      r = release_of(final_of(inner));
      // coord_combine_agg written by hand (no worker query of Citus's holds
      // the call): named by the aggregate it wraps, a release or a merge
      if (r != nullptr && citus_call(estate, pa->aggref) == nullptr) {
        const char* name = get_func_name(inner);
        ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                        errmsg("%s: cannot find the call's parameters in this plan", name ? name : "optdp")));
      }
      if (optdp_aggregate(inner) && polymorphic_args(inner))
        refuse_partial(inner,
                       "Citus cannot compute partial states of an argument of this type (only the common column "
                       "types, such as integer, double precision, numeric, text and date, have a form of their "
                       "own): cast it to one, or group by the table's distribution column");
    } else if (r != nullptr && citus_internal_backend() && !ledger_named()) {
      // A release that Citus pushed down to this worker: the budget is the
      // coordinator's, which only optdp.ledger_conninfo can reach.
      refuse_unbound_worker(pa);
    }
    if (r == nullptr || admission_of(estate, pa->aggref) != nullptr) continue;
    FmgrInfo flinfo;
    std::memset(&flinfo, 0, sizeof flinfo);
    flinfo.fn_oid = pa->finalfn_oid;
    flinfo.fn_addr = pa->finalfn.fn_addr;
    flinfo.fn_nargs = 1;
    flinfo.fn_mcxt = CurrentMemoryContext;
    LOCAL_FCINFO(fcinfo, 1);
    InitFunctionCallInfoData(*fcinfo, &flinfo, 1, InvalidOid, reinterpret_cast<Node*>(as), nullptr);
    fcinfo->args[0].value = 0;
    fcinfo->args[0].isnull = true;
    AggStatePerAgg saved = as->curperagg;
    as->curperagg = pa;  // AggGetAggref's answer, as in the final function
    const ReleaseCost c = r->cost(fcinfo);
    as->curperagg = saved;
    if (plain)
      charge_release(c.function, c.epsilon, 0.0, c.rho, c.shift);
    else
      admit_grouped(c);
    add_admission(estate, pa->aggref, c, plain);
  }
}

// Whether fn is a function of this module (optdp_pg.so): every optdp
// aggregate's transition (and combine) function is, and no other aggregate's
// is, except a user's own aggregate over optdp's support functions, which
// read_call refuses anyway.
bool in_this_module(PGFunction fn) {
  Dl_info here, there;
  if (fn == nullptr || dladdr(reinterpret_cast<void*>(&optdp_count_final), &here) == 0) return false;
  return dladdr(reinterpret_cast<void*>(fn), &there) != 0 && there.dli_fbase == here.dli_fbase;
}

// Whether the aggregate aggfnoid is optdp's, from the catalogue: its
// transition function is in this module.
bool optdp_aggregate(Oid aggfnoid) {
  HeapTuple tuple = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(aggfnoid));
  if (!HeapTupleIsValid(tuple)) return false;
  const Oid transfn = reinterpret_cast<Form_pg_aggregate>(GETSTRUCT(tuple))->aggtransfn;
  ReleaseSysCache(tuple);
  FmgrInfo flinfo;
  fmgr_info(transfn, &flinfo);
  return in_this_module(flinfo.fn_addr);
}

// The shapes of call that optdp refuses, found in the plan before the scan
// (and before any charge of the statement), so that such a statement reads
// no row: an optdp aggregate as a window function (a WindowAgg node's window
// functions), and ORDER BY or DISTINCT inside an optdp aggregate's call (an
// Agg node's transitions, whose functions are resolved already). Neither
// depends on the data, only on the statement.
bool refuse_walker(PlanState* ps, void* context) {
  if (ps == nullptr) return false;
  if (IsA(ps, WindowAggState)) {
    ListCell* lc;
    foreach (lc, reinterpret_cast<WindowAggState*>(ps)->funcs) {
      const WindowFunc* wf = static_cast<WindowFuncExprState*>(lfirst(lc))->wfunc;
      if (wf->winagg && optdp_aggregate(wf->winfnoid)) refuse_window_use();
    }
  } else if (IsA(ps, AggState)) {
    const AggState* as = reinterpret_cast<const AggState*>(ps);
    for (int i = 0; i < as->numtrans; ++i) {
      const AggStatePerTransData& t = as->pertrans[i];
      if ((t.aggref->aggorder != NIL || t.aggref->aggdistinct != NIL) && in_this_module(t.transfn.fn_addr)) {
        const char* name = get_func_name(t.aggref->aggfnoid);
        refuse_sorted_call(name ? name : "optdp");
      }
    }
  }
  using Walker = bool (*)();
  return planstate_tree_walker(ps, reinterpret_cast<Walker>(reinterpret_cast<void (*)(void)>(refuse_walker)), context);
}

bool admit_walker(PlanState* ps, void* context) {
  if (ps == nullptr) return false;
  if (IsA(ps, AggState)) admit_agg(reinterpret_cast<AggState*>(ps), static_cast<EState*>(context));
  using Walker = bool (*)();
  return planstate_tree_walker(ps, reinterpret_cast<Walker>(reinterpret_cast<void (*)(void)>(admit_walker)), context);
}

void release_run(QueryDesc* qd, ScanDirection direction, uint64 count, bool execute_once) {
  EState* estate = qd->estate;
  if (estate != nullptr && qd->planstate != nullptr && !IsParallelWorker() && !was_admitted(estate)) {
    // Marked first: an error below ends the execution, and the marks with it.
    auto* m = static_cast<Admitted*>(MemoryContextAllocZero(TopMemoryContext, sizeof(Admitted)));
    m->estate = estate;
    m->subid = GetCurrentSubTransactionId();
    m->next = admitted;
    admitted = m;
    MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
    refuse_walker(qd->planstate, estate);
    admit_walker(qd->planstate, estate);
    MemoryContextSwitchTo(old);
  }
  if (previous_run)
    previous_run(qd, direction, count, execute_once);
  else
    standard_ExecutorRun(qd, direction, count, execute_once);
}

void release_end(QueryDesc* qd) {
  forget_estate(qd->estate);
  if (previous_end)
    previous_end(qd);
  else
    standard_ExecutorEnd(qd);
}

// An execution ends with its transaction: every admission goes at its end,
// and a subtransaction's at its abort (its executions are gone).
void release_xact(XactEvent event, void*) {
  switch (event) {
    case XACT_EVENT_COMMIT:
    case XACT_EVENT_PARALLEL_COMMIT:
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
    case XACT_EVENT_PREPARE:
      remove_nodes_if(admissions, [](const Admission&) { return true; });
      remove_nodes_if(admitted, [](const Admitted&) { return true; });
      citus_forget(nullptr);
      break;
    default: break;
  }
}

void release_subxact(SubXactEvent event, SubTransactionId sub, SubTransactionId parent, void*) {
  citus_subxact(event, sub, parent);
  if (event == SUBXACT_EVENT_ABORT_SUB) {
    remove_nodes_if(admissions, [&](const Admission& a) { return a.subid == sub; });
    remove_nodes_if(admitted, [&](const Admitted& a) { return a.subid == sub; });
  } else if (event == SUBXACT_EVENT_COMMIT_SUB) {
    for (Admission* a = admissions; a; a = a->next)
      if (a->subid == sub) a->subid = parent;
    for (Admitted* a = admitted; a; a = a->next)
      if (a->subid == sub) a->subid = parent;
  }
}

// The cluster's count of ended transactions that wrote (PostgreSQL's own
// test of whether a snapshot is still current: it moves whenever what a new
// snapshot sees could differ).
std::uint64_t transactions_ended() {
  LWLockAcquire(ProcArrayLock, LW_SHARED);
  const std::uint64_t n = ShmemVariableCache->xactCompletionCount;
  LWLockRelease(ProcArrayLock);
  return n;
}

// The last time this backend's ledger connection found no ledger: the count
// of ended transactions just before it asked. While no transaction has ended
// since, no ledger can have been attached (attaching is a committed write),
// so a group's release skips the round trip; any transaction that ends, a
// dp_ledger_attach included, makes the next release ask again. Only for the
// default ledger connection (this cluster): optdp.ledger_conninfo can name
// another server, whose transactions this cannot see.
bool no_ledger_known = false;
std::uint64_t no_ledger_as_of = 0;

bool ledger_in_this_cluster() {
  const char* conninfo = GetConfigOption("optdp.ledger_conninfo", true, false);
  return conninfo == nullptr || conninfo[0] == 0;
}

// Charges a release made after the scan (a group's, a rescan's) on the
// ledger as it is now.
void charge_now(const ReleaseCost& cost) {
  const bool here = ledger_in_this_cluster();
  const std::uint64_t before = transactions_ended();
  if (here && no_ledger_known && before == no_ledger_as_of) return;
  no_ledger_known = false;
  if (!ledger_attached(cost.function)) {
    no_ledger_known = here;
    no_ledger_as_of = before;
    return;
  }
  charge_release(cost.function, cost.epsilon, 0.0, cost.rho, cost.shift);
}

}  // namespace

void install_release_hooks() {
  if (installed) return;
  installed = true;
  previous_run = ExecutorRun_hook;
  ExecutorRun_hook = release_run;
  previous_end = ExecutorEnd_hook;
  ExecutorEnd_hook = release_end;
  RegisterXactCallback(release_xact, nullptr);
  RegisterSubXactCallback(release_subxact, nullptr);
}

void release_charge(FunctionCallInfo fcinfo, const ReleaseCost& cost) {
  AggState* as = fcinfo->context && IsA(fcinfo->context, AggState) ? reinterpret_cast<AggState*>(fcinfo->context)
                                                                      : nullptr;
  if (as == nullptr)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s: must be called as an aggregate",
                                                                   cost.function)));
  EState* estate = as->ss.ps.state;
  Aggref* aggref = AggGetAggref(fcinfo);
  Admission* a = admission_of(estate, aggref);
  if (IsParallelWorker()) {
    // The leader admitted every release of the statement in its ExecutorRun,
    // before it started the workers, and charged each aggregate without
    // GROUP BY; such an Agg runs in one participant only (under a
    // single-copy Gather, or as one subplan of a Parallel Append), so its
    // first release here is the one the leader charged.
    if (a == nullptr && one_per_scan(as)) {
      add_admission(estate, aggref, cost, false);
      return;
    }
  } else {
    if (a == nullptr || a->epsilon != cost.epsilon || a->rho != cost.rho)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                      errmsg("%s: this release was not admitted before its statement read a row (optdp must be "
                             "loaded when the statement starts), so nothing is released",
                             cost.function)));
    if (a->precharged) {
      a->precharged = false;
      return;
    }
  }
  // A group's release (or a rescan's): the ledger as it is now, so that a
  // ledger attached while the statement runs charges its later releases.
  charge_now(cost);
}

}  // namespace optdp_pg
