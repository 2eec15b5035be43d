// fuzz_cost: the staircase mechanism's text specs and parameters
// (core/staircase.hpp): parse_cost_spec, parse_cost, staircase_r, and with
// them the analytic helpers, the integer staircase and the sum grid.
//
// Input: the spec text up to the first NUL byte; after it, eps, D, lower,
// upper, x, a seed and a flag (FuzzedDataProvider; no bytes: eps = 0 etc.).
//
// Checks: parsers return or throw std::invalid_argument; a parsed CostSpec is
// 'l1', 'l2' or a gamma in [0, 1]; parse_cost only accepts 'l1' and 'l2';
// staircase_r returns r in [1, D]; an IntegerStaircase's pmf is a
// probability; the grid step is a positive power of two, D >= 1, and
// quantize() stays within [lower_q, upper_q]; gamma and costs are not NaN.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include <fuzzer/FuzzedDataProvider.h>

#include "core/rng.hpp"
#include "core/staircase.hpp"
#include "fuzz_check.hpp"

namespace {

double pick_double(FuzzedDataProvider& in) {
  static constexpr double kSpecial[] = {0.0, -0.0, 1.0, 0.5, 2.0, 1e-300, 5e-324, 0x1p-30, 0x1p-31, 0x1p-53,
                                        27.7, 745.2, 1e300, HUGE_VAL, -HUGE_VAL, -1.0, 1e-9, 100.0, 0x1p21, 0x1p62};
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: return in.PickValueInArray(kSpecial);
    case 1: return in.ConsumeFloatingPoint<double>();
    case 2: return static_cast<double>(in.ConsumeIntegralInRange(-64, 64)) / 8.0;
    default: return in.ConsumeFloatingPointInRange<double>(-1e6, 1e6);
  }
}

std::int64_t pick_int(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 2)) {
    case 0: return in.ConsumeIntegralInRange<std::int64_t>(-2, 70);
    case 1: return std::int64_t{1} << in.ConsumeIntegralInRange(0, 62);
    default: return in.ConsumeIntegral<std::int64_t>();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The spec text runs up to the first NUL byte; the parameters come from the
  // bytes after it.
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t text_len = nul ? static_cast<std::size_t>(nul - data) : size;
  const std::string text(reinterpret_cast<const char*>(data), text_len);
  FuzzedDataProvider in(data + text_len + (nul ? 1 : 0), size - text_len - (nul ? 1 : 0));
  const double eps = pick_double(in);
  const std::int64_t D = pick_int(in);
  const double lower = pick_double(in), upper = pick_double(in), x = pick_double(in);
  const auto seed = in.ConsumeIntegral<std::uint32_t>();
  const bool allow_gamma = !in.ConsumeBool();

  // parse_cost_spec / parse_cost
  try {
    const optdp::CostSpec spec = optdp::parse_cost_spec(text, allow_gamma);
    if (spec.fixed_gamma) {
      FUZZ_CHECK(allow_gamma && text.rfind("gamma=", 0) == 0);
      FUZZ_CHECK(spec.gamma >= 0 && spec.gamma <= 1);
    } else {
      FUZZ_CHECK(text == "l1" || text == "l2");
      FUZZ_CHECK((spec.cost == optdp::Cost::L2) == (text == "l2"));
    }
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::string(e.what()).rfind("cost must be", 0) == 0);
  }
  try {
    const optdp::Cost c = optdp::parse_cost(text);
    FUZZ_CHECK((text == "l1" && c == optdp::Cost::L1) || (text == "l2" && c == optdp::Cost::L2));
  } catch (const std::invalid_argument&) {
    FUZZ_CHECK(text != "l1" && text != "l2");
  }

  // Analytic helpers (eps, delta = upper).
  for (const optdp::Cost c : {optdp::Cost::L1, optdp::Cost::L2}) {
    try {
      const double gamma = optdp::staircase_gamma(eps, c);
      // gamma* is in [0, 1/2], decreasing in eps, -> 1/2 as eps -> 0 (above 0.37 for eps <= 1, L1 and L2).
      FUZZ_CHECK_KNOWN("gamma-l2-small-eps", gamma >= 0 && gamma <= 0.5 + 1e-12 && (eps > 1 || gamma >= 0.37),
                       "staircase_gamma(%.17g, %s) = %.17g", eps, c == optdp::Cost::L1 ? "l1" : "l2", gamma);
      const double sc = optdp::staircase_cost(eps, upper, gamma, c);
      const double lc = optdp::laplace_cost(eps, upper, c);
      FUZZ_CHECK_MSG(!(sc < 0) && !(lc < 0), "costs %.17g %.17g at eps %.17g delta %.17g", sc, lc, eps, upper);
    } catch (const std::invalid_argument&) {
    }
  }

  // staircase_r and the integer staircase.
  try {
    const std::int64_t r = optdp::staircase_r(text, eps, D);
    FUZZ_CHECK_MSG(r >= 1 && r <= D, "staircase_r('%s', %.17g, %lld) = %lld", text.c_str(), eps, (long long)D,
                   (long long)r);
    const optdp::IntegerStaircase s(eps, D, r);
    FUZZ_CHECK(s.r() == r && s.D() == D);
    const std::int64_t probes[] = {0, 1, -1, r - 1, r, D - 1, D, -D, x < 0 ? -1000 : 1000,
                                   std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
    for (std::int64_t i : probes) {
      const double p = s.pmf(i);
      FUZZ_CHECK_MSG(p >= 0 && p <= 1, "pmf(%lld) = %.17g (eps %.17g D %lld r %lld)", (long long)i, p, eps,
                     (long long)D, (long long)r);
    }
    const long double cost = s.expected_cost(optdp::Cost::L1);
    FUZZ_CHECK(!(cost < 0));
    // Sampling, in the domain the sums use (eps >= 2^-30, D up to ~2^42).
    if (eps >= 0x1p-30 && D <= (std::int64_t{1} << 42)) {
      optdp::SeededRng rng(seed);
      for (int k = 0; k < 4; ++k) {
        const std::int64_t z = s(rng);
        FUZZ_CHECK(z > std::numeric_limits<std::int64_t>::min() / 4 && z < std::numeric_limits<std::int64_t>::max() / 4);
      }
    }
  } catch (const std::invalid_argument&) {
  }

  // The grid of the sums.
  try {
    const optdp::Grid grid = optdp::make_grid(eps, lower, upper);
    int e;
    FUZZ_CHECK_MSG(grid.g > 0 && std::frexp(grid.g, &e) == 0.5, "grid step %.17g is not a power of two", grid.g);
    FUZZ_CHECK_MSG(grid.D() >= 1, "grid D = %lld for eps %.17g, [%.17g, %.17g]", (long long)grid.D(), eps, lower,
                   upper);
    if (!std::isnan(x)) {
      const std::int64_t q = grid.quantize(x, lower, upper);
      FUZZ_CHECK_MSG(q >= grid.lower_q && q <= grid.upper_q, "quantize(%.17g) = %lld outside [%lld, %lld]", x,
                     (long long)q, (long long)grid.lower_q, (long long)grid.upper_q);
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
