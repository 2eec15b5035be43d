// A paired-neighbour empirical privacy audit (docs/audit.md).
//
// For a mechanism M and neighbouring databases D, D', draw N releases of
// M(D) and N of M(D'). For each event S of a family fixed before those
// samples are seen (threshold events whose thresholds are quantiles of a
// separate pilot batch), a Clopper-Pearson lower bound on P[M(D) in S] and an
// upper bound on P[M(D') in S] give eps_lb = ln(p_lo / q_hi), in both
// directions. With every bound at confidence 1 - beta / (2m) (m = events x 2
// directions), all of them hold at once with probability >= 1 - beta, so if M
// is eps-DP then max eps_lb <= eps except with probability <= beta.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace optdp::test {

// N releases of one query; each release is `dim` numbers (every column of
// every row the query returns, flattened in order).
struct Releases {
  std::size_t dim = 0;
  std::vector<double> values;  // size() == dim * count()
  std::size_t count() const { return dim ? values.size() / dim : 0; }
  double at(std::size_t release, std::size_t coordinate) const { return values[release * dim + coordinate]; }
};

// One side of a pair: a fresh in-memory database with the module loaded, a
// table t(x) holding `rows` (an SQL VALUES list such as "(1),(NULL)", or ""
// for an empty table), seeded with dp_seed(seed) once; then `n` runs of
// `query` (prepared once, reset between runs, so each release continues the
// seeded stream and releases are independent). Throws std::runtime_error if
// the query fails or does not return `dim` non-NULL numbers.
Releases draw_releases(const std::string& rows, const std::string& query, std::int64_t seed, std::size_t n,
                       std::size_t dim);

// An event: a conjunction of threshold conditions x_c <= t or x_c >= t.
struct Condition {
  std::size_t coordinate;
  bool at_most;  // x <= t if true, x >= t otherwise
  double threshold;
};
struct Event {
  std::vector<Condition> conditions;
  bool contains(const Releases& r, std::size_t i) const;
  std::string describe() const;
};

// The event family, built from pilot releases of both sides only: for each
// coordinate, {x <= t} and {x >= t} for t among quantiles of each side's
// pilot and of the pooled pilot; for dim >= 2, also the joint events of every
// pair of coordinates in all four directions on a coarser quantile grid
// (7 levels of the pooled pilot per coordinate).
std::vector<Event> threshold_events(const Releases& pilot_a, const Releases& pilot_b);

struct AuditResult {
  double eps_lb = 0;       // max over events and directions (-inf if no event has p_lo > 0)
  std::string event;       // the event achieving it
  bool a_over_b = true;    // direction: ln(P[M(D) in S] / P[M(D') in S]) if true
  std::int64_t hits_num = 0, hits_den = 0;  // the event's counts on the numerator / denominator side
  std::size_t n = 0;       // releases per side
  std::size_t events = 0;  // family size
  double beta = 0;
  std::string summary() const;
};

// Clopper-Pearson eps lower bound over `events` (both directions), total
// failure probability beta (Bonferroni as described above). With delta > 0,
// the bound for (eps, delta)-DP: ln((p_lo - delta) / q_hi).
AuditResult audit_eps(const Releases& a, const Releases& b, const std::vector<Event>& events, double beta,
                      double delta = 0);

// OPTDP_AUDIT_LONG set (and not "0"): the long audit's sample sizes.
bool long_run();
std::size_t n_main();   // releases per side: 5,000, or 200,000 in the long run
std::size_t n_pilot();  // pilot releases per side: 1,000, or 20,000
// A stable seed per pair (FNV-1a of its description), so that pairs do not
// share noise streams and every run of a build draws the same releases;
// leaves room for seed + 3.
std::int64_t seed_of(const std::string& s);

// Everything for one pair: pilot batches (seeds seed, seed+1), the family,
// then the main batches (seeds seed+2, seed+3).
struct PairSpec {
  std::string rows_a, rows_b;  // D and D' as VALUES lists for t(x)
  std::string query_a;         // the release, over table t
  std::string query_b;         // the release on D'; "" means query_a (a table function's argument differs here)
  std::size_t dim = 1;
};
AuditResult audit_pair(const PairSpec& pair, std::int64_t seed, std::size_t n_main, std::size_t n_pilot,
                       double beta);

// The failure probability every audited pair of the suite is run at.
inline constexpr double kPairBeta = 1e-6;

// A named pair of neighbours for a query over t(x).
struct LabelledPair {
  std::string label;         // e.g. "{} vs {upper}"
  std::string rows_a, rows_b;
  std::string query_b = "";  // only when the query itself differs (table functions)
};

// audit_pair at n_main() / n_pilot() releases, seeded by the query and the
// label, printed ("[audit] <test>: <query> | <label> | <summary>") and
// recorded as a property of the running GoogleTest test.
AuditResult audit_labelled(const std::string& query, const LabelledPair& p, std::size_t dim = 1,
                           double beta = kPairBeta);
// For every pair, a GoogleTest failure unless the proven eps_lb <= claim.
void expect_private(const std::string& query, double claim, const std::vector<LabelledPair>& pairs,
                    std::size_t dim = 1, double beta = kPairBeta);
// The running GoogleTest test's name, or "?".
const char* current_test_name();

}  // namespace optdp::test
