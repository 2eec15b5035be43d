// optdp SQLite bindings: table-valued functions as eponymous virtual tables.
//
// Like SQLite's generate_series (ext/misc/series.c), each function is a
// virtual table whose arguments are HIDDEN columns: geometric_matrix(4, 0.5)
// is the same as SELECT * FROM geometric_matrix WHERE n = 4 AND alpha = 0.5.
// A missing required argument is a real error naming it; bad values are
// reported as "<function>: <argument> must be ..., but is ...". Rows are
// produced one at a time by a RowSource, so a (n+1)^2-row matrix is streamed,
// never stored.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sqlite/api.hpp"

namespace optdp::sql {

class Connection;

struct ValueDeleter {
  void operator()(sqlite3_value* v) const { sqlite3_value_free(v); }
};
using ValuePtr = std::unique_ptr<sqlite3_value, ValueDeleter>;

// The rows of one call. Positioned on the first row after construction.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual bool eof() const = 0;
  virtual void next() = 0;
  // Visible column c (0-based) of the current row.
  virtual void column(sqlite3_context* ctx, int c) const = 0;
};

struct TableFunction {
  const char* name;
  const char* columns;  // visible columns, SQL: "input INTEGER, output INTEGER, probability REAL"
  int visible;          // how many visible columns
  std::vector<const char*> params;  // hidden argument columns, in call order
  int required;                      // the first `required` params must be given
  // Builds the rows from the arguments (argv[k] is params[k], nullptr when an
  // optional one is absent). Throws std::invalid_argument for bad arguments.
  std::unique_ptr<RowSource> (*open)(sqlite3_value** argv, Connection& conn);
  // Randomised (draws noise): not SQLITE_VTAB_INNOCUOUS, so it cannot run from
  // views or triggers of an untrusted schema.
  bool random = false;
  // Releases (and charges) once per scan: must be alone in the FROM clause of
  // a top-level SELECT (check_release_shape, params.hpp), so that SQLite runs
  // that scan exactly once per execution, whatever the data.
  bool release = false;
};

// Registers fn as an eponymous-only module on db; conn is shared user data.
int register_table_function(sqlite3* db, const TableFunction& fn, Connection* conn);

// A RowSource over a (rows x cols) grid of (i, j, value(i, j)) triples.
template <class Value>
class GridSource final : public RowSource {
 public:
  GridSource(std::int64_t rows, std::int64_t cols, Value value) : rows_(rows), cols_(cols), value_(std::move(value)) {}
  bool eof() const override { return i_ >= rows_; }
  void next() override {
    if (++j_ == cols_) j_ = 0, ++i_;
  }
  void column(sqlite3_context* ctx, int c) const override {
    if (c == 0) sqlite3_result_int64(ctx, i_);
    else if (c == 1) sqlite3_result_int64(ctx, j_);
    else sqlite3_result_double(ctx, value_(i_, j_));
  }

 private:
  std::int64_t rows_, cols_, i_ = 0, j_ = 0;
  Value value_;
};

template <class Value>
std::unique_ptr<RowSource> grid(std::int64_t rows, std::int64_t cols, Value value) {
  return std::make_unique<GridSource<Value>>(rows, cols, std::move(value));
}

}  // namespace optdp::sql
