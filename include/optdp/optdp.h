/* optdp: differential privacy for SQLite, public header for embedders.
 *
 * A program that links optdp statically (CMake: find_package(optdp CONFIG)
 * and the target optdp::optdp_static) registers the extension for every
 * connection it opens afterwards:
 *
 *   #include <optdp/optdp.h>
 *   sqlite3_auto_extension((void (*)(void))sqlite3_optdp_init);
 *
 * or for one connection: sqlite3_optdp_init(db, &err, NULL).
 * The loadable module optdp.so exports the same entry point, which SQLite
 * finds by itself in sqlite3_load_extension / `.load`. */
#ifndef OPTDP_OPTDP_H
#define OPTDP_OPTDP_H

#include <sqlite3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Registers optdp's SQL functions on db. Returns SQLITE_OK, or an SQLite
 * error code with a message in *pzErrMsg (free it with sqlite3_free). pApi is
 * SQLite's routine table, which optdp calls SQLite through: SQLite passes it
 * to extensions it loads and to automatic extensions. A statically linked
 * program may pass NULL: the first time, optdp then takes the table from the
 * linked SQLite by opening and closing one connection to an in-memory
 * database (running no SQL; the program's automatic extensions run on it).
 * The loadable module refuses NULL with SQLITE_MISUSE (and no message). */
int sqlite3_optdp_init(sqlite3* db, char** pzErrMsg, const sqlite3_api_routines* pApi);

/* Analyst mode (docs/boundary.md, "Analyst mode"), for hosts that take SQL
 * from analysts: from now on (and never again off) the tables named in
 * private_tables (comma-separated, in main) can be read on db only through
 * private_groups. Each is declared with its privacy unit, as in SQL's
 * dp_analyst_mode: "patients(id), visits(patient_id -> patients.id)" (a
 * unit column, and a link to the unit column of a table declared in the
 * same call); a bare name is private but cannot be read by private_groups.
 * A declaration is fixed for the connection's life; this function may add
 * units and links later (SQL's dp_analyst_mode, which the analyst can call
 * too, then adds only tables without a unit). private_groups then
 * refuses, when prepared, a rows query that does not attribute every row to
 * the declared unit of the private rows it comes from (docs/boundary.md,
 * "Who a row belongs to"). Every statement prepared on db is checked by optdp's
 * authorizer (functions from optdp's allow-list and optdp's own; no
 * recursive CTE, PRAGMA, ATTACH; no write, DDL or trigger on a private table).
 * SQLite keeps one authorizer per connection: pass the application's own as
 * app_authorizer (with app_data), and optdp consults it after its own
 * decision; calling sqlite3_set_authorizer on db afterwards switches the
 * mode's checks off. optdp must be registered on db (before any
 * registration in the process: SQLITE_MISUSE). Returns SQLITE_OK, or
 * SQLITE_ERROR with a message in *pzErrMsg (free it with sqlite3_free). */
int optdp_analyst_mode(sqlite3* db, const char* private_tables,
                       int (*app_authorizer)(void*, int, const char*, const char*, const char*, const char*),
                       void* app_data, char** pzErrMsg);

/* Why analyst mode refused the last statement it refused on db (SQLite's own
 * error says only "not authorized"), or NULL. Valid until the next refusal. */
const char* optdp_analyst_refusal(sqlite3* db);

#ifdef __cplusplus
}
#endif

#endif /* OPTDP_OPTDP_H */
