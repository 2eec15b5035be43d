// The loadable module's entry point (optdp.so): SQLite finds it by itself in
// sqlite3_load_extension / `.load` and passes its routine table, through
// which the bindings call SQLite (sqlite/api.hpp).
#include "optdp/optdp.h"  // the entry point's public declaration: checked against its definition here
#include "sqlite/entry.hpp"

extern "C" __attribute__((visibility("default"))) int sqlite3_optdp_init(sqlite3* db, char** pzErrMsg,
                                                                        const sqlite3_api_routines* pApi) {
  // Without SQLite's table (a program that called this entry itself with
  // NULL) the module has no way to call SQLite: refused with SQLITE_MISUSE,
  // without a message, which would need SQLite's allocator.
  return optdp::sql::register_optdp(db, pzErrMsg, pApi);
}
