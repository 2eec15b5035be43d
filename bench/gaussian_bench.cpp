// gaussian_bench: time per sample of the exact discrete Gaussian against the
// two-sided geometric sampler with the same standard deviation, both on OsRng
// (what SQL uses). Rows:
//   DiscreteGaussian/sigma:S   optdp::DiscreteGaussian(S^2)
//   TwoSidedGeometric/sd:S     optdp::TwoSidedGeometric(alpha), sqrt(2 alpha)/(1 - alpha) = S
// Target (bench/README.md): DiscreteGaussian within 3x of TwoSidedGeometric at S = 10 and 10^4.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>

#include "core/gaussian.hpp"
#include "core/rng.hpp"
#include "core/samplers.hpp"

namespace {

// The alpha whose two-sided geometric has standard deviation sd (bisection).
double alpha_for_sd(double sd) {
  double lo = 0, hi = 1;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (std::sqrt(2 * mid) / (1 - mid) > sd ? hi : lo) = mid;
  }
  return lo;
}

void discrete_gaussian(benchmark::State& state) {
  optdp::OsRng rng;
  const double sigma = static_cast<double>(state.range(0));
  const optdp::DiscreteGaussian g(sigma * sigma);
  for (auto _ : state) {
    std::int64_t z = g(rng);
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations());
}

void two_sided_geometric(benchmark::State& state) {
  optdp::OsRng rng;
  const optdp::TwoSidedGeometric g(alpha_for_sd(static_cast<double>(state.range(0))));
  for (auto _ : state) {
    std::int64_t z = g(rng);
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(discrete_gaussian)->Name("DiscreteGaussian")->ArgName("sigma")->Arg(10)->Arg(10000);
BENCHMARK(two_sided_geometric)->Name("TwoSidedGeometric")->ArgName("sd")->Arg(10)->Arg(10000);
BENCHMARK_MAIN();
