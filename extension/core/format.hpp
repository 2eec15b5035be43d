// optdp core: how numbers appear in messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace optdp {

// Shortest text that reads back as the same double: "0.5", "1e-300",
// "inf", "-inf", "NaN".
std::string format_double(double v);

// A figure optdp computed (what the ledger has spent, what a release costs),
// as people read it: 4 significant digits, written as format_double writes
// the 4-digit decimal ("4.459", "0.08777", "1e-05"). Arguments a message
// quotes back stay exact (format_double): they are what the caller wrote.
// The exact values are what the functions that return them give
// (dp_ledger_accounts(), dp_budget_spent()).
//   Nearest: the 4-digit decimal nearest to v.
//   Up:      the least 4-digit decimal that reads back as a double >= v
//            (what is spent or costs: never shown as less than it is);
//   Down:    the greatest one that reads back as a double <= v (what a
//            budget allows: never shown as more than it is).
// So a sum of figures rounded Up that exceeds a figure rounded Down says
// truly that a release does not fit. NaN and infinities as format_double.
enum class Rounding { Nearest, Up, Down };
std::string format_figure(double v, Rounding r = Rounding::Nearest);

// A text as messages quote it: 'abc'. At most max_bytes bytes of it, never
// cut inside a UTF-8 character, then "..." inside the quotes; NUL bytes
// shown as \0 (so that "l1" followed by a NUL and more is not shown as
// 'l1'). The result is valid UTF-8 if the text is.
std::string quote_text(std::string_view text, std::size_t max_bytes = 40);

// A scalar's arguments can be a row's values, so each engine's binding shows
// them in a message only when it knows none is (SQLite: every argument bound;
// PostgreSQL: every argument a constant or a query parameter); otherwise the
// message goes through hide_values(). The text that stands for a value not shown:
inline constexpr const char* kValueNotShown = "a value not shown (it may be a row's)";
// The message without the values it quotes (sql/catalogue.py hide_values()
// is the same rule): the part after the first ", but " becomes
// "is <kValueNotShown>" when it began with "is ", otherwise "the values are
// not shown (they may be a row's)"; before it, values derived from other
// arguments go too: "[lo, n] = [0, 4]" becomes "[lo, n]", "a 5x5 matrix for
// n = 4" "an (n+1)x(n+1) matrix", "n+1 = 5 entries" "n+1 entries", and
// "the ledger '<path>'" "the ledger".
std::string hide_values(std::string_view message);

}  // namespace optdp
