/*
** noop: a baseline loadable SQLite extension for the SQL benchmarks.
**
**   .load ./noop
**   SELECT noop_agg(0.5) FROM t;         -- always 0
**   SELECT noop_count_agg(0.5) FROM t;   -- the number of rows
**
** noop_agg(x) is an aggregate whose step does nothing at all (it does not even
** ask for an aggregate context) and whose final returns 0. Timing it against
** private_count(alpha) isolates what optdp adds on top of the pure cost of
** SQLite scanning the table and calling a user-defined aggregate step per row.
** It is registered with the same flags as private_count (SQLITE_UTF8, not
** deterministic), so SQLite treats both the same way.
**
** noop_count_agg(x) is the cheapest useful user-defined count: its step only
** fetches the aggregate context (sqlite3_aggregate_context) and increments a
** 64-bit counter; its final returns the count. It shows how much of a real
** aggregate's cost is SQLite's per-row context lookup rather than its own work.
**
** Two more probes, for explaining private_count's cost (not part of any target):
**   noop_count_typed_agg(a)  : context + sqlite3_value_type(a) + sqlite3_value_double(a)
**                              + compare with the first row's value + ++counter:
**                              the same SQLite API calls per row as private_count's hot path.
**   noop_count_double_agg(a) : context + sqlite3_value_double(a) + compare + ++counter:
**                              the same with one API call fewer.
** and two for the sums (issue 3), each taking (x, eps, lower, upper) like
** staircase_sum(x, eps, lower, upper):
**   noop_sum_agg(x, ...)         : context + sqlite3_value_type(x) + sqlite3_value_double(x)
**                                  + add to a double; the other arguments are ignored: the
**                                  floor of any user-defined sum that looks at x.
**   noop_sum_checked_agg(x, ...) : the above + on every row after the first,
**                                  sqlite3_value_type + sqlite3_value_double of each of the
**                                  three parameters and a compare with the first row's
**                                  values: the same SQLite API calls per row as
**                                  staircase_sum's hot path, in C, without the rounding to
**                                  the grid or the 128-bit sum.
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

static void noop_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  (void)ctx;
  (void)argc;
  (void)argv;
}

static void noop_final(sqlite3_context* ctx) { sqlite3_result_int(ctx, 0); }

static void count_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  sqlite3_int64* n = (sqlite3_int64*)sqlite3_aggregate_context(ctx, sizeof *n);
  (void)argc;
  (void)argv;
  if (n) ++*n;
}

typedef struct {
  sqlite3_int64 n;
  double a;
  int started;
} ProbeState;

static void probe_typed_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  ProbeState* st = (ProbeState*)sqlite3_aggregate_context(ctx, sizeof *st);
  int t;
  (void)argc;
  if (!st) return;
  t = sqlite3_value_type(argv[0]);
  if (!st->started) {
    st->a = sqlite3_value_double(argv[0]);
    st->started = 1;
  } else if (!((t == SQLITE_FLOAT || t == SQLITE_INTEGER) && sqlite3_value_double(argv[0]) == st->a)) {
    sqlite3_result_error(ctx, "argument changed", -1);
    return;
  }
  ++st->n;
}

static void probe_double_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  ProbeState* st = (ProbeState*)sqlite3_aggregate_context(ctx, sizeof *st);
  (void)argc;
  if (!st) return;
  if (!st->started) {
    st->a = sqlite3_value_double(argv[0]);
    st->started = 1;
  } else if (sqlite3_value_double(argv[0]) != st->a) {
    sqlite3_result_error(ctx, "argument changed", -1);
    return;
  }
  ++st->n;
}

typedef struct {
  double sum, p[3];
  int started, failed;
} SumProbeState;

static void sum_probe_add(sqlite3_context* ctx, SumProbeState* st, sqlite3_value* x) {
  int t = sqlite3_value_type(x);
  if (t == SQLITE_NULL) return;
  if (t != SQLITE_FLOAT && t != SQLITE_INTEGER) {
    st->failed = 1;
    sqlite3_result_error(ctx, "x must be a number", -1);
    return;
  }
  st->sum += sqlite3_value_double(x);
}

static void sum_probe_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  SumProbeState* st = (SumProbeState*)sqlite3_aggregate_context(ctx, sizeof *st);
  (void)argc;
  if (!st || st->failed) return;
  sum_probe_add(ctx, st, argv[0]);
}

static int same_number(sqlite3_value* v, double first) {
  int t = sqlite3_value_type(v);
  return (t == SQLITE_FLOAT || t == SQLITE_INTEGER) && sqlite3_value_double(v) == first;
}

static void sum_probe_checked_step(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  SumProbeState* st = (SumProbeState*)sqlite3_aggregate_context(ctx, sizeof *st);
  int i;
  if (!st || st->failed) return;
  if (st->started) {
    if (!(same_number(argv[1], st->p[0]) && same_number(argv[2], st->p[1]) && same_number(argv[3], st->p[2]))) {
      st->failed = 1;
      sqlite3_result_error(ctx, "argument changed", -1);
      return;
    }
  } else {
    for (i = 1; i < argc && i < 4; ++i) st->p[i - 1] = sqlite3_value_double(argv[i]);
    st->started = 1;
  }
  sum_probe_add(ctx, st, argv[0]);
}

static void sum_probe_final(sqlite3_context* ctx) {
  SumProbeState* st = (SumProbeState*)sqlite3_aggregate_context(ctx, 0);
  sqlite3_result_double(ctx, st ? st->sum : 0.0);
}

static void probe_final(sqlite3_context* ctx) {
  ProbeState* st = (ProbeState*)sqlite3_aggregate_context(ctx, 0);
  sqlite3_result_int64(ctx, st ? st->n : 0);
}

static void count_final(sqlite3_context* ctx) {
  sqlite3_int64* n = (sqlite3_int64*)sqlite3_aggregate_context(ctx, 0);
  sqlite3_result_int64(ctx, n ? *n : 0);
}

#ifdef _WIN32
__declspec(dllexport)
#else
__attribute__((visibility("default")))
#endif
int sqlite3_noop_init(sqlite3* db, char** pzErrMsg, const sqlite3_api_routines* pApi) {
  (void)pzErrMsg;
  SQLITE_EXTENSION_INIT2(pApi);
  int rc = sqlite3_create_function_v2(db, "noop_agg", 1, SQLITE_UTF8, 0, 0, noop_step, noop_final, 0);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "noop_count_agg", 1, SQLITE_UTF8, 0, 0, count_step, count_final, 0);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "noop_count_typed_agg", 1, SQLITE_UTF8, 0, 0, probe_typed_step, probe_final,
                                    0);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "noop_count_double_agg", 1, SQLITE_UTF8, 0, 0, probe_double_step,
                                    probe_final, 0);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "noop_sum_agg", 4, SQLITE_UTF8, 0, 0, sum_probe_step, sum_probe_final, 0);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "noop_sum_checked_agg", 4, SQLITE_UTF8, 0, 0, sum_probe_checked_step,
                                    sum_probe_final, 0);
  return rc;
}
