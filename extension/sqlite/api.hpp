// optdp SQLite bindings: the one include for the SQLite API.
// Every sqlite3_* call of the bindings goes through SQLite's routine table,
// as in any loadable extension: the same objects go into the loadable module
// and into the static library, and their entry points (sqlite/entry.hpp) set
// the table. The pointer is named optdp_sqlite3_api rather than sqlite3_api
// so that it cannot clash with another extension linked into the same program.
#pragma once

#ifdef SQLITE_CORE
#error "optdp's bindings call SQLite through its routine table: compile them without SQLITE_CORE"
#endif

#define sqlite3_api optdp_sqlite3_api
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
