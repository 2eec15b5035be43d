// The Bayesian user's optimal remap of G(n, alpha) against brute force, and
// the loss and prior parsers (docs/math.md, "A user's optimal remap").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages.hpp"
#include "core/loss.hpp"
#include "core/mechanism.hpp"
#include "core/remap.hpp"

using namespace optdp;

namespace {

using test::message_of;

std::string json_array(const std::vector<double>& v) {
  std::string s = "[";
  char buf[40];
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.17g", i ? "," : "", v[i]);
    s += buf;
  }
  return s + "]";
}

std::string json_matrix(const std::vector<std::vector<double>>& m) {
  std::string s = "[";
  for (std::size_t i = 0; i < m.size(); ++i) s += (i ? "," : "") + json_array(m[i]);
  return s + "]";
}

// A loss matrix non-decreasing in |i - r| along each row, with ties:
// l(i, r) = f_i(|i - r|) + asymmetric jitter below the next level.
std::string monotone_matrix(std::int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::vector<double>> m(static_cast<std::size_t>(n + 1), std::vector<double>(static_cast<std::size_t>(n + 1)));
  for (std::int64_t i = 0; i <= n; ++i) {
    double level = 0;
    for (std::int64_t d = 0; d <= n; ++d) {
      const double w = u(rng) < 0.3 ? 0.0 : u(rng);
      for (std::int64_t r : {i - d, i + d})
        if (r >= 0 && r <= n) m[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)] = level + w * u(rng);
      level += w + (u(rng) < 0.2 ? 0.0 : 2 * u(rng));
    }
  }
  return json_matrix(m);
}

// argmin_r sum_i p_i G[i][o] l(i, r) by brute force in long double; also the
// second-best cost, and the cost of every r.
struct Brute {
  std::int64_t best;
  long double best_cost, second_cost;
  std::vector<long double> cost;
};

Brute brute_force(const GeometricMechanism& g, const Loss& loss, const std::vector<double>& prior, std::int64_t o) {
  const std::int64_t n = g.n();
  Brute b{0, INFINITY, INFINITY, std::vector<long double>(static_cast<std::size_t>(n + 1))};
  for (std::int64_t r = 0; r <= n; ++r) {
    long double c = 0;
    for (std::int64_t i = 0; i <= n; ++i)
      c += static_cast<long double>(prior[static_cast<std::size_t>(i)]) * g(i, o) * loss(i, r);
    b.cost[static_cast<std::size_t>(r)] = c;
    if (c < b.best_cost) {
      b.second_cost = b.best_cost;
      b.best_cost = c;
      b.best = r;
    } else if (c < b.second_cost) {
      b.second_cost = c;
    }
  }
  return b;
}

std::vector<double> random_prior(std::int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> p(static_cast<std::size_t>(n + 1));
  for (auto& v : p) v = u(rng) < 0.35 ? 0.0 : u(rng);
  p[static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(n + 1))] += 0.05;
  double s = 0;
  for (double v : p) s += v;
  for (auto& v : p) v /= s;
  return p;
}

}  // namespace

// ---- the remap against brute force ------------------------------------------

TEST(OptimalRemap, AgreesWithBruteForce) {
  std::mt19937_64 rng(12345);
  long compared = 0, outputs = 0;
  for (int kind = 0; kind < 5; ++kind)
    for (std::int64_t n : {0, 1, 2, 3, 5, 8, 13, 21, 30})
      for (double alpha : {0.05, 0.3, 0.6, 0.9, 0.99})
        for (int rep = 0; rep < 3; ++rep) {
          const std::string text = kind == 0   ? "absolute"
                                   : kind == 1 ? "squared"
                                   : kind == 2 ? "binary"
                                   : kind == 3 ? "power:1.5"
                                               : monotone_matrix(n, rng);
          const Loss loss = Loss::parse(text, n);
          const auto prior = rep == 0 ? parse_prior("uniform", n) : random_prior(n, rng);
          const GeometricMechanism g(n, alpha);
          const auto answer = optimal_remap(g, loss, prior);
          ASSERT_EQ(answer.size(), static_cast<std::size_t>(n + 1));
          for (std::int64_t o = 0; o <= n; ++o) {
            SCOPED_TRACE("loss " + text.substr(0, 20) + " n=" + std::to_string(n) + " alpha=" +
                         std::to_string(alpha) + " rep " + std::to_string(rep) + " output " + std::to_string(o));
            const Brute b = brute_force(g, loss, prior, o);
            const std::int64_t r = answer[static_cast<std::size_t>(o)];
            ASSERT_GE(r, 0);
            ASSERT_LE(r, n);
            ++outputs;
            // Always (near) optimal ...
            EXPECT_LE(b.cost[static_cast<std::size_t>(r)], b.best_cost + 1e-12L * b.best_cost + 1e-300L);
            // ... and exactly the brute-force answer where the optimum is clear.
            if (b.second_cost - b.best_cost > 1e-12L * b.second_cost) {
              EXPECT_EQ(r, b.best);
              ++compared;
            }
          }
        }
  RecordProperty("outputs", static_cast<int>(outputs));
  RecordProperty("compared", static_cast<int>(compared));
  EXPECT_GT(compared, outputs * 9 / 10);
}

// Exact ties go to the smallest r: prior 1/2 on 0 and 2, output 1.
TEST(OptimalRemap, TiesGoToTheSmallestResult) {
  const GeometricMechanism g(2, 0.5);
  const std::vector<double> prior{0.5, 0.0, 0.5};
  // binary: 0 and 2 tie (and beat 1); absolute: 0, 1, 2 all tie.
  EXPECT_EQ(optimal_remap(g, Loss::parse("binary", 2), prior)[1], 0);
  EXPECT_EQ(optimal_remap(g, Loss::parse("absolute", 2), prior)[1], 0);
  EXPECT_EQ(optimal_remap(g, Loss::parse("power:0.5", 2), prior)[1], 0);
  // squared: the posterior mean 1 is the unique optimum.
  EXPECT_EQ(optimal_remap(g, Loss::parse("squared", 2), prior)[1], 1);
  // power:3 is convex: 1 again.
  EXPECT_EQ(optimal_remap(g, Loss::parse("power:3", 2), prior)[1], 1);
}

TEST(OptimalRemap, PointMassPriorRemapsEverythingToThePoint) {
  const std::int64_t n = 10;
  std::mt19937_64 rng(3);
  // A strictly increasing matrix loss, and one with a flat band (|i - r| <= 1
  // costs 0), where the smallest optimal r is k - 1.
  std::vector<std::vector<double>> strict(n + 1, std::vector<double>(n + 1)), flat = strict;
  for (std::int64_t i = 0; i <= n; ++i)
    for (std::int64_t r = 0; r <= n; ++r) {
      const double d = static_cast<double>(std::abs(i - r));
      strict[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)] = d * (1 + 0.01 * static_cast<double>(i)) + (r > i ? 0.001 : 0);
      flat[static_cast<std::size_t>(i)][static_cast<std::size_t>(r)] = d <= 1 ? 0 : d;
    }
  for (double alpha : {0.05, 0.5, 0.95})
    for (std::int64_t k = 0; k <= n; ++k) {
      std::vector<double> prior(static_cast<std::size_t>(n + 1), 0.0);
      prior[static_cast<std::size_t>(k)] = 1;
      const GeometricMechanism g(n, alpha);
      for (const std::string& text :
           {std::string("absolute"), std::string("squared"), std::string("binary"), std::string("power:1.5"),
            std::string("power:0.3"), json_matrix(strict)}) {
        const auto answer = optimal_remap(g, Loss::parse(text, n), prior);
        for (std::int64_t o = 0; o <= n; ++o)
          EXPECT_EQ(answer[static_cast<std::size_t>(o)], k) << text.substr(0, 12) << " k=" << k << " o=" << o;
      }
      const auto answer = optimal_remap(g, Loss::parse(json_matrix(flat), n), prior);
      for (std::int64_t o = 0; o <= n; ++o) EXPECT_EQ(answer[static_cast<std::size_t>(o)], std::max<std::int64_t>(k - 1, 0));
    }
}

// ---- large n: the log-domain posterior ---------------------------------------

TEST(OptimalRemap, LargeRangePointMass) {
  const std::int64_t n = 2000;
  std::vector<double> prior(static_cast<std::size_t>(n + 1), 0.0);
  prior[0] = 1;
  for (const char* text : {"absolute", "squared", "binary"})
    for (double alpha : {0.5, 0.999}) {
      const GeometricMechanism g(n, alpha);
      const Loss loss = Loss::parse(text, n);
      const auto answer = optimal_remap(g, loss, prior);
      for (std::int64_t o = 0; o <= n; ++o) ASSERT_EQ(answer[static_cast<std::size_t>(o)], 0) << text << " o=" << o;
      EXPECT_EQ(remap_loss(g, answer, loss, prior), 0.0);
    }
}

// p_0 = 1, p_n = 1e-300, alpha = 1/2: for output o the posterior odds of n
// against 0 are 1e-300 * 2^(2o - n). In linear arithmetic both weights
// underflow (2^-2000); in the log domain the switch is exactly between
// o = 1498 (odds e^-0.41) and o = 1499 (odds e^+0.97).
TEST(OptimalRemap, LargeRangeFarApartPointsNeedTheLogDomain) {
  const std::int64_t n = 2000;
  std::vector<double> prior(static_cast<std::size_t>(n + 1), 0.0);
  prior[0] = 1;
  prior[static_cast<std::size_t>(n)] = 1e-300;
  const GeometricMechanism g(n, 0.5);
  for (const char* text : {"absolute", "binary"}) {
    const auto answer = optimal_remap(g, Loss::parse(text, n), prior);
    for (std::int64_t o = 0; o <= n; ++o)
      ASSERT_EQ(answer[static_cast<std::size_t>(o)], o <= 1498 ? 0 : n) << text << " o=" << o;
  }
  const auto sq = optimal_remap(g, Loss::parse("squared", n), prior);
  for (std::int64_t o = 0; o <= n; ++o) {
    const auto r = sq[static_cast<std::size_t>(o)];
    ASSERT_GE(r, 0);
    ASSERT_LE(r, n);
    if (o <= 1450) {
      ASSERT_EQ(r, 0) << o;
    }
    if (o >= 1550) {
      ASSERT_EQ(r, n) << o;
    }
  }
}

// A prior concentrated around 100 (sd 5): the posterior for output o is the
// prior tilted by alpha^|i - o|, i.e. shifted by 25 ln(1/alpha) toward o,
// even when o = 2000 and every p_i alpha^|i - o| underflows.
TEST(OptimalRemap, LargeRangePriorFarFromTheOutput) {
  const std::int64_t n = 2000;
  std::vector<double> prior(static_cast<std::size_t>(n + 1));
  for (std::int64_t i = 0; i <= n; ++i) prior[static_cast<std::size_t>(i)] = std::exp(-std::pow(i - 100.0, 2) / 50);
  const double alpha = 0.5;
  const GeometricMechanism g(n, alpha);
  const double shift = 25 * std::log(1 / alpha);  // 17.3
  for (const char* text : {"absolute", "squared", "binary"}) {
    const Loss loss = Loss::parse(text, n);
    const auto answer = optimal_remap(g, loss, prior);
    for (std::int64_t o = 0; o <= n; ++o) {
      const auto r = answer[static_cast<std::size_t>(o)];
      ASSERT_GE(r, 0);
      ASSERT_LE(r, n);
    }
    EXPECT_NEAR(static_cast<double>(answer[n]), 100 + shift, 1.5) << text;
    EXPECT_NEAR(static_cast<double>(answer[1000]), 100 + shift, 1.5) << text;
    EXPECT_NEAR(static_cast<double>(answer[0]), 100 - shift, 1.5) << text;
    const double l = remap_loss(g, answer, loss, prior);
    EXPECT_TRUE(std::isfinite(l)) << text;
    EXPECT_GE(l, 0) << text;
  }
  // A uniform prior at n = 2000: answers in range, finite loss no worse than face value.
  const auto uniform = parse_prior("uniform", n);
  std::vector<std::int64_t> id(static_cast<std::size_t>(n + 1));
  for (std::int64_t o = 0; o <= n; ++o) id[static_cast<std::size_t>(o)] = o;
  for (const char* text : {"absolute", "squared", "binary"}) {
    const Loss loss = Loss::parse(text, n);
    const auto answer = optimal_remap(g, loss, uniform);
    for (auto r : answer) ASSERT_TRUE(r >= 0 && r <= n);
    const double l = remap_loss(g, answer, loss, uniform), face = remap_loss(g, id, loss, uniform);
    EXPECT_TRUE(std::isfinite(l));
    EXPECT_LE(l, face * (1 + 1e-12)) << text;
  }
}

// ---- expected losses ----------------------------------------------------------

TEST(RemapLoss, AgreesWithTheRemappedMechanism) {
  std::mt19937_64 rng(99);
  for (std::int64_t n : {0, 1, 4, 17})
    for (double alpha : {0.2, 0.7})
      for (const char* text : {"absolute", "squared", "binary", "power:2.5"}) {
        const Loss loss = Loss::parse(text, n);
        const auto prior = random_prior(n, rng);
        const GeometricMechanism g(n, alpha);
        const auto answer = optimal_remap(g, loss, prior);
        const Matrix m = remapped_mechanism(g, answer);
        for (const auto& row : m) {
          double s = 0;
          for (double v : row) s += v;
          EXPECT_NEAR(s, 1.0, 1e-12);
        }
        const double a = remap_loss(g, answer, loss, prior), b = expected_loss(m, loss, prior);
        EXPECT_NEAR(a, b, 1e-12 * std::max(1.0, b)) << n << " " << alpha << " " << text;
        // The remap never loses more than taking G at face value.
        EXPECT_LE(a, expected_loss(g.dense(), loss, prior) * (1 + 1e-12) + 1e-300);
      }
}

TEST(OptimalRemap, RejectsMismatchedSizes) {
  const GeometricMechanism g(4, 0.5);
  EXPECT_THROW(optimal_remap(g, Loss::parse("absolute", 3), parse_prior("uniform", 4)), std::invalid_argument);
  EXPECT_THROW(optimal_remap(g, Loss::parse("absolute", 4), parse_prior("uniform", 3)), std::invalid_argument);
}

// ---- Loss::parse -------------------------------------------------------------

TEST(LossParse, Kinds) {
  const Loss a = Loss::parse("absolute", 5), s = Loss::parse("squared", 5), b = Loss::parse("binary", 5),
             p = Loss::parse("power:1.5", 5);
  EXPECT_EQ(a.kind(), Loss::Kind::Absolute);
  EXPECT_EQ(s.kind(), Loss::Kind::Squared);
  EXPECT_EQ(b.kind(), Loss::Kind::Binary);
  EXPECT_EQ(p.kind(), Loss::Kind::Power);
  EXPECT_EQ(a(1, 4), 3);
  EXPECT_EQ(a(4, 1), 3);
  EXPECT_EQ(s(1, 4), 9);
  EXPECT_EQ(b(1, 4), 1);
  EXPECT_EQ(b(2, 2), 0);
  EXPECT_DOUBLE_EQ(p(1, 5), 8);
  EXPECT_DOUBLE_EQ(p.power(), 1.5);
  EXPECT_FALSE(a.general());
  EXPECT_TRUE(p.general());
  const Loss m = Loss::parse(" [[0, 1], [2.5, 0]] ", 1);
  EXPECT_EQ(m.kind(), Loss::Kind::Matrix);
  EXPECT_EQ(m(1, 0), 2.5);
  EXPECT_EQ(m(0, 1), 1);
  EXPECT_TRUE(m.general());
  EXPECT_EQ(Loss::absolute(3).kind(), Loss::Kind::Absolute);
}

TEST(LossParse, Errors) {
  const std::string domain =
      "loss must be 'absolute', 'squared', 'binary', 'power:P' (P > 0) or a JSON (n+1)x(n+1) matrix";
  EXPECT_EQ(message_of([] { Loss::parse("bogus", 3); }), domain + ", but is 'bogus'");
  EXPECT_EQ(message_of([] { Loss::parse("power:0", 3); }), domain + ", but is 'power:0': P must be a finite number > 0");
  for (const char* bad : {"", "Absolute", "absolute ", "power:", "power:-1", "power:nan", "power:inf", "power:1e999",
                          "power: 2", "power:2x", "{}", "[[0,1],[1,0]", "[[0,1],[1,0]] x", "[[0,\"1\"],[1,0]]"})
    EXPECT_THROW(Loss::parse(bad, 1), std::invalid_argument) << "'" << bad << "'";
  EXPECT_EQ(message_of([] { Loss::parse("[[0,2,1],[1,0,1],[1,1,0]]", 2); }),
            "loss must be non-decreasing in |i - r| along each row, but row 0 has 2 at distance 1 and 1 at distance 2");
  EXPECT_EQ(message_of([] { Loss::parse("[[0,-1],[1,0]]", 1); }), "loss must be non-negative, but loss[0][1] is -1");
  EXPECT_EQ(message_of([] { Loss::parse("[[0,1],[1,0]]", 2); }), "loss must be a 3x3 matrix for n = 2, but has 2 rows");
  EXPECT_THROW(Loss::parse("[[0,1],[1]]", 1), std::invalid_argument);
  EXPECT_THROW(Loss::parse("[[0,1,2],[1,0,1]]", 1), std::invalid_argument);
  // A row that rises then falls on one side.
  EXPECT_THROW(Loss::parse("[[0,1,3,2],[1,0,1,2],[2,1,0,1],[3,2,1,0]]", 3), std::invalid_argument);
  // Non-strict monotonicity and asymmetric rows are fine.
  EXPECT_NO_THROW(Loss::parse("[[0,0,5],[0,0,0],[7,1,1]]", 2));
}

TEST(LossParse, SizeCaps) {
  EXPECT_NO_THROW(Loss::parse("power:2", kMaxGeneralLossN));
  EXPECT_EQ(message_of([] { Loss::parse("power:2", kMaxGeneralLossN + 1); }),
            "n must be at most 400 with a power loss (the remap is O(n^3)), but is 401");
  EXPECT_THROW(Loss::parse("[[0]]", kMaxGeneralLossN + 1), std::invalid_argument);
  EXPECT_NO_THROW(Loss::parse("absolute", kMaxMatrixN));
  EXPECT_EQ(message_of([] { Loss::parse("absolute", kMaxMatrixN + 1); }), "n must be an integer in [0, 5000], but is 5001");
  EXPECT_THROW(Loss::parse("binary", -1), std::invalid_argument);
}

// ---- parse_prior ---------------------------------------------------------------

TEST(PriorParse, UniformAndJson) {
  EXPECT_EQ(parse_prior("uniform", 3), (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
  EXPECT_EQ(parse_prior("uniform", 0), (std::vector<double>{1.0}));
  EXPECT_EQ(parse_prior("[1, 3]", 1), (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(parse_prior(" [0, 0, 2] ", 2), (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(parse_prior("[1e-300, 0]", 1), (std::vector<double>{1, 0}));
}

TEST(PriorParse, Errors) {
  EXPECT_EQ(message_of([] { parse_prior("unif", 2); }),
            "prior must be 'uniform' or a JSON array of n+1 non-negative numbers, but is 'unif'");
  EXPECT_EQ(message_of([] { parse_prior("[1, 2]", 2); }), "prior must have n+1 = 3 entries, but has 2");
  EXPECT_EQ(message_of([] { parse_prior("[1, -1, 1]", 2); }), "prior must be non-negative, but prior[1] is -1");
  EXPECT_EQ(message_of([] { parse_prior("[0, 0, 0]", 2); }), "prior must have a positive finite sum, but its sum is 0");
  EXPECT_EQ(message_of([] { parse_prior("[1e308, 1e308]", 1); }),
            "prior must have a positive finite sum, but its sum is inf");
  for (const char* bad : {"", "Uniform", "[1, 2, 3, 4]", "[1, x, 3]", "[1, 2, 3", "[1, 2, 3] 4", "[[1], [2], [3]]",
                          "[NaN, 1, 1]", "[Infinity, 1, 1]", "[1e999, 1, 1]"})
    EXPECT_THROW(parse_prior(bad, 2), std::invalid_argument) << "'" << bad << "'";
  EXPECT_THROW(parse_prior("uniform", kMaxMatrixN + 1), std::invalid_argument);
  EXPECT_THROW(parse_prior("uniform", -1), std::invalid_argument);
}
