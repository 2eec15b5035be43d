#include "sqlite/vtab.hpp"

#include <new>
#include <string>

#include "sqlite/args.hpp"
#include "sqlite/connection.hpp"
#include "sqlite/params.hpp"
#include "sqlite/release.hpp"

namespace optdp::sql {

namespace {

struct Module {
  const TableFunction* fn;
  Connection* conn;
};

struct VTab {
  sqlite3_vtab base;  // first: SQLite casts
  const Module* module;
};

struct Cursor {
  sqlite3_vtab_cursor base;  // first
  std::unique_ptr<RowSource> rows;
  std::vector<ValuePtr> args;  // echoed by the hidden columns
  std::int64_t rowid = 0;
};

void set_error(sqlite3_vtab* vtab, const std::string& msg) noexcept {
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("%s", msg.c_str());
}

// Sets "<function>: <what>" as the table's error; SQLITE_NOMEM if even that cannot be allocated.
int fail(sqlite3_vtab* vtab, const char* function, const char* what) noexcept {
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("%s: %s", function, what);
  return vtab->zErrMsg ? SQLITE_ERROR : SQLITE_NOMEM;
}

int x_connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char** err) try {
  const auto* module = static_cast<const Module*>(aux);
  std::string schema = std::string("CREATE TABLE x(") + module->fn->columns;
  for (const char* p : module->fn->params) schema += std::string(", \"") + p + "\" HIDDEN";
  schema += ")";
  int rc = sqlite3_declare_vtab(db, schema.c_str());
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("%s: cannot declare the table: %s", module->fn->name, sqlite3_errmsg(db));
    return rc;
  }
  sqlite3_vtab_config(db, module->fn->random ? SQLITE_VTAB_DIRECTONLY : SQLITE_VTAB_INNOCUOUS);
  auto* vtab = static_cast<VTab*>(sqlite3_malloc(sizeof(VTab)));
  if (!vtab) return SQLITE_NOMEM;
  vtab->base = sqlite3_vtab{};
  vtab->module = module;
  *out = &vtab->base;
  return SQLITE_OK;
} catch (...) {  // only std::bad_alloc can get here
  return SQLITE_NOMEM;
}

int x_disconnect(sqlite3_vtab* vtab) {
  sqlite3_free(vtab);
  return SQLITE_OK;
}

// idxNum: bit k set when argument k has a usable equality constraint, and bit
// kLiteralShift + k when its value is a constant SQLite knows when the
// statement is prepared (sqlite3_vtab_rhs_value: a literal, not a column of
// another table nor a bound parameter); the arguments arrive in xFilter in
// argument order.
constexpr int kLiteralShift = 16;

int x_best_index(sqlite3_vtab* base, sqlite3_index_info* info) try {
  const auto* vtab = reinterpret_cast<VTab*>(base);
  const TableFunction& fn = *vtab->module->fn;
  const int nparams = static_cast<int>(fn.params.size());
  std::vector<int> usable(static_cast<std::size_t>(nparams), -1);
  unsigned unusable = 0;
  for (int c = 0; c < info->nConstraint; ++c) {
    const auto& con = info->aConstraint[c];
    const int k = con.iColumn - fn.visible;
    if (k < 0 || k >= nparams || con.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!con.usable) {
      unusable |= 1u << k;
      continue;
    }
    usable[static_cast<std::size_t>(k)] = c;
  }
  int idx = 0, argv_index = 0;
  for (int k = 0; k < nparams; ++k) {
    const int c = usable[static_cast<std::size_t>(k)];
    if (c < 0) continue;
    idx |= 1 << k;
    sqlite3_value* known = nullptr;
    if (sqlite3_vtab_rhs_value(info, c, &known) == SQLITE_OK && known) idx |= 1 << (kLiteralShift + k);
    info->aConstraintUsage[c].argvIndex = ++argv_index;
    info->aConstraintUsage[c].omit = 1;
  }
  for (int k = 0; k < fn.required; ++k) {
    if (idx & (1 << k)) continue;
    if (unusable & (1u << k)) return SQLITE_CONSTRAINT;  // another plan may supply it
    set_error(base, std::string(fn.name) + ": argument " + fn.params[static_cast<std::size_t>(k)] +
                        " is missing (call it as " + fn.name + "(" + [&] {
                          std::string s;
                          for (int p = 0; p < nparams; ++p)
                            s += (p ? ", " : "") + std::string(p < fn.required ? "" : "[") +
                                 fn.params[static_cast<std::size_t>(p)] + (p < fn.required ? "" : "]");
                          return s;
                        }() + "))");
    return SQLITE_ERROR;
  }
  info->idxNum = idx;
  info->estimatedCost = 1000;
  info->estimatedRows = 1000;
  return SQLITE_OK;
} catch (...) {  // only std::bad_alloc can get here
  return SQLITE_NOMEM;
}

int x_open(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  auto* cur = new (std::nothrow) Cursor();
  if (!cur) return SQLITE_NOMEM;
  *out = &cur->base;
  return SQLITE_OK;
}

int x_close(sqlite3_vtab_cursor* base) {
  delete reinterpret_cast<Cursor*>(base);
  return SQLITE_OK;
}

int x_filter(sqlite3_vtab_cursor* base, int idx, const char*, int argc, sqlite3_value** argv) {
  auto* cur = reinterpret_cast<Cursor*>(base);
  auto* vtab = reinterpret_cast<VTab*>(base->pVtab);
  const TableFunction& fn = *vtab->module->fn;
  bool shown = true;
  try {
    cur->rows.reset();
    cur->args.clear();
    cur->rowid = 0;
    std::vector<sqlite3_value*> params(fn.params.size(), nullptr);
    int a = 0;
    shown = true;
    for (std::size_t k = 0; k < fn.params.size(); ++k) {
      if (!(idx & (1 << k))) continue;
      if (a >= argc) throw std::logic_error("argument count mismatch");
      // A message may quote the arguments only if none can be a row's value:
      // each a literal known when the statement was prepared, or bound.
      if (!(idx & (1 << (kLiteralShift + static_cast<int>(k)))) && !sqlite3_value_frombind(argv[a])) shown = false;
      ValuePtr v(sqlite3_value_dup(argv[a++]));
      if (!v) throw std::bad_alloc();
      params[k] = v.get();
      cur->args.resize(fn.params.size());
      cur->args[k] = std::move(v);
    }
    cur->args.resize(fn.params.size());
    if (fn.release) {
      // A release's first steps, before its rows are made (open validates the
      // arguments, charges, then reads): each argument fixed before any row is
      // read, as SQLite itself knows it (a constant when the statement was
      // prepared, or a bound parameter; a column of another table or a
      // subquery is neither), no hard heap limit, and the statement's shape.
      for (std::size_t k = 0; k < fn.params.size(); ++k) {
        if (!params[k] || (idx & (1 << (kLiteralShift + static_cast<int>(k)))) || sqlite3_value_frombind(params[k]))
          continue;
        return fail(&vtab->base, fn.name,
                    (std::string(fn.params[k]) +
                     " must be a literal or a bound parameter (optdp fixes the noise before it reads any row), but is "
                     "an expression")
                        .c_str());
      }
      // Its messages quote the statement's text, never a value: shown as they are.
      try {
        refuse_under_heap_limit();
        check_release_shape(vtab->module->conn->db(), fn.name);
      } catch (const std::invalid_argument& e) {
        return fail(&vtab->base, fn.name, e.what());
      }
    }
    cur->rows = fn.open(params.data(), *vtab->module->conn);
    return SQLITE_OK;
  } catch (const std::bad_alloc&) {
    return SQLITE_NOMEM;
  } catch (const std::exception& e) {
    return fail(&vtab->base, fn.name, shown ? e.what() : hide_values(e.what()).c_str());
  } catch (...) {
    return fail(&vtab->base, fn.name, "internal error");
  }
}

int x_next(sqlite3_vtab_cursor* base) {
  auto* cur = reinterpret_cast<Cursor*>(base);
  cur->rows->next();
  ++cur->rowid;
  return SQLITE_OK;
}

int x_eof(sqlite3_vtab_cursor* base) {
  auto* cur = reinterpret_cast<Cursor*>(base);
  return !cur->rows || cur->rows->eof();
}

int x_column(sqlite3_vtab_cursor* base, sqlite3_context* ctx, int c) {
  auto* cur = reinterpret_cast<Cursor*>(base);
  const TableFunction& fn = *reinterpret_cast<VTab*>(base->pVtab)->module->fn;
  if (c < fn.visible) {
    cur->rows->column(ctx, c);
  } else {
    const auto k = static_cast<std::size_t>(c - fn.visible);
    if (k < cur->args.size() && cur->args[k]) sqlite3_result_value(ctx, cur->args[k].get());
  }
  return SQLITE_OK;
}

int x_rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  *rowid = reinterpret_cast<Cursor*>(base)->rowid;
  return SQLITE_OK;
}

sqlite3_module make_module() {
  sqlite3_module m{};
  m.iVersion = 0;
  m.xCreate = nullptr;  // eponymous only: no CREATE VIRTUAL TABLE
  m.xConnect = x_connect;
  m.xBestIndex = x_best_index;
  m.xDisconnect = x_disconnect;
  m.xOpen = x_open;
  m.xClose = x_close;
  m.xFilter = x_filter;
  m.xNext = x_next;
  m.xEof = x_eof;
  m.xColumn = x_column;
  m.xRowid = x_rowid;
  return m;
}
const sqlite3_module kModule = make_module();

void destroy_module(void* p) {
  auto* m = static_cast<Module*>(p);
  Connection::release(m->conn);
  delete m;
}

}  // namespace

int register_table_function(sqlite3* db, const TableFunction& fn, Connection* conn) {
  auto* m = new (std::nothrow) Module{&fn, conn};
  if (!m) return SQLITE_NOMEM;
  conn->retain();
  // On failure SQLite calls destroy_module itself.
  return sqlite3_create_module_v2(db, fn.name, &kModule, m, destroy_module);
}

}  // namespace optdp::sql
