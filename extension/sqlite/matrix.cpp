// Mechanism matrices and optimal post-processing, as table-valued
// functions and scalars. The maths is in core/mechanism, core/remap, core/lp;
// this file reads arguments and streams rows.
//
//   SELECT * FROM geometric_matrix(4, 0.5);                  -- (input, output, probability)
//   SELECT * FROM derivation_matrix(4, 0.5, 0.8);            -- (observed, output, probability)
//   SELECT * FROM staircase_pmf(1.0, 5, -20, 20);            -- (noise, probability)
//   SELECT * FROM optimal_remap(10, 0.5, 'absolute', 'uniform');  -- (observed, answer)
//   SELECT * FROM optimal_mechanism(10, 0.5, 'squared', 'uniform', 'lp');
//   SELECT * FROM minimax_remap(10, 0.5, 'absolute', 2, 6);  -- (observed, answer, probability)
//   SELECT remap_count(private_count(0.5), 100, 0.5, 'absolute', 'uniform') FROM t;
#include <cmath>
#include <bit>
#include <cstring>
#include <string>

#include "core/helpers.hpp"
#include "core/json.hpp"
#include "core/loss.hpp"
#include "core/lp.hpp"
#include "core/mechanism.hpp"
#include "core/privacy.hpp"
#include "core/remap.hpp"
#include "core/staircase.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/vtab.hpp"

namespace optdp::sql {

namespace {

constexpr const char* kLossDomain = "'absolute', 'squared', 'binary', 'power:P' or a JSON matrix";
constexpr const char* kPriorDomain = "'uniform' or a JSON array";

std::int64_t n_arg(sqlite3_value* v, std::int64_t max) {
  const std::int64_t n = integer_arg(v, "n");
  check_n(n, max);
  return n;
}

Loss loss_arg(sqlite3_value* v, std::int64_t n) { return Loss::parse(text_arg(v, "loss", kLossDomain), n); }

std::vector<double> prior_arg(sqlite3_value* v, std::int64_t n) {
  return parse_prior(text_arg(v, "prior", kPriorDomain), n);
}

// lo and hi: integers with 0 <= lo <= hi <= n.
std::pair<std::int64_t, std::int64_t> side_information(sqlite3_value* lo_v, sqlite3_value* hi_v, std::int64_t n) {
  const std::int64_t lo = integer_arg(lo_v, "lo"), hi = integer_arg(hi_v, "hi");
  check_side_information(n, lo, hi);
  return {lo, hi};
}

// Rows (i, j, m[i][j]) of a dense matrix.
std::unique_ptr<RowSource> dense_rows(Matrix m) {
  const auto rows = static_cast<std::int64_t>(m.size());
  const auto cols = rows ? static_cast<std::int64_t>(m[0].size()) : 0;
  return grid(rows, cols, [m = std::move(m)](std::int64_t i, std::int64_t j) {
    return m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  });
}

// (observed, answer) of a deterministic remap.
class RemapRows final : public RowSource {
 public:
  explicit RemapRows(std::vector<std::int64_t> answer) : answer_(std::move(answer)) {}
  bool eof() const override { return o_ >= answer_.size(); }
  void next() override { ++o_; }
  void column(sqlite3_context* ctx, int c) const override {
    sqlite3_result_int64(ctx, c == 0 ? static_cast<std::int64_t>(o_) : answer_[o_]);
  }

 private:
  std::vector<std::int64_t> answer_;
  std::size_t o_ = 0;
};

// remap o G, one input row at a time: O(n) memory for (n+1)^2 rows.
class RemappedRows final : public RowSource {
 public:
  RemappedRows(GeometricMechanism g, std::vector<std::int64_t> answer)
      : g_(std::move(g)), answer_(std::move(answer)), row_(answer_.size()) {
    fill();
  }
  bool eof() const override { return i_ > g_.n(); }
  void next() override {
    if (++r_ > g_.n()) {
      r_ = 0;
      if (++i_ <= g_.n()) fill();
    }
  }
  void column(sqlite3_context* ctx, int c) const override {
    if (c == 0) sqlite3_result_int64(ctx, i_);
    else if (c == 1) sqlite3_result_int64(ctx, r_);
    else sqlite3_result_double(ctx, row_[static_cast<std::size_t>(r_)]);
  }

 private:
  void fill() { remapped_row(g_, answer_, i_, row_); }
  GeometricMechanism g_;
  std::vector<std::int64_t> answer_;
  std::vector<double> row_;
  std::int64_t i_ = 0, r_ = 0;
};

class PmfRows final : public RowSource {
 public:
  PmfRows(IntegerStaircase s, std::int64_t lo, std::int64_t hi) : s_(std::move(s)), i_(lo), hi_(hi) {}
  bool eof() const override { return done_; }
  void next() override {
    if (i_ == hi_) done_ = true;  // never ++ past hi: hi may be INT64_MAX
    else ++i_;
  }
  void column(sqlite3_context* ctx, int c) const override {
    if (c == 0) sqlite3_result_int64(ctx, i_);
    else sqlite3_result_double(ctx, s_.pmf(i_));
  }

 private:
  IntegerStaircase s_;
  std::int64_t i_, hi_;
  bool done_ = false;
};

// ---- table functions -----------------------------------------------------------

std::unique_ptr<RowSource> open_geometric_matrix(sqlite3_value** argv, Connection&) {
  const std::int64_t n = n_arg(argv[0], kMaxMatrixN);
  GeometricMechanism g(n, alpha_arg(argv[1]));
  return grid(n + 1, n + 1, [g = std::move(g)](std::int64_t i, std::int64_t z) { return g(i, z); });
}

std::unique_ptr<RowSource> open_derivation_matrix(sqlite3_value** argv, Connection&) {
  const std::int64_t n = n_arg(argv[0], kMaxMatrixN);
  DerivationMatrix t(n, alpha_arg(argv[1]), alpha_arg(argv[2], "beta"));
  return grid(n + 1, n + 1, [t = std::move(t)](std::int64_t o, std::int64_t z) { return t(o, z); });
}

std::unique_ptr<RowSource> open_staircase_pmf(sqlite3_value** argv, Connection&) {
  const double eps = number_arg(argv[0], "eps");
  check_positive(eps, "eps");
  const std::int64_t D = integer_arg(argv[1], "delta");
  check_pmf_delta(D);
  const std::int64_t lo = integer_arg(argv[2], "lo"), hi = integer_arg(argv[3], "hi");
  check_pmf_range(lo, hi);
  const std::string spec = argv[4] ? std::string(text_arg(argv[4], "cost", "'l1', 'l2' or 'r=K'")) : "l1";
  return std::make_unique<PmfRows>(IntegerStaircase(eps, D, staircase_r(spec, eps, D)), lo, hi);
}

std::unique_ptr<RowSource> open_optimal_remap(sqlite3_value** argv, Connection&) {
  const std::int64_t n = n_arg(argv[0], kMaxMatrixN);
  GeometricMechanism g(n, alpha_arg(argv[1]));
  const Loss loss = loss_arg(argv[2], n);
  return std::make_unique<RemapRows>(optimal_remap(g, loss, prior_arg(argv[3], n)));
}

std::unique_ptr<RowSource> open_optimal_mechanism(sqlite3_value** argv, Connection&) {
  const OptimalMethod method =
      argv[4] ? parse_optimal_method(text_arg(argv[4], "method", "'remap' or 'lp'")) : OptimalMethod::Remap;
  const bool lp = method == OptimalMethod::Lp;
  const std::int64_t n = n_arg(argv[0], lp ? kMaxLpN : kMaxMatrixN);
  const double alpha = alpha_arg(argv[1]);
  const Loss loss = loss_arg(argv[2], n);
  const auto prior = prior_arg(argv[3], n);
  if (lp) return dense_rows(optimal_mechanism_lp(n, alpha, loss, prior).matrix);
  GeometricMechanism g(n, alpha);
  auto answer = optimal_remap(g, loss, prior);
  return std::make_unique<RemappedRows>(std::move(g), std::move(answer));
}

LpResult minimax(sqlite3_value** argv) {
  const std::int64_t n = n_arg(argv[0], kMaxLpN);
  const double alpha = alpha_arg(argv[1]);
  const Loss loss = loss_arg(argv[2], n);
  const auto [lo, hi] = side_information(argv[3], argv[4], n);
  return minimax_remap_lp(n, alpha, loss, lo, hi);
}

std::unique_ptr<RowSource> open_minimax_remap(sqlite3_value** argv, Connection&) {
  return dense_rows(minimax(argv).matrix);
}

std::unique_ptr<RowSource> open_minimax_mechanism(sqlite3_value** argv, Connection&) {
  const LpResult t = minimax(argv);
  const GeometricMechanism g(integer_arg(argv[0], "n"), alpha_arg(argv[1]));
  return dense_rows(multiply(g.dense(), t.matrix));
}

}  // namespace

const TableFunction kGeometricMatrix{"geometric_matrix", "input INTEGER, output INTEGER, probability REAL", 3,
                                     {"n", "alpha"}, 2, open_geometric_matrix};
const TableFunction kDerivationMatrix{"derivation_matrix", "observed INTEGER, output INTEGER, probability REAL", 3,
                                      {"n", "alpha", "beta"}, 3, open_derivation_matrix};
const TableFunction kStaircasePmf{"staircase_pmf", "noise INTEGER, probability REAL", 2,
                                  {"eps", "delta", "lo", "hi", "cost"}, 4, open_staircase_pmf};
const TableFunction kOptimalRemap{"optimal_remap", "observed INTEGER, answer INTEGER", 2,
                                  {"n", "alpha", "loss", "prior"}, 4, open_optimal_remap};
const TableFunction kOptimalMechanism{"optimal_mechanism", "input INTEGER, output INTEGER, probability REAL", 3,
                                      {"n", "alpha", "loss", "prior", "method"}, 4, open_optimal_mechanism};
const TableFunction kMinimaxRemap{"minimax_remap", "observed INTEGER, answer INTEGER, probability REAL", 3,
                                  {"n", "alpha", "loss", "lo", "hi"}, 5, open_minimax_remap};
const TableFunction kMinimaxMechanism{"minimax_mechanism", "input INTEGER, output INTEGER, probability REAL", 3,
                                      {"n", "alpha", "loss", "lo", "hi"}, 5, open_minimax_mechanism};

// ---- scalars ---------------------------------------------------------------------

// remap_count(observed, n, alpha, loss, prior): the user's optimal answer for
// one released value, observed first clamped into [0, n]. The remap is cached
// per connection for the last (n, alpha, loss, prior).
void remap_count_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "remap_count", argc, argv, [&] {
    const std::int64_t observed = integer_arg(argv[0], "observed");
    const std::int64_t n = n_arg(argv[1], kMaxMatrixN);
    const double alpha = alpha_arg(argv[2]);
    const std::string_view loss_text = text_arg(argv[3], "loss", kLossDomain);
    const std::string_view prior_text = text_arg(argv[4], "prior", kPriorDomain);
    Connection& conn = connection(ctx);
    std::string key = std::to_string(n) + '\x1f' + std::to_string(std::bit_cast<std::uint64_t>(alpha)) + '\x1f';
    key.append(loss_text).append(1, '\x1f').append(prior_text);
    auto& cache = conn.remap_cache();
    if (cache.key != key) {
      GeometricMechanism g(n, alpha);
      cache.answer = optimal_remap(g, Loss::parse(loss_text, n), parse_prior(prior_text, n));
      cache.key = std::move(key);
    }
    const std::int64_t o = observed < 0 ? 0 : (observed > n ? n : observed);
    sqlite3_result_int64(ctx, cache.answer[static_cast<std::size_t>(o)]);
  });
}

// optimal_loss(n, alpha, loss, prior): the user's optimal expected loss (remap o G).
void optimal_loss_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "optimal_loss", argc, argv, [&] {
    const std::int64_t n = n_arg(argv[0], kMaxMatrixN);
    GeometricMechanism g(n, alpha_arg(argv[1]));
    const Loss loss = loss_arg(argv[2], n);
    const auto prior = prior_arg(argv[3], n);
    sqlite3_result_double(ctx, remap_loss(g, optimal_remap(g, loss, prior), loss, prior));
  });
}

// minimax_loss(n, alpha, loss, lo, hi): the minimax user's optimal worst-case loss.
void minimax_loss_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "minimax_loss", argc, argv, [&] { sqlite3_result_double(ctx, minimax(argv).value); });
}

// dp_derivable(matrix_json, alpha): 1 if the mechanism is G(n, alpha) followed by
// some post-processing (G^-1 M >= -1e-9), else 0.
void dp_derivable_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_derivable", argc, argv, [&] {
    const auto m = parse_json_matrix(text_arg(argv[0], "matrix", "a JSON square matrix"), "matrix",
                                     kMaxDerivableN + 1, kMaxDerivableN + 1);
    sqlite3_result_int(ctx, derivable(m, alpha_arg(argv[1])) ? 1 : 0);
  });
}

}  // namespace optdp::sql
