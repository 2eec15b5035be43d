// optdp core: privacy-budget arithmetic for the ledger.
//
// Epsilons are accounted in exact integer units of 10^-12 so that the check
// "spent + cost <= total" never suffers from floating-point rounding: a
// charge is rounded UP to whole units and the total DOWN, so the ledger never
// lets through more than the total it records. Sequential composition: the
// spent budget is the sum of the charges.
#pragma once

#include <cstdint>

namespace optdp {

constexpr double kBudgetUnitsPerEpsilon = 1e12;
// Totals and charges above this are refused (units must fit in 63 bits with room for sums).
constexpr double kMaxBudgetEpsilon = 1e6;

// ceil(eps * 10^12), at least 1 for any eps > 0. Throws unless 0 < eps <= kMaxBudgetEpsilon.
std::int64_t charge_units(double eps);
// floor(total * 10^12). Throws unless 0 < total <= kMaxBudgetEpsilon.
std::int64_t total_units(double total);
// Whether a charge of `cost` units fits: spent + cost <= total.
inline bool budget_allows(std::int64_t spent, std::int64_t cost, std::int64_t total) {
  return cost <= total && spent <= total - cost;
}
inline double units_to_epsilon(std::int64_t units) { return static_cast<double>(units) / kBudgetUnitsPerEpsilon; }

}  // namespace optdp
