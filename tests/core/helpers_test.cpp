// The checks both engines' bindings share for the SQL helpers
// (core/helpers.hpp), the loss and prior built from numbers rather than JSON
// (what PostgreSQL's arrays give), a remapped row, and hide_values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "core/helpers.hpp"
#include "core/loss.hpp"
#include "core/mechanism.hpp"
#include "core/remap.hpp"
#include "messages.hpp"

using namespace optdp;
using test::message_of;

namespace {

TEST(Helpers, SumMechanism) {
  EXPECT_EQ(parse_sum_mechanism("staircase"), SumMechanism::Staircase);
  EXPECT_EQ(parse_sum_mechanism("laplace"), SumMechanism::Laplace);
  EXPECT_EQ(message_of([] { parse_sum_mechanism("Laplace"); }),
            "mechanism must be 'staircase' or 'laplace', but is text 'Laplace'");
}

// The eps found is the least double (to the bisection's end) whose interval fits.
TEST(Helpers, SumEpsIsTheLeastThatFits) {
  for (const auto m : {SumMechanism::Staircase, SumMechanism::Laplace}) {
    for (const double h : {50.0, 3.0, 0.7}) {
      const auto eps = sum_eps_for_half_width(m, h, 0, 10, CostSpec{}, 0.9);
      ASSERT_TRUE(eps.has_value());
      EXPECT_LE(sum_half_width(m, *eps, 0, 10, CostSpec{}, 0.9), h);
      const double below = std::nextafter(*eps, 0.0);
      if (*eps > 0x1p-30) {
        EXPECT_GT(sum_half_width(m, below, 0, 10, CostSpec{}, 0.9), h) << h;
      }
    }
  }
  // a huge half-width fits the least eps tried
  EXPECT_EQ(sum_eps_for_half_width(SumMechanism::Laplace, 1e300, 0, 1, CostSpec{}, 0.5), 0x1p-30);
}

TEST(Helpers, PmfRange) {
  EXPECT_NO_THROW(check_pmf_range(0, kMaxPmfRows - 1));
  EXPECT_NO_THROW(check_pmf_range(5, 5));
  EXPECT_EQ(message_of([] { check_pmf_range(0, kMaxPmfRows); }),
            "hi must be at least lo and hi - lo below 100000000, but lo is 0 and hi is 100000000");
  EXPECT_EQ(message_of([] { check_pmf_range(5, 4); }),
            "hi must be at least lo and hi - lo below 100000000, but lo is 5 and hi is 4");
  // hi - lo does not overflow
  constexpr auto lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  EXPECT_THROW(check_pmf_range(lo, hi), std::invalid_argument);
  EXPECT_EQ(message_of([] { check_pmf_delta(0); }), "delta must be an integer >= 1, but is 0");
  EXPECT_NO_THROW(check_pmf_delta(1));
}

TEST(Helpers, OptimalMethod) {
  EXPECT_EQ(parse_optimal_method("remap"), OptimalMethod::Remap);
  EXPECT_EQ(parse_optimal_method("lp"), OptimalMethod::Lp);
  EXPECT_EQ(message_of([] { parse_optimal_method("LP"); }), "method must be 'remap' or 'lp', but is text 'LP'");
}

TEST(Helpers, NumberList) {
  const std::vector<double> ok{1, -2, 3.5};
  EXPECT_NO_THROW(check_number_list(ok, "scores", 3));
  const std::string want = "scores must be an array of 1 to 3 finite numbers, but ";
  EXPECT_EQ(message_of([] { check_number_list({}, "scores", 3); }), want + "it is empty");
  EXPECT_EQ(message_of([] { check_number_list(std::vector<double>(4, 1.0), "scores", 3); }), want + "it has 4 elements");
  EXPECT_EQ(message_of([] { check_number_list(std::vector<double>{1, INFINITY}, "scores", 3); }),
            want + "element 2 is inf");
  EXPECT_EQ(message_of([] { check_number_list(std::vector<double>{NAN}, "scores", 3); }), want + "element 1 is NaN");
}

// A loss from rows of numbers has the JSON matrix's values and messages.
TEST(Helpers, LossOfRowsIsTheJsonMatrix) {
  const std::vector<std::vector<double>> m{{0, 1, 4}, {1, 0, 1}, {4, 1, 0}};
  auto rows = [](const std::vector<std::vector<double>>& r) {
    return [&r](std::size_t i) { return std::span<const double>(r[i]); };
  };
  const Loss a = Loss::parse("[[0,1,4],[1,0,1],[4,1,0]]", 2), b = Loss::of_rows(2, m.size(), rows(m));
  for (int i = 0; i <= 2; ++i)
    for (int r = 0; r <= 2; ++r) EXPECT_EQ(a(i, r), b(i, r));
  const std::vector<std::pair<std::string, std::vector<std::vector<double>>>> bad{
      {"[[0,1],[1,0]]", {{0, 1}, {1, 0}}},
      {"[[0,1,2],[1,0],[2,1,0]]", {{0, 1, 2}, {1, 0}, {2, 1, 0}}},
      {"[[0,1,2],[-1,0,1],[2,1,0]]", {{0, 1, 2}, {-1, 0, 1}, {2, 1, 0}}},
      {"[[0,2,1],[1,0,1],[2,1,0]]", {{0, 2, 1}, {1, 0, 1}, {2, 1, 0}}},
  };
  for (const auto& item : bad) {
    // named copies: clang 14 cannot capture structured bindings in a lambda
    const std::string& json = item.first;
    const auto& numbers = item.second;
    const std::string want = message_of([&] { Loss::parse(json, 2); });
    EXPECT_NE(want, "(no std::invalid_argument)") << json;
    EXPECT_EQ(message_of([&] { Loss::of_rows(2, numbers.size(), rows(numbers)); }), want) << json;
  }
}

TEST(Helpers, PriorOfValuesIsTheJsonArray) {
  EXPECT_EQ(prior_of_values({1, 2, 1}, 2), parse_prior("[1, 2, 1]", 2));
  for (const auto& item : std::vector<std::pair<std::string, std::vector<double>>>{
           {"[1, 1]", {1, 1}}, {"[1, -1, 1]", {1, -1, 1}}, {"[0, 0, 0]", {0, 0, 0}}}) {
    const std::string& json = item.first;
    const auto& numbers = item.second;
    const std::string want = message_of([&] { parse_prior(json, 2); });
    EXPECT_NE(want, "(no std::invalid_argument)") << json;
    EXPECT_EQ(message_of([&] { prior_of_values(numbers, 2); }), want) << json;
  }
}

TEST(Helpers, RemappedRowIsARowOfTheRemappedMechanism) {
  const GeometricMechanism g(6, 0.4);
  const std::vector<std::int64_t> answer{0, 0, 2, 3, 3, 6, 6};
  const Matrix m = remapped_mechanism(g, answer);
  std::vector<double> row(7);
  for (std::int64_t i = 0; i <= 6; ++i) {
    remapped_row(g, answer, i, row);
    for (std::size_t r = 0; r < 7; ++r) EXPECT_DOUBLE_EQ(row[r], m[static_cast<std::size_t>(i)][r]) << i << " " << r;
  }
}

TEST(Helpers, HideValues) {
  EXPECT_EQ(hide_values("alpha must be in (0, 1), but is 1.5"),
            std::string("alpha must be in (0, 1), but is ") + kValueNotShown);
  EXPECT_EQ(hide_values("hi must be an integer in [lo, n] = [0, 4], but is 9"),
            std::string("hi must be an integer in [lo, n], but is ") + kValueNotShown);
  EXPECT_EQ(hide_values("hi must be at least lo and hi - lo below 100000000, but lo is 0 and hi is 100000000"),
            "hi must be at least lo and hi - lo below 100000000, but the values are not shown (they may be a row's)");
  EXPECT_EQ(hide_values("loss must be a 5x5 matrix for n = 4, but has 2 rows"),
            "loss must be an (n+1)x(n+1) matrix, but the values are not shown (they may be a row's)");
}

}  // namespace

// Figures in messages: 4 significant digits; Up never below the value, Down
// never above it, both reading back as doubles (format_figure).
TEST(Format, FiguresToFourDigits) {
  using optdp::format_figure;
  using optdp::Rounding;
  EXPECT_EQ(format_figure(4.45888308336), "4.459");
  EXPECT_EQ(format_figure(4.45888308336, Rounding::Down), "4.458");
  EXPECT_EQ(format_figure(0.6931471805599454, Rounding::Up), "0.6932");
  EXPECT_EQ(format_figure(0.6931471805599454, Rounding::Down), "0.6931");
  EXPECT_EQ(format_figure(1.7265855487137056, Rounding::Up), "1.727");
  EXPECT_EQ(format_figure(0.08776130853525071, Rounding::Up), "0.08777");
  EXPECT_EQ(format_figure(690.7755278982138, Rounding::Up), "690.8");
  EXPECT_EQ(format_figure(9.999999999999999e-06, Rounding::Up), "1e-05");
  EXPECT_EQ(format_figure(9.999999999999999e-06, Rounding::Down), "9.999e-06");
  EXPECT_EQ(format_figure(9.9996, Rounding::Up), "10");
  EXPECT_EQ(format_figure(1.00001, Rounding::Down), "1");
  EXPECT_EQ(format_figure(0.99999, Rounding::Down), "0.9999");
  // values that are 4-digit decimals stay as written, whichever the rounding
  for (double v : {0.5, 1.0, 4.5, 1e-06, 0.1, 2e-06, 1e-300, 5e-324, 1234.0})
    for (Rounding r : {Rounding::Nearest, Rounding::Up, Rounding::Down})
      EXPECT_EQ(format_figure(v, r), optdp::format_double(v)) << v;
  EXPECT_EQ(format_figure(-0.6931471805599454, Rounding::Up), "-0.6931");
  EXPECT_EQ(format_figure(12345678.0, Rounding::Up), "12350000");
  EXPECT_EQ(format_figure(0.0), "0");
  EXPECT_EQ(format_figure(std::numeric_limits<double>::infinity()), "inf");
  // Up and Down bracket every value
  for (double v = 1e-9; v < 1e9; v *= 1.37) {
    EXPECT_GE(std::strtod(format_figure(v, Rounding::Up).c_str(), nullptr), v);
    EXPECT_LE(std::strtod(format_figure(v, Rounding::Down).c_str(), nullptr), v);
  }
}
