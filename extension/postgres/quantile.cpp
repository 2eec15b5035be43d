// optdp for PostgreSQL: private_quantile and private_median
// (core/quantile.hpp, docs/quantiles.md). What the aggregates share is in
// aggregate.hpp (docs/scale.md describes the SQL surface).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/privacy.hpp"
#include "core/quantile.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "catalog/pg_type.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
}

using namespace optdp_pg;

// ---- private_quantile(x, q, eps, lower, upper), private_median(x, eps, lower, upper)
//
// A grid point of [lower, upper] chosen by the exponential mechanism with
// score -|#{x < c} - q n| (core/quantile.hpp, docs/quantiles.md). The state
// is the call's parameters (QuantileHeader; aggregate.hpp, "parameters
// carried in the state") followed by the m + 1 bucket counts (m fixed by
// lower and upper alone, at most 4096), allocated by the first row; INITCOND
// is the empty bytea (no parameters, no rows yet), which the combine and
// final functions read as all zeros.
//
// Shipped between servers (docs/scale.md): private_quantile_state and
// private_median_state return the buckets after a header with the
// aggregate's kind and (q, eps, lower, upper); private_quantile_merge(state,
// q, eps, lower, upper) and private_median_merge(state, eps, lower, upper)
// add the buckets of states of their kind made with the same parameters, and
// release with the release's own final function (noise once, one charge).

namespace {

struct QuantileCache {
  bool ready;
  bool median;  // the call has no q (private_median, _state, _merge)
  double q, eps;
  alignas(8) unsigned char grid_bytes[sizeof(optdp::QuantileGrid)];
  const optdp::QuantileGrid& grid() const { return *reinterpret_cast<const optdp::QuantileGrid*>(grid_bytes); }
};
static_assert(std::is_trivially_copyable_v<optdp::QuantileGrid>);

const QuantileCache& quantile_params(FunctionCallInfo fcinfo, const char* function) {
  auto* cache = fn_cache<QuantileCache>(fcinfo);
  if (cache && cache->ready) return *cache;
  if (!cache) cache = instance_cache<QuantileCache>(fcinfo);
  CallParams p;
  read_call(fcinfo, function, 1, p);
  Failure f;
  run_cpp(f, function, [&] {
    if (p.count == 4)
      all_constant(p, {"q", "eps", "lower", "upper"});
    else
      all_constant(p, {"eps", "lower", "upper"});
    int i = 0;
    double q = 0.5;
    if (p.count == 4) {
      q = number_param(p, i++, "q");
      if (!(q >= 0 && q <= 1)) throw std::invalid_argument("q must be in [0, 1], but is " + describe_number(q));
    }
    const double eps = number_param(p, i++, "eps");
    optdp::check_positive(eps, "eps");
    const double lower = number_param(p, i++, "lower");
    const double upper = number_param(p, i++, "upper");
    const optdp::QuantileGrid grid(lower, upper);
    cache->q = q;
    cache->eps = eps;
    cache->median = p.count != 4;
    std::memcpy(cache->grid_bytes, &grid, sizeof grid);
  });
  raise(f);
  cache->ready = true;
  return *cache;
}

std::size_t bucket_count(const QuantileCache& c) { return static_cast<std::size_t>(c.grid().candidates()) + 1; }

// The parameters at the head of a state that has any (q is 0.5 for a median).
struct QuantileHeader {
  double q, eps, lower, upper;
};

QuantileHeader header_of(const QuantileCache& c) { return {c.q, c.eps, c.grid().lower(), c.grid().upper()}; }

bool same_header(const QuantileHeader& a, const QuantileHeader& b) {
  return a.q == b.q && a.eps == b.eps && a.lower == b.lower && a.upper == b.upper;
}

QuantileHeader header_in(const bytea* st) {
  QuantileHeader h;
  std::memcpy(&h, VARDATA_ANY(st), sizeof h);
  return h;
}

// The bytes of a non-empty state of the call's parameters.
std::size_t state_bytes(const QuantileCache& c) {
  return sizeof(QuantileHeader) + bucket_count(c) * sizeof(std::int64_t);
}

// A state of the call's parameters and zero buckets in the aggregate's memory context.
bytea* new_buckets(MemoryContext aggctx, const QuantileCache& c) {
  const std::size_t bytes = state_bytes(c);
  auto* st = static_cast<bytea*>(MemoryContextAllocZero(aggctx, VARHDRSZ + bytes));
  SET_VARSIZE(st, VARHDRSZ + bytes);
  const QuantileHeader h = header_of(c);
  std::memcpy(VARDATA(st), &h, sizeof h);
  return st;
}

// The buckets of a non-empty state, checked to be of the planned call's
// parameters (which were admitted and charged): fails closed otherwise.
const char* checked_buckets(const char* fn, bytea* st, const QuantileCache& c) {
  const std::size_t n = VARSIZE_ANY_EXHDR(st);
  if (n < sizeof(QuantileHeader) || !same_header(header_in(st), header_of(c))) refuse_state_params(fn);
  if (n != state_bytes(c))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: a state of another grid", fn)));
  return VARDATA_ANY(st) + sizeof(QuantileHeader);
}

// A shipped state: this header, then the m + 1 bucket counts.
struct QuantileShipped {
  std::uint32_t kind, pad;
  double q, eps, lower, upper;
};

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_quantile_trans);
OPTDP_PG_FUNCTION(optdp_quantile_combine);
OPTDP_PG_FUNCTION(optdp_quantile_final);

Datum optdp_quantile_trans(PG_FUNCTION_ARGS) {
  auto* cache = fn_cache<QuantileCache>(fcinfo);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    MemoryContext aggctx;
    if (AggCheckCallContext(fcinfo, &aggctx) != AGG_CONTEXT_AGGREGATE) call_aggref(fcinfo, "private_quantile");
    cache = const_cast<QuantileCache*>(&quantile_params(fcinfo, agg_name(fcinfo, "private_quantile")));
    st = PG_ARGISNULL(0) ? nullptr : own_state(fcinfo);
    if (st == nullptr || VARSIZE_ANY_EXHDR(st) == 0) {
      st = new_buckets(aggctx, *cache);
    } else if (VARSIZE_ANY_EXHDR(st) != state_bytes(*cache) || !same_header(header_in(st), header_of(*cache))) {
      refuse_other_params(agg_name(fcinfo, "private_quantile"));  // a state made elsewhere
    }
  } else {
    st = own_state(fcinfo);
    if (VARSIZE_ANY_EXHDR(st) == 0) [[unlikely]] {  // a new group's INITCOND
      MemoryContext aggctx;
      AggCheckCallContext(fcinfo, &aggctx);
      st = new_buckets(aggctx, *cache);
    }
  }
  if (!PG_ARGISNULL(1)) {
    double x = PG_GETARG_FLOAT8(1);
    if (std::isnan(x)) x = 0;  // never an error on a row's value
    const std::int64_t b = cache->grid().bucket(x);
    char* at = VARDATA_ANY(st) + sizeof(QuantileHeader) + b * sizeof(std::int64_t);
    std::int64_t v;
    std::memcpy(&v, at, sizeof v);
    ++v;
    std::memcpy(at, &v, sizeof v);
  }
  PG_RETURN_BYTEA_P(st);
}

// Adds bucket counts; an empty state (INITCOND) counts as zeros.
Datum optdp_quantile_combine(PG_FUNCTION_ARGS) {
  MemoryContext aggctx;
  if (!AggCheckCallContext(fcinfo, &aggctx))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("private_quantile: must be called as an aggregate")));
  bytea* st = PG_GETARG_BYTEA_PP(0);
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  bytea* in = PG_GETARG_BYTEA_PP(1);
  const std::size_t n = VARSIZE_ANY_EXHDR(in);
  if (n == 0) PG_RETURN_BYTEA_P(st);
  if (VARSIZE_ANY_EXHDR(st) == 0) {
    bytea* copy = static_cast<bytea*>(MemoryContextAlloc(aggctx, VARHDRSZ + n));
    SET_VARSIZE(copy, VARHDRSZ + n);
    std::memcpy(VARDATA(copy), VARDATA_ANY(in), n);
    PG_RETURN_BYTEA_P(copy);
  }
  if (VARSIZE_ANY_EXHDR(st) < sizeof(QuantileHeader) || n < sizeof(QuantileHeader) ||
      !same_header(header_in(st), header_in(in)))
    refuse_other_params(agg_name(fcinfo, "private_quantile"));
  if (VARSIZE_ANY_EXHDR(st) != n)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("private_quantile: states of different grids")));
  for (std::size_t i = sizeof(QuantileHeader); i < n; i += sizeof(std::int64_t)) {
    std::int64_t a, b;
    std::memcpy(&a, VARDATA_ANY(st) + i, sizeof a);
    std::memcpy(&b, VARDATA_ANY(in) + i, sizeof b);
    a += b;
    std::memcpy(VARDATA_ANY(st) + i, &a, sizeof a);
  }
  PG_RETURN_BYTEA_P(st);
}

Datum optdp_quantile_final(PG_FUNCTION_ARGS) {
  const ReleaseCost cost = quantile_cost(fcinfo);
  const char* fn = cost.function;
  const QuantileCache& c = quantile_params(fcinfo, fn);
  const std::size_t m1 = bucket_count(c);
  std::int64_t* buckets = static_cast<std::int64_t*>(palloc0(m1 * sizeof(std::int64_t)));
  if (!PG_ARGISNULL(0)) {
    bytea* st = PG_GETARG_BYTEA_PP(0);
    if (VARSIZE_ANY_EXHDR(st) != 0) std::memcpy(buckets, checked_buckets(fn, st, c), m1 * sizeof(std::int64_t));
  }
  release_charge(fcinfo, cost);
  Failure f;
  double out = 0;
  run_cpp(f, fn, [&] {
    const std::int64_t j = optdp::sample_quantile(backend().rng(), {buckets, m1}, c.q, c.eps);
    out = c.grid().candidate(j);
  });
  raise(f);
  pfree(buckets);
  PG_RETURN_FLOAT8(out);
}

// private_quantile_state, private_median_state: the buckets with what the merge must check.
OPTDP_PG_FUNCTION(optdp_quantile_state_final) {
  const char* fn = agg_name(fcinfo, "private_quantile_state");
  const QuantileCache& c = quantile_params(fcinfo, fn);
  const std::size_t bytes = bucket_count(c) * sizeof(std::int64_t);
  auto* out = static_cast<bytea*>(palloc0(VARHDRSZ + sizeof(QuantileShipped) + bytes));
  SET_VARSIZE(out, VARHDRSZ + sizeof(QuantileShipped) + bytes);
  QuantileShipped h{};
  h.kind = static_cast<std::uint32_t>(c.median ? Shipped::Median : Shipped::Quantile);
  h.q = c.q;
  h.eps = c.eps;
  h.lower = c.grid().lower();
  h.upper = c.grid().upper();
  std::memcpy(VARDATA(out), &h, sizeof h);
  if (!PG_ARGISNULL(0)) {
    bytea* st = PG_GETARG_BYTEA_PP(0);
    if (VARSIZE_ANY_EXHDR(st) != 0) std::memcpy(VARDATA(out) + sizeof h, checked_buckets(fn, st, c), bytes);
  }
  PG_RETURN_BYTEA_P(seal_state(fn, c.median ? Shipped::Median : Shipped::Quantile, out));
}

// private_quantile_merge(state, q, eps, lower, upper), private_median_merge(state,
// eps, lower, upper): adds the buckets of shipped states of its kind made
// with the same parameters.
OPTDP_PG_STEP(optdp_quantile_merge_add) {
  MemoryContext aggctx;
  if (AggCheckCallContext(fcinfo, &aggctx) != AGG_CONTEXT_AGGREGATE) call_aggref(fcinfo, "private_quantile_merge");
  const char* fn = agg_name(fcinfo, "private_quantile_merge");
  const QuantileCache& c = quantile_params(fcinfo, fn);
  const Shipped kind = c.median ? Shipped::Median : Shipped::Quantile;
  bytea* st = PG_ARGISNULL(0) ? nullptr : own_state(fcinfo);
  if (st == nullptr || VARSIZE_ANY_EXHDR(st) == 0) st = new_buckets(aggctx, c);
  bytea* in = shipped_arg(fcinfo, 1, fn, kind);
  const std::size_t bytes = bucket_count(c) * sizeof(std::int64_t);
  QuantileShipped h{};
  const bool has_header = VARSIZE_ANY_EXHDR(in) >= sizeof h;
  if (has_header) std::memcpy(&h, VARDATA_ANY(in), sizeof h);
  const double lower = c.grid().lower(), upper = c.grid().upper();
  if (has_header && (h.q != c.q || h.eps != c.eps || h.lower != lower || h.upper != upper))
    refuse_state(fn, [&] {
      if (c.median)
        return "state was computed with (eps, lower, upper) = " + describe_numbers({h.eps, h.lower, h.upper}) +
               ", but they are " + describe_numbers({c.eps, lower, upper});
      return "state was computed with (q, eps, lower, upper) = " + describe_numbers({h.q, h.eps, h.lower, h.upper}) +
             ", but they are " + describe_numbers({c.q, c.eps, lower, upper});
    });
  if (VARSIZE_ANY_EXHDR(in) != sizeof h + bytes)  // the same parameters make the same grid: not a shipped state
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state must be a %s state (%d bytes), but is a bytea of %d bytes", fn,
                           shipped_by(kind), static_cast<int>(sizeof h + bytes),
                           static_cast<int>(VARSIZE_ANY_EXHDR(in)))));
  for (std::size_t i = 0; i < bytes; i += sizeof(std::int64_t)) {
    std::int64_t a, b;
    char* at = VARDATA_ANY(st) + sizeof(QuantileHeader) + i;
    std::memcpy(&a, at, sizeof a);
    std::memcpy(&b, VARDATA_ANY(in) + sizeof h + i, sizeof b);
    a += b;
    std::memcpy(at, &a, sizeof a);
  }
  PG_RETURN_BYTEA_P(st);
}

}  // extern "C"

ReleaseCost optdp_pg::quantile_cost(FunctionCallInfo fcinfo) {
  const char* fn = agg_name(fcinfo, "private_quantile");
  return {fn, quantile_params(fcinfo, fn).eps, 0.0};
}
