// optdp core: a strict parser for the JSON the SQL API accepts: an array of
// numbers, or an array of arrays of numbers. Nothing else (no objects,
// strings, true/false/null, NaN or Infinity). Sizes are capped before any
// allocation grows past them.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace optdp {

// Thrown (a std::invalid_argument) when an array has more than max_len
// elements (or a matrix more than max_rows rows or max_cols columns).
struct JsonTooLong : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws std::invalid_argument "<name> must be a JSON array of numbers ..., but <what went wrong>".
std::vector<double> parse_json_array(std::string_view text, const char* name, std::size_t max_len);
std::vector<std::vector<double>> parse_json_matrix(std::string_view text, const char* name, std::size_t max_rows,
                                                   std::size_t max_cols);

}  // namespace optdp
