// Private selection (core/selection.hpp, docs/selection.md): the exact laws
// against brute force, the samplers against the laws (chi-square), and
// permute-and-flip never worse than the exponential mechanism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

extern "C" {
#include <quadmath.h>
}

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

// Flat scores (many candidates near the best) and peaked ones (one far
// ahead, the rest spread out): the exponential sampler against the law.
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

// The samplers' p_r = exp(-gamma_r) in double-double arithmetic, against
// libquadmath's expq (accurate to a few units of 2^-113): relative error
// below 2^-101 on [0, 100], the claim docs/selection.md's bounds rest on.
TEST(ExpMinus, WithinTwoToTheMinus101OfLibquadmath) {
  std::mt19937_64 gen(17);
  std::uniform_real_distribution<double> uniform(0, 100), unit(0, 1);
  std::vector<__float128> args = {0, 1e-30, 1e-10, 0.5, 1, 71.9, 72, 99.999, 100};
  for (int i = 0; i < 200000; ++i) {
    args.push_back(uniform(gen) + static_cast<__float128>(unit(gen)) * 1e-20Q);  // more than a double's bits
    args.push_back(std::exp(-30 * unit(gen)) * 100);                              // small arguments too
  }
  // Around the reduction's breakpoints (j + 1/2) ln2/64, where |r| is largest.
  for (int j = 0; j < 9233; j += 7)
    for (const __float128 d : {-1e-25Q, 0.0Q, 1e-25Q}) args.push_back((j + 0.5Q) * M_LN2q / 64 + d);
  double worst = 0;
  for (const __float128 g : args) {
    const __float128 want = expq(-g);
    const double rel = static_cast<double>(fabsq(exp_minus(g) - want) / want);
    worst = std::max(worst, rel);
  }
  EXPECT_LT(worst, std::ldexp(1.0, -101)) << "worst relative error 2^" << std::log2(worst);
  std::printf("exp_minus: worst relative error 2^%.2f over %zu arguments\n", std::log2(worst), args.size());
  EXPECT_TRUE(exp_minus(0) == 1);
  EXPECT_TRUE(exp_minus(100) == exp_minus(1e6));  // clamped: both truncate to 0 everywhere
  EXPECT_LT(static_cast<double>(exp_minus(100)), std::ldexp(1.0, -144));
}

// The work of a draw does not depend on the scores (docs/boundary.md; the
// wall-clock comparison is sampler_bench's, bench/README.md). On the score
// shapes that would show a difference (every other candidate just below or
// just above the point where its weight truncates to 0, gamma 72; all tied
// with the best; astronomically far behind it; coins of 1/2 and of every
// size), counted, not timed: every
// draw evaluates k exponentials and visits k candidates; permute-and-flip
// draws k positions and tosses k coins, whose bytes have a law that does
// not depend on the coins' probabilities; the exponential mechanism's only
// random draws are its 128-bit points, under the documented bound (mean
// below 2 per draw, core/selection.hpp).
TEST(SelectionSamplers, WorkDoesNotDependOnTheScores) {
  constexpr std::size_t k = 10000;
  constexpr std::size_t kDraws = 20;
  std::vector<__float128> spread(k);  // coins of every size, with non-zero bytes
  for (std::size_t r = 0; r < k; ++r) spread[r] = static_cast<__float128>(r) / 100;
  const std::vector<__float128> shapes[] = {std::vector<__float128>(k, 71.5Q),
                                            std::vector<__float128>(k, 72.5Q),
                                            std::vector<__float128>(k, 0),
                                            std::vector<__float128>(k, 1e6Q),
                                            std::vector<__float128>(k, 0.7Q),
                                            spread};
  for (auto m : {SelectionMethod::Exponential, SelectionMethod::PermuteAndFlip}) {
    int shape = 0;
    for (auto gamma : shapes) {
      SCOPED_TRACE(std::string(selection_method_name(m)) + ", shape " + std::to_string(shape++));
      gamma[k / 2] = 0;  // a best candidate
      SeededRng rng(77);
      SelectionWork work;
      const std::uint64_t before = rng.bytes_drawn();
      for (std::size_t i = 0; i < kDraws; ++i) ASSERT_LT(sample_selection(rng, m, gamma, &work), k);
      const std::uint64_t bytes = rng.bytes_drawn() - before;
      EXPECT_EQ(work.exponentials, kDraws * k);
      EXPECT_EQ(work.visited, kDraws * k);
      if (m == SelectionMethod::Exponential) {
        EXPECT_EQ(work.positions, 0u);
        EXPECT_EQ(work.coins, 0u);
        EXPECT_EQ(bytes, 16 * work.point_draws);  // nothing else is drawn
        // Geometric with mean 2^b / W < 2 per draw (1.64 for the tied shape,
        // 1 when the best carries all the weight): 40 is 5 standard deviations above 33.
        EXPECT_GE(work.point_draws, kDraws);
        EXPECT_LE(work.point_draws, 2 * kDraws);
        std::printf("exponential, shape %d: %zu 128-bit point draws in %zu draws\n", shape - 1, work.point_draws,
                    kDraws);
      } else {
        EXPECT_EQ(work.positions, kDraws * k);
        EXPECT_EQ(work.coins, kDraws * k);
        EXPECT_EQ(work.point_draws, 0u);
        // Positions: 8 bytes per Rng::below(k - i) for k - i >= 2 (a rejection has probability
        // below 2^-50). Coins: 1 byte each, plus one more each time a byte equals the
        // probability's (probability 1/256, whatever the probability): a mean of
        // kDraws k / 255 = 784 extra bytes (standard deviation 28), for every shape.
        const std::uint64_t coin_bytes = bytes - 8 * kDraws * (k - 1);
        ASSERT_GE(coin_bytes, kDraws * k);
        const double extra = static_cast<double>(coin_bytes - kDraws * k);
        const double mean = static_cast<double>(kDraws * k) / 255;
        EXPECT_LT(std::abs(extra - mean), 6 * std::sqrt(mean)) << extra << " extra coin bytes";
        std::printf("permute_and_flip, shape %d: %.0f extra coin bytes (mean %.0f)\n", shape - 1, extra, mean);
      }
    }
  }
}

// selection_exponents computes scale (q* - q_r) with integer operations (the
// same work whatever the scores); against binary128 arithmetic, on scores of
// every magnitude and sign (subnormal, huge, -0, ties), eps and sensitivity
// from tiny to huge: within 2^-110 relative, and +0 exactly for a best one.
TEST(SelectionExponents, MatchBinary128Arithmetic) {
  std::mt19937_64 gen(23);
  const double specials[] = {0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.0, -1.0, 3.0, 1e300, -1e300,
                             1.7976931348623157e308, -1.7976931348623157e308, 0.1, 123456789.0, -2.5};
  std::uniform_real_distribution<double> unit(-1, 1);
  double worst = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const std::size_t k = 1 + gen() % 8;
    std::vector<double> scores(k);
    for (double& q : scores) {
      switch (gen() % 4) {
        case 0: q = specials[gen() % std::size(specials)]; break;
        case 1: q = static_cast<double>(static_cast<std::int64_t>(gen() % 2001) - 1000); break;
        case 2: q = std::ldexp(unit(gen), static_cast<int>(gen() % 2000) - 1000); break;
        default: q = scores[0]; break;  // a tie
      }
    }
    const double eps = std::ldexp(1 + unit(gen) / 2, static_cast<int>(gen() % 200) - 100);
    const double sens = std::ldexp(1 + unit(gen) / 2, static_cast<int>(gen() % 200) - 100);
    const auto g = selection_exponents(scores, eps, sens);
    const double best = *std::max_element(scores.begin(), scores.end());
    const __float128 scale = static_cast<__float128>(eps) / (2 * static_cast<__float128>(sens));
    for (std::size_t r = 0; r < k; ++r) {
      const __float128 want = scale * (static_cast<__float128>(best) - static_cast<__float128>(scores[r]));
      if (want == 0) {
        EXPECT_TRUE(g[r] == 0 && !signbitq(g[r])) << "trial " << trial << " r " << r;
        continue;
      }
      const double rel = static_cast<double>(fabsq(g[r] - want) / want);
      worst = std::max(worst, rel);
      EXPECT_LT(rel, std::ldexp(1.0, -110)) << "trial " << trial << " r " << r << " q " << scores[r] << " best "
                                            << best << " eps " << eps << " s " << sens;
    }
  }
  std::printf("selection_exponents: worst relative difference 2^%.2f\n", std::log2(worst));
}

