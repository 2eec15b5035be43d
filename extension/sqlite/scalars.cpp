// Scalar helpers: dp_alpha, dp_epsilon, dp_version, dp_seed, dp_rng. Their
// arguments can be a row's values: guard_scalar shows values in a message only
// when every argument is a bound parameter (args.hpp).
#include <optional>
#include <stdexcept>
#include <string>

#include "core/privacy.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"

namespace optdp::sql {

// alpha = e^(-eps) rounded up: the alpha used is at least as private as eps says.
void dp_alpha(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_alpha", argc, argv, [&] { sqlite3_result_double(ctx, alpha_of_epsilon(number_arg(argv[0], "eps"))); });
}

// eps = -ln(alpha) rounded up: the guarantee reported is never stronger than the true one.
void dp_epsilon(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_epsilon", argc, argv, [&] { sqlite3_result_double(ctx, epsilon_of_alpha(alpha_arg(argv[0]))); });
}

void dp_version(sqlite3_context* ctx, int, sqlite3_value**) {
  sqlite3_result_text(ctx, OPTDP_VERSION, -1, SQLITE_STATIC);
}

// dp_seed(n): reproducible noise on this connection; dp_seed(NULL): back to the OS CSPRNG.
// Returns what dp_rng() now says.
void dp_seed(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_seed", argc, argv, [&] {
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
