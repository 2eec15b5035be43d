// optdp SQLite bindings: the one owner of a prepared statement.
#pragma once

#include <utility>

#include "sqlite/api.hpp"

namespace optdp::sql {

// Finalizes its statement when destroyed. Converts to sqlite3_stmt*, so the
// C API takes it as it is; out() hands sqlite3_prepare_v* the slot to fill.
class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(sqlite3_stmt* p) : p_(p) {}
  Stmt(Stmt&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  Stmt& operator=(Stmt&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Stmt() { sqlite3_finalize(p_); }

  operator sqlite3_stmt*() const { return p_; }
  sqlite3_stmt* get() const { return p_; }
  // Finalizes the statement held, if any, and returns the empty slot.
  sqlite3_stmt** out() {
    reset();
    return &p_;
  }
  void reset() {
    sqlite3_finalize(p_);
    p_ = nullptr;
  }

 private:
  sqlite3_stmt* p_ = nullptr;
};

}  // namespace optdp::sql
