// optdp SQLite bindings: the one include for the SQLite API.
// In the loadable module every sqlite3_* call goes through the routine table
// handed to sqlite3_optdp_init; built with -DSQLITE_CORE (static linking)
// they are direct calls.
#pragma once

#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT3
