// optdp for PostgreSQL: the ledger (its tables and SQL functions are in
// extension/postgres/sql/30-groups.sql and 40-ledger.sql; docs/scale.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
// connection to the same database (libpq), by charge_release: in one
// transaction it locks the budget row (FOR UPDATE, so concurrent sessions
// queue and cannot overspend), reads the history, refuses a charge that does
// not fit by the core's rule (core/ledger_rule.hpp, SQLite's ledger's rule)
// and records it; the transaction commits before the value is released. The
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
// that optdp_budget and optdp_charges found there are members of the
// extension (pg_depend, deptype 'e'). A table of the same name that a role
// created in a schema searched first (public, in an upgraded database) is
// then never read or charged.

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
             "AND d.objid IN (to_regclass('optdp_budget'), to_regclass('optdp_charges'))");
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
    snprintf(msg, n, "the ledger cannot be read: %s", PQerrorMessage(conn));
    PQclear(r);
    return false;
  }
  const bool owned = atoll(PQgetvalue(r, 0, 0)) == 2;
  PQclear(r);
  if (!owned)
    snprintf(msg, n, "the ledger cannot be read: optdp_budget and optdp_charges in the schema of the extension optdp "
                     "are not both the extension's tables");
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

// A Gaussian entry's shift (bigint); one outside [0, 2^20] (not written by
// optdp) counts as none, as in SQLite's ledger.
std::int64_t shift_at(const PGresult* r, int row, int col) {
  const std::int64_t s = int8_at(r, row, col);
  return s >= 0 && s <= (1 << 20) ? s : 0;
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

// The history's rows (epsilon, delta, rho, shift) in order, as the accountant's
// entries. Takes r (cleared here).
void read_history(PGresult* r, std::vector<optdp::zcdp::Entry>& history) {
  try {
    const int n = PQntuples(r);
    history.clear();
    history.reserve(n);
    for (int i = 0; i < n; ++i)
      history.push_back(optdp::ledger_entry(float8_at(r, i, 0), float8_at(r, i, 1), float8_at(r, i, 2),
                                            shift_at(r, i, 3)));
  } catch (...) {
    PQclear(r);
    throw;
  }
  PQclear(r);
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

bool read_ledger(optdp::LedgerAccount& account, std::vector<optdp::zcdp::Entry>& history) {
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
  // One snapshot for the budget and the history.
  PQclear(run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", PGRES_COMMAND_OK));
  try {
    const bool attached = read_account(run("SELECT total_epsilon, total_delta, total_units, spent_units, "
                                           "total_delta_units::text, spent_delta_units::text FROM optdp_budget "
                                           "WHERE id = 1", PGRES_TUPLES_OK),
                                       account);
    if (attached)
      read_history(run("SELECT epsilon, delta, rho, shift FROM optdp_charges ORDER BY id", PGRES_TUPLES_OK), history);
    PQclear(run("COMMIT", PGRES_COMMAND_OK));
    return attached;
  } catch (...) {
    if (PQtransactionStatus(conn) != PQTRANS_IDLE) PQclear(PQexec(conn, "ROLLBACK"));
    throw;
  }
}

// One release, charged on the ledger's connection in one transaction: lock
// the budget row (FOR UPDATE: concurrent sessions queue, and each decides on
// the history the previous ones committed), read the history, decide by the
// core's rule (core/ledger_rule.hpp: basic composition in exact units, or
// zCDP with the tight conversion, as SQLite's ledger decides), record the
// entry and the spend, commit before the value is released. Returns the
// entry's id, or -1 without a ledger (nothing is written then).
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
    PQclear(run("BEGIN", 0, nullptr, PGRES_COMMAND_OK));
    try {  // any exception rolls the transaction back (and so releases the row lock)
      optdp::LedgerAccount account;
      if (!read_account(run("SELECT total_epsilon, total_delta, total_units, spent_units, total_delta_units::text, "
                            "spent_delta_units::text FROM optdp_budget WHERE id = 1 FOR UPDATE",
                            0, nullptr, PGRES_TUPLES_OK),
                        account)) {
        PQclear(run("COMMIT", 0, nullptr, PGRES_COMMAND_OK));
        outcome = Outcome::no_ledger;
        return;
      }
      if (seeded) {
        outcome = Outcome::seeded;
        throw std::runtime_error("refused: a privacy ledger is attached, and a known seed makes the noise predictable");
      }
      // Validated only with a ledger, as in SQLite (without one nothing is charged).
      const optdp::LedgerCharge c = optdp::ledger_charge(epsilon, delta, rho, shift);
      std::vector<optdp::zcdp::Entry> history;
      if (optdp::ledger_needs_history(account))
        read_history(run("SELECT epsilon, delta, rho, shift FROM optdp_charges ORDER BY id", 0, nullptr, PGRES_TUPLES_OK),
                     history);
      const std::string why =
          optdp::ledger_refusal(account, history, c, "dp_ledger_attach(total_epsilon, total_delta)");
      if (!why.empty()) {
        outcome = Outcome::refused;
        throw std::runtime_error(why);
      }
      char units_s[32], eps_s[64], pid_s[16], delta_s[64], rho_s[64], delta_units_s[64], shift_s[32];
      snprintf(units_s, sizeof units_s, "%lld", static_cast<long long>(c.units));
      snprintf(eps_s, sizeof eps_s, "%.17g", c.epsilon);
      snprintf(pid_s, sizeof pid_s, "%d", MyProcPid);
      snprintf(delta_s, sizeof delta_s, "%.17g", c.delta);
      snprintf(rho_s, sizeof rho_s, "%.17g", c.rho);
      snprintf(shift_s, sizeof shift_s, "%lld", static_cast<long long>(c.shift));
      snprintf(delta_units_s, sizeof delta_units_s, "%s", optdp::delta_units_text(c.delta_units).c_str());
      const char* entry[] = {function, eps_s, units_s, delta_s, delta_units_s, rho_s, debug_query_string, pid_s, shift_s};
      PGresult* r = run("INSERT INTO optdp_charges(function, epsilon, units, delta, delta_units, rho, sql, pid, shift) "
                        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id",
                        9, entry, PGRES_TUPLES_OK);
      id = int8_at(r, 0, 0);
      PQclear(r);
      const char* spend[] = {units_s, delta_units_s};
      PQclear(run("UPDATE optdp_budget SET spent_units = spent_units + $1, "
                  "spent_delta_units = spent_delta_units + $2::numeric WHERE id = 1",
                  2, spend, PGRES_COMMAND_OK));
      PQclear(run("COMMIT", 0, nullptr, PGRES_COMMAND_OK));  // durable before the value is released
    } catch (...) {
      if (PQtransactionStatus(conn) != PQTRANS_IDLE) PQclear(PQexec(conn, "ROLLBACK"));
      throw;
    }
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
  MarkGUCPrefixReserved("optdp");
}

}  // extern "C"
