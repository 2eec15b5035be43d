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
#include "sqlite/release.hpp"
#include "sqlite/vtab.hpp"

namespace optdp::sql {

namespace {

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

// The candidates seen so far, outside the aggregate context (which holds a
// pointer to them); every final frees them (SQLite calls the final for every
// context it made, also when the statement fails or is reset).
struct Candidates {
  std::vector<sqlite3_value*> values;  // sqlite3_value_dup copies
  std::vector<double> scores;
  bool too_many = false;
  bool out_of_memory = false;  // reported by the final
  ~Candidates() {
    for (sqlite3_value* v : values) sqlite3_value_free(v);
  }
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

// The form's own steps of the release sequence (Aggregate, release.hpp).
struct Select {
  static constexpr const char* kName = "private_select";
  using Plan = SelectParams;
  struct Data {
    Candidates* c;  // made by init(), before the charge, on both paths
  };
  static Plan plan(const std::vector<Param>& p, int) { return parse(p); }
  static double epsilon(const Plan& plan) { return plan.eps; }
  static void init(const Plan&, Data& d) { d.c = new Candidates(); }
  static void discard(Data& d) noexcept {
    delete d.c;
    d.c = nullptr;
  }
  static void add(const Plan&, Data& d, std::byte*, sqlite3_value** argv) noexcept {
    Candidates& c = *d.c;
    if (c.values.size() >= kMaxCandidates) {
      c.too_many = true;
      return;
    }
    sqlite3_value* copy = sqlite3_value_dup(argv[0]);
    if (!copy) {
      c.out_of_memory = true;
      return;
    }
    try {
      c.values.push_back(copy);
      copy = nullptr;
      c.scores.push_back(score_of(argv[1]));
    } catch (...) {
      c.out_of_memory = true;
    }
    if (copy) sqlite3_value_free(copy);
    if (c.scores.size() < c.values.size()) {  // the score could not be kept: drop its candidate
      sqlite3_value_free(c.values.back());
      c.values.pop_back();
    }
  }
  static void release(sqlite3_context* ctx, Connection& conn, const Plan& params, Data& d, std::byte*) {
    Candidates& c = *d.c;
    if (c.out_of_memory) throw std::bad_alloc();
    // The number of candidates is public (the candidates are), so this check
    // depends on no private value.
    if (c.too_many)
      throw std::invalid_argument("at most " + std::to_string(kMaxCandidates) + " candidates can be selected from");
    if (c.values.empty()) {  // no candidates: nothing to choose (the empty set is public)
      sqlite3_result_null(ctx);
      return;
    }
    const auto gamma = selection_exponents(c.scores, params.eps, params.sensitivity);
    const std::size_t r = sample_selection(conn.rng(), params.method, gamma);
    sqlite3_result_value(ctx, c.values[r]);
  }
};

}  // namespace

void private_select_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  Aggregate<Select, 0>::step(ctx, argc, argv);
}
void private_select_final3(sqlite3_context* ctx) { Aggregate<Select, 3>::final(ctx); }
void private_select_final4(sqlite3_context* ctx) { Aggregate<Select, 4>::final(ctx); }
void private_select_final5(sqlite3_context* ctx) { Aggregate<Select, 5>::final(ctx); }

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
