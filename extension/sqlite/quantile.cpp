// private_quantile(x, q, eps, lower, upper) and private_median(x, eps, lower,
// upper): a grid point of [lower, upper] chosen by the exponential mechanism
// with score -|#{x < c} - q n| (core/quantile.hpp, docs/quantiles.md).
//
// The parameters are read from the statement's text once per release
// (params.hpp), by the first row or, when no row matched, by the final call,
// which then allocates the aggregate context with the grid's buckets (their
// number is fixed by lower and upper alone) and charges the ledger; each row
// adds one to a bucket.
#include <cstring>
#include <vector>

#include "core/format.hpp"
#include "core/privacy.hpp"
#include "core/quantile.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

namespace {

struct QuantileParams {
  double q, eps;
  QuantileGrid grid;
};

// p: (q, eps, lower, upper) for private_quantile, (eps, lower, upper) for private_median.
QuantileParams parse(const std::vector<Param>& p, bool median) {
  std::size_t i = 0;
  double q = 0.5;
  if (!median) {
    q = number_param(p[i++], "q");
    if (!(q >= 0 && q <= 1)) throw std::invalid_argument("q must be in [0, 1], but is " + format_double(q));
  }
  const double eps = number_param(p[i++], "eps");
  check_positive(eps, "eps");
  const double lower = number_param(p[i++], "lower");
  const double upper = number_param(p[i++], "upper");
  return {q, eps, QuantileGrid(lower, upper)};
}

// The aggregate context: this header, then m + 1 bucket counts.
struct QuantileState {
  QuantileParams params;
  bool ready;  // false: the first row reported an error
  std::int64_t* buckets() { return reinterpret_cast<std::int64_t*>(this + 1); }
};

const char* name_of(bool median) { return median ? "private_median" : "private_quantile"; }

QuantileParams read(sqlite3_context* ctx, bool median, int argc) {
  return parse(read_params(sqlite3_context_db_handle(ctx), connection(ctx).statement_cache(), name_of(median), argc),
               median);
}

// The release's first step, before any row is added: by the first row of a
// group or, when no row matched, by the final call: reads the parameters,
// allocates the state with its buckets (the same allocation on both paths, its
// size fixed by lower and upper) and charges.
[[gnu::noinline]] QuantileState* begin(sqlite3_context* ctx, bool median, int argc) {
  QuantileParams params{};
  bool ok = guard(ctx, name_of(median), [&] { params = read(ctx, median, argc); });
  const std::size_t buckets = ok ? static_cast<std::size_t>(params.grid.candidates()) + 1 : 0;
  auto* st = static_cast<QuantileState*>(
      sqlite3_aggregate_context(ctx, static_cast<int>(sizeof(QuantileState) + buckets * sizeof(std::int64_t))));
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return nullptr;
  }
  std::memcpy(&st->params, &params, sizeof params);
  if (ok) ok = guard(ctx, name_of(median), [&] { connection(ctx).charge(name_of(median), params.eps); });
  st->ready = ok;
  return st;
}

template <bool MEDIAN>
void step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto* st = static_cast<QuantileState*>(sqlite3_aggregate_context(ctx, 0));
  if (!st) [[unlikely]] {
    st = begin(ctx, MEDIAN, argc);
    if (!st) return;
  }
  if (!st->ready) return;
  sqlite3_value* x = argv[0];
  const int t = sqlite3_value_type(x);
  if (t == SQLITE_NULL) return;
  ++st->buckets()[st->params.grid.bucket(row_value(x, t))];
}

template <bool MEDIAN, int ARGC>
void final(sqlite3_context* ctx) {
  auto* st = static_cast<QuantileState*>(sqlite3_aggregate_context(ctx, 0));
  if (!st) {  // no rows: the same first step
    st = begin(ctx, MEDIAN, ARGC);
    if (!st) return;
  }
  if (!st->ready) return;  // the error was reported
  guard(ctx, name_of(MEDIAN), [&] {
    const QuantileParams* params = &st->params;
    const std::int64_t* buckets = st->buckets();
    Connection& conn = connection(ctx);
    const std::size_t n = static_cast<std::size_t>(params->grid.candidates()) + 1;
    const std::int64_t j = sample_quantile(conn.rng(), {buckets, n}, params->q, params->eps);
    sqlite3_result_double(ctx, params->grid.candidate(j));
  });
}

}  // namespace

void private_quantile_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) { step<false>(ctx, argc, argv); }
void private_quantile_final(sqlite3_context* ctx) { final<false, 5>(ctx); }
void private_median_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) { step<true>(ctx, argc, argv); }
void private_median_final(sqlite3_context* ctx) { final<true, 4>(ctx); }
void check_quantile_params(const std::vector<Param>& p) { parse(p, false); }
void check_median_params(const std::vector<Param>& p) { parse(p, true); }

}  // namespace optdp::sql
