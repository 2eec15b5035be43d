// optdp core: the linear programs behind the papers' optimality theorems,
// solved with COIN-OR Clp (docs/math.md, "A user's optimal remap" and
// "Minimax users"). They are the reference the closed-form answers are
// checked against: the Bayesian user's optimal mechanism (Ghosh,
// Roughgarden, Sundararajan), and the minimax user's optimal randomized
// remap of G(n, alpha) and optimal mechanism (Gupte, Sundararajan).
//
// Every LP here has O(n^2) variables and constraints, so n is capped at
// kMaxLpN (40): at that size each solves in a few tens of milliseconds.
//
// Their domain is narrower than the closed-form functions': alpha >= 0.01
// (kMinLpAlpha) and loss entries within a factor 1e5 of each other
// (kMaxLpLossRange: largest / smallest positive entry over {0..n}^2; the
// squared loss at n = 40 has 1600). Beyond these, a constraint violation
// within Clp's tolerances, multiplied by the largest loss, is no longer
// small next to the optimum: we measured LP values off by 1e-3 (relative)
// at range 1e4 and alpha 1e-6, values of 0 and numerical failures at 1e-12,
// and Clp aborting on an assertion at 1e308. Inside the domain the LPs
// agree with the closed forms to 1e-6 (relative) at the edges and to 1e-9
// inside (tests/core/lp_test.cpp). Each attempt is capped at
// kMaxLpIterations simplex iterations (deterministic; no timing).
//
// Inputs are validated before any work (std::invalid_argument); a solve
// that Clp does not prove optimal throws std::runtime_error. Solutions are
// cleaned: entries in (-1e-12, 0) are set to 0.
#pragma once

#include <cstdint>
#include <vector>

#include "core/loss.hpp"
#include "core/mechanism.hpp"

namespace optdp {

inline constexpr double kMinLpAlpha = 0.01;
inline constexpr double kMaxLpLossRange = 1e5;
inline constexpr int kMaxLpIterations = 200000;

struct LpResult {
  Matrix matrix;  // (n+1) x (n+1), row-stochastic
  double value;   // the optimum
};

// min over alpha-DP oblivious mechanisms x with range {0..n} of
// sum_i p_i sum_r x[i][r] l(i, r), s.t. x[i][r] >= alpha x[i+1][r] and
// x[i+1][r] >= alpha x[i][r] (i in 0..n-1, every r), rows sum to 1, x >= 0.
// The prior need not be normalised (the value scales with it); its entries
// must be non-negative and finite. matrix = x.
LpResult optimal_mechanism_lp(std::int64_t n, double alpha, const Loss& loss, const std::vector<double>& prior);

// A minimax user with side information S = [lo, hi] (0 <= lo <= hi <= n):
// the optimal randomized remap T of G(n, alpha) (row-stochastic,
// (n+1)x(n+1)) minimising max_{i in S} sum_r' l(i, r') (G T)[i][r'].
// matrix = T, value = the optimum.
// The side information [lo, hi] of a minimax user: 0 <= lo <= hi <= n, or
// std::invalid_argument naming lo or hi.
void check_side_information(std::int64_t n, std::int64_t lo, std::int64_t hi);
LpResult minimax_remap_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi);

// min over all alpha-DP oblivious mechanisms x with range {0..n} of
// max_{i in S} sum_r l(i, r) x[i][r]; matrix = x.
LpResult minimax_mechanism_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi);

}  // namespace optdp
