// optdp for PostgreSQL: the steps every aggregate release takes, in order,
// written once (as extension/sqlite/release.hpp is for SQLite):
//
//   1. parameters: the constants of the statement (aggregate.hpp's read_call:
//      a literal, a folded constant expression or a query parameter), read
//      and checked before the first row;
//   2. admission and charge, before the first row: an executor hook
//      (ExecutorRun) finds every Agg node of the statement whose final
//      function is one of optdp's releases, reads and checks their
//      parameters, and
//        - an aggregate without GROUP BY (one release per scan): charges it;
//        - a grouped aggregate (as many releases as groups, known only after
//          the scan): admits it if the ledger allows at least one release of
//          it, and refuses it otherwise;
//      so that a refusal reads no row;
//   3. the stream: the transition and combine functions build the exact
//      aggregate, never an error on a row's value;
//   4. the release: the final function takes its admission (release_charge):
//      the charge made before the scan, or, for each group and for a rescan,
//      a charge on the ledger now (never a cache that could outlive a
//      dp_ledger_attach); then noise is added once to the merged exact
//      aggregate. A final function without an admission fails closed.
//
// The admissions live in TopMemoryContext, per backend, keyed by the
// executor state and the Aggref of the release; ExecutorEnd and the end of
// the (sub)transaction forget them. docs/boundary.md, "PostgreSQL: when
// releases are decided".
#pragma once

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

// The releases' final functions (release_of knows each, and the merges'
// wrap them: merges.cpp).
extern "C" {
Datum optdp_count_final(PG_FUNCTION_ARGS);
Datum optdp_staircase_final(PG_FUNCTION_ARGS);
Datum optdp_laplace_final(PG_FUNCTION_ARGS);
Datum optdp_gaussian_count_final(PG_FUNCTION_ARGS);
Datum optdp_gaussian_sum_final(PG_FUNCTION_ARGS);
Datum optdp_avg_final(PG_FUNCTION_ARGS);
Datum optdp_var_final(PG_FUNCTION_ARGS);
Datum optdp_stddev_final(PG_FUNCTION_ARGS);
Datum optdp_quantile_final(PG_FUNCTION_ARGS);
Datum optdp_select_final(PG_FUNCTION_ARGS);
Datum optdp_levels_final(PG_FUNCTION_ARGS);
}

namespace optdp_pg {

// What one release costs: the aggregate's name (for messages and the
// ledger's entry) and its epsilon (pure) or its rho (Gaussian).
struct ReleaseCost {
  const char* function;
  double epsilon;
  double rho;
  // A Gaussian release's sensitivity in its noise's lattice steps, recorded
  // for its privacy loss distribution (core/ledger_rule.hpp); 0: none.
  std::int64_t shift = 0;
};

// Installs the executor hooks and the transaction callbacks (from _PG_init).
void install_release_hooks();
// Installs the planner hook that passes the sums' constant parameters as one
// array (plan.cpp; from _PG_init).
void install_plan_hook();

// The charge of the release the final function fcinfo is about to make, at
// cost (the final function's own reading of its parameters): the admission's
// charge made before the scan, or a charge now. Raises, and nothing may be
// released, without an admission or if the ledger refuses. PostgreSQL side.
void release_charge(FunctionCallInfo fcinfo, const ReleaseCost& cost);

// The cost readers, one per final function of a release (its parameters read
// from the call, as the final function reads them): the hook calls them
// before the scan, the final functions before their charge.
ReleaseCost count_cost(FunctionCallInfo fcinfo);           // optdp_count_final
ReleaseCost staircase_cost(FunctionCallInfo fcinfo);       // optdp_staircase_final, optdp_laplace_final
ReleaseCost gaussian_count_cost(FunctionCallInfo fcinfo);  // optdp_gaussian_count_final
ReleaseCost gaussian_sum_cost(FunctionCallInfo fcinfo);    // optdp_gaussian_sum_final
ReleaseCost avg_cost(FunctionCallInfo fcinfo);             // optdp_avg_final
ReleaseCost var_cost(FunctionCallInfo fcinfo);             // optdp_var_final
ReleaseCost stddev_cost(FunctionCallInfo fcinfo);          // optdp_stddev_final
ReleaseCost quantile_cost(FunctionCallInfo fcinfo);        // optdp_quantile_final
ReleaseCost select_cost(FunctionCallInfo fcinfo);          // optdp_select_final
ReleaseCost select_merge_cost(FunctionCallInfo fcinfo);    // optdp_select_merge_final
ReleaseCost levels_cost(FunctionCallInfo fcinfo);          // optdp_levels_final

}  // namespace optdp_pg
