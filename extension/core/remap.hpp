// optdp core: a Bayesian user's optimal remap of the geometric mechanism's
// output (Ghosh, Roughgarden, Sundararajan), and expected losses.
//
// For an observed output o of G(n, alpha), the remap chooses
// r*(o) = argmin_r sum_i p_i G[i][o] l(i, r) (ties: the smallest r). The
// posterior weights p_i alpha^|i - o| are computed in the log domain, so no
// prior is lost to underflow at large n. Cost: O(n^2) in all for absolute
// (weighted median), squared (rounded posterior mean, checked on both
// sides) and binary (posterior mode) losses; O(n^3) for power and matrix
// losses (hence their lower size cap, kMaxGeneralLossN).
#pragma once

#include <cstdint>
#include <vector>

#include "core/loss.hpp"
#include "core/mechanism.hpp"

namespace optdp {

// answer[o] for o = 0..n.
std::vector<std::int64_t> optimal_remap(const GeometricMechanism& g, const Loss& loss, const std::vector<double>& prior);

// The mechanism remap o G: (remap o G)[i][r] = sum over o with answer[o] = r of G[i][o].
Matrix remapped_mechanism(const GeometricMechanism& g, const std::vector<std::int64_t>& answer);
// Row i of remap o G into row (n+1 entries), without building the matrix:
// O(n) memory for streaming its (n+1)^2 entries.
void remapped_row(const GeometricMechanism& g, const std::vector<std::int64_t>& answer, std::int64_t i,
                  std::vector<double>& row);

// sum_i p_i sum_r M[i][r] l(i, r).
double expected_loss(const Matrix& m, const Loss& loss, const std::vector<double>& prior);

// The loss of remap o G without building the matrix: O(n^2).
double remap_loss(const GeometricMechanism& g, const std::vector<std::int64_t>& answer, const Loss& loss,
                  const std::vector<double>& prior);

}  // namespace optdp
