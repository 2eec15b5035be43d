#include "core/rng.hpp"

#include <sodium.h>

#include <pthread.h>

#include <stdexcept>

namespace optdp {

std::atomic<unsigned> Rng::fork_generation_{0};

namespace {
void after_fork_in_child() { Rng::fork_generation_bump(); }
struct ForkHandler {
  ForkHandler() { pthread_atfork(nullptr, nullptr, after_fork_in_child); }
} const install_fork_handler;
}  // namespace

void Rng::fork_generation_bump() { fork_generation_.fetch_add(1, std::memory_order_relaxed); }

Rng::~Rng() = default;

void Rng::refill_buffer() {
  generation_ = fork_generation();
  generate(buf_, kBufSize);
  unused_ += kBufSize - pos_;
  refilled_ += kBufSize;
  pos_ = 0;
}

std::uint64_t Rng::below(std::uint64_t n) {
  if (n <= 1) return 0;
  // Accept x < limit, the largest multiple of n that fits in 2^64.
  const std::uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;
  for (;;) {
    const std::uint64_t x = u64();
    if (x <= limit) return x % n;
  }
}

OsRng::OsRng() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium could not be initialised");
}

void OsRng::generate(unsigned char* buf, std::size_t n) {
  // A fresh key from the OS for every block; the keystream is the block.
  unsigned char key[crypto_stream_chacha20_KEYBYTES];
  static const unsigned char nonce[crypto_stream_chacha20_NONCEBYTES] = {0};
  randombytes_buf(key, sizeof key);
  crypto_stream_chacha20(buf, n, nonce, key);
  sodium_memzero(key, sizeof key);
}

SeededRng::SeededRng(std::uint64_t seed) {
  if (sodium_init() < 0) throw std::runtime_error("libsodium could not be initialised");
  unsigned char in[8];
  for (int i = 0; i < 8; ++i) in[i] = static_cast<unsigned char>(seed >> (8 * i));
  crypto_generichash(key_, sizeof key_, in, sizeof in, nullptr, 0);
}

void SeededRng::generate(unsigned char* buf, std::size_t n) {
  static const unsigned char nonce[crypto_stream_chacha20_NONCEBYTES] = {0};
  std::memset(buf, 0, n);
  crypto_stream_chacha20_xor_ic(buf, buf, n, nonce, block_, key_);
  block_ += n / 64;
}

}  // namespace optdp
