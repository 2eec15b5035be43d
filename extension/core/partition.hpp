// optdp core: private partition selection, the optimal mechanism of
// Desfontaines, Voss, Gipson and Mandayam ("Differentially Private Partition
// Selection", PoPETs 2022). The maths, the rounding argument and the
// comparison with a noisy threshold are in docs/partition.md.
//
// A grouped release must not reveal which keys occur in the data: a key that
// only one privacy unit has would give that unit away. So a key is released
// only if a randomised test on n, its number of distinct privacy units,
// passes: keep(n) is true with probability pi(n). Between neighbouring
// databases (one unit more or less) the count of each key the unit belongs to
// moves between n - 1 and n, so (eps, delta)-DP for one key asks, for both
// outcomes (kept, dropped),
//     pi(n)       <= e^eps pi(n - 1) + delta
//     1 - pi(n-1) <= e^eps (1 - pi(n)) + delta        (and the two mirrored
// inequalities, which hold because pi is non-decreasing), with pi(0) = 0: a
// key nobody has is not in the data. The largest such pi, for every n at once,
// is
//     pi(n) = min(e^eps pi(n-1) + delta, 1 + e^-eps (pi(n-1) + delta - 1), 1),
// which reaches 1 at a finite n* = threshold(): a key with n* units or more is
// always released.
//
// Units in up to k keys (max_partitions): each key's test runs at eps/k and
// delta/k (basic composition over the at most k keys one unit can move). The
// caller must bound every unit's contributions to k keys before counting.
//
// Exactness: keep() samples Bernoulli(q(n)) exactly (bernoulli() with a
// Fraction128), where q is NOT the floor of pi but the optimal recursion run
// on the realised values themselves: q(0) = 0 and q(n) is a 128-bit fraction
// at most min(e^eps q(n-1) + delta, 1 - e^-eps (1 - q(n-1) - delta)) for the
// real eps/k and delta/k (each candidate is computed in binary128, lowered by a
// relative margin 2^-100 that covers every rounding, and floored), at least
// q(n-1), and exactly 1 once 1 - q(n-1) <= delta/k. So the probabilities that
// are actually used meet every DP constraint exactly, and q(n) <= pi(n). The
// total-variation distance between Bernoulli(q(n)) and Bernoulli(pi(n)) is
// pi(n) - q(n) <= tv_bound(), a certified bound the constructor computes
// (sum over the table of 2^-99 + 2^-128 / q(j)) and requires to be at most
// 2^-64; for every accepted parameter it is far smaller (below 2^-71.5;
// docs/partition.md).
#pragma once

#include <cstdint>
#include <vector>

#include "core/rng.hpp"
#include "core/samplers.hpp"

namespace optdp {

class PartitionSelection {
 public:
  // Largest max_partitions accepted.
  static constexpr std::int64_t kMaxPartitions = 1000000;
  // Largest threshold() accepted: the table holds one 16-byte fraction per n < n*.
  static constexpr std::uint64_t kMaxThreshold = std::uint64_t{1} << 18;  // 262144
  // Smallest delta / max_partitions accepted: a smaller delta cannot be followed
  // by 128-bit probabilities within 2^-64 (q(1) must be a multiple of 2^-128
  // below delta, and the relative error 2^-128/delta carries through the table).
  static constexpr double kMinPartitionDelta = 1e-16;
  // Above this, eps/k is lowered to it (always allowed: a smaller eps is more
  // private); pi changes by at most e^-256 < 2^-369 (docs/partition.md).
  static constexpr double kMaxPartitionEpsilon = 256;

  // epsilon: a finite number > 0; delta in (0, 1); max_partitions (k) in [1, kMaxPartitions];
  // delta / k >= kMinPartitionDelta; eps/k large enough that threshold() <= kMaxThreshold.
  // Otherwise std::invalid_argument "<name> must be ..., but is <value>".
  PartitionSelection(double epsilon, double delta, std::int64_t max_partitions);

  // Release a key that has `units` distinct privacy units: true with probability q(units),
  // exactly; O(1). units = 0 is never released and units >= threshold() always is (neither
  // consumes randomness).
  bool keep(std::uint64_t units, Rng& rng) const;

  // n*: the smallest n with q(n) = 1 (also the smallest n with pi(n) = 1, or one more).
  std::uint64_t threshold() const { return static_cast<std::uint64_t>(table_.size()); }
  // q(n), the probability keep(n) uses, rounded to long double (1 for n >= threshold()).
  long double probability(std::uint64_t units) const;
  // q(n) exactly, for n < threshold() (std::out_of_range otherwise; q(n) = 1 there).
  const Fraction128& fraction(std::uint64_t units) const;
  // A certified upper bound on max_n (pi(n) - q(n)) = the largest TV distance between the law
  // keep() samples and the optimal mechanism's; at most 2^-64.
  double tv_bound() const { return tv_bound_; }

  double epsilon() const { return epsilon_; }
  double delta() const { return delta_; }
  std::int64_t max_partitions() const { return k_; }

  // For comparison (docs/partition.md): the usual alternative at the same per-key
  // (eps/k, delta/k). Laplace thresholding: release if n + Laplace(k/eps) > T with
  // T = 1 - (k/eps) ln(2 delta/k) (delta/k <= 1/2; else 1 + (k/eps) ln(2 (1 - delta/k))),
  // so a key with one unit is released with probability exactly delta/k.
  double laplace_threshold() const;
  long double laplace_threshold_probability(std::uint64_t units) const;
  // Geometric thresholding, the project's own count noise: release if n + Z >= T with Z
  // two-sided geometric, alpha = e^-(eps/k), and T the smallest integer with
  // P[1 + Z >= T] <= delta/k (a double: for a tiny eps/k it can be astronomically large).
  double geometric_threshold() const { return static_cast<double>(geometric_threshold_); }
  long double geometric_threshold_probability(std::uint64_t units) const;

 private:
  double epsilon_, delta_;
  std::int64_t k_;
  std::vector<Fraction128> table_;  // q(0..n*-1)
  double tv_bound_ = 0;
  __float128 geometric_threshold_ = 0;
};

}  // namespace optdp
