#include "sqlite/guarded.hpp"

#include <cstdio>
#include <stdexcept>

#include "sqlite/sql_text.hpp"

namespace optdp::sql {

GuardedDb::GuardedDb(const std::string& path) : path_(path) {
  // SQLITE_OPEN_NOMUTEX: this connection takes no mutex of its own. optdp
  // uses it only from callbacks of the user's connection that owns it
  // (guarded_db), which SQLite runs holding that connection's mutex, or the
  // application serialises when it opened its connection without one; so its
  // calls never run concurrently. Without the flag every sqlite3_column_value
  // and sqlite3_step locked and unlocked a mutex: 6% of private_groups' time
  // per row (bench/README.md, "Grouped releases").
  const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("cannot open the database for reading: " + why);
  }
  sqlite3_db_config(db_, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_busy_timeout(db_, 10000);
  sqlite3_set_authorizer(db_, check_query, &check_);
}

GuardedDb::~GuardedDb() { sqlite3_close_v2(db_); }

Stmt GuardedDb::prepare(std::string_view text, const char* what,
                        bool (*may_read)(void* self, const char* schema, const char* table), void* self) {
  check_ = QueryCheck{};
  check_.may_read = may_read;
  check_.may_read_self = self;
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v3(db_, text.data(), static_cast<int>(text.size()), SQLITE_PREPARE_NO_VTAB, &raw,
                                    &tail);
  Stmt s(raw);
  if (!check_.refused.empty()) throw std::invalid_argument(refusal_message(check_, what));
  if (rc != SQLITE_OK) throw std::invalid_argument(std::string(what) + " does not prepare: " + sqlite3_errmsg(db_));
  if (!s) throw std::invalid_argument(std::string(what) + " must be a query, but is empty");
  const std::string_view rest(tail, static_cast<std::size_t>(text.data() + text.size() - tail));
  for (const Token& t : tokenize(rest))
    if (!is_punct(rest, t, ';'))
      throw std::invalid_argument(std::string(what) + " must be one statement, but has more after it");
  if (!sqlite3_stmt_readonly(s.get()))
    throw std::invalid_argument(std::string(what) + " must be a read-only query (SELECT)");
  return s;
}

Stmt GuardedDb::explain(std::string_view text, const char* what) {
  check_ = QueryCheck{};
  std::string sql = "EXPLAIN ";
  sql.append(text);
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()), SQLITE_PREPARE_NO_VTAB, &raw,
                                    nullptr);
  Stmt s(raw);
  if (rc != SQLITE_OK || !s || !check_.refused.empty())
    throw std::invalid_argument(std::string(what) + " does not prepare a second time (its program cannot be checked)");
  return s;
}

void GuardedDb::schema_query(const char* sql, const std::function<void(sqlite3_stmt*)>& bind,
                             const std::function<void(sqlite3_stmt*)>& row) {
  own_statement(sql, bind, row, "cannot read the schema: ");
}

void GuardedDb::own_statement(const char* sql, const std::function<void(sqlite3_stmt*)>& bind,
                              const std::function<void(sqlite3_stmt*)>& row, const char* failed) {
  // Not by switching the authorizer off: setting one expires every prepared
  // statement of the connection, the rows query's among them.
  struct Restore {
    QueryCheck& c;
    ~Restore() { c = QueryCheck{}; }
  } restore{check_};
  check_ = QueryCheck{};
  check_.schema_only = true;
  sqlite3_stmt* raw = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr) != SQLITE_OK)
    throw std::runtime_error(failed + std::string(sqlite3_errmsg(db_)));
  Stmt s(raw);
  if (bind) bind(s.get());
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) row(s.get());
  if (rc != SQLITE_DONE) throw std::runtime_error(failed + std::string(sqlite3_errmsg(db_)));
}

namespace {

// The limit of db's main file, which its PRAGMA mmap_size sets (-1 asks
// without setting); -1 if its VFS does not answer.
sqlite3_int64 mmap_limit(sqlite3* db) {
  sqlite3_int64 limit = -1;
  return sqlite3_file_control(db, "main", SQLITE_FCNTL_MMAP_SIZE, &limit) == SQLITE_OK ? limit : -1;
}

}  // namespace

void GuardedDb::follow_mmap(sqlite3* user) {
  const sqlite3_int64 limit = mmap_limit(user);
  if (limit < 0 || limit == mmap_limit(db_)) return;
  // The pager maps the file only under its own limit, which only the pragma
  // sets (and with it the file's, compared above): the file control alone
  // would set the file's, which the pager does not consult. The text is
  // optdp's, a constant but for this integer.
  char sql[64];
  std::snprintf(sql, sizeof sql, "PRAGMA main.mmap_size = %lld", static_cast<long long>(limit));
  own_statement(sql, nullptr, [](sqlite3_stmt*) {}, "cannot set mmap_size on optdp's connection: ");
}

void GuardedDb::refresh_schema() {
  schema_query("SELECT count(*) FROM main.sqlite_schema", nullptr, [](sqlite3_stmt*) {});
}

GuardedDb& guarded_db(sqlite3* db, std::unique_ptr<GuardedDb>& cache) {
  const char* file = sqlite3_db_filename(db, "main");
  if (!file || !*file)
    throw std::invalid_argument(
        "the main database has no file (\":memory:\" or temporary): optdp runs the queries it is given on its own "
        "read-only connection to the database file (docs/boundary.md)");
  if (!cache || cache->path() != file) {
    cache.reset();
    cache = std::make_unique<GuardedDb>(file);
  }
  cache->follow_mmap(db);
  return *cache;
}

}  // namespace optdp::sql
