// optdp core: one count released at several privacy levels, collusion-
// resistant (Gupte and Sundararajan). The maths and the error analysis are in
// docs/levels.md.
//
// Levels alpha_1 < alpha_2 < ... < alpha_k (alpha_1 the least private). The
// releases r_1, ..., r_k form a Markov chain started at the true value and
// each r_i has the law of a single release at alpha_i, so a coalition of
// consumers learns no more than its least private member and the whole
// release costs only alpha_1's epsilon.
//
// Unbounded form (private_count_levels): r_1 = count + Z(alpha_1) and
// r_{i+1} = r_i + W_i, where W_i = 0 with probability
// c0 = (1 - b)^2 a / ((1 - a)^2 b) (a = alpha_i, b = alpha_{i+1}) and
// otherwise W_i ~ two-sided geometric(b). c0 is computed in binary128 with 9
// roundings and floored to a 128-bit fraction c~, so |c~ - c0| <=
// gamma_9 c0 + 2^-128 < 2^-109 (gamma_m = m 2^-113 / (1 - m 2^-113)), and
// that is the total-variation distance of each step W_i from its exact law
// (on top of the geometric sampler's own bound, core/samplers.hpp).
//
// Range-restricted form (release_levels): r_1 ~ G(n, alpha_1) at the clamped
// value (clamp(value + Z(alpha_1))), then r_i is drawn from row r_{i-1} of
// T(alpha_{i-1}, alpha_i) = G(n, alpha_{i-1})^-1 G(n, alpha_i). Each entry is
// evaluated from a subtraction-free closed form in binary128 (every entry is
// a product and quotient of at most m(n) = max(13, n + 9) correctly rounded
// operations on the exact doubles a, b, so its relative error is at most
// gamma_m(n)), floored to a multiple of 2^-128, and the row is sampled by
// comparing 128 random bits with the exact integer cumulative sums. The
// sampled row is within total variation
//     gamma_m(n) + (n + 1) 2^-128
// of the exact row, for every n <= kMaxMatrixN and every 0 < a < b < 1 (no
// corner is excluded): at n = 5000 that is below 2^-100.7.
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

// The probability that the next level adds no noise: c0(a, b), a < b.
double keep_probability(double a, double b);
// c0(a, b) as the 128-bit fraction the unbounded chain samples with (tests).
Fraction128 keep_fraction(double a, double b);

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

  // Test hooks. i is in [1, levels - 1] and observed in [0, n]; otherwise
  // std::out_of_range. Row `observed` of T(alphas[i-1], alphas[i]):
  // one draw from it, as release() makes it;
  std::int64_t transition(int i, std::int64_t observed, Rng& rng) const;
  // entry z as the 128-bit fraction mu_z = min(floor(p~_z 2^128), 2^128 - 1) / 2^128
  // that the draw uses (entries z < n; the draw gives z = n the rest of 1);
  std::vector<Fraction128> transition_masses(int i, std::int64_t observed) const;
  // the binary128 entries p~_z rounded to double (a view for tests and fuzzing).
  std::vector<double> transition_row(int i, std::int64_t observed) const;
  // m(n): the most roundings in one entry, so |p~_z - p_z| <= gamma_m(n) p_z.
  static int transition_roundings(std::int64_t n) { return n + 9 > 13 ? static_cast<int>(n + 9) : 13; }

 private:
  std::int64_t n_;
  std::vector<double> alphas_;
  TwoSidedGeometric first_;
};

}  // namespace optdp
