#include "sqlite/ledger.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <stdexcept>

#include "core/accounting.hpp"
#include "core/budget.hpp"
#include "core/format.hpp"
#include "core/ledger_rule.hpp"

namespace optdp::sql {

namespace {

// The schema of the first ledgers; the columns added since are in
// kAddedColumns, added to new and old files alike (so both paths are one).
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

// Columns added after the first schema, in order. Each has a default, so a
// ledger written before them reads as: total_delta 0, spent_delta_units 0,
// every old charge with delta 0 and no released_keys; and an older optdp,
// which names its columns, can still charge a migrated file (delta 0).
struct AddedColumn {
  const char* table;
  const char* column;
  const char* definition;
};
constexpr AddedColumn kAddedColumns[] = {
    {"optdp_budget", "total_delta", "REAL NOT NULL DEFAULT 0"},
    // Counts of 2^-120 (core/budget.hpp) in decimal digits: they need 128 bits.
    {"optdp_budget", "total_delta_units", "TEXT NOT NULL DEFAULT '0'"},
    {"optdp_budget", "spent_delta_units", "TEXT NOT NULL DEFAULT '0'"},
    {"optdp_charges", "delta", "REAL NOT NULL DEFAULT 0"},
    {"optdp_charges", "delta_units", "TEXT NOT NULL DEFAULT '0'"},
    {"optdp_charges", "released_keys", "INTEGER"},  // the number of keys a grouped release published
    // A Gaussian release's zCDP cost (its epsilon and delta are then 0); 0 for
    // every other release, which is pure (or, with a delta, approximate) DP.
    {"optdp_charges", "rho", "REAL NOT NULL DEFAULT 0"},
    // A Gaussian release's sensitivity in its noise's lattice steps (its noise
    // is N_Z(0, shift^2 / (2 rho))): what its privacy loss distribution needs
    // (core/pld.hpp). 0 for other releases, for Gaussian releases charged
    // before this column (or by an older optdp) and for those without one
    // such pair (private_groups): a history with such a Gaussian entry is
    // accounted by basic composition and zCDP only (docs/accounting.md).
    {"optdp_charges", "shift", "INTEGER NOT NULL DEFAULT 0"},
};

// The kept summary of the history (core/ledger_rule.hpp, encode_history),
// one row, written by each charge in its transaction. Any other change of
// the entries (a row inserted, deleted or altered by hand or by an older
// optdp) empties it through these triggers, and a summary that does not
// match the entries present (its last id, its counts, its digest) is never
// trusted: the next reader summarises the entries again.
constexpr const char* kSummarySchema =
    "CREATE TABLE IF NOT EXISTS optdp_summary("
    "  id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  summary TEXT NOT NULL);"
    "CREATE TRIGGER IF NOT EXISTS optdp_charges_insert AFTER INSERT ON optdp_charges "
    "  BEGIN DELETE FROM optdp_summary; END;"
    "CREATE TRIGGER IF NOT EXISTS optdp_charges_delete AFTER DELETE ON optdp_charges "
    "  BEGIN DELETE FROM optdp_summary; END;"
    "CREATE TRIGGER IF NOT EXISTS optdp_charges_update AFTER UPDATE OF id, epsilon, delta, rho, shift ON optdp_charges "
    "  BEGIN DELETE FROM optdp_summary; END;";

}  // namespace

Ledger::Ledger(const std::string& path, double total, double total_delta, Durability durability)
    : path_(path),
      total_(total),
      total_units_(total_units(total)),
      total_delta_(total_delta + 0.0),  // -0 is 0
      total_delta_units_(delta_total_units(total_delta)),
      durability_(durability) {
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
      int rc = sqlite3_prepare_v2(db_, "PRAGMA journal_mode=WAL", -1, wal.out(), nullptr);
      if (rc == SQLITE_OK) rc = sqlite3_step(wal);
      if (rc == SQLITE_ROW && std::string(reinterpret_cast<const char*>(sqlite3_column_text(wal, 0))) == "wal") break;
      if ((rc & 0xff) != SQLITE_BUSY || waited_ms >= kBusyTimeoutMs)
        throw std::runtime_error("cannot put the ledger " + quote_text(path, kMaxPathShown) + " in WAL mode: " + sqlite3_errmsg(db_));
      sqlite3_sleep(kWalRetryMs);
    }
    exec(durability == Durability::Full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    exec("BEGIN IMMEDIATE");
    try {
      exec(kSchema);
      migrate();
      exec(kSummarySchema);
      Stmt meta;
      if (sqlite3_prepare_v2(db_, "SELECT total_epsilon, total_delta FROM optdp_budget WHERE id = 1", -1, meta.out(),
                             nullptr) != SQLITE_OK)
        throw std::runtime_error(std::string("cannot read the ledger: ") + sqlite3_errmsg(db_));
      const int step = sqlite3_step(meta);
      if (step == SQLITE_ROW) {
        const double recorded = sqlite3_column_double(meta, 0);
        if (recorded != total)
          throw std::invalid_argument("the ledger " + quote_text(path, kMaxPathShown) + " records total_epsilon " + format_double(recorded) +
                                      ", but " + format_double(total) + " was asked for");
        const double recorded_delta = sqlite3_column_double(meta, 1);
        if (recorded_delta != total_delta_)
          throw std::invalid_argument("the ledger " + quote_text(path, kMaxPathShown) + " records total_delta " +
                                      format_double(recorded_delta) + ", but " + format_double(total_delta_) +
                                      " was asked for");
      } else if (step == SQLITE_DONE) {
        Stmt ins;
        if (sqlite3_prepare_v2(db_,
                               "INSERT INTO optdp_budget(id, total_epsilon, total_units, created, total_delta, "
                               "total_delta_units) VALUES (1, ?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?3, ?4)",
                               -1, ins.out(), nullptr) != SQLITE_OK)
          throw std::runtime_error(std::string("cannot create the ledger: ") + sqlite3_errmsg(db_));
        sqlite3_bind_double(ins, 1, total);
        sqlite3_bind_int64(ins, 2, total_units_);
        sqlite3_bind_double(ins, 3, total_delta_);
        const std::string total_delta_text = delta_units_text(total_delta_units_);
        sqlite3_bind_text(ins, 4, total_delta_text.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(ins) != SQLITE_DONE)
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
    prepare("SELECT total_units, spent_units, total_delta_units, spent_delta_units FROM optdp_budget WHERE id = 1",
            read_.out());
    prepare("INSERT INTO optdp_charges(time, function, epsilon, units, sql, pid, delta, delta_units, released_keys, "
            "rho, shift) VALUES (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            insert_.out());
    prepare("SELECT epsilon, delta, rho, shift, count(*) FROM optdp_charges GROUP BY epsilon, delta, rho, shift",
            history_.out());
    prepare("SELECT summary FROM optdp_summary WHERE id = 1", kept_.out());
    prepare("SELECT coalesce(max(id), 0) FROM optdp_charges", last_id_.out());
    prepare("INSERT OR REPLACE INTO optdp_summary(id, summary) VALUES (1, ?1)", keep_.out());
    // spent_delta_units is a decimal count beyond SQL's arithmetic: the new
    // value is computed from the one read in the same IMMEDIATE transaction.
    prepare("UPDATE optdp_budget SET spent_units = spent_units + ?1, spent_delta_units = ?2 WHERE id = 1", update_.out());
  } catch (...) {
    // The statements are finalized as members; close_v2 waits for them.
    sqlite3_close_v2(db_);
    throw;
  }
}

// Inside the constructor's IMMEDIATE transaction: adds the columns a ledger
// file written before them lacks (a concurrent opener waits, then finds them).
void Ledger::migrate() {
  Stmt has;
  if (sqlite3_prepare_v2(db_, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, has.out(), nullptr) != SQLITE_OK)
    throw std::runtime_error(std::string("cannot read the ledger: ") + sqlite3_errmsg(db_));
  for (const AddedColumn& c : kAddedColumns) {
    sqlite3_reset(has);
    sqlite3_bind_text(has, 1, c.table, -1, SQLITE_STATIC);
    sqlite3_bind_text(has, 2, c.column, -1, SQLITE_STATIC);
    const int rc = sqlite3_step(has);
    if (rc == SQLITE_ROW) continue;
    if (rc != SQLITE_DONE) throw std::runtime_error(std::string("cannot read the ledger: ") + sqlite3_errmsg(db_));
    exec(("ALTER TABLE " + std::string(c.table) + " ADD COLUMN " + c.column + " " + c.definition).c_str());
  }
}

bool Ledger::is_ledger_file(const char* file) const {
  struct stat st {};
  return file && stat(file, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

Ledger::~Ledger() {
  // The statements are finalized after this, as members; close_v2 waits for them.
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

DeltaUnits Ledger::delta_units_column(int column) const {
  // Text only (the column's TEXT affinity turns any number written to it into text).
  const unsigned char* t =
      sqlite3_column_type(read_, column) == SQLITE_TEXT ? sqlite3_column_text(read_, column) : nullptr;
  const auto units =
      t ? parse_delta_units(std::string_view(reinterpret_cast<const char*>(t),
                                             static_cast<std::size_t>(sqlite3_column_bytes(read_, column))))
        : std::nullopt;
  if (!units)
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " +
                             sqlite3_column_name(read_, column) + " is not a count of delta units");
  return *units;
}

zcdp::History Ledger::read_history(std::int64_t& last_id, bool& rebuilt) {
  auto failed = [&] {
    return std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " +
                              sqlite3_errmsg(db_));
  };
  sqlite3_reset(last_id_);
  if (sqlite3_step(last_id_) != SQLITE_ROW) {
    sqlite3_reset(last_id_);
    throw failed();
  }
  last_id = sqlite3_column_int64(last_id_, 0);
  sqlite3_reset(last_id_);
  sqlite3_reset(kept_);
  int rc = sqlite3_step(kept_);
  std::optional<zcdp::History> kept;
  if (rc == SQLITE_ROW && sqlite3_column_type(kept_, 0) == SQLITE_TEXT)
    kept = decode_history(std::string_view(reinterpret_cast<const char*>(sqlite3_column_text(kept_, 0)),
                                           static_cast<std::size_t>(sqlite3_column_bytes(kept_, 0))),
                          last_id);
  sqlite3_reset(kept_);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw failed();
  rebuilt = !kept;
  if (kept) return std::move(*kept);
  // The entries summarised: one row per distinct (epsilon, delta, rho, shift).
  zcdp::History h;
  sqlite3_reset(history_);
  while ((rc = sqlite3_step(history_)) == SQLITE_ROW) {
    const std::int64_t n = sqlite3_column_int64(history_, 4);
    try {
      h.add(ledger_row_entry(sqlite3_column_double(history_, 0), sqlite3_column_double(history_, 1),
                             sqlite3_column_double(history_, 2), sqlite3_column_int64(history_, 3)),
            static_cast<std::uint64_t>(n));
    } catch (...) {
      sqlite3_reset(history_);
      throw;
    }
  }
  sqlite3_reset(history_);
  if (rc != SQLITE_DONE) throw failed();
  return h;
}

void Ledger::write_history(const zcdp::History& h, std::int64_t last_id) {
  const std::string text = encode_history(h, last_id);
  sqlite3_reset(keep_);
  sqlite3_bind_text(keep_, 1, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  const int rc = sqlite3_step(keep_);
  sqlite3_reset(keep_);
  sqlite3_clear_bindings(keep_);
  if (rc != SQLITE_DONE)
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + sqlite3_errmsg(db_));
}

zcdp::Accounting Ledger::accounting() {
  exec("BEGIN");
  try {
    std::int64_t last_id;
    bool rebuilt;
    auto a = zcdp::account_all(read_history(last_id, rebuilt), {total_, total_delta_});
    exec("COMMIT");
    return a;
  } catch (...) {
    rollback();
    throw;
  }
}

zcdp::History Ledger::history() {
  exec("BEGIN");
  try {
    std::int64_t last_id;
    bool rebuilt;
    auto h = read_history(last_id, rebuilt);
    exec("COMMIT");
    return h;
  } catch (...) {
    rollback();
    throw;
  }
}

std::int64_t Ledger::charge(const char* function, double epsilon, double delta, const char* sql,
                            std::optional<std::int64_t> released_keys, double rho, std::int64_t shift) {
  // A Gaussian release has no epsilon of its own (0 units): the accountant
  // converts its rho (docs/accounting.md).
  const LedgerCharge c = ledger_charge(epsilon, delta, rho, shift);
  const DeltaUnits delta_units = c.delta_units;
  const std::int64_t units = c.units;
  delta = c.delta;
  if (released_keys && *released_keys < 0)
    throw std::invalid_argument("released_keys must be at least 0, but is " + std::to_string(*released_keys));
  exec("BEGIN IMMEDIATE");  // waits up to kBusyTimeoutMs for other writers
  try {
    sqlite3_reset(read_);
    if (sqlite3_step(read_) != SQLITE_ROW)
      throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
    LedgerAccount account;
    account.total_epsilon = total_;
    account.total_delta = total_delta_;
    account.total_units = sqlite3_column_int64(read_, 0);
    account.spent_units = sqlite3_column_int64(read_, 1);
    account.total_delta_units = delta_units_column(2);
    const DeltaUnits spent_delta = account.spent_delta_units = delta_units_column(3);
    sqlite3_reset(read_);
    // The rule is the core's (core/ledger_rule.hpp), the same as PostgreSQL's ledger.
    // Only a ledger with a delta budget reads (and keeps) its history's summary.
    const bool needs_history = ledger_needs_history(account);
    zcdp::History history;
    std::int64_t last_id = 0;
    bool rebuilt = false;
    if (needs_history) history = read_history(last_id, rebuilt);
    const std::string why =
        ledger_refusal(account, history, c, "dp_ledger_attach(path, total_epsilon, total_delta)");
    if (!why.empty()) {
      if (rebuilt) {  // keep the summary rebuilt for the next charge
        write_history(history, last_id);
        exec("COMMIT");
      }
      throw std::runtime_error(why);
    }
    sqlite3_reset(insert_);
    sqlite3_bind_text(insert_, 1, function, -1, SQLITE_STATIC);
    sqlite3_bind_double(insert_, 2, epsilon);
    sqlite3_bind_int64(insert_, 3, units);
    if (sql) sqlite3_bind_text(insert_, 4, sql, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(insert_, 4);
    sqlite3_bind_int64(insert_, 5, static_cast<std::int64_t>(getpid()));
    sqlite3_bind_double(insert_, 6, delta);
    const std::string delta_text = delta_units_text(delta_units);
    sqlite3_bind_text(insert_, 7, delta_text.c_str(), -1, SQLITE_TRANSIENT);
    if (released_keys) sqlite3_bind_int64(insert_, 8, *released_keys);
    else sqlite3_bind_null(insert_, 8);
    sqlite3_bind_double(insert_, 9, rho);
    sqlite3_bind_int64(insert_, 10, c.shift);
    const int ins = sqlite3_step(insert_);
    sqlite3_reset(insert_);
    sqlite3_clear_bindings(insert_);
    if (ins != SQLITE_DONE)
      throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + sqlite3_errmsg(db_));
    const std::int64_t id = sqlite3_last_insert_rowid(db_);
    sqlite3_reset(update_);
    sqlite3_bind_int64(update_, 1, units);
    const std::string spent_delta_text = delta_units_text(spent_delta + delta_units);
    sqlite3_bind_text(update_, 2, spent_delta_text.c_str(), -1, SQLITE_TRANSIENT);
    const int upd = sqlite3_step(update_);
    sqlite3_reset(update_);
    if (upd != SQLITE_DONE)
      throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + sqlite3_errmsg(db_));
    if (needs_history) {  // after the insert, whose trigger emptied the summary
      history.add(ledger_entry(c.epsilon, c.delta, c.rho, c.shift));
      write_history(history, id);
    }
    exec("COMMIT");  // durable before the value is released
    return id;
  } catch (...) {
    sqlite3_reset(read_);
    sqlite3_reset(history_);
    sqlite3_reset(kept_);
    sqlite3_reset(last_id_);
    sqlite3_reset(keep_);
    rollback();
    throw;
  }
}

void Ledger::record_released_keys(std::int64_t id, std::int64_t released_keys) {
  if (!keys_ &&
      sqlite3_prepare_v3(db_, "UPDATE optdp_charges SET released_keys = ?2 WHERE id = ?1", -1,
                         SQLITE_PREPARE_PERSISTENT, keys_.out(), nullptr) != SQLITE_OK)
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + sqlite3_errmsg(db_));
  sqlite3_reset(keys_);
  sqlite3_bind_int64(keys_, 1, id);
  sqlite3_bind_int64(keys_, 2, released_keys);
  const int rc = sqlite3_step(keys_);
  sqlite3_reset(keys_);
  if (rc != SQLITE_DONE)
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be written: " + sqlite3_errmsg(db_));
}

Ledger::Spent Ledger::spent_units() {
  sqlite3_reset(read_);
  const int rc = sqlite3_step(read_);
  if (rc != SQLITE_ROW) {
    sqlite3_reset(read_);
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
  }
  Spent spent{sqlite3_column_int64(read_, 1), 0};
  try {
    spent.delta_units = delta_units_column(3);
  } catch (...) {
    sqlite3_reset(read_);
    throw;
  }
  sqlite3_reset(read_);
  return spent;
}

double Ledger::spent() { return units_to_epsilon(spent_units().epsilon_units); }

double Ledger::remaining() { return units_to_epsilon(total_units_ - spent_units().epsilon_units); }

double Ledger::delta_spent() { return units_to_delta(spent_units().delta_units); }

double Ledger::delta_remaining() {
  const DeltaUnits spent = spent_units().delta_units;
  return spent <= total_delta_units_ ? units_to_delta(total_delta_units_ - spent)
                                     : -units_to_delta(spent - total_delta_units_);  // only if the file was altered
}

std::vector<Ledger::Entry> Ledger::entries() {
  Stmt q;
  if (sqlite3_prepare_v2(db_,
                         "SELECT id, time, function, epsilon, delta, released_keys, sql, pid, rho FROM optdp_charges "
                         "ORDER BY id",
                         -1, q.out(), nullptr) != SQLITE_OK)
    throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
  std::vector<Entry> out;
  int rc;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    Entry e;
    e.id = sqlite3_column_int64(q, 0);
    e.time = reinterpret_cast<const char*>(sqlite3_column_text(q, 1));
    e.function = reinterpret_cast<const char*>(sqlite3_column_text(q, 2));
    e.epsilon = sqlite3_column_double(q, 3);
    e.delta = sqlite3_column_double(q, 4);
    if (sqlite3_column_type(q, 5) != SQLITE_NULL) e.released_keys = sqlite3_column_int64(q, 5);
    if (sqlite3_column_type(q, 6) != SQLITE_NULL) e.sql = reinterpret_cast<const char*>(sqlite3_column_text(q, 6));
    e.pid = sqlite3_column_int64(q, 7);
    e.rho = sqlite3_column_double(q, 8);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) throw std::runtime_error("the ledger " + quote_text(path_, kMaxPathShown) + " cannot be read: " + sqlite3_errmsg(db_));
  return out;
}

}  // namespace optdp::sql
