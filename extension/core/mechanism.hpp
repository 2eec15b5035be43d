// optdp core: the range-restricted geometric mechanism G(n, alpha), its
// tridiagonal inverse, and derivation matrices (Ghosh et al.; Gupte and
// Sundararajan). docs/math.md has the formulas.
//
// G[i][z] = c_z alpha^|z - i| with c_z = 1/(1 + alpha) for z in {0, n} and
// (1 - alpha)/(1 + alpha) inside; so G = A C with A[i][z] = alpha^|i - z|
// (whose inverse is tridiagonal) and C = diag(c). Every entry is O(1) to
// compute from a table of powers, so matrices are streamed, never stored.
#pragma once

#include <cstdint>
#include <vector>

namespace optdp {

using Matrix = std::vector<std::vector<double>>;

// Powers alpha^d for d = 0..n, and the entries of G(n, alpha).
class GeometricMechanism {
 public:
  GeometricMechanism(std::int64_t n, double alpha);  // validates n (<= kMaxMatrixN) and alpha
  std::int64_t n() const { return n_; }
  double alpha() const { return alpha_; }
  double power(std::int64_t d) const { return pow_[static_cast<std::size_t>(d)]; }  // alpha^d
  double column_factor(std::int64_t z) const { return n_ == 0 ? 1.0 : (z == 0 || z == n_ ? edge_ : inner_); }
  // P[output z | true i].
  double operator()(std::int64_t i, std::int64_t z) const {
    return column_factor(z) * power(i > z ? i - z : z - i);
  }
  Matrix dense() const;

 private:
  std::int64_t n_;
  double alpha_, edge_, inner_;
  std::vector<double> pow_;
};

// T(alpha, beta) = G(n, alpha)^-1 G(n, beta), entry (o, z), computed in O(1)
// from the tridiagonal inverse. Requires alpha <= beta for T to be stochastic.
class DerivationMatrix {
 public:
  DerivationMatrix(std::int64_t n, double alpha, double beta);  // throws unless alpha <= beta
  double operator()(std::int64_t o, std::int64_t z) const;
  std::int64_t n() const { return ga_.n(); }

 private:
  GeometricMechanism ga_, gb_;
};

// (G(n, alpha)^-1 M)[o][z] for a square M of size n+1.
double inverse_times(const GeometricMechanism& g, const Matrix& m, std::int64_t o, std::int64_t z);

// Whether M (row-stochastic, (n+1)x(n+1)) is derivable from G(n, alpha): every
// entry of G^-1 M is >= -max(tolerance, 2^-50 kappa), kappa = ((1+alpha)/(1-alpha))^2
// bounding how much G^-1 amplifies the rounding of M's entries. Throws std::invalid_argument for a matrix
// that is not square, has negative or non-finite entries, or rows that do
// not sum to 1 within 1e-9.
constexpr double kDerivableTolerance = 1e-9;
bool derivable(const Matrix& m, double alpha, double tolerance = kDerivableTolerance);

// (A B) for dense square matrices (tests, small n).
Matrix multiply(const Matrix& a, const Matrix& b);

}  // namespace optdp
