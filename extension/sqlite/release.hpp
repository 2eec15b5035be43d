// optdp SQLite bindings: steps every release takes, whatever its form.
#pragma once

#include <stdexcept>

#include "sqlite/api.hpp"

namespace optdp::sql {

// Throws while a hard heap limit is set (PRAGMA hard_heap_limit,
// sqlite3_hard_heap_limit64): under one, whether an allocation fails could
// depend on the rows (an aggregate's state, a query's sort), so a release
// would fail or not on the data's say-so. Whether a limit is set depends on
// no row. (A soft limit never makes an allocation fail.)
inline void refuse_under_heap_limit() {
  if (sqlite3_hard_heap_limit64(-1) != 0)
    throw std::invalid_argument(
        "refused while a hard heap limit is set (PRAGMA hard_heap_limit): whether memory runs out could depend on "
        "the rows");
}

}  // namespace optdp::sql
