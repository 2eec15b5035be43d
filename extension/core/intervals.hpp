// optdp core: exact noise intervals (docs/intervals.md).
//
// For a noise law N that optdp adds, the half-width h of the smallest
// symmetric interval on the output lattice with P(|N| <= h) >= confidence,
// and the inverse: the privacy parameter for which a wanted half-width is
// reached at a given confidence. The laws are the samplers' own:
//   * the integer staircase with b, D, r (core/staircase.hpp): P(i) = a b^s(|i|),
//     s(m) = floor(m / D) + [m mod D >= r], a = (1 - b) / (2 (r + (D - r) b) - (1 - b));
//   * the two-sided geometric with alpha is the staircase with D = r = 1, b = alpha;
//     the counts, private_count_levels' levels (each level's marginal law)
//     and laplace_sum's noise (in grid steps) are two-sided geometrics.
// The tail T(h) = P(|N| > h) has a closed form (docs/intervals.md):
//   h = K D + U, 0 <= U < D:  T(h) = 2 a b^K (c / (1 - b) - L(U)),
//   c = r + (D - r) b,  L(U) = min(U + 1, r) + max(0, U + 1 - r) b,
// decreasing in h; h is found by bisection on the integers with T evaluated in
// binary128 (relative error below 2^-100), so h is exact unless 1 - confidence
// lies within that relative distance of a tail value.
#pragma once

#include <cstdint>
#include <optional>

namespace optdp {

// P(|N| > h) for the integer staircase (b, D, r), in binary128.
__float128 staircase_tail(double b, std::int64_t D, std::int64_t r, std::int64_t h);
// The smallest h >= 0 with P(|N| <= h) >= confidence; confidence in (0, 1)
// (std::invalid_argument "confidence must be in (0, 1), but is X").
std::int64_t staircase_half_width(double b, std::int64_t D, std::int64_t r, double confidence);
// The same for the two-sided geometric with alpha in (0, 1).
std::int64_t geometric_half_width(double alpha, double confidence);
// The largest alpha (a double in (0, 1)) whose two-sided geometric has
// geometric_half_width(alpha, confidence) <= h; h >= 0.
double geometric_alpha_for(std::int64_t h, double confidence);

// The discrete Gaussian N_Z(0, sigma2): the smallest h with P(|Z| <= h) >=
// confidence, by summing its pmf term by term in binary128 (normalised over
// |z| <= 40 sigma + 10) for sigma2 <= 2^34; above, from the tail bound
// erfc(h / (sigma sqrt 2)), which covers and is at most one step wider than
// the smallest (intervals.cpp). std::nullopt for a sigma2 that is not finite > 0.
std::optional<std::int64_t> discrete_gaussian_half_width(double sigma2, double confidence);

// The exponential mechanism's rank error at a confidence (private_quantile,
// docs/quantiles.md, "Rank error"): with probability >= confidence the
// released candidate's |#{x < c} - q n| exceeds the best candidate's by at
// most max(0, (2 / eps) ln((candidates - 1) confidence / (1 - confidence))),
// rounded up.
double quantile_rank_error(double eps, std::int64_t candidates, double confidence);

// Throws unless confidence is in (0, 1).
void check_confidence(double confidence);

}  // namespace optdp
