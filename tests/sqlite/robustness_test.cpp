// Robustness of the bindings: allocation failures (SQLite's allocator and C++
// operator new, injected one allocation at a time) give SQLITE_NOMEM or a
// clean error and never crash; interrupted or failed queries free their
// aggregate contexts and virtual-table cursors.
//
// This binary links optdp_static (the same bindings as the module) so
// that its global operator new sees every C++ allocation of optdp.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

extern "C" int sqlite3_optdp_init(sqlite3* db, char** err, const sqlite3_api_routines* api);

namespace {

// -1: never fail; k >= 0: the allocation after k more succeeds fails.
std::atomic<long> fail_countdown{-1};
std::atomic<long> live_cpp_allocations{0};
std::atomic<long> injected_failures{0};

bool should_fail() {
  long c = fail_countdown.load();
  while (c >= 0) {
    if (fail_countdown.compare_exchange_weak(c, c - 1)) {
      if (c == 0) {
        ++injected_failures;
        return true;
      }
      return false;
    }
  }
  return false;
}

// SQLite's allocator, wrapped.
sqlite3_mem_methods default_mem;
void* x_malloc(int n) { return should_fail() ? nullptr : default_mem.xMalloc(n); }
void* x_realloc(void* p, int n) { return should_fail() ? nullptr : default_mem.xRealloc(p, n); }

struct InstallAllocator {
  InstallAllocator() {
    sqlite3_config(SQLITE_CONFIG_GETMALLOC, &default_mem);
    sqlite3_mem_methods m = default_mem;
    m.xMalloc = x_malloc;
    m.xRealloc = x_realloc;
    sqlite3_config(SQLITE_CONFIG_MALLOC, &m);
  }
} install_allocator;

}  // namespace

// C++ allocations, counted and failable.
void* operator new(std::size_t n) {
  if (should_fail()) throw std::bad_alloc();
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  ++live_cpp_allocations;
  return p;
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return operator new(n);
  } catch (...) {
    return nullptr;
  }
}
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  if (p) --live_cpp_allocations;
  std::free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }
void operator delete[](void* p, std::size_t) noexcept { operator delete(p); }

namespace {

struct Db {
  sqlite3* db = nullptr;
  Db() {
    EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_optdp_init(db, &err, nullptr), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    exec("SELECT dp_seed(1);"
         "CREATE TABLE t(g, x); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i < 199) "
         "INSERT INTO t SELECT i % 7, i * 0.5 FROM s; CREATE TABLE e(x);");
  }
  ~Db() { EXPECT_EQ(sqlite3_close(db), SQLITE_OK); }
  // Runs sql with the allocation failure armed at countdown k (-1: none) for
  // exactly the duration of sqlite3_exec, so the test's own allocations never fail.
  int exec(const std::string& sql, std::string* msg = nullptr, long k = -1) {
    char* err = nullptr;
    fail_countdown = k;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    fail_countdown = -1;
    if (msg) *msg = err ? err : "";
    sqlite3_free(err);
    return rc;
  }
};

const char* const kQueries[] = {
    "SELECT g, private_count(0.5) FROM t GROUP BY g",
    "SELECT private_count(x, 0.5) FROM e",
    "SELECT g, staircase_sum(x, 1.0, 0, 50, 'l2'), laplace_sum(x, 1.0, 50) FROM t GROUP BY g",
    "SELECT staircase_sum(x, 1.0, 10) FROM e",
    "SELECT private_count_levels(0.2, 0.5, 0.9), private_count_levels_of(x, 0.3, 0.6) FROM t",
    "SELECT count(*), sum(probability) FROM geometric_matrix(30, 0.5)",
    "SELECT sum(probability) FROM derivation_matrix(12, 0.4, 0.7)",
    "SELECT * FROM staircase_pmf(1.0, 4, -10, 10, 'l2')",
    "SELECT * FROM optimal_remap(20, 0.5, 'power:1.5', '[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21]')",
    "SELECT sum(probability) FROM optimal_mechanism(15, 0.5, 'absolute', 'uniform')",
    "SELECT remap_count(private_count(0.5), 300, 0.5, 'squared', 'uniform') FROM t",
    "SELECT minimax_loss(4, 0.5, 'absolute', 1, 3), optimal_loss(10, 0.5, 'binary', 'uniform')",
    "SELECT dp_derivable('[[0.5,0.5],[0.5,0.5]]', 0.5), noise_cost('staircase', 1, 1, 'l2')",
    "SELECT * FROM release_levels(5, 10, '[0.2, 0.5, 0.9]')",
    "SELECT private_count(1.5) FROM t",
    "SELECT * FROM optimal_remap(3, 0.5, '[[0,1],[1,0]]', 'uniform')",
};

}  // namespace

TEST(Robustness, AllocationFailuresNeverCrash) {
  for (const char* q : kQueries) {
    SCOPED_TRACE(q);
    long k = 0;
    int nomem = 0, errors = 0;
    for (;; ++k) {
      Db db;
      injected_failures = 0;
      std::string msg;
      const int rc = db.exec(q, &msg, k);
      if (injected_failures == 0) {
        // Without an injected failure the query gives its normal outcome
        // (the last two are errors by design).
        const bool bad_by_design = std::string(q).find("1.5)") != std::string::npos || std::string(q).find("[[0,1]") != std::string::npos;
        EXPECT_EQ(rc == SQLITE_OK, !bad_by_design) << q << ": " << msg;
        break;  // the query ran without reaching allocation k
      }
      if (rc == SQLITE_NOMEM) ++nomem;
      else if (rc != SQLITE_OK) ++errors;
      ASSERT_LT(k, 100000) << q;
    }
    EXPECT_GT(k, 0) << q;
    RecordProperty(q, static_cast<int>(k));
  }
}

TEST(Robustness, InterruptedQueriesFreeEverything) {
  { Db warm_up; }  // process-wide, allocated once: the connection registry
  const long before = live_cpp_allocations.load();
  {
    Db db;
    db.exec("CREATE TABLE big(g, x); WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM s WHERE i < 49999) "
            "INSERT INTO big SELECT i % 1000, i FROM s;");
    const char* const long_queries[] = {
        "SELECT g, private_count(0.5), staircase_sum(x, 1, 0, 100) FROM big GROUP BY g",
        "SELECT private_count_levels(0.2, 0.5) FROM big",
        "SELECT count(*) FROM geometric_matrix(2000, 0.5)",
        "SELECT count(*) FROM optimal_mechanism(2000, 0.5, 'absolute', 'uniform')",
    };
    for (const char* q : long_queries) {
      for (int steps : {100, 10000, 1000000}) {
        int calls = 0;
        struct P {
          int* calls;
          int limit;
        } p{&calls, steps / 100};
        sqlite3_progress_handler(
            db.db, 100, [](void* arg) { auto* p = static_cast<P*>(arg); return ++*p->calls > p->limit ? 1 : 0; }, &p);
        const int rc = db.exec(q);
        sqlite3_progress_handler(db.db, 0, nullptr, nullptr);
        EXPECT_TRUE(rc == SQLITE_INTERRUPT || rc == SQLITE_OK) << q << " rc=" << rc;
      }
    }
    // A query failing half way (an integer overflow in a later group, after
    // the aggregates of the earlier groups have been released).
    std::string msg;
    EXPECT_EQ(db.exec("SELECT g, private_count(0.5), staircase_sum(x, 1, 0, 100) FROM big GROUP BY g "
                      "HAVING abs(CASE WHEN g > 5 THEN -9223372036854775807 - 1 ELSE 0 END) >= 0",
                      &msg),
              SQLITE_ERROR);
    EXPECT_NE(msg.find("integer overflow"), std::string::npos) << msg;
    // A statement abandoned mid-way (stepped once, then finalized).
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db.db, "SELECT * FROM geometric_matrix(500, 0.5)", -1, &st, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    sqlite3_finalize(st);
    ASSERT_EQ(sqlite3_prepare_v2(db.db, "SELECT g, private_count(0.5) FROM big GROUP BY g", -1, &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    sqlite3_finalize(st);
  }
  EXPECT_EQ(live_cpp_allocations.load(), before) << "C++ allocations leaked";
}
