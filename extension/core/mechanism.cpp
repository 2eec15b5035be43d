#include "core/mechanism.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "core/loss.hpp"
#include "core/samplers.hpp"

namespace optdp {

GeometricMechanism::GeometricMechanism(std::int64_t n, double alpha) : n_(n), alpha_(alpha) {
  check_n(n, kMaxMatrixN);
  check_alpha(alpha);
  edge_ = 1 / (1 + alpha);
  inner_ = (1 - alpha) / (1 + alpha);
  pow_.resize(static_cast<std::size_t>(n + 1));
  pow_[0] = 1;
  // Repeated multiplication drifts by n ulps at most; pow() per entry is exact to 1 ulp.
  for (std::int64_t d = 1; d <= n; ++d) pow_[static_cast<std::size_t>(d)] = std::pow(alpha, static_cast<double>(d));
}

Matrix GeometricMechanism::dense() const {
  const auto N = static_cast<std::size_t>(n_ + 1);
  Matrix m(N, std::vector<double>(N));
  for (std::int64_t i = 0; i <= n_; ++i)
    for (std::int64_t z = 0; z <= n_; ++z) m[static_cast<std::size_t>(i)][static_cast<std::size_t>(z)] = (*this)(i, z);
  return m;
}

namespace {

// (A^-1 v)[o] where A[i][z] = alpha^|i - z| and v[k] = col(k): A^-1 is
// tridiagonal, 1/(1 - alpha^2) * (d_o on the diagonal, -alpha beside it),
// d_0 = d_n = 1 and d_k = 1 + alpha^2 inside.
template <class Col>
double inverse_a_times(const GeometricMechanism& g, std::int64_t o, Col col) {
  const std::int64_t n = g.n();
  if (n == 0) return col(0);
  const double a = g.alpha();
  const double d = (o == 0 || o == n) ? 1.0 : 1.0 + a * a;
  double s = d * col(o);
  if (o > 0) s -= a * col(o - 1);
  if (o < n) s -= a * col(o + 1);
  return s / (1 - a * a);
}

}  // namespace

DerivationMatrix::DerivationMatrix(std::int64_t n, double alpha, double beta) : ga_(n, alpha), gb_(n, beta) {
  if (!(alpha <= beta))
    throw std::invalid_argument("alpha must be at most beta (only more privacy can be added), but alpha is " +
                                format_double(alpha) + " and beta is " + format_double(beta));
}

double DerivationMatrix::operator()(std::int64_t o, std::int64_t z) const {
  // T = C_a^-1 A_a^-1 A_b C_b.
  const double v = inverse_a_times(ga_, o, [&](std::int64_t k) { return gb_(k, z); });
  return v / ga_.column_factor(o);
}

double inverse_times(const GeometricMechanism& g, const Matrix& m, std::int64_t o, std::int64_t z) {
  const double v =
      inverse_a_times(g, o, [&](std::int64_t k) { return m[static_cast<std::size_t>(k)][static_cast<std::size_t>(z)]; });
  return v / g.column_factor(o);
}

bool derivable(const Matrix& m, double alpha, double tolerance) {
  const auto N = m.size();
  if (N == 0) throw std::invalid_argument("matrix must have at least one row");
  const auto n = static_cast<std::int64_t>(N) - 1;
  for (std::size_t i = 0; i < N; ++i) {
    if (m[i].size() != N)
      throw std::invalid_argument("matrix must be square, but row " + std::to_string(i) + " has " +
                                  std::to_string(m[i].size()) + " entries and there are " + std::to_string(N) +
                                  " rows");
    double sum = 0;
    for (std::size_t j = 0; j < N; ++j) {
      if (!(m[i][j] >= 0))
        throw std::invalid_argument("matrix entries must be non-negative, but matrix[" + std::to_string(i) + "][" +
                                    std::to_string(j) + "] is " + format_double(m[i][j]));
      sum += m[i][j];
    }
    if (std::fabs(sum - 1) > 1e-9)
      throw std::invalid_argument("matrix rows must sum to 1, but row " + std::to_string(i) + " sums to " +
                                  format_double(sum));
  }
  const GeometricMechanism g(n, alpha);
  // G^-1 amplifies the rounding of M's entries by up to kappa = ((1+a)/(1-a))^2,
  // so an exact post-processing of G given in doubles can show entries of
  // about -kappa 2^-53: the tolerance grows with kappa (8 times that).
  const double kappa = ((1 + alpha) / (1 - alpha)) * ((1 + alpha) / (1 - alpha));
  const double tol = std::max(tolerance, 0x1p-50 * kappa);
  for (std::int64_t o = 0; o <= n; ++o)
    for (std::int64_t z = 0; z <= n; ++z)
      if (inverse_times(g, m, o, z) < -tol) return false;
  return true;
}

Matrix multiply(const Matrix& a, const Matrix& b) {
  const std::size_t n = a.size(), k = b.size(), m = b.empty() ? 0 : b[0].size();
  Matrix c(n, std::vector<double>(m, 0.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t t = 0; t < k; ++t)
      for (std::size_t j = 0; j < m; ++j) c[i][j] += a[i][t] * b[t][j];
  return c;
}

}  // namespace optdp
