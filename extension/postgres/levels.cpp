// optdp for PostgreSQL: private_count_levels and private_count_levels_of
// (core/levels.hpp, docs/levels.md). What the aggregates share is in
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

#include "core/levels.hpp"
#include "core/privacy.hpp"
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

// ---- private_count_levels(alpha_1, ..., alpha_k), private_count_levels_of(x, alpha_1, ..., alpha_k)
//
// One count released at k levels, collusion-resistant (core/levels.hpp,
// docs/levels.md): an int8[] of k counts, element i distributed as
// private_count(alpha_i), charged once at alpha_1's epsilon. The state is
// private_count's (the number of rows, or of rows with x not NULL).
//
// Shipped between servers (docs/scale.md): private_count_levels_state and
// private_count_levels_of_state return the exact count with the alphas;
// private_count_levels_merge(state, alpha_1, ..., alpha_k) adds the counts of
// states made with the same alphas and releases with the release's own final
// function (noise once, one charge at alpha_1's epsilon).

namespace {

struct LevelsParams {
  bool ready;
  int k;
  double alphas[optdp::kMaxLevels];
  double eps;
  double digest;  // what the count state carries of the alphas (levels_digest)
};

// The levels' mark in a count state (CountState.param, 0 meaning none): the
// state carries up to 16 alphas in one double, so it carries a digest of
// them, FNV-1a over k and the alphas' bits, mapped into [1, 2) so that it is
// never 0 and compares as a number. The combine refuses two states of
// different digests and the final function a state whose digest is not its
// call's (aggregate.hpp), as for private_count's alpha; the alphas
// themselves are the planned call's, read before the first row.
double levels_digest(int k, const double* alphas) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  };
  mix(static_cast<std::uint64_t>(k));
  for (int i = 0; i < k; ++i) {
    std::uint64_t bits;
    std::memcpy(&bits, &alphas[i], sizeof bits);
    mix(bits);
  }
  return 1.0 + std::ldexp(static_cast<double>(h >> 12), -52);
}

const LevelsParams& levels_params(FunctionCallInfo fcinfo, const char* function, int first) {
  auto* cache = fn_cache<LevelsParams>(fcinfo);
  if (cache && cache->ready) return *cache;
  if (!cache) cache = instance_cache<LevelsParams>(fcinfo);
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
    s.digest = levels_digest(s.k, s.alphas);
  });
  raise(f);
  s.ready = true;
  *cache = s;
  return *cache;
}

// The chain of the last levels released in this backend (building one costs
// binary128 work per level). A plain pointer, never destroyed at exit: the
// module holds no object with static storage and a destructor, which exit()
// would run in every process, also from a signal handler.
optdp::LevelChain* the_chain = nullptr;

// C++: call inside run_cpp.
const optdp::LevelChain& level_chain(const LevelsParams& p) {
  if (!the_chain || the_chain->alphas() != std::vector<double>(p.alphas, p.alphas + p.k)) {
    auto next = std::make_unique<optdp::LevelChain>(std::vector<double>(p.alphas, p.alphas + p.k));
    delete the_chain;
    the_chain = next.release();
  }
  return *the_chain;
}

// The running aggregate's name, and the index of its first alpha: 0, or 1
// after x (private_count_levels_of, _of_state) or the state (_merge).
int levels_first(FunctionCallInfo fcinfo, const char*& fn) {
  fn = agg_name(fcinfo, "private_count_levels");
  return strcmp(fn, "private_count_levels") == 0 || strcmp(fn, "private_count_levels_state") == 0 ? 0 : 1;
}

// A shipped state: the count with the levels it was computed for.
struct LevelsShipped {
  std::uint32_t kind;
  std::int32_t k;
  double alphas[optdp::kMaxLevels];
  std::int64_t rows;
};

// optdp_levels_trans(state, alphas...) counts every row; optdp_levels_of_trans(state, x, alphas...)
// the rows with x not NULL.
template <int FIRST>
Datum levels_trans(FunctionCallInfo fcinfo) {
  auto* cache = fn_cache<LevelsParams>(fcinfo);
  bytea* st;
  if (!(cache && cache->ready) || PG_ARGISNULL(0)) [[unlikely]] {
    const char* fallback = FIRST == 0 ? "private_count_levels" : "private_count_levels_of";
    st = state_arg<CountState>(fcinfo, fallback, "private_count");
    cache = const_cast<LevelsParams*>(&levels_params(fcinfo, agg_name(fcinfo, fallback), FIRST));
  } else {
    st = own_state(fcinfo);
  }
  // the alphas' digest where the counts write their alpha (also for a NULL x)
  count_row(fcinfo, FIRST == 0 ? "private_count_levels" : "private_count_levels_of", st, cache->digest,
            FIRST == 0 || !PG_ARGISNULL(1));
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
  const char* fn;
  const int first = levels_first(fcinfo, fn);
  const LevelsParams& p = levels_params(fcinfo, fn, first);
  const CountState s = PG_ARGISNULL(0) ? CountState{} : load<CountState>(PG_GETARG_BYTEA_PP(0), fn, "private_count");
  released_param(fn, s.param, p.digest);  // fails closed on a state of other levels
  release_charge(fcinfo, {fn, p.eps, 0.0});
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

// private_count_levels_state(alphas...), private_count_levels_of_state(x,
// alphas...): the exact count with its levels.
OPTDP_PG_FUNCTION(optdp_levels_state_final) {
  const char* fn;
  const int first = levels_first(fcinfo, fn);
  const LevelsParams& p = levels_params(fcinfo, fn, first);
  LevelsShipped out{};
  out.kind = static_cast<std::uint32_t>(Shipped::Levels);
  out.k = p.k;
  std::copy(p.alphas, p.alphas + p.k, out.alphas);
  if (!PG_ARGISNULL(0)) {
    const CountState in = load<CountState>(PG_GETARG_BYTEA_PP(0), fn, "private_count");
    released_param(fn, in.param, p.digest);
    out.rows = in.rows;
  }
  PG_RETURN_BYTEA_P(seal_state(fn, Shipped::Levels, new_state(out)));
}

// private_count_levels_merge(state, alphas...): adds the counts of shipped
// states made with the same levels.
OPTDP_PG_STEP(optdp_levels_merge_add) {
  const char* fn = "private_count_levels_merge";
  bytea* st = state_arg<CountState>(fcinfo, fn, "private_count");
  const LevelsParams& p = levels_params(fcinfo, fn, 1);
  const LevelsShipped in =
      load<LevelsShipped>(shipped_arg(fcinfo, 1, fn, Shipped::Levels), fn, shipped_by(Shipped::Levels));
  if (in.k != p.k || !std::equal(p.alphas, p.alphas + p.k, in.alphas))
    refuse_state(fn, [&] {
      auto list = [](const double* a, int k) {
        std::string s = "(";
        for (int i = 0; i < k && i < optdp::kMaxLevels; ++i) s += (i ? ", " : "") + describe_number(a[i]);
        return s + ")";
      };
      return "state was computed with alphas " + list(in.alphas, in.k) + ", but they are " + list(p.alphas, p.k);
    });
  CountState s = load<CountState>(st, fn, "private_count");
  s.rows += in.rows;
  s.param = p.digest;  // the merge's own levels, which its final function checks
  store(st, s);
  PG_RETURN_BYTEA_P(st);
}

}  // extern "C"

ReleaseCost optdp_pg::levels_cost(FunctionCallInfo fcinfo) {
  const char* fn;
  const int first = levels_first(fcinfo, fn);
  return {fn, levels_params(fcinfo, fn, first).eps, 0.0};
}
