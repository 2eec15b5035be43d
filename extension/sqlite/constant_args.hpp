// optdp SQLite bindings: parameters of an aggregate that saw no rows.
//
// SQLite calls an aggregate's xFinal without arguments when the query matched
// no rows (and has no GROUP BY). optdp must still release 0 + noise, because
// an error or a NULL there would tell that the true count is 0. So the noise
// parameters are recovered from SQL text: every call name(a1, ..., an) with n
// arguments in the running statements (bound parameters expanded by SQLite,
// REALs with 15 significant digits) and in the definitions of views and
// triggers, with its parameter arguments a_first .. a_n evaluated as
// constant expressions (SELECT a_first, ...). All such calls must agree; if
// they do not, or the parameters are not constant expressions, it is an
// error: which call is being finalised cannot be told, and another call's
// parameters might be weaker. The documentation tells users to count from a
// one-row table with LEFT JOIN, which never takes this path.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite/api.hpp"

namespace optdp::sql {

struct ValueDeleter {
  void operator()(sqlite3_value* v) const { sqlite3_value_free(v); }
};
using ValuePtr = std::unique_ptr<sqlite3_value, ValueDeleter>;

// The argument texts of every call `name(...)` in sql (case-insensitive name;
// strings, quoted identifiers and comments are skipped).
std::vector<std::vector<std::string>> find_calls(std::string_view sql, std::string_view name);

// Values of arguments [first, nargs) of the calls to name with nargs arguments
// in the statements running on db. Throws std::invalid_argument when they
// cannot be determined.
std::vector<ValuePtr> constant_args(sqlite3* db, const char* name, int nargs, int first);

// Whether arguments [first, nargs) of every call name(...) with nargs
// arguments in the running statements and in the views and triggers of every
// schema are literals: a number with at most one sign, a string, or a bound
// parameter (fixed while a statement runs). Such arguments cannot change
// between the rows of a group, so an aggregate may stop re-reading them on
// every row. Any doubt (an expression, a column, no call found, an error
// while reading the schema) gives false. Never throws.
//
// What it cannot see: a view or trigger redefined, on the same connection,
// while a statement compiled with its old definition is still running. The
// statement then still runs the old call, which this function no longer
// sees. The per-row check is a guard against mistakes, not part of the
// privacy guarantee: the release always uses the first row's parameters,
// for the noise, the clamping and the charge, whatever later rows hold.
// *bytes, if given, is set to the number of bytes of SQL text it read.
bool params_are_literals(sqlite3* db, const char* name, int nargs, int first, std::size_t* bytes = nullptr) noexcept;

// Whether one argument text is such a literal (exposed for tests).
bool is_literal_argument(std::string_view arg);

// The text (bound parameters expanded) of a running statement that calls
// name, for the ledger's record; "" if none is found.
std::string running_sql(sqlite3* db, const char* name);

}  // namespace optdp::sql
