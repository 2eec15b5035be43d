#include "stats.hpp"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <stdexcept>

namespace optdp::test {

ChiSquare chi_square(const std::vector<std::int64_t>& observed, std::int64_t lo,
                     const std::function<double(std::int64_t)>& pmf, double pmf_below, double pmf_above,
                     double min_expected) {
  std::int64_t total = 0;
  for (auto o : observed) total += o;
  if (total == 0 || observed.empty()) throw std::invalid_argument("chi_square: no observations");
  const auto n = static_cast<double>(total);
  std::vector<double> expected(observed.size());
  for (std::size_t k = 0; k < observed.size(); ++k) expected[k] = n * pmf(lo + static_cast<std::int64_t>(k));
  expected.front() += n * pmf_below;
  expected.back() += n * pmf_above;
  // Pool into bins of expected >= min_expected, scanning left to right, then
  // merge a short last bin into its neighbour.
  std::vector<double> e, o;
  double ce = 0, co = 0;
  for (std::size_t k = 0; k < observed.size(); ++k) {
    ce += expected[k];
    co += static_cast<double>(observed[k]);
    if (ce >= min_expected) {
      e.push_back(ce);
      o.push_back(co);
      ce = co = 0;
    }
  }
  if (ce > 0 || co > 0) {
    if (e.empty()) {
      e.push_back(ce);
      o.push_back(co);
    } else {
      e.back() += ce;
      o.back() += co;
    }
  }
  ChiSquare r;
  for (std::size_t i = 0; i < e.size(); ++i) r.statistic += (o[i] - e[i]) * (o[i] - e[i]) / e[i];
  r.dof = static_cast<int>(e.size()) - 1;
  if (r.dof < 1) throw std::invalid_argument("chi_square: fewer than two bins after pooling");
  r.p_value = boost::math::cdf(boost::math::complement(boost::math::chi_squared(r.dof), r.statistic));
  return r;
}

ChiSquare chi_square_samples(const std::vector<std::int64_t>& samples,
                             const std::function<double(std::int64_t)>& pmf, double min_expected) {
  if (samples.empty()) throw std::invalid_argument("chi_square_samples: no samples");
  const auto [mn, mx] = std::minmax_element(samples.begin(), samples.end());
  const std::int64_t lo = *mn - 1, hi = *mx + 1;  // one empty bin each side
  std::vector<std::int64_t> observed(static_cast<std::size_t>(hi - lo + 1), 0);
  for (auto s : samples) ++observed[static_cast<std::size_t>(s - lo)];
  double inside = 0;
  for (std::int64_t v = lo; v <= hi; ++v) inside += pmf(v);
  // The model's mass outside [lo, hi], split by symmetry of unknown shape: put it in the outer bins.
  const double outside = std::max(0.0, 1.0 - inside);
  return chi_square(observed, lo, pmf, outside / 2, outside / 2, min_expected);
}

}  // namespace optdp::test
