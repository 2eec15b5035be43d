// The statement shape of a randomised table function (release_levels,
// private_groups): see check_release_shape in params.hpp and docs/boundary.md.
//
// A table function releases (and is charged) each time SQLite runs its scan.
// In a join, a correlated subquery or behind a WHERE or LIMIT, SQLite may run
// that scan once per row of other tables, or not at all, so the number of
// releases and ledger entries (and whether an error is raised) would depend on
// the data. Alone in the FROM clause of the top-level SELECT, with literal
// arguments, the scan runs exactly once per execution of the statement.
//
// This is the one check left that reads a statement's text for a table
// function: SQLite has no interface that tells a virtual table where in the
// plan its scan sits (xBestIndex sees its own constraints only, and
// sqlite3_stmt_scanstatus is not in Debian's build). The arguments are not
// checked here: SQLite itself says which are constants or bound (vtab.cpp).
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "sqlite/params.hpp"
#include "sqlite/sql_text.hpp"

namespace optdp::sql {

namespace {

template <class... W>
bool is_any_word(std::string_view sql, const Token& t, W... words) {
  return (is_word(sql, t, words) || ...);
}

// Throws the refusal for statement text `sql`.
[[noreturn]] void refuse(const char* name, const std::string& why) {
  throw std::invalid_argument(std::string("must be the only table of a top-level SELECT (SELECT ... FROM ") + name +
                              "(...) [ORDER BY ...], alone or in INSERT INTO ... SELECT or CREATE TABLE ... AS "
                              "SELECT), so that it runs exactly once; " + why);
}

void check_one(std::string_view sql, const char* name) {
  const std::vector<Token> t = tokenize(sql);
  const std::vector<Call> calls = find_calls(sql, t, name);
  if (calls.empty()) return;
  if (calls.size() > 1) refuse(name, "this statement calls it " + std::to_string(calls.size()) + " times");
  const Call& call = calls[0];
  // Parenthesis depth before each token.
  std::vector<int> depth(t.size() + 1, 0);
  for (std::size_t k = 0, d = 0; k < t.size(); ++k) {
    if (is_punct(sql, t[k], ')') && d > 0) --d;
    depth[k] = static_cast<int>(d);
    if (is_punct(sql, t[k], '(')) ++d;
  }
  const std::size_t n = call.name_token;
  if (depth[n] != 0) refuse(name, "here it is inside parentheses (a subquery, a CTE or an expression)");
  if (n == 0 || !is_word(sql, t[n - 1], "from")) refuse(name, "here it does not follow FROM directly");
  // The call's closing parenthesis.
  std::size_t close = n + 1;
  for (int d = 0; close < t.size(); ++close) {
    if (is_punct(sql, t[close], '(')) ++d;
    else if (is_punct(sql, t[close], ')') && --d == 0) break;
  }
  // Before the call, at depth 0: [WITH ...] then SELECT, INSERT/REPLACE ... SELECT
  // or CREATE [TEMP] TABLE ... AS SELECT; one SELECT and one FROM, no VALUES.
  int selects = 0, froms = 0;
  const Token* head = nullptr;
  bool with = false;
  for (std::size_t k = 0; k < n; ++k) {
    if (depth[k] != 0) continue;
    if (!head) {
      if (is_word(sql, t[k], "with")) {
        with = true;
        continue;
      }
      if (is_any_word(sql, t[k], "select", "insert", "replace", "create", "update", "delete", "values")) head = &t[k];
      else if (!with) refuse(name, "the statement must be a SELECT, INSERT ... SELECT or CREATE TABLE ... AS SELECT");
      else continue;
      if (!is_any_word(sql, *head, "select", "insert", "replace", "create"))
        refuse(name, "the statement must be a SELECT, INSERT ... SELECT or CREATE TABLE ... AS SELECT");
    }
    if (is_word(sql, t[k], "select")) ++selects;
    if (is_word(sql, t[k], "from")) ++froms;
    if (is_any_word(sql, t[k], "values", "union", "intersect", "except", "update", "delete"))
      refuse(name, "the statement has " + token_name(sql, t[k]) + " outside parentheses");
  }
  if (!head || selects != 1 || froms != 1)
    refuse(name, "the statement must have one SELECT with one FROM outside parentheses");
  // After the call: an optional alias, then the end, ";" or ORDER BY (not
  // followed by LIMIT, OFFSET or a compound at depth 0).
  std::size_t k = close + 1;
  if (k < t.size() && is_word(sql, t[k], "as")) ++k;
  if (k < t.size() && (t[k].kind == Token::Quoted || t[k].kind == Token::String ||
                       (t[k].kind == Token::Word && !is_any_word(sql, t[k], "order", "where", "group", "having",
                                                                 "limit", "window", "join", "natural", "left",
                                                                 "right", "full", "inner", "cross", "on", "using",
                                                                 "returning", "union", "intersect", "except",
                                                                 "offset", "indexed", "not"))))
    ++k;
  // LIMIT and OFFSET with literal operands only (LIMIT 0 skips the scan, but
  // whatever the data): n [OFFSET m] or m, n.
  auto literal_limit = [&](std::size_t j) {
    if (!is_word(sql, t[j], "limit")) return false;
    for (++j; j < t.size() && !is_punct(sql, t[j], ';'); ++j)
      if (!(t[j].kind == Token::Number || t[j].kind == Token::Variable || is_word(sql, t[j], "offset") ||
            is_punct(sql, t[j], ',')))
        refuse(name, "LIMIT and OFFSET must be literals or bound parameters");
    return true;
  };
  if (k < t.size() && literal_limit(k)) return;
  if (k < t.size() && is_word(sql, t[k], "order")) {
    for (std::size_t j = k; j < t.size() && !is_punct(sql, t[j], ';'); ++j) {
      if (depth[j] != 0) continue;
      if (literal_limit(j)) return;
      if (is_any_word(sql, t[j], "union", "intersect", "except", "window", "returning", "on", "where", "offset"))
        refuse(name, "after it comes " + token_name(sql, t[j]) +
                         "; filter or join the published rows in a later statement");
    }
    return;
  }
  if (k < t.size() && !is_punct(sql, t[k], ';'))
    refuse(name, "after it comes " + std::string(sql.substr(t[k].begin, t[k].end - t[k].begin)) +
                     "; filter, join or limit the published rows in a later statement");
}

}  // namespace

void check_release_shape(sqlite3* db, const char* name) {
  bool found = false;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    if (!sqlite3_stmt_busy(s)) continue;
    const char* raw = sqlite3_sql(s);
    if (!raw) continue;
    const std::string_view text(raw);
    if (find_calls(text, tokenize(text), name).empty()) continue;
    found = true;
    check_one(text, name);
  }
  if (!found)
    throw std::invalid_argument(std::string("must be called as ") + name +
                                "(...) in the FROM clause of the statement itself (not as a table with WHERE "
                                "arguments, nor schema-qualified)");
}

}  // namespace optdp::sql
