// optdp for PostgreSQL: what every file of the binding shares. No C++
// exception may cross into PostgreSQL, and PostgreSQL's errors (a longjmp)
// must not unwind C++ frames: C++ work runs inside run_cpp(), which turns an
// exception into a message kept in a Failure, and raise() reports it after
// every C++ object of that work is destroyed. PostgreSQL calls happen
// outside run_cpp.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "core/format.hpp"
#include "core/rng.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
}

namespace optdp_pg {

// PostgreSQL 15's tree walkers take bool (*)() (through void (*)(void), which
// -Wcast-function-type accepts).
using Walker = bool (*)();
inline Walker walker_cast(bool (*w)(Node*, void*)) {
  return reinterpret_cast<Walker>(reinterpret_cast<void (*)(void)>(w));
}

struct Failure {
  bool failed = false;
  bool nomem = false;
  char message[1024];
};

// Runs body(); an exception becomes f's message "<function>: <what>", its
// values taken out (optdp::hide_values) unless shown.
template <class Body>
void run_cpp(Failure& f, const char* function, Body&& body, bool shown = true) noexcept {
  try {
    body();
  } catch (const std::bad_alloc&) {
    f.failed = f.nomem = true;
  } catch (const std::exception& e) {
    f.failed = true;
    try {
      snprintf(f.message, sizeof f.message, "%s: %s", function,
               shown ? e.what() : optdp::hide_values(e.what()).c_str());
    } catch (...) {
      f.nomem = true;
    }
  } catch (...) {
    f.failed = true;
    snprintf(f.message, sizeof f.message, "%s: unknown error", function);
  }
}

// Reports f as the statement's error, if it failed. Call only where no C++
// object with a destructor is alive in the calling frames below PostgreSQL.
inline void raise(const Failure& f) {
  if (!f.failed) return;
  if (f.nomem) ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s", f.message)));
}

// The backend's noise generator (dp_seed's, or the OS CSPRNG). C++: call
// inside run_cpp (it is created on first use).
optdp::Rng& backend_rng();

// Charges one release to the database's ledger (ledger.cpp): epsilon and
// delta, or rho for a Gaussian release (epsilon and delta 0), accepted if the
// whole history with it fits by basic composition or by zCDP. Raises
// an error, and nothing may be released, if the budget does not allow it or
// the ledger cannot be reached. Returns the entry's id, or -1 when the
// database has no ledger. PostgreSQL side (may raise).
std::int64_t charge_release(const char* function, double epsilon, double delta, double rho, std::int64_t shift = 0);
// Refuses, before any argument's value is read, a call of the release table
// function `name` (private_groups, release_levels) that is not the only
// table of a top-level SELECT with constant or query-parameter arguments:
// elsewhere the rows of other tables would decide how often it runs, and is
// charged (groups.cpp, docs/boundary.md). PostgreSQL side (may raise).
void check_release_shape(FunctionCallInfo fcinfo, const char* name);
// Records the number of keys a grouped release published in entry id
// (charged before the rows were read); nothing for id -1.
void record_released_keys(const char* function, std::int64_t id, std::int64_t released_keys);

// Removes from the singly linked list at head (nodes palloc'd, linked by
// `next`) every node for which drop(node) is true, and pfrees it: the lists
// of per-statement and per-subtransaction records the hooks keep in
// TopMemoryContext (release.cpp, citus.cpp).
template <class T, class Drop>
void remove_nodes_if(T*& head, Drop drop) {
  for (T** p = &head; *p;) {
    if (drop(**p)) {
      T* gone = *p;
      *p = gone->next;
      pfree(gone);
    } else {
      p = &(*p)->next;
    }
  }
}

}  // namespace optdp_pg

// PostgreSQL 15 exports only the info record; the function must be visible too.
#define OPTDP_PG_FUNCTION(name) \
  PG_FUNCTION_INFO_V1(name);    \
  PGDLLEXPORT Datum name(PG_FUNCTION_ARGS)
// A step that only optdp's own functions call (directly, as a PGFunction: a
// merge's own step and release, merges.cpp): not exported, so that the
// module exports only what the extension's script names (install.symbols).
#define OPTDP_PG_STEP(name) Datum name(PG_FUNCTION_ARGS)
