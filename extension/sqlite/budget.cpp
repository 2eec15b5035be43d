// The privacy budget: dp_ledger_attach, dp_budget_remaining, dp_budget_spent,
// dp_delta_remaining, dp_delta_spent, and the table dp_ledger_entries
// (sqlite/ledger.hpp has the mechanism).
//
//   SELECT dp_ledger_attach('/var/lib/optdp/hospital.ledger', 10.0);          -- delta budget 0
//   SELECT dp_ledger_attach('/var/lib/optdp/hospital.ledger', 10.0, 1e-5);    -- (10, 1e-5)
//   SELECT private_count(0.5) FROM patients;     -- charges (-ln(0.5) = 0.693..., 0)
//   SELECT dp_budget_spent(), dp_budget_remaining(), dp_delta_spent(), dp_delta_remaining();
//   SELECT * FROM dp_ledger_entries;
#include <cmath>
#include <memory>
#include <string>

#include "core/accounting.hpp"
#include "core/ledger_rule.hpp"
#include "core/budget.hpp"
#include "core/privacy.hpp"
#include "core/format.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"
#include "sqlite/ledger.hpp"
#include "sqlite/vtab.hpp"

namespace optdp::sql {

namespace {

Ledger& attached(sqlite3_context* ctx) {
  Ledger* l = connection(ctx).ledger();
  if (!l) throw std::invalid_argument("no privacy ledger is attached to this connection (see dp_ledger_attach)");
  connection(ctx).check_ledger_not_shadowed();
  return *l;
}

class EntryRows final : public RowSource {
 public:
  explicit EntryRows(std::vector<Ledger::Entry> e) : e_(std::move(e)) {}
  bool eof() const override { return i_ >= e_.size(); }
  void next() override { ++i_; }
  void column(sqlite3_context* ctx, int c) const override {
    const auto& e = e_[i_];
    switch (c) {
      case 0: sqlite3_result_int64(ctx, e.id); break;
      case 1: sqlite3_result_text(ctx, e.time.c_str(), -1, SQLITE_TRANSIENT); break;
      case 2: sqlite3_result_text(ctx, e.function.c_str(), -1, SQLITE_TRANSIENT); break;
      case 3: sqlite3_result_double(ctx, e.epsilon); break;
      case 4: sqlite3_result_double(ctx, e.delta); break;
      case 5:
        if (e.released_keys) sqlite3_result_int64(ctx, *e.released_keys);
        else sqlite3_result_null(ctx);
        break;
      case 6:
        if (e.sql) sqlite3_result_text(ctx, e.sql->c_str(), -1, SQLITE_TRANSIENT);
        else sqlite3_result_null(ctx);
        break;
      case 7: sqlite3_result_int64(ctx, e.pid); break;
      default: sqlite3_result_double(ctx, e.rho); break;
    }
  }

 private:
  std::vector<Ledger::Entry> e_;
  std::size_t i_ = 0;
};

std::unique_ptr<RowSource> open_entries(sqlite3_value**, Connection& conn) {
  Ledger* l = conn.ledger();
  if (!l) throw std::invalid_argument("no privacy ledger is attached to this connection (see dp_ledger_attach)");
  return std::make_unique<EntryRows>(l->entries());
}

Ledger::Durability durability_arg(sqlite3_value* v) {
  const std::string d(text_arg(v, "durability", "'full' or 'normal'"));
  if (d == "normal") return Ledger::Durability::Normal;
  if (d != "full") throw std::invalid_argument("durability must be 'full' or 'normal', but is " + quote_text(d));
  return Ledger::Durability::Full;
}

double total_delta_arg(sqlite3_value* v) {
  const double total_delta = number_arg(v, "total_delta");
  delta_total_units(total_delta);  // validates [0, 1)
  return total_delta + 0.0;        // -0 is 0
}

}  // namespace

// dp_ledger_attach(path, total_epsilon), (path, total_epsilon, durability),
// (path, total_epsilon, total_delta), (path, total_epsilon, total_delta,
// durability): returns the remaining epsilon. With three arguments the third
// is total_delta if it is a number and durability if it is text.
void dp_ledger_attach_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_ledger_attach", argc, argv, [&] {
    const std::string path(text_arg(argv[0], "path", "a file name"));
    if (path.empty() || path == ":memory:" || path[0] == '\0')
      throw std::invalid_argument("path must name a file (a ledger in memory could be lost), but is " +
                                  quote_text(path, kMaxPathShown));
    if (path.find('\0') != std::string::npos)
      throw std::invalid_argument("path must not contain a NUL character, but is " + quote_text(path, kMaxPathShown));
    const double total = number_arg(argv[1], "total_epsilon");
    total_units(total);  // validates (0, 1e6]
    double total_delta = 0;
    Ledger::Durability durability = Ledger::Durability::Full;
    if (argc == 3) {
      const int t = sqlite3_value_type(argv[2]);
      if (t == SQLITE_INTEGER || t == SQLITE_FLOAT) total_delta = total_delta_arg(argv[2]);
      else if (t == SQLITE_TEXT) durability = durability_arg(argv[2]);
      else
        throw std::invalid_argument(
            "the third argument must be total_delta (a number in [0, 1)) or durability ('full' or 'normal'), but is " +
            describe(argv[2]));
    } else if (argc == 4) {
      total_delta = total_delta_arg(argv[2]);
      durability = durability_arg(argv[3]);
    }
    Connection& conn = connection(ctx);
    if (Ledger* l = conn.ledger()) {
      if (l->path() != path || l->total() != total || l->total_delta() != total_delta || l->durability() != durability)
        throw std::invalid_argument("a ledger is already attached (" + quote_text(l->path(), kMaxPathShown) +
                                    "); it cannot be detached or replaced on this connection");
      sqlite3_result_double(ctx, l->remaining());
      return;
    }
    if (conn.seeded())
      throw std::invalid_argument("the connection's noise is seeded (dp_seed); call dp_seed(NULL) before attaching a ledger");
    auto ledger = std::make_unique<Ledger>(path, total, total_delta, durability);
    // The session must not hold the ledger file open as one of its own databases.
    sqlite3* db = sqlite3_context_db_handle(ctx);
    // Listed with the C API, not by a query: a TEMP view named
    // pragma_database_list would answer a query in its place.
    std::string clash;
    for (int i = 0; const char* name = sqlite3_db_name(db, i); ++i) {
      const char* file = sqlite3_db_filename(db, name);
      if (file && *file && ledger->is_ledger_file(file)) clash = name;
    }
    if (!clash.empty())
      throw std::invalid_argument("the ledger file is open on this connection as database '" + clash +
                                  "'; detach it first (the session must not be able to rewrite its ledger)");
    const double remaining = ledger->remaining();
    conn.attach_ledger(std::move(ledger));
    sqlite3_result_double(ctx, remaining);
  });
}

void dp_budget_remaining_fn(sqlite3_context* ctx, int, sqlite3_value**) {
  guard(ctx, "dp_budget_remaining", [&] { sqlite3_result_double(ctx, attached(ctx).remaining()); });
}

void dp_budget_spent_fn(sqlite3_context* ctx, int, sqlite3_value**) {
  guard(ctx, "dp_budget_spent", [&] { sqlite3_result_double(ctx, attached(ctx).spent()); });
}

void dp_delta_remaining_fn(sqlite3_context* ctx, int, sqlite3_value**) {
  guard(ctx, "dp_delta_remaining", [&] { sqlite3_result_double(ctx, attached(ctx).delta_remaining()); });
}

void dp_delta_spent_fn(sqlite3_context* ctx, int, sqlite3_value**) {
  guard(ctx, "dp_delta_spent", [&] { sqlite3_result_double(ctx, attached(ctx).delta_spent()); });
}

// Planning (docs/accounting.md): both accountings of the history, how many
// further releases fit, and the noise k further Gaussian releases need.

namespace {

// One further release of `mechanism` with `noise` at L2/L1 `sensitivity`, as
// the accountant sees it: 'geometric' (noise = alpha, a count's), 'laplace'
// or 'staircase' (noise = eps, a sum's or any pure release's epsilon, for
// which sensitivity is already accounted) or 'gaussian' (noise = sigma, the
// standard deviation parameter of the discrete Gaussian).
zcdp::Entry further_entry(sqlite3_value* mech_v, sqlite3_value* noise_v, sqlite3_value* sens_v) {
  const std::string mech(text_arg(mech_v, "mechanism", "'geometric', 'laplace', 'staircase' or 'gaussian'"));
  const double noise = number_arg(noise_v, "noise");
  double sensitivity = 1;
  if (sens_v) {
    sensitivity = number_arg(sens_v, "sensitivity");
    check_positive(sensitivity, "sensitivity");
  }
  if (mech == "geometric") {
    if (!(noise > 0 && noise < 1)) throw std::invalid_argument("noise (alpha) must be in (0, 1), but is " + describe(noise_v));
    return zcdp::Entry::pure(-std::log(noise) * sensitivity);
  }
  if (mech == "laplace" || mech == "staircase") {
    check_positive(noise, "noise (eps)");
    return zcdp::Entry::pure(noise);
  }
  if (mech == "gaussian") {
    check_positive(noise, "noise (sigma)");
    return planned_gaussian(sensitivity, noise * noise);  // core/ledger_rule.hpp, as PostgreSQL's
  }
  throw std::invalid_argument("mechanism must be 'geometric', 'laplace', 'staircase' or 'gaussian', but is " +
                              describe(mech_v));
}

}  // namespace

// dp_further_releases(mechanism, noise [, sensitivity]): how many more such
// releases the attached ledger allows (under the better accounting).
void dp_further_releases_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_further_releases", argc, argv, [&] {
    Ledger& l = attached(ctx);  // first: without a ledger nothing else is checked
    const zcdp::Entry extra = further_entry(argv[0], argv[1], argc > 2 ? argv[2] : nullptr);
    const auto n = zcdp::further_releases(l.history(), extra, {l.total(), l.total_delta()});
    sqlite3_result_int64(ctx, static_cast<std::int64_t>(n));
  });
}

// dp_gaussian_sigma(k [, sensitivity]): the smallest sigma with which k more
// Gaussian releases of that L2 sensitivity fit; NULL if none does.
void dp_gaussian_sigma_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_gaussian_sigma", argc, argv, [&] {
    Ledger& l = attached(ctx);  // first: without a ledger nothing else is checked
    const std::int64_t k = integer_arg(argv[0], "k");
    if (k < 1 || k > 1000000000)
      throw std::invalid_argument("k must be an INTEGER in [1, 10^9], but is " + describe(argv[0]));
    double sensitivity = 1;
    if (argc > 1) {
      sensitivity = number_arg(argv[1], "sensitivity");
      check_positive(sensitivity, "sensitivity");
    }
    const double s2 =
        zcdp::sigma2_for_further(l.history(), static_cast<std::uint64_t>(k), sensitivity, {l.total(), l.total_delta()});
    if (std::isfinite(s2)) sqlite3_result_double(ctx, std::sqrt(s2));
    else sqlite3_result_null(ctx);
  });
}

namespace {

// (accounting, epsilon, delta, rho, fits): the ledger's whole history under
// basic composition, under zCDP and at its privacy curve ('pld': delta NULL
// when the curve is not evaluated: no delta budget, a Gaussian entry without
// a shift, or too much work); the budget holds while any fits.
class AccountRows final : public RowSource {
 public:
  AccountRows(zcdp::Accounting a, double total_eps) : a_(a), eps_(total_eps) {}
  bool eof() const override { return i_ >= 3; }
  void next() override { ++i_; }
  void column(sqlite3_context* ctx, int c) const override {
    const bool basic = i_ == 0;
    if (i_ == 2) {  // the privacy curve
      switch (c) {
        case 0: sqlite3_result_text(ctx, "pld", -1, SQLITE_STATIC); break;
        case 1: sqlite3_result_double(ctx, eps_); break;
        case 2:
          if (a_.pld_evaluated) sqlite3_result_double(ctx, a_.pld_delta);
          else sqlite3_result_null(ctx);
          break;
        case 3: sqlite3_result_null(ctx); break;
        default: sqlite3_result_int(ctx, a_.pld_evaluated && a_.pld_fits); break;
      }
      return;
    }
    switch (c) {
      case 0: sqlite3_result_text(ctx, basic ? "basic" : "zcdp", -1, SQLITE_STATIC); break;
      case 1: sqlite3_result_double(ctx, basic ? a_.basic_eps : eps_); break;
      case 2: sqlite3_result_double(ctx, basic ? a_.basic_delta : a_.zcdp_delta); break;
      case 3:
        if (basic) sqlite3_result_null(ctx);
        else sqlite3_result_double(ctx, a_.rho_total);
        break;
      default: sqlite3_result_int(ctx, basic ? a_.basic_fits : a_.zcdp_fits); break;
    }
  }

 private:
  zcdp::Accounting a_;
  double eps_;
  std::size_t i_ = 0;
};

std::unique_ptr<RowSource> open_accounts(sqlite3_value**, Connection& conn) {
  Ledger* l = conn.ledger();
  if (!l) throw std::invalid_argument("no privacy ledger is attached to this connection (see dp_ledger_attach)");
  conn.check_ledger_not_shadowed();
  return std::make_unique<AccountRows>(l->accounting(), l->total());
}

}  // namespace

const TableFunction kLedgerAccounts{"dp_ledger_accounts",
                                    "accounting TEXT, epsilon REAL, delta REAL, rho REAL, fits INTEGER",
                                    5,
                                    {}, 0, open_accounts, /*random=*/true};

// released_keys: the number of keys a grouped release published; NULL for every other release.
const TableFunction kLedgerEntries{"dp_ledger_entries",
                                   "id INTEGER, time TEXT, function TEXT, epsilon REAL, delta REAL, "
                                   "released_keys INTEGER, sql TEXT, pid INTEGER, rho REAL",
                                   9,
                                   {}, 0, open_entries, /*random=*/true};

}  // namespace optdp::sql
