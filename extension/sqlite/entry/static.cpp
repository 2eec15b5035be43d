// The static library's entry point (optdp_static), for programs that link
// optdp and SQLite together. The bindings call SQLite through its routine
// table (sqlite/api.hpp), the same objects as in the loadable module; this
// file includes sqlite3.h alone, not sqlite3ext.h, so it calls the linked
// SQLite directly, to get that table when the program passes none.
#include <atomic>

#include "optdp/optdp.h"  // the entry point's public declaration: checked against its definition here
#include "sqlite/entry.hpp"

namespace {

// The linked SQLite's routine table, once seen. Atomic: while capture is
// registered below, other threads' connections may call it too.
std::atomic<const sqlite3_api_routines*> linked{nullptr};

int capture(sqlite3*, char**, const sqlite3_api_routines* api) {
  if (api) linked.store(api);
  return SQLITE_OK;
}

}  // namespace

const sqlite3_api_routines* optdp::sql::linked_routines() noexcept {
  if (const sqlite3_api_routines* api = linked.load()) return api;
  // SQLite gives its routine table to every automatic extension of a
  // connection it opens, and there is no other way to ask for it: capture
  // registers as one for the time of opening and closing a connection to a
  // private in-memory database, which prepares and runs no SQL (the program's
  // own automatic extensions run on it, as on any connection it opens). With
  // two threads here at once, the first connection opened (before either
  // cancels capture) gives the table to both.
  const auto entry = reinterpret_cast<void (*)(void)>(capture);
  if (sqlite3_auto_extension(entry) != SQLITE_OK) return nullptr;
  sqlite3* db = nullptr;
  sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  sqlite3_close(db);
  sqlite3_cancel_auto_extension(entry);
  return linked.load();
}

extern "C" __attribute__((visibility("default"))) int sqlite3_optdp_init(sqlite3* db, char** pzErrMsg,
                                                                        const sqlite3_api_routines* pApi) {
  // sqlite3_auto_extension passes the table; sqlite3_optdp_init(db, &err, NULL) does not.
  if (!pApi) pApi = optdp::sql::linked_routines();
  if (!pApi) {
    if (pzErrMsg)
      *pzErrMsg = sqlite3_mprintf("optdp: this SQLite gives extensions no routine table "
                                  "(built with SQLITE_OMIT_LOAD_EXTENSION), which optdp calls it through");
    return SQLITE_ERROR;
  }
  return optdp::sql::register_optdp(db, pzErrMsg, pApi);
}
