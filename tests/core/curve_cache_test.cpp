// zcdp::account_charge, the ledger's decision with the curve's cache
// (docs/accounting.md, "Charges decided by the curve"): it decides every
// charge as zcdp::account does, on mixed histories charged in random orders
// to their budgets' ends, with several histories sharing the process-wide
// cache at once (histories that differ in one other group's count, in the
// budget's eps or delta, or in the charge's parameters), so that a cache key
// missing any of those accepts a charge account refuses; and it evaluates the
// curve O(log n) times over a run of n charges of one kind.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/accounting.hpp"

namespace {

using optdp::zcdp::Accounting;
using optdp::zcdp::Budget;
using optdp::zcdp::Entry;
using optdp::zcdp::History;

struct Ledger {
  std::string name;
  Budget budget;
  std::vector<Entry> kinds;  // what it is charged with, in random order
  History h;
  std::mt19937_64 rng;
  bool done = false;
  int refusals = 0, curve_decided = 0, accepted = 0;
};

// One charge on `l`: the cached decision against account's; accepted ones are recorded.
void step(Ledger& l) {
  const Entry& e = l.kinds[std::uniform_int_distribution<std::size_t>(0, l.kinds.size() - 1)(l.rng)];
  const Accounting exact = optdp::zcdp::account(l.h, e, 1, l.budget);
  const Accounting cached = optdp::zcdp::account_charge(l.h, e, 1, l.budget);
  ASSERT_EQ(cached.fits(), exact.fits()) << l.name << " at " << l.h.entries << " entries";
  EXPECT_EQ(cached.basic_fits, exact.basic_fits) << l.name;
  EXPECT_EQ(cached.zcdp_fits, exact.zcdp_fits) << l.name;
  if (exact.pld_fits) {
    // The cached figure is the bound at a history at least as large: never below.
    EXPECT_GE(cached.pld_delta, exact.pld_delta) << l.name;
    EXPECT_LE(cached.pld_delta, l.budget.delta) << l.name;
  }
  if (exact.fits()) {
    l.h.add(e);
    ++l.accepted;
    if (!exact.basic_fits && !exact.zcdp_fits) ++l.curve_decided;
  } else if (++l.refusals >= 8) {
    l.done = true;
  }
}

TEST(CurveCache, DecidesAsAccountOnInterleavedHistories) {
  // Seconds of PLD evaluations (3 s under load): not in the sanitizer pass,
  // where the two tests below run the same code on fewer histories.
  if (const char* p = std::getenv("OPTDP_SANITIZER_PASS"); p && std::string(p) == "1")
    GTEST_SKIP() << "a repeat of paths, left out of the sanitizer pass";
  optdp::zcdp::clear_curve_cache();
  const double rho40 = 1 / (2 * 40.0 * 40.0);  // sigma 40, shift 1
  const Entry pure = Entry::pure(0.025), pure_b = Entry::pure(0.0251);
  const Entry gauss = Entry::gaussian(rho40, 1), small = Entry::pure(0.02), small_approx = Entry::approximate(0.015, 1e-9);
  std::vector<Ledger> ls;
  auto add = [&](const std::string& name, Budget b, std::vector<Entry> kinds, History start, std::uint64_t seed) {
    Ledger l{name, b, std::move(kinds), std::move(start), std::mt19937_64(seed)};
    ls.push_back(std::move(l));
  };
  History none, some, more;
  some.add(Entry::pure(0.006), 5);
  more.add(Entry::pure(0.006), 6);
  History few, fewer;
  few.add(Entry::pure(0.02), 3);
  fewer.add(Entry::pure(0.02), 2);
  // Pairs that a key without one of its parts would confuse: the same kinds
  // and budget with a different other group (some/more), a different budget
  // eps or delta, a different charge parameter (pure/pure_b).
  // Budgets of eps 0.2 end the curve at a small loss: short grids, fast.
  add("pure", {0.2, 1e-3}, {pure}, none, 1);
  add("pure, other eps", {0.2, 1e-3}, {pure_b}, none, 1);
  add("pure after some", {0.2, 1e-3}, {pure}, some, 2);
  add("pure after more", {0.2, 1e-3}, {pure}, more, 2);
  add("pure, budget eps", {0.19, 1e-3}, {pure}, none, 3);
  add("pure, budget delta", {0.2, 5e-4}, {pure}, none, 3);
  add("mixed", {0.2, 1e-3}, {small, small_approx, gauss}, none, 4);
  add("mixed, other order", {0.2, 1e-3}, {small, small_approx, gauss}, none, 5);
  add("gaussian after fewer", {0.2, 1e-3}, {gauss}, fewer, 7);
  add("gaussian after few", {0.2, 1e-3}, {gauss}, few, 7);
  // Round robin: every ledger's charges interleave with the others' in the cache.
  for (bool any = true; any;) {
    any = false;
    for (Ledger& l : ls) {
      if (l.done) continue;
      any = true;
      step(l);
      if (HasFatalFailure()) return;
    }
  }
  for (const Ledger& l : ls) {
    // Each history reached its end, with charges the curve alone decided.
    EXPECT_GT(l.curve_decided, 0) << l.name;
    EXPECT_GT(l.accepted, 0) << l.name;
  }
}

TEST(CurveCache, FewEvaluationsForARunOfCharges) {
  // Pure releases at eps 0.01 on (1, 1e-6): zCDP fits 486 of them, the curve
  // 562 (docs/accounting.md); each of the charges in between is decided by
  // the curve, and the cache evaluates it a handful of times for all of them.
  optdp::zcdp::clear_curve_cache();
  const Budget b{1, 1e-6};
  const Entry e = Entry::pure(0.01);
  History h;
  int curve_decided = 0;
  std::uint64_t evaluations = 0;
  for (;;) {
    const std::uint64_t before = optdp::zcdp::curve_evaluations();
    const Accounting a = optdp::zcdp::account_charge(h, e, 1, b);
    evaluations += optdp::zcdp::curve_evaluations() - before;
    if (!a.fits()) break;
    if (!a.zcdp_fits && !a.basic_fits) ++curve_decided;
    h.add(e);
  }
  EXPECT_EQ(h.entries, 562u);
  EXPECT_EQ(optdp::zcdp::further_releases(History{}, e, b), 562u);
  EXPECT_GT(curve_decided, 60);
  EXPECT_LE(evaluations, 20u) << curve_decided << " charges decided by the curve";
  // The refusal at the end, asked again, is decided from the cache.
  const std::uint64_t before = optdp::zcdp::curve_evaluations();
  EXPECT_FALSE(optdp::zcdp::account_charge(h, e, 1, b).fits());
  EXPECT_EQ(optdp::zcdp::curve_evaluations() - before, 0u);
}

TEST(CurveCache, DecisionsDoNotDependOnWhatTheCacheHolds) {
  // The decision is a function of the history: charged in a run (the cache
  // warm with the run's earlier bounds) and each decided again on an empty
  // cache, the same decision and the same bound, at every count the curve
  // decides (pure releases at eps 0.02 on (1, 1e-6): 128 to 140 or so).
  optdp::zcdp::clear_curve_cache();
  const Budget b{1, 1e-6};
  const Entry e = Entry::pure(0.02);
  History h;
  std::vector<std::pair<History, Accounting>> seen;
  for (;;) {
    const Accounting a = optdp::zcdp::account_charge(h, e, 1, b);
    if (!a.basic_fits && !a.zcdp_fits) seen.push_back({h, a});
    if (!a.fits()) break;
    h.add(e);
  }
  ASSERT_GT(seen.size(), 5u);
  for (const auto& [past, warm] : seen) {
    optdp::zcdp::clear_curve_cache();
    const Accounting cold = optdp::zcdp::account_charge(past, e, 1, b);
    EXPECT_EQ(cold.pld_fits, warm.pld_fits) << past.entries;
    EXPECT_EQ(cold.pld_delta, warm.pld_delta) << past.entries;
  }
}

}  // namespace
