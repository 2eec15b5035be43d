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

// c0 = (1 - b)^2 a / ((1 - a)^2 b) for doubles a < b: 1 - a and 1 - b are rounded once each (each used
// twice), then 4 products and 1 division, so the result is c0 (1 + theta), |theta| <= gamma_9 (docs/levels.md).
__float128 c0(__float128 a, __float128 b) { return (1 - b) * (1 - b) * a / ((1 - a) * (1 - a) * b); }

unsigned __int128 units(const Fraction128& f) { return (static_cast<unsigned __int128>(f.hi) << 64) | f.lo; }

// One row o of T(a, b) = G(n, a)^-1 G(n, b), 0 < a < b < 1 doubles, n >= 1, in the closed forms of
// docs/levels.md: no subtraction of rounded values, so every entry has a small relative error.
// Roundings per entry (each a factor (1 + delta)^(+-1), |delta| <= 2^-113): at most m(n) = max(13, n + 9).
class TransitionRow {
 public:
  TransitionRow(std::int64_t n, __float128 a, __float128 b, std::int64_t o) : n_(n), o_(o) {
    // a, b and the products ab, b^2 are exact in binary128 (53-bit significands), so each of these
    // differences and sums is one rounding, whatever cancellation there is.
    const __float128 one_a = 1 - a, one_b = 1 - b, one_pb = 1 + b, b_a = b - a, one_ab = 1 - a * b;
    const bool interior = o > 0 && o < n;
    // R = 1 / ((1 - a)^(1 or 2) (1 + b)): 4 roundings on a boundary row, 6 on an interior one.
    const __float128 r = interior ? 1 / (one_a * one_a * one_pb) : 1 / (one_a * one_pb);
    // g = b - a (1 rounding) or (b - a)(1 - ab) (3).
    const __float128 g = interior ? b_a * one_ab : b_a;
    end_ = g * r;                 // columns 0 and n (z != o): 6 or 10 roundings
    inner_ = g * one_b * r;       // columns 1..n-1 (z != o): 8 or 12
    diag_ = interior ? ((1 - b * b) + b_a * b_a) * one_b * r  // (1 - b^2) + (b - a)^2 = 1 + a^2 - 2ab: 13
                     : one_ab * r;                            // 6
    // pw_[k] = b^k by repeated products (k - 1 roundings for k >= 1), for the distances k - 1 used below.
    // Once below 2^-300 the power and everything after it is 0: those entries are below
    // 2^-299 (b - a) / (1 - a)^2 <= 2^-246 < 2^-128, which the floor to 2^-128 would lose anyway.
    const std::int64_t far = std::max(o, n - o);
    const __float128 tiny = ldexpq(1, -300);
    pw_.reserve(static_cast<std::size_t>(far));
    pw_.push_back(1);
    for (std::int64_t k = 1; k < far; ++k) {
      const __float128 p = pw_.back() * b;
      if (p < tiny) break;
      pw_.push_back(p);
    }
  }

  // p~_z: at most 1 + max(0, k - 2) further roundings for distance k = |z - o| >= 1.
  __float128 entry(std::int64_t z) const {
    if (z == o_) return diag_;
    const auto k = static_cast<std::size_t>(z > o_ ? z - o_ : o_ - z);
    if (k - 1 >= pw_.size()) return 0;
    return pw_[k - 1] * (z == 0 || z == n_ ? end_ : inner_);
  }

 private:
  std::int64_t n_, o_;
  __float128 end_, inner_, diag_;
  std::vector<__float128> pw_;
};

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

Fraction128 keep_fraction(double a, double b) { return to_fraction128(c0(a, b)); }

LevelChain::LevelChain(std::vector<double> alphas) : alphas_(std::move(alphas)) {
  check_levels(alphas_);
  for (std::size_t i = 0; i < alphas_.size(); ++i) {
    noise_.emplace_back(alphas_[i]);
    if (i > 0) keep_.push_back(keep_fraction(alphas_[i - 1], alphas_[i]));
  }
}

std::vector<std::int64_t> LevelChain::release(std::int64_t count, Rng& rng) const {
  // The chain runs in 128 bits and each level is then clamped to INTEGER's
  // range: post-processing, and never an error (an error would depend on the
  // count). |noise| < 2^62 per level, so 16 levels cannot overflow 128 bits.
  std::vector<std::int64_t> r(alphas_.size());
  __int128 level = static_cast<__int128>(count) + noise_[0](rng);
  auto clamp = [](__int128 v) {
    return static_cast<std::int64_t>(std::clamp<__int128>(v, INT64_MIN, INT64_MAX));
  };
  r[0] = clamp(level);
  for (std::size_t i = 1; i < alphas_.size(); ++i) {
    if (!bernoulli(rng, keep_[i - 1])) level += noise_[i](rng);
    r[i] = clamp(level);
  }
  return r;
}

RangeLevelChain::RangeLevelChain(std::int64_t n, std::vector<double> alphas)
    : n_(n), alphas_(std::move(alphas)), first_((check_levels(alphas_), alphas_[0])) {
  check_n(n, kMaxMatrixN);
}

namespace {

void check_hook(int i, std::int64_t o, std::int64_t n, std::size_t levels) {
  if (i < 1 || static_cast<std::size_t>(i) >= levels)
    throw std::out_of_range("transition: level " + std::to_string(i) + " outside [1, " + std::to_string(levels - 1) +
                            "]");
  if (o < 0 || o > n)
    throw std::out_of_range("transition: observed " + std::to_string(o) + " outside [0, " + std::to_string(n) + "]");
}

}  // namespace

std::int64_t RangeLevelChain::transition(int i, std::int64_t o, Rng& rng) const {
  check_hook(i, o, n_, alphas_.size());
  const Fraction128 u{rng.u64(), rng.u64()};
  if (n_ == 0) return 0;
  const TransitionRow row(n_, alphas_[static_cast<std::size_t>(i - 1)], alphas_[static_cast<std::size_t>(i)], o);
  // The first z < n whose exact integer cumulative sum K_z = sum_{j <= z} floor(p~_j 2^128) exceeds U, else n.
  const unsigned __int128 target = units(u);
  unsigned __int128 cum = 0;
  for (std::int64_t z = 0; z < n_; ++z) {
    if (__builtin_add_overflow(cum, units(to_fraction128(row.entry(z))), &cum)) return z;  // K_z >= 2^128 > U
    if (target < cum) return z;
  }
  return n_;
}

std::vector<Fraction128> RangeLevelChain::transition_masses(int i, std::int64_t o) const {
  check_hook(i, o, n_, alphas_.size());
  std::vector<Fraction128> masses(static_cast<std::size_t>(n_ + 1));
  if (n_ == 0) {
    masses[0] = to_fraction128(1);
    return masses;
  }
  const TransitionRow row(n_, alphas_[static_cast<std::size_t>(i - 1)], alphas_[static_cast<std::size_t>(i)], o);
  for (std::int64_t z = 0; z <= n_; ++z) masses[static_cast<std::size_t>(z)] = to_fraction128(row.entry(z));
  return masses;
}

std::vector<double> RangeLevelChain::transition_row(int i, std::int64_t o) const {
  check_hook(i, o, n_, alphas_.size());
  std::vector<double> out(static_cast<std::size_t>(n_ + 1));
  if (n_ == 0) {
    out[0] = 1;
    return out;
  }
  const TransitionRow row(n_, alphas_[static_cast<std::size_t>(i - 1)], alphas_[static_cast<std::size_t>(i)], o);
  for (std::int64_t z = 0; z <= n_; ++z) out[static_cast<std::size_t>(z)] = static_cast<double>(row.entry(z));
  return out;
}

std::vector<std::int64_t> RangeLevelChain::release(std::int64_t value, Rng& rng) const {
  const std::int64_t v = std::clamp<std::int64_t>(value, 0, n_);
  std::vector<std::int64_t> r(alphas_.size());
  const std::int64_t z = first_(rng);
  r[0] = z < -v ? 0 : (z > n_ - v ? n_ : v + z);  // clamp(v + Z): exactly G(n, alpha_1)
  for (std::size_t i = 1; i < alphas_.size(); ++i) r[i] = transition(static_cast<int>(i), r[i - 1], rng);
  return r;
}

}  // namespace optdp
