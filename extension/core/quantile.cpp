#include "core/quantile.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "core/privacy.hpp"
#include "core/selection.hpp"

namespace optdp {

QuantileGrid::QuantileGrid(double lower, double upper) : lower_(lower), upper_(upper) {
  check_bounds(lower, upper);
  const double width = upper - lower;
  // The smallest power of two g = 2^e with
  // - at most kMaxCandidates multiples in [lower, upper]: the loop below
  //   starts where there are certainly too many (width / g >= 2 (M - 1)) and
  //   stops at the first e that fits;
  // - g at least the spacing of the doubles at the larger bound (2^(E - 52),
  //   E its binary exponent), so that every multiple / g is an integer below
  //   2^53 and the multiple itself a double computed exactly;
  // - g at least 2^-1022, so that 1 / g is a double.
  // The larger bound in magnitude is a multiple of its own spacing (or 0 lies
  // between the bounds), so a grid point exists unless the last rule forces
  // g above both bounds' spacing, which happens only for subnormal bounds.
  const double magnitude = std::fmax(std::fabs(lower), std::fabs(upper));
  const double step = width / static_cast<double>(kMaxCandidates - 1);
  int e = step > 0 ? std::ilogb(step) - 1 : INT_MIN;
  if (magnitude > 0) e = std::max(e, std::ilogb(magnitude) - 52);
  e = std::max(e, -1022);
  for (;; ++e) {
    g_ = std::ldexp(1.0, e);
    inv_g_ = std::ldexp(1.0, -e);
    const double first = std::ceil(lower * inv_g_), last = std::floor(upper * inv_g_);
    if (last - first + 1 <= static_cast<double>(kMaxCandidates)) {
      if (last < first)
        throw std::invalid_argument("[lower, upper] must hold a multiple of 2^-1022, but [" + format_double(lower) +
                                    ", " + format_double(upper) + "] does not");
      first_ = static_cast<std::int64_t>(first);
      m_ = static_cast<std::int64_t>(last - first) + 1;
      return;
    }
  }
}

std::vector<__float128> quantile_exponents(std::span<const std::int64_t> buckets, double q, double eps) {
  if (buckets.size() < 2) throw std::invalid_argument("quantile_exponents: at least 2 buckets");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("q must be in [0, 1], but is " + format_double(q));
  if (!(std::isfinite(eps) && eps > 0)) throw std::invalid_argument("eps must be positive, but is " + format_double(eps));
  std::int64_t n = 0;
  for (const std::int64_t c : buckets) {
    if (c < 0) throw std::invalid_argument("quantile_exponents: bucket counts must be >= 0");
    n += c;  // a count of rows: far below 2^63
  }
  // The target rank t = q n, exact in binary128 for n < 2^60 (53 + 60 bits;
  // beyond, rounded once), split into its integer part T and fraction phi.
  const __float128 t = static_cast<__float128>(q) * static_cast<__float128>(n);
  const std::int64_t T = static_cast<std::int64_t>(t);  // t >= 0: truncation is floor
  const __float128 phi = t - static_cast<__float128>(T);  // in [0, 1), exact
  const std::size_t m = buckets.size() - 1;
  // The rank error of c_j is d_j = |S_j - t| = A_j + sigma_j phi with the
  // integer A_j = |S_j - T| and sigma_j = -1 if S_j > T (then S_j > t), +1
  // otherwise. Integer arithmetic first: the best A of each sign.
  std::vector<std::int64_t> A(m);
  std::vector<unsigned char> above(m);
  std::int64_t S = 0, best_above = INT64_MAX, best_below = INT64_MAX;
  for (std::size_t j = 0; j < m; ++j) {
    S += buckets[j];
    const std::int64_t D = S - T;
    const bool up = D > 0;
    A[j] = up ? D : -D;
    above[j] = up;
    best_above = up ? std::min(best_above, A[j]) : best_above;
    best_below = up ? best_below : std::min(best_below, A[j]);
  }
  // The least error: best_above - phi or best_below + phi (one comparison, of
  // integers and 2 phi, exact).
  const bool min_above = best_below == INT64_MAX ||
                         (best_above != INT64_MAX &&
                          static_cast<__float128>(best_above) - static_cast<__float128>(best_below) < 2 * phi);
  const std::int64_t best_A = min_above ? best_above : best_below;
  // d_j - d_min = (A_j - best_A) + (sigma_j - sigma_min) phi, the second term
  // one of -2 phi, 0, 2 phi: looked up, so that every candidate costs one
  // conversion, one addition and one multiplication, whatever the counts.
  // Exact: 0 for a best candidate (also when another sign ties: phi = 1/2);
  // otherwise within two roundings (relative 2^-112) of the exact value, and
  // never negative (rounding is monotone).
  const __float128 shift[3] = {-2 * phi, 0, 2 * phi};  // index (sigma_j - sigma_min) / 2 + 1
  const int sigma_min = min_above ? -1 : 1;
  const __float128 half_eps = static_cast<__float128>(eps) / 2;
  std::vector<__float128> gamma(m);
  for (std::size_t j = 0; j < m; ++j) {
    const int sigma = above[j] ? -1 : 1;
    const __float128 diff = static_cast<__float128>(A[j] - best_A) + shift[(sigma - sigma_min) / 2 + 1];
    gamma[j] = half_eps * diff;
  }
  return gamma;
}

std::int64_t sample_quantile(Rng& rng, std::span<const std::int64_t> buckets, double q, double eps) {
  const auto gamma = quantile_exponents(buckets, q, eps);
  return static_cast<std::int64_t>(sample_exponential(rng, gamma));
}

std::vector<double> quantile_probabilities(std::span<const std::int64_t> buckets, double q, double eps) {
  const auto gamma = quantile_exponents(buckets, q, eps);
  std::vector<__float128> p(gamma.size());
  __float128 total = 0;
  for (std::size_t j = 0; j < gamma.size(); ++j) total += p[j] = exp_minus(gamma[j]);
  std::vector<double> law(gamma.size());
  for (std::size_t j = 0; j < gamma.size(); ++j) law[j] = static_cast<double>(p[j] / total);
  return law;
}

}  // namespace optdp
