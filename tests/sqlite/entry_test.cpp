// The two entry points sqlite3_optdp_init (extension/sqlite/entry/): the
// bindings call SQLite through its routine table in the loadable module and
// in the static library alike, and each entry point says where that table
// comes from. The static library takes it from the SQLite it is linked with
// when the program passes none; the module, which cannot call SQLite without
// it, refuses NULL instead of crashing; optdp's routine pointer does not
// clash with a program's own extension's sqlite3_api.
//
// This binary links optdp_static and opens the built module with dlopen.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <string>

#include "optdp/optdp.h"

// What SQLITE_EXTENSION_INIT1 defines in a program's own extension, linked
// with optdp_static into the same program.
const sqlite3_api_routines* sqlite3_api = nullptr;

namespace {

using Init = int (*)(sqlite3*, char**, const sqlite3_api_routines*);

std::string version_of(sqlite3* db) {
  sqlite3_stmt* st = nullptr;
  std::string v;
  if (sqlite3_prepare_v2(db, "SELECT dp_version()", -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  else
    v = std::string("error: ") + sqlite3_errmsg(db);
  sqlite3_finalize(st);
  return v;
}

TEST(Entry, StaticLibraryRegistersWithoutARoutineTable) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_optdp_init(db, &err, nullptr), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  EXPECT_FALSE(version_of(db).starts_with("error"));
  // Again, now that the table is known, on a second connection.
  sqlite3* db2 = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db2), SQLITE_OK);
  EXPECT_EQ(sqlite3_optdp_init(db2, nullptr, nullptr), SQLITE_OK);
  EXPECT_EQ(version_of(db2), version_of(db));
  EXPECT_EQ(sqlite3_close(db2), SQLITE_OK);
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
}

TEST(Entry, StaticLibraryAsAnAutomaticExtension) {
  const auto entry = reinterpret_cast<void (*)(void)>(sqlite3_optdp_init);
  ASSERT_EQ(sqlite3_auto_extension(entry), SQLITE_OK);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_FALSE(version_of(db).starts_with("error")) << version_of(db);
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
  sqlite3_cancel_auto_extension(entry);
  EXPECT_EQ(sqlite3_api, nullptr);  // the program's own pointer: never touched by optdp
}

TEST(Entry, ModuleRefusesANullRoutineTable) {
  void* module = dlopen(OPTDP_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(module, nullptr) << dlerror();
  const auto init = reinterpret_cast<Init>(dlsym(module, "sqlite3_optdp_init"));
  ASSERT_NE(init, nullptr) << dlerror();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(init(db, &err, nullptr), SQLITE_MISUSE);
  EXPECT_EQ(err, nullptr);
  EXPECT_TRUE(version_of(db).starts_with("error")) << "nothing registered";
  EXPECT_EQ(sqlite3_close(db), SQLITE_OK);
  dlclose(module);
}

TEST(Entry, AnalystModeBeforeAnyRegistrationIsMisuse) {
  // In a process of its own (the threadsafe style runs the test again in a
  // new process): no registration in it has set the routine table yet.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        sqlite3* db = nullptr;
        if (sqlite3_open(":memory:", &db) != SQLITE_OK) std::_Exit(1);
        std::_Exit(optdp_analyst_mode(db, "t", nullptr, nullptr, nullptr) == SQLITE_MISUSE &&
                           optdp_analyst_refusal(db) == nullptr
                       ? 0
                       : 2);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
