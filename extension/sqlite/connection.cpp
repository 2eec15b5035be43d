#include "sqlite/connection.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "sqlite/params.hpp"
#include "sqlite/analyst.hpp"
#include "sqlite/guarded.hpp"
#include "sqlite/ledger.hpp"

namespace optdp::sql {

namespace {
std::mutex registry_mutex;
// The Connection of every open connection. Allocated while one exists and
// freed with the last: not a static object, because a connection may be
// closed from an atexit handler after static destructors ran, and not
// leaked, because SQLite unloads the module when its last connection
// closes, and a pointer in unloaded memory would leave the map unreachable.
std::map<sqlite3*, Connection*>* registry = nullptr;
}  // namespace

Connection::Connection(sqlite3* db) : db_(db) {}

Connection::~Connection() {
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (!registry) return;
  auto it = registry->find(db_);
  if (it != registry->end() && it->second == this) registry->erase(it);
  if (registry->empty()) {
    delete registry;
    registry = nullptr;
  }
}

Connection* Connection::for_db(sqlite3* db) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (!registry) registry = new std::map<sqlite3*, Connection*>();
  auto& r = *registry;
  auto it = r.find(db);
  Connection* c = it != r.end() ? it->second : nullptr;
  if (!c) {
    c = new Connection(db);
    r[db] = c;
  }
  ++c->refs_;
  return c;
}

void Connection::seed(std::optional<std::uint64_t> seed) {
  if (seed && ledger_)
    throw std::invalid_argument("refused: a privacy ledger is attached, and a known seed makes the noise predictable");
  if (seed) seeded_ = std::make_unique<SeededRng>(*seed);
  else seeded_.reset();
}

void Connection::attach_ledger(std::unique_ptr<Ledger> ledger) {
  ledger_ = std::move(ledger);
  // The session must not ATTACH the ledger file and rewrite it. An authorizer
  // would replace the application's own (SQLite cannot chain them), so
  // instead no further database may be attached on this connection at all;
  // the caller has checked that the ledger is not attached already.
  sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
  // No other copy of optdp (or any extension) may be loaded from now on: a
  // copy under another path would register the functions with its own,
  // ledger-less state. SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION off stops both
  // sqlite3_load_extension (the shell's .load) and SQL's load_extension(),
  // which goes through it ("not authorized"). Only the host's C API can
  // switch it on again.
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
}

void Connection::check_ledger_not_shadowed() const {
  // Without preparing SQL: a table or virtual table of that name in any
  // schema is seen by sqlite3_table_column_metadata; a view is not, but
  // sqlite3_blob_open resolves the name as a query would (temp, main,
  // attached, then the eponymous tables) and names what it found.
  static constexpr const char* kName = "dp_ledger_entries";
  const std::string why = std::string("a table or view named ") + kName +
                          " hides the ledger's own table on this connection; drop it first";
  if (sqlite3_table_column_metadata(db_, nullptr, kName, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) ==
      SQLITE_OK)
    throw std::invalid_argument(why);
  sqlite3_blob* blob = nullptr;  // never opened: the name is a view or a virtual table
  sqlite3_blob_open(db_, nullptr, kName, "id", 1, 0, &blob);
  const std::string found = sqlite3_errmsg(db_);
  if (blob) sqlite3_blob_close(blob);
  if (found != std::string("cannot open virtual table: ") + kName) throw std::invalid_argument(why);
}

std::optional<std::int64_t> Connection::charge(const char* function, double epsilon, double delta,
                                               std::optional<std::int64_t> released_keys) {
  if (!ledger_) return std::nullopt;
  check_ledger_not_shadowed();
  const std::string sql = running_sql(db_, function);
  return ledger_->charge(function, epsilon, delta, sql.empty() ? nullptr : sql.c_str(), released_keys);
}

std::optional<std::int64_t> Connection::charge_gaussian(const char* function, double rho, std::int64_t shift) {
  if (!ledger_) return std::nullopt;
  check_ledger_not_shadowed();
  const std::string sql = running_sql(db_, function);
  return ledger_->charge(function, 0, 0, sql.empty() ? nullptr : sql.c_str(), std::nullopt, rho, shift);
}

AnalystMode& Connection::analyst_mode() {
  if (!analyst_) analyst_ = std::make_unique<AnalystMode>();
  return *analyst_;
}

void Connection::record_released_keys(std::optional<std::int64_t> id, std::int64_t released_keys) {
  if (ledger_ && id) ledger_->record_released_keys(*id, released_keys);
}

const TwoSidedGeometric& Connection::two_sided_geometric(double alpha) {
  if (!geo_cache_ || geo_cache_->alpha() != alpha) geo_cache_ = std::make_unique<TwoSidedGeometric>(alpha);
  return *geo_cache_;
}

const IntegerStaircase& Connection::integer_staircase(double eps, std::int64_t D, std::int64_t r) {
  const StaircaseKey key{eps, D, r};
  for (int i = 0; i < 2; ++i)
    if (stair_cache_[i] && stair_key_[i] == key) return *stair_cache_[i];
  const int i = stair_next_;
  stair_next_ ^= 1;
  stair_cache_[i] = std::make_unique<IntegerStaircase>(eps, D, r);
  stair_key_[i] = key;
  return *stair_cache_[i];
}

const LevelChain& Connection::level_chain(const std::vector<double>& alphas) {
  if (!levels_cache_ || levels_cache_->alphas() != alphas) levels_cache_ = std::make_unique<LevelChain>(alphas);
  return *levels_cache_;
}

void Connection::retain() {
  std::lock_guard<std::mutex> lock(registry_mutex);
  ++refs_;
}

void Connection::release(void* self) {
  auto* c = static_cast<Connection*>(self);
  bool last;
  {
    std::lock_guard<std::mutex> lock(registry_mutex);
    last = --c->refs_ == 0;
  }
  if (last) delete c;
}

}  // namespace optdp::sql
