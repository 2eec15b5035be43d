// release_timing: does the wall time of a release tell whether a row matched?
//
// For each randomised aggregate form, one prepared statement
//
//   SELECT <form> FROM patients WHERE id = ?1
//
// is run many times, bound alternately to an id that exists (one row matches:
// the parameters are read by the step of that row) and to an id that does not
// (no row: they are read by the final). Each run times sqlite3_step from the
// first call to SQLITE_DONE (the whole release) with steady_clock. The forms
// run one after the other; within a form the two cases run in pairs, back to
// back, and which one goes first alternates from pair to pair, so drift of
// the machine falls on both alike.
//
// Three settings:
//   index  patients has an index on id: both cases seek it and read nothing
//          else (the hit also reads its one row and runs one step);
//   scan   the same statement with NOT INDEXED: both cases read all rows, so
//          the difference is only where the parameters are read and the step
//          of the one matching row;
//   ledger the index setting on a second connection with a privacy ledger
//          attached (dp_ledger_attach(tmp file, 1e6, 'normal')): every release
//          is also a write transaction on the ledger.
// Reference rows: the built-in count(x) and noop_count_agg(0.5) (bench/noop_ext.c)
// show the gap that SQLite's own plan makes between one row and none.
//
// Each release also follows one with the same statement and either the same
// id (its pair's first release: the previous pair ended with the same case)
// or the other id (the second). That matters: read_params keeps its last
// result while the running statements' texts and bound values
// (sqlite3_expanded_sql) are unchanged, so a release after one with the same
// id skips tokenizing. Hit and miss are therefore also compared like with
// like, per history.
//
// Reported per case: median, interquartile range (p25-p75) and 5-95 % range
// in ns; the gap between the medians (miss - hit); whether each median lies
// inside the other case's IQR ("inside"); the gap less that of the reference
// that reads the same columns (count(x) for forms with x, noop_count_agg(0.5)
// for the others: SQLite's own cost of the one matching row); and the
// Kolmogorov-Smirnov distance D between the two samples, as acc = 0.5 + D/2:
// the success rate of the best threshold on one timing at telling hit from
// miss (0.5: no better than a coin).
//
//   release_timing [--runs N] [--ledger-runs N] [--rows N] [--only SUBSTRING]
//                  [--optdp PATH] [--noop PATH] [--ledger PATH] [--no-ledger] [--dump FILE]
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef OPTDP_MODULE_PATH
#define OPTDP_MODULE_PATH "./optdp.so"
#endif
#ifndef NOOP_MODULE_PATH
#define NOOP_MODULE_PATH "./noop.so"
#endif

namespace {

struct Form {
  const char* label;
  const char* expr;  // the select list
  bool reference;    // not randomised: SQLite's own gap between one row and none
  bool reads_x;      // reads column x (then the index does not cover the query)
};

constexpr Form kForms[] = {
    {"count(x) [built-in]", "count(x)", true, true},
    {"noop_count_agg(0.5) [C]", "noop_count_agg(0.5)", true, false},
    {"private_count(0.5)", "private_count(0.5)", false, false},
    {"private_count(x, 0.5)", "private_count(x, 0.5)", false, true},
    {"staircase_sum(x, 1.0, 0, 100)", "staircase_sum(x, 1.0, 0, 100)", false, true},
    {"staircase_sum(x, 1.0, 100)", "staircase_sum(x, 1.0, 100)", false, true},
    {"laplace_sum(x, 1.0, 0, 100)", "laplace_sum(x, 1.0, 0, 100)", false, true},
    {"private_count_levels(0.5, 0.9)", "private_count_levels(0.5, 0.9)", false, false},
    {"private_count_levels_of(x, 0.5, 0.9)", "private_count_levels_of(x, 0.5, 0.9)", false, true},
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "release_timing: %s\n", what.c_str());
  std::exit(1);
}

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = sql + ": " + (err ? err : "?");
    sqlite3_free(err);
    die(msg);
  }
}

void load(sqlite3* db, const std::string& path, const char* entry) {
  char* err = nullptr;
  if (sqlite3_load_extension(db, path.c_str(), entry, &err) != SQLITE_OK) {
    std::string msg = "loading " + path + ": " + (err ? err : "?");
    sqlite3_free(err);
    die(msg);
  }
}

// ids first_id .. first_id + rows - 1 exist; hit and miss have as many digits
// (the ledger records the statement's expanded text, which holds the id).
constexpr std::int64_t kFirstId = 100000;

sqlite3* open_db(std::int64_t rows, const std::string& optdp, const std::string& noop) {
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) die("cannot open an in-memory database");
  if (sqlite3_enable_load_extension(db, 1) != SQLITE_OK) die("enable_load_extension");
  load(db, optdp, "sqlite3_optdp_init");
  load(db, noop, "sqlite3_noop_init");
  exec(db, "CREATE TABLE patients(id INTEGER NOT NULL, x INTEGER)");
  exec(db, "INSERT INTO patients(id, x) WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < " +
               std::to_string(rows - 1) + ") SELECT " + std::to_string(kFirstId) + " + i, i % 101 FROM c");
  exec(db, "CREATE INDEX patients_id ON patients(id)");
  exec(db, "ANALYZE");
  return db;
}

// One release: steps the statement bound to id to completion; returns the
// wall time in ns of the steps (from the first sqlite3_step to SQLITE_DONE).
double release(sqlite3* db, sqlite3_stmt* st, std::int64_t id) {
  sqlite3_bind_int64(st, 1, id);
  const auto t0 = std::chrono::steady_clock::now();
  int rc;
  int rows = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) ++rows;
  const auto t1 = std::chrono::steady_clock::now();
  if (rc != SQLITE_DONE || rows != 1) die(std::string(sqlite3_sql(st)) + ": " + sqlite3_errmsg(db));
  sqlite3_reset(st);
  return std::chrono::duration<double, std::nano>(t1 - t0).count();
}

double quantile(const std::vector<double>& sorted, double p) {
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < sorted.size() ? sorted[i] * (1 - f) + sorted[i + 1] * f : sorted[i];
}

struct Summary {
  double p5, p25, med, p75, p95;
};

Summary summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {quantile(v, 0.05), quantile(v, 0.25), quantile(v, 0.5), quantile(v, 0.75), quantile(v, 0.95)};
}

// Two-sample Kolmogorov-Smirnov distance: max |F_a(t) - F_b(t)|.
double ks_distance(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double t = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= t) ++i;
    while (j < b.size() && b[j] <= t) ++j;
    d = std::max(d, std::fabs(static_cast<double>(i) / static_cast<double>(a.size()) -
                              static_cast<double>(j) / static_cast<double>(b.size())));
  }
  return d;
}

struct Result {
  const Form* form;
  std::vector<double> hit, miss;  // all pairs
  // By history: after a release with the same id (first in its pair) or
  // with the other id (second).
  std::vector<double> hit_same, miss_same, hit_other, miss_other;
};

std::FILE* g_dump = nullptr;  // --dump: raw times, one line per pair

// Runs every form runs times per case: form by form (the connection caches one
// sampler, so interleaving forms would rebuild it in the first release of
// every pair), each a sequence of pairs, hit and miss back to back, hit first
// in even pairs and miss first in odd ones (so each pair's first release has
// the same id as the release before it); warmup untimed pairs first.
std::vector<Result> measure(sqlite3* db, const char* setting, const char* from, int runs, int warmup,
                            const std::string& only, std::int64_t hit_id, std::int64_t miss_id) {
  std::vector<Result> res;
  for (const Form& f : kForms) {
    if (!only.empty() && std::string(f.label).find(only) == std::string::npos) continue;
    const std::string sql = std::string("SELECT ") + f.expr + " FROM " + from + " WHERE id = ?1";
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) die(sql + ": " + sqlite3_errmsg(db));
    Result r{&f, {}, {}, {}, {}, {}, {}};
    r.hit.reserve(static_cast<std::size_t>(runs));
    r.miss.reserve(static_cast<std::size_t>(runs));
    for (int i = -warmup; i < runs; ++i) {
      const bool hit_first = (i & 1) == 0;
      double th, tm;
      if (hit_first) {
        th = release(db, st, hit_id);
        tm = release(db, st, miss_id);
      } else {
        tm = release(db, st, miss_id);
        th = release(db, st, hit_id);
      }
      if (i < 0) continue;
      r.hit.push_back(th);
      r.miss.push_back(tm);
      (hit_first ? r.hit_same : r.hit_other).push_back(th);
      (hit_first ? r.miss_other : r.miss_same).push_back(tm);
      if (g_dump) std::fprintf(g_dump, "%s\t%s\t%d\t%d\t%.0f\t%.0f\n", setting, f.label, i, hit_first, th, tm);
    }
    sqlite3_finalize(st);
    res.push_back(std::move(r));
  }
  return res;
}

struct Compare {
  Summary h, m;
  double gap;   // median(miss) - median(hit)
  bool inside;  // each median inside the other's IQR
  double acc;   // 0.5 + KS D / 2
};

Compare compare(const std::vector<double>& hit, const std::vector<double>& miss) {
  Compare c{summarise(hit), summarise(miss), 0, false, 0};
  c.gap = c.m.med - c.h.med;
  c.inside = c.m.med >= c.h.p25 && c.m.med <= c.h.p75 && c.h.med >= c.m.p25 && c.h.med <= c.m.p75;
  c.acc = 0.5 + ks_distance(hit, miss) / 2;
  return c;
}

void report(const char* title, const std::vector<Result>& res) {
  std::printf("\n== %s: %zu pairs per form; wall ns of one release\n", title, res.empty() ? 0 : res[0].hit.size());
  std::printf("%-38s %-30s %-30s %6s %6s %6s\n", "form", "hit: median [IQR] (p5-p95)", "miss: median [IQR] (p5-p95)",
              "gap", "inside", "acc");
  for (const Result& r : res) {
    const Compare c = compare(r.hit, r.miss);
    char hs[64], ms[64];
    std::snprintf(hs, sizeof hs, "%.0f [%.0f-%.0f] (%.0f-%.0f)", c.h.med, c.h.p25, c.h.p75, c.h.p5, c.h.p95);
    std::snprintf(ms, sizeof ms, "%.0f [%.0f-%.0f] (%.0f-%.0f)", c.m.med, c.m.p25, c.m.p75, c.m.p5, c.m.p95);
    std::printf("%-38s %-30s %-30s %6.0f %6s %6.3f\n", r.form->label, hs, ms, c.gap, c.inside ? "yes" : "NO",
                c.acc);
  }
  // Like with like: the same history for both cases.
  for (int same = 1; same >= 0; --same) {
    std::printf("\n  %s\n", same ? "after a release with the same id (read_params reuses its last result)"
                                 : "after a release with the other id (read_params tokenizes the text)");
    std::printf("  %-38s %7s %7s %6s %6s %6s %12s %6s %9s %6s\n", "form", "hit", "miss", "gap", "IQR h", "IQR m",
                "p5-95 h / m", "inside", "gap - ref", "acc");
    double ref_gap[2] = {NAN, NAN};  // [reads_x]
    for (const Result& r : res) {
      const Compare c = same ? compare(r.hit_same, r.miss_same) : compare(r.hit_other, r.miss_other);
      if (r.form->reference) ref_gap[r.form->reads_x] = c.gap;
      char w[32];
      std::snprintf(w, sizeof w, "%.0f / %.0f", c.h.p95 - c.h.p5, c.m.p95 - c.m.p5);
      char ex[32] = "-";  // no reference measured (--only)
      if (!std::isnan(ref_gap[r.form->reads_x])) std::snprintf(ex, sizeof ex, "%.0f", c.gap - ref_gap[r.form->reads_x]);
      std::printf("  %-38s %7.0f %7.0f %6.0f %6.0f %6.0f %12s %6s %9s %6.3f\n", r.form->label, c.h.med, c.m.med,
                  c.gap, c.h.p75 - c.h.p25, c.m.p75 - c.m.p25, w, c.inside ? "yes" : "NO", ex, c.acc);
    }
  }
  std::printf("(gap = median(miss) - median(hit), negative: the hit is slower; IQR, p5-95: widths; inside:\n"
              " each median lies in the other case's IQR; gap - ref: less the gap of the reference reading the\n"
              " same columns (count(x) for forms with x, noop_count_agg(0.5) otherwise); acc = 0.5 + D/2 with D\n"
              " the Kolmogorov-Smirnov distance: the success rate of the best threshold on one timing)\n");
  std::fflush(stdout);
}

void usage() {
  std::printf(
      "usage: release_timing [--runs N] [--ledger-runs N] [--rows N] [--only SUBSTRING]\n"
      "                      [--optdp PATH] [--noop PATH] [--ledger PATH] [--no-ledger] [--dump FILE]\n"
      "  --runs N         timed runs per case in the index and scan settings (default 20000)\n"
      "  --ledger-runs N  timed runs per case with a ledger attached (default 5000)\n"
      "  --rows N         rows of the table (default 1000)\n"
      "  --only S         only the forms whose label contains S\n"
      "  --ledger PATH    ledger file (default a new file in $TMPDIR or /tmp, removed at the end)\n"
      "  --no-ledger      skip the ledger setting\n"
      "  --dump FILE      also write every timed pair to FILE (tab-separated)\n"
      "  --optdp PATH     (default %s)\n  --noop PATH      (default %s)\n",
      OPTDP_MODULE_PATH, NOOP_MODULE_PATH);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 20000, ledger_runs = 5000;
  std::int64_t rows = 1000;
  std::string only, optdp = OPTDP_MODULE_PATH, noop = NOOP_MODULE_PATH, ledger;
  bool with_ledger = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--runs") runs = std::stoi(value());
    else if (a == "--ledger-runs") ledger_runs = std::stoi(value());
    else if (a == "--rows") rows = std::stoll(value());
    else if (a == "--only") only = value();
    else if (a == "--optdp") optdp = value();
    else if (a == "--noop") noop = value();
    else if (a == "--ledger") ledger = value();
    else if (a == "--no-ledger") with_ledger = false;
    else if (a == "--dump") {
      const std::string path = value();
      g_dump = std::fopen(path.c_str(), "w");
      if (!g_dump) die("cannot write " + path);
      std::fprintf(g_dump, "setting\tform\tpair\thit_first\thit_ns\tmiss_ns\n");
    }
    else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      usage();
      die("unknown argument " + a);
    }
  }
  if (runs < 2 || rows < 2 || ledger_runs < 2) die("--runs, --ledger-runs and --rows must be at least 2");

  const std::int64_t hit_id = kFirstId + rows / 2;
  const std::int64_t miss_id = kFirstId + rows + rows / 2;  // past the end; as many digits if rows < 400000
  if (std::to_string(hit_id).size() != std::to_string(miss_id).size()) die("--rows too large for equal-length ids");
  const int warmup = std::max(50, runs / 100);

  std::printf("release_timing: SQLite %s, in-memory table patients(id, x) of %lld rows, index on id;\n"
              "  hit: id = %lld (1 row), miss: id = %lld (no row); optdp: %s\n",
              sqlite3_libversion(), static_cast<long long>(rows), static_cast<long long>(hit_id),
              static_cast<long long>(miss_id), optdp.c_str());
  std::fflush(stdout);

  sqlite3* db = open_db(rows, optdp, noop);
  report("index (SELECT f FROM patients WHERE id = ?1)", measure(db, "index", "patients", runs, warmup, only, hit_id, miss_id));
  report("scan (SELECT f FROM patients NOT INDEXED WHERE id = ?1): every run reads all rows",
         measure(db, "scan", "patients NOT INDEXED", runs, warmup, only, hit_id, miss_id));
  sqlite3_close(db);

  if (with_ledger) {
    bool remove_ledger = false;
    if (ledger.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      ledger = std::string(tmp && *tmp ? tmp : "/tmp") + "/release_timing." + std::to_string(getpid()) + ".ledger";
      remove_ledger = true;
    }
    sqlite3* ldb = open_db(rows, optdp, noop);
    exec(ldb, "SELECT dp_ledger_attach('" + ledger + "', 1000000, 'normal')");
    report(("index, ledger attached (" + ledger + ", durability 'normal')").c_str(),
           measure(ldb, "ledger", "patients", ledger_runs, std::max(20, ledger_runs / 100), only, hit_id, miss_id));
    sqlite3_close(ldb);
    if (remove_ledger)
      for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((ledger + suffix).c_str());
  }
  if (g_dump) std::fclose(g_dump);
  return 0;
}
