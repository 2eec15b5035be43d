// Grouped releases by privacy unit, the core (core/grouped.hpp): the options
// parser, the plan's budget split and parameter checks, and the bounding
// accumulator's exact totals (a seeded Rng; no noise involved), plus chi-square
// tests (Boost.Math p-values, fixed seeds) that the G kept keys and the R kept
// rows are uniform subsets. The SQL-level statistics (empirical epsilon,
// partition selection frequencies) are in tests/sqlite/grouped_audit_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <sodium.h>

#include "core/accounting.hpp"
#include "core/grouped.hpp"
#include "core/rng.hpp"
#include "stats.hpp"

using namespace optdp;

namespace {

constexpr double kMinP = 1e-4;  // p-value floor of the fixed-seed chi-square tests

std::string error_of(std::string_view text) {
  try {
    parse_grouped_options(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GroupedOptions, Defaults) {
  for (const char* text : {"", "  ", ",", " , ,\t\n"}) {
    const GroupedOptions o = parse_grouped_options(text);
    EXPECT_EQ(o.max_groups, 1) << text;
    EXPECT_EQ(o.max_rows, 1) << text;
    EXPECT_FALSE(o.lower || o.upper || o.delta) << text;
  }
}

TEST(GroupedOptions, AllOptionsAnySeparators) {
  const GroupedOptions o = parse_grouped_options("max_groups=7, max_rows=3,lower=-2.5  upper=1e3,\tdelta=1e-6");
  EXPECT_EQ(o.max_groups, 7);
  EXPECT_EQ(o.max_rows, 3);
  EXPECT_EQ(*o.lower, -2.5);
  EXPECT_EQ(*o.upper, 1000.0);
  EXPECT_EQ(*o.delta, 1e-6);
  const GroupedOptions p = parse_grouped_options("delta=0.5");
  EXPECT_EQ(p.max_groups, 1);
  EXPECT_EQ(*p.delta, 0.5);
  EXPECT_EQ(parse_grouped_options("max_groups=10000, max_rows=1000").max_groups, GroupedOptions::kMaxGroups);
  EXPECT_EQ(parse_grouped_options("max_groups=10000, max_rows=1000").max_rows, GroupedOptions::kMaxRows);
  EXPECT_EQ(parse_grouped_options("max_groups=2.0").max_groups, 2);
}

TEST(GroupedOptions, Errors) {
  struct Case {
    const char* text;
    const char* needle;
  };
  for (const Case& c : std::vector<Case>{
           {"max_groups", "name=value"},
           {"max_groups 2", "name=value"},
           {"foo=1", "unknown option"},
           {"Max_Groups=1", "unknown option"},
           {"max_groups=1, max_groups=2", "max_groups is given twice"},
           {"lower=1 lower=1", "lower is given twice"},
           {"max_groups=0", "max_groups must be an integer in [1, 10000]"},
           {"max_groups=-1", "max_groups must be an integer"},
           {"max_groups=1.5", "max_groups must be an integer"},
           {"max_groups=10001", "max_groups must be an integer in [1, 10000]"},
           {"max_rows=1001", "max_rows must be an integer in [1, 1000]"},
           {"max_rows=", "max_rows must be a finite number"},
           {"lower=abc", "lower must be a finite number"},
           {"upper=inf", "upper must be a finite number"},
           {"upper=nan", "upper must be a finite number"},
           {"delta=0x1p-3", "delta must be a finite number"},
           {"delta=1e400", "delta must be a finite number"},
           {"lower=1x", "lower must be a finite number"},
       }) {
    const std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.needle), std::string::npos) << "'" << c.text << "' gave '" << e << "'";
  }
}

GroupedOptions opts(const std::string& text) { return parse_grouped_options(text); }

std::string plan_error(double eps, const std::string& text, bool has_value, bool private_keys) {
  try {
    GroupedPlan(eps, opts(text), has_value, private_keys);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(GroupedPlan, BudgetSplit) {
  const GroupedPlan a(1.2, opts("max_groups=3, max_rows=2"), false, false);
  EXPECT_EQ(a.parts(), 1);
  EXPECT_DOUBLE_EQ(a.part_epsilon(), 1.2);
  EXPECT_NEAR(a.count_alpha(), std::exp(-1.2 / 12), 1e-15);
  EXPECT_EQ(a.delta(), 0);
  EXPECT_FALSE(a.private_keys());

  const GroupedPlan b(1.2, opts("max_groups=3, max_rows=2, lower=0, upper=10, delta=1e-5"), true, true);
  EXPECT_EQ(b.parts(), 3);
  EXPECT_LE(b.part_epsilon() * 3, 1.2);
  EXPECT_NEAR(b.part_epsilon(), 0.4, 1e-15);
  EXPECT_NEAR(b.count_alpha(), std::exp(-0.4 / 12), 1e-15);
  EXPECT_NEAR(b.sum_epsilon_per_key(), 0.4 / 6, 1e-15);
  EXPECT_LE(b.sum_epsilon_per_key() * 6, b.part_epsilon());
  ASSERT_NE(b.selection(), nullptr);
  EXPECT_EQ(b.selection()->max_partitions(), 6);
  EXPECT_EQ(b.selection()->delta(), 1e-5);
  EXPECT_EQ(b.delta(), 1e-5);
  // the sum's sensitivity covers R rows at the larger of |lower|, |upper|, upper - lower
  EXPECT_GE(static_cast<double>(b.sum_sensitivity()) * b.grid_step(), 2 * 10.0 * (1 - 1e-12));

  const GroupedPlan c(1.0, opts("lower=-1, upper=1"), true, false);
  EXPECT_EQ(c.parts(), 2);
  const GroupedPlan d(1.0, opts("delta=0.1"), false, true);
  EXPECT_EQ(d.parts(), 2);
}

TEST(GroupedPlan, Errors) {
  EXPECT_NE(plan_error(1, "", true, false).find("lower and upper are required"), std::string::npos);
  EXPECT_NE(plan_error(1, "lower=0", true, false).find("upper is missing"), std::string::npos);
  EXPECT_NE(plan_error(1, "lower=1, upper=1", true, false).find("lower must be less than upper"), std::string::npos);
  EXPECT_NE(plan_error(1, "lower=0, upper=1", false, false).find("apply only when the query returns a value"),
            std::string::npos);
  EXPECT_NE(plan_error(1, "", false, true).find("needs option delta"), std::string::npos);
  EXPECT_NE(plan_error(1, "delta=1e-5", false, false).find("delta applies only to private keys"), std::string::npos);
  EXPECT_NE(plan_error(1, "delta=1.5", false, true).find("partition selection"), std::string::npos);
  EXPECT_NE(plan_error(1, "delta=0", false, true).find("partition selection"), std::string::npos);
  EXPECT_NE(plan_error(0, "", false, false), "");
  EXPECT_NE(plan_error(-1, "", false, false), "");
  EXPECT_NE(plan_error(NAN, "", false, false), "");
  EXPECT_NE(plan_error(1e-12, "max_groups=10000, max_rows=1000", false, false).find("2^-30"), std::string::npos);
}

// Feeds units (each a list of (key, q) rows) and returns the totals.
using Unit = std::vector<std::pair<std::uint32_t, std::int64_t>>;
std::vector<GroupedAccumulator::Totals> run(const GroupedPlan& plan, const std::vector<Unit>& units,
                                            std::size_t keys, Rng& rng) {
  GroupedAccumulator acc(plan);
  const KeyPriority priority(rng);  // a fresh secret, as for each release
  acc.reserve_keys(keys);
  std::int64_t unit_id = 0;
  for (const Unit& u : units) {
    for (const auto& [k, q] : u) {
      const std::string key = std::to_string(k);
      acc.add(k, priority(unit_id, 1, key), q, rng);
    }
    acc.end_unit();
    ++unit_id;
  }
  return acc.totals();
}

// KeyPriority computes SipHash-2-4 itself, absorbing its message in pieces:
// it must equal libsodium's crypto_shorthash of the message laid out in one
// buffer (unit little-endian, type, key), for every key length around the
// word boundaries (the 9-byte header puts them at keys of 7, 15, ... bytes).
TEST(KeyPriority, IsLibsodiumsSipHash) {
  ASSERT_GE(sodium_init(), 0);
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SeededRng a(seed), b(seed), data(100 + seed);
    const KeyPriority priority(a);
    unsigned char secret[crypto_shorthash_KEYBYTES];
    for (unsigned char& c : secret) c = b.byte();
    for (std::size_t n = 0; n <= 40; ++n) {
      std::string key(n, '\0');
      for (char& c : key) c = static_cast<char>(data.byte());
      const auto unit = static_cast<std::int64_t>(data.u64());
      const auto type = static_cast<unsigned char>(data.byte());
      std::string in(9 + n, '\0');
      for (int i = 0; i < 8; ++i) in[static_cast<std::size_t>(i)] = static_cast<char>(static_cast<std::uint64_t>(unit) >> (8 * i));
      in[8] = static_cast<char>(type);
      in.replace(9, n, key);
      unsigned char out[crypto_shorthash_BYTES];
      crypto_shorthash(out, reinterpret_cast<const unsigned char*>(in.data()), in.size(), secret);
      std::uint64_t want = 0;
      for (int i = 0; i < 8; ++i) want |= static_cast<std::uint64_t>(out[i]) << (8 * i);
      EXPECT_EQ(priority(unit, type, key), want) << "seed " << seed << ", key of " << n << " bytes";
      // The same through the unit's absorbed word, and for 8 bytes as a number.
      const KeyPriority::OfUnit of_unit = priority.of_unit(unit);
      EXPECT_EQ(of_unit(type, key), want) << "seed " << seed << ", key of " << n << " bytes";
      if (n == 8) {
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(key[static_cast<std::size_t>(i)])) << (8 * i);
        EXPECT_EQ(of_unit.number(type, bits), want) << "seed " << seed << ", 8-byte key as a number";
      }
    }
  }
}

TEST(GroupedAccumulator, ExactTotalsWithinBounds) {
  SeededRng rng(101);
  const GroupedPlan plan(1.0, opts("max_groups=2, max_rows=3, lower=-100, upper=100"), true, false);
  // Nothing exceeds the bounds: totals are exact and independent of the Rng.
  const std::vector<Unit> units = {
      {{0, 5}, {0, 7}, {1, -3}},
      {{2, 11}},
      {{1, 1}, {1, 2}, {1, 3}, {2, -4}},
      {},
  };
  const auto t = run(plan, units, 4, rng);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].units, 1u);
  EXPECT_EQ(t[0].rows, 2);
  EXPECT_EQ(static_cast<std::int64_t>(t[0].sum), 12);
  EXPECT_EQ(t[1].units, 2u);
  EXPECT_EQ(t[1].rows, 4);
  EXPECT_EQ(static_cast<std::int64_t>(t[1].sum), 3);
  EXPECT_EQ(t[2].units, 2u);
  EXPECT_EQ(t[2].rows, 2);
  EXPECT_EQ(static_cast<std::int64_t>(t[2].sum), 7);
  EXPECT_EQ(t[3].units, 0u);
  EXPECT_EQ(t[3].rows, 0);
  EXPECT_EQ(static_cast<std::int64_t>(t[3].sum), 0);
}

TEST(GroupedAccumulator, RowsInterleavedWithinAUnit) {
  SeededRng rng(102);
  const GroupedPlan plan(1.0, opts("max_groups=3, max_rows=2"), false, false);
  // a unit's rows of one key need not be adjacent
  const auto t = run(plan, {{{0, 0}, {1, 0}, {0, 0}, {1, 0}, {0, 0}}, {{1, 0}}}, 2, rng);
  EXPECT_EQ(t[0].units, 1u);
  EXPECT_EQ(t[0].rows, 2);  // 3 rows, max_rows 2
  EXPECT_EQ(t[1].units, 2u);
  EXPECT_EQ(t[1].rows, 3);
}

TEST(GroupedAccumulator, BoundsEveryUnit) {
  SeededRng rng(103);
  const std::int64_t G = 3, R = 2;
  const GroupedPlan plan(1.0, opts("max_groups=3, max_rows=2, lower=0, upper=1000"), true, false);
  // unit u has rows in keys 0..u (u+1 keys), key k gets k+1 rows of value 1.
  std::vector<Unit> units;
  std::int64_t want_units = 0, want_rows_upper = 0;
  for (std::uint32_t u = 0; u < 8; ++u) {
    Unit unit;
    for (std::uint32_t k = 0; k <= u; ++k)
      for (std::uint32_t r = 0; r <= k; ++r) unit.push_back({k, 1});
    units.push_back(unit);
    want_units += std::min<std::int64_t>(u + 1, G);
    want_rows_upper += std::min<std::int64_t>(u + 1, G) * R;
  }
  for (int trial = 0; trial < 50; ++trial) {
    const auto t = run(plan, units, 8, rng);
    std::int64_t got_units = 0, got_rows = 0;
    for (const auto& x : t) {
      got_units += static_cast<std::int64_t>(x.units);
      got_rows += x.rows;
      EXPECT_EQ(static_cast<std::int64_t>(x.sum), x.rows);  // every value 1
      EXPECT_LE(x.rows, static_cast<std::int64_t>(x.units) * R);
    }
    EXPECT_EQ(got_units, want_units);  // exactly min(m, G) keys per unit
    EXPECT_LE(got_rows, want_rows_upper);
  }
}

// A unit with m keys keeps a uniform G-subset of them.
TEST(GroupedAccumulator, KeptKeysAreAUniformSubset) {
  constexpr int m = 5, G = 2, kTrials = 30000;
  const GroupedPlan plan(1.0, opts("max_groups=2"), false, false);
  SeededRng rng(104);
  std::map<int, std::int64_t> seen;  // bitmask of kept keys -> times
  for (int i = 0; i < kTrials; ++i) {
    Unit unit;
    for (std::uint32_t k = 0; k < m; ++k) unit.push_back({k, 0});
    const auto t = run(plan, {unit}, m, rng);
    int mask = 0;
    for (int k = 0; k < m; ++k)
      if (t[k].units) mask |= 1 << k;
    ASSERT_EQ(__builtin_popcount(mask), G);
    ++seen[mask];
  }
  ASSERT_EQ(seen.size(), 10u);  // C(5, 2)
  std::vector<std::int64_t> obs;
  for (const auto& [mask, n] : seen) obs.push_back(n);
  const auto r = test::chi_square(obs, 0, [](std::int64_t) { return 0.1; }, 0, 0);
  EXPECT_GT(r.p_value, kMinP) << "chi2 " << r.statistic << " dof " << r.dof;
}

// The kept subset stays uniform when a unit's rows of one key are not
// adjacent, and every kept key keeps all its rows (a key turned away or
// pushed out never comes back).
TEST(GroupedAccumulator, KeptKeysAreAUniformSubsetWhateverTheRowOrder) {
  constexpr int m = 5, G = 2, kTrials = 30000;
  const GroupedPlan plan(1.0, opts("max_groups=2, max_rows=10"), false, false);
  SeededRng rng(106);
  std::map<int, std::int64_t> seen;
  for (int i = 0; i < kTrials; ++i) {
    Unit unit;
    for (int pass = 0; pass < 3; ++pass)
      for (std::uint32_t k = 0; k < m; ++k) unit.push_back({(k * 2 + pass) % m, 0});
    const auto t = run(plan, {unit}, m, rng);
    int mask = 0;
    for (int k = 0; k < m; ++k) {
      if (!t[k].units) continue;
      mask |= 1 << k;
      ASSERT_EQ(t[k].rows, 3) << "a kept key lost rows";
    }
    ASSERT_EQ(__builtin_popcount(mask), G);
    ++seen[mask];
  }
  ASSERT_EQ(seen.size(), 10u);
  std::vector<std::int64_t> obs;
  for (const auto& [mask, n] : seen) obs.push_back(n);
  const auto r = test::chi_square(obs, 0, [](std::int64_t) { return 0.1; }, 0, 0);
  EXPECT_GT(r.p_value, kMinP) << "chi2 " << r.statistic << " dof " << r.dof;
}

// Memory is fixed by G and R: a unit with 200,000 keys (and many rows each)
// never holds more than G keys and G * R value slots. (The previous design
// reserved R slots for every key of the unit before choosing G of them.)
TEST(GroupedAccumulator, MemoryIsBoundedByGTimesR) {
  const GroupedPlan plan(1.0, opts("max_groups=3, max_rows=1000, lower=0, upper=1"), true, false);
  SeededRng rng(107);
  GroupedAccumulator acc(plan);
  const KeyPriority priority(rng);
  constexpr std::uint32_t kKeys = 200000;
  acc.reserve_keys(kKeys);
  EXPECT_EQ(acc.value_slots(), 3000u);
  for (std::uint32_t k = 0; k < kKeys; ++k) {
    const std::string key = std::to_string(k);
    for (int r = 0; r < 2; ++r) acc.add(k, priority(7, 1, key), 1, rng);
    ASSERT_LE(acc.kept_keys(), 3u);
  }
  EXPECT_EQ(acc.kept_keys(), 3u);
  EXPECT_EQ(acc.value_slots(), 3000u);
  acc.end_unit();
  std::int64_t units = 0;
  for (const auto& t : acc.totals()) units += static_cast<std::int64_t>(t.units);
  EXPECT_EQ(units, 3);
}

// A key with n rows keeps a uniform R-subset of them (the reservoir), whatever their order.
TEST(GroupedAccumulator, KeptRowsAreAUniformSubset) {
  constexpr int n = 6, kTrials = 30000;
  const GroupedPlan plan(1.0, opts("max_rows=2, lower=0, upper=100"), true, false);
  SeededRng rng(105);
  std::map<std::int64_t, std::int64_t> seen;  // sum of the two kept q = 2^i + 2^j -> times
  for (int i = 0; i < kTrials; ++i) {
    Unit unit;
    for (int r = 0; r < n; ++r) unit.push_back({0, std::int64_t{1} << r});
    const auto t = run(plan, {unit}, 1, rng);
    ASSERT_EQ(t[0].rows, 2);
    ASSERT_EQ(__builtin_popcountll(static_cast<std::uint64_t>(t[0].sum)), 2);
    ++seen[static_cast<std::int64_t>(t[0].sum)];
  }
  ASSERT_EQ(seen.size(), 15u);  // C(6, 2)
  std::vector<std::int64_t> obs;
  for (const auto& [s, c] : seen) obs.push_back(c);
  const auto r = test::chi_square(obs, 0, [](std::int64_t) { return 1.0 / 15; }, 0, 0);
  EXPECT_GT(r.p_value, kMinP) << "chi2 " << r.statistic << " dof " << r.dof;
}

}  // namespace

// noise=gaussian: rho from (epsilon, delta), split between counts and sums,
// each sigma^2 = (L2 sensitivity for 2G keys moved)^2 / (2 rho_part).
TEST(GroupedPlan, GaussianCalibration) {
  const GroupedPlan a(1.0, opts("max_groups=100, max_rows=1, noise=gaussian, delta=1e-6"), false, false);
  ASSERT_TRUE(a.gaussian());
  const double rho = optdp::zcdp::rho_for_epsilon_delta(1.0, 1e-6);
  EXPECT_EQ(a.rho(), rho);
  EXPECT_GE(a.count_sigma2(), 100 * 1.0 / rho);  // (1 * sqrt(2 * 100))^2 / (2 rho)
  EXPECT_LE(a.count_sigma2(), 100 * 1.0 / rho * (1 + 1e-15));
  const GroupedPlan b(1.0, opts("max_groups=4, max_rows=3, lower=0, upper=10, noise=gaussian, delta=1e-6"), true,
                      false);
  EXPECT_EQ(b.parts(), 2);
  EXPECT_NEAR(b.count_sigma2(), 4 * 9 / (rho / 2), 1e-9 * 4 * 9 / (rho / 2));
  const double D = static_cast<double>(b.sum_sensitivity());
  EXPECT_NEAR(b.sum_sigma2(), 4 * D * D / (rho / 2), 1e-9 * 4 * D * D / (rho / 2));
  // Refusals: private keys, no delta, an unknown noise.
  EXPECT_NE(plan_error(1.0, "noise=gaussian, delta=1e-6", false, true).find("noise=gaussian needs public keys"),
            std::string::npos);
  EXPECT_NE(plan_error(1.0, "noise=gaussian", false, false).find("noise=gaussian needs option delta"),
            std::string::npos);
  EXPECT_NE(error_of("noise=laplace").find("option noise must be 'optimal' or 'gaussian'"), std::string::npos);
}
