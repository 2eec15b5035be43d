#include "core/moments.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/grouped.hpp"
#include "core/staircase.hpp"

namespace optdp {

MomentsPlan::MomentsPlan(Kind k, double e, double lo, double hi) : kind(k), eps(e), lower(lo), upper(hi) {
  make_grid(eps, lower, upper);  // the sums' checks and messages: eps, finite bounds, lower < upper, width
  mid = lower / 2 + upper / 2;   // no overflow; inside [lower, upper]
  eps_count = kind == Kind::Mean ? eps / 2 : divide_down(eps, 3);
  eps_s1 = eps_count;
  eps_s2 = kind == Kind::Mean ? 0 : eps_count;
  const double h = std::max(upper - mid, mid - lower);  // both exact or rounded once; only sets the grid
  const Grid grid = make_grid(eps_s1, -h, h);
  g = grid.g;
  inv_g = grid.inv_g;
  // y = round((clamp(x) - mid) / g) is monotone in x, so its range is that of the bounds.
  y_lo = round_to_int64((lower - mid) * inv_g);
  y_hi = round_to_int64((upper - mid) * inv_g);
  H = std::max<std::int64_t>({y_hi, -y_lo, 1});
  if (kind == Kind::Variance) {
    const unsigned __int128 h2 = static_cast<unsigned __int128>(H) * static_cast<unsigned __int128>(H);
    while ((h2 >> shift) > (static_cast<unsigned __int128>(1) << 40)) ++shift;
    D2 = std::max<std::int64_t>(1, z(H));
  }
}

std::int64_t MomentsPlan::y(double x) const {
  x = x < lower ? lower : (x > upper ? upper : x);
  return round_to_int64((x - mid) * inv_g);
}

std::int64_t MomentsPlan::z(std::int64_t v) const {
  const unsigned __int128 sq = static_cast<unsigned __int128>(static_cast<__int128>(v) * v);
  if (shift == 0) return static_cast<std::int64_t>(sq);
  return static_cast<std::int64_t>((sq + (static_cast<unsigned __int128>(1) << (shift - 1))) >> shift);
}

double MomentsPlan::mean(std::int64_t n, __int128 s1) const {
  if (n <= 0) return mid;
  const double m = mid + static_cast<double>(s1) / static_cast<double>(n) * g;
  return std::clamp(m, lower, upper);
}

double MomentsPlan::variance(std::int64_t n, __int128 s1, __int128 s2) const {
  const double half = (upper - lower) / 2;
  if (n <= 0) return 0;
  const double nn = static_cast<double>(n);
  const double my = static_cast<double>(s1) / nn;                         // grid units
  const double m2 = std::ldexp(static_cast<double>(s2), shift) / nn;      // grid units squared
  const double v = (m2 - my * my) * g * g;
  return std::clamp(v, 0.0, half * half);
}

}  // namespace optdp
