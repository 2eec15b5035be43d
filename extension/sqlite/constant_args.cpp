#include "sqlite/constant_args.hpp"

#include <cctype>
#include <cstring>
#include <stdexcept>

namespace optdp::sql {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// If sql[i] starts a string or quoted identifier, the index just past its
// closing quote, or npos if it is not closed; otherwise i.
std::size_t quoted_end(std::string_view sql, std::size_t i) {
  const std::size_t n = sql.size();
  const char c = sql[i];
  if (c == '\'' || c == '"' || c == '`') {
    for (std::size_t j = i + 1; j < n; ++j) {
      if (sql[j] == c) {
        if (j + 1 < n && sql[j + 1] == c) { ++j; continue; }  // doubled quote
        return j + 1;
      }
    }
    return std::string_view::npos;
  }
  if (c == '[') {
    const auto j = sql.find(']', i + 1);
    return j == std::string_view::npos ? j : j + 1;
  }
  return i;
}

// If sql[i] starts a string, quoted identifier or comment, returns the index
// just past it (the end of sql if it is not closed); otherwise returns i.
std::size_t skip_quoted(std::string_view sql, std::size_t i) {
  const std::size_t n = sql.size();
  const std::size_t q = quoted_end(sql, i);
  if (q != i) return q == std::string_view::npos ? n : q;
  const char c = sql[i];
  if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
    const auto j = sql.find('\n', i + 2);
    return j == std::string_view::npos ? n : j + 1;
  }
  if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
    const auto j = sql.find("*/", i + 2);
    return j == std::string_view::npos ? n : j + 2;
  }
  return i;
}

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return std::string(s.substr(a, b - a));
}

bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

struct Stmt {
  sqlite3_stmt* p = nullptr;
  ~Stmt() { sqlite3_finalize(p); }
};

struct SqlText {
  char* expanded = nullptr;
  ~SqlText() { sqlite3_free(expanded); }
};

bool same_value(sqlite3_value* a, sqlite3_value* b) {
  const int t = sqlite3_value_type(a);
  if (t != sqlite3_value_type(b)) return false;
  switch (t) {
    case SQLITE_NULL: return true;
    case SQLITE_INTEGER: return sqlite3_value_int64(a) == sqlite3_value_int64(b);
    case SQLITE_FLOAT: return sqlite3_value_double(a) == sqlite3_value_double(b);
    default: {
      const int n = sqlite3_value_bytes(a);
      if (n != sqlite3_value_bytes(b)) return false;
      const void* pa = t == SQLITE_TEXT ? static_cast<const void*>(sqlite3_value_text(a)) : sqlite3_value_blob(a);
      const void* pb = t == SQLITE_TEXT ? static_cast<const void*>(sqlite3_value_text(b)) : sqlite3_value_blob(b);
      return n == 0 || std::memcmp(pa, pb, static_cast<std::size_t>(n)) == 0;
    }
  }
}

}  // namespace

std::vector<std::vector<std::string>> find_calls(std::string_view sql, std::string_view name) {
  std::vector<std::vector<std::string>> calls;
  const std::size_t n = sql.size();
  std::size_t i = 0;
  while (i < n) {
    // A function name is a word or a quoted identifier: "name", `name` and
    // [name] call the function name too.
    const char c = sql[i];
    std::size_t j;
    std::string word;
    if (c == '"' || c == '`' || c == '[') {
      j = quoted_end(sql, i);
      if (j == std::string_view::npos) break;  // not closed: no call after it
      for (std::size_t k = i + 1; k + 1 < j; ++k) {
        word += sql[k];
        if (c != '[' && sql[k] == c) ++k;  // a doubled quote stands for one
      }
    } else {
      const std::size_t q = skip_quoted(sql, i);
      if (q != i) { i = q; continue; }
      if (!word_char(c)) { ++i; continue; }
      j = i;
      while (j < n && word_char(sql[j])) ++j;
      word.assign(sql.substr(i, j - i));
    }
    const bool match = iequal(word, name) && (i == 0 || sql[i - 1] != '.');
    i = j;
    if (!match) continue;
    // Skip blanks and comments up to '('.
    std::size_t k = j;
    for (;;) {
      while (k < n && std::isspace(static_cast<unsigned char>(sql[k]))) ++k;
      const bool comment = k + 1 < n && ((sql[k] == '-' && sql[k + 1] == '-') || (sql[k] == '/' && sql[k + 1] == '*'));
      if (!comment) break;
      k = skip_quoted(sql, k);
    }
    if (k >= n || sql[k] != '(') continue;
    std::vector<std::string> args;
    int depth = 0;
    std::size_t start = k + 1, p = k + 1;
    bool closed = false;
    while (p < n) {
      const std::size_t s = skip_quoted(sql, p);
      if (s != p) { p = s; continue; }
      const char c = sql[p];
      if (c == '(') ++depth;
      else if (c == ')') {
        if (depth == 0) { closed = true; break; }
        --depth;
      } else if (c == ',' && depth == 0) {
        args.push_back(trim(sql.substr(start, p - start)));
        start = p + 1;
      }
      ++p;
    }
    if (!closed) continue;
    std::string last = trim(sql.substr(start, p - start));
    if (!(args.empty() && last.empty())) args.push_back(std::move(last));
    calls.push_back(std::move(args));
  }
  return calls;
}

namespace {

// Every SQL text on the connection that may contain the call being finalised:
// the running statements (bound parameters expanded) and the definitions of
// views and triggers in every attached schema (their code runs inside a
// statement whose own text does not show the call).
std::vector<std::string> candidate_texts(sqlite3* db) {
  std::vector<std::string> texts;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    if (!sqlite3_stmt_busy(s)) continue;
    SqlText text;
    text.expanded = sqlite3_expanded_sql(s);
    const char* sql = text.expanded ? text.expanded : sqlite3_sql(s);
    if (sql) texts.emplace_back(sql);
  }
  std::vector<std::string> schemas;
  {
    Stmt list;
    if (sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list", -1, &list.p, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string("cannot list the schemas: ") + sqlite3_errmsg(db));
    while (sqlite3_step(list.p) == SQLITE_ROW)
      schemas.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(list.p, 0)));
  }
  for (const auto& schema : schemas) {
    char* q = sqlite3_mprintf("SELECT sql FROM \"%w\".sqlite_schema WHERE type IN ('view', 'trigger') AND sql IS NOT NULL",
                              schema.c_str());
    if (!q) throw std::bad_alloc();
    Stmt defs;
    const int rc = sqlite3_prepare_v2(db, q, -1, &defs.p, nullptr);
    sqlite3_free(q);
    if (rc != SQLITE_OK) throw std::runtime_error(std::string("cannot read the schema: ") + sqlite3_errmsg(db));
    while (sqlite3_step(defs.p) == SQLITE_ROW)
      texts.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(defs.p, 0)));
  }
  return texts;
}

}  // namespace

bool is_literal_argument(std::string_view a) {
  std::string t = trim(a);
  std::string_view v = t;
  // Parentheses around the whole of it: "(0.5)". "(1) + (2)" is left with
  // "1) + (2", which is no literal.
  while (v.size() >= 2 && v.front() == '(' && v.back() == ')') {
    v.remove_prefix(1);
    v.remove_suffix(1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  }
  if (v.empty()) return false;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  auto all = [&](std::string_view s, auto pred) {
    for (char c : s)
      if (!pred(c)) return false;
    return true;
  };
  const char c0 = v.front();
  if (c0 == '\'') return quoted_end(v, 0) == v.size();  // one whole string
  if (c0 == '?') return all(v.substr(1), digit);
  if (c0 == ':' || c0 == '@' || c0 == '$')
    return v.size() > 1 && all(v.substr(1), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  if (c0 == '+' || c0 == '-') v.remove_prefix(1);  // one sign; "--" would start a comment
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
    return all(v.substr(2), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
  std::size_t i = 0, digits = 0;
  while (i < v.size() && digit(v[i])) ++i, ++digits;
  if (i < v.size() && v[i] == '.') {
    ++i;
    while (i < v.size() && digit(v[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    const std::size_t start = i;
    while (i < v.size() && digit(v[i])) ++i;
    if (i == start) return false;
  }
  return i == v.size();
}

bool params_are_literals(sqlite3* db, const char* name, int nargs, int first, std::size_t* bytes) noexcept {
  if (bytes) *bytes = 0;
  try {
    bool found = false;
    for (const std::string& sql : candidate_texts(db)) {
      if (bytes) *bytes += sql.size();
      for (const auto& args : find_calls(sql, name)) {
        if (static_cast<int>(args.size()) != nargs) continue;
        for (int a = first; a < nargs; ++a)
          if (!is_literal_argument(args[static_cast<std::size_t>(a)])) return false;
        found = true;
      }
    }
    return found;
  } catch (...) {
    return false;
  }
}

std::string running_sql(sqlite3* db, const char* name) {
  for (sqlite3_stmt* s = sqlite3_next_stmt(db, nullptr); s; s = sqlite3_next_stmt(db, s)) {
    if (!sqlite3_stmt_busy(s)) continue;
    SqlText text;
    text.expanded = sqlite3_expanded_sql(s);
    const char* sql = text.expanded ? text.expanded : sqlite3_sql(s);
    if (sql && !find_calls(sql, name).empty()) return sql;
  }
  return "";
}

std::vector<ValuePtr> constant_args(sqlite3* db, const char* name, int nargs, int first) {
  const std::string why = std::string("the query matched no rows, so its parameters must be read from the SQL text, "
                                      "but ");
  const std::string advice = "; aggregate over a one-row table with LEFT JOIN instead (see the reference)";
  // Evaluating the parameters may run another empty aggregate of ours (an
  // argument that is a subquery calling one), whose finaliser would read the
  // same texts again, without end (found by fuzz_sql). Parameters that need
  // an aggregate's result are not constant expressions: refuse them.
  thread_local int depth = 0;
  if (depth > 0)
    throw std::invalid_argument(why + "they are not constant expressions (an argument runs another optdp aggregate "
                                      "over no rows)" + advice);
  struct Depth {
    Depth() { ++depth; }
    ~Depth() { --depth; }
  } in_evaluation;
  std::vector<ValuePtr> result;
  bool found = false;
  for (const std::string& sql : candidate_texts(db)) {
    for (const auto& args : find_calls(sql, name)) {
      if (static_cast<int>(args.size()) != nargs) continue;
      std::string select = "SELECT ";
      for (int a = first; a < nargs; ++a) select += (a > first ? ", (" : "(") + args[a] + ")";
      Stmt eval;
      if (sqlite3_prepare_v2(db, select.c_str(), -1, &eval.p, nullptr) != SQLITE_OK || !eval.p ||
          sqlite3_step(eval.p) != SQLITE_ROW)
        throw std::invalid_argument(why + "they are not constant expressions (" + select.substr(7) + ")" + advice);
      std::vector<ValuePtr> vals;
      for (int a = 0; a < nargs - first; ++a) {
        vals.emplace_back(sqlite3_value_dup(sqlite3_column_value(eval.p, a)));
        if (!vals.back()) throw std::bad_alloc();
      }
      if (!found) {
        result = std::move(vals);
        found = true;
        continue;
      }
      // Several calls (in this statement, another running one, a view or a
      // trigger) that disagree: which one is being finalised cannot be told,
      // so fail rather than risk another call's (weaker) parameters.
      for (int a = 0; a < nargs - first; ++a)
        if (!same_value(result[static_cast<std::size_t>(a)].get(), vals[static_cast<std::size_t>(a)].get()))
          throw std::invalid_argument(why + "the running statements, views and triggers call it with different "
                                            "parameters" + advice);
    }
  }
  if (!found)
    throw std::invalid_argument(why + "no call with " + std::to_string(nargs) + " arguments was found" + advice);
  return result;
}

}  // namespace optdp::sql
