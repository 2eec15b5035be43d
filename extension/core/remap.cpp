#include "core/remap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace optdp {

namespace {

// Posterior weights w_i proportional to p_i alpha^|i - o|, scaled so that the
// largest is 1 (log domain: no underflow of the whole row).
void posterior(const GeometricMechanism& g, const std::vector<double>& prior, std::int64_t o, std::vector<double>& w) {
  const std::int64_t n = g.n();
  const double la = std::log(g.alpha());
  double best = -std::numeric_limits<double>::infinity();
  for (std::int64_t i = 0; i <= n; ++i) {
    const double p = prior[static_cast<std::size_t>(i)];
    const double lw = p > 0 ? std::log(p) + la * static_cast<double>(i > o ? i - o : o - i)
                            : -std::numeric_limits<double>::infinity();
    w[static_cast<std::size_t>(i)] = lw;
    if (lw > best) best = lw;
  }
  for (auto& v : w) v = std::exp(v - best);
}

std::int64_t weighted_median(const std::vector<double>& w) {
  double total = 0;
  for (double v : w) total += v;
  double cum = 0;
  for (std::size_t r = 0; r < w.size(); ++r) {
    cum += w[r];
    if (2 * cum >= total) return static_cast<std::int64_t>(r);  // smallest r with W(<= r) >= W/2
  }
  return static_cast<std::int64_t>(w.size()) - 1;
}

std::int64_t rounded_mean(const std::vector<double>& w) {
  double total = 0, first = 0;
  for (std::size_t i = 0; i < w.size(); ++i) total += w[i], first += w[i] * static_cast<double>(i);
  const double mean = first / total;
  const auto lo = static_cast<std::int64_t>(std::floor(mean));
  const std::int64_t hi = std::min<std::int64_t>(lo + 1, static_cast<std::int64_t>(w.size()) - 1);
  auto f = [&](std::int64_t r) {
    double s = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double d = static_cast<double>(i) - static_cast<double>(r);
      s += w[i] * d * d;
    }
    return s;
  };
  return f(hi) < f(lo) ? hi : lo;
}

std::int64_t mode(const std::vector<double>& w) {
  std::size_t best = 0;
  for (std::size_t r = 1; r < w.size(); ++r)
    if (w[r] > w[best]) best = r;
  return static_cast<std::int64_t>(best);
}

std::int64_t general_argmin(const std::vector<double>& w, const Loss& loss) {
  const auto N = static_cast<std::int64_t>(w.size());
  std::int64_t best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::int64_t r = 0; r < N; ++r) {
    double c = 0;
    for (std::int64_t i = 0; i < N; ++i) {
      const double wi = w[static_cast<std::size_t>(i)];
      if (wi != 0) c += wi * loss(i, r);
    }
    if (c < best_cost) best = r, best_cost = c;
  }
  return best;
}

}  // namespace

std::vector<std::int64_t> optimal_remap(const GeometricMechanism& g, const Loss& loss, const std::vector<double>& prior) {
  const std::int64_t n = g.n();
  if (loss.n() != n || static_cast<std::int64_t>(prior.size()) != n + 1)
    throw std::invalid_argument("loss and prior must be for the same n as the mechanism");
  std::vector<std::int64_t> answer(static_cast<std::size_t>(n + 1));
  std::vector<double> w(static_cast<std::size_t>(n + 1));
  for (std::int64_t o = 0; o <= n; ++o) {
    posterior(g, prior, o, w);
    std::int64_t r;
    switch (loss.kind()) {
      case Loss::Kind::Absolute: r = weighted_median(w); break;
      case Loss::Kind::Squared: r = rounded_mean(w); break;
      case Loss::Kind::Binary: r = mode(w); break;
      default: r = general_argmin(w, loss); break;
    }
    answer[static_cast<std::size_t>(o)] = r;
  }
  return answer;
}

Matrix remapped_mechanism(const GeometricMechanism& g, const std::vector<std::int64_t>& answer) {
  const auto N = static_cast<std::size_t>(g.n() + 1);
  Matrix m(N, std::vector<double>(N, 0.0));
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t o = 0; o < N; ++o)
      m[i][static_cast<std::size_t>(answer[o])] += g(static_cast<std::int64_t>(i), static_cast<std::int64_t>(o));
  return m;
}

double expected_loss(const Matrix& m, const Loss& loss, const std::vector<double>& prior) {
  double total = 0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    double row = 0;
    for (std::size_t r = 0; r < m[i].size(); ++r)
      row += m[i][r] * loss(static_cast<std::int64_t>(i), static_cast<std::int64_t>(r));
    total += prior[i] * row;
  }
  return total;
}

double remap_loss(const GeometricMechanism& g, const std::vector<std::int64_t>& answer, const Loss& loss,
                  const std::vector<double>& prior) {
  const std::int64_t n = g.n();
  double total = 0;
  for (std::int64_t i = 0; i <= n; ++i) {
    const double p = prior[static_cast<std::size_t>(i)];
    if (p == 0) continue;
    double row = 0;
    for (std::int64_t o = 0; o <= n; ++o) row += g(i, o) * loss(i, answer[static_cast<std::size_t>(o)]);
    total += p * row;
  }
  return total;
}

void remapped_row(const GeometricMechanism& g, const std::vector<std::int64_t>& answer, std::int64_t i,
                  std::vector<double>& row) {
  std::fill(row.begin(), row.end(), 0.0);
  for (std::int64_t o = 0; o <= g.n(); ++o) row[static_cast<std::size_t>(answer[static_cast<std::size_t>(o)])] += g(i, o);
}

}  // namespace optdp
