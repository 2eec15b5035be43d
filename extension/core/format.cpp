#include "core/format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>

namespace optdp {

std::string format_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string format_figure(double v, Rounding r) {
  if (!std::isfinite(v) || v == 0) return format_double(v);
  if (v < 0) {  // Up of -x is -(Down of x)
    const Rounding flipped = r == Rounding::Up ? Rounding::Down : r == Rounding::Down ? Rounding::Up : r;
    return "-" + format_figure(-v, flipped);
  }
  // The nearest 4-digit decimal m * 10^(e - 3), 1000 <= m <= 9999 (glibc's
  // printf rounds the exact binary value correctly).
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  const char* exp = std::strchr(buf, 'e');
  long m = (buf[0] - '0') * 1000L + (buf[2] - '0') * 100L + (buf[3] - '0') * 10L + (buf[4] - '0');
  long e = std::strtol(exp + 1, nullptr, 10);
  auto value = [](long mant, long ex) {
    char t[32];
    std::snprintf(t, sizeof t, "%lde%ld", mant, ex - 3);
    return std::strtod(t, nullptr);
  };
  const double near = value(m, e);
  if (r == Rounding::Up && near < v) {
    if (++m == 10000) m = 1000, ++e;
  } else if (r == Rounding::Down && near > v) {
    if (--m == 999) m = 9999, --e;
  }
  return format_double(value(m, e));
}

std::string quote_text(std::string_view text, std::size_t max_bytes) {
  std::size_t cut = text.size();
  if (cut > max_bytes) {
    cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  }
  std::string out = "'";
  for (std::size_t i = 0; i < cut; ++i) {
    if (text[i] == '\0') out += "\\0";
    else out += text[i];
  }
  if (cut < text.size()) out += "...";
  out += "'";
  return out;
}

std::string hide_values(std::string_view message) {
  std::string head(message), tail;
  if (const std::size_t but = head.find(", but "); but != std::string::npos) {
    const std::string_view rest = message.substr(but + 6);
    tail = rest.starts_with("is ") ? std::string(", but is ") + kValueNotShown
                                   : ", but the values are not shown (they may be a row's)";
    head.resize(but);
  }
  // Values of other arguments inside the requirement (core/lp.cpp, core/loss.cpp, the ledger's messages).
  // Built once and never destroyed: a static with a destructor would run at
  // exit() in every PostgreSQL process, also from a signal handler.
  static const std::regex& range = *new std::regex(R"( = \[[^\]]*\])");
  static const std::regex& matrix = *new std::regex(R"(\ba (\d+)x\1 matrix( for n = \d+)?)");
  static const std::regex& entries = *new std::regex(R"(n\+1 = \d+ entries)");
  static const std::regex& ledger = *new std::regex(R"(the ledger '.*?'(?= records |: |$))");
  head = std::regex_replace(head, range, "");
  head = std::regex_replace(head, matrix, "an (n+1)x(n+1) matrix");
  head = std::regex_replace(head, entries, "n+1 entries");
  head = std::regex_replace(head, ledger, "the ledger");
  return head + tail;
}

}  // namespace optdp
