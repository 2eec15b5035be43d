// optdp for PostgreSQL: the scalar helpers (intervals, costs, conversions,
// optimal post-processing), the set-returning functions (mechanism
// matrices, remaps, selection probabilities) and release_levels, with the
// SQLite binding's names, arguments, defaults and messages
// (sql/reference.md; the differences are in docs/scale.md). But for
// release_levels, a release charged to the ledger, every value depends on
// the public parameters alone: nothing here reads a table or draws noise.
//
// Arguments are copied out of PostgreSQL first (read_args), the C++ work runs
// inside run_cpp (common.hpp), and results and rows are handed back after it.
// A message quotes the arguments' values only when every argument of the
// call is a constant or a query parameter ($1) in the call's expression
// (get_fn_expr_arg_stable): otherwise an argument could be a row's value, and
// optdp::hide_values takes the values out, as the SQLite binding does for
// arguments that are not bound parameters.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/accounting.hpp"
#include "core/format.hpp"
#include "core/helpers.hpp"
#include "core/intervals.hpp"
#include "core/levels.hpp"
#include "core/loss.hpp"
#include "core/lp.hpp"
#include "core/mechanism.hpp"
#include "core/privacy.hpp"
#include "core/quantile.hpp"
#include "core/remap.hpp"
#include "core/selection.hpp"
#include "core/staircase.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "funcapi.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/memutils.h"
}

#include "postgres/common.hpp"

namespace {

using optdp_pg::Failure;
using optdp_pg::raise;
using optdp_pg::run_cpp;

// ---- arguments ------------------------------------------------------------------

// One argument as plain values, copied out of PostgreSQL before any C++ work.
struct Arg {
  char type = 0;  // 'f' float8, 'i' int8, 't' text, 'a' float8[], 'M' a float8[] of two dimensions
  bool null = true;
  double number = 0;
  std::int64_t integer = 0;
  const char* text = nullptr;  // not NUL-terminated
  int text_len = 0;
  const double* values = nullptr;  // float8[]: its elements in row-major order
  int count = 0;
  int ndim = 0;
  int dims[MAXDIM] = {};
  int first_null = -1;  // 0-based index of the first NULL element, or -1
};

constexpr int kMaxArgs = 6;

struct Call {
  int nargs = 0;
  Arg arg[kMaxArgs];
  bool shown = true;  // every argument a constant or a query parameter
};

// Reads the call's arguments; types[i] is argument i's declared type (see Arg).
void read_args(FunctionCallInfo fcinfo, const char* types, Call& c) {
  c.nargs = PG_NARGS();
  if (c.nargs > kMaxArgs || c.nargs > static_cast<int>(std::strlen(types)))
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("optdp: unexpected number of arguments")));
  c.shown = true;
  for (int i = 0; i < c.nargs; ++i) {
    Arg& a = c.arg[i];
    a.type = types[i];
    if (!get_fn_expr_arg_stable(fcinfo->flinfo, i)) c.shown = false;
    a.null = PG_ARGISNULL(i);
    if (a.null) continue;
    switch (a.type) {
      case 'f': a.number = PG_GETARG_FLOAT8(i); break;
      case 'i': a.integer = PG_GETARG_INT64(i); break;
      case 't': {
        text* t = PG_GETARG_TEXT_PP(i);
        a.text = VARDATA_ANY(t);
        a.text_len = static_cast<int>(VARSIZE_ANY_EXHDR(t));
        break;
      }
      case 'a':
      case 'M': {
        ArrayType* arr = PG_GETARG_ARRAYTYPE_P(i);
        a.ndim = ARR_NDIM(arr);
        for (int d = 0; d < a.ndim; ++d) a.dims[d] = ARR_DIMS(arr)[d];
        Datum* elems;
        bool* nulls;
        int n;
        deconstruct_array(arr, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
        double* v = static_cast<double*>(palloc((n > 0 ? n : 1) * sizeof(double)));
        for (int k = 0; k < n; ++k) {
          v[k] = nulls[k] ? 0.0 : DatumGetFloat8(elems[k]);
          if (nulls[k] && a.first_null < 0) a.first_null = k;
        }
        a.values = v;
        a.count = n;
        break;
      }
      default:
        ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("optdp: unexpected argument type")));
    }
  }
}

// Present: an optional argument given in the call (the shorter overload omits it).
bool present(const Call& c, int i) { return i < c.nargs; }

[[noreturn]] void bad(const char* name, const std::string& requirement, const std::string& shown) {
  throw std::invalid_argument(std::string(name) + " must be " + requirement + ", but is " + shown);
}

// What SQLite calls a number is a float8 here; an int8 argument is an integer.
double number(const Arg& a, const char* name) {
  if (a.null) bad(name, "a number", "NULL");
  return a.number;
}

std::int64_t integer(const Arg& a, const char* name) {
  if (a.null) bad(name, "an integer", "NULL");
  return a.integer;
}

std::string_view text_of(const Arg& a, const char* name, const char* domain) {
  if (a.null) bad(name, std::string("text (") + domain + ")", "NULL");
  return std::string_view(a.text, static_cast<std::size_t>(a.text_len));
}

double alpha_of(const Arg& a, const char* name = "alpha") {
  const double v = number(a, name);
  if (!(v > 0 && v < 1)) bad(name, "in (0, 1)", optdp::format_double(v));
  return v;
}

double positive(const Arg& a, const char* name) {
  const double v = number(a, name);
  optdp::check_positive(v, name);
  return v;
}

double confidence_of(const Arg& a) {
  const double c = number(a, "confidence");
  optdp::check_confidence(c);
  return c;
}

// A one-dimensional float8[] without NULLs, as a vector (its checks of
// range and length are the caller's).
std::vector<double> list_of(const Arg& a, const char* name) {
  if (a.null) bad(name, "an array of numbers", "NULL");
  if (a.ndim > 1) bad(name, "a one-dimensional array", "an array of " + std::to_string(a.ndim) + " dimensions");
  if (a.first_null >= 0)
    throw std::invalid_argument(std::string(name) + " must be an array of numbers, but element " +
                                std::to_string(a.first_null + 1) + " is NULL");
  return std::vector<double>(a.values, a.values + a.count);
}

// A two-dimensional float8[] without NULLs: rows x cols, row-major.
struct ArrayMatrix {
  const double* values;
  std::size_t rows, cols;
  std::span<const double> row(std::size_t i) const { return {values + i * cols, cols}; }
};
ArrayMatrix matrix_of(const Arg& a, const char* name) {
  if (a.null) bad(name, "a two-dimensional array of numbers", "NULL");
  if (a.ndim != 2 && a.count > 0)
    throw std::invalid_argument(std::string(name) + " must be a two-dimensional array of numbers, but has " +
                                std::to_string(a.ndim) + (a.ndim == 1 ? " dimension" : " dimensions"));
  if (a.first_null >= 0)
    throw std::invalid_argument(std::string(name) + " must be an array of numbers, but element " +
                                std::to_string(a.first_null + 1) + " is NULL");
  const std::size_t rows = a.count ? static_cast<std::size_t>(a.dims[0]) : 0;
  const std::size_t cols = a.count ? static_cast<std::size_t>(a.dims[1]) : 0;
  return {a.values, rows, cols};
}

std::int64_t n_of(const Arg& a, std::int64_t max) {
  const std::int64_t n = integer(a, "n");
  optdp::check_n(n, max);
  return n;
}

constexpr const char* kLossDomain = "'absolute', 'squared', 'binary', 'power:P' or a JSON matrix";
constexpr const char* kPriorDomain = "'uniform' or a JSON array";

// loss: text (a keyword or a JSON matrix) or a two-dimensional float8[].
optdp::Loss loss_of(const Arg& a, std::int64_t n) {
  if (a.type == 'M') {
    const ArrayMatrix m = matrix_of(a, "loss");
    return optdp::Loss::of_rows(n, m.rows, [&](std::size_t i) { return m.row(i); });
  }
  return optdp::Loss::parse(text_of(a, "loss", kLossDomain), n);
}

// prior: text ('uniform' or a JSON array) or float8[].
std::vector<double> prior_of(const Arg& a, std::int64_t n) {
  if (a.type == 'a') return optdp::prior_of_values(list_of(a, "prior"), n);
  return optdp::parse_prior(text_of(a, "prior", kPriorDomain), n);
}

// ---- scalars --------------------------------------------------------------------

// Runs a scalar: reads its arguments, runs body(call) as C++ and reports its error.
template <class Body>
void scalar(FunctionCallInfo fcinfo, const char* function, const char* types, Body&& body) {
  Call c;
  read_args(fcinfo, types, c);
  Failure f;
  run_cpp(f, function, [&] { body(static_cast<const Call&>(c)); }, c.shown);
  raise(f);
}

// sum_interval and sum_interval_eps: (mechanism, <second>, lower, upper, confidence [, cost]).
struct SumArgs {
  optdp::SumMechanism mechanism;
  double second, lower, upper, confidence;
  optdp::CostSpec cost;
};
SumArgs sum_args(const Call& c, const char* second) {
  SumArgs s{};
  s.mechanism = optdp::parse_sum_mechanism(text_of(c.arg[0], "mechanism", "'staircase' or 'laplace'"));
  s.second = positive(c.arg[1], second);
  s.lower = number(c.arg[2], "lower");
  s.upper = number(c.arg[3], "upper");
  s.confidence = confidence_of(c.arg[4]);
  if (present(c, 5)) {
    if (s.mechanism == optdp::SumMechanism::Laplace) throw std::invalid_argument("cost applies only to 'staircase'");
    s.cost = optdp::parse_cost_spec(text_of(c.arg[5], "cost", "'l1', 'l2' or 'gamma=G'"));
  }
  return s;
}

// minimax_remap, minimax_mechanism, minimax_loss: (n, alpha, loss, lo, hi).
optdp::LpResult minimax(const Call& c) {
  const std::int64_t n = n_of(c.arg[0], optdp::kMaxLpN);
  const double alpha = alpha_of(c.arg[1]);
  const optdp::Loss loss = loss_of(c.arg[2], n);
  const std::int64_t lo = integer(c.arg[3], "lo"), hi = integer(c.arg[4], "hi");
  optdp::check_side_information(n, lo, hi);
  return optdp::minimax_remap_lp(n, alpha, loss, lo, hi);
}

// remap_count's remap for the last (n, alpha, loss, prior) of this backend.
struct RemapCache {
  std::string key;
  std::vector<std::int64_t> answer;
};
RemapCache* remap_cache = nullptr;  // made on first use inside run_cpp; one per backend

// ---- rows of the set-returning functions ------------------------------------------

// The rows of one call, made by its first call and read one per call after.
// eof/next/row never throw and call nothing of PostgreSQL's that can fail.
class Rows {
 public:
  virtual ~Rows() = default;
  virtual bool eof() const noexcept = 0;
  virtual void next() noexcept = 0;
  virtual void row(Datum* v) const noexcept = 0;
  // A release's rows (release_levels) are drawn by release(), after srf()
  // has charged release_epsilon(); the helpers' rows are not releases.
  virtual bool releases() const noexcept { return false; }
  virtual double release_epsilon() const noexcept { return 0; }
  virtual void release(optdp::Rng&) {}
};

// (i, j, value(i, j)) over a rows x cols grid.
template <class Value>
class GridRows final : public Rows {
 public:
  GridRows(std::int64_t rows, std::int64_t cols, Value value) : rows_(rows), cols_(cols), value_(std::move(value)) {}
  bool eof() const noexcept override { return i_ >= rows_; }
  void next() noexcept override {
    if (++j_ == cols_) j_ = 0, ++i_;
  }
  void row(Datum* v) const noexcept override {
    v[0] = Int64GetDatum(i_);
    v[1] = Int64GetDatum(j_);
    v[2] = Float8GetDatum(value_(i_, j_));
  }

 private:
  std::int64_t rows_, cols_, i_ = 0, j_ = 0;
  Value value_;
};

template <class Value>
std::unique_ptr<Rows> grid(std::int64_t rows, std::int64_t cols, Value value) {
  return std::make_unique<GridRows<Value>>(rows, cols, std::move(value));
}

std::unique_ptr<Rows> dense_rows(optdp::Matrix m) {
  const auto rows = static_cast<std::int64_t>(m.size());
  const auto cols = rows ? static_cast<std::int64_t>(m[0].size()) : 0;
  return grid(rows, cols, [m = std::move(m)](std::int64_t i, std::int64_t j) {
    return m[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  });
}

// (observed, answer) of a deterministic remap.
class RemapRows final : public Rows {
 public:
  explicit RemapRows(std::vector<std::int64_t> answer) : answer_(std::move(answer)) {}
  bool eof() const noexcept override { return o_ >= answer_.size(); }
  void next() noexcept override { ++o_; }
  void row(Datum* v) const noexcept override {
    v[0] = Int64GetDatum(static_cast<std::int64_t>(o_));
    v[1] = Int64GetDatum(answer_[o_]);
  }

 private:
  std::vector<std::int64_t> answer_;
  std::size_t o_ = 0;
};

// remap o G, one input row at a time: O(n) memory for (n+1)^2 rows.
class RemappedRows final : public Rows {
 public:
  RemappedRows(optdp::GeometricMechanism g, std::vector<std::int64_t> answer)
      : g_(std::move(g)), answer_(std::move(answer)), row_(answer_.size()) {
    optdp::remapped_row(g_, answer_, i_, row_);
  }
  bool eof() const noexcept override { return i_ > g_.n(); }
  void next() noexcept override {
    if (++r_ > g_.n()) {
      r_ = 0;
      if (++i_ <= g_.n()) optdp::remapped_row(g_, answer_, i_, row_);
    }
  }
  void row(Datum* v) const noexcept override {
    v[0] = Int64GetDatum(i_);
    v[1] = Int64GetDatum(r_);
    v[2] = Float8GetDatum(row_[static_cast<std::size_t>(r_)]);
  }

 private:
  optdp::GeometricMechanism g_;
  std::vector<std::int64_t> answer_;
  std::vector<double> row_;
  std::int64_t i_ = 0, r_ = 0;
};

class PmfRows final : public Rows {
 public:
  PmfRows(optdp::IntegerStaircase s, std::int64_t lo, std::int64_t hi) : s_(std::move(s)), i_(lo), hi_(hi) {}
  bool eof() const noexcept override { return done_; }
  void next() noexcept override {
    if (i_ == hi_) done_ = true;  // never ++ past hi: hi may be INT64_MAX
    else ++i_;
  }
  void row(Datum* v) const noexcept override {
    v[0] = Int64GetDatum(i_);
    v[1] = Float8GetDatum(s_.pmf(i_));
  }

 private:
  optdp::IntegerStaircase s_;
  std::int64_t i_, hi_;
  bool done_ = false;
};

// (candidate, score, probability): the exact law of a selection; candidates
// numbered from 0, as in SQLite.
class ProbabilityRows final : public Rows {
 public:
  ProbabilityRows(std::vector<double> scores, std::vector<double> law)
      : scores_(std::move(scores)), law_(std::move(law)) {}
  bool eof() const noexcept override { return r_ >= law_.size(); }
  void next() noexcept override { ++r_; }
  void row(Datum* v) const noexcept override {
    v[0] = Int64GetDatum(static_cast<std::int64_t>(r_));
    v[1] = Float8GetDatum(scores_[r_]);
    v[2] = Float8GetDatum(law_[r_]);
  }

 private:
  std::vector<double> scores_, law_;
  std::size_t r_ = 0;
};

// (level, alpha, released): one value released at k levels (release_levels).
class LevelRows final : public Rows {
 public:
  LevelRows(std::int64_t value, std::int64_t n, std::vector<double> alphas)
      : value_(value), chain_(n, alphas), alphas_(std::move(alphas)), eps_(optdp::epsilon_of_alpha(alphas_[0])) {}
  bool releases() const noexcept override { return true; }
  double release_epsilon() const noexcept override { return eps_; }
  void release(optdp::Rng& rng) override { released_ = chain_.release(value_, rng); }
  bool eof() const noexcept override { return r_ >= released_.size(); }
  void next() noexcept override { ++r_; }
  void row(Datum* v) const noexcept override {
    v[0] = Int64GetDatum(static_cast<std::int64_t>(r_ + 1));
    v[1] = Float8GetDatum(alphas_[r_]);
    v[2] = Int64GetDatum(released_[r_]);
  }

 private:
  std::int64_t value_;
  optdp::RangeLevelChain chain_;
  std::vector<double> alphas_;
  double eps_;  // the least private level's (alpha_1's): the charge
  std::vector<std::int64_t> released_;
  std::size_t r_ = 0;
};

void delete_rows(void* rows) { delete static_cast<Rows*>(rows); }

using Open = std::unique_ptr<Rows> (*)(const Call&);

// A value-per-call set-returning function: the first call reads the
// arguments and builds the rows (freed with the call's memory), every call
// returns one row.
Datum srf(FunctionCallInfo fcinfo, const char* function, const char* types, Open open) {
  FuncCallContext* fctx;
  if (SRF_IS_FIRSTCALL()) {
    fctx = SRF_FIRSTCALL_INIT();
    MemoryContext old = MemoryContextSwitchTo(fctx->multi_call_memory_ctx);
    TupleDesc td;
    if (get_call_result_type(fcinfo, nullptr, &td) != TYPEFUNC_COMPOSITE)
      ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("%s: must return rows", function)));
    fctx->tuple_desc = BlessTupleDesc(td);
    Call c;
    read_args(fcinfo, types, c);
    Failure f;
    Rows* rows = nullptr;
    run_cpp(f, function, [&] { rows = open(c).release(); }, c.shown);
    raise(f);
    auto* cb = static_cast<MemoryContextCallback*>(palloc(sizeof(MemoryContextCallback)));
    cb->func = delete_rows;
    cb->arg = rows;
    MemoryContextRegisterResetCallback(fctx->multi_call_memory_ctx, cb);
    fctx->user_fctx = rows;
    MemoryContextSwitchTo(old);
    if (rows->releases()) {  // charged once the rows are kept (freed with the call's memory if the charge raises)
      optdp_pg::charge_release(function, rows->release_epsilon(), 0.0, 0.0);
      run_cpp(f, function, [&] { rows->release(optdp_pg::backend_rng()); });
      raise(f);
    }
  }
  fctx = SRF_PERCALL_SETUP();
  Rows* rows = static_cast<Rows*>(fctx->user_fctx);
  if (rows->eof()) SRF_RETURN_DONE(fctx);
  Datum v[3];
  bool nulls[3] = {false, false, false};
  rows->row(v);
  rows->next();
  HeapTuple t = heap_form_tuple(fctx->tuple_desc, v, nulls);
  SRF_RETURN_NEXT(fctx, HeapTupleGetDatum(t));
}

// release_levels(value, n, alphas): the range-restricted release of one value
// at k levels (core/levels.hpp, docs/levels.md), as SQLite's table function:
// value clamped into [0, n], level i distributed as G(n, alpha_i), charged
// once at alpha_1's epsilon (the least private level). A release, not a
// helper: every argument must be a constant or a query parameter, checked
// before any value is read (a value a row gives could decide whether the
// call fails), then the call's shape (check_release_shape: it runs once per
// execution whatever the data), then the values, the charge, the draw.
// alphas: text (a JSON array, as SQLite's) or a float8[] (types "iit", "iia").
std::unique_ptr<Rows> open_release_levels(const Call& c) {
  const std::int64_t value = integer(c.arg[0], "value");
  const std::int64_t n = integer(c.arg[1], "n");
  optdp::check_n(n, optdp::kMaxMatrixN);
  std::vector<double> alphas;
  if (c.arg[2].type == 'a') {
    alphas = list_of(c.arg[2], "alphas");
    optdp::check_levels(alphas);
  } else {
    alphas = optdp::parse_levels(text_of(c.arg[2], "alphas", "a JSON array of increasing alphas"));
  }
  return std::make_unique<LevelRows>(value, n, std::move(alphas));
}

Datum release_levels(FunctionCallInfo fcinfo, const char* types) {
  constexpr const char* fn = "release_levels";
  if (SRF_IS_FIRSTCALL()) {
    static constexpr const char* kNames[] = {"value", "n", "alphas"};
    for (int i = 0; i < PG_NARGS() && i < 3; ++i)
      if (!get_fn_expr_arg_stable(fcinfo->flinfo, i))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s: %s must be a literal or a query parameter (optdp fixes the noise before it reads "
                               "any row), but is an expression",
                               fn, kNames[i])));
    optdp_pg::check_release_shape(fcinfo, fn);
  }
  return srf(fcinfo, fn, types, open_release_levels);
}

// ---- the set-returning functions' rows ----------------------------------------------

std::unique_ptr<Rows> open_geometric_matrix(const Call& c) {
  const std::int64_t n = n_of(c.arg[0], optdp::kMaxMatrixN);
  optdp::GeometricMechanism g(n, alpha_of(c.arg[1]));
  return grid(n + 1, n + 1, [g = std::move(g)](std::int64_t i, std::int64_t z) { return g(i, z); });
}

std::unique_ptr<Rows> open_derivation_matrix(const Call& c) {
  const std::int64_t n = n_of(c.arg[0], optdp::kMaxMatrixN);
  const double alpha = alpha_of(c.arg[1]);
  optdp::DerivationMatrix t(n, alpha, alpha_of(c.arg[2], "beta"));
  return grid(n + 1, n + 1, [t = std::move(t)](std::int64_t o, std::int64_t z) { return t(o, z); });
}

std::unique_ptr<Rows> open_staircase_pmf(const Call& c) {
  const double eps = positive(c.arg[0], "eps");
  const std::int64_t D = integer(c.arg[1], "delta");
  optdp::check_pmf_delta(D);
  const std::int64_t lo = integer(c.arg[2], "lo"), hi = integer(c.arg[3], "hi");
  optdp::check_pmf_range(lo, hi);
  const std::string spec = present(c, 4) ? std::string(text_of(c.arg[4], "cost", "'l1', 'l2' or 'r=K'")) : "l1";
  return std::make_unique<PmfRows>(optdp::IntegerStaircase(eps, D, optdp::staircase_r(spec, eps, D)), lo, hi);
}

std::unique_ptr<Rows> open_optimal_remap(const Call& c) {
  const std::int64_t n = n_of(c.arg[0], optdp::kMaxMatrixN);
  optdp::GeometricMechanism g(n, alpha_of(c.arg[1]));
  const optdp::Loss loss = loss_of(c.arg[2], n);
  return std::make_unique<RemapRows>(optdp::optimal_remap(g, loss, prior_of(c.arg[3], n)));
}

std::unique_ptr<Rows> open_optimal_mechanism(const Call& c) {
  const optdp::OptimalMethod method = present(c, 4)
                                          ? optdp::parse_optimal_method(text_of(c.arg[4], "method", "'remap' or 'lp'"))
                                          : optdp::OptimalMethod::Remap;
  const bool lp = method == optdp::OptimalMethod::Lp;
  const std::int64_t n = n_of(c.arg[0], lp ? optdp::kMaxLpN : optdp::kMaxMatrixN);
  const double alpha = alpha_of(c.arg[1]);
  const optdp::Loss loss = loss_of(c.arg[2], n);
  const auto prior = prior_of(c.arg[3], n);
  if (lp) return dense_rows(optdp::optimal_mechanism_lp(n, alpha, loss, prior).matrix);
  optdp::GeometricMechanism g(n, alpha);
  auto answer = optdp::optimal_remap(g, loss, prior);
  return std::make_unique<RemappedRows>(std::move(g), std::move(answer));
}

std::unique_ptr<Rows> open_minimax_remap(const Call& c) { return dense_rows(minimax(c).matrix); }

std::unique_ptr<Rows> open_minimax_mechanism(const Call& c) {
  const optdp::LpResult t = minimax(c);
  const optdp::GeometricMechanism g(c.arg[0].integer, c.arg[1].number);
  return dense_rows(optdp::multiply(g.dense(), t.matrix));
}

std::unique_ptr<Rows> open_selection_probabilities(const Call& c) {
  std::vector<double> scores = list_of(c.arg[0], "scores");
  optdp::check_number_list(scores, "scores", optdp::kMaxProbabilityCandidates);
  const double eps = positive(c.arg[1], "eps");
  const double sensitivity = present(c, 2) ? positive(c.arg[2], "sensitivity") : 1.0;
  const optdp::SelectionMethod method =
      present(c, 3) ? optdp::parse_selection_method(
                          text_of(c.arg[3], "method", "'exponential' or 'permute_and_flip'"))
                    : optdp::SelectionMethod::PermuteAndFlip;
  std::vector<double> law =
      optdp::selection_probabilities(optdp::selection_exponents(scores, eps, sensitivity), method);
  return std::make_unique<ProbabilityRows>(std::move(scores), std::move(law));
}

}  // namespace

extern "C" {

OPTDP_PG_FUNCTION(optdp_count_interval);
OPTDP_PG_FUNCTION(optdp_count_interval_alpha);
OPTDP_PG_FUNCTION(optdp_sum_interval);
OPTDP_PG_FUNCTION(optdp_sum_interval_eps);
OPTDP_PG_FUNCTION(optdp_quantile_rank_error);
OPTDP_PG_FUNCTION(optdp_staircase_gamma);
OPTDP_PG_FUNCTION(optdp_noise_cost);
OPTDP_PG_FUNCTION(optdp_dp_sum_grid);
OPTDP_PG_FUNCTION(optdp_dp_rho);
OPTDP_PG_FUNCTION(optdp_dp_alpha);
OPTDP_PG_FUNCTION(optdp_dp_epsilon);

OPTDP_PG_FUNCTION(optdp_dp_derivable);
OPTDP_PG_FUNCTION(optdp_geometric_matrix);
OPTDP_PG_FUNCTION(optdp_derivation_matrix);
OPTDP_PG_FUNCTION(optdp_staircase_pmf);

OPTDP_PG_FUNCTION(optdp_selection_probabilities);

// count_interval(alpha, confidence): a count's (or a level's) noise half-width.
Datum optdp_count_interval(PG_FUNCTION_ARGS) {
  std::int64_t h = 0;
  scalar(fcinfo, "count_interval", "ff", [&](const Call& c) {
    const double alpha = alpha_of(c.arg[0]);
    h = optdp::geometric_half_width(alpha, confidence_of(c.arg[1]));
  });
  PG_RETURN_INT64(h);
}

// count_interval_alpha(half_width, confidence): the largest alpha whose interval is at most half_width.
Datum optdp_count_interval_alpha(PG_FUNCTION_ARGS) {
  double alpha = 0;
  scalar(fcinfo, "count_interval_alpha", "if", [&](const Call& c) {
    const std::int64_t h = integer(c.arg[0], "half_width");
    if (h < 0) bad("half_width", "at least 0", std::to_string(h));
    alpha = optdp::geometric_alpha_for(h, confidence_of(c.arg[1]));
  });
  PG_RETURN_FLOAT8(alpha);
}

// sum_interval(mechanism, eps, lower, upper, confidence [, cost]): a sum's noise, on its grid.
Datum optdp_sum_interval(PG_FUNCTION_ARGS) {
  double h = 0;
  scalar(fcinfo, "sum_interval", "tfffft", [&](const Call& c) {
    const SumArgs s = sum_args(c, "eps");
    h = optdp::sum_half_width(s.mechanism, s.second, s.lower, s.upper, s.cost, s.confidence);
  });
  PG_RETURN_FLOAT8(h);
}

// sum_interval_eps(mechanism, half_width, lower, upper, confidence [, cost]):
// an eps whose interval is at most half_width; NULL if even 2^20 is too noisy.
Datum optdp_sum_interval_eps(PG_FUNCTION_ARGS) {
  std::optional<double> eps;
  scalar(fcinfo, "sum_interval_eps", "tfffft", [&](const Call& c) {
    const SumArgs s = sum_args(c, "half_width");
    eps = optdp::sum_eps_for_half_width(s.mechanism, s.second, s.lower, s.upper, s.cost, s.confidence);
  });
  if (!eps) PG_RETURN_NULL();
  PG_RETURN_FLOAT8(*eps);
}

// quantile_rank_error(eps, lower, upper, confidence): private_quantile's rank error bound.
Datum optdp_quantile_rank_error(PG_FUNCTION_ARGS) {
  double r = 0;
  scalar(fcinfo, "quantile_rank_error", "ffff", [&](const Call& c) {
    const double eps = positive(c.arg[0], "eps");
    const double lower = number(c.arg[1], "lower"), upper = number(c.arg[2], "upper");
    const double confidence = confidence_of(c.arg[3]);
    const optdp::QuantileGrid grid(lower, upper);
    r = optdp::quantile_rank_error(eps, grid.candidates(), confidence);
  });
  PG_RETURN_FLOAT8(r);
}

// staircase_gamma(eps, cost): the optimal shape of the continuous staircase.
Datum optdp_staircase_gamma(PG_FUNCTION_ARGS) {
  double g = 0;
  scalar(fcinfo, "staircase_gamma", "ft", [&](const Call& c) {
    const double eps = positive(c.arg[0], "eps");
    g = optdp::staircase_gamma(eps, optdp::parse_cost(text_of(c.arg[1], "cost", "'l1' or 'l2'")));
  });
  PG_RETURN_FLOAT8(g);
}

// noise_cost(mechanism, eps, delta, cost): exact expected cost of the noise.
Datum optdp_noise_cost(PG_FUNCTION_ARGS) {
  double v = 0;
  scalar(fcinfo, "noise_cost", "tfft", [&](const Call& c) {
    const optdp::SumMechanism m =
        optdp::parse_sum_mechanism(text_of(c.arg[0], "mechanism", "'staircase' or 'laplace'"));
    const double eps = positive(c.arg[1], "eps");
    const double delta = positive(c.arg[2], "delta");
    const optdp::Cost cost = optdp::parse_cost(text_of(c.arg[3], "cost", "'l1' or 'l2'"));
    v = m == optdp::SumMechanism::Laplace ? optdp::laplace_cost(eps, delta, cost)
                                          : optdp::staircase_optimal_cost(eps, delta, cost);
  });
  PG_RETURN_FLOAT8(v);
}

// dp_sum_grid(eps, lower, upper): the grid step of staircase_sum and laplace_sum.
Datum optdp_dp_sum_grid(PG_FUNCTION_ARGS) {
  double g = 0;
  scalar(fcinfo, "dp_sum_grid", "fff", [&](const Call& c) {
    const double eps = positive(c.arg[0], "eps");
    g = optdp::make_grid(eps, number(c.arg[1], "lower"), number(c.arg[2], "upper")).g;
  });
  PG_RETURN_FLOAT8(g);
}

// dp_rho(eps, delta): the largest rho whose tight conversion is (eps, delta)-DP.
Datum optdp_dp_rho(PG_FUNCTION_ARGS) {
  double rho = 0;
  scalar(fcinfo, "dp_rho", "ff", [&](const Call& c) {
    const double eps = positive(c.arg[0], "eps");
    const double delta = number(c.arg[1], "delta");
    if (!(delta > 0 && delta < 1)) bad("delta", "a number in (0, 1)", optdp::format_double(delta));
    rho = optdp::zcdp::rho_for_epsilon_delta(eps, delta);
  });
  PG_RETURN_FLOAT8(rho);
}

// dp_alpha(eps): alpha = e^(-eps) rounded up.
Datum optdp_dp_alpha(PG_FUNCTION_ARGS) {
  double a = 0;
  scalar(fcinfo, "dp_alpha", "f", [&](const Call& c) { a = optdp::alpha_of_epsilon(number(c.arg[0], "eps")); });
  PG_RETURN_FLOAT8(a);
}

// dp_epsilon(alpha): eps = -ln(alpha) rounded up.
Datum optdp_dp_epsilon(PG_FUNCTION_ARGS) {
  double e = 0;
  scalar(fcinfo, "dp_epsilon", "f", [&](const Call& c) { e = optdp::epsilon_of_alpha(alpha_of(c.arg[0])); });
  PG_RETURN_FLOAT8(e);
}

}  // extern "C"

namespace {

// remap_count(observed, n, alpha, loss, prior): the optimal answer for one
// released value, observed clamped into [0, n]; the remap is cached for the
// last (n, alpha, loss, prior) of the backend.
Datum remap_count(FunctionCallInfo fcinfo, const char* types) {
  std::int64_t answer = 0;
  scalar(fcinfo, "remap_count", types, [&](const Call& c) {
    const std::int64_t observed = integer(c.arg[0], "observed");
    const std::int64_t n = n_of(c.arg[1], optdp::kMaxMatrixN);
    const double alpha = alpha_of(c.arg[2]);
    const Arg& l = c.arg[3];
    const Arg& p = c.arg[4];
    std::string key = std::to_string(n) + '\x1f' + std::to_string(std::bit_cast<std::uint64_t>(alpha)) + '\x1f';
    if (l.type == 'M') {
      const ArrayMatrix m = matrix_of(l, "loss");  // checked in full below when not cached
      key.append("M" + std::to_string(m.rows) + "x" + std::to_string(m.cols) + ":")
          .append(reinterpret_cast<const char*>(m.values), m.rows * m.cols * sizeof(double));
    } else {
      key.append(1, 't').append(text_of(l, "loss", kLossDomain));
    }
    key.append(1, '\x1f');
    if (p.type == 'a') {
      const std::vector<double> prior = list_of(p, "prior");  // checked in full below when not cached
      key.append(1, 'a').append(reinterpret_cast<const char*>(prior.data()), prior.size() * sizeof(double));
    } else {
      key.append(1, 't').append(text_of(p, "prior", kPriorDomain));
    }
    if (!remap_cache) remap_cache = new RemapCache;
    if (remap_cache->key != key) {
      optdp::GeometricMechanism g(n, alpha);
      const optdp::Loss loss = loss_of(l, n);
      remap_cache->answer = optdp::optimal_remap(g, loss, prior_of(p, n));
      remap_cache->key = std::move(key);
    }
    const std::int64_t o = observed < 0 ? 0 : (observed > n ? n : observed);
    answer = remap_cache->answer[static_cast<std::size_t>(o)];
  });
  PG_RETURN_INT64(answer);
}

// optimal_loss(n, alpha, loss, prior): the user's optimal expected loss (remap o G).
Datum optimal_loss(FunctionCallInfo fcinfo, const char* types) {
  double v = 0;
  scalar(fcinfo, "optimal_loss", types, [&](const Call& c) {
    const std::int64_t n = n_of(c.arg[0], optdp::kMaxMatrixN);
    optdp::GeometricMechanism g(n, alpha_of(c.arg[1]));
    const optdp::Loss loss = loss_of(c.arg[2], n);
    const auto prior = prior_of(c.arg[3], n);
    v = optdp::remap_loss(g, optdp::optimal_remap(g, loss, prior), loss, prior);
  });
  PG_RETURN_FLOAT8(v);
}

}  // namespace

extern "C" {

// dp_derivable(matrix, alpha): whether the mechanism is G(n, alpha) followed by
// some post-processing. matrix: a two-dimensional float8[] (rows x columns).
Datum optdp_dp_derivable(PG_FUNCTION_ARGS) {
  bool yes = false;
  scalar(fcinfo, "dp_derivable", "Mf", [&](const Call& c) {
    const ArrayMatrix a = matrix_of(c.arg[0], "matrix");
    const std::size_t max = optdp::kMaxDerivableN + 1;
    if (a.rows > max || a.cols > max)
      throw std::invalid_argument("matrix must have at most " + std::to_string(max) + " rows and columns, but is " +
                                  std::to_string(a.rows) + "x" + std::to_string(a.cols));
    optdp::Matrix m(a.rows);
    for (std::size_t i = 0; i < a.rows; ++i) m[i].assign(a.row(i).begin(), a.row(i).end());
    yes = optdp::derivable(m, alpha_of(c.arg[1]));
  });
  PG_RETURN_BOOL(yes);
}

Datum optdp_geometric_matrix(PG_FUNCTION_ARGS) {
  return srf(fcinfo, "geometric_matrix", "if", open_geometric_matrix);
}
Datum optdp_derivation_matrix(PG_FUNCTION_ARGS) {
  return srf(fcinfo, "derivation_matrix", "iff", open_derivation_matrix);
}
Datum optdp_staircase_pmf(PG_FUNCTION_ARGS) { return srf(fcinfo, "staircase_pmf", "fiiit", open_staircase_pmf); }
Datum optdp_selection_probabilities(PG_FUNCTION_ARGS) {
  return srf(fcinfo, "selection_probabilities", "afft", open_selection_probabilities);
}
OPTDP_PG_FUNCTION(optdp_release_levels_t) { return release_levels(fcinfo, "iit"); }
OPTDP_PG_FUNCTION(optdp_release_levels_a) { return release_levels(fcinfo, "iia"); }

// The functions with a loss and a prior: one entry point per overload, the
// loss text (t) or a two-dimensional float8[] (M), the prior text (t) or a
// float8[] (a).
#define OPTDP_LOSS_PRIOR(suffix, loss, prior)                                                              \
  OPTDP_PG_FUNCTION(optdp_remap_count_##suffix) { return remap_count(fcinfo, "iif" loss prior); }         \
  OPTDP_PG_FUNCTION(optdp_optimal_loss_##suffix) { return optimal_loss(fcinfo, "if" loss prior); }        \
  OPTDP_PG_FUNCTION(optdp_optimal_remap_##suffix) {                                                       \
    return srf(fcinfo, "optimal_remap", "if" loss prior, open_optimal_remap);                             \
  }                                                                                                        \
  OPTDP_PG_FUNCTION(optdp_optimal_mechanism_##suffix) {                                                   \
    return srf(fcinfo, "optimal_mechanism", "if" loss prior "t", open_optimal_mechanism);                 \
  }
OPTDP_LOSS_PRIOR(tt, "t", "t")
OPTDP_LOSS_PRIOR(ta, "t", "a")
OPTDP_LOSS_PRIOR(Mt, "M", "t")
OPTDP_LOSS_PRIOR(Ma, "M", "a")

// minimax_remap, minimax_mechanism and minimax_loss (n, alpha, loss, lo, hi).
#define OPTDP_MINIMAX(suffix, loss)                                                                          \
  OPTDP_PG_FUNCTION(optdp_minimax_remap_##suffix) {                                                         \
    return srf(fcinfo, "minimax_remap", "if" loss "ii", open_minimax_remap);                                \
  }                                                                                                          \
  OPTDP_PG_FUNCTION(optdp_minimax_mechanism_##suffix) {                                                     \
    return srf(fcinfo, "minimax_mechanism", "if" loss "ii", open_minimax_mechanism);                        \
  }                                                                                                          \
  OPTDP_PG_FUNCTION(optdp_minimax_loss_##suffix) {                                                          \
    double v = 0;                                                                                            \
    scalar(fcinfo, "minimax_loss", "if" loss "ii", [&](const Call& c) { v = minimax(c).value; });           \
    PG_RETURN_FLOAT8(v);                                                                                     \
  }
OPTDP_MINIMAX(t, "t")
OPTDP_MINIMAX(M, "M")

}  // extern "C"
