// Directed conversion of a binary128 value to double, for bounds that must
// stay on their side after rounding (accounting.cpp, pld.cpp).
#pragma once

#include <cmath>
#include <limits>

namespace optdp {

// The smallest double >= x.
inline double round_up(__float128 x) {
  double d = static_cast<double>(x);
  if (__float128(d) < x) d = std::nextafter(d, std::numeric_limits<double>::infinity());
  return d;
}
// The largest double <= x.
inline double round_down(__float128 x) {
  double d = static_cast<double>(x);
  if (__float128(d) > x) d = std::nextafter(d, -std::numeric_limits<double>::infinity());
  return d;
}

}  // namespace optdp
