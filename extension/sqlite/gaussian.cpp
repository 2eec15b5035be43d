// Gaussian releases (zCDP), core/gaussian.hpp and docs/accounting.md:
//
//   gaussian_count(rho), gaussian_count(x, rho)   count + discrete Gaussian noise, sigma^2 = 1 / (2 rho)
//   gaussian_sum(x, rho, lower, upper)             rows clamped into [lower, upper] and summed exactly on a
//                                                  power-of-two grid, plus the discrete Gaussian on that
//                                                  grid's lattice, sigma^2 = D^2 / (2 rho) in grid steps
//   dp_rho(eps, delta)                             the largest rho that is (eps, delta)-DP (tight conversion)
//
// Each release is rho-zCDP and is charged to the ledger as rho; the ledger
// composes it with the other releases (ledger.hpp). The release sequence is
// Aggregate in release.hpp.
#include <cmath>
#include <cstring>

#include "core/accounting.hpp"
#include "core/format.hpp"
#include "core/gaussian.hpp"
#include "core/privacy.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/release.hpp"

namespace optdp::sql {

namespace {

// rho in [2^-30, 2^20]: the noise's sigma^2 then stays within the sampler's
// range for counts and for every grid of a sum.
double rho_param(const Param& p) {
  const double rho = number_param(p, "rho");
  if (!(rho >= 0x1p-30 && rho <= 0x1p20))
    throw std::invalid_argument("rho must be a number in [2^-30, 2^20] (9.3e-10 to 1048576), but is " +
                                format_double(rho));
  return rho;
}

template <int ARGC>  // 1: gaussian_count(rho), 2: gaussian_count(x, rho)
struct GaussianCount {
  static constexpr const char* kName = "gaussian_count";
  struct Plan {
    double rho;
  };
  struct Data {
    std::int64_t rows;
  };
  static Plan plan(const std::vector<Param>& p, int) { return {rho_param(p[0])}; }
  static double rho(const Plan& plan) { return plan.rho; }
  // The ledger's shift: sensitivity 1, the noise N_Z(0, 1 / (2 rho)) (core/pld.hpp).
  static std::int64_t shift(const Plan&) { return 1; }
  static void add(const Plan&, Data& d, std::byte*, sqlite3_value** argv) noexcept {
    if (ARGC == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL) ++d.rows;
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& plan, Data& d, std::byte*) {
    // L2 sensitivity 1 (one row added or removed): sigma^2 = 1 / (2 rho).
    const DiscreteGaussian noise(static_cast<__float128>(1) / (2 * static_cast<__float128>(plan.rho)));
    std::int64_t out;
    if (__builtin_add_overflow(d.rows, noise(conn.rng()), &out)) out = d.rows;  // unreachable: |noise| < 2^62
    sqlite3_result_int64(ctx, out);
  }
};

struct GaussianSum {
  static constexpr const char* kName = "gaussian_sum";
  struct Plan {
    double rho, lower, upper;
    Grid grid;
  };
  struct Data {
    unsigned char sum_bytes[16];  // __int128 as bytes (8-byte aligned memory)
    __int128 sum() const {
      __int128 v;
      std::memcpy(&v, sum_bytes, sizeof v);
      return v;
    }
  };
  static Plan plan(const std::vector<Param>& p, int) {
    Plan plan{};
    plan.rho = rho_param(p[0]);
    plan.lower = number_param(p[1], "lower");
    plan.upper = number_param(p[2], "upper");
    // The grid as for a pure sum whose noise has the same scale (eps =
    // sqrt(2 rho), capped at 20): steps far below the noise.
    plan.grid = make_grid(std::min(std::sqrt(2 * plan.rho), 20.0), plan.lower, plan.upper);
    return plan;
  }
  static double rho(const Plan& plan) { return plan.rho; }
  // The ledger's shift: D grid steps, the noise N_Z(0, D^2 / (2 rho)); none
  // past 2^20 steps (the PLD's limit: zCDP accounts for it).
  static std::int64_t shift(const Plan& plan) { return plan.grid.D() <= (1 << 20) ? plan.grid.D() : 0; }
  static void add(const Plan& plan, Data& d, std::byte*, sqlite3_value** argv) noexcept {
    sqlite3_value* x = argv[0];
    const int t = sqlite3_value_type(x);
    if (t == SQLITE_NULL) return;
    const __int128 v = d.sum() + plan.grid.quantize(row_value(x, t), plan.lower, plan.upper);
    std::memcpy(d.sum_bytes, &v, sizeof v);
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& plan, Data& d, std::byte*) {
    // L2 sensitivity D grid steps (one row added, removed or replaced).
    const __float128 D = static_cast<__float128>(plan.grid.D());
    const DiscreteGaussian noise(D * D / (2 * static_cast<__float128>(plan.rho)));
    const __int128 total = d.sum() + noise(conn.rng());
    sqlite3_result_double(ctx, static_cast<double>(total) * plan.grid.g);
  }
};

}  // namespace

template <int ARGC>
void gaussian_count_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<GaussianCount<ARGC>, ARGC>::step(ctx, argc, argv);
}
template void gaussian_count_step<1>(sqlite3_context*, int, sqlite3_value**);
template void gaussian_count_step<2>(sqlite3_context*, int, sqlite3_value**);
void gaussian_count_final1(sqlite3_context* ctx) { Aggregate<GaussianCount<1>, 1>::final(ctx); }
void gaussian_count_final2(sqlite3_context* ctx) { Aggregate<GaussianCount<2>, 2>::final(ctx); }
void gaussian_sum_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<GaussianSum, 4>::step(ctx, argc, argv);
}
void gaussian_sum_final(sqlite3_context* ctx) { Aggregate<GaussianSum, 4>::final(ctx); }
void check_gaussian_count_params(const std::vector<Param>& p) { GaussianCount<1>::plan(p, 1); }
void check_gaussian_sum_params(const std::vector<Param>& p) { GaussianSum::plan(p, 4); }

// dp_rho(eps, delta): the largest rho whose tight conversion is (eps, delta)-DP.
void dp_rho_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_rho", argc, argv, [&] {
    const double eps = number_arg(argv[0], "eps");
    check_positive(eps, "eps");
    const double delta = number_arg(argv[1], "delta");
    if (!(delta > 0 && delta < 1))
      throw std::invalid_argument("delta must be a number in (0, 1), but is " + describe(argv[1]));
    sqlite3_result_double(ctx, zcdp::rho_for_epsilon_delta(eps, delta));
  });
}

}  // namespace optdp::sql
