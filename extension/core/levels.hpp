// optdp core: one count released at several privacy levels, collusion-
// resistant (Gupte and Sundararajan; MATH.md "Release at several privacy
// levels").
//
// Levels alpha_1 < alpha_2 < ... < alpha_k (alpha_1 the least private). The
// releases r_1, ..., r_k form a Markov chain started at the true value and
// each r_i has exactly the law of a single release at alpha_i, so a coalition
// of consumers learns no more than its least private member and the whole
// release costs only alpha_1's epsilon.
//
// Unbounded form (private_count_levels): r_1 = count + Z(alpha_1) and
// r_{i+1} = r_i + W_i, where W_i = 0 with probability
// c0 = (1 - b)^2 a / ((1 - a)^2 b) (a = alpha_i, b = alpha_{i+1}) and
// otherwise W_i ~ two-sided geometric(b). c0 is held as a 128-bit fraction
// computed in binary128 (total-variation error below 2^-100 per level).
//
// Range-restricted form (release_levels): r_1 ~ G(n, alpha_1) at the clamped
// value (clamp(value + Z(alpha_1)), exact), then r_i is drawn from row r_{i-1}
// of T(alpha_{i-1}, alpha_i) = G(n, alpha_{i-1})^-1 G(n, alpha_i), computed
// for that one row in binary128 and sampled by comparing 128 random bits with
// its cumulative sums as 128-bit fractions (TV error below (n + 1) 2^-100 per
// level, dominated by the row's arithmetic).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/rng.hpp"
#include "core/samplers.hpp"

namespace optdp {

constexpr int kMaxLevels = 16;

// 1..16 alphas, each in (0, 1), strictly increasing. Throws std::invalid_argument.
void check_levels(const std::vector<double>& alphas);
// A JSON array of alphas, checked.
std::vector<double> parse_levels(std::string_view json);

// The probability that the next level adds no noise: c0(a, b), a <= b.
double keep_probability(double a, double b);

class LevelChain {
 public:
  explicit LevelChain(std::vector<double> alphas);
  std::vector<std::int64_t> release(std::int64_t count, Rng& rng) const;
  const std::vector<double>& alphas() const { return alphas_; }

 private:
  std::vector<double> alphas_;
  std::vector<TwoSidedGeometric> noise_;  // noise_[i] ~ Z(alphas_[i])
  std::vector<Fraction128> keep_;         // keep_[i]: W_i = 0 between level i and i+1
};

class RangeLevelChain {
 public:
  RangeLevelChain(std::int64_t n, std::vector<double> alphas);
  // value is clamped into [0, n] first.
  std::vector<std::int64_t> release(std::int64_t value, Rng& rng) const;
  // Row `observed` of T(alphas[i-1], alphas[i]) as used for sampling (tests).
  std::vector<double> transition_row(int i, std::int64_t observed) const;

 private:
  std::int64_t n_;
  std::vector<double> alphas_;
  TwoSidedGeometric first_;
};

}  // namespace optdp
