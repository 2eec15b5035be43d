#include "sqlite/sql_text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>


namespace optdp::sql {

namespace {

// sqlite3Isspace: ' ', \t, \n, \v, \f, \r. A run of spaces starts with one of
// them other than \v (tokenize.c's CC_SPACE; a \v there is an illegal
// character) and then takes every one of them, \v included: "f \v(" is a
// call of f.
bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool starts_space(char c) { return is_space(c) && c != '\v'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_xdigit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
// SQLite's IdChar: letters, digits, '_', '$' and every byte >= 0x80.
bool id_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || std::isalnum(u) || c == '_' || c == '$';
}
bool id_start(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || std::isalpha(u) || c == '_';
}
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }
bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// Length of the number starting at s[i] (a digit, or '.' before a digit), as
// sqlite3GetToken measures it; *illegal when letters follow it ("12abc").
std::size_t number_length(std::string_view s, std::size_t i, bool* illegal) {
  const std::size_t n = s.size();
  auto at = [&](std::size_t k) { return k < n ? s[k] : '\0'; };
  std::size_t j = i;
  *illegal = false;
  if (at(j) == '0' && (at(j + 1) == 'x' || at(j + 1) == 'X') && is_xdigit(at(j + 2))) {
    j += 3;
    while (is_xdigit(at(j))) ++j;
    return j - i;
  }
  while (is_digit(at(j))) ++j;
  if (at(j) == '.') {
    ++j;
    while (is_digit(at(j))) ++j;
  }
  if ((at(j) == 'e' || at(j) == 'E') &&
      (is_digit(at(j + 1)) || ((at(j + 1) == '+' || at(j + 1) == '-') && is_digit(at(j + 2))))) {
    j += 2;
    while (is_digit(at(j))) ++j;
  }
  while (id_char(at(j))) {
    *illegal = true;
    ++j;
  }
  return j - i;
}

// A quoted token from s[i] (quote q, doubled to escape it) to just past its
// closing quote, or to the end of s if it is not closed.
std::size_t quoted_length(std::string_view s, std::size_t i, char close) {
  const std::size_t n = s.size();
  for (std::size_t j = i + 1; j < n; ++j) {
    if (s[j] != close) continue;
    if (close != ']' && j + 1 < n && s[j + 1] == close) {
      ++j;
      continue;
    }
    return j + 1 - i;
  }
  return n - i;
}

// Parses a decimal or hexadecimal integer or real written as SQLite would
// read it; negative is the parity of the unary minus signs before it.
std::optional<Param> number_value(std::string_view text, bool negative) {
  Param p;
  const std::string s(text);
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    std::size_t k = 2;
    while (k < s.size() && s[k] == '0') ++k;      // leading zeros are not counted
    if (s.size() - k > 16) return std::nullopt;  // SQLite: "hex literal too big"
    const std::uint64_t u = std::strtoull(s.c_str() + k, nullptr, 16);
    std::int64_t v;
    std::memcpy(&v, &u, sizeof v);  // SQLite reads hex as a 64-bit two's complement pattern
    p.type = Param::Type::Integer;
    if (negative) {
      if (v == INT64_MIN) return std::nullopt;  // SQLite: "hex literal too big: -0x8000000000000000"
      v = -v;
    }
    p.i = v;
    return p;
  }
  if (s.find_first_of(".eE") == std::string::npos) {
    errno = 0;
    const unsigned long long u = std::strtoull(s.c_str(), nullptr, 10);
    if (errno == 0 && u <= 9223372036854775807ULL) {
      p.type = Param::Type::Integer;
      p.i = negative ? -static_cast<std::int64_t>(u) : static_cast<std::int64_t>(u);
      return p;
    }
    if (errno == 0 && negative && u == 9223372036854775808ULL) {
      p.type = Param::Type::Integer;
      p.i = INT64_MIN;
      return p;
    }
  }
  p.type = Param::Type::Real;
  p.d = std::strtod(s.c_str(), nullptr);  // correctly rounded; overflow gives inf, as in SQLite
  if (negative) p.d = -p.d;
  return p;
}

std::optional<Param> string_value(std::string_view token) {
  // 'it''s' -> it's; nullopt unless token is one closed string ('a'' is open).
  if (token.size() < 2 || token.front() != '\'') return std::nullopt;
  Param p;
  p.type = Param::Type::Text;
  for (std::size_t k = 1; k < token.size(); ++k) {
    if (token[k] != '\'') {
      p.bytes += token[k];
    } else if (k + 1 < token.size() && token[k + 1] == '\'') {
      p.bytes += '\'';
      ++k;
    } else {
      if (k + 1 != token.size()) return std::nullopt;
      return p;
    }
  }
  return std::nullopt;
}

std::optional<Param> blob_value(std::string_view token) {
  // x'0a1B'
  if (token.size() < 3 || token.back() != '\'' || (token.size() - 3) % 2) return std::nullopt;
  Param p;
  p.type = Param::Type::Blob;
  for (std::size_t k = 2; k + 1 < token.size(); k += 2) {
    const char h[3] = {token[k], token[k + 1], 0};
    if (!is_xdigit(h[0]) || !is_xdigit(h[1])) return std::nullopt;
    p.bytes += static_cast<char>(std::strtoul(h, nullptr, 16));
  }
  p.i = static_cast<std::int64_t>(p.bytes.size());
  return p;
}

// SQLite's minus on anything but a number literal: 0 - x (so -(+0.0) is +0.0).
std::optional<Param> negate(Param p) {
  if (p.type == Param::Type::Real) {
    p.d = 0.0 - p.d;
    return p;
  }
  if (p.type != Param::Type::Integer) return std::nullopt;  // -'text', -NULL, -x'..': not a literal number
  if (p.i == INT64_MIN) {  // SQLite turns the overflowing negation into a REAL
    p.type = Param::Type::Real;
    p.d = 9223372036854775808.0;
    p.i = 0;
    return p;
  }
  p.i = -p.i;
  return p;
}

// Recursive descent over tokens [first, last): sign* atom, where atom is a
// parenthesised literal, a number, a string, a blob, NULL or a variable.
std::optional<Param> literal(std::string_view sql, const std::vector<Token>& t, std::size_t first, std::size_t last,
                             const BoundValue& bound, int depth) {
  if (first >= last || depth > 64) return std::nullopt;
  auto text = [&](std::size_t k) { return sql.substr(t[k].begin, t[k].end - t[k].begin); };
  auto punct = [&](std::size_t k, char c) { return t[k].kind == Token::Punct && text(k) == std::string_view(&c, 1); };
  // Unary signs.
  if (punct(first, '+')) return literal(sql, t, first + 1, last, bound, depth + 1);
  if (punct(first, '-')) {
    // A minus on a number literal is read with it, as SQLite codes it (and
    // parentheses are no node in its tree): -9223372036854775808 and
    // -(9223372036854775808) are INTEGERs, -(0.0) is -0.0, and
    // -0x8000000000000000 is an error.
    std::size_t a = first + 1, b = last;
    for (int d = depth + 1; d <= 64 && b - a >= 3 && punct(a, '(') && punct(b - 1, ')'); ++d) {
      ++a;
      --b;
    }
    if (b == a + 1 && t[a].kind == Token::Number) return number_value(text(a), true);
    auto inner = literal(sql, t, first + 1, last, bound, depth + 1);
    if (!inner) return std::nullopt;
    return negate(std::move(*inner));
  }
  if (punct(first, '(')) {
    if (!punct(last - 1, ')')) return std::nullopt;
    return literal(sql, t, first + 1, last - 1, bound, depth + 1);
  }
  if (last == first + 1) {
    switch (t[first].kind) {
      case Token::Number: return number_value(text(first), false);
      case Token::String: return string_value(text(first));
      case Token::Blob: return blob_value(text(first));
      case Token::Variable: return bound(first);
      case Token::Word:
        if (iequal(text(first), "null")) return Param{};
        return std::nullopt;
      default: return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

bool Param::operator==(const Param& o) const {
  const bool num = type == Type::Integer || type == Type::Real;
  const bool onum = o.type == Type::Integer || o.type == Type::Real;
  if (num && onum) {
    if (type == o.type) return type == Type::Integer ? i == o.i : d == o.d;
    const std::int64_t n = type == Type::Integer ? i : o.i;
    const double r = type == Type::Real ? d : o.d;
    // Exactly equal: r is an integer in int64 range and equal to n.
    return r >= -9223372036854775808.0 && r < 9223372036854775808.0 && r == std::trunc(r) &&
           static_cast<std::int64_t>(r) == n;
  }
  return type == o.type && i == o.i && bytes == o.bytes;
}

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  const std::size_t n = s.size();
  std::size_t i = 0;
  auto at = [&](std::size_t k) { return k < n ? s[k] : '\0'; };
  while (i < n) {
    const char c = s[i];
    std::size_t len = 1;
    Token::Kind kind = Token::Punct;
    bool skip = false;
    if (starts_space(c)) {
      while (i + len < n && is_space(s[i + len])) ++len;
      skip = true;
    } else if (c == '-' && at(i + 1) == '-') {
      const auto e = s.find('\n', i + 2);
      len = (e == std::string_view::npos ? n : e + 1) - i;
      skip = true;
    } else if (c == '/' && at(i + 1) == '*') {
      const auto e = s.find("*/", i + 2);
      len = (e == std::string_view::npos ? n : e + 2) - i;
      skip = true;
    } else if (c == '\'') {
      kind = Token::String;
      len = quoted_length(s, i, '\'');
    } else if (c == '"' || c == '`') {
      kind = Token::Quoted;
      len = quoted_length(s, i, c);
    } else if (c == '[') {
      kind = Token::Quoted;
      len = quoted_length(s, i, ']');
    } else if (is_digit(c) || (c == '.' && is_digit(at(i + 1)))) {
      bool illegal;
      len = number_length(s, i, &illegal);
      kind = illegal ? Token::Punct : Token::Number;
    } else if (c == '?') {
      while (is_digit(at(i + len))) ++len;
      kind = Token::Variable;
    } else if (c == ':' || c == '@' || c == '$' || c == '#') {
      // sqlite3GetToken's CC_VARALPHA / CC_DOLLAR, with the TCL forms $a::b and $a(x).
      std::size_t j = i + 1, ids = 0;
      bool illegal = false;
      for (; j < n; ++j) {
        const char d = s[j];
        if (id_char(d)) {
          ++ids;
        } else if (d == '(' && ids > 0) {
          do ++j;
          while (j < n && !is_space(s[j]) && s[j] != ')');
          if (j < n && s[j] == ')') ++j;
          else illegal = true;
          break;
        } else if (d == ':' && at(j + 1) == ':') {
          ++j;
        } else {
          break;
        }
      }
      len = j - i;
      kind = (ids == 0 || illegal) ? Token::Punct : Token::Variable;
    } else if ((c == 'x' || c == 'X') && at(i + 1) == '\'') {
      // tokenize.c's CC_X: x' then an even number of hex digits then ', with no
      // doubled quotes (x'00''a' is the blob x'00' and the string 'a');
      // anything else is an illegal token up to the next quote.
      std::size_t j = i + 2;
      while (is_xdigit(at(j))) ++j;
      if (at(j) == '\'' && (j - i) % 2 == 0) {
        kind = Token::Blob;
      } else {
        while (j < n && s[j] != '\'') ++j;
      }
      if (j < n) ++j;
      len = j - i;
    } else if (id_start(c)) {
      while (i + len < n && id_char(s[i + len])) ++len;
      kind = Token::Word;
    }
    if (!skip) out.push_back({kind, i, i + len});
    i += len;
  }
  return out;
}

std::string token_name(std::string_view sql, const Token& t) {
  std::string_view v = sql.substr(t.begin, t.end - t.begin);
  if (t.kind != Token::Quoted || v.size() < 2) return std::string(v);
  const char open = v.front();
  const char close = open == '[' ? ']' : open;
  if (v.back() != close) return std::string(v.substr(1));  // not closed
  std::string name;
  for (std::size_t k = 1; k + 1 < v.size(); ++k) {
    name += v[k];
    if (open != '[' && v[k] == close) ++k;  // a doubled quote stands for one
  }
  return name;
}

bool is_word(std::string_view sql, const Token& t, std::string_view word) {
  return t.kind == Token::Word && iequal(sql.substr(t.begin, t.end - t.begin), word);
}
bool is_punct(std::string_view sql, const Token& t, char c) {
  return t.kind == Token::Punct && t.end == t.begin + 1 && sql[t.begin] == c;
}

std::vector<Call> find_calls(std::string_view sql, const std::vector<Token>& t, std::string_view name) {
  std::vector<Call> calls;
  auto is = [&](std::size_t k, char c) { return k < t.size() && is_punct(sql, t[k], c); };
  auto keyword = [&](std::size_t k, std::string_view w) { return k < t.size() && is_word(sql, t[k], w); };
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k].kind != Token::Word && t[k].kind != Token::Quoted) continue;
    if (!is(k + 1, '(') || (k > 0 && is(k - 1, '.'))) continue;
    if (!iequal(token_name(sql, t[k]), name)) continue;
    Call call;
    call.name_token = k;
    int depth = 0;
    std::size_t start = k + 2, p = k + 2;
    bool closed = false, order_by = false;
    for (; p < t.size(); ++p) {
      if (is(p, '(')) {
        ++depth;
      } else if (is(p, ')')) {
        if (depth == 0) {
          closed = true;
          break;
        }
        --depth;
      } else if (depth > 0 || order_by) {
        continue;
      } else if (is(p, ',')) {
        call.args.emplace_back(start, p);
        start = p + 1;
      } else if (keyword(p, "order") && keyword(p + 1, "by")) {
        // An aggregate's ORDER BY (SQLite 3.44+): f(x, 0.5 ORDER BY a, b) has
        // the two arguments x and 0.5. ORDER is reserved (never a bare name),
        // so here it can only be that; the commas after it separate sort keys.
        if (!(call.args.empty() && start == p)) call.args.emplace_back(start, p);
        order_by = true;
      }
    }
    if (!closed) continue;
    if (!order_by && !(call.args.empty() && start == p)) call.args.emplace_back(start, p);
    calls.push_back(std::move(call));
  }
  return calls;
}

std::optional<Param> read_expanded_value(std::string_view s, std::size_t pos, std::size_t* length) {
  const std::size_t n = s.size();
  if (pos >= n) return std::nullopt;
  std::string_view rest = s.substr(pos);
  auto starts = [&](std::string_view w) { return rest.substr(0, w.size()) == w; };
  if (starts("NULL")) {
    *length = 4;
    return Param{};
  }
  if (rest[0] == '\'') {
    const std::size_t len = quoted_length(s, pos, '\'');
    auto p = string_value(rest.substr(0, len));
    if (p) *length = len;
    return p;
  }
  if (starts("x'")) {
    const std::size_t len = quoted_length(s, pos + 1, '\'') + 1;
    auto p = blob_value(rest.substr(0, len));
    if (p) *length = len;
    return p;
  }
  if (starts("zeroblob(")) {
    // zeroblob(%d)
    std::size_t close = 9;
    while (close < rest.size() && close < 20 && is_digit(rest[close])) ++close;
    if (close == 9 || close >= rest.size() || rest[close] != ')') return std::nullopt;
    Param p;
    p.type = Param::Type::Blob;
    p.i = std::strtoll(std::string(rest.substr(9, close - 9)).c_str(), nullptr, 10);
    *length = close + 1;
    return p;
  }
  // %lld or %!.15g: [-]digits[.digits][e[+-]digits], or [-]Inf.
  std::size_t j = 0;
  const bool negative = rest[0] == '-';
  if (negative) ++j;
  if (rest.substr(j, 3) == "Inf") {
    Param p;
    p.type = Param::Type::Real;
    p.d = negative ? -HUGE_VAL : HUGE_VAL;
    p.bound_real = true;
    *length = j + 3;
    return p;
  }
  const std::size_t digits_start = j;
  while (j < rest.size() && is_digit(rest[j])) ++j;
  if (j == digits_start) return std::nullopt;
  bool real = false;
  if (j < rest.size() && rest[j] == '.') {
    real = true;
    ++j;
    while (j < rest.size() && is_digit(rest[j])) ++j;
  }
  // An exponent has digits: in 1ELSE the number is 1.
  auto at = [&](std::size_t k) { return k < rest.size() ? rest[k] : '\0'; };
  if ((at(j) == 'e' || at(j) == 'E') &&
      (is_digit(at(j + 1)) || ((at(j + 1) == '+' || at(j + 1) == '-') && is_digit(at(j + 2))))) {
    real = true;
    j += 2;
    while (j < rest.size() && is_digit(rest[j])) ++j;
  }
  const std::string number(rest.substr(digits_start, j - digits_start));
  *length = j;
  if (!real) return number_value(number, negative);
  Param p;
  p.type = Param::Type::Real;
  p.d = std::strtod(number.c_str(), nullptr);
  if (negative) p.d = -p.d;
  p.bound_real = true;
  return p;
}

std::optional<Param> read_literal(std::string_view sql, const std::vector<Token>& tokens, std::size_t first,
                                  std::size_t last, const BoundValue& bound) {
  return literal(sql, tokens, first, last, bound, 0);
}

namespace {

// Whether the value read at expanded[e] (length bytes), followed there by
// the raw text `after` up to the next parameter, certainly ends there: no
// shorter value at e is followed by `after` too. (Adjacent parameters, ??,
// have nothing between them: 1.5 then 2 is 1.52.)
bool value_ends_there(std::string_view expanded, std::size_t e, std::size_t length, const Param& v,
                      std::string_view after) {
  switch (v.type) {
    case Param::Type::Text:
      // A shorter string would end at the first quote of a pair doubled in
      // this one, and be followed by the second.
      if (expanded.substr(e + 1, length - 2).find("''") == std::string_view::npos) return true;
      return !after.empty() && after[0] != '\'';
    case Param::Type::Integer:
    case Param::Type::Real:
      if (length > 64) return false;
      for (std::size_t shorter = 1; shorter < length; ++shorter) {
        std::size_t l = 0;
        if (read_expanded_value(expanded.substr(0, e + shorter), e, &l) && l == shorter &&
            expanded.substr(e + shorter, after.size()) == after)
          return false;
      }
      return true;
    default: return true;  // NULL, x'..' and zeroblob(n) have no shorter form
  }
}

}  // namespace

std::vector<std::optional<Param>> bound_values(std::string_view raw, const std::vector<Token>& tokens,
                                               std::string_view expanded) {
  std::vector<std::optional<Param>> values(tokens.size());
  std::size_t r = 0, e = 0;  // positions in raw and in expanded
  // A value is kept only once the text after it matches too, and it cannot
  // have ended sooner: a value read too far (SELECT ?'a' with 't' bound is
  // SELECT 't''a', and ?e5 with 1 bound is 1e5) or cut short
  // (SQLITE_TRACE_SIZE_LIMIT) is not kept.
  std::size_t pending = tokens.size(), pending_at = 0, pending_length = 0;
  std::optional<Param> value;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k].kind != Token::Variable) continue;
    // The text before the parameter is copied verbatim.
    const std::size_t gap = tokens[k].begin - r;
    if (expanded.substr(e, gap) != raw.substr(r, gap)) return values;  // not this text (e.g. commented out)
    if (pending < tokens.size()) {
      if (!value_ends_there(expanded, pending_at, pending_length, *value, raw.substr(r, gap))) return values;
      values[pending] = std::move(value);
    }
    e += gap;
    std::size_t length = 0;
    value = read_expanded_value(expanded, e, &length);
    if (!value) return values;
    pending = k;
    pending_at = e;
    pending_length = length;
    e += length;
    r = tokens[k].end;
  }
  if (pending < tokens.size() && expanded.substr(e) == raw.substr(r)) values[pending] = std::move(value);
  return values;
}

std::string argument_text(std::string_view sql, const std::vector<Token>& tokens, std::size_t first,
                          std::size_t last) {
  if (first >= last) return "";
  return std::string(sql.substr(tokens[first].begin, tokens[last - 1].end - tokens[first].begin));
}

}  // namespace optdp::sql
