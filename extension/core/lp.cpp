#include "core/lp.hpp"

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "core/samplers.hpp"

namespace optdp {

namespace {

// Tolerances of a solve, in the LP's own units: probabilities for the
// mechanism and remap entries, and costs normalised by the value of a
// feasible point (so that the optimum is at most 1).
constexpr double kTolerance = 1e-12;    // Clp's primal and dual feasibility tolerances
constexpr double kMaxViolation = 1e-8;  // accepted constraint violation of the returned point
constexpr double kMaxGap = 1e-6;        // accepted gap between its cost and a dual lower bound
constexpr double kClip = 1e-12;         // entries in (-kClip, 0) are reported as 0

// A linear program min c.x s.t. row_lb <= A x <= row_ub, 0 <= x <= col_ub
// (col_ub finite), assembled from triplets and solved with Clp.
//
// Clp's answer is checked independently of its status: the point must
// satisfy every row within kMaxViolation, and its cost must be within
// kMaxGap of the lower bound that weak duality gives for Clp's row duals
// (this catches a wrong "optimal", which tight tolerances can provoke).
// Entries must also be >= -kClip, so that the cleaned-up matrix is exactly
// non-negative. Clp scales the problem internally, and after unscaling an
// entry that hardly affects the cost (a remap row for an output that S
// almost never produces) can come out slightly negative; so an answer that
// fails any check is solved again another way (without scaling; then with
// looser tolerances). If only the last check fails everywhere, the best
// answer is used with its negative entries (all above -kMaxViolation) set
// to 0.
class Lp {
 public:
  int add_column(double cost, double ub) {
    cost_.push_back(cost);
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

  // Solves; returns the column values, every one >= -kClip, and sets value
  // (Clp's objective). what names the LP in messages.
  std::vector<double> solve(const char* what, double& value) const {
    const int ncols = static_cast<int>(cost_.size()), nrows = static_cast<int>(row_lb_.size());
    CoinPackedMatrix m(true, rows_.data(), cols_.data(), vals_.data(), static_cast<CoinBigIndex>(vals_.size()));
    // The triplet constructor sizes the matrix by the largest index seen.
    m.setDimensions(nrows, ncols);
    const std::vector<double> col_lb(static_cast<std::size_t>(ncols), 0.0);

    // Attempts: scaled with tight tolerances; the same model re-solved
    // without scaling from the basis it reached (cheap: usually a few
    // iterations); from scratch without scaling; from scratch with looser
    // tolerances.
    struct Attempt {
      bool fresh, scaling;
      double tolerance;
    };
    const Attempt attempts[] = {{true, true, kTolerance}, {false, false, kTolerance}, {true, false, kTolerance}, {true, true, 1e-9}};
    std::string failures;
    std::vector<double> fallback;
    double fallback_value = 0, fallback_negative = INFINITY;
    ClpSimplex model;
    for (const Attempt& a : attempts) {
      if (a.fresh) {
        model = ClpSimplex();
        model.setLogLevel(0);
        model.loadProblem(m, col_lb.data(), col_ub_.data(), cost_.data(), row_lb_.data(), row_ub_.data());
        model.setOptimizationDirection(1);  // minimise
      }
      model.setPrimalTolerance(a.tolerance);
      model.setDualTolerance(a.tolerance);
      model.scaling(a.scaling ? 3 : 0);  // 3: Clp's automatic scaling
      model.setMaximumIterations(kMaxLpIterations);
      model.dual();
      if (!model.isProvenOptimal()) {
        // Infeasible or unbounded cannot happen for these LPs (the geometric
        // mechanism, or the identity remap, is feasible; costs are bounded):
        // any other status is a numerical failure worth another attempt.
        failures += std::string(failures.empty() ? "" : "; ") + "Clp status " + status_text(model.status());
        continue;
      }
      const double* x = model.primalColumnSolution();
      std::vector<double> sol(x, x + ncols);
      const double* y = model.dualRowSolution();
      const Check c = check(sol, std::vector<double>(y, y + nrows));
      if (c.violation <= kMaxViolation && c.gap <= kMaxGap) {
        if (c.negative <= kClip) {
          value = model.objectiveValue();
          return sol;
        }
        if (c.negative < fallback_negative) {
          fallback = std::move(sol);
          fallback_value = model.objectiveValue();
          fallback_negative = c.negative;
        }
        continue;
      }
      failures += std::string(failures.empty() ? "" : "; ") + "constraint violation " + format_double(c.violation) +
                  ", duality gap " + format_double(c.gap);
    }
    if (!fallback.empty()) {
      for (double& v : fallback) v = std::max(v, 0.0);
      value = fallback_value;
      return fallback;
    }
    throw std::runtime_error(std::string(what) + ": the linear program was not solved to optimality (" + failures +
                             ")");
  }

 private:
  static std::string status_text(int s) {
    switch (s) {
      case 1: return "1, primal infeasible";
      case 2: return "2, dual infeasible";
      case 3: return "3, stopped on iterations or time";
      case 4: return "4, stopped due to numerical errors";
      case 5: return "5, stopped by event handler";
      default: return std::to_string(s);
    }
  }

  struct Check {
    double violation;  // largest violation of a row or of an upper bound
    double negative;   // largest -x_k (0 if none is negative)
    double gap;        // |cost - dual bound|
  };

  // How far sol is from feasible, and the gap between its cost and the
  // weak-duality bound
  //   sum_j (y_j > 0 ? y_j lb_j : y_j ub_j) + sum_k min(0, d_k) ub_k, d = c - A^T y,
  // which is a lower bound on the optimum for every y (a y_j whose bound is
  // infinite is taken as 0). Long double throughout.
  Check check(const std::vector<double>& sol, std::vector<double> y) const {
    const std::size_t nrows = row_lb_.size(), ncols = cost_.size();
    std::vector<long double> activity(nrows, 0.0L), d(ncols);
    long double bound = 0, cost = 0, viol = 0, negative = 0;
    for (std::size_t j = 0; j < nrows; ++j) {
      if (y[j] > 0 && row_lb_[j] <= -COIN_DBL_MAX) y[j] = 0;
      if (y[j] < 0 && row_ub_[j] >= COIN_DBL_MAX) y[j] = 0;
      if (y[j] > 0) bound += static_cast<long double>(y[j]) * row_lb_[j];
      if (y[j] < 0) bound += static_cast<long double>(y[j]) * row_ub_[j];
    }
    for (std::size_t k = 0; k < ncols; ++k) {
      d[k] = cost_[k];
      cost += static_cast<long double>(cost_[k]) * sol[k];
      negative = std::max(negative, static_cast<long double>(-sol[k]));
      viol = std::max(viol, static_cast<long double>(sol[k]) - col_ub_[k]);
    }
    for (std::size_t e = 0; e < vals_.size(); ++e) {
      const auto j = static_cast<std::size_t>(rows_[e]), k = static_cast<std::size_t>(cols_[e]);
      activity[j] += static_cast<long double>(vals_[e]) * sol[k];
      d[k] -= static_cast<long double>(vals_[e]) * y[j];
    }
    for (std::size_t j = 0; j < nrows; ++j) {
      if (row_lb_[j] > -COIN_DBL_MAX) viol = std::max(viol, row_lb_[j] - activity[j]);
      if (row_ub_[j] < COIN_DBL_MAX) viol = std::max(viol, activity[j] - row_ub_[j]);
    }
    for (std::size_t k = 0; k < ncols; ++k)
      if (d[k] < 0) bound += d[k] * col_ub_[k];
    Check c;
    c.violation = static_cast<double>(std::max(viol, negative));
    c.negative = static_cast<double>(negative);
    c.gap = std::isfinite(static_cast<double>(bound)) ? static_cast<double>(std::fabs(cost - bound)) : INFINITY;
    return c;
  }

  std::vector<double> cost_, col_ub_, row_lb_, row_ub_, vals_;
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


void check_n_alpha(std::int64_t n, double alpha) {
  check_n(n, kMaxLpN);
  check_alpha(alpha);
  if (alpha < kMinLpAlpha)
    throw std::invalid_argument("alpha must be at least " + format_double(kMinLpAlpha) +
                                " for the functions that solve a linear program, but is " + format_double(alpha));
}

// The loss entries over {0..n}^2 within a factor kMaxLpLossRange.
void check_lp_loss_range(const Loss& loss) {
  double largest = 0, smallest = INFINITY;
  for (std::int64_t i = 0; i <= loss.n(); ++i)
    for (std::int64_t r = 0; r <= loss.n(); ++r) {
      const double v = loss(i, r);
      largest = std::max(largest, v);
      if (v > 0) smallest = std::min(smallest, v);
    }
  if (largest > 0 && !(largest <= kMaxLpLossRange * smallest))
    throw std::invalid_argument("loss must have its positive entries within a factor " +
                                format_double(kMaxLpLossRange) +
                                " of each other for the functions that solve a linear program, but they range from " +
                                format_double(smallest) + " to " + format_double(largest));
}

// The LPs are normalised by the value of a feasible point, the geometric
// mechanism taken at face value: an upper bound on the optimum and usually
// of its order, so that Clp's absolute tolerances act relative to the
// optimum. 1 if that value is 0 (then so is the optimum).
long double face_value_bayes(const GeometricMechanism& g, const Loss& loss, const std::vector<double>& prior) {
  long double s = 0;
  for (std::int64_t i = 0; i <= g.n(); ++i) {
    long double row = 0;
    for (std::int64_t r = 0; r <= g.n(); ++r) row += static_cast<long double>(g(i, r)) * loss(i, r);
    s += prior[static_cast<std::size_t>(i)] * row;
  }
  return s > 0 ? s : 1.0L;
}

long double face_value_minimax(const GeometricMechanism& g, const Loss& loss, std::int64_t lo, std::int64_t hi) {
  long double s = 0;
  for (std::int64_t i = lo; i <= hi; ++i) {
    long double row = 0;
    for (std::int64_t r = 0; r <= g.n(); ++r) row += static_cast<long double>(g(i, r)) * loss(i, r);
    s = std::max(s, row);
  }
  return s > 0 ? s : 1.0L;
}

// The largest l(i, r) / scale over i in [lo, hi]: an upper bound on t.
double max_loss(const Loss& loss, std::int64_t lo, std::int64_t hi, long double scale) {
  long double s = 0;
  for (std::int64_t i = lo; i <= hi; ++i)
    for (std::int64_t r = 0; r <= loss.n(); ++r) s = std::max(s, loss(i, r) / scale);
  return static_cast<double>(s);
}

// c / scale as a double (long double arithmetic: no overflow on the way).
double scaled(long double c, long double scale) { return static_cast<double>(c / scale); }

// Adds the columns x[i][r] (column i*cols + r, i < rows, r < cols, cost from
// cost(i, r), at most 1), the alpha-DP constraints between neighbouring
// rows, x[i][r] >= alpha x[i+1][r] and x[i+1][r] >= alpha x[i][r], and the
// row sums.
template <class Cost>
void add_mechanism(Lp& lp, int rows, int cols, double alpha, Cost cost) {
  for (int i = 0; i < rows; ++i)
    for (int r = 0; r < cols; ++r) lp.add_column(cost(i, r), 1);
  auto x = [cols](int i, int r) { return i * cols + r; };
  for (int i = 0; i + 1 < rows; ++i)
    for (int r = 0; r < cols; ++r) {
      const int up = lp.add_row(0, COIN_DBL_MAX);
      lp.add(up, x(i, r), 1);
      lp.add(up, x(i + 1, r), -alpha);
      const int down = lp.add_row(0, COIN_DBL_MAX);
      lp.add(down, x(i + 1, r), 1);
      lp.add(down, x(i, r), -alpha);
    }
  for (int i = 0; i < rows; ++i) {
    const int row = lp.add_row(1, 1);
    for (int r = 0; r < cols; ++r) lp.add(row, x(i, r), 1);
  }
}

double clip(double v) { return v < 0 && v > -kClip ? 0.0 : v; }

// Row row_of(i) of the solution's first block (cols columns per row) as row
// i of an (n+1)x(n+1) matrix, tiny negatives set to 0.
template <class RowOf>
Matrix to_matrix(const std::vector<double>& sol, std::int64_t n, RowOf row_of) {
  const auto N = static_cast<std::size_t>(n + 1);
  Matrix m(N, std::vector<double>(N));
  for (std::size_t i = 0; i < N; ++i) {
    const auto b = static_cast<std::size_t>(row_of(static_cast<std::int64_t>(i)));
    for (std::size_t r = 0; r < N; ++r) m[i][r] = clip(sol[b * N + r]);
  }
  return m;
}

}  // namespace

void check_side_information(std::int64_t n, std::int64_t lo, std::int64_t hi) {
  if (lo < 0 || lo > n)
    throw std::invalid_argument("lo must be an integer in [0, n] = [0, " + std::to_string(n) + "], but is " +
                                std::to_string(lo));
  if (hi < lo || hi > n)
    throw std::invalid_argument("hi must be an integer in [lo, n] = [" + std::to_string(lo) + ", " +
                                std::to_string(n) + "], but is " + std::to_string(hi));
}

LpResult optimal_mechanism_lp(std::int64_t n, double alpha, const Loss& loss, const std::vector<double>& prior) {
  check_n_alpha(n, alpha);
  check_loss(loss, n);
  check_lp_loss_range(loss);
  check_prior(prior, n);
  const long double scale = face_value_bayes(GeometricMechanism(n, alpha), loss, prior);
  const int N = static_cast<int>(n + 1);
  Lp lp;
  add_mechanism(lp, N, N, alpha, [&](int i, int r) {
    return scaled(static_cast<long double>(prior[static_cast<std::size_t>(i)]) * loss(i, r), scale);
  });
  LpResult res;
  const auto sol = lp.solve("optimal_mechanism_lp", res.value);
  res.value = static_cast<double>(res.value * scale);
  res.matrix = to_matrix(sol, n, [](std::int64_t i) { return i; });
  return res;
}

LpResult minimax_remap_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi) {
  check_n_alpha(n, alpha);
  check_loss(loss, n);
  check_lp_loss_range(loss);
  check_side_information(n, lo, hi);
  const GeometricMechanism g(n, alpha);
  const long double scale = face_value_minimax(g, loss, lo, hi);
  const int N = static_cast<int>(n + 1);
  Lp lp;
  // Columns T[o][r] = o*N + r, then t.
  for (int k = 0; k < N * N; ++k) lp.add_column(0, 1);
  const int t = lp.add_column(1, max_loss(loss, lo, hi, scale));
  // For i in S: sum_{o, r} G[i][o] l(i, r) T[o][r] / scale - t <= 0.
  for (std::int64_t i = lo; i <= hi; ++i) {
    const int row = lp.add_row(-COIN_DBL_MAX, 0);
    for (int o = 0; o < N; ++o)
      for (int r = 0; r < N; ++r) lp.add(row, o * N + r, scaled(static_cast<long double>(g(i, o)) * loss(i, r), scale));
    lp.add(row, t, -1);
  }
  for (int o = 0; o < N; ++o) {
    const int row = lp.add_row(1, 1);
    for (int r = 0; r < N; ++r) lp.add(row, o * N + r, 1);
  }
  LpResult res;
  const auto sol = lp.solve("minimax_remap_lp", res.value);
  res.value = static_cast<double>(res.value * scale);
  res.matrix = to_matrix(sol, n, [](std::int64_t o) { return o; });
  return res;
}

LpResult minimax_mechanism_lp(std::int64_t n, double alpha, const Loss& loss, std::int64_t lo, std::int64_t hi) {
  check_n_alpha(n, alpha);
  check_loss(loss, n);
  check_lp_loss_range(loss);
  check_side_information(n, lo, hi);
  // Only the rows in S enter the objective, and a feasible block of rows
  // lo..hi extends to a full alpha-DP mechanism by repeating row lo above it
  // and row hi below it (equal neighbouring rows meet every ratio
  // constraint). So the LP is over rows lo..hi only: smaller, and much
  // better conditioned than the full one.
  const long double scale = face_value_minimax(GeometricMechanism(n, alpha), loss, lo, hi);
  const int N = static_cast<int>(n + 1), M = static_cast<int>(hi - lo + 1);
  Lp lp;
  add_mechanism(lp, M, N, alpha, [](int, int) { return 0.0; });
  const int t = lp.add_column(1, max_loss(loss, lo, hi, scale));
  // For i in S: sum_r l(i, r) x[i][r] / scale - t <= 0.
  for (int b = 0; b < M; ++b) {
    const int row = lp.add_row(-COIN_DBL_MAX, 0);
    for (int r = 0; r < N; ++r) lp.add(row, b * N + r, scaled(loss(lo + b, r), scale));
    lp.add(row, t, -1);
  }
  LpResult res;
  const auto sol = lp.solve("minimax_mechanism_lp", res.value);
  res.value = static_cast<double>(res.value * scale);
  res.matrix = to_matrix(sol, n, [lo, hi](std::int64_t i) { return std::clamp(i, lo, hi) - lo; });
  return res;
}

}  // namespace optdp
