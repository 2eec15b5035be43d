// optdp core: the exact discrete Gaussian (Canonne, Kamath and Steinke, "The
// Discrete Gaussian for Differential Privacy", NeurIPS 2020, Algorithm 1).
//
// N_Z(0, sigma^2): P[Z = z] = exp(-z^2 / (2 sigma^2)) / sum_y exp(-y^2 / (2 sigma^2)).
//
// Algorithm (docs/accounting.md, "The discrete Gaussian sampler"):
//   t = floor(sigma) + 1
//   loop: Y ~ discrete Laplace, P[Y = y] proportional to exp(-|y| / t)
//         C ~ Bernoulli(exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)))
//         if C: return Y
// Since -|y|/t - (|y| - sigma^2/t)^2/(2 sigma^2) = -y^2/(2 sigma^2) - sigma^2/(2 t^2),
// the accepted Y has exactly the discrete Gaussian law, for any t > 0; t =
// floor(sigma) + 1 only makes acceptance likely: P[accept] >= 1/4 for every
// sigma (docs/accounting.md), so the expected number of rounds is at most 4.
//
// What is exact and what is not. sigma^2 is taken as given (a double, or a
// binary128 for the lattice form) and t is an exact integer. No floating-point
// uniform is inverted: every random choice compares CSPRNG bytes with a
// 128-bit binary fraction (bernoulli(Rng&, const Fraction128&)). Two kinds of
// probability are irrational and held as floor(p 2^128)/2^128 of a binary128
// evaluation:
//   * the discrete Laplace is a fair sign times a geometric magnitude
//     (P[G = k] proportional to a^k, a = exp(-1/t)) sampled digit by digit as
//     Geometric does (docs/math.md, "The geometric mechanism"): digit j is 1
//     with probability a_j / (1 + a_j), a_j = exp(-2^j / t), evaluated as
//     expq(-2^j / t) (2^j/t is exact to 1 ulp). With expq accurate to 4 ulp
//     and the truncation, each digit is off by at most (e^-1 + 5) 2^-113 < 2^-110, so the magnitude's TV is < 64 * 2^-110 < 2^-103;
//     digits with p_j < 2^-128 are dropped (TV < 2^-126 more).
//   * the acceptance probability exp(-gamma), gamma = d^2 / (2 sigma^2) with
//     d = |Y| - sigma^2/t, evaluated in binary128: the absolute error of
//     gamma is at most (|d|/t + 3 gamma) 2^-112, and since (|d|/sigma)
//     e^-gamma <= e^-1/2 and gamma e^-gamma <= e^-1, the error of exp(-gamma)
//     (with expq's 4 ulp) is < 2^-109, plus 2^-128 of truncation.
// Rejection with proposal TV e_q and acceptance error e_a gives an output
// TV <= (e_a + 2 e_q) / P[accept] <= 4 (2^-109 + 2^-102) < 2^-99 per sample,
// far below the 2^-64 the project requires.
//
// Speed: the magnitude's digits depend on t alone and cost up to 62 expq's,
// about 70% of a SQL release's time where each release built them: the last
// few t's digits are kept (gaussian.cpp, digits_of), so that a statement's
// groups, which share sigma, compute them once. Keyed by t, a public
// parameter: whether a release finds them depends on the parameters of earlier
// releases, never on data.
// Computing the binary128 acceptance costs an expq (about 1 us), so the
// first 64 random bits are compared with a double evaluation first, which is
// within 2^-45 of the 128-bit fraction; only when they fall within 2^-40 of it
// (probability < 2^-38) is the fraction computed. The decision is exactly the
// 128-bit comparison's (accept() below; a NaN or infinite double evaluation,
// as for sigma^2 below the double range, falls through to it). About 2.2-2.5x
// the time of a two-sided geometric sample of the same standard deviation
// (bench/README.md).
//
// The boundary rule (docs/boundary.md): the sampler is called with sigma only;
// how many bytes it draws and how many rounds it takes depend only on its own
// random bits and sigma, never on the value the noise is added to.
#pragma once

#include <cstdint>

#include "core/rng.hpp"
#include "core/samplers.hpp"

namespace optdp {

class DiscreteGaussian {
 public:
  // sigma2 = sigma^2 must be a finite number in (0, kMaxSigma2]; otherwise
  // std::invalid_argument "sigma^2 must be a finite number in (0, 2^80], but is X".
  explicit DiscreteGaussian(double sigma2);
  explicit DiscreteGaussian(__float128 sigma2);
  std::int64_t operator()(Rng& rng) const;

  __float128 sigma2() const { return sigma2_; }
  std::uint64_t t() const { return t_; }
  int digits() const { return ndigits_; }
  // The acceptance probability (as a binary128) for a proposal of magnitude m (for tests).
  __float128 acceptance(std::uint64_t m) const;
  // Bernoulli(to_fraction128(acceptance(m))), exactly, from 8 or 16 bytes of
  // rng (one round's acceptance step; public for tests).
  bool accept(Rng& rng, std::uint64_t m) const;

  // sigma <= 2^40: the magnitudes stay far below 2^62 (P[|Y| >= 2^62] < exp(-2^21)).
  static constexpr double kMaxSigma2 = 1208925819614629174706176.0;  // 2^80

 private:
  void init();
  std::uint64_t magnitude(Rng& rng) const;
  __float128 sigma2_;
  std::uint64_t t_ = 1;
  __float128 shift_;      // sigma^2 / t
  __float128 two_sigma2_; // 2 sigma^2
  double shift_d_, two_sigma2_d_;  // the same rounded to doubles, for the fast comparison
  int ndigits_ = 0;
  Fraction128 digit_[Geometric::kMaxDigits];
};

// The discrete Gaussian on the lattice g Z: k ~ N_Z(0, (sigma/g)^2), output k g.
// Its standard deviation parameter is sigma (the law is that of N(0, sigma^2)
// restricted to g Z). For g a power of two, (sigma/g)^2 = sigma^2 / g^2 is
// exact and k g is exact while |k| < 2^53; for other g the ratio is rounded
// to binary128 (the law is then that of sigma'^2 = g^2 * that, within a
// relative 2^-112 of sigma^2). sigma^2 / g^2 must lie in (0, 2^80].
class LatticeDiscreteGaussian {
 public:
  LatticeDiscreteGaussian(double sigma2, double g);
  double operator()(Rng& rng) const { return static_cast<double>(k_(rng)) * g_; }
  // The integer multiple, for callers that add k to an integer sum in grid units.
  std::int64_t units(Rng& rng) const { return k_(rng); }
  double g() const { return g_; }

 private:
  static __float128 ratio(double sigma2, double g);
  double g_;
  DiscreteGaussian k_;
};

}  // namespace optdp
