// fuzz_levels: parse_levels (core/levels.hpp) and, for the alphas that parse,
// the level chains that release_levels and private_count_levels use.
//
// Input: byte 0 picks n (byte * 20, so up to 5100: above 5000 is rejected),
// bytes 1-2 a count / value (int16), byte 3 a seed, the rest is the JSON.
//
// Checks: parse_levels returns 1..16 strictly increasing alphas in (0, 1) or
// throws std::invalid_argument; keep_probability is in [0, 1]; the unbounded
// chain releases k values (or throws std::overflow_error); the range-restricted
// chain releases k values in [0, n]; each transition row of T(a_{i-1}, a_i)
// is a probability vector (entries >= -1e-12, sum 1 within 1e-9).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "core/levels.hpp"
#include "core/rng.hpp"
#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::int64_t n = static_cast<std::int64_t>(data[0]) * 20;
  const auto value = static_cast<std::int16_t>(data[1] | (data[2] << 8));
  const std::uint64_t seed = data[3];
  const std::string_view json(reinterpret_cast<const char*>(data) + 4, size - 4);

  std::vector<double> alphas;
  try {
    alphas = optdp::parse_levels(json);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  FUZZ_CHECK(!alphas.empty() && alphas.size() <= static_cast<std::size_t>(optdp::kMaxLevels));
  for (std::size_t i = 0; i < alphas.size(); ++i) {
    FUZZ_CHECK(alphas[i] > 0 && alphas[i] < 1);
    if (i) {
      FUZZ_CHECK(alphas[i] > alphas[i - 1]);
      const double c0 = optdp::keep_probability(alphas[i - 1], alphas[i]);
      FUZZ_CHECK_MSG(c0 >= 0 && c0 <= 1, "keep_probability(%.17g, %.17g) = %.17g", alphas[i - 1], alphas[i], c0);
    }
  }

  optdp::SeededRng rng(seed);
  const optdp::LevelChain chain(alphas);
  try {
    const auto r = chain.release(value, rng);
    FUZZ_CHECK(r.size() == alphas.size());
  } catch (const std::overflow_error&) {
  }

  try {
    const optdp::RangeLevelChain range(n, alphas);
    const auto r = range.release(value, rng);
    FUZZ_CHECK(r.size() == alphas.size());
    for (std::int64_t v : r) FUZZ_CHECK_MSG(v >= 0 && v <= n, "released %lld outside [0, %lld]", (long long)v, (long long)n);
    // Transition rows at a few observed values.
    for (int i = 1; i < static_cast<int>(alphas.size()); ++i) {
      for (std::int64_t o : {std::int64_t{0}, n / 2, n, r[static_cast<std::size_t>(i - 1)]}) {
        const auto row = range.transition_row(i, o);
        FUZZ_CHECK(row.size() == static_cast<std::size_t>(n + 1));
        double s = 0;
        for (double p : row) {
          FUZZ_CHECK_MSG(p >= -1e-12, "T(%.17g, %.17g) row %lld has entry %.17g", alphas[i - 1], alphas[i],
                         (long long)o, p);
          s += p;
        }
        FUZZ_CHECK_MSG(std::fabs(s - 1) <= 1e-9, "T(%.17g, %.17g) row %lld sums to %.17g (n = %lld)", alphas[i - 1],
                       alphas[i], (long long)o, s, (long long)n);
      }
    }
  } catch (const std::invalid_argument&) {
    FUZZ_CHECK(n > 5000);
  }
  return 0;
}
