#include "core/staircase.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/privacy.hpp"

namespace optdp {

namespace {

constexpr const char* kCostDomain = "cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is ";

}  // namespace

CostSpec parse_cost_spec(std::string_view text, bool allow_gamma) {
  CostSpec spec;
  if (text == "l1") return spec;
  if (text == "l2") {
    spec.cost = Cost::L2;
    return spec;
  }
  if (allow_gamma && text.substr(0, 6) == "gamma=" && text.size() > 6 && text.size() < 64) {
    const std::string num(text.substr(6));
    char* end = nullptr;
    const double g = std::strtod(num.c_str(), &end);
    if (end == num.c_str() + num.size() && !std::isspace(static_cast<unsigned char>(num[0])) && g >= 0 && g <= 1) {
      spec.fixed_gamma = true;
      spec.gamma = g;
      return spec;
    }
  }
  throw std::invalid_argument(std::string(allow_gamma ? kCostDomain : "cost must be 'l1' or 'l2', but is ") +
                              quote_text(text));
}

Cost parse_cost(std::string_view text) { return parse_cost_spec(text, false).cost; }

namespace {

// The optimal gamma in long double. L2 (docs/math.md, "The staircase mechanism"):
//   gamma* = -b/(1-b) + cbrt(b - 2b^2 + 2b^4 - b^5) / (cbrt(2) (1-b)^2),  b = e^-eps.
// The cube root's argument is (1-b)^3 b (1+b), so with c = cbrt(b(1+b)/2)
//   gamma* = (c - b) / (1-b) = b (1+2b) / (2 (c^2 + c b + b^2)),
// which has no cancellation as eps -> 0 (gamma* -> 1/2) and gives 0 where
// b underflows (eps > ~11355).
long double optimal_gamma(long double eps, Cost cost) {
  if (cost == Cost::L1) return 1 / (1 + std::exp(eps / 2));
  const long double b = std::exp(-eps);
  if (b == 0) return 0;
  const long double c = std::cbrt(b * (1 + b) / 2);
  return std::clamp(b * (1 + 2 * b) / (2 * (c * c + c * b + b * b)), 0.0L, 1.0L);
}

// The cost of the continuous staircase (docs/math.md), with 1 - b computed as
// -expm1(-eps) (exact for tiny eps) and the factor b of the outer steps
// cancelled against the density's normaliser where g = 0.
long double cost_of(long double eps, long double d, long double g, Cost cost) {
  const long double b = std::exp(-eps), u = -std::expm1(-eps);  // u = 1 - b
  const long double S0 = 1 / u, S1 = b / (u * u), S2 = b * (1 + b) / (u * u * u);
  const long double D = g + (1 - g) * b;  // the density is u / (2 d D) on the central step
  long double in, out;
  if (cost == Cost::L1) {
    in = 2 * g * S1 + g * g * S0;
    out = 2 * (1 - g) * S1 + (1 - g * g) * S0;
  } else {
    in = 3 * g * S2 + 3 * g * g * S1 + g * g * g * S0;
    out = 3 * (1 - g) * S2 + 3 * (1 - g * g) * S1 + (1 - g * g * g) * S0;
  }
  const long double ratio = g == 0 ? out : (in + b * out) / D;  // g = 0: (b out) / b
  return cost == Cost::L1 ? u * d * ratio / 2 : u * d * d * ratio / 3;
}

}  // namespace

double staircase_gamma(double eps, Cost cost) {
  check_positive(eps, "eps");
  return static_cast<double>(optimal_gamma(eps, cost));
}

double staircase_cost(double eps, double delta, double gamma, Cost cost) {
  check_positive(eps, "eps");
  check_positive(delta, "delta");
  if (!(gamma >= 0 && gamma <= 1)) throw std::invalid_argument("gamma must be in [0, 1], but is " + format_double(gamma));
  return static_cast<double>(cost_of(eps, delta, gamma, cost));
}

double staircase_optimal_cost(double eps, double delta, Cost cost) {
  check_positive(eps, "eps");
  check_positive(delta, "delta");
  const long double e = eps, d = delta;
  // L1 has the closed form d e^(eps/2) / (e^eps - 1) = d / (2 sinh(eps/2)):
  // d/eps for tiny eps, 0 once sinh overflows.
  if (cost == Cost::L1) return static_cast<double>(d / (2 * std::sinh(e / 2)));
  // L2: where b = e^-eps underflows, the optimum is below d^2 e^(-2 eps/3),
  // far below the least double.
  if (std::exp(-e) == 0) return 0;
  return static_cast<double>(cost_of(e, d, optimal_gamma(e, cost), cost));
}

double laplace_cost(double eps, double delta, Cost cost) {
  check_positive(eps, "eps");
  check_positive(delta, "delta");
  const double scale = delta / eps;
  return cost == Cost::L1 ? scale : 2 * scale * scale;
}

// ---- integer staircase -------------------------------------------------------

IntegerStaircase::IntegerStaircase(double eps, std::int64_t D, std::int64_t r)
    : geo_(alpha_of_epsilon(eps)), D_(D), r_(r) {
  if (D < 1) throw std::invalid_argument("sensitivity must be an integer >= 1, but is " + std::to_string(D));
  if (r < 1 || r > D)
    throw std::invalid_argument("r must be in [1, " + std::to_string(D) + "], but is " + std::to_string(r));
  const __float128 b = geo_.alpha();
  p_low_ = to_fraction128(static_cast<__float128>(r) / (static_cast<__float128>(r) + static_cast<__float128>(D - r) * b));
}

std::int64_t IntegerStaircase::r_for_gamma(double gamma, std::int64_t D) {
  const double r = std::round(gamma * static_cast<double>(D));
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(r), 1, D);
}

std::int64_t IntegerStaircase::optimal_r(double eps, std::int64_t D, Cost cost) {
  if (D < 1) throw std::invalid_argument("sensitivity must be an integer >= 1, but is " + std::to_string(D));
  const double b = alpha_of_epsilon(eps);
  auto cost_of = [&](std::int64_t r) { return expected_cost(b, D, r, cost); };
  std::int64_t lo = 1, hi = D;
  if (D > 4096) {  // the discrete optimum sits next to gamma* D
    const std::int64_t c = r_for_gamma(staircase_gamma(eps, cost), D);
    lo = std::max<std::int64_t>(1, c - 2);
    hi = std::min<std::int64_t>(D, c + 2);
  }
  std::int64_t best = lo;
  long double best_cost = cost_of(lo);
  for (std::int64_t r = lo + 1; r <= hi; ++r) {
    const long double c = cost_of(r);
    if (c < best_cost) best = r, best_cost = c;
  }
  return best;
}

long double IntegerStaircase::expected_cost(double b_, std::int64_t D_, std::int64_t r_, Cost cost) {
  const long double b = b_, D = static_cast<long double>(D_), r = static_cast<long double>(r_);
  const long double S0 = 1 / (1 - b), S1 = b / ((1 - b) * (1 - b)), S2 = b * (1 + b) / ((1 - b) * (1 - b) * (1 - b));
  const long double a = (1 - b) / (2 * r + 2 * b * (D - r) - (1 - b));
  auto L = [](long double n) { return n * (n - 1) / 2; };                // sum_{u<n} u
  auto Q = [](long double n) { return (n - 1) * n * (2 * n - 1) / 6; };  // sum_{u<n} u^2
  if (cost == Cost::L1) {
    const long double in = r * D * S1 + L(r) * S0;
    const long double out = (D - r) * D * S1 + (L(D) - L(r)) * S0;
    return 2 * a * (in + b * out);
  }
  const long double in = S2 * D * D * r + 2 * D * L(r) * S1 + Q(r) * S0;
  const long double out = S2 * D * D * (D - r) + 2 * D * (L(D) - L(r)) * S1 + (Q(D) - Q(r)) * S0;
  return 2 * a * (in + b * out);
}

double IntegerStaircase::pmf(std::int64_t i) const {
  const long double b = geo_.alpha(), D = static_cast<long double>(D_), r = static_cast<long double>(r_);
  const long double a = (1 - b) / (2 * r + 2 * b * (D - r) - (1 - b));
  const std::uint64_t m = i < 0 ? -static_cast<std::uint64_t>(i) : static_cast<std::uint64_t>(i);
  const std::uint64_t k = m / static_cast<std::uint64_t>(D_), u = m % static_cast<std::uint64_t>(D_);
  const long double step = std::pow(b, static_cast<long double>(k) + (u < static_cast<std::uint64_t>(r_) ? 0 : 1));
  return static_cast<double>(a * step);
}

std::int64_t IntegerStaircase::operator()(Rng& rng) const {
  for (;;) {
    const bool negative = rng.coin();
    const std::uint64_t k = geo_(rng);
    const bool low = bernoulli(rng, p_low_);
    const std::int64_t u = low ? static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(r_)))
                               : r_ + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(D_ - r_)));
    std::int64_t m;
    if (k > static_cast<std::uint64_t>(INT64_MAX) || __builtin_mul_overflow(static_cast<std::int64_t>(k), D_, &m) ||
        __builtin_add_overflow(m, u, &m) || m > (INT64_MAX >> 2))
      continue;  // beyond 2^61: probability below 2^-1000 in the documented domain
    if (negative && m == 0) continue;
    return negative ? -m : m;
  }
}

std::int64_t staircase_r(std::string_view spec, double eps, std::int64_t D) {
  if (spec == "l1") return IntegerStaircase::optimal_r(eps, D, Cost::L1);
  if (spec == "l2") return IntegerStaircase::optimal_r(eps, D, Cost::L2);
  if (spec.substr(0, 2) == "r=" && spec.size() > 2 && spec.size() <= 21) {
    std::int64_t k = 0;
    bool ok = true;
    for (char c : spec.substr(2)) {
      if (c < '0' || c > '9' || k > (INT64_MAX - 9) / 10) {
        ok = false;
        break;
      }
      k = k * 10 + (c - '0');
    }
    if (ok && k >= 1 && k <= D) return k;
  }
  throw std::invalid_argument("cost must be 'l1', 'l2' or 'r=K' with K an integer in [1, " + std::to_string(D) +
                              "], but is " + quote_text(spec));
}

// ---- grid -----------------------------------------------------------------------

void check_sum_eps(double eps) {
  check_positive(eps, "eps");
  if (eps < 0x1p-30)
    throw std::invalid_argument("eps must be at least 2^-30 (9.3e-10) for sums, but is " + format_double(eps));
}

Grid make_grid(double eps, double lower, double upper, const char* width_name) {
  check_sum_eps(eps);
  check_bounds(lower, upper, width_name);
  const double width = upper - lower;
  // The sensitivity for adding, removing or replacing one row (staircase.hpp).
  // It only sets the grid: the noise is calibrated to the exact integer D().
  const double delta = std::max({width, std::fabs(lower), std::fabs(upper)});
  if (delta < 0x1p-960)  // the grid (below delta / 2^20) would leave the normal doubles
    throw std::invalid_argument(std::string(delta == width ? width_name : "max(upper - lower, |lower|, |upper|)") +
                                " must be at least 2^-960 (1.1e-289), but is " + format_double(delta));
  const double c = std::exp(eps / 2) / std::expm1(eps);  // staircase optimal E|noise| / delta
  const double s = delta * std::clamp(std::isfinite(c) ? c : 1.0, 0x1p-20, 1.0);
  int e;
  std::frexp(s, &e);  // s = f 2^e, f in [0.5, 1): floor(log2 s) = e - 1
  Grid grid;
  grid.g = std::ldexp(1.0, e - 1 - 20);
  grid.inv_g = std::ldexp(1.0, 21 - e);
  // |lower|, |upper| <= delta < 2^41 g, so this cannot fail; it guards the
  // conversions below against a change of the rule above.
  const double lq = lower / grid.g, uq = upper / grid.g;
  if (!(std::fabs(lq) < 0x1p62 && std::fabs(uq) < 0x1p62))
    throw std::logic_error("lower and upper must lie within 2^62 grid steps of 0 (grid " + format_double(grid.g) +
                           "), but they are " + format_double(lower) + " and " + format_double(upper));
  grid.lower_q = std::llrint(lq);
  grid.upper_q = std::llrint(uq);
  return grid;
}

}  // namespace optdp
