/* pg_noop.so: PostgreSQL aggregates of optdp's shapes that do nothing of
 * optdp's, the floor of an extension's aggregate of that signature
 * (bench/pg_floor.py, bench/README.md "The floor of an aggregate's shape").
 * Each transition ignores its constant arguments, as optdp's do after the
 * first row, and adds to its state as the built-in does. */
#include "postgres.h"

#include "fmgr.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(noop_count_trans);
PG_FUNCTION_INFO_V1(noop_count_final);
PG_FUNCTION_INFO_V1(noop_sum_trans);
PG_FUNCTION_INFO_V1(noop_sum_ref_trans);
PG_FUNCTION_INFO_V1(noop_sum_ref_final);

/* private_count's shape: a bytea state whose 8 bytes after the header count
 * in place (its arguments: x and alpha, or alpha alone, unread). */
Datum noop_count_trans(PG_FUNCTION_ARGS) {
  char* st = (char*)DatumGetPointer(PG_GETARG_DATUM(0));
  int64 v;
  memcpy(&v, st + VARHDRSZ, sizeof v);
  v++;
  memcpy(st + VARHDRSZ, &v, sizeof v);
  return PointerGetDatum(st);
}

Datum noop_count_final(PG_FUNCTION_ARGS) {
  const char* st = (const char*)DatumGetPointer(PG_GETARG_DATUM(0));
  int64 v;
  memcpy(&v, st + VARHDRSZ, sizeof v);
  PG_RETURN_INT64(v);
}

/* sum(x)'s float8 state by value, and the sums' three constants unread. */
Datum noop_sum_trans(PG_FUNCTION_ARGS) { return Float8GetDatum(PG_GETARG_FLOAT8(0) + PG_GETARG_FLOAT8(1)); }

/* The same in a bytea state updated in place, as the sums' (NULL x skipped). */
Datum noop_sum_ref_trans(PG_FUNCTION_ARGS) {
  char* st = (char*)DatumGetPointer(PG_GETARG_DATUM(0));
  if (!PG_ARGISNULL(1)) {
    double v;
    memcpy(&v, st + VARHDRSZ, sizeof v);
    v += PG_GETARG_FLOAT8(1);
    memcpy(st + VARHDRSZ, &v, sizeof v);
  }
  return PointerGetDatum(st);
}

Datum noop_sum_ref_final(PG_FUNCTION_ARGS) {
  const char* st = (const char*)DatumGetPointer(PG_GETARG_DATUM(0));
  double v;
  memcpy(&v, st + VARHDRSZ, sizeof v);
  PG_RETURN_FLOAT8(v);
}
