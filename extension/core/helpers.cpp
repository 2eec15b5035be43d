#include "core/helpers.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/format.hpp"
#include "core/intervals.hpp"
#include "core/privacy.hpp"

namespace optdp {

SumMechanism parse_sum_mechanism(std::string_view text) {
  if (text == "staircase") return SumMechanism::Staircase;
  if (text == "laplace") return SumMechanism::Laplace;
  throw std::invalid_argument("mechanism must be 'staircase' or 'laplace', but is text " + quote_text(text));
}

double sum_half_width(SumMechanism m, double eps, double lower, double upper, const CostSpec& cost,
                      double confidence) {
  const Grid grid = make_grid(eps, lower, upper);
  const std::int64_t D = grid.D();
  std::int64_t h;
  if (m == SumMechanism::Staircase) {
    const std::int64_t r =
        cost.fixed_gamma ? IntegerStaircase::r_for_gamma(cost.gamma, D) : IntegerStaircase::optimal_r(eps, D, cost.cost);
    const IntegerStaircase s(eps, D, r);
    h = staircase_half_width(s.b(), D, r, confidence);
  } else {
    // laplace_sum's alpha: eps / D rounded down if need be.
    double x = eps / static_cast<double>(D);
    if (std::fma(x, static_cast<double>(D), -eps) > 0) x = std::nextafter(x, 0.0);
    h = geometric_half_width(alpha_of_epsilon(x), confidence);
  }
  return static_cast<double>(h) * grid.g;
}

std::optional<double> sum_eps_for_half_width(SumMechanism m, double half_width, double lower, double upper,
                                             const CostSpec& cost, double confidence) {
  auto fits = [&](double e) { return sum_half_width(m, e, lower, upper, cost, confidence) <= half_width; };
  double lo = 0x1p-30, hi = 0x1p20;
  if (fits(lo)) return lo;
  if (!fits(hi)) return std::nullopt;
  for (int i = 0; i < 200 && std::nextafter(lo, hi) < hi; ++i) {  // !fits(lo), fits(hi)
    const double mid = hi / lo > 4 ? std::sqrt(lo) * std::sqrt(hi) : lo + (hi - lo) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

void check_pmf_delta(std::int64_t delta) {
  if (delta < 1) throw std::invalid_argument("delta must be an integer >= 1, but is " + std::to_string(delta));
}

void check_pmf_range(std::int64_t lo, std::int64_t hi) {
  if (hi < lo || static_cast<unsigned __int128>(static_cast<__int128>(hi) - lo) >=
                     static_cast<unsigned __int128>(kMaxPmfRows))
    throw std::invalid_argument("hi must be at least lo and hi - lo below " + std::to_string(kMaxPmfRows) +
                                ", but lo is " + std::to_string(lo) + " and hi is " + std::to_string(hi));
}

OptimalMethod parse_optimal_method(std::string_view text) {
  if (text == "remap") return OptimalMethod::Remap;
  if (text == "lp") return OptimalMethod::Lp;
  throw std::invalid_argument("method must be 'remap' or 'lp', but is text " + quote_text(text));
}

void check_number_list(std::span<const double> values, const char* name, std::size_t max_len) {
  const std::string want = std::string(name) + " must be an array of 1 to " + std::to_string(max_len) +
                           " finite numbers, but ";
  if (values.empty()) throw std::invalid_argument(want + "it is empty");
  if (values.size() > max_len)
    throw std::invalid_argument(want + "it has " + std::to_string(values.size()) + " elements");
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw std::invalid_argument(want + "element " + std::to_string(i + 1) + " is " + format_double(values[i]));
}

}  // namespace optdp
