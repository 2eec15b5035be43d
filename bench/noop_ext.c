/*
** noop: a baseline loadable SQLite extension for the SQL benchmarks.
**
**   .load ./noop
**   SELECT noop_agg(0.5) FROM t;   -- always 0
**
** noop_agg(x) is an aggregate whose step does nothing at all (it does not even
** ask for an aggregate context) and whose final returns 0. Timing it against
** private_count(alpha) isolates what optdp adds on top of the pure cost of
** SQLite scanning the table and calling a user-defined aggregate step per row.
** It is registered with the same flags as private_count (SQLITE_UTF8, not
** deterministic), so SQLite treats both the same way.
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

static void noop_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  (void)ctx;
  (void)argc;
  (void)argv;
}

static void noop_final(sqlite3_context* ctx) { sqlite3_result_int(ctx, 0); }

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_noop_init(sqlite3* db, char** pzErrMsg, const sqlite3_api_routines* pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  return sqlite3_create_function_v2(db, "noop_agg", 1, SQLITE_UTF8, 0, 0, noop_step, noop_final, 0);
}
