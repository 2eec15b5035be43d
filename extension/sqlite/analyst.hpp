// optdp SQLite bindings: analyst mode (docs/boundary.md, "Analyst mode").
//
// For hosts that take SQL from analysts: once switched on for a connection
// (and never off), tables declared private can be read only through
// private_groups (whose queries run on optdp's own connection, guarded.hpp),
// and everything else the analyst writes is checked, when it is prepared, by
// an authorizer on the connection: functions from the allow-list
// (allowlist.hpp) and optdp's own; no recursive CTE, PRAGMA, ATTACH, ANALYZE
// or virtual-table DDL; no write, DDL or trigger on a private table; no read
// of what describes private tables (sqlite_stat*, dbstat, pragma_*).
// The owner declares each private table's privacy unit when switching the
// mode on (units.hpp): private_groups' rows queries must attribute every
// row to the unit of the private row it comes from.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "sqlite/api.hpp"
#include "sqlite/units.hpp"

namespace optdp::sql {

using Authorizer = int (*)(void*, int, const char*, const char*, const char*, const char*);

struct AnalystMode {
  std::set<std::string> private_tables;  // lower case
  UnitDecls units;                       // each private table's declaration (units.hpp), fixed once made
  Authorizer app = nullptr;              // the application's own authorizer, consulted after optdp's
  void* app_data = nullptr;
  std::string last_refusal;              // why the last statement was refused ("" if none)
};

// The authorizer; its first argument is an AnalystMode*.
int analyst_authorize(void* mode, int action, const char* a, const char* b, const char* schema, const char* trigger);

// Whether table (of schema; NULL: main) is one of mode's private tables.
bool is_private_table(const AnalystMode& mode, const char* table, const char* schema);

// Whether `name` (any case) is one of optdp's SQL functions.
bool is_optdp_function(std::string_view name);

}  // namespace optdp::sql
