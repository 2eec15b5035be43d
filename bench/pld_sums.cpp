// pld_sums: how many sums a budget takes when each is accounted by its own
// privacy loss distribution instead of the pure eps pair that the ledgers
// use for staircase_sum and laplace_sum (docs/accounting.md, "What is not
// done yet"). For each eps: the largest k whose k-fold composition has
// delta(E) <= delta on (E, delta) = (1, 1e-6), for randomized response at
// eps (what the ledger accounts), the discrete Laplace at alpha = e^(-eps/D)
// and the integer staircase at b = e^-eps with its L1-optimal r, both with
// sensitivity D grid steps. Each by binary search on Pld::self_compose at
// one resolution, so the three are rounded alike, at two resolutions: 100
// and 300 grid steps per eps (the grid rounds every loss up, so a finer
// one accepts more).
//   cmake --build build-bench --target pld_sums && build-bench/bench/pld_sums
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>

#include "core/pld.hpp"
#include "core/staircase.hpp"

namespace {

using optdp::pld::Pld;

std::uint64_t most_releases(const Pld& one, double E, double delta) {
  std::uint64_t lo = 0, hi = 1;
  while (one.self_compose(hi).delta(E) <= delta) {
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    (one.self_compose(mid).delta(E) <= delta ? lo : hi) = mid;
  }
  return lo;
}

}  // namespace

int main() {
  const double E = 1.0, delta = 1e-6;
  const std::int64_t D = 256;
  std::printf("(E, delta) = (%g, %g), sensitivity D = %lld grid steps\n", E, delta, static_cast<long long>(D));
  std::printf("%8s %10s %12s %10s %16s\n", "eps", "resolution", "pure (RR)", "staircase", "discrete Laplace");
  for (double eps : {1.0, 0.3, 0.1, 0.03, 0.01}) for (double steps : {100.0, 300.0}) {
    const double N = std::ceil(steps / eps);
    const double b = std::exp(-eps);
    const std::int64_t r = optdp::IntegerStaircase::optimal_r(eps, D, optdp::Cost::L1);
    const std::uint64_t rr = most_releases(Pld::pure(eps, N), E, delta);
    const std::uint64_t st = most_releases(Pld::staircase(b, D, r, N), E, delta);
    const std::uint64_t la = most_releases(Pld::discrete_laplace(std::exp(-eps / static_cast<double>(D)), D, N), E, delta);
    std::printf("%8g %10g %12llu %10llu %16llu\n", eps, N, static_cast<unsigned long long>(rr),
                static_cast<unsigned long long>(st), static_cast<unsigned long long>(la));
  }
  return 0;
}
