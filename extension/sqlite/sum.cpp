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
#include "sqlite/constant_args.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

namespace {

enum class Mechanism { Staircase, Laplace };

constexpr const char* name_of(Mechanism m) { return m == Mechanism::Staircase ? "staircase_sum" : "laplace_sum"; }

constexpr std::size_t kMaxCostText = 64;

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
  char cost_text[kMaxCostText];  // as given, to check that it stays the same
  std::size_t cost_len;          // its length in bytes (argc == 5)
  Grid grid;
  ParamCheck check;
};

// Reads and validates the parameters (argv[1..argc)) into st. One place for
// the first row and for an empty input (parameters read from the statement).
void read_params(SumState& st, Mechanism mech, int argc, sqlite3_value** argv) {
  st.eps = number_arg(argv[1], "eps");
  check_positive(st.eps, "eps");
  if (argc == 3) {
    const double delta = number_arg(argv[2], "delta");
    check_positive(delta, "delta");
    st.lower = 0;
    st.upper = delta;
  } else {
    st.lower = number_arg(argv[2], "lower");
    st.upper = number_arg(argv[3], "upper");
  }
  st.cost = CostSpec{};
  st.cost_text[0] = 0;
  if (argc == 5) {
    if (sqlite3_value_type(argv[4]) != SQLITE_TEXT)
      throw std::invalid_argument("cost must be text ('l1', 'l2' or 'gamma=G'), but is " + describe(argv[4]));
    const char* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[4]));
    const int n = sqlite3_value_bytes(argv[4]);
    st.cost = parse_cost_spec(std::string_view(text ? text : "", static_cast<std::size_t>(n)));
    std::memcpy(st.cost_text, text, static_cast<std::size_t>(n));  // < 64 bytes once parsed
    st.cost_text[n] = 0;
    st.cost_len = static_cast<std::size_t>(n);
  }
  st.grid = make_grid(st.eps, st.lower, st.upper, argc == 3 ? "delta" : "upper - lower");
  (void)mech;
}

// Whether v is the first row's cost text, byte for byte (a text with a NUL
// after 'l1' is not 'l1').
bool unchanged_cost(sqlite3_value* v, const SumState& st) {
  if (sqlite3_value_type(v) != SQLITE_TEXT) return false;
  const auto* text = sqlite3_value_text(v);
  return text && static_cast<std::size_t>(sqlite3_value_bytes(v)) == st.cost_len &&
         std::memcmp(text, st.cost_text, st.cost_len) == 0;
}

// Throws unless argv[1..argc) equal the parameters of the first row.
void require_same_params(const SumState& st, int argc, sqlite3_value** argv) {
  require_same_number(argv[1], st.eps, "eps");
  if (argc == 3) {
    require_same_number(argv[2], st.upper, "delta");
    return;
  }
  require_same_number(argv[2], st.lower, "lower");
  require_same_number(argv[3], st.upper, "upper");
  if (argc == 5 && !unchanged_cost(argv[4], st))
    throw std::invalid_argument("cost must be the same in every row of a group, but changed from " +
                                quote_text(std::string_view(st.cost_text, st.cost_len)) + " to " + describe(argv[4]));
}

// The first row reads the parameters; the next rows compare them, until the
// proof that they are literals (params.hpp). Returns whether to go on with
// the row.
template <Mechanism M>
[[gnu::noinline]] bool check_params(sqlite3_context* ctx, SumState& st, int argc, sqlite3_value** argv) {
  if (st.check.params == Params::Unread) {
    st.check.first_row(ctx, guard(ctx, name_of(M), [&] { read_params(st, M, argc, argv); }));
  } else if (st.check.params == Params::Checked) {
    bool same = unchanged_number(argv[1], st.eps);
    if (argc == 3) same = same && unchanged_number(argv[2], st.upper);
    else same = same && unchanged_number(argv[2], st.lower) && unchanged_number(argv[3], st.upper);
    if (argc == 5) same = same && unchanged_cost(argv[4], st);
    if (!same) same = guard(ctx, name_of(M), [&] { require_same_params(st, argc, argv); });
    st.check.compared_row(ctx, same, name_of(M), argc, 1);
  }
  return !st.check.failed();
}

template <Mechanism M>
void sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto* st = static_cast<SumState*>(sqlite3_aggregate_context(ctx, sizeof(SumState)));
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (!st->check.constant() && !check_params<M>(ctx, *st, argc, argv)) [[unlikely]]
    return;
  sqlite3_value* x = argv[0];
  const int t = sqlite3_value_type(x);
  if (t == SQLITE_NULL) return;
  if (t != SQLITE_FLOAT && t != SQLITE_INTEGER) [[unlikely]] {
    if (!guard(ctx, name_of(M), [&] { number_arg(x, "x"); })) st->check.params = Params::Failed;
    return;
  }
  st->add(st->grid.quantize(sqlite3_value_double(x), st->lower, st->upper));
}

template <Mechanism M, int ARGC>
void sum_final(sqlite3_context* ctx) {
  guard(ctx, name_of(M), [&] {
    auto* st = static_cast<SumState*>(sqlite3_aggregate_context(ctx, 0));
    SumState empty{};
    if (!st) {
      // No rows at all: 0 + noise, with the parameters read from the statement.
      auto args = constant_args(sqlite3_context_db_handle(ctx), name_of(M), ARGC, 1);
      sqlite3_value* argv[5] = {nullptr};
      for (int i = 1; i < ARGC; ++i) argv[i] = args[static_cast<std::size_t>(i - 1)].get();
      read_params(empty, M, ARGC, argv);
      empty.check.params = Params::Checked;
      st = &empty;
    }
    if (st->check.released_nothing()) return;  // the step reported the error
    Connection& conn = connection(ctx);
    conn.charge(name_of(M), st->eps);
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
void staircase_gamma_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guard(ctx, "staircase_gamma", [&] {
    const double eps = number_arg(argv[0], "eps");
    check_positive(eps, "eps");
    sqlite3_result_double(ctx, staircase_gamma(eps, parse_cost(text_arg(argv[1], "cost", "'l1' or 'l2'"))));
  });
}

// noise_cost(mechanism, eps, delta, cost): exact expected cost of the noise.
void noise_cost_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guard(ctx, "noise_cost", [&] {
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
void dp_sum_grid_fn(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guard(ctx, "dp_sum_grid", [&] {
    const double eps = number_arg(argv[0], "eps");
    check_positive(eps, "eps");
    sqlite3_result_double(ctx, make_grid(eps, number_arg(argv[1], "lower"), number_arg(argv[2], "upper")).g);
  });
}

}  // namespace optdp::sql
