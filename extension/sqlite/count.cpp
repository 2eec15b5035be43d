// private_count(alpha) and private_count(x, alpha): the number of rows of the
// group (rows with x IS NOT NULL in the two-argument form) plus two-sided
// geometric(alpha) noise, an INTEGER. See sql/reference.md.
//
// The release sequence (read alpha, allocate, charge, count, add noise) is
// Aggregate in release.hpp; this file says what is a count's own.
#include <cstdint>
#include <limits>

#include "core/privacy.hpp"
#include "core/samplers.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/release.hpp"

namespace optdp::sql {

namespace {

template <int ARGC>  // 1: private_count(alpha), 2: private_count(x, alpha)
struct Count {
  static constexpr const char* kName = "private_count";
  struct Plan {
    double alpha;
  };
  struct Data {
    std::int64_t rows;
  };
  static Plan plan(const std::vector<Param>& p, int) { return {alpha_param(p[0])}; }
  static double epsilon(const Plan& plan) { return epsilon_of_alpha(plan.alpha); }
  static void add(const Plan&, Data& d, std::byte*, sqlite3_value** argv) noexcept {
    if (ARGC == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL) ++d.rows;
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& plan, Data& d, std::byte*) {
    const std::int64_t noise = conn.two_sided_geometric(plan.alpha)(conn.rng());
    // Saturating: an error here would depend on the count (post-processing
    // of an unreachable sum, |noise| < 2^62).
    std::int64_t out;
    if (__builtin_add_overflow(d.rows, noise, &out))
      out = noise > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
    sqlite3_result_int64(ctx, out);
  }
};

}  // namespace

template <int ARGC>
void private_count_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Count<ARGC>, ARGC>::step(ctx, argc, argv);
}
template void private_count_step<1>(sqlite3_context*, int, sqlite3_value**);
template void private_count_step<2>(sqlite3_context*, int, sqlite3_value**);

void check_count_params(const std::vector<Param>& p) { Count<1>::plan(p, 1); }

void private_count_final1(sqlite3_context* ctx) { Aggregate<Count<1>, 1>::final(ctx); }
void private_count_final2(sqlite3_context* ctx) { Aggregate<Count<2>, 2>::final(ctx); }

}  // namespace optdp::sql
