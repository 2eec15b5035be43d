// optdp for PostgreSQL: what the binding's files share. Errors cross from C++
// to PostgreSQL only through Failure: C++ work runs inside run_cpp(), which
// turns an exception into a message copied to a fixed buffer, and raise()
// reports it after every C++ object of the try block is destroyed.
// PostgreSQL calls (which may longjmp) happen outside those blocks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>

#include "core/rng.hpp"

extern "C" {
#include "postgres.h"
}

namespace optdp_pg {

struct Failure {
  bool failed = false;
  bool nomem = false;
  char message[1024];
};

// Runs body(); an exception becomes f's message "<function>: <what>".
template <class Body>
void run_cpp(Failure& f, const char* function, Body&& body) noexcept {
  try {
    body();
  } catch (const std::bad_alloc&) {
    f.failed = f.nomem = true;
  } catch (const std::exception& e) {
    f.failed = true;
    snprintf(f.message, sizeof f.message, "%s: %s", function, e.what());
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

// Charges one release to the database's ledger (optdp_pg.cpp, "the ledger"):
// epsilon and delta by basic composition, rho recorded beside them. Raises
// an error, and nothing may be released, if the budget does not allow it or
// the ledger cannot be reached. Returns the entry's id, or -1 when the
// database has no ledger. PostgreSQL side (may raise).
std::int64_t charge_release(const char* function, double epsilon, double delta, double rho);
// Records the number of keys a grouped release published in entry id
// (charged before the rows were read); nothing for id -1.
void record_released_keys(const char* function, std::int64_t id, std::int64_t released_keys);

}  // namespace optdp_pg
