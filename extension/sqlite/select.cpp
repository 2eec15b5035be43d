// private_select(candidate, score, eps [, sensitivity [, method]]): one
// candidate chosen by the exponential mechanism or permute-and-flip
// (core/selection.hpp, docs/selection.md), and selection_probabilities, the
// exact law of that choice.
//
// The rows are the candidates, with their scores computed from the data; the
// set of candidates must be public (taken from a public table), as the keys
// of a GROUP BY must be: the release depends on the data only through the
// scores. eps, sensitivity and method are read from the statement's text once
// per release (params.hpp), like every randomised aggregate's parameters.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <memory>
#include <vector>

#include "core/json.hpp"
#include "core/privacy.hpp"
#include "core/selection.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/params.hpp"
#include "sqlite/vtab.hpp"

namespace optdp::sql {

namespace {

constexpr const char* kName = "private_select";

struct SelectParams {
  double eps = 0;
  double sensitivity = 1;
  SelectionMethod method = SelectionMethod::PermuteAndFlip;
};

SelectParams parse(const std::vector<Param>& p) {
  SelectParams s;
  s.eps = number_param(p[0], "eps");
  check_positive(s.eps, "eps");
  if (p.size() >= 2) {
    s.sensitivity = number_param(p[1], "sensitivity");
    check_positive(s.sensitivity, "sensitivity");
  }
  if (p.size() >= 3) s.method = parse_selection_method(text_param(p[2], "method", "'exponential' or 'permute_and_flip'"));
  return s;
}

SelectParams read(sqlite3_context* ctx, int argc) {
  return parse(read_params(sqlite3_context_db_handle(ctx), connection(ctx).statement_cache(), kName, argc));
}

// The candidates seen so far. The aggregate context holds a pointer to it;
// the final frees it (SQLite calls the final for every context it made, also
// when the statement fails or is reset).
struct Candidates {
  SelectParams params;
  std::vector<sqlite3_value*> values;  // sqlite3_value_dup copies
  std::vector<double> scores;
  bool too_many = false;
  ~Candidates() {
    for (sqlite3_value* v : values) sqlite3_value_free(v);
  }
};

struct SelectState {
  Candidates* c;  // set once the parameters have been read
  bool failed;    // reading them failed (the first row reported it)
};

// A score as SQLite's sum() reads a value: numbers as they are, text that
// looks like a number as that number, anything else (NULL included) as 0;
// NaN as 0 and +-inf as the largest finite doubles. Never an error: whether
// a release fails must not depend on the rows.
double score_of(sqlite3_value* v) {
  const int t = sqlite3_value_type(v);
  double s = t == SQLITE_NULL ? 0.0 : row_value(v, t);
  if (std::isinf(s)) s = s > 0 ? std::numeric_limits<double>::max() : -std::numeric_limits<double>::max();
  return s;
}

void release(sqlite3_context* ctx, const SelectParams& params, Candidates* c) {
  Connection& conn = connection(ctx);
  const std::size_t k = c ? c->values.size() : 0;
  // The number of candidates is public (the candidates are), so this check
  // depends on no private value.
  if (c && c->too_many)
    throw std::invalid_argument("at most " + std::to_string(kMaxCandidates) + " candidates can be selected from");
  if (k == 0) {  // no candidates: nothing to choose (the empty set is public)
    sqlite3_result_null(ctx);
    return;
  }
  const auto gamma = selection_exponents(c->scores, params.eps, params.sensitivity);
  const std::size_t r = sample_selection(conn.rng(), params.method, gamma);
  sqlite3_result_value(ctx, c->values[r]);
}

// The release's first step, before any candidate is kept: by the first row
// of a group or, when no row matched, by the final call, on the same state
// (allocated the same way on both paths): reads the parameters and charges.
[[gnu::noinline]] bool begin(sqlite3_context* ctx, int argc, SelectState* st) {
  st->failed = !guard(ctx, kName, [&] {
    auto c = std::make_unique<Candidates>();
    c->params = read(ctx, argc);
    connection(ctx).charge(kName, c->params.eps);
    st->c = c.release();
  });
  return !st->failed;
}

void finish(sqlite3_context* ctx, int argc) {
  auto* st = static_cast<SelectState*>(sqlite3_aggregate_context(ctx, sizeof(SelectState)));
  if (!st) return sqlite3_result_error_nomem(ctx);
  if (!st->c && !st->failed && !begin(ctx, argc, st)) return;  // no rows: the same first step
  Candidates* c = st->c;
  guard(ctx, kName, [&] {
    if (!c) return;  // the first row reported the error
    release(ctx, c->params, c);
  });
  delete c;
  st->c = nullptr;
}

}  // namespace

void private_select_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto* st = static_cast<SelectState*>(sqlite3_aggregate_context(ctx, sizeof(SelectState)));
  if (!st) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  if (!st->c) [[unlikely]] {
    if (st->failed || !begin(ctx, argc, st)) return;
  }
  Candidates& c = *st->c;
  if (c.values.size() >= kMaxCandidates) {
    c.too_many = true;
    return;
  }
  sqlite3_value* copy = sqlite3_value_dup(argv[0]);
  if (!copy) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  guard(ctx, kName, [&] {
    c.values.push_back(copy);
    copy = nullptr;
    c.scores.push_back(score_of(argv[1]));
  });
  if (copy) sqlite3_value_free(copy);
}

void private_select_final3(sqlite3_context* ctx) { finish(ctx, 3); }
void private_select_final4(sqlite3_context* ctx) { finish(ctx, 4); }
void private_select_final5(sqlite3_context* ctx) { finish(ctx, 5); }

void check_select_params(const std::vector<Param>& p) { parse(p); }

namespace {

// (candidate, score, probability): the exact law of the selection.
class ProbabilityRows final : public RowSource {
 public:
  ProbabilityRows(std::vector<double> scores, std::vector<double> law)
      : scores_(std::move(scores)), law_(std::move(law)) {}
  bool eof() const override { return r_ >= law_.size(); }
  void next() override { ++r_; }
  void column(sqlite3_context* ctx, int c) const override {
    if (c == 0) sqlite3_result_int64(ctx, static_cast<std::int64_t>(r_));
    else if (c == 1) sqlite3_result_double(ctx, scores_[r_]);
    else sqlite3_result_double(ctx, law_[r_]);
  }

 private:
  std::vector<double> scores_, law_;
  std::size_t r_ = 0;
};

std::unique_ptr<RowSource> open_probabilities(sqlite3_value** argv, Connection&) {
  const std::string_view json = text_arg(argv[0], "scores", "a JSON array of numbers");
  std::vector<double> scores = parse_json_array(json, "scores", kMaxProbabilityCandidates);
  if (scores.empty()) throw std::invalid_argument("scores must hold at least one score, but is []");
  const double eps = number_arg(argv[1], "eps");
  check_positive(eps, "eps");
  double sensitivity = 1;
  if (argv[2]) {
    sensitivity = number_arg(argv[2], "sensitivity");
    check_positive(sensitivity, "sensitivity");
  }
  SelectionMethod method = SelectionMethod::PermuteAndFlip;
  if (argv[3]) method = parse_selection_method(text_arg(argv[3], "method", "'exponential' or 'permute_and_flip'"));
  std::vector<double> law = selection_probabilities(selection_exponents(scores, eps, sensitivity), method);
  return std::make_unique<ProbabilityRows>(std::move(scores), std::move(law));
}

}  // namespace

// selection_probabilities(scores, eps [, sensitivity [, method]]): deterministic.
const TableFunction kSelectionProbabilities{"selection_probabilities",
                                            "candidate INTEGER, score REAL, probability REAL",
                                            3,
                                            {"scores", "eps", "sensitivity", "method"},
                                            2,
                                            open_probabilities};

}  // namespace optdp::sql
