#include "sqlite/sql_text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>


namespace optdp::sql {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'; }
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
    if (s.size() - 2 > 16) return std::nullopt;  // SQLite: "hex literal too big"
    const std::uint64_t u = std::strtoull(s.c_str() + 2, nullptr, 16);
    std::int64_t v;
    std::memcpy(&v, &u, sizeof v);  // SQLite reads hex as a 64-bit two's complement pattern
    p.type = Param::Type::Integer;
    if (negative) {
      if (v == INT64_MIN) {
        p.type = Param::Type::Real;
        p.d = 9223372036854775808.0;
        return p;
      }
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
  // 'it''s' -> it's
  if (token.size() < 2 || token.back() != '\'') return std::nullopt;
  Param p;
  p.type = Param::Type::Text;
  for (std::size_t k = 1; k + 1 < token.size(); ++k) {
    p.bytes += token[k];
    if (token[k] == '\'') ++k;
  }
  return p;
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

std::optional<Param> negate(Param p) {
  if (p.type == Param::Type::Real) {
    p.d = -p.d;
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
    // A number right after the sign is read with it (-9223372036854775808 is an INTEGER).
    if (last == first + 2 && t[first + 1].kind == Token::Number) return number_value(text(first + 1), true);
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
    if (is_space(c)) {
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
      kind = Token::Blob;
      len = quoted_length(s, i + 1, '\'') + 1;
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

std::vector<Call> find_calls(std::string_view sql, const std::vector<Token>& t, std::string_view name) {
  std::vector<Call> calls;
  auto is = [&](std::size_t k, char c) {
    return k < t.size() && t[k].kind == Token::Punct && t[k].end == t[k].begin + 1 && sql[t[k].begin] == c;
  };
  for (std::size_t k = 0; k + 1 < t.size(); ++k) {
    if (t[k].kind != Token::Word && t[k].kind != Token::Quoted) continue;
    if (!is(k + 1, '(') || (k > 0 && is(k - 1, '.'))) continue;
    if (!iequal(token_name(sql, t[k]), name)) continue;
    Call call;
    call.name_token = k;
    int depth = 0;
    std::size_t start = k + 2, p = k + 2;
    bool closed = false;
    for (; p < t.size(); ++p) {
      if (is(p, '(')) {
        ++depth;
      } else if (is(p, ')')) {
        if (depth == 0) {
          closed = true;
          break;
        }
        --depth;
      } else if (is(p, ',') && depth == 0) {
        call.args.emplace_back(start, p);
        start = p + 1;
      }
    }
    if (!closed) continue;
    if (!(call.args.empty() && start == p)) call.args.emplace_back(start, p);
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
    const auto close = rest.find(')');
    if (close == std::string_view::npos) return std::nullopt;
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
  if (j < rest.size() && (rest[j] == 'e' || rest[j] == 'E')) {
    real = true;
    ++j;
    if (j < rest.size() && (rest[j] == '+' || rest[j] == '-')) ++j;
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

std::vector<std::optional<Param>> bound_values(std::string_view raw, const std::vector<Token>& tokens,
                                               std::string_view expanded) {
  std::vector<std::optional<Param>> values(tokens.size());
  std::size_t r = 0, e = 0;  // positions in raw and in expanded
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (tokens[k].kind != Token::Variable) continue;
    // The text before the parameter is copied verbatim.
    const std::size_t gap = tokens[k].begin - r;
    if (expanded.substr(e, gap) != raw.substr(r, gap)) return values;  // not this text (e.g. commented out)
    e += gap;
    std::size_t length = 0;
    auto v = read_expanded_value(expanded, e, &length);
    if (!v) return values;
    values[k] = std::move(v);
    e += length;
    r = tokens[k].end;
  }
  return values;
}

std::string argument_text(std::string_view sql, const std::vector<Token>& tokens, std::size_t first,
                          std::size_t last) {
  if (first >= last) return "";
  return std::string(sql.substr(tokens[first].begin, tokens[last - 1].end - tokens[first].begin));
}

}  // namespace optdp::sql
