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

constexpr const char* kLevelNames[kMaxLevels] = {"alpha_1",  "alpha_2",  "alpha_3",  "alpha_4",  "alpha_5",  "alpha_6",
                                                 "alpha_7",  "alpha_8",  "alpha_9",  "alpha_10", "alpha_11", "alpha_12",
                                                 "alpha_13", "alpha_14", "alpha_15", "alpha_16"};

// The validated levels of one release.
struct LevelsPlan {
  double alphas[kMaxLevels];
  int k;
};

LevelsPlan parse_level_params(const std::vector<Param>& p) {
  std::vector<double> a;
  for (std::size_t i = 0; i < p.size(); ++i) a.push_back(alpha_param(p[i], kLevelNames[i]));
  check_levels(a);
  LevelsPlan plan{};
  plan.k = static_cast<int>(a.size());
  std::copy(a.begin(), a.end(), plan.alphas);
  return plan;
}

// The form's own steps of the release sequence (Aggregate, release.hpp).
// Each arity has its own final, so that with no rows the final reads its own
// call's levels (an arity-blind final would read another call's).
template <int FIRST>  // 0: private_count_levels, 1: private_count_levels_of
struct Levels {
  static constexpr const char* kName = FIRST == 0 ? "private_count_levels" : "private_count_levels_of";
  using Plan = LevelsPlan;
  struct Data {
    std::int64_t rows;
  };
  static Plan plan(const std::vector<Param>& p, int) { return parse_level_params(p); }
  // The epsilon of the least private level.
  static double epsilon(const Plan& plan) { return epsilon_of_alpha(plan.alphas[0]); }
  static void add(const Plan&, Data& d, std::byte*, sqlite3_value** argv) noexcept {
    if (FIRST == 0 || sqlite3_value_type(argv[0]) != SQLITE_NULL) ++d.rows;
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& plan, Data& d, std::byte*) {
    const auto released =
        conn.level_chain(std::vector<double>(plan.alphas, plan.alphas + plan.k)).release(d.rows, conn.rng());
    std::string json = "[";
    for (std::size_t i = 0; i < released.size(); ++i) {
      if (i) json += ',';
      json += std::to_string(released[i]);  // appended, not "," + s: GCC 12 -O3 warns (-Wrestrict) on that
    }
    json += "]";
    sqlite3_result_text(ctx, json.c_str(), static_cast<int>(json.size()), SQLITE_TRANSIENT);
    sqlite3_result_subtype(ctx, 'J');  // JSON, for SQLite's json functions
  }
};

template <int FIRST, std::size_t... K>
constexpr std::array<void (*)(sqlite3_context*), kMaxLevels> finals(std::index_sequence<K...>) {
  return {&Aggregate<Levels<FIRST>, static_cast<int>(K) + 1 + FIRST>::final...};
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
  conn.charge("release_levels", epsilon_of_alpha(alphas[0]));  // the least private level
  auto released = chain.release(value, conn.rng());
  return std::make_unique<LevelRows>(std::move(alphas), std::move(released));
}

}  // namespace

void check_levels_params(const std::vector<Param>& p) { parse_level_params(p); }
const char* const* level_param_names() { return kLevelNames; }

void private_count_levels_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Levels<0>, 0>::step(ctx, argc, argv);
}
void private_count_levels_of_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Levels<1>, 0>::step(ctx, argc, argv);
}
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
