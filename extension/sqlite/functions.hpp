// optdp SQLite bindings: the callbacks registered by sqlite3_optdp_init.
// Each area lives in its own file; the table of registrations is in optdp.cpp.
#pragma once

#include <vector>

#include "sqlite/api.hpp"
#include "sqlite/sql_text.hpp"

namespace optdp::sql {

// count.cpp: private_count(alpha), private_count(x, alpha)
template <int ARGC>  // 1: private_count(alpha), 2: private_count(x, alpha)
void private_count_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void private_count_final1(sqlite3_context* ctx);
void private_count_final2(sqlite3_context* ctx);
// The checks of each form's parameters (params.hpp, ReleaseForm).
void check_count_params(const std::vector<Param>& p);
void check_sum_params(const std::vector<Param>& p);
void check_levels_params(const std::vector<Param>& p);
const char* const* level_param_names();

// sum.cpp: staircase_sum(x, eps, delta | lower, upper [, cost]), laplace_sum(...),
// staircase_gamma(eps, cost), noise_cost(mechanism, eps, delta, cost)
void staircase_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void staircase_sum_final3(sqlite3_context* ctx);
void staircase_sum_final4(sqlite3_context* ctx);
void staircase_sum_final5(sqlite3_context* ctx);
void laplace_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void laplace_sum_final3(sqlite3_context* ctx);
void laplace_sum_final4(sqlite3_context* ctx);
void staircase_gamma_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void noise_cost_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_sum_grid_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);

// matrix.cpp: mechanism matrices, optimal remaps and their losses (table-valued functions and scalars)
struct TableFunction;
extern const TableFunction kGeometricMatrix, kDerivationMatrix, kStaircasePmf, kOptimalRemap, kOptimalMechanism,
    kMinimaxRemap, kMinimaxMechanism;
void remap_count_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void optimal_loss_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void minimax_loss_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_derivable_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);

// levels.cpp: private_count_levels(alpha_1..alpha_k), private_count_levels_of(x, alpha_1..), release_levels
void private_count_levels_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
// The final of the form with k levels (1..kMaxLevels): one per arity.
void (*private_count_levels_final(int k))(sqlite3_context*);
void private_count_levels_of_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void (*private_count_levels_of_final(int k))(sqlite3_context*);
extern const TableFunction kReleaseLevels;
// grouped.cpp
extern const TableFunction kPrivateGroups;

// select.cpp: private_select(candidate, score, eps [, sensitivity [, method]]), selection_probabilities
void private_select_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void private_select_final3(sqlite3_context* ctx);
void private_select_final4(sqlite3_context* ctx);
void private_select_final5(sqlite3_context* ctx);
void check_select_params(const std::vector<Param>& p);
extern const TableFunction kSelectionProbabilities;

// quantile.cpp: private_quantile(x, q, eps, lower, upper), private_median(x, eps, lower, upper)
void private_quantile_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void private_quantile_final(sqlite3_context* ctx);
void private_median_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void private_median_final(sqlite3_context* ctx);
void check_quantile_params(const std::vector<Param>& p);
void check_median_params(const std::vector<Param>& p);

// moments.cpp: private_avg, private_var, private_stddev (x, eps, lower, upper)
void private_avg_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void private_avg_final(sqlite3_context* ctx);
void private_var_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void private_var_final(sqlite3_context* ctx);
void private_stddev_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void private_stddev_final(sqlite3_context* ctx);
void check_moment_params(const std::vector<Param>& p);

// budget.cpp: the privacy ledger
void dp_ledger_attach_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_budget_remaining_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_budget_spent_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_delta_remaining_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_delta_spent_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_further_releases_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_gaussian_sigma_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
extern const TableFunction kLedgerEntries, kLedgerAccounts;

// gaussian.cpp: gaussian_count(rho), gaussian_count(x, rho), gaussian_sum(x, rho, lower, upper), dp_rho(eps, delta)
template <int ARGC>
void gaussian_count_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void gaussian_count_final1(sqlite3_context* ctx);
void gaussian_count_final2(sqlite3_context* ctx);
void gaussian_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void gaussian_sum_final(sqlite3_context* ctx);
void check_gaussian_count_params(const std::vector<Param>& p);
void check_gaussian_sum_params(const std::vector<Param>& p);
void dp_rho_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);

// analyst.cpp: dp_analyst_mode(tables), dp_analyst_refusal()
void dp_analyst_mode_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_analyst_refusal_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);

// intervals.cpp: count_interval, count_interval_alpha, sum_interval, sum_interval_eps, quantile_rank_error
void count_interval_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void count_interval_alpha_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void sum_interval_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void sum_interval_eps_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void quantile_rank_error_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv);

// scalars.cpp
void dp_alpha(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_epsilon(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_version(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_seed(sqlite3_context* ctx, int argc, sqlite3_value** argv);
void dp_rng(sqlite3_context* ctx, int argc, sqlite3_value** argv);

}  // namespace optdp::sql
