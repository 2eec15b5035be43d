// What the two entry points (extension/sqlite/entry/) share. The loadable
// module's sqlite3_optdp_init and the static library's differ only in where
// they get SQLite's routine table, through which the bindings call SQLite
// (sqlite/api.hpp). This header includes sqlite3.h alone, not sqlite3ext.h:
// the static library's entry calls the linked SQLite directly.
#pragma once

#include <sqlite3.h>

namespace optdp::sql {

// Makes api the routine table of the bindings. The first non-NULL table in
// the process is kept for good (a program has one SQLite library); false for
// NULL or for another table than that one.
bool use_routines(const sqlite3_api_routines* api) noexcept;

// Registers optdp's functions on db with api (use_routines). Returns
// SQLITE_OK, or an error code with a message in *pzErrMsg; SQLITE_MISUSE
// without a message for a NULL api, since there is then no SQLite allocator
// to write one with.
int register_optdp(sqlite3* db, char** pzErrMsg, const sqlite3_api_routines* api) noexcept;

// Static library only (entry/static.cpp): the routine table of the SQLite
// library the program is linked with, or NULL if that library gives none to
// extensions (built with SQLITE_OMIT_LOAD_EXTENSION).
const sqlite3_api_routines* linked_routines() noexcept;

}  // namespace optdp::sql
