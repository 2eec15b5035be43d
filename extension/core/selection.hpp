// optdp core: private selection over a public set of candidates
// (docs/selection.md).
//
// Candidates r = 0..k-1 carry scores q_r computed from the data, with
// sensitivity s (the most any q_r moves between neighbouring databases).
// Both mechanisms are eps-DP and depend on the scores only through the
// exponents gamma_r = eps (q* - q_r) / (2 s) >= 0, q* = max_r q_r, i.e.
// p_r = exp(-gamma_r) in (0, 1], p = 1 for a best candidate:
//
// * exponential mechanism: P[r] = p_r / sum_j p_j;
// * permute-and-flip (McKenna and Sheldon 2020): visit the candidates in a
//   uniformly random order and return the first whose coin Bernoulli(p_r)
//   comes up heads; a best candidate always does, so one pass ends. Its
//   expected score is never below the exponential mechanism's.
//
// Sampling never inverts a floating-point uniform. The p_r are irrational, so
// each is computed in double-double arithmetic (exp_minus, relative error
// below 2^-101) and truncated to a fixed-point integer; the sampler is then
// exact for those integers, which gives a total-variation distance from the
// exact law of at most k 2^-99 for the exponential mechanism and k 2^-100
// for permute-and-flip (docs/selection.md derives both). Candidates are
// limited to kMaxCandidates = 2^24, so both stay below 2^-64.
//
// The exponents and both samplers do the same arithmetic whatever the scores
// (integer arithmetic instead of libgcc's binary128, which takes shortcuts;
// every p_r computed in the same operations; the whole list scanned; the
// whole permute-and-flip pass made): k exponentials, k weights or coins, one
// scan (docs/boundary.md: the time must not depend on the rows). What is
// random is the number of random draws, and only one part of its law
// depends on the scores:
//
// * the exponential mechanism draws its point in [0, W), W = sum of the
//   weights, by rejection: 128 random bits masked to the bit length b of
//   W - 1, accepted when below W, i.e. with probability W / 2^b in (1/2, 1].
//   The number of 16-byte draws is geometric with mean 2^b / W < 2, and
//   exceeds d with probability (1 - W / 2^b)^d < 2^-d. W lies in
//   [2^101, k 2^101] and depends on the scores, so this law does (mean 1
//   when one candidate carries all the weight, up to just below 2 otherwise):
//   at most one extra 16-byte draw on average, against k exponentials.
// * permute-and-flip's draws depend on k only in law: k - 1 positions
//   (Rng::below, whose rejection depends on k - i alone) and k coins, each
//   reading 1 to 16 bytes until a byte differs from the probability's, which
//   happens with probability 255/256 whatever the probability is.
//
// SelectionWork counts this work for tests (tests/core/selection_test.cpp
// checks it on the extreme score shapes; the wall-clock comparisons are in
// bench/, bench/README.md).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "core/rng.hpp"

namespace optdp {

enum class SelectionMethod { Exponential, PermuteAndFlip };

inline constexpr std::size_t kMaxCandidates = std::size_t{1} << 24;

// "exponential" or "permute_and_flip"; otherwise std::invalid_argument
// "method must be 'exponential' or 'permute_and_flip', but is 'x'".
SelectionMethod parse_selection_method(std::string_view text);
const char* selection_method_name(SelectionMethod m);

// gamma_r = eps (q* - q_r) / (2 sensitivity) as binary128, to within 2^-111
// relative (eps / (2 sensitivity) rounded once in binary128, the product with
// q* - q_r computed in integers and truncated, in the same operations
// whatever the scores); exactly +0 for every best candidate. Scores must
// be finite, eps and sensitivity finite and positive, 1 <= k <= kMaxCandidates
// (std::invalid_argument otherwise, without quoting a score).
std::vector<__float128> selection_exponents(std::span<const double> scores, double eps, double sensitivity);

// exp(-gamma) for gamma >= 0 as the samplers compute it: double-double
// arithmetic, relative error below 2^-101 (tested against libquadmath's
// expq, which is five times slower and faster for some arguments), exactly 1
// at gamma = 0. gamma above 100 is
// taken as 100: exp(-100) < 2^-144 truncates to 0 in every fixed-point form
// the samplers use, as exp(-gamma) does. The same operations for every gamma.
__float128 exp_minus(__float128 gamma);

// The work of the samplers, added to by each draw when a SelectionWork is
// passed (for tests): exp(-gamma) evaluations, candidates visited by the
// final scan or pass, random positions drawn (permute-and-flip's shuffle),
// coins tossed, and 128-bit draws of the exponential mechanism's point.
struct SelectionWork {
  std::size_t exponentials = 0, visited = 0, positions = 0, coins = 0, point_draws = 0;
};

// Index r with probability proportional to exp(-gamma_r). Every gamma_r must
// be >= 0 (not NaN) and some gamma_r == 0; 1 <= k <= kMaxCandidates.
std::size_t sample_exponential(Rng& rng, std::span<const __float128> gamma, SelectionWork* work = nullptr);
// Permute-and-flip with coins p_r = exp(-gamma_r); same requirements.
std::size_t sample_permute_and_flip(Rng& rng, std::span<const __float128> gamma, SelectionWork* work = nullptr);
std::size_t sample_selection(Rng& rng, SelectionMethod method, std::span<const __float128> gamma,
                             SelectionWork* work = nullptr);

// The law of each mechanism, P[r] for every candidate, to double precision:
// exponential p_r / sum_j p_j; permute-and-flip p_r * int_0^1 prod_{j != r}
// (1 - p_j t) dt, whose integrand is a polynomial of degree k - 1, so
// Gauss-Legendre quadrature with k/2 + 1 nodes is exact up to rounding
// (O(k^2) work). Same requirements on gamma; at most kMaxProbabilityCandidates.
inline constexpr std::size_t kMaxProbabilityCandidates = 10000;
std::vector<double> selection_probabilities(std::span<const __float128> gamma, SelectionMethod method);

}  // namespace optdp
