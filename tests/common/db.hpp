// A small RAII wrapper over a SQLite connection with optdp loaded, for tests.
#pragma once

#include <sqlite3.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace optdp::test {

// A new empty file for a database (private_groups reads the database file on
// optdp's own connection, so its tests cannot use an in-memory database);
// removed, with its journal files, when destroyed.
class TempFile {
 public:
  TempFile() {
    char tmpl[] = "/tmp/optdp-test-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    close(fd);
    path_ = tmpl;
  }
  ~TempFile() {
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

class Db {
 public:
  explicit Db(const char* path = ":memory:") {
    if (sqlite3_open(path, &db_) != SQLITE_OK) throw std::runtime_error("open failed");
    sqlite3_enable_load_extension(db_, 1);
    char* err = nullptr;
    if (sqlite3_load_extension(db_, OPTDP_MODULE_PATH, "sqlite3_optdp_init", &err) != SQLITE_OK) {
      std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error("load failed: " + msg);
    }
  }
  ~Db() { sqlite3_close_v2(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  sqlite3* get() const { return db_; }

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(msg);
    }
  }

  // Every row's first column as an integer.
  std::vector<std::int64_t> ints(const std::string& sql) {
    sqlite3_stmt* st = prepare(sql);
    std::vector<std::int64_t> out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      if (sqlite3_column_type(st, 0) != SQLITE_INTEGER) {
        sqlite3_finalize(st);
        throw std::runtime_error("not an integer: " + sql);
      }
      out.push_back(sqlite3_column_int64(st, 0));
    }
    finish(st, rc);
    return out;
  }
  std::vector<double> reals(const std::string& sql) {
    sqlite3_stmt* st = prepare(sql);
    std::vector<double> out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) out.push_back(sqlite3_column_double(st, 0));
    finish(st, rc);
    return out;
  }
  std::int64_t one_int(const std::string& sql) {
    auto v = ints(sql);
    if (v.size() != 1) throw std::runtime_error("expected one row: " + sql);
    return v[0];
  }
  double one_real(const std::string& sql) {
    auto v = reals(sql);
    if (v.size() != 1) throw std::runtime_error("expected one row: " + sql);
    return v[0];
  }
  // The error message of sql, or "" if it succeeded.
  std::string error_of(const std::string& sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
    std::string msg = rc == SQLITE_OK ? "" : (err ? err : "?");
    sqlite3_free(err);
    return msg;
  }

 private:
  sqlite3_stmt* prepare(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
      throw std::runtime_error(std::string(sqlite3_errmsg(db_)) + ": " + sql);
    return st;
  }
  void finish(sqlite3_stmt* st, int rc) {
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db_));
  }
  sqlite3* db_ = nullptr;
};

}  // namespace optdp::test
