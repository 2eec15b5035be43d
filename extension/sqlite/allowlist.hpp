// optdp SQLite bindings: what a query optdp runs for a release may do.
//
// private_groups runs the analyst's rows_query and keys_query. Whether such a
// query fails, and what its error says, must not depend on the rows it reads
// (docs/boundary.md, "Queries optdp runs"). So they are checked once, when
// they are prepared, by an authorizer (sqlite3_set_authorizer) that SQLite
// consults for every table read and every function call of the statement,
// including those reached through views: only reads, and only functions of an
// explicit allow-list, each of which returns a value (possibly NULL) for
// every input and never an error, never quotes its input, and never returns a
// value longer than its inputs. Everything else is refused at prepare time,
// before any row is read, with a message that names it.
#pragma once

#include <string>
#include <string_view>

namespace optdp::sql {

// Whether the SQL function `name` (any case) is on the allow-list.
bool function_allowed(std::string_view name);

// The state of one check: what was refused first (for the message), and an
// optional rule for table reads (the analyst mode refuses private tables).
struct QueryCheck {
  std::string refused;  // "" while nothing was refused; else why, e.g. "must not call abs() (...)"
  // Returns false to refuse reading table `table` of schema `schema`; nullptr: every table may be read.
  bool (*may_read)(void* self, const char* schema, const char* table) = nullptr;
  void* may_read_self = nullptr;
  // optdp's own constant statements on its read-only connection (the schema
  // reads of GuardedDb::schema_query, its PRAGMA mmap_size): everything is allowed.
  bool schema_only = false;
};

// The authorizer callback; its first argument is a QueryCheck*. Allows
// SQLITE_SELECT, SQLITE_READ (subject to may_read) and SQLITE_FUNCTION of
// allow-listed functions; refuses (SQLITE_DENY) everything else (recursive
// CTEs, PRAGMA, ATTACH, every write), recording the first refusal.
int check_query(void* check, int action, const char* a, const char* b, const char* schema, const char* trigger);

// "<what> must not call abs() (...)": the message of the refusal recorded in check.
std::string refusal_message(const QueryCheck& check, const char* what);

}  // namespace optdp::sql
