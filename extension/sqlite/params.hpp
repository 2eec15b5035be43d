// optdp SQLite bindings: how an aggregate checks its parameters (alpha, eps,
// delta, lower, upper, cost, the levels) from row to row of a group.
//
// The first row reads and validates them. The next rows are compared with
// them, until the group has compared ParamCheck::prove_at rows; then the
// connection is asked once whether the parameters are literals in every call
// that may be running (Connection::params_are_literals, after
// constant_args.hpp's params_are_literals). If they are, they cannot change,
// and the remaining rows are not re-read: re-reading costs two SQLite API
// calls per parameter and row, more than the rest of the aggregate
// (bench/README.md). prove_at is kProveConstantAfterRows (65,536), or more
// when the connection's last proof read much SQL (a large schema), so that
// the question never costs more than about 0.6 ns per row of the groups that
// ask it (Connection::proof_after_rows).
#pragma once

#include <cstdint>

#include "sqlite/api.hpp"
#include "sqlite/connection.hpp"

namespace optdp::sql {

enum class Params : unsigned char {
  Unread = 0,  // no row yet (SQLite zeroes the aggregate context)
  Checked,     // read from the first row; later rows are compared with them
  Constant,    // proven literals: later rows are not re-read
  Failed,      // a step reported an error: release nothing
};

// Plain data inside an aggregate context (zero is Unread).
struct ParamCheck {
  Params params;
  std::uint32_t compared;  // rows compared with the first row's parameters
  std::uint32_t prove_at;  // ask for the proof when compared reaches this

  bool constant() const { return params == Params::Constant; }
  bool failed() const { return params == Params::Failed; }
  bool released_nothing() const { return params == Params::Failed || params == Params::Unread; }

  // After the first row: ok is whether its parameters were valid.
  void first_row(sqlite3_context* ctx, bool ok) {
    params = ok ? Params::Checked : Params::Failed;
    prove_at = connection(ctx).proof_after_rows();
  }
  // After a later row was compared: same is whether its parameters were the
  // first row's (when not, the caller has reported the error). Arguments
  // [first, argc) of name(...) are the parameters.
  void compared_row(sqlite3_context* ctx, bool same, const char* name, int argc, int first) {
    if (!same) {
      params = Params::Failed;
    } else if (++compared == prove_at && connection(ctx).params_are_literals(name, argc, first)) {
      params = Params::Constant;
    }
  }
};

}  // namespace optdp::sql
