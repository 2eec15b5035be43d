// optdp for PostgreSQL: the ledger (its tables and SQL functions are in
// extension/postgres/sql/30-groups.sql and 40-ledger.sql; docs/scale.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "core/budget.hpp"
#include "core/format.hpp"
#include "postgres/aggregate.hpp"
#include "postgres/common.hpp"

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
// connection to the same database (libpq, autocommit), by the function
// optdp_ledger_charge: it locks the budget row (FOR UPDATE, so concurrent
// sessions queue and cannot overspend), refuses a charge that does not fit,
// and records it, all in one transaction that commits before the value is
// released. The analyst's transaction can roll back; the charge stays.
// Without a budget row nothing is charged. The connection is kept per backend.
//
// optdp.ledger_conninfo (superuser) says how to connect; empty (the default):
// the server's first Unix socket directory and port, the current database,
// and the bootstrap superuser, which pg_hba.conf must let the server's own OS
// user in as (Debian's default `local all postgres peer` does).

char* ledger_conninfo = nullptr;
PGconn* ledger_conn = nullptr;

// Opens the connection if need be; on failure returns false with why in msg.
bool ledger_connect(char* msg, size_t n) {
  if (ledger_conn && PQstatus(ledger_conn) == CONNECTION_OK) return true;
  if (ledger_conn) {
    PQfinish(ledger_conn);
    ledger_conn = nullptr;
  }
  if (ledger_conninfo && ledger_conninfo[0]) {
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
  return true;
}

// Charges one release of `function` at epsilon; raises an error (and nothing
// may be released) if the budget does not allow it or the ledger cannot be
// reached. Whether a ledger is attached, and what it holds, depends on no row.
// The statement (its start time and its transaction's command) whose first
// release found no ledger: its later releases skip the round trip. A ledger
// attached meanwhile is charged from the next statement on.
struct StatementKey {
  TimestampTz start = 0;
  CommandId command = 0;
  bool operator==(const StatementKey&) const = default;
};
StatementKey no_ledger_statement;

StatementKey current_statement() { return {GetCurrentStatementStartTimestamp(), GetCurrentCommandId(false)}; }

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
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  }
  const bool attached = atoll(PQgetvalue(r, 0, 0)) > 0;
  PQclear(r);
  return attached;
}

void charge(const char* function, double epsilon) {
  if (no_ledger_statement.start != 0 && no_ledger_statement == current_statement() && !backend_seeded()) return;
  const std::int64_t id = optdp_pg::charge_release(function, epsilon, 0.0, 0.0);
  no_ledger_statement = id < 0 ? current_statement() : StatementKey{};
}

// A release with a delta (partition selection) or a rho (Gaussian noise), by
// optdp_ledger_charge (extension/postgres/sql/30-groups.sql):
// epsilon and delta are each counted in exact units (delta in 2^-120, as
// numeric) and must each fit their total (basic composition); a ledger
// attached without a delta budget refuses any delta > 0.
std::int64_t charge_release(const char* function, double epsilon, double delta, double rho) {
  Failure f;
  std::int64_t units = 0;
  char delta_units[64] = "0";
  run_cpp(f, function, [&] {
    units = optdp::charge_units(epsilon);
    const std::string d = optdp::delta_units_text(optdp::delta_charge_units(delta));
    snprintf(delta_units, sizeof delta_units, "%s", d.c_str());
  });
  raise(f);
  char msg[1024];
  if (!ledger_connect(msg, sizeof msg))
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  char units_s[32], eps_s[64], pid_s[16], delta_s[64], rho_s[64];
  snprintf(units_s, sizeof units_s, "%lld", static_cast<long long>(units));
  snprintf(eps_s, sizeof eps_s, "%.17g", epsilon);
  snprintf(pid_s, sizeof pid_s, "%d", MyProcPid);
  snprintf(delta_s, sizeof delta_s, "%.17g", delta + 0.0);
  snprintf(rho_s, sizeof rho_s, "%.17g", rho);
  const char* params[] = {function, units_s, eps_s, debug_query_string, pid_s, backend_seeded() ? "t" : "f",
                          delta_s, delta_units, rho_s};
  PGresult* r = PQexecParams(ledger_conn,
                             "SELECT status, total_units, spent_units, total_delta_units::text, "
                             "spent_delta_units::text, id FROM optdp_ledger_charge($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                             9, nullptr, params, nullptr, nullptr, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
    snprintf(msg, sizeof msg, "the ledger cannot be charged: %s", PQerrorMessage(ledger_conn));
    PQclear(r);
    ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE), errmsg("%s: %s", function, msg)));
  }
  // 'n'one (no ledger), 'c'harged, 'r'efused (epsilon), 'd' refused (delta), 's'eeded
  const char status = PQgetvalue(r, 0, 0)[0];
  long long total = 0, spent = 0, id = -1;
  char total_delta[64] = "", spent_delta[64] = "";
  if (status == 'r' || status == 'd') {
    total = atoll(PQgetvalue(r, 0, 1));
    spent = atoll(PQgetvalue(r, 0, 2));
    snprintf(total_delta, sizeof total_delta, "%s", PQgetvalue(r, 0, 3));
    snprintf(spent_delta, sizeof spent_delta, "%s", PQgetvalue(r, 0, 4));
  }
  if (status == 'c') id = atoll(PQgetvalue(r, 0, 5));
  PQclear(r);
  if (status == 's')
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: refused: a privacy ledger is attached, and a known seed makes the noise predictable",
                           function)));
  if (status == 'r' || status == 'd') {
    run_cpp(f, function, [&] {
      if (status == 'r')
        throw std::runtime_error("privacy budget exhausted: " + optdp::format_double(optdp::units_to_epsilon(spent)) +
                                 " of " + optdp::format_double(optdp::units_to_epsilon(total)) +
                                 " spent, and this release costs " + optdp::format_double(epsilon));
      const auto td = optdp::parse_delta_units(total_delta), sd = optdp::parse_delta_units(spent_delta);
      if (!td || !sd) throw std::runtime_error("the ledger's delta units cannot be read");
      if (*td == 0 && rho > 0)
        throw std::runtime_error("privacy budget exhausted: this ledger has no delta budget (give one as "
                                 "dp_ledger_attach(total_epsilon, total_delta)), and a Gaussian release needs one "
                                 "(this one costs rho " + optdp::format_double(rho) + ")");
      if (*td == 0)
        throw std::runtime_error("privacy budget exhausted: this ledger has no delta budget (give one as "
                                 "dp_ledger_attach(total_epsilon, total_delta)), and this release costs delta " +
                                 optdp::format_double(delta));
      throw std::runtime_error("privacy budget exhausted: delta " + optdp::format_double(optdp::units_to_delta(*sd)) +
                               " of " + optdp::format_double(optdp::units_to_delta(*td)) +
                               " spent, and this release costs " + optdp::format_double(delta));
    });
    raise(f);
  }
  return id;
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
  DefineCustomStringVariable("optdp.ledger_conninfo",
                             "How optdp connects to this database to charge the ledger (empty: the server's Unix "
                             "socket, the current database, the bootstrap superuser).",
                             nullptr, &ledger_conninfo, "", PGC_SUSET, 0, nullptr, nullptr, nullptr);
  define_state_key();  // states.cpp
  MarkGUCPrefixReserved("optdp");
}

}  // extern "C"
