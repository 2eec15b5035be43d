// optdp SQLite bindings: privacy units declared by the owner (analyst mode),
// and the check that private_groups' rows_query attributes every row to the
// unit of the private row it comes from (docs/boundary.md, "Who a row
// belongs to").
//
// The owner declares, when switching analyst mode on, each private table's
// unit column and the links between private tables:
//   dp_analyst_mode('patients(id), visits(patient_id -> patients.id)')
// A link makes the child's unit column hold the parent's unit (a foreign key
// to the parent's unit column): tables joined by links form one family, whose
// tables share one kind of unit.
//
// The check reads the program SQLite prepared for the rows query (EXPLAIN of
// the query, on optdp's own connection, right after the query itself was
// prepared there), never its text, and admits only a shape it can verify:
//  - every private table is read through its table cursor (no index, no
//    automatic index), and declares a unit column;
//  - the program uses only opcodes of a plain nested-loop SELECT with an
//    optional sorter (no aggregate, window, subquery, coroutine, DISTINCT,
//    LIMIT/OFFSET, compound SELECT or outer join);
//  - one table is scanned, a private one, before any private cursor moved;
//    every other table is looked up by its rowid, at most one row per row
//    of the scan: a unit's rows, and the work they cost, are at most its own
//    rows of the scanned table, and no scan follows a private value;
//  - at every row the program emits, every private cursor is positioned on
//    a row of the same unit: the cursors are tied by rowid lookups whose key
//    is another private cursor's unit column, along a declared link (or on
//    the unit column of the same table);
//  - the emitted first column is exactly the unit column of a private
//    cursor, and no value read at an earlier position of a private cursor
//    reaches an emitted row or decides a branch.
// Anything else is refused when prepared, before the charge.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace optdp::sql {

class GuardedDb;

// One private table's declaration.
struct UnitDecl {
  std::string column;  // its unit column; "" when the owner named the table without one (never readable by private_groups)
  std::string parent;  // lower case: the table its unit column links to ("" for none)
  std::string family;  // lower case: the root of its links (tables of one family share units)
};

// The declarations of a connection, by lower-case table name.
using UnitDecls = std::map<std::string, UnitDecl>;

// Checks the program SQLite prepared for the rows query `text` on g (where
// it was just prepared) against decls; throws std::invalid_argument
// ("rows_query ...") naming what it refuses. A program that reads no
// private table is not checked further (its rows are public).
void check_units(GuardedDb& g, std::string_view text, const UnitDecls& decls);

}  // namespace optdp::sql
