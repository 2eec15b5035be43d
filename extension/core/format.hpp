// optdp core: how numbers appear in messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace optdp {

// Shortest text that reads back as the same double: "0.5", "1e-300",
// "inf", "-inf", "NaN".
std::string format_double(double v);

// A text as messages quote it: 'abc'. At most max_bytes bytes of it, never
// cut inside a UTF-8 character, then "..." inside the quotes; NUL bytes
// shown as \0 (so that "l1" followed by a NUL and more is not shown as
// 'l1'). The result is valid UTF-8 if the text is.
std::string quote_text(std::string_view text, std::size_t max_bytes = 40);

}  // namespace optdp
