// staircase_sum and laplace_sum: the sum of x over the group, each row clamped
// into [lower, upper] (or [0, delta]), released with integer noise on a
// power-of-two grid (core/staircase.hpp, Grid): rows are rounded to the grid
// and summed exactly as 128-bit integers, integer noise with the grid's
// sensitivity is added, and (sum + noise) * g is returned as REAL. The set of
// possible outputs is the grid, whatever the low-order bits of the data.
//
//   staircase_sum(x, eps, delta)                    rows clamped into [0, delta]
//   staircase_sum(x, eps, lower, upper)             rows clamped into [lower, upper]
//   staircase_sum(x, eps, lower, upper, cost)       cost 'l1' (default), 'l2', 'gamma=G'
//   laplace_sum(x, eps, delta), laplace_sum(x, eps, lower, upper)
#include <cmath>
#include <cstring>

#include "core/format.hpp"
#include "core/helpers.hpp"
#include "core/privacy.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"
#include "sqlite/release.hpp"

namespace optdp::sql {

namespace {

enum class Mechanism { Staircase, Laplace };

constexpr const char* name_of(Mechanism m) { return m == Mechanism::Staircase ? "staircase_sum" : "laplace_sum"; }


// The validated parameters of one release.
struct SumPlan {
  double eps, lower, upper;
  CostSpec cost;
  Grid grid;
};

// Validates the parameters p (arguments 1.. of a call with argc arguments).
SumPlan parse(const std::vector<Param>& p, int argc) {
  SumPlan st{};
  st.eps = number_param(p[0], "eps");
  check_positive(st.eps, "eps");
  if (argc == 3) {
    const double delta = number_param(p[1], "delta");
    check_positive(delta, "delta");
    st.lower = 0;
    st.upper = delta;
  } else {
    st.lower = number_param(p[1], "lower");
    st.upper = number_param(p[2], "upper");
  }
  st.cost = CostSpec{};
  if (argc == 5) st.cost = parse_cost_spec(text_param(p[3], "cost", "'l1', 'l2' or 'gamma=G'"));
  st.grid = make_grid(st.eps, st.lower, st.upper, argc == 3 ? "delta" : "upper - lower");
  return st;
}

// The form's own steps of the release sequence (Aggregate, release.hpp).
template <Mechanism M>
struct Sum {
  static constexpr const char* kName = name_of(M);
  using Plan = SumPlan;
  // The exact sum of grid integers, a 128-bit integer held as bytes: SQLite's
  // aggregate memory is only 8-byte aligned, __int128 needs 16.
  struct Data {
    unsigned char sum_bytes[16];
    __int128 sum() const {
      __int128 v;
      std::memcpy(&v, sum_bytes, sizeof v);
      return v;
    }
  };
  static Plan plan(const std::vector<Param>& p, int argc) { return parse(p, argc); }
  static double epsilon(const Plan& plan) { return plan.eps; }
  static void add(const Plan& plan, Data& d, std::byte*, sqlite3_value** argv) noexcept {
    sqlite3_value* x = argv[0];
    const int t = sqlite3_value_type(x);
    if (t == SQLITE_NULL) return;
    const __int128 v = d.sum() + plan.grid.quantize(row_value(x, t), plan.lower, plan.upper);
    std::memcpy(d.sum_bytes, &v, sizeof v);
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& plan, Data& d, std::byte*) {
    const std::int64_t D = plan.grid.D();
    std::int64_t noise;
    if constexpr (M == Mechanism::Staircase) {
      const std::int64_t r = plan.cost.fixed_gamma ? IntegerStaircase::r_for_gamma(plan.cost.gamma, D)
                                                   : IntegerStaircase::optimal_r(plan.eps, D, plan.cost.cost);
      noise = conn.integer_staircase(plan.eps, D, r)(conn.rng());
    } else {
      // Discrete Laplace on the grid: P[z] ~ e^(-eps |z| / D). eps/D is rounded
      // down if need be, so that alpha >= e^(-eps/D).
      double x = plan.eps / static_cast<double>(D);
      if (std::fma(x, static_cast<double>(D), -plan.eps) > 0) x = std::nextafter(x, 0.0);
      noise = conn.two_sided_geometric(alpha_of_epsilon(x))(conn.rng());
    }
    const __int128 total = d.sum() + noise;
    sqlite3_result_double(ctx, static_cast<double>(total) * plan.grid.g);
  }
};

using Staircase = Sum<Mechanism::Staircase>;
using Laplace = Sum<Mechanism::Laplace>;

}  // namespace

void check_sum_params(const std::vector<Param>& p) { parse(p, static_cast<int>(p.size()) + 1); }

void staircase_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Staircase, 0>::step(ctx, argc, argv);
}
void staircase_sum_final3(sqlite3_context* ctx) { Aggregate<Staircase, 3>::final(ctx); }
void staircase_sum_final4(sqlite3_context* ctx) { Aggregate<Staircase, 4>::final(ctx); }
void staircase_sum_final5(sqlite3_context* ctx) { Aggregate<Staircase, 5>::final(ctx); }
void laplace_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Laplace, 0>::step(ctx, argc, argv);
}
void laplace_sum_final3(sqlite3_context* ctx) { Aggregate<Laplace, 3>::final(ctx); }
void laplace_sum_final4(sqlite3_context* ctx) { Aggregate<Laplace, 4>::final(ctx); }

// staircase_gamma(eps, cost): the optimal shape of the continuous staircase.
void staircase_gamma_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "staircase_gamma", argc, argv, [&] {
    const double eps = number_arg(argv[0], "eps");
    check_positive(eps, "eps");
    sqlite3_result_double(ctx, staircase_gamma(eps, parse_cost(text_arg(argv[1], "cost", "'l1' or 'l2'"))));
  });
}

// noise_cost(mechanism, eps, delta, cost): exact expected cost of the noise.
void noise_cost_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "noise_cost", argc, argv, [&] {
    const SumMechanism mech = parse_sum_mechanism(text_arg(argv[0], "mechanism", "'staircase' or 'laplace'"));
    const double eps = number_arg(argv[1], "eps");
    check_positive(eps, "eps");
    const double delta = number_arg(argv[2], "delta");
    check_positive(delta, "delta");
    const Cost cost = parse_cost(text_arg(argv[3], "cost", "'l1' or 'l2'"));
    sqlite3_result_double(ctx, mech == SumMechanism::Laplace ? laplace_cost(eps, delta, cost)
                                                 : staircase_optimal_cost(eps, delta, cost));
  });
}

// dp_sum_grid(eps, lower, upper): the grid step g that staircase_sum and
// laplace_sum use for these parameters (their outputs are multiples of g).
void dp_sum_grid_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_sum_grid", argc, argv, [&] {
    const double eps = number_arg(argv[0], "eps");
    check_positive(eps, "eps");
    sqlite3_result_double(ctx, make_grid(eps, number_arg(argv[1], "lower"), number_arg(argv[2], "upper")).g);
  });
}

}  // namespace optdp::sql
