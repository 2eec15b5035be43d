#include "core/format.hpp"

#include <charconv>
#include <cmath>

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

}  // namespace optdp
