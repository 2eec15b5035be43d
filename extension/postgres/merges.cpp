// optdp for PostgreSQL: the *_merge aggregates' support functions, each the
// release's own wrapped by the one mechanism of states.cpp (merge_trans,
// merge_combine, merge_final), so that a merge's state carries the nonces of
// the shipped states opened under Citus's worker_partial_agg while the
// releases' states and per-row paths stay as they are (docs/scale.md,
// "States and merges").
#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

extern "C" {

// the merges' own steps (a shipped state into the release's state)
Datum optdp_count_merge_add(PG_FUNCTION_ARGS);
Datum optdp_sum_merge_add(PG_FUNCTION_ARGS);
Datum optdp_avg_merge_add(PG_FUNCTION_ARGS);
Datum optdp_var_merge_add(PG_FUNCTION_ARGS);
Datum optdp_stddev_merge_add(PG_FUNCTION_ARGS);
Datum optdp_quantile_merge_add(PG_FUNCTION_ARGS);
Datum optdp_levels_merge_add(PG_FUNCTION_ARGS);
Datum optdp_select_merge_add(PG_FUNCTION_ARGS);
Datum optdp_gaussian_count_merge_add(PG_FUNCTION_ARGS);
Datum optdp_gaussian_sum_merge_add(PG_FUNCTION_ARGS);
// the releases' combine functions (their final functions: release.hpp)
Datum optdp_count_combine(PG_FUNCTION_ARGS);
Datum optdp_sum_combine(PG_FUNCTION_ARGS);
Datum optdp_moments_combine(PG_FUNCTION_ARGS);
Datum optdp_quantile_combine(PG_FUNCTION_ARGS);
Datum optdp_select_combine(PG_FUNCTION_ARGS);
Datum optdp_gaussian_count_combine(PG_FUNCTION_ARGS);
Datum optdp_gaussian_sum_combine(PG_FUNCTION_ARGS);
// private_select_merge's release (select.cpp)
Datum optdp_select_merge_release(PG_FUNCTION_ARGS);

#define OPTDP_MERGE_TRANS(name, add) \
  OPTDP_PG_FUNCTION(name) { return optdp_pg::merge_trans(fcinfo, add); }
#define OPTDP_MERGE_COMBINE(name, combine) \
  OPTDP_PG_FUNCTION(name) { return optdp_pg::merge_combine(fcinfo, combine); }
#define OPTDP_MERGE_FINAL(name, release) \
  OPTDP_PG_FUNCTION(name) { return optdp_pg::merge_final(fcinfo, release); }

OPTDP_MERGE_TRANS(optdp_count_merge_trans, optdp_count_merge_add)
OPTDP_MERGE_TRANS(optdp_sum_merge_trans, optdp_sum_merge_add)
OPTDP_MERGE_TRANS(optdp_avg_merge_trans, optdp_avg_merge_add)
OPTDP_MERGE_TRANS(optdp_var_merge_trans, optdp_var_merge_add)
OPTDP_MERGE_TRANS(optdp_stddev_merge_trans, optdp_stddev_merge_add)
OPTDP_MERGE_TRANS(optdp_quantile_merge_trans, optdp_quantile_merge_add)
OPTDP_MERGE_TRANS(optdp_levels_merge_trans, optdp_levels_merge_add)
OPTDP_MERGE_TRANS(optdp_select_merge_trans, optdp_select_merge_add)
OPTDP_MERGE_TRANS(optdp_gaussian_count_merge_trans, optdp_gaussian_count_merge_add)
OPTDP_MERGE_TRANS(optdp_gaussian_sum_merge_trans, optdp_gaussian_sum_merge_add)

OPTDP_MERGE_COMBINE(optdp_count_merge_combine, optdp_count_combine)
OPTDP_MERGE_COMBINE(optdp_sum_merge_combine, optdp_sum_combine)
OPTDP_MERGE_COMBINE(optdp_moments_merge_combine, optdp_moments_combine)
OPTDP_MERGE_COMBINE(optdp_quantile_merge_combine, optdp_quantile_combine)
OPTDP_MERGE_COMBINE(optdp_select_merge_combine, optdp_select_combine)
OPTDP_MERGE_COMBINE(optdp_gaussian_count_merge_combine, optdp_gaussian_count_combine)
OPTDP_MERGE_COMBINE(optdp_gaussian_sum_merge_combine, optdp_gaussian_sum_combine)

// the final functions release.cpp's release_of knows, as their releases'
OPTDP_MERGE_FINAL(optdp_count_merge_final, optdp_count_final)
OPTDP_MERGE_FINAL(optdp_staircase_merge_final, optdp_staircase_final)
OPTDP_MERGE_FINAL(optdp_laplace_merge_final, optdp_laplace_final)
OPTDP_MERGE_FINAL(optdp_gaussian_count_merge_final, optdp_gaussian_count_final)
OPTDP_MERGE_FINAL(optdp_gaussian_sum_merge_final, optdp_gaussian_sum_final)
OPTDP_MERGE_FINAL(optdp_avg_merge_final, optdp_avg_final)
OPTDP_MERGE_FINAL(optdp_var_merge_final, optdp_var_final)
OPTDP_MERGE_FINAL(optdp_stddev_merge_final, optdp_stddev_final)
OPTDP_MERGE_FINAL(optdp_quantile_merge_final, optdp_quantile_final)
OPTDP_MERGE_FINAL(optdp_levels_merge_final, optdp_levels_final)
OPTDP_MERGE_FINAL(optdp_select_merge_final, optdp_select_merge_release)

}  // extern "C"
