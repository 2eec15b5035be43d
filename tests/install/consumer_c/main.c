/* Links the installed optdp statically from C and prints dp_version(). */
#include <optdp/optdp.h>
#include <sqlite3.h>
#include <stdio.h>

int main(void) {
  sqlite3 *db;
  sqlite3_stmt *stmt;
  int ok;
  if (sqlite3_auto_extension((void (*)(void))sqlite3_optdp_init) != SQLITE_OK) return 1;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return 1;
  if (sqlite3_prepare_v2(db, "SELECT dp_version()", -1, &stmt, NULL) != SQLITE_OK) {
    fprintf(stderr, "%s\n", sqlite3_errmsg(db));
    return 1;
  }
  ok = sqlite3_step(stmt) == SQLITE_ROW;
  if (ok) printf("%s\n", (const char *)sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return ok ? 0 : 1;
}
