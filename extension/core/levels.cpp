#include "core/levels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/json.hpp"
#include "core/loss.hpp"

namespace optdp {

namespace {

Fraction128 fraction(__float128 p) {
  Fraction128 f;
  if (p <= 0) return f;
  if (p >= 1) return {UINT64_MAX, UINT64_MAX};
  const __float128 s = ldexpq(p, 64);
  const __float128 hi = floorq(s);
  f.hi = static_cast<std::uint64_t>(hi);
  f.lo = static_cast<std::uint64_t>(floorq(ldexpq(s - hi, 64)));
  return f;
}

bool less(const Fraction128& a, const Fraction128& b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; }

__float128 c0(__float128 a, __float128 b) { return (1 - b) * (1 - b) * a / ((1 - a) * (1 - a) * b); }

}  // namespace

void check_levels(const std::vector<double>& alphas) {
  if (alphas.empty() || alphas.size() > static_cast<std::size_t>(kMaxLevels))
    throw std::invalid_argument("alphas must hold 1 to " + std::to_string(kMaxLevels) + " levels, but it has " +
                                std::to_string(alphas.size()));
  for (std::size_t i = 0; i < alphas.size(); ++i) {
    const std::string name = "alpha_" + std::to_string(i + 1);
    check_alpha(alphas[i], name.c_str());
    if (i > 0 && !(alphas[i] > alphas[i - 1]))
      throw std::invalid_argument("alphas must be strictly increasing (the least private level first), but " + name +
                                  " is " + format_double(alphas[i]) + " after " + format_double(alphas[i - 1]));
  }
}

std::vector<double> parse_levels(std::string_view json) {
  std::vector<double> a;
  try {
    a = parse_json_array(json, "alphas", kMaxLevels + 1);
  } catch (const JsonTooLong&) {
    throw std::invalid_argument("alphas must hold 1 to " + std::to_string(kMaxLevels) +
                                " levels, but it has more than " + std::to_string(kMaxLevels));
  }
  check_levels(a);  // 0 or 17 levels: "alphas must hold 1 to 16 levels, but it has 17"
  return a;
}

double keep_probability(double a, double b) { return static_cast<double>(c0(a, b)); }

LevelChain::LevelChain(std::vector<double> alphas) : alphas_(std::move(alphas)) {
  check_levels(alphas_);
  for (std::size_t i = 0; i < alphas_.size(); ++i) {
    noise_.emplace_back(alphas_[i]);
    if (i > 0) keep_.push_back(fraction(c0(alphas_[i - 1], alphas_[i])));
  }
}

std::vector<std::int64_t> LevelChain::release(std::int64_t count, Rng& rng) const {
  std::vector<std::int64_t> r(alphas_.size());
  auto add = [](std::int64_t a, std::int64_t b) {
    std::int64_t s;
    if (__builtin_add_overflow(a, b, &s)) throw std::overflow_error("count plus noise overflows INTEGER");
    return s;
  };
  r[0] = add(count, noise_[0](rng));
  for (std::size_t i = 1; i < alphas_.size(); ++i)
    r[i] = bernoulli(rng, keep_[i - 1]) ? r[i - 1] : add(r[i - 1], noise_[i](rng));
  return r;
}

RangeLevelChain::RangeLevelChain(std::int64_t n, std::vector<double> alphas)
    : n_(n), alphas_(std::move(alphas)), first_((check_levels(alphas_), alphas_[0])) {
  check_n(n, kMaxMatrixN);
}

std::vector<double> RangeLevelChain::transition_row(int i, std::int64_t o) const {
  // T = C_a^-1 A_a^-1 A_b C_b (core/mechanism.hpp), one row, in binary128.
  const __float128 a = alphas_[static_cast<std::size_t>(i - 1)], b = alphas_[static_cast<std::size_t>(i)];
  const std::int64_t n = n_;
  std::vector<double> row(static_cast<std::size_t>(n + 1));
  if (n == 0) {
    row[0] = 1;
    return row;
  }
  auto col_factor = [n](__float128 x, std::int64_t z) { return (z == 0 || z == n) ? 1 / (1 + x) : (1 - x) / (1 + x); };
  // b^d for d = 0..n: repeated products in binary128 (relative error below n 2^-113).
  std::vector<__float128> pw(static_cast<std::size_t>(n + 1));
  pw[0] = 1;
  for (std::int64_t d = 1; d <= n; ++d) pw[static_cast<std::size_t>(d)] = pw[static_cast<std::size_t>(d - 1)] * b;
  auto A = [&pw](__float128, std::int64_t i1, std::int64_t i2) { return pw[static_cast<std::size_t>(i1 > i2 ? i1 - i2 : i2 - i1)]; };
  const __float128 d = (o == 0 || o == n) ? 1 : 1 + a * a;
  for (std::int64_t z = 0; z <= n; ++z) {
    __float128 s = d * A(b, o, z);
    if (o > 0) s -= a * A(b, o - 1, z);
    if (o < n) s -= a * A(b, o + 1, z);
    const __float128 t = s / (1 - a * a) / col_factor(a, o) * col_factor(b, z);
    row[static_cast<std::size_t>(z)] = t < 0 ? 0.0 : static_cast<double>(t);  // only rounding can make it negative
  }
  return row;
}

std::vector<std::int64_t> RangeLevelChain::release(std::int64_t value, Rng& rng) const {
  const std::int64_t v = std::clamp<std::int64_t>(value, 0, n_);
  std::vector<std::int64_t> r(alphas_.size());
  const std::int64_t z = first_(rng);
  r[0] = z < -v ? 0 : (z > n_ - v ? n_ : v + z);  // clamp(v + Z): exactly G(n, alpha_1)
  for (std::size_t i = 1; i < alphas_.size(); ++i) {
    const auto row = transition_row(static_cast<int>(i), r[i - 1]);
    // Cumulative sums as 128-bit fractions of the row's total; a 128-bit uniform picks the entry.
    __float128 total = 0;
    for (double p : row) total += p;
    const Fraction128 u{rng.u64(), rng.u64()};
    __float128 cum = 0;
    std::int64_t pick = n_;
    for (std::int64_t j = 0; j <= n_; ++j) {
      cum += row[static_cast<std::size_t>(j)];
      if (less(u, fraction(cum / total))) {
        pick = j;
        break;
      }
    }
    r[i] = pick;
  }
  return r;
}

}  // namespace optdp
