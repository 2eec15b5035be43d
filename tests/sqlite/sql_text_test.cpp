// The SQL text reader (extension/sqlite/sql_text.hpp): the tokenizer, the
// call finder, the literal reader and bound_values, which params.cpp uses to
// read the parameters of the randomised aggregates from the text of the
// running statements. A call it misses or misreads would release with the
// wrong parameters, so besides unit tests it is checked against SQLite
// itself, the real oracle:
//   - literals: read_literal(L) is, bit for bit and in type, what SQLite
//     returns for SELECT L (where SQLite's own decimal conversion is not
//     correctly rounded, the differences are listed and logged, not hidden);
//   - bound parameters: bound_values gives each Variable token the value bound
//     to it, as SQLite writes it in sqlite3_expanded_sql;
//   - calls: the calls find_calls finds are exactly the calls SQLite's parser
//     resolves (sqlite3_set_authorizer, SQLITE_FUNCTION), checked by renaming
//     the calls found and preparing again.
//
// Links optdp_static for dp_alpha and private_count.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite/sql_text.hpp"

extern "C" int sqlite3_optdp_init(sqlite3* db, char** err, const sqlite3_api_routines* api);

namespace optdp::sql {
// gtest prints Params with this.
void PrintTo(const Param& p, std::ostream* os) {
  switch (p.type) {
    case Param::Type::Null: *os << "NULL"; break;
    case Param::Type::Integer: *os << "INTEGER " << p.i; break;
    case Param::Type::Real: {
      char buf[64];
      std::uint64_t bits;
      std::memcpy(&bits, &p.d, sizeof bits);
      std::snprintf(buf, sizeof buf, "REAL %.17g (0x%016llx)", p.d, static_cast<unsigned long long>(bits));
      *os << buf;
      break;
    }
    case Param::Type::Text: *os << "TEXT '" << p.bytes << "'"; break;
    case Param::Type::Blob: *os << "BLOB of " << p.i << " bytes (" << p.bytes.size() << " stored)"; break;
  }
  if (p.bound_real) *os << " [bound_real]";
}
}  // namespace optdp::sql

namespace {

using optdp::sql::Call;
using optdp::sql::Param;
using optdp::sql::Token;
namespace sql = optdp::sql;

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
const double kInf = std::numeric_limits<double>::infinity();

// ---- helpers ---------------------------------------------------------------

// Tokens as "K:text", K the kind's initial (W Q S B N V P).
std::vector<std::string> toks(std::string_view s) {
  static const char kinds[] = "WQSBNVP";
  std::vector<std::string> out;
  for (const Token& t : sql::tokenize(s))
    out.push_back(std::string(1, kinds[t.kind]) + ":" + std::string(s.substr(t.begin, t.end - t.begin)));
  return out;
}
using V = std::vector<std::string>;

std::string text_of(std::string_view s, const std::vector<Token>& t, std::size_t first, std::size_t last) {
  if (first >= last) return "";
  return std::string(s.substr(t[first].begin, t[last - 1].end - t[first].begin));
}

// The calls of name in s, each as its arguments' texts.
std::vector<V> calls(std::string_view s, std::string_view name) {
  const auto t = sql::tokenize(s);
  std::vector<V> out;
  for (const Call& c : sql::find_calls(s, t, name)) {
    V args;
    for (auto [b, e] : c.args) args.push_back(text_of(s, t, b, e));
    out.push_back(args);
  }
  return out;
}

const sql::BoundValue kNoBinding = [](std::size_t) -> std::optional<Param> { return std::nullopt; };

std::optional<Param> lit(std::string_view s) {
  const auto t = sql::tokenize(s);
  return sql::read_literal(s, t, 0, t.size(), kNoBinding);
}

Param I(std::int64_t v) {
  Param p;
  p.type = Param::Type::Integer;
  p.i = v;
  return p;
}
Param R(double d) {
  Param p;
  p.type = Param::Type::Real;
  p.d = d;
  return p;
}
Param T(std::string s) {
  Param p;
  p.type = Param::Type::Text;
  p.bytes = std::move(s);
  return p;
}
Param B(std::string s) {
  Param p;
  p.type = Param::Type::Blob;
  p.i = static_cast<std::int64_t>(s.size());
  p.bytes = std::move(s);
  return p;
}
Param N() { return Param{}; }

std::uint64_t bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// Same type and the same value bit for bit (Param::operator== compares
// numbers by value: 1 == 1.0 and 0.0 == -0.0 there).
::testing::AssertionResult identical(const std::optional<Param>& a, const Param& b) {
  if (!a) return ::testing::AssertionFailure() << "nothing was read, expected " << ::testing::PrintToString(b);
  bool same = a->type == b.type;
  if (same) switch (b.type) {
      case Param::Type::Null: break;
      case Param::Type::Integer: same = a->i == b.i; break;
      case Param::Type::Real: same = bits(a->d) == bits(b.d); break;
      case Param::Type::Text: same = a->bytes == b.bytes; break;
      case Param::Type::Blob: same = a->bytes == b.bytes && a->i == b.i; break;
    }
  if (same) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "read " << ::testing::PrintToString(*a) << ", expected "
                                       << ::testing::PrintToString(b);
}

// Distance in units in the last place between two finite doubles of the same sign.
std::uint64_t ulps(double a, double b) {
  const std::uint64_t x = bits(a), y = bits(b);
  return x > y ? x - y : y - x;
}

// A connection with optdp registered statically.
struct Db {
  sqlite3* db = nullptr;
  Db() {
    EXPECT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_optdp_init(db, &err, nullptr), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
  }
  ~Db() { EXPECT_EQ(sqlite3_close(db), SQLITE_OK); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  void exec(const std::string& s) {
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, s.c_str(), nullptr, nullptr, &err), SQLITE_OK) << s << ": " << (err ? err : "");
    sqlite3_free(err);
  }
};

Param column_param(sqlite3_stmt* st, int c) {
  switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: return I(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return R(sqlite3_column_double(st, c));
    case SQLITE_TEXT: {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
      return T(std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(st, c))));
    }
    case SQLITE_BLOB: {
      const auto* p = static_cast<const char*>(sqlite3_column_blob(st, c));
      return B(std::string(p ? p : "", static_cast<std::size_t>(sqlite3_column_bytes(st, c))));
    }
    default: return N();
  }
}

// What SQLite returns for SELECT <literal>, or nullopt (and *error) if it
// refuses the statement.
std::optional<Param> sqlite_value(sqlite3* db, const std::string& literal, std::string* error = nullptr) {
  const std::string q = "SELECT " + literal;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, q.c_str(), -1, &st, nullptr) != SQLITE_OK) {
    if (error) *error = sqlite3_errmsg(db);
    sqlite3_finalize(st);
    return std::nullopt;
  }
  std::optional<Param> v;
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_count(st) == 1) v = column_param(st, 0);
  else if (error) *error = sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return v;
}

// ---- 1. the tokenizer ------------------------------------------------------

TEST(Tokenize, Strings) {
  EXPECT_EQ(toks("'it''s'"), V({"S:'it''s'"}));
  EXPECT_EQ(toks("'' ''''"), V({"S:''", "S:''''"}));
  EXPECT_EQ(toks("'a'||'b'"), V({"S:'a'", "P:|", "P:|", "S:'b'"}));
  EXPECT_EQ(toks("'--', '/*'"), V({"S:'--'", "P:,", "S:'/*'"}));
  EXPECT_EQ(toks("x 'unclosed ''"), V({"W:x", "S:'unclosed ''"}));  // left open: runs to the end
}

TEST(Tokenize, QuotedIdentifiers) {
  EXPECT_EQ(toks("\"a\"\"b\" `c``d` [e]]"), V({"Q:\"a\"\"b\"", "Q:`c``d`", "Q:[e]", "P:]"}));
  EXPECT_EQ(toks("[a\"\"b] [x y]"), V({"Q:[a\"\"b]", "Q:[x y]"}));
  EXPECT_EQ(toks("\"open"), V({"Q:\"open"}));
  EXPECT_EQ(toks("[open"), V({"Q:[open"}));
  const std::string s = "\"a\"\"b\" `c``d` [e\"\"f] \"\" []";
  const auto t = sql::tokenize(s);
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(sql::token_name(s, t[0]), "a\"b");
  EXPECT_EQ(sql::token_name(s, t[1]), "c`d");
  EXPECT_EQ(sql::token_name(s, t[2]), "e\"\"f");  // no escapes in [...]
  EXPECT_EQ(sql::token_name(s, t[3]), "");
  EXPECT_EQ(sql::token_name(s, t[4]), "");
  const std::string w = "AbC";
  EXPECT_EQ(sql::token_name(w, sql::tokenize(w)[0]), "AbC");
}

TEST(Tokenize, Comments) {
  EXPECT_EQ(toks("a -- c ( ' \" \nb"), V({"W:a", "W:b"}));
  EXPECT_EQ(toks("a -- unclosed ("), V({"W:a"}));
  EXPECT_EQ(toks("a--b"), V({"W:a"}));
  EXPECT_EQ(toks("a /* c ( ' */ b"), V({"W:a", "W:b"}));
  EXPECT_EQ(toks("a/**/b"), V({"W:a", "W:b"}));
  EXPECT_EQ(toks("/*/ x */ y"), V({"W:y"}));  // "/*/" does not close
  EXPECT_EQ(toks("a /* unclosed ' ("), V({"W:a"}));
  EXPECT_EQ(toks("a - - b -/**/- c"), V({"W:a", "P:-", "P:-", "W:b", "P:-", "P:-", "W:c"}));
  EXPECT_EQ(toks("a / * b"), V({"W:a", "P:/", "P:*", "W:b"}));
}

TEST(Tokenize, Spaces) {
  EXPECT_EQ(toks(" \t\n\f\r a \r\n"), V({"W:a"}));
  // tokenize.c: a run of spaces starts with ' ', \t, \n, \f or \r and then
  // takes every sqlite3Isspace byte, \v included; a \v that starts a token
  // is an illegal character.
  EXPECT_EQ(toks("a \vb"), V({"W:a", "W:b"}));
  EXPECT_EQ(toks("a\t\v\v(b"), V({"W:a", "P:(", "W:b"}));
  EXPECT_EQ(toks("a\vb"), V({"W:a", "P:\v", "W:b"}));
}

TEST(Tokenize, Numbers) {
  EXPECT_EQ(toks("12 1.5 .5 5. 1e3 1E3 1e+3 1e-3 1.5e-3 0x1F 0X1f 007"),
            V({"N:12", "N:1.5", "N:.5", "N:5.", "N:1e3", "N:1E3", "N:1e+3", "N:1e-3", "N:1.5e-3", "N:0x1F", "N:0X1f",
               "N:007"}));
  EXPECT_EQ(toks("12abc"), V({"P:12abc"}));      // not a number: an illegal token
  EXPECT_EQ(toks("1e 1e+ x"), V({"P:1e", "P:1e", "P:+", "W:x"}));
  EXPECT_EQ(toks("1_000 1$"), V({"P:1_000", "P:1$"}));
  EXPECT_EQ(toks("0x 0xg"), V({"P:0x", "P:0xg"}));
  EXPECT_EQ(toks("0x1Fg"), V({"N:0x1F", "W:g"}));  // as tokenize.c: nothing checked after hex digits
  EXPECT_EQ(toks("1.2.3 1..2"), V({"N:1.2", "N:.3", "N:1.", "N:.2"}));
  EXPECT_EQ(toks(". a.b -1"), V({"P:.", "W:a", "P:.", "W:b", "P:-", "N:1"}));
}

TEST(Tokenize, Variables) {
  EXPECT_EQ(toks("? ?12 ?a"), V({"V:?", "V:?12", "V:?", "W:a"}));
  EXPECT_EQ(toks(":a @a $a #a :1 @_"), V({"V::a", "V:@a", "V:$a", "V:#a", "V::1", "V:@_"}));
  EXPECT_EQ(toks("$a::b $a::b::c(x) $a(x) $a(x:y)"), V({"V:$a::b", "V:$a::b::c(x)", "V:$a(x)", "V:$a(x:y)"}));
  EXPECT_EQ(toks("$a(x y)"), V({"P:$a(x", "W:y", "P:)"}));  // the TCL form stops at a space: illegal
  EXPECT_EQ(toks(":a:b"), V({"V::a", "V::b"}));
  EXPECT_EQ(toks(": $ $(x) @"), V({"P::", "P:$", "P:$", "P:(", "W:x", "P:)", "P:@"}));
  EXPECT_EQ(toks(":é"), V({"V::é"}));
}

TEST(Tokenize, Blobs) {
  EXPECT_EQ(toks("x'00' X'0aFF' x''"), V({"B:x'00'", "B:X'0aFF'", "B:x''"}));
  EXPECT_EQ(toks("x'0' x'0g'"), V({"P:x'0'", "P:x'0g'"}));  // odd length, not hex: illegal
  EXPECT_EQ(toks("xy x 'a'"), V({"W:xy", "W:x", "S:'a'"}));
  // tokenize.c's blobs have no doubled quotes: x'00''a' is the blob x'00'
  // followed by the string 'a' (SELECT x'00''a' is the blob, aliased a).
  EXPECT_EQ(toks("x'00''a'"), V({"B:x'00'", "S:'a'"}));
  EXPECT_EQ(toks("x'0g ' y"), V({"P:x'0g '", "W:y"}));
}

TEST(Tokenize, NonAscii) {
  EXPECT_EQ(toks("é naïve(日本語)"), V({"W:é", "W:naïve", "P:(", "W:日本語", "P:)"}));
  EXPECT_EQ(toks("a\xC2\xA0(b"), V({"W:a\xC2\xA0", "P:(", "W:b"}));  // every byte >= 0x80 is an identifier byte
  EXPECT_EQ(toks("\x80x"), V({"W:\x80x"}));
}

TEST(Tokenize, Punctuation) {
  EXPECT_EQ(toks("a<=b->>'$'"), V({"W:a", "P:<", "P:=", "W:b", "P:-", "P:>", "P:>", "S:'$'"}));
  EXPECT_EQ(toks("f(a,b);"), V({"W:f", "P:(", "W:a", "P:,", "W:b", "P:)", "P:;"}));
}

// ---- 2. find_calls ---------------------------------------------------------

TEST(FindCalls, NamesCaseInsensitiveAndQuoted) {
  EXPECT_EQ(calls("SELECT f(1), F(2), \"f\"(3), [f](4), `F`(5), \"F\" (6)", "f"),
            std::vector<V>({{"1"}, {"2"}, {"3"}, {"4"}, {"5"}, {"6"}}));
  EXPECT_EQ(calls("SELECT private_count(0.5), PRIVATE_COUNT(0.5)", "private_count").size(), 2u);
  EXPECT_TRUE(calls("SELECT ff(1), f_(1), f1(1), \"f \"(1), [ f](1), 'f'(1), f", "f").empty());
  EXPECT_EQ(calls("SELECT \"a\"\"b\"(1), [a\"\"b](2)", "a\"b"), std::vector<V>({{"1"}}));
}

TEST(FindCalls, SchemaQualifiedIsNotACall) {
  EXPECT_TRUE(calls("SELECT s.f(1), s . f(2), \"s\".f(3), s./**/f(4), t.\"f\"(5)", "f").empty());
  EXPECT_TRUE(calls("SELECT f.g(1)", "f").empty());
  EXPECT_EQ(calls("SELECT f.g(1)", "g").size(), 0u);
}

TEST(FindCalls, CommentsAndSpacesBeforeTheParenthesis) {
  EXPECT_EQ(calls("f /* c */ (1) f -- c\n(2) f\r\n\f\t(3)", "f"), std::vector<V>({{"1"}, {"2"}, {"3"}}));
  // A \v after a space is a space for SQLite, so this is a call (SELECT abs \t\v(-1) is 1).
  EXPECT_EQ(calls("SELECT f \t\v(1)", "f"), std::vector<V>({{"1"}}));
}

TEST(FindCalls, Arguments) {
  EXPECT_EQ(calls("f(a, g(b, c), 'x,)', (d, e), [)], \")\", `(`)", "f"),
            std::vector<V>({{"a", "g(b, c)", "'x,)'", "(d, e)", "[)]", "\")\"", "`(`"}}));
  EXPECT_EQ(calls("f( - 1 /* , */ , -- ,\n 2 )", "f"), std::vector<V>({{"- 1", "2"}}));
  EXPECT_EQ(calls("f(CASE WHEN a THEN b ELSE c END, x'00', ?1)", "f"),
            std::vector<V>({{"CASE WHEN a THEN b ELSE c END", "x'00'", "?1"}}));
  EXPECT_EQ(calls("f(,) f(1,) f(,1)", "f"), std::vector<V>({{"", ""}, {"1", ""}, {"", "1"}}));
}

TEST(FindCalls, ZeroArguments) {
  EXPECT_EQ(calls("f() f( ) f(/* x */) f(\n)", "f"), std::vector<V>({{}, {}, {}, {}}));
  // SQLite reads f(*) as a call with no arguments; here it has one, "*"
  // (not a literal: optdp has no zero-argument form, and SQLite refuses
  // private_count(*) before it runs).
  EXPECT_EQ(calls("f(*)", "f"), std::vector<V>({{"*"}}));
}

TEST(FindCalls, InsideStringsAndCommentsIsNotACall) {
  EXPECT_TRUE(calls("SELECT 'f(1)', \"f(1)\", [f(1)], `f(1)` /* f(1) */ -- f(1)", "f").empty());
  EXPECT_TRUE(calls("SELECT 'it''s f(1)' /* unclosed f(1)", "f").empty());
  EXPECT_TRUE(calls("SELECT x'00', 'f(' -- f(\n", "f").empty());
  EXPECT_EQ(calls("SELECT ')', f(')'), '('", "f"), std::vector<V>({{"')'"}}));
}

TEST(FindCalls, SeveralAndNested) {
  EXPECT_EQ(calls("f(1) + f(2, 3) * f()", "f"), std::vector<V>({{"1"}, {"2", "3"}, {}}));
  EXPECT_EQ(calls("f(f(1), g(f(2)))", "f"), std::vector<V>({{"f(1)", "g(f(2))"}, {"1"}, {"2"}}));
  EXPECT_EQ(calls("SELECT f(a) FILTER (WHERE b) OVER (ORDER BY c), f(d) OVER w FROM t WINDOW w AS (f)", "f"),
            std::vector<V>({{"a"}, {"d"}}));
}

TEST(FindCalls, Unclosed) {
  EXPECT_TRUE(calls("f(1", "f").empty());
  EXPECT_TRUE(calls("f((1)", "f").empty());
  EXPECT_EQ(calls("f(1))", "f"), std::vector<V>({{"1"}}));
  EXPECT_EQ(calls("f(f(1)", "f"), std::vector<V>({{"1"}}));  // the outer one is open
  EXPECT_TRUE(calls("f", "f").empty());
  EXPECT_TRUE(calls("", "f").empty());
}

// SQLite 3.44 added ORDER BY inside an aggregate's parentheses:
// f(x, 0.5 ORDER BY a, b) is a call with TWO arguments (x, 0.5) and the sort
// keys a, b. ORDER is a reserved word (it cannot be an unquoted name), so the
// arguments end there; the commas of the ORDER BY list do not separate
// arguments. Reading 0.5 ORDER BY a, b as three arguments would skip the
// call (params.cpp matches calls by their number of arguments) and read the
// parameters from another call of the same function in the statement.
TEST(FindCalls, OrderByInsideTheCallEndsTheArguments) {
  EXPECT_EQ(calls("SELECT f(x, 0.5 ORDER BY a, b)", "f"), std::vector<V>({{"x", "0.5"}}));
  EXPECT_EQ(calls("SELECT f(0.5 order /* c */ by a DESC, b)", "f"), std::vector<V>({{"0.5"}}));
  EXPECT_EQ(calls("SELECT f(DISTINCT x ORDER BY x)", "f"), std::vector<V>({{"DISTINCT x"}}));
  // Inside parentheses, or quoted (then a name), it is not the call's ORDER BY.
  EXPECT_EQ(calls("SELECT f(a, (SELECT y FROM t ORDER BY y, z), b)", "f"),
            std::vector<V>({{"a", "(SELECT y FROM t ORDER BY y, z)", "b"}}));
  EXPECT_EQ(calls("SELECT f(\"order\", [ORDER] BY)", "f"), std::vector<V>({{"\"order\"", "[ORDER] BY"}}));
  EXPECT_EQ(calls("SELECT f(a ORDER BY g(b, c), d)", "g"), std::vector<V>({{"b", "c"}}));
}

// ---- 3. read_literal -------------------------------------------------------

TEST(ReadLiteral, Numbers) {
  EXPECT_TRUE(identical(lit("0.5"), R(0.5)));
  EXPECT_TRUE(identical(lit("-3"), I(-3)));
  EXPECT_TRUE(identical(lit("+3"), I(3)));
  EXPECT_TRUE(identical(lit("007"), I(7)));
  EXPECT_TRUE(identical(lit("1e-3"), R(1e-3)));
  EXPECT_TRUE(identical(lit("1e3"), R(1000.0)));  // an exponent makes a REAL
  EXPECT_TRUE(identical(lit("1E+3"), R(1000.0)));
  EXPECT_TRUE(identical(lit(".5"), R(0.5)));
  EXPECT_TRUE(identical(lit("5."), R(5.0)));
  EXPECT_TRUE(identical(lit("0x10"), I(16)));
  EXPECT_TRUE(identical(lit("0X1f"), I(31)));
  EXPECT_TRUE(identical(lit("0x00000000000000000001"), I(1)));  // leading zeros do not count towards 16 digits
  EXPECT_TRUE(identical(lit("0x8000000000000000"), I(kMin)));
  EXPECT_TRUE(identical(lit("0xFFFFFFFFFFFFFFFF"), I(-1)));  // 64-bit two's complement
  EXPECT_TRUE(identical(lit("-0x7FFFFFFFFFFFFFFF"), I(-kMax)));
  EXPECT_TRUE(identical(lit("-0xFFFFFFFFFFFFFFFF"), I(1)));
  EXPECT_TRUE(identical(lit("9223372036854775807"), I(kMax)));
  EXPECT_TRUE(identical(lit("-9223372036854775808"), I(kMin)));
  EXPECT_TRUE(identical(lit("- 9223372036854775808"), I(kMin)));
  EXPECT_TRUE(identical(lit("-(9223372036854775808)"), I(kMin)));  // parentheses are no node in SQLite's tree
  EXPECT_TRUE(identical(lit("-((9223372036854775808))"), I(kMin)));
  EXPECT_TRUE(identical(lit("(-9223372036854775808)"), I(kMin)));
  EXPECT_TRUE(identical(lit("9223372036854775808"), R(9223372036854775808.0)));
  EXPECT_TRUE(identical(lit("-(-9223372036854775808)"), R(9223372036854775808.0)));  // 0 - INT64_MIN overflows
  EXPECT_TRUE(identical(lit("-+9223372036854775808"), R(-9223372036854775808.0)));
  EXPECT_TRUE(identical(lit("-9223372036854775809"), R(-9223372036854775808.0)));
  EXPECT_TRUE(identical(lit("18446744073709551616"), R(18446744073709551616.0)));
  EXPECT_TRUE(identical(lit("1e999"), R(kInf)));
  EXPECT_TRUE(identical(lit("-1e999"), R(-kInf)));
  EXPECT_TRUE(identical(lit("1e-999"), R(0.0)));
  EXPECT_TRUE(identical(lit("- -0.5"), R(0.5)));
  EXPECT_TRUE(identical(lit("-(-(-0.5))"), R(-0.5)));
  EXPECT_TRUE(identical(lit("(+(0.5))"), R(0.5)));
  EXPECT_TRUE(identical(lit("( ( 2 ) )"), I(2)));
  EXPECT_TRUE(identical(lit("-0.0"), R(-0.0)));
  EXPECT_TRUE(identical(lit("-(0.0)"), R(-0.0)));
  // A minus that is not on a number literal is 0 - x in SQLite: -(+0.0) is +0.0.
  EXPECT_TRUE(identical(lit("-(+0.0)"), R(0.0)));
  EXPECT_TRUE(identical(lit("- -0.0"), R(0.0)));
  EXPECT_TRUE(identical(lit("+(-0.0)"), R(-0.0)));
}

TEST(ReadLiteral, StringsBlobsNull) {
  EXPECT_TRUE(identical(lit("'it''s'"), T("it's")));
  EXPECT_TRUE(identical(lit("''"), T("")));
  EXPECT_TRUE(identical(lit("'l2'"), T("l2")));
  EXPECT_TRUE(identical(lit("('a')"), T("a")));
  EXPECT_TRUE(identical(lit("+'a'"), T("a")));
  EXPECT_TRUE(identical(lit("'é'"), T("é")));
  EXPECT_TRUE(identical(lit("x'0a'"), B("\n")));
  EXPECT_TRUE(identical(lit("X'00fF'"), B(std::string("\0\xff", 2))));
  EXPECT_TRUE(identical(lit("x''"), B("")));
  EXPECT_TRUE(identical(lit("NULL"), N()));
  EXPECT_TRUE(identical(lit("null"), N()));
  EXPECT_TRUE(identical(lit("(NULL)"), N()));
  EXPECT_TRUE(identical(lit("+NULL"), N()));
}

// dp_alpha(...) is evaluated by SQLite, for a row only (dp_alpha(0) fails
// with rows, not without): not a literal, though SQLite's value is known.
TEST(ReadLiteral, DpAlphaIsNotALiteral) {
  Db d;
  for (const char* l : {"dp_alpha(1.0)", "dp_alpha(1)", "DP_ALPHA ( 0.5 )", "\"dp_alpha\"(2)", "[dp_alpha](1e-3)",
                        "dp_alpha(-(-1))", "(dp_alpha((0.25)))", "-dp_alpha(1.0)"}) {
    SCOPED_TRACE(l);
    EXPECT_TRUE(sqlite_value(d.db, l));
    EXPECT_FALSE(lit(l));
  }
}

TEST(ReadLiteral, Rejected) {
  for (const char* l :
       {"0.25 + 0.25", "x", "abs(0.5)", "CAST(0.5 AS REAL)", "(SELECT 0.5)", "-'a'", "'a' || 'b'", "dp_alpha(x)",
        "dp_alpha('1')", "dp_alpha(NULL)", "dp_alpha(x'01')", "dp_alpha()", "dp_alpha(1, 2)", "dp_alpha 1", "",
        "()", "(0.5", "0.5)", "-", "+", "- -", "-NULL", "-x'01'", "TRUE", "\"0.5\"", "[0.5]", "0x10000000000000000",
        "-0x8000000000000000", "-(0x8000000000000000)", "+-0x8000000000000000", "12abc", "1e", "'unclosed",
        "'a''", "x'0'", "x'0g'", "(1) * (2)", "(1) (2)", "dp_alpha(1) - dp_alpha(2)", "?", ":a", "1 2", "0.5 ORDER",
        "0.5 COLLATE nocase", "DISTINCT 0.5", "NULL NULL", "(-)", "schema.dp_alpha(1)", "- - 'a'", "0.5,"}) {
    SCOPED_TRACE(std::string("rejects ") + l);
    EXPECT_FALSE(lit(l));
  }
}

TEST(ReadLiteral, DepthIsBounded) {
  std::string deep(100000, '(');
  deep += "1";
  deep += std::string(100000, ')');
  EXPECT_FALSE(lit(deep));  // refused, without exhausting the stack
  std::string signs(100000, '+');
  EXPECT_FALSE(lit(signs + "1"));
  EXPECT_TRUE(identical(lit(std::string(30, '(') + "1" + std::string(30, ')')), I(1)));
}

TEST(ReadLiteral, VariablesUseTheBinding) {
  const std::string s = "f(?, -:a, (@b), dp_alpha($c), ?9)";
  const auto t = sql::tokenize(s);
  const auto cs = sql::find_calls(s, t, "f");
  ASSERT_EQ(cs.size(), 1u);
  ASSERT_EQ(cs[0].args.size(), 5u);
  std::map<std::string, Param> values{{"?", I(3)}, {":a", R(0.25)}, {"@b", T("l2")}, {"$c", I(1)}};
  const sql::BoundValue bound = [&](std::size_t k) -> std::optional<Param> {
    EXPECT_EQ(t[k].kind, Token::Variable);
    const auto it = values.find(text_of(s, t, k, k + 1));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
  auto arg = [&](int a) { return sql::read_literal(s, t, cs[0].args[a].first, cs[0].args[a].second, bound); };
  EXPECT_TRUE(identical(arg(0), I(3)));
  EXPECT_TRUE(identical(arg(1), R(-0.25)));
  EXPECT_TRUE(identical(arg(2), T("l2")));
  EXPECT_FALSE(arg(3));  // dp_alpha(...) is not a literal
  EXPECT_FALSE(arg(4));  // ?9 cannot be read
}

// ---- 4. literals against SQLite --------------------------------------------

// Literals whose value read_literal gives exactly as SQLite does.
const char* const kAgreeing[] = {
    // integers
    "0", "1", "-1", "+1", "007", "12", "- 12", "(12)", "-(12)", "2147483647", "2147483648", "-2147483648",
    "-2147483649", "9007199254740993", "9223372036854775807", "-9223372036854775807", "-9223372036854775808",
    "- 9223372036854775808", "-(9223372036854775808)", "-((9223372036854775808))", "(-9223372036854775808)",
    "+-9223372036854775808", "00000000000000000000000009223372036854775807", "-000000009223372036854775808",
    // hexadecimal
    "0x0", "0x1F", "0X1f", "0x7FFFFFFFFFFFFFFF", "0x8000000000000000", "0xFFFFFFFFFFFFFFFF", "-0x1",
    "-0x7FFFFFFFFFFFFFFF", "-0xFFFFFFFFFFFFFFFF", "0x00000000000000000001", "0x0000000000000000FFFFFFFFFFFFFFFF",
    "-+0x8000000000000000", "-(+0x8000000000000000)",
    // integers out of range: REAL
    "9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "99999999999999999999", "-(-9223372036854775808)", "- -9223372036854775808", "-+9223372036854775808",
    "-(+9223372036854775808)",
    // reals
    "0.5", ".5", "5.", "0.0", "-0.0", "- -0.0", "-(0.0)", "-(+0.0)", "+(-0.0)", "-(-(0.0))", "-(-(-0.0))",
    "(0.5)", "(+(0.5))", "- -0.5", "-(-(-0.5))", "1e3", "1E3", "1e+3", "1e-3", "1.5e3", "-1.5e-3", "0.1", "0.2",
    "0.3", "0.7", "1.1", "3.14159", "2.718281828459045", "0.1234567890123456789", "1e22", "1e23", "1e-22",
    "9007199254740993.0", "9007199254740992.5", "4503599627370496.5", "1e308", "1.7976931348623157e308",
    "1.7976931348623158e308", "1.8e308", "1e999", "-1e999", "1e-999", "2.2250738585072014e-308",
    "2.2250738585072009e-308", "2.2250738585072011e-308", "4.9406564584124654e-324", "5e-324", "2e-324",
    "3e-324", "1e-310", "1e-320", "123456789012345678", "0.000001", "1e-5", "100000000000000000000.0",
    "0.30000000000000004", "0.1e1", "10e-1", "1.0000000000000002", "0.9999999999999999", "0.99999999999999994",
    // strings, blobs, NULL
    "'it''s'", "''", "'a'", "'é'", "'\"'", "('x')", "+'a'", "x'0a'", "X'0A1b'", "x''", "+x'01'", "NULL", "null",
    "(NULL)", "+NULL",
};

TEST(AgreesWithSqlite, Literals) {
  Db d;
  for (const char* l : kAgreeing) {
    SCOPED_TRACE(l);
    std::string err;
    const auto want = sqlite_value(d.db, l, &err);
    ASSERT_TRUE(want) << "SQLite: " << err;
    EXPECT_TRUE(identical(lit(l), *want));
  }
}

// Texts SQLite refuses to prepare: never the text of a running statement,
// and read_literal refuses them too.
TEST(AgreesWithSqlite, RefusedBySqliteAndByReadLiteral) {
  Db d;
  for (const char* l : {"-0x8000000000000000", "-(0x8000000000000000)", "+-0x8000000000000000",
                        "- -0x8000000000000000", "-0x00008000000000000000", "0x10000000000000000", "12abc", "1e",
                        "x'0'", "x'0g'", "'open", "(1", "0x", "1_000"}) {
    SCOPED_TRACE(l);
    EXPECT_FALSE(sqlite_value(d.db, l));
    EXPECT_FALSE(lit(l));
  }
}

// Every literal read_literal accepts among these is read as SQLite reads it
// (it may refuse forms SQLite evaluates, like -'a': refusing is safe).
TEST(AgreesWithSqlite, AcceptedImpliesSame) {
  Db d;
  for (const char* l : {"-'a'", "-NULL", "-x'01'", "TRUE", "- - 'a'", "'1' + 0", "-'1'", "dp_alpha(1)", "+'1'",
                        "(('a'))", "+x'00'", "-(1)", "- - 1"}) {
    SCOPED_TRACE(l);
    const auto got = lit(l);
    if (got) {
      EXPECT_TRUE(identical(got, *sqlite_value(d.db, l)));
    }
  }
}

// SQLite 3.40's decimal-to-double conversion (sqlite3AtoF) keeps at most 19
// significant digits and scales with long double, so it is not always
// correctly rounded; read_literal (strtod) is. The parameters optdp uses are
// the ones read_literal reads (the correctly rounded value of the decimal
// written), never the value SQLite computes, so these differences do not
// change a release; they are listed here so that they are known.
//
// Inputs where SQLite 3.40.1 (Debian 12's libsqlite3) gives a value one unit
// in the last place away from the correctly rounded one:
struct KnownDifference {
  const char* text;
  double correct;  // the correctly rounded value, which read_literal reads
  const char* why;
};
const KnownDifference kSqliteDiffers[] = {
    {"9007199254740993.00000000001", 9007199254740994.0,
     "2^53 + 1 + 1e-11: SQLite drops the digits after the 19th and rounds the tie 2^53 + 1 to even"},
    {"-4.69728409254223e-07", -4.6972840925422297e-07,
     "15 digits: the quotient by 1e21 is rounded to long double, then to double (double rounding)"},
    {"1.1021736230896648e-305", 1.1021736230896648e-305, "e < -307: SQLite divides by 1e308 in a second step"},
    {"5843943.529e-314", 5.8439435290000003e-308, "e < -307: SQLite divides by 1e308 in a second step"},
};

TEST(AgreesWithSqlite, KnownDifferencesOfSqliteDecimalConversion) {
  Db d;
  const bool v340 = sqlite3_libversion_number() / 1000 == 3040;
  for (const auto& k : kSqliteDiffers) {
    SCOPED_TRACE(k.text);
    EXPECT_TRUE(identical(lit(k.text), R(k.correct)));
    EXPECT_EQ(bits(std::strtod(k.text, nullptr)), bits(k.correct));
    const auto s = sqlite_value(d.db, k.text);
    ASSERT_TRUE(s && s->type == Param::Type::Real);
    EXPECT_LE(ulps(s->d, k.correct), 1u);
    if (v340) {
      EXPECT_NE(bits(s->d), bits(k.correct)) << "SQLite 3.40 was seen to differ here: " << k.why;
    }
    if (bits(s->d) != bits(k.correct))
      std::printf("[ note     ] SQLite %s reads %s as %.17g; correctly rounded (read_literal): %.17g (%s)\n",
                  sqlite3_libversion(), k.text, s->d, k.correct, k.why);
  }
}

// Many random decimal literals: every integer agrees exactly; every REAL
// agrees or is one ulp away from SQLite's value (and then read_literal's is
// the correctly rounded one). The disagreements are counted and shown.
TEST(AgreesWithSqlite, RandomDecimals) {
  Db d;
  std::mt19937_64 rng(20240601);
  auto digits = [&](int n) {
    std::string s;
    for (int k = 0; k < n; ++k) s += static_cast<char>('0' + rng() % 10);
    return s;
  };
  int total = 0, differ = 0, differ_short = 0;
  std::vector<std::string> examples;
  for (int iter = 0; iter < 30000; ++iter) {
    std::string l;
    switch (iter % 5) {
      case 0: {  // digits, a point somewhere, an exponent
        const int n = 1 + static_cast<int>(rng() % 25);
        l = digits(n);
        if (rng() % 2) l.insert(rng() % (l.size() + 1), ".");
        if (rng() % 2) l += "e" + std::to_string(static_cast<int>(rng() % 700) - 350);
        break;
      }
      case 1: {  // a random double written with 17 digits
        double x;
        do {
          const std::uint64_t b = rng();
          std::memcpy(&x, &b, sizeof x);
        } while (!std::isfinite(x));
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", std::fabs(x));
        l = buf;
        break;
      }
      case 2: {  // 15 digits (what sqlite3_expanded_sql writes)
        double x = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 150);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.15g", x);
        l = buf;
        break;
      }
      case 3: {  // near the midpoint of two doubles
        const double x = std::ldexp(1.0 + static_cast<double>(rng() >> 12) / 4503599627370496.0,
                                    static_cast<int>(rng() % 120) - 60);
        const double mid = x + (std::nextafter(x, kInf) - x) / 2;  // rounded: near the midpoint
        char buf[96];
        std::snprintf(buf, sizeof buf, "%.*e", 17 + static_cast<int>(rng() % 12), mid);
        l = buf;
        break;
      }
      default: {  // integers, some too large
        l = digits(1 + static_cast<int>(rng() % 22));
        break;
      }
    }
    if (rng() % 4 == 0) l = "-" + l;
    const auto want = sqlite_value(d.db, l);
    ASSERT_TRUE(want) << l;
    const auto got = lit(l);
    ASSERT_TRUE(got) << l;
    ++total;
    if (got->type == Param::Type::Integer || want->type == Param::Type::Integer) {
      EXPECT_TRUE(identical(got, *want)) << l;
      continue;
    }
    ASSERT_EQ(want->type, Param::Type::Real) << l;
    ASSERT_EQ(got->type, Param::Type::Real) << l;
    EXPECT_EQ(bits(got->d), bits(std::strtod(l.c_str(), nullptr))) << l;  // correctly rounded
    if (bits(got->d) == bits(want->d)) continue;
    ++differ;
    EXPECT_LE(ulps(got->d, want->d), 1u) << l << ": SQLite " << want->d << ", read " << got->d;
    std::size_t sig = 0;
    bool leading = true;
    for (char c : l) {
      if (c == 'e' || c == 'E') break;
      if (c < '0' || c > '9') continue;
      if (c == '0' && leading) continue;
      leading = false;
      ++sig;
    }
    if (sig <= 17) ++differ_short;
    if (examples.size() < 8) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "%s: SQLite %.17g, correctly rounded %.17g", l.c_str(), want->d, got->d);
      examples.push_back(buf);
    }
  }
  std::printf("[ note     ] SQLite %s: %d of %d random decimal literals convert 1 ulp away from the correctly "
              "rounded double (%d of them with at most 17 significant digits)\n",
              sqlite3_libversion(), differ, total, differ_short);
  for (const auto& e : examples) std::printf("[ note     ]   %s\n", e.c_str());
}

// ---- 5. bound_values -------------------------------------------------------

struct Bound {
  std::string what;
  std::function<int(sqlite3_stmt*, int)> bind;
  Param want;  // for a REAL: the double bound (want.d); see check below
};

// The REAL bound_values must read for d: the double nearest to the text
// SQLite writes for it with %!.15g (its own printf, as in expanded_sql).
double fifteen_digits(double d) {
  char* s = sqlite3_mprintf("%!.15g", d);
  const double r = std::strtod(s, nullptr);
  sqlite3_free(s);
  return r;
}

std::vector<Bound> bound_kinds() {
  std::vector<Bound> v;
  auto integer = [&](std::int64_t x) {
    v.push_back({"INTEGER " + std::to_string(x), [x](sqlite3_stmt* s, int i) { return sqlite3_bind_int64(s, i, x); },
                 I(x)});
  };
  auto real = [&](double x, const char* what) {
    v.push_back({std::string("REAL ") + what, [x](sqlite3_stmt* s, int i) { return sqlite3_bind_double(s, i, x); },
                 R(x)});
  };
  auto text = [&](std::string x) {
    v.push_back({"TEXT " + x,
                 [x](sqlite3_stmt* s, int i) {
                   return sqlite3_bind_text(s, i, x.data(), static_cast<int>(x.size()), SQLITE_TRANSIENT);
                 },
                 T(x)});
  };
  auto blob = [&](std::string x) {
    v.push_back({"BLOB of " + std::to_string(x.size()),
                 [x](sqlite3_stmt* s, int i) {
                   return sqlite3_bind_blob(s, i, x.data(), static_cast<int>(x.size()), SQLITE_TRANSIENT);
                 },
                 B(x)});
  };
  integer(0);
  integer(42);
  integer(-7);
  integer(kMin);
  integer(kMax);
  real(0.5, "0.5");
  real(1.0 / 3, "1/3");
  real(1e300, "1e300");
  real(-0.0, "-0.0");
  real(kInf, "inf");
  real(-kInf, "-inf");
  real(5e-324, "5e-324");
  real(0.1, "0.1");
  real(-2.5, "-2.5");
  real(123456789012345.678, "123456789012345.678");
  real(std::exp(-1.0), "e^-1");
  real(1e16, "1e16");
  real(0.36787944117144233, "0.36787944117144233");
  text("it's \"q\" ?1 :a $b -- /* x */ '");
  text("");
  text("é\n\t");
  text("''");
  blob(std::string("\0\x27\xff", 3));
  blob("");
  v.push_back({"zeroblob(5)", [](sqlite3_stmt* s, int i) { return sqlite3_bind_zeroblob(s, i, 5); }, [] {
                 Param p;
                 p.type = Param::Type::Blob;
                 p.i = 5;  // zeroblob(n) is read as a blob of n bytes, with no bytes stored
                 return p;
               }()});
  v.push_back({"NULL", [](sqlite3_stmt* s, int i) { return sqlite3_bind_null(s, i); }, N()});
  v.push_back({"NaN (SQLite binds NULL)",
               [](sqlite3_stmt* s, int i) { return sqlite3_bind_double(s, i, std::nan("")); }, N()});
  return v;
}

// The parameter number SQLite gives each Variable token of raw, in order.
std::vector<int> parameter_numbers(sqlite3_stmt* st, std::string_view raw, const std::vector<Token>& t) {
  std::vector<int> out(t.size(), 0);
  int n = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].kind != Token::Variable) continue;
    const std::string name = text_of(raw, t, k, k + 1);
    int idx;
    if (name == "?") idx = ++n;
    else idx = sqlite3_bind_parameter_index(st, name.c_str());
    n = std::max(n, idx);
    out[k] = idx;
  }
  return out;
}

void check_bound_values(sqlite3* db, const std::string& statement, int expected_variables) {
  SCOPED_TRACE(statement);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, statement.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  const std::string_view raw = sqlite3_sql(st);
  const auto t = sql::tokenize(raw);
  const auto number = parameter_numbers(st, raw, t);
  int variables = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k].kind != Token::Variable) continue;
    ++variables;
    ASSERT_GT(number[k], 0) << text_of(raw, t, k, k + 1);
    ASSERT_LE(number[k], sqlite3_bind_parameter_count(st));
  }
  EXPECT_EQ(variables, expected_variables);
  const auto kinds = bound_kinds();
  const int count = sqlite3_bind_parameter_count(st);
  for (std::size_t shift = 0; shift < kinds.size(); ++shift) {
    ASSERT_EQ(sqlite3_clear_bindings(st), SQLITE_OK);
    for (int i = 1; i <= count; ++i) ASSERT_EQ(kinds[(i + shift) % kinds.size()].bind(st, i), SQLITE_OK);
    char* e = sqlite3_expanded_sql(st);
    ASSERT_NE(e, nullptr);
    const std::string expanded = e;
    sqlite3_free(e);
    const auto values = sql::bound_values(raw, t, expanded);
    ASSERT_EQ(values.size(), t.size());
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (t[k].kind != Token::Variable) {
        EXPECT_FALSE(values[k]);
        continue;
      }
      const Bound& b = kinds[(static_cast<std::size_t>(number[k]) + shift) % kinds.size()];
      SCOPED_TRACE(text_of(raw, t, k, k + 1) + " bound to " + b.what + " in " + expanded);
      ASSERT_TRUE(values[k]);
      if (b.want.type == Param::Type::Real) {
        // The value written with 15 significant digits, read back: the double
        // nearest to that text; within half a unit of the 15th digit.
        const double want = fifteen_digits(b.want.d);
        EXPECT_TRUE(identical(values[k], R(want)));
        EXPECT_TRUE(values[k]->bound_real);
        if (std::isfinite(b.want.d) && b.want.d != 0) {
          EXPECT_LE(std::fabs(values[k]->d - b.want.d), 5.0000001e-15 * std::fabs(b.want.d));
        } else {
          EXPECT_EQ(values[k]->d, b.want.d);  // -0.0 comes back as +0.0 (%!.15g writes 0.0), inf as inf
        }
      } else {
        EXPECT_TRUE(identical(values[k], b.want));
        EXPECT_FALSE(values[k]->bound_real);
      }
    }
  }
  sqlite3_finalize(st);
}

TEST(BoundValues, ReadBackFromExpandedSql) {
  Db d;
  check_bound_values(d.db, "SELECT ?", 1);
  check_bound_values(d.db, "SELECT ?, ?3, :a, @b, $c, :a, ?3, ?, ?7, $d::e(f), ?", 11);
  // In strings, quoted names and comments they are not parameters.
  check_bound_values(d.db,
                     "SELECT '?' AS \"?5\", ?2 /* ?6 :x */, -- :y ?\n :z || ':w', [@v] FROM (SELECT 1 AS [@v]) "
                     "WHERE ? IS NOT ?2",
                     4);
  check_bound_values(d.db, "SELECT coalesce(?1, -?1, (?2), dp_alpha(?3)) WHERE 0", 4);
  check_bound_values(d.db, "SELECT ?1,?1,?1,:a,:a", 5);
  check_bound_values(d.db, "SELECT 'it''s ?' , ?, x'00', ?", 2);
}

TEST(BoundValues, NegativeZeroAndSignOfBoundReals) {
  Db d;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(d.db, "SELECT ?, ?", -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_double(st, 1, -0.0);
  sqlite3_bind_double(st, 2, -1.0 / 3);
  char* e = sqlite3_expanded_sql(st);
  const std::string raw = sqlite3_sql(st), expanded = e;
  sqlite3_free(e);
  const auto t = sql::tokenize(raw);
  const auto v = sql::bound_values(raw, t, expanded);
  ASSERT_TRUE(v[1] && v[3]) << expanded;
  // -0.0 is written as 0.0 by SQLite's printf: its sign is lost (it is the same number).
  EXPECT_EQ(v[1]->d, 0.0);
  EXPECT_TRUE(v[1]->bound_real);
  EXPECT_TRUE(identical(v[3], R(-0.333333333333333)));
  EXPECT_TRUE(v[3]->bound_real);
  sqlite3_finalize(st);
}

// A REAL read back from expanded_sql is the double nearest to SQLite's own
// %!.15g text of it. SQLite's printf may write a different 15th digit than
// glibc's %.15g: that is counted (and shown), not assumed away.
TEST(BoundValues, RandomReals) {
  Db d;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(d.db, "SELECT ?", -1, &st, nullptr), SQLITE_OK);
  const std::string raw = sqlite3_sql(st);
  const auto t = sql::tokenize(raw);
  std::mt19937_64 rng(7);
  int glibc_differs = 0;
  std::string example;
  // The largest error of SQLite's text, in units of its 15th significant
  // digit: for every REAL, and for those in (0, 1) (alphas).
  long double worst = 0, worst_alpha = 0;
  std::string worst_text, worst_alpha_text;
  for (int iter = 0; iter < 5000; ++iter) {
    double x;
    do {
      const std::uint64_t b = rng();
      std::memcpy(&x, &b, sizeof x);
    } while (!std::isfinite(x));
    if (iter % 2) x = std::ldexp(static_cast<double>(rng() >> 11), -53);  // in [0, 1), like an alpha
    sqlite3_bind_double(st, 1, x);
    char* e = sqlite3_expanded_sql(st);
    const std::string expanded = e;
    sqlite3_free(e);
    const auto v = sql::bound_values(raw, t, expanded);
    ASSERT_TRUE(v[1]) << expanded;
    ASSERT_TRUE(identical(v[1], R(fifteen_digits(x)))) << expanded;
    EXPECT_TRUE(v[1]->bound_real);
    if (x != 0) {
      // The text is within half a unit of its 15th digit from x (SQLite's
      // printf rounds with long doubles: a few thousandths more at worst),
      // and the value read is the double nearest to the text, so it is
      // within that plus half an ulp of x.
      char* text = sqlite3_mprintf("%!.15g", x);
      const long double decimal = std::strtold(text, nullptr);  // the text, to 64 bits
      sqlite3_free(text);
      const long double unit = std::pow(10.0L, std::floor(std::log10(std::fabs(decimal))) - 14);
      const long double err = std::fabs(decimal - static_cast<long double>(x)) / unit;
      if (err > worst) {
        worst = err;
        worst_text = expanded;
      }
      if (x > 0 && x < 1 && err > worst_alpha) {
        worst_alpha = err;
        worst_alpha_text = expanded;
      }
      const double half_ulp = (std::nextafter(std::fabs(v[1]->d), kInf) - std::fabs(v[1]->d)) / 2;
      EXPECT_LE(std::fabs(static_cast<long double>(v[1]->d) - x), err * unit + half_ulp) << expanded;
      EXPECT_LE(err, 1.0L) << expanded;
    }
    char g[64];
    std::snprintf(g, sizeof g, "%.15g", x);
    if (bits(std::strtod(g, nullptr)) != bits(v[1]->d)) {
      ++glibc_differs;
      if (example.empty()) example = expanded + " vs glibc " + g;
    }
  }
  std::printf("[ note     ] SQLite's %%!.15g and glibc's %%.15g give different doubles for %d of 5000 random "
              "REALs%s%s\n",
              glibc_differs, example.empty() ? "" : ", e.g. ", example.c_str());
  std::printf("[ note     ] the largest error of SQLite's 15 digits: %.6Lf units of the 15th digit (%s); in (0, 1): "
              "%.6Lf (%s)\n",
              worst, worst_text.c_str(), worst_alpha, worst_alpha_text.c_str());
  // In (0, 1) SQLite's printf rounds to the nearest 15 digits (within its
  // long double's error): the value read is within half a unit of the 15th
  // digit plus half an ulp of the value bound.
  EXPECT_LE(worst_alpha, 0.5L + 1e-6L);
  sqlite3_finalize(st);
}

TEST(BoundValues, TextThatIsNotTheStatementGivesNothing) {
  const std::string raw = "SELECT f(?, :a) -- x\n";
  const auto t = sql::tokenize(raw);
  auto none = [](const std::vector<std::optional<Param>>& v) {
    for (const auto& x : v)
      if (x) return false;
    return true;
  };
  // When statements run nested, sqlite3_expanded_sql comments the text out.
  EXPECT_TRUE(none(sql::bound_values(raw, t, "-- SELECT f(?, :a) -- x\n")));
  EXPECT_TRUE(none(sql::bound_values(raw, t, "")));
  EXPECT_TRUE(none(sql::bound_values(raw, t, "SELECT g(1, 2) -- x\n")));
  EXPECT_TRUE(none(sql::bound_values(raw, t, "SELECT f(?, :a) -- x\n")));  // not replaced: nothing to read
  const auto partial = sql::bound_values(raw, t, "SELECT f(1, 'x");      // the second is cut off
  EXPECT_TRUE(identical(partial[3], I(1)));
  EXPECT_FALSE(partial[5]);
  const auto ok = sql::bound_values(raw, t, "SELECT f(1.5, x'00') -- x\n");
  EXPECT_TRUE(identical(ok[3], R(1.5)));
  EXPECT_TRUE(identical(ok[5], B(std::string(1, '\0'))));
}

// A value is kept only when the text after it is the statement's, and it
// cannot have ended sooner: where the raw text goes on with something that
// continues the value as written, the value read would be another one.
TEST(BoundValues, AValueIsKeptOnlyWhenItsEndIsCertain) {
  Db d;
  struct Case {
    const char* sql;
    std::function<void(sqlite3_stmt*)> bind;
    std::vector<std::optional<Param>> want;  // per Variable, in order
  };
  const Case cases[] = {
      // 't' is written 't''a' (the alias 'a' follows): read on, that is t'a.
      {"SELECT ?'a'", [](sqlite3_stmt* s) { sqlite3_bind_text(s, 1, "t", 1, SQLITE_STATIC); }, {std::nullopt}},
      // 1 is written 1e5 (the alias e5 follows): read on, that is REAL 100000.
      {"SELECT ?e5", [](sqlite3_stmt* s) { sqlite3_bind_int(s, 1, 1); }, {std::nullopt}},
      {"SELECT ?'a', ?e5, ?",
       [](sqlite3_stmt* s) {
         sqlite3_bind_text(s, 1, "t", 1, SQLITE_STATIC);
         sqlite3_bind_int(s, 2, 1);
         sqlite3_bind_int(s, 3, 2);
       },
       {std::nullopt, std::nullopt, std::nullopt}},
      // 1 is written 1ESCAPE: an exponent has digits, so this is 1.
      {"SELECT 'a' LIKE ?ESCAPE '!'", [](sqlite3_stmt* s) { sqlite3_bind_int(s, 1, 1); }, {I(1)}},
      {"SELECT ?-1, ?", [](sqlite3_stmt* s) {
         sqlite3_bind_double(s, 1, 1.5);
         sqlite3_bind_int(s, 2, 2);
       },
       {[] {
          Param p = R(1.5);
          p.bound_real = true;
          return p;
        }(),
        I(2)}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.sql);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(d.db, c.sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(d.db);
    c.bind(st);
    char* e = sqlite3_expanded_sql(st);
    const std::string raw = sqlite3_sql(st), expanded = e;
    sqlite3_free(e);
    const auto t = sql::tokenize(raw);
    const auto v = sql::bound_values(raw, t, expanded);
    std::size_t n = 0;
    for (std::size_t k = 0; k < t.size(); ++k) {
      if (t[k].kind != Token::Variable) continue;
      ASSERT_LT(n, c.want.size());
      const auto& want = c.want[n++];
      if (want) {
        EXPECT_TRUE(identical(v[k], *want)) << expanded;
        EXPECT_EQ(v[k] && v[k]->bound_real, want->bound_real);
      } else {
        EXPECT_FALSE(v[k]) << expanded << ": " << text_of(raw, t, k, k + 1) << " read as "
                           << ::testing::PrintToString(*v[k]);
      }
    }
    EXPECT_EQ(n, c.want.size());
    sqlite3_finalize(st);
  }
  auto read = [](const std::string& raw, const std::string& expanded) {
    const auto t = sql::tokenize(raw);
    std::vector<std::optional<Param>> out;
    const auto v = sql::bound_values(raw, t, expanded);
    for (std::size_t k = 0; k < t.size(); ++k)
      if (t[k].kind == Token::Variable) out.push_back(v[k]);
    return out;
  };
  // Adjacent parameters (not valid SQL, but text): where one value ends is
  // not known when the next could continue it.
  auto v = read("SELECT ??", "SELECT 4.80652945055911e-1450.5");
  EXPECT_FALSE(v[0]);  // not 4.8e-1450 = 0
  v = read("SELECT ?1?2", "SELECT 55");
  EXPECT_FALSE(v[0]);
  EXPECT_FALSE(v[1]);
  v = read("SELECT ?1?2", "SELECT 'a'5");
  EXPECT_TRUE(identical(v[0], T("a")));
  EXPECT_TRUE(identical(v[1], I(5)));
  v = read("SELECT ?1?2", "SELECT 'a''b'");
  EXPECT_FALSE(v[0]);  // 'a' then 'b', or 'a''b' then something
  // With the same text after it, written differently: read as written.
  EXPECT_TRUE(identical(read("SELECT 'a' LIKE ?ESCAPE '!'", "SELECT 'a' LIKE 'x'ESCAPE '!'")[0], T("x")));
  EXPECT_TRUE(identical(read("SELECT ?e", "SELECT 1e")[0], I(1)));
  EXPECT_FALSE(read("SELECT ?e5e?e", "SELECT 1e5e5e")[0]);  // 1 then e5e, or 1e5 then e5e
  // SQLite built with SQLITE_TRACE_SIZE_LIMIT cuts long values short.
  EXPECT_FALSE(read("SELECT f(?)", "SELECT f('abc'/*+5 bytes*/)")[0]);
  EXPECT_TRUE(identical(read("SELECT f(?)", "SELECT f('abc')")[0], T("abc")));
  EXPECT_FALSE(read("SELECT f(?)", "SELECT f(zeroblob(x))")[0]);
}

// A TEXT with a NUL byte: SQLite writes it with '%.*q', which stops at the
// NUL, so only the bytes before it can be read back.
TEST(BoundValues, TextWithNulIsReadUpToTheNul) {
  Db d;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(d.db, "SELECT ?, ?", -1, &st, nullptr), SQLITE_OK);
  sqlite3_bind_text(st, 1, "l2\0xyz", 6, SQLITE_STATIC);
  sqlite3_bind_int(st, 2, 5);
  char* e = sqlite3_expanded_sql(st);
  const std::string raw = sqlite3_sql(st), expanded = e;
  sqlite3_free(e);
  const auto t = sql::tokenize(raw);
  const auto v = sql::bound_values(raw, t, expanded);
  ASSERT_TRUE(v[1]) << expanded;
  std::printf("[ note     ] a TEXT 'l2\\0xyz' bound is written %s by sqlite3_expanded_sql and read as '%s' (%zu "
              "bytes)\n",
              expanded.c_str(), v[1]->bytes.c_str(), v[1]->bytes.size());
  EXPECT_TRUE(identical(v[1], T("l2")));
  EXPECT_TRUE(identical(v[3], I(5)));
  sqlite3_finalize(st);
}

// ---- 6. find_calls against SQLite's parser ---------------------------------
//
// The authorizer is called with SQLITE_FUNCTION and the function's name as
// its 4th argument (the 3rd is NULL) whenever the resolver resolves a call of
// a registered function. It may resolve one call of the text more than once
// (a CTE's body is copied into every place that uses it, and resolved there),
// or never (a CTE that nothing uses), so counts alone do not identify the
// calls. Instead, for a statement and the function probe:
//   (a) each call find_calls finds, renamed alone to probe_n<k> (registered
//       with exactly k arguments, k its number of arguments as found), must
//       prepare and be seen by the authorizer: it is a call, with that many
//       arguments (a wrong count fails with "wrong number of arguments");
//   (b) with every call found renamed, the authorizer must not see probe any
//       more: find_calls missed none;
//   (c) where nothing is resolved twice, the counts agree as well.
// Names that are not calls but are followed by "(" (a table's or a CTE's
// column list) are found too: such an over-approximation only adds calls
// that must agree with the real ones, so it can refuse, never misread. The
// corpus marks how many there are; (a) tells them from calls.

struct Seen {
  std::map<std::string, int> count;
};

int authorize(void* p, int action, const char*, const char* name, const char*, const char*) {
  if (action == SQLITE_FUNCTION && name) {
    std::string n(name);
    for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ++static_cast<Seen*>(p)->count[n];
  }
  return SQLITE_OK;
}

void agg_step(sqlite3_context*, int, sqlite3_value**) {}
void agg_final(sqlite3_context* c) { sqlite3_result_null(c); }

struct ParserOracle : Db {
  ParserOracle() {
    for (int k = -1; k <= 12; ++k) {
      const std::string name = k < 0 ? "probe" : "probe_n" + std::to_string(k);
      EXPECT_EQ(sqlite3_create_window_function(db, name.c_str(), k, SQLITE_UTF8, nullptr, agg_step, agg_final,
                                               agg_final, agg_step, nullptr),
                SQLITE_OK);
    }
    exec("CREATE TABLE t(a, b, c); CREATE TABLE u(x, y); CREATE TABLE probe(probe);");
  }
  // Prepares s; the authorizer's counts, or nullopt and *error.
  std::optional<Seen> prepare(const std::string& s, std::string* raw, std::string* error) {
    Seen seen;
    sqlite3_set_authorizer(db, authorize, &seen);
    sqlite3_stmt* st = nullptr;
    const int rc = sqlite3_prepare_v2(db, s.c_str(), -1, &st, nullptr);
    sqlite3_set_authorizer(db, nullptr, nullptr);
    if (rc != SQLITE_OK) {
      *error = sqlite3_errmsg(db);
      return std::nullopt;
    }
    if (raw) *raw = st ? sqlite3_sql(st) : "";
    sqlite3_finalize(st);
    return seen;
  }
};

// The number of arguments SQLite gives a call found: f(*) has none (find_calls
// reads one argument, "*"; optdp has no zero-argument form, so SQLite refuses
// such a call of optdp's functions before it runs).
std::size_t arity(std::string_view s, const std::vector<Token>& t, const Call& c) {
  if (c.args.size() == 1 && c.args[0].second == c.args[0].first + 1 &&
      text_of(s, t, c.args[0].first, c.args[0].second) == "*")
    return 0;
  return c.args.size();
}

std::string rename_calls(const std::string& raw, const std::vector<Token>& t, const std::vector<Call>& cs,
                         const std::vector<bool>& which) {
  std::string s = raw;
  for (std::size_t i = cs.size(); i-- > 0;) {
    if (!which[i]) continue;
    const Token& n = t[cs[i].name_token];
    s.replace(n.begin, n.end - n.begin, "probe_n" + std::to_string(arity(raw, t, cs[i])));
  }
  return s;
}

struct Case {
  const char* sql;
  int not_calls = 0;        // names followed by "(" that are not calls (see above)
  bool resolved_twice = false;  // SQLite resolves some call of the text more than once
};

const Case kCorpus[] = {
    {"SELECT probe(a) FROM t"},
    {"SELECT PROBE(a), Probe(b), \"probe\"(c), [probe](a), `probe`(b), \"PrObE\"(c) FROM t"},
    {"SELECT probe /* ( */ (a), probe -- (\n (b), probe\r\n\f\t(c) FROM t"},
    {"SELECT probe \t\v(a), probe(b)\n\v FROM t"},  // \v continues a run of spaces
    {"SELECT 'probe(a)', probe(b) AS \"probe(\", 'it''s probe(c)' FROM t"},
    {"SELECT /* probe(a) */ probe(b) -- probe(c)\n FROM t /* unclosed probe(a)"},
    {"SELECT probe(a, 'x,y', (b), (SELECT probe(c, ')') FROM t), abs(-1), ')') FROM t"},
    {"SELECT probe(), probe( ), probe(/* , */), probe(*) FROM t"},
    {"SELECT probe(a) FILTER (WHERE b > 0 AND c IN (1, 2)) FROM t"},
    {"SELECT probe(a) OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t"},
    {"SELECT probe(a) OVER w, probe(b, c) FILTER (WHERE c) OVER w FROM t WINDOW w AS (ORDER BY a)"},
    {"SELECT probe(a) OVER probe FROM t WINDOW probe AS (ORDER BY a)"},
    {"SELECT CASE WHEN probe(a) > 0 THEN probe(b, 1) ELSE probe() END FROM t"},
    {"SELECT b, probe(a) FROM t GROUP BY b HAVING probe(a, b) > 0 ORDER BY probe(c)"},
    {"SELECT (SELECT probe(x) FROM u WHERE y = t.a) FROM t"},
    {"SELECT * FROM (SELECT probe(a) AS v FROM t) JOIN (SELECT probe(x) AS w FROM u)"},
    {"WITH c AS (SELECT probe(a) AS v FROM t) SELECT v FROM c"},
    {"WITH c AS (SELECT probe(a) AS v FROM t) SELECT * FROM c, c AS d", 0, true},
    {"WITH c AS (SELECT probe(a) AS v FROM t) SELECT 1", 1},  // never used: never resolved
    {"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT probe(a) FROM t)) "
     "SELECT probe(n) FROM r"},
    {"WITH probe(probe) AS (SELECT probe(a) FROM t) SELECT probe FROM probe", 1},
    {"INSERT INTO u SELECT probe(a), probe(b) FROM t"},
    {"INSERT INTO probe(probe) SELECT probe(a) FROM t", 1},
    {"UPDATE t SET a = (SELECT probe(x) FROM u) WHERE b IN (SELECT probe(y) FROM u)"},
    {"DELETE FROM t WHERE a > (SELECT probe(x, y) FROM u)"},
    {"SELECT probe(a) FROM t UNION ALL SELECT probe(x) FROM u ORDER BY 1"},
    {"SELECT probe FROM probe"},
    {"SELECT probe.probe, \"probe\", [probe] FROM probe"},
    {"SELECT probe(CAST(a AS INTEGER), a COLLATE nocase, a BETWEEN 1 AND 2, CASE a WHEN 1 THEN 2 END, "
     "EXISTS (SELECT 1), a IS NOT NULL, -a, x'00', NULL) FROM t"},
    {"SELECT probe(a IN (1, 2, (3)), b NOT IN (SELECT x FROM u)) FROM t"},
    {"SELECT probe('{\"k\":[1,2]}' ->> '$.k[1]', a -> '$') FROM t"},
    {"SELECT probe(DISTINCT a), probe(ALL b) FROM t"},
    {"EXPLAIN QUERY PLAN SELECT probe(a) FROM t"},
    {"EXPLAIN SELECT probe(a) FROM t"},
    {"SELECT probe(é) FROM (SELECT 1 AS é)"},
    {"SELECT probe(a)FROM t"},
    {"SELECT probe(a)--\nFROM t"},
    {"SELECT probe(a, b), probe(a, b) FROM t"},
    {"SELECT probe(a) FROM t WHERE a = ? AND b = :x AND c = $y"},
    {"SELECT probe(?1, :a, @b, $c::d(e)) FROM t"},
    {"SELECT probe([a], \"b\", `c`) FROM t"},
    {"SELECT probe(a) AS p FROM t ORDER BY p"},
    {"SELECT probe(a) AS probe FROM t ORDER BY probe"},
    {"CREATE TABLE z AS SELECT probe(a) FROM t"},
    {"SELECT probe(a) FROM t; SELECT probe(b) FROM t"},  // only the first statement is prepared
    {"SELECT probe(abs(a), coalesce(b, (c))) FROM t"},
    {"SELECT max(a), probe(abs(b), (SELECT count(*) FROM u)) FROM t"},
    {"SELECT probe(a) FROM t WHERE a IN (SELECT probe(x) FROM u GROUP BY y HAVING probe(y) > 0)"},
    {"SELECT probe(a) FROM t AS probe"},
    {"SELECT probe(t.a), probe(\"t\".\"b\") FROM t"},
    {"SELECT probe(a) FROM t JOIN u ON (SELECT probe(x) FROM u) IS NULL"},
    {"VALUES ((SELECT probe(a) FROM t)), ((SELECT probe(b) FROM t))"},
    {"SELECT probe(a) FROM t WHERE a NOT NULL GROUP BY b ORDER BY 1 LIMIT (SELECT probe(x) FROM u)"},
};

TEST(FindCallsAgreesWithSqlite, Corpus) {
  ParserOracle o;
  for (const Case& c : kCorpus) {
    SCOPED_TRACE(c.sql);
    std::string raw, error;
    const auto base = o.prepare(c.sql, &raw, &error);
    ASSERT_TRUE(base) << error;
    const auto t = sql::tokenize(raw);
    const auto cs = sql::find_calls(raw, t, "probe");
    for (const Call& call : cs) {
      ASSERT_LT(call.name_token + 1, t.size());
      EXPECT_EQ(sql::token_name(raw, t[call.name_token]).size(), 5u);
      EXPECT_EQ(text_of(raw, t, call.name_token + 1, call.name_token + 2), "(");
      if (!call.args.empty()) {
        EXPECT_EQ(call.args[0].first, call.name_token + 2);
      }
    }
    // (a) each call found, alone.
    std::vector<bool> real(cs.size(), false);
    int not_calls = 0;
    for (std::size_t i = 0; i < cs.size(); ++i) {
      std::vector<bool> one(cs.size(), false);
      one[i] = true;
      const std::string renamed = rename_calls(raw, t, cs, one);
      const std::string as = "probe_n" + std::to_string(arity(raw, t, cs[i]));
      std::string err;
      const auto seen = o.prepare(renamed, nullptr, &err);
      if (seen && seen->count.count(as)) {
        real[i] = true;
      } else {
        ++not_calls;
        EXPECT_EQ(err.find("wrong number of arguments"), std::string::npos) << renamed << ": " << err;
      }
    }
    EXPECT_EQ(not_calls, c.not_calls);
    // (b) all calls found: no call of probe is left.
    const std::string all = rename_calls(raw, t, cs, real);
    const auto seen = o.prepare(all, nullptr, &error);
    ASSERT_TRUE(seen) << all << ": " << error;
    EXPECT_EQ(seen->count.count("probe"), 0u) << "SQLite sees a call of probe that find_calls missed in: " << all;
    // (c) the counts.
    const int sqlite_count = base->count.count("probe") ? base->count.at("probe") : 0;
    const int found = static_cast<int>(std::count(real.begin(), real.end(), true));
    if (c.resolved_twice) {
      EXPECT_GT(sqlite_count, found);
    } else {
      EXPECT_EQ(sqlite_count, found);
    }
  }
}

// The end-to-end consequence for optdp: two calls of private_count in one
// statement must agree on their parameters; when SQLite sees a call that the
// reader does not, the hidden call would release with the other call's alpha.
TEST(FindCallsAgreesWithSqlite, HiddenCallIsNotReleasedWithAnotherCallsParameters) {
  Db d;
  d.exec("SELECT dp_seed(1); CREATE TABLE t(x); INSERT INTO t VALUES (1), (2);");
  for (const char* q : {"SELECT private_count(0.5), private_count \t\v(0.9) FROM t",
                        "SELECT private_count(0.5), private_count(0.9) FROM t"}) {
    SCOPED_TRACE(q);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(d.db, q, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(d.db);
    // Refused (the two calls disagree), not released twice at alpha 0.5.
    EXPECT_EQ(sqlite3_step(st), SQLITE_ERROR);
    EXPECT_NE(std::string(sqlite3_errmsg(d.db)).find("private_count"), std::string::npos) << sqlite3_errmsg(d.db);
    sqlite3_finalize(st);
  }
}

}  // namespace
