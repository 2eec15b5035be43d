// fuzz_sql: the whole SQL surface of optdp, through SQLite.
//
// Each input opens a fresh in-memory database with optdp registered
// (optdp_static, sqlite3_optdp_init), creates three small tables
//
//   t(id, g, x, y, a, e)   16 rows: id 0..15, g = id % 4, x mixed values
//                          (integers, reals, inf, NULL, text, blob), y reals
//                          in (0, 1), a = 0.5 and e = 1.0 in every row
//   e(...)                 the same columns, empty
//   k(g)                   public keys 0..4 (key 4 has no rows in t)
//
// and then runs up to kMaxStatements statements built from the input bytes:
// calls of every optdp function and table-valued function, with arguments
// of every kind (NULL, integers incl. huge and negative, reals incl. 0, tiny,
// huge, inf, text incl. valid specs and JSON fragments, blobs, column
// references, nested calls, subqueries, bound parameters) and sometimes the
// wrong number of arguments; aggregates over t, over the empty e, with and
// without GROUP BY, with LEFT JOIN from k; table functions in the call form
// and the hidden-column form, wrapped in LIMIT so that a call streams at most
// 1000 rows; views and triggers that call them (the empty-group path reads
// parameters back from their definitions).
//
// SQL errors are expected. Findings are crashes, sanitizer reports, leaks,
// hangs, and these checks: SQLITE_NOMEM / MISUSE / INTERNAL / CORRUPT from a
// statement, an error message that leaks a C++ library exception
// ("basic_string::substr", "vector::_M_range_check", ...) or says "internal
// error", and a connection that cannot be closed (a statement left
// unfinalized). Every statement runs under a progress handler that
// interrupts it after kStatementBudgetMs of VM time.
//
// Sizes are capped so that an input runs in milliseconds: n is small for the
// functions whose cost grows with n (the LP ones: n <= 8), only the
// streaming tables see n up to the limit, and every table is read through
// LIMIT. dp_ledger_attach only ever sees paths under OPTDP_FUZZ_TMP
// (/tmp/optdp-fuzz), and the ledger file is deleted after each input.
//
// An input that starts with "SQL\n" is instead run line by line as literal
// SQL (see run_literal): seeds and regression inputs can be written by hand.
//
// Set OPTDP_FUZZ_VERBOSE=1 in the environment to print each statement and its
// outcome (for debugging an input: ./fuzz_sql -runs=1 input).
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>

#include "fuzz_check.hpp"

#ifndef OPTDP_FUZZ_TMP
#define OPTDP_FUZZ_TMP "/tmp/optdp-fuzz"
#endif

extern "C" int sqlite3_optdp_init(sqlite3* db, char** err, const sqlite3_api_routines* api);

namespace {

constexpr int kMaxStatements = 8;
constexpr int kStatementBudgetMs = 100;
constexpr std::size_t kMaxSql = 8192;

bool verbose = false;
std::string ledger_path;

// ---- argument kinds ------------------------------------------------------------

enum class Arg {
  Any,       // anything
  X,         // an aggregate's value: a column reference mostly
  Alpha,     // a privacy level in (0, 1)
  Eps,       // epsilon > 0
  Real,      // a bound, delta, total epsilon: any number
  Int,       // an integer (observed, value, lo, hi, seed)
  N,         // n of a matrix / remap: small, or the limits (cheap functions only)
  NRemap,    // n of an O(n^2) remap
  NLp,       // n of a function that solves a linear program: at most 8
  Loss,      // 'absolute', 'power:P', a JSON matrix, ...
  Prior,     // 'uniform' or a JSON array
  Cost,      // 'l1', 'l2', 'gamma=G'
  PmfCost,   // 'l1', 'l2', 'r=K'
  Mech,      // 'staircase', 'laplace'
  Method,    // 'remap', 'lp'
  Levels,    // a JSON array of alphas
  Matrix,    // a JSON square stochastic matrix
  Path,      // a ledger path under OPTDP_FUZZ_TMP
  Durability // 'full', 'normal'
};

enum class Kind { Scalar, Aggregate, Table };

struct Fn {
  const char* name;
  Kind kind;
  std::vector<Arg> args;
  std::vector<const char*> params;  // hidden columns of a table function
  int required;                     // table functions: required leading arguments
  Fn(const char* n, Kind k, std::vector<Arg> a, std::vector<const char*> p = {}, int req = -1)
      : name(n), kind(k), args(std::move(a)), params(std::move(p)), required(req) {}
};

std::vector<Fn> make_functions() {
  using A = Arg;
  std::vector<Fn> f = {
      {"private_count", Kind::Aggregate, {A::Alpha}},
      {"private_count", Kind::Aggregate, {A::X, A::Alpha}},
      {"staircase_sum", Kind::Aggregate, {A::X, A::Eps, A::Real}},
      {"staircase_sum", Kind::Aggregate, {A::X, A::Eps, A::Real, A::Real}},
      {"staircase_sum", Kind::Aggregate, {A::X, A::Eps, A::Real, A::Real, A::Cost}},
      {"laplace_sum", Kind::Aggregate, {A::X, A::Eps, A::Real}},
      {"laplace_sum", Kind::Aggregate, {A::X, A::Eps, A::Real, A::Real}},
      {"private_count_levels", Kind::Aggregate, {A::Alpha, A::Alpha, A::Alpha}},  // k varies, see below
      {"private_count_levels_of", Kind::Aggregate, {A::X, A::Alpha, A::Alpha}},
      {"staircase_gamma", Kind::Scalar, {A::Eps, A::Cost}},
      {"noise_cost", Kind::Scalar, {A::Mech, A::Eps, A::Real, A::Cost}},
      {"dp_sum_grid", Kind::Scalar, {A::Eps, A::Real, A::Real}},
      {"dp_alpha", Kind::Scalar, {A::Eps}},
      {"dp_epsilon", Kind::Scalar, {A::Alpha}},
      {"dp_seed", Kind::Scalar, {A::Int}},
      {"dp_rng", Kind::Scalar, {}},
      {"dp_version", Kind::Scalar, {}},
      {"remap_count", Kind::Scalar, {A::Int, A::NRemap, A::Alpha, A::Loss, A::Prior}},
      {"optimal_loss", Kind::Scalar, {A::NRemap, A::Alpha, A::Loss, A::Prior}},
      {"minimax_loss", Kind::Scalar, {A::NLp, A::Alpha, A::Loss, A::Int, A::Int}},
      {"dp_derivable", Kind::Scalar, {A::Matrix, A::Alpha}},
      {"dp_budget_spent", Kind::Scalar, {}},
      {"dp_budget_remaining", Kind::Scalar, {}},
      {"dp_ledger_attach", Kind::Scalar, {A::Path, A::Real}},
      {"dp_ledger_attach", Kind::Scalar, {A::Path, A::Real, A::Durability}},
      {"geometric_matrix", Kind::Table, {A::N, A::Alpha}, {"n", "alpha"}, 2},
      {"derivation_matrix", Kind::Table, {A::N, A::Alpha, A::Alpha}, {"n", "alpha", "beta"}, 3},
      {"staircase_pmf", Kind::Table, {A::Eps, A::Int, A::Int, A::Int, A::PmfCost},
       {"eps", "delta", "lo", "hi", "cost"}, 4},
      {"optimal_remap", Kind::Table, {A::NRemap, A::Alpha, A::Loss, A::Prior}, {"n", "alpha", "loss", "prior"}, 4},
      {"optimal_mechanism", Kind::Table, {A::NRemap, A::Alpha, A::Loss, A::Prior, A::Method},
       {"n", "alpha", "loss", "prior", "method"}, 4},
      {"minimax_remap", Kind::Table, {A::NLp, A::Alpha, A::Loss, A::Int, A::Int}, {"n", "alpha", "loss", "lo", "hi"}, 5},
      {"minimax_mechanism", Kind::Table, {A::NLp, A::Alpha, A::Loss, A::Int, A::Int},
       {"n", "alpha", "loss", "lo", "hi"}, 5},
      {"release_levels", Kind::Table, {A::Int, A::N, A::Levels}, {"value", "n", "alphas"}, 3},
      {"dp_ledger_entries", Kind::Table, {}, {}, 0},
  };
  return f;
}

const std::vector<Fn>& functions() {
  static const std::vector<Fn> f = make_functions();
  return f;
}

// ---- values ----------------------------------------------------------------------

// A bound parameter's value.
struct Bind {
  enum Type { Null, Int, Real, Text, Blob, Zeroblob } type = Null;
  std::int64_t i = 0;
  double d = 0;
  std::string s;
};

std::string quote(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\0') q += ' ';  // the SQL text is a C string; NULs go through bound parameters
    else if (c == '\'') q += "''";
    else q += c;
  }
  return q + "'";
}

std::string real_literal(double d) {
  if (std::isnan(d)) return "(1e999 - 1e999)";  // SQLite turns NaN into NULL
  if (std::isinf(d)) return d > 0 ? "1e999" : "-1e999";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // stays REAL
  return s;
}

std::string int_literal(std::int64_t v) {
  if (v == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807 - 1)";
  return std::to_string(v);
}

constexpr std::int64_t kInts[] = {0,
                                  1,
                                  2,
                                  3,
                                  4,
                                  5,
                                  7,
                                  8,
                                  10,
                                  -1,
                                  -2,
                                  -5,
                                  40,
                                  41,
                                  400,
                                  401,
                                  4096,
                                  4097,
                                  5000,
                                  5001,
                                  99999999,
                                  100000000,
                                  2147483647,
                                  2147483648LL,
                                  -2147483648LL,
                                  9007199254740993LL,
                                  4611686018427387904LL,
                                  9223372036854775807LL,
                                  -9223372036854775807LL - 1};

constexpr double kReals[] = {0.0,
                             -0.0,
                             0.5,
                             0.1,
                             0.2,
                             0.25,
                             0.9,
                             0.99,
                             0.999999999999,
                             0.9999999999999999,
                             1.0,
                             1.5,
                             2.0,
                             3.0,
                             -0.5,
                             -1.0,
                             100.0,
                             200000.0,
                             1e-300,
                             4.9406564584124654e-324,
                             2.2250738585072014e-308,
                             9.313225746154785e-10,  // 2^-30
                             9.3e-10,
                             1e-11,
                             1.1102230246251565e-16,  // 2^-53
                             1e-20,
                             27.7,
                             745.2,
                             1e15,
                             2097152.0,  // 2^21
                             4.611686018427388e18,
                             1e300,
                             1.7976931348623157e308,
                             -1.7976931348623157e308,
                             HUGE_VAL,
                             -HUGE_VAL};

const char* const kTexts[] = {"l1",
                              "l2",
                              "l3",
                              "L1",
                              "gamma=0.5",
                              "gamma=0",
                              "gamma=1",
                              "gamma=-0",
                              "gamma=1.5",
                              "gamma=nan",
                              "gamma=0x1p-1",
                              "gamma= 0.5",
                              "gamma=",
                              "r=1",
                              "r=2",
                              "r=0",
                              "r=5",
                              "r=99999999999999999999",
                              "absolute",
                              "squared",
                              "binary",
                              "power:2",
                              "power:0.5",
                              "power:1e-300",
                              "power:1e300",
                              "power:inf",
                              "power:-1",
                              "power:",
                              "power: 2",
                              "uniform",
                              "[]",
                              "[0.1,0.5]",
                              "[0.2, 0.5, 0.9]",
                              "[0.5,0.1]",
                              "[0.5]",
                              "[1,0,0,0,0,0,0,1]",
                              "[1,1]",
                              "[0,0]",
                              "[[0,1],[1,0]]",
                              "[[0.5,0.5],[0.5,0.5]]",
                              "[[1,0],[0,1]]",
                              "[[1]]",
                              "[[0,1,2],[1,0,1],[2,1,0]]",
                              "remap",
                              "lp",
                              "staircase",
                              "laplace",
                              "gauss",
                              "full",
                              "normal",
                              "off",
                              "",
                              " ",
                              "abc",
                              "1",
                              "0.5",
                              "NULL",
                              "[1e999]",
                              "[-0]",
                              "[1e-400]",
                              "[01]",
                              "[.5]",
                              "[1,]",
                              "[[1,2],[3]]",
                              "[\"a\"]",
                              "[true]",
                              "{}",
                              " [0.5] ",
                              "[0.5] x"};

const char* const kJsonNumbers[] = {"0",    "1",      "2",        "0.5",   "0.1",   "0.25",  "0.9",   "0.99",
                                    "-1",   "-0",     "1e999",    "1e-400", "1e308", "5e-324", "0.0",   "3",
                                    "1e2",  "1E-2",   "00",       "1.",    ".5",    "-",     "1e",    "+1",
                                    "NaN",  "0.30000000000000004", "2.5",   "10",    "1e-300", "7"};

class Gen {
 public:
  explicit Gen(FuzzedDataProvider& in) : in_(in) {}

  std::vector<Bind> binds;
  bool allow_binds = false;

  std::int64_t pick_int() {
    if (in_.ConsumeBool()) return in_.ConsumeIntegralInRange<std::int64_t>(-3, 16);
    if (in_.ConsumeIntegralInRange(0, 7) == 0) return in_.ConsumeIntegral<std::int64_t>();
    return in_.PickValueInArray(kInts);
  }
  double pick_real() {
    switch (in_.ConsumeIntegralInRange(0, 5)) {
      case 0: {  // raw bits
        const auto bits = in_.ConsumeIntegral<std::uint64_t>();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
      }
      case 1: return in_.ConsumeProbability<double>();
      case 2: return static_cast<double>(in_.ConsumeIntegralInRange(1, 255)) / 256.0;
      default: return in_.PickValueInArray(kReals);
    }
  }
  // A privacy level: mostly in (0, 1).
  double pick_alpha() {
    switch (in_.ConsumeIntegralInRange(0, 7)) {
      case 0: return pick_real();
      case 1: return in_.ConsumeProbability<double>();
      case 2: return std::nextafter(1.0, 0.0);
      case 3: return 4.9406564584124654e-324;
      default: return static_cast<double>(in_.ConsumeIntegralInRange(1, 99)) / 100.0;
    }
  }

  std::string json_number() {
    if (in_.ConsumeIntegralInRange(0, 3) == 0) return real_literal(pick_real());
    return in_.PickValueInArray(kJsonNumbers);
  }
  std::string json_array(int len) {
    std::string s = "[";
    for (int i = 0; i < len; ++i) {
      if (i) s += in_.ConsumeIntegralInRange(0, 15) == 0 ? " " : ",";
      s += json_number();
    }
    if (in_.ConsumeIntegralInRange(0, 15) != 0) s += "]";
    return s;
  }
  // A loss matrix for n: distance-based (valid), sometimes with one entry changed.
  std::string loss_matrix(int n) {
    const int kind = in_.ConsumeIntegralInRange(0, 3);
    const int bad_i = in_.ConsumeIntegralInRange(-1, n), bad_r = in_.ConsumeIntegralInRange(0, n);
    std::string s = "[";
    for (int i = 0; i <= n; ++i) {
      s += i ? ",[" : "[";
      for (int r = 0; r <= n; ++r) {
        if (r) s += ",";
        const int d = std::abs(i - r);
        if (i == bad_i && r == bad_r) s += json_number();
        else if (kind == 0) s += std::to_string(d);
        else if (kind == 1) s += std::to_string(d * d);
        else if (kind == 2) s += d ? "1" : "0";
        else s += std::to_string(d * (i + 1));  // row-dependent scale, still valid
      }
      s += "]";
    }
    return s + "]";
  }
  // A row-stochastic (n+1)x(n+1) matrix, sometimes broken.
  std::string stochastic_matrix(int n) {
    std::string s = "[";
    const int kind = in_.ConsumeIntegralInRange(0, 3);
    for (int i = 0; i <= n; ++i) {
      s += i ? ",[" : "[";
      for (int r = 0; r <= n; ++r) {
        if (r) s += ",";
        if (kind == 0) s += real_literal(1.0 / (n + 1));
        else if (kind == 1) s += i == r ? "1" : "0";
        else if (kind == 2) s += r == 0 ? "1" : "0";
        else s += json_number();
      }
      s += "]";
    }
    return s + "]";
  }

  std::string text_for(Arg a) {
    const int n = cur_n_ >= 0 && cur_n_ <= 12 ? cur_n_ : in_.ConsumeIntegralInRange(0, 6);
    switch (a) {
      case Arg::Loss:
        switch (in_.ConsumeIntegralInRange(0, 7)) {
          case 0: return "absolute";
          case 1: return "squared";
          case 2: return "binary";
          case 3: return "power:" + json_number();
          case 4: return loss_matrix(n);
          case 5: return loss_matrix(in_.ConsumeIntegralInRange(0, 6));
          default: return in_.PickValueInArray(kTexts);
        }
      case Arg::Prior:
        switch (in_.ConsumeIntegralInRange(0, 4)) {
          case 0: return "uniform";
          case 1:
          case 2: return json_array(n + 1);
          case 3: return json_array(in_.ConsumeIntegralInRange(0, 8));
          default: return in_.PickValueInArray(kTexts);
        }
      case Arg::Cost: {
        const char* c[] = {"l1", "l2", "gamma=0.5", "gamma=0", "gamma=1"};
        if (in_.ConsumeBool()) return in_.PickValueInArray(c);
        if (in_.ConsumeBool()) return "gamma=" + json_number();
        return in_.PickValueInArray(kTexts);
      }
      case Arg::PmfCost: {
        const char* c[] = {"l1", "l2", "r=1", "r=2", "r=3"};
        if (in_.ConsumeBool()) return in_.PickValueInArray(c);
        if (in_.ConsumeBool()) return "r=" + std::to_string(pick_int());
        return in_.PickValueInArray(kTexts);
      }
      case Arg::Mech: return in_.ConsumeBool() ? "staircase" : in_.ConsumeBool() ? "laplace" : in_.PickValueInArray(kTexts);
      case Arg::Method: return in_.ConsumeBool() ? "remap" : in_.ConsumeBool() ? "lp" : in_.PickValueInArray(kTexts);
      case Arg::Durability: return in_.ConsumeBool() ? "normal" : in_.ConsumeBool() ? "full" : in_.PickValueInArray(kTexts);
      case Arg::Levels: {
        if (in_.ConsumeBool()) return in_.PickValueInArray(kTexts);
        const int k = in_.ConsumeIntegralInRange(0, 17);
        std::string s = "[";
        double prev = 0;
        for (int i = 0; i < k; ++i) {
          double v = prev + (1 - prev) * static_cast<double>(in_.ConsumeIntegralInRange(1, 255)) / 256.0;
          if (in_.ConsumeIntegralInRange(0, 7) == 0) v = pick_alpha();
          s += (i ? "," : "") + real_literal(v);
          prev = v < 1 && v > 0 ? v : prev;
        }
        return s + "]";
      }
      case Arg::Matrix:
        if (in_.ConsumeIntegralInRange(0, 3) == 0) return in_.PickValueInArray(kTexts);
        return stochastic_matrix(n);
      case Arg::Path: {
        switch (in_.ConsumeIntegralInRange(0, 7)) {
          case 0: return ":memory:";
          case 1: return "";
          case 2: return OPTDP_FUZZ_TMP "/no-such-dir/ledger.db";
          case 3: return OPTDP_FUZZ_TMP;  // a directory
          default: return ledger_path;
        }
      }
      default:
        if (in_.ConsumeIntegralInRange(0, 3) == 0)
          return in_.ConsumeRandomLengthString(48);  // raw bytes (quoted; NUL becomes a space)
        if (in_.ConsumeIntegralInRange(0, 3) == 0) return json_array(in_.ConsumeIntegralInRange(0, 5));
        return in_.PickValueInArray(kTexts);
    }
  }

  // An integer for an n slot, capped so that the call stays cheap.
  std::int64_t cap_n(Arg a, std::int64_t v) {
    if (a == Arg::NLp && v > 8 && v <= 40) return 8;
    if (a == Arg::NRemap && v > 12 && v <= 5000) return v == 400 || v == 5000 ? 401 : 12;
    return v;
  }

  // A literal (or a bound parameter) of the kind of a.
  std::string literal(Arg a) {
    const bool n_slot = a == Arg::N || a == Arg::NRemap || a == Arg::NLp;
    int type = in_.ConsumeIntegralInRange(0, 15);
    // Mostly the type the argument wants.
    if (type >= 4) {
      switch (a) {
        case Arg::Alpha: type = 2; break;
        case Arg::Eps: case Arg::Real: type = 2; break;
        case Arg::Int: case Arg::N: case Arg::NRemap: case Arg::NLp: type = 1; break;
        case Arg::Loss: case Arg::Prior: case Arg::Cost: case Arg::PmfCost: case Arg::Mech: case Arg::Method:
        case Arg::Levels: case Arg::Matrix: case Arg::Path: case Arg::Durability: type = 3; break;
        default: type = in_.ConsumeIntegralInRange(0, 5); break;
      }
    }
    Bind b;
    switch (type) {
      case 0: b.type = Bind::Null; break;
      case 1:
        b.type = Bind::Int;
        b.i = pick_int();
        if (n_slot) {
          if (a != Arg::N || in_.ConsumeBool()) b.i = in_.ConsumeBool() ? in_.ConsumeIntegralInRange<std::int64_t>(0, 8) : b.i;
          b.i = cap_n(a, b.i);
          cur_n_ = b.i;
        }
        break;
      case 2:
        b.type = Bind::Real;
        b.d = a == Arg::Alpha ? pick_alpha() : pick_real();
        if (a == Arg::Eps && in_.ConsumeBool()) b.d = static_cast<double>(in_.ConsumeIntegralInRange(1, 40)) / 8.0;
        break;
      case 3:
        b.type = Bind::Text;
        b.s = a == Arg::Path ? text_for(Arg::Path) : text_for(a == Arg::Any || a == Arg::X ? Arg::Any : a);
        break;
      case 4:
        b.type = Bind::Blob;
        b.s = in_.ConsumeRandomLengthString(8);
        break;
      default:
        b.type = Bind::Zeroblob;
        b.i = in_.ConsumeIntegralInRange(0, 16);
        break;
    }
    // A path is never random text: only the harness's paths reach dp_ledger_attach.
    if (a == Arg::Path && b.type == Bind::Text && b.s != ledger_path && b.s != ":memory:" && !b.s.empty() &&
        b.s.rfind(OPTDP_FUZZ_TMP, 0) != 0)
      b.s = ledger_path;
    if (allow_binds && in_.ConsumeIntegralInRange(0, 5) == 0) {
      binds.push_back(b);
      return "?";
    }
    switch (b.type) {
      case Bind::Null: return "NULL";
      case Bind::Int: return int_literal(b.i);
      case Bind::Real: return real_literal(b.d);
      case Bind::Text: return quote(b.s);
      case Bind::Blob: {
        static const char* hex = "0123456789abcdef";
        std::string s = "x'";
        for (unsigned char c : b.s) s += hex[c >> 4], s += hex[c & 15];
        return s + "'";
      }
      default: return "zeroblob(" + std::to_string(b.i) + ")";
    }
  }

  // An argument expression for slot a.
  std::string arg(Arg a, bool in_aggregate, int depth) {
    const bool n_slot = a == Arg::N || a == Arg::NRemap || a == Arg::NLp;
    const bool path = a == Arg::Path;
    if (path) return literal(a);  // never a column or an expression: only the harness's paths
    const int form = in_.ConsumeIntegralInRange(0, 31);
    if (a == Arg::X || (in_aggregate && !n_slot && form == 0)) {
      // A column of t / e (the aggregates' rows); sometimes a literal.
      const char* cols[] = {"x", "y", "a", "e", "id", "g", "x", "x"};
      if (form < 28) return in_.PickValueInArray(cols);
      return literal(Arg::Any);
    }
    if (n_slot || path || depth >= 2) return literal(a);
    switch (form) {
      case 1: return "-(" + literal(a) + ")";
      case 2: {
        const char* types[] = {"INTEGER", "REAL", "TEXT", "BLOB", "NUMERIC"};
        return "CAST(" + literal(a) + " AS " + in_.PickValueInArray(types) + ")";
      }
      case 3: return "dp_alpha(" + arg(Arg::Eps, in_aggregate, depth + 1) + ")";
      case 4: return "(" + literal(a) + ") + 0.0";
      case 5: return "(SELECT " + literal(a) + ")";
      case 6: return "(SELECT " + call(pick_function(Kind::Aggregate), false, depth + 1) + " FROM e)";
      case 7: return "(SELECT " + call(pick_function(Kind::Aggregate), false, depth + 1) + " FROM t)";
      case 8: return call(pick_function(Kind::Scalar), in_aggregate, depth + 1);
      case 9: return "json(" + quote(text_for(Arg::Levels)) + ")";
      case 10: return "(0.0 / 0.0)";
      case 11: return "(1e999 - 1e999)";
      default: return literal(a);
    }
  }

  const Fn& pick_function(Kind kind) {
    const auto& fs = functions();
    for (int tries = 0; tries < 64; ++tries) {
      const Fn& f = fs[in_.ConsumeIntegralInRange<std::size_t>(0, fs.size() - 1)];
      if (f.kind == kind) return f;
    }
    for (const Fn& f : fs)
      if (f.kind == kind) return f;
    return fs[0];
  }

  // name(args) for a scalar or aggregate function, sometimes with the wrong arity.
  std::string call(const Fn& f, bool in_aggregate, int depth) {
    std::vector<Arg> args = f.args;
    const std::string_view name = f.name;
    if (name == "private_count_levels" || name == "private_count_levels_of") {
      const int k = in_.ConsumeIntegralInRange(0, 17);
      args.assign(name == "private_count_levels_of" ? 1 : 0, Arg::X);
      for (int i = 0; i < k; ++i) args.push_back(Arg::Alpha);
    }
    if (in_.ConsumeIntegralInRange(0, 15) == 0) {  // wrong number of arguments
      const int k = in_.ConsumeIntegralInRange(0, 6);
      args.resize(static_cast<std::size_t>(k), Arg::Any);
    }
    cur_n_ = -1;
    std::string s = std::string(f.name) + "(";
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) s += ", ";
      s += arg(args[i], in_aggregate || f.kind == Kind::Aggregate, depth);
    }
    return s + ")";
  }

  // The argument list of a table function, in the call form.
  std::string table_call(const Fn& f, bool correlated) {
    std::vector<Arg> args = f.args;
    if (f.required >= 0 && static_cast<int>(args.size()) > f.required && in_.ConsumeBool())
      args.resize(static_cast<std::size_t>(f.required));  // without the optional argument
    if (in_.ConsumeIntegralInRange(0, 15) == 0)
      args.resize(static_cast<std::size_t>(in_.ConsumeIntegralInRange(0, 6)), Arg::Any);
    cur_n_ = -1;
    std::string s = std::string(f.name) + "(";
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i) s += ", ";
      if (correlated && in_.ConsumeIntegralInRange(0, 3) == 0) {
        const char* cols[] = {"t.id", "t.g", "t.x", "t.y", "t.a"};
        s += in_.PickValueInArray(cols);
      } else {
        s += arg(args[i], false, 1);
      }
    }
    return s + ")";
  }

  // The hidden-column form: SELECT * FROM f WHERE n = ... AND alpha = ...
  std::string table_where(const Fn& f) {
    std::string s = std::string(f.name);
    std::string where;
    cur_n_ = -1;
    for (std::size_t i = 0; i < f.params.size(); ++i) {
      const int how = in_.ConsumeIntegralInRange(0, 7);
      if (how == 0) continue;  // missing
      const char* ops[] = {" = ", " = ", " = ", " == ", " IS ", " > ", " <= ", " IN "};
      const char* op = in_.PickValueInArray(ops);
      std::string v = arg(f.args[i], false, 1);
      if (std::strcmp(op, " IN ") == 0) v = "(" + v + ")";
      where += (where.empty() ? " WHERE " : " AND ") + std::string(f.params[i]) + op + v;
    }
    return s + where;
  }

  FuzzedDataProvider& in() { return in_; }

 private:
  FuzzedDataProvider& in_;
  std::int64_t cur_n_ = -1;
};

// ---- running statements ------------------------------------------------------------

struct Budget {
  std::chrono::steady_clock::time_point deadline;
};

int progress(void* p) {
  return std::chrono::steady_clock::now() > static_cast<Budget*>(p)->deadline ? 1 : 0;
}

int read_row(void*, int ncol, char** values, char**) {
  std::size_t total = 0;
  for (int c = 0; c < ncol; ++c)
    if (values[c]) total += std::strlen(values[c]);
  (void)total;
  return 0;
}

bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// Every SQL text run on this input's connection (views and triggers echo
// their definitions into later messages), and the bound texts.
std::string all_sql;

// Failing statements are fine; these outcomes are not.
void check_outcome(int rc, const std::string& msg, const std::string& sql) {
  const int primary = rc & 0xff;
  FUZZ_CHECK_MSG(primary != SQLITE_NOMEM && primary != SQLITE_MISUSE && primary != SQLITE_INTERNAL &&
                     primary != SQLITE_CORRUPT,
                 "statement returned %d (%s): %s\n  SQL: %s", rc, sqlite3_errstr(rc), msg.c_str(), sql.c_str());
  // A C++ library exception's what() must never reach the user, nor a catch-all.
  static const char* const leaks[] = {"std::",     "basic_string", "vector::",     "_M_",         "__n",
                                      "__pos",     "max_size()",   "internal error", "stoi",      "stol",
                                      "stod",      "argument count mismatch"};
  for (const char* leak : leaks)
    FUZZ_CHECK_MSG(!contains(msg, leak) || contains(all_sql, leak), "error message leaks '%s': %s\n  SQL: %s", leak,
                   msg.c_str(), sql.c_str());
}

void run(sqlite3* db, const std::string& sql, const std::vector<Bind>& binds, Budget& budget) {
  if (sql.size() > kMaxSql) return;
  all_sql += sql;
  for (const Bind& b : binds) all_sql += b.s;
  budget.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kStatementBudgetMs);
  int rc;
  std::string msg;
  if (binds.empty()) {
    char* err = nullptr;
    rc = sqlite3_exec(db, sql.c_str(), read_row, nullptr, &err);
    if (err) msg = err;
    sqlite3_free(err);
  } else {
    sqlite3_stmt* st = nullptr;
    rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &st, nullptr);
    if (rc == SQLITE_OK && st) {
      for (int i = 0; i < static_cast<int>(binds.size()) && i < sqlite3_bind_parameter_count(st); ++i) {
        const Bind& b = binds[static_cast<std::size_t>(i)];
        switch (b.type) {
          case Bind::Null: sqlite3_bind_null(st, i + 1); break;
          case Bind::Int: sqlite3_bind_int64(st, i + 1, b.i); break;
          case Bind::Real: sqlite3_bind_double(st, i + 1, b.d); break;
          case Bind::Text:  // may hold NUL bytes
            sqlite3_bind_text(st, i + 1, b.s.data(), static_cast<int>(b.s.size()), SQLITE_TRANSIENT);
            break;
          case Bind::Blob: sqlite3_bind_blob(st, i + 1, b.s.data(), static_cast<int>(b.s.size()), SQLITE_TRANSIENT); break;
          case Bind::Zeroblob: sqlite3_bind_zeroblob(st, i + 1, static_cast<int>(b.i)); break;
        }
      }
      while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        for (int c = 0; c < sqlite3_column_count(st); ++c) (void)sqlite3_column_text(st, c);
      if (rc == SQLITE_DONE) rc = SQLITE_OK;
      else msg = sqlite3_errmsg(db);
    } else if (rc != SQLITE_OK) {
      msg = sqlite3_errmsg(db);
    }
    sqlite3_finalize(st);
  }
  if (verbose) std::fprintf(stderr, "[%d] %s\n    -> %s\n", rc, sql.c_str(), rc ? msg.c_str() : "ok");
  check_outcome(rc, msg, sql);
}

const char* const kSetup =
    "CREATE TABLE t(id INTEGER PRIMARY KEY, g INTEGER, x, y REAL, a REAL, e REAL);"
    "INSERT INTO t VALUES"
    " (0, 0, 1, 0.1, 0.5, 1.0), (1, 1, 2.5, 0.2, 0.5, 1.0), (2, 2, -3, 0.3, 0.5, 1.0),"
    " (3, 3, NULL, 0.4, 0.5, 1.0), (4, 0, 'text', 0.5, 0.5, 1.0), (5, 1, x'00ff', 0.6, 0.5, 1.0),"
    " (6, 2, 1e308, 0.7, 0.5, 1.0), (7, 3, -1e999, 0.8, 0.5, 1.0), (8, 0, 9223372036854775807, 0.9, 0.5, 1.0),"
    " (9, 1, 0.5, 0.15, 0.5, 1.0), (10, 2, 7, 0.25, 0.5, 1.0), (11, 3, 12, 0.35, 0.5, 1.0),"
    " (12, 0, 0, 0.45, 0.5, 1.0), (13, 1, 1e999, 0.55, 0.5, 1.0), (14, 2, -9223372036854775808, 0.65, 0.5, 1.0),"
    " (15, 3, 3, 0.75, 0.5, 1.0);"
    "CREATE TABLE e(id INTEGER PRIMARY KEY, g INTEGER, x, y REAL, a REAL, e REAL);"
    "CREATE TABLE k(g INTEGER PRIMARY KEY);"
    "INSERT INTO k VALUES (0), (1), (2), (3), (4);"
    "CREATE TABLE log(v);";

void remove_ledger() {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((ledger_path + suffix).c_str());
}

void init_once() {
  static bool done = false;
  if (done) return;
  done = true;
  verbose = std::getenv("OPTDP_FUZZ_VERBOSE") != nullptr;
  ::mkdir(OPTDP_FUZZ_TMP, 0700);
  ledger_path = std::string(OPTDP_FUZZ_TMP) + "/ledger-" + std::to_string(::getpid()) + ".db";
}

// Literal mode ("SQL\n" then one statement per line): for handwritten seeds
// and readable regression inputs. libFuzzer mutates these texts too, so
// nothing that can touch files runs: lines naming ATTACH, VACUUM, PRAGMA,
// backup, load_extension or dp_ledger are skipped, and the authorizer
// refuses ATTACH and dp_ledger_attach as well (not PRAGMA: optdp reads
// pragma_database_list itself).
int literal_authorizer(void*, int action, const char* a, const char*, const char*, const char*) {
  if (action == SQLITE_ATTACH || action == SQLITE_DETACH) return SQLITE_DENY;
  if (action == SQLITE_FUNCTION && a && sqlite3_stricmp(a, "dp_ledger_attach") == 0) return SQLITE_DENY;
  return SQLITE_OK;
}

void run_literal(sqlite3* db, std::string_view text, Budget& budget) {
  int count = 0;
  while (!text.empty() && count < 4 * kMaxStatements) {
    const auto nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    line = line.c_str();  // up to a NUL byte
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool unsafe = false;
    for (const char* w : {"attach", "vacuum", "pragma", "backup", "load_extension", "dp_ledger", "readfile",
                          "writefile", "edit("})
      unsafe = unsafe || lower.find(w) != std::string::npos;
    if (unsafe || line.empty()) continue;
    ++count;
    run(db, line, {}, budget);
  }
}

// One statement built from the input.
std::string statement(Gen& gen, std::string& pre) {
  auto& in = gen.in();
  const int form = in.ConsumeIntegralInRange(0, 13);
  switch (form) {
    case 0:
    case 1: {  // scalar calls, several in one SELECT
      const int k = in.ConsumeIntegralInRange(1, 3);
      std::string s = "SELECT ";
      for (int i = 0; i < k; ++i) s += (i ? ", " : "") + gen.call(gen.pick_function(Kind::Scalar), false, 0);
      return s;
    }
    case 2:
    case 3:
    case 4: {  // aggregates over t, e, with WHERE / GROUP BY
      const int k = in.ConsumeIntegralInRange(1, 2);
      std::string s = "SELECT ";
      const bool group = in.ConsumeBool();
      if (group) s += "g, ";
      for (int i = 0; i < k; ++i) s += (i ? ", " : "") + gen.call(gen.pick_function(Kind::Aggregate), true, 0);
      const char* from[] = {" FROM t", " FROM e", " FROM t WHERE id < 0", " FROM t WHERE id % 3 = 0",
                            " FROM t WHERE x IS NOT NULL", " FROM (SELECT * FROM t LIMIT 1)", " FROM e, t",
                            ""};
      s += in.PickValueInArray(from);
      if (group) s += " GROUP BY g";
      if (in.ConsumeIntegralInRange(0, 7) == 0) s += " HAVING count(*) > 1";
      return s;
    }
    case 5: {  // the documented form: public keys LEFT JOIN private rows
      const char* tbl = in.ConsumeBool() ? "t" : "e";
      const std::string c = gen.call(gen.pick_function(Kind::Aggregate), true, 0);  // bare x, y, id are p's
      return std::string("SELECT k.g, ") + c + " FROM (SELECT g FROM k) AS k LEFT JOIN " + tbl +
             " AS p ON p.g = k.g GROUP BY k.g";
    }
    case 6:
    case 7:
    case 8: {  // a table function, call form
      const Fn& f = gen.pick_function(Kind::Table);
      const int limit = in.ConsumeBool() ? 1000 : in.ConsumeIntegralInRange(0, 20);
      if (in.ConsumeBool())
        return "SELECT count(*) FROM (SELECT * FROM " + gen.table_call(f, false) + " LIMIT " + std::to_string(limit) + ")";
      std::string cols = "*, rowid";  // and the hidden argument columns, echoed
      for (const char* p : f.params) cols += std::string(", ") + p;
      return "SELECT " + cols + " FROM " + gen.table_call(f, false) + " LIMIT " + std::to_string(limit);
    }
    case 9: {  // hidden-column form
      const Fn& f = gen.pick_function(Kind::Table);
      return "SELECT * FROM (SELECT * FROM " + gen.table_where(f) + " LIMIT 1000) LIMIT 1000";
    }
    case 10: {  // correlated: arguments from the rows of t (cursor re-filtered per row)
      const Fn& f = gen.pick_function(Kind::Table);
      return "SELECT count(*) FROM (SELECT * FROM (SELECT * FROM t WHERE id < 4) AS t, " + gen.table_call(f, true) +
             " LIMIT 1000)";
    }
    case 11: {  // a view that calls an aggregate; reading it may take the empty-group path
      const std::string agg = gen.call(gen.pick_function(Kind::Aggregate), true, 0);
      const char* tbl = in.ConsumeBool() ? "e" : "t";
      const std::string v = "v" + std::to_string(in.ConsumeIntegralInRange(0, 2));
      pre = "CREATE VIEW IF NOT EXISTS " + v + " AS SELECT " + agg + " AS r FROM " + tbl;
      return "SELECT * FROM " + v;
    }
    case 12: {  // a trigger that calls optdp functions
      const std::string body = in.ConsumeBool() ? "SELECT " + gen.call(gen.pick_function(Kind::Aggregate), true, 0) + " FROM e"
                                                : "SELECT " + gen.call(gen.pick_function(Kind::Scalar), false, 0);
      pre = "CREATE TRIGGER IF NOT EXISTS tr" + std::to_string(in.ConsumeIntegralInRange(0, 1)) +
            " AFTER INSERT ON log BEGIN INSERT INTO e(g) SELECT NULL WHERE 0; " + body + "; END";
      return "INSERT INTO log VALUES (1)";
    }
    default: {  // with bound parameters
      gen.allow_binds = true;
      std::string s;
      if (in.ConsumeBool()) {
        s = "SELECT " + gen.call(gen.pick_function(Kind::Scalar), false, 0);
      } else if (in.ConsumeBool()) {
        const char* from[] = {" FROM t", " FROM e", " FROM t WHERE id < 0"};
        s = "SELECT " + gen.call(gen.pick_function(Kind::Aggregate), true, 0) + in.PickValueInArray(from);
      } else {
        s = "SELECT count(*) FROM (SELECT * FROM " + gen.table_call(gen.pick_function(Kind::Table), false) +
            " LIMIT 1000)";
      }
      gen.allow_binds = false;
      return s;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  init_once();
  remove_ledger();
  all_sql.clear();
  FuzzedDataProvider in(data, size);

  sqlite3* db = nullptr;
  FUZZ_CHECK(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) == SQLITE_OK);
  char* err = nullptr;
  FUZZ_CHECK_MSG(sqlite3_optdp_init(db, &err, nullptr) == SQLITE_OK, "%s", err ? err : "");
  sqlite3_free(err);
  err = nullptr;
  FUZZ_CHECK_MSG(sqlite3_exec(db, kSetup, nullptr, nullptr, &err) == SQLITE_OK, "%s", err ? err : "");
  if (verbose)  // every statement that starts, also those optdp runs itself (nested ones indented by SQLite's "--")
    sqlite3_trace_v2(
        db, SQLITE_TRACE_STMT,
        [](unsigned, void*, void* stmt, void* x) {
          const char* text = static_cast<const char*>(x);
          std::fprintf(stderr, "      trace: %s\n", text && std::strncmp(text, "--", 2) == 0 ? text : sqlite3_sql(static_cast<sqlite3_stmt*>(stmt)));
          return 0;
        },
        nullptr);
  Budget budget;
  sqlite3_progress_handler(db, 100, progress, &budget);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);

  const bool literal_mode = size >= 4 && std::memcmp(data, "SQL\n", 4) == 0;
  if (literal_mode) {
    sqlite3_set_authorizer(db, literal_authorizer, nullptr);
    run(db, "SELECT dp_seed(1)", {}, budget);
  }
  // Most inputs use the seeded generator (reproducible noise); some keep the
  // OS one, which a ledger needs.
  else if (in.ConsumeIntegralInRange(0, 3) != 0) run(db, "SELECT dp_seed(" + std::to_string(in.ConsumeIntegral<std::uint8_t>()) + ")", {}, budget);

  if (literal_mode) {
    run_literal(db, std::string_view(reinterpret_cast<const char*>(data), size).substr(4), budget);
  } else {
    Gen gen(in);
    for (int i = 0; i < kMaxStatements && in.remaining_bytes() > 0; ++i) {
      gen.binds.clear();
      std::string pre;
      const std::string sql = statement(gen, pre);
      if (!pre.empty()) run(db, pre, {}, budget);
      run(db, sql, gen.binds, budget);
    }
  }

  const int rc = sqlite3_close(db);
  FUZZ_CHECK_MSG(rc == SQLITE_OK, "sqlite3_close: %d (%s): a statement was left unfinalized", rc, sqlite3_errstr(rc));
  remove_ledger();
  return 0;
}
