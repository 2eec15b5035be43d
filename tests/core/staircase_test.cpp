#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "core/format.hpp"
#include "core/staircase.hpp"
#include "stats.hpp"

using namespace optdp;

// ---- docs/math.md reference values (delta = 1) -----------------------------------

TEST(StaircaseAnalytics, ReferenceValuesL1) {
  struct Row {
    double eps, staircase, laplace;
  } rows[] = {{1, 0.959517, 1.0}, {3, 0.234821, 1.0 / 3}, {6, 0.049911, 1.0 / 6}};
  for (auto [eps, st, lap] : rows) {
    const double g = staircase_gamma(eps, Cost::L1);
    EXPECT_NEAR(g, 1 / (1 + std::exp(eps / 2)), 1e-15);
    EXPECT_NEAR(staircase_cost(eps, 1, g, Cost::L1), st, 5e-7) << eps;
    EXPECT_NEAR(staircase_cost(eps, 1, g, Cost::L1), std::exp(eps / 2) / std::expm1(eps), 1e-12) << eps;
    EXPECT_NEAR(laplace_cost(eps, 1, Cost::L1), lap, 1e-12);
  }
}

TEST(StaircaseAnalytics, ReferenceValuesL2) {
  EXPECT_NEAR(staircase_gamma(1, Cost::L2), 0.416737, 5e-7);
  EXPECT_NEAR(staircase_cost(1, 1, staircase_gamma(1, Cost::L2), Cost::L2), 1.918104, 5e-7);
  EXPECT_NEAR(staircase_cost(6, 1, staircase_gamma(6, Cost::L2), Cost::L2), 0.014106, 5e-7);
  EXPECT_NEAR(laplace_cost(1, 1, Cost::L2), 2.0, 1e-12);
  EXPECT_NEAR(laplace_cost(6, 1, Cost::L2), 0.055556, 5e-7);
}

// Every finite eps > 0 gives a number: gamma* in [0, 1/2], the optimal cost
// never NaN, non-increasing in eps, at most Laplace's, equal to the cost at
// gamma* where both are representable, and with the known limits: gamma* ->
// 1/2 and cost -> Laplace's as eps -> 0; cost -> 0 as eps -> inf.
TEST(StaircaseAnalytics, ExtremeEpsilonsGiveNumbers) {
  const double epss[] = {5e-324, 1e-300, 1e-20, 1e-9, 1e-3, 0.5, 1, 6, 40, 700, 1000, 1490, 5000, 11000, 12000, 1e6, 1e308};
  for (Cost c : {Cost::L1, Cost::L2}) {
    double prev = INFINITY;
    for (double eps : epss) {
      SCOPED_TRACE(std::to_string(eps) + (c == Cost::L1 ? " l1" : " l2"));
      const double g = staircase_gamma(eps, c);
      EXPECT_GE(g, 0.0);
      EXPECT_LE(g, 0.5);
      const double best = staircase_optimal_cost(eps, 1, c);
      EXPECT_FALSE(std::isnan(best));
      EXPECT_GE(best, 0.0);
      EXPECT_LE(best, prev);
      EXPECT_LE(best, laplace_cost(eps, 1, c) * (1 + 1e-12));
      if (eps >= 1e-9 && eps <= 40) {
        EXPECT_NEAR(best, staircase_cost(eps, 1, g, c), 1e-12 * best);
      }
      prev = best;
    }
    EXPECT_NEAR(staircase_gamma(1e-20, c), 0.5, 1e-15);
    EXPECT_NEAR(staircase_optimal_cost(1e-20, 1, c), laplace_cost(1e-20, 1, c), 1e-9 * laplace_cost(1e-20, 1, c));
    EXPECT_EQ(staircase_optimal_cost(1e308, 1, c), 0.0);
  }
}

TEST(StaircaseAnalytics, GammaStarIsTheMinimumAndCostScalesWithDelta) {
  for (double eps : {0.1, 0.5, 1.0, 3.0, 6.0, 12.0}) {
    for (Cost c : {Cost::L1, Cost::L2}) {
      const double g = staircase_gamma(eps, c);
      const double best = staircase_cost(eps, 1, g, c);
      for (double dg : {-0.02, -0.002, 0.002, 0.02}) {
        const double other = std::clamp(g + dg, 0.0, 1.0);
        EXPECT_GE(staircase_cost(eps, 1, other, c), best * (1 - 1e-12)) << eps << " " << dg;
      }
      // Staircase beats Laplace at every eps.
      EXPECT_LT(best, laplace_cost(eps, 1, c) * (1 + 1e-12)) << eps;
      const double k = c == Cost::L1 ? 2.5 : 6.25;
      EXPECT_NEAR(staircase_cost(eps, 2.5, g, c), k * best, 1e-9 * k * best);
    }
  }
}

TEST(StaircaseAnalytics, Errors) {
  EXPECT_THROW(staircase_gamma(0, Cost::L1), std::invalid_argument);
  EXPECT_THROW(staircase_gamma(NAN, Cost::L1), std::invalid_argument);
  EXPECT_THROW(staircase_cost(1, -1, 0.5, Cost::L1), std::invalid_argument);
  EXPECT_THROW(staircase_cost(1, 1, 1.5, Cost::L1), std::invalid_argument);
  EXPECT_THROW(laplace_cost(INFINITY, 1, Cost::L1), std::invalid_argument);
}

TEST(CostSpec, Parsing) {
  EXPECT_EQ(parse_cost_spec("l1").cost, Cost::L1);
  EXPECT_EQ(parse_cost_spec("l2").cost, Cost::L2);
  auto g = parse_cost_spec("gamma=0.25");
  EXPECT_TRUE(g.fixed_gamma);
  EXPECT_EQ(g.gamma, 0.25);
  EXPECT_EQ(parse_cost_spec("gamma=0").gamma, 0.0);
  EXPECT_EQ(parse_cost_spec("gamma=1").gamma, 1.0);
  for (const char* bad : {"", "L1", "l3", "gamma=", "gamma=1.5", "gamma=-0.1", "gamma=nan", "gamma= 0.5",
                          "gamma=0.5x", "gamma=inf"}) {
    EXPECT_THROW(parse_cost_spec(bad), std::invalid_argument) << bad;
  }
  try {
    parse_cost_spec("l3");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is 'l3'");
  }
  EXPECT_THROW(parse_cost("gamma=0.5"), std::invalid_argument);
}

// ---- integer staircase ------------------------------------------------------------

TEST(IntegerStaircase, PmfSumsToOneAndIsEpsDP) {
  for (auto [eps, D, r] : {std::tuple{1.0, 1, 1}, {1.0, 5, 2}, {3.0, 10, 3}, {0.5, 4, 4}, {2.0, 7, 1}}) {
    IntegerStaircase s(eps, D, r);
    double total = 0;
    const int range = 4000;
    for (int i = -range; i <= range; ++i) total += s.pmf(i);
    EXPECT_NEAR(total, 1.0, 1e-9) << eps << " " << D << " " << r;
    // Shifting by at most D changes the probability by a factor of at most e^eps.
    for (int i = -50; i <= 50; ++i)
      for (int d = 1; d <= D; ++d) {
        EXPECT_LE(s.pmf(i), s.pmf(i + d) * std::exp(eps) * (1 + 1e-12));
        EXPECT_LE(s.pmf(i + d), s.pmf(i) * std::exp(eps) * (1 + 1e-12));
      }
  }
}

TEST(IntegerStaircase, WithSensitivityOneIsTheGeometricMechanism) {
  IntegerStaircase s(std::log(2.0), 1, 1);  // alpha = 1/2
  for (int i = -10; i <= 10; ++i) EXPECT_NEAR(s.pmf(i), (1.0 / 3) * std::pow(0.5, std::abs(i)), 1e-15) << i;
}

TEST(IntegerStaircase, ExpectedCostMatchesThePmf) {
  for (auto [eps, D, r] : {std::tuple{1.0, 5, 2}, {3.0, 10, 3}, {0.5, 4, 4}}) {
    IntegerStaircase s(eps, D, r);
    long double l1 = 0, l2 = 0;
    for (int i = -20000; i <= 20000; ++i) {
      l1 += std::abs(i) * static_cast<long double>(s.pmf(i));
      l2 += static_cast<long double>(i) * i * s.pmf(i);
    }
    EXPECT_NEAR(static_cast<double>(s.expected_cost(Cost::L1)), static_cast<double>(l1), 1e-9);
    EXPECT_NEAR(static_cast<double>(s.expected_cost(Cost::L2)), static_cast<double>(l2), 1e-7);
  }
}

TEST(IntegerStaircase, LargeSensitivityApproachesTheContinuousOptimum) {
  const std::int64_t D = 1 << 20;
  for (double eps : {0.5, 1.0, 3.0, 6.0}) {
    for (Cost c : {Cost::L1, Cost::L2}) {
      const auto r = IntegerStaircase::optimal_r(eps, D, c);
      const double scale = c == Cost::L1 ? double(D) : double(D) * double(D);
      const double discrete = static_cast<double>(IntegerStaircase(eps, D, r).expected_cost(c)) / scale;
      const double continuous = staircase_cost(eps, 1, staircase_gamma(eps, c), c);
      EXPECT_NEAR(discrete, continuous, 1e-5 * continuous) << eps;
    }
  }
}

TEST(IntegerStaircase, OptimalRBySmallScan) {
  EXPECT_EQ(IntegerStaircase::optimal_r(1.0, 1, Cost::L1), 1);
  for (double eps : {0.3, 1.0, 4.0}) {
    const std::int64_t D = 9;
    const auto best = IntegerStaircase::optimal_r(eps, D, Cost::L1);
    for (std::int64_t r = 1; r <= D; ++r)
      EXPECT_LE(IntegerStaircase(eps, D, best).expected_cost(Cost::L1),
                IntegerStaircase(eps, D, r).expected_cost(Cost::L1));
  }
}

TEST(IntegerStaircase, ChiSquareAgainstExactPmf) {
  SeededRng rng(31);
  for (auto [eps, D, r] : {std::tuple{1.0, 1, 1}, {1.0, 5, 2}, {3.0, 10, 3}, {0.5, 4, 4}, {0.2, 3, 1}}) {
    IntegerStaircase s(eps, D, r);
    std::vector<std::int64_t> samples(200000);
    for (auto& v : samples) v = s(rng);
    auto chi = test::chi_square_samples(samples, [&](std::int64_t i) { return s.pmf(i); });
    EXPECT_GT(chi.p_value, 1e-4) << eps << " " << D << " " << r << " chi2=" << chi.statistic << " dof=" << chi.dof;
  }
}

TEST(IntegerStaircase, ChiSquareDetectsAWrongShape) {
  SeededRng rng(32);
  IntegerStaircase s(1.0, 5, 2), other(1.0, 5, 3);
  std::vector<std::int64_t> samples(200000);
  for (auto& v : samples) v = s(rng);
  EXPECT_LT(test::chi_square_samples(samples, [&](std::int64_t i) { return other.pmf(i); }).p_value, 1e-6);
}

TEST(IntegerStaircase, Errors) {
  EXPECT_THROW(IntegerStaircase(1.0, 0, 1), std::invalid_argument);
  EXPECT_THROW(IntegerStaircase(1.0, 5, 0), std::invalid_argument);
  EXPECT_THROW(IntegerStaircase(1.0, 5, 6), std::invalid_argument);
  EXPECT_THROW(IntegerStaircase(-1.0, 5, 2), std::invalid_argument);
}

// ---- grid ---------------------------------------------------------------------

TEST(Grid, PowerOfTwoFineEnoughAndBounded) {
  for (double eps : {2e-9, 0.1, 1.0, 6.0, 30.0, 700.0}) {
    for (auto [lo, hi] : {std::pair{0.0, 1.0}, {-5.0, 1000.0}, {0.0, 1e-6}, {100.0, 100.5}, {0.0, 3e9},
                          {-101.0, -100.0}, {1e300, 1e300 * (1 + 1e-15)}}) {
      const Grid g = make_grid(eps, lo, hi);
      int e;
      EXPECT_EQ(std::frexp(g.g, &e), 0.5) << "g is a power of two";
      const double delta = std::max({hi - lo, std::fabs(lo), std::fabs(hi)});  // the sensitivity
      const double c = std::exp(eps / 2) / std::expm1(eps), noise = delta * c;
      EXPECT_LE(g.g, std::max(noise, delta * 0x1p-20) * 0x1p-20) << eps << " " << lo << " " << hi;
      EXPECT_GT(g.g, delta * std::clamp(c, 0x1p-20, 1.0) * 0x1p-21) << eps << " " << lo << " " << hi;
      EXPECT_GE(g.D(), 1 << 20);
      EXPECT_LE(g.D(), (std::int64_t{1} << 41) + 2);
      EXPECT_EQ(g.quantize(-1e308, lo, hi), g.lower_q);
      EXPECT_EQ(g.quantize(1e308, lo, hi), g.upper_q);
      EXPECT_EQ(g.quantize(INFINITY, lo, hi), g.upper_q);
    }
  }
}

TEST(Grid, IntegerDataWithIntegerBoundsIsExact) {
  for (auto [lo, hi] : {std::pair{0, 1000}, {100, 1100}, {-1100, -100}, {-2097151, 0}, {2097150, 2097151}}) {
    const Grid g = make_grid(1.0, lo, hi);
    EXPECT_LE(g.g, 1.0) << lo << " " << hi;
    for (int x = lo; x <= hi; x += std::max(1, (hi - lo) / 1000))
      EXPECT_EQ(static_cast<double>(g.quantize(x, lo, hi)) * g.g, x) << x;
  }
}

// Neighbouring databases differ by adding or removing one row, or replacing
// one (docs/sums.md). The noise is calibrated to D(), so D() must bound the
// change of the integer sum for both: a row's grid value q alone (add or
// remove: the sum of {} against {q}) and the difference of two rows' values
// (replace). So D = max(upper_q - lower_q, |lower_q|, |upper_q|), which is
// more than upper_q - lower_q when 0 is outside [lower, upper]. The grid is
// chosen from Delta = max(upper - lower, |lower|, |upper|): the same g as
// for [min(lower, 0), max(upper, 0)], whose width is Delta.
TEST(Grid, SensitivityCoversAddingAndRemovingARow) {
  struct Case {
    double lo, hi, wide_lo, wide_hi;  // the bounds, and bounds through 0 with the same Delta
  } cases[] = {{100, 101, 0, 101},         {-101, -100, -101, 0}, {-3, 5, -3, 5},       {0, 10, 0, 10},
               {50000, 200000, 0, 200000}, {0.25, 0.5, 0, 0.5},   {-7.5, -0.125, -7.5, 0}, {1e300, 1.5e300, 0, 1.5e300}};
  for (double eps : {2e-9, 0.1, 1.0, 6.0, 60.0}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::to_string(eps) + " [" + format_double(c.lo) + ", " + format_double(c.hi) + "]");
      const Grid g = make_grid(eps, c.lo, c.hi);
      const std::int64_t width = g.upper_q - g.lower_q;
      const std::int64_t expected = std::max({width, std::abs(g.lower_q), std::abs(g.upper_q)});
      EXPECT_EQ(g.D(), expected);
      if (c.lo >= 0) {
        EXPECT_EQ(g.D(), g.upper_q);
      }
      if (c.hi <= 0) {
        EXPECT_EQ(g.D(), -g.lower_q);
      }
      if (c.lo <= 0 && c.hi >= 0) {
        EXPECT_EQ(g.D(), width);
      }
      // The grid and the sensitivity are those of bounds through 0 with the same Delta.
      const Grid wide = make_grid(eps, c.wide_lo, c.wide_hi);
      EXPECT_EQ(g.g, wide.g);
      EXPECT_NEAR(static_cast<double>(g.D()), static_cast<double>(wide.D()), 1.0);
      const double delta = std::max({c.hi - c.lo, std::fabs(c.lo), std::fabs(c.hi)});
      EXPECT_LE(std::fabs(static_cast<double>(g.D()) * g.g - delta), g.g);
      EXPECT_GE(g.D(), 1 << 20);
      EXPECT_LE(g.D(), (std::int64_t{1} << 41) + 2);
      // Clamped sums of {} (0) against {upper}, {lower} and rows beyond the
      // bounds, in grid units and as released values; and replacing one row.
      for (double x : {c.hi, c.lo, c.hi * 4 + 1, c.lo * 4 - 1, (c.lo + c.hi) / 2, -1e308, 1e308}) {
        const std::int64_t q = g.quantize(x, c.lo, c.hi);
        EXPECT_LE(std::abs(q), g.D()) << "x = " << x;
        EXPECT_LE(std::fabs(static_cast<double>(q) * g.g), static_cast<double>(g.D()) * g.g) << "x = " << x;
        for (double y : {c.hi, c.lo}) EXPECT_LE(std::abs(q - g.quantize(y, c.lo, c.hi)), g.D()) << x << " " << y;
      }
      // The bound is tight: the row that moves the sum most moves it by D.
      EXPECT_EQ(std::max({std::abs(g.quantize(c.hi, c.lo, c.hi)), std::abs(g.quantize(c.lo, c.lo, c.hi)),
                          g.quantize(c.hi, c.lo, c.hi) - g.quantize(c.lo, c.lo, c.hi)}),
                g.D());
    }
  }
  // The audit's cases: [50000, 200000] has Delta = 200000, not 150000, and
  // [100, 101] has Delta = 101, not 1.
  const Grid audit = make_grid(1, 50000, 200000);
  EXPECT_EQ(static_cast<double>(audit.D()) * audit.g, 200000.0);
  const Grid narrow = make_grid(1, 100, 101);
  EXPECT_EQ(static_cast<double>(narrow.D()) * narrow.g, 101.0);
  EXPECT_EQ(narrow.upper_q - narrow.lower_q, narrow.D() / 101);
}

// quantize multiplies by 1/g and rounds with one instruction; it must agree
// with the definition, llrint(clamp(x) / g), bit for bit: at the extremes of
// the grid (g from 2^-1000 to 2^1003), on ties (odd multiples of g/2, which
// go to even), and on random doubles of every magnitude inside the bounds.
TEST(Grid, QuantizeIsRoundOfClampOverG) {
  std::mt19937_64 gen(20261122);
  const std::pair<double, double> bounds[] = {{0.0, 1.0},      {-5.0, 1000.0}, {0.0, 1e-6},     {100.0, 100.5},
                                              {0.0, 3e9},      {-1e300, 1e300}, {0.0, 0x1p-960}, {-0x1p-950, 0x1p-950},
                                              {-1e15, -1e-15}, {0.0, 1.7e308}};
  for (double eps : {2e-9, 0.1, 1.0, 6.0, 700.0}) {
    for (const auto& bound : bounds) {
      const double lo = bound.first, hi = bound.second;  // clang 14 cannot capture structured bindings
      const Grid g = make_grid(eps, lo, hi);
      EXPECT_EQ(g.inv_g * g.g, 1.0);
      auto expected = [&](double x) { return std::llrint(std::clamp(x, lo, hi) / g.g); };
      for (std::int64_t k : {g.lower_q, g.upper_q, (g.lower_q + g.upper_q) / 2}) {
        for (double half : {-0.5, 0.5, 0.0, 0.25}) {  // ties k +- 1/2 and points near them
          const double x = (static_cast<double>(k) + half) * g.g;
          ASSERT_EQ(g.quantize(x, lo, hi), expected(x)) << eps << " [" << lo << ", " << hi << "] x=" << x;
        }
      }
      std::uniform_real_distribution<double> unit(0.0, 1.0);
      std::uniform_int_distribution<int> exponent(-1074, 1023);
      for (int i = 0; i < 2000; ++i) {
        const double x = i % 2 ? lo + (hi - lo) * unit(gen)
                               : std::ldexp(unit(gen), exponent(gen)) * (gen() % 2 ? 1 : -1);
        ASSERT_EQ(g.quantize(x, lo, hi), expected(x)) << eps << " [" << lo << ", " << hi << "] x=" << x;
      }
    }
  }
}

// add_to_int128 (the sums' per-row step on the engines' state bytes) is
// __int128 addition: across the carry and borrow between the two words, at
// the extremes of q, and on random sums at an unaligned address.
TEST(Grid, AddToInt128IsInt128Addition) {
  std::mt19937_64 gen(20261127);
  const __int128 one = 1;
  const __int128 min = static_cast<__int128>(static_cast<unsigned __int128>(1) << 127);
  const __int128 starts[] = {0, -1, 1, (one << 64) - 1, -(one << 64), one << 64, (one << 63) - 1, -(one << 63),
                             (one << 100) + 5, -(one << 100) - 5, ~min, min};
  const std::int64_t qs[] = {0, 1, -1, INT64_MAX, INT64_MIN, 1LL << 62, -(1LL << 62), 12345, -12345};
  alignas(16) unsigned char buf[24];
  auto check = [&](__int128 start, std::int64_t q) {
    std::memcpy(buf + 4, &start, sizeof start);  // 4-byte aligned, as in a bytea state
    add_to_int128(buf + 4, q);
    __int128 got;
    std::memcpy(&got, buf + 4, sizeof got);
    // modulo 2^128, as the state's sum (no row total comes near 2^127)
    const __int128 want = static_cast<__int128>(static_cast<unsigned __int128>(start) +
                                                static_cast<unsigned __int128>(static_cast<__int128>(q)));
    ASSERT_TRUE(got == want) << static_cast<long long>(start >> 64) << ":" << static_cast<unsigned long long>(start)
                             << " + " << q;
  };
  for (__int128 start : starts)
    for (std::int64_t q : qs) check(start, q);
  for (int i = 0; i < 100000; ++i) {
    const auto bits = (static_cast<unsigned __int128>(gen()) << 64) | gen();
    const __int128 start = static_cast<__int128>(bits) >> (gen() % 128);
    check(start, static_cast<std::int64_t>(gen()) >> (gen() % 64));
  }
}

TEST(Grid, Errors) {
  EXPECT_THROW(make_grid(1, 1, 1), std::invalid_argument);
  EXPECT_THROW(make_grid(1, 2, 1), std::invalid_argument);
  EXPECT_THROW(make_grid(1, -INFINITY, 1), std::invalid_argument);
  EXPECT_THROW(make_grid(1, 0, NAN), std::invalid_argument);
  EXPECT_THROW(make_grid(1, -1.7e308, 1.7e308), std::invalid_argument);  // width overflows
  EXPECT_THROW(make_grid(1e-12, 0, 1), std::invalid_argument);
  EXPECT_THROW(make_grid(1, 0, 0x1p-961), std::invalid_argument);
  EXPECT_THROW(make_grid(1, 0x1p-1000, 0x1p-999), std::invalid_argument);
  // Far from 0 is no error: the grid follows Delta = max(upper - lower, |lower|, |upper|).
  const Grid far = make_grid(1, 1e300, 1e300 * (1 + 1e-15));
  EXPECT_EQ(far.D(), far.upper_q);
  EXPECT_NO_THROW(make_grid(1, 0x1p-950, 0x1p-950 + 0x1p-1000));  // width below 2^-960, Delta is not
  auto message = [](auto f) -> std::string {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message([] { make_grid(1, 2, 1); }), "lower must be less than upper, but lower is 2 and upper is 1");
  EXPECT_EQ(message([] { make_grid(1, -1.7e308, 1.7e308); }), "upper - lower must be finite, but is inf");
  EXPECT_EQ(message([] { make_grid(1, 0, 5e-324, "delta"); }),
            "delta must be at least 2^-960 (1.1e-289), but is " + format_double(5e-324));
  EXPECT_EQ(message([] { make_grid(1, -0x1p-962, 0x1p-962); }),
            "upper - lower must be at least 2^-960 (1.1e-289), but is " + format_double(0x1p-961));
  EXPECT_EQ(message([] { make_grid(1, 0x1p-1000, 0x1p-999); }),
            "max(upper - lower, |lower|, |upper|) must be at least 2^-960 (1.1e-289), but is " +
                format_double(0x1p-999));
  EXPECT_EQ(message([] { make_grid(1, -0x1p-999, -0x1p-1000); }),
            "max(upper - lower, |lower|, |upper|) must be at least 2^-960 (1.1e-289), but is " +
                format_double(0x1p-999));
}
