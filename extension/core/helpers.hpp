// optdp core: the checks and computations behind the SQL helper functions
// (sql/reference.md) that each engine's binding only reads arguments for:
// the sums' noise intervals, staircase_pmf's range, optimal_mechanism's
// method, dp_derivable's size and the list arguments of engines with arrays.
// Messages follow the bindings' rule "<argument> must be ..., but is ...";
// a text argument is shown as "text '<quoted>'", as the bindings describe it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/staircase.hpp"

namespace optdp {

// The mechanism of a sum: 'staircase' or 'laplace'
// ("mechanism must be 'staircase' or 'laplace', but is text 'x'").
enum class SumMechanism { Staircase, Laplace };
SumMechanism parse_sum_mechanism(std::string_view text);

// The half-width of a sum's noise at confidence in data units: h grid steps
// times the grid's step, with the sampler staircase_sum / laplace_sum builds
// for (eps, lower, upper, cost). Throws for invalid parameters.
double sum_half_width(SumMechanism m, double eps, double lower, double upper, const CostSpec& cost,
                      double confidence);
// An eps in [2^-30, 2^20] whose sum_half_width is at most half_width (the
// least found by bisection; the grid makes the half-width a step function, so
// each eps is checked with sum_half_width itself); nullopt if even 2^20 is
// too noisy.
std::optional<double> sum_eps_for_half_width(SumMechanism m, double half_width, double lower, double upper,
                                             const CostSpec& cost, double confidence);

// staircase_pmf: delta >= 1 ("delta must be an integer >= 1, but is D"), and
// lo <= hi with hi - lo below kMaxPmfRows.
constexpr std::int64_t kMaxPmfRows = 100000000;
void check_pmf_delta(std::int64_t delta);
void check_pmf_range(std::int64_t lo, std::int64_t hi);

// optimal_mechanism's method: 'remap' (default) or 'lp'
// ("method must be 'remap' or 'lp', but is text 'x'").
enum class OptimalMethod { Remap, Lp };
OptimalMethod parse_optimal_method(std::string_view text);

// dp_derivable: at most kMaxDerivableN + 1 rows and columns.
constexpr std::int64_t kMaxDerivableN = 1000;

// A list of numbers given as an array (engines with array types): at most
// max_len finite numbers, at least one; throws "<name> must be an array of 1
// to <max_len> finite numbers, but ...".
void check_number_list(std::span<const double> values, const char* name, std::size_t max_len);

}  // namespace optdp
