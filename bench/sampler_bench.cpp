// sampler_bench: throughput of optdp's secure two-sided geometric sampler
// against an insecure baseline, and of the OS CSPRNG underneath it.
//
// Rows (one sample per iteration, so "time" is the time per sample):
//   TwoSidedGeometric/OsRng/alpha:A      optdp::TwoSidedGeometric(A) on optdp::OsRng (what SQL uses)
//   TwoSidedGeometric/mt19937_64/alpha:A baseline: std::mt19937_64 and
//                                        G1 - G2 with G1, G2 ~ std::geometric_distribution<int64_t>(1 - A),
//                                        which has exactly the two-sided geometric(A) law
//   TwoSidedGeometric/SeededRng/alpha:A  optdp sampler on the ChaCha20 SeededRng (for information)
//   Rng/...                              raw generator throughput (bytes/s, for information)
//
// By default every benchmark runs 7 times in random interleaved order and the
// console shows aggregates; afterwards the median CPU time per sample is used
// to print secure/baseline ratios per alpha. Any Google Benchmark flag given on
// the command line overrides these defaults (e.g. --benchmark_repetitions=3,
// --benchmark_filter=alpha:0.5$).
#include <benchmark/benchmark.h>
#include <sodium.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/rng.hpp"
#include "core/samplers.hpp"

namespace {

struct Alpha {
  double value;
  const char* label;
};
constexpr Alpha kAlphas[] = {{0.5, "0.5"}, {0.9, "0.9"}, {0.99, "0.99"}, {1 - 1e-6, "0.999999"}};

// The target from the issue: secure / baseline time per sample at alpha 0.5.
constexpr const char* kTargetAlpha = "0.5";
constexpr double kTargetLimit = 3.0;

std::string name(const char* family, const char* rng, const Alpha& a) {
  return std::string(family) + "/" + rng + "/alpha:" + a.label;
}

void secure(benchmark::State& state, optdp::Rng& rng, double alpha) {
  const optdp::TwoSidedGeometric sampler(alpha);
  for (auto _ : state) {
    std::int64_t z = sampler(rng);
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations());
}

void baseline(benchmark::State& state, double alpha) {
  std::mt19937_64 gen(12345);
  std::geometric_distribution<std::int64_t> geo(1 - alpha);  // P[k] = alpha^k (1 - alpha)
  for (auto _ : state) {
    std::int64_t z = geo(gen) - geo(gen);
    benchmark::DoNotOptimize(z);
  }
  state.SetItemsProcessed(state.iterations());
}

void rng_u64(benchmark::State& state, optdp::Rng& rng) {
  for (auto _ : state) {
    std::uint64_t v = rng.u64();
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(state.iterations() * 8);
}

void rng_byte(benchmark::State& state, optdp::Rng& rng) {
  for (auto _ : state) {
    std::uint8_t v = rng.byte();
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(state.iterations());
}

void randombytes_4k(benchmark::State& state) {
  alignas(64) unsigned char buf[4096];
  for (auto _ : state) {
    randombytes_buf(buf, sizeof buf);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(sizeof buf));
}

void mt_u64(benchmark::State& state) {
  std::mt19937_64 gen(12345);
  for (auto _ : state) {
    std::uint64_t v = gen();
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(state.iterations() * 8);
}

// An Rng that counts the bytes it hands out (at 4 KiB granularity), to report
// how many random bytes one sample consumes.
class CountingRng final : public optdp::Rng {
 public:
  const char* kind() const override { return "counting"; }
  std::uint64_t generated = 0;

 protected:
  void generate(unsigned char* buf, std::size_t n) override {
    randombytes_buf(buf, n);
    generated += n;
  }
};

// Console output as usual, and keeps each benchmark's CPU time per iteration
// (ns): the "median" aggregate when there are repetitions, else the runs.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(OutputOptions opts) : ConsoleReporter(opts) {}
  void ReportRuns(const std::vector<Run>& reports) override {
    for (const Run& r : reports) {
      if (r.error_occurred) continue;
      const double ns = r.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(r.time_unit) * 1e9;
      const std::string key = r.run_name.function_name;
      if (r.run_type == Run::RT_Aggregate) {
        if (r.aggregate_name == "median") median_[key] = ns;
      } else {
        runs_[key].push_back(ns);
      }
    }
    ConsoleReporter::ReportRuns(reports);
  }

  // Median CPU ns per iteration of a benchmark, or a negative value if it did not run.
  double ns(const std::string& key) const {
    if (auto it = median_.find(key); it != median_.end()) return it->second;
    auto it = runs_.find(key);
    if (it == runs_.end() || it->second.empty()) return -1;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  }

 private:
  std::map<std::string, double> median_;
  std::map<std::string, std::vector<double>> runs_;
};

}  // namespace

int main(int argc, char** argv) {
  if (sodium_init() < 0) {
    std::fprintf(stderr, "sampler_bench: libsodium could not be initialised\n");
    return 1;
  }

  // Defaults first: flags given by the user come later and win.
  std::vector<char*> args{argv[0]};
  static char rep[] = "--benchmark_repetitions=7";
  static char interleave[] = "--benchmark_enable_random_interleaving=true";
  static char aggregates[] = "--benchmark_display_aggregates_only=true";
  args.insert(args.end(), {rep, interleave, aggregates});
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;

  for (const Alpha& a : kAlphas) {
    const double alpha = a.value;
    benchmark::RegisterBenchmark(name("TwoSidedGeometric", "OsRng", a).c_str(),
                                 [alpha](benchmark::State& s) {
                                   optdp::OsRng rng;
                                   secure(s, rng, alpha);
                                 });
    benchmark::RegisterBenchmark(name("TwoSidedGeometric", "mt19937_64", a).c_str(),
                                 [alpha](benchmark::State& s) { baseline(s, alpha); });
    benchmark::RegisterBenchmark(name("TwoSidedGeometric", "SeededRng", a).c_str(),
                                 [alpha](benchmark::State& s) {
                                   optdp::SeededRng rng(42);
                                   secure(s, rng, alpha);
                                 });
  }
  static optdp::OsRng os_rng;
  static optdp::SeededRng seeded_rng(42);
  benchmark::RegisterBenchmark("Rng/OsRng/u64", [](benchmark::State& s) { rng_u64(s, os_rng); });
  benchmark::RegisterBenchmark("Rng/OsRng/byte", [](benchmark::State& s) { rng_byte(s, os_rng); });
  benchmark::RegisterBenchmark("Rng/SeededRng/u64", [](benchmark::State& s) { rng_u64(s, seeded_rng); });
  benchmark::RegisterBenchmark("Rng/randombytes_buf/4096B", randombytes_4k);
  benchmark::RegisterBenchmark("Rng/mt19937_64/u64", mt_u64);

  RatioReporter reporter(isatty(fileno(stdout)) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);

  // Random bytes one sample consumes (not timed).
  std::printf("\nrandom bytes per two-sided sample (OsRng-equivalent, 1e6 samples):\n");
  for (const Alpha& a : kAlphas) {
    CountingRng rng;
    const optdp::TwoSidedGeometric sampler(a.value);
    constexpr int kSamples = 1'000'000;
    std::int64_t sink = 0;
    for (int i = 0; i < kSamples; ++i) sink += sampler(rng);
    benchmark::DoNotOptimize(sink);
    std::printf("  alpha %-9s %6.2f bytes/sample (%d digits per magnitude)\n", a.label,
                static_cast<double>(rng.generated) / kSamples, optdp::Geometric(a.value).digits());
  }

  std::printf("\nsecure / baseline, median CPU time per sample (same run):\n");
  std::printf("  %-9s %14s %16s %10s %18s\n", "alpha", "OsRng ns", "mt19937_64 ns", "ratio", "SeededRng ratio");
  for (const Alpha& a : kAlphas) {
    const double s = reporter.ns(name("TwoSidedGeometric", "OsRng", a));
    const double b = reporter.ns(name("TwoSidedGeometric", "mt19937_64", a));
    const double k = reporter.ns(name("TwoSidedGeometric", "SeededRng", a));
    if (s < 0 || b < 0) {
      std::printf("  %-9s (not run)\n", a.label);
      continue;
    }
    std::printf("  %-9s %14.2f %16.2f %10.3f %18.3f\n", a.label, s, b, s / b, k < 0 ? 0.0 : k / b);
  }
  for (const Alpha& a : kAlphas) {
    if (std::string(a.label) != kTargetAlpha) continue;
    const double s = reporter.ns(name("TwoSidedGeometric", "OsRng", a));
    const double b = reporter.ns(name("TwoSidedGeometric", "mt19937_64", a));
    if (s < 0 || b < 0) break;
    std::printf("\ntarget: secure / baseline at alpha %s = %.3f (limit %.1f): %s\n", a.label, s / b, kTargetLimit,
                s / b <= kTargetLimit ? "MET" : "NOT MET");
  }
  benchmark::Shutdown();
  return 0;
}
