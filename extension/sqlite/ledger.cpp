#include "sqlite/ledger.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "core/budget.hpp"
#include "core/format.hpp"

namespace optdp::sql {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS optdp_budget("
    "  id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  total_epsilon REAL NOT NULL,"
    "  total_units INTEGER NOT NULL,"
    "  spent_units INTEGER NOT NULL DEFAULT 0,"
    "  created TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS optdp_charges("
    "  id INTEGER PRIMARY KEY,"
    "  time TEXT NOT NULL,"
    "  function TEXT NOT NULL,"
    "  epsilon REAL NOT NULL,"
    "  units INTEGER NOT NULL,"
    "  sql TEXT,"
    "  pid INTEGER NOT NULL);";

struct Stmt {
  sqlite3_stmt* p = nullptr;
  ~Stmt() { sqlite3_finalize(p); }
};

}  // namespace

Ledger::Ledger(const std::string& path, double total, Durability durability)
    : path_(path), total_(total), total_units_(total_units(total)), durability_(durability) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                                 nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw std::runtime_error("cannot open the ledger " + quote_text(path, kMaxPathShown) + ": " + msg);
  }
  try {
    sqlite3_busy_timeout(db_, kBusyTimeoutMs);
    // Processes creating one ledger at once: switching a new file to WAL can
    // fail with SQLITE_BUSY at once, without the busy handler, while another
    // connection makes the same switch (seen in 2 of 30 runs of the test with
    // 4 processes). So that step is retried, up to the same busy timeout.
    for (int waited_ms = 0;; waited_ms += kWalRetryMs) {
      Stmt wal;
      int rc = sqlite3_prepare_v2(db_, "PRAGMA journal_mode=WAL", -1, &wal.p, nullptr);
      if (rc == SQLITE_OK) rc = sqlite3_step(wal.p);
      if (rc == SQLITE_ROW && std::string(reinterpret_cast<const char*>(sqlite3_column_text(wal.p, 0))) == "wal") break;
      if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= kBusyTimeoutMs)
        throw std::runtime_error("cannot put the ledger " + quote_text(path, kMaxPathShown) + " in WAL mode: " + sqlite3_errmsg(db_));
      sqlite3_sleep(kWalRetryMs);
    }
    exec(durability == Durability::Full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    exec("BEGIN IMMEDIATE");
    try {
      exec(kSchema);
      Stmt meta;
      if (sqlite3_prepare_v2(db_, "SELECT total_epsilon FROM optdp_budget WHERE id = 1", -1, &meta.p, nullptr) !=
          SQLITE_OK)
        throw std::runtime_error(std::string("cannot read the ledger: ") + sqlite3_errmsg(db_));
      const int step = sqlite3_step(meta.p);
      if (step == SQLITE_ROW) {
        const double recorded = sqlite3_column_double(meta.p, 0);
        if (recorded != total)
          throw std::invalid_argument("the ledger " + quote_text(path, kMaxPathShown) + " records total_epsilon " + format_double(recorded) +
                                      ", but " + format_double(total) + " was asked for");
      } else if (step == SQLITE_DONE) {
        Stmt ins;
        if (sqlite3_prepare_v2(db_,
                               "INSERT INTO optdp_budget(id, total_epsilon, total_units, created) "
                               "VALUES (1, ?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                               -1, &ins.p, nullptr) != SQLITE_OK)
          throw std::runtime_error(std::string("cannot create the ledger: ") + sqlite3_errmsg(db_));
        sqlite3_bind_double(ins.p, 1, total);
        sqlite3_bind_int64(ins.p, 2, total_units_);
        if (sqlite3_step(ins.p) != SQLITE_DONE)
          throw std::runtime_error(std::string("cannot create the ledger: ") + sqlite3_errmsg(db_));
      } else {
        throw std::runtime_error(std::string("cannot read the ledger: ") + sqlite3_errmsg(db_));
      }
      exec("COMMIT");
    } catch (...) {
      rollback();
      throw;
    }
    auto prepare = [&](const char* sql, sqlite3_stmt** out) {
      if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, out, nullptr) != SQLITE_OK)
        throw std::runtime_error(std::string("cannot prepare the ledger: ") + sqlite3_errmsg(db_));
    };
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) throw std::runtime_error("cannot stat the ledger " + quote_text(path, kMaxPathShown) + "");
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    prepare("SELECT total_units, spent_units FROM optdp_budget WHERE id = 1", &read_);
    prepare("INSERT INTO optdp_charges(time, function, epsilon, units, sql, pid) "
            "VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?1, ?2, ?3, ?4, ?5)",
            &insert_);
    prepare("UPDATE optdp_budget SET spent_units = spent_units + ?1 WHERE id = 1", &update_);
  } catch (...) {
    sqlite3_finalize(read_);
    sqlite3_finalize(insert_);
    sqlite3_finalize(update_);
    sqlite3_close_v2(db_);
    throw;
  }
}

bool Ledger::is_ledger_file(const char* file) const {
  struct stat st {};
  return file && stat(file, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

Ledger::~Ledger() {
  sqlite3_finalize(read_);
  sqlite3_finalize(insert_);
  sqlite3_finalize(update_);
  sqlite3_close_v2(db_);
}

void Ledger::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + msg);
  }
}

void Ledger::rollback() noexcept {
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Ledger::charge(const char* function, double epsilon, const char* sql) {
  const std::int64_t units = charge_units(epsilon);
  exec("BEGIN IMMEDIATE");  // waits up to kBusyTimeoutMs for other writers
  try {
    sqlite3_reset(read_);
    if (sqlite3_step(read_) != SQLITE_ROW)
      throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
    const std::int64_t total = sqlite3_column_int64(read_, 0), spent = sqlite3_column_int64(read_, 1);
    sqlite3_reset(read_);
    if (!budget_allows(spent, units, total))
      throw std::runtime_error("privacy budget exhausted: " + format_double(units_to_epsilon(spent)) + " of " +
                               format_double(units_to_epsilon(total)) + " spent, and this release costs " +
                               format_double(epsilon));
    sqlite3_reset(insert_);
    sqlite3_bind_text(insert_, 1, function, -1, SQLITE_STATIC);
    sqlite3_bind_double(insert_, 2, epsilon);
    sqlite3_bind_int64(insert_, 3, units);
    if (sql) sqlite3_bind_text(insert_, 4, sql, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(insert_, 4);
    sqlite3_bind_int64(insert_, 5, static_cast<std::int64_t>(getpid()));
    const int ins = sqlite3_step(insert_);
    sqlite3_reset(insert_);
    sqlite3_clear_bindings(insert_);
    if (ins != SQLITE_DONE)
      throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + sqlite3_errmsg(db_));
    sqlite3_reset(update_);
    sqlite3_bind_int64(update_, 1, units);
    const int upd = sqlite3_step(update_);
    sqlite3_reset(update_);
    if (upd != SQLITE_DONE)
      throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + sqlite3_errmsg(db_));
    exec("COMMIT");  // durable before the value is released
  } catch (...) {
    sqlite3_reset(read_);
    rollback();
    throw;
  }
}

std::int64_t Ledger::spent_units() {
  sqlite3_reset(read_);
  const int rc = sqlite3_step(read_);
  const std::int64_t spent = rc == SQLITE_ROW ? sqlite3_column_int64(read_, 1) : 0;
  sqlite3_reset(read_);
  if (rc != SQLITE_ROW) throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
  return spent;
}

double Ledger::spent() { return units_to_epsilon(spent_units()); }

double Ledger::remaining() { return units_to_epsilon(total_units_ - spent_units()); }

std::vector<Ledger::Entry> Ledger::entries() {
  Stmt q;
  if (sqlite3_prepare_v2(db_, "SELECT id, time, function, epsilon, sql, pid FROM optdp_charges ORDER BY id", -1, &q.p,
                         nullptr) != SQLITE_OK)
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
  std::vector<Entry> out;
  int rc;
  while ((rc = sqlite3_step(q.p)) == SQLITE_ROW) {
    Entry e;
    e.id = sqlite3_column_int64(q.p, 0);
    e.time = reinterpret_cast<const char*>(sqlite3_column_text(q.p, 1));
    e.function = reinterpret_cast<const char*>(sqlite3_column_text(q.p, 2));
    e.epsilon = sqlite3_column_double(q.p, 3);
    if (sqlite3_column_type(q.p, 4) != SQLITE_NULL) e.sql = reinterpret_cast<const char*>(sqlite3_column_text(q.p, 4));
    e.pid = sqlite3_column_int64(q.p, 5);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
  return out;
}

}  // namespace optdp::sql
