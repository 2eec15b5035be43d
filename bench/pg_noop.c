/* pg_noop.so: PostgreSQL aggregates of optdp's shapes that do nothing of
 * optdp's, the floor of an extension's aggregate of that signature
 * (bench/pg_floor.py, bench/README.md "The floor of an aggregate's shape").
 * Each transition ignores its constant arguments, as optdp's do after the
 * first row, and adds to its state as the built-in does. */
#include "postgres.h"

#include "fmgr.h"

#include <math.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(noop_count_trans);
PG_FUNCTION_INFO_V1(noop_count_final);
PG_FUNCTION_INFO_V1(noop_sum_trans);
PG_FUNCTION_INFO_V1(noop_sum_ref_trans);
PG_FUNCTION_INFO_V1(noop_sum_ref_final);
PG_FUNCTION_INFO_V1(noop_sum_grid_trans);
PG_FUNCTION_INFO_V1(noop_sum_grid_final);

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

/* The sums' arithmetic without their checks: x clamped to [0, 1000], scaled
 * by a power of two, rounded to an integer (the current rounding mode, as
 * optdp's round_to_int64) and added to a 128-bit integer in place; NULL x
 * skipped. optdp's transition is this plus its checks (the parameters, NaN). */
double noop_inv_g = 1.0 / 64; /* not const: read from memory, as optdp's grid */

Datum noop_sum_grid_trans(PG_FUNCTION_ARGS) {
  char* st = (char*)DatumGetPointer(PG_GETARG_DATUM(0));
  if (!PG_ARGISNULL(1)) {
    double x = PG_GETARG_FLOAT8(1);
    uint64 lo, hi;
    int64 q;
    x = x > 0 ? x : 0;
    x = x < 1000 ? x : 1000;
#if defined(__x86_64__)
    q = _mm_cvtsd_si64(_mm_set_sd(x * noop_inv_g)); /* as optdp's round_to_int64 */
#else
    q = llrint(x * noop_inv_g);
#endif
    memcpy(&lo, st + VARHDRSZ, sizeof lo);
    memcpy(&hi, st + VARHDRSZ + 8, sizeof hi);
    hi += (uint64)(q >> 63) + (lo + (uint64)q < lo);
    lo += (uint64)q;
    memcpy(st + VARHDRSZ, &lo, sizeof lo);
    memcpy(st + VARHDRSZ + 8, &hi, sizeof hi);
  }
  return PointerGetDatum(st);
}

Datum noop_sum_grid_final(PG_FUNCTION_ARGS) {
  const char* st = (const char*)DatumGetPointer(PG_GETARG_DATUM(0));
  int64 lo;
  memcpy(&lo, st + VARHDRSZ, sizeof lo);
  PG_RETURN_INT64(lo);
}
