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
//   Selection/<method>/<shape>           one draw of core/selection over 10,000 candidates (SeededRng),
//                                        for score shapes that would make the time depend on the scores
//   SelectionExponents/<shape>           selection_exponents over 10,000 scores
// After the ratios it prints, per selection family, the slowest shape's median
// over the fastest's: the wall-clock check that the work counted by the test
// SelectionSamplers.WorkDoesNotDependOnTheScores takes the same time (tests
// assert no times).
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
#include "core/selection.hpp"

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

// Score shapes for the selection benchmarks: the extremes a query could aim
// at (docs/boundary.md; tests/core/selection_test.cpp counts their work).
constexpr std::size_t kSelectionK = 10000;
struct GammaShape {
  const char* label;
  __float128 gamma;  // every candidate but one best
};
constexpr GammaShape kGammaShapes[] = {
    {"gamma71.5", 71.5Q}, {"gamma72.5", 72.5Q}, {"tied", 0}, {"far", 1e6Q}, {"gamma0.7", 0.7Q}};

void selection_draw(benchmark::State& state, optdp::SelectionMethod m, __float128 g) {
  std::vector<__float128> gamma(kSelectionK, g);
  gamma[kSelectionK / 2] = 0;
  optdp::SeededRng rng(77);
  for (auto _ : state) {
    std::size_t r = optdp::sample_selection(rng, m, gamma);
    benchmark::DoNotOptimize(r);
  }
}

struct ScoreShape {
  const char* label;
  std::vector<double> scores;
};
std::vector<ScoreShape> score_shapes() {
  std::mt19937_64 gen(5);
  std::vector<double> tied(kSelectionK, 0), counts(kSelectionK), far(kSelectionK, -1e300);
  for (double& q : counts) q = static_cast<double>(gen() % 1000000);
  far[0] = 1e300;
  return {{"tied", tied}, {"counts", counts}, {"far", far}};
}

void selection_exponents(benchmark::State& state, const std::vector<double>& scores) {
  for (auto _ : state) {
    auto g = optdp::selection_exponents(scores, 1.0, 1.0);
    benchmark::DoNotOptimize(g.data());
  }
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
  const optdp::SelectionMethod methods[] = {optdp::SelectionMethod::Exponential,
                                            optdp::SelectionMethod::PermuteAndFlip};
  for (const auto m : methods)
    for (const GammaShape& sh : kGammaShapes) {
      const __float128 g = sh.gamma;
      benchmark::RegisterBenchmark(
          (std::string("Selection/") + optdp::selection_method_name(m) + "/" + sh.label).c_str(),
          [m, g](benchmark::State& st) { selection_draw(st, m, g); });
    }
  static const std::vector<ScoreShape> shapes = score_shapes();
  for (const ScoreShape& sh : shapes)
    benchmark::RegisterBenchmark((std::string("SelectionExponents/") + sh.label).c_str(),
                                 [&sh](benchmark::State& st) { selection_exponents(st, sh.scores); });

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
  // Selection: the slowest shape over the fastest, per family (medians of the same run).
  std::printf("\nselection, slowest / fastest score shape (median CPU time, same run):\n");
  auto spread = [&reporter](const std::string& family, const std::vector<std::string>& labels) {
    double lo = -1, hi = -1;
    for (const std::string& l : labels) {
      const double ns = reporter.ns(family + "/" + l);
      if (ns < 0) continue;
      lo = lo < 0 ? ns : std::min(lo, ns);
      hi = std::max(hi, ns);
    }
    if (lo > 0) std::printf("  %-34s %10.1f us to %10.1f us: %.3f\n", family.c_str(), lo / 1e3, hi / 1e3, hi / lo);
  };
  std::vector<std::string> gamma_labels, score_labels;
  for (const GammaShape& sh : kGammaShapes) gamma_labels.push_back(sh.label);
  for (const ScoreShape& sh : shapes) score_labels.push_back(sh.label);
  for (const auto m : methods) spread(std::string("Selection/") + optdp::selection_method_name(m), gamma_labels);
  spread("SelectionExponents", score_labels);
  benchmark::Shutdown();
  return 0;
}
