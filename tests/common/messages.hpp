// Test helper: the message of the std::invalid_argument that f throws.
#pragma once

#include <stdexcept>
#include <string>

namespace optdp::test {

template <class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

}  // namespace optdp::test
