// fuzz_sql_text: the SQL text reader (extension/sqlite/sql_text.hpp) that
// reads the parameters of the randomised aggregates from the text of the
// running statements, on arbitrary bytes, with SQLite's parser as the oracle.
//
// Input: the SQL text, then optionally a 0x00 byte and an "expanded" text
// (what sqlite3_expanded_sql would return for it; any bytes). An input that
// starts with 0xFF instead drives a generator of statements that SQLite
// accepts (calls of probe spelled and spaced every way, in select lists,
// CASE, subqueries, CTEs, FILTER, OVER, HAVING, ORDER BY, INSERT ... SELECT,
// with strings, quoted names and comments that look like calls), so that
// the oracle below sees many valid statements; the checks are the same.
//
// Checks (besides crashes, hangs, sanitizer reports and leaks):
//  - tokenize: tokens are non-empty, in order, inside the text; the bytes
//    between them tokenize to nothing (spaces and comments only); each token
//    tokenized alone is one token of the same kind and length.
//  - find_calls, for the names followed by "(" in the text (at most 8) and
//    private_count and probe: calls come in text order; each call's name
//    token has that name and is followed by "("; its arguments are
//    consecutive ranges with balanced parentheses separated by single ","
//    tokens, from just after the "(" to the call's own ")" (or to an ORDER BY
//    inside it); every such name whose parentheses close is a call.
//  - read_literal on every argument of every call, with the values of the
//    Variables from bound_values (below): a single Variable reads its value;
//    a literal reads the same in parentheses, and - L the same as -(L).
//  - bound_values with the input's expanded text: one entry per token, values
//    only for Variables.
//  - bound_values with an expanded text made from the SQL the way SQLite
//    writes bound values (integers, REALs with %!.15g, texts, blobs,
//    zeroblob(n), NULL): every value read is the value written, and when each
//    Variable is followed by a space, ",", ")", ";" or the end, every one is.
//  - SQLite: when the text prepares (tables t(a, b, c), u(x, y), probe(probe);
//    the window aggregates probe with any number of arguments and probe_n<k>
//    with exactly k), every call of probe that SQLite resolves is found
//    (sqlite3_set_authorizer, SQLITE_FUNCTION): with none found SQLite sees
//    none; with every call found renamed to probe_n<k> (k its number of
//    arguments as found; f(*) has none) SQLite sees no call of probe. Where
//    a name found is not a call (a table's column list: renamed, the text
//    does not prepare), each call found is renamed alone: it must never be
//    "wrong number of arguments", and with the calls SQLite then sees
//    renamed, it must see no call of probe (also trying one more renamed, or
//    all but one, for calls that only prepare together, like a compound
//    SELECT's ORDER BY term and the result column it names).
//
// OPTDP_FUZZ_VERBOSE=1 prints each text, whether SQLite prepares it and the
// calls seen and found.
#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_check.hpp"
#include "sqlite/sql_text.hpp"

namespace {

using optdp::sql::Call;
using optdp::sql::Param;
using optdp::sql::Token;
namespace sql = optdp::sql;

constexpr std::size_t kMaxNames = 8;
constexpr std::size_t kMaxCallsChecked = 64;
constexpr std::size_t kMaxOracleCalls = 8;

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

bool same(const std::optional<Param>& a, const std::optional<Param>& b) {
  if (!a || !b) return !a && !b;
  if (a->type != b->type || a->bound_real != b->bound_real) return false;
  switch (a->type) {
    case Param::Type::Null: return true;
    case Param::Type::Integer: return a->i == b->i;
    case Param::Type::Real: return std::memcmp(&a->d, &b->d, sizeof a->d) == 0;
    case Param::Type::Text: return a->bytes == b->bytes;
    case Param::Type::Blob: return a->bytes == b->bytes && a->i == b->i;
  }
  return false;
}

std::string show(const std::optional<Param>& p) {
  if (!p) return "nothing";
  char buf[96];
  switch (p->type) {
    case Param::Type::Null: return "NULL";
    case Param::Type::Integer: std::snprintf(buf, sizeof buf, "INTEGER %lld", (long long)p->i); return buf;
    case Param::Type::Real: std::snprintf(buf, sizeof buf, "REAL %.17g%s", p->d, p->bound_real ? " bound" : ""); return buf;
    case Param::Type::Text: return "TEXT '" + p->bytes + "'";
    case Param::Type::Blob: std::snprintf(buf, sizeof buf, "BLOB %lld/%zu", (long long)p->i, p->bytes.size()); return buf;
  }
  return "?";
}

const sql::BoundValue kNoBinding = [](std::size_t) -> std::optional<Param> { return std::nullopt; };

std::optional<Param> read_text(const std::string& s) {
  const auto t = sql::tokenize(s);
  return sql::read_literal(s, t, 0, t.size(), kNoBinding);
}

// ---- tokens ------------------------------------------------------------------

void check_tokens(std::string_view s, const std::vector<Token>& t) {
  std::size_t prev = 0;
  for (std::size_t k = 0; k <= t.size(); ++k) {
    const std::size_t begin = k < t.size() ? t[k].begin : s.size();
    FUZZ_CHECK(begin >= prev && begin <= s.size());
    const std::string_view gap = s.substr(prev, begin - prev);
    FUZZ_CHECK_MSG(sql::tokenize(gap).empty(), "the bytes between tokens %zu and %zu are not spaces or comments",
                   k ? k - 1 : 0, k);
    if (k == t.size()) break;
    FUZZ_CHECK(t[k].end > t[k].begin && t[k].end <= s.size());
    const auto alone = sql::tokenize(s.substr(t[k].begin, t[k].end - t[k].begin));
    FUZZ_CHECK_MSG(alone.size() == 1 && alone[0].kind == t[k].kind && alone[0].begin == 0 &&
                       alone[0].end == t[k].end - t[k].begin,
                   "token %zu (kind %d, bytes %zu-%zu) tokenized alone is %zu tokens", k, (int)t[k].kind, t[k].begin,
                   t[k].end, alone.size());
    prev = t[k].end;
  }
}

// ---- calls -------------------------------------------------------------------

struct Text {
  std::string_view s;
  const std::vector<Token>& t;
  bool is(std::size_t k, char c) const {
    return k < t.size() && t[k].kind == Token::Punct && t[k].end == t[k].begin + 1 && s[t[k].begin] == c;
  }
  bool keyword(std::size_t k, std::string_view w) const {
    return k < t.size() && t[k].kind == Token::Word && iequal(s.substr(t[k].begin, t[k].end - t[k].begin), w);
  }
  // The ")" that closes the "(" at token open, or t.size().
  std::size_t close_of(std::size_t open) const {
    int depth = 0;
    for (std::size_t p = open + 1; p < t.size(); ++p) {
      if (is(p, '(')) {
        ++depth;
      } else if (is(p, ')')) {
        if (depth == 0) return p;
        --depth;
      }
    }
    return t.size();
  }
  bool balanced(std::size_t first, std::size_t last) const {
    int depth = 0;
    for (std::size_t p = first; p < last; ++p) {
      if (is(p, '(')) ++depth;
      if (is(p, ')') && --depth < 0) return false;
    }
    return depth == 0;
  }
};

void check_calls(const Text& x, std::string_view name, const std::vector<Call>& calls) {
  // Every name token followed by "(", not after ".", whose parentheses close.
  std::vector<std::size_t> expected;
  for (std::size_t k = 0; k + 1 < x.t.size(); ++k) {
    if (x.t[k].kind != Token::Word && x.t[k].kind != Token::Quoted) continue;
    if (!x.is(k + 1, '(') || (k > 0 && x.is(k - 1, '.'))) continue;
    if (!iequal(sql::token_name(x.s, x.t[k]), name)) continue;
    if (x.close_of(k + 1) < x.t.size()) expected.push_back(k);
  }
  FUZZ_CHECK_MSG(calls.size() == expected.size(), "%zu calls found, %zu names followed by a closed '('", calls.size(),
                 expected.size());
  for (std::size_t i = 0; i < calls.size() && i < kMaxCallsChecked; ++i) {
    const Call& c = calls[i];
    FUZZ_CHECK(c.name_token == expected[i]);
    const std::size_t open = c.name_token + 1, close = x.close_of(open);
    FUZZ_CHECK(close < x.t.size());
    // Where the arguments end: the ")" or an ORDER BY at depth 0.
    std::size_t end = close;
    for (std::size_t p = open + 1, depth = 0; p < close; ++p) {
      if (x.is(p, '(')) ++depth;
      if (x.is(p, ')')) --depth;
      if (depth == 0 && x.keyword(p, "order") && x.keyword(p + 1, "by")) {
        end = p;
        break;
      }
    }
    if (c.args.empty()) {
      FUZZ_CHECK_MSG(end == open + 1, "a call with no arguments has tokens %zu-%zu in its parentheses", open + 1, end);
      continue;
    }
    FUZZ_CHECK(c.args.front().first == open + 1);
    FUZZ_CHECK_MSG(c.args.back().second == end, "the last argument ends at token %zu, the arguments at %zu",
                   c.args.back().second, end);
    for (std::size_t a = 0; a < c.args.size(); ++a) {
      const auto [b, e] = c.args[a];
      FUZZ_CHECK(b <= e && e <= end && b > open);
      FUZZ_CHECK_MSG(x.balanced(b, e), "argument %zu of the call at token %zu has unbalanced parentheses", a,
                     c.name_token);
      if (a + 1 < c.args.size()) {
        FUZZ_CHECK(x.is(e, ','));
        FUZZ_CHECK(c.args[a + 1].first == e + 1);
      }
    }
  }
  for (std::size_t i = 1; i < calls.size(); ++i) FUZZ_CHECK(calls[i].name_token > calls[i - 1].name_token);
}

// read_literal on the arguments; bound gives the Variables' values.
void check_literals(const Text& x, const std::vector<Call>& calls, const std::vector<std::optional<Param>>& bound) {
  const sql::BoundValue value = [&](std::size_t k) -> std::optional<Param> {
    FUZZ_CHECK(k < x.t.size() && x.t[k].kind == Token::Variable);
    return bound[k];
  };
  for (std::size_t i = 0; i < calls.size() && i < kMaxCallsChecked; ++i) {
    for (const auto& [b, e] : calls[i].args) {
      const auto v = sql::read_literal(x.s, x.t, b, e, value);
      if (e == b + 1 && x.t[b].kind == Token::Variable)
        FUZZ_CHECK_MSG(same(v, bound[b]), "a Variable argument reads %s, its value is %s", show(v).c_str(),
                       show(bound[b]).c_str());
      if (e == b || e - b > 32) continue;  // the wrapped forms would pass read_literal's depth limit
      (void)sql::argument_text(x.s, x.t, b, e);
      const std::string arg(x.s.substr(x.t[b].begin, x.t[e - 1].end - x.t[b].begin));
      const auto plain = read_text(arg);
      const auto wrapped = read_text("(" + arg + ")");
      FUZZ_CHECK_MSG(same(plain, wrapped), "%s reads %s, in parentheses %s", arg.c_str(), show(plain).c_str(),
                     show(wrapped).c_str());
      // (A space only where "--" would start a comment: a space before arg
      // could change its first token, as in " \v".)
      const auto minus = read_text((arg[0] == '-' ? "- " : "-") + arg), minus_wrapped = read_text("-(" + arg + ")");
      FUZZ_CHECK_MSG(same(minus, minus_wrapped), "-%s reads %s, -(%s) %s", arg.c_str(), show(minus).c_str(),
                     arg.c_str(), show(minus_wrapped).c_str());
    }
  }
}

// ---- bound values ------------------------------------------------------------

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    s += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
};

// A value as sqlite3_expanded_sql writes it, and the Param it stands for.
std::pair<std::string, Param> written_value(Rng& rng) {
  Param p;
  char buf[64];
  switch (rng.next() % 7) {
    case 0: return {"NULL", p};
    case 1: {
      p.type = Param::Type::Integer;
      const std::uint64_t r = rng.next();
      p.i = (r & 1) ? static_cast<std::int64_t>(r) : static_cast<std::int64_t>(r % 2001) - 1000;
      std::snprintf(buf, sizeof buf, "%lld", (long long)p.i);
      return {buf, p};
    }
    case 2:
    case 3: {
      static const double special[] = {0.5, 1.0 / 3, 1e300, -0.0, HUGE_VAL, -HUGE_VAL, 5e-324, 0.1, 1e15, 1e16, -2.5};
      double d;
      const std::uint64_t r = rng.next();
      if (r % 3 == 0) {
        d = special[(r >> 8) % (sizeof special / sizeof special[0])];
      } else {
        const std::uint64_t b = rng.next();
        std::memcpy(&d, &b, sizeof d);
        if (!std::isfinite(d)) d = std::ldexp(static_cast<double>(b >> 11), -53);
      }
      char* s = sqlite3_mprintf("%!.15g", d);
      const std::string text = s;
      sqlite3_free(s);
      p.type = Param::Type::Real;
      p.d = std::strtod(text.c_str(), nullptr);
      p.bound_real = true;
      return {text, p};
    }
    case 4: {
      static const char alphabet[] = "a'\"?:$@#-/*()[], \n\xc3\xa9x0";
      p.type = Param::Type::Text;
      std::string w = "'";
      for (std::uint64_t n = rng.next() % 8; n > 0; --n) {
        const char c = alphabet[rng.next() % (sizeof alphabet - 1)];
        p.bytes += c;
        w += c;
        if (c == '\'') w += c;
      }
      return {w + "'", p};
    }
    case 5: {
      p.type = Param::Type::Blob;
      std::string w = "x'";
      for (std::uint64_t n = rng.next() % 6; n > 0; --n) {
        const auto c = static_cast<unsigned char>(rng.next());
        p.bytes += static_cast<char>(c);
        std::snprintf(buf, sizeof buf, "%02x", c);
        w += buf;
      }
      p.i = static_cast<std::int64_t>(p.bytes.size());
      return {w + "'", p};
    }
    default: {
      p.type = Param::Type::Blob;
      p.i = static_cast<std::int64_t>(rng.next() % 100000);
      std::snprintf(buf, sizeof buf, "zeroblob(%lld)", (long long)p.i);
      return {buf, p};
    }
  }
}

// bound_values of raw for a text made as sqlite3_expanded_sql makes it.
std::vector<std::optional<Param>> check_written_values(const Text& x, std::uint64_t seed) {
  Rng rng{seed};
  std::string expanded;
  std::vector<std::optional<Param>> written(x.t.size());
  std::size_t r = 0;
  bool separated = true;  // every Variable followed by something that cannot continue a value
  for (std::size_t k = 0; k < x.t.size(); ++k) {
    if (x.t[k].kind != Token::Variable) continue;
    expanded.append(x.s.substr(r, x.t[k].begin - r));
    auto [text, value] = written_value(rng);
    expanded += text;
    written[k] = std::move(value);
    r = x.t[k].end;
    if (r < x.s.size() && !std::strchr(" \t\n\r\f,);", x.s[r])) separated = false;
  }
  expanded.append(x.s.substr(r));
  const auto values = sql::bound_values(x.s, x.t, expanded);
  FUZZ_CHECK(values.size() == x.t.size());
  for (std::size_t k = 0; k < x.t.size(); ++k) {
    if (!values[k]) {
      FUZZ_CHECK_MSG(!(separated && written[k]), "the value %s written for token %zu is not read",
                     show(written[k]).c_str(), k);
      continue;
    }
    FUZZ_CHECK_MSG(same(values[k], written[k]), "token %zu: %s written, %s read", k, show(written[k]).c_str(),
                   show(values[k]).c_str());
  }
  return values;
}

// ---- SQLite's parser ---------------------------------------------------------

void agg_step(sqlite3_context*, int, sqlite3_value**) {}
void agg_final(sqlite3_context* c) { sqlite3_result_null(c); }

struct Seen {
  std::map<std::string, int> count;
};

int authorize(void* p, int action, const char*, const char* name, const char*, const char*) {
  if (action == SQLITE_FUNCTION && name) {
    std::string n(name);
    for (char& c : n) c = lower(c);
    ++static_cast<Seen*>(p)->count[n];
  }
  return SQLITE_OK;
}

sqlite3* oracle_db() {
  static sqlite3* db = [] {
    sqlite3* d = nullptr;
    FUZZ_CHECK(sqlite3_open(":memory:", &d) == SQLITE_OK);
    for (int k = -1; k <= 12; ++k) {
      const std::string name = k < 0 ? "probe" : "probe_n" + std::to_string(k);
      FUZZ_CHECK(sqlite3_create_window_function(d, name.c_str(), k, SQLITE_UTF8, nullptr, agg_step, agg_final,
                                                agg_final, agg_step, nullptr) == SQLITE_OK);
    }
    FUZZ_CHECK(sqlite3_exec(d, "CREATE TABLE t(a, b, c); CREATE TABLE u(x, y); CREATE TABLE probe(probe);", nullptr,
                            nullptr, nullptr) == SQLITE_OK);
    sqlite3_limit(d, SQLITE_LIMIT_SQL_LENGTH, 100000);
    return d;
  }();
  return db;
}

// Prepares s (its first statement); the authorizer's counts, its text and
// the error message.
std::optional<Seen> prepare(const std::string& s, std::string* raw, std::string* error) {
  sqlite3* db = oracle_db();
  Seen seen;
  sqlite3_set_authorizer(db, authorize, &seen);
  sqlite3_stmt* st = nullptr;
  const int rc = sqlite3_prepare_v2(db, s.c_str(), static_cast<int>(s.size()), &st, nullptr);
  sqlite3_set_authorizer(db, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    if (error) *error = sqlite3_errmsg(db);
    sqlite3_finalize(st);
    return std::nullopt;
  }
  if (raw) *raw = st ? sqlite3_sql(st) : "";
  sqlite3_finalize(st);
  return seen;
}

// The number of arguments SQLite gives a call found: f(*) has none.
std::size_t arity(const Text& x, const Call& c) {
  if (c.args.size() == 1 && c.args[0].second == c.args[0].first + 1 && x.is(c.args[0].first, '*')) return 0;
  return c.args.size();
}

std::string renamed(const Text& x, const std::vector<Call>& calls, const std::vector<bool>& which) {
  std::string s(x.s);
  for (std::size_t i = calls.size(); i-- > 0;) {
    if (!which[i]) continue;
    const Token& n = x.t[calls[i].name_token];
    s.replace(n.begin, n.end - n.begin, "probe_n" + std::to_string(arity(x, calls[i])));
  }
  return s;
}

void check_against_sqlite(const std::string& input) {
  static const bool verbose = std::getenv("OPTDP_FUZZ_VERBOSE") != nullptr;
  std::string raw, why;
  const auto base = prepare(input, &raw, &why);
  if (verbose) std::fprintf(stderr, "[%s] %s\n", base ? "prepared" : why.c_str(), input.c_str());
  if (!base || raw.empty()) return;
  const int sqlite_calls = base->count.count("probe") ? base->count.at("probe") : 0;
  const auto t = sql::tokenize(raw);
  const Text x{raw, t};
  const auto calls = sql::find_calls(raw, t, "probe");
  if (verbose) std::fprintf(stderr, "  SQLite resolves %d calls of probe, %zu found\n", sqlite_calls, calls.size());
  FUZZ_CHECK_MSG(!(sqlite_calls > 0 && calls.empty()), "SQLite resolves %d calls of probe, none is found in: %s",
                 sqlite_calls, raw.c_str());
  if (calls.empty() || calls.size() > kMaxOracleCalls) return;
  // Whether, with the calls in which renamed, the text prepares (nullopt if
  // not) and SQLite resolves no call of probe.
  auto none_left = [&](const std::vector<bool>& which) -> std::optional<bool> {
    std::string error;
    const auto r = prepare(renamed(x, calls, which), nullptr, &error);
    if (!r) return std::nullopt;
    return !r->count.count("probe");
  };
  const std::vector<bool> every(calls.size(), true);
  if (const auto r = none_left(every)) {
    FUZZ_CHECK_MSG(*r, "SQLite resolves a call of probe that find_calls does not find in: %s",
                   renamed(x, calls, every).c_str());
    return;
  }
  // Some name found is not a call (renamed, the text does not prepare): each
  // call alone. Its number of arguments must be SQLite's.
  std::vector<bool> seen(calls.size(), false);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::vector<bool> one(calls.size(), false);
    one[i] = true;
    const std::string s = renamed(x, calls, one);
    std::string error;
    const auto r = prepare(s, nullptr, &error);
    FUZZ_CHECK_MSG(r || error.find("wrong number of arguments to function probe_n") == std::string::npos,
                   "the call at token %zu has %zu arguments as found, not for SQLite: %s: %s", calls[i].name_token,
                   arity(x, calls[i]), s.c_str(), error.c_str());
    seen[i] = r && r->count.count("probe_n" + std::to_string(arity(x, calls[i])));
  }
  const auto r = none_left(seen);
  if (!r || *r) return;  // renaming several at once can fail where one at a time did not
  // A call seen only with another one renamed (a compound SELECT's ORDER BY
  // term must match a result column): one more, or all but one.
  for (std::size_t i = 0; i < calls.size(); ++i) {
    std::vector<bool> more = seen, fewer = every;
    more[i] = true;
    fewer[i] = false;
    if (none_left(more).value_or(false) || none_left(fewer).value_or(false)) return;
  }
  FUZZ_CHECK_MSG(false, "SQLite resolves a call of probe that find_calls does not find in: %s",
                 renamed(x, calls, seen).c_str());
}

// ---- the statement generator -------------------------------------------------

class Generator {
 public:
  explicit Generator(FuzzedDataProvider& in) : in_(in) {}

  std::string statement() {
    switch (pick(6)) {
      case 0: return select(true, false, true);
      case 1: return "WITH c AS (" + select(true, false, true) + ")" + sep() + "SELECT" + sep() + "*" + sep() +
                     "FROM c" + (pick(2) ? ", c AS d" : "");
      case 2: return "INSERT INTO u" + sep() + "SELECT " + expr(2, true) + "," + sep() + expr(2, true) + " FROM t";
      case 3: return select(true, true, false) + sep() + "UNION ALL" + sep() + select(true, true, true);
      case 4: return "SELECT " + expr(2, false) + " FROM t WHERE a IN (" + select(true, true, true) + ")";
      default: return "UPDATE t SET a = (" + select(true, true, true) + ")";
    }
  }

 private:
  FuzzedDataProvider& in_;
  int budget_ = 40;  // calls of expr

  unsigned pick(unsigned n) { return in_.ConsumeIntegralInRange<unsigned>(0, n - 1); }

  // Spaces and comments between tokens, some of them looking like calls.
  std::string sep() {
    static const char* const kSeps[] = {" ", " ", "\n", "\t", " \v", "\t\v\f", "\r\n", "/* probe( */",
                                        "-- probe(\n", "/**/", " /* ) */ ", "\f"};
    return kSeps[pick(sizeof kSeps / sizeof kSeps[0])];
  }

  std::string name() {
    static const char* const kNames[] = {"probe", "PROBE", "Probe", "\"probe\"", "[probe]", "`probe`", "\"PrObE\""};
    return kNames[pick(sizeof kNames / sizeof kNames[0])];
  }

  std::string literal() {
    static const char* const kLiterals[] = {
        "0.5", "-1", "1e3", ".5", "0x1F", "'probe(a)'", "'it''s probe('", "x'00'", "NULL", "- -2", "(+(3))",
        "'('", "')'", "','", "\"probe(\"", "9223372036854775808", "?", "?2", ":a", "@b", "$c::d(e)", "'\v('"};
    return kLiterals[pick(sizeof kLiterals / sizeof kLiterals[0])];
  }

  std::string column() {
    static const char* const kColumns[] = {"a", "b", "c", "t.a", "\"b\"", "[c]", "`a`"};
    return kColumns[pick(sizeof kColumns / sizeof kColumns[0])];
  }

  // A call of probe; its arguments and its FILTER never hold another
  // (aggregates do not nest), except in a subquery.
  std::string call(int depth) {
    std::string s = name() + sep() + "(";
    const unsigned n = pick(5);
    if (n == 4) {
      s += sep() + "*";
    } else {
      if (n == 1 && pick(4) == 0) s += "DISTINCT ";
      for (unsigned k = 0; k < n; ++k) s += (k ? "," : "") + sep() + expr(depth - 1, false);
    }
    s += sep() + ")";
    if (pick(4) == 0) s += sep() + "FILTER" + sep() + "(WHERE " + expr(depth - 1, false) + ")";
    if (pick(5) == 0) s += sep() + "OVER" + sep() + "(PARTITION BY b ORDER BY c)";
    return s;
  }

  std::string subquery(int depth) {
    return "(SELECT " + (pick(3) ? call(depth) : expr(depth, true)) + " FROM u AS t" + (pick(2) ? " WHERE x > 0" : "") + ")";
  }

  std::string expr(int depth, bool aggregates) {
    if (--budget_ < 0 || depth <= 0) return pick(2) ? column() : literal();
    switch (pick(10)) {
      case 0: return column();
      case 1: return literal();
      case 2: return aggregates ? call(depth) : column();
      case 3: return "(" + expr(depth - 1, aggregates) + ")";
      case 4: return expr(depth - 1, aggregates) + sep() + (pick(2) ? "+" : "||") + sep() + expr(depth - 1, aggregates);
      case 5: return "abs" + sep() + "(" + expr(depth - 1, aggregates) + ")";
      case 6:
        return "CASE WHEN " + expr(depth - 1, aggregates) + " THEN " + expr(depth - 1, aggregates) + " ELSE " +
               expr(depth - 1, aggregates) + " END";
      case 7: return subquery(depth - 1);
      case 8: return expr(depth - 1, aggregates) + " IN (" + expr(depth - 1, aggregates) + ", " + literal() + ")";
      default: return "coalesce(" + expr(depth - 1, aggregates) + "," + sep() + expr(depth - 1, aggregates) + ")";
    }
  }

  // A SELECT from t; one column if single; ORDER BY only if order.
  std::string select(bool aggregates, bool single, bool order) {
    std::string s = "SELECT" + sep() + expr(3, aggregates);
    if (!single)
      for (unsigned k = pick(3); k > 0; --k) s += "," + sep() + expr(3, aggregates) + (pick(3) ? "" : " AS \"probe(\"");
    s += sep() + "FROM t";
    if (pick(2)) s += " WHERE " + expr(2, false);
    if (pick(2)) {
      s += " GROUP BY b";
      if (aggregates && pick(2)) s += " HAVING " + expr(2, true);
    }
    if (order && pick(3) == 0) s += " ORDER BY " + expr(2, aggregates);
    return s;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string raw;
  std::string_view expanded;
  if (size > 0 && data[0] == 0xFF) {
    FuzzedDataProvider provider(data + 1, size - 1);
    raw = Generator(provider).statement();
  } else {
    const std::size_t nul = in.find('\0');
    raw = std::string(in.substr(0, nul));
    if (nul != std::string_view::npos) expanded = in.substr(nul + 1);
  }

  const auto t = sql::tokenize(raw);
  const Text x{raw, t};
  check_tokens(raw, t);

  // bound_values on the given text, then on a text written as SQLite would.
  const auto given = sql::bound_values(raw, t, expanded);
  FUZZ_CHECK(given.size() == t.size());
  for (std::size_t k = 0; k < t.size(); ++k) FUZZ_CHECK(!given[k] || t[k].kind == Token::Variable);
  std::uint64_t seed = 1469598103934665603ULL;
  for (unsigned char c : in) seed = (seed ^ c) * 1099511628211ULL;
  const auto bound = check_written_values(x, seed);

  // The calls of a few names.
  std::vector<std::string> names{"private_count", "probe"};
  for (std::size_t k = 0; k + 1 < t.size() && names.size() < kMaxNames + 2; ++k) {
    if ((t[k].kind != Token::Word && t[k].kind != Token::Quoted) || !x.is(k + 1, '(')) continue;
    std::string n = sql::token_name(raw, t[k]);
    bool known = false;
    for (const auto& m : names) known = known || iequal(m, n);
    if (!known) names.push_back(std::move(n));
  }
  for (const auto& n : names) {
    const auto calls = sql::find_calls(raw, t, n);
    check_calls(x, n, calls);
    check_literals(x, calls, bound);
  }

  check_against_sqlite(raw);
  return 0;
}
