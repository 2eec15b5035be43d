// optdp SQLite bindings: the steps every release takes, whatever its form.
//
// Aggregate<F, ARGC> is the one release sequence of every randomised
// aggregate (count, sums, levels, moments, quantiles, selection); the forms
// only say what is theirs. For each group:
//
//   1. parameters: read once from the statement's text (params.hpp) and
//      validated (F::plan), before any row is looked at;
//   2. allocation: the aggregate context, sizeof(Ctx) + F::extra_bytes(plan)
//      bytes, its size fixed by the parameters;
//   3. charge: the ledger, at F::epsilon(plan), or F::rho(plan) for a
//      Gaussian form (F::init first, if the form has one, for state outside
//      the context);
//   4. stream: each row goes into F::add, which cannot fail;
//   5. noise and release: F::release, once, in the final call.
//
// Steps 1-3 run in begin(), by the first row of a group or, when no row
// matched, by the final call: the same code on the same state on both paths,
// so whether a release fails, its message and its charge depend on the
// statement alone (docs/boundary.md). An error in 1-3 stops the statement
// before any row is added; the rows that follow are ignored.
//
// A form F provides:
//   static constexpr const char* kName;
//   struct Plan;   trivially copyable: the validated parameters
//   struct Data;   trivially copyable, zeroed by SQLite: the exact aggregate
//   static Plan plan(const std::vector<Param>& params, int argc);   throws
//   static double epsilon(const Plan&);   or, for a Gaussian form, static double rho(const Plan&);
//   static void add(const Plan&, Data&, std::byte* extra, sqlite3_value** argv) noexcept;
//   static void release(sqlite3_context*, Connection&, const Plan&, Data&, std::byte* extra);  throws
// and optionally:
//   static std::size_t extra_bytes(const Plan&);  bytes after Ctx (default 0)
//   static void init(const Plan&, Data&);          state outside the context (throws)
//   static void discard(Data&) noexcept;           frees it (run by every final)
#pragma once

#include <cstddef>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "sqlite/api.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

// Throws while a hard heap limit is set (PRAGMA hard_heap_limit,
// sqlite3_hard_heap_limit64): under one, whether an allocation fails could
// depend on the rows (an aggregate's state, a query's sort), so a release
// would fail or not on the data's say-so. Whether a limit is set depends on
// no row. (A soft limit never makes an allocation fail.)
inline void refuse_under_heap_limit() {
  if (sqlite3_hard_heap_limit64(-1) != 0)
    throw std::invalid_argument(
        "refused while a hard heap limit is set (PRAGMA hard_heap_limit): whether memory runs out could depend on "
        "the rows");
}

// The aggregate context of form F (the same type for every arity of F).
template <class F>
struct AggregateContext {
  typename F::Plan plan;
  typename F::Data data;
  bool ready;  // steps 1-3 succeeded
};

// ARGC: the arity the final is registered with (the step gets it from SQLite,
// and its ARGC is not used).
template <class F, int ARGC>
struct Aggregate {
  using Plan = typename F::Plan;
  using Data = typename F::Data;
  static_assert(std::is_trivially_copyable_v<Plan> && std::is_trivially_copyable_v<Data>);
  using Ctx = AggregateContext<F>;
  // SQLite's aggregate memory is 8-byte aligned; the extra bytes follow Ctx.
  static_assert(alignof(Ctx) <= 8 && sizeof(Ctx) % alignof(std::int64_t) == 0);

  static std::byte* extra(Ctx* st) { return reinterpret_cast<std::byte*>(st + 1); }

  // Steps 1-3. Returns nullptr only when SQLite could not allocate the context.
  [[gnu::noinline]] static Ctx* begin(sqlite3_context* ctx, int argc) {
    std::optional<Plan> plan;
    bool ok = guard(ctx, F::kName, [&] {
      plan.emplace(F::plan(
          read_params(sqlite3_context_db_handle(ctx), connection(ctx).statement_cache(), F::kName, argc), argc));
    });
    std::size_t bytes = sizeof(Ctx);
    if constexpr (requires { F::extra_bytes(*plan); })
      if (ok) bytes += F::extra_bytes(*plan);
    auto* st = static_cast<Ctx*>(sqlite3_aggregate_context(ctx, static_cast<int>(bytes)));
    if (!st) {
      sqlite3_result_error_nomem(ctx);
      return nullptr;
    }
    if (!ok) {
      st->ready = false;
      return st;
    }
    std::memcpy(static_cast<void*>(&st->plan), &*plan, sizeof(Plan));
    st->ready = guard(ctx, F::kName, [&] {
      if constexpr (requires { F::init(st->plan, st->data); }) F::init(st->plan, st->data);
      if constexpr (requires { F::rho(st->plan); })
        connection(ctx).charge_gaussian(F::kName, F::rho(st->plan), F::shift(st->plan));
      else connection(ctx).charge(F::kName, F::epsilon(st->plan));
    });
    return st;
  }

  static void step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
    auto* st = static_cast<Ctx*>(sqlite3_aggregate_context(ctx, 0));
    if (!st) [[unlikely]] {
      st = begin(ctx, argc);
      if (!st) return;
    }
    if (!st->ready) [[unlikely]] return;  // begin() reported the error
    F::add(st->plan, st->data, extra(st), argv);
  }

  static void final(sqlite3_context* ctx) {
    auto* st = static_cast<Ctx*>(sqlite3_aggregate_context(ctx, 0));
    if (!st) {  // no row: the same first steps
      st = begin(ctx, ARGC);
      if (!st) return;
    }
    if (st->ready) guard(ctx, F::kName, [&] { F::release(ctx, connection(ctx), st->plan, st->data, extra(st)); });
    if constexpr (requires { F::discard(st->data); }) F::discard(st->data);
  }
};

}  // namespace optdp::sql
