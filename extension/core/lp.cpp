#include "core/lp.hpp"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "core/samplers.hpp"

namespace optdp {

namespace {

// A linear program min c.x s.t. row_lb <= A x <= row_ub, col_lb <= x <= col_ub,
// assembled from triplets and handed to Clp.
class Lp {
 public:
  int add_column(double cost, double lb = 0, double ub = COIN_DBL_MAX) {
    cost_.push_back(cost);
    col_lb_.push_back(lb);
    col_ub_.push_back(ub);
    return static_cast<int>(cost_.size()) - 1;
  }
  int add_row(double lb, double ub) {
    row_lb_.push_back(lb);
    row_ub_.push_back(ub);
    return static_cast<int>(row_lb_.size()) - 1;
  }
  void add(int row, int col, double v) {
    if (v == 0) return;
    rows_.push_back(row);
    cols_.push_back(col);
    vals_.push_back(v);
  }
  int columns() const { return static_cast<int>(cost_.size()); }

  // Solves; returns the column values and sets value. what names the LP in
  // messages.
  std::vector<double> solve(const char* what, double& value) const {
    const CoinPackedMatrix a(true, rows_.data(), cols_.data(), vals_.data(), static_cast<CoinBigIndex>(vals_.size()));
    // The triplet constructor sizes the matrix by the largest index seen;
    // make empty trailing rows and columns explicit.
    CoinPackedMatrix m(a);
    m.setDimensions(static_cast<int>(row_lb_.size()), columns());
    ClpSimplex model;
    model.setLogLevel(0);
    model.messageHandler()->setLogLevel(0);
    model.loadProblem(m, col_lb_.data(), col_ub_.data(), cost_.data(), row_lb_.data(), row_ub_.data());
    model.setOptimizationDirection(1);  // minimise
    const char* mode = getenv("LPMODE");
    int md = mode ? atoi(mode) : 0;
    const char* tol = getenv("LPTOL"); double tl = tol ? atof(tol) : 1e-10;
    model.setPrimalTolerance(tl); model.setDualTolerance(tl);
    if (md == 1) model.scaling(0);
    model.dual();
    int s1 = model.secondaryStatus();
    if (md == 2 && model.secondaryStatus() != 0) { model.scaling(0); model.dual(); }
    if (md == 3 && model.secondaryStatus() != 0) { model.scaling(0); model.primal(1); }
    if (getenv("LPV") && (s1 || model.secondaryStatus())) fprintf(stderr, "[%s sec %d -> %d st %d]\n", what, s1, model.secondaryStatus(), model.status());
    if (!model.isProvenOptimal())
      throw std::runtime_error(std::string(what) + ": the linear program was not solved to optimality (Clp status " +
                               status_text(model.status()) + ", secondary status " +
                               std::to_string(model.secondaryStatus()) + ")");
    value = model.objectiveValue();
    const double* x = model.primalColumnSolution();
    return std::vector<double>(x, x + columns());
  }

 private:
  static std::string status_text(int s) {
    switch (s) {
      case 0: return "0, optimal";
      case 1: return "1, primal infeasible";
      case 2: return "2, dual infeasible";
      case 3: return "3, stopped on iterations or time";
      case 4: return "4, stopped due to numerical errors";
      case 5: return "5, stopped by event handler";
      default: return std::to_string(s) + ", unknown";
    }
  }

  std::vector<double> cost_, col_lb_, col_ub_, row_lb_, row_ub_, vals_;
  std::vector<int> rows_, cols_;
};

void check_loss(const Loss& loss, std::int64_t n) {
  if (loss.n() != n)
    throw std::invalid_argument("loss must be for results in {0..n} with n = " + std::to_string(n) +
                                ", but is for n = " + std::to_string(loss.n()));
}

void check_prior(const std::vector<double>& prior, std::int64_t n) {
  if (static_cast<std::int64_t>(prior.size()) != n + 1)
    throw std::invalid_argument("prior must have n+1 = " + std::to_string(n + 1) + " entries, but has " +
                                std::to_string(prior.size()));
  for (std::size_t i = 0; i < prior.size(); ++i)
    if (!(prior[i] >= 0) || !std::isfinite(prior[i]))
      throw std::invalid_argument("prior must be non-negative and finite, but prior[" + std::to_string(i) + "] is " +
                                  format_double(prior[i]));
}

void check_side_information(std::int64_t n, std::int64_t lo, std::int64_t hi) {
  if (lo < 0 || lo > n)
    throw std::invalid_argument("lo must be an integer in [0, n] = [0, " + std::to_string(n) + "], but is " +
                                std::to_string(lo));
  if (hi < lo || hi > n)
    throw std::invalid_argument("hi must be at least lo and at most n, in [" + std::to_string(lo) + ", " +
                                std::to_string(n) + "], but is " + std::to_string(hi));
}

// Common validation of n and alpha, in the order the parameters appear.
void check_n_alpha(std::int64_t n, double alpha) {
  check_n(n, kMaxLpN);
  check_alpha(alpha);
}

// Adds the (n+1)^2 columns x[i][r] (column i*(n+1) + r, costs from cost(i, r)),
// the alpha-DP constraints between neighbouring rows and the row sums.
template <class Cost>
void add_mechanism(Lp& lp, std::int64_t n, double alpha, Cost cost) {
  const int N = static_cast<int>(n + 1);
  for (int i = 0; i < N; ++i)
    for (int r = 0; r < N; ++r) lp.add_column(cost(i, r));
  auto x = [N](int i, int r) { return i * N + r; };
  for (int i = 0; i + 1 < N; ++i)
    for (int r = 0; r < N; ++r) {
      const int up = lp.add_row(0, COIN_DBL_MAX);  // x[i][r] - alpha x[i+1][r] >= 0
      lp.add(up, x(i, r), 1);
      lp.add(up, x(i + 1, r), -alpha);
      const int down = lp.add_row(0, COIN_DBL_MAX);  // x[i+1][r] - alpha x[i][r] >= 0
      lp.add(down, x(i + 1, r), 1);
      lp.add(down, x(i, r), -alpha);
    }
  for (int i = 0; i < N; ++i) {
    const int row = lp.add_row(1, 1);
    for (int r = 0; r < N; ++r) lp.add(row, x(i, r), 1);
  }
}

// The first (n+1)^2 entries of a solution as a matrix, tiny negatives set to 0.
Matrix to_matrix(const std::vector<double>& sol, std::int64_t n) {
  const auto N = static_cast<std::size_t>(n + 1);
  Matrix m(N, std::vector<double>(N));
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t r = 0; r < N; ++r) {
      const double v = sol[i * N + r];
      m[i][r] = v < 0 && v > -1e-12 ? 0.0 : v;
    }
  return m;
}

}  // namespace

LpResult optimal_mechanism_lp(std::int64_t n, double alpha, const Loss& loss, const std::vector<double>& prior) {
  check_n_alpha(n, alpha);
  check_loss(loss, n);
  check_prior(prior, n);
  Lp lp;
  add_mechanism(lp, n, alpha, [&](int i, int r) { return prior[static_cast<std::size_t>(i)] * loss(i, r); });
  LpResult res;
  const auto sol = lp.solve("optimal_mechanism_lp", res.value);
  res.matrix = to_matrix(sol, n);
  return res;
}

LpResult minimax_remap_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi) {
  check_n_alpha(n, alpha);
  check_loss(loss, n);
  check_side_information(n, lo, hi);
  const GeometricMechanism g(n, alpha);
  const int N = static_cast<int>(n + 1);
  Lp lp;
  // Columns T[o][r'] = o*N + r', then t.
  for (int k = 0; k < N * N; ++k) lp.add_column(0);
  const int t = lp.add_column(1);
  // For i in S: sum_{o, r'} G[i][o] l(i, r') T[o][r'] - t <= 0.
  for (std::int64_t i = lo; i <= hi; ++i) {
    const int row = lp.add_row(-COIN_DBL_MAX, 0);
    for (int o = 0; o < N; ++o)
      for (int r = 0; r < N; ++r) lp.add(row, o * N + r, g(i, o) * loss(i, r));
    lp.add(row, t, -1);
  }
  for (int o = 0; o < N; ++o) {
    const int row = lp.add_row(1, 1);
    for (int r = 0; r < N; ++r) lp.add(row, o * N + r, 1);
  }
  LpResult res;
  const auto sol = lp.solve("minimax_remap_lp", res.value);
  res.matrix = to_matrix(sol, n);
  return res;
}

LpResult minimax_mechanism_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi) {
  check_n_alpha(n, alpha);
  check_loss(loss, n);
  check_side_information(n, lo, hi);
  const int N = static_cast<int>(n + 1);
  Lp lp;
  add_mechanism(lp, n, alpha, [](int, int) { return 0.0; });
  const int t = lp.add_column(1);
  // For i in S: sum_r l(i, r) x[i][r] - t <= 0.
  for (std::int64_t i = lo; i <= hi; ++i) {
    const int row = lp.add_row(-COIN_DBL_MAX, 0);
    for (int r = 0; r < N; ++r) lp.add(row, static_cast<int>(i) * N + r, loss(i, r));
    lp.add(row, t, -1);
  }
  LpResult res;
  const auto sol = lp.solve("minimax_mechanism_lp", res.value);
  res.matrix = to_matrix(sol, n);
  return res;
}

}  // namespace optdp
