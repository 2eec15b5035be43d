// optdp SQLite bindings: state kept per database connection.
//
// One Connection per database connection, handed to every function as its
// user data. It is reference counted: each registration holds one reference,
// released by SQLite's xDestroy when the function is replaced or the
// connection closes. Loading the extension again on the same connection finds
// the same Connection (a process-wide registry of this copy of the library).
// Another copy of the library (the same file under another path) would have
// its own registry, so attaching a ledger switches extension loading off on
// the connection (SQL load_extension() and sqlite3_load_extension alike):
// nothing loaded afterwards can re-register the functions without a ledger.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "core/samplers.hpp"
#include "core/levels.hpp"
#include "core/staircase.hpp"
#include "sqlite/api.hpp"
#include "sqlite/params.hpp"

namespace optdp::sql {

class Ledger;
class GuardedDb;
struct AnalystMode;

class Connection {
 public:
  // The Connection of db, created on first use; the caller holds one reference.
  static Connection* for_db(sqlite3* db);
  ~Connection();

  sqlite3* db() const { return db_; }
  // The noise source: the OS CSPRNG unless dp_seed(n) chose a seeded one.
  Rng& rng() { return seeded_ ? static_cast<Rng&>(*seeded_) : os_; }
  // Throws if a ledger is attached and seed is set (a known seed makes the noise predictable).
  void seed(std::optional<std::uint64_t> seed);
  bool seeded() const { return seeded_ != nullptr; }

  // The privacy ledger, once attached never detached.
  Ledger* ledger() { return ledger_.get(); }
  void attach_ledger(std::unique_ptr<Ledger> ledger);
  // Charges one release of `function` at (epsilon, delta) to the ledger, if
  // one is attached; throws (and nothing may be released) if it cannot.
  // released_keys: the number of keys a grouped release published (NULL otherwise).
  // Returns the ledger entry's id (nullopt without a ledger).
  std::optional<std::int64_t> charge(const char* function, double epsilon, double delta = 0,
                                     std::optional<std::int64_t> released_keys = std::nullopt);
  // Charges one Gaussian release of `function` at rho (zCDP), likewise.
  // shift: the release's sensitivity in its noise's lattice steps (Ledger::charge); 0 when none.
  std::optional<std::int64_t> charge_gaussian(const char* function, double rho, std::int64_t shift = 0);
  // Records released_keys in entry `id` (nothing without a ledger).
  void record_released_keys(std::optional<std::int64_t> id, std::int64_t released_keys);

  // Analyst mode (analyst.hpp), created when first switched on.
  AnalystMode& analyst_mode();
  bool has_analyst_mode() const { return analyst_ != nullptr; }

  // optdp's own connection for the queries it is given (guarded.hpp), kept.
  std::unique_ptr<GuardedDb>& guarded_cache() { return guarded_; }
  // Throws unless the name dp_ledger_entries resolves to the ledger's own
  // table on this connection (a TEMP view of that name would show false
  // entries, so while one exists nothing is charged or reported).
  void check_ledger_not_shadowed() const;

  // A two-sided geometric sampler for alpha, cached: building one costs
  // tens of microseconds (binary128 exp per digit), a GROUP BY would pay it per group.
  const TwoSidedGeometric& two_sided_geometric(double alpha);
  // An integer staircase sampler for (eps, D, r), cached likewise (the last
  // two: private_var draws two staircases per release).
  const IntegerStaircase& integer_staircase(double eps, std::int64_t D, std::int64_t r);

  // A level chain for these alphas, cached like the samplers.
  const LevelChain& level_chain(const std::vector<double>& alphas);

  // The last remap computed by remap_count, keyed by its arguments.
  struct RemapCache {
    std::string key;
    std::vector<std::int64_t> answer;
  };
  RemapCache& remap_cache() { return remap_cache_; }

  // The last parameters read from the running statements (params.hpp).
  StatementCache& statement_cache() { return statement_cache_; }

  void retain();
  static void release(void* self);

 private:
  explicit Connection(sqlite3* db);
  sqlite3* db_;
  std::unique_ptr<Ledger> ledger_;
  OsRng os_;
  std::unique_ptr<SeededRng> seeded_;
  std::unique_ptr<TwoSidedGeometric> geo_cache_;
  struct StaircaseKey {
    double eps;
    std::int64_t D, r;
    bool operator==(const StaircaseKey&) const = default;
  } stair_key_[2]{};
  std::unique_ptr<IntegerStaircase> stair_cache_[2];
  int stair_next_ = 0;  // the slot the next new sampler replaces
  RemapCache remap_cache_;
  StatementCache statement_cache_;
  std::unique_ptr<LevelChain> levels_cache_;
  std::unique_ptr<GuardedDb> guarded_;
  std::unique_ptr<AnalystMode> analyst_;
  int refs_ = 0;
};

// The Connection of the function being called.
inline Connection& connection(sqlite3_context* ctx) {
  return *static_cast<Connection*>(sqlite3_user_data(ctx));
}

}  // namespace optdp::sql
