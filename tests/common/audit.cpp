#include "audit.hpp"

#include <gtest/gtest.h>

#include <sqlite3.h>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>

#include "db.hpp"

namespace optdp::test {

namespace {

std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// Quantiles of one coordinate, at the given levels (order statistics of the
// sorted sample: index floor(q * (n - 1))).
std::vector<double> quantiles(std::vector<double> v, const std::vector<double>& levels) {
  std::vector<double> out;
  if (v.empty()) return out;
  std::sort(v.begin(), v.end());
  for (double q : levels) out.push_back(v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]);
  return out;
}

std::vector<double> coordinate(const Releases& r, std::size_t c) {
  std::vector<double> v;
  v.reserve(r.count());
  for (std::size_t i = 0; i < r.count(); ++i) v.push_back(r.at(i, c));
  return v;
}

std::vector<double> pooled(const Releases& a, const Releases& b, std::size_t c) {
  auto v = coordinate(a, c);
  auto w = coordinate(b, c);
  v.insert(v.end(), w.begin(), w.end());
  return v;
}

std::int64_t hits(const Event& e, const Releases& r) {
  std::int64_t k = 0;
  for (std::size_t i = 0; i < r.count(); ++i) k += e.contains(r, i) ? 1 : 0;
  return k;
}

}  // namespace

Releases draw_releases(const std::string& rows, const std::string& query, std::int64_t seed, std::size_t n,
                       std::size_t dim) {
  Db db;
  db.exec("CREATE TABLE t(x)");
  if (!rows.empty()) db.exec("INSERT INTO t(x) VALUES " + rows);
  db.exec("SELECT dp_seed(" + std::to_string(seed) + ")");
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db.get(), query.c_str(), -1, &st, nullptr) != SQLITE_OK)
    throw std::runtime_error(std::string(sqlite3_errmsg(db.get())) + ": " + query);
  Releases out;
  out.dim = dim;
  out.values.reserve(n * dim);
  try {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t before = out.values.size();
      int rc;
      while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
          const int type = sqlite3_column_type(st, c);
          if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
            throw std::runtime_error("not a number in column " + std::to_string(c) + ": " + query);
          out.values.push_back(sqlite3_column_double(st, c));
        }
      }
      if (rc != SQLITE_DONE) throw std::runtime_error(std::string(sqlite3_errmsg(db.get())) + ": " + query);
      sqlite3_reset(st);
      if (out.values.size() - before != dim)
        throw std::runtime_error("expected " + std::to_string(dim) + " numbers per release, got " +
                                 std::to_string(out.values.size() - before) + ": " + query);
    }
  } catch (...) {
    sqlite3_finalize(st);
    throw;
  }
  sqlite3_finalize(st);
  return out;
}

bool Event::contains(const Releases& r, std::size_t i) const {
  for (const auto& c : conditions) {
    const double x = r.at(i, c.coordinate);
    if (c.at_most ? !(x <= c.threshold) : !(x >= c.threshold)) return false;
  }
  return true;
}

std::string Event::describe() const {
  std::string s;
  for (const auto& c : conditions) {
    if (!s.empty()) s += " and ";
    s += "x" + std::to_string(c.coordinate) + (c.at_most ? " <= " : " >= ") + num(c.threshold);
  }
  return "{" + s + "}";
}

std::vector<Event> threshold_events(const Releases& pilot_a, const Releases& pilot_b) {
  if (pilot_a.dim != pilot_b.dim || pilot_a.dim == 0) throw std::invalid_argument("threshold_events: dims");
  const std::size_t dim = pilot_a.dim;
  static const std::vector<double> fine = {0.001, 0.003, 0.01, 0.03, 0.1,  0.2,   0.3,  0.5,
                                           0.7,   0.8,   0.9,  0.97, 0.99, 0.997, 0.999};
  static const std::vector<double> coarse = {0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95};
  std::vector<Event> events;
  std::set<std::tuple<std::size_t, bool, double>> seen;
  for (std::size_t c = 0; c < dim; ++c) {
    std::vector<double> ts;
    for (const auto& v : {coordinate(pilot_a, c), coordinate(pilot_b, c), pooled(pilot_a, pilot_b, c)}) {
      const auto q = quantiles(v, fine);
      ts.insert(ts.end(), q.begin(), q.end());
    }
    for (double t : ts)
      for (bool at_most : {true, false})
        if (seen.insert({c, at_most, t}).second) events.push_back(Event{{Condition{c, at_most, t}}});
  }
  for (std::size_t c1 = 0; c1 < dim; ++c1)
    for (std::size_t c2 = c1 + 1; c2 < dim; ++c2) {
      auto q1 = quantiles(pooled(pilot_a, pilot_b, c1), coarse);
      auto q2 = quantiles(pooled(pilot_a, pilot_b, c2), coarse);
      q1.erase(std::unique(q1.begin(), q1.end()), q1.end());
      q2.erase(std::unique(q2.begin(), q2.end()), q2.end());
      for (double t1 : q1)
        for (double t2 : q2)
          for (bool m1 : {true, false})
            for (bool m2 : {true, false}) events.push_back(Event{{Condition{c1, m1, t1}, Condition{c2, m2, t2}}});
    }
  return events;
}

AuditResult audit_eps(const Releases& a, const Releases& b, const std::vector<Event>& events, double beta,
                      double delta) {
  using boost::math::binomial_distribution;
  if (a.count() != b.count() || a.count() == 0) throw std::invalid_argument("audit_eps: sample sizes");
  AuditResult r;
  r.n = a.count();
  r.events = events.size();
  r.beta = beta;
  r.eps_lb = -std::numeric_limits<double>::infinity();
  // m tests (events x 2 directions), each using two one-sided bounds.
  const double each = beta / (2.0 * 2.0 * static_cast<double>(events.size()));
  const double n = static_cast<double>(r.n);
  for (const auto& e : events) {
    const std::int64_t ka = hits(e, a), kb = hits(e, b);
    for (bool a_over_b : {true, false}) {
      const std::int64_t num_hits = a_over_b ? ka : kb, den_hits = a_over_b ? kb : ka;
      const double p_lo =
          binomial_distribution<>::find_lower_bound_on_p(n, static_cast<double>(num_hits), each) - delta;
      const double q_hi = binomial_distribution<>::find_upper_bound_on_p(n, static_cast<double>(den_hits), each);
      if (!(p_lo > 0)) continue;
      const double lb = std::log(p_lo / q_hi);
      if (lb > r.eps_lb) {
        r.eps_lb = lb;
        r.event = e.describe();
        r.a_over_b = a_over_b;
        r.hits_num = num_hits;
        r.hits_den = den_hits;
      }
    }
  }
  return r;
}

std::string AuditResult::summary() const {
  char b[512];
  std::snprintf(b, sizeof b, "eps_lb=%.4f event=%s direction=%s hits=%lld/%lld N=%zu events=%zu beta=%g", eps_lb,
                event.c_str(), a_over_b ? "D/D'" : "D'/D", static_cast<long long>(hits_num),
                static_cast<long long>(hits_den), n, events, beta);
  return b;
}

AuditResult audit_pair(const PairSpec& pair, std::int64_t seed, std::size_t n_main, std::size_t n_pilot,
                       double beta) {
  const std::string& qb = pair.query_b.empty() ? pair.query_a : pair.query_b;
  const auto pilot_a = draw_releases(pair.rows_a, pair.query_a, seed, n_pilot, pair.dim);
  const auto pilot_b = draw_releases(pair.rows_b, qb, seed + 1, n_pilot, pair.dim);
  const auto events = threshold_events(pilot_a, pilot_b);
  const auto a = draw_releases(pair.rows_a, pair.query_a, seed + 2, n_main, pair.dim);
  const auto b = draw_releases(pair.rows_b, qb, seed + 3, n_main, pair.dim);
  return audit_eps(a, b, events, beta);
}

const char* current_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? info->name() : "?";
}

AuditResult audit_labelled(const std::string& query, const LabelledPair& p, std::size_t dim, double beta) {
  const PairSpec spec{p.rows_a, p.rows_b, query, p.query_b, dim};
  const std::string name = query + " | " + p.label + (p.query_b.empty() ? "" : " | " + p.query_b);
  const AuditResult r = audit_pair(spec, seed_of(name), n_main(), n_pilot(), beta);
  std::printf("[audit] %s: %s | %s\n", current_test_name(), name.c_str(), r.summary().c_str());
  std::fflush(stdout);
  ::testing::Test::RecordProperty(p.label, r.summary());
  return r;
}

void expect_private(const std::string& query, double claim, const std::vector<LabelledPair>& pairs, std::size_t dim,
                    double beta) {
  for (const LabelledPair& p : pairs) {
    const AuditResult r = audit_labelled(query, p, dim, beta);
    EXPECT_LE(r.eps_lb, claim) << query << " on " << p.label << " (D = {" << p.rows_a.substr(0, 100) << "}, D' = {"
                               << p.rows_b.substr(0, 100) << "}"
                               << (p.query_b.empty() ? "" : ", D' query " + p.query_b)
                               << "): the audit proves eps >= " << r.eps_lb << " > claimed " << claim
                               << " with confidence 1 - " << beta << "\n  " << r.summary();
  }
}

bool long_run() {
  const char* e = std::getenv("OPTDP_AUDIT_LONG");
  return e != nullptr && *e != '\0' && std::strcmp(e, "0") != 0;
}
std::size_t n_main() { return long_run() ? 200000 : 5000; }
std::size_t n_pilot() { return long_run() ? 20000 : 1000; }

std::int64_t seed_of(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return static_cast<std::int64_t>(h >> 24);
}

}  // namespace optdp::test
