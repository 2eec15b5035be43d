// optdp SQLite bindings: reading an aggregate's parameters from SQL text,
// without evaluating anything.
//
// SQLite calls an aggregate's xFinal with no arguments when a query matched
// no rows, yet optdp must release 0 + noise there with the parameters the
// query asked for: an error or a NULL would tell that no row matched. So the
// parameters of the randomised aggregates are read from the text of the
// running statement, on EVERY path (rows or none), by the same code, and the
// argument values SQLite passes with the rows are never used for them. A
// parameter must therefore be written so that its value can be read without
// running any SQL:
//
//   a number      0.5  -3  1e-3  0x10  (with any unary + or -, in parentheses)
//   a string      'l2'
//   NULL
//   a bound parameter  ?  ?3  :name  @name  $name  (its value is read from
//                 sqlite3_expanded_sql, which shows a REAL with 15
//                 significant digits; see Param::bound)
//
// Nothing that SQLite evaluates (not even optdp's own dp_alpha()) is
// accepted: evaluating it can fail with rows and not without, and such an
// error would tell whether rows matched.
// This header is pure text processing (no SQLite calls), so it can be tested
// and fuzzed alone; params.hpp applies it to the running statements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace optdp::sql {

// One token of SQL text, split the way SQLite's tokenizer (tokenize.c) does.
struct Token {
  enum Kind : unsigned char {
    Word,      // identifier or keyword
    Quoted,    // "identifier", `identifier` or [identifier]
    String,    // 'text'
    Blob,      // x'hex'
    Number,    // 12, 1.5e3, .5, 0x1F
    Variable,  // ?, ?12, :name, @name, $name, #name
    Punct,     // any other character: ( ) , . + - ...
  };
  Kind kind;
  std::size_t begin, end;  // byte offsets into the text
};

// The tokens of sql, without spaces and comments. A string, quoted
// identifier or block comment left open runs to the end of the text.
std::vector<Token> tokenize(std::string_view sql);

// Whether t is the bare word `word` (ASCII case-insensitive; "word" quoted is not).
bool is_word(std::string_view sql, const Token& t, std::string_view word);
// Whether t is the one-character punctuation c.
bool is_punct(std::string_view sql, const Token& t, char c);

// The name a Word or Quoted token stands for ("a""b" stands for a"b).
std::string token_name(std::string_view sql, const Token& t);

// A call name(arg, ...) found in the tokens: each argument as the half-open
// range [first, last) of token indices.
struct Call {
  std::size_t name_token;  // index of the function name's token
  std::vector<std::pair<std::size_t, std::size_t>> args;
};

// Every call of name (case-insensitive; also written "name", `name` or
// [name]) in the tokens, in order; "schema.name(" is not a call.
std::vector<Call> find_calls(std::string_view sql, const std::vector<Token>& tokens, std::string_view name);

// A parameter as read from the text.
struct Param {
  enum class Type : unsigned char { Null, Integer, Real, Text, Blob };
  Type type = Type::Null;
  std::int64_t i = 0;  // Integer
  double d = 0;        // Real
  std::string bytes;   // Text or Blob
  // Whether it came from a REAL bound to the statement: SQLite shows those
  // with 15 significant digits (sqlite3_expanded_sql), so the value read is
  // the double nearest to that decimal, which may differ from the double
  // that was bound in its last digits.
  bool bound_real = false;
  // The same value: numbers compare by value (1 and 1.0 are the same
  // parameter), everything else by type and bytes.
  bool operator==(const Param& o) const;
};

// The value of one bound parameter as sqlite3_expanded_sql writes it
// (NULL, an integer, a REAL with %!.15g, 'text', x'hex', zeroblob(n)),
// starting at text[pos]. Returns the value and sets *length to the bytes it
// takes, or nullopt if no such value starts there.
std::optional<Param> read_expanded_value(std::string_view text, std::size_t pos, std::size_t* length);

// The value of argument [first, last) of a call, if it is one of the forms
// above; bound(token index) gives a Variable token's value (nullopt if it
// cannot be read). nullopt if the argument is any other expression.
using BoundValue = std::function<std::optional<Param>(std::size_t token)>;
std::optional<Param> read_literal(std::string_view sql, const std::vector<Token>& tokens, std::size_t first,
                                  std::size_t last, const BoundValue& bound);

// The values of the Variable tokens of raw (the statement's text), read from
// expanded (the same text with each bound parameter replaced by its value,
// as sqlite3_expanded_sql returns it): one entry per token index, nullopt
// for every token that is not a Variable or could not be matched.
std::vector<std::optional<Param>> bound_values(std::string_view raw, const std::vector<Token>& tokens,
                                               std::string_view expanded);

// The argument as written (messages shorten it with quote_text).
std::string argument_text(std::string_view sql, const std::vector<Token>& tokens, std::size_t first,
                          std::size_t last);

}  // namespace optdp::sql
