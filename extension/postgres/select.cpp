// optdp for PostgreSQL: private_select (core/selection.hpp,
// docs/selection.md). What the aggregates share is in aggregate.hpp
// (docs/scale.md describes the SQL surface).
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
#include "core/selection.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"

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

// ---- private_select(candidate, score, eps [, sensitivity [, method]]) -----------
//
// One candidate chosen by permute-and-flip or the exponential mechanism
// (core/selection.hpp, docs/selection.md); the candidates are the rows, and
// must be public (sql/reference.md). The state is a bytea that lists every
// candidate with its score: a header, then per row the score (float8), the
// candidate's length (-1: NULL) and its bytes (a by-value Datum's 8 bytes, a
// fixed-length type's typlen bytes, a varlena detoasted, a cstring with its
// NUL). The bytea keeps spare room (the header says how much is used) so that
// rows append in place; it grows by doubling, up to MaxAllocSize. Past
// kMaxCandidates candidates, or past that size, the state stops growing and
// says so, and the final function refuses the release, after charging it as
// SQLite does: how many candidates there are, and how large, is public (the
// candidates are), so the refusal depends on no private value.

namespace {

struct SelectHeader {
  std::uint64_t used;   // bytes of entries after the header
  std::uint32_t count;  // candidates kept
  std::uint32_t flags;  // kTooMany, kTooLarge
  std::int32_t typlen;  // the candidates' type, once one is kept
  std::uint8_t typbyval, has_type, pad[2];
};
constexpr std::uint32_t kTooMany = 1, kTooLarge = 2;
constexpr std::size_t kSelectMaxBytes = MaxAllocSize - VARHDRSZ;  // the whole bytea within one allocation

struct SelectParams {
  bool ready;
  double eps, sensitivity;
  optdp::SelectionMethod method;
  Oid type;  // the candidate's type (from the call)
  std::int16_t typlen;
  bool typbyval;
};

const SelectParams& select_params(FunctionCallInfo fcinfo, const char* function) {
  auto* cache = static_cast<SelectParams*>(fcinfo->flinfo->fn_extra);
  if (cache && cache->ready) return *cache;
  if (!cache) {
    cache = static_cast<SelectParams*>(MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SelectParams)));
    fcinfo->flinfo->fn_extra = cache;
  }
  CallParams p;
  read_call(fcinfo, function, 2, p);
  Failure f;
  SelectParams s{};
  run_cpp(f, function, [&] {
    all_constant(p, {"eps", "sensitivity", "method"});
    s.eps = number_param(p, 0, "eps");
    optdp::check_positive(s.eps, "eps");
    s.sensitivity = 1;
    if (p.count >= 2) {
      s.sensitivity = number_param(p, 1, "sensitivity");
      optdp::check_positive(s.sensitivity, "sensitivity");
    }
    s.method = optdp::SelectionMethod::PermuteAndFlip;
    if (p.count >= 3)
      s.method = optdp::parse_selection_method(
          text_param(p, 2, "method", "'exponential' or 'permute_and_flip'"));
  });
  raise(f);
  Aggref* a = call_aggref(fcinfo, function);
  s.type = exprType(reinterpret_cast<Node*>(static_cast<TargetEntry*>(linitial(a->args))->expr));
  get_typlenbyval(s.type, &s.typlen, &s.typbyval);
  s.ready = true;
  *cache = s;
  return *cache;
}

SelectHeader select_header(const bytea* st) {
  SelectHeader h{};
  if (VARSIZE_ANY_EXHDR(st) >= sizeof h) std::memcpy(&h, VARDATA_ANY(st), sizeof h);
  return h;
}

// A state with room for `bytes` of entries, holding h and the first `copy`
// bytes of entries from `from` (nullptr: none), allocated in the current
// memory context (the aggregate copies a new state into its own).
bytea* select_alloc(const SelectHeader& h, std::size_t bytes, const bytea* from, std::size_t copy) {
  bytea* b = static_cast<bytea*>(palloc(VARHDRSZ + sizeof(SelectHeader) + bytes));
  SET_VARSIZE(b, VARHDRSZ + sizeof(SelectHeader) + bytes);
  std::memcpy(VARDATA(b), &h, sizeof h);
  if (copy) std::memcpy(VARDATA(b) + sizeof h, VARDATA_ANY(from) + sizeof h, copy);
  return b;
}

// A score as SQLite's sum() reads one: NULL and NaN as 0, +-inf as the
// largest finite doubles. Never an error on a row's value.
double select_score(FunctionCallInfo fcinfo) {
  if (PG_ARGISNULL(2)) return 0;
  double s = PG_GETARG_FLOAT8(2);
  if (std::isnan(s)) return 0;
  if (std::isinf(s)) s = s > 0 ? std::numeric_limits<double>::max() : -std::numeric_limits<double>::max();
  return s;
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_select_trans);
OPTDP_PG_FUNCTION(optdp_select_combine);
OPTDP_PG_FUNCTION(optdp_select_final);

Datum optdp_select_trans(PG_FUNCTION_ARGS) {
  auto* cache = static_cast<SelectParams*>(fcinfo->flinfo->fn_extra);
  if (!(cache && cache->ready)) [[unlikely]] {  // the first row: check the context, read the call once
    if (!AggCheckCallContext(fcinfo, nullptr)) call_aggref(fcinfo, "private_select");
    cache = const_cast<SelectParams*>(&select_params(fcinfo, agg_name(fcinfo, "private_select")));
  }
  const SelectParams& p = *cache;
  bytea* st = PG_ARGISNULL(0) ? nullptr : own_state(fcinfo);
  SelectHeader h = st ? select_header(st) : SelectHeader{};
  const std::size_t room = st && VARSIZE_ANY_EXHDR(st) >= sizeof h ? VARSIZE_ANY_EXHDR(st) - sizeof h : 0;
  if (h.flags) PG_RETURN_BYTEA_P(st);  // refused by the final anyway: keep no more
  // the candidate's bytes
  const void* data = nullptr;
  std::int32_t len = -1;
  Datum byval_copy = 0;
  if (!PG_ARGISNULL(1)) {
    Datum d = PG_GETARG_DATUM(1);
    if (p.typbyval) {
      byval_copy = d;
      data = &byval_copy;
      len = sizeof(Datum);
    } else if (p.typlen == -1) {
      struct varlena* v = PG_DETOAST_DATUM(d);
      data = v;
      len = static_cast<std::int32_t>(VARSIZE(v));
    } else if (p.typlen == -2) {
      data = DatumGetCString(d);
      len = static_cast<std::int32_t>(strlen(static_cast<const char*>(data)) + 1);
    } else {
      data = DatumGetPointer(d);
      len = p.typlen;
    }
  }
  const double score = select_score(fcinfo);
  const std::size_t need = sizeof score + sizeof len + (len > 0 ? static_cast<std::size_t>(len) : 0);
  if (h.count >= optdp::kMaxCandidates) {
    h.flags |= kTooMany;
  } else if (h.used + need > kSelectMaxBytes - sizeof h) {
    h.flags |= kTooLarge;
  } else if (st == nullptr || h.used + need > room) {
    std::size_t cap = std::max<std::size_t>(256, 2 * (h.used + need));
    cap = std::min(cap, kSelectMaxBytes - sizeof h);
    st = select_alloc(h, cap, st, h.used);
  }
  if (st == nullptr) st = select_alloc(h, 0, nullptr, 0);
  if (!h.flags) {
    char* at = VARDATA(st) + sizeof h + h.used;
    std::memcpy(at, &score, sizeof score);
    std::memcpy(at + sizeof score, &len, sizeof len);
    if (len > 0) std::memcpy(at + sizeof score + sizeof len, data, len);
    h.used += need;
    ++h.count;
    if (!h.has_type) {
      h.typlen = p.typlen;
      h.typbyval = p.typbyval;
      h.has_type = 1;
    }
  }
  std::memcpy(VARDATA(st), &h, sizeof h);
  PG_RETURN_BYTEA_P(st);
}

// Appends b's candidates to a's (a new state when a has no room).
Datum optdp_select_combine(PG_FUNCTION_ARGS) {
  if (!AggCheckCallContext(fcinfo, nullptr))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("private_select: must be called as an aggregate")));
  bytea* a = PG_GETARG_BYTEA_PP(0);
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(a);
  bytea* b = PG_GETARG_BYTEA_PP(1);
  const SelectHeader hb = select_header(b);
  if (hb.count == 0 && hb.flags == 0) PG_RETURN_BYTEA_P(a);
  SelectHeader ha = select_header(a);
  if (ha.count == 0 && ha.flags == 0) {
    bytea* copy = select_alloc(hb, hb.used, b, hb.used);
    PG_RETURN_BYTEA_P(copy);
  }
  ha.flags |= hb.flags;
  if (static_cast<std::uint64_t>(ha.count) + hb.count > optdp::kMaxCandidates)
    ha.flags |= kTooMany;
  else if (ha.used + hb.used > kSelectMaxBytes - sizeof ha)
    ha.flags |= kTooLarge;
  if (ha.flags) {
    bytea* out = select_alloc(ha, 0, nullptr, 0);
    PG_RETURN_BYTEA_P(out);
  }
  bytea* out = select_alloc(ha, ha.used + hb.used, a, ha.used);
  std::memcpy(VARDATA(out) + sizeof ha + ha.used, VARDATA_ANY(b) + sizeof hb, hb.used);
  ha.used += hb.used;
  ha.count += hb.count;
  if (!ha.has_type) {
    ha.typlen = hb.typlen;
    ha.typbyval = hb.typbyval;
    ha.has_type = hb.has_type;
  }
  std::memcpy(VARDATA(out), &ha, sizeof ha);
  PG_RETURN_BYTEA_P(out);
}

// The release: charged once, then one candidate drawn by the core's sampler
// (NULL for no candidates: the empty candidate set is public).
Datum optdp_select_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "private_select");
  const SelectParams& p = select_params(fcinfo, fn);
  bytea* st = PG_ARGISNULL(0) ? nullptr : PG_GETARG_BYTEA_PP(0);
  const SelectHeader h = st ? select_header(st) : SelectHeader{};
  if (st && VARSIZE_ANY_EXHDR(st) != 0 &&
      (VARSIZE_ANY_EXHDR(st) < sizeof h || h.used > VARSIZE_ANY_EXHDR(st) - sizeof h))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: state is not a private_select state", fn)));
  charge(fn, p.eps);
  Failure f;
  if (h.flags & kTooMany) {
    run_cpp(f, fn, [&] {
      throw std::invalid_argument("at most " + std::to_string(optdp::kMaxCandidates) +
                                  " candidates can be selected from");
    });
    raise(f);
  }
  if (h.flags & kTooLarge) {
    run_cpp(f, fn, [&] {
      throw std::invalid_argument("the candidates take more than " + std::to_string(kSelectMaxBytes >> 20) +
                                  " MB, a bytea state's limit");
    });
    raise(f);
  }
  if (h.count == 0) PG_RETURN_NULL();
  const char* entries = VARDATA_ANY(st) + sizeof h;
  std::size_t chosen_at = 0;
  run_cpp(f, fn, [&] {
    std::vector<double> scores(h.count);
    std::vector<std::size_t> at(h.count);
    std::size_t off = 0;
    for (std::uint32_t i = 0; i < h.count; ++i) {
      std::int32_t len;
      std::memcpy(&scores[i], entries + off, sizeof(double));
      std::memcpy(&len, entries + off + sizeof(double), sizeof len);
      at[i] = off;
      off += sizeof(double) + sizeof len + (len > 0 ? static_cast<std::size_t>(len) : 0);
      if (off > h.used) throw std::invalid_argument("state is not a private_select state");
    }
    const auto gamma = optdp::selection_exponents(scores, p.eps, p.sensitivity);
    chosen_at = at[optdp::sample_selection(backend().rng(), p.method, gamma)];
  });
  raise(f);
  std::int32_t len;
  std::memcpy(&len, entries + chosen_at + sizeof(double), sizeof len);
  if (len < 0) PG_RETURN_NULL();
  const char* data = entries + chosen_at + sizeof(double) + sizeof len;
  if (h.typbyval) {
    Datum d;
    std::memcpy(&d, data, sizeof d);
    return d;
  }
  void* copy = palloc(len);
  std::memcpy(copy, data, len);
  return PointerGetDatum(copy);
}

}  // extern "C"
