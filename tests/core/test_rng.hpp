// Test doubles for the core: an Rng that replays scripted bytes. Kept out of
// the shipped code.
#pragma once

#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/rng.hpp"

namespace optdp::test {

// Replays the given bytes, then zeros. Each refill hands out 64 bytes, so
// scripts longer than 4 KiB are fine.
class ScriptedRng final : public Rng {
 public:
  explicit ScriptedRng(std::vector<unsigned char> bytes) : bytes_(std::move(bytes)) {}
  const char* kind() const override { return "scripted"; }
  std::size_t consumed_script() const { return pos_; }

 protected:
  void generate(unsigned char* buf, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) buf[i] = pos_ < bytes_.size() ? bytes_[pos_++] : 0;
  }

 private:
  std::vector<unsigned char> bytes_;
  std::size_t pos_ = 0;
};

}  // namespace optdp::test
