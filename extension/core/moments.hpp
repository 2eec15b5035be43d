// optdp core: private mean and variance, one release each (docs/moments.md).
//
// Rows are clamped into [lower, upper], centred on mid = (lower + upper) / 2
// and rounded to a power-of-two grid: y = round((clamp(x) - mid) / g), an
// integer in [y_lo, y_hi] with H = max(y_hi, -y_lo). The release adds
// independent integer noise to exact integer sums:
//
//   n   (count)                 two-sided geometric at eps_c
//   S1 = sum y                  integer staircase, sensitivity H, at eps_1
//   S2 = sum round(y^2 / 2^s)   integer staircase, sensitivity D2, at eps_2 (variance only)
//
// Adding or removing a row moves n by 1, S1 by at most H and S2 by at most
// D2; replacing one moves n by 0, S1 by at most y_hi - y_lo <= 2H (a shift of
// two sensitivities: 2 eps_1) and S2 by at most D2. The mean splits eps as
// eps_c = eps_1 = eps / 2, the variance as eps / 3 each: both kinds of
// neighbour then cost at most eps.
#pragma once

#include <cstdint>
#include <cstring>

#include "core/staircase.hpp"  // round_to_int64

namespace optdp {

// The exact state of a mean or variance: the row count n and the integer
// sums S1 and S2, kept as bytes because the engines' aggregate memory is only
// 8-byte aligned (a __int128 member would need 16). Both bindings keep this
// layout; PostgreSQL also ships it between servers.
struct MomentSums {
  unsigned char s1_bytes[16], s2_bytes[16];
  std::int64_t n;
  static __int128 get(const unsigned char* b) {
    __int128 v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  static void add(unsigned char* b, __int128 d) {
    const __int128 v = get(b) + d;
    std::memcpy(b, &v, sizeof v);
  }
};

struct MomentsPlan {
  enum class Kind { Mean, Variance };
  // Validates eps, lower and upper with the sums' messages (make_grid), except
  // that the width rule is upper - lower >= 2^-960: the sums are centred, so
  // their sensitivity is the width whatever the bounds' distance from 0.
  // The rules do not depend on the kind.
  MomentsPlan(Kind kind, double eps, double lower, double upper);

  Kind kind;
  double eps, lower, upper, mid;
  double eps_count, eps_s1, eps_s2;  // the split (eps_s2 = 0 for the mean)
  double g = 1, inv_g = 1;           // the grid step, a power of two, and 1 / g
  std::int64_t y_lo = 0, y_hi = 0, H = 1;
  int shift = 0;        // s: S2 sums round(y^2 / 2^s)
  std::int64_t D2 = 1;  // the largest round(y^2 / 2^s)

  // The centred grid value of a row (not NaN); inline: it is the per-row step.
  std::int64_t y(double x) const {
    x = x > lower ? x : lower;  // the clamp as maxsd then minsd compute it
    x = x < upper ? x : upper;
    return round_to_int64((x - mid) * inv_g);
  }
  // round(y^2 / 2^s), exactly (ties up); inline: the variance's per-row step.
  std::int64_t z(std::int64_t v) const {
    const unsigned __int128 sq = static_cast<unsigned __int128>(static_cast<__int128>(v) * v);
    if (shift == 0) return static_cast<std::int64_t>(sq);
    return static_cast<std::int64_t>((sq + (static_cast<unsigned __int128>(1) << (shift - 1))) >> shift);
  }

  // The released values from the noisy totals (post-processing only).
  double mean(std::int64_t n_noisy, __int128 s1_noisy) const;
  double variance(std::int64_t n_noisy, __int128 s1_noisy, __int128 s2_noisy) const;
  double stddev(std::int64_t n_noisy, __int128 s1_noisy, __int128 s2_noisy) const;

 private:
  // The variance in grid units squared, clamped into [0, ((upper - lower) / 2g)^2].
  double variance_units(std::int64_t n, __int128 s1, __int128 s2) const;
};

}  // namespace optdp
