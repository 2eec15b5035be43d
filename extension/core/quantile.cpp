#include "core/quantile.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "core/selection.hpp"

namespace optdp {

QuantileGrid::QuantileGrid(double lower, double upper) : lower_(lower), upper_(upper) {
  if (!std::isfinite(lower)) throw std::invalid_argument("lower must be finite, but is " + format_double(lower));
  if (!std::isfinite(upper)) throw std::invalid_argument("upper must be finite, but is " + format_double(upper));
  if (!(lower < upper))
    throw std::invalid_argument("lower must be less than upper, but lower is " + format_double(lower) +
                                " and upper is " + format_double(upper));
  const double width = upper - lower;
  if (!std::isfinite(width)) throw std::invalid_argument("upper - lower must be finite, but is inf");
  // The smallest power of two g with at most kMaxCandidates multiples in
  // [lower, upper] (at most width / g + 1 of them), and every multiple / g
  // below 2^62 in magnitude; never below the least normal double.
  const double magnitude = std::fmax(std::fabs(lower), std::fabs(upper));
  int e = std::ilogb(width / static_cast<double>(kMaxCandidates - 1));
  e = std::max(e, std::ilogb(magnitude) - 61);
  e = std::max(e, -1022);
  for (;; ++e) {
    g_ = std::ldexp(1.0, e);
    inv_g_ = std::ldexp(1.0, -e);
    const double first = std::ceil(lower * inv_g_), last = std::floor(upper * inv_g_);
    if (last - first + 1 <= static_cast<double>(kMaxCandidates)) {
      if (last < first)
        throw std::invalid_argument("[lower, upper] must hold a point of its power-of-two grid, but [" +
                                    format_double(lower) + ", " + format_double(upper) +
                                    "] is too narrow for bounds of its magnitude");
      first_ = static_cast<std::int64_t>(first);
      m_ = static_cast<std::int64_t>(last - first) + 1;
      return;
    }
  }
}

double QuantileGrid::candidate(std::int64_t j) const { return static_cast<double>(first_ + j) * g_; }

double QuantileGrid::floor_scaled(double x) const { return std::floor(x * inv_g_); }

std::vector<__float128> quantile_exponents(std::span<const std::int64_t> buckets, double q, double eps) {
  if (buckets.size() < 2) throw std::invalid_argument("quantile_exponents: at least 2 buckets");
  std::int64_t rows = 0;
  for (const std::int64_t c : buckets) rows += c;
  const __float128 n = static_cast<__float128>(rows);
  const __float128 target = static_cast<__float128>(q) * n;
  const std::size_t m = buckets.size() - 1;
  // Binary128 arithmetic is done in software, so each distinct prefix count
  // is computed once: S_j does not decrease with j, and where the data are
  // sparse on the grid long runs of candidates share it.
  std::vector<__float128> err(m);
  std::int64_t below = 0, last = -1;
  __float128 best = -1, d = 0;
  for (std::size_t j = 0; j < m; ++j) {
    below += buckets[j];  // #{x < c_j}: the rows of buckets 0..j (at most 2^63 rows)
    if (below != last) {
      const __float128 s = static_cast<__float128>(below);
      d = s > target ? s - target : target - s;
      last = below;
      if (best < 0 || d < best) best = d;
    }
    err[j] = d;
  }
  const __float128 half_eps = static_cast<__float128>(eps) / 2;
  __float128 prev_in = -1, prev_out = 0;
  for (__float128& e : err) {
    if (e != prev_in) prev_in = e, prev_out = e == best ? 0 : half_eps * (e - best);
    e = prev_out;
  }
  return err;
}

std::int64_t sample_quantile(Rng& rng, std::span<const std::int64_t> buckets, double q, double eps) {
  const auto gamma = quantile_exponents(buckets, q, eps);
  return static_cast<std::int64_t>(sample_exponential(rng, gamma));
}

}  // namespace optdp
