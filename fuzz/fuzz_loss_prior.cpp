// fuzz_loss_prior: Loss::parse and parse_prior (core/loss.hpp), and the
// optimal remap (core/remap.hpp) of the inputs that parse.
//
// Input: byte 0 gives n = byte % 12 (the digits '0'..'9' give n = 0..9),
// byte 1 gives alpha (see alpha_of below), the rest is "<loss>|<prior>"
// split at the first '|' (no '|': all of it is the loss, the prior is
// 'uniform').
//
// Parsers must return or throw std::invalid_argument. When both parse, with
// G = GeometricMechanism(n, alpha):
//   - optimal_remap(G, loss, prior) has n+1 answers, each in [0, n];
//   - the prior is n+1 non-negative numbers summing to 1;
//   - each answer r*(o) minimises the posterior expected loss
//     sum_i prior_i G[i][o] l(i, r) over r (checked in the log domain, to a
//     relative 1e-9), so remap o G is no worse than answering o itself;
//   - remap_loss equals expected_loss of the dense remapped mechanism.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/loss.hpp"
#include "core/mechanism.hpp"
#include "core/remap.hpp"
#include "fuzz_check.hpp"

namespace {

double alpha_of(std::uint8_t b) {
  switch (b) {
    case 0: return std::numeric_limits<double>::denorm_min();
    case 1: return 1e-300;
    case 2: return 1e-20;
    case 254: return 0.9999999999;
    case 255: return std::nextafter(1.0, 0.0);
    default: return b / 256.0;
  }
}

bool close(double a, double b, double scale) {
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(scale)) return true;  // overflowing losses: not checked
  return std::fabs(a - b) <= 1e-9 * scale + 1e-300;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::int64_t n = data[0] % 12;
  const double alpha = alpha_of(data[1]);
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const auto bar = rest.find('|');
  const std::string_view loss_text = rest.substr(0, bar);
  const std::string_view prior_text = bar == std::string_view::npos ? std::string_view("uniform") : rest.substr(bar + 1);

  std::optional<optdp::Loss> loss;
  std::vector<double> prior;
  try {
    loss = optdp::Loss::parse(loss_text, n);
    FUZZ_CHECK(loss->n() == n);
    for (std::int64_t i = 0; i <= n; ++i)
      for (std::int64_t r = 0; r <= n; ++r) FUZZ_CHECK((*loss)(i, r) >= 0);  // non-negative, not NaN
  } catch (const std::invalid_argument&) {
  }
  try {
    prior = optdp::parse_prior(prior_text, n);
    FUZZ_CHECK(prior.size() == static_cast<std::size_t>(n + 1));
    double total = 0;
    for (double p : prior) {
      FUZZ_CHECK(p >= 0 && std::isfinite(p));
      total += p;
    }
    FUZZ_CHECK(std::fabs(total - 1) < 1e-9);
  } catch (const std::invalid_argument&) {
    prior.clear();
  }
  if (!loss || prior.empty()) return 0;

  const optdp::GeometricMechanism g(n, alpha);
  const auto answer = optdp::optimal_remap(g, *loss, prior);
  FUZZ_CHECK(answer.size() == static_cast<std::size_t>(n + 1));
  for (std::int64_t a : answer) FUZZ_CHECK(a >= 0 && a <= n);

  // Optimality of each answer: posterior weights w_i ∝ prior_i alpha^|i-o| c_o,
  // in the log domain (c_o is the same for every i and cancels).
  const double log_alpha = std::log(alpha);
  for (std::int64_t o = 0; o <= n; ++o) {
    std::vector<double> lw(static_cast<std::size_t>(n + 1), -INFINITY);
    double top = -INFINITY;
    for (std::int64_t i = 0; i <= n; ++i) {
      const double p = prior[static_cast<std::size_t>(i)];
      if (p > 0) lw[static_cast<std::size_t>(i)] = std::log(p) + static_cast<double>(std::llabs(i - o)) * log_alpha;
      top = std::max(top, lw[static_cast<std::size_t>(i)]);
    }
    auto cost = [&](std::int64_t r) {
      double c = 0;
      for (std::int64_t i = 0; i <= n; ++i) c += std::exp(lw[static_cast<std::size_t>(i)] - top) * (*loss)(i, r);
      return c;
    };
    const double chosen = cost(answer[static_cast<std::size_t>(o)]);
    double best = INFINITY, scale = 0;
    for (std::int64_t r = 0; r <= n; ++r) {
      const double c = cost(r);
      best = std::min(best, c);
      scale = std::max(scale, c);
    }
    FUZZ_CHECK_MSG(!std::isfinite(chosen) || chosen <= best + 1e-9 * scale + 1e-300,
                   "n=%lld alpha=%.17g o=%lld: answer %lld has posterior loss %.17g, but the best is %.17g", (long long)n,
                   alpha, (long long)o, (long long)answer[static_cast<std::size_t>(o)], chosen, best);
  }

  // The fast loss agrees with the dense computation.
  const double fast = optdp::remap_loss(g, answer, *loss, prior);
  const auto m = optdp::remapped_mechanism(g, answer);
  FUZZ_CHECK(m.size() == static_cast<std::size_t>(n + 1));
  for (const auto& row : m) {
    double s = 0;
    for (double v : row) {
      FUZZ_CHECK(v >= 0);
      s += v;
    }
    FUZZ_CHECK_MSG(std::fabs(s - 1) < 1e-9, "row of remap o G sums to %.17g", s);
  }
  const double dense = optdp::expected_loss(m, *loss, prior);
  double lmax = 0;
  for (std::int64_t i = 0; i <= n; ++i)
    for (std::int64_t r = 0; r <= n; ++r) lmax = std::max(lmax, (*loss)(i, r));
  FUZZ_CHECK_MSG(fast >= 0 && close(fast, dense, lmax), "remap_loss %.17g, dense expected_loss %.17g", fast, dense);
  // No worse than taking the output at face value.
  std::vector<std::int64_t> identity(static_cast<std::size_t>(n + 1));
  for (std::int64_t o = 0; o <= n; ++o) identity[static_cast<std::size_t>(o)] = o;
  const double face = optdp::remap_loss(g, identity, *loss, prior);
  FUZZ_CHECK_MSG(!std::isfinite(face) || fast <= face + 1e-9 * lmax + 1e-300, "optimal %.17g > face value %.17g", fast,
                 face);
  return 0;
}
