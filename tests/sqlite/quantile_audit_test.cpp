// Paired-neighbour empirical privacy audit of private_quantile and
// private_median (docs/audit.md, docs/quantiles.md), on pairs chosen to show
// as much of the privacy loss as a threshold event can.
//
// The exponential mechanism loses most between neighbours that move the
// candidates' scores in opposite directions. Replacing the row 0 of {0, 8} by
// 10 lowers #{x < c} by one for every candidate c in (0, 10]: candidates above
// 8 get closer to the median rank (score + 1), those in (0, 8] further from it
// (score - 1). On [0, 10] (2561 grid points) P[out >= 8] moves from 0.13 to
// 0.28: ln ratio 0.79 at eps = 1, of which the short run proves about 0.45.
// Adding a row 0 to {8, 8, 8} at q = 0.25 is the add/remove case (ln ratio
// 0.69 on the same event, at a smaller probability). A self-check runs the
// replace pair at eps = 2 and requires the audit to prove more than 1: a
// mechanism with twice the loss it claims (say, the exponent without its
// factor 1/2) fails the main test.
//
// Short run (the suite): N = 5,000 releases per side. Long run:
// OPTDP_AUDIT_LONG=1 (N = 200,000), or `ctest -C AuditLong -L audit_long`.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "audit.hpp"

using optdp::test::AuditResult;

namespace {

using Pair = optdp::test::LabelledPair;
using optdp::test::audit_labelled;
using optdp::test::expect_private;

const Pair kReplace{"{0,8} vs {10,8} (replace)", "(0),(8)", "(10),(8)"};
const Pair kAdd{"{8,8,8} vs {0,8,8,8} (add)", "(8),(8),(8)", "(0),(8),(8),(8)"};

}  // namespace

TEST(QuantileAudit, MedianReplaceOneRow) { expect_private("SELECT private_median(x, 1.0, 0, 10) FROM t", 1.0, {kReplace}); }

TEST(QuantileAudit, QuantileAddOneRow) {
  expect_private("SELECT private_quantile(x, 0.25, 1.0, 0, 10) FROM t", 1.0, {kAdd});
}

// The audit can fail here: private_median at eps = 2 claimed at 1.
TEST(QuantileAudit, SelfCheckCatchesTwiceTheLoss) {
  const AuditResult r = audit_labelled("SELECT private_median(x, 2.0, 0, 10) FROM t", kReplace);
  EXPECT_GT(r.eps_lb, 1.0) << "the audit no longer detects a loss of 2 claimed as 1 on this pair: " << r.summary();
}
