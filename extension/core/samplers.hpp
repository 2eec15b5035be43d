// optdp core: exact samplers for integer noise.
//
// No sampler here inverts a floating-point uniform. Randomness is consumed
// as bytes and compared with binary expansions of probabilities, so the
// distribution is exact whenever the probability is known exactly:
//
// * bernoulli(rng, p): exact for every double p in [0, 1].
// * Geometric(alpha): P[G = k] = (1 - alpha) alpha^k, k >= 0. Sampled digit by
//   digit: the binary digits of G are independent and digit j is 1 with
//   probability p_j = a_j / (1 + a_j), a_j = alpha^(2^j) (docs/math.md). The p_j
//   are irrational functions of alpha, so each is held as a 128-bit binary
//   fraction computed once per parameter in binary128 arithmetic
//   (a_j = exp(2^j * log1p(alpha - 1)); alpha - 1 is exact). This is the one
//   place where the sampler is not exact; its total-variation distance from
//   the exact geometric law is bounded here (docs/math.md, "The geometric mechanism"; README: "Exactness"):
//   TV <= sum_j |p~_j - p_j| <= 62 * (200 * 2^-113 + 2^-128) < 2^-99 over the
//   at most kMaxDigits = 62 digits kept (60 for any double alpha), assuming
//   libquadmath's expq/log1pq are accurate to 4 ulp (tests compare them with
//   repeated squaring, which is correctly rounded). Digits whose 128-bit
//   probability is 0 (p_j < 2^-128) are dropped, which adds at most 2^-126.
//   In all, TV < 2^-97 for G (the figure README "Exactness" and docs/math.md
//   quote), and < 2^-95 for TwoSidedGeometric: one attempt (sign, G) is
//   within 2^-97 and is accepted with probability >= 1/2, and conditioning
//   on acceptance at most multiplies the distance by 2 / P[accept].
//   Expected cost: one random byte per digit (plus 1/128 on average), and the
//   number of digits is about log2(89 / -ln(alpha)) + 1: 7 for alpha = 0.5,
//   37 for alpha = 1 - 1e-9, 60 for the largest double below 1.
// * TwoSidedGeometric(alpha): P[Z = z] = (1 - alpha)/(1 + alpha) alpha^|z|,
//   as a fair sign times a Geometric(alpha) magnitude, rejecting (-, 0) so
//   that 0 is not counted twice; expected 2/(1 + alpha) < 2 magnitudes.
#pragma once

#include <cstdint>

#include "core/rng.hpp"

namespace optdp {

// Exact Bernoulli(p) for a double p; p outside [0, 1] or NaN throws
// std::invalid_argument.
bool bernoulli(Rng& rng, double p);

// A probability held as a 128-bit binary fraction: P[true] = (hi*2^64+lo)/2^128.
struct Fraction128 {
  std::uint64_t hi = 0;
  std::uint64_t lo = 0;
  bool is_zero() const { return hi == 0 && lo == 0; }
};
// floor(p 2^128) / 2^128 for a binary128 p: 0 for p <= 0, the largest
// fraction for p >= 1. The one conversion every sampler with an irrational
// probability uses (docs/math.md, "The geometric mechanism").
Fraction128 to_fraction128(__float128 p);
// Bernoulli with a Fraction128 probability: exact for that fraction.
bool bernoulli(Rng& rng, const Fraction128& p);

// The digits of a geometric magnitude, kept for the last few parameters:
// make(key, digit, n) writes them the first time (key, kind) is seen, up to
// 62 expq's, which cost about 70% of a SQL release's time when every release
// computed them, while a statement's groups share one parameter. The key is a
// public parameter (alpha's bits, the discrete Gaussian's t): whether a
// release finds its digits depends on earlier releases' parameters, never on
// data. Shared by the process's connections under a mutex; plain arrays, so
// nothing runs at exit (PostgreSQL backends leave through exit()).
enum class DigitsOf { geometric_alpha, gaussian_t };
void kept_digits(DigitsOf kind, std::uint64_t key, void (*make)(std::uint64_t, Fraction128*, int&),
                 Fraction128* digit, int& n);

class Geometric {
 public:
  // alpha must be a finite number in (0, 1); otherwise std::invalid_argument
  // "alpha must be in (0, 1), but is X".
  explicit Geometric(double alpha);
  std::uint64_t operator()(Rng& rng) const;
  double alpha() const { return alpha_; }
  int digits() const { return ndigits_; }
  // The 128-bit probability used for digit j (for tests).
  const Fraction128& digit_probability(int j) const { return digit_[j]; }

  static constexpr int kMaxDigits = 62;  // G < 2^62, so +-G fits in int64

 private:
  double alpha_;
  int ndigits_ = 0;
  Fraction128 digit_[kMaxDigits];
};

class TwoSidedGeometric {
 public:
  explicit TwoSidedGeometric(double alpha) : geo_(alpha) {}
  std::int64_t operator()(Rng& rng) const;
  double alpha() const { return geo_.alpha(); }

 private:
  Geometric geo_;
};

// Throws std::invalid_argument unless alpha is a finite number in (0, 1).
void check_alpha(double alpha, const char* name = "alpha");

}  // namespace optdp
