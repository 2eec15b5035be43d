// optdp for PostgreSQL under Citus (citus.cpp): the optdp call behind the
// aggregates Citus puts in its plans. Citus is optional and never linked:
// its two aggregates are known by their names in pg_catalog.
//
// When a query over a distributed table is not pushed down whole, Citus runs
// on each shard worker_partial_agg(agg, arg) or worker_partial_agg(agg,
// ROW(arg, ...)), which calls agg's transition function and ships the state
// as text, and on the coordinator coord_combine_agg(agg, state_text, NULL),
// which calls agg's combine and final functions. Neither call holds the
// parameters where optdp reads them (the Aggref of the call):
//   - on a worker, the parameters are inside worker_partial_agg's argument;
//   - on the coordinator, they are only in Citus's worker query, which
//     optdp's ExecutorRun hook reads from Citus's CustomScan before the scan
//     (citus_find_calls) and remembers for the statement (docs/scale.md).
#pragma once

#include <cstddef>

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "access/xact.h"
#include "nodes/primnodes.h"
}

namespace optdp_pg {

enum class CitusAgg { None, WorkerPartial, CoordCombine };

// Which of Citus's aggregates a calls (None for any other), and the OID of
// the aggregate it wraps (its first argument, a constant; InvalidOid if not).
CitusAgg citus_aggregate(const Aggref* a, Oid* inner);

// The optdp call behind a: for worker_partial_agg, an Aggref of the wrapped
// aggregate over the wrapped arguments; for coord_combine_agg, the call the
// hook remembered for it in this execution (nullptr if none); otherwise a.
Aggref* citus_call(EState* estate, Aggref* a);

// The hook's side, before the scan: the coordinator's Agg node `as` calls
// coord_combine_agg over the rows of Citus's CustomScan below it; remembers,
// for each such call of an optdp aggregate, the worker query's
// worker_partial_agg call of the same aggregate in the same order. Returns
// false if the worker query could not be read (the caller refuses).
bool citus_find_calls(AggState* as, EState* estate);

// Forgets what was remembered for estate (nullptr: everything), and the
// parameters' caches of its calls (aggregate.hpp, citus_cache_new).
void citus_forget(EState* estate);
// The same for the executions of an aborted subtransaction (and a committed
// one's become its parent's).
void citus_subxact(SubXactEvent event, SubTransactionId sub, SubTransactionId parent);

// The parameters' cache of a call that Citus's wrappers make (they call
// optdp's functions through a new FmgrInfo per row, and per group, without
// an expression: fn_expr NULL, fn_extra empty on every call): the cache of
// this function under this Aggref in this execution, or nullptr.
// citus_cache_new makes one, zeroed, of size bytes (nullptr if the call is
// not under Citus's aggregates). It is forgotten with the execution
// (citus_forget, citus_subxact), never kept longer.
void* citus_cache_find(FunctionCallInfo fcinfo);
void* citus_cache_new(FunctionCallInfo fcinfo, std::size_t size);

// Whether this backend runs a query that Citus sent from another node
// (Citus names its connections "citus_internal gpid=...").
bool citus_internal_backend();

}  // namespace optdp_pg
