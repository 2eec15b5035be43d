// Links the installed optdp statically, registers it for every connection and
// prints dp_version() and one private count of an empty in-memory database
// (0 + noise: an integer). tests/install/run_install_test.py checks the output.
#include <optdp/optdp.h>
#include <sqlite3.h>

#include <cstdio>

namespace {

// Prints the first column of the first row of sql; false on any error.
bool print_value(sqlite3* db, const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
    return false;
  }
  bool ok = sqlite3_step(stmt) == SQLITE_ROW;
  if (ok) {
    std::printf("%s\n", reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
  } else {
    std::fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
  }
  sqlite3_finalize(stmt);
  return ok;
}

}  // namespace

int main() {
  if (sqlite3_auto_extension(reinterpret_cast<void (*)(void)>(sqlite3_optdp_init)) != SQLITE_OK) {
    std::fprintf(stderr, "sqlite3_auto_extension failed\n");
    return 1;
  }
  sqlite3* db = nullptr;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    std::fprintf(stderr, "open: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  bool ok = print_value(db, "SELECT dp_version()") && print_value(db, "SELECT private_count(0.5)");
  sqlite3_close(db);
  sqlite3_reset_auto_extension();
  return ok ? 0 : 1;
}
