#include "core/json.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace optdp {

namespace {

class Parser {
 public:
  Parser(std::string_view t, const char* name, const char* what) : t_(t), name_(name), what_(what) {}

  [[noreturn]] void fail(const std::string& why) const { throw std::invalid_argument(message(why)); }
  [[noreturn]] void too_long(const std::string& why) const { throw JsonTooLong(message(why)); }
  std::string message(const std::string& why) const {
    return std::string(name_) + " must be " + what_ + ", but " + why + " at offset " + std::to_string(i_);
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool eat(char c) {
    ws();
    if (i_ < t_.size() && t_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("'") + c + "' was expected");
  }
  bool at_end() {
    ws();
    return i_ == t_.size();
  }
  // A JSON number (RFC 8259 grammar), finite as a double.
  double number() {
    ws();
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t s = i_;
      while (i_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_]))) ++i_;
      return i_ - s;
    };
    if (i_ < t_.size() && t_[i_] == '-') ++i_;
    if (i_ < t_.size() && t_[i_] == '0') ++i_;
    else if (digits() == 0) fail("a number was expected");
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      if (digits() == 0) fail("a digit was expected after '.'");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (digits() == 0) fail("a digit was expected in the exponent");
    }
    if (i_ - start > 400) fail("a number is too long");
    const std::string s(t_.substr(start, i_ - start));
    const double v = std::strtod(s.c_str(), nullptr);
    if (!std::isfinite(v)) fail("the number " + s + " is out of range");
    return v;
  }
  std::vector<double> array(std::size_t max_len) {
    std::vector<double> out;
    expect('[');
    if (eat(']')) return out;
    do {
      ws();
      const std::size_t at = i_;  // a surplus element is reported where it starts (after checking its syntax)
      const double v = number();
      if (out.size() == max_len) {
        i_ = at;
        too_long("it has more than " + std::to_string(max_len) + " elements");
      }
      out.push_back(v);
    } while (eat(','));
    expect(']');
    return out;
  }

 private:
  std::string_view t_;
  const char* name_;
  const char* what_;
  std::size_t i_ = 0;
};

}  // namespace

std::vector<double> parse_json_array(std::string_view text, const char* name, std::size_t max_len) {
  Parser p(text, name, "a JSON array of numbers");
  auto v = p.array(max_len);
  if (!p.at_end()) p.fail("text follows the array");
  return v;
}

std::vector<std::vector<double>> parse_json_matrix(std::string_view text, const char* name, std::size_t max_rows,
                                                   std::size_t max_cols) {
  Parser p(text, name, "a JSON array of arrays of numbers");
  std::vector<std::vector<double>> m;
  p.expect('[');
  if (!p.eat(']')) {
    do {
      if (m.size() == max_rows) p.too_long("it has more than " + std::to_string(max_rows) + " rows");
      m.push_back(p.array(max_cols));
    } while (p.eat(','));
    p.expect(']');
  }
  if (!p.at_end()) p.fail("text follows the matrix");
  return m;
}

}  // namespace optdp
