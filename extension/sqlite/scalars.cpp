// Scalar helpers: dp_alpha, dp_epsilon, dp_version, dp_seed, dp_rng.
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

extern "C" {
#include <quadmath.h>
}

#include "core/format.hpp"
#include "core/samplers.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"

namespace optdp::sql {

// alpha = e^(-eps), rounded down so that the alpha used is at least as private as eps says.
void dp_alpha(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guard(ctx, "dp_alpha", [&] {
    const double eps = number_arg(argv[0], "eps");
    if (!(eps > 0 && std::isfinite(eps)))
      throw std::invalid_argument("eps must be a finite number > 0, but is " + format_double(eps));
    const __float128 exact = expq(-static_cast<__float128>(eps));
    double a = static_cast<double>(exact);
    if (static_cast<__float128>(a) > exact) a = std::nextafter(a, 0.0);
    if (a >= 1.0) a = std::nextafter(1.0, 0.0);
    if (!(a > 0))
      throw std::invalid_argument("eps must be at most 745 (alpha = e^-eps underflows to 0), but is " +
                                  format_double(eps));
    sqlite3_result_double(ctx, a);
  });
}

// eps = -ln(alpha), rounded up: the guarantee reported is never stronger than the true one.
void dp_epsilon(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guard(ctx, "dp_epsilon", [&] {
    const double alpha = number_arg(argv[0], "alpha");
    check_alpha(alpha);
    const __float128 exact = -log1pq(static_cast<__float128>(alpha) - 1);
    double e = static_cast<double>(exact);
    if (static_cast<__float128>(e) < exact) e = std::nextafter(e, INFINITY);
    sqlite3_result_double(ctx, e);
  });
}

void dp_version(sqlite3_context* ctx, int, sqlite3_value**) {
  sqlite3_result_text(ctx, OPTDP_VERSION, -1, SQLITE_STATIC);
}

// dp_seed(n): reproducible noise on this connection; dp_seed(NULL): back to the OS CSPRNG.
// Returns what dp_rng() now says.
void dp_seed(sqlite3_context* ctx, int, sqlite3_value** argv) {
  guard(ctx, "dp_seed", [&] {
    Connection& conn = connection(ctx);
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
      conn.seed(std::nullopt);
    } else {
      if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER)
        throw std::invalid_argument("seed must be an integer or NULL, but is " + describe(argv[0]));
      conn.seed(static_cast<std::uint64_t>(sqlite3_value_int64(argv[0])));
    }
    sqlite3_result_text(ctx, conn.rng().kind(), -1, SQLITE_STATIC);
  });
}

void dp_rng(sqlite3_context* ctx, int, sqlite3_value**) {
  sqlite3_result_text(ctx, connection(ctx).rng().kind(), -1, SQLITE_STATIC);
}

}  // namespace optdp::sql
