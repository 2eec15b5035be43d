#include "core/selection.hpp"

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
  bool best = false;
  for (const __float128 g : gamma) {
    if (!(g >= 0)) throw std::invalid_argument("selection exponents must be >= 0");
    best = best || g == 0;
  }
  if (!best) throw std::invalid_argument("selection exponents must include a 0 (a best candidate)");
}

// floor(exp(-g) 2^bits) for g >= 0, bits <= 127 (g == 0 gives 2^bits exactly).
u128 fixed_point_weight(__float128 g, int bits) {
  if (g == 0) return u128{1} << bits;
  const __float128 s = ldexpq(expq(-g), bits);  // < 2^bits
  const __float128 hi = floorq(ldexpq(s, -64));
  const __float128 lo = floorq(s - ldexpq(hi, 64));
  return (static_cast<u128>(static_cast<std::uint64_t>(hi)) << 64) | static_cast<std::uint64_t>(lo);
}

// A uniform integer in [0, n), n >= 1, exactly: 128 random bits masked to
// n - 1's bit length, rejected while >= n (accepted with probability > 1/2).
u128 uniform_below(Rng& rng, u128 n) {
  if (n <= 1) return 0;
  const u128 top = n - 1;
  int bits = 0;
  for (u128 t = top; t; t >>= 1) ++bits;
  const u128 mask = bits == 128 ? ~u128{0} : ((u128{1} << bits) - 1);
  for (;;) {
    const u128 x = ((static_cast<u128>(rng.u64()) << 64) | rng.u64()) & mask;
    if (x < n) return x;
  }
}

}  // namespace

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
    best = q > best ? q : best;
  }
  // eps / (2 s) in binary128: both doubles, so the quotient is one rounding away.
  const __float128 scale = static_cast<__float128>(eps) / (2 * static_cast<__float128>(sensitivity));
  std::vector<__float128> gamma(scores.size());
  for (std::size_t r = 0; r < scores.size(); ++r) {
    // q* - q_r: exact when the exponents are within 113 - 53 bits, otherwise
    // rounded once; 0 exactly for every best candidate.
    const __float128 d = static_cast<__float128>(best) - static_cast<__float128>(scores[r]);
    gamma[r] = d == 0 ? 0 : scale * d;
  }
  return gamma;
}

std::size_t sample_exponential(Rng& rng, std::span<const __float128> gamma) {
  check_exponents(gamma);
  const std::size_t k = gamma.size();
  // exp(-72) < 2^-103: such a candidate's weight floor(p 2^100) is 0, and
  // its coin below is tails, without computing p (the one costly step, about
  // a microsecond in binary128).
  constexpr __float128 kNegligible = 72;
  std::size_t live = 0;
  double estimate = 0;  // sum_r p_r in double: only to choose the cheaper way
  for (const __float128 g : gamma)
    if (g < kNegligible) ++live, estimate += std::exp(-static_cast<double>(g));
  // Two exact ways to draw r with probability ~ p_r (the same p_r, truncated
  // the same way up to 2^-100; docs/selection.md). Rejection: propose r
  // uniformly and accept with probability p_r; about k / sum p proposals,
  // each computing one p_r, so it wins when many candidates are near the
  // best (sum p large). Otherwise the weights of the live candidates.
  if (static_cast<double>(k) / estimate < static_cast<double>(live) / 4) {
    for (;;) {
      const std::size_t r = rng.below(k);
      if (gamma[r] == 0) return r;
      if (gamma[r] < kNegligible && bernoulli(rng, to_fraction128(expq(-gamma[r])))) return r;
    }
  }
  // Weights floor(p_r 2^100): a best candidate weighs 2^100, the total is
  // below 2^124 (k <= 2^24), and the draw is exact for these weights.
  constexpr int kBits = 100;
  std::vector<u128> w(k, 0);
  u128 total = 0;
  for (std::size_t r = 0; r < k; ++r)
    if (gamma[r] < kNegligible) total += w[r] = fixed_point_weight(gamma[r], kBits);
  u128 u = uniform_below(rng, total);
  for (std::size_t r = 0; r < w.size(); ++r) {
    if (u < w[r]) return r;
    u -= w[r];
  }
  return w.size() - 1;  // unreachable: u < total
}

std::size_t sample_permute_and_flip(Rng& rng, std::span<const __float128> gamma) {
  check_exponents(gamma);
  // A uniformly random order, drawn lazily (Fisher-Yates): the pass usually
  // ends after a few candidates.
  std::vector<std::uint32_t> order(gamma.size());
  for (std::size_t r = 0; r < order.size(); ++r) order[r] = static_cast<std::uint32_t>(r);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t j = i + rng.below(order.size() - i);
    std::swap(order[i], order[j]);
    const std::size_t r = order[i];
    if (gamma[r] == 0) return r;  // p_r = 1: heads
    if (bernoulli(rng, to_fraction128(expq(-gamma[r])))) return r;
  }
  // Unreachable: a best candidate (gamma 0) is in the order and always accepts.
  throw std::logic_error("permute-and-flip: no candidate accepted");
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

std::size_t sample_selection(Rng& rng, SelectionMethod method, std::span<const __float128> gamma) {
  return method == SelectionMethod::Exponential ? sample_exponential(rng, gamma) : sample_permute_and_flip(rng, gamma);
}

}  // namespace optdp
