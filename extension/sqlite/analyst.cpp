#include "sqlite/analyst.hpp"

#include <cctype>
#include <sstream>
#include <stdexcept>

#include "optdp/optdp.h"
#include "sqlite/allowlist.hpp"
#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/functions.hpp"

namespace optdp::sql {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_private(const AnalystMode& m, const char* table, const char* schema) {
  return is_private_table(m, table, schema);
}

// Tables that describe private tables: their sizes (sqlite_stat1..4, dbstat)
// or their contents' shape (the table-valued pragmas).
bool describes_tables(const char* table) {
  if (!table) return false;
  const std::string t = lower(table);
  return t.rfind("sqlite_stat", 0) == 0 || t == "dbstat" || t.rfind("pragma_", 0) == 0;
}

int refuse(AnalystMode& m, std::string why) {
  m.last_refusal = std::move(why);
  return SQLITE_DENY;
}

// optdp's decision alone: SQLITE_OK or SQLITE_DENY (with the reason recorded).
int decide(AnalystMode& m, int action, const char* a, const char* b, const char* schema) {
  const std::string A = a ? a : "", B = b ? b : "";
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_TEMP_TABLE:
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_TEMP_VIEW:
    case SQLITE_DROP_VIEW:
    case SQLITE_DROP_TEMP_VIEW:
      return SQLITE_OK;
    case SQLITE_READ:
      if (is_private(m, a, schema))
        return refuse(m, "reads private table " + A + " (in analyst mode only private_groups' queries may)");
      if (describes_tables(a)) return refuse(m, "reads " + A + ", which describes the tables");
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      if (lower(B) == "dp_seed") return refuse(m, "calls dp_seed() (a known seed makes the noise predictable)");
      if (function_allowed(B) || is_optdp_function(B)) return SQLITE_OK;
      return refuse(m, "calls " + B + "() (not on optdp's allow-list of functions that cannot fail on a value)");
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_TEMP_TABLE:
      if (is_private(m, a, schema) || (action == SQLITE_DROP_TEMP_TABLE && m.private_tables.count(lower(A))))
        return refuse(m, "changes private table " + A);
      return SQLITE_OK;
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_TEMP_INDEX:
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_TEMP_INDEX:
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_CREATE_TEMP_TRIGGER:
    case SQLITE_DROP_TRIGGER:
    case SQLITE_DROP_TEMP_TRIGGER:
      // b is the table: a trigger or index on a private table would run on
      // its rows (and the TEMP forms name tables of any schema).
      if (m.private_tables.count(lower(B))) return refuse(m, "changes private table " + B);
      return SQLITE_OK;
    case SQLITE_ALTER_TABLE:
      if (m.private_tables.count(lower(B))) return refuse(m, "changes private table " + B);
      return SQLITE_OK;
    case SQLITE_RECURSIVE: return refuse(m, "uses a recursive CTE (its time and memory could depend on the rows)");
    case SQLITE_PRAGMA: return refuse(m, "runs PRAGMA " + A);
    case SQLITE_ATTACH:
    case SQLITE_DETACH: return refuse(m, "attaches or detaches a database");
    case SQLITE_ANALYZE: return refuse(m, "runs ANALYZE (its statistics describe the tables)");
    default: return refuse(m, "does something analyst mode does not allow (action " + std::to_string(action) + ")");
  }
}

}  // namespace

bool is_private_table(const AnalystMode& m, const char* table, const char* schema) {
  if (!table) return false;
  if (schema && lower(schema) != "main") return false;  // private tables are in main
  return m.private_tables.count(lower(table)) != 0;
}

int analyst_authorize(void* self, int action, const char* a, const char* b, const char* schema, const char* trigger) {
  auto& m = *static_cast<AnalystMode*>(self);
  try {
    const int rc = decide(m, action, a, b, schema);
    if (rc != SQLITE_OK) return rc;
  } catch (...) {  // std::bad_alloc: refuse all the same
    return SQLITE_DENY;
  }
  return m.app ? m.app(m.app_data, action, a, b, schema, trigger) : SQLITE_OK;
}

// Turns analyst mode on for conn (or adds private tables to it); throws
// std::invalid_argument naming a table that is not in main.
void enable_analyst_mode(Connection& conn, std::string_view tables, Authorizer app, void* app_data) {
  sqlite3* db = conn.db();
  std::set<std::string> names;
  std::string item;
  std::istringstream in{std::string(tables)};
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(" \t\n\r"), e = item.find_last_not_of(" \t\n\r");
    if (b == std::string::npos) continue;
    const std::string name = item.substr(b, e - b + 1);
    if (sqlite3_table_column_metadata(db, "main", name.c_str(), nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr) != SQLITE_OK)
      throw std::invalid_argument("tables must name tables of the main database, but '" + name + "' is not one");
    names.insert(lower(name));
  }
  if (names.empty()) throw std::invalid_argument("tables must name at least one private table (it names none)");
  AnalystMode& m = conn.analyst_mode();
  m.private_tables.insert(names.begin(), names.end());
  if (app) {
    m.app = app;
    m.app_data = app_data;
  }
  sqlite3_set_authorizer(db, analyst_authorize, &m);
}

// dp_analyst_mode(tables): returns the number of private tables.
void dp_analyst_mode_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guard_scalar(ctx, "dp_analyst_mode", argc, argv, [&] {
    const std::string tables(text_arg(argv[0], "tables", "table names separated by commas"));
    Connection& conn = connection(ctx);
    enable_analyst_mode(conn, tables, nullptr, nullptr);
    sqlite3_result_int64(ctx, static_cast<sqlite3_int64>(conn.analyst_mode().private_tables.size()));
  });
}

// dp_analyst_refusal(): why analyst mode refused the last statement it refused (NULL if none).
void dp_analyst_refusal_fn(sqlite3_context* ctx, int, sqlite3_value**) {
  Connection& conn = connection(ctx);
  if (!conn.has_analyst_mode() || conn.analyst_mode().last_refusal.empty()) return sqlite3_result_null(ctx);
  const std::string& r = conn.analyst_mode().last_refusal;
  sqlite3_result_text(ctx, r.c_str(), static_cast<int>(r.size()), SQLITE_TRANSIENT);
}

}  // namespace optdp::sql

extern "C" __attribute__((visibility("default"))) int optdp_analyst_mode(
    sqlite3* db, const char* private_tables,
    int (*app_authorizer)(void*, int, const char*, const char*, const char*, const char*), void* app_data,
    char** pzErrMsg) {
  using namespace optdp::sql;
  // Before optdp's first registration there is no routine table to call SQLite with (api.hpp).
  if (!optdp_sqlite3_api) return SQLITE_MISUSE;
  Connection* conn = nullptr;
  try {
    conn = Connection::for_db(db);
    enable_analyst_mode(*conn, private_tables ? private_tables : "", app_authorizer, app_data);
    Connection::release(conn);
    return SQLITE_OK;
  } catch (const std::exception& e) {
    if (pzErrMsg) *pzErrMsg = sqlite3_mprintf("optdp_analyst_mode: %s", e.what());
  } catch (...) {
    if (pzErrMsg) *pzErrMsg = sqlite3_mprintf("optdp_analyst_mode: internal error");
  }
  if (conn) Connection::release(conn);
  return SQLITE_ERROR;
}

extern "C" __attribute__((visibility("default"))) const char* optdp_analyst_refusal(sqlite3* db) {
  using namespace optdp::sql;
  if (!optdp_sqlite3_api) return nullptr;  // optdp never registered: no refusal, and no routine table
  Connection* conn = Connection::for_db(db);
  const char* r = conn->has_analyst_mode() && !conn->analyst_mode().last_refusal.empty()
                      ? conn->analyst_mode().last_refusal.c_str()
                      : nullptr;
  Connection::release(conn);
  return r;
}
