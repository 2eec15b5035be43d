// pg_noop.so: PostgreSQL aggregates of optdp's shapes that do nothing of
// optdp's, the floor of an extension's aggregate of that signature
// (bench/pg_floor.py, bench/README.md "The floor of an aggregate's shape").
// Each transition ignores its constant arguments, as optdp's do after the
// first row, and adds to its state as the built-in does. noop_sum_grid does
// the sums' arithmetic with the core's own functions (core/staircase.hpp).
#include <cstring>

#include "core/staircase.hpp"
#include "postgres/common.hpp"  // postgres.h, fmgr.h, OPTDP_PG_FUNCTION

namespace {

// The bytea state's first bytes after its header, read and written in place.
template <class T>
T load(Datum state) {
  T v;
  std::memcpy(&v, DatumGetPointer(state) + VARHDRSZ, sizeof v);
  return v;
}
template <class T>
Datum store(Datum state, T v) {
  std::memcpy(DatumGetPointer(state) + VARHDRSZ, &v, sizeof v);
  return state;
}

}  // namespace

// Not const and not internal: read from memory on every row, as optdp reads
// its call's grid and bounds (the compiler would fold constants it can see
// are never written). Trivially destructible: nothing runs at a backend's exit.
optdp::Grid noop_grid{64.0, 1.0 / 64, 0, 1000 / 64};
double noop_lower = 0, noop_upper = 1000;

extern "C" {

PG_MODULE_MAGIC;

// private_count's shape: a bytea state whose 8 bytes after the header count
// in place (its arguments, unread: x and alpha, alpha alone, x alone, or none).
OPTDP_PG_FUNCTION(noop_count_trans) { return store(PG_GETARG_DATUM(0), load<int64>(PG_GETARG_DATUM(0)) + 1); }
OPTDP_PG_FUNCTION(noop_count_final) { PG_RETURN_INT64(load<int64>(PG_GETARG_DATUM(0))); }

// sum(x)'s float8 state by value, and the sums' three constants unread.
OPTDP_PG_FUNCTION(noop_sum_trans) { return Float8GetDatum(PG_GETARG_FLOAT8(0) + PG_GETARG_FLOAT8(1)); }

// The same in a bytea state updated in place, as the sums' (NULL x skipped).
OPTDP_PG_FUNCTION(noop_sum_ref_trans) {
  if (PG_ARGISNULL(1)) return PG_GETARG_DATUM(0);
  return store(PG_GETARG_DATUM(0), load<double>(PG_GETARG_DATUM(0)) + PG_GETARG_FLOAT8(1));
}
OPTDP_PG_FUNCTION(noop_sum_ref_final) { PG_RETURN_FLOAT8(load<double>(PG_GETARG_DATUM(0))); }

// The sums' arithmetic without their checks (the parameters, a NULL state,
// a short header, NaN): x clamped to [0, 1000], rounded to the grid of step
// 64 and added to the 128-bit sum in place, as optdp_sum_trans's row path.
OPTDP_PG_FUNCTION(noop_sum_grid_trans) {
  if (!PG_ARGISNULL(1))
    optdp::add_to_int128(reinterpret_cast<unsigned char*>(DatumGetPointer(PG_GETARG_DATUM(0))) + VARHDRSZ,
                         noop_grid.quantize(PG_GETARG_FLOAT8(1), noop_lower, noop_upper));
  return PG_GETARG_DATUM(0);
}
// The sum's low word (the sums measured stay far below 2^63).
OPTDP_PG_FUNCTION(noop_sum_grid_final) { PG_RETURN_INT64(load<int64>(PG_GETARG_DATUM(0))); }

}  // extern "C"
