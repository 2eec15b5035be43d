// optdp for PostgreSQL: private_avg, private_var and private_stddev
// (core/moments.hpp, docs/moments.md). What the aggregates share is in
// aggregate.hpp (docs/scale.md describes the SQL surface).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/moments.hpp"
#include "core/privacy.hpp"
#include "core/staircase.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "catalog/pg_type.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

using namespace optdp_pg;

// ---- private_avg, private_var, private_stddev (x, eps, lower, upper) ----------
//
// One release each, charged eps once: a noisy count and noisy centred sums on
// a power-of-two grid (core/moments.hpp, docs/moments.md).
//
// Shipped between servers (docs/scale.md): private_avg_state (and _var_,
// _stddev_) returns the exact state with the aggregate's kind and (eps,
// lower, upper); private_avg_merge(state, eps, lower, upper) adds the states
// of that kind made with the same parameters, and its final function is the
// release's own (noise once, one charge).

namespace {

// The exact sums and the call's parameters (aggregate.hpp, "parameters
// carried in the state"; has_params 0: none yet).
struct MomentsState : optdp::MomentSums {
  double eps, lower, upper;
  std::int32_t has_params, pad;
};
static_assert(sizeof(MomentsState) == 72 && std::is_trivially_copyable_v<MomentsState>,
              "sql/*.sql's INITCOND of the moments");

void set_params(MomentsState& s, const optdp::MomentsPlan& plan) {
  s.eps = plan.eps;
  s.lower = plan.lower;
  s.upper = plan.upper;
  s.has_params = 1;
}

bool same_params(const MomentsState& a, const MomentsState& b) {
  return a.eps == b.eps && a.lower == b.lower && a.upper == b.upper;
}

void take_params(MomentsState& to, const MomentsState& from) {
  to.eps = from.eps;
  to.lower = from.lower;
  to.upper = from.upper;
  to.has_params = 1;
}

struct MomentsCache {
  bool ready;
  bool has_r;
  std::int64_t r1, r2;  // the staircases' r for S1 and S2, computed by the first release
  alignas(8) unsigned char plan_bytes[sizeof(optdp::MomentsPlan)];
  const optdp::MomentsPlan& plan() const { return *reinterpret_cast<const optdp::MomentsPlan*>(plan_bytes); }
};
static_assert(std::is_trivially_copyable_v<optdp::MomentsPlan>);

const optdp::MomentsPlan& moments_plan(FunctionCallInfo fcinfo, const char* function, optdp::MomentsPlan::Kind kind) {
  auto* cache = fn_cache<MomentsCache>(fcinfo);
  if (cache && cache->ready) return cache->plan();
  CallParams p;
  read_call(fcinfo, function, 1, p);
  Failure f;
  alignas(8) unsigned char plan_bytes[sizeof(optdp::MomentsPlan)];
  run_cpp(f, function, [&] {
    all_constant(p, {"eps", "lower", "upper"});
    // read in order (a constructor's arguments are evaluated in no set order)
    const double eps = number_param(p, 0, "eps");
    const double lower = number_param(p, 1, "lower");
    const double upper = number_param(p, 2, "upper");
    const optdp::MomentsPlan plan(kind, eps, lower, upper);
    std::memcpy(plan_bytes, &plan, sizeof plan);
  });
  raise(f);
  // Created only now, ready: moments_trans takes any cache for a read one.
  if (!cache) cache = instance_cache<MomentsCache>(fcinfo);
  std::memcpy(cache->plan_bytes, plan_bytes, sizeof plan_bytes);
  cache->ready = true;
  return cache->plan();
}

// The general steps, for the rows that moments_trans leaves: the first call
// of a group, a state without the parameters, a NULL or NaN x, a state with a
// short header (which nodeAgg never makes).
template <optdp::MomentsPlan::Kind K>
[[gnu::noinline]] Datum moments_trans_general(FunctionCallInfo fcinfo) {
  const char* fallback = K == optdp::MomentsPlan::Kind::Mean ? "private_avg" : "private_var";
  auto* cache = fn_cache<MomentsCache>(fcinfo);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    st = state_arg<MomentsState>(fcinfo, fallback, "moments");
    moments_plan(fcinfo, agg_name(fcinfo, fallback), K);
    cache = fn_cache<MomentsCache>(fcinfo);
  } else {
    st = own_state(fcinfo);
  }
  const optdp::MomentsPlan& plan = cache->plan();
  if (PG_ARGISNULL(1)) {
    MomentsState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    if (!s.has_params) {
      set_params(s, plan);
      store(st, s);
    }
  } else {
    double x = PG_GETARG_FLOAT8(1);
    if (std::isnan(x)) x = 0;  // as SQLite's sum() reads NaN: never an error on a row's value
    MomentsState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    if (!s.has_params) set_params(s, plan);
    const std::int64_t y = plan.y(x);
    ++s.n;
    MomentsState::add(s.s1_bytes, y);
    if constexpr (K != optdp::MomentsPlan::Kind::Mean) MomentsState::add(s.s2_bytes, plan.z(y));
    store(st, s);
  }
  PG_RETURN_BYTEA_P(st);
}

// Where has_params is in a state (MomentsState is not standard-layout, so
// no offsetof); a constant once optimised.
inline std::size_t has_params_offset() {
  const MomentsState s{};
  return static_cast<std::size_t>(reinterpret_cast<const unsigned char*>(&s.has_params) -
                                  reinterpret_cast<const unsigned char*>(&s));
}

// Every other row: n, S1 (and S2) updated in place, in a state that has the
// call's parameters; no stack frame (moments_trans_general is a tail call).
template <optdp::MomentsPlan::Kind K>
Datum moments_trans(FunctionCallInfo fcinfo) {
  const auto* cache = static_cast<const MomentsCache*>(fcinfo->flinfo->fn_extra);  // ready once set
  if (cache == nullptr || PG_ARGISNULL(0) || PG_ARGISNULL(1)) [[unlikely]]
    return moments_trans_general<K>(fcinfo);
  unsigned char* st = reinterpret_cast<unsigned char*>(DatumGetPointer(PG_GETARG_DATUM(0)));
  if (VARATT_IS_1B(st)) [[unlikely]]
    return moments_trans_general<K>(fcinfo);
  std::int32_t has;
  std::memcpy(&has, st + VARHDRSZ + has_params_offset(), sizeof has);
  if (!has) [[unlikely]]
    return moments_trans_general<K>(fcinfo);
  const double x = PG_GETARG_FLOAT8(1);
  if (std::isnan(x)) [[unlikely]]
    return moments_trans_general<K>(fcinfo);
  const optdp::MomentsPlan& plan = cache->plan();
  unsigned char* d = st + VARHDRSZ;  // the MomentSums at the state's start
  const std::int64_t y = plan.y(x);
  std::int64_t n;
  std::memcpy(&n, d + offsetof(optdp::MomentSums, n), sizeof n);
  ++n;
  std::memcpy(d + offsetof(optdp::MomentSums, n), &n, sizeof n);
  optdp::add_to_int128(d + offsetof(optdp::MomentSums, s1_bytes), y);
  if constexpr (K != optdp::MomentsPlan::Kind::Mean)
    optdp::add_to_int128(d + offsetof(optdp::MomentSums, s2_bytes), plan.z(y));
  return PointerGetDatum(st);
}

enum class Stat { Avg, Var, Stddev };

// The release's cost: eps, for the count and the sums together.
template <Stat S>
ReleaseCost moments_cost(FunctionCallInfo fcinfo) {
  constexpr auto kind = S == Stat::Avg ? optdp::MomentsPlan::Kind::Mean : optdp::MomentsPlan::Kind::Variance;
  const char* fn = agg_name(fcinfo, S == Stat::Avg ? "private_avg" : S == Stat::Var ? "private_var" : "private_stddev");
  return {fn, moments_plan(fcinfo, fn, kind).eps, 0.0};
}

template <Stat S>
Datum moments_final(FunctionCallInfo fcinfo) {
  constexpr auto kind = S == Stat::Avg ? optdp::MomentsPlan::Kind::Mean : optdp::MomentsPlan::Kind::Variance;
  const ReleaseCost cost = moments_cost<S>(fcinfo);
  const char* fn = cost.function;
  const optdp::MomentsPlan& plan = moments_plan(fcinfo, fn, kind);
  const MomentsState st = PG_ARGISNULL(0) ? MomentsState{} : load<MomentsState>(PG_GETARG_BYTEA_PP(0), fn, "moments");
  check_released_params(fn, st, plan);  // the state's parameters are then the plan's
  release_charge(fcinfo, cost);
  Failure f;
  double out = 0;
  run_cpp(f, fn, [&] {
    Backend& b = backend();
    optdp::Rng& rng = b.rng();
    std::int64_t n;
    if (__builtin_add_overflow(st.n, b.geometric(optdp::alpha_of_epsilon(plan.eps_count))(rng), &n))
      n = st.n;  // unreachable: n < 2^63 rows and |noise| < 2^62
    auto* cache = fn_cache<MomentsCache>(fcinfo);
    if (!cache->has_r) {
      cache->r1 = optdp::IntegerStaircase::optimal_r(plan.eps_s1, plan.H, optdp::Cost::L1);
      if (S != Stat::Avg) cache->r2 = optdp::IntegerStaircase::optimal_r(plan.eps_s2, plan.D2, optdp::Cost::L1);
      cache->has_r = true;
    }
    const __int128 s1 = MomentsState::get(st.s1_bytes) + b.staircase(plan.eps_s1, plan.H, cache->r1)(rng);
    if constexpr (S == Stat::Avg) {
      out = plan.mean(n, s1);
    } else {
      const __int128 s2 = MomentsState::get(st.s2_bytes) + b.staircase(plan.eps_s2, plan.D2, cache->r2)(rng);
      out = S == Stat::Var ? plan.variance(n, s1, s2) : plan.stddev(n, s1, s2);
    }
  });
  raise(f);
  PG_RETURN_FLOAT8(out);
}

// The exact state of one server, with what the merge must check.
struct MomentsShipped {
  std::uint32_t kind, pad;
  double eps, lower, upper;
  optdp::MomentSums state;
};

template <Stat S>
constexpr Shipped moments_kind() {
  return S == Stat::Avg ? Shipped::Avg : S == Stat::Var ? Shipped::Var : Shipped::Stddev;
}
template <Stat S>
constexpr auto plan_kind() {
  return S == Stat::Avg ? optdp::MomentsPlan::Kind::Mean : optdp::MomentsPlan::Kind::Variance;
}

template <Stat S>
Datum moments_state_final(FunctionCallInfo fcinfo) {
  const char* fn = agg_name(fcinfo, shipped_by(moments_kind<S>()));
  const optdp::MomentsPlan& plan = moments_plan(fcinfo, fn, plan_kind<S>());
  MomentsShipped out{};
  out.kind = static_cast<std::uint32_t>(moments_kind<S>());
  out.eps = plan.eps;
  out.lower = plan.lower;
  out.upper = plan.upper;
  if (!PG_ARGISNULL(0)) {
    const MomentsState s = load<MomentsState>(PG_GETARG_BYTEA_PP(0), fn, "moments");
    check_released_params(fn, s, plan);
    out.state = s;
  }
  PG_RETURN_BYTEA_P(seal_state(fn, moments_kind<S>(), new_state(out)));
}

// private_avg_merge (_var_, _stddev_) (state, eps, lower, upper): adds shipped
// states of its kind made with the same (eps, lower, upper).
template <Stat S>
Datum moments_merge_trans(FunctionCallInfo fcinfo) {
  const char* fn = S == Stat::Avg ? "private_avg_merge" : S == Stat::Var ? "private_var_merge" : "private_stddev_merge";
  bytea* st = state_arg<MomentsState>(fcinfo, fn, "moments");
  const optdp::MomentsPlan& plan = moments_plan(fcinfo, fn, plan_kind<S>());
  const char* want = shipped_by(moments_kind<S>());
  const MomentsShipped in = load<MomentsShipped>(shipped_arg(fcinfo, 1, fn, moments_kind<S>()), fn, want);
  if (in.eps != plan.eps || in.lower != plan.lower || in.upper != plan.upper)
    refuse_state(fn, [&] {
      return "state was computed with (eps, lower, upper) = " + describe_numbers({in.eps, in.lower, in.upper}) +
             ", but they are " + describe_numbers({plan.eps, plan.lower, plan.upper});
    });
  MomentsState s = load<MomentsState>(st, fn, "moments");
  s.n += in.state.n;
  MomentsState::add(s.s1_bytes, MomentsState::get(in.state.s1_bytes));
  MomentsState::add(s.s2_bytes, MomentsState::get(in.state.s2_bytes));
  set_params(s, plan);
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_avg_trans);
OPTDP_PG_FUNCTION(optdp_var_trans);
OPTDP_PG_FUNCTION(optdp_moments_combine);
OPTDP_PG_FUNCTION(optdp_avg_final);
OPTDP_PG_FUNCTION(optdp_var_final);
OPTDP_PG_FUNCTION(optdp_stddev_final);

Datum optdp_avg_trans(PG_FUNCTION_ARGS) { return moments_trans<optdp::MomentsPlan::Kind::Mean>(fcinfo); }
Datum optdp_var_trans(PG_FUNCTION_ARGS) { return moments_trans<optdp::MomentsPlan::Kind::Variance>(fcinfo); }
Datum optdp_moments_combine(PG_FUNCTION_ARGS) {
  bytea* st = state_arg<MomentsState>(fcinfo, "private_avg", "moments");
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  MomentsState a = load<MomentsState>(st, "private_avg", "moments");
  const MomentsState b = load<MomentsState>(PG_GETARG_BYTEA_PP(1), "private_avg", "moments");
  combine_params(fcinfo, "private_avg", a, b);
  a.n += b.n;
  MomentsState::add(a.s1_bytes, MomentsState::get(b.s1_bytes));
  MomentsState::add(a.s2_bytes, MomentsState::get(b.s2_bytes));
  store(st, a);
  PG_RETURN_BYTEA_P(st);
}
Datum optdp_avg_final(PG_FUNCTION_ARGS) { return moments_final<Stat::Avg>(fcinfo); }
Datum optdp_var_final(PG_FUNCTION_ARGS) { return moments_final<Stat::Var>(fcinfo); }
Datum optdp_stddev_final(PG_FUNCTION_ARGS) { return moments_final<Stat::Stddev>(fcinfo); }

OPTDP_PG_FUNCTION(optdp_avg_state_final) { return moments_state_final<Stat::Avg>(fcinfo); }
OPTDP_PG_FUNCTION(optdp_var_state_final) { return moments_state_final<Stat::Var>(fcinfo); }
OPTDP_PG_FUNCTION(optdp_stddev_state_final) { return moments_state_final<Stat::Stddev>(fcinfo); }
OPTDP_PG_STEP(optdp_avg_merge_add) { return moments_merge_trans<Stat::Avg>(fcinfo); }
OPTDP_PG_STEP(optdp_var_merge_add) { return moments_merge_trans<Stat::Var>(fcinfo); }
OPTDP_PG_STEP(optdp_stddev_merge_add) { return moments_merge_trans<Stat::Stddev>(fcinfo); }

}  // extern "C"

ReleaseCost optdp_pg::avg_cost(FunctionCallInfo fcinfo) { return moments_cost<Stat::Avg>(fcinfo); }
ReleaseCost optdp_pg::var_cost(FunctionCallInfo fcinfo) { return moments_cost<Stat::Var>(fcinfo); }
ReleaseCost optdp_pg::stddev_cost(FunctionCallInfo fcinfo) { return moments_cost<Stat::Stddev>(fcinfo); }
