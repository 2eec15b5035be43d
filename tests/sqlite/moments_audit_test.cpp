// Paired-neighbour empirical privacy audit of private_avg, private_var and
// private_stddev (docs/audit.md, docs/moments.md), for both kinds of
// neighbour and for bounds around 0 and away from it.
//
// Each release draws a noisy count and noisy centred sums; the audit sees
// only the one released number, so it proves what threshold events on that
// number show. For the mean that is most of the loss: adding a row at upper
// to an empty table, or replacing lower by upper, moves S1 by one or two
// sensitivities, and the audit proves about 0.65 of the claimed eps = 1 in
// the short run, 0.94 in the long one. For the variance the released number
// mixes three noisy totals nonlinearly: about 0.27 (short) and 0.55 (long).
// So the audit catches a variance whose S2 noise is calibrated to a quarter
// of its sensitivity (the pair with 1000 rows at mid, where the variance is
// S2'/n' almost linearly, proves 1.08), but not a split that overspends by
// half: the split and the sensitivities are checked exactly by
// tests/core/moments_test.cpp. The self-checks run the mean at eps = 2 and
// the variance at eps = 4 on their most telling pair and require more than 1.
//
// Short run (the suite, about 2 s): N = 5,000 releases per side. Long run:
// OPTDP_AUDIT_LONG=1 (N = 200,000, about 2 min), or `ctest -C AuditLong -L audit_long`.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "audit.hpp"

using optdp::test::AuditResult;

namespace {

using Pair = optdp::test::LabelledPair;
using optdp::test::audit_labelled;
using optdp::test::expect_private;

// A VALUES list: k copies of v for each (k, v).
std::string rows(const std::vector<std::pair<int, double>>& groups) {
  std::string s;
  for (const auto& kv : groups) {
    char b[40];
    std::snprintf(b, sizeof b, "(%.17g)", kv.second);
    for (int i = 0; i < kv.first; ++i) s += (s.empty() ? "" : ",") + std::string(b);
  }
  return s;
}

std::string query(const char* fn, double eps, double lower, double upper) {
  char b[160];
  std::snprintf(b, sizeof b, "SELECT %s(x, %.17g, %.17g, %.17g) FROM t", fn, eps, lower, upper);
  return b;
}

Pair add_to_empty(double upper) { return {"{} vs {upper} (add)", "", rows({{1, upper}})}; }
Pair replace_lower_by_upper(double lower, double upper) {
  return {"{lower} vs {upper} (replace)", rows({{1, lower}}), rows({{1, upper}})};
}

// The mean: a row at a bound added to nothing or to rows at the other bound,
// and lower replaced by upper alone or among other rows.
std::vector<Pair> mean_pairs(double lower, double upper) {
  return {add_to_empty(upper),
          {"{lower x5} vs {lower x5, upper} (add)", rows({{5, lower}}), rows({{5, lower}, {1, upper}})},
          replace_lower_by_upper(lower, upper),
          {"{lower x5} vs {lower x4, upper} (replace)", rows({{5, lower}}), rows({{4, lower}, {1, upper}})}};
}

// The variance: a row at upper added to nothing or to rows at mid (S2 moves by
// its whole sensitivity), mid replaced by upper alone or among spread rows,
// and lower replaced by upper among rows at q3 (S1 moves by two
// sensitivities, S2 not at all; without the rows at q3 the mean would move
// symmetrically about mid and leave the variance unchanged).
std::vector<Pair> variance_pairs(double lower, double upper) {
  const double mid = (lower + upper) / 2, q1 = lower + (upper - lower) / 4, q3 = upper - (upper - lower) / 4;
  return {add_to_empty(upper),
          {"{mid x10} vs {mid x10, upper} (add)", rows({{10, mid}}), rows({{10, mid}, {1, upper}})},
          {"{mid x1000} vs {mid x1000, upper} (add)", rows({{1000, mid}}), rows({{1000, mid}, {1, upper}})},
          {"{mid x5} vs {mid x4, upper} (replace)", rows({{5, mid}}), rows({{4, mid}, {1, upper}})},
          {"{q1 x10, q3 x10, mid} vs {q1 x10, q3 x10, upper} (replace)", rows({{10, q1}, {10, q3}, {1, mid}}),
           rows({{10, q1}, {10, q3}, {1, upper}})},
          {"{q3 x10, lower} vs {q3 x10, upper} (replace)", rows({{10, q3}, {1, lower}}),
           rows({{10, q3}, {1, upper}})}};
}

}  // namespace

TEST(MomentsAudit, MeanBounds0To10) { expect_private(query("private_avg", 1.0, 0, 10), 1.0, mean_pairs(0, 10)); }
TEST(MomentsAudit, MeanBounds100To200) {
  expect_private(query("private_avg", 1.0, 100, 200), 1.0, mean_pairs(100, 200));
}
TEST(MomentsAudit, MeanBoundsMinus200ToMinus100) {
  expect_private(query("private_avg", 1.0, -200, -100), 1.0, mean_pairs(-200, -100));
}
TEST(MomentsAudit, VarianceBounds0To10) {
  expect_private(query("private_var", 1.0, 0, 10), 1.0, variance_pairs(0, 10));
}
TEST(MomentsAudit, VarianceBounds100To200) {
  expect_private(query("private_var", 1.0, 100, 200), 1.0, variance_pairs(100, 200));
}
// The same release as private_var, its square root.
TEST(MomentsAudit, StddevBounds100To200) {
  expect_private(query("private_stddev", 1.0, 100, 200), 1.0, {add_to_empty(200)});
}

// The audit can fail here: the mean at eps = 2 and the variance at eps = 4,
// each claimed at 1.
TEST(MomentsAudit, SelfCheckCatchesTwiceTheLossOfTheMean) {
  const AuditResult r = audit_labelled(query("private_avg", 2.0, 100, 200), replace_lower_by_upper(100, 200));
  EXPECT_GT(r.eps_lb, 1.0) << "the audit no longer detects a loss of 2 claimed as 1 on this pair: " << r.summary();
}
TEST(MomentsAudit, SelfCheckCatchesFourTimesTheLossOfTheVariance) {
  const AuditResult r = audit_labelled(query("private_var", 4.0, 100, 200), add_to_empty(200));
  EXPECT_GT(r.eps_lb, 1.0) << "the audit no longer detects a loss of 4 claimed as 1 on this pair: " << r.summary();
}
