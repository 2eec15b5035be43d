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
#include "core/privacy.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

namespace {

enum class Mechanism { Staircase, Laplace };

constexpr const char* name_of(Mechanism m) { return m == Mechanism::Staircase ? "staircase_sum" : "laplace_sum"; }


// Aggregate context: plain data, zeroed by SQLite on allocation.
struct SumState {
  // The exact sum of grid integers, a 128-bit integer held as bytes: SQLite's
  // aggregate memory is only 8-byte aligned, __int128 needs 16.
  unsigned char sum_bytes[16];
  __int128 sum() const {
    __int128 v;
    std::memcpy(&v, sum_bytes, sizeof v);
    return v;
  }
  void add(std::int64_t q) {
    const __int128 v = sum() + q;
    std::memcpy(sum_bytes, &v, sizeof v);
  }
  double eps, lower, upper;
  CostSpec cost;
  Grid grid;
  bool begun;  // the release has begun (begin() ran)
  bool ready;  // ... and its parameters were read and charged
};

// Validates the parameters p (arguments 1.. of a call with argc arguments) into st.
void parse(SumState& st, const std::vector<Param>& p, int argc) {
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
}

// Reads and validates the parameters from the statement's text
// (params.hpp): the same call for a first row and for an empty input.
void read_params(sqlite3_context* ctx, SumState& st, Mechanism mech, int argc) {
  parse(st, sql::read_params(sqlite3_context_db_handle(ctx), connection(ctx).statement_cache(), name_of(mech), argc),
        argc);
}

// The release's first step, before any row is added: by the first row of a
// group or, when no row matched, by the final call, on the same state
// (allocated the same way on both paths): reads the parameters and charges.
template <Mechanism M>
[[gnu::noinline]] bool begin(sqlite3_context* ctx, SumState* st, int argc) {
  st->begun = true;
  st->ready = guard(ctx, name_of(M), [&] {
    read_params(ctx, *st, M, argc);
    connection(ctx).charge(name_of(M), st->eps);
  });
  return st->ready;
}

template <Mechanism M>
void sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto* st = static_cast<SumState*>(sqlite3_aggregate_context(ctx, sizeof(SumState)));
  if (!(st && st->ready)) [[unlikely]] {
    if (!st) return sqlite3_result_error_nomem(ctx);
    if (st->begun || !begin<M>(ctx, st, argc)) return;
  }
  sqlite3_value* x = argv[0];
  const int t = sqlite3_value_type(x);
  if (t == SQLITE_NULL) return;
  const double v = row_value(x, t);
  st->add(st->grid.quantize(v, st->lower, st->upper));
}

template <Mechanism M, int ARGC>
void sum_final(sqlite3_context* ctx) {
  auto* st = static_cast<SumState*>(sqlite3_aggregate_context(ctx, sizeof(SumState)));
  if (!st) return sqlite3_result_error_nomem(ctx);
  if (!st->begun && !begin<M>(ctx, st, ARGC)) return;  // no rows: the same first step
  if (!st->ready) return;                               // the first row reported the error
  guard(ctx, name_of(M), [&] {
    Connection& conn = connection(ctx);
    const std::int64_t D = st->grid.D();
    std::int64_t noise;
    if constexpr (M == Mechanism::Staircase) {
      const std::int64_t r = st->cost.fixed_gamma ? IntegerStaircase::r_for_gamma(st->cost.gamma, D)
                                                  : IntegerStaircase::optimal_r(st->eps, D, st->cost.cost);
      noise = conn.integer_staircase(st->eps, D, r)(conn.rng());
    } else {
      // Discrete Laplace on the grid: P[z] ~ e^(-eps |z| / D). eps/D is rounded
      // down if need be, so that alpha >= e^(-eps/D).
      double x = st->eps / static_cast<double>(D);
      if (std::fma(x, static_cast<double>(D), -st->eps) > 0) x = std::nextafter(x, 0.0);
      noise = conn.two_sided_geometric(alpha_of_epsilon(x))(conn.rng());
    }
    const __int128 total = st->sum() + noise;
    sqlite3_result_double(ctx, static_cast<double>(total) * st->grid.g);
  });
}

}  // namespace

void check_sum_params(const std::vector<Param>& p) {
  SumState st{};
  parse(st, p, static_cast<int>(p.size()) + 1);
}

void staircase_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  sum_step<Mechanism::Staircase>(ctx, argc, argv);
}
void staircase_sum_final3(sqlite3_context* ctx) { sum_final<Mechanism::Staircase, 3>(ctx); }
void staircase_sum_final4(sqlite3_context* ctx) { sum_final<Mechanism::Staircase, 4>(ctx); }
void staircase_sum_final5(sqlite3_context* ctx) { sum_final<Mechanism::Staircase, 5>(ctx); }
void laplace_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  sum_step<Mechanism::Laplace>(ctx, argc, argv);
}
void laplace_sum_final3(sqlite3_context* ctx) { sum_final<Mechanism::Laplace, 3>(ctx); }
void laplace_sum_final4(sqlite3_context* ctx) { sum_final<Mechanism::Laplace, 4>(ctx); }

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
    const std::string mech(text_arg(argv[0], "mechanism", "'staircase' or 'laplace'"));
    if (mech != "staircase" && mech != "laplace")
      throw std::invalid_argument("mechanism must be 'staircase' or 'laplace', but is " + describe(argv[0]));
    const double eps = number_arg(argv[1], "eps");
    check_positive(eps, "eps");
    const double delta = number_arg(argv[2], "delta");
    check_positive(delta, "delta");
    const Cost cost = parse_cost(text_arg(argv[3], "cost", "'l1' or 'l2'"));
    sqlite3_result_double(ctx, mech == "laplace" ? laplace_cost(eps, delta, cost)
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
