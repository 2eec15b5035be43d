// optdp for PostgreSQL 15: the Gaussian releases (zCDP) and the ledger's
// planning functions, with the SQLite binding's names, arguments and messages
// (extension/sqlite/gaussian.cpp and budget.cpp; docs/accounting.md):
//
//   gaussian_count(rho), gaussian_count(x, rho)   count + discrete Gaussian noise, sigma^2 = 1 / (2 rho)
//   gaussian_sum(x, rho, lower, upper)             rows clamped into [lower, upper] and summed exactly on a
//                                                  power-of-two grid, plus the discrete Gaussian on that
//                                                  grid's lattice, sigma^2 = D^2 / (2 rho) in grid steps
//   gaussian_count_state / _merge, gaussian_sum_state / _merge: exact partial states for shards
//   dp_ledger_accounts(), dp_further_releases(mechanism, noise [, sensitivity]),
//   dp_gaussian_sigma(k [, sensitivity]): both accountings of the ledger, and plans, from the core
//
// The aggregates follow optdp_pg.cpp's pattern: bytea states holding the exact
// aggregate only, a combine function, parameters read from the call's Aggref
// (never from a row) by the transition and the final function alike, one
// charge (rho, recorded as SQLite records it) and one draw of noise in the
// final function. The planning functions read the ledger on optdp's own
// connection (ledger.cpp) and leave the accounting to the core.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/accounting.hpp"
#include "core/format.hpp"
#include "core/gaussian.hpp"
#include "core/ledger_rule.hpp"
#include "core/privacy.hpp"
#include "core/staircase.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
}

using namespace optdp_pg;

namespace {

// ---- states ----------------------------------------------------------------------

// The exact aggregates. A shipped state (gaussian_*_state) begins with its
// kind, carries the call's parameters and is sealed with the cluster's state
// key (aggregate.hpp, "shipped states"; states.cpp), so that a merge refuses
// a forged state, another aggregate's, or one of other parameters.

// gaussian_count's: private_count's, its parameter rho (aggregate.hpp).
using GaussianCountState = CountState;

// gaussian_sum's: the sum and the call's parameters (aggregate.hpp,
// "parameters carried in the state"; has_params 0: none yet).
struct GaussianSumState {
  unsigned char sum_bytes[16];  // __int128, the sum of grid integers
  double rho, lower, upper;
  std::int32_t has_params, pad;
  __int128 sum() const {
    __int128 v;
    std::memcpy(&v, sum_bytes, sizeof v);
    return v;
  }
  void set_sum(__int128 v) { std::memcpy(sum_bytes, &v, sizeof v); }
};

static_assert(sizeof(GaussianCountState) == 16 && sizeof(GaussianSumState) == 48,
              "sql/50-gaussian.sql's INITCOND");

struct GaussianCountShipped {
  Shipped kind;
  std::uint32_t pad;
  double rho;
  GaussianCountState state;
};

struct GaussianSumShipped {
  Shipped kind;
  std::uint32_t pad;
  double rho, lower, upper;
  GaussianSumState state;
};

// rho in [2^-30, 2^20]: the noise's sigma^2 then stays within the sampler's
// range for counts and for every grid of a sum (SQLite's rule and message).
double rho_param(const CallParams& p, int i) {
  const double rho = number_param(p, i, "rho");
  if (!(rho >= 0x1p-30 && rho <= 0x1p20))
    throw std::invalid_argument("rho must be a number in [2^-30, 2^20] (9.3e-10 to 1048576), but is " +
                                optdp::format_double(rho));
  return rho;
}

// ---- gaussian_count ----------------------------------------------------------------

// rho of the running call (its last argument), read and checked once per
// function instance.
double count_rho(FunctionCallInfo fcinfo, const char* function) {
  return count_param<rho_param>(fcinfo, function);
}

// ---- gaussian_sum ------------------------------------------------------------------

struct SumParams {
  bool ready;
  double rho, lower, upper;
  optdp::Grid grid;
};

// (rho, lower, upper): arguments 1.. of gaussian_sum (after x) and of
// gaussian_sum_merge (after the state).
const SumParams& sum_params(FunctionCallInfo fcinfo, const char* function) {
  auto* cache = fn_cache<SumParams>(fcinfo);
  if (cache && cache->ready) return *cache;
  if (!cache) cache = instance_cache<SumParams>(fcinfo);
  CallParams p;
  read_call(fcinfo, function, 1, p);
  Failure f;
  SumParams s{};
  run_cpp(f, function, [&] {
    all_constant(p, {"rho", "lower", "upper"});
    s.rho = rho_param(p, 0);
    s.lower = number_param(p, 1, "lower");
    s.upper = number_param(p, 2, "upper");
    // The grid as for a pure sum whose noise has the same scale (eps =
    // sqrt(2 rho), capped at 20): steps far below the noise (as SQLite).
    s.grid = optdp::make_grid(std::min(std::sqrt(2 * s.rho), 20.0), s.lower, s.upper);
  });
  raise(f);
  s.ready = true;
  *cache = s;
  return *cache;
}

// The call's parameters into a state, and whether a state's are the call's.
void set_params(GaussianSumState& s, const SumParams& p) {
  s.rho = p.rho;
  s.lower = p.lower;
  s.upper = p.upper;
  s.has_params = 1;
}

bool same_params(const GaussianSumState& a, const GaussianSumState& b) {
  return a.rho == b.rho && a.lower == b.lower && a.upper == b.upper;
}

// Everything of `from` but the sum.
void take_params(GaussianSumState& to, const GaussianSumState& from) {
  const __int128 v = to.sum();
  to = from;
  to.set_sum(v);
}

}  // namespace

ReleaseCost optdp_pg::gaussian_count_cost(FunctionCallInfo fcinfo) {
  const char* fn = agg_name(fcinfo, "gaussian_count");
  return {fn, 0.0, count_rho(fcinfo, fn), 1};  // sensitivity 1: N_Z(0, 1 / (2 rho))
}

ReleaseCost optdp_pg::gaussian_sum_cost(FunctionCallInfo fcinfo) {
  const char* fn = agg_name(fcinfo, "gaussian_sum");
  const SumParams& p = sum_params(fcinfo, fn);
  // D grid steps, N_Z(0, D^2 / (2 rho)); none past 2^20 steps (as SQLite).
  return {fn, 0.0, p.rho, p.grid.D() <= (1 << 20) ? p.grid.D() : 0};
}

extern "C" {

OPTDP_PG_FUNCTION(optdp_gaussian_count_trans);
OPTDP_PG_FUNCTION(optdp_gaussian_count_combine);
OPTDP_PG_STEP(optdp_gaussian_count_merge_add);
OPTDP_PG_FUNCTION(optdp_gaussian_count_final);
OPTDP_PG_FUNCTION(optdp_gaussian_count_state_final);
OPTDP_PG_FUNCTION(optdp_gaussian_sum_trans);
OPTDP_PG_FUNCTION(optdp_gaussian_sum_combine);
OPTDP_PG_STEP(optdp_gaussian_sum_merge_add);
OPTDP_PG_FUNCTION(optdp_gaussian_sum_final);
OPTDP_PG_FUNCTION(optdp_gaussian_sum_state_final);

// optdp_gaussian_count_trans(state, rho) counts every row; (state, x, rho)
// the rows with x not NULL.
Datum optdp_gaussian_count_trans(PG_FUNCTION_ARGS) {
  return count_rows_trans<GaussianCountState>(fcinfo, "gaussian_count", count_rho);
}

Datum optdp_gaussian_count_combine(PG_FUNCTION_ARGS) {
  return count_rows_combine<GaussianCountState>(fcinfo, "gaussian_count");
}

// gaussian_count_merge(state, rho): adds shipped states made with the same rho.
Datum optdp_gaussian_count_merge_add(PG_FUNCTION_ARGS) {
  const char* fn = "gaussian_count_merge";
  bytea* st = state_arg<GaussianCountState>(fcinfo, fn, "gaussian_count");
  const double rho = count_rho(fcinfo, fn);
  const char* want = shipped_by(Shipped::GaussianCount);
  const GaussianCountShipped in =
      load<GaussianCountShipped>(shipped_arg(fcinfo, 1, fn, Shipped::GaussianCount), fn, want);
  if (in.rho != rho)
    refuse_state(fn, [&] {
      return "state was computed with rho " + describe_number(in.rho) + ", but rho is " + describe_number(rho);
    });
  GaussianCountState s = load<GaussianCountState>(st, fn, "gaussian_count");
  s.rows += in.state.rows;
  s.param = rho;
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

// The release: charged (rho) before the noise is drawn, then count + N_Z(0,
// 1 / (2 rho)) (L2 sensitivity 1: one row added or removed).
Datum optdp_gaussian_count_final(PG_FUNCTION_ARGS) {
  const ReleaseCost cost = gaussian_count_cost(fcinfo);
  const char* fn = cost.function;
  const GaussianCountState s =
      PG_ARGISNULL(0) ? GaussianCountState{} : load<GaussianCountState>(PG_GETARG_BYTEA_PP(0), fn, "gaussian_count");
  const double rho = released_param(fn, s.param, cost.rho);
  release_charge(fcinfo, cost);
  Failure f;
  std::int64_t out = 0;
  run_cpp(f, fn, [&] {
    Backend& b = backend();
    const std::int64_t noise =
        b.discrete_gaussian(static_cast<__float128>(1) / (2 * static_cast<__float128>(rho)))(b.rng());
    if (__builtin_add_overflow(s.rows, noise, &out)) out = s.rows;  // unreachable: |noise| < 2^62
  });
  raise(f);
  PG_RETURN_INT64(out);
}

// gaussian_count_state: the exact state, with rho, for shipping to a coordinator.
Datum optdp_gaussian_count_state_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "gaussian_count_state");
  GaussianCountShipped out{};
  out.kind = Shipped::GaussianCount;
  out.rho = count_rho(fcinfo, fn);
  if (!PG_ARGISNULL(0)) out.state = load<GaussianCountState>(PG_GETARG_BYTEA_PP(0), fn, "gaussian_count");
  out.state.param = released_param(fn, out.state.param, out.rho);
  PG_RETURN_BYTEA_P(seal_state(fn, Shipped::GaussianCount, new_state(out)));
}

// optdp_gaussian_sum_trans(state, x, rho, lower, upper): adds x, clamped and
// rounded to the grid (NaN as 0, as SQLite's sum() reads it).
Datum optdp_gaussian_sum_trans(PG_FUNCTION_ARGS) {
  auto* cache = fn_cache<SumParams>(fcinfo);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    st = state_arg<GaussianSumState>(fcinfo, "gaussian_sum", "gaussian_sum");
    cache = const_cast<SumParams*>(&sum_params(fcinfo, agg_name(fcinfo, "gaussian_sum")));
  } else {
    st = own_state(fcinfo);
  }
  if (!PG_ARGISNULL(1)) {
    double x = PG_GETARG_FLOAT8(1);
    if (std::isnan(x)) x = 0;
    GaussianSumState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    if (!s.has_params) set_params(s, *cache);
    s.set_sum(s.sum() + cache->grid.quantize(x, cache->lower, cache->upper));
    store(st, s);
  } else {
    GaussianSumState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    if (!s.has_params) {
      set_params(s, *cache);
      store(st, s);
    }
  }
  PG_RETURN_BYTEA_P(st);
}

Datum optdp_gaussian_sum_combine(PG_FUNCTION_ARGS) {
  bytea* st = state_arg<GaussianSumState>(fcinfo, "gaussian_sum", "gaussian_sum");
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  GaussianSumState a = load<GaussianSumState>(st, "gaussian_sum", "gaussian_sum");
  const GaussianSumState b = load<GaussianSumState>(PG_GETARG_BYTEA_PP(1), "gaussian_sum", "gaussian_sum");
  combine_params(fcinfo, "gaussian_sum", a, b);
  a.set_sum(a.sum() + b.sum());
  store(st, a);
  PG_RETURN_BYTEA_P(st);
}

// gaussian_sum_merge(state, rho, lower, upper): adds shipped states made with
// the same rho, lower and upper (the same grid and noise).
Datum optdp_gaussian_sum_merge_add(PG_FUNCTION_ARGS) {
  const char* fn = "gaussian_sum_merge";
  bytea* st = state_arg<GaussianSumState>(fcinfo, fn, "gaussian_sum");
  const SumParams& p = sum_params(fcinfo, fn);
  const char* want = shipped_by(Shipped::GaussianSum);
  const GaussianSumShipped in = load<GaussianSumShipped>(shipped_arg(fcinfo, 1, fn, Shipped::GaussianSum), fn, want);
  if (in.rho != p.rho || in.lower != p.lower || in.upper != p.upper)
    refuse_state(fn, [&] {
      return "state was computed with (rho, lower, upper) = " + describe_numbers({in.rho, in.lower, in.upper}) +
             ", but they are " + describe_numbers({p.rho, p.lower, p.upper});
    });
  GaussianSumState s = load<GaussianSumState>(st, fn, "gaussian_sum");
  s.set_sum(s.sum() + in.state.sum());
  set_params(s, p);
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

// The release: charged (rho), then the sum + N_Z(0, D^2 / (2 rho)) in grid
// steps (L2 sensitivity D steps: one row added, removed or replaced).
Datum optdp_gaussian_sum_final(PG_FUNCTION_ARGS) {
  const ReleaseCost cost = gaussian_sum_cost(fcinfo);
  const char* fn = cost.function;
  const SumParams& p = sum_params(fcinfo, fn);
  const GaussianSumState s =
      PG_ARGISNULL(0) ? GaussianSumState{} : load<GaussianSumState>(PG_GETARG_BYTEA_PP(0), fn, "gaussian_sum");
  check_released_params(fn, s, p);  // the state's parameters are then p
  release_charge(fcinfo, cost);
  Failure f;
  double out = 0;
  run_cpp(f, fn, [&] {
    Backend& b = backend();
    const __float128 D = static_cast<__float128>(p.grid.D());
    const __int128 total = s.sum() + b.discrete_gaussian(D * D / (2 * static_cast<__float128>(p.rho)))(b.rng());
    out = static_cast<double>(total) * p.grid.g;
  });
  raise(f);
  PG_RETURN_FLOAT8(out);
}

// gaussian_sum_state: the exact state with its grid's parameters.
Datum optdp_gaussian_sum_state_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "gaussian_sum_state");
  const SumParams& p = sum_params(fcinfo, fn);
  GaussianSumShipped out{};
  out.kind = Shipped::GaussianSum;
  out.rho = p.rho;
  out.lower = p.lower;
  out.upper = p.upper;
  if (!PG_ARGISNULL(0)) out.state = load<GaussianSumState>(PG_GETARG_BYTEA_PP(0), fn, "gaussian_sum");
  check_released_params(fn, out.state, p);
  set_params(out.state, p);
  PG_RETURN_BYTEA_P(seal_state(fn, Shipped::GaussianSum, new_state(out)));
}

}  // extern "C"

// ---- planning: dp_ledger_accounts, dp_further_releases, dp_gaussian_sigma ---------
//
// As in SQLite (extension/sqlite/budget.cpp): the ledger first (without one
// nothing else is checked), then the arguments, then the core. The ledger is
// read on optdp's own connection (ledger.cpp), so the functions see what the
// next charge will see; EXECUTE on them is revoked from PUBLIC
// (sql/99-privileges.sql) and granted to whoever may read the ledger. A
// message shows the arguments' values only when each is a constant or a query
// parameter, as the scalar helpers do (functions.cpp).

namespace {

constexpr const char* kNoLedger = "no privacy ledger is attached to this database (see dp_ledger_attach)";

// One argument, copied out of PostgreSQL before any C++ work.
struct PlanArg {
  bool null = true;
  double number = 0;
  std::int64_t integer = 0;
  const char* text = "";  // palloc'd: no C++ object outlives run_cpp
};

struct PlanCall {
  optdp::LedgerAccount account;
  optdp::zcdp::History history;
};

// Whether every argument of the call is a constant or a query parameter.
bool args_shown(FunctionCallInfo fcinfo) {
  for (int i = 0; i < PG_NARGS(); ++i)
    if (!get_fn_expr_arg_stable(fcinfo->flinfo, i)) return false;
  return true;
}

// Inside run_cpp: the ledger, or SQLite's message (for this database).
void read_or_refuse(PlanCall& call) {
  if (!read_ledger(call.account, call.history)) throw std::invalid_argument(kNoLedger);
}

std::string describe_arg(const PlanArg& a, bool text) {
  if (a.null) return "NULL";
  return text ? "text " + optdp::quote_text(std::string_view(a.text)) : optdp::format_double(a.number);
}

double sensitivity_arg(const PlanArg& a) {
  if (a.null) throw std::invalid_argument("sensitivity must be a number, but is NULL");
  optdp::check_positive(a.number, "sensitivity");
  return a.number;
}

// One further release of `mechanism` with `noise` at `sensitivity`, as the
// accountant sees it (SQLite's further_entry).
optdp::zcdp::Entry further_entry(const PlanArg& mech_a, const PlanArg& noise_a, const PlanArg* sens_a) {
  if (mech_a.null)
    throw std::invalid_argument(
        "mechanism must be text ('geometric', 'laplace', 'staircase' or 'gaussian'), but is NULL");
  const std::string_view mech = mech_a.text;
  if (noise_a.null) throw std::invalid_argument("noise must be a number, but is NULL");
  const double noise = noise_a.number;
  const double sensitivity = sens_a ? sensitivity_arg(*sens_a) : 1;
  if (mech == "geometric") {
    if (!(noise > 0 && noise < 1))
      throw std::invalid_argument("noise (alpha) must be in (0, 1), but is " + describe_arg(noise_a, false));
    return optdp::zcdp::Entry::pure(-std::log(noise) * sensitivity);
  }
  if (mech == "laplace" || mech == "staircase") {
    optdp::check_positive(noise, "noise (eps)");
    return optdp::zcdp::Entry::pure(noise);
  }
  if (mech == "gaussian") {
    optdp::check_positive(noise, "noise (sigma)");
    return optdp::planned_gaussian(sensitivity, noise * noise);  // the same entry as SQLite's
  }
  throw std::invalid_argument("mechanism must be 'geometric', 'laplace', 'staircase' or 'gaussian', but is " +
                              describe_arg(mech_a, true));
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_ledger_accounts);
OPTDP_PG_FUNCTION(optdp_further_releases);
OPTDP_PG_FUNCTION(optdp_gaussian_sigma);

// dp_ledger_accounts() as an array the SQL function turns into SQLite's three
// rows: {basic_eps, basic_delta, basic_fits, total_epsilon, zcdp_delta,
// rho_total, zcdp_fits, pld_evaluated, pld_delta, pld_fits} (flags as 1 or 0).
Datum optdp_ledger_accounts(PG_FUNCTION_ARGS) {
  static_cast<void>(fcinfo);  // no arguments
  const char* fn = "dp_ledger_accounts";
  connect_ledger(fn);
  Failure f;
  Datum v[10];
  run_cpp(f, fn, [&] {
    PlanCall call;
    read_or_refuse(call);
    const optdp::zcdp::Accounting a =
        optdp::zcdp::account_all(call.history, {call.account.total_epsilon, call.account.total_delta});
    const double out[10] = {a.basic_eps, a.basic_delta, a.basic_fits ? 1.0 : 0.0, call.account.total_epsilon,
                            a.zcdp_delta, a.rho_total, a.zcdp_fits ? 1.0 : 0.0, a.pld_evaluated ? 1.0 : 0.0,
                            a.pld_delta, a.pld_evaluated && a.pld_fits ? 1.0 : 0.0};
    for (int i = 0; i < 10; ++i) v[i] = Float8GetDatum(out[i]);
  });
  raise(f);
  PG_RETURN_ARRAYTYPE_P(construct_array(v, 10, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

// dp_further_releases(mechanism, noise [, sensitivity]): how many more such
// releases the ledger allows (under the better accounting).
Datum optdp_further_releases(PG_FUNCTION_ARGS) {
  const char* fn = "dp_further_releases";
  PlanArg a[3];
  for (int i = 0; i < PG_NARGS() && i < 3; ++i) {
    a[i].null = PG_ARGISNULL(i);
    if (a[i].null) continue;
    if (i == 0) a[i].text = text_to_cstring(PG_GETARG_TEXT_PP(0));
    else a[i].number = PG_GETARG_FLOAT8(i);
  }
  const bool shown = args_shown(fcinfo);
  const int nargs = PG_NARGS();
  connect_ledger(fn);
  Failure f;
  std::int64_t n = 0;
  run_cpp(f, fn, [&] {
    PlanCall call;
    read_or_refuse(call);
    const optdp::zcdp::Entry extra = further_entry(a[0], a[1], nargs > 2 ? &a[2] : nullptr);
    n = static_cast<std::int64_t>(optdp::zcdp::further_releases(
        call.history, extra, {call.account.total_epsilon, call.account.total_delta}));
  }, shown);
  raise(f);
  PG_RETURN_INT64(n);
}

// dp_gaussian_sigma(k [, sensitivity]): the smallest sigma with which k more
// Gaussian releases of that L2 sensitivity fit; NULL if none does.
Datum optdp_gaussian_sigma(PG_FUNCTION_ARGS) {
  const char* fn = "dp_gaussian_sigma";
  PlanArg a[2];
  for (int i = 0; i < PG_NARGS() && i < 2; ++i) {
    a[i].null = PG_ARGISNULL(i);
    if (a[i].null) continue;
    if (i == 0) a[i].integer = PG_GETARG_INT64(0);
    else a[i].number = PG_GETARG_FLOAT8(i);
  }
  const bool shown = args_shown(fcinfo);
  const int nargs = PG_NARGS();
  connect_ledger(fn);
  Failure f;
  double s2 = 0;
  run_cpp(f, fn, [&] {
    PlanCall call;
    read_or_refuse(call);
    if (a[0].null) throw std::invalid_argument("k must be an integer, but is NULL");
    const std::int64_t k = a[0].integer;
    if (k < 1 || k > 1000000000)
      throw std::invalid_argument("k must be an INTEGER in [1, 10^9], but is " + std::to_string(k));
    const double sensitivity = nargs > 1 ? sensitivity_arg(a[1]) : 1;
    s2 = optdp::zcdp::sigma2_for_further(call.history, static_cast<std::uint64_t>(k), sensitivity,
                                         {call.account.total_epsilon, call.account.total_delta});
  }, shown);
  raise(f);
  if (!std::isfinite(s2)) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(std::sqrt(s2));
}

}  // extern "C"
