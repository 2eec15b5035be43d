// optdp SQLite bindings: the privacy-budget ledger.
//
// A ledger is a separate SQLite database file, opened by optdp on its own
// connection, so nothing the analyst does on theirs (ROLLBACK, closing,
// reconnecting) can undo a charge. Every release is charged in one
// IMMEDIATE transaction: read the budget, refuse if the charge does not fit,
// record it, commit durably (WAL, synchronous FULL by default), and only then
// may the value be returned. The budget is one (epsilon, delta) guarantee for
// everything recorded: a charge is refused unless the whole history with it
// fits under basic composition (epsilons and deltas add), under zCDP
// (Gaussian releases' rho, pure releases' eps^2/2, converted tightly) or by
// its privacy curve (docs/accounting.md). A ledger with a delta budget keeps
// the summary of its history (table optdp_summary, core/ledger_rule.hpp's
// encode_history) and decides on it, so a charge reads O(kinds) values, not
// every entry. Budget arithmetic is
// in exact integer units (core/budget.hpp): 10^-12 for epsilon, 2^-120 for
// delta (every double delta >= 2^-68 is counted exactly).
//
// Ledger files written before the delta account (no total_delta, no delta
// columns) still open: their delta total and every old charge's delta are 0,
// and the missing columns are added in the same IMMEDIATE transaction that
// creates or checks the ledger (an older optdp can still use the file: every
// new column has a default).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/accounting.hpp"
#include "core/budget.hpp"
#include "sqlite/api.hpp"
#include "sqlite/stmt.hpp"

namespace optdp::sql {

// Messages quote at most this many bytes of a ledger's path.
inline constexpr std::size_t kMaxPathShown = 200;

class Ledger {
 public:
  enum class Durability { Full, Normal };
  struct Entry {
    std::int64_t id;
    std::string time, function;
    double epsilon;
    double delta;                               // 0 for charges recorded before the delta account
    std::optional<std::int64_t> released_keys;  // set by grouped releases only
    std::optional<std::string> sql;
    std::int64_t pid;
    double rho;  // a Gaussian release's zCDP cost; 0 for the others
  };

  // Creates the ledger at path recording total (epsilon) and total_delta, or
  // opens an existing one, which must record the same totals (a ledger file
  // from before the delta account records total_delta 0). Throws
  // std::invalid_argument or std::runtime_error with a message for the user.
  Ledger(const std::string& path, double total, double total_delta, Durability durability);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  const std::string& path() const { return path_; }
  // Whether file (a name as given to ATTACH) is this ledger's database file.
  bool is_ledger_file(const char* file) const;
  double total() const { return total_; }
  double total_delta() const { return total_delta_; }
  Durability durability() const { return durability_; }

  // Charges (epsilon, delta) for one release; throws std::runtime_error if
  // either budget does not cover it ("privacy budget exhausted: ..."; epsilon
  // is checked first) or the ledger cannot be written, and
  // std::invalid_argument for a delta outside [0, 1] or negative
  // released_keys. released_keys (the number of keys a grouped release
  // published) is recorded as given; NULL when absent. Returns the entry's id.
  // rho > 0: a Gaussian release (epsilon and delta 0), accounted in zCDP;
  // shift > 0: its noise is N_Z(0, shift^2 / (2 rho)) on a query of integer
  // sensitivity shift, which its privacy loss distribution needs (0: none).
  // The charge fits if the whole history with it is within the budget under
  // basic composition or under zCDP (docs/accounting.md).
  std::int64_t charge(const char* function, double epsilon, double delta, const char* sql,
                      std::optional<std::int64_t> released_keys = std::nullopt, double rho = 0,
                      std::int64_t shift = 0);
  // The ledger's history as the accountant sees it (its kept summary, or the
  // entries summarised when that is stale), and the accountings of it.
  zcdp::History history();
  zcdp::Accounting accounting();
  // Records the number of keys a grouped release published in its entry,
  // which was charged before the release read its rows (the number is a
  // function of the noisy output only). Throws std::runtime_error if the
  // ledger cannot be written.
  void record_released_keys(std::int64_t id, std::int64_t released_keys);
  double spent();
  double remaining();
  double delta_spent();
  double delta_remaining();
  std::vector<Entry> entries();

  static constexpr int kBusyTimeoutMs = 10000;
  static constexpr int kWalRetryMs = 5;  // pause between attempts to switch a new ledger to WAL

 private:
  void exec(const char* sql);
  void rollback() noexcept;
  void migrate();
  struct Spent {
    std::int64_t epsilon_units;
    DeltaUnits delta_units;
  };
  Spent spent_units();
  // Inside a transaction: the kept summary of the history if it is the one
  // written for the entries present, else the entries summarised anew
  // (rebuilt = true). The summary (table optdp_summary) is written by each
  // charge in its IMMEDIATE transaction, and emptied by triggers on any other
  // change of optdp_charges (docs/accounting.md, "What a charge reads").
  zcdp::History read_history(std::int64_t& last_id, bool& rebuilt);
  void write_history(const zcdp::History& h, std::int64_t last_id);
  // Column `column` of read_ (a decimal count of delta units); throws if it is not one.
  DeltaUnits delta_units_column(int column) const;

  std::string path_;
  unsigned long long dev_ = 0, ino_ = 0;  // identity of the ledger file
  double total_;
  std::int64_t total_units_;
  double total_delta_;
  DeltaUnits total_delta_units_;
  Durability durability_;
  sqlite3* db_ = nullptr;
  Stmt read_, insert_, update_, keys_, history_, kept_, last_id_, keep_;
};

}  // namespace optdp::sql
