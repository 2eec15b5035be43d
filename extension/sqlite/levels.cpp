// One count at several privacy levels, collusion-resistant (core/levels.hpp).
//
//   private_count_levels(alpha_1, ..., alpha_k)        aggregate: JSON array of k INTEGERs
//   private_count_levels_of(x, alpha_1, ..., alpha_k)  the same, counting rows where x IS NOT NULL
//   release_levels(value, n, alphas_json)              table: (level, alpha, released), range-restricted
//
// The two aggregate forms have different names because private_count_levels(0.1, 0.5)
// could otherwise be read either as two levels or as x = 0.1 with one level.
#include <array>
#include <string>
#include <utility>

#include "core/levels.hpp"
#include "core/loss.hpp"
#include "core/privacy.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"
#include "sqlite/release.hpp"
#include "sqlite/vtab.hpp"

namespace optdp::sql {

namespace {

struct LevelsState {
  std::int64_t rows;
  double alphas[kMaxLevels];
  int k;
  bool begun;  // the release has begun (begin() ran)
  bool ready;  // ... and its levels were read and charged
};

constexpr const char* kLevelNames[kMaxLevels] = {"alpha_1",  "alpha_2",  "alpha_3",  "alpha_4",  "alpha_5",  "alpha_6",
                                                 "alpha_7",  "alpha_8",  "alpha_9",  "alpha_10", "alpha_11", "alpha_12",
                                                 "alpha_13", "alpha_14", "alpha_15", "alpha_16"};

template <int FIRST>  // 0: private_count_levels, 1: private_count_levels_of
constexpr const char* name_of() {
  return FIRST == 0 ? "private_count_levels" : "private_count_levels_of";
}

// Reads the levels from the statement's text (params.hpp): the same call for
// a first row and for an empty input. argc is the arity this final or step
// was registered with, so each arity reads its own calls.
void parse_level_params(LevelsState& st, const std::vector<Param>& p) {
  std::vector<double> a;
  for (std::size_t i = 0; i < p.size(); ++i) a.push_back(alpha_param(p[i], kLevelNames[i]));
  check_levels(a);
  st.k = static_cast<int>(a.size());
  std::copy(a.begin(), a.end(), st.alphas);
}

template <int FIRST>
void read_levels(sqlite3_context* ctx, LevelsState& st, int argc) {
  parse_level_params(st, read_params(sqlite3_context_db_handle(ctx), connection(ctx).statement_cache(),
                                     name_of<FIRST>(), argc));
}

// The release's first step, before any row is counted: by the first row of a
// group or, when no row matched, by the final call, on the same state
// (allocated the same way on both paths): reads the levels and charges the
// epsilon of the least private one.
template <int FIRST>
[[gnu::noinline]] bool begin(sqlite3_context* ctx, LevelsState* st, int argc) {
  st->begun = true;
  st->ready = guard(ctx, name_of<FIRST>(), [&] {
    read_levels<FIRST>(ctx, *st, argc);
    connection(ctx).charge(name_of<FIRST>(), epsilon_of_alpha(st->alphas[0]));
  });
  return st->ready;
}

template <int FIRST>
void levels_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto* st = static_cast<LevelsState*>(sqlite3_aggregate_context(ctx, sizeof(LevelsState)));
  if (!(st && st->ready)) [[unlikely]] {
    if (!st) return sqlite3_result_error_nomem(ctx);
    if (st->begun || !begin<FIRST>(ctx, st, argc)) return;
  }
  if (FIRST == 0 || sqlite3_value_type(argv[0]) != SQLITE_NULL) ++st->rows;
}

template <int FIRST, int ARGC>
void levels_final(sqlite3_context* ctx) {
  auto* st = static_cast<LevelsState*>(sqlite3_aggregate_context(ctx, sizeof(LevelsState)));
  if (!st) return sqlite3_result_error_nomem(ctx);
  if (!st->begun && !begin<FIRST>(ctx, st, ARGC)) return;  // no rows: the same first step
  if (!st->ready) return;                                   // the first row reported the error
  guard(ctx, name_of<FIRST>(), [&] {
    Connection& conn = connection(ctx);
    const auto released =
        conn.level_chain(std::vector<double>(st->alphas, st->alphas + st->k)).release(st->rows, conn.rng());
    std::string json = "[";
    for (std::size_t i = 0; i < released.size(); ++i) {
      if (i) json += ',';
      json += std::to_string(released[i]);  // appended, not "," + s: GCC 12 -O3 warns (-Wrestrict) on that
    }
    json += "]";
    sqlite3_result_text(ctx, json.c_str(), static_cast<int>(json.size()), SQLITE_TRANSIENT);
    sqlite3_result_subtype(ctx, 'J');  // JSON, for SQLite's json functions
  });
}

template <int FIRST, std::size_t... K>
constexpr std::array<void (*)(sqlite3_context*), kMaxLevels> finals(std::index_sequence<K...>) {
  return {&levels_final<FIRST, static_cast<int>(K) + 1 + FIRST>...};
}

class LevelRows final : public RowSource {
 public:
  LevelRows(std::vector<double> alphas, std::vector<std::int64_t> released)
      : alphas_(std::move(alphas)), released_(std::move(released)) {}
  bool eof() const override { return i_ >= released_.size(); }
  void next() override { ++i_; }
  void column(sqlite3_context* ctx, int c) const override {
    if (c == 0) sqlite3_result_int64(ctx, static_cast<std::int64_t>(i_ + 1));
    else if (c == 1) sqlite3_result_double(ctx, alphas_[i_]);
    else sqlite3_result_int64(ctx, released_[i_]);
  }

 private:
  std::vector<double> alphas_;
  std::vector<std::int64_t> released_;
  std::size_t i_ = 0;
};

std::unique_ptr<RowSource> open_release_levels(sqlite3_value** argv, Connection& conn) {
  const std::int64_t value = integer_arg(argv[0], "value");
  const std::int64_t n = integer_arg(argv[1], "n");
  check_n(n, kMaxMatrixN);
  auto alphas = parse_levels(text_arg(argv[2], "alphas", "a JSON array of increasing alphas"));
  RangeLevelChain chain(n, alphas);
  refuse_under_heap_limit();
  conn.charge("release_levels", epsilon_of_alpha(alphas[0]));  // the least private level
  auto released = chain.release(value, conn.rng());
  return std::make_unique<LevelRows>(std::move(alphas), std::move(released));
}

}  // namespace

void check_levels_params(const std::vector<Param>& p) {
  LevelsState st{};
  parse_level_params(st, p);
}
const char* const* level_param_names() { return kLevelNames; }

void private_count_levels_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) { levels_step<0>(ctx, argc, argv); }
void private_count_levels_of_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  levels_step<1>(ctx, argc, argv);
}
// One final per arity: with no rows, the final must know how many levels its
// own call has (an arity-blind final would read another call's levels).
void (*private_count_levels_final(int k))(sqlite3_context*) {
  static constexpr auto kFinals = finals<0>(std::make_index_sequence<kMaxLevels>());
  return kFinals[static_cast<std::size_t>(k - 1)];
}
void (*private_count_levels_of_final(int k))(sqlite3_context*) {
  static constexpr auto kFinals = finals<1>(std::make_index_sequence<kMaxLevels>());
  return kFinals[static_cast<std::size_t>(k - 1)];
}

const TableFunction kReleaseLevels{"release_levels", "level INTEGER, alpha REAL, released INTEGER", 3,
                                   {"value", "n", "alphas"}, 3, open_release_levels, /*random=*/true, /*release=*/true};

}  // namespace optdp::sql
