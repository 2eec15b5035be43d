// pld_bench: the cost of accounting at the privacy curve (core/pld.hpp,
// docs/accounting.md "The ledger and the PLD"; issue 29, item 4). Rows:
//   AccountGeometricHistory/n   zcdp::account of n geometric counts at sd 200
//                               plus one more on (1, 1e-6): zCDP does not fit
//                               past 973, so the PLD is evaluated (what a
//                               ledger's charge costs there today)
//   AccountMixedHistory/n       the same with the history spread over 10
//                               distinct epsilons (10 groups to convolve)
//   AccountGaussianHistory/n    zcdp::account of n discrete Gaussian counts
//                               at sigma 200 plus one more on (1, 1e-6): one
//                               evaluation of the curve (what a charge costs
//                               when the curve cache has no bound for it)
//   ComposeGaussian/n           one discrete Gaussian release (sigma 200, grid
//                               1/80000) composed onto a PLD of n such
//                               releases by Pld::compose (direct convolution)
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/accounting.hpp"
#include "core/pld.hpp"
#include "core/privacy.hpp"

namespace {

double eps_at_sd200() {
  const double y = (-2 + std::sqrt(4.0 + 320000.0)) / 80000.0;
  return optdp::epsilon_of_alpha(1 - y);
}

void account_geometric_history(benchmark::State& state) {
  using optdp::zcdp::Entry;
  const std::vector<Entry> h(static_cast<std::size_t>(state.range(0)), Entry::pure(eps_at_sd200()));
  for (auto _ : state) {
    const auto a = optdp::zcdp::account(h, Entry::pure(eps_at_sd200()), 1, {1.0, 1e-6});
    benchmark::DoNotOptimize(a.pld_delta);
    if (!a.pld_evaluated) state.SkipWithError("the PLD was not evaluated");
  }
}
BENCHMARK(account_geometric_history)->Name("AccountGeometricHistory")->Arg(1000)->Arg(1100)->Unit(benchmark::kMillisecond);

void account_mixed_history(benchmark::State& state) {
  using optdp::zcdp::Entry;
  std::vector<Entry> h;
  const double e = eps_at_sd200();
  for (std::int64_t i = 0; i < state.range(0); ++i) h.push_back(Entry::pure(e * (1 + 0.01 * static_cast<double>(i % 10))));
  for (auto _ : state) {
    const auto a = optdp::zcdp::account(h, Entry::pure(e), 1, {1.0, 1e-6});
    benchmark::DoNotOptimize(a.pld_delta);
    if (!a.pld_evaluated) state.SkipWithError("the PLD was not evaluated");
  }
}
BENCHMARK(account_mixed_history)->Name("AccountMixedHistory")->Arg(1000)->Unit(benchmark::kMillisecond);

void account_gaussian_history(benchmark::State& state) {
  using optdp::zcdp::Entry;
  optdp::zcdp::History h;
  const double rho = 1 / (2 * 200.0 * 200.0);
  h.add(Entry::gaussian(rho, 1), static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    const auto a = optdp::zcdp::account(h, Entry::gaussian(rho, 1), 1, {1.0, 1e-6});
    benchmark::DoNotOptimize(a.pld_delta);
    if (!a.pld_evaluated) state.SkipWithError("the PLD was not evaluated");
  }
}
BENCHMARK(account_gaussian_history)->Name("AccountGaussianHistory")->Arg(2235)->Unit(benchmark::kMillisecond);

void compose_gaussian(benchmark::State& state) {
  const optdp::pld::Pld one = optdp::pld::Pld::discrete_gaussian(40000, 1, 80000);
  const optdp::pld::Pld kept = one.self_compose(static_cast<std::uint64_t>(state.range(0)));
  for (auto _ : state) {
    const optdp::pld::Pld next = kept.compose(one);
    benchmark::DoNotOptimize(next.delta(1.0));
  }
}
BENCHMARK(compose_gaussian)->Name("ComposeGaussian")->Arg(10)->Arg(2000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
