// optdp for PostgreSQL 15: the randomised aggregates private_count,
// staircase_sum and laplace_sum, their partial states for shipping between
// servers, and dp_seed / dp_rng / dp_version. The maths is extension/core/;
// this file only binds it (docs/scale.md describes the SQL surface).
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
// constant or a query parameter ($1), or an expression of those without
// volatile functions; anything else could depend on a row and is refused.
//
// No C++ exception crosses into PostgreSQL: C++ work runs inside run_cpp()
// (common.hpp), which turns an exception into a message copied to a fixed
// buffer, and the ereport happens after every C++ object of the try block is
// destroyed. PostgreSQL calls (which may longjmp) happen outside those blocks.
// The scalar helpers and the set-returning functions are in functions.cpp,
// the ledger in ledger.cpp, what the aggregates share in aggregate.hpp.
#include <cmath>
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
#include "postgres/common.hpp"

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

// True when e depends on no row: constants and query parameters ($n), and
// non-volatile functions and casts of them.
bool row_independent(Node* e) {
  if (e == nullptr) return false;
  switch (nodeTag(e)) {
    case T_Const: return true;
    case T_Param: return reinterpret_cast<Param*>(e)->paramkind == PARAM_EXTERN;
    case T_RelabelType: return row_independent(reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(e)->arg));
    case T_CoerceViaIO: return row_independent(reinterpret_cast<Node*>(reinterpret_cast<CoerceViaIO*>(e)->arg));
    case T_FuncExpr:
    case T_OpExpr: {
      if (contain_volatile_functions(e)) return false;
      List* args = IsA(e, FuncExpr) ? reinterpret_cast<FuncExpr*>(e)->args : reinterpret_cast<OpExpr*>(e)->args;
      ListCell* lc;
      foreach (lc, args)
        if (!row_independent(static_cast<Node*>(lfirst(lc)))) return false;
      return true;
    }
    default: return false;
  }
}

// The Aggref of the call being computed, with its own arguments. In a
// Finalize Aggregate (parallel plans) the Aggref's one argument is a Var
// referring to the partial aggregate's output: follow it down the plan to the
// partial Aggref, which keeps the call's arguments.
Aggref* call_aggref(FunctionCallInfo fcinfo, const char* function) {
  Aggref* a = AggGetAggref(fcinfo);
  if (a == nullptr && AggCheckCallContext(fcinfo, nullptr) == AGG_CONTEXT_WINDOW)
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("optdp: its aggregates cannot be used as window functions (every row would be a release)")));
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

// Reads the parameters of the call: arguments first.. of the aggregate call
// (first < 0: the last -first arguments). Row-dependent ones are marked, not
// evaluated.
void read_call(FunctionCallInfo fcinfo, const char* function, int first, CallParams& out) {
  Aggref* a = call_aggref(fcinfo, function);
  AggState* as = reinterpret_cast<AggState*>(fcinfo->context);
  // Only optdp's own aggregates hold the parameters where this reads them; a
  // support function called through another aggregate (Citus's
  // coord_combine_agg, a user's CREATE AGGREGATE) is refused.
  const char* agg = get_func_name(a->aggfnoid);
  if (agg == nullptr || !(strncmp(agg, "private_", 8) == 0 || strncmp(agg, "staircase_sum", 13) == 0 ||
                          strncmp(agg, "laplace_sum", 11) == 0))
    ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                    errmsg("optdp: its support functions work only in its own aggregates, whose calls hold the "
                           "parameters, not in %s", agg ? agg : "another aggregate")));
  out.nargs = list_length(a->args);
  out.first = first < 0 ? out.nargs + first : first;
  out.count = out.nargs - out.first;
  if (out.first < 0 || out.count > kMaxParams)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: unexpected number of arguments", function)));
  for (int i = 0; i < out.count; ++i) {
    Expr* e = static_cast<TargetEntry*>(list_nth(a->args, out.first + i))->expr;
    out.type[i] = exprType(reinterpret_cast<Node*>(e));
    out.isnull[i] = true;
    out.constant[i] = row_independent(reinterpret_cast<Node*>(e));
    if (!out.constant[i]) continue;
    Datum d;
    bool isnull;
    if (IsA(e, Const)) {
      d = reinterpret_cast<Const*>(e)->constvalue;
      isnull = reinterpret_cast<Const*>(e)->constisnull;
    } else {
      ExprState* st = ExecInitExpr(e, &as->ss.ps);
      d = ExecEvalExprSwitchContext(st, as->ss.ps.ps_ExprContext, &isnull);
    }
    out.isnull[i] = isnull;
    if (isnull) continue;
    if (out.type[i] != FLOAT8OID && out.type[i] != TEXTOID)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                      errmsg("%s: argument %d of the call is not of a parameter's type", function, out.first + i + 1)));
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

const char* agg_name(FunctionCallInfo fcinfo, const char* fallback) {
  Aggref* a = AggGetAggref(fcinfo);
  if (a == nullptr) return fallback;
  char* n = get_func_name(a->aggfnoid);
  return n ? n : fallback;
}

}  // namespace optdp_pg

namespace {

// ---- states ------------------------------------------------------------------

// private_count: the number of rows; alpha is filled in only by a shipped
// state (private_count_state), so that a merge can check it.
struct CountState {
  std::int64_t rows;
  double alpha;
};

// The sums: the exact sum of grid integers, and the parameters that fix the
// grid (filled in only by a shipped state).
struct SumState {
  unsigned char sum_bytes[16];
  double eps, lower, upper;
  std::int32_t has_params, pad;
  __int128 sum() const {
    __int128 v;
    std::memcpy(&v, sum_bytes, sizeof v);
    return v;
  }
  void set_sum(__int128 v) { std::memcpy(sum_bytes, &v, sizeof v); }
};

// ---- private_count -------------------------------------------------------------

struct CountCache {
  bool ready;
  double alpha;
};

// alpha of the running call (the last argument), read and validated once per
// function instance (flinfo): the same reader in transition and final functions.
double count_alpha(FunctionCallInfo fcinfo, const char* function) {
  auto* cache = static_cast<CountCache*>(fcinfo->flinfo->fn_extra);
  if (cache && cache->ready) return cache->alpha;
  if (!cache) {
    cache = static_cast<CountCache*>(MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CountCache)));
    fcinfo->flinfo->fn_extra = cache;
  }
  CallParams p;
  read_call(fcinfo, function, -1, p);
  Failure f;
  double alpha = 0;
  run_cpp(f, function, [&] { alpha = alpha_param(p, 0); });
  raise(f);
  cache->alpha = alpha;
  cache->ready = true;
  return alpha;
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_count_trans);
OPTDP_PG_FUNCTION(optdp_count_combine);
OPTDP_PG_FUNCTION(optdp_count_merge_trans);
OPTDP_PG_FUNCTION(optdp_count_final);
OPTDP_PG_FUNCTION(optdp_count_state_final);
OPTDP_PG_FUNCTION(optdp_sum_trans);
OPTDP_PG_FUNCTION(optdp_sum_combine);
OPTDP_PG_FUNCTION(optdp_sum_merge_trans);
OPTDP_PG_FUNCTION(optdp_staircase_final);
OPTDP_PG_FUNCTION(optdp_laplace_final);
OPTDP_PG_FUNCTION(optdp_sum_state_final);
OPTDP_PG_FUNCTION(optdp_seed);
OPTDP_PG_FUNCTION(optdp_rng);
OPTDP_PG_FUNCTION(optdp_version);

// optdp_count_trans(state, alpha) counts every row; (state, x, alpha) the
// rows with x not NULL. Parameters come from the call, not the row.
Datum optdp_count_trans(PG_FUNCTION_ARGS) {
  auto* cache = static_cast<CountCache*>(fcinfo->flinfo->fn_extra);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    st = state_arg<CountState>(fcinfo, "private_count", "private_count");
    count_alpha(fcinfo, agg_name(fcinfo, "private_count"));
  } else {
    st = own_state(fcinfo);
  }
  if (PG_NARGS() == 2 || !PG_ARGISNULL(1)) {
    CountState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    ++s.rows;
    store(st, s);
  }
  PG_RETURN_BYTEA_P(st);
}

Datum optdp_count_combine(PG_FUNCTION_ARGS) {
  bytea* st = state_arg<CountState>(fcinfo, "private_count", "private_count");
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  CountState a = load<CountState>(st, "private_count", "private_count");
  const CountState b = load<CountState>(PG_GETARG_BYTEA_PP(1), "private_count", "private_count");
  a.rows += b.rows;
  store(st, a);
  PG_RETURN_BYTEA_P(st);
}

// private_count_merge(state, alpha): adds shipped states made with the same alpha.
Datum optdp_count_merge_trans(PG_FUNCTION_ARGS) {
  const char* fn = "private_count_merge";
  bytea* st = state_arg<CountState>(fcinfo, fn, "private_count");
  const double alpha = count_alpha(fcinfo, fn);
  if (PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: state must be a private_count state, but is NULL", fn)));
  const CountState in = load<CountState>(PG_GETARG_BYTEA_PP(1), fn, "private_count");
  if (in.alpha != alpha) {
    Failure f;
    run_cpp(f, fn, [&] {
      throw std::invalid_argument("state was computed with alpha " + describe_number(in.alpha) +
                                  ", but alpha is " + describe_number(alpha));
    });
    raise(f);
  }
  CountState s = load<CountState>(st, fn, "private_count");
  s.rows += in.rows;
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

// The release: count + two-sided geometric(alpha) noise, saturating.
Datum optdp_count_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "private_count");
  const double alpha = count_alpha(fcinfo, fn);
  const CountState s = PG_ARGISNULL(0) ? CountState{} : load<CountState>(PG_GETARG_BYTEA_PP(0), fn, "private_count");
  Failure f;
  double eps = 0;
  run_cpp(f, fn, [&] { eps = optdp::epsilon_of_alpha(alpha); });
  raise(f);
  charge(fn, eps);
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
  s.alpha = alpha;
  PG_RETURN_BYTEA_P(new_state(s));
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
  auto* cache = static_cast<SumParams*>(fcinfo->flinfo->fn_extra);
  if (cache && cache->ready) return *cache;
  if (!cache) {
    cache = static_cast<SumParams*>(MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SumParams)));
    fcinfo->flinfo->fn_extra = cache;
  }
  CallParams p;
  read_call(fcinfo, function, 1, p);
  Failure f;
  SumParams s{};
  run_cpp(f, function, [&] {
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
  *cache = s;
  return *cache;
}

}  // namespace

extern "C" {

// optdp_sum_trans(state, x, params...): adds x, clamped and rounded to the grid.
Datum optdp_sum_trans(PG_FUNCTION_ARGS) {
  auto* cache = static_cast<SumParams*>(fcinfo->flinfo->fn_extra);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    st = state_arg<SumState>(fcinfo, "staircase_sum", "sum");
    cache = const_cast<SumParams*>(&sum_params(fcinfo, agg_name(fcinfo, "staircase_sum")));
  } else {
    st = own_state(fcinfo);
  }
  if (!PG_ARGISNULL(1)) {
    double x = PG_GETARG_FLOAT8(1);
    if (std::isnan(x)) x = 0;  // as SQLite's sum() reads NaN: never an error on a row's value
    SumState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    s.set_sum(s.sum() + cache->grid.quantize(x, cache->lower, cache->upper));
    store(st, s);
  }
  PG_RETURN_BYTEA_P(st);
}

Datum optdp_sum_combine(PG_FUNCTION_ARGS) {
  bytea* st = state_arg<SumState>(fcinfo, "staircase_sum", "sum");
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  SumState a = load<SumState>(st, "staircase_sum", "sum");
  const SumState b = load<SumState>(PG_GETARG_BYTEA_PP(1), "staircase_sum", "sum");
  a.set_sum(a.sum() + b.sum());
  store(st, a);
  PG_RETURN_BYTEA_P(st);
}

// staircase_sum_merge / laplace_sum_merge(state, params...): adds shipped
// states made with the same eps, lower and upper (the same grid).
Datum optdp_sum_merge_trans(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "staircase_sum_merge");
  bytea* st = state_arg<SumState>(fcinfo, fn, "sum");
  const SumParams& p = sum_params(fcinfo, fn);
  if (PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: state must be a sum state, but is NULL", fn)));
  const SumState in = load<SumState>(PG_GETARG_BYTEA_PP(1), fn, "sum");
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
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

}  // extern "C"

namespace {

enum class Mech { Staircase, Laplace };

Datum sum_final(FunctionCallInfo fcinfo, Mech m) {
  const char* fn = agg_name(fcinfo, m == Mech::Staircase ? "staircase_sum" : "laplace_sum");
  const SumParams& p = sum_params(fcinfo, fn);
  const SumState s = PG_ARGISNULL(0) ? SumState{} : load<SumState>(PG_GETARG_BYTEA_PP(0), fn, "sum");
  auto* cache = static_cast<SumParams*>(fcinfo->flinfo->fn_extra);
  charge(fn, p.eps);
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
  s.eps = p.eps;
  s.lower = p.lower;
  s.upper = p.upper;
  s.has_params = 1;
  PG_RETURN_BYTEA_P(new_state(s));
}

}  // extern "C"

// ---- private_avg, private_var, private_stddev (x, eps, lower, upper) ----------
//
// One release each, charged eps once: a noisy count and noisy centred sums on
// a power-of-two grid (core/moments.hpp, docs/moments.md).

namespace {

struct MomentsState {
  unsigned char s1_bytes[16], s2_bytes[16];
  std::int64_t n;
  static __int128 get(const unsigned char* b) {
    __int128 v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  static void add(unsigned char* b, __int128 d) {
    const __int128 v = get(b) + d;
    std::memcpy(b, &v, sizeof v);
  }
};

struct MomentsCache {
  bool ready;
  bool has_r;
  std::int64_t r1, r2;  // the staircases' r for S1 and S2, computed by the first release
  alignas(8) unsigned char plan_bytes[sizeof(optdp::MomentsPlan)];
  const optdp::MomentsPlan& plan() const { return *reinterpret_cast<const optdp::MomentsPlan*>(plan_bytes); }
};
static_assert(std::is_trivially_copyable_v<optdp::MomentsPlan>);

const optdp::MomentsPlan& moments_plan(FunctionCallInfo fcinfo, const char* function, optdp::MomentsPlan::Kind kind) {
  auto* cache = static_cast<MomentsCache*>(fcinfo->flinfo->fn_extra);
  if (cache && cache->ready) return cache->plan();
  if (!cache) {
    cache = static_cast<MomentsCache*>(MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(MomentsCache)));
    fcinfo->flinfo->fn_extra = cache;
  }
  CallParams p;
  read_call(fcinfo, function, 1, p);
  Failure f;
  run_cpp(f, function, [&] {
    all_constant(p, {"eps", "lower", "upper"});
    // read in order (a constructor's arguments are evaluated in no set order)
    const double eps = number_param(p, 0, "eps");
    const double lower = number_param(p, 1, "lower");
    const double upper = number_param(p, 2, "upper");
    const optdp::MomentsPlan plan(kind, eps, lower, upper);
    std::memcpy(cache->plan_bytes, &plan, sizeof plan);
  });
  raise(f);
  cache->ready = true;
  return cache->plan();
}

template <optdp::MomentsPlan::Kind K>
Datum moments_trans(FunctionCallInfo fcinfo) {
  const char* fallback = K == optdp::MomentsPlan::Kind::Mean ? "private_avg" : "private_var";
  auto* cache = static_cast<MomentsCache*>(fcinfo->flinfo->fn_extra);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    st = state_arg<MomentsState>(fcinfo, fallback, "moments");
    moments_plan(fcinfo, agg_name(fcinfo, fallback), K);
    cache = static_cast<MomentsCache*>(fcinfo->flinfo->fn_extra);
  } else {
    st = own_state(fcinfo);
  }
  if (!PG_ARGISNULL(1)) {
    double x = PG_GETARG_FLOAT8(1);
    if (std::isnan(x)) x = 0;  // as SQLite's sum() reads NaN: never an error on a row's value
    const optdp::MomentsPlan& plan = cache->plan();
    MomentsState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    const std::int64_t y = plan.y(x);
    ++s.n;
    MomentsState::add(s.s1_bytes, y);
    if constexpr (K != optdp::MomentsPlan::Kind::Mean) MomentsState::add(s.s2_bytes, plan.z(y));
    store(st, s);
  }
  PG_RETURN_BYTEA_P(st);
}

enum class Stat { Avg, Var, Stddev };

template <Stat S>
Datum moments_final(FunctionCallInfo fcinfo) {
  constexpr auto kind = S == Stat::Avg ? optdp::MomentsPlan::Kind::Mean : optdp::MomentsPlan::Kind::Variance;
  const char* fn = agg_name(fcinfo, S == Stat::Avg ? "private_avg" : S == Stat::Var ? "private_var" : "private_stddev");
  const optdp::MomentsPlan& plan = moments_plan(fcinfo, fn, kind);
  const MomentsState st = PG_ARGISNULL(0) ? MomentsState{} : load<MomentsState>(PG_GETARG_BYTEA_PP(0), fn, "moments");
  charge(fn, plan.eps);
  Failure f;
  double out = 0;
  run_cpp(f, fn, [&] {
    Backend& b = backend();
    optdp::Rng& rng = b.rng();
    std::int64_t n;
    if (__builtin_add_overflow(st.n, b.geometric(optdp::alpha_of_epsilon(plan.eps_count))(rng), &n))
      n = st.n;  // unreachable: n < 2^63 rows and |noise| < 2^62
    auto* cache = static_cast<MomentsCache*>(fcinfo->flinfo->fn_extra);
    if (!cache->has_r) {
      cache->r1 = optdp::IntegerStaircase::optimal_r(plan.eps_s1, plan.H, optdp::Cost::L1);
      if (S != Stat::Avg) cache->r2 = optdp::IntegerStaircase::optimal_r(plan.eps_s2, plan.D2, optdp::Cost::L1);
      cache->has_r = true;
    }
    const __int128 s1 = MomentsState::get(st.s1_bytes) + b.staircase(plan.eps_s1, plan.H, cache->r1)(rng);
    if constexpr (S == Stat::Avg) {
      out = plan.mean(n, s1);
    } else {
      const __int128 s2 = MomentsState::get(st.s2_bytes) + b.staircase(plan.eps_s2, plan.D2, cache->r2)(rng);
      out = S == Stat::Var ? plan.variance(n, s1, s2) : plan.stddev(n, s1, s2);
    }
  });
  raise(f);
  PG_RETURN_FLOAT8(out);
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_avg_trans);
OPTDP_PG_FUNCTION(optdp_var_trans);
OPTDP_PG_FUNCTION(optdp_moments_combine);
OPTDP_PG_FUNCTION(optdp_avg_final);
OPTDP_PG_FUNCTION(optdp_var_final);
OPTDP_PG_FUNCTION(optdp_stddev_final);

Datum optdp_avg_trans(PG_FUNCTION_ARGS) { return moments_trans<optdp::MomentsPlan::Kind::Mean>(fcinfo); }
Datum optdp_var_trans(PG_FUNCTION_ARGS) { return moments_trans<optdp::MomentsPlan::Kind::Variance>(fcinfo); }
Datum optdp_moments_combine(PG_FUNCTION_ARGS) {
  bytea* st = state_arg<MomentsState>(fcinfo, "private_avg", "moments");
  if (PG_ARGISNULL(1)) PG_RETURN_BYTEA_P(st);
  MomentsState a = load<MomentsState>(st, "private_avg", "moments");
  const MomentsState b = load<MomentsState>(PG_GETARG_BYTEA_PP(1), "private_avg", "moments");
  a.n += b.n;
  MomentsState::add(a.s1_bytes, MomentsState::get(b.s1_bytes));
  MomentsState::add(a.s2_bytes, MomentsState::get(b.s2_bytes));
  store(st, a);
  PG_RETURN_BYTEA_P(st);
}
Datum optdp_avg_final(PG_FUNCTION_ARGS) { return moments_final<Stat::Avg>(fcinfo); }
Datum optdp_var_final(PG_FUNCTION_ARGS) { return moments_final<Stat::Var>(fcinfo); }
Datum optdp_stddev_final(PG_FUNCTION_ARGS) { return moments_final<Stat::Stddev>(fcinfo); }

}  // extern "C"

// ---- private_quantile(x, q, eps, lower, upper), private_median(x, eps, lower, upper)
//
// A grid point of [lower, upper] chosen by the exponential mechanism with
// score -|#{x < c} - q n| (core/quantile.hpp, docs/quantiles.md). The state
// is the m + 1 bucket counts (m fixed by lower and upper alone, at most 4096),
// allocated by the first row; INITCOND is the empty bytea, which the combine
// and final functions read as all zeros.

namespace {

struct QuantileCache {
  bool ready;
  double q, eps;
  alignas(8) unsigned char grid_bytes[sizeof(optdp::QuantileGrid)];
  const optdp::QuantileGrid& grid() const { return *reinterpret_cast<const optdp::QuantileGrid*>(grid_bytes); }
};
static_assert(std::is_trivially_copyable_v<optdp::QuantileGrid>);

const QuantileCache& quantile_params(FunctionCallInfo fcinfo, const char* function) {
  auto* cache = static_cast<QuantileCache*>(fcinfo->flinfo->fn_extra);
  if (cache && cache->ready) return *cache;
  if (!cache) {
    cache = static_cast<QuantileCache*>(MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(QuantileCache)));
    fcinfo->flinfo->fn_extra = cache;
  }
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
    std::memcpy(cache->grid_bytes, &grid, sizeof grid);
  });
  raise(f);
  cache->ready = true;
  return *cache;
}

std::size_t bucket_count(const QuantileCache& c) { return static_cast<std::size_t>(c.grid().candidates()) + 1; }

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_quantile_trans);
OPTDP_PG_FUNCTION(optdp_quantile_combine);
OPTDP_PG_FUNCTION(optdp_quantile_final);

Datum optdp_quantile_trans(PG_FUNCTION_ARGS) {
  auto* cache = static_cast<QuantileCache*>(fcinfo->flinfo->fn_extra);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    MemoryContext aggctx;
    if (AggCheckCallContext(fcinfo, &aggctx) != AGG_CONTEXT_AGGREGATE) call_aggref(fcinfo, "private_quantile");
    cache = const_cast<QuantileCache*>(&quantile_params(fcinfo, agg_name(fcinfo, "private_quantile")));
    st = PG_ARGISNULL(0) ? nullptr : own_state(fcinfo);
    if (st == nullptr || VARSIZE_ANY_EXHDR(st) == 0) {
      const std::size_t bytes = bucket_count(*cache) * sizeof(std::int64_t);
      st = static_cast<bytea*>(MemoryContextAllocZero(aggctx, VARHDRSZ + bytes));
      SET_VARSIZE(st, VARHDRSZ + bytes);
    }
  } else {
    st = own_state(fcinfo);
    if (VARSIZE_ANY_EXHDR(st) == 0) [[unlikely]] {  // a new group's INITCOND
      MemoryContext aggctx;
      AggCheckCallContext(fcinfo, &aggctx);
      const std::size_t bytes = bucket_count(*cache) * sizeof(std::int64_t);
      st = static_cast<bytea*>(MemoryContextAllocZero(aggctx, VARHDRSZ + bytes));
      SET_VARSIZE(st, VARHDRSZ + bytes);
    }
  }
  if (!PG_ARGISNULL(1)) {
    double x = PG_GETARG_FLOAT8(1);
    if (std::isnan(x)) x = 0;  // never an error on a row's value
    const std::int64_t b = cache->grid().bucket(x);
    char* at = VARDATA_ANY(st) + b * sizeof(std::int64_t);
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
  if (VARSIZE_ANY_EXHDR(st) != n)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("private_quantile: states of different grids")));
  for (std::size_t i = 0; i < n; i += sizeof(std::int64_t)) {
    std::int64_t a, b;
    std::memcpy(&a, VARDATA_ANY(st) + i, sizeof a);
    std::memcpy(&b, VARDATA_ANY(in) + i, sizeof b);
    a += b;
    std::memcpy(VARDATA_ANY(st) + i, &a, sizeof a);
  }
  PG_RETURN_BYTEA_P(st);
}

Datum optdp_quantile_final(PG_FUNCTION_ARGS) {
  const char* fn = agg_name(fcinfo, "private_quantile");
  const QuantileCache& c = quantile_params(fcinfo, fn);
  const std::size_t m1 = bucket_count(c);
  std::int64_t* buckets = static_cast<std::int64_t*>(palloc0(m1 * sizeof(std::int64_t)));
  if (!PG_ARGISNULL(0)) {
    bytea* st = PG_GETARG_BYTEA_PP(0);
    const std::size_t n = VARSIZE_ANY_EXHDR(st);
    if (n != 0 && n != m1 * sizeof(std::int64_t))
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: a state of another grid", fn)));
    if (n) std::memcpy(buckets, VARDATA_ANY(st), n);
  }
  charge(fn, c.eps);
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

}  // extern "C"

extern "C" {

// ---- scalar helpers ------------------------------------------------------------

// dp_seed(n): reproducible noise in this backend; dp_seed(NULL): the OS CSPRNG.
// Refused while the database has a ledger (a known seed makes the noise
// predictable); a release is refused too if a seed was set before the ledger
// was attached (optdp_ledger_charge).
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
  Failure f;
  const char* kind = "os";
  run_cpp(f, "dp_rng", [&] { kind = backend().rng().kind(); });
  raise(f);
  PG_RETURN_TEXT_P(cstring_to_text(kind));
}

Datum optdp_version(PG_FUNCTION_ARGS) { PG_RETURN_TEXT_P(cstring_to_text(OPTDP_VERSION)); }

}  // extern "C"

#include <algorithm>
#include <vector>

#include "core/levels.hpp"
#include "core/selection.hpp"

extern "C" {
#include "utils/array.h"
}

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

// ---- private_count_levels(alpha_1, ..., alpha_k), private_count_levels_of(x, alpha_1, ..., alpha_k)
//
// One count released at k levels, collusion-resistant (core/levels.hpp,
// docs/levels.md): an int8[] of k counts, element i distributed as
// private_count(alpha_i), charged once at alpha_1's epsilon. The state is
// private_count's (the number of rows, or of rows with x not NULL).

namespace {

struct LevelsParams {
  bool ready;
  int k;
  double alphas[optdp::kMaxLevels];
  double eps;
};

const LevelsParams& levels_params(FunctionCallInfo fcinfo, const char* function, int first) {
  auto* cache = static_cast<LevelsParams*>(fcinfo->flinfo->fn_extra);
  if (cache && cache->ready) return *cache;
  if (!cache) {
    cache = static_cast<LevelsParams*>(MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(LevelsParams)));
    fcinfo->flinfo->fn_extra = cache;
  }
  CallParams p;
  read_call(fcinfo, function, first, p);
  Failure f;
  LevelsParams s{};
  run_cpp(f, function, [&] {
    std::vector<double> a;
    for (int i = 0; i < p.count; ++i)
      if (!p.constant[i]) not_constant(("alpha_" + std::to_string(i + 1)).c_str());
    for (int i = 0; i < p.count; ++i) {
      const std::string name = "alpha_" + std::to_string(i + 1);
      a.push_back(number_param(p, i, name.c_str()));
    }
    optdp::check_levels(a);
    s.k = static_cast<int>(a.size());
    std::copy(a.begin(), a.end(), s.alphas);
    s.eps = optdp::epsilon_of_alpha(a[0]);  // the least private level's
  });
  raise(f);
  s.ready = true;
  *cache = s;
  return *cache;
}

// The chain of the last levels released in this backend (building one costs
// binary128 work per level).
std::unique_ptr<optdp::LevelChain> the_chain;

const optdp::LevelChain& level_chain(const LevelsParams& p) {
  if (!the_chain || the_chain->alphas() != std::vector<double>(p.alphas, p.alphas + p.k))
    the_chain = std::make_unique<optdp::LevelChain>(std::vector<double>(p.alphas, p.alphas + p.k));
  return *the_chain;
}

bool levels_of(FunctionCallInfo fcinfo) {
  Aggref* a = AggGetAggref(fcinfo);
  const char* n = a ? get_func_name(a->aggfnoid) : nullptr;
  return n && strcmp(n, "private_count_levels_of") == 0;
}

// optdp_levels_trans(state, alphas...) counts every row; optdp_levels_of_trans(state, x, alphas...)
// the rows with x not NULL.
template <int FIRST>
Datum levels_trans(FunctionCallInfo fcinfo) {
  auto* cache = static_cast<LevelsParams*>(fcinfo->flinfo->fn_extra);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    const char* fallback = FIRST == 0 ? "private_count_levels" : "private_count_levels_of";
    st = state_arg<CountState>(fcinfo, fallback, "private_count");
    levels_params(fcinfo, agg_name(fcinfo, fallback), FIRST);
  } else {
    st = own_state(fcinfo);
  }
  if (FIRST == 0 || !PG_ARGISNULL(1)) {
    CountState s;
    std::memcpy(&s, VARDATA_ANY(st), sizeof s);
    ++s.rows;
    store(st, s);
  }
  PG_RETURN_BYTEA_P(st);
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_levels_trans);
OPTDP_PG_FUNCTION(optdp_levels_of_trans);
OPTDP_PG_FUNCTION(optdp_levels_final);

Datum optdp_levels_trans(PG_FUNCTION_ARGS) { return levels_trans<0>(fcinfo); }
Datum optdp_levels_of_trans(PG_FUNCTION_ARGS) { return levels_trans<1>(fcinfo); }

Datum optdp_levels_final(PG_FUNCTION_ARGS) {
  const bool of = levels_of(fcinfo);
  const char* fn = of ? "private_count_levels_of" : "private_count_levels";
  const LevelsParams& p = levels_params(fcinfo, fn, of ? 1 : 0);
  const CountState s = PG_ARGISNULL(0) ? CountState{} : load<CountState>(PG_GETARG_BYTEA_PP(0), fn, "private_count");
  charge(fn, p.eps);
  Failure f;
  std::int64_t released[optdp::kMaxLevels];
  run_cpp(f, fn, [&] {
    const auto r = level_chain(p).release(s.rows, backend().rng());
    std::copy(r.begin(), r.end(), released);
  });
  raise(f);
  Datum elems[optdp::kMaxLevels];
  for (int i = 0; i < p.k; ++i) elems[i] = Int64GetDatum(released[i]);
  PG_RETURN_ARRAYTYPE_P(construct_array(elems, p.k, INT8OID, sizeof(std::int64_t), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

}  // extern "C"
