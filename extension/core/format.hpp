// optdp core: how numbers appear in messages.
#pragma once

#include <string>

namespace optdp {

// Shortest text that reads back as the same double: "0.5", "1e-300",
// "inf", "-inf", "NaN".
std::string format_double(double v);

}  // namespace optdp
