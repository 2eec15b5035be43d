#include "core/selection.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include <boost/math/special_functions/legendre.hpp>

#include "core/format.hpp"
#include "core/samplers.hpp"

namespace optdp {

namespace {

using u128 = unsigned __int128;

void check_exponents(std::span<const __float128> gamma) {
  if (gamma.empty() || gamma.size() > kMaxCandidates)
    throw std::invalid_argument("the number of candidates must be in [1, " + std::to_string(kMaxCandidates) +
                                "], but is " + std::to_string(gamma.size()));
  // From the bits, without binary128 comparisons (software, with shortcuts
  // for some values): the time must not depend on the exponents.
  bool best = false, bad = false;
  for (const __float128 g : gamma) {
    const u128 bits = std::bit_cast<u128>(g);
    const u128 magnitude = bits & ~(u128{1} << 127);
    bad |= ((bits >> 127) != 0) & (magnitude != 0);  // negative (-0 is 0)
    bad |= (magnitude >> 112) == 0x7fff;              // inf or NaN
    best |= magnitude == 0;
  }
  if (bad) throw std::invalid_argument("selection exponents must be finite and >= 0");
  if (!best) throw std::invalid_argument("selection exponents must include a 0 (a best candidate)");
}

// A uniform integer in [0, n), n >= 1, exactly: 128 random bits masked to
// n - 1's bit length, rejected while >= n (accepted with probability > 1/2).
u128 uniform_below(Rng& rng, u128 n, std::size_t& draws) {
  if (n <= 1) return 0;
  const u128 top = n - 1;
  int bits = 0;
  for (u128 t = top; t; t >>= 1) ++bits;
  const u128 mask = bits == 128 ? ~u128{0} : ((u128{1} << bits) - 1);
  for (;;) {
    ++draws;
    const u128 x = ((static_cast<u128>(rng.u64()) << 64) | rng.u64()) & mask;
    if (x < n) return x;
  }
}

// ---- exp(-gamma) in double-double arithmetic (docs/selection.md) ----------
// A value hi + lo with |lo| <= ulp(hi) / 2 (106 significant bits), from
// hardware doubles (exact products by two_prod) and 128-bit integers.
// libquadmath's expq costs nearly a microsecond and takes shortcuts for some
// arguments; this path costs a fifth of that and runs the same operations
// for every argument (no branch on a value, no subnormal double), so the
// samplers take the same time whatever the scores.
struct DD {
  double hi, lo;
};
[[gnu::always_inline]] inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
[[gnu::always_inline]] inline DD quick_two_sum(double a, double b) {  // |a| >= |b| or a == 0
  const double s = a + b;
  return {s, b - (s - a)};
}
[[gnu::always_inline]] inline DD dd_add(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(a.lo, b.lo);
  s = quick_two_sum(s.hi, s.lo + t.hi);
  return quick_two_sum(s.hi, s.lo + t.lo);
}
// a * b exactly as p + e. With FMA instructions, one fused multiply-add;
// otherwise Dekker's splitting into 26-bit halves (the compiler cannot fuse
// its operations without FMA instructions, so they stay exact). Never the
// library's fma(), which is a call and, in software, takes shortcuts.
[[gnu::always_inline]] inline DD two_prod(double a, double b) {
  const double p = a * b;
#ifdef __FMA__
  return {p, __builtin_fma(a, b, -p)};
#else
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  const double ca = kSplit * a, cb = kSplit * b;
  const double ah = ca - (ca - a), al = a - ah;
  const double bh = cb - (cb - b), bl = b - bh;
  return {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
#endif
}
[[gnu::always_inline]] inline DD dd_mul(DD a, DD b) {
  const DD p = two_prod(a.hi, b.hi);
  return quick_two_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}
DD dd_of(__float128 x) {
  const double hi = static_cast<double>(x);
  return {hi, static_cast<double>(x - hi)};
}
// 2^-n for 0 <= n <= 1022, exactly, from the bits.
double pow2_neg(int n) { return std::bit_cast<double>(static_cast<std::uint64_t>(1023 - n) << 52); }
// min(max(v, 0), hi) by arithmetic (no branch), for |v| < 2^30.
int clamp_to(int v, int hi) {
  v &= ~(v >> 31);
  const int d = v - hi;
  return v - (d & ~(d >> 31));
}
// An integer below 2^63 as a double: one signed conversion (an unsigned one
// branches on the top bit).
double to_double(std::uint64_t x) { return static_cast<double>(static_cast<std::int64_t>(x)); }

// exp(-g) = 2^-(j/64) exp(-r), r = g - j ln2/64, |r| <= ln2/128 (plus 2^-40):
// a table of 2^-(i/64), i < 64, and the Taylor polynomial of exp(-r) to
// degree 12 (the next term is below 2^-119); the terms of degree 7 and more
// are below 2^-62 and are summed in plain doubles.
constexpr int kTaylor = 12, kPlain = 7;
constexpr int kFix = 120;  // g and r as integers in units of 2^-120
struct ExpTables {
  DD two_pow[64];            // 2^-(i/64)
  DD inv_fact[kTaylor + 1];  // 1/n!
  ExpTables() {
    for (int i = 0; i < 64; ++i) two_pow[i] = dd_of(exp2q(-static_cast<__float128>(i) / 64));
    __float128 f = 1;
    for (int n = 0; n <= kTaylor; ++n) {
      if (n > 0) f *= n;
      inv_fact[n] = dd_of(1 / f);
    }
  }
};
// round(ln 2 / 64 * 2^120) = round(ln 2 * 2^114), within 0.15 (from ln 2 to 80 digits).
constexpr u128 kLn2Over64 = (u128{0x2c5c85fdf473dULL} << 64) | u128{0xe6af278ece600fccULL};
const ExpTables& exp_tables() {
  static const ExpTables t;
  return t;
}

// min(g, 100) in units of 2^-120 (truncated: exact for g >= 2^-7), from the
// bits of the binary128 g >= 0, without a branch on g.
u128 fixed_exponent(__float128 g) {
  const u128 bits = std::bit_cast<u128>(g);
  const int e = static_cast<int>(bits >> 112) & 0x7fff;  // biased exponent
  const u128 m = (bits & ((u128{1} << 112) - 1)) | (static_cast<u128>(e != 0) << 112);
  const int shift = e - 16383 - 112 + kFix;  // g = m 2^(shift - 120); shift > 14 means g >= 2^14
  const u128 v = (m << clamp_to(shift, 14)) >> clamp_to(-shift, 127);
  const u128 cap = u128{100} << kFix;
  const u128 over = -static_cast<u128>((shift > 14) | (v > cap));
  return (v & ~over) | (cap & over);
}

// exp(-gamma) as DD, for gamma >= 0.
DD exp_minus_dd(__float128 gamma) {
  const ExpTables& t = exp_tables();
  const u128 G = fixed_exponent(gamma);
  // j = round(g 64 / ln 2) from a double approximation of g (G < 2^127: its
  // top 64 bits hold g to 2^-56); 0 <= j <= 9234.
  const double g = to_double(static_cast<std::uint64_t>(G >> 64)) * pow2_neg(kFix - 64);
  const int j = static_cast<int>(g * (64 / M_LN2) + 0.5);  // truncation: no library call, no shortcut
  // r = g - j ln2/64, exact in these units but for ln2/64's rounding (at
  // most 9234 * 0.15 units of 2^-120, so |error| < 2^-109); |r| < 2^-6.
  const u128 diff = G - static_cast<u128>(j) * kLn2Over64;
  const u128 negative = diff >> 127;
  const u128 a = (diff ^ -negative) + negative;  // |diff|
  // -r as DD from three exactly representable pieces of |R|.
  const double sign = static_cast<double>(2 * static_cast<int>(negative) - 1);
  const double a1 = to_double(static_cast<std::uint64_t>(a >> 64)) * pow2_neg(kFix - 64);
  const double a2 = to_double(static_cast<std::uint64_t>(a >> 32) & 0xffffffffu) * pow2_neg(kFix - 32);
  const double a3 = to_double(static_cast<std::uint64_t>(a) & 0xffffffffu) * pow2_neg(kFix);
  const DD mr = dd_add(two_sum(sign * a1, sign * a2), DD{sign * a3, 0});
  // Horner: the small terms in doubles, then the rest in DD.
  double tail = t.inv_fact[kTaylor].hi;
  for (int n = kTaylor - 1; n >= kPlain; --n) tail = tail * mr.hi + t.inv_fact[n].hi;
  DD s = dd_add(t.inv_fact[kPlain - 1], dd_mul(DD{tail, 0}, mr));
  for (int n = kPlain - 2; n >= 0; --n) s = dd_add(dd_mul(s, mr), t.inv_fact[n]);
  s = dd_mul(s, t.two_pow[j & 63]);
  const double scale = pow2_neg(j >> 6);  // >= 2^-144: no subnormal
  return {s.hi * scale, s.lo * scale};
}

// floor(x 2^bits) modulo 2^128 for a double x (|x| 2^bits < 2^128), from its
// bits x = m 2^(shift - bits), without a branch on x: m shifted left, or
// right with the floor taken towards -inf for a negative x.
u128 scaled_floor(double x, int bits) {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  const int e = static_cast<int>(b >> 52) & 0x7ff;
  const u128 m = (b & ((std::uint64_t{1} << 52) - 1)) | (static_cast<std::uint64_t>(e != 0) << 52);
  const int shift = e + (e == 0) - 1075 + bits;
  const int left = clamp_to(shift, 127), right = clamp_to(-shift, 127);
  const u128 down = (m << left) >> right;                // floor(|x| 2^bits)
  const u128 inexact = (down << right) != (m << left);  // |x| 2^bits is not an integer
  const u128 neg = b >> 63;
  const u128 v = down + (neg & inexact);  // ceil(|x| 2^bits) for x < 0
  return (v ^ -neg) + neg;                // -v for x < 0
}

// floor(p 2^bits), or one less, modulo 2^128, for p = hi + lo in (0, 1]:
// the sum of the two floors is floor(p 2^bits) or one less, and is -1 only
// when the first floor is 0 and lo < 0, where floor(p 2^bits) is 0.
u128 fixed_point(DD p, int bits) {
  const u128 a = scaled_floor(p.hi, bits);
  const u128 sum = a + scaled_floor(p.lo, bits);
  const u128 zero = -static_cast<u128>((a == 0) & (p.lo < 0));
  return sum & ~zero;
}

// ---- gamma = scale (best - q) without binary128 arithmetic ------------------
// libgcc's binary128 operations are software with shortcuts for zeros, so
// computing the exponents with them takes less time when scores tie. This
// computes the same value (to 2^-111 relative) with integer operations that
// do not depend on the values.

// A finite double as m 2^e, m < 2^53, and its sign.
struct Unpacked {
  std::uint64_t m;
  int e;
  bool negative;
};
Unpacked unpack(double x) {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(x);
  const int e = static_cast<int>(b >> 52) & 0x7ff;
  return {(b & ((std::uint64_t{1} << 52) - 1)) | (static_cast<std::uint64_t>(e != 0) << 52), e + (e == 0) - 1075,
          (b >> 63) != 0};
}

// The number of leading zero bits of x (128 for 0), without a branch.
int clz128(u128 x) {
  const auto hi = static_cast<std::uint64_t>(x >> 64), lo = static_cast<std::uint64_t>(x);
  const int h = std::countl_zero(hi), l = std::countl_zero(lo);
  return h + (l & -static_cast<int>(hi == 0));
}

// scale (best - q) for finite doubles best >= q and a positive normal
// binary128 scale, truncated to 113 bits (relative error below 2^-111);
// +0 when best == q.
__float128 scaled_difference(__float128 scale, double best, double q) {
  const Unpacked b = unpack(best), c = unpack(q);
  // best and q in units of 2^(E - 64), E the larger exponent: exact unless
  // the exponents are more than 64 apart, when the smaller one is truncated
  // (by less than one unit, and best - q is then at least 2^(E + 51)).
  const int E = std::max(b.e, c.e);
  const u128 A = (static_cast<u128>(b.m) << 64) >> clamp_to(E - b.e, 127);
  const u128 B = (static_cast<u128>(c.m) << 64) >> clamp_to(E - c.e, 127);
  const u128 sa = -static_cast<u128>(b.negative), sb = -static_cast<u128>(c.negative);
  const u128 D = ((A ^ sa) - sa) - ((B ^ sb) - sb);  // best - q >= 0, below 2^118
  // scale = S 2^(es - 112), S in [2^112, 2^113).
  const u128 sbits = std::bit_cast<u128>(scale);
  const int es = static_cast<int>(sbits >> 112) - 16383;
  const u128 S = (sbits & ((u128{1} << 112) - 1)) | (u128{1} << 112);
  // P = D S, 256 bits as (hi, lo), from four 64-bit products.
  const u128 d1 = D >> 64, d0 = static_cast<std::uint64_t>(D), s1 = S >> 64, s0 = static_cast<std::uint64_t>(S);
  const u128 p00 = d0 * s0, p01 = d0 * s1, p10 = d1 * s0, p11 = d1 * s1;
  const u128 mid = (p00 >> 64) + static_cast<std::uint64_t>(p01) + static_cast<std::uint64_t>(p10);
  const u128 lo = (mid << 64) | static_cast<std::uint64_t>(p00);
  const u128 hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
  // The top 113 bits of P (P >= 2^112 unless D = 0): its leading bit L is
  // 112 .. 230; shift right by L - 112 < 128.
  const int L = 255 - (clz128(hi) + (clz128(lo) & -static_cast<int>(hi == 0)));
  const int sh = clamp_to(L - 112, 127);
  const u128 M = (lo >> sh) | ((hi << 1) << (127 - sh));
  // value = M 2^(L - 112) 2^(es - 112) 2^(E - 64) = (M / 2^112) 2^(L + es + E - 176).
  const int exponent = L + es + E - 176;
  const u128 bits = (static_cast<u128>(exponent + 16383) << 112) | (M & ((u128{1} << 112) - 1));
  return std::bit_cast<__float128>(bits & -static_cast<u128>(D != 0));
}

}  // namespace

__float128 exp_minus(__float128 gamma) {
  const DD p = exp_minus_dd(gamma);
  return static_cast<__float128>(p.hi) + static_cast<__float128>(p.lo);
}

SelectionMethod parse_selection_method(std::string_view text) {
  if (text == "exponential") return SelectionMethod::Exponential;
  if (text == "permute_and_flip") return SelectionMethod::PermuteAndFlip;
  throw std::invalid_argument("method must be 'exponential' or 'permute_and_flip', but is " + quote_text(text));
}

const char* selection_method_name(SelectionMethod m) {
  return m == SelectionMethod::Exponential ? "exponential" : "permute_and_flip";
}

std::vector<__float128> selection_exponents(std::span<const double> scores, double eps, double sensitivity) {
  if (scores.empty() || scores.size() > kMaxCandidates)
    throw std::invalid_argument("the number of candidates must be in [1, " + std::to_string(kMaxCandidates) +
                                "], but is " + std::to_string(scores.size()));
  if (!(std::isfinite(eps) && eps > 0)) throw std::invalid_argument("eps must be positive, but is " + format_double(eps));
  if (!(std::isfinite(sensitivity) && sensitivity > 0))
    throw std::invalid_argument("sensitivity must be positive, but is " + format_double(sensitivity));
  double best = scores[0];
  for (const double q : scores) {
    if (!std::isfinite(q)) throw std::invalid_argument("scores must be finite numbers");
    best = std::max(best, q);
  }
  // eps / (2 s) in binary128: both doubles, so the quotient is one rounding away.
  const __float128 scale = static_cast<__float128>(eps) / (2 * static_cast<__float128>(sensitivity));
  std::vector<__float128> gamma(scores.size());
  for (std::size_t r = 0; r < scores.size(); ++r) gamma[r] = scaled_difference(scale, best, scores[r]);
  return gamma;
}

std::size_t sample_exponential(Rng& rng, std::span<const __float128> gamma, SelectionWork* work) {
  check_exponents(gamma);
  const std::size_t k = gamma.size();
  // Weights floor(p_r 2^101) (or one less): a best candidate weighs 2^101,
  // the total is below 2^125 (k <= 2^24), and the draw is exact for these
  // weights. Every candidate's weight is computed and the whole list
  // scanned, whatever the scores: the time of a release must not depend on
  // them (docs/boundary.md).
  constexpr int kBits = 101;
  std::vector<u128> w(k);
  u128 total = 0;
  std::size_t exponentials = 0, visited = 0, draws = 0;
  for (std::size_t r = 0; r < k; ++r) {
    const DD p = exp_minus_dd(gamma[r]);
    ++exponentials;
    // p = 1 (gamma 0, or too small to matter): 2^kBits. Selected by a mask
    // after computing fixed_point, so that a best candidate costs the same.
    const u128 one = -static_cast<u128>((p.hi > 1) | ((p.hi == 1) & (p.lo >= 0)));
    w[r] = (fixed_point(p, kBits) & ~one) | ((u128{1} << kBits) & one);
    total += w[r];
  }
  u128 u = uniform_below(rng, total, draws);
  std::size_t chosen = 0;
  bool found = false;
  for (std::size_t r = 0; r < k; ++r) {
    const bool here = !found & (u < w[r]);
    chosen = here ? r : chosen;
    found |= here;
    u -= w[r] & (static_cast<u128>(found) - 1);  // until found
    ++visited;
  }
  if (work) {
    work->exponentials += exponentials;
    work->visited += visited;
    work->point_draws += draws;
  }
  return chosen;  // found: u < total
}

std::size_t sample_permute_and_flip(Rng& rng, std::span<const __float128> gamma, SelectionWork* work) {
  check_exponents(gamma);
  const std::size_t k = gamma.size();
  // The whole pass, whatever the scores: a uniformly random order
  // (Fisher-Yates) and every candidate's coin, the first heads in that order
  // being the result. Stopping at the first heads would give the same law,
  // but a time that depends on the scores (docs/boundary.md).
  std::vector<std::uint32_t> order(k);
  for (std::size_t r = 0; r < k; ++r) order[r] = static_cast<std::uint32_t>(r);
  std::size_t chosen = k;
  std::size_t positions = 0, exponentials = 0, coins = 0, visited = 0;
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t j = i + rng.below(k - i);
    ++positions;
    std::swap(order[i], order[j]);
    const std::size_t r = order[i];
    // The coin floor(p_r 2^128) / 2^128 (or 2^-128 less); heads for sure
    // when p_r is 1 (gamma 0: its largest fraction, 1 - 2^-128, is not 1).
    const DD p = exp_minus_dd(gamma[r]);
    ++exponentials;
    const bool one = (p.hi > 1) | ((p.hi == 1) & (p.lo >= 0));
    const u128 f = fixed_point(p, 128);
    const bool heads = bernoulli(rng, Fraction128{static_cast<std::uint64_t>(f >> 64), static_cast<std::uint64_t>(f)}) | one;
    ++coins;
    chosen = (heads & (chosen == k)) ? r : chosen;
    ++visited;
  }
  if (work) {
    work->positions += positions;
    work->exponentials += exponentials;
    work->coins += coins;
    work->visited += visited;
  }
  // A best candidate (gamma 0) is in the order and always comes up heads.
  if (chosen == k) throw std::logic_error("permute-and-flip: no candidate accepted");
  return chosen;
}

std::vector<double> selection_probabilities(std::span<const __float128> gamma, SelectionMethod method) {
  check_exponents(gamma);
  if (gamma.size() > kMaxProbabilityCandidates)
    throw std::invalid_argument("the number of candidates must be at most " +
                                std::to_string(kMaxProbabilityCandidates) + ", but is " + std::to_string(gamma.size()));
  const std::size_t k = gamma.size();
  std::vector<long double> p(k);
  for (std::size_t r = 0; r < k; ++r) p[r] = static_cast<long double>(expq(-gamma[r]));
  std::vector<double> out(k);
  if (method == SelectionMethod::Exponential) {
    long double total = 0;
    for (const long double x : p) total += x;  // >= 1: a best candidate has p = 1
    for (std::size_t r = 0; r < k; ++r) out[r] = static_cast<double>(p[r] / total);
    return out;
  }
  // Gauss-Legendre on [0, 1]: n nodes integrate polynomials of degree
  // 2n - 1 exactly, and the integrand has degree k - 1.
  const unsigned n = static_cast<unsigned>(k / 2 + 1);
  std::vector<long double> t, w;
  for (const double x : boost::math::legendre_p_zeros<double>(static_cast<int>(n))) {
    const double d = boost::math::legendre_p_prime<double>(static_cast<int>(n), x);
    const long double weight = 1.0L / ((1.0L - static_cast<long double>(x) * x) * d * d);  // 2/(..) on [-1, 1], halved
    t.push_back((1.0L + x) / 2);
    w.push_back(weight);
    if (x != 0) {
      t.push_back((1.0L - x) / 2);
      w.push_back(weight);
    }
  }
  // Candidates with equal coins have equal probabilities: work on the
  // distinct coins and their multiplicities (scores often tie, e.g. counts).
  std::map<long double, std::size_t> coins;
  for (const long double x : p) ++coins[x];
  // L_i = log prod_j (1 - p_j t_i) (t < 1, so no factor is 0), then
  // P[r] = p_r sum_i w_i exp(L_i - log(1 - p_r t_i)).
  std::vector<long double> L(t.size(), 0.0L);
  for (std::size_t i = 0; i < t.size(); ++i)
    for (const auto& [x, m] : coins) L[i] += static_cast<long double>(m) * std::log1p(-x * t[i]);
  std::map<long double, double> law;
  for (const auto& c : coins) {
    long double s = 0;
    for (std::size_t i = 0; i < t.size(); ++i) s += w[i] * std::exp(L[i] - std::log1p(-c.first * t[i]));
    law[c.first] = static_cast<double>(c.first * s);
  }
  for (std::size_t r = 0; r < k; ++r) out[r] = law[p[r]];
  return out;
}

std::size_t sample_selection(Rng& rng, SelectionMethod method, std::span<const __float128> gamma,
                             SelectionWork* work) {
  return method == SelectionMethod::Exponential ? sample_exponential(rng, gamma, work)
                                                : sample_permute_and_flip(rng, gamma, work);
}

}  // namespace optdp
