#include "core/budget.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"

extern "C" {
#include <quadmath.h>
}

namespace optdp {

namespace {
void check(double v, const char* name) {
  if (!(v > 0 && v <= kMaxBudgetEpsilon))
    throw std::invalid_argument(std::string(name) + " must be a number in (0, 1e6], but is " + format_double(v));
}
}  // namespace

std::int64_t charge_units(double eps) {
  check(eps, "epsilon");
  // In binary128 the product of a double and 10^12 is exact, so the rounding is too.
  const __float128 u = ceilq(static_cast<__float128>(eps) * static_cast<__float128>(kBudgetUnitsPerEpsilon));
  return u < 1 ? 1 : static_cast<std::int64_t>(u);
}

std::int64_t total_units(double total) {
  check(total, "total_epsilon");
  return static_cast<std::int64_t>(floorq(static_cast<__float128>(total) * static_cast<__float128>(kBudgetUnitsPerEpsilon)));
}

}  // namespace optdp
