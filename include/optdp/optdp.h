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
 * SQLite's routine table when loaded as an extension; a statically linked
 * program may pass NULL. */
int sqlite3_optdp_init(sqlite3* db, char** pzErrMsg, const sqlite3_api_routines* pApi);

#ifdef __cplusplus
}
#endif

#endif /* OPTDP_OPTDP_H */
