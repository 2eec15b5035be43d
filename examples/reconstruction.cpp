// The Dinur–Nissim reconstruction attack, against SQL, with and without optdp.
//
// A table t(id, secret) holds n = 128 rows with a secret 0/1 column. The
// attacker may only ask subset-count queries,
//     SELECT count(*) FROM t WHERE secret AND id IN (...)
// for random subsets S of the ids, and sees the answers, possibly noisy.
// Dinur and Nissim (PODS 2003) showed
// that about n log^2 n such answers with error E = o(sqrt(n)) give away
// almost every secret: solve the linear program
//     find x in [0,1]^n with |sum_{i in S} x_i - a_S| <= E for every query S,
// and round each x_i at 1/2.
//
// The LP is solved with COIN-OR Clp (the solver optdp_core uses). So that it is
// always feasible, each query gets a slack s_S >= 0 in |...| <= E + s_S and
// the LP minimises sum s_S: when E bounds the noise the optimum has every
// s_S = 0 and this is exactly Dinur and Nissim's LP; when it does not, it is
// the least-absolute-deviation fit, the attacker's best effort.
//
// Scenarios (the same data and the same queries, in the same order, in each):
//   (a) answers exact, or with noise well below sqrt(n): the attack works.
//       Also: private_count at a per-query epsilon of 0.69 *without* a budget:
//       each answer is private, but thousands of them are not.
//   (b) private_count behind a privacy budget ledger (total epsilon 5, 0.1 per
//       query): the ledger refuses the queries once the budget is spent, and
//       the few answers the attacker got reveal next to nothing.
//   (c) private_count with no ledger but a total epsilon of 1 split over all
//       the queries (alpha = e^(-1/q) each): the noise drowns the answers.
//
// Run: ./build/examples/optdp_reconstruction_example
// Everything is seeded (data, subsets, the noise of (a) and (c)); (b) draws
// its noise from the OS, since optdp refuses dp_seed once a ledger is attached.
#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

extern "C" int sqlite3_optdp_init(sqlite3* db, char** pzErrMsg, const sqlite3_api_routines* pApi);

namespace {

constexpr int kRows = 128;  // n

// ---- a minimal SQLite wrapper ----------------------------------------------

class Db {
 public:
  Db() {
    if (sqlite3_open(":memory:", &db_) != SQLITE_OK) die("open");
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::fprintf(stderr, "error: %s\n  in: %.200s\n", err, sql.c_str());
      std::exit(1);
    }
  }

  // The first column of the first row as an integer, or nullopt and the
  // error message in *error if the statement fails (e.g. budget exhausted).
  std::optional<std::int64_t> query_int(const std::string& sql, std::string* error) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) die("prepare");
    std::optional<std::int64_t> value;
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    } else if (error) {
      *error = sqlite3_errmsg(db_);
    }
    sqlite3_finalize(stmt);
    return value;
  }

  double query_double(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) die("prepare");
    if (sqlite3_step(stmt) != SQLITE_ROW) die("step");
    const double v = sqlite3_column_double(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
  }

 private:
  [[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db_));
    std::exit(1);
  }
  sqlite3* db_ = nullptr;
};

// A fresh in-memory database holding the secret table.
void create_table(Db& db, const std::vector<int>& secret) {
  std::string sql = "CREATE TABLE t(id INTEGER PRIMARY KEY, secret INTEGER NOT NULL); INSERT INTO t VALUES ";
  for (int i = 0; i < kRows; ++i) {
    sql += (i ? ",(" : "(") + std::to_string(i) + "," + std::to_string(secret[i]) + ")";
  }
  db.exec(sql);
}

// ---- the attack ------------------------------------------------------------

using Subset = std::vector<int>;  // row ids

// The count query for subset s; count_expr is e.g. "count(*)" or "private_count(0.5)".
std::string count_sql(const std::string& count_expr, const Subset& s) {
  std::string sql = "SELECT " + count_expr + " FROM t WHERE secret AND id IN (";
  for (std::size_t k = 0; k < s.size(); ++k) sql += (k ? "," : "") + std::to_string(s[k]);
  return sql + ")";
}

// The weeding phase: x in [0,1]^n with |sum_{i in S_j} x_i - a_j| <= E + s_j,
// s_j >= 0, minimising sum_j s_j (see the top of the file). Returns x.
std::vector<double> solve_lp(const std::vector<Subset>& subsets, const std::vector<std::int64_t>& answers,
                             double bound) {
  const int q = static_cast<int>(answers.size());
  if (q == 0) return std::vector<double>(kRows, 0.5);  // no information at all
  // Columns: x_0..x_{n-1}, then s+_j and s-_j for each query j.
  // Row j: sum_{i in S_j} x_i + s+_j - s-_j in [a_j - E, a_j + E].
  const int ncols = kRows + 2 * q;
  std::vector<int> rows, cols;
  std::vector<double> vals;
  std::vector<double> row_lb(q), row_ub(q);
  for (int j = 0; j < q; ++j) {
    for (int i : subsets[j]) {
      rows.push_back(j);
      cols.push_back(i);
      vals.push_back(1.0);
    }
    rows.push_back(j), cols.push_back(kRows + 2 * j), vals.push_back(1.0);
    rows.push_back(j), cols.push_back(kRows + 2 * j + 1), vals.push_back(-1.0);
    row_lb[j] = static_cast<double>(answers[j]) - bound;
    row_ub[j] = static_cast<double>(answers[j]) + bound;
  }
  CoinPackedMatrix matrix(true, rows.data(), cols.data(), vals.data(), static_cast<CoinBigIndex>(vals.size()));
  matrix.setDimensions(q, ncols);
  std::vector<double> col_lb(ncols, 0.0), col_ub(ncols, COIN_DBL_MAX), cost(ncols, 1.0);
  for (int i = 0; i < kRows; ++i) col_ub[i] = 1.0, cost[i] = 0.0;

  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(matrix, col_lb.data(), col_ub.data(), cost.data(), row_lb.data(), row_ub.data());
  model.dual();
  if (!model.isProvenOptimal()) {
    std::fprintf(stderr, "Clp did not solve the LP (status %d)\n", model.status());
    std::exit(1);
  }
  const double* x = model.primalColumnSolution();
  return std::vector<double>(x, x + kRows);
}

// The rounding phase, and the share of rows it gets right.
double recovered(const std::vector<double>& x, const std::vector<int>& secret) {
  int right = 0;
  for (int i = 0; i < kRows; ++i) right += (x[i] > 0.5 ? 1 : 0) == secret[i];
  return static_cast<double>(right) / kRows;
}

struct Outcome {
  std::string scenario;
  int answered = 0;
  double mean_abs_noise = 0;  // observed, over the answered queries
  std::string total_eps;
  double recovered = 0;
};

// Asks the queries in order through db until one is refused; returns the
// answers it got, and in *refusal the error that stopped it.
std::vector<std::int64_t> ask(Db& db, const std::string& count_expr, const std::vector<Subset>& subsets,
                              std::string* refusal) {
  std::vector<std::int64_t> answers;
  for (const Subset& s : subsets) {
    std::string error;
    const auto a = db.query_int(count_sql(count_expr, s), &error);
    if (!a) {
      if (refusal) *refusal = error;
      break;
    }
    answers.push_back(*a);
  }
  return answers;
}

Outcome attack(const std::string& name, const std::vector<Subset>& subsets, const std::vector<std::int64_t>& answers,
               const std::vector<std::int64_t>& true_counts, double bound, const std::vector<int>& secret,
               const std::string& total_eps) {
  Outcome o;
  o.scenario = name;
  o.answered = static_cast<int>(answers.size());
  double noise = 0;
  for (std::size_t j = 0; j < answers.size(); ++j) noise += std::fabs(static_cast<double>(answers[j] - true_counts[j]));
  o.mean_abs_noise = answers.empty() ? 0 : noise / static_cast<double>(answers.size());
  o.total_eps = total_eps;
  o.recovered = recovered(solve_lp(subsets, answers, bound), secret);
  return o;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

int main() {
  // optdp in every connection this program opens (see embed.cpp).
  sqlite3_auto_extension(reinterpret_cast<void (*)(void)>(sqlite3_optdp_init));

  // The data and the queries, from a fixed seed (std::mt19937_64 is the same
  // everywhere; only its raw bits are used).
  std::mt19937_64 rng(20030609);
  std::vector<int> secret(kRows);
  for (int& s : secret) s = static_cast<int>(rng() & 1);
  const int q = static_cast<int>(std::lround(kRows * std::log(kRows) * std::log(kRows)));  // n ln^2 n
  std::vector<Subset> subsets(q);
  for (Subset& s : subsets) {
    for (int i = 0; i < kRows; ++i) {
      if (rng() & 1) s.push_back(i);  // a uniformly random subset: each row with probability 1/2
    }
  }
  int ones = 0;
  for (int s : secret) ones += s;
  const double chance = static_cast<double>(std::max(ones, kRows - ones)) / kRows;

  std::printf("Dinur-Nissim reconstruction: n = %d rows with a secret bit (%d ones), %d random subset-count\n",
              kRows, ones, q);
  std::printf("queries (n ln^2 n), each SELECT count(*) FROM t WHERE secret AND id IN (<random half of the ids>).\n");
  std::printf("sqrt(n) = %.1f. Guessing the majority value for every row gets %.1f%% right.\n\n", std::sqrt(kRows),
              100 * chance);

  std::vector<Outcome> outcomes;
  std::vector<std::int64_t> truth;

  // (a) Exact answers: the honest database.
  {
    Db db;
    create_table(db, secret);
    truth = ask(db, "count(*)", subsets, nullptr);
    outcomes.push_back(attack("(a) exact counts", subsets, truth, truth, 0, secret, "inf"));

    // (a) The same answers, each perturbed by uniform noise in {-1, 0, +1}
    // (say, a curator that rounds): E = 1, far below sqrt(n).
    std::vector<std::int64_t> rounded = truth;
    for (auto& a : rounded) a += static_cast<std::int64_t>(rng() % 3) - 1;
    outcomes.push_back(
        attack("(a) exact + uniform noise in {-1,0,1}, E = 1", subsets, rounded, truth, 1, secret, "inf"));
  }
  // (a) private_count(0.5), epsilon 0.69 per query, and no budget.
  {
    Db db;
    create_table(db, secret);
    db.exec("SELECT dp_seed(1)");
    const auto answers = ask(db, "private_count(0.5)", subsets, nullptr);
    outcomes.push_back(attack("(a) private_count(0.5) per query, no ledger", subsets, answers, truth, 0, secret,
                              fmt("%.0f", q * std::log(2.0))));
  }
  // (b) private_count at epsilon 0.1 per query, with a ledger of total epsilon 5.
  std::string refusal;
  {
    std::string dir_template = (std::filesystem::temp_directory_path() / "optdp-reconstruction-XXXXXX").string();
    const char* dir = mkdtemp(dir_template.data());
    if (!dir) {
      std::perror("mkdtemp");
      return 1;
    }
    const std::string ledger = std::string(dir) + "/attack.ledger";
    double spent = 0;
    std::vector<std::int64_t> answers;
    {
      Db db;
      create_table(db, secret);
      db.exec("SELECT dp_ledger_attach('" + ledger + "', 5.0)");
      answers = ask(db, "private_count(0.90483741803595963)", subsets, &refusal);  // dp_alpha(0.1)
      spent = db.query_double("SELECT dp_budget_spent()");
    }
    std::filesystem::remove_all(dir);
    outcomes.push_back(attack("(b) private_count(e^-0.1), ledger of epsilon 5", subsets, answers, truth, 0, secret,
                              fmt("%.2f", spent)));
  }
  // (c) No ledger, but a total epsilon of 1 split evenly over all q queries.
  {
    Db db;
    create_table(db, secret);
    db.exec("SELECT dp_seed(3)");
    // alpha is written as a literal: optdp reads parameters from the statement's text.
    const double alpha = db.query_double("SELECT dp_alpha(1.0 / " + std::to_string(q) + ")");
    const auto answers = ask(db, "private_count(" + fmt("%.17g", alpha) + ")", subsets, nullptr);
    outcomes.push_back(attack("(c) private_count(e^-1/" + std::to_string(q) + "), no ledger", subsets, answers, truth,
                              0, secret, "1.00"));
  }

  std::printf("%-46s %9s %11s %9s %9s\n", "scenario", "answered", "mean|noise|", "total eps", "recovered");
  for (const Outcome& o : outcomes) {
    std::printf("%-46s %4d/%-4d %11.2f %9s %8.1f%%\n", o.scenario.c_str(), o.answered, q, o.mean_abs_noise,
                o.total_eps.c_str(), 100 * o.recovered);
  }
  std::printf("\nmean|noise|: the mean |answer - true count| over the answered queries. total eps: the privacy\n"
              "loss of all the answers together (sequential composition); inf: exact answers, no privacy at all.\n");
  std::printf("\n(b) the ledger stopped the attack after %d of %d queries: %s\n", outcomes[3].answered, q,
              refusal.empty() ? "(no refusal)" : refusal.c_str());
  return 0;
}
