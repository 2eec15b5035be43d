#include "core/partition.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/privacy.hpp"

namespace optdp {

namespace {

using u128 = unsigned __int128;

constexpr u128 kAllOnes = ~u128{0};  // 2^128 - 1: the largest Fraction128

Fraction128 fraction_of(u128 v) { return {static_cast<std::uint64_t>(v >> 64), static_cast<std::uint64_t>(v)}; }

// v / 2^128 in binary128: both halves convert and scale exactly, the sum rounds once.
__float128 to_float128(u128 v) {
  return ldexpq(static_cast<__float128>(static_cast<std::uint64_t>(v >> 64)), -64) +
         ldexpq(static_cast<__float128>(static_cast<std::uint64_t>(v)), -128);
}

// floor(v 2^128), exactly (every step below is exact in binary128), for v < 1; 2^128 - 1 for v >= 1.
u128 floor_units(__float128 v) {
  if (!(v > 0)) return 0;
  if (v >= 1) return kAllOnes;
  const __float128 s = ldexpq(v, 64);
  const __float128 hi = floorq(s);
  const __float128 lo = floorq(ldexpq(s - hi, 64));
  return (static_cast<u128>(static_cast<std::uint64_t>(hi)) << 64) | static_cast<std::uint64_t>(lo);
}

// The optimal recursion in long double, only to refuse parameters whose table would be too long
// before the exact loop allocates it: the smallest n with pi(n) = 1, or limit + 1 if it is larger.
std::uint64_t estimate_threshold(long double eps, long double d, std::uint64_t limit) {
  const long double e = std::exp(eps), e_inv = std::exp(-eps), m = -std::expm1(-eps);
  long double p = 0;
  for (std::uint64_t n = 1; n <= limit; ++n) {
    if (1 - p <= d) return n;
    p = std::min(e * p + d, m + e_inv * (p + d));
  }
  return limit + 1;
}

// P[Z >= j] for Z two-sided geometric: alpha^j / (1 + alpha) for j >= 1, 1 - alpha^(1-j) / (1 + alpha) below.
__float128 geometric_tail(__float128 eps, __float128 alpha, __float128 j) {
  return j >= 1 ? expq(-eps * j) / (1 + alpha) : 1 - expq(-eps * (1 - j)) / (1 + alpha);
}

// The smallest integer m with P[Z >= m] <= d, from the closed form (no loop over m: for a tiny eps
// it is astronomically large), then corrected by a few steps where it is small enough to be exact.
__float128 geometric_tail_start(__float128 eps, __float128 alpha, __float128 d) {
  __float128 m;
  if (geometric_tail(eps, alpha, 1) > d) {
    m = ceilq(logq(d * (1 + alpha)) / -eps);  // alpha^m <= d (1 + alpha)
  } else {
    const __float128 c = (1 - d) * (1 + alpha);  // m = 1 - j needs alpha^j >= c
    m = c >= 1 ? 1 : 1 - floorq(logq(c) / -eps);
  }
  if (fabsq(m) < ldexpq(1, 60)) {
    for (int i = 0; i < 4 && geometric_tail(eps, alpha, m) > d; ++i) m += 1;
    for (int i = 0; i < 4 && geometric_tail(eps, alpha, m - 1) <= d; ++i) m -= 1;
  }
  return m;
}

}  // namespace

PartitionSelection::PartitionSelection(double epsilon, double delta, std::int64_t max_partitions)
    : epsilon_(epsilon), delta_(delta), k_(max_partitions) {
  check_positive(epsilon, "epsilon");
  check_alpha(delta, "delta");  // "delta must be in (0, 1), but is X"
  if (max_partitions < 1 || max_partitions > kMaxPartitions)
    throw std::invalid_argument("max_partitions must be an integer in [1, " + std::to_string(kMaxPartitions) +
                                "], but is " + std::to_string(max_partitions));
  // The per-key parameters as doubles, for the policy checks and the messages (one rounding each).
  const double eps_per_key = epsilon / static_cast<double>(max_partitions);
  const double delta_per_key = delta / static_cast<double>(max_partitions);
  if (delta_per_key < kMinPartitionDelta)
    throw std::invalid_argument("delta / max_partitions must be at least " + format_double(kMinPartitionDelta) +
                                ", but is " + format_double(delta_per_key));
  auto too_long = [&] {
    return std::invalid_argument(
        "epsilon / max_partitions must be large enough that a key with at most " + std::to_string(kMaxThreshold) +
        " units is always released (with delta / max_partitions = " + format_double(delta_per_key) + "), but is " +
        format_double(eps_per_key));
  };
  if (estimate_threshold(std::min(eps_per_key, kMaxPartitionEpsilon), delta_per_key, kMaxThreshold) > kMaxThreshold)
    throw too_long();

  // Per-key parameters in binary128. Each value below is within a relative 2^-104.7 of the real
  // quantity it stands for (docs/partition.md, "Rounding"), so lowering a candidate by the margin
  // 2^-100 makes it a lower bound of the real one.
  __float128 eps_k = static_cast<__float128>(epsilon) / max_partitions;  // 1 rounding
  if (eps_k > kMaxPartitionEpsilon) eps_k = kMaxPartitionEpsilon;
  const __float128 e = expq(eps_k);           // e^eps
  const __float128 e_inv = expq(-eps_k);      // e^-eps
  const __float128 m = -expm1q(-eps_k);       // 1 - e^-eps, without cancellation
  const __float128 d = static_cast<__float128>(delta) / max_partitions;  // 1 rounding
  const __float128 margin = 1 - ldexpq(1, -100);                         // exact
  const u128 d_low = floor_units(d * margin);  // floor(delta_lo 2^128), delta_lo < delta / k

  table_.push_back({});  // q(0) = 0
  u128 q = 0;
  __float128 inverse_sum = 0;  // sum over the table of 1 / (q(j) 2^128) = 2^-128 / q(j), j >= 1
  for (std::uint64_t n = 1;; ++n) {
    // q = q(n - 1). 1 - q(n-1) <= delta_lo < delta/k, exactly in integers: q(n) = 1 is allowed.
    if (q != 0 && static_cast<u128>(-q) <= d_low) break;
    if (n > kMaxThreshold) throw too_long();
    const __float128 x = to_float128(q);
    // Lower bounds of A = e^eps x + delta and B = 1 - e^-eps (1 - x - delta) = (1 - e^-eps) + e^-eps (x + delta),
    // both sums of positive terms.
    const __float128 a = (e * x + d) * margin;
    const __float128 b = (m + e_inv * (x + d)) * margin;
    q = std::max(q, floor_units(fminq(a, b)));
    table_.push_back(fraction_of(q));
    inverse_sum += 1 / to_float128(q) * ldexpq(1, -128);  // q >= q(1), about delta/k >= 1e-16: never 0
  }

  // TV bound: sum over n = 1..n*-1 of (rho + 2^-128 / q(n)), rho = 2^-99, times 1 + 2^-60 for the roundings
  // of this sum (fewer than 2^19 terms, each relative error below 2^-111).
  const __float128 bound =
      (static_cast<__float128>(table_.size() - 1) * ldexpq(1, -99) + inverse_sum) * (1 + ldexpq(1, -60));
  double b = static_cast<double>(bound);
  if (static_cast<__float128>(b) < bound) b = std::nextafter(b, 1.0);
  tv_bound_ = b;
  if (!(bound <= ldexpq(1, -64)))
    throw std::invalid_argument("delta / max_partitions must be large enough for 128-bit release probabilities "
                                "within 2^-64 of the optimal ones, but is " +
                                format_double(delta_per_key));

  geometric_threshold_ = 1 + geometric_tail_start(eps_k, e_inv, d);
}

bool PartitionSelection::keep(std::uint64_t n, Rng& rng) const {
  if (n >= table_.size()) return true;
  if (n == 0) return false;
  return bernoulli(rng, table_[static_cast<std::size_t>(n)]);
}

const Fraction128& PartitionSelection::fraction(std::uint64_t n) const {
  if (n >= table_.size())
    throw std::out_of_range("partition fraction: " + std::to_string(n) + " units is at or above the threshold " +
                            std::to_string(table_.size()) + " (probability 1)");
  return table_[static_cast<std::size_t>(n)];
}

long double PartitionSelection::probability(std::uint64_t n) const {
  if (n >= table_.size()) return 1;
  const Fraction128& f = table_[static_cast<std::size_t>(n)];
  return std::ldexp(static_cast<long double>(f.hi), -64) + std::ldexp(static_cast<long double>(f.lo), -128);
}

double PartitionSelection::laplace_threshold() const {
  const __float128 eps = static_cast<__float128>(epsilon_) / k_, d = static_cast<__float128>(delta_) / k_;
  return static_cast<double>(d <= 0.5 ? 1 - logq(2 * d) / eps : 1 + logq(2 * (1 - d)) / eps);
}

long double PartitionSelection::laplace_threshold_probability(std::uint64_t n) const {
  if (n == 0) return 0;  // a key with no units is not in the data
  const __float128 eps = static_cast<__float128>(epsilon_) / k_, d = static_cast<__float128>(delta_) / k_;
  const __float128 t = d <= 0.5 ? 1 - logq(2 * d) / eps : 1 + logq(2 * (1 - d)) / eps;
  const __float128 x = static_cast<__float128>(n);
  // P[n + L > T], L ~ Laplace(1/eps): P[L > s] = e^(-eps s)/2 for s >= 0, 1 - e^(eps s)/2 below.
  return static_cast<long double>(x <= t ? expq(-eps * (t - x)) / 2 : 1 - expq(-eps * (x - t)) / 2);
}

long double PartitionSelection::geometric_threshold_probability(std::uint64_t n) const {
  if (n == 0) return 0;
  __float128 eps_k = static_cast<__float128>(epsilon_) / k_;
  if (eps_k > kMaxPartitionEpsilon) eps_k = kMaxPartitionEpsilon;
  return static_cast<long double>(
      geometric_tail(eps_k, expq(-eps_k), geometric_threshold_ - static_cast<__float128>(n)));  // P[Z >= T - n]
}

}  // namespace optdp
