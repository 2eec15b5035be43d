// Exact reference arithmetic for tests: a double as the rational it is.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>

namespace optdp::test {

// x = m 2^e with 0.5 <= m < 1, so m 2^53 is the integer significand. x finite.
inline boost::multiprecision::cpp_rational exact(double x) {
  namespace mp = boost::multiprecision;
  int e = 0;
  const double m = std::frexp(x, &e);
  const mp::cpp_int num(static_cast<long long>(std::ldexp(m, 53)));
  return e >= 53 ? mp::cpp_rational(num << (e - 53)) : mp::cpp_rational(num, mp::cpp_int(1) << (53 - e));
}

}  // namespace optdp::test
