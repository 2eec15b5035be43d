// optdp SQLite bindings: the parameters of a randomised aggregate
// (private_count, staircase_sum, laplace_sum, private_count_levels(_of)).
//
// They are read from the text of the running statement (sql_text.hpp) once
// per release, by the first row of a group or, when no row matched, by the
// final call: the same function on both paths, so whether a release succeeds,
// every message, and the values used never depend on whether rows matched.
// The values SQLite passes with each row are not used for the parameters.
//
// This is sound because these aggregates are registered SQLITE_DIRECTONLY:
// SQLite refuses them in views, triggers and schema expressions, so every
// call that can be running is in the text of a running top-level statement.
// Nothing is prepared or evaluated: the text is only read.
#pragma once

#include <string>
#include <vector>

#include "sqlite/api.hpp"
#include "sqlite/sql_text.hpp"

namespace optdp::sql {

// The parameters (arguments first .. argc-1, named names[0..]) of the call
// name(...) with argc arguments in the running statements. Throws
// std::invalid_argument when they cannot be read: no such call is found, a
// parameter is not one of the literal forms (sql_text.hpp), a bound value
// cannot be read back, or several calls disagree.
std::vector<Param> read_params(sqlite3* db, const char* name, int argc, int first, const char* const* names);

// The text (bound parameters expanded) of a running statement that calls
// name, for the ledger's record; "" if none is found.
std::string running_sql(sqlite3* db, const char* name);

// How a parameter is shown in messages: NULL, 1.5, 42, text 'abc', a blob of 3 bytes.
std::string describe(const Param& p);

// A number (INTEGER or REAL); otherwise "<name> must be a number, but is <p>".
double number_param(const Param& p, const char* name);

// A privacy level alpha: a REAL in (0, 1). A REAL bound to the statement is
// read with 15 significant digits (Param::bound_real); it is refused if that
// leaves its epsilon = -ln(alpha) uncertain by more than a factor 1 + 1e-9,
// which happens only for alpha above about 1 - 5e-7.
double alpha_param(const Param& p, const char* name = "alpha");

// A TEXT; otherwise "<name> must be text (<domain>), but is <p>".
std::string text_param(const Param& p, const char* name, const char* domain);

}  // namespace optdp::sql
