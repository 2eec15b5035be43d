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
#include "core/format.hpp"
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
  // The call's parameters (aggregate.hpp, "parameters carried in the state"),
  // written by the first row; has_params 0: none yet.
  double eps, sensitivity;
  std::int32_t method;
  std::uint32_t has_params;
};
static_assert(sizeof(SelectHeader) == 48);
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

// candidate: the index of the candidate's argument in the call (0, or 1 in
// private_select_merge, whose candidate argument only gives the type); eps
// comes after it and the score (or the state).
const SelectParams& select_params(FunctionCallInfo fcinfo, const char* function, int candidate = 0) {
  auto* cache = fn_cache<SelectParams>(fcinfo);
  if (cache && cache->ready) return *cache;
  if (!cache) cache = instance_cache<SelectParams>(fcinfo);
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
  s.type = exprType(reinterpret_cast<Node*>(static_cast<TargetEntry*>(list_nth(a->args, candidate))->expr));
  get_typlenbyval(s.type, &s.typlen, &s.typbyval);
  s.ready = true;
  *cache = s;
  return *cache;
}

void set_params(SelectHeader& h, const SelectParams& p) {
  h.eps = p.eps;
  h.sensitivity = p.sensitivity;
  h.method = static_cast<std::int32_t>(p.method);
  h.has_params = 1;
}

bool same_params(const SelectHeader& a, const SelectHeader& b) {
  return a.eps == b.eps && a.sensitivity == b.sensitivity && a.method == b.method;
}

void take_params(SelectHeader& to, const SelectHeader& from) {
  to.eps = from.eps;
  to.sensitivity = from.sensitivity;
  to.method = from.method;
  to.has_params = 1;
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
  auto* cache = fn_cache<SelectParams>(fcinfo);
  if (!(cache && cache->ready)) [[unlikely]] {  // the first row: check the context, read the call once
    if (!AggCheckCallContext(fcinfo, nullptr)) call_aggref(fcinfo, "private_select");
    cache = const_cast<SelectParams*>(&select_params(fcinfo, agg_name(fcinfo, "private_select")));
  }
  const SelectParams& p = *cache;
  bytea* st = PG_ARGISNULL(0) ? nullptr : own_state(fcinfo);
  SelectHeader h = st ? select_header(st) : SelectHeader{};
  const std::size_t room = st && VARSIZE_ANY_EXHDR(st) >= sizeof h ? VARSIZE_ANY_EXHDR(st) - sizeof h : 0;
  if (!h.has_params) set_params(h, p);  // written with the header below
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
  combine_params(fcinfo, "private_select", ha, hb);
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

}  // extern "C"

namespace {

// The release of a state (private_select's or private_select_merge's):
// charged once, then one candidate drawn by the core's sampler. Returns the
// chosen entry, or nullptr for no candidates (the empty candidate set is
// public); *len is its length (-1: NULL).
const char* choose(FunctionCallInfo fcinfo, const char* fn, const SelectParams& p, bytea* st, std::int32_t* len) {
  const SelectHeader h = st ? select_header(st) : SelectHeader{};
  if (st && VARSIZE_ANY_EXHDR(st) != 0 &&
      (VARSIZE_ANY_EXHDR(st) < sizeof h || h.used > VARSIZE_ANY_EXHDR(st) - sizeof h))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: state is not a private_select state", fn)));
  check_released_params(fn, h, p);  // the state's parameters are then p
  release_charge(fcinfo, {fn, p.eps, 0.0});
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
  if (h.count == 0) return nullptr;
  const char* entries = VARDATA_ANY(st) + sizeof h;
  std::size_t chosen_at = 0;
  run_cpp(f, fn, [&] {
    std::vector<double> scores(h.count);
    std::vector<std::size_t> at(h.count);
    std::size_t off = 0;
    for (std::uint32_t i = 0; i < h.count; ++i) {
      std::int32_t n;
      std::memcpy(&scores[i], entries + off, sizeof(double));
      std::memcpy(&n, entries + off + sizeof(double), sizeof n);
      at[i] = off;
      off += sizeof(double) + sizeof n + (n > 0 ? static_cast<std::size_t>(n) : 0);
      if (off > h.used) throw std::invalid_argument("state is not a private_select state");
    }
    const auto gamma = optdp::selection_exponents(scores, p.eps, p.sensitivity);
    chosen_at = at[optdp::sample_selection(backend().rng(), p.method, gamma)];
  });
  raise(f);
  std::memcpy(len, entries + chosen_at + sizeof(double), sizeof *len);
  return entries + chosen_at + sizeof(double) + sizeof *len;
}

}  // namespace

extern "C" {

// The release, of the candidate's own type.
Datum optdp_select_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "private_select");
  const SelectParams& p = select_params(fcinfo, fn);
  bytea* st = PG_ARGISNULL(0) ? nullptr : PG_GETARG_BYTEA_PP(0);
  std::int32_t len = -1;
  const char* data = choose(fcinfo, fn, p, st, &len);
  if (data == nullptr || len < 0) PG_RETURN_NULL();
  if (select_header(st).typbyval) {
    Datum d;
    std::memcpy(&d, data, sizeof d);
    return d;
  }
  void* copy = palloc(len);
  std::memcpy(copy, data, len);
  return PointerGetDatum(copy);
}

}  // extern "C"

// ---- shipped states: private_select_state, private_select_merge -----------------
//
// A shipped state lists the shard's candidates by their text (the type's
// output function), so that it means the same on another server (a binary
// datum can hold a server's own OIDs: an enum's, an array's element type),
// with the type's name and (eps, sensitivity, method). private_select_merge
// (state, candidate, eps [, sensitivity [, method]]) appends the candidates of
// states made with the same parameters and candidates of the same type, and
// returns the chosen one in the type of its candidate argument, whose value
// is not read (NULL::text, NULL::int): it reads the text back with that
// type's input function. Its entries are the shipped texts.

namespace {

struct SelectShipped {
  std::uint32_t kind, flags;
  std::uint32_t count, method;
  double eps, sensitivity;
  std::uint64_t used;  // bytes of entries after the header
  char type[128];      // the candidates' type (format_type_be), NUL-terminated, truncated
};

const char* method_name(std::uint32_t m) {
  return m == static_cast<std::uint32_t>(optdp::SelectionMethod::Exponential) ? "'exponential'" : "'permute_and_flip'";
}

void type_name(Oid type, char (&out)[128]) {
  const char* n = format_type_be(type);
  std::memset(out, 0, sizeof out);
  std::strncpy(out, n, sizeof out - 1);
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_select_state_final) {
  const char* fn = agg_name(fcinfo, "private_select_state");
  const SelectParams& p = select_params(fcinfo, fn);
  bytea* st = PG_ARGISNULL(0) ? nullptr : PG_GETARG_BYTEA_PP(0);
  const SelectHeader h = st ? select_header(st) : SelectHeader{};
  if (st && VARSIZE_ANY_EXHDR(st) != 0 &&
      (VARSIZE_ANY_EXHDR(st) < sizeof h || h.used > VARSIZE_ANY_EXHDR(st) - sizeof h))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: state is not a private_select state", fn)));
  check_released_params(fn, h, p);
  SelectShipped out{};
  out.kind = static_cast<std::uint32_t>(Shipped::Select);
  out.flags = h.flags;
  out.method = static_cast<std::uint32_t>(p.method);
  out.eps = p.eps;
  out.sensitivity = p.sensitivity;
  type_name(p.type, out.type);
  // the candidates' texts, then their total size
  const std::uint32_t count = h.flags ? 0 : h.count;
  char** texts = static_cast<char**>(palloc0((count ? count : 1) * sizeof(char*)));
  double* scores = static_cast<double*>(palloc0((count ? count : 1) * sizeof(double)));
  Oid output;
  bool varlena;
  getTypeOutputInfo(p.type, &output, &varlena);
  const char* entries = st ? VARDATA_ANY(st) + sizeof h : nullptr;
  std::uint64_t off = 0, used = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::int32_t len;
    std::memcpy(&scores[i], entries + off, sizeof(double));
    std::memcpy(&len, entries + off + sizeof(double), sizeof len);
    const char* data = entries + off + sizeof(double) + sizeof len;
    off += sizeof(double) + sizeof len + (len > 0 ? static_cast<std::size_t>(len) : 0);
    if (off > h.used)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: state is not a private_select state", fn)));
    if (len >= 0) {
      Datum d;
      if (h.typbyval) std::memcpy(&d, data, sizeof d);
      else d = PointerGetDatum(data);
      texts[i] = OidOutputFunctionCall(output, d);
    }
    used += sizeof(double) + sizeof(std::int32_t) + (texts[i] ? strlen(texts[i]) : 0);
  }
  if (used > kSelectMaxBytes - sizeof out) {
    out.flags |= kTooLarge;  // refused by the merge, after its charge, as by private_select
    used = 0;
  }
  out.count = out.flags ? 0 : count;
  out.used = out.flags ? 0 : used;
  auto* b = static_cast<bytea*>(palloc(VARHDRSZ + sizeof out + out.used));
  SET_VARSIZE(b, VARHDRSZ + sizeof out + out.used);
  std::memcpy(VARDATA(b), &out, sizeof out);
  char* at = VARDATA(b) + sizeof out;
  for (std::uint32_t i = 0; i < out.count; ++i) {
    const std::int32_t len = texts[i] ? static_cast<std::int32_t>(strlen(texts[i])) : -1;
    std::memcpy(at, &scores[i], sizeof(double));
    std::memcpy(at + sizeof(double), &len, sizeof len);
    if (len > 0) std::memcpy(at + sizeof(double) + sizeof len, texts[i], len);
    at += sizeof(double) + sizeof len + (len > 0 ? len : 0);
  }
  PG_RETURN_BYTEA_P(seal_state(fn, Shipped::Select, b));
}

// private_select_merge's transition: appends a shipped state's candidates.
OPTDP_PG_STEP(optdp_select_merge_add) {
  const char* fn = "private_select_merge";
  if (!AggCheckCallContext(fcinfo, nullptr)) call_aggref(fcinfo, fn);
  const SelectParams& p = select_params(fcinfo, fn, 1);
  bytea* in = shipped_arg(fcinfo, 1, fn, Shipped::Select);
  SelectShipped hin{};
  if (VARSIZE_ANY_EXHDR(in) < sizeof hin)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state must be a private_select_state state, but is a bytea of %d bytes", fn,
                           static_cast<int>(VARSIZE_ANY_EXHDR(in)))));
  std::memcpy(&hin, VARDATA_ANY(in), sizeof hin);
  hin.type[sizeof hin.type - 1] = 0;
  if (hin.eps != p.eps || hin.sensitivity != p.sensitivity || hin.method != static_cast<std::uint32_t>(p.method))
    refuse_state(fn, [&] {
      return "state was computed with (eps, sensitivity, method) = (" + describe_number(hin.eps) + ", " +
             describe_number(hin.sensitivity) + ", " + method_name(hin.method) + "), but they are (" +
             describe_number(p.eps) + ", " + describe_number(p.sensitivity) + ", " +
             method_name(static_cast<std::uint32_t>(p.method)) + ")";
    });
  char want[128];
  type_name(p.type, want);
  if (strcmp(want, hin.type) != 0)
    refuse_state(fn, [&] {
      return std::string("state was computed with candidates of type ") + hin.type + ", but candidate is of type " +
             want;
    });
  if (hin.used != VARSIZE_ANY_EXHDR(in) - sizeof hin)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state is not a private_select_state state", fn)));
  bytea* st = PG_ARGISNULL(0) ? nullptr : own_state(fcinfo);
  SelectHeader h = st ? select_header(st) : SelectHeader{};
  if (!h.has_type) {
    h.has_type = 1;
    h.typlen = -2;  // the entries are texts
  }
  if (!h.has_params) set_params(h, p);
  h.flags |= hin.flags;
  if (static_cast<std::uint64_t>(h.count) + hin.count > optdp::kMaxCandidates)
    h.flags |= kTooMany;
  else if (h.used + hin.used > kSelectMaxBytes - sizeof h)
    h.flags |= kTooLarge;
  if (h.flags) {  // refused by the final anyway: keep no more
    bytea* out = select_alloc(h, 0, nullptr, 0);
    PG_RETURN_BYTEA_P(out);
  }
  const std::size_t room = st && VARSIZE_ANY_EXHDR(st) >= sizeof h ? VARSIZE_ANY_EXHDR(st) - sizeof h : 0;
  if (st == nullptr || h.used + hin.used > room) {
    std::size_t cap = std::max<std::size_t>(256, 2 * (h.used + hin.used));
    cap = std::min(cap, kSelectMaxBytes - sizeof h);
    st = select_alloc(h, cap, st, h.used);
  }
  std::memcpy(VARDATA(st) + sizeof h + h.used, VARDATA_ANY(in) + sizeof hin, hin.used);
  h.used += hin.used;
  h.count += hin.count;
  std::memcpy(VARDATA(st), &h, sizeof h);
  PG_RETURN_BYTEA_P(st);
}

// private_select_merge's release: the chosen text read back as the candidate
// argument's type. Every candidate's text is read back once before the
// charge: a type of the same name can differ between servers (an enum's
// labels, a domain's check), and an input error after the draw would depend
// on which candidate won, that is on the scores; before it, it depends on
// the candidates alone, which are public.
OPTDP_PG_STEP(optdp_select_merge_release) {
  const char* fn = "private_select_merge";
  const SelectParams& p = select_params(fcinfo, fn, 1);
  bytea* st = PG_ARGISNULL(0) ? nullptr : PG_GETARG_BYTEA_PP(0);
  Oid input, ioparam;
  getTypeInputInfo(p.type, &input, &ioparam);
  const SelectHeader h = st ? select_header(st) : SelectHeader{};
  if (st && VARSIZE_ANY_EXHDR(st) >= sizeof h && h.used <= VARSIZE_ANY_EXHDR(st) - sizeof h && !h.flags) {
    MemoryContext check = AllocSetContextCreate(CurrentMemoryContext, "private_select_merge input check",
                                                ALLOCSET_SMALL_SIZES);
    MemoryContext old = MemoryContextSwitchTo(check);
    const char* entries = VARDATA_ANY(st) + sizeof h;
    // The input function's own error would quote the candidate (a row's
    // value): it becomes one message that names only the type.
    volatile bool unreadable = false;
    PG_TRY();
    {
      std::uint64_t off = 0;
      for (std::uint32_t i = 0; i < h.count && off + sizeof(double) + sizeof(std::int32_t) <= h.used; ++i) {
        std::int32_t len;
        std::memcpy(&len, entries + off + sizeof(double), sizeof len);
        off += sizeof(double) + sizeof len;
        if (len < 0) continue;
        if (off + len > h.used) break;  // choose() refuses the state
        char* text = static_cast<char*>(palloc(len + 1));
        std::memcpy(text, entries + off, len);
        text[len] = 0;
        (void)OidInputFunctionCall(input, text, ioparam, -1);
        MemoryContextReset(check);
        off += len;
      }
    }
    PG_CATCH();
    {
      MemoryContextSwitchTo(old);
      FlushErrorState();
      unreadable = true;
    }
    PG_END_TRY();
    MemoryContextSwitchTo(old);
    MemoryContextDelete(check);
    if (unreadable)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("%s: a shipped candidate cannot be read as %s (the candidate's type must be defined alike "
                             "on the shards and the coordinator; the candidate is not shown)",
                             fn, format_type_be(p.type))));
  }
  std::int32_t len = -1;
  const char* data = choose(fcinfo, fn, p, st, &len);
  if (data == nullptr || len < 0) PG_RETURN_NULL();
  char* text = static_cast<char*>(palloc(len + 1));
  std::memcpy(text, data, len);
  text[len] = 0;
  return OidInputFunctionCall(input, text, ioparam, -1);
}

}  // extern "C"

ReleaseCost optdp_pg::select_cost(FunctionCallInfo fcinfo) {
  const char* fn = agg_name(fcinfo, "private_select");
  return {fn, select_params(fcinfo, fn).eps, 0.0};
}

ReleaseCost optdp_pg::select_merge_cost(FunctionCallInfo fcinfo) {
  const char* fn = "private_select_merge";
  return {fn, select_params(fcinfo, fn, 1).eps, 0.0};
}
