// sql_bench: SQL-level cost of optdp's aggregates against SQLite baselines.
//
// Builds an in-memory table t(x INTEGER) of N rows (default 10,000,000, by a
// recursive CTE in one transaction), loads optdp.so and noop.so, then runs
// every query of kQueries once per repetition, interleaved (the starting query
// rotates each repetition so that no query always runs first), and reports the
// median wall time (and thread CPU time) of each query plus ratios against the
// baselines measured in the same run. Absolute times on a shared machine are
// noise; the ratios are the figures to read.
//
//   sql_bench [--rows N] [--reps N] [--optdp PATH] [--noop PATH]
//
// To benchmark another query, add a row to kQueries.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#ifndef OPTDP_MODULE_PATH
#define OPTDP_MODULE_PATH "./optdp.so"
#endif
#ifndef NOOP_MODULE_PATH
#define NOOP_MODULE_PATH "./noop.so"
#endif

namespace {

struct Query {
  const char* label;
  const char* sql;
};

// The queries timed, in the order printed. Labels named in kBaselines and
// kTargets must appear here.
constexpr Query kQueries[] = {
    // SQLite's count(*) without WHERE is special-cased (OP_Count walks the
    // b-tree and counts cells without decoding rows or calling any step).
    {"count(*)", "SELECT count(*) FROM t"},
    // A built-in aggregate that does visit every row: the cost of the scan.
    {"count(x)", "SELECT count(x) FROM t"},
    // The user-defined aggregate whose step does nothing (bench/noop_ext.c).
    {"noop_agg(0.5)", "SELECT noop_agg(0.5) FROM t"},
    // noop_agg plus the per-row sqlite3_aggregate_context call and ++counter:
    // the floor for any user-defined counting aggregate.
    {"noop_count_agg(0.5)", "SELECT noop_count_agg(0.5) FROM t"},
    {"private_count(0.5)", "SELECT private_count(0.5) FROM t"},
    {"private_count(x, 0.5)", "SELECT private_count(x, 0.5) FROM t"},
    {"private_count_levels(0.5, 0.9)", "SELECT private_count_levels(0.5, 0.9) FROM t"},
    // Sums: the built-in sum() against the private sums.
    {"sum(x)", "SELECT sum(x) FROM t"},
    // Probe for the sums (bench/noop_ext.c): a user-defined sum that reads x
    // only (no clamp, no grid).
    {"noop_sum_agg(x, 1.0, 0, 100)", "SELECT noop_sum_agg(x, 1.0, 0, 100) FROM t"},
    {"staircase_sum(x, 1.0, 0, 100)", "SELECT staircase_sum(x, 1.0, 0, 100) FROM t"},
    {"staircase_sum(x, 1.0, 100)", "SELECT staircase_sum(x, 1.0, 100) FROM t"},
    {"laplace_sum(x, 1.0, 0, 100)", "SELECT laplace_sum(x, 1.0, 0, 100) FROM t"},
    // Quantiles: per row one clamp, one scaling, one bucket increment (4097
    // counts); then one release over 4096 candidates. Over [0, 10^7] the rows
    // (1..N) spread over every bucket; over [0, 100] nearly all are clamped.
    {"private_quantile(x, 0.9, 1.0, 0, 1e7)", "SELECT private_quantile(x, 0.9, 1.0, 0, 10000000) FROM t"},
    {"private_median(x, 1.0, 0, 100)", "SELECT private_median(x, 1.0, 0, 100) FROM t"},
};

// Every query is also printed as a ratio against each of these.
constexpr const char* kBaselines[] = {"noop_agg(0.5)", "noop_count_agg(0.5)", "count(*)", "sum(x)",
                                      "staircase_sum(x, 1.0, 0, 100)"};

// Targets from the issues: query / baseline <= limit, judged on the ratio of
// the medians. A row with limit 0 is a ratio reported for information (no
// target).
struct Target {
  const char* area;  // what the target is about, for the report
  const char* query;
  const char* baseline;
  double limit;
};
constexpr Target kTargets[] = {
    // The stateful C floor: no counting aggregate can do less per row than
    // sqlite3_aggregate_context + ++n.
    {"counts", "private_count(0.5)", "noop_count_agg(0.5)", 1.05},
    {"counts", "private_count(0.5)", "noop_agg(0.5)", 0},
    {"counts", "noop_count_agg(0.5)", "noop_agg(0.5)", 0},
    {"sums", "staircase_sum(x, 1.0, 0, 100)", "sum(x)", 1.15},
    {"sums", "laplace_sum(x, 1.0, 0, 100)", "staircase_sum(x, 1.0, 0, 100)", 0},
    {"quantiles", "private_quantile(x, 0.9, 1.0, 0, 1e7)", "sum(x)", 1.5},
    {"quantiles", "private_median(x, 1.0, 0, 100)", "sum(x)", 1.5},
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "sql_bench: %s\n", what.c_str());
  std::exit(1);
}

void check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
    die(std::string(what) + ": " + sqlite3_errmsg(db));
}

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = std::string(sql) + ": " + (err ? err : "?");
    sqlite3_free(err);
    die(msg);
  }
}

void load(sqlite3* db, const char* path, const char* entry) {
  char* err = nullptr;
  if (sqlite3_load_extension(db, path, entry, &err) != SQLITE_OK) {
    std::string msg = std::string("loading ") + path + ": " + (err ? err : "?");
    sqlite3_free(err);
    die(msg);
  }
}

// CPU time of the calling thread, in seconds: unlike wall time it does not
// count the time the thread waits while other processes run on a shared
// machine.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double wall, cpu;  // seconds
};

// Runs sql to completion; returns the wall and thread CPU time and stores the
// first column of the last row in *value.
Timing run(sqlite3* db, const char* sql, std::string* value) {
  const double c0 = thread_cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  sqlite3_stmt* st = nullptr;
  check(db, sqlite3_prepare_v2(db, sql, -1, &st, nullptr), sql);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (value) {
      const unsigned char* t = sqlite3_column_text(st, 0);
      *value = t ? reinterpret_cast<const char*>(t) : "NULL";
    }
  }
  check(db, rc, sql);
  sqlite3_finalize(st);
  const auto t1 = std::chrono::steady_clock::now();
  return {std::chrono::duration<double>(t1 - t0).count(), thread_cpu_seconds() - c0};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int index_of(const char* label) {
  for (std::size_t i = 0; i < std::size(kQueries); ++i)
    if (std::strcmp(kQueries[i].label, label) == 0) return static_cast<int>(i);
  die(std::string("no query labelled ") + label);
}

void usage() {
  std::printf(
      "usage: sql_bench [--rows N] [--reps N] [--optdp PATH] [--noop PATH]\n"
      "  --rows N     rows in the generated table (default 10000000)\n"
      "  --reps N     interleaved repetitions; medians are reported (default 7)\n"
      "  --optdp PATH optdp extension (default %s)\n"
      "  --noop PATH  noop extension (default %s)\n",
      OPTDP_MODULE_PATH, NOOP_MODULE_PATH);
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t rows = 10'000'000;
  int reps = 7;
  std::string optdp_path = OPTDP_MODULE_PATH;
  std::string noop_path = NOOP_MODULE_PATH;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--rows") rows = std::stoll(value());
    else if (a == "--reps") reps = std::stoi(value());
    else if (a == "--optdp") optdp_path = value();
    else if (a == "--noop") noop_path = value();
    else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else {
      usage();
      die("unknown argument " + a);
    }
  }
  if (rows < 1 || reps < 1) die("--rows and --reps must be positive");

  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) die("cannot open an in-memory database");
  check(db, sqlite3_enable_load_extension(db, 1), "enable_load_extension");
  load(db, optdp_path.c_str(), "sqlite3_optdp_init");
  load(db, noop_path.c_str(), "sqlite3_noop_init");

  std::printf("sql_bench: SQLite %s, in-memory table t(x INTEGER), %lld rows, %d interleaved repetitions\n",
              sqlite3_libversion(), static_cast<long long>(rows), reps);
  std::printf("  optdp: %s\n  noop:  %s\n", optdp_path.c_str(), noop_path.c_str());
  std::fflush(stdout);

  {
    const auto t0 = std::chrono::steady_clock::now();
    exec(db, "CREATE TABLE t(x INTEGER)");
    exec(db, "BEGIN");
    sqlite3_stmt* st = nullptr;
    check(db,
          sqlite3_prepare_v2(db,
                             "INSERT INTO t(x) WITH RECURSIVE c(i) AS "
                             "(SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?1) SELECT i FROM c",
                             -1, &st, nullptr),
          "prepare insert");
    sqlite3_bind_int64(st, 1, rows);
    check(db, sqlite3_step(st), "insert");
    sqlite3_finalize(st);
    exec(db, "COMMIT");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("  table built in %.2f s\n", s);
  }

  constexpr std::size_t nq = std::size(kQueries);
  std::vector<std::vector<double>> times(nq), cpu_times(nq);  // wall, thread CPU
  std::vector<std::string> values(nq);

  // One untimed warm-up pass (page cache, branch predictors, lazy init).
  for (std::size_t q = 0; q < nq; ++q) run(db, kQueries[q].sql, &values[q]);

  for (int r = 0; r < reps; ++r) {
    for (std::size_t k = 0; k < nq; ++k) {
      const std::size_t q = (k + static_cast<std::size_t>(r)) % nq;
      const Timing t = run(db, kQueries[q].sql, &values[q]);
      times[q].push_back(t.wall);
      cpu_times[q].push_back(t.cpu);
    }
    std::printf("  repetition %d/%d done\n", r + 1, reps);
    std::fflush(stdout);
  }

  std::vector<double> med(nq), cpu_med(nq);
  for (std::size_t q = 0; q < nq; ++q) {
    med[q] = median(times[q]);
    cpu_med[q] = median(cpu_times[q]);
  }

  std::printf("\n%-38s %10s %9s %9s %9s %9s  %s\n", "query", "median ms", "min ms", "max ms", "ns/row", "cpu ms",
              "last result");
  for (std::size_t q = 0; q < nq; ++q) {
    const auto [lo, hi] = std::minmax_element(times[q].begin(), times[q].end());
    std::printf("%-38s %10.1f %9.1f %9.1f %9.2f %9.1f  %s\n", kQueries[q].label, med[q] * 1e3, *lo * 1e3, *hi * 1e3,
                med[q] * 1e9 / static_cast<double>(rows), cpu_med[q] * 1e3, values[q].c_str());
  }
  std::printf("(median ms, min, max, ns/row: wall time; cpu ms: median CPU time of the thread)\n");

  // Median of the per-repetition ratios q / b (each pair measured in the same
  // repetition, seconds apart, so slow phases of the machine cancel).
  auto paired = [&](const std::vector<std::vector<double>>& t, int q, int b) {
    std::vector<double> v;
    for (int r = 0; r < reps; ++r) v.push_back(t[static_cast<std::size_t>(q)][static_cast<std::size_t>(r)] /
                                               t[static_cast<std::size_t>(b)][static_cast<std::size_t>(r)]);
    return median(v);
  };

  // Ratio of medians, and the median of the per-repetition ratios, for wall
  // time and for thread CPU time.
  for (int clock = 0; clock < 2; ++clock) {
    const auto& t = clock == 0 ? times : cpu_times;
    const auto& m = clock == 0 ? med : cpu_med;
    std::printf("\nratios, %s (ratio of medians | median of per-repetition ratios)\n",
                clock == 0 ? "wall time" : "thread CPU time");
    std::printf("%-38s", "query");
    for (const char* b : kBaselines) std::printf("   %-26s", (std::string("/ ") + b).c_str());
    std::printf("\n");
    for (std::size_t q = 0; q < nq; ++q) {
      std::printf("%-38s", kQueries[q].label);
      for (const char* b : kBaselines) {
        const int bi = index_of(b);
        char cell[64];
        std::snprintf(cell, sizeof cell, "%8.3f | %8.3f", m[q] / m[static_cast<std::size_t>(bi)],
                      paired(t, static_cast<int>(q), bi));
        std::printf("   %-26s", cell);
      }
      std::printf("\n");
    }
  }

  std::printf("\ntargets over %lld rows: ratio of the medians (median of the per-repetition ratios), wall time,\n"
              "then thread CPU time; a verdict for each (the CPU one is the steadier on a busy machine)\n",
              static_cast<long long>(rows));
  for (const Target& t : kTargets) {
    const int qi = index_of(t.query), bi = index_of(t.baseline);
    const double wall = med[static_cast<std::size_t>(qi)] / med[static_cast<std::size_t>(bi)];
    const double cpu = cpu_med[static_cast<std::size_t>(qi)] / cpu_med[static_cast<std::size_t>(bi)];
    if (t.limit > 0)
      std::printf("  %s: target %s / %s <= %.2f:\n      wall %.3f (%.3f): %s; cpu %.3f (%.3f): %s\n", t.area,
                  t.query, t.baseline, t.limit, wall, paired(times, qi, bi), wall <= t.limit ? "MET" : "NOT MET", cpu,
                  paired(cpu_times, qi, bi), cpu <= t.limit ? "MET" : "NOT MET");
    else
      std::printf("  %s: %s / %s (reported, no target):\n      wall %.3f (%.3f); cpu %.3f (%.3f)\n", t.area,
                  t.query, t.baseline, wall, paired(times, qi, bi), cpu, paired(cpu_times, qi, bi));
  }

  sqlite3_close(db);
  return 0;
}
