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

namespace {
// x * 2^120 rounded up or down to an integer, exactly: x = m * 2^(e - 53) with
// m a 53-bit integer, so x * 2^120 = m * 2^(e + 67).
DeltaUnits scale_delta(double x, bool up) {
  if (x == 0) return 0;
  int e = 0;
  const double f = std::frexp(x, &e);  // x = f * 2^e, f in [0.5, 1)
  const auto m = static_cast<std::uint64_t>(std::ldexp(f, 53));
  const int shift = e + kDeltaUnitBits - 53;
  if (shift >= 0) return static_cast<DeltaUnits>(m) << shift;  // x <= 1: e <= 1, shift <= 68
  if (shift <= -64) return up ? 1 : 0;                         // 0 < m / 2^-shift < 1
  const std::uint64_t q = m >> -shift;
  const bool inexact = (m & ((std::uint64_t{1} << -shift) - 1)) != 0;
  return q + (up && inexact ? 1 : 0);
}
}  // namespace

DeltaUnits delta_charge_units(double delta) {
  if (!(delta >= 0 && delta <= 1))
    throw std::invalid_argument("delta must be a number in [0, 1], but is " + format_double(delta));
  return scale_delta(delta, /*up=*/true);
}

DeltaUnits delta_total_units(double total_delta) {
  if (!(total_delta >= 0 && total_delta < 1))
    throw std::invalid_argument("total_delta must be a number in [0, 1), but is " + format_double(total_delta));
  return scale_delta(total_delta, /*up=*/false);
}

double units_to_delta(DeltaUnits units) {
  // The conversion rounds once, to nearest; the scaling by 2^-120 is exact
  // (the result, if not 0, is at least 2^-120, far from the subnormals).
  return std::ldexp(static_cast<double>(units), -kDeltaUnitBits);
}

std::string delta_units_text(DeltaUnits units) {
  std::string s;
  do {
    s.push_back(static_cast<char>('0' + static_cast<int>(units % 10)));
    units /= 10;
  } while (units != 0);
  return std::string(s.rbegin(), s.rend());
}

std::optional<DeltaUnits> parse_delta_units(std::string_view s) {
  if (s.empty() || s.size() > 40) return std::nullopt;
  constexpr DeltaUnits kMax = DeltaUnits{1} << 122;
  DeltaUnits v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');  // v was at most 2^122: no wrap
    if (v > kMax) return std::nullopt;
  }
  return v;
}

}  // namespace optdp
