#include "core/moments.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "core/grouped.hpp"
#include "core/privacy.hpp"
#include "core/staircase.hpp"

namespace optdp {

namespace {

// make_grid's checks and messages for eps, lower and upper, in its order,
// with the centred sums' width rule (docs/moments.md, "Parameters").
void check_params(double eps, double lower, double upper) {
  check_sum_eps(eps);
  check_bounds(lower, upper);
  const double width = upper - lower;
  if (width < 0x1p-960)
    throw std::invalid_argument("upper - lower must be at least 2^-960 (1.1e-289), but is " + format_double(width));
}

}  // namespace

MomentsPlan::MomentsPlan(Kind k, double e, double lo, double hi) : kind(k), eps(e), lower(lo), upper(hi) {
  check_params(eps, lower, upper);
  mid = lower / 2 + upper / 2;  // no overflow; inside [lower, upper]
  eps_count = kind == Kind::Mean ? eps / 2 : divide_down(eps, 3);  // eps / 2 is exact: eps >= 2^-30
  eps_s1 = eps_count;
  eps_s2 = kind == Kind::Mean ? 0 : eps_count;
  // The grid the sums use for [-w/2, w/2] (w = upper - lower >= 2^-960, so
  // w / 2 is exact and make_grid cannot fail). make_grid's rule depends on
  // eps only through min(c(eps), 1), and c(eps) > 1 for every eps below 0.96,
  // so raising eps_s1 to the sums' minimum 2^-30 leaves the grid unchanged.
  const double half_width = (upper - lower) / 2;
  const Grid grid = make_grid(std::max(eps_s1, 0x1p-30), -half_width, half_width);
  g = grid.g;
  inv_g = grid.inv_g;
  // y = round((clamp(x) - mid) / g) is monotone in x (the subtraction, the
  // exact scaling by a power of two and the rounding all are), so its range
  // is that of the bounds; the sensitivities below are exact in grid units.
  y_lo = round_to_int64((lower - mid) * inv_g);
  y_hi = round_to_int64((upper - mid) * inv_g);
  H = std::max<std::int64_t>({y_hi, -y_lo, 1});
  if (kind == Kind::Variance) {
    const unsigned __int128 h2 = static_cast<unsigned __int128>(H) * static_cast<unsigned __int128>(H);
    while ((h2 >> shift) > (static_cast<unsigned __int128>(1) << 40)) ++shift;
    D2 = std::max<std::int64_t>(1, z(H));  // z is monotone in |y| and |y| <= H
  }
}

double MomentsPlan::mean(std::int64_t n, __int128 s1) const {
  if (n <= 0) return mid;
  // mid + (+-inf) for a huge ratio is clamped; never NaN (mid is finite).
  const double m = mid + static_cast<double>(s1) / static_cast<double>(n) * g;
  return std::clamp(m, lower, upper);
}

double MomentsPlan::variance_units(std::int64_t n, __int128 s1, __int128 s2) const {
  if (n <= 0) return 0;
  const double nn = static_cast<double>(n);
  const double my = static_cast<double>(s1) / nn;                     // grid units, |my| < 2^127
  const double m2 = std::ldexp(static_cast<double>(s2), shift) / nn;  // grid units squared, < 2^170
  const double top = (upper - lower) / 2 * inv_g;                     // about 2^20: no overflow
  return std::clamp(m2 - my * my, 0.0, top * top);
}

double MomentsPlan::variance(std::int64_t n, __int128 s1, __int128 s2) const {
  // In [0, ((upper - lower) / 2)^2]; +inf only where that bound itself exceeds
  // the largest double (upper - lower above about 2.7e154).
  return std::min(variance_units(n, s1, s2) * g * g, ((upper - lower) / 2) * ((upper - lower) / 2));
}

double MomentsPlan::stddev(std::int64_t n, __int128 s1, __int128 s2) const {
  // sqrt in grid units, then one scaling by g: finite for every finite width.
  return std::min(std::sqrt(variance_units(n, s1, s2)) * g, (upper - lower) / 2);
}

}  // namespace optdp
