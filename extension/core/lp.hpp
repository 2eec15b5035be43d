// optdp core: the linear programs behind the papers' optimality theorems,
// solved with COIN-OR Clp (MATH.md, "Users and their optimal remap" and
// "Minimax users"). They are the reference the closed-form answers are
// checked against: the Bayesian user's optimal mechanism (Ghosh,
// Roughgarden, Sundararajan), and the minimax user's optimal randomized
// remap of G(n, alpha) and optimal mechanism (Gupte, Sundararajan).
//
// Every LP here has O(n^2) variables and constraints, so n is capped at
// kMaxLpN (40): at that size each solves in a few tens of milliseconds.
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
LpResult minimax_remap_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi);

// min over all alpha-DP oblivious mechanisms x with range {0..n} of
// max_{i in S} sum_r l(i, r) x[i][r]; matrix = x.
LpResult minimax_mechanism_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi);

}  // namespace optdp
