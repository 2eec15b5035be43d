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
