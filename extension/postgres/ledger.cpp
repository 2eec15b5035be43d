// optdp for PostgreSQL: the ledger (its tables and SQL functions are in
// extension/postgres/sql/30-groups.sql and 40-ledger.sql; docs/scale.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/budget.hpp"
#include "core/format.hpp"
#include "core/ledger_rule.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"
#include "postgres/release.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "tcop/tcopprot.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "libpq-fe.h"
#include "postmaster/postmaster.h"
#include "catalog/pg_authid.h"
#include "commands/dbcommands.h"
}

namespace {

// ---- the ledger ------------------------------------------------------------------
//
// The ledger is the database's tables optdp_budget (one row, once
// dp_ledger_attach(total_epsilon) has run) and optdp_charges (one row per
// release). A release is charged before its noise is drawn, on optdp's own
// connection to the same database (libpq), by charge_release: one call of
// optdp_ledger_charge (sql/45-ledger-summary.sql), one round trip and one
// transaction, locks the budget row (FOR UPDATE, so concurrent sessions
// queue and cannot overspend), reads the kept summary of the history,
// refuses a charge that does not fit by the core's rule (core/ledger_rule.hpp,
// SQLite's ledger's rule; optdp_ledger_decide below) and records it and the
// new summary; the transaction commits before the value is released. The
// analyst's transaction can roll back; the charge stays.
// Without a budget row nothing is charged. The connection is kept per backend.
//
// optdp.ledger_conninfo says how to connect; empty (the default): the
// server's first Unix socket directory and port, the current database, and
// the bootstrap superuser, which pg_hba.conf must let the server's own OS
// user in as (Debian's default `local all postgres peer` does). It is set in
// postgresql.conf (context SIGHUP: never per session, role or database, whose
// values pg_db_role_setting shows every role) and only superusers can read
// it (SHOW, current_setting, pg_settings). It names no password: libpq reads
// one from the server user's passfile (PGPASSFILE, or passfile= in it;
// docs/scale.md), since PostgreSQL logs a reloaded setting's new value. A
// non-empty value is honoured only when optdp is preloaded: loaded later,
// optdp meets the postgresql.conf line as a placeholder any role can SHOW.
//
// The connection finds the ledger's tables in the schema of the ledger
// database's optdp extension (fixed at CREATE EXTENSION: the extension is
// not relocatable), never through the role's search_path: right after
// connecting it pins search_path to pg_catalog and that schema, and checks
// that optdp_budget, optdp_charges and optdp_summary found there are members
// of the extension (pg_depend, deptype 'e'), and that the schema has one
// function optdp_ledger_charge, the extension's. A table of the same name
// that a role created in a schema searched first (public, in an upgraded
// database) is then never read or charged.

char* ledger_conninfo = nullptr;
PGconn* ledger_conn = nullptr;
bool preloaded = false;  // loaded by shared_preload_libraries

// The ledger's schema on a new connection: search_path pinned to pg_catalog
// and the schema of the database's optdp extension, and the tables found
// there checked to be the extension's. False, with why in msg, otherwise.
bool pin_ledger_tables(PGconn* conn, char* msg, size_t n) {
  PGresult* r = PQexec(conn,
                       "SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n "
                       "ON n.oid OPERATOR(pg_catalog.=) e.extnamespace WHERE e.extname OPERATOR(pg_catalog.=) 'optdp'");
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
    if (PQresultStatus(r) == PGRES_TUPLES_OK)
      snprintf(msg, n, "the ledger cannot be reached: the ledger's database has no optdp extension");
    else
      snprintf(msg, n, "the ledger cannot be read: %s", PQerrorMessage(conn));
    PQclear(r);
    return false;
  }
  char* path = psprintf("pg_catalog, %s", quote_identifier(PQgetvalue(r, 0, 0)));
  PQclear(r);
  const char* params[] = {path};
  r = PQexecParams(conn, "SELECT pg_catalog.set_config('search_path', $1, false)", 1, nullptr, params, nullptr,
                   nullptr, 0);
  const bool pinned = PQresultStatus(r) == PGRES_TUPLES_OK;
  PQclear(r);
  pfree(path);
  if (!pinned) {
    snprintf(msg, n, "the ledger cannot be read: %s", PQerrorMessage(conn));
    return false;
  }
  r = PQexec(conn,
             "SELECT count(*) FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid "
             "WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_extension'::regclass "
             "AND d.deptype = 'e' AND e.extname = 'optdp' "
             "AND d.objid IN (to_regclass('optdp_budget'), to_regclass('optdp_charges'), "
             "to_regclass('optdp_summary')) "
             "UNION ALL SELECT count(*) FROM pg_proc p WHERE p.proname = 'optdp_ledger_charge' "
             "AND p.pronamespace = (SELECT e.extnamespace FROM pg_extension e WHERE e.extname = 'optdp') "
             "UNION ALL SELECT count(*) FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid "
             "WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass "
             "AND d.deptype = 'e' AND e.extname = 'optdp' AND d.objid = to_regprocedure("
             "'optdp_ledger_charge(text, float8, float8, float8, int8, text, int4, boolean)')");
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 3) {
    snprintf(msg, n, "the ledger cannot be read: %s", PQerrorMessage(conn));
    PQclear(r);
    return false;
  }
  // The three tables, and one function optdp_ledger_charge in that schema,
  // the extension's (the connection calls it by name: no other overload may
  // be there to be picked instead).
  const bool owned = atoll(PQgetvalue(r, 0, 0)) == 3 && atoll(PQgetvalue(r, 1, 0)) == 1 &&
                     atoll(PQgetvalue(r, 2, 0)) == 1;
  PQclear(r);
  if (!owned)
    snprintf(msg, n, "the ledger cannot be read: optdp_budget, optdp_charges, optdp_summary and optdp_ledger_charge "
                     "in the schema of the extension optdp are not all the extension's");
  return owned;
}

// Opens the connection if need be; on failure returns false with why in msg.
bool ledger_connect(char* msg, size_t n) {
  if (ledger_conn && PQstatus(ledger_conn) == CONNECTION_OK) return true;
  if (ledger_conn) {
    PQfinish(ledger_conn);
    ledger_conn = nullptr;
  }
  if (ledger_conninfo && ledger_conninfo[0]) {
    // Loaded later, optdp finds the postgresql.conf line as a placeholder,
    // which every role can read until a session loads optdp.
    if (!preloaded) {
      snprintf(msg, n, "optdp.ledger_conninfo is honoured only with optdp in shared_preload_libraries (there it is "
                       "superuser-only from the server's start)");
      return false;
    }
    ledger_conn = PQconnectdb(ledger_conninfo);
  } else {
    char port[16];
    snprintf(port, sizeof port, "%d", PostPortNumber);
    char* dirs = pstrdup(Unix_socket_directories ? Unix_socket_directories : "");
    char* comma = strchr(dirs, ',');
    if (comma) *comma = 0;
    const char* host = dirs[0] ? dirs : "/var/run/postgresql";
    const char* keys[] = {"host", "port", "dbname", "user", "application_name", nullptr};
    const char* vals[] = {host, port, get_database_name(MyDatabaseId), GetUserNameFromId(BOOTSTRAP_SUPERUSERID, false),
                          "optdp ledger", nullptr};
    ledger_conn = PQconnectdbParams(keys, vals, 0);
  }
  if (PQstatus(ledger_conn) != CONNECTION_OK) {
    snprintf(msg, n, "the ledger cannot be reached: %s", PQerrorMessage(ledger_conn));
    PQfinish(ledger_conn);
    ledger_conn = nullptr;
    return false;
  }
  if (!pin_ledger_tables(ledger_conn, msg, n)) {
    PQfinish(ledger_conn);
    ledger_conn = nullptr;
    return false;
  }
  return true;
}

// Closes the connection after a failed statement: the next release connects
// again and pins the ledger's schema again (the extension may have been
// dropped and created anew).
void ledger_disconnect() {
  if (ledger_conn) PQfinish(ledger_conn);
  ledger_conn = nullptr;
}

// Values of a binary-format result (PQexecParams with resultFormat 1):
// float8 and int8 in network byte order, text as its bytes.
double float8_at(const PGresult* r, int row, int col) {
  std::uint64_t u;
  std::memcpy(&u, PQgetvalue(r, row, col), sizeof u);
  u = __builtin_bswap64(u);
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

std::int64_t int8_at(const PGresult* r, int row, int col) {
  std::uint64_t u;
  std::memcpy(&u, PQgetvalue(r, row, col), sizeof u);
  return static_cast<std::int64_t>(__builtin_bswap64(u));
}

// The budget row (total_epsilon, total_delta, total_units, spent_units,
// total_delta_units::text, spent_delta_units::text) into account; false if
// there is none. Takes r (cleared here). C++: throws if the row cannot be read.
bool read_account(PGresult* r, optdp::LedgerAccount& account) {
  if (PQntuples(r) == 0) {
    PQclear(r);
    return false;
  }
  account.total_epsilon = float8_at(r, 0, 0);
  account.total_delta = float8_at(r, 0, 1);
  account.total_units = int8_at(r, 0, 2);
  account.spent_units = int8_at(r, 0, 3);
  const auto td = optdp::parse_delta_units(PQgetvalue(r, 0, 4)), sd = optdp::parse_delta_units(PQgetvalue(r, 0, 5));
  PQclear(r);
  if (!td || !sd) throw std::runtime_error("the ledger cannot be read: its delta units are not counts");
  account.total_delta_units = *td;
  account.spent_delta_units = *sd;
  return true;
}

// The history's distinct rows (epsilon, delta, rho, shift, count) summarised.
// Takes r (cleared here).
optdp::zcdp::History read_groups(PGresult* r) {
  try {
    optdp::zcdp::History h;
    const int n = PQntuples(r);
    for (int i = 0; i < n; ++i)
      h.add(optdp::ledger_row_entry(float8_at(r, i, 0), float8_at(r, i, 1), float8_at(r, i, 2), int8_at(r, i, 3)),
            static_cast<std::uint64_t>(int8_at(r, i, 4)));
    PQclear(r);
    return h;
  } catch (...) {
    PQclear(r);
    throw;
  }
}

}  // namespace

namespace optdp_pg {

// Whether this database has a ledger (a budget row), asked on the ledger's connection.
bool ledger_attached(const char* function) {
  char msg[1024];
  if (!ledger_connect(msg, sizeof msg))
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  PGresult* r = PQexec(ledger_conn, "SELECT count(*) FROM optdp_budget");
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
    snprintf(msg, sizeof msg, "the ledger cannot be read: %s", PQerrorMessage(ledger_conn));
    PQclear(r);
    ledger_disconnect();
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  }
  const bool attached = atoll(PQgetvalue(r, 0, 0)) > 0;
  PQclear(r);
  return attached;
}


void connect_ledger(const char* function) {
  char msg[1024];
  if (!ledger_connect(msg, sizeof msg))
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
}

bool read_ledger(optdp::LedgerAccount& account, optdp::zcdp::History& history) {
  PGconn* conn = ledger_conn;
  if (!conn) throw std::runtime_error("the ledger cannot be reached");
  auto run = [&](const char* sql, ExecStatusType expect) {
    PGresult* r = PQexecParams(conn, sql, 0, nullptr, nullptr, nullptr, nullptr, 1);
    if (PQresultStatus(r) != expect) {
      const std::string why = std::string("the ledger cannot be read: ") + PQerrorMessage(conn);
      PQclear(r);
      throw std::runtime_error(why);
    }
    return r;
  };
  if (PQtransactionStatus(conn) != PQTRANS_IDLE) PQclear(PQexec(conn, "ROLLBACK"));
  // One statement, one snapshot: the budget, the kept summary and the last id.
  constexpr const char* kRead =
      "SELECT total_epsilon, total_delta, total_units, spent_units, total_delta_units::text, "
      "spent_delta_units::text, (SELECT s.summary FROM optdp_summary s WHERE s.id = 1), "
      "(SELECT coalesce(max(c.id), 0) FROM optdp_charges c) FROM optdp_budget WHERE id = 1";
  PGresult* r = run(kRead, PGRES_TUPLES_OK);
  std::optional<optdp::zcdp::History> kept;
  if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 6))
    kept = optdp::decode_history(std::string_view(PQgetvalue(r, 0, 6), static_cast<std::size_t>(PQgetlength(r, 0, 6))),
                                 int8_at(r, 0, 7));
  if (!read_account(r, account)) return false;
  if (kept) {
    history = std::move(*kept);
    return true;
  }
  // Stale, or not kept (a ledger without a delta budget keeps none): the
  // budget and the entries summarised, in one snapshot.
  PQclear(run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", PGRES_COMMAND_OK));
  try {
    const bool attached = read_account(run("SELECT total_epsilon, total_delta, total_units, spent_units, "
                                           "total_delta_units::text, spent_delta_units::text FROM optdp_budget "
                                           "WHERE id = 1", PGRES_TUPLES_OK),
                                       account);
    if (attached)
      history = read_groups(run("SELECT epsilon, delta, rho, shift, count(*) FROM optdp_charges "
                                "GROUP BY epsilon, delta, rho, shift", PGRES_TUPLES_OK));
    PQclear(run("COMMIT", PGRES_COMMAND_OK));
    return attached;
  } catch (...) {
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) PQclear(PQexec(conn, "ROLLBACK"));
    throw;
  }
}

// One release, charged on the ledger's connection by one statement in
// autocommit (its own transaction): optdp_ledger_charge locks the budget row
// (FOR UPDATE: concurrent sessions queue, and each decides on the history the
// previous ones committed), reads the kept summary of the history, decides by
// the core's rule (core/ledger_rule.hpp, as SQLite's ledger decides), records
// the entry, the spend and the new summary, and commits before the value is
// released. Returns the entry's id, or -1 without a ledger (nothing is
// written then).
std::int64_t charge_release(const char* function, double epsilon, double delta, double rho, std::int64_t shift) {
  char msg[1024];
  if (!ledger_connect(msg, sizeof msg))
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  enum class Outcome { charged, no_ledger, seeded, refused, unreachable };
  Outcome outcome = Outcome::charged;
  std::int64_t id = -1;
  const bool seeded = backend_seeded();
  Failure f;
  run_cpp(f, function, [&] {
    PGconn* conn = ledger_conn;
    // Runs one of optdp's fixed statements (results in binary: exact
    // doubles whatever extra_float_digits says); a failure reports the
    // ledger as unreachable.
    auto run = [&](const char* sql, int n, const char* const* params, ExecStatusType expect) {
      PGresult* r = PQexecParams(conn, sql, n, nullptr, params, nullptr, nullptr, 1);
      if (PQresultStatus(r) != expect) {
        const std::string why = std::string("the ledger cannot be charged: ") + PQerrorMessage(conn);
        PQclear(r);
        outcome = Outcome::unreachable;
        throw std::runtime_error(why);
      }
      return r;
    };
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) PQclear(PQexec(conn, "ROLLBACK"));
    char eps_s[64], pid_s[16], delta_s[64], rho_s[64], shift_s[32];
    snprintf(eps_s, sizeof eps_s, "%.17g", epsilon);
    snprintf(pid_s, sizeof pid_s, "%d", MyProcPid);
    snprintf(delta_s, sizeof delta_s, "%.17g", delta);
    snprintf(rho_s, sizeof rho_s, "%.17g", rho);
    snprintf(shift_s, sizeof shift_s, "%lld", static_cast<long long>(shift));
    const char* args[] = {function, eps_s, delta_s, rho_s, shift_s, debug_query_string, pid_s,
                          seeded ? "true" : "false"};
    // One statement, in autocommit: the call is the transaction, committed
    // (durably) before the value is released (sql/45-ledger-summary.sql).
    PGresult* r = run("SELECT outcome, charge_id, message FROM optdp_ledger_charge($1::text, $2::float8, $3::float8, "
                      "$4::float8, $5::int8, $6::text, $7::int4, $8::boolean)",
                      8, args, PGRES_TUPLES_OK);
    if (PQntuples(r) != 1) {
      PQclear(r);
      outcome = Outcome::unreachable;
      throw std::runtime_error("the ledger cannot be charged: optdp_ledger_charge returned no row");
    }
    const std::string what = PQgetvalue(r, 0, 0);
    const std::string message = PQgetisnull(r, 0, 2) ? "" : std::string(PQgetvalue(r, 0, 2), PQgetlength(r, 0, 2));
    if (what == "charged") id = int8_at(r, 0, 1);
    PQclear(r);
    if (what == "charged") return;
    if (what == "no_ledger") {
      outcome = Outcome::no_ledger;
      return;
    }
    if (what == "seeded") {
      outcome = Outcome::seeded;
      throw std::runtime_error("refused: a privacy ledger is attached, and a known seed makes the noise predictable");
    }
    if (what == "refused") {
      outcome = Outcome::refused;
      throw std::runtime_error(message);
    }
    if (what == "invalid") throw std::invalid_argument(message);
    outcome = Outcome::unreachable;
    throw std::runtime_error("the ledger cannot be charged: optdp_ledger_charge returned " + what);
  });
  if (f.failed && outcome == Outcome::unreachable) {
    ledger_disconnect();
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s", f.message)));
  }
  raise(f);
  return outcome == Outcome::no_ledger ? -1 : id;
}

void record_released_keys(const char* function, std::int64_t id, std::int64_t released_keys) {
  if (id < 0) return;
  char msg[1024];
  if (!ledger_connect(msg, sizeof msg))
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  char id_s[32], keys_s[32];
  snprintf(id_s, sizeof id_s, "%lld", static_cast<long long>(id));
  snprintf(keys_s, sizeof keys_s, "%lld", static_cast<long long>(released_keys));
  const char* params[] = {keys_s, id_s};
  PGresult* r = PQexecParams(ledger_conn, "UPDATE optdp_charges SET released_keys = $1 WHERE id = $2", 2, nullptr,
                             params, nullptr, nullptr, 0);
  if (PQresultStatus(r) != PGRES_COMMAND_OK) {
    snprintf(msg, sizeof msg, "the ledger cannot be written: %s", PQerrorMessage(ledger_conn));
    PQclear(r);
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  }
  PQclear(r);
}

}  // namespace optdp_pg

using namespace optdp_pg;

extern "C" {

PGDLLEXPORT void _PG_init(void);

// ---- ledger helpers ------------------------------------------------------------

OPTDP_PG_FUNCTION(optdp_total_units);
// optdp_total_units(total_epsilon): the budget in exact units (core/budget.hpp).
Datum optdp_total_units(PG_FUNCTION_ARGS) {
  const double total = PG_GETARG_FLOAT8(0);
  Failure f;
  std::int64_t units = 0;
  run_cpp(f, "dp_ledger_attach", [&] { units = optdp::total_units(total); });
  raise(f);
  PG_RETURN_INT64(units);
}

OPTDP_PG_FUNCTION(optdp_total_delta_units);
// optdp_total_delta_units(total_delta): the delta budget in exact units of
// 2^-120 as decimal text (core/budget.hpp); the script casts it to numeric.
Datum optdp_total_delta_units(PG_FUNCTION_ARGS) {
  const double total = PG_GETARG_FLOAT8(0);
  Failure f;
  char digits[64] = "";
  run_cpp(f, "dp_ledger_attach", [&] {
    snprintf(digits, sizeof digits, "%s", optdp::delta_units_text(optdp::delta_total_units(total)).c_str());
  });
  raise(f);
  PG_RETURN_TEXT_P(cstring_to_text(digits));
}

OPTDP_PG_FUNCTION(optdp_units_to_delta);
// optdp_units_to_delta(units): a count of delta units (numeric) as the
// nearest double, for the dp_ledger_budget view (core/budget.hpp).
Datum optdp_units_to_delta(PG_FUNCTION_ARGS) {
  const char* digits = text_to_cstring(PG_GETARG_TEXT_PP(0));
  Failure f;
  double out = 0;
  run_cpp(f, "dp_ledger_budget", [&] {
    const auto u = optdp::parse_delta_units(digits);
    if (!u) throw std::invalid_argument("not a count of delta units");
    out = optdp::units_to_delta(*u);
  });
  raise(f);
  PG_RETURN_FLOAT8(out);
}

// ---- the ledger's charge, on the ledger's connection (sql/45-ledger-summary.sql) ----

namespace {

// Up to four strings in malloc'd buffers: what a C++ computation hands to
// the PostgreSQL side, where no C++ object may be alive (an ERROR there
// longjmps). Set inside run_cpp; read and freed outside.
struct Words {
  int n = 0;
  char* s[4] = {nullptr, nullptr, nullptr, nullptr};
  std::size_t len[4] = {0, 0, 0, 0};
  void set(std::initializer_list<std::string_view> v) {  // C++ side: throws std::bad_alloc
    for (std::string_view w : v) {
      char* p = static_cast<char*>(std::malloc(w.size() + 1));
      if (!p) throw std::bad_alloc();
      std::memcpy(p, w.data(), w.size());
      p[w.size()] = 0;
      s[n] = p;
      len[n++] = w.size();
    }
  }
  void free_all() {
    for (int i = 0; i < n; ++i) std::free(s[i]);
    n = 0;
  }
};

// A text[] of the words (PostgreSQL side); frees them.
ArrayType* text_array(Words& w) {
  Datum d[4];
  for (int i = 0; i < w.n; ++i) d[i] = PointerGetDatum(cstring_to_text_with_len(w.s[i], static_cast<int>(w.len[i])));
  const int n = w.n;
  w.free_all();
  return construct_array(d, n, TEXTOID, -1, false, TYPALIGN_INT);
}

}  // namespace

OPTDP_PG_FUNCTION(optdp_ledger_decide);
// optdp_ledger_decide(total_epsilon, total_delta, total_units, spent_units,
// total_delta_units, spent_delta_units, kept summary (NULL: none), last id,
// epsilon, delta, rho, shift, new id): the core's rule on the kept summary
// (core/ledger_rule.hpp). Not STRICT: kept may be NULL.
Datum optdp_ledger_decide(PG_FUNCTION_ARGS) {
  for (int i = 0; i < PG_NARGS(); ++i)
    if (i != 6 && PG_ARGISNULL(i)) PG_RETURN_NULL();
  const double total_epsilon = PG_GETARG_FLOAT8(0), total_delta = PG_GETARG_FLOAT8(1);
  const std::int64_t total_units = PG_GETARG_INT64(2), spent_units = PG_GETARG_INT64(3);
  const char* tdu = text_to_cstring(PG_GETARG_TEXT_PP(4));
  const char* sdu = text_to_cstring(PG_GETARG_TEXT_PP(5));
  text* kept_t = PG_ARGISNULL(6) ? nullptr : PG_GETARG_TEXT_PP(6);
  const std::int64_t last_id = PG_GETARG_INT64(7);
  const double epsilon = PG_GETARG_FLOAT8(8), delta = PG_GETARG_FLOAT8(9), rho = PG_GETARG_FLOAT8(10);
  const std::int64_t shift = PG_GETARG_INT64(11), new_id = PG_GETARG_INT64(12);
  const char* kept_p = kept_t ? VARDATA_ANY(kept_t) : nullptr;
  const std::size_t kept_n = kept_t ? VARSIZE_ANY_EXHDR(kept_t) : 0;
  Failure f;
  Words words;
  run_cpp(f, "optdp_ledger_decide", [&] {
    optdp::LedgerAccount account;
    account.total_epsilon = total_epsilon;
    account.total_delta = total_delta;
    account.total_units = total_units;
    account.spent_units = spent_units;
    const auto td = optdp::parse_delta_units(tdu), sd = optdp::parse_delta_units(sdu);
    if (!td || !sd) throw std::runtime_error("the ledger cannot be read: its delta units are not counts");
    account.total_delta_units = *td;
    account.spent_delta_units = *sd;
    optdp::LedgerCharge c;
    try {
      c = optdp::ledger_charge(epsilon, delta, rho, shift);
    } catch (const std::invalid_argument& e) {
      words.set({"invalid", e.what()});
      return;
    }
    optdp::zcdp::History history;
    const bool needs_history = optdp::ledger_needs_history(account);
    if (needs_history) {
      auto kept = kept_p ? optdp::decode_history(std::string_view(kept_p, kept_n), last_id) : std::nullopt;
      if (!kept) {
        words.set({"stale"});
        return;
      }
      history = std::move(*kept);
    }
    const std::string why = optdp::ledger_refusal(account, history, c, "dp_ledger_attach(total_epsilon, total_delta)");
    if (!why.empty()) {
      words.set({"refused", why});
      return;
    }
    std::string next;
    if (needs_history) {
      history.add(optdp::ledger_entry(c.epsilon, c.delta, c.rho, c.shift));
      next = optdp::encode_history(history, new_id);
    }
    const std::string units = std::to_string(c.units), delta_units = optdp::delta_units_text(c.delta_units);
    words.set({"charged", units, delta_units, next});
  });
  if (f.failed) words.free_all();
  raise(f);
  PG_RETURN_ARRAYTYPE_P(text_array(words));
}

OPTDP_PG_FUNCTION(optdp_ledger_summarise);
// optdp_ledger_summarise(epsilons, deltas, rhos, shifts, counts, last id):
// encode_history of the history whose distinct rows and counts these are.
Datum optdp_ledger_summarise(PG_FUNCTION_ARGS) {
  ArrayType* arrays[5];
  for (int i = 0; i < 5; ++i) arrays[i] = PG_GETARG_ARRAYTYPE_P(i);
  const std::int64_t last_id = PG_GETARG_INT64(5);
  Datum* elems[5];
  bool* nulls[5];
  int n[5];
  for (int i = 0; i < 5; ++i) {
    const bool is_float = i < 3;
    deconstruct_array(arrays[i], is_float ? FLOAT8OID : INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems[i],
                      &nulls[i], &n[i]);
  }
  for (int i = 1; i < 5; ++i)
    if (n[i] != n[0]) ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                                      errmsg("optdp_ledger_summarise: the arrays must have one length")));
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < n[0]; ++j)
      if (nulls[i][j]) ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                                       errmsg("optdp_ledger_summarise: the ledger cannot be read: a NULL value")));
  Failure f;
  Words encoded;
  run_cpp(f, "optdp_ledger_summarise", [&] {
    optdp::zcdp::History h;
    for (int j = 0; j < n[0]; ++j) {
      const std::int64_t count = DatumGetInt64(elems[4][j]);
      if (count < 0) throw std::invalid_argument("the ledger cannot be read: a negative count");
      h.add(optdp::ledger_row_entry(DatumGetFloat8(elems[0][j]), DatumGetFloat8(elems[1][j]),
                                    DatumGetFloat8(elems[2][j]), DatumGetInt64(elems[3][j])),
            static_cast<std::uint64_t>(count));
    }
    encoded.set({optdp::encode_history(h, last_id)});
  });
  if (f.failed) encoded.free_all();
  raise(f);
  text* t = cstring_to_text_with_len(encoded.s[0], static_cast<int>(encoded.len[0]));
  encoded.free_all();
  PG_RETURN_TEXT_P(t);
}

void _PG_init(void) {
  preloaded = process_shared_preload_libraries_in_progress;
  DefineCustomStringVariable("optdp.ledger_conninfo",
                             "How optdp connects to this database to charge the ledger (empty: the server's Unix "
                             "socket, the current database, the bootstrap superuser); a password belongs in a "
                             "passfile, never here.",
                             nullptr, &ledger_conninfo, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY | GUC_NOT_IN_SAMPLE,
                             nullptr, nullptr, nullptr);
  define_state_key();  // states.cpp
  install_release_hooks();  // release.cpp
  install_plan_hook();      // plan.cpp
  MarkGUCPrefixReserved("optdp");
}

}  // extern "C"
