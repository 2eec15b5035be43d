// optdp SQLite bindings: the connection on which optdp runs the queries it
// is given for a release (private_groups' rows_query and keys_query).
//
// It is optdp's own read-only connection to the main database file of the
// user's connection, so that what the query may do is decided by optdp, not
// by the user's connection's state:
//  - the user's TEMP views, triggers and tables do not exist there, nor do
//    the functions and virtual tables registered on the user's connection;
//  - every query is prepared with SQLITE_PREPARE_NO_VTAB (no virtual table,
//    optdp's included, directly or through a view) and checked by the
//    allow-list authorizer (allowlist.hpp) when it is prepared, before any
//    row is read;
//  - trusted_schema is off and defensive mode on, load_extension disabled.
// It sees the database as committed: changes of an open transaction on the
// user's connection are not visible to it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "sqlite/allowlist.hpp"
#include "sqlite/api.hpp"
#include "sqlite/stmt.hpp"

namespace optdp::sql {

class GuardedDb {
 public:
  // Opens the database file at path read-only; throws std::runtime_error.
  explicit GuardedDb(const std::string& path);
  ~GuardedDb();
  GuardedDb(const GuardedDb&) = delete;
  GuardedDb& operator=(const GuardedDb&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* db() const { return db_; }

  // Prepares `text`, the argument `what`, which must be one read-only query
  // that the allow-list admits (no virtual table). Throws
  // std::invalid_argument("<what> ...") naming what was refused.
  // may_read (with self): as QueryCheck's, e.g. to refuse private tables.
  Stmt prepare(std::string_view text, const char* what,
               bool (*may_read)(void* self, const char* schema, const char* table) = nullptr, void* self = nullptr);

  // The program SQLite prepares for `text` (which prepare() just admitted):
  // "EXPLAIN " followed by text, prepared with the same checks, one row per
  // instruction (addr, opcode, p1, p2, p3, p4, p5, comment). Reads no row.
  Stmt explain(std::string_view text, const char* what);

  // Runs optdp's own constant query `sql` on the schema (sqlite_schema,
  // pragma_table_info of main), with bind to bind its parameters and row
  // called for each row. The allow-list's authorizer admits reads and
  // table-valued pragmas meanwhile (they consult it when they run).
  // Brings the connection's copy of the schema up to date (a read of
  // sqlite_schema: SQLite reloads a schema another connection changed when a
  // statement starts reading, not when one is prepared), so that a statement
  // prepared next is not prepared again when it first runs.
  void refresh_schema();

  void schema_query(const char* sql, const std::function<void(sqlite3_stmt*)>& bind,
                    const std::function<void(sqlite3_stmt*)>& row);

  // Reads with the memory-mapped I/O limit of `user`'s main database file,
  // as the user's own connection does (their PRAGMA mmap_size; 0, no
  // mapping, by default): a public setting of the caller, read before the
  // queries are prepared. Throws std::runtime_error if the pragma fails.
  void follow_mmap(sqlite3* user);

 private:
  void own_statement(const char* sql, const std::function<void(sqlite3_stmt*)>& bind,
                     const std::function<void(sqlite3_stmt*)>& row, const char* failed);

  std::string path_;
  sqlite3* db_ = nullptr;
  QueryCheck check_;
};

// The guarded connection for db's main database (opened on first use and
// kept; reopened if the main database's file changed), reading with db's
// mmap limit (follow_mmap). Throws std::invalid_argument when the main
// database has no file (":memory:" or a temporary database), which optdp
// cannot open a second connection to.
GuardedDb& guarded_db(sqlite3* db, std::unique_ptr<GuardedDb>& cache);

}  // namespace optdp::sql
