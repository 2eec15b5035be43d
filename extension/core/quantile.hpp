// optdp core: private quantiles by the exponential mechanism over a
// power-of-two grid (docs/quantiles.md).
//
// The candidates are the multiples of a power of two g inside [lower, upper]:
// c_j = (first + j) g, j = 0..m-1, with g the smallest power of two that
// leaves at most kMaxCandidates of them and keeps every |first + j| below
// 2^53 (so that c_j is exactly that integer times g). Rows, clamped into
// [lower, upper], are counted into m + 1 buckets so that #{x < c_j} is a
// prefix sum: one pass, memory fixed by the parameters. The score of c_j is
// -|#{x < c_j} - q n|, of sensitivity 1 for adding, removing or replacing one
// row, and c_j is drawn with probability proportional to exp(eps * score / 2)
// (core/selection.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.hpp"

namespace optdp {

class QuantileGrid {
 public:
  // 4096 candidates: 32 kB of counts per group, and a release (exponents and
  // sampling over every candidate) of about 0.6 ms; docs/quantiles.md
  // ("Memory and time") says why not more.
  static constexpr std::int64_t kMaxCandidates = std::int64_t{1} << 12;

  // lower < upper, both finite, upper - lower finite; otherwise
  // std::invalid_argument naming the bound ("lower must be less than upper,
  // but lower is 5 and upper is 1"). Also refused: bounds so close to 0 (both
  // below 2^-1022 in magnitude, subnormal) that no multiple of the least
  // grid step 2^-1022 lies between them.
  QuantileGrid(double lower, double upper);
  QuantileGrid() = default;  // [0, 1] with one candidate, 0: a placeholder until parameters are read

  double lower() const { return lower_; }
  double upper() const { return upper_; }
  double g() const { return g_; }
  std::int64_t candidates() const { return m_; }  // m >= 1
  // c_j = (first + j) g, exact: |first + j| < 2^53 and g a power of two.
  double candidate(std::int64_t j) const { return static_cast<double>(first_ + j) * g_; }
  // The bucket of a row x (NaN is not passed): 0..m, the number of
  // candidates c <= clamp(x). #{x < c_j} = sum of the buckets 0..j.
  // Inline: called once per row.
  std::int64_t bucket(double x) const {
    x = x < lower_ ? lower_ : (x > upper_ ? upper_ : x);
    // y = x / g (g a power of two: exact unless y is below the normal
    // doubles, where it may round to 0; |y| < 2^53). floor(y) by truncation,
    // one less where truncation went up (y < 0), or where a negative x's
    // quotient rounded to 0.
    const double y = x * inv_g_;
    std::int64_t f = static_cast<std::int64_t>(y);
    f -= (static_cast<double>(f) > y) | ((y == 0) & (x < 0));
    const std::int64_t b = f - first_ + 1;
    return b < 0 ? 0 : (b > m_ ? m_ : b);
  }

 private:
  double lower_ = 0, upper_ = 1, g_ = 1, inv_g_ = 1;
  std::int64_t first_ = 0, m_ = 1;
};

// The exponents gamma_j = eps (|S_j - q n| - min_i |S_i - q n|) / 2 of the
// m candidates, from the m + 1 bucket counts (n = their sum, S_j = the sum
// of buckets 0..j), in binary128: 0 exactly for every best candidate, and
// within a relative 2^-111 of the exact value otherwise (docs/quantiles.md).
// The same operations for every candidate, whatever the counts (the time of
// a release must not depend on the rows: docs/boundary.md). q in [0, 1], eps
// finite > 0, at least 2 buckets, counts >= 0 (std::invalid_argument
// otherwise). The row count n is not checked: an error would depend on the
// rows. t = q n is exact for n < 2^60 (a scan of 2^60 rows would take
// decades, and the bindings' counts only grow by one per row); beyond, it is
// rounded once, and the exponents are those of a target rank within a
// relative 2^-113 of q n. The counts must sum to less than 2^63.
std::vector<__float128> quantile_exponents(std::span<const std::int64_t> buckets, double q, double eps);

// The index of the released candidate: sample_exponential over the exponents.
std::int64_t sample_quantile(Rng& rng, std::span<const std::int64_t> buckets, double q, double eps);

// The exact law of the release, P[j] = p_j / sum_i p_i with p_j = exp(-gamma_j),
// to double precision: for tests (chi-square) and for expected errors.
std::vector<double> quantile_probabilities(std::span<const std::int64_t> buckets, double q, double eps);

}  // namespace optdp
