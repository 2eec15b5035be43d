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

#include <span>
#include <string>
#include <vector>

#include "sqlite/api.hpp"
#include "sqlite/sql_text.hpp"

namespace optdp::sql {

// One form of a randomised aggregate: name(...) with argc arguments, whose
// arguments first .. argc-1 are its parameters, named names[0..], and the
// check of their values (throws std::invalid_argument, without the name).
struct ReleaseForm {
  const char* name;
  int argc;
  int first;
  const char* const* names;
  void (*check)(const std::vector<Param>& params);
};
// Every form optdp registers (optdp.cpp), a constant table.
std::span<const ReleaseForm> release_forms();

// What read_params last found, kept per connection: its result is a
// function of the running statements' texts and bound values, so while they
// are unchanged (the groups of a GROUP BY) the check and reads are reused.
struct StatementCache {
  std::vector<std::string> texts;
  bool checked = false;
  struct Found {
    const ReleaseForm* form;
    std::vector<Param> values;  // of every call of the form (they agree)
  };
  std::vector<Found> found;
};

// The parameters of the call name(...) with argc arguments in the running
// statements.
//
// First, every call of every form in the running statements is checked, in
// the order of the text: its parameters must be literal forms
// (sql_text.hpp), valid, and the same as every other call of that form. The
// first call that fails throws CallError "<its name>: <why>". So a statement
// either releases nothing, or every release in it is valid: with rows or
// without, before any charge. (Otherwise a release finishing with no rows
// could be charged before another call's error, and one with rows not.)
// The check also reads every form's parameters; this returns the ones of
// name/argc, or throws std::invalid_argument if no call of it is in the text
// (a call from a TEMP view).
std::vector<Param> read_params(sqlite3* db, StatementCache& cache, const char* name, int argc);

// The text (bound parameters expanded) of a running statement that calls
// name, for the ledger's record; "" if none is found.
std::string running_sql(sqlite3* db, const char* name);

// For a randomised table function `name`: throws std::invalid_argument unless
// every running statement that calls it has it alone in the FROM clause of its
// one top-level SELECT ([WITH ...] SELECT, INSERT ... SELECT or CREATE TABLE
// ... AS SELECT), and nothing after it but an alias and ORDER BY
// (release_shape.cpp says why), and unless one does. (That its arguments are
// literals or bound parameters, SQLite itself tells: vtab.cpp.)
void check_release_shape(sqlite3* db, const char* name);

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
