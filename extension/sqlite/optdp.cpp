/*
** optdp: differential privacy with provably optimal noise, as a SQLite extension.
**
**   .load ./optdp
**   SELECT private_count(0.5) FROM patients WHERE smoker;        -- count + geometric noise
**   SELECT private_count(0.36787944117144233) FROM patients;     -- epsilon = 1 (alpha = dp_alpha(1.0);
**                                                                -- parameters are literals or bound)
**   SELECT k.ward, private_count(p.id, 0.5)                      -- every public key gets a value
**     FROM wards k LEFT JOIN patients p ON p.ward = k.ward GROUP BY k.ward;
**   SELECT dp_seed(42);                                          -- reproducible noise (tests only)
**
** This file holds the registration behind the entry points (entry/module.cpp,
** entry/static.cpp) and the one table of every SQL function the extension
** registers; each function lives in its own file (count.cpp, scalars.cpp,
** ...). The reference is sql/reference.md.
*/
#include <array>
#include <cctype>
#include <string_view>
#include <new>
#include <span>
#include <vector>

#include "core/levels.hpp"
#include "sqlite/analyst.hpp"
#include "sqlite/api.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/entry.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"
#include "sqlite/vtab.hpp"

// The routine table every sqlite3_* call of the bindings goes through (api.hpp).
SQLITE_EXTENSION_INIT1

namespace optdp::sql {
namespace {

using Scalar = void (*)(sqlite3_context*, int, sqlite3_value**);
using Final = void (*)(sqlite3_context*);

constexpr int kDeterministic = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
// Reads state that changes between calls (the ledger, the noise source), so
// never DETERMINISTIC: SQLite must not evaluate it once and reuse the value.
constexpr int kStateful = SQLITE_UTF8;
// The randomised aggregates read their parameters from the text of the
// running statement (params.hpp), so they must be called in it directly: not
// from views, triggers or schema expressions, which an untrusted schema
// could also use to spend the budget.
constexpr int kRelease = SQLITE_UTF8 | SQLITE_DIRECTONLY;
constexpr int kDirectOnly = SQLITE_UTF8 | SQLITE_DIRECTONLY;  // changes connection state

// One registration. A randomised aggregate (a release form, params.hpp) also
// names its parameters: arguments first.. of the call, and their check.
struct Function {
  const char* name;
  int nargs;
  int flags;
  Scalar scalar;  // scalar function, or
  Scalar step;    // aggregate step and
  Final final;    // final
  int first = 0;
  const char* const* names = nullptr;  // nullptr: not a release form
  void (*check)(const std::vector<Param>&) = nullptr;
};

// Parameter names of the randomised aggregates (params.hpp).
constexpr const char* kAlpha[] = {"alpha"};
constexpr const char* kSum3[] = {"eps", "delta"};
constexpr const char* kSum45[] = {"eps", "lower", "upper", "cost"};
constexpr const char* kSelect[] = {"eps", "sensitivity", "method"};
constexpr const char* kQuantile[] = {"q", "eps", "lower", "upper"};
constexpr const char* kBounded[] = {"eps", "lower", "upper"};  // private_median, private_avg/var/stddev
constexpr const char* kRho[] = {"rho"};
constexpr const char* kGaussianSum[] = {"rho", "lower", "upper"};

constexpr Function kFunctions[] = {
    {"private_count", 1, kRelease, nullptr, private_count_step<1>, private_count_final1, 0, kAlpha, check_count_params},
    {"private_count", 2, kRelease, nullptr, private_count_step<2>, private_count_final2, 1, kAlpha, check_count_params},
    {"staircase_sum", 3, kRelease, nullptr, staircase_sum_step, staircase_sum_final3, 1, kSum3, check_sum_params},
    {"staircase_sum", 4, kRelease, nullptr, staircase_sum_step, staircase_sum_final4, 1, kSum45, check_sum_params},
    {"staircase_sum", 5, kRelease, nullptr, staircase_sum_step, staircase_sum_final5, 1, kSum45, check_sum_params},
    {"laplace_sum", 3, kRelease, nullptr, laplace_sum_step, laplace_sum_final3, 1, kSum3, check_sum_params},
    {"laplace_sum", 4, kRelease, nullptr, laplace_sum_step, laplace_sum_final4, 1, kSum45, check_sum_params},
    {"private_select", 3, kRelease, nullptr, private_select_step, private_select_final3, 2, kSelect, check_select_params},
    {"private_select", 4, kRelease, nullptr, private_select_step, private_select_final4, 2, kSelect, check_select_params},
    {"private_select", 5, kRelease, nullptr, private_select_step, private_select_final5, 2, kSelect, check_select_params},
    {"private_quantile", 5, kRelease, nullptr, private_quantile_step, private_quantile_final, 1, kQuantile, check_quantile_params},
    {"private_median", 4, kRelease, nullptr, private_median_step, private_median_final, 1, kBounded, check_median_params},
    {"private_avg", 4, kRelease, nullptr, private_avg_step, private_avg_final, 1, kBounded, check_moment_params},
    {"private_var", 4, kRelease, nullptr, private_var_step, private_var_final, 1, kBounded, check_moment_params},
    {"private_stddev", 4, kRelease, nullptr, private_stddev_step, private_stddev_final, 1, kBounded, check_moment_params},
    {"gaussian_count", 1, kRelease, nullptr, gaussian_count_step<1>, gaussian_count_final1, 0, kRho, check_gaussian_count_params},
    {"gaussian_count", 2, kRelease, nullptr, gaussian_count_step<2>, gaussian_count_final2, 1, kRho, check_gaussian_count_params},
    {"gaussian_sum", 4, kRelease, nullptr, gaussian_sum_step, gaussian_sum_final, 1, kGaussianSum, check_gaussian_sum_params},
    {"dp_rho", 2, kDeterministic, dp_rho_fn, nullptr, nullptr},
    {"staircase_gamma", 2, kDeterministic, staircase_gamma_fn, nullptr, nullptr},
    {"noise_cost", 4, kDeterministic, noise_cost_fn, nullptr, nullptr},
    {"dp_sum_grid", 3, kDeterministic, dp_sum_grid_fn, nullptr, nullptr},
    {"count_interval", 2, kDeterministic, count_interval_fn, nullptr, nullptr},
    {"count_interval_alpha", 2, kDeterministic, count_interval_alpha_fn, nullptr, nullptr},
    {"sum_interval", 5, kDeterministic, sum_interval_fn, nullptr, nullptr},
    {"sum_interval", 6, kDeterministic, sum_interval_fn, nullptr, nullptr},
    {"sum_interval_eps", 5, kDeterministic, sum_interval_eps_fn, nullptr, nullptr},
    {"sum_interval_eps", 6, kDeterministic, sum_interval_eps_fn, nullptr, nullptr},
    {"quantile_rank_error", 4, kDeterministic, quantile_rank_error_fn, nullptr, nullptr},
    {"remap_count", 5, kDeterministic, remap_count_fn, nullptr, nullptr},
    {"optimal_loss", 4, kDeterministic, optimal_loss_fn, nullptr, nullptr},
    {"minimax_loss", 5, kDeterministic, minimax_loss_fn, nullptr, nullptr},
    {"dp_derivable", 2, kDeterministic, dp_derivable_fn, nullptr, nullptr},
    {"dp_alpha", 1, kDeterministic, dp_alpha, nullptr, nullptr},
    {"dp_epsilon", 1, kDeterministic, dp_epsilon, nullptr, nullptr},
    {"dp_version", 0, kDeterministic, dp_version, nullptr, nullptr},
    {"dp_seed", 1, kDirectOnly, dp_seed, nullptr, nullptr},
    {"dp_ledger_attach", 2, kDirectOnly, dp_ledger_attach_fn, nullptr, nullptr},
    {"dp_ledger_attach", 3, kDirectOnly, dp_ledger_attach_fn, nullptr, nullptr},
    {"dp_ledger_attach", 4, kDirectOnly, dp_ledger_attach_fn, nullptr, nullptr},
    {"dp_budget_remaining", 0, kStateful, dp_budget_remaining_fn, nullptr, nullptr},
    {"dp_budget_spent", 0, kStateful, dp_budget_spent_fn, nullptr, nullptr},
    {"dp_delta_remaining", 0, kStateful, dp_delta_remaining_fn, nullptr, nullptr},
    {"dp_delta_spent", 0, kStateful, dp_delta_spent_fn, nullptr, nullptr},
    {"dp_further_releases", 2, kStateful, dp_further_releases_fn, nullptr, nullptr},
    {"dp_further_releases", 3, kStateful, dp_further_releases_fn, nullptr, nullptr},
    {"dp_gaussian_sigma", 1, kStateful, dp_gaussian_sigma_fn, nullptr, nullptr},
    {"dp_gaussian_sigma", 2, kStateful, dp_gaussian_sigma_fn, nullptr, nullptr},
    {"dp_rng", 0, kStateful, dp_rng, nullptr, nullptr},
    {"dp_analyst_mode", 1, kDirectOnly, dp_analyst_mode_fn, nullptr, nullptr},
    {"dp_analyst_refusal", 0, kStateful, dp_analyst_refusal_fn, nullptr, nullptr},
};

// Every table-valued function (eponymous virtual table).
const TableFunction* const kTables[] = {&kGeometricMatrix, &kDerivationMatrix, &kStaircasePmf, &kOptimalRemap,
                                        &kOptimalMechanism, &kMinimaxRemap, &kMinimaxMechanism, &kReleaseLevels, &kPrivateGroups,
                                        &kSelectionProbabilities, &kLedgerEntries, &kLedgerAccounts};

// Every function optdp registers: the table above, then
// private_count_levels(alpha_1..alpha_k) and private_count_levels_of(x,
// alpha_1..alpha_k) for k = 1..kMaxLevels. Registration and the release forms
// (release_forms) are both derived from this one list.
const std::vector<Function>& all_functions() {
  static const std::vector<Function> all = [] {
    std::vector<Function> f(std::begin(kFunctions), std::end(kFunctions));
    for (int k = 1; k <= kMaxLevels; ++k) {
      f.push_back({"private_count_levels", k, kRelease, nullptr, private_count_levels_step,
                   private_count_levels_final(k), 0, level_param_names(), check_levels_params});
      f.push_back({"private_count_levels_of", k + 1, kRelease, nullptr, private_count_levels_of_step,
                   private_count_levels_of_final(k), 1, level_param_names(), check_levels_params});
    }
    return f;
  }();
  return all;
}

// Registers one function holding a reference to conn; on failure SQLite has
// already called xDestroy (dropping that reference) and *pzErrMsg says why.
int register_function(sqlite3* db, const Function& f, Connection* conn, char** pzErrMsg) {
  conn->retain();
  const int rc =
      sqlite3_create_function_v2(db, f.name, f.nargs, f.flags, conn, f.scalar, f.step, f.final, Connection::release);
  if (rc != SQLITE_OK && pzErrMsg)
    *pzErrMsg = sqlite3_mprintf("optdp: registering %s/%d failed: %s", f.name, f.nargs, sqlite3_errmsg(db));
  return rc;
}

int register_all(sqlite3* db, char** pzErrMsg) {
  // The connection's state (the same one if optdp was loaded before), with one
  // reference held until every registration has taken its own.
  Connection* conn = Connection::for_db(db);
  (void)release_forms();  // process-wide, built once at the first load rather than inside a release
  int rc = SQLITE_OK;
  for (const Function& f : all_functions()) {
    rc = register_function(db, f, conn, pzErrMsg);
    if (rc != SQLITE_OK) break;
  }
  for (const TableFunction* t : kTables) {
    if (rc != SQLITE_OK) break;
    rc = register_table_function(db, *t, conn);
    if (rc != SQLITE_OK && pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("optdp: registering table %s failed: %s", t->name, sqlite3_errmsg(db));
  }
  Connection::release(conn);
  return rc;
}

}  // namespace

bool is_optdp_function(std::string_view name) {
  auto same = [&](const char* f) {
    const std::string_view n(f);
    if (n.size() != name.size()) return false;
    for (std::size_t i = 0; i < n.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(name[i])) != n[i]) return false;
    return true;
  };
  for (const Function& f : all_functions())
    if (same(f.name)) return true;
  return false;
}

std::span<const ReleaseForm> release_forms() {
  static const std::vector<ReleaseForm> forms = [] {
    std::vector<ReleaseForm> r;
    for (const Function& f : all_functions())
      if (f.names) r.push_back({f.name, f.nargs, f.first, f.names, f.check});
    return r;
  }();
  return forms;
}

}  // namespace optdp::sql

bool optdp::sql::use_routines(const sqlite3_api_routines* api) noexcept {
  if (!api) return false;
  // Written once, inside the (thread-safe) initialisation of a function-local
  // static, and never again: the registrations that follow, one per
  // connection and possibly in several threads at once, only read it.
  static const sqlite3_api_routines* const first = [api] {
    SQLITE_EXTENSION_INIT2(api)
    return api;
  }();
  return api == first;
}

int optdp::sql::register_optdp(sqlite3* db, char** pzErrMsg, const sqlite3_api_routines* api) noexcept {
  if (!api) return SQLITE_MISUSE;
  if (!use_routines(api)) {
    // Written with the caller's own table, so that its sqlite3_free frees it.
    if (pzErrMsg) *pzErrMsg = api->mprintf("optdp: already registered with another SQLite library in this process");
    return SQLITE_ERROR;
  }
  try {
    return register_all(db, pzErrMsg);
  } catch (...) {  // e.g. libsodium failed to initialise
    if (pzErrMsg) *pzErrMsg = sqlite3_mprintf("optdp: initialisation failed");
    return SQLITE_ERROR;
  }
}
