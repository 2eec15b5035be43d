// private_count(alpha) and private_count(x, alpha): the number of rows of the
// group (rows with x IS NOT NULL in the two-argument form) plus two-sided
// geometric(alpha) noise, an INTEGER. See sql/reference.md.
//
// alpha is read from the statement's text once per release (params.hpp), and
// the ledger charged, by the first row or, when no row matched, by the final
// call, before any row is counted; the rows only count.
#include <cstdint>
#include <limits>

#include "core/privacy.hpp"
#include "core/samplers.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

namespace {

constexpr const char* kName = "private_count";

// Aggregate context: plain data, zeroed by SQLite on allocation.
struct CountState {
  std::int64_t rows;
  double alpha;
  bool begun;  // the release has begun (begin() ran)
  bool ready;  // ... and its parameters were read and charged
};

double read_alpha(sqlite3_context* ctx, int argc) {
  return alpha_param(read_params(sqlite3_context_db_handle(ctx), connection(ctx).statement_cache(), kName, argc)[0]);
}

// The release's first step, before any row is counted: by the first row of a
// group or, when no row matched, by the final call, on the same state
// (allocated the same way on both paths): reads alpha and charges the ledger.
// An error stops the statement.
[[gnu::noinline]] bool begin(sqlite3_context* ctx, int argc, CountState* st) {
  st->begun = true;
  st->ready = guard(ctx, kName, [&] {
    st->alpha = read_alpha(ctx, argc);
    connection(ctx).charge(kName, epsilon_of_alpha(st->alpha));
  });
  return st->ready;
}

void finish(sqlite3_context* ctx, int argc) {
  auto* st = static_cast<CountState*>(sqlite3_aggregate_context(ctx, sizeof(CountState)));
  if (!st) return sqlite3_result_error_nomem(ctx);
  if (!st->begun && !begin(ctx, argc, st)) return;
  if (!st->ready) return;  // the first row reported the error
  guard(ctx, kName, [&] {
    Connection& conn = connection(ctx);
    const std::int64_t noise = conn.two_sided_geometric(st->alpha)(conn.rng());
    // Saturating: an error here would depend on the count (post-processing
    // of an unreachable sum, |noise| < 2^62).
    std::int64_t out;
    if (__builtin_add_overflow(st->rows, noise, &out))
      out = noise > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
    sqlite3_result_int64(ctx, out);
  });
}

}  // namespace

template <int ARGC>
void private_count_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* st = static_cast<CountState*>(sqlite3_aggregate_context(ctx, sizeof(CountState)));
  if (!(st && st->ready)) [[unlikely]] {
    if (!st) return sqlite3_result_error_nomem(ctx);
    if (st->begun || !begin(ctx, ARGC, st)) return;
  }
  if (ARGC == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL) ++st->rows;
}
template void private_count_step<1>(sqlite3_context*, int, sqlite3_value**);
template void private_count_step<2>(sqlite3_context*, int, sqlite3_value**);

void check_count_params(const std::vector<Param>& p) { alpha_param(p[0]); }

void private_count_final1(sqlite3_context* ctx) { finish(ctx, 1); }
void private_count_final2(sqlite3_context* ctx) { finish(ctx, 2); }

}  // namespace optdp::sql
