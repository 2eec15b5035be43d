// private_quantile(x, q, eps, lower, upper) and private_median(x, eps, lower,
// upper): a grid point of [lower, upper] chosen by the exponential mechanism
// with score -|#{x < c} - q n| (core/quantile.hpp, docs/quantiles.md).
//
// The release sequence (parameters, allocation, charge, rows, noise) is
// Aggregate in release.hpp; this file says what is a quantile's own.
#include <cstring>
#include <vector>

#include "core/format.hpp"
#include "core/privacy.hpp"
#include "core/quantile.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"
#include "sqlite/release.hpp"

namespace optdp::sql {

namespace {

struct QuantileParams {
  double q, eps;
  QuantileGrid grid;
};

// p: (q, eps, lower, upper) for private_quantile, (eps, lower, upper) for private_median.
QuantileParams parse(const std::vector<Param>& p, bool median) {
  std::size_t i = 0;
  double q = 0.5;
  if (!median) {
    q = number_param(p[i++], "q");
    if (!(q >= 0 && q <= 1)) throw std::invalid_argument("q must be in [0, 1], but is " + format_double(q));
  }
  const double eps = number_param(p[i++], "eps");
  check_positive(eps, "eps");
  const double lower = number_param(p[i++], "lower");
  const double upper = number_param(p[i++], "upper");
  return {q, eps, QuantileGrid(lower, upper)};
}

// The form's own steps of the release sequence (Aggregate, release.hpp): the
// grid's m + 1 bucket counts follow the context (their number is fixed by
// lower and upper alone); each row adds one to a bucket.
template <bool MEDIAN>
struct Quantile {
  static constexpr const char* kName = MEDIAN ? "private_median" : "private_quantile";
  using Plan = QuantileParams;
  struct Data {};
  static std::int64_t* buckets(std::byte* extra) { return reinterpret_cast<std::int64_t*>(extra); }
  static Plan plan(const std::vector<Param>& p, int) { return parse(p, MEDIAN); }
  static double epsilon(const Plan& plan) { return plan.eps; }
  static std::size_t extra_bytes(const Plan& plan) {
    return (static_cast<std::size_t>(plan.grid.candidates()) + 1) * sizeof(std::int64_t);
  }
  static void add(const Plan& plan, Data&, std::byte* extra, sqlite3_value** argv) noexcept {
    sqlite3_value* x = argv[0];
    const int t = sqlite3_value_type(x);
    if (t == SQLITE_NULL) return;
    ++buckets(extra)[plan.grid.bucket(row_value(x, t))];
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& plan, Data&, std::byte* extra) {
    const std::size_t n = static_cast<std::size_t>(plan.grid.candidates()) + 1;
    const std::int64_t j = sample_quantile(conn.rng(), {buckets(extra), n}, plan.q, plan.eps);
    sqlite3_result_double(ctx, plan.grid.candidate(j));
  }
};

}  // namespace

void private_quantile_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Quantile<false>, 5>::step(ctx, argc, argv);
}
void private_quantile_final(sqlite3_context* ctx) { Aggregate<Quantile<false>, 5>::final(ctx); }
void private_median_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Quantile<true>, 4>::step(ctx, argc, argv);
}
void private_median_final(sqlite3_context* ctx) { Aggregate<Quantile<true>, 4>::final(ctx); }
void check_quantile_params(const std::vector<Param>& p) { parse(p, false); }
void check_median_params(const std::vector<Param>& p) { parse(p, true); }

}  // namespace optdp::sql
