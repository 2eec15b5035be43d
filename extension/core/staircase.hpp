// optdp core: the staircase mechanism (Geng and Viswanath) and its analytics,
// the Laplace baseline, and the grid that makes real-valued sums safe.
//
// Continuous staircase, sensitivity delta, b = e^-eps, shape gamma in [0, 1]:
// density a(gamma) b^k on |x| in [k delta, (k + gamma) delta) and a(gamma)
// b^(k+1) on [(k + gamma) delta, (k + 1) delta), a = (1 - b) / (2 delta
// (gamma + (1 - gamma) b)). optdp never samples it in floating point; it is
// here for the analytic helpers (staircase_gamma, noise_cost).
//
// Integer staircase, integer sensitivity D >= 1, r in {1..D}: P(i) = a b^k for
// |i| in [kD, kD + r), a b^(k+1) for |i| in [kD + r, (k + 1) D),
// a = (1 - b) / (2r + 2b(D - r) - (1 - b)). Sampled exactly up to a TV
// distance below 2^-90 (see IntegerStaircase).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "core/rng.hpp"
#include "core/samplers.hpp"

namespace optdp {

enum class Cost { L1, L2 };  // E|noise| (magnitude) or E[noise^2] (power)

// A cost argument: "l1", "l2", or "gamma=G" (G in [0, 1]) for a fixed shape.
struct CostSpec {
  Cost cost = Cost::L1;
  bool fixed_gamma = false;
  double gamma = 0;
  bool operator==(const CostSpec&) const = default;
};
// Throws std::invalid_argument "cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is 'x'".
CostSpec parse_cost_spec(std::string_view text, bool allow_gamma = true);
// Throws unless text is 'l1' or 'l2'.
Cost parse_cost(std::string_view text);

// The gamma that minimises the cost of the continuous staircase at eps.
double staircase_gamma(double eps, Cost cost);
// Exact expected cost of the continuous staircase (eps, delta, gamma).
double staircase_cost(double eps, double delta, double gamma, Cost cost);
// The same at the optimal gamma, for every finite eps > 0 (0 where it is
// below the least double, inf where above the largest).
double staircase_optimal_cost(double eps, double delta, Cost cost);
// Exact expected cost of Laplace noise with scale delta / eps.
double laplace_cost(double eps, double delta, Cost cost);

class IntegerStaircase {
 public:
  // b = e^-eps rounded up (never less private than eps), D >= 1, 1 <= r <= D.
  IntegerStaircase(double eps, std::int64_t D, std::int64_t r);
  // r minimising the expected cost for (eps, D) (exact discrete cost).
  static std::int64_t optimal_r(double eps, std::int64_t D, Cost cost);
  // r for a continuous shape gamma: round(gamma D) clamped into [1, D].
  static std::int64_t r_for_gamma(double gamma, std::int64_t D);

  std::int64_t operator()(Rng& rng) const;
  double pmf(std::int64_t i) const;
  // Exact expected cost E|i| or E[i^2] of this pmf.
  long double expected_cost(Cost cost) const { return expected_cost(b(), D_, r_, cost); }
  // The same for any (b, D, r), without building a sampler.
  static long double expected_cost(double b, std::int64_t D, std::int64_t r, Cost cost);

  double b() const { return geo_.alpha(); }
  std::int64_t D() const { return D_; }
  std::int64_t r() const { return r_; }

 private:
  Geometric geo_;  // P[k] = (1 - b) b^k: the step index
  std::int64_t D_, r_;
  Fraction128 p_low_;  // P[B = 0] = r / (r + (D - r) b): offset in the high step [0, r)
};

// The r of an integer staircase from a text spec: 'l1' or 'l2' (the r that
// minimises that cost) or 'r=K' with K an integer in [1, D]. Throws
// "cost must be 'l1', 'l2' or 'r=K' with K in [1, D], but is '...'".
std::int64_t staircase_r(std::string_view spec, double eps, std::int64_t D);

// llrint(v) for |v| < 2^63: round to the nearest integer, ties to even (the
// default rounding mode), as one cvtsd2si instruction on x86-64 (std::llrint
// is a library call there unless errno is given up for all of the maths).
inline std::int64_t round_to_int64(double v) {
#if defined(__x86_64__)
  return _mm_cvtsd_si64(_mm_set_sd(v));
#else
  return std::llrint(v);
#endif
}

// Adds q to the 128-bit integer (two's complement, little-endian) stored at
// p, which need not be aligned (the engines' states keep exact sums as
// bytes): __int128 addition of q sign-extended, through memcpy so that the
// compiler adds in place (x86-64: add and adc to memory, four instructions
// with the sign); inline, the sums' per-row step.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the states' 128-bit sums are little-endian");
inline void add_to_int128(unsigned char* p, std::int64_t q) {
  unsigned __int128 v;
  std::memcpy(&v, p, sizeof v);
  v += static_cast<unsigned __int128>(static_cast<__int128>(q));
  std::memcpy(p, &v, sizeof v);
}

// The grid for real-valued sums (docs/sums.md; docs/math.md, "Real outputs on a
// power-of-two grid"). Values are clamped into [lower, upper], rounded to the nearest
// multiple of g, and summed as integers; integer noise with sensitivity D()
// grid steps is added; the release is (sum + noise) * g.
//
// Neighbouring databases differ by adding or removing one row, or by
// replacing one. Adding or removing a row moves the integer sum by its grid
// value q in [lower_q, upper_q], so by up to max(|lower_q|, |upper_q|);
// replacing one moves it by up to upper_q - lower_q. The sensitivity covers
// both: D = max(upper_q - lower_q, |lower_q|, |upper_q|), the grid form of
// Delta = max(upper - lower, |lower|, |upper|), which is upper - lower exactly
// when lower <= 0 <= upper.
//
// Rule (parameters only): s = Delta * clamp(c(eps), 2^-20, 1), where c(eps) =
// e^(eps/2) / (e^eps - 1) is the staircase's optimal E|noise| / Delta;
// g = 2^(floor(log2 s) - 20). So the grid step is at most 2^-20 of the
// typical noise magnitude (for eps up to about 27.7; beyond, the noise itself
// is below 2^-20 Delta), D is between 2^20 and about 2^41 (|lower_q| and
// |upper_q| are then below 2^41 too), and g <= 1 whenever Delta < 2^21:
// integer data with integer bounds and Delta below 2^21 is summed exactly.
// Sums need eps >= 2^-30, so that the noise stays far inside 64-bit integers.
struct Grid {
  double g = 1;             // a power of two
  double inv_g = 1;         // 1 / g, exact: g is a power of two in [2^-1000, 2^1003]
  std::int64_t lower_q = 0; // round(lower / g)
  std::int64_t upper_q = 0; // round(upper / g)
  // The sensitivity of the integer sum in grid steps, for adding, removing or
  // replacing one row: max(upper_q - lower_q, |lower_q|, |upper_q|) (no
  // overflow: |lower_q|, |upper_q| < 2^62).
  std::int64_t D() const {
    const std::int64_t width = upper_q - lower_q;
    const std::int64_t lo = lower_q < 0 ? -lower_q : lower_q, hi = upper_q < 0 ? -upper_q : upper_q;
    return width > lo ? (width > hi ? width : hi) : (lo > hi ? lo : hi);
  }
  // round(clamp(x, lower, upper) / g), ties to even; NaN is not accepted by
  // callers. Inline: staircase_sum calls it on every row. x * inv_g is the
  // correctly rounded x / g (both are the exact x 2^-k, rounded once), and
  // |x / g| < 2^62 for x in [lower, upper], so the conversion cannot overflow.
  // The clamp is written as maxsd then minsd compute it (no branch).
  std::int64_t quantize(double x, double lower, double upper) const {
    x = x > lower ? x : lower;
    x = x < upper ? x : upper;
    return round_to_int64(x * inv_g);
  }
};
// Throws std::invalid_argument for eps < 2^-30, bounds that are not finite,
// lower >= upper, upper - lower not finite, or Delta below 2^-960 (so that
// the grid is a normal double). width_name names upper - lower in messages
// ("delta" for the form that takes the sensitivity alone, [0, delta]); where
// Delta is not upper - lower (0 outside [lower, upper]) the message names
// "max(upper - lower, |lower|, |upper|)".
Grid make_grid(double eps, double lower, double upper, const char* width_name = "upper - lower");
// The sums' eps: finite, > 0 and at least 2^-30 (so that the noise stays far
// inside 64-bit integers); otherwise std::invalid_argument naming eps.
void check_sum_eps(double eps);

}  // namespace optdp
