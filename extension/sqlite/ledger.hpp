// optdp SQLite bindings: the privacy-budget ledger.
//
// A ledger is a separate SQLite database file, opened by optdp on its own
// connection, so nothing the analyst does on theirs (ROLLBACK, closing,
// reconnecting) can undo a charge. Every release is charged in one
// IMMEDIATE transaction: read the budget, refuse if the charge does not fit,
// record it, commit durably (WAL, synchronous FULL by default), and only then
// may the value be returned. Budget arithmetic is in exact integer units
// (core/budget.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sqlite/api.hpp"

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
    std::optional<std::string> sql;
    std::int64_t pid;
  };

  // Creates the ledger at path recording total, or opens an existing one,
  // which must record the same total. Throws std::invalid_argument or
  // std::runtime_error with a message for the user.
  Ledger(const std::string& path, double total, Durability durability);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  const std::string& path() const { return path_; }
  // Whether file (a name as given to ATTACH) is this ledger's database file.
  bool is_ledger_file(const char* file) const;
  double total() const { return total_; }
  Durability durability() const { return durability_; }

  // Charges epsilon for one released value; throws std::runtime_error if the
  // budget does not cover it or the ledger cannot be written.
  void charge(const char* function, double epsilon, const char* sql);
  double spent();
  double remaining();
  std::vector<Entry> entries();

  static constexpr int kBusyTimeoutMs = 10000;
  static constexpr int kWalRetryMs = 5;  // pause between attempts to switch a new ledger to WAL

 private:
  void exec(const char* sql);
  void rollback() noexcept;
  std::int64_t spent_units();

  std::string path_;
  unsigned long long dev_ = 0, ino_ = 0;  // identity of the ledger file
  double total_;
  std::int64_t total_units_;
  Durability durability_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* read_ = nullptr;
  sqlite3_stmt* insert_ = nullptr;
  sqlite3_stmt* update_ = nullptr;
};

}  // namespace optdp::sql
