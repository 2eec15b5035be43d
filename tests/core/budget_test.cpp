// The ledger's budget arithmetic (core/budget.hpp): epsilon in units of
// 10^-12 and delta in units of 2^-120, charges rounded up and totals down,
// checked against exact rational arithmetic (Boost.Multiprecision).
#include <gtest/gtest.h>

#include "exact.hpp"

#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "core/budget.hpp"

using namespace optdp;

namespace {

namespace mp = boost::multiprecision;
using Int = mp::cpp_int;
using Rational = mp::cpp_rational;

using optdp::test::exact;

Int floor_of(const Rational& r) { return mp::numerator(r) / mp::denominator(r); }  // r >= 0
Int ceil_of(const Rational& r) {
  const Int f = floor_of(r);
  return Rational(f) == r ? f : f + 1;
}

Int big(DeltaUnits u) { return (Int(static_cast<std::uint64_t>(u >> 64)) << 64) + static_cast<std::uint64_t>(u); }

const Rational kTwo120 = Rational(Int(1) << 120);
const DeltaUnits kOne = DeltaUnits{1} << 120;  // delta 1 in units

TEST(DeltaUnits, SmallValues) {
  EXPECT_EQ(delta_charge_units(0.0), DeltaUnits{0});
  EXPECT_EQ(delta_charge_units(-0.0), DeltaUnits{0});
  EXPECT_EQ(delta_total_units(0.0), DeltaUnits{0});
  EXPECT_EQ(delta_total_units(-0.0), DeltaUnits{0});
  EXPECT_EQ(delta_charge_units(1.0), kOne);
  EXPECT_EQ(delta_charge_units(0.5), kOne / 2);
  EXPECT_EQ(delta_total_units(0.5), kOne / 2);
  EXPECT_EQ(delta_charge_units(std::ldexp(1.0, -120)), DeltaUnits{1});
  EXPECT_EQ(delta_total_units(std::ldexp(1.0, -120)), DeltaUnits{1});
  // Below one unit: a charge costs one unit, a total is worth none.
  EXPECT_EQ(delta_charge_units(std::numeric_limits<double>::denorm_min()), DeltaUnits{1});
  EXPECT_EQ(delta_total_units(std::numeric_limits<double>::denorm_min()), DeltaUnits{0});
  EXPECT_EQ(delta_charge_units(std::ldexp(1.0, -121)), DeltaUnits{1});
  EXPECT_EQ(delta_charge_units(std::ldexp(3.0, -121)), DeltaUnits{2});  // 1.5 units
  EXPECT_EQ(delta_total_units(std::ldexp(3.0, -121)), DeltaUnits{1});
  const double below_one = std::nextafter(1.0, 0.0);
  EXPECT_EQ(delta_total_units(below_one), kOne - (DeltaUnits{1} << 67));  // 1 - 2^-53
}

TEST(DeltaUnits, ExactForEveryDeltaOfPractice) {
  // Every double >= 2^-68 is a multiple of 2^-120: charge and total are equal,
  // so a total pays exactly one release at the same delta.
  for (double d : {1e-5, 1e-6, 1e-7, 1e-9, 1e-12, 1e-16, 3e-13, 0.1, 0.3, std::ldexp(1.0, -68), 0.999999}) {
    SCOPED_TRACE(d);
    EXPECT_EQ(delta_charge_units(d), delta_total_units(d));
    EXPECT_EQ(Rational(big(delta_charge_units(d))), exact(d) * kTwo120);
    EXPECT_EQ(units_to_delta(delta_charge_units(d)), d);
  }
  // Just below 2^-68 the ulp is 2^-121: odd multiples round.
  const double odd = std::nextafter(std::ldexp(1.0, -68), 0.0);  // 2^-68 - 2^-121
  EXPECT_EQ(delta_charge_units(odd), DeltaUnits{1} << 52);
  EXPECT_EQ(delta_total_units(odd), (DeltaUnits{1} << 52) - 1);
}

TEST(DeltaUnits, RoundingAgainstExactArithmetic) {
  std::mt19937_64 gen(20240611);
  std::uniform_real_distribution<double> exponent(-1100.0, 0.0);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 20000; ++i) {
    double d = std::ldexp(mantissa(gen), static_cast<int>(exponent(gen)));
    if (!(d < 1)) d = 0.75;
    const Rational scaled = exact(d) * kTwo120;
    const Int up = big(delta_charge_units(d)), down = big(delta_total_units(d));
    ASSERT_EQ(up, std::max(ceil_of(scaled), Int(d > 0 ? 1 : 0))) << d;
    ASSERT_EQ(down, floor_of(scaled)) << d;
    ASSERT_GE(Rational(up), scaled) << d;  // never below the true charge
    ASSERT_LE(Rational(down), scaled) << d;  // never above the true total
  }
}

TEST(DeltaUnits, Domains) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double bad : {-1e-300, -1.0, 1.0, 2.0, inf, -inf, nan}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(delta_total_units(bad), std::invalid_argument);
  }
  for (double bad : {-1e-300, -1.0, std::nextafter(1.0, 2.0), 2.0, inf, nan}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(delta_charge_units(bad), std::invalid_argument);
  }
  try {
    delta_total_units(2.0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "total_delta must be a number in [0, 1), but is 2");
  }
  try {
    delta_charge_units(-0.5);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "delta must be a number in [0, 1], but is -0.5");
  }
}

TEST(DeltaUnits, ManyTinyChargesNeverExceedTheTotal) {
  // Sequential composition with the check spent + cost <= total: the number of
  // charges of delta d that fit a total T is floor(T units / d units), and
  // with exact units that is the exact floor(T / d) for deltas of practice.
  struct Case {
    double total, delta;
  };
  for (const Case c : {Case{1e-5, 1e-7}, Case{1e-5, 1e-6}, Case{1e-6, 1e-6}, Case{1e-5, 3e-9}, Case{1e-12, 1e-16},
                       Case{0.3, 0.1}, Case{1e-9, std::ldexp(1.0, -50)},
                       Case{std::ldexp(1000.0, -120), std::ldexp(3.0, -124)}}) {  // 3/16 of a unit costs 1
    SCOPED_TRACE(testing::Message() << c.total << " / " << c.delta);
    const DeltaUnits total = delta_total_units(c.total), cost = delta_charge_units(c.delta);
    DeltaUnits spent = 0;
    std::uint64_t n = 0;
    while (delta_budget_allows(spent, cost, total) && n < 10000000) {
      spent += cost;
      ++n;
    }
    ASSERT_LT(n, 10000000u);
    EXPECT_LE(spent, total);
    // The true spend, n times the exact delta, is within the true total ...
    EXPECT_LE(exact(c.delta) * n, exact(c.total));
    // ... and one more charge would exceed it (unless it was rounded, below 2^-68).
    if (c.delta >= std::ldexp(1.0, -68)) {
      EXPECT_GT(exact(c.delta) * (n + 1), exact(c.total));
    } else {
      EXPECT_EQ(n, 1000u);  // rounded up: fewer fit than exactly would, never more
    }
  }
  // 0.1 + 0.1 + 0.1 > 0.3 in doubles: only two fit, as exact arithmetic says.
  DeltaUnits spent = 0;
  int fits = 0;
  while (delta_budget_allows(spent, delta_charge_units(0.1), delta_total_units(0.3))) {
    spent += delta_charge_units(0.1);
    ++fits;
  }
  EXPECT_EQ(fits, 2);
}

TEST(DeltaUnits, AllowsAtTheEdges) {
  EXPECT_TRUE(delta_budget_allows(0, 0, 0));  // a release with delta 0 fits any delta budget
  EXPECT_FALSE(delta_budget_allows(0, 1, 0));
  EXPECT_TRUE(delta_budget_allows(kOne - 1, 0, kOne - 1));
  EXPECT_FALSE(delta_budget_allows(kOne - 1, 1, kOne - 1));
  EXPECT_FALSE(delta_budget_allows(0, kOne, kOne - 1));  // a charge of 1 never fits a total below 1
  EXPECT_TRUE(delta_budget_allows(1, kOne - 2, kOne - 1));
}

TEST(DeltaUnits, Text) {
  EXPECT_EQ(delta_units_text(0), "0");
  EXPECT_EQ(delta_units_text(kOne), "1329227995784915872903807060280344576");
  EXPECT_EQ(delta_units_text(~DeltaUnits{0}), "340282366920938463463374607431768211455");
  for (DeltaUnits u : {DeltaUnits{0}, DeltaUnits{1}, kOne - 1, kOne, DeltaUnits{1} << 122,
                       delta_charge_units(1e-5), delta_total_units(0.123456789)}) {
    const auto back = parse_delta_units(delta_units_text(u));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, u);
  }
  for (const char* bad : {"", "-1", "+1", " 1", "1 ", "1.0", "1e5", "abc", "0x10",
                          "5316911983139663491615228241121378305",  // 2^122 + 1
                          "340282366920938463463374607431768211456",  // 2^128
                          "00000000000000000000000000000000000000001"}) {  // 41 digits
    SCOPED_TRACE(bad);
    EXPECT_FALSE(parse_delta_units(bad).has_value());
  }
  EXPECT_EQ(*parse_delta_units("0000000000000000000000000000000000000001"), DeltaUnits{1});  // 40 digits
}

TEST(DeltaUnits, ToDouble) {
  EXPECT_EQ(units_to_delta(0), 0.0);
  EXPECT_EQ(units_to_delta(1), std::ldexp(1.0, -120));
  EXPECT_EQ(units_to_delta(kOne), 1.0);
  // Correctly rounded: as IEEE multiplication rounds the exact product.
  EXPECT_EQ(units_to_delta(delta_charge_units(1e-6) * 10), 10 * 1e-6);
  EXPECT_EQ(units_to_delta(delta_charge_units(0.1) * 3), 3 * 0.1);
  EXPECT_EQ(units_to_delta(delta_total_units(1e-5) - delta_charge_units(1e-6)), 1e-5 - 1e-6);
}

TEST(EpsilonUnits, Unchanged) {
  EXPECT_EQ(charge_units(0.1), 100000000001);
  EXPECT_EQ(charge_units(0.25), 250000000000);
  EXPECT_EQ(charge_units(1e-300), 1);
  EXPECT_EQ(total_units(0.3), 299999999999);
  EXPECT_EQ(total_units(1e6), 1000000000000000000);
  EXPECT_THROW(total_units(0.0), std::invalid_argument);
  EXPECT_THROW(charge_units(1e6 * 2), std::invalid_argument);
}

}  // namespace
