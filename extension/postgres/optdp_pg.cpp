// optdp for PostgreSQL 15: the randomised aggregates private_count,
// staircase_sum and laplace_sum, their partial states for shipping between
// servers, and dp_seed / dp_rng / dp_version. The other aggregates have a
// file each (moments.cpp, quantile.cpp, select.cpp, levels.cpp). The maths
// is extension/core/; this file only binds it (docs/scale.md describes the
// SQL surface).
//
// Every aggregate has a bytea state (not `internal`, so that Citus can
// distribute it), a combine function, and is PARALLEL SAFE. The state holds
// the exact aggregate only (a row count, a 128-bit sum of grid integers);
// noise is added once, by the final function, to the merged state.
//
// Parameters are read from the aggregate's call expression (the Aggref), never
// from a row: the transition function and the final function run the same
// reader, so an empty input releases 0 + noise with the same parameters, and
// every message is the same with rows or without. A parameter must be a
// constant of the statement: a literal, a constant expression the planner
// folded, or a query parameter ($1); anything else is refused
// (statement_constant). The release's admission and charge come before the
// first row (release.cpp).
//
// No C++ exception crosses into PostgreSQL: C++ work runs inside run_cpp()
// (common.hpp), which turns an exception into a message copied to a fixed
// buffer, and the ereport happens after every C++ object of the try block is
// destroyed. PostgreSQL calls (which may longjmp) happen outside those blocks.
// The scalar helpers and the set-returning functions are in functions.cpp,
// the ledger in ledger.cpp, what the aggregates share in aggregate.hpp.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/budget.hpp"
#include "core/format.hpp"
#include "core/moments.hpp"
#include "core/quantile.hpp"
#include "core/privacy.hpp"
#include "core/rng.hpp"
#include "core/samplers.hpp"
#include "core/staircase.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/citus.hpp"
#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "postmaster/postmaster.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "executor/executor.h"
#include "utils/array.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

PG_MODULE_MAGIC;
}

using namespace optdp_pg;

namespace optdp_pg {

// Created on first use, inside run_cpp; never freed (one per backend process).
Backend* the_backend = nullptr;
Backend& backend() {
  if (!the_backend) the_backend = new Backend;
  return *the_backend;
}
bool backend_seeded() { return the_backend && the_backend->seeded; }

optdp::Rng& backend_rng() { return backend().rng(); }

// The statement's constant behind e, or nullptr: a Const (a literal, or an
// expression the planner folded), or a query parameter ($n, a PL/pgSQL
// variable: PARAM_EXTERN), either under a binary-compatible relabelling.
// Both are fixed for one execution and read no row. Anything else, a STABLE
// function included, could be evaluated again, change between the first row
// and the final function, or read the table, so it is refused.
Expr* statement_constant(Expr* e) {
  while (e != nullptr && IsA(e, RelabelType)) e = reinterpret_cast<RelabelType*>(e)->arg;
  if (e == nullptr) return nullptr;
  if (IsA(e, Const)) return e;
  if (IsA(e, Param) && reinterpret_cast<Param*>(e)->paramkind == PARAM_EXTERN) return e;
  return nullptr;
}

// The Aggref of the call being computed, with its own arguments. In a
// Finalize Aggregate (parallel plans) the Aggref's one argument is a Var
// referring to the partial aggregate's output: follow it down the plan to the
// partial Aggref, which keeps the call's arguments.
static Aggref* own_call_aggref(FunctionCallInfo fcinfo, const char* function) {
  Aggref* a = AggGetAggref(fcinfo);
  if (a == nullptr && AggCheckCallContext(fcinfo, nullptr) == AGG_CONTEXT_WINDOW) refuse_window_use();
  if (a == nullptr)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s: must be called as an aggregate", function)));
  if (!DO_AGGSPLIT_COMBINE(a->aggsplit)) return a;
  AggState* as = reinterpret_cast<AggState*>(fcinfo->context);
  Plan* plan = outerPlan(as->ss.ps.plan);
  Expr* e = a->args ? static_cast<TargetEntry*>(linitial(a->args))->expr : nullptr;
  for (int depth = 0; plan != nullptr && e != nullptr && depth < 32; ++depth) {
    if (!IsA(e, Var)) break;
    const AttrNumber att = reinterpret_cast<Var*>(e)->varattno;
    if (att < 1 || att > list_length(plan->targetlist)) break;
    e = static_cast<TargetEntry*>(list_nth(plan->targetlist, att - 1))->expr;
    if (IsA(e, Aggref)) return reinterpret_cast<Aggref*>(e);
    if (IsA(plan, Append))
      plan = static_cast<Plan*>(linitial(reinterpret_cast<Append*>(plan)->appendplans));
    else
      plan = outerPlan(plan);
  }
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("%s: cannot find the call's parameters in this plan", function)));
  return nullptr;
}

// The call, also behind Citus's aggregates (citus.hpp): on a worker the
// wrapped call of worker_partial_agg, on the coordinator the worker query's
// call that the ExecutorRun hook found for coord_combine_agg.
Aggref* call_aggref(FunctionCallInfo fcinfo, const char* function) {
  Aggref* a = own_call_aggref(fcinfo, function);
  Aggref* call = citus_call(reinterpret_cast<AggState*>(fcinfo->context)->ss.ps.state, a);
  if (call == nullptr)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("%s: cannot find the call's parameters in this plan", function)));
  return call;
}

[[noreturn]] void refuse_window_use() {
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("optdp: its aggregates cannot be used as window functions (every row would be a release)")));
  pg_unreachable();
}

[[noreturn]] void refuse_sorted_call(const char* function) {
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("%s: ORDER BY and DISTINCT inside the call are not supported (the order of the rows cannot "
                         "change a release; for distinct values, aggregate over SELECT DISTINCT in a subquery)",
                         function)));
  pg_unreachable();
}

// The value of a statement's constant c (statement_constant): a Const's, or
// a query parameter's from the execution's parameter list.
static Datum constant_value(AggState* as, Expr* c, bool* isnull) {
  if (IsA(c, Const)) {
    *isnull = reinterpret_cast<Const*>(c)->constisnull;
    return reinterpret_cast<Const*>(c)->constvalue;
  }
  ExprState* st = ExecInitExpr(c, &as->ss.ps);
  return ExecEvalExprSwitchContext(st, as->ss.ps.ps_ExprContext, isnull);
}

// The parameters of a call in the packed form (x, params float8[]), which
// the planner hook writes (plan.cpp) and a user may write too: the array's
// elements, in order, as the parameters they stand for (NULL ones as NULL),
// after the same check of constancy as every parameter's. c: the array's
// statement constant, or nullptr for an expression that can depend on a row
// (refused with not_constant's message, as any parameter). Its errors are
// raised with no C++ object alive in this frame.
static void read_packed(AggState* as, Expr* c, const char* function, CallParams& out) {
  out.packed = true;
  if (c == nullptr) {
    Failure f;
    run_cpp(f, function, [] { not_constant("params"); });
    raise(f);
  }
  bool isnull;
  const Datum d = constant_value(as, c, &isnull);
  if (isnull)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: params must be an array of numbers, but is NULL", function)));
  ArrayType* array = DatumGetArrayTypeP(d);
  if (ARR_NDIM(array) > 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: params must be a one-dimensional array, but has %d dimensions", function,
                           ARR_NDIM(array))));
  Datum* values;
  bool* nulls;
  int n;
  deconstruct_array(array, FLOAT8OID, sizeof(double), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &values, &nulls, &n);
  if (out.count + n > kMaxParams)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: params holds %d numbers, more than any optdp aggregate takes", function, n)));
  for (int k = 0; k < n; ++k) {
    const int i = out.count++;
    out.type[i] = FLOAT8OID;
    out.constant[i] = true;
    out.isnull[i] = nulls[k];
    out.number[i] = nulls[k] ? 0.0 : DatumGetFloat8(values[k]);
  }
}

// Reads the parameters of the call: arguments first.. of the aggregate call
// (first < 0: the last -first arguments). Only the call's own arguments count:
// Aggref->args also holds the keys of an ORDER BY inside the call, as resjunk
// entries after them, and a key must never be read as a parameter. Such calls
// (and DISTINCT ones) are refused here as before the scan (release.cpp).
// Row-dependent parameters are marked, not evaluated.
void read_call(FunctionCallInfo fcinfo, const char* function, int first, CallParams& out) {
  // Counted by the tests (tests/citus/test_citus.py): once per function
  // instance, never per row, also under Citus's wrappers.
  elog(DEBUG2, "optdp: %s reads its call's parameters", function);
  Aggref* a = call_aggref(fcinfo, function);
  if (a->aggorder != NIL || a->aggdistinct != NIL) refuse_sorted_call(agg_name(fcinfo, function));
  AggState* as = reinterpret_cast<AggState*>(fcinfo->context);
  // Only optdp's own aggregates hold the parameters where this reads them; a
  // support function called through another aggregate (Citus's
  // coord_combine_agg, a user's CREATE AGGREGATE) is refused.
  const char* agg = get_func_name(a->aggfnoid);
  if (agg == nullptr || !(strncmp(agg, "private_", 8) == 0 || strncmp(agg, "staircase_sum", 13) == 0 ||
                          strncmp(agg, "laplace_sum", 11) == 0 || strncmp(agg, "gaussian_count", 14) == 0 ||
                          strncmp(agg, "gaussian_sum", 12) == 0))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("optdp: its support functions work only in its own aggregates, whose calls hold the "
                           "parameters, not in %s", agg ? agg : "another aggregate")));
  // The state and merge forms ship and take authenticated states: without a
  // key they refuse, in every function of the call, with rows or without.
  if (const std::size_t len = strlen(agg);
      len > 6 && (strcmp(agg + len - 6, "_state") == 0 || strcmp(agg + len - 6, "_merge") == 0))
    check_state_key(agg);
  // The call's own arguments: Aggref->args' non-resjunk entries, then the
  // parameter that the planner hook moved to its direct arguments (plan.cpp).
  int own = 0;
  for (ListCell* lc = list_head(a->args); lc != nullptr; lc = lnext(a->args, lc))
    if (!static_cast<TargetEntry*>(lfirst(lc))->resjunk) ++own;
  out.nargs = own + list_length(a->aggdirectargs);
  out.first = first < 0 ? out.nargs + first : first;
  out.count = 0;
  out.packed = false;
  if (out.first < 0 || out.nargs - out.first > kMaxParams)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: unexpected number of arguments", function)));
  for (int j = out.first; j < out.nargs; ++j) {
    // the call's own arguments come first in Aggref->args, in order
    Expr* e;
    if (j < own) {
      TargetEntry* te = static_cast<TargetEntry*>(list_nth(a->args, j));
      if (te->resjunk)
        ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: unexpected arguments of the call", function)));
      e = te->expr;
    } else {
      e = static_cast<Expr*>(list_nth(a->aggdirectargs, j - own));
    }
    const int i = out.count;
    if (i >= kMaxParams)
      ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: unexpected number of arguments", function)));
    out.type[i] = exprType(reinterpret_cast<Node*>(e));
    out.isnull[i] = true;
    Expr* c = statement_constant(e);
    out.constant[i] = c != nullptr;
    if (out.type[i] == FLOAT8ARRAYOID) {
      read_packed(as, c, function, out);
      continue;
    }
    ++out.count;
    if (!out.constant[i]) continue;
    bool isnull;
    const Datum d = constant_value(as, c, &isnull);
    out.isnull[i] = isnull;
    if (isnull) continue;
    if (out.type[i] != FLOAT8OID && out.type[i] != TEXTOID)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                      errmsg("%s: argument %d of the call is not of a parameter's type", function, j + 1)));
    if (out.type[i] == FLOAT8OID) {
      out.number[i] = DatumGetFloat8(d);
    } else if (out.type[i] == TEXTOID) {
      text* t = DatumGetTextPP(d);
      const int n = VARSIZE_ANY_EXHDR(t);
      out.text_len[i] = n;
      std::memcpy(out.text[i], VARDATA_ANY(t), std::min<int>(n, sizeof out.text[i] - 1));
      out.text[i][std::min<int>(n, sizeof out.text[i] - 1)] = 0;
    }
  }
}

[[noreturn]] void not_constant(const char* name) {
  throw std::invalid_argument(std::string(name) +
                              " must be a literal or a query parameter (optdp fixes the noise before it reads any "
                              "row), but is an expression that can depend on a row");
}

std::string describe_number(double v) { return optdp::format_double(v); }

// The first check of every parameter, as in SQLite (sql/catalogue.py's
// literal_param): each must be row-independent before any value is checked,
// so that a bad literal eps and a column for upper give upper's message.
// names: the parameters in order (those past p.count are not in the call).
void all_constant(const CallParams& p, std::initializer_list<const char*> names) {
  int i = 0;
  for (const char* name : names) {
    if (i >= p.count) break;
    if (!p.constant[i]) not_constant(name);
    ++i;
  }
}

double number_param(const CallParams& p, int i, const char* name) {
  if (!p.constant[i]) not_constant(name);
  if (p.isnull[i]) throw std::invalid_argument(std::string(name) + " must be a number, but is NULL");
  return p.number[i];
}

std::string text_param(const CallParams& p, int i, const char* name, const char* domain) {
  if (!p.constant[i]) not_constant(name);
  if (p.isnull[i]) throw std::invalid_argument(std::string(name) + " must be text (" + domain + "), but is NULL");
  if (p.text_len[i] >= static_cast<int>(sizeof p.text[i]))  // longer than any valid spec
    return std::string(p.text[i]) + "...";
  return std::string(p.text[i], p.text_len[i]);
}

double alpha_param(const CallParams& p, int i) {
  const double a = number_param(p, i, "alpha");
  if (!(a > 0 && a < 1)) throw std::invalid_argument("alpha must be in (0, 1), but is " + describe_number(a));
  return a;
}

[[noreturn]] void refuse_other_params(const char* function) {
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("%s: cannot combine states made with different parameters", function)));
  pg_unreachable();
}

[[noreturn]] void refuse_state_params(const char* function) {
  ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR),
                  errmsg("%s: the state was made with other parameters than the call's that was admitted and "
                         "charged, so nothing is released",
                         function)));
  pg_unreachable();
}

const char* agg_name(FunctionCallInfo fcinfo, const char* fallback) {
  Aggref* a = AggGetAggref(fcinfo);
  if (a != nullptr) a = citus_call(reinterpret_cast<AggState*>(fcinfo->context)->ss.ps.state, a);
  if (a == nullptr) return fallback;
  char* n = get_func_name(a->aggfnoid);
  return n ? n : fallback;
}

}  // namespace optdp_pg

namespace {

// ---- states ------------------------------------------------------------------

// The sums: the exact sum of grid integers, and the call's parameters
// (aggregate.hpp, "parameters carried in the state"): eps, lower and upper
// (lower 0 and upper delta for the (eps, delta) forms), which fix the grid,
// and the cost (cost_code: the Cost, plus 0x100 for a fixed gamma, which is
// then `gamma`), which fixes the staircase. has_params 0: none yet.
struct SumState {
  unsigned char sum_bytes[16];
  double eps, lower, upper, gamma;
  std::int32_t has_params, cost_code;
  __int128 sum() const {
    __int128 v;
    std::memcpy(&v, sum_bytes, sizeof v);
    return v;
  }
  void set_sum(__int128 v) { std::memcpy(sum_bytes, &v, sizeof v); }
};
static_assert(sizeof(SumState) == 56, "sql/*.sql's INITCOND of the sums");

// ---- private_count -------------------------------------------------------------

// alpha of the running call (its last argument), read and checked once per
// function instance.
double count_alpha(FunctionCallInfo fcinfo, const char* function) {
  return count_param<alpha_param>(fcinfo, function);
}

}  // namespace

ReleaseCost optdp_pg::count_cost(FunctionCallInfo fcinfo) {
  const char* fn = agg_name(fcinfo, "private_count");
  const double alpha = count_alpha(fcinfo, fn);
  Failure f;
  double eps = 0;
  run_cpp(f, fn, [&] { eps = optdp::epsilon_of_alpha(alpha); });
  raise(f);
  return {fn, eps, 0.0};
}

extern "C" {

OPTDP_PG_FUNCTION(optdp_count_trans);
OPTDP_PG_FUNCTION(optdp_count_combine);
OPTDP_PG_STEP(optdp_count_merge_add);
OPTDP_PG_FUNCTION(optdp_count_final);
OPTDP_PG_FUNCTION(optdp_count_state_final);
OPTDP_PG_FUNCTION(optdp_sum_trans);
OPTDP_PG_FUNCTION(optdp_sum_combine);
OPTDP_PG_STEP(optdp_sum_merge_add);
OPTDP_PG_FUNCTION(optdp_staircase_final);
OPTDP_PG_FUNCTION(optdp_laplace_final);
OPTDP_PG_FUNCTION(optdp_sum_state_final);
OPTDP_PG_FUNCTION(optdp_seed);
OPTDP_PG_FUNCTION(optdp_rng);
OPTDP_PG_FUNCTION(optdp_version);

// optdp_count_trans(state, alpha) counts every row; (state, x, alpha) the
// rows with x not NULL. Parameters come from the call, not the row.
Datum optdp_count_trans(PG_FUNCTION_ARGS) {
  return count_rows_trans<CountState>(fcinfo, "private_count", count_alpha);
}

Datum optdp_count_combine(PG_FUNCTION_ARGS) { return count_rows_combine<CountState>(fcinfo, "private_count"); }

// private_count_merge(state, alpha): adds shipped states made with the same
// alpha; its own state carries that alpha.
Datum optdp_count_merge_add(PG_FUNCTION_ARGS) {
  const char* fn = "private_count_merge";
  bytea* st = state_arg<CountState>(fcinfo, fn, "private_count");
  const double alpha = count_alpha(fcinfo, fn);
  const CountState in = load<CountState>(open_state(fcinfo, 1, fn, Shipped::Count), fn, "private_count");
  if (in.param != alpha) {
    Failure f;
    run_cpp(f, fn, [&] {
      throw std::invalid_argument("state was computed with alpha " + describe_number(in.param) +
                                  ", but alpha is " + describe_number(alpha));
    });
    raise(f);
  }
  CountState s = load<CountState>(st, fn, "private_count");
  s.rows += in.rows;
  s.param = alpha;
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

// The release: count + two-sided geometric(alpha) noise, saturating.
Datum optdp_count_final(PG_FUNCTION_ARGS) {
  const ReleaseCost cost = count_cost(fcinfo);
  const char* fn = cost.function;
  const CountState s = PG_ARGISNULL(0) ? CountState{} : load<CountState>(PG_GETARG_BYTEA_PP(0), fn, "private_count");
  const double alpha = released_param(fn, s.param, count_alpha(fcinfo, fn));
  release_charge(fcinfo, cost);
  Failure f;
  std::int64_t out = 0;
  run_cpp(f, fn, [&] {
    Backend& b = backend();
    const std::int64_t noise = b.geometric(alpha)(b.rng());
    if (__builtin_add_overflow(s.rows, noise, &out))
      out = noise > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
  });
  raise(f);
  PG_RETURN_INT64(out);
}

// private_count_state: the exact state, with alpha, for shipping to a coordinator.
Datum optdp_count_state_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "private_count_state");
  const double alpha = count_alpha(fcinfo, fn);
  CountState s = PG_ARGISNULL(0) ? CountState{} : load<CountState>(PG_GETARG_BYTEA_PP(0), fn, "private_count");
  s.param = released_param(fn, s.param, alpha);
  PG_RETURN_BYTEA_P(seal_state(fn, Shipped::Count, new_state(s)));
}

}  // extern "C"

// ---- staircase_sum, laplace_sum -----------------------------------------------

namespace {

struct SumParams {
  bool ready;
  double eps, lower, upper;
  optdp::CostSpec cost;
  optdp::Grid grid;
  std::int64_t r;  // the staircase's r, when computed
  bool has_r;
};

// The parameters of the running call, arguments `first`.. of it (1 for the
// sums, whose first argument is x, and for the merges, whose first is the
// state): (eps, delta), (eps, lower, upper) or (eps, lower, upper, cost).
const SumParams& sum_params(FunctionCallInfo fcinfo, const char* function) {
  auto* cache = fn_cache<SumParams>(fcinfo);
  if (cache && cache->ready) return *cache;
  CallParams p;
  read_call(fcinfo, function, 1, p);
  Failure f;
  SumParams s{};
  run_cpp(f, function, [&] {
    if (p.packed && p.count != 2 && p.count != 3)
      throw std::invalid_argument("params must hold 2 numbers (eps, delta) or 3 (eps, lower, upper), but holds " +
                                  std::to_string(p.count));
    if (p.count == 2)
      all_constant(p, {"eps", "delta"});
    else
      all_constant(p, {"eps", "lower", "upper", "cost"});
    s.eps = number_param(p, 0, "eps");
    optdp::check_positive(s.eps, "eps");
    if (p.count == 2) {
      const double delta = number_param(p, 1, "delta");
      optdp::check_positive(delta, "delta");
      s.lower = 0;
      s.upper = delta;
    } else {
      s.lower = number_param(p, 1, "lower");
      s.upper = number_param(p, 2, "upper");
    }
    s.cost = optdp::CostSpec{};
    if (p.count == 4) s.cost = optdp::parse_cost_spec(text_param(p, 3, "cost", "'l1', 'l2' or 'gamma=G'"));
    s.grid = optdp::make_grid(s.eps, s.lower, s.upper, p.count == 2 ? "delta" : "upper - lower");
  });
  raise(f);
  s.ready = true;
  // Created only now, ready: optdp_sum_trans takes any cache for a read one.
  if (!cache) cache = instance_cache<SumParams>(fcinfo);
  *cache = s;
  return *cache;
}

// The call's parameters into a sum's state, and whether a state's are the call's.
void set_params(SumState& s, const SumParams& p) {
  s.eps = p.eps;
  s.lower = p.lower;
  s.upper = p.upper;
  s.gamma = p.cost.fixed_gamma ? p.cost.gamma : 0;
  s.cost_code = static_cast<std::int32_t>(p.cost.cost) | (p.cost.fixed_gamma ? 0x100 : 0);
  s.has_params = 1;
}

bool same_params(const SumState& a, const SumState& b) {
  return a.eps == b.eps && a.lower == b.lower && a.upper == b.upper && a.gamma == b.gamma &&
         a.cost_code == b.cost_code;
}

// The sum's state's parameters written from the call's (its first row).
[[gnu::noinline]] void note_sum_params(bytea* st, const SumParams& p) {
  SumState s;
  std::memcpy(&s, VARDATA_ANY(st), sizeof s);
  set_params(s, p);
  store(st, s);
}

// Everything of `from` but the sum.
void take_params(SumState& to, const SumState& from) {
  const __int128 v = to.sum();
  to = from;
  to.set_sum(v);
}

}  // namespace

namespace {

// The first call of a group: checks the call context and the state, and
// reads the call's parameters. Out of line, so that the per-row path of
// optdp_sum_trans needs no stack frame.
[[gnu::noinline]] bytea* sum_first_call(FunctionCallInfo fcinfo, SumParams*& cache) {
  bytea* st = state_arg<SumState>(fcinfo, "staircase_sum", "sum");
  cache = const_cast<SumParams*>(&sum_params(fcinfo, agg_name(fcinfo, "staircase_sum")));
  return st;
}

}  // namespace

extern "C" {

// optdp_sum_trans(state, x, params...): adds x, clamped and rounded to the grid.
// The general steps, for the rows that sum_trans_row leaves: the first call
// of a group, a state without the parameters, a NULL or NaN x, a state with
// a short header (which nodeAgg never makes).
[[gnu::noinline]] static Datum sum_trans_general(FunctionCallInfo fcinfo) {
  auto* cache = fn_cache<SumParams>(fcinfo);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0))
    st = sum_first_call(fcinfo, cache);
  else
    st = own_state(fcinfo);
  std::int32_t has;
  std::memcpy(&has, reinterpret_cast<unsigned char*>(VARDATA_ANY(st)) + offsetof(SumState, has_params), sizeof has);
  if (!has) note_sum_params(st, *cache);
  if (!PG_ARGISNULL(1)) {
    double x = PG_GETARG_FLOAT8(1);
    if (std::isnan(x)) x = 0;  // as SQLite's sum() reads NaN: never an error on a row's value
    unsigned char* sum = reinterpret_cast<unsigned char*>(VARDATA_ANY(st)) + offsetof(SumState, sum_bytes);
    __int128 v;
    std::memcpy(&v, sum, sizeof v);
    v += cache->grid.quantize(x, cache->lower, cache->upper);
    std::memcpy(sum, &v, sizeof v);
  }
  PG_RETURN_BYTEA_P(st);
}

// Every other row: x (not NULL, not NaN) clamped, rounded to the grid and
// added to the 16 bytes of the sum in place, in a state that has the call's
// parameters; no stack frame (sum_trans_general is a tail call).
Datum optdp_sum_trans(PG_FUNCTION_ARGS) {
  const auto* cache = static_cast<const SumParams*>(fcinfo->flinfo->fn_extra);  // ready once set
  if (cache == nullptr || PG_ARGISNULL(0) || PG_ARGISNULL(1)) [[unlikely]]
    return sum_trans_general(fcinfo);
  unsigned char* st = reinterpret_cast<unsigned char*>(DatumGetPointer(PG_GETARG_DATUM(0)));
  if (VARATT_IS_1B(st)) [[unlikely]]
    return sum_trans_general(fcinfo);
  std::int32_t has;
  std::memcpy(&has, st + VARHDRSZ + offsetof(SumState, has_params), sizeof has);
  if (!has) [[unlikely]]
    return sum_trans_general(fcinfo);
  const double x = PG_GETARG_FLOAT8(1);
  if (std::isnan(x)) [[unlikely]]
    return sum_trans_general(fcinfo);
  optdp::add_to_int128(st + VARHDRSZ + offsetof(SumState, sum_bytes), cache->grid.quantize(x, cache->lower, cache->upper));
  return PointerGetDatum(st);
}

Datum optdp_sum_combine(PG_FUNCTION_ARGS) {
  bytea* st = state_arg<SumState>(fcinfo, "staircase_sum", "sum");
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  SumState a = load<SumState>(st, "staircase_sum", "sum");
  const SumState b = load<SumState>(PG_GETARG_BYTEA_PP(1), "staircase_sum", "sum");
  combine_params(fcinfo, "staircase_sum", a, b);
  a.set_sum(a.sum() + b.sum());
  store(st, a);
  PG_RETURN_BYTEA_P(st);
}

// staircase_sum_merge / laplace_sum_merge(state, params...): adds shipped
// states made with the same eps, lower and upper (the same grid).
Datum optdp_sum_merge_add(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "staircase_sum_merge");
  bytea* st = state_arg<SumState>(fcinfo, fn, "sum");
  const SumParams& p = sum_params(fcinfo, fn);
  const SumState in = load<SumState>(open_state(fcinfo, 1, fn, Shipped::Sum), fn, "sum");
  if (!in.has_params || in.eps != p.eps || in.lower != p.lower || in.upper != p.upper) {
    Failure f;
    run_cpp(f, fn, [&] {
      throw std::invalid_argument("state was computed with (eps, lower, upper) = (" + describe_number(in.eps) + ", " +
                                  describe_number(in.lower) + ", " + describe_number(in.upper) +
                                  "), but they are (" + describe_number(p.eps) + ", " + describe_number(p.lower) +
                                  ", " + describe_number(p.upper) + ")");
    });
    raise(f);
  }
  SumState s = load<SumState>(st, fn, "sum");
  s.set_sum(s.sum() + in.sum());
  set_params(s, p);
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

}  // extern "C"

// staircase_sum's and laplace_sum's (and their merges'): eps.
ReleaseCost optdp_pg::staircase_cost(FunctionCallInfo fcinfo) {
  const char* fn = agg_name(fcinfo, "staircase_sum");
  return {fn, sum_params(fcinfo, fn).eps, 0.0};
}

namespace {

enum class Mech { Staircase, Laplace };

Datum sum_final(FunctionCallInfo fcinfo, Mech m) {
  const ReleaseCost cost = staircase_cost(fcinfo);
  const char* fn = cost.function;
  const SumParams& p = sum_params(fcinfo, fn);
  const SumState s = PG_ARGISNULL(0) ? SumState{} : load<SumState>(PG_GETARG_BYTEA_PP(0), fn, "sum");
  check_released_params(fn, s, p);  // the state's parameters are then p
  auto* cache = fn_cache<SumParams>(fcinfo);
  release_charge(fcinfo, cost);
  Failure f;
  double out = 0;
  run_cpp(f, fn, [&] {
    Backend& b = backend();
    const std::int64_t D = p.grid.D();
    std::int64_t noise;
    if (m == Mech::Staircase) {
      if (!cache->has_r) {
        cache->r = p.cost.fixed_gamma ? optdp::IntegerStaircase::r_for_gamma(p.cost.gamma, D)
                                      : optdp::IntegerStaircase::optimal_r(p.eps, D, p.cost.cost);
        cache->has_r = true;
      }
      noise = b.staircase(p.eps, D, cache->r)(b.rng());
    } else {
      // Discrete Laplace on the grid, P[z] ~ e^(-eps |z| / D); eps/D rounded
      // down if need be, so that alpha >= e^(-eps/D).
      double x = p.eps / static_cast<double>(D);
      if (std::fma(x, static_cast<double>(D), -p.eps) > 0) x = std::nextafter(x, 0.0);
      noise = b.geometric(optdp::alpha_of_epsilon(x))(b.rng());
    }
    out = static_cast<double>(s.sum() + noise) * p.grid.g;
  });
  raise(f);
  PG_RETURN_FLOAT8(out);
}

}  // namespace

extern "C" {

Datum optdp_staircase_final(PG_FUNCTION_ARGS) { return sum_final(fcinfo, Mech::Staircase); }
Datum optdp_laplace_final(PG_FUNCTION_ARGS) { return sum_final(fcinfo, Mech::Laplace); }

// staircase_sum_state / laplace_sum_state: the exact state with its grid's parameters.
Datum optdp_sum_state_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "staircase_sum_state");
  const SumParams& p = sum_params(fcinfo, fn);
  SumState s = PG_ARGISNULL(0) ? SumState{} : load<SumState>(PG_GETARG_BYTEA_PP(0), fn, "sum");
  check_released_params(fn, s, p);
  set_params(s, p);
  PG_RETURN_BYTEA_P(seal_state(fn, Shipped::Sum, new_state(s)));
}

}  // extern "C"

// ---- numeric inputs (sql/70-numeric.sql) ---------------------------------------

extern "C" {
Datum optdp_gaussian_sum_trans(PG_FUNCTION_ARGS);
Datum optdp_avg_trans(PG_FUNCTION_ARGS);
Datum optdp_var_trans(PG_FUNCTION_ARGS);
Datum optdp_quantile_trans(PG_FUNCTION_ARGS);
Datum optdp_select_trans(PG_FUNCTION_ARGS);
}

namespace {

// The float8 form's transition F with its argument i, a numeric, read as the
// nearest double: beyond float8 it is +-inf (numeric_float8_no_overflow, where
// the cast numeric -> float8 would fail and quote the value), NaN stays NaN;
// F then reads it as it reads any float8.
template <PGFunction F, int I>
Datum numeric_input(FunctionCallInfo fcinfo) {
  if (!PG_ARGISNULL(I)) fcinfo->args[I].value = DirectFunctionCall1(numeric_float8_no_overflow, PG_GETARG_DATUM(I));
  return F(fcinfo);
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_sum_trans_numeric) { return numeric_input<optdp_sum_trans, 1>(fcinfo); }
OPTDP_PG_FUNCTION(optdp_gaussian_sum_trans_numeric) { return numeric_input<optdp_gaussian_sum_trans, 1>(fcinfo); }
OPTDP_PG_FUNCTION(optdp_avg_trans_numeric) { return numeric_input<optdp_avg_trans, 1>(fcinfo); }
OPTDP_PG_FUNCTION(optdp_var_trans_numeric) { return numeric_input<optdp_var_trans, 1>(fcinfo); }
OPTDP_PG_FUNCTION(optdp_quantile_trans_numeric) { return numeric_input<optdp_quantile_trans, 1>(fcinfo); }
OPTDP_PG_FUNCTION(optdp_select_trans_numeric) { return numeric_input<optdp_select_trans, 2>(fcinfo); }

}  // extern "C"

extern "C" {

// ---- scalar helpers ------------------------------------------------------------

// dp_seed(n): reproducible noise in this backend; dp_seed(NULL): the OS CSPRNG.
// Refused while the database has a ledger (a known seed makes the noise
// predictable); a release is refused too if a seed was set before the ledger
// was attached (the ledger's charge, ledger.cpp).
Datum optdp_seed(PG_FUNCTION_ARGS) {
  const bool reset = PG_ARGISNULL(0);
  const std::int64_t seed = reset ? 0 : PG_GETARG_INT64(0);
  if (!reset && ledger_attached("dp_seed"))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dp_seed: refused: a privacy ledger is attached, and a known seed makes the noise "
                           "predictable")));
  Failure f;
  const char* kind = "os";
  run_cpp(f, "dp_seed", [&] {
    Backend& b = backend();
    if (reset)
      b.seeded.reset();
    else
      b.seeded = std::make_unique<optdp::SeededRng>(static_cast<std::uint64_t>(seed));
    kind = b.rng().kind();
  });
  raise(f);
  PG_RETURN_TEXT_P(cstring_to_text(kind));
}

Datum optdp_rng(PG_FUNCTION_ARGS) {
  static_cast<void>(fcinfo);  // no arguments
  Failure f;
  const char* kind = "os";
  run_cpp(f, "dp_rng", [&] { kind = backend().rng().kind(); });
  raise(f);
  PG_RETURN_TEXT_P(cstring_to_text(kind));
}

Datum optdp_version(PG_FUNCTION_ARGS) {
  static_cast<void>(fcinfo);  // no arguments
  PG_RETURN_TEXT_P(cstring_to_text(OPTDP_VERSION));
}

}  // extern "C"
