// private_avg, private_var and private_stddev (x, eps, lower, upper): one
// release each, charged eps once: a noisy count and noisy centred sums on a
// power-of-two grid (core/moments.hpp, docs/moments.md), combined into the
// mean, the variance or its square root, clamped into their possible ranges.
//
// The parameters are read from the statement's text once per release
// (params.hpp), by the first row or, when no row matched, by the final call.
#include <cstring>

#include "core/moments.hpp"
#include "core/privacy.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

namespace {

enum class Stat { Avg, Var, Stddev };

constexpr const char* name_of(Stat s) {
  return s == Stat::Avg ? "private_avg" : s == Stat::Var ? "private_var" : "private_stddev";
}

MomentsPlan parse(const std::vector<Param>& p, MomentsPlan::Kind kind) {
  return MomentsPlan(kind, number_param(p[0], "eps"), number_param(p[1], "lower"), number_param(p[2], "upper"));
}

constexpr MomentsPlan::Kind kind_of(Stat s) { return s == Stat::Avg ? MomentsPlan::Kind::Mean : MomentsPlan::Kind::Variance; }

// Aggregate context: zeroed by SQLite. 128-bit sums as bytes (SQLite's
// aggregate memory is only 8-byte aligned).
struct MomentsState {
  unsigned char s1_bytes[16], s2_bytes[16];
  std::int64_t n;
  bool ready, failed;
  alignas(8) unsigned char plan_bytes[sizeof(MomentsPlan)];
  const MomentsPlan& plan() const { return *reinterpret_cast<const MomentsPlan*>(plan_bytes); }
  static __int128 get(const unsigned char* b) {
    __int128 v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  static void add(unsigned char* b, __int128 d) {
    const __int128 v = get(b) + d;
    std::memcpy(b, &v, sizeof v);
  }
};
static_assert(std::is_trivially_copyable_v<MomentsPlan>);

template <Stat S>
MomentsPlan read(sqlite3_context* ctx) {
  return parse(read_params(sqlite3_context_db_handle(ctx), connection(ctx).statement_cache(), name_of(S), 4), kind_of(S));
}

// The release's first step, before any row is added: by the first row of a
// group or, when no row matched, by the final call, on the same state
// (allocated the same way on both paths): reads the parameters and charges.
template <Stat S>
[[gnu::noinline]] bool begin(sqlite3_context* ctx, MomentsState* st) {
  st->ready = guard(ctx, name_of(S), [&] {
    const MomentsPlan plan = read<S>(ctx);
    std::memcpy(st->plan_bytes, &plan, sizeof plan);
    connection(ctx).charge(name_of(S), plan.eps);
  });
  st->failed = !st->ready;
  return st->ready;
}

template <Stat S>
void step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* st = static_cast<MomentsState*>(sqlite3_aggregate_context(ctx, sizeof(MomentsState)));
  if (!(st && st->ready)) [[unlikely]] {
    if (!st) return sqlite3_result_error_nomem(ctx);
    if (st->failed || !begin<S>(ctx, st)) return;
  }
  sqlite3_value* x = argv[0];
  const int t = sqlite3_value_type(x);
  if (t == SQLITE_NULL) return;
  const double v = row_value(x, t);
  const std::int64_t y = st->plan().y(v);
  ++st->n;
  MomentsState::add(st->s1_bytes, y);
  if constexpr (S != Stat::Avg) MomentsState::add(st->s2_bytes, st->plan().z(y));
}

template <Stat S>
void final(sqlite3_context* ctx) {
  auto* st = static_cast<MomentsState*>(sqlite3_aggregate_context(ctx, sizeof(MomentsState)));
  if (!st) return sqlite3_result_error_nomem(ctx);
  if (!st->ready && !st->failed && !begin<S>(ctx, st)) return;  // no rows: the same first step
  if (!st->ready) return;                                        // the first row reported the error
  guard(ctx, name_of(S), [&] {
    const MomentsPlan& plan = st->plan();
    Connection& conn = connection(ctx);
    Rng& rng = conn.rng();
    std::int64_t n;
    if (__builtin_add_overflow(st->n, conn.two_sided_geometric(alpha_of_epsilon(plan.eps_count))(rng), &n))
      n = st->n;  // unreachable: n < 2^63 rows and |noise| < 2^62
    auto staircase = [&](double e, std::int64_t D) {
      return conn.integer_staircase(e, D, IntegerStaircase::optimal_r(e, D, Cost::L1))(rng);
    };
    const __int128 s1 = MomentsState::get(st->s1_bytes) + staircase(plan.eps_s1, plan.H);
    double out;
    if constexpr (S == Stat::Avg) {
      out = plan.mean(n, s1);
    } else {
      const __int128 s2 = MomentsState::get(st->s2_bytes) + staircase(plan.eps_s2, plan.D2);
      out = S == Stat::Var ? plan.variance(n, s1, s2) : plan.stddev(n, s1, s2);
    }
    sqlite3_result_double(ctx, out);
  });
}

}  // namespace

void private_avg_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) { step<Stat::Avg>(ctx, argc, argv); }
void private_avg_final(sqlite3_context* ctx) { final<Stat::Avg>(ctx); }
void private_var_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) { step<Stat::Var>(ctx, argc, argv); }
void private_var_final(sqlite3_context* ctx) { final<Stat::Var>(ctx); }
void private_stddev_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) { step<Stat::Stddev>(ctx, argc, argv); }
void private_stddev_final(sqlite3_context* ctx) { final<Stat::Stddev>(ctx); }
void check_moment_params(const std::vector<Param>& p) { parse(p, MomentsPlan::Kind::Variance); }

}  // namespace optdp::sql
