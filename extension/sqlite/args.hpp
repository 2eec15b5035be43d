// optdp SQLite bindings: reading SQL arguments and reporting errors.
//
// Every callback runs inside guard(), which turns any C++ exception into an
// SQL error "<function>: <message>" (std::bad_alloc into SQLITE_NOMEM), so no
// exception ever crosses into SQLite. Argument readers throw
// std::invalid_argument with "<argument> must be ..., but is <value>".
#pragma once

#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/format.hpp"
#include "sqlite/api.hpp"

namespace optdp::sql {

// How a value is shown in messages: NULL, 1.5, inf, NaN, 42, text 'abc', a blob of 3 bytes.
std::string describe(sqlite3_value* v);

// A row's non-NULL value as SQLite's sum() reads it: an INTEGER or REAL as it
// is, text or a blob that looks like a number as that number, anything else
// as 0 (NaN as 0). Never an error: whether a release fails must not depend on
// the rows. type is sqlite3_value_type(x); the common case is inline, the
// conversion of other types out of line.
double non_numeric_row_value(sqlite3_value* x);
inline double row_value(sqlite3_value* x, int type) {
  return (type == SQLITE_FLOAT || type == SQLITE_INTEGER) ? sqlite3_value_double(x) : non_numeric_row_value(x);
}

// A finite or infinite number given as INTEGER or REAL; anything else throws
// "<name> must be a number, but is <value>".
double number_arg(sqlite3_value* v, const char* name);

// A TEXT value; anything else throws "<name> must be text (<domain>), but is <value>".
std::string_view text_arg(sqlite3_value* v, const char* name, const char* domain);

// A privacy level alpha: a REAL in (0, 1) (no INTEGER is in range; it is
// shown exactly in the message).
double alpha_arg(sqlite3_value* v, const char* name = "alpha");

// An INTEGER; anything else throws "<name> must be an integer, but is <value>".
std::int64_t integer_arg(sqlite3_value* v, const char* name);

// Throws "<name> must be the same in every row of a group, but changed from
// <first> to <value>" unless v is a number equal to first.
void require_same_number(sqlite3_value* v, double first, const char* name);

// The per-row check that a parameter still equals the first row's value:
// a number (INTEGER or REAL) equal to it. Two API calls; bench/README.md has
// what they cost. On false, the caller reports with require_same_number.
inline bool unchanged_number(sqlite3_value* v, double first) {
  const int t = sqlite3_value_type(v);
  return (t == SQLITE_FLOAT || t == SQLITE_INTEGER) && sqlite3_value_double(v) == first;
}

// An error about a call of another function of the statement (params.hpp
// checks every release of a statement before any is made); its message
// already starts with that function's name.
struct CallError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Sets the error of ctx from the exception in flight. Call only in a catch block.
void report_current_exception(sqlite3_context* ctx, const char* function) noexcept;

// A scalar function's arguments can be a row's values (a column, or an
// expression of one), and SQLite does not tell a literal from a column: only
// a bound parameter (sqlite3_value_frombind) is known not to come from a row.
// So a scalar's message quotes values only when every argument of the call
// is bound; otherwise hide_values() (core/format.hpp, shared with the
// PostgreSQL binding) takes them out.
// True when every argument is a bound parameter (also for no arguments).
bool all_bound(int argc, sqlite3_value** argv);
// report_current_exception for a scalar function: the message of the
// exception in flight, through hide_values() unless shown is true.
void report_current_exception(sqlite3_context* ctx, const char* function, bool shown) noexcept;

// guard() for a scalar function called with argc arguments argv: its
// message shows values only when every argument is a bound parameter.
template <class Body>
bool guard_scalar(sqlite3_context* ctx, const char* function, int argc, sqlite3_value** argv, Body&& body) noexcept {
  try {
    body();
    return true;
  } catch (...) {
    report_current_exception(ctx, function, all_bound(argc, argv));
    return false;
  }
}

// Runs body(); on an exception reports it as the SQL error of ctx and returns false.
template <class Body>
bool guard(sqlite3_context* ctx, const char* function, Body&& body) noexcept {
  try {
    body();
    return true;
  } catch (...) {
    report_current_exception(ctx, function);
    return false;
  }
}

}  // namespace optdp::sql
