#include "sqlite/args.hpp"

#include "core/format.hpp"
#include "core/samplers.hpp"

namespace optdp::sql {

[[gnu::noinline]] double non_numeric_row_value(sqlite3_value* x) {
  sqlite3_value_numeric_type(x);  // applies numeric affinity, as sum() does
  const double v = sqlite3_value_double(x);
  return v == v ? v : 0.0;
}

std::string describe(sqlite3_value* v) {
  switch (sqlite3_value_type(v)) {
    case SQLITE_NULL:
      return "NULL";
    case SQLITE_INTEGER:
      return std::to_string(sqlite3_value_int64(v));
    case SQLITE_FLOAT: {
      std::string s = format_double(sqlite3_value_double(v));
      if (s.find_first_of(".eEnN") == std::string::npos) s += ".0";  // 1.0 is REAL, 1 is INTEGER
      return s;
    }
    case SQLITE_TEXT: {
      const char* t = reinterpret_cast<const char*>(sqlite3_value_text(v));
      if (!t) return "text ''";
      return "text " + quote_text(std::string_view(t, static_cast<std::size_t>(sqlite3_value_bytes(v))));
    }
    default:
    {
      const int n = sqlite3_value_bytes(v);
      return "a blob of " + std::to_string(n) + (n == 1 ? " byte" : " bytes");
    }
  }
}

double number_arg(sqlite3_value* v, const char* name) {
  const int t = sqlite3_value_type(v);
  if (t == SQLITE_FLOAT || t == SQLITE_INTEGER) return sqlite3_value_double(v);
  throw std::invalid_argument(std::string(name) + " must be a number, but is " + describe(v));
}

double alpha_arg(sqlite3_value* v, const char* name) {
  const double a = number_arg(v, name);
  if (sqlite3_value_type(v) == SQLITE_INTEGER || !(a > 0 && a < 1))
    throw std::invalid_argument(std::string(name) + " must be in (0, 1), but is " + describe(v));
  return a;
}

std::string_view text_arg(sqlite3_value* v, const char* name, const char* domain) {
  if (sqlite3_value_type(v) != SQLITE_TEXT)
    throw std::invalid_argument(std::string(name) + " must be text (" + domain + "), but is " + describe(v));
  const char* t = reinterpret_cast<const char*>(sqlite3_value_text(v));
  if (!t) throw std::bad_alloc();
  return std::string_view(t, static_cast<std::size_t>(sqlite3_value_bytes(v)));
}

std::int64_t integer_arg(sqlite3_value* v, const char* name) {
  if (sqlite3_value_type(v) == SQLITE_INTEGER) return sqlite3_value_int64(v);
  throw std::invalid_argument(std::string(name) + " must be an integer, but is " + describe(v));
}

void require_same_number(sqlite3_value* v, double first, const char* name) {
  const int t = sqlite3_value_type(v);
  if ((t == SQLITE_FLOAT || t == SQLITE_INTEGER) && sqlite3_value_double(v) == first) return;
  throw std::invalid_argument(std::string(name) + " must be the same in every row of a group, but changed from " +
                              format_double(first) + " to " + describe(v));
}

void report_current_exception(sqlite3_context* ctx, const char* function) noexcept {
  try {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      sqlite3_result_error_nomem(ctx);
    } catch (const CallError& e) {
      sqlite3_result_error(ctx, e.what(), -1);
    } catch (const std::exception& e) {
      const std::string msg = std::string(function) + ": " + e.what();
      sqlite3_result_error(ctx, msg.c_str(), -1);
    } catch (...) {
      const std::string msg = std::string(function) + ": internal error";
      sqlite3_result_error(ctx, msg.c_str(), -1);
    }
  } catch (...) {  // building the message itself failed
    sqlite3_result_error_nomem(ctx);
  }
}

bool all_bound(int argc, sqlite3_value** argv) {
  for (int i = 0; i < argc; ++i)
    if (!sqlite3_value_frombind(argv[i])) return false;
  return true;
}

void report_current_exception(sqlite3_context* ctx, const char* function, bool shown) noexcept {
  if (shown) return report_current_exception(ctx, function);
  try {
    try {
      throw;
    } catch (const std::bad_alloc&) {
      sqlite3_result_error_nomem(ctx);
    } catch (const std::exception& e) {
      const std::string msg = std::string(function) + ": " + hide_values(e.what());
      sqlite3_result_error(ctx, msg.c_str(), -1);
    } catch (...) {
      const std::string msg = std::string(function) + ": internal error";
      sqlite3_result_error(ctx, msg.c_str(), -1);
    }
  } catch (...) {
    sqlite3_result_error_nomem(ctx);
  }
}

}  // namespace optdp::sql
