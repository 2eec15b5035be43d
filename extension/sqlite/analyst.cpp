#include "sqlite/analyst.hpp"

#include <cctype>
#include <stdexcept>
#include <vector>

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

namespace {

// One item of the declaration: name, name(unit) or name(unit -> parent.column).
struct Item {
  std::string table, column, parent, parent_column;
};

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

bool is_name(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$')) return false;
  return true;
}

// Parses "patients(id), visits(patient_id -> patients.id), notes": items
// separated by commas outside parentheses. Throws std::invalid_argument.
std::vector<Item> parse_tables(std::string_view text) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  std::vector<Item> items;
  for (const std::string& raw : parts) {
    const std::string part = trim(raw);
    if (part.empty()) continue;
    const std::string bad = "tables must declare each table as name, name(unit_column) or name(unit_column -> "
                            "parent.unit_column), but '" + part + "' is not one";
    Item it;
    const auto open = part.find('(');
    if (open == std::string::npos) {
      it.table = part;
      if (part.find(')') != std::string::npos) throw std::invalid_argument(bad);
      items.push_back(it);
      continue;
    }
    if (part.back() != ')') throw std::invalid_argument(bad);
    it.table = trim(part.substr(0, open));
    const std::string inside = part.substr(open + 1, part.size() - open - 2);
    const auto arrow = inside.find("->");
    it.column = trim(inside.substr(0, arrow));
    if (arrow != std::string::npos) {
      const std::string target = trim(inside.substr(arrow + 2));
      const auto dot = target.find('.');
      if (dot == std::string::npos) throw std::invalid_argument(bad);
      it.parent = trim(target.substr(0, dot));
      it.parent_column = trim(target.substr(dot + 1));
      if (!is_name(it.parent) || !is_name(it.parent_column)) throw std::invalid_argument(bad);
    }
    if (!is_name(it.table) || !is_name(it.column)) throw std::invalid_argument(bad);
    items.push_back(it);
  }
  return items;
}

}  // namespace

// Turns analyst mode on for conn (or adds private tables to it), with their
// units (units.hpp); throws std::invalid_argument naming a table that is not
// in main, a column it does not have, or a link that is not to a unit column
// declared in the same call. A table's declaration is fixed once made.
// from_sql: called through SQL (dp_analyst_mode), which the analyst can call
// too once the mode is on; units and links can then only be repeated, never
// added (a link the analyst declared would let a table they wrote decide how
// often a private row is read). The C API is the host's own.
void enable_analyst_mode(Connection& conn, std::string_view tables, Authorizer app, void* app_data,
                         bool from_sql) {
  sqlite3* db = conn.db();
  const std::vector<Item> items = parse_tables(tables);
  UnitDecls decls;
  for (const Item& it : items) {
    if (sqlite3_table_column_metadata(db, "main", it.table.c_str(), nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr) != SQLITE_OK)
      throw std::invalid_argument("tables must name tables of the main database, but '" + it.table + "' is not one");
    if (!it.column.empty() && sqlite3_table_column_metadata(db, "main", it.table.c_str(), it.column.c_str(), nullptr,
                                                            nullptr, nullptr, nullptr, nullptr) != SQLITE_OK)
      throw std::invalid_argument("tables must name a column of each table as its unit, but '" + it.column +
                                  "' is not a column of '" + it.table + "'");
    UnitDecl d{lower(it.column), lower(it.parent), ""};
    const std::string t = lower(it.table);
    if (decls.count(t) && (decls[t].column != d.column || decls[t].parent != d.parent))
      throw std::invalid_argument("tables must declare each table once, but declares '" + it.table + "' twice");
    decls[t] = d;
  }
  if (decls.empty()) throw std::invalid_argument("tables must name at least one private table (it names none)");
  for (const Item& it : items) {
    if (it.parent.empty()) continue;
    auto p = decls.find(lower(it.parent));
    if (p == decls.end())
      throw std::invalid_argument("tables must link each table to a table declared with it, but '" + it.parent +
                                  "' is not one");
    if (p->second.column.empty() || p->second.column != lower(it.parent_column))
      throw std::invalid_argument("tables must link each table to the unit column of its parent, but links '" +
                                  it.table + "' to '" + it.parent + "." + it.parent_column + "'");
  }
  // Each table's family: the root of its links (no cycles).
  for (auto& [t, d] : decls) {
    std::string root = t;
    for (std::size_t steps = 0; !decls.at(root).parent.empty(); ++steps) {
      if (steps > decls.size())
        throw std::invalid_argument("tables must not link tables in a cycle, but '" + t + "' is in one");
      root = decls.at(root).parent;
    }
    d.family = root;
  }
  AnalystMode& m = conn.analyst_mode();
  const bool on = !m.private_tables.empty();
  // Fixed for the connection's life: a table declared before keeps its declaration.
  for (const auto& [t, d] : decls) {
    auto old = m.units.find(t);
    if (from_sql && on && old == m.units.end() && !d.column.empty())
      throw std::invalid_argument("tables must not declare a new unit once analyst mode is on (the owner declares "
                                  "units when switching it on, or from C with optdp_analyst_mode), but declares '" +
                                  t + "'");
    if (old != m.units.end() && (old->second.column != d.column || old->second.parent != d.parent))
      throw std::invalid_argument("tables must keep each declaration made earlier on this connection (it is fixed for "
                                  "the life of the connection), but changes '" + t + "'");
  }
  for (const auto& [t, d] : decls) {
    m.private_tables.insert(t);
    m.units.emplace(t, d);
  }
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
    enable_analyst_mode(conn, tables, nullptr, nullptr, /*from_sql=*/true);
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
    enable_analyst_mode(*conn, private_tables ? private_tables : "", app_authorizer, app_data, /*from_sql=*/false);
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
