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
#include "core/helpers.hpp"
#include "core/intervals.hpp"
#include "core/privacy.hpp"
#include "core/quantile.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/functions.hpp"

namespace optdp::sql {

namespace {

SumMechanism kind_of(sqlite3_value* v) {
  return parse_sum_mechanism(text_arg(v, "mechanism", "'staircase' or 'laplace'"));
}

double confidence_arg(sqlite3_value* v) {
  const double c = number_arg(v, "confidence");
  check_confidence(c);
  return c;
}

// (mechanism, <argv[1]>, lower, upper, confidence [, cost]): everything but argv[1].
struct SumArgs {
  SumMechanism kind;
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
    if (a.kind == SumMechanism::Laplace) throw std::invalid_argument("cost applies only to 'staircase'");
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
// an eps in [2^-30, 2^20] whose interval is at most half_width
// (core/helpers.hpp); NULL if even 2^20 is too noisy.
void sum_interval_eps_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "sum_interval_eps", argc, argv, [&] {
    double h;
    const SumArgs a = sum_args(argc, argv, half_width_of, &h);
    const auto eps = sum_eps_for_half_width(a.kind, h, a.lower, a.upper, a.cost, a.confidence);
    if (eps) sqlite3_result_double(ctx, *eps);
    else sqlite3_result_null(ctx);
  });
}

// quantile_rank_error(eps, lower, upper, confidence): private_quantile's rank error bound.
void quantile_rank_error_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "quantile_rank_error", argc, argv, [&] {
    const double eps = eps_of(argv[0]);
    const double lower = number_arg(argv[1], "lower"), upper = number_arg(argv[2], "upper");
    const double confidence = confidence_arg(argv[3]);
    const QuantileGrid grid(lower, upper);
    sqlite3_result_double(ctx, quantile_rank_error(eps, grid.candidates(), confidence));
  });
}

}  // namespace optdp::sql
