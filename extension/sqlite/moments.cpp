// private_avg, private_var and private_stddev (x, eps, lower, upper): one
// release each, charged eps once: a noisy count and noisy centred sums on a
// power-of-two grid (core/moments.hpp, docs/moments.md), combined into the
// mean, the variance or its square root, clamped into their possible ranges.
//
// The release sequence (parameters, allocation, charge, rows, noise) is
// Aggregate in release.hpp; this file says what is the moments' own.
#include <cstring>

#include "core/moments.hpp"
#include "core/privacy.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"
#include "sqlite/release.hpp"

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

static_assert(std::is_trivially_copyable_v<MomentsPlan>);

// The form's own steps of the release sequence (Aggregate, release.hpp).
template <Stat S>
struct Moments {
  static constexpr const char* kName = name_of(S);
  using Plan = MomentsPlan;
  using Data = MomentSums;
  static Plan plan(const std::vector<Param>& p, int) { return parse(p, kind_of(S)); }
  static double epsilon(const Plan& plan) { return plan.eps; }
  static void add(const Plan& plan, Data& d, std::byte*, sqlite3_value** argv) noexcept {
    sqlite3_value* x = argv[0];
    const int t = sqlite3_value_type(x);
    if (t == SQLITE_NULL) return;
    const std::int64_t y = plan.y(row_value(x, t));
    ++d.n;
    MomentSums::add(d.s1_bytes, y);
    if constexpr (S != Stat::Avg) MomentSums::add(d.s2_bytes, plan.z(y));
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& plan, Data& d, std::byte*) {
    Rng& rng = conn.rng();
    std::int64_t n;
    if (__builtin_add_overflow(d.n, conn.two_sided_geometric(alpha_of_epsilon(plan.eps_count))(rng), &n))
      n = d.n;  // unreachable: n < 2^63 rows and |noise| < 2^62
    auto staircase = [&](double e, std::int64_t D) {
      return conn.integer_staircase(e, D, IntegerStaircase::optimal_r(e, D, Cost::L1))(rng);
    };
    const __int128 s1 = MomentSums::get(d.s1_bytes) + staircase(plan.eps_s1, plan.H);
    double out;
    if constexpr (S == Stat::Avg) {
      out = plan.mean(n, s1);
    } else {
      const __int128 s2 = MomentSums::get(d.s2_bytes) + staircase(plan.eps_s2, plan.D2);
      out = S == Stat::Var ? plan.variance(n, s1, s2) : plan.stddev(n, s1, s2);
    }
    sqlite3_result_double(ctx, out);
  }
};

}  // namespace

void private_avg_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Moments<Stat::Avg>, 4>::step(ctx, argc, argv);
}
void private_avg_final(sqlite3_context* ctx) { Aggregate<Moments<Stat::Avg>, 4>::final(ctx); }
void private_var_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Moments<Stat::Var>, 4>::step(ctx, argc, argv);
}
void private_var_final(sqlite3_context* ctx) { Aggregate<Moments<Stat::Var>, 4>::final(ctx); }
void private_stddev_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Moments<Stat::Stddev>, 4>::step(ctx, argc, argv);
}
void private_stddev_final(sqlite3_context* ctx) { Aggregate<Moments<Stat::Stddev>, 4>::final(ctx); }
void check_moment_params(const std::vector<Param>& p) { parse(p, MomentsPlan::Kind::Variance); }

}  // namespace optdp::sql
