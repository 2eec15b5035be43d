// Exact noise intervals: the closed-form tail of the integer staircase (and
// so of the two-sided geometric), docs/intervals.md.
#include "core/intervals.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"

namespace optdp {

void check_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument("confidence must be in (0, 1), but is " + format_double(confidence));
}

__float128 staircase_tail(double b_, std::int64_t D_, std::int64_t r_, std::int64_t h) {
  const __float128 b = b_, D = static_cast<__float128>(D_), r = static_cast<__float128>(r_);
  const __float128 c = r + (D - r) * b;
  const __float128 a = (1 - b) / (2 * c - (1 - b));
  const std::int64_t K = h / D_, U = h % D_;
  const __float128 u1 = static_cast<__float128>(U + 1);
  const __float128 L = (u1 < r ? u1 : r) + (u1 > r ? (u1 - r) * b : 0);
  const __float128 t = 2 * a * powq(b, static_cast<__float128>(K)) * (c / (1 - b) - L);
  return t < 0 ? 0 : t;
}

std::int64_t staircase_half_width(double b, std::int64_t D, std::int64_t r, double confidence) {
  check_confidence(confidence);
  if (!(b > 0 && b < 1) || D < 1 || r < 1 || r > D) throw std::invalid_argument("bad staircase parameters");
  const __float128 target = 1 - static_cast<__float128>(confidence);
  if (staircase_tail(b, D, r, 0) <= target) return 0;
  // T decreases; grow hi until T(hi) <= target (it reaches 0 far before 2^62).
  std::int64_t lo = 0, hi = 1;  // T(lo) > target
  while (staircase_tail(b, D, r, hi) > target) {
    lo = hi;
    if (hi > std::numeric_limits<std::int64_t>::max() / 2) return std::numeric_limits<std::int64_t>::max();
    hi *= 2;
  }
  while (hi - lo > 1) {  // T(lo) > target >= T(hi)
    const std::int64_t mid = lo + (hi - lo) / 2;
    (staircase_tail(b, D, r, mid) > target ? lo : hi) = mid;
  }
  return hi;
}

std::int64_t geometric_half_width(double alpha, double confidence) {
  if (!(alpha > 0 && alpha < 1))
    throw std::invalid_argument("alpha must be in (0, 1), but is " + format_double(alpha));
  return staircase_half_width(alpha, 1, 1, confidence);
}

double geometric_alpha_for(std::int64_t h, double confidence) {
  check_confidence(confidence);
  if (h < 0) throw std::invalid_argument("half_width must be at least 0, but is " + std::to_string(h));
  const __float128 target = 1 - static_cast<__float128>(confidence);
  // T(h) = 2 alpha^(h+1) / (1 + alpha) increases with alpha: the largest alpha with T <= target.
  auto fits = [&](double a) { return staircase_tail(a, 1, 1, h) <= target; };
  double lo = 0, hi = 1;  // fits(lo) (as a limit at 0), !fits(hi)
  for (int i = 0; i < 2200 && std::nextafter(lo, 1.0) < hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  if (lo == 0) throw std::invalid_argument("no alpha gives half_width " + std::to_string(h) + " at confidence " +
                                           format_double(confidence));
  return lo;
}

std::optional<std::int64_t> discrete_gaussian_half_width(double sigma2, double confidence) {
  check_confidence(confidence);
  if (!(sigma2 > 0 && std::isfinite(sigma2))) return std::nullopt;
  const __float128 s2 = sigma2;
  if (sigma2 <= 0x1p34) {
    // Term by term.
    const auto m = static_cast<std::int64_t>(40 * std::sqrt(sigma2) + 10);
    auto term = [&](std::int64_t z) { return expq(-static_cast<__float128>(z) * z / (2 * s2)); };
    // The terms fall: once one no longer changes norm, no later one does
    // (rounding is monotone), so stopping there (about 13 sigma) gives the
    // same norm as summing to m.
    __float128 norm = 1;
    for (std::int64_t z = 1; z <= m; ++z) {
      const __float128 t = 2 * term(z);
      if (norm + t == norm) break;
      norm += t;
    }
    const __float128 target = static_cast<__float128>(confidence) * norm;
    __float128 within = 1;
    std::int64_t h = 0;
    while (within < target && h < m) within += 2 * term(++h);
    return h;
  }
  // Wide laws: P(|Z| > h) <= 2 int_h^inf e^(-x^2 / 2 sigma^2) dx / norm <= erfc(h / (sigma sqrt 2)),
  // since the pmf decreases beyond 0 and norm >= sigma sqrt(2 pi) (Poisson
  // summation: every correction term is positive). The smallest h with that
  // bound <= 1 - confidence covers; the exact smallest is at most one step
  // less (the same integral from h + 1 bounds the tail from below, and norm
  // exceeds sigma sqrt(2 pi) by a relative e^(-2 pi^2 sigma^2) at most).
  const __float128 scale = sqrtq(2 * s2), target = 1 - static_cast<__float128>(confidence);
  std::int64_t lo = -1, hi = 1;  // bound(lo) > target (h = -1: everything), bound(hi) untested
  while (erfcq(static_cast<__float128>(hi) / scale) > target) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (erfcq(static_cast<__float128>(mid) / scale) > target ? lo : hi) = mid;
  }
  return hi;
}

double quantile_rank_error(double eps, std::int64_t candidates, double confidence) {
  check_confidence(confidence);
  if (!(eps > 0 && std::isfinite(eps)))
    throw std::invalid_argument("eps must be a finite number > 0, but is " + format_double(eps));
  // docs/quantiles.md, "Rank error": t = max(0, (2 / eps) ln((M - 1) c / (1 - c))).
  if (candidates <= 1) return 0;
  const __float128 c = confidence;
  const __float128 e = 2 / static_cast<__float128>(eps) * logq(static_cast<__float128>(candidates - 1) * c / (1 - c));
  if (e <= 0) return 0;
  double d = static_cast<double>(e);
  if (static_cast<__float128>(d) < e) d = std::nextafter(d, HUGE_VAL);
  return d;
}

}  // namespace optdp
