// Private selection (core/selection.hpp, docs/selection.md): the exact laws
// against brute force, the samplers against the laws (chi-square), and
// permute-and-flip never worse than the exponential mechanism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "core/rng.hpp"
#include "core/selection.hpp"
#include "stats.hpp"

using namespace optdp;

namespace {

// Permute-and-flip's law by enumerating every order (k! of them): the
// probability that r is the first heads, averaged over orders.
std::vector<double> pf_by_enumeration(const std::vector<double>& p) {
  const std::size_t k = p.size();
  std::vector<std::size_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> out(k, 0.0);
  double orders = 0;
  do {
    double tails = 1;  // probability that every earlier coin was tails
    for (std::size_t i = 0; i < k; ++i) {
      out[order[i]] += tails * p[order[i]];
      tails *= 1 - p[order[i]];
    }
    orders += 1;
  } while (std::next_permutation(order.begin(), order.end()));
  for (double& x : out) x /= orders;
  return out;
}

std::vector<double> coins(const std::vector<__float128>& gamma) {
  std::vector<double> p;
  for (const __float128 g : gamma) p.push_back(std::exp(-static_cast<double>(g)));
  return p;
}

double expected_score(const std::vector<double>& law, const std::vector<double>& scores) {
  double e = 0;
  for (std::size_t r = 0; r < law.size(); ++r) e += law[r] * scores[r];
  return e;
}

}  // namespace

TEST(SelectionExponents, ScaleAndBest) {
  const std::vector<double> scores = {1, 5, 3, 5, 0};
  const auto g = selection_exponents(scores, 1.0, 1.0);
  const double want[] = {2, 0, 1, 0, 2.5};  // eps (q* - q) / (2 s)
  for (std::size_t r = 0; r < scores.size(); ++r) EXPECT_DOUBLE_EQ(static_cast<double>(g[r]), want[r]);
  EXPECT_THROW(selection_exponents({}, 1.0, 1.0), std::invalid_argument);
  EXPECT_THROW(selection_exponents(scores, 0.0, 1.0), std::invalid_argument);
  EXPECT_THROW(selection_exponents(scores, 1.0, -1.0), std::invalid_argument);
  const std::vector<double> inf = {1, INFINITY};
  EXPECT_THROW(selection_exponents(inf, 1.0, 1.0), std::invalid_argument);
  EXPECT_EQ(parse_selection_method("exponential"), SelectionMethod::Exponential);
  EXPECT_EQ(parse_selection_method("permute_and_flip"), SelectionMethod::PermuteAndFlip);
  EXPECT_THROW(parse_selection_method("gumbel"), std::invalid_argument);
}

TEST(SelectionProbabilities, ReferenceExample) {
  // docs/math.md: scores (1, 5, 3, 5, 0), eps 1, s 1: exponential P ~ (e^-2, 1, e^-1, 1, e^-2.5).
  const auto g = selection_exponents(std::vector<double>{1, 5, 3, 5, 0}, 1.0, 1.0);
  const auto em = selection_probabilities(g, SelectionMethod::Exponential);
  const double p[] = {std::exp(-2.0), 1, std::exp(-1.0), 1, std::exp(-2.5)};
  const double total = p[0] + p[1] + p[2] + p[3] + p[4];
  for (int r = 0; r < 5; ++r) EXPECT_NEAR(em[static_cast<std::size_t>(r)], p[r] / total, 1e-15);
}

TEST(SelectionProbabilities, PermuteAndFlipMatchesEnumeration) {
  std::mt19937_64 gen(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t k = 1 + gen() % 7;
    std::vector<double> scores(k);
    for (double& s : scores) s = static_cast<double>(gen() % 21) - 10;
    const double eps = 0.1 + static_cast<double>(gen() % 40) / 10;
    const auto g = selection_exponents(scores, eps, 1.0);
    const auto law = selection_probabilities(g, SelectionMethod::PermuteAndFlip);
    const auto brute = pf_by_enumeration(coins(g));
    double total = 0;
    for (std::size_t r = 0; r < k; ++r) {
      EXPECT_NEAR(law[r], brute[r], 1e-9) << "trial " << trial << " r " << r;
      total += law[r];
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
  }
}

TEST(SelectionProbabilities, LargeSetsSumToOne) {
  std::mt19937_64 gen(11);
  for (std::size_t k : {50u, 1000u, 2000u}) {
    std::vector<double> scores(k);
    for (double& s : scores) s = static_cast<double>(gen() % 1000);
    const auto g = selection_exponents(scores, 0.05, 1.0);  // flat: many candidates matter
    for (auto m : {SelectionMethod::Exponential, SelectionMethod::PermuteAndFlip}) {
      const auto law = selection_probabilities(g, m);
      double total = 0;
      for (double x : law) {
        EXPECT_GE(x, 0);
        total += x;
      }
      EXPECT_NEAR(total, 1.0, 1e-9) << k;
    }
  }
  std::vector<__float128> too_many(kMaxProbabilityCandidates + 1, 0);
  EXPECT_THROW(selection_probabilities(too_many, SelectionMethod::Exponential), std::invalid_argument);
}

// McKenna and Sheldon: permute-and-flip's expected score is never below the
// exponential mechanism's. Checked exactly from the two laws.
TEST(SelectionProbabilities, PermuteAndFlipNeverWorse) {
  std::mt19937_64 gen(3);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t k = 2 + gen() % 60;
    std::vector<double> scores(k);
    for (double& s : scores) s = static_cast<double>(gen() % 1000) / 10;
    const double eps = 0.05 + static_cast<double>(gen() % 100) / 20;
    const auto g = selection_exponents(scores, eps, 1.0);
    const double em = expected_score(selection_probabilities(g, SelectionMethod::Exponential), scores);
    const double pf = expected_score(selection_probabilities(g, SelectionMethod::PermuteAndFlip), scores);
    EXPECT_GE(pf, em - 1e-9 * std::max(1.0, std::abs(em))) << "trial " << trial;
  }
}

TEST(SelectionSamplers, ChiSquareAgainstTheLaw) {
  const std::vector<double> scores = {1, 5, 3, 5, 0, 4.5, -2, 5};
  const auto g = selection_exponents(scores, 1.3, 1.0);
  for (auto m : {SelectionMethod::Exponential, SelectionMethod::PermuteAndFlip}) {
    SeededRng rng(m == SelectionMethod::Exponential ? 101 : 102);
    const auto law = selection_probabilities(g, m);
    std::vector<std::int64_t> counts(scores.size(), 0);
    constexpr int kN = 200000;
    for (int i = 0; i < kN; ++i) ++counts[sample_selection(rng, m, g)];
    const auto r = test::chi_square(counts, 0, [&](std::int64_t v) { return law[static_cast<std::size_t>(v)]; }, 0, 0);
    EXPECT_GT(r.p_value, 1e-4) << selection_method_name(m) << " chi2 " << r.statistic << " dof " << r.dof;
  }
}

// The exponential sampler draws by rejection when many candidates are near
// the best, by weights otherwise: both against the law.
TEST(SelectionSamplers, ExponentialBothWays) {
  std::vector<double> flat, peaked;
  for (int r = 0; r < 40; ++r) {
    flat.push_back(r % 4);          // sum p large: rejection
    peaked.push_back(r == 7 ? 200 : 100 + r);  // one far ahead, the rest live: weights
  }
  int seed = 201;
  for (const auto* scores : {&flat, &peaked}) {
    const auto g = selection_exponents(*scores, scores == &flat ? 1.0 : 0.15, 1.0);
    const auto law = selection_probabilities(g, SelectionMethod::Exponential);
    SeededRng rng(static_cast<std::uint64_t>(seed++));
    std::vector<std::int64_t> counts(scores->size(), 0);
    for (int i = 0; i < 50000; ++i) ++counts[sample_exponential(rng, g)];
    const auto r = test::chi_square(counts, 0, [&](std::int64_t v) { return law[static_cast<std::size_t>(v)]; }, 0, 0);
    EXPECT_GT(r.p_value, 1e-4) << (scores == &flat ? "flat" : "peaked") << " chi2 " << r.statistic << " dof " << r.dof;
  }
}

TEST(SelectionSamplers, OneCandidateAndUnderflow) {
  SeededRng rng(5);
  const std::vector<__float128> one = {0};
  EXPECT_EQ(sample_exponential(rng, one), 0u);
  EXPECT_EQ(sample_permute_and_flip(rng, one), 0u);
  // exp(-1e6) underflows to 0: never chosen, and no error.
  const std::vector<__float128> far = {1e6, 0, 1e6};
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(sample_exponential(rng, far), 1u);
    EXPECT_EQ(sample_permute_and_flip(rng, far), 1u);
  }
  const std::vector<__float128> no_best = {1, 2};
  EXPECT_THROW(sample_exponential(rng, no_best), std::invalid_argument);
}
