// Exact noise intervals (core/intervals.hpp, docs/intervals.md):
//
//   count_interval(alpha, confidence)                 INTEGER h: a count's (or a level's) noise
//   count_interval_alpha(h, confidence)               the largest alpha whose interval is at most h
//   sum_interval(mechanism, eps, lower, upper, confidence [, cost])
//                                                     REAL h: a sum's noise, on its grid
//   sum_interval_eps(mechanism, h, lower, upper, confidence [, cost])
//                                                     an eps whose interval is at most h
//   quantile_rank_error(eps, lower, upper, confidence) private_quantile's rank error bound
//
// Every value depends on the public parameters alone, so these cost nothing.
#include <cmath>
#include <string>

#include "core/format.hpp"
#include "core/intervals.hpp"
#include "core/privacy.hpp"
#include "core/quantile.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/functions.hpp"

namespace optdp::sql {

namespace {

enum class Kind { Staircase, Laplace };

Kind kind_of(sqlite3_value* v) {
  const std::string m(text_arg(v, "mechanism", "'staircase' or 'laplace'"));
  if (m == "staircase") return Kind::Staircase;
  if (m == "laplace") return Kind::Laplace;
  throw std::invalid_argument("mechanism must be 'staircase' or 'laplace', but is " + describe(v));
}

double confidence_arg(sqlite3_value* v) {
  const double c = number_arg(v, "confidence");
  check_confidence(c);
  return c;
}

// The half-width of a sum's noise in data units: h grid steps times the step,
// with the sampler the sum itself builds (sum.cpp).
double sum_half_width(Kind k, double eps, double lower, double upper, const CostSpec& cost, double confidence) {
  const Grid grid = make_grid(eps, lower, upper);
  const std::int64_t D = grid.D();
  std::int64_t h;
  if (k == Kind::Staircase) {
    const std::int64_t r =
        cost.fixed_gamma ? IntegerStaircase::r_for_gamma(cost.gamma, D) : IntegerStaircase::optimal_r(eps, D, cost.cost);
    const IntegerStaircase s(eps, D, r);
    h = staircase_half_width(s.b(), D, r, confidence);
  } else {
    double x = eps / static_cast<double>(D);
    if (std::fma(x, static_cast<double>(D), -eps) > 0) x = std::nextafter(x, 0.0);
    h = geometric_half_width(alpha_of_epsilon(x), confidence);
  }
  return static_cast<double>(h) * grid.g;
}

// (mechanism, <argv[1]>, lower, upper, confidence [, cost]): everything but argv[1].
struct SumArgs {
  Kind kind;
  double lower, upper, confidence;
  CostSpec cost;
};
SumArgs sum_args(int argc, sqlite3_value** argv, double (*second)(sqlite3_value*), double* value) {
  SumArgs a{kind_of(argv[0]), 0, 0, 0, CostSpec{}};
  *value = second(argv[1]);
  a.lower = number_arg(argv[2], "lower");
  a.upper = number_arg(argv[3], "upper");
  a.confidence = confidence_arg(argv[4]);
  if (argc == 6) {
    if (a.kind == Kind::Laplace) throw std::invalid_argument("cost applies only to 'staircase'");
    a.cost = parse_cost_spec(text_arg(argv[5], "cost", "'l1', 'l2' or 'gamma=G'"));
  }
  return a;
}

double eps_of(sqlite3_value* v) {
  const double eps = number_arg(v, "eps");
  check_positive(eps, "eps");
  return eps;
}
double half_width_of(sqlite3_value* v) {
  const double h = number_arg(v, "half_width");
  check_positive(h, "half_width");
  return h;
}

}  // namespace

// count_interval(alpha, confidence): a count's (or a level's) noise.
void count_interval_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "count_interval", argc, argv, [&] {
    const double alpha = number_arg(argv[0], "alpha");
    if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("alpha must be in (0, 1), but is " + describe(argv[0]));
    sqlite3_result_int64(ctx, geometric_half_width(alpha, confidence_arg(argv[1])));
  });
}

// count_interval_alpha(half_width, confidence): the largest alpha whose interval is at most half_width.
void count_interval_alpha_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "count_interval_alpha", argc, argv, [&] {
    const std::int64_t h = integer_arg(argv[0], "half_width");
    if (h < 0) throw std::invalid_argument("half_width must be at least 0, but is " + describe(argv[0]));
    sqlite3_result_double(ctx, geometric_alpha_for(h, confidence_arg(argv[1])));
  });
}

// sum_interval(mechanism, eps, lower, upper, confidence [, cost]): a sum's noise, on its grid.
void sum_interval_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "sum_interval", argc, argv, [&] {
    double eps;
    const SumArgs a = sum_args(argc, argv, eps_of, &eps);
    sqlite3_result_double(ctx, sum_half_width(a.kind, eps, a.lower, a.upper, a.cost, a.confidence));
  });
}

// sum_interval_eps(mechanism, half_width, lower, upper, confidence [, cost]):
// an eps in [2^-30, 2^20] whose interval is at most half_width (the least
// found by bisection; the grid makes the half-width a step function, so the
// eps is checked with sum_interval itself); NULL if even 2^20 is too noisy.
void sum_interval_eps_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "sum_interval_eps", argc, argv, [&] {
    double h;
    const SumArgs a = sum_args(argc, argv, half_width_of, &h);
    auto fits = [&](double e) { return sum_half_width(a.kind, e, a.lower, a.upper, a.cost, a.confidence) <= h; };
    double lo = 0x1p-30, hi = 0x1p20;
    if (fits(lo)) return sqlite3_result_double(ctx, lo);
    if (!fits(hi)) return sqlite3_result_null(ctx);
    for (int i = 0; i < 200 && std::nextafter(lo, hi) < hi; ++i) {  // !fits(lo), fits(hi)
      const double mid = hi / lo > 4 ? std::sqrt(lo) * std::sqrt(hi) : lo + (hi - lo) / 2;
      (fits(mid) ? hi : lo) = mid;
    }
    sqlite3_result_double(ctx, hi);
  });
}

// quantile_rank_error(eps, lower, upper, confidence): private_quantile's rank error bound.
void quantile_rank_error_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "quantile_rank_error", argc, argv, [&] {
    const double eps = eps_of(argv[0]);
    const double lower = number_arg(argv[1], "lower"), upper = number_arg(argv[2], "upper");
    const double confidence = confidence_arg(argv[3]);
    const QuantileGrid grid(lower, upper);
    sqlite3_result_double(ctx, quantile_rank_error(eps, grid.candidates() + 1, confidence));
  });
}

}  // namespace optdp::sql
