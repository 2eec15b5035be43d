// Embedding optdp in a C++ program, without load_extension.
//
// The program links SQLite and the static library optdp_static (the same SQL
// bindings as build/optdp.so, with its own entry point), and registers the
// extension with sqlite3_auto_extension: from then on every connection the
// program opens has optdp's functions, as if it had run `.load optdp`.
//
// Build and run (examples/CMakeLists.txt defines the target):
//   cmake --build build --target optdp_embed_example
//   ./build/examples/optdp_embed_example
// Outside this tree, against an installed optdp: find_package(optdp CONFIG
// REQUIRED) and link optdp::optdp_static (tests/install/consumer does).
//
// It prints a few private counts and a private sum beside the true values.
// The noise comes from the operating system's CSPRNG, so the private values
// change from run to run.
#include <optdp/optdp.h>  // sqlite3_optdp_init, the entry point SQLite would look up in optdp.so
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>

namespace {

// Exits with SQLite's message if rc is not what was expected.
void check(sqlite3* db, int rc, int expected, const char* what) {
  if (rc != expected) {
    std::fprintf(stderr, "%s: %s\n", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    std::exit(1);
  }
}

// Runs every statement in sql, ignoring results (for DDL and inserts).
void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "error: %s\n  in: %s\n", err, sql);
    sqlite3_free(err);
    std::exit(1);
  }
}

// Runs one query and prints its rows, columns separated by " | ".
void print_query(sqlite3* db, const char* title, const char* sql) {
  std::printf("%s\n  %s\n", title, sql);
  sqlite3_stmt* stmt = nullptr;
  check(db, sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK, "prepare");
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    std::printf("  ->");
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      std::printf(" %s%s=%s", c ? "| " : "", sqlite3_column_name(stmt, c),
                  reinterpret_cast<const char*>(sqlite3_column_text(stmt, c)));
    }
    std::printf("\n");
  }
  check(db, rc, SQLITE_DONE, "step");
  sqlite3_finalize(stmt);
  std::printf("\n");
}

}  // namespace

int main() {
  // 1. Register optdp for every connection opened from now on. The cast is
  //    the documented idiom: SQLite calls it with (db, &errmsg, api routines).
  if (sqlite3_auto_extension(reinterpret_cast<void (*)(void)>(sqlite3_optdp_init)) != SQLITE_OK) {
    std::fprintf(stderr, "sqlite3_auto_extension failed\n");
    return 1;
  }

  // 2. An ordinary in-memory database: optdp is already there.
  sqlite3* db = nullptr;
  check(db, sqlite3_open(":memory:", &db), SQLITE_OK, "open");

  // 3. Some data: a public table of wards and a private table of patients
  //    (a small, deterministic cousin of sql/fixtures/hospital.sql).
  exec(db,
       "CREATE TABLE wards(ward TEXT PRIMARY KEY);"
       "INSERT INTO wards VALUES ('cardiology'), ('oncology'), ('pediatrics');"
       "CREATE TABLE patients(id INTEGER PRIMARY KEY, ward TEXT, smoker INTEGER, visits INTEGER);"
       "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 500)"
       "  INSERT INTO patients SELECT i, CASE i % 4 WHEN 0 THEN 'oncology' WHEN 1 THEN 'pediatrics'"
       "                                 ELSE 'cardiology' END,"
       "                          (i * 7) % 5 = 0, (i * 17) % 12 FROM s;");

  // 4. Private queries.
  print_query(db, "optdp version and noise source:", "SELECT dp_version() AS version, dp_rng() AS rng");
  print_query(db, "Smokers: the true count and a private count at epsilon 1 (alpha = e^-1):",
              "SELECT count(*) AS true_count, private_count(0.36787944117144233) AS private_count "
              "FROM patients WHERE smoker");
  print_query(db, "Patients per ward (keys from the public table, so every ward gets a row):",
              "SELECT w.ward, count(p.id) AS true_count, private_count(p.id, 0.5) AS private_count "
              "FROM wards w LEFT JOIN patients p ON p.ward = w.ward GROUP BY w.ward ORDER BY w.ward");
  print_query(db, "Total visits (each row clamped into [0, 12]), staircase noise at epsilon 1:",
              "SELECT sum(visits) AS true_sum, staircase_sum(visits, 1.0, 0, 12) AS private_sum FROM patients");

  sqlite3_close(db);
  return 0;
}
