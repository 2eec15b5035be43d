// optdp for PostgreSQL: what the aggregates share (optdp_pg.cpp, gaussian
// and the other aggregate files): the backend's noise generators, the charge
// of a pure release, the call's parameters read from its Aggref (never from a
// row), and bytea transition states. PostgreSQL side unless said otherwise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/gaussian.hpp"
#include "core/ledger_rule.hpp"
#include "core/rng.hpp"
#include "core/samplers.hpp"
#include "core/staircase.hpp"
#include "postgres/citus.hpp"
#include "postgres/common.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "nodes/execnodes.h"
#include "nodes/primnodes.h"
#include "utils/memutils.h"
}

namespace optdp_pg {

// ---- per-backend noise ---------------------------------------------------------

struct Backend {
  optdp::OsRng os;
  std::unique_ptr<optdp::SeededRng> seeded;
  std::unique_ptr<optdp::TwoSidedGeometric> geo;
  // Two integer staircases, cached (building one costs tens of microseconds;
  // private_var draws two per release).
  std::unique_ptr<optdp::IntegerStaircase> stair[2];
  double stair_eps[2] = {0, 0};
  int stair_next = 0;
  // The discrete Gaussian of the last sigma^2 asked for (gaussian.cpp).
  std::unique_ptr<optdp::DiscreteGaussian> dgauss;
  optdp::Rng& rng() { return seeded ? static_cast<optdp::Rng&>(*seeded) : os; }
  const optdp::DiscreteGaussian& discrete_gaussian(__float128 sigma2) {
    if (!dgauss || dgauss->sigma2() != sigma2) dgauss = std::make_unique<optdp::DiscreteGaussian>(sigma2);
    return *dgauss;
  }
  const optdp::TwoSidedGeometric& geometric(double alpha) {
    if (!geo || geo->alpha() != alpha) geo = std::make_unique<optdp::TwoSidedGeometric>(alpha);
    return *geo;
  }
  const optdp::IntegerStaircase& staircase(double eps, std::int64_t D, std::int64_t r) {
    for (int i = 0; i < 2; ++i)
      if (stair[i] && stair_eps[i] == eps && stair[i]->D() == D && stair[i]->r() == r) return *stair[i];
    const int i = stair_next;
    stair_next = 1 - stair_next;
    stair[i] = std::make_unique<optdp::IntegerStaircase>(eps, D, r);
    stair_eps[i] = eps;
    return *stair[i];
  }
};

// The backend's generators, created on first use: C++, call inside run_cpp.
Backend& backend();
// Whether dp_seed made this backend's noise reproducible.
bool backend_seeded();

// ---- the ledger (ledger.cpp) ---------------------------------------------------

// Whether this database has a ledger (a budget row).
bool ledger_attached(const char* function);
// Opens the ledger's connection if need be; raises if it cannot (PostgreSQL side).
void connect_ledger(const char* function);
// After connect_ledger: the ledger's account and history in one snapshot, on
// the ledger's connection (optdp's fixed statements). False without a ledger.
// C++: throws std::runtime_error if it cannot be read; call inside run_cpp.
bool read_ledger(optdp::LedgerAccount& account, optdp::zcdp::History& history);

// ---- parameters from the call expression (optdp_pg.cpp) ------------------------

// ---- parameters from the call expression --------------------------------------

constexpr int kMaxParams = 16;  // private_count_levels has up to 16

// The parameters of one call as plain values (read on the PostgreSQL side).
struct CallParams {
  int nargs = 0;   // arguments of the aggregate call
  int first = 0;   // index of the first parameter
  int count = 0;   // the parameters: nargs - first, or the elements of a packed array
  bool packed = false;  // given as one float8[] (the sums' (x, params) form, plan.cpp)
  bool constant[kMaxParams];  // false: the expression could depend on a row
  bool isnull[kMaxParams];
  Oid type[kMaxParams];
  double number[kMaxParams];  // FLOAT8OID
  char text[kMaxParams][64];  // TEXTOID (truncated; only short specs are valid)
  int text_len[kMaxParams];
};

// The statement's constant behind e (a Const or a PARAM_EXTERN Param, under
// relabellings), or nullptr for anything else.
Expr* statement_constant(Expr* e);
// The Aggref of the call being computed, followed down a parallel plan to the
// partial Aggref that keeps the call's arguments.
Aggref* call_aggref(FunctionCallInfo fcinfo, const char* function);
// Reads the parameters of the call: arguments first.. of the aggregate call
// (first < 0: the last -first arguments), counting only the call's own
// arguments (not the resjunk sort keys of an ORDER BY, which read_call
// refuses). Row-dependent ones are marked, not evaluated.
void read_call(FunctionCallInfo fcinfo, const char* function, int first, CallParams& out);
// The checks of the parameters (C++: throw std::invalid_argument, call inside run_cpp).
[[noreturn]] void not_constant(const char* name);
std::string describe_number(double v);
void all_constant(const CallParams& p, std::initializer_list<const char*> names);
double number_param(const CallParams& p, int i, const char* name);
std::string text_param(const CallParams& p, int i, const char* name, const char* domain);
double alpha_param(const CallParams& p, int i);
// The function name for messages: the aggregate's own name.
const char* agg_name(FunctionCallInfo fcinfo, const char* fallback);
// The refusals of a call's shape, raised before the scan by the executor hook
// (release.cpp) and again by read_call (PostgreSQL side): an optdp aggregate
// used as a window function (every row would be a release), and ORDER BY or
// DISTINCT inside its call (its sort keys would sit among its arguments).
[[noreturn]] void refuse_window_use();
[[noreturn]] void refuse_sorted_call(const char* function);

// ---- bytea states --------------------------------------------------------------

// ---- parameters carried in the state ------------------------------------------
//
// Every state carries the parameters of the call that made it: the empty
// state (INITCOND, all zero bytes) has none yet; the transition function
// writes the parameters it read (read_call: statement constants, before the
// first row) into the state at its first row; the combine function refuses
// two states that both have parameters and differ (refuse_other_params) and
// keeps them; the final function releases with the state's copy after
// checking that it equals the planned call's parameters, which the executor
// hook admitted and charged (refuse_state_params: a mismatch fails closed),
// and an empty state releases with the planned call's parameters. In a plain
// plan the two are always equal: whether a group has rows changes neither the
// path, nor the cost, nor any message. Shipped states (*_state) carry them
// too (docs/scale.md, "States").

// Raises "<function>: cannot combine states made with different parameters":
// one fixed message, which quotes no value.
[[noreturn]] void refuse_other_params(const char* function);
// Raises "<function>: the state was made with other parameters than the call's
// that was admitted and charged, so nothing is released" (fails closed).
[[noreturn]] void refuse_state_params(const char* function);

// The rule for the states whose parameters are several fields (the sums,
// gaussian_sum, the moments, private_select's header): each such State has a
// has_params flag, and its file defines set_params(State&, const Params&),
// same_params(const State&, const State&) and take_params(State& to, const
// State& from), found by argument-dependent lookup.

// The final function's check: raises unless the state's parameters (if it has
// any) are the planned call's, p.
template <class State, class Params>
void check_released_params(const char* fn, const State& s, const Params& p) {
  if (!s.has_params) return;
  State want{};
  set_params(want, p);
  if (!same_params(s, want)) refuse_state_params(fn);
}

// The combine function's: two states with different parameters are refused;
// a state without any takes the other's.
template <class State>
void combine_params(FunctionCallInfo fcinfo, const char* name, State& a, const State& b) {
  if (a.has_params && b.has_params && !same_params(a, b)) refuse_other_params(agg_name(fcinfo, name));
  if (!a.has_params && b.has_params) take_params(a, b);
}

// The counts' state (private_count, gaussian_count, and private_count_levels(_of),
// which shares private_count's): the number of rows and the count's parameter
// (private_count's alpha, gaussian_count's rho; 0: no parameters yet, which no
// valid call has). private_count_levels' parameters are up to 16 alphas: it
// carries their digest (levels.cpp, levels_digest), its shipped state the
// alphas themselves.
struct CountState {
  std::int64_t rows;
  double param;
};
static_assert(sizeof(CountState) == 16, "sql/*.sql's INITCOND of the counts");

template <class S>
S load(bytea* b, const char* function, const char* what) {
  S s;
  if (VARSIZE_ANY_EXHDR(b) != sizeof(S))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state must be a %s state (%d bytes), but is a bytea of %d bytes", function, what,
                           static_cast<int>(sizeof(S)), static_cast<int>(VARSIZE_ANY_EXHDR(b)))));
  std::memcpy(&s, VARDATA_ANY(b), sizeof(S));
  return s;
}

template <class S>
void store(bytea* b, const S& s) {
  std::memcpy(VARDATA_ANY(b), &s, sizeof(S));
}

template <class S>
bytea* new_state(const S& s) {
  bytea* b = static_cast<bytea*>(palloc(VARHDRSZ + sizeof(S)));
  SET_VARSIZE(b, VARHDRSZ + sizeof(S));
  store(b, s);
  return b;
}

// The transition state argument, writable in place when called as an
// aggregate (PostgreSQL's rule for pass-by-reference states); a copy in the
// aggregate's memory context otherwise.
template <class S>
bytea* state_arg(FunctionCallInfo fcinfo, const char* function, const char* what) {
  MemoryContext aggctx;
  if (!AggCheckCallContext(fcinfo, &aggctx))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s: must be called as an aggregate", function)));
  if (PG_ARGISNULL(0)) {
    MemoryContext old = MemoryContextSwitchTo(aggctx);
    bytea* b = new_state(S{});
    MemoryContextSwitchTo(old);
    return b;
  }
  bytea* b = PG_GETARG_BYTEA_PP(0);
  (void)load<S>(b, function, what);
  return b;
}

// The transition state on the per-row path, once the first call (state_arg)
// has checked the call context and the state: the aggregate's own value,
// built from INITCOND or returned by the previous call, never toasted.
inline bytea* own_state(FunctionCallInfo fcinfo) { return reinterpret_cast<bytea*>(DatumGetPointer(PG_GETARG_DATUM(0))); }

// The function instance's cache of the call's parameters (fn_extra), or
// nullptr before the first call that needs it. Under Citus's wrappers, which
// call optdp's functions through a new FmgrInfo per row (and per group),
// without an expression (fn_expr), it is the execution's (citus.hpp,
// citus_cache_find), so that the parameters are read once per release there
// too.
template <class C>
C* fn_cache(FunctionCallInfo fcinfo) {
  void* c = fcinfo->flinfo->fn_extra;
  if (c == nullptr && fcinfo->flinfo->fn_expr == nullptr) [[unlikely]] {
    c = citus_cache_find(fcinfo);
    fcinfo->flinfo->fn_extra = c;
  }
  return static_cast<C*>(c);
}

// The function instance's cache of the call's parameters (fn_extra), zeroed,
// in the instance's memory (the execution's, under Citus's wrappers): created
// by the first call that needs it. The counts', the sums' and the moments'
// are created only once their parameters are read and checked, so that their
// per-row paths take any cache they find for a ready one.
template <class C>
C* instance_cache(FunctionCallInfo fcinfo) {
  void* c = fcinfo->flinfo->fn_expr == nullptr ? citus_cache_new(fcinfo, sizeof(C)) : nullptr;
  if (c == nullptr) c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(C));
  fcinfo->flinfo->fn_extra = c;
  return static_cast<C*>(c);
}

// The one parameter of a count (alpha, rho): the call's last argument, read
// and checked by check(p, 0) once per function instance (fn_extra), by the
// transition and the final functions alike.
struct CountParam {
  bool ready;
  double value;
};

template <double (*Check)(const CallParams&, int)>
double count_param(FunctionCallInfo fcinfo, const char* function) {
  auto* cache = fn_cache<CountParam>(fcinfo);
  if (cache && cache->ready) return cache->value;
  CallParams p;
  read_call(fcinfo, function, -1, p);
  Failure f;
  double v = 0;
  run_cpp(f, function, [&] { v = Check(p, 0); });
  raise(f);
  // Created only now, ready: the per-row path takes any cache for a read one.
  if (!cache) cache = instance_cache<CountParam>(fcinfo);
  cache->value = v;
  cache->ready = true;
  return v;
}

// A row count's transition and combine, shared by the counts (private_count,
// gaussian_count): State is CountState; read(fcinfo, name) is the count's
// count_param, which sets the function instance's CountParam on the first
// call. (state, param) counts every row; (state, x, param) the rows whose x
// is not NULL; and so do (state) and (state, x), the calls whose constant
// parameter the planner hook made their direct argument (plan.cpp). So a row
// counts when the call has no argument but the state, or its first is not
// NULL (a parameter never is by then: read_call refuses NULL before the scan).
// Every call writes the parameter into a state that has none.
template <class State, class Read>
[[gnu::noinline]] bytea* count_rows_first_call(FunctionCallInfo fcinfo, const char* name, Read read) {
  bytea* st = state_arg<State>(fcinfo, name, name);
  read(fcinfo, agg_name(fcinfo, name));
  return st;
}

// The parameter into a state whose own is `have` (the state's bytes at base):
// written if it has none, refused if it has another (a state made elsewhere).
[[gnu::noinline]] inline void note_count_param(FunctionCallInfo fcinfo, const char* name, unsigned char* at,
                                                double have, double value) {
  if (have != 0) refuse_other_params(agg_name(fcinfo, name));
  std::memcpy(at, &value, sizeof value);
}

// One row into a count state st whose parameter must be `param`: the
// parameter written if the state has none (refused if another), and the
// count's 8 bytes incremented if `counts`, not the whole state.
inline void count_row(FunctionCallInfo fcinfo, const char* name, bytea* st, double param, bool counts) {
  unsigned char* base = reinterpret_cast<unsigned char*>(VARDATA_ANY(st));
  double have;
  std::memcpy(&have, base + offsetof(CountState, param), sizeof have);
  if (have != param) [[unlikely]]
    note_count_param(fcinfo, name, base + offsetof(CountState, param), have, param);
  if (counts) {
    unsigned char* rows = base + offsetof(CountState, rows);
    std::int64_t n;
    std::memcpy(&n, rows, sizeof n);
    ++n;
    std::memcpy(rows, &n, sizeof n);
  }
}

// Every row's path through the general steps: the first call of a group,
// a state whose parameter is not yet the call's, a NULL x, a state with a
// short header (which nodeAgg never makes: INITCOND's copy and what the
// transition returned have 4-byte headers). Out of line, and entered by a
// tail call, so that count_rows_trans's own path saves no register.
template <class State, class Read>
[[gnu::noinline]] Datum count_rows_general(FunctionCallInfo fcinfo, const char* name, Read read) {
  auto* cache = fn_cache<CountParam>(fcinfo);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) {
    st = count_rows_first_call<State>(fcinfo, name, read);
    cache = fn_cache<CountParam>(fcinfo);
  } else {
    st = own_state(fcinfo);
  }
  count_row(fcinfo, name, st, cache->value, PG_NARGS() == 1 || !PG_ARGISNULL(1));
  PG_RETURN_BYTEA_P(st);
}

// One row: the count's 8 bytes incremented in place when the function
// instance has read its parameter (fn_extra), the state has it (the same
// bits) and the row counts; everything else, with the same outcome for every
// row, in count_rows_general.
template <class State, class Read>
Datum count_rows_trans(FunctionCallInfo fcinfo, const char* name, Read read) {
  static_assert(std::is_same_v<State, CountState>);
  const auto* cache = static_cast<const CountParam*>(fcinfo->flinfo->fn_extra);  // ready once set
  if (cache == nullptr || PG_ARGISNULL(0)) [[unlikely]]
    return count_rows_general<State>(fcinfo, name, read);
  unsigned char* st = reinterpret_cast<unsigned char*>(DatumGetPointer(PG_GETARG_DATUM(0)));
  if (VARATT_IS_1B(st)) [[unlikely]]
    return count_rows_general<State>(fcinfo, name, read);
  unsigned char* data = st + VARHDRSZ;
  std::uint64_t have, want;
  std::memcpy(&have, data + offsetof(CountState, param), sizeof have);
  std::memcpy(&want, &cache->value, sizeof want);
  if (have != want) [[unlikely]]
    return count_rows_general<State>(fcinfo, name, read);
  if (PG_NARGS() == 1 || !PG_ARGISNULL(1)) {
    std::int64_t n;
    std::memcpy(&n, data + offsetof(CountState, rows), sizeof n);
    ++n;
    std::memcpy(data + offsetof(CountState, rows), &n, sizeof n);
  }
  return PointerGetDatum(st);
}

// Adds two count states; refuses two with different parameters and keeps the
// parameter of the one that has it.
template <class State>
Datum count_rows_combine(FunctionCallInfo fcinfo, const char* name) {
  bytea* st = state_arg<State>(fcinfo, name, name);
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  State a = load<State>(st, name, name);
  const State b = load<State>(PG_GETARG_BYTEA_PP(1), name, name);
  if (a.param != 0 && b.param != 0 && a.param != b.param) refuse_other_params(agg_name(fcinfo, name));
  if (a.param == 0) a.param = b.param;
  a.rows += b.rows;
  store(st, a);
  PG_RETURN_BYTEA_P(st);
}

// The parameter a count's final function releases with: the state's copy,
// which must equal the planned call's `planned` (admitted and charged), or
// `planned` for a state without one (no rows).
inline double released_param(const char* function, double in_state, double planned) {
  if (in_state == 0) return planned;
  if (in_state != planned) refuse_state_params(function);
  return in_state;
}

// ---- shipped states (the *_state aggregates, merged by the *_merge ones) -------
//
// A shipped state's tag covers the kind of the aggregate that made it (so
// that a merge refuses another aggregate's state); private_count's and the
// sums' states hold no other mark of it, every later one also begins with
// it. Each records the parameters of the call that made it, which the merge
// compares with its own before it adds the state.

enum class Shipped : std::uint32_t {
  Avg = 0x6f640001,
  Var,
  Stddev,
  Quantile,
  Median,
  Levels,
  Select,
  Count,  // private_count_state (its bytes carry no kind: the tag does)
  Sum,    // staircase_sum_state, laplace_sum_state
  GaussianCount,
  GaussianSum,
};

// The aggregate that makes a state of that kind, for messages ("private_avg_state").
inline const char* shipped_by(Shipped k) {
  switch (k) {
    case Shipped::Avg: return "private_avg_state";
    case Shipped::Var: return "private_var_state";
    case Shipped::Stddev: return "private_stddev_state";
    case Shipped::Quantile: return "private_quantile_state";
    case Shipped::Median: return "private_median_state";
    case Shipped::Levels: return "private_count_levels_state";
    case Shipped::Select: return "private_select_state";
    case Shipped::Count: return "private_count_state";
    case Shipped::Sum: return "staircase_sum_state or laplace_sum_state";
    case Shipped::GaussianCount: return "gaussian_count_state";
    case Shipped::GaussianSum: return "gaussian_sum_state";
  }
  return nullptr;
}

// Raises "<merge>: <message()>" (message() builds the text, inside run_cpp).
template <class Message>
void refuse_state(const char* merge, Message&& message) {
  Failure f;
  run_cpp(f, merge, [&] { throw std::invalid_argument(message()); });
  raise(f);
}

// ---- authenticated shipped states (states.cpp) ---------------------------------
//
// A shipped state is its bytes, a random nonce and a MAC (HMAC-SHA-512-256)
// keyed by the key in optdp.state_key_file's file over its kind, its format
// version, its bytes and the nonce; a merge verifies the tag before it reads
// anything else of the state, and a transaction opens each nonce once
// (states.cpp).

constexpr std::size_t kStateTagBytes = 32;

// Defines optdp.state_key_file (from _PG_init).
void define_state_key();
// Raises unless this backend can seal and verify states: optdp preloaded and
// a valid key in the file optdp.state_key_file names. PostgreSQL side.
void check_state_key(const char* function);
// A new bytea: state's bytes followed by their tag for kind. PostgreSQL side.
bytea* seal_state(const char* function, Shipped kind, bytea* state);
// Argument i of a merge, which must be a state of kind that this cluster
// shipped: its bytes without the tag (a copy), or a refusal whose message
// quotes nothing of the argument. PostgreSQL side.
bytea* open_state(FunctionCallInfo fcinfo, int i, const char* merge, Shipped kind);

// A *_merge's support functions are its release's, wrapped (states.cpp: the
// merge's state also lists the nonces of the states opened under Citus's
// worker_partial_agg). merge_trans calls the merge's own step `add` on the
// release's state; merge_combine calls the release's combine function after
// refusing a nonce that the two states carry twice; merge_final records the
// listed nonces in this transaction's table, then calls the release's final
// function on the release's state. PostgreSQL side.
Datum merge_trans(FunctionCallInfo fcinfo, PGFunction add);
Datum merge_combine(FunctionCallInfo fcinfo, PGFunction combine);
Datum merge_final(FunctionCallInfo fcinfo, PGFunction release);

// The shipped state, argument i of a merge, verified (open_state): made by
// this cluster's aggregate of kind `want` (its size is the caller's check).
inline bytea* shipped_arg(FunctionCallInfo fcinfo, int i, const char* merge, Shipped want) {
  return open_state(fcinfo, i, merge, want);
}

// "(1, 0, 10)": parameters for a refusal's message.
inline std::string describe_numbers(std::initializer_list<double> v) {
  std::string s = "(";
  for (double x : v) s += (s.size() > 1 ? ", " : "") + describe_number(x);
  return s + ")";
}

}  // namespace optdp_pg
