#include <gtest/gtest.h>

#include <array>
#include <set>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "core/rng.hpp"
#include "stats.hpp"

using namespace optdp;

TEST(SeededRng, SameSeedSameStreamAcrossRefills) {
  SeededRng a(42), b(42);
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(a.u64(), b.u64()) << i;  // > 4 KiB: crosses refills
}

TEST(SeededRng, DifferentSeedsDiffer) {
  SeededRng a(1), b(2);
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += a.u64() == b.u64();
  EXPECT_EQ(equal, 0);
}

TEST(SeededRng, StreamContinuesAcrossRefillsWithoutRepeating) {
  SeededRng a(7);
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 20000; ++i) seen.insert(a.u64());
  EXPECT_EQ(seen.size(), 20000u);  // a repeated block would repeat words
}

TEST(SeededRng, BytesAreUniform) {
  SeededRng r(3);
  std::vector<std::int64_t> counts(256, 0);
  for (int i = 0; i < 256 * 2000; ++i) ++counts[r.byte()];
  auto chi = test::chi_square(counts, 0, [](std::int64_t) { return 1.0 / 256; }, 0, 0);
  EXPECT_GT(chi.p_value, 1e-4) << chi.statistic;
}

TEST(Rng, BelowIsUniformAndInRange) {
  SeededRng r(11);
  for (std::uint64_t n : {1ull, 2ull, 3ull, 7ull, 1000ull}) {
    std::vector<std::int64_t> counts(n, 0);
    const int draws = static_cast<int>(n) * 3000;
    for (int i = 0; i < draws; ++i) {
      const auto v = r.below(n);
      ASSERT_LT(v, n);
      ++counts[v];
    }
    if (n == 1) continue;
    auto chi = test::chi_square(counts, 0, [n](std::int64_t) { return 1.0 / static_cast<double>(n); }, 0, 0);
    EXPECT_GT(chi.p_value, 1e-4) << "n=" << n;
  }
  // A modulus near 2^64 still gives values below it.
  const std::uint64_t big = (1ull << 63) + 12345;
  for (int i = 0; i < 1000; ++i) ASSERT_LT(r.below(big), big);
}

TEST(OsRng, ProducesFreshBytes) {
  OsRng r;
  EXPECT_STREQ(r.kind(), "os");
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(r.u64());
  EXPECT_EQ(seen.size(), 1000u);  // 64-bit collisions would be a broken generator
}

// A child process must not replay the bytes its parent had buffered.
TEST(OsRng, ForkedChildDoesNotReuseTheParentsBuffer) {
  OsRng r;
  (void)r.u64();  // fill the buffer; 4088 bytes remain buffered
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::uint64_t v[4] = {r.u64(), r.u64(), r.u64(), r.u64()};
    const auto w = write(fds[1], v, sizeof v);
    _exit(w == sizeof v ? 0 : 1);
  }
  std::uint64_t mine[4] = {r.u64(), r.u64(), r.u64(), r.u64()};
  std::uint64_t child[4] = {};
  ASSERT_EQ(read(fds[0], child, sizeof child), static_cast<ssize_t>(sizeof child));
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(status, 0);
  EXPECT_NE(std::memcmp(mine, child, sizeof mine), 0);
  close(fds[0]);
  close(fds[1]);
}
