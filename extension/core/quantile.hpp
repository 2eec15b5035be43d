// optdp core: private quantiles by the exponential mechanism over a
// power-of-two grid (docs/quantiles.md).
//
// The candidates are the multiples of a power of two g inside [lower, upper]:
// c_j = (first + j) g, j = 0..m-1, with g the smallest power of two that
// leaves at most kMaxCandidates of them (and keeps every c_j / g within
// 2^62). Rows, clamped into [lower, upper], are counted into m + 1 buckets so
// that #{x < c_j} is a prefix sum: one pass, memory fixed by the parameters.
// The score of c_j is -|#{x < c_j} - q n|, of sensitivity 1 for adding,
// removing or replacing one row, and c_j is drawn with probability
// proportional to exp(eps * score / 2) (core/selection.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"

namespace optdp {

class QuantileGrid {
 public:
  static constexpr std::int64_t kMaxCandidates = std::int64_t{1} << 12;

  // lower < upper, both finite; otherwise std::invalid_argument naming lower
  // or upper ("upper must be greater than lower, but lower is 5 and upper is 1").
  QuantileGrid(double lower, double upper);
  QuantileGrid() = default;  // [0, 1] with one candidate, 0: a placeholder until parameters are read

  double lower() const { return lower_; }
  double upper() const { return upper_; }
  double g() const { return g_; }
  std::int64_t candidates() const { return m_; }        // m >= 1
  double candidate(std::int64_t j) const;                // c_j, exact
  // The bucket of a row x (NaN is not passed): 0..m, the number of
  // candidates c <= clamp(x). #{x < c_j} = sum of the buckets 0..j.
  std::int64_t bucket(double x) const {
    x = x < lower_ ? lower_ : (x > upper_ ? upper_ : x);
    const double f = floor_scaled(x);  // floor(x / g), exact
    std::int64_t b = static_cast<std::int64_t>(f) - first_ + 1;
    return b < 0 ? 0 : (b > m_ ? m_ : b);
  }

 private:
  double floor_scaled(double x) const;
  double lower_ = 0, upper_ = 1, g_ = 1, inv_g_ = 1;
  std::int64_t first_ = 0, m_ = 1;
};

// The exponents gamma_j = eps (|S_j - q n| - min_i |S_i - q n|) / 2 of the
// candidates, from the bucket counts (size m + 1; n = their sum), in binary128.
std::vector<__float128> quantile_exponents(std::span<const std::int64_t> buckets, double q, double eps);

// The index of the released candidate.
std::int64_t sample_quantile(Rng& rng, std::span<const std::int64_t> buckets, double q, double eps);

}  // namespace optdp
