#include "core/pld.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/rounding.hpp"
#include "core/privacy.hpp"

namespace optdp::pld {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kU = 0x1p-53;  // the unit roundoff of double
// Relative margin for binary128 evaluations of a handful of libquadmath
// functions (each accurate to a few ulp, 2^-110): far above their error.
const __float128 kMarginQ = 0x1p-100Q;
// The most losses a Pld's dense grid may hold (512 MiB of doubles).
constexpr std::int64_t kMaxSpan = std::int64_t{1} << 26;
// Masses below this are dropped (to +inf): they never matter, and above it
// products and sums of doubles are never subnormal, so the relative error
// bounds below hold.
constexpr double kTiny = 1e-290;

// The smallest double >= x, and the largest double <= x (core/rounding.hpp).
double up(__float128 x) { return round_up(x); }
double down(__float128 x) { return round_down(x); }
// A lower bound on a probability evaluated in binary128 with relative error
// far below kMarginQ, as a double (0 when tiny).
double mass_down(__float128 p) {
  if (!(p > 0)) return 0;
  const double d = down(p * (1 - kMarginQ));
  return d < kTiny ? 0 : d;
}

[[noreturn]] void bad(const char* name, const std::string& what, double v) {
  throw std::invalid_argument(std::string(name) + " must be " + what + ", but is " + format_double(v));
}
void check_resolution(double n) {
  if (!(n >= 1 && n <= 0x1p40 && n == std::floor(n))) bad("resolution", "an integer in [1, 2^40]", n);
}
void check_tail(double t) {
  if (!(t >= 0 && t < 1)) bad("tail", "in [0, 1)", t);
}

// ceil(x + |x| 2^-100) for a binary128 x that approximates a loss times N
// within a relative 2^-102: an upper bound on the true grid index.
std::int64_t index_up(__float128 x) {
  const __float128 c = ceilq(x + fabsq(x) * kMarginQ);
  if (!(fabsq(c) < 0x1p62Q)) throw std::invalid_argument("a loss is too large for the PLD's grid");
  return static_cast<std::int64_t>(c);
}

}  // namespace

// Collects (index, lower-bound mass) pairs and makes a dense Pld of them.
class Builder {
 public:
  explicit Builder(double n) : n_(n) {}
  void add(std::int64_t index, double mass) {
    if (mass > 0) items_.push_back({index, mass});
  }
  Pld build() const {
    Pld p(n_);
    p.m_.clear();
    if (items_.empty()) {
      p.inf_ = 1;
      return p;
    }
    std::int64_t lo = items_[0].first, hi = lo;
    for (const auto& [i, m] : items_) lo = std::min(lo, i), hi = std::max(hi, i);
    if (hi - lo >= kMaxSpan) throw std::invalid_argument("the PLD's grid would hold more than 2^26 losses; lower the resolution");
    p.lo_ = lo;
    p.m_.assign(static_cast<std::size_t>(hi - lo + 1), 0.0);
    // Two items at one index: the double sum of two lower bounds is rounded;
    // keep it a lower bound.
    for (const auto& [i, m] : items_) {
      double& slot = p.m_[static_cast<std::size_t>(i - lo)];
      slot = slot == 0 ? m : (slot + m) * (1 - 2 * kU);
    }
    p.normalise();
    return p;
  }

 private:
  double n_;
  std::vector<std::pair<std::int64_t, double>> items_;
};

Pld::Pld(double resolution) : resolution_(resolution), lo_(0), m_{1.0}, inf_(0) { check_resolution(resolution); }

void Pld::normalise() {
  std::size_t a = 0, b = m_.size();
  while (a < b && m_[a] == 0) ++a;
  while (b > a && m_[b - 1] == 0) --b;
  if (a > 0 || b < m_.size()) {
    m_ = std::vector<double>(m_.begin() + static_cast<std::ptrdiff_t>(a), m_.begin() + static_cast<std::ptrdiff_t>(b));
    lo_ += static_cast<std::int64_t>(a);
  }
  if (m_.empty()) lo_ = 0;
  if (m_.size() > 4096) {
    // Long grids (a composed Gaussian group): binary128 adds are slow, so
    // the sum is pairwise in double: blocks of 16 in order, then pairs. The
    // computed sum s of these nonnegative terms is within gamma_L of the
    // exact one, L = 15 + the number of pair levels (Higham, Accuracy and
    // Stability of Numerical Algorithms, section 4.2), so the exact sum is at
    // least s (1 - 2 L u).
    std::vector<double> part;
    part.reserve(m_.size() / 16 + 1);
    for (std::size_t b = 0; b < m_.size(); b += 16) {
      double t = 0;
      for (std::size_t i = b; i < std::min(m_.size(), b + 16); ++i) t += m_[i];
      part.push_back(t);
    }
    int levels = 0;
    while (part.size() > 1) {
      std::vector<double> next((part.size() + 1) / 2);
      for (std::size_t i = 0; i < next.size(); ++i)
        next[i] = part[2 * i] + (2 * i + 1 < part.size() ? part[2 * i + 1] : 0.0);
      part.swap(next);
      ++levels;
    }
    const __float128 lower = static_cast<__float128>(part[0]) * (1 - 2 * (15 + levels) * static_cast<__float128>(kU));
    const __float128 rest = 1 - lower + 0x1p-112Q;
    inf_ = rest <= 0 ? 0 : std::min(1.0, up(rest));
    return;
  }
  // 1 - sum(m) rounded up: the binary128 sum of n nonzero doubles is within
  // n 2^-113 of the exact one (zeros are skipped: binary128 adds are slow).
  __float128 s = 0;
  std::size_t n = 0;
  for (double x : m_) {
    if (x != 0) {
      s += x;
      ++n;
    }
  }
  const __float128 rest = 1 - s + (static_cast<__float128>(n) + 1) * 0x1p-112Q;
  inf_ = rest <= 0 ? 0 : std::min(1.0, up(rest));
}

void Pld::truncate(double tail) {
  if (tail <= 0 || m_.empty()) return;
  // Whole buckets from each end whose masses add up to at most `tail` go to
  // +inf (normalise recomputes inf_ from what is kept): moving mass to a
  // larger loss is always pessimistic, the lower end included.
  std::size_t a = 0, b = m_.size();
  double cum = 0;
  while (b > a + 1 && cum + m_[b - 1] <= tail) cum += m_[--b];
  cum = 0;
  while (a + 1 < b && cum + m_[a] <= tail) cum += m_[a++];
  for (std::size_t i = 0; i < a; ++i) m_[i] = 0;
  for (std::size_t i = b; i < m_.size(); ++i) m_[i] = 0;
  normalise();
}

double Pld::max_loss() const {
  if (m_.empty()) return -kInf;
  return static_cast<double>(lo_ + static_cast<std::int64_t>(m_.size()) - 1) / resolution_;
}

Pld Pld::pure(double eps, double resolution) {
  check_resolution(resolution);
  if (!(eps >= 0 && std::isfinite(eps))) bad("eps", "a finite number >= 0", eps);
  Builder b(resolution);
  if (eps == 0) {
    b.add(0, 1.0);
    return b.build();
  }
  // eps N is exact in binary128 (two doubles' product has at most 106 bits).
  const __float128 e = eps, x = e * resolution;
  const __float128 em = expq(-e);  // e^-eps
  b.add(static_cast<std::int64_t>(ceilq(x)), mass_down(1 / (1 + em)));
  b.add(static_cast<std::int64_t>(ceilq(-x)), mass_down(em / (1 + em)));
  return b.build();
}

Pld Pld::geometric(double alpha, double resolution) {
  check_resolution(resolution);
  if (!(alpha > 0 && alpha < 1)) bad("alpha", "in (0, 1)", alpha);
  // eps = -ln alpha, irrational: index_up bounds +eps N and -eps N from above.
  const __float128 lam = -log_alpha(alpha), a = alpha;
  Builder b(resolution);
  b.add(index_up(lam * resolution), mass_down(1 / (1 + a)));
  b.add(index_up(-lam * resolution), mass_down(a / (1 + a)));
  return b.build();
}

namespace {

// k two-point releases with losses +lam (mass p) and -lam: the number j of
// +lam outcomes is binomial(k, p) and the loss is (2j - k) lam. Its loss
// index is bounded above with lam_up for 2j - k > 0 and lam_low otherwise.
// The mode's mass is exp(lgamma(k + 1) - lgamma(j + 1) - lgamma(k - j + 1) +
// j ln p + (k - j) ln(1 - p)) in binary128: with each part within a few ulp,
// the exponent is off by at most (sum of the parts' magnitudes) 2^-110, so the
// mass by a relative rel_mode = that + 2^-110. The other masses follow by
// the ratio t_(j+1) / t_j = (k - j) p / ((j + 1)(1 - p)) (a handful of
// roundings, 2^-110 per step). Each mass is multiplied by (1 - its bound) and
// rounded down. Only j within the binomial's bulk are kept: outwards from the
// mode until a term falls below tail 2^-60 (the terms are log-concave, so the
// rest is smaller still; it goes to +inf).
Pld binomial_pld(__float128 lam_up, __float128 lam_low, __float128 p, std::uint64_t k, double resolution, double tail) {
  Builder b(resolution);
  const __float128 kq = static_cast<__float128>(k), lp = logq(p), lq = log1pq(-p), N = resolution;
  const std::int64_t K = static_cast<std::int64_t>(k);
  const std::int64_t mode = std::min<std::int64_t>(K, static_cast<std::int64_t>(floorq((kq + 1) * p)));
  const __float128 mq = static_cast<__float128>(mode);
  const __float128 parts[] = {lgammaq(kq + 1), -lgammaq(mq + 1), -lgammaq(kq - mq + 1), mq * lp, (kq - mq) * lq};
  __float128 expo = 0, mag = 0;
  for (const __float128 x : parts) expo += x, mag += fabsq(x);
  const __float128 t_mode = expq(expo), rel_mode = (mag + 1) * 0x1p-110Q;
  auto add = [&](std::int64_t j, __float128 t, std::int64_t steps) {
    const std::int64_t s = 2 * j - K;
    const __float128 rel = rel_mode + static_cast<__float128>(steps) * 0x1p-110Q;
    b.add(index_up(static_cast<__float128>(s) * (s > 0 ? lam_up : lam_low) * N), mass_down(t * (1 - rel)));
  };
  const __float128 odds = p / (1 - p);
  const __float128 stop = static_cast<__float128>(tail) * 0x1p-60Q;
  add(mode, t_mode, 0);
  __float128 t = t_mode;
  for (std::int64_t j = mode; j < K && t >= stop; ++j) {  // t = t_j; next t_(j+1)
    t *= static_cast<__float128>(K - j) / static_cast<__float128>(j + 1) * odds;
    add(j + 1, t, j + 1 - mode);
  }
  t = t_mode;
  for (std::int64_t j = mode; j > 0 && t >= stop; --j) {  // t = t_j; next t_(j-1)
    t *= static_cast<__float128>(j) / static_cast<__float128>(K - j + 1) / odds;
    add(j - 1, t, mode - j + 1);
  }
  return b.build();
}

}  // namespace

Pld Pld::pure_composed(double eps, std::uint64_t k, double resolution, double tail) {
  check_resolution(resolution);
  check_tail(tail);
  if (!(eps >= 0 && std::isfinite(eps))) bad("eps", "a finite number >= 0", eps);
  if (k > 100000000) bad("k", "at most 10^8", static_cast<double>(k));
  if (k == 0 || eps == 0) return Pld(resolution);
  const __float128 e = eps;
  return binomial_pld(e, e, 1 / (1 + expq(-e)), k, resolution, tail);
}

Pld Pld::geometric_composed(double alpha, std::uint64_t k, double resolution, double tail) {
  check_resolution(resolution);
  check_tail(tail);
  if (!(alpha > 0 && alpha < 1)) bad("alpha", "in (0, 1)", alpha);
  if (k > 100000000) bad("k", "at most 10^8", static_cast<double>(k));
  if (k == 0) return Pld(resolution);
  const __float128 lam = -log_alpha(alpha), a = alpha;
  return binomial_pld(lam * (1 + kMarginQ), lam * (1 - kMarginQ), 1 / (1 + a), k, resolution, tail);
}

Pld Pld::approximate_composed(double eps, double delta, std::uint64_t k, double resolution, double tail) {
  if (!(delta >= 0 && delta <= 1)) bad("delta", "in [0, 1]", delta);
  Pld p = pure_composed(eps, k, resolution, tail);
  // (1 - delta)^k in binary128 (k log1p(-delta), relative error far below the margin).
  const __float128 keep = delta == 1 ? 0 : expq(static_cast<__float128>(k) * log1pq(-static_cast<__float128>(delta)));
  for (double& m : p.m_) m = mass_down(keep * m);
  p.normalise();
  return p;
}

Pld Pld::approximate(double eps, double delta, double resolution) {
  if (!(delta >= 0 && delta <= 1)) bad("delta", "in [0, 1]", delta);
  Pld p = pure(eps, resolution);
  // (1 - delta) m, rounded down; the rest (at least delta) is at +inf.
  const __float128 keep = 1 - static_cast<__float128>(delta);
  for (double& m : p.m_) m = mass_down(keep * m);
  p.normalise();
  return p;
}

Pld Pld::staircase(double b, std::int64_t D, std::int64_t r, double resolution) {
  check_resolution(resolution);
  if (!(b > 0 && b < 1)) bad("b", "in (0, 1)", b);
  if (D < 1) bad("D", "an integer >= 1", static_cast<double>(D));
  if (r < 1 || r > D) bad("r", "an integer in [1, D]", static_cast<double>(r));
  // For every shift s with |s| <= D the loss is in {-eps, 0, eps} and the
  // masses are t, 1 - t(1 + b), t b, with t = TV(P, P_s) / (1 - b); TV grows
  // with |s| (the pmf is symmetric and unimodal), so s = D dominates. TV(P,
  // P_D) = P(W), W the D integers [m - D + 1, m], m = floor(D / 2); in W,
  // n0 points have |i| < r (pmf a) and the others pmf a b (docs/accounting.md).
  const std::int64_t m = D / 2;
  const std::int64_t n0 = std::min(m, r - 1) - std::max(m - D + 1, 1 - r) + 1;
  const __float128 bq = b, n0q = static_cast<__float128>(n0), n1q = static_cast<__float128>(D - n0);
  const __float128 Dq = static_cast<__float128>(D), rq = static_cast<__float128>(r);
  const __float128 t = (n0q + bq * n1q) / (2 * rq + 2 * bq * (Dq - rq) - (1 - bq));
  const __float128 lam = -log_alpha(b);
  Builder bl(resolution);
  bl.add(index_up(lam * resolution), mass_down(t));
  bl.add(0, mass_down(1 - t * (1 + bq) - 0x1p-100Q));
  bl.add(index_up(-lam * resolution), mass_down(t * bq));
  return bl.build();
}

Pld Pld::discrete_laplace(double alpha, std::int64_t D, double resolution) {
  check_resolution(resolution);
  if (!(alpha > 0 && alpha < 1)) bad("alpha", "in (0, 1)", alpha);
  if (D < 1 || D > (std::int64_t{1} << 50)) bad("D", "an integer in [1, 2^50]", static_cast<double>(D));
  if (D == 1) return geometric(alpha, resolution);
  // The shift D dominates the smaller ones (the pmf is log-concave:
  // docs/accounting.md). Loss at output z: lam (|z - D| - |z|), lam = -ln alpha:
  // lam D for z <= 0, -lam D for z >= D, lam (D - 2z) in between.
  const __float128 L = log_alpha(alpha), lam = -L, a = alpha, N = resolution;
  auto index_of = [&](std::int64_t k) { return index_up(static_cast<__float128>(k) * lam * N); };
  Builder b(resolution);
  b.add(index_of(D), mass_down(1 / (1 + a)));           // P(Z <= 0)
  b.add(index_of(-D), mass_down(expq(D * L) / (1 + a)));  // P(Z >= D)
  // z in [1, D - 1], grouped by index (nonincreasing in z): binary search for
  // the last z of each group. Mass of [z0, z1]: alpha^z0 (1 - alpha^(z1 - z0 + 1)) / (1 + alpha).
  std::int64_t z = 1;
  while (z <= D - 1) {
    const std::int64_t i = index_of(D - 2 * z);
    std::int64_t lo = z, hi = D - 1;  // the last z' with index_of(D - 2 z') == i is in [lo, hi]
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (index_of(D - 2 * mid) >= i) lo = mid; else hi = mid - 1;
    }
    const __float128 head = expq(static_cast<__float128>(z) * L);
    if (head < 0x1p-1000Q) break;  // the rest of the middle is negligible; it goes to +inf
    b.add(i, mass_down(head * -expm1q(static_cast<__float128>(lo - z + 1) * L) / (1 + a)));
    z = lo + 1;
  }
  return b.build();
}

Pld Pld::discrete_gaussian(double sigma2, std::int64_t Delta, double resolution) {
  check_resolution(resolution);
  if (!(sigma2 > 0 && sigma2 <= kMaxGaussianSigma * kMaxGaussianSigma))
    bad("sigma2", "a finite number in (0, 2^40]", sigma2);
  if (Delta < 1 || Delta > (1 << 20)) bad("Delta", "an integer in [1, 2^20]", static_cast<double>(Delta));
  // The shift Delta dominates smaller ones (log-concave pmf). Loss at z:
  // (Delta^2 - 2 z Delta) / (2 sigma^2); index = ceil(N (Delta^2 - 2 z Delta) / (2 sigma^2)),
  // exact: numerator and denominator are exact binary128 numbers, and the
  // sign of fmaq(c, den, -num) (one rounding) is that of c den - num.
  const __float128 den = 2 * static_cast<__float128>(sigma2), N = resolution, Dq = static_cast<__float128>(Delta);
  auto index_of = [&](std::int64_t z) {
    const __float128 num = N * (Dq * Dq - 2 * static_cast<__float128>(z) * Dq);
    __float128 c = ceilq(num / den);
    while (fmaq(c, den, -num) < 0) c += 1;
    while (fmaq(c - 1, den, -num) >= 0) c -= 1;
    return static_cast<std::int64_t>(c);
  };
  // The normaliser S = sum_y exp(-y^2 / (2 sigma^2)), bounded above by Poisson
  // summation: S = sqrt(2 pi sigma^2) (1 + 2 sum_k>=1 e^(-c k^2)), c = 2 pi^2 sigma^2,
  // and sum_k>=1 e^(-c k^2) <= e^-c / (1 - e^(-3c)) since k^2 >= 1 + 3 (k - 1).
  const __float128 s2 = sigma2, c = 2 * M_PIq * M_PIq * s2;
  const __float128 S_up = sqrtq(2 * M_PIq * s2) * (1 + 2 * expq(-c) / (-expm1q(-3 * c))) * (1 + kMarginQ);
  // Points with exp(-z^2 / (2 sigma^2)) < e^-45 are left to +inf (under 1e-19 in all).
  const double sigma = std::sqrt(sigma2);
  const std::int64_t Z = static_cast<std::int64_t>(std::floor(sigma * std::sqrt(90.0))) + 1;
  if (index_of(-Z) - index_of(Z) >= kMaxSpan)
    throw std::invalid_argument("the PLD's grid would hold more than 2^26 losses; lower the resolution");
  Builder b(resolution);
  // f(z) = exp(-x), x = z^2 / (2 sigma^2) <= 46: z^2 is exact (|z| < 2^26), the
  // division rounds once (x off by at most 46 u), exp is within 1 ulp: each f
  // within a relative 48 u. A group of n points summed in double: a relative
  // (n - 1) u more. So sum (1 - (n + 50) 2u) is a lower bound.
  const double two_s2 = 2 * sigma2;
  std::int64_t z = -Z;
  while (z <= Z) {
    const std::int64_t i = index_of(z);
    double sum = 0;
    std::int64_t n = 0;
    for (; z <= Z && index_of(z) == i; ++z, ++n) sum += std::exp(-(static_cast<double>(z) * static_cast<double>(z)) / two_s2);
    const __float128 lower = static_cast<__float128>(sum) * (1 - static_cast<__float128>(n + 50) * 2 * kU);
    b.add(i, mass_down(lower / S_up));
  }
  return b.build();
}

Pld Pld::discrete_gaussian_composed(double rho, std::int64_t shift, std::uint64_t k, double resolution) {
  check_resolution(resolution);
  if (!(rho > 0 && std::isfinite(rho))) bad("rho", "a finite number > 0", rho);
  if (shift < 1 || shift > (1 << 20)) bad("shift", "an integer in [1, 2^20]", static_cast<double>(shift));
  if (k < 1 || k > 100000000) bad("k", "an integer in [1, 10^8]", static_cast<double>(k));
  // sigma^2 exactly as the sampler's: shift^2 / (2 rho) in binary128.
  const __float128 Dq = static_cast<__float128>(shift), s2 = Dq * Dq / (2 * static_cast<__float128>(rho));
  if (!(s2 >= 16)) bad("sigma2", "at least 16 (sigma >= 4)", static_cast<double>(s2));
  const __float128 kq = static_cast<__float128>(k), var = kq * s2, N = resolution, pi2 = M_PIq * M_PIq;
  // S, the sum of the k noises, has (docs/accounting.md, "Composed discrete
  // Gaussians") P(S = s) >= C^k g(s) - err, g the N(0, k sigma^2) density,
  // C = 1 / sum_m e^(-2 pi^2 sigma^2 m^2) >= e^(-2.01 e^(-2 pi^2 sigma^2)) and
  // err = 2.01 k e^(-pi^2 sigma^2 / 2) + e^(-pi^2 k sigma^2 / 2) / (pi^2 k sigma^2).
  const __float128 ck_low = expq(-kq * 2.01Q * expq(-2 * pi2 * s2)) * (1 - kMarginQ);
  const double pre = down(ck_low / sqrtq(2 * M_PIq * var) * (1 - kMarginQ));
  const double err = up((2.01Q * kq * expq(-pi2 * s2 / 2) + expq(-pi2 * var / 2) / (pi2 * var)) * (1 + kMarginQ));
  // |s| <= T: s^2 / (2 k sigma^2) <= 46; the rest (under 1e-19) goes to +inf.
  const double T = std::floor(static_cast<double>(sqrtq(92 * var)));
  if (!(2 * T + 1 <= static_cast<double>(kMaxGaussianPoints)))
    bad("k sigma^2", "small enough for at most 2^22 values of the sum", static_cast<double>(var));
  const std::int64_t Ti = static_cast<std::int64_t>(T);
  // Loss at S = s: (k shift^2 - 2 shift s) / (2 sigma^2); its grid index
  // ceil(N (k D^2 - 2 D s) / (2 sigma^2)) is exact: the numerator is an
  // integer below 2^107 and 2 sigma^2 a binary128 number, and fmaq decides
  // the sign of c den - num with one rounding.
  const __float128 den = 2 * s2, kD2 = kq * Dq * Dq;
  // Fast path: v = a - b z in double is within 8 u (|a| + |b z|) of the
  // exact N (k D^2 - 2 D z) / (2 sigma^2) (a, b and the product and
  // difference each rounded once); when no integer is that close, ceil(v)
  // is the exact index. Otherwise the binary128 path decides.
  const double a_d = static_cast<double>(N * kD2 / den), b_d = static_cast<double>(2 * N * Dq / den);
  auto exact_index = [&](std::int64_t z) {
    const __float128 num = N * (kD2 - 2 * static_cast<__float128>(z) * Dq);
    __float128 c = ceilq(num / den);
    while (fmaq(c, den, -num) < 0) c += 1;
    while (fmaq(c - 1, den, -num) >= 0) c -= 1;
    if (!(fabsq(c) < 0x1p62Q)) throw std::invalid_argument("a loss is too large for the PLD's grid");
    return static_cast<std::int64_t>(c);
  };
  auto index_of = [&](std::int64_t z) {
    const double bz = b_d * static_cast<double>(z), v = a_d - bz;
    const double margin = 8 * kU * (std::fabs(a_d) + std::fabs(bz)) + 1e-300;
    const double c = std::ceil(v);
    if (!(std::fabs(c) < 0x1p52)) return exact_index(z);
    if (c - v > margin && v - (c - 1) > margin) return static_cast<std::int64_t>(c);
    // v within the margin of one integer r (the margin is far below 1/2):
    // the exact value x is in (r - 1, r + 1), and its ceiling is r when x <= r
    // (r den - num >= 0, one fmaq), r + 1 otherwise.
    const double r = std::nearbyint(v);
    if (std::fabs(v - r) > margin) return exact_index(z);
    const __float128 num = N * (kD2 - 2 * static_cast<__float128>(z) * Dq), rq = static_cast<__float128>(r);
    // r den - num in binary128 without fma (libquadmath's fmaq is slow): the
    // product and the difference each rounded once, so off by at most
    // 2^-112 (|r den| + |num|); a larger result has the exact one's sign.
    const __float128 t = rq * den - num;
    if (fabsq(t) > (fabsq(rq * den) + fabsq(num)) * 0x1p-110Q) return static_cast<std::int64_t>(r) + (t > 0 ? 0 : 1);
    return static_cast<std::int64_t>(r) + (fmaq(rq, den, -num) >= 0 ? 0 : 1);
  };
  if (index_of(-Ti) - index_of(Ti) >= kMaxSpan)
    throw std::invalid_argument("the PLD's grid would hold more than 2^26 losses; lower the resolution");
  // g(s) in double: x = s^2 / two_var with s^2 exact (|s| < 2^22) and two
  // roundings (x within 2.1 u relative, at most 46: e^-x within 97 u), exp
  // within 2 u: f within 100 u of e^(-x). f pre (1 - 256 u) computed in
  // double is then below C^k g(s), and subtracting err keeps it a lower bound.
  const double two_var = static_cast<double>(2 * var);
  Builder b(resolution);
  for (std::int64_t z = -Ti; z <= Ti; ++z) {
    const double zd = static_cast<double>(z);
    const double f = std::exp(-(zd * zd) / two_var);
    const double m = f * pre * (1 - 256 * kU) - err;
    if (m >= kTiny) b.add(index_of(z), m);
  }
  return b.build();
}

Pld Pld::compose(const Pld& other, double tail) const {
  check_tail(tail);
  if (other.resolution_ != resolution_) bad("resolution", "the same for both PLDs (" + format_double(resolution_) + ")", other.resolution_);
  Pld out(resolution_);
  if (m_.empty() || other.m_.empty()) {
    out.m_.clear();
    out.inf_ = 1;
    return out;
  }
  const std::int64_t span = static_cast<std::int64_t>(m_.size() + other.m_.size()) - 1;
  if (span > kMaxSpan) throw std::invalid_argument("the composed PLD's grid would hold more than 2^26 losses; lower the resolution");
  // The outer loop runs over the nonzero masses of the sparser operand, the
  // inner one (vectorised) over the other's dense array.
  const Pld* outer = this;
  const Pld* inner = &other;
  auto nonzeros = [](const std::vector<double>& v) { return std::count_if(v.begin(), v.end(), [](double x) { return x != 0; }); };
  const auto nz_this = nonzeros(m_), nz_other = nonzeros(other.m_);
  if (nz_other * static_cast<std::int64_t>(m_.size()) < nz_this * static_cast<std::int64_t>(other.m_.size())) std::swap(outer, inner);
  // A c_k has at most min(nonzeros) nonzero products; zero ones add no error.
  const std::int64_t terms = std::min(nz_this, nz_other);
  std::vector<double> c(static_cast<std::size_t>(span), 0.0);
  // Both paths end alike: c scaled by 1 - 3 n u, with n the bound on the
  // relative rounding of the path's sums (a lower bound on each mass), tiny
  // masses moved to +inf by normalise.
  auto finish = [&](std::int64_t n) {
    const double f = 1 - 3 * static_cast<double>(n) * kU;
    if (!(f > 0.5)) throw std::invalid_argument("the composed PLD has too many terms per loss");
    for (double& x : c) {
      x *= f;
      if (x < kTiny) x = 0;
    }
    out.lo_ = lo_ + other.lo_;
    out.m_ = std::move(c);
    out.normalise();
    out.truncate(tail);
    return out;
  };
  if (4 * nz_this < static_cast<std::int64_t>(m_.size()) && 4 * nz_other < static_cast<std::int64_t>(other.m_.size())) {
    // Both sparse (a binomial group's masses lie 2 eps N apart): multiply the
    // nonzeros only. Each c_k is a sum of at most `terms` nonnegative products
    // accumulated in order: within a relative gamma_terms (Higham, Lemma 3.1
    // and section 3.1), so c_k (1 - 3 (terms + 2) u) is a lower bound.
    std::vector<std::pair<std::size_t, double>> as, bs;
    for (std::size_t i = 0; i < m_.size(); ++i) if (m_[i] != 0) as.push_back({i, m_[i]});
    for (std::size_t j = 0; j < other.m_.size(); ++j) if (other.m_[j] != 0) bs.push_back({j, other.m_[j]});
    for (const auto& [i, a] : as)
      for (const auto& [j, b] : bs) c[i + j] += a * b;
    return finish(terms + 2);
  }
  const double* bm = inner->m_.data();
  const std::size_t bn = inner->m_.size(), an = outer->m_.size();
  const std::int64_t nz_outer = outer == this ? nz_this : nz_other;
  if (nz_outer <= 256 || (nz_outer <= 4096 && 4 * nz_outer < static_cast<std::int64_t>(an))) {
    // Few or sparse outer masses (a binomial group against a dense Gaussian
    // one, where the blocks below would cost a pass over c each): each
    // c_k is a sum of at most nz_outer nonnegative products accumulated in
    // order, within gamma_(nz_outer) (as the sparse path above), so
    // c_k (1 - 3 (nz_outer + 2) u) is a lower bound; no per-block buffers.
    for (std::size_t i = 0; i < an; ++i) {
      const double a = outer->m_[i];
      if (a == 0) continue;
      double* ci = c.data() + i;
      for (std::size_t j = 0; j < bn; ++j) ci[j] += a * bm[j];
    }
    return finish(std::min(nz_outer, terms) + 2);
  }
  // Blocked summation: the products of kBlock consecutive outer masses are
  // summed into t, then t is added into c. Each c_k is then a sum of at most
  // `chunks` partial sums, each of at most min(kBlock, terms) nonnegative
  // products, all accumulated in order: within a relative
  // gamma_(min(kBlock, terms)) + gamma_chunks (+ second-order terms) of the
  // exact sum (Higham, Accuracy and Stability of Numerical Algorithms, Lemma
  // 3.1 and section 3.1), instead of gamma_terms for one long sum; products
  // that fell below the normal range add at most 2^-1074 each, negligible once
  // c_k >= kTiny. So c_k (1 - 3 (min(kBlock, terms) + chunks + 2) u), rounded
  // (one more u, covered by the factor 3), is a lower bound.
  constexpr std::size_t kBlock = 256;
  std::vector<double> t;
  std::int64_t chunks = 0;
  for (std::size_t start = 0; start < an; start += kBlock) {
    const std::size_t end = std::min(an, start + kBlock);
    bool any = false;
    for (std::size_t i = start; i < end && !any; ++i) any = outer->m_[i] != 0;
    if (!any) continue;
    ++chunks;
    t.assign(end - start + bn - 1, 0.0);
    for (std::size_t i = start; i < end; ++i) {
      const double a = outer->m_[i];
      if (a == 0) continue;
      double* ti = t.data() + (i - start);
      for (std::size_t j = 0; j < bn; ++j) ti[j] += a * bm[j];
    }
    double* cs = c.data() + start;
    for (std::size_t q = 0; q < t.size(); ++q) cs[q] += t[q];
  }
  return finish(std::min<std::int64_t>(kBlock, terms) + chunks + 2);
}

Pld Pld::self_compose(std::uint64_t k, double tail) const {
  check_tail(tail);
  Pld result(resolution_);
  Pld base = *this;
  while (k > 0) {
    if (k & 1) result = result.compose(base, tail);
    k >>= 1;
    if (k > 0) base = base.compose(base, tail);
  }
  return result;
}

double Pld::delta(double eps) const {
  if (!std::isfinite(eps)) bad("eps", "finite", eps);
  // Terms m_i (1 - e^(eps - l_i)) for l_i > eps, evaluated in double. With
  // l_i = idx / N (one rounding) and x = eps - l_i (one more), the computed x
  // is within e_i = 2u (|eps| + |l_i|) of the true one, and -expm1 has slope
  // at most 1 on x < 0: each term is at most m_i (max(0, -expm1(x^)) + e_i),
  // counted for every i with x^ < e_i. expm1 (1 ulp), the product and the
  // sum (n terms) add a relative (n + 4) 2u at most.
  double sum = 0, err = 0;
  std::size_t n = 0;
  const double N = resolution_;
  for (std::size_t k = 0; k < m_.size(); ++k) {
    const double m = m_[k];
    if (m == 0) continue;
    const double l = static_cast<double>(lo_ + static_cast<std::int64_t>(k)) / N;
    const double x = eps - l;
    const double e = 2 * kU * (std::fabs(eps) + std::fabs(l));
    if (x >= e) continue;
    sum += m * std::max(0.0, -std::expm1(x));
    err += m * e;
    ++n;
  }
  const __float128 total = static_cast<__float128>(sum) * (1 + static_cast<__float128>(n + 4) * 2 * kU) +
                           static_cast<__float128>(err) * (1 + static_cast<__float128>(n + 2) * 2 * kU) +
                           static_cast<__float128>(n) * 0x1p-1000Q + inf_;
  return std::min(1.0, up(total));
}

double Pld::epsilon(double delta_target) const {
  if (!(delta_target > 0 && delta_target <= 1)) bad("delta", "in (0, 1]", delta_target);
  if (delta(0) <= delta_target) return 0;
  // Above the largest finite loss only the margins and inf_mass remain.
  double hi = std::max(max_loss(), 0.0);
  hi = hi + std::max(1e-9, hi * 1e-9);
  if (!(delta(hi) <= delta_target)) return kInf;
  double lo = 0;
  while (hi - lo > std::max(0x1p-40, hi * 0x1p-30)) {
    const double mid = lo + (hi - lo) / 2;
    if (delta(mid) <= delta_target) hi = mid; else lo = mid;
  }
  return hi;
}

namespace {

// Sum over j > (k + E / eps) / 2 of C(k, j) p^j (1 - p)^(k - j) (1 - e^(E - (2j - k) lam_j)),
// where lam_j is lam_up for positive 2j - k and lam_low otherwise, in binary128.
// The terms are unimodal in j; once past the mode, the ratio of consecutive
// terms r_j = (k - j) p / ((j + 1)(1 - p)) decreases, so the rest is at most
// t_j r_j / (1 - r_j): added, and the loop stops.
__float128 rr_sum(__float128 lam_up, __float128 lam_low, __float128 p, std::uint64_t k, double E) {
  const __float128 kq = static_cast<__float128>(k), lp = logq(p), lq = log1pq(-p), lgk = lgammaq(kq + 1);
  __float128 sum = 0;
  // The first j with a positive term: (2j - k) lam > E.
  std::int64_t j0 = 0;
  if (lam_up > 0) {
    const __float128 jstar = (kq + static_cast<__float128>(E) / lam_up) / 2;
    j0 = std::max<std::int64_t>(0, static_cast<std::int64_t>(floorq(jstar)) - 1);
  }
  for (std::int64_t j = j0; j <= static_cast<std::int64_t>(k); ++j) {
    const std::int64_t s = 2 * j - static_cast<std::int64_t>(k);
    const __float128 l = static_cast<__float128>(s) * (s > 0 ? lam_up : lam_low);
    if (!(l > E)) continue;
    const __float128 jq = static_cast<__float128>(j);
    const __float128 t = expq(lgk - lgammaq(jq + 1) - lgammaq(kq - jq + 1) + jq * lp + (kq - jq) * lq);
    sum += t * -expm1q(static_cast<__float128>(E) - l);
    const __float128 r = (kq - jq) * p / ((jq + 1) * (1 - p));
    if (r < 1 && t * r / (1 - r) < sum * 0x1p-80Q + 0x1p-1100Q) {
      sum += t * r / (1 - r);
      break;
    }
  }
  return sum;
}

}  // namespace

double rr_composed_delta(double eps, std::uint64_t k, double E) {
  if (!(eps >= 0 && std::isfinite(eps))) bad("eps", "a finite number >= 0", eps);
  if (k > 100000000) bad("k", "at most 10^8", static_cast<double>(k));
  if (!std::isfinite(E)) bad("E", "finite", E);
  if (k == 0 || eps == 0) return E >= 0 ? 0.0 : up(-expm1q(static_cast<__float128>(E)));
  const __float128 e = eps, p = 1 / (1 + expq(-e));
  return std::min(1.0, up(rr_sum(e, e, p, k, E) * (1 + 0x1p-60Q) + 0x1p-1000Q));
}

double geometric_composed_delta(double alpha, std::uint64_t k, double E) {
  if (!(alpha > 0 && alpha < 1)) bad("alpha", "in (0, 1)", alpha);
  if (k > 100000000) bad("k", "at most 10^8", static_cast<double>(k));
  if (!std::isfinite(E)) bad("E", "finite", E);
  if (k == 0) return E >= 0 ? 0.0 : up(-expm1q(static_cast<__float128>(E)));
  const __float128 lam = -log_alpha(alpha), a = alpha;
  return std::min(1.0, up(rr_sum(lam * (1 + kMarginQ), lam * (1 - kMarginQ), 1 / (1 + a), k, E) * (1 + 0x1p-60Q) +
                          0x1p-1000Q));
}

double gdp_delta(double mu, double E) {
  if (!(mu > 0 && std::isfinite(mu))) bad("mu", "a finite number > 0", mu);
  const __float128 m = mu, e = E;
  auto Phi = [](__float128 x) { return erfcq(-x / M_SQRT2q) / 2; };
  return static_cast<double>(Phi(-e / m + m / 2) - expq(e) * Phi(-e / m - m / 2));
}

}  // namespace optdp::pld
