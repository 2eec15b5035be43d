#include "core/gaussian.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"

namespace optdp {

namespace {

void check_sigma2(__float128 s2) {
  if (!(s2 > 0 && s2 <= DiscreteGaussian::kMaxSigma2))  // also rejects NaN
    throw std::invalid_argument("sigma^2 must be a finite number in (0, 2^80], but is " +
                                format_double(static_cast<double>(s2)));
}

// Digit j of the geometric magnitude of scale t: 1 with probability
// a_j / (1 + a_j), a_j = exp(-2^j / t); n is the number of digits before the
// first that is 0 as a 128-bit fraction.
void compute_digits(std::uint64_t t, Fraction128* digit, int& n) {
  n = 0;
  for (int j = 0; j < Geometric::kMaxDigits; ++j) {
    const __float128 a = expq(-ldexpq(__float128(1), j) / __float128(t));
    const Fraction128 f = to_fraction128(a / (1 + a));
    if (f.is_zero()) break;
    digit[n++] = f;
  }
}

}  // namespace

DiscreteGaussian::DiscreteGaussian(double sigma2) : sigma2_(sigma2) { init(); }

DiscreteGaussian::DiscreteGaussian(__float128 sigma2) : sigma2_(sigma2) { init(); }

void DiscreteGaussian::init() {
  check_sigma2(sigma2_);
  // t = floor(sigma) + 1, exactly: the largest integer r with r^2 <= sigma^2,
  // plus one. sqrtq gives r within 1; the squares are exact (r < 2^41).
  auto r = static_cast<std::uint64_t>(floorq(sqrtq(sigma2_)));
  while (r > 0 && __float128(r) * __float128(r) > sigma2_) --r;
  while (__float128(r + 1) * __float128(r + 1) <= sigma2_) ++r;
  t_ = r + 1;
  shift_ = sigma2_ / __float128(t_);
  two_sigma2_ = 2 * sigma2_;
  shift_d_ = static_cast<double>(shift_);
  two_sigma2_d_ = static_cast<double>(two_sigma2_);
  // Digits of the geometric magnitude, P[G = k] proportional to exp(-k/t).
  kept_digits(DigitsOf::gaussian_t, t_, compute_digits, digit_, ndigits_);
}

std::uint64_t DiscreteGaussian::magnitude(Rng& rng) const {
  std::uint64_t g = 0;
  for (int j = 0; j < ndigits_; ++j)
    if (bernoulli(rng, digit_[j])) g |= std::uint64_t{1} << j;
  return g;
}

__float128 DiscreteGaussian::acceptance(std::uint64_t m) const {
  const __float128 d = __float128(m) - shift_;
  return expq(-(d * d) / two_sigma2_);
}

bool DiscreteGaussian::accept(Rng& rng, std::uint64_t m) const {
  // Bernoulli(F), F = to_fraction128(acceptance(m)), the 128-bit fraction of
  // the binary128 value: U < F for U = (u_hi 2^64 + u_lo) / 2^128 uniform.
  // Computing F costs an expq (about 1 us), so the first 64 bits of U are
  // compared with a double evaluation a_d of the same probability first.
  // |a_d - F| < 2^-45 (docs/accounting.md: the double evaluation is off by
  // less than 2^-48 by the argument given for binary128 with 2^-53 in place
  // of 2^-113, F by less than 2^-108), so outside a band of 2^-40 around a_d
  // the answer is the one the full comparison would give; inside it (with
  // probability below 2^-38) F is computed and compared. The result is
  // therefore exactly Bernoulli(F), and the time depends on random bits only.
  const std::uint64_t u_hi = rng.u64();
  const double x = std::ldexp(static_cast<double>(u_hi), -64);  // U's first 64 bits, rounded
  const double d = static_cast<double>(m) - shift_d_;
  const double a_d = std::exp(-(d * d) / two_sigma2_d_);
  constexpr double kBand = 0x1p-40;
  // x rounds u_hi 2^-64 to a double (error < 2^-53 relative), so U lies in
  // [x - 2^-52, x + 2^-52]: far inside the band's slack.
  if (x + 0x1p-50 < a_d - kBand) return true;
  if (x - 0x1p-50 > a_d + kBand) return false;
  const Fraction128 f = to_fraction128(acceptance(m));
  if (u_hi != f.hi) return u_hi < f.hi;
  return rng.u64() < f.lo;
}

std::int64_t DiscreteGaussian::operator()(Rng& rng) const {
  for (;;) {
    // Discrete Laplace with scale t: a fair sign and a geometric magnitude,
    // rejecting (-, 0) so that 0 is not counted twice.
    const bool negative = rng.coin();
    const std::uint64_t m = magnitude(rng);
    if (negative && m == 0) continue;
    if (!accept(rng, m)) continue;
    const auto y = static_cast<std::int64_t>(m);
    return negative ? -y : y;
  }
}

__float128 LatticeDiscreteGaussian::ratio(double sigma2, double g) {
  if (!(g > 0 && std::isfinite(g)))
    throw std::invalid_argument("g must be a finite number > 0, but is " + format_double(g));
  if (!(sigma2 > 0 && std::isfinite(sigma2)))
    throw std::invalid_argument("sigma^2 must be a finite number > 0, but is " + format_double(sigma2));
  const __float128 gg = __float128(g) * __float128(g);  // exact: 106 bits
  const __float128 r = __float128(sigma2) / gg;
  if (!(r > 0 && r <= DiscreteGaussian::kMaxSigma2))
    throw std::invalid_argument("sigma^2 / g^2 must be in (0, 2^80], but is " +
                                format_double(static_cast<double>(r)));
  return r;
}

LatticeDiscreteGaussian::LatticeDiscreteGaussian(double sigma2, double g)
    : g_(g), k_(ratio(sigma2, g)) {}

}  // namespace optdp
