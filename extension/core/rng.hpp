// optdp core: sources of randomness.
//
// Every random bit optdp uses comes through an Rng. The shipped default is
// OsRng: each 4 KiB block of randomness is libsodium's ChaCha20 keystream
// under a fresh 256-bit key drawn from the operating system's CSPRNG
// (randombytes_buf, one getrandom call per block), so a noisy answer costs
// a few bytes of a block rather than a system call. SeededRng is libsodium's
// ChaCha20 stream keyed by a hash of a 64-bit seed: deterministic, for tests
// and for the SQL function dp_seed(n). It is never the default.
//
// Fork safety: a child process must never reuse bytes its parent buffered
// (both would release the same noise). A pthread_atfork child handler bumps
// a global generation; every Rng discards its buffer when the generation it
// filled it in is not the current one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <atomic>

namespace optdp {

class Rng {
 public:
  Rng() = default;
  Rng(const Rng&) = delete;
  Rng& operator=(const Rng&) = delete;
  virtual ~Rng();

  // One uniformly random byte.
  std::uint8_t byte() {
    if (pos_ == kBufSize || generation_ != fork_generation()) [[unlikely]] refill_buffer();
    return buf_[pos_++];
  }
  // 64 uniformly random bits.
  std::uint64_t u64() {
    if (kBufSize - pos_ < 8 || generation_ != fork_generation()) [[unlikely]] refill_buffer();
    std::uint64_t v;
    std::memcpy(&v, buf_ + pos_, 8);
    pos_ += 8;
    return v;
  }
  // A uniform integer in [0, n), n >= 1, exactly (rejection, no modulo bias).
  std::uint64_t below(std::uint64_t n);
  // A fair coin.
  bool coin() { return byte() & 1u; }
  // The number of random bytes handed out so far (byte() 1, u64() 8, below()
  // 8 per draw), not counting bytes of a block left unused: for tests that
  // count the randomness an operation draws.
  std::uint64_t bytes_drawn() const { return refilled_ - unused_ - (kBufSize - pos_); }

  // Incremented in every child process after fork().
  static void fork_generation_bump();
  static unsigned fork_generation() { return fork_generation_.load(std::memory_order_relaxed); }

  // "os" or "seeded": what dp_rng() reports.
  virtual const char* kind() const = 0;

 protected:
  // Fill buf with n fresh random bytes (n is a multiple of 64).
  virtual void generate(unsigned char* buf, std::size_t n) = 0;

 private:
  static constexpr std::size_t kBufSize = 4096;
  void refill_buffer();
  static std::atomic<unsigned> fork_generation_;
  alignas(64) unsigned char buf_[kBufSize];
  std::size_t pos_ = kBufSize;
  unsigned generation_ = 0;
  std::uint64_t refilled_ = 0, unused_ = 0;  // bytes generated; bytes of blocks refilled before use
};

// The operating system's CSPRNG (libsodium randombytes_buf).
class OsRng final : public Rng {
 public:
  OsRng();
  const char* kind() const override { return "os"; }

 protected:
  void generate(unsigned char* buf, std::size_t n) override;
};

// Deterministic ChaCha20 keystream: key = BLAKE2b-256(seed), nonce 0,
// block counter continuing across refills. Reproducible across machines.
class SeededRng final : public Rng {
 public:
  explicit SeededRng(std::uint64_t seed);
  const char* kind() const override { return "seeded"; }

 protected:
  void generate(unsigned char* buf, std::size_t n) override;

 private:
  unsigned char key_[32];
  std::uint64_t block_ = 0;
};

}  // namespace optdp
