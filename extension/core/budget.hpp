// optdp core: privacy-budget arithmetic for the ledger.
//
// The ledger keeps an (epsilon, delta) account by sequential composition: the
// spent budget is the sum of the charges, in each coordinate. Both are counted
// in exact integer units so that the check "spent + cost <= total" never
// suffers from floating-point rounding: a charge is rounded UP to whole units
// and the total DOWN, so the ledger never lets through more than the total it
// records, and the recorded spend is never smaller than the true one.
//
// Epsilon: units of 10^-12 (totals up to 10^6 need 10^18 units, 64 bits).
//
// Delta: units of 2^-120 (7.5e-37), counted in 128 bits. Every double is a
// multiple of its ulp, and a double delta >= 2^-68 (3.4e-21) has an ulp of at
// least 2^-120, so every delta of practice (10^-5 ... 10^-16) is counted
// exactly: the ledger adds the deltas it is given with no rounding at all, and
// a total_delta of 1e-5 pays exactly one release at delta 1e-5. (Decimal units
// could not: the double nearest 1e-5 is not a multiple of 10^-18, so the
// charge would round up and the total down, one unit apart, and the release
// would be refused.) A delta below 2^-68 is rounded up to whole units (by less
// than 7.5e-37) and costs at least one unit when positive. A total below 1 is
// below 2^120 units and a charge at most 1 is at most 2^120, so totals, spends
// and spent + cost (below 2^121) fit an unsigned 128-bit integer. The ledger
// file stores these counts as decimal text (SQLite's INTEGER has 64 bits).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace optdp {

constexpr double kBudgetUnitsPerEpsilon = 1e12;
// Totals and charges above this are refused (units must fit in 63 bits with room for sums).
constexpr double kMaxBudgetEpsilon = 1e6;
// A count of delta units of 2^-kDeltaUnitBits.
using DeltaUnits = unsigned __int128;
constexpr int kDeltaUnitBits = 120;

// ceil(eps * 10^12), at least 1 for any eps > 0. Throws unless 0 < eps <= kMaxBudgetEpsilon.
std::int64_t charge_units(double eps);
// floor(total * 10^12). Throws unless 0 < total <= kMaxBudgetEpsilon.
std::int64_t total_units(double total);
// ceil(delta * 2^120): 0 for delta 0, at least 1 for any delta > 0 (exact for
// delta >= 2^-68). Throws std::invalid_argument unless 0 <= delta <= 1.
DeltaUnits delta_charge_units(double delta);
// floor(total_delta * 2^120). Throws std::invalid_argument ("total_delta must
// be a number in [0, 1), but is 2") unless 0 <= total_delta < 1.
DeltaUnits delta_total_units(double total_delta);
// units * 2^-120 rounded to the nearest double.
double units_to_delta(DeltaUnits units);
// The decimal digits of units, and back: nullopt unless s is 1 to 40 decimal
// digits of a value at most 2^122 (how the ledger file stores the counts).
std::string delta_units_text(DeltaUnits units);
std::optional<DeltaUnits> parse_delta_units(std::string_view s);
// Whether a charge of `cost` units fits: spent + cost <= total.
inline bool budget_allows(std::int64_t spent, std::int64_t cost, std::int64_t total) {
  return cost <= total && spent <= total - cost;
}
inline double units_to_epsilon(std::int64_t units) { return static_cast<double>(units) / kBudgetUnitsPerEpsilon; }
inline bool delta_budget_allows(DeltaUnits spent, DeltaUnits cost, DeltaUnits total) {
  return cost <= total && spent <= total - cost;
}

}  // namespace optdp
