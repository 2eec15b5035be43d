#include "core/privacy.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/samplers.hpp"

namespace optdp {

void check_positive(double v, const char* name) {
  if (!(v > 0 && std::isfinite(v)))
    throw std::invalid_argument(std::string(name) + " must be a finite number > 0, but is " + format_double(v));
}

void check_bounds(double lower, double upper, const char* width_name) {
  if (!std::isfinite(lower)) throw std::invalid_argument("lower must be finite, but is " + format_double(lower));
  if (!std::isfinite(upper)) throw std::invalid_argument("upper must be finite, but is " + format_double(upper));
  if (!(lower < upper))
    throw std::invalid_argument("lower must be less than upper, but lower is " + format_double(lower) +
                                " and upper is " + format_double(upper));
  const double width = upper - lower;
  if (!std::isfinite(width))
    throw std::invalid_argument(std::string(width_name) + " must be finite, but is " + format_double(width));
}

double alpha_of_epsilon(double eps, const char* name) {
  check_positive(eps, name);
  const __float128 exact = expq(-static_cast<__float128>(eps));
  double a = static_cast<double>(exact);
  if (static_cast<__float128>(a) < exact) a = std::nextafter(a, 1.0);
  if (a == 0) a = std::nextafter(0.0, 1.0);  // e^-eps > 0 even where binary128 underflows
  if (!(a < 1.0))
    throw std::invalid_argument(std::string(name) + " must be greater than 2^-53 (e^-" + name +
                                " rounds to 1), but is " + format_double(eps));
  return a;  // > 0: the smallest value it can round up to is the least subnormal
}

__float128 log_alpha(double alpha) {
  // log1p(alpha - 1) is accurate near 1 (alpha - 1 is exact there); log for
  // small alpha, where alpha - 1 would lose alpha's digits.
  const __float128 a = alpha;
  return alpha >= 0.5 ? log1pq(a - 1) : logq(a);
}

double epsilon_of_alpha(double alpha, const char* name) {
  check_alpha(alpha, name);
  const __float128 exact = -log_alpha(alpha);
  double e = static_cast<double>(exact);
  if (static_cast<__float128>(e) < exact) e = std::nextafter(e, INFINITY);
  return e;
}

}  // namespace optdp
