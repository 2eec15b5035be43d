#include "core/samplers.hpp"

#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/privacy.hpp"

namespace optdp {

void check_alpha(double alpha, const char* name) {
  if (!(alpha > 0.0 && alpha < 1.0))  // also rejects NaN
    throw std::invalid_argument(std::string(name) + " must be in (0, 1), but is " + format_double(alpha));
}

namespace {

// Compare fresh random bytes with the 8 bytes of w, most significant first.
// Returns -1 if the random bytes are smaller, +1 if larger, 0 if all equal.
inline int compare_bytes(Rng& rng, std::uint64_t w) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    const std::uint8_t t = static_cast<std::uint8_t>(w >> shift);
    const std::uint8_t b = rng.byte();
    if (b != t) return b < t ? -1 : 1;
  }
  return 0;
}

}  // namespace

Fraction128 to_fraction128(__float128 p) {
  Fraction128 f;
  if (p <= 0) return f;
  if (p >= 1) return {UINT64_MAX, UINT64_MAX};
  const __float128 s = ldexpq(p, 64);
  const __float128 hi = floorq(s);
  f.hi = static_cast<std::uint64_t>(hi);
  f.lo = static_cast<std::uint64_t>(floorq(ldexpq(s - hi, 64)));
  return f;
}

bool bernoulli(Rng& rng, const Fraction128& p) {
  // U < p with U uniform in [0, 1), compared one byte at a time.
  int c = compare_bytes(rng, p.hi);
  if (c != 0) return c < 0;
  c = compare_bytes(rng, p.lo);
  return c < 0;  // all 128 bits equal: U >= p
}

bool bernoulli(Rng& rng, double p) {
  if (!(p >= 0.0 && p <= 1.0))
    throw std::invalid_argument("probability must be in [0, 1], but is " + format_double(p));
  if (p == 1.0) return true;
  if (p == 0.0) return false;
  // p = m * 2^e with m an integer of at most 53 bits, e < 0.
  int exp2;
  const double frac = std::frexp(p, &exp2);       // p = frac * 2^exp2, frac in [0.5, 1)
  const auto m = static_cast<std::uint64_t>(std::ldexp(frac, 53));  // exact
  const int e = exp2 - 53;                          // p = m * 2^e
  // Binary digits of p after the point, in 64-bit chunks: chunk k holds
  // digits 64k+1 .. 64k+64, i.e. floor(p * 2^(64(k+1))) mod 2^64.
  // p's non-zero digits sit at positions -e-52 .. -e (counting from 1).
  const int last = -e;  // p has no non-zero digit after position -e
  for (int k = 0;; ++k) {
    const int shift = e + 64 * (k + 1);  // p * 2^(64(k+1)) = m * 2^shift
    std::uint64_t chunk = 0;
    if (shift >= 0 && shift < 64) chunk = m << shift;  // higher bits belong to earlier chunks
    else if (shift < 0 && shift > -64) chunk = m >> -shift;
    const int c = compare_bytes(rng, chunk);
    if (c != 0) return c < 0;
    if (64 * (k + 1) >= last) return false;  // no digits of p remain: U >= p
  }
}

namespace {

struct KeptDigits {
  DigitsOf kind = DigitsOf::geometric_alpha;
  std::uint64_t key = 0;
  int n = -1;  // -1: empty
  Fraction128 digit[Geometric::kMaxDigits];
};
constexpr int kKept = 8;
KeptDigits kept[kKept];
int kept_next = 0;
std::mutex kept_mutex;
static_assert(std::is_trivially_destructible_v<std::mutex> && std::is_trivially_destructible_v<KeptDigits>);

void geometric_digits(std::uint64_t alpha_bits, Fraction128* digit, int& n) {
  double alpha;
  std::memcpy(&alpha, &alpha_bits, sizeof alpha);
  const __float128 L = log_alpha(alpha);  // < 0
  n = 0;
  for (int j = 0; j < Geometric::kMaxDigits; ++j) {
    const __float128 a = expq(ldexpq(L, j));  // alpha^(2^j)
    const Fraction128 f = to_fraction128(a / (1 + a));
    if (f.is_zero()) break;
    digit[n++] = f;
  }
}

}  // namespace

void kept_digits(DigitsOf kind, std::uint64_t key, void (*make)(std::uint64_t, Fraction128*, int&),
                 Fraction128* digit, int& n) {
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    for (const KeptDigits& k : kept)
      if (k.n >= 0 && k.kind == kind && k.key == key) {
        n = k.n;
        std::memcpy(digit, k.digit, sizeof(Fraction128) * static_cast<std::size_t>(n));
        return;
      }
  }
  make(key, digit, n);
  std::lock_guard<std::mutex> lock(kept_mutex);
  KeptDigits& k = kept[kept_next];
  kept_next = (kept_next + 1) % kKept;
  k.kind = kind;
  k.key = key;
  k.n = n;
  std::memcpy(k.digit, digit, sizeof(Fraction128) * static_cast<std::size_t>(n));
}

Geometric::Geometric(double alpha) : alpha_(alpha) {
  check_alpha(alpha);
  std::uint64_t bits;
  std::memcpy(&bits, &alpha, sizeof bits);
  kept_digits(DigitsOf::geometric_alpha, bits, geometric_digits, digit_, ndigits_);
}

std::uint64_t Geometric::operator()(Rng& rng) const {
  std::uint64_t g = 0;
  for (int j = 0; j < ndigits_; ++j)
    if (bernoulli(rng, digit_[j])) g |= std::uint64_t{1} << j;
  return g;
}

std::int64_t TwoSidedGeometric::operator()(Rng& rng) const {
  for (;;) {
    const bool negative = rng.coin();
    const auto m = static_cast<std::int64_t>(geo_(rng));
    if (negative && m == 0) continue;
    return negative ? -m : m;
  }
}

}  // namespace optdp
