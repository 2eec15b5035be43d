#include "sqlite/allowlist.hpp"

#include <algorithm>
#include <iterator>
#include <cctype>

#include "sqlite/api.hpp"

namespace optdp::sql {

namespace {

// The allow-list (docs/boundary.md, "Queries optdp runs", says why each entry
// cannot fail on a value, quote one, or make one longer than its inputs).
// Sorted, lower case (function_allowed searches it; a test checks the order).
constexpr std::string_view kAllowed[] = {
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "avg", "ceil", "ceiling", "coalesce", "cos",
    "cosh", "count", "cume_dist", "date", "datetime", "degrees", "dense_rank", "exp", "floor", "ifnull",
    "iif", "instr", "julianday", "length", "likelihood", "likely", "ln", "log", "log10", "log2", "lower",
    "ltrim", "max", "min", "mod", "nullif", "percent_rank", "pi", "pow", "power", "radians", "rank", "round",
    "row_number", "rtrim", "sign", "sin", "sinh", "sqrt", "substr", "substring", "tan", "tanh", "time",
    "total", "trim", "trunc", "typeof", "unixepoch", "unlikely", "upper",
};
static_assert(std::is_sorted(std::begin(kAllowed), std::end(kAllowed)));

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

int refuse(QueryCheck& check, std::string what) {
  if (check.refused.empty()) check.refused = std::move(what);
  return SQLITE_DENY;
}

}  // namespace

bool function_allowed(std::string_view name) {
  const std::string n = lower(name);
  return std::binary_search(std::begin(kAllowed), std::end(kAllowed), std::string_view(n));
}

int check_query(void* self, int action, const char* a, const char* b, const char* schema, const char*) {
  auto& check = *static_cast<QueryCheck*>(self);
  try {
    // optdp's own constant text on its read-only connection (the table-valued
    // pragmas ask for more than reads while they run, e.g. SQLITE_UPDATE of sqlite_master's columns).
    if (check.schema_only) return SQLITE_OK;
    switch (action) {
      case SQLITE_SELECT: return SQLITE_OK;
      case SQLITE_READ:
        if (check.may_read && !check.may_read(check.may_read_self, schema, a))
          return refuse(check, std::string("must not read table ") + (a ? a : "") +
                                   " (a private table: only private_groups' queries may read it)");
        return SQLITE_OK;
      case SQLITE_FUNCTION:
        if (b && function_allowed(b)) return SQLITE_OK;
        return refuse(check, std::string("must not call ") + (b ? b : "") +
                                 "() (optdp runs only functions that cannot fail on a value or quote one: "
                                 "docs/boundary.md)");
      case SQLITE_RECURSIVE:
        return refuse(check, "must not use a recursive CTE (its time and memory could depend on the rows)");
      default: return refuse(check, "must be a read-only query (SELECT)");
    }
  } catch (...) {  // std::bad_alloc building the message: refuse all the same
    return SQLITE_DENY;
  }
}

std::string refusal_message(const QueryCheck& check, const char* what) { return std::string(what) + " " + check.refused; }

}  // namespace optdp::sql
