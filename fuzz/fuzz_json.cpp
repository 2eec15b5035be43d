// fuzz_json: the strict JSON parser of the SQL API (core/json.hpp).
//
// Input: byte 0 picks the size caps (small, so that "too many elements" and
// "too many rows" are reached), the rest is the JSON text. Both parsers must
// either return a value within the caps, with finite numbers only, or throw
// std::invalid_argument naming the argument. Anything else (another
// exception, a crash, a sanitizer report) is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t max_len = data[0] & 0x0f;         // 0..15
  const std::size_t max_rows = (data[0] >> 4) & 0x07;  // 0..7
  const std::size_t max_cols = (data[0] & 0x80) ? 1000 : max_len;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  try {
    const auto v = optdp::parse_json_array(text, "arr", max_len);
    FUZZ_CHECK(v.size() <= max_len);
    for (double x : v) FUZZ_CHECK(std::isfinite(x));
    FUZZ_CHECK(text.find('[') != std::string_view::npos && text.find(']') != std::string_view::npos);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string_view(e.what()).substr(0, 4) == "arr ");
  }

  try {
    const auto m = optdp::parse_json_matrix(text, "mat", max_rows, max_cols);
    FUZZ_CHECK(m.size() <= max_rows);
    for (const auto& row : m) {
      FUZZ_CHECK(row.size() <= max_cols);
      for (double x : row) FUZZ_CHECK(std::isfinite(x));
    }
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string_view(e.what()).substr(0, 4) == "mat ");
  }
  return 0;
}
