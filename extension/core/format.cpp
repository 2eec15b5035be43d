#include "core/format.hpp"

#include <charconv>
#include <cmath>
#include <regex>

namespace optdp {

std::string format_double(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
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
