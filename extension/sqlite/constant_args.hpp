// optdp SQLite bindings: parameters of an aggregate that saw no rows.
//
// SQLite calls an aggregate's xFinal without arguments when the query matched
// no rows (and has no GROUP BY). optdp must still release 0 + noise, because
// an error or a NULL there would tell that the true count is 0. So the noise
// parameters are recovered from the statement itself: among the statements
// running on the connection, every call name(a1, ..., an) with n arguments is
// found in the SQL text (with bound parameters expanded), and its parameter
// arguments a_first .. a_n are evaluated as constant expressions
// (SELECT a_first, ...). All such calls must agree; if the parameters are not
// constant expressions, or several calls disagree, it is an error, and the
// documentation tells users to count from a one-row table with LEFT JOIN.
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

}  // namespace optdp::sql
