// private_count(alpha) and private_count(x, alpha): the number of rows of the
// group (rows with x IS NOT NULL in the two-argument form) plus two-sided
// geometric(alpha) noise, an INTEGER. See sql/reference.md.
#include <cstdint>
#include <limits>

#include "core/privacy.hpp"
#include "core/samplers.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/constant_args.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

namespace {

constexpr const char* kName = "private_count";

// Aggregate context: plain data, zeroed by SQLite on allocation.
struct CountState {
  std::int64_t rows;
  double alpha;  // read and validated from the first row
  ParamCheck check;
};

void finish(sqlite3_context* ctx, int argc) {
  guard(ctx, kName, [&] {
    auto* st = static_cast<CountState*>(sqlite3_aggregate_context(ctx, 0));
    CountState empty{};
    if (!st) {
      // No rows at all: 0 + noise, with alpha read from the statement.
      auto args = constant_args(sqlite3_context_db_handle(ctx), kName, argc, argc - 1);
      empty.alpha = alpha_arg(args[0].get());
      empty.check.params = Params::Checked;
      st = &empty;
    }
    if (st->check.released_nothing()) return;  // the step reported the error
    Connection& conn = connection(ctx);
    conn.charge(kName, epsilon_of_alpha(st->alpha));
    const std::int64_t noise = conn.two_sided_geometric(st->alpha)(conn.rng());
    std::int64_t out;
    if (__builtin_add_overflow(st->rows, noise, &out)) throw std::overflow_error("count plus noise overflows INTEGER");
    sqlite3_result_int64(ctx, out);
  });
}

// The first row reads alpha; the next rows compare it, until the proof that
// it is a literal (params.hpp). Returns whether the row counts.
[[gnu::noinline]] bool check_alpha(sqlite3_context* ctx, CountState& st, int argc, sqlite3_value** argv) {
  sqlite3_value* alpha = argv[argc - 1];
  if (st.check.params == Params::Unread) {
    st.check.first_row(ctx, guard(ctx, kName, [&] { st.alpha = alpha_arg(alpha); }));
  } else if (st.check.params == Params::Checked) {
    const bool same = unchanged_number(alpha, st.alpha) ||
                      guard(ctx, kName, [&] { require_same_number(alpha, st.alpha, "alpha"); });
    st.check.compared_row(ctx, same, kName, argc, argc - 1);
  }
  return !st.check.failed();
}

// Rows before the proof, and errors: out of line, so that the hot path below
// keeps few registers across its one call into SQLite.
[[gnu::noinline]] void step_slow(sqlite3_context* ctx, int argc, sqlite3_value** argv, CountState* st) {
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (!check_alpha(ctx, *st, argc, argv)) return;  // not constant(), or the hot path would have counted it
  if (argc == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL) ++st->rows;
}

}  // namespace

template <int ARGC>
void private_count_step(sqlite3_context* ctx, int, sqlite3_value** argv) {
  auto* st = static_cast<CountState*>(sqlite3_aggregate_context(ctx, sizeof(CountState)));
  if (st && st->check.constant()) [[likely]] {
    if (ARGC == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL) ++st->rows;
    return;
  }
  step_slow(ctx, ARGC, argv, st);
}
template void private_count_step<1>(sqlite3_context*, int, sqlite3_value**);
template void private_count_step<2>(sqlite3_context*, int, sqlite3_value**);

void private_count_final1(sqlite3_context* ctx) { finish(ctx, 1); }
void private_count_final2(sqlite3_context* ctx) { finish(ctx, 2); }

}  // namespace optdp::sql
