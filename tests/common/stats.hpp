// Statistical helpers for the tests: chi-square goodness of fit with p-values
// from Boost.Math. Bins are pooled from the tails inward until every pooled
// bin expects at least min_expected observations.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

namespace optdp::test {

struct ChiSquare {
  double statistic = 0;
  int dof = 0;
  double p_value = 1;
};

// observed[k] = count of outcome lo + k, pmf(v) the exact probability of
// outcome v. The mass of the model outside [lo, lo + observed.size()) is
// pooled with the outermost bins (pass pmf_below / pmf_above for it).
ChiSquare chi_square(const std::vector<std::int64_t>& observed, std::int64_t lo,
                     const std::function<double(std::int64_t)>& pmf, double pmf_below, double pmf_above,
                     double min_expected = 5.0);

// Convenience: samples as a histogram, model pmf over all integers with the
// tails outside the observed range computed as 1 - sum inside.
ChiSquare chi_square_samples(const std::vector<std::int64_t>& samples,
                             const std::function<double(std::int64_t)>& pmf, double min_expected = 5.0);

}  // namespace optdp::test
