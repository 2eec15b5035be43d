// private_groups on PostgreSQL: a grouped release by privacy unit
// (core/grouped.hpp, docs/grouped.md), a set-returning function that owns the
// whole pipeline, as the SQLite table function does (extension/sqlite/grouped.cpp).
//
//   SELECT * FROM private_groups(rows_query, epsilon [, options [, keys_query]])
//     -> one row (key, count, sum, mean, count_halfwidth, sum_halfwidth,
//        mean_low, mean_high, quantile, variance, stddev) per released key, sorted by key
//
// The order docs/boundary.md requires: the call's shape (the only table of a
// top-level SELECT, or of a statement in a SECURITY DEFINER function that
// another role calls), every parameter from the arguments alone, both queries
// prepared with SPI and checked on their analysed, rewritten trees (views
// expanded) against an allow-list of node kinds and built-in functions that
// cannot fail on a value or quote one, and against the declared privacy
// units (sql/35-units.sql, docs/grouped.md "Declared units on PostgreSQL"),
// the accumulator allocated, the ledger charged; only then the rows,
// read-only through SPI cursors. After the charge nothing depends on the
// data but the noisy values: any error while reading gives one fixed message.
//
// C++ objects live in one heap object (GroupsRun) deleted by a memory
// context callback, so that a PostgreSQL error (a longjmp) never skips a
// destructor; C++ work runs inside run_cpp (common.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/format.hpp"
#include "core/grouped.hpp"
#include "core/privacy.hpp"
#include "postgres/common.hpp"

extern "C" {
#include "postgres.h"
#include "fmgr.h"
#include "funcapi.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/sysattr.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "catalog/dependency.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/nodeFuncs.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/tlist.h"
#include "parser/parse_coerce.h"
#include "parser/parsetree.h"
#include "tcop/pquery.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/portal.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
}

using namespace optdp_pg;

namespace {

constexpr const char* kName = "private_groups";

// ---- the allow-list ---------------------------------------------------------
//
// Built-in functions (by OID, so no user function can stand in for one) that
// return a value for every input and never raise an error, never quote an
// input and never return a value longer than their inputs
// (docs/boundary.md, "Queries optdp runs", on PostgreSQL):
//  - comparisons (=, <>, <, <=, >, >=) of integers (smallint, integer,
//    bigint, across them), floats (real, double precision, across them),
//    numeric, boolean, text (under a known collation, checked), date,
//    timestamp and timestamptz: a boolean for every pair (NaN is ordered,
//    infinities too); none of them does arithmetic;
//  - the widening casts smallint -> integer -> bigint and integer types and
//    real -> double precision (exact or rounded, never out of range);
//  - count(*), count(x), and min/max of the types above (they compare);
//  - row_number(), rank(), dense_rank() (no arguments).
// Not on it, among others: every arithmetic operator (integer and float
// arithmetic raise on overflow, division on zero), abs (integer abs raises on
// the least integer), sum and avg (overflow), casts from text (they raise on
// malformed input) and narrowing casts (out of range), ||, LIKE and regular
// expressions, string functions, JSON, to_char/format, and optdp's functions.
constexpr Oid kAllowed[] = {
    F_INT2EQ, F_INT2NE, F_INT2LT, F_INT2LE, F_INT2GT, F_INT2GE,
    F_INT4EQ, F_INT4NE, F_INT4LT, F_INT4LE, F_INT4GT, F_INT4GE,
    F_INT8EQ, F_INT8NE, F_INT8LT, F_INT8LE, F_INT8GT, F_INT8GE,
    F_INT24EQ, F_INT24NE, F_INT24LT, F_INT24LE, F_INT24GT, F_INT24GE,
    F_INT42EQ, F_INT42NE, F_INT42LT, F_INT42LE, F_INT42GT, F_INT42GE,
    F_INT28EQ, F_INT28NE, F_INT28LT, F_INT28LE, F_INT28GT, F_INT28GE,
    F_INT82EQ, F_INT82NE, F_INT82LT, F_INT82LE, F_INT82GT, F_INT82GE,
    F_INT48EQ, F_INT48NE, F_INT48LT, F_INT48LE, F_INT48GT, F_INT48GE,
    F_INT84EQ, F_INT84NE, F_INT84LT, F_INT84LE, F_INT84GT, F_INT84GE,
    F_FLOAT4EQ, F_FLOAT4NE, F_FLOAT4LT, F_FLOAT4LE, F_FLOAT4GT, F_FLOAT4GE,
    F_FLOAT8EQ, F_FLOAT8NE, F_FLOAT8LT, F_FLOAT8LE, F_FLOAT8GT, F_FLOAT8GE,
    F_FLOAT48EQ, F_FLOAT48NE, F_FLOAT48LT, F_FLOAT48LE, F_FLOAT48GT, F_FLOAT48GE,
    F_FLOAT84EQ, F_FLOAT84NE, F_FLOAT84LT, F_FLOAT84LE, F_FLOAT84GT, F_FLOAT84GE,
    F_NUMERIC_EQ, F_NUMERIC_NE, F_NUMERIC_LT, F_NUMERIC_LE, F_NUMERIC_GT, F_NUMERIC_GE,
    F_BOOLEQ, F_BOOLNE, F_BOOLLT, F_BOOLLE, F_BOOLGT, F_BOOLGE,
    F_TEXTEQ, F_TEXTNE, F_TEXT_LT, F_TEXT_LE, F_TEXT_GT, F_TEXT_GE,
    F_DATE_EQ, F_DATE_NE, F_DATE_LT, F_DATE_LE, F_DATE_GT, F_DATE_GE,
    F_TIMESTAMP_EQ, F_TIMESTAMP_NE, F_TIMESTAMP_LT, F_TIMESTAMP_LE, F_TIMESTAMP_GT, F_TIMESTAMP_GE,
    F_TIMESTAMPTZ_EQ, F_TIMESTAMPTZ_NE, F_TIMESTAMPTZ_LT, F_TIMESTAMPTZ_LE, F_TIMESTAMPTZ_GT, F_TIMESTAMPTZ_GE,
    F_INT4_INT2, F_INT8_INT2, F_INT8_INT4, F_FLOAT8_INT2, F_FLOAT8_INT4, F_FLOAT8_INT8, F_FLOAT8_FLOAT4,
    F_COUNT_, F_COUNT_ANY,
    F_MIN_INT2, F_MIN_INT4, F_MIN_INT8, F_MIN_FLOAT8, F_MIN_NUMERIC, F_MIN_TEXT, F_MIN_DATE,
    F_MAX_INT2, F_MAX_INT4, F_MAX_INT8, F_MAX_FLOAT8, F_MAX_NUMERIC, F_MAX_TEXT, F_MAX_DATE,
    F_ROW_NUMBER, F_RANK_, F_DENSE_RANK_,
};

// Those that compare text: they raise when no collation is known, so the
// walk requires one.
constexpr Oid kTextCompare[] = {F_TEXTEQ, F_TEXTNE, F_TEXT_LT, F_TEXT_LE, F_TEXT_GT, F_TEXT_GE, F_MIN_TEXT, F_MAX_TEXT};

bool allowed(Oid f) { return std::find(std::begin(kAllowed), std::end(kAllowed), f) != std::end(kAllowed); }
bool compares_text(Oid f) {
  return std::find(std::begin(kTextCompare), std::end(kTextCompare), f) != std::end(kTextCompare);
}

// ---- the walk ------------------------------------------------------------------

struct Guard {
  char refused[512];  // "" while nothing was refused; else why ("must not call abs() (...)")
  Oid bad_function;
  bool found;
};

void refuse(Guard* g, const char* fmt, ...) __attribute__((format(printf, 2, 3)));  // not pg_attribute_printf: clang has no gnu_printf
void refuse(Guard* g, const char* fmt, ...) {
  if (g->found) return;
  g->found = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->refused, sizeof g->refused, fmt, ap);
  va_end(ap);
}

void refuse_function(Guard* g, Oid f) {
  const char* name = get_func_name(f);
  refuse(g, "must not call %s() (optdp runs only functions that cannot fail on a value or quote one: "
            "docs/boundary.md)", name ? name : "an unknown function");
}

bool not_allowed(Oid f, void* context) {
  auto* g = static_cast<Guard*>(context);
  if (allowed(f)) return false;
  g->bad_function = f;
  return true;
}

// A sort or group clause's operators: built-in comparisons of the list only.
void check_sortgroup(Guard* g, const SortGroupClause* s) {
  if (OidIsValid(s->eqop) && !allowed(get_opcode(s->eqop))) refuse_function(g, get_opcode(s->eqop));
  if (OidIsValid(s->sortop) && !allowed(get_opcode(s->sortop))) refuse_function(g, get_opcode(s->sortop));
}

// Sorting or grouping text needs a known collation (else the comparison raises).
void check_sort_collations(Guard* g, List* clauses, List* tlist) {
  ListCell* lc;
  foreach (lc, clauses) {
    auto* s = static_cast<SortGroupClause*>(lfirst(lc));
    TargetEntry* tle = get_sortgroupclause_tle(s, tlist);
    Node* e = reinterpret_cast<Node*>(tle->expr);
    if (type_is_collatable(exprType(e)) && !OidIsValid(exprCollation(e)))
      refuse(g, "must sort and group text under a known collation (add COLLATE to the expression)");
  }
}

// A call of an immutable built-in function (or operator) that returns one value, on
// constants only: the planner folds it to a constant (eval_const_expressions)
// when the cursor is opened, before the charge and before any row, so
// whether it fails depends on the query alone (`v > 0.5` casts the numeric
// 0.5 to double precision this way).
bool constant_call(Node* node) {
  if (node == nullptr) return false;
  if (IsA(node, Const)) return true;
  if (IsA(node, RelabelType)) return constant_call(reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(node)->arg));
  Oid f;
  List* args;
  if (IsA(node, FuncExpr)) {
    f = reinterpret_cast<FuncExpr*>(node)->funcid;
    args = reinterpret_cast<FuncExpr*>(node)->args;
    if (reinterpret_cast<FuncExpr*>(node)->funcretset) return false;
  } else if (IsA(node, OpExpr)) {
    f = get_opcode(reinterpret_cast<OpExpr*>(node)->opno);
    args = reinterpret_cast<OpExpr*>(node)->args;
    if (reinterpret_cast<OpExpr*>(node)->opretset) return false;
  } else {
    return false;
  }
  // Built-in functions only: an extension's or a user's function can be
  // declared immutable and still read tables (and optdp's own are refused).
  // (The planner does not fold a function that returns a set or a record.)
  if (!OidIsValid(f) || f >= FirstGenbkiObjectId || func_volatile(f) != PROVOLATILE_IMMUTABLE || get_func_retset(f) ||
      get_func_rettype(f) == RECORDOID)
    return false;
  ListCell* lc;
  foreach (lc, args)
    if (!constant_call(static_cast<Node*>(lfirst(lc)))) return false;
  return true;
}

// A LIMIT or OFFSET that is a constant: a Const, or the parser's widening
// cast of an integer literal to bigint (LIMIT 10 is int8(10)).
bool limit_constant(Node* n, bool* null, std::int64_t* v) {
  while (n != nullptr && IsA(n, RelabelType)) n = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(n)->arg);
  if (n != nullptr && IsA(n, FuncExpr) && list_length(reinterpret_cast<FuncExpr*>(n)->args) == 1 &&
      (reinterpret_cast<FuncExpr*>(n)->funcid == F_INT8_INT4 || reinterpret_cast<FuncExpr*>(n)->funcid == F_INT8_INT2)) {
    const Oid f = reinterpret_cast<FuncExpr*>(n)->funcid;
    Node* a = static_cast<Node*>(linitial(reinterpret_cast<FuncExpr*>(n)->args));
    if (!IsA(a, Const)) return false;
    const Const* c = reinterpret_cast<const Const*>(a);
    *null = c->constisnull;
    *v = c->constisnull ? 0 : f == F_INT8_INT4 ? DatumGetInt32(c->constvalue) : DatumGetInt16(c->constvalue);
    return true;
  }
  if (n == nullptr || !IsA(n, Const)) return false;
  const Const* c = reinterpret_cast<const Const*>(n);
  if (c->consttype != INT8OID) return false;
  *null = c->constisnull;
  *v = c->constisnull ? 0 : DatumGetInt64(c->constvalue);
  return true;
}

bool guard_walker(Node* node, void* context) {
  auto* g = static_cast<Guard*>(context);
  if (node == nullptr || g->found) return g->found;
  switch (nodeTag(node)) {
    case T_Query: {
      Query* q = reinterpret_cast<Query*>(node);
      if (q->commandType != CMD_SELECT || q->utilityStmt != nullptr || q->rowMarks != NIL || q->hasModifyingCTE) {
        refuse(g, "must be a read-only query (SELECT)");
        return true;
      }
      if (q->hasRecursive) {
        refuse(g, "must not use a recursive CTE (its time and memory could depend on the rows)");
        return true;
      }
      // LIMIT and OFFSET: constants only. An expression (OFFSET CASE WHEN
      // EXISTS (...) THEN -1 ELSE 0 END), or a negative constant, is
      // evaluated and checked only when the first row is fetched: after the
      // charge, and with an outcome (an error or rows) that can depend on a row.
      for (Node* l : {q->limitCount, q->limitOffset}) {
        if (l == nullptr) continue;
        bool null;
        std::int64_t v;
        if (!limit_constant(l, &null, &v)) {
          refuse(g, "must give LIMIT and OFFSET as constants (an expression is evaluated only when a row is read)");
          return true;
        }
        if (!null && v < 0) {
          refuse(g, "must not give a negative LIMIT or OFFSET");
          return true;
        }
      }
      check_sort_collations(g, q->sortClause, q->targetList);
      check_sort_collations(g, q->groupClause, q->targetList);
      check_sort_collations(g, q->distinctClause, q->targetList);
      ListCell* lc;
      foreach (lc, q->windowClause) {
        auto* w = static_cast<WindowClause*>(lfirst(lc));
        // A frame offset is checked (and can raise) only when a row is read.
        if (w->startOffset || w->endOffset) {
          refuse(g, "must not use a window frame with an offset (it is checked only when a row is read)");
          return true;
        }
        check_sort_collations(g, w->partitionClause, q->targetList);
        check_sort_collations(g, w->orderClause, q->targetList);
        ListCell* c;
        foreach (c, w->partitionClause) check_sortgroup(g, static_cast<SortGroupClause*>(lfirst(c)));
        foreach (c, w->orderClause) check_sortgroup(g, static_cast<SortGroupClause*>(lfirst(c)));
      }
      if (g->found) return true;
      return query_tree_walker(q, walker_cast(guard_walker), context,
                               QTW_EXAMINE_RTES_BEFORE | QTW_EXAMINE_SORTGROUP);
    }
    case T_RangeTblEntry: {
      auto* rte = reinterpret_cast<RangeTblEntry*>(node);
      switch (rte->rtekind) {
        case RTE_RELATION: {
          const char kind = get_rel_relkind(rte->relid);
          if (kind == RELKIND_FOREIGN_TABLE) {
            refuse(g, "must not read foreign table %s (a remote read can fail on its own rows)",
                   get_rel_name(rte->relid));
            return true;
          }
          if (rte->tablesample) {
            refuse(g, "must not use TABLESAMPLE (its arguments are checked only when a row is read)");
            return true;
          }
          return false;
        }
        case RTE_SUBQUERY:
        case RTE_JOIN:
        case RTE_FUNCTION:
        case RTE_VALUES:
        case RTE_CTE:
        case RTE_RESULT: return false;
        default: refuse(g, "must read only tables, views and subqueries"); return true;
      }
    }
    case T_SortGroupClause: check_sortgroup(g, reinterpret_cast<SortGroupClause*>(node)); return g->found;
    case T_WindowClause: return false;  // checked with its query (above)
    case T_SetOperationStmt: {
      // UNION, INTERSECT, EXCEPT: their equality and sort operators, then both sides.
      ListCell* lc;
      foreach (lc, reinterpret_cast<SetOperationStmt*>(node)->groupClauses)
        check_sortgroup(g, static_cast<SortGroupClause*>(lfirst(lc)));
      if (g->found) return true;
      break;
    }
    case T_SubLink: {
      const SubLinkType t = reinterpret_cast<SubLink*>(node)->subLinkType;
      if (t != EXISTS_SUBLINK && t != ANY_SUBLINK && t != ALL_SUBLINK) {
        // A scalar subquery raises when it returns more than one row.
        refuse(g, "must not use a scalar subquery (it fails when it returns more than one row); use EXISTS, IN "
                  "or a join");
        return true;
      }
      break;
    }
    case T_CoerceViaIO: {
      // A cast through text runs the source type's output function and the
      // target type's input function, which raises on malformed input: name
      // the input function, or the output function for a cast to text.
      auto* c = reinterpret_cast<CoerceViaIO*>(node);
      Oid in, ioparam, out;
      bool varlena;
      getTypeInputInfo(c->resulttype, &in, &ioparam);
      getTypeOutputInfo(exprType(reinterpret_cast<Node*>(c->arg)), &out, &varlena);
      refuse_function(g, TypeCategory(c->resulttype) == TYPCATEGORY_STRING ? out : in);
      return true;
    }
    case T_CoerceToDomain:
      refuse(g, "must not cast to a domain (its constraint can fail on a value)");
      return true;
    case T_MinMaxExpr: {
      // GREATEST and LEAST compare with the type's btree order: allowed for
      // the types whose comparisons are on the list.
      const Oid t = reinterpret_cast<MinMaxExpr*>(node)->minmaxtype;
      if (!(t == INT2OID || t == INT4OID || t == INT8OID || t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID ||
            t == DATEOID || t == TIMESTAMPOID || t == TIMESTAMPTZOID || t == BOOLOID)) {
        refuse(g, "must not use GREATEST or LEAST of type %s (optdp runs only functions that cannot fail on a value "
                  "or quote one: docs/boundary.md)", format_type_be(t));
        return true;
      }
      break;
    }
    case T_ArrayExpr: {
      // ARRAY[...]: a multidimensional one raises when its parts' dimensions
      // differ (ARRAY[ARRAY[1], CASE ... THEN ARRAY[1, 2] ... END]), which
      // only a row can show; one of variable-length values read from rows
      // can exceed the largest array. One dimension of fixed-length values,
      // or of constants, cannot fail.
      auto* a = reinterpret_cast<ArrayExpr*>(node);
      if (a->multidims) {
        refuse(g, "must not build a multidimensional array (it fails when its parts' dimensions differ, which only a "
                  "row can show)");
        return true;
      }
      if (get_typlen(a->element_typeid) < 0) {
        ListCell* lc;
        foreach (lc, a->elements)
          if (!IsA(static_cast<Node*>(lfirst(lc)), Const)) {
            refuse(g, "must not build an array of variable-length values from columns (its size could exceed the "
                      "largest array on one row's values)");
            return true;
          }
      }
      break;
    }
    case T_Var:
    case T_Const:
    case T_Param:
    case T_Aggref:
    case T_WindowFunc:
    case T_GroupingFunc:
    case T_FuncExpr:
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr:
    case T_ScalarArrayOpExpr:
    case T_BoolExpr:
    case T_RelabelType:
    case T_CaseExpr:
    case T_CaseWhen:
    case T_CaseTestExpr:
    case T_CoalesceExpr:
    case T_CollateExpr:
    case T_NullTest:
    case T_BooleanTest:
    case T_TargetEntry:
    case T_FromExpr:
    case T_JoinExpr:
    case T_RangeTblRef:
    case T_RangeTblFunction:
    case T_CommonTableExpr:
    case T_GroupingSet:
    case T_List: break;
    default:
      refuse(g, "must not use this kind of expression (node %d; optdp runs only expressions that cannot fail on a "
                "value: docs/boundary.md)", static_cast<int>(nodeTag(node)));
      return true;
  }
  if (constant_call(node)) return false;
  if (check_functions_in_node(node, not_allowed, context)) {
    refuse_function(g, g->bad_function);
    return true;
  }
  // Text comparisons raise without a collation.
  Oid f = InvalidOid;
  if (IsA(node, FuncExpr)) f = reinterpret_cast<FuncExpr*>(node)->funcid;
  else if (IsA(node, OpExpr) || IsA(node, DistinctExpr) || IsA(node, NullIfExpr)) f = get_opcode(reinterpret_cast<OpExpr*>(node)->opno);
  else if (IsA(node, ScalarArrayOpExpr)) f = get_opcode(reinterpret_cast<ScalarArrayOpExpr*>(node)->opno);
  else if (IsA(node, Aggref)) f = reinterpret_cast<Aggref*>(node)->aggfnoid;
  if (OidIsValid(f) && compares_text(f) && !OidIsValid(exprInputCollation(node))) {
    refuse(g, "must compare text under a known collation (add COLLATE to the expression)");
    return true;
  }
  return expression_tree_walker(node, walker_cast(guard_walker), context);
}

// ---- declared units (sql/35-units.sql, docs/grouped.md) ------------------------------
//
// Who a row belongs to is the data's owner's declaration (optdp_units,
// optdp_links), never the analyst's SQL. A rows query that reads a declared
// (private) relation is checked on its analysed, rewritten tree (views
// expanded), level by level, against shapes that keep every output row to
// the one unit of the private rows it comes from:
//  - the release's unit (column 1) is a declared unit column of a private
//    relation read in FROM (through subqueries, CTEs and UNION [ALL] of
//    queries that return it in the same column);
//  - every read of a private relation (a self-join, a CTE read twice) is
//    joined to the others on unit = unit (an integer equality, a top-level
//    conjunct of WHERE or of a join's ON), and only relations whose units
//    are declared linked are joined: so all private values of a row are
//    one unit's;
//  - GROUP BY, window partitions and DISTINCT include the unit (else one
//    unit's value would reach another's row); no LIMIT or OFFSET (they pick
//    rows across units), no subquery in an expression, no LATERAL;
//  - a public relation is joined by equality on a column with a unique
//    index, to values of relations already so bound (so each private row
//    meets at most one of its rows, and no private value decides how many
//    public rows are produced: finding 3 of issue 27); VALUES and function
//    calls in FROM have as many rows as the query's text says.
// Everything else is refused when prepared, with one message that names the
// rule (and, where it helps, a relation the query names), never a value.
// The walk is C-style (palloc, Lists, Bitmapsets): it calls PostgreSQL
// functions that may raise, so no C++ object with a destructor is alive.

struct Declared {
  Oid relid;
  AttrNumber unit;  // InvalidAttrNumber when the declared name is no column of the relation
  int domain;       // relations whose units are linked share a domain
};

struct Units {
  int n;
  Declared* d;  // palloc'd
};

int declared(const Units* u, Oid relid) {
  for (int i = 0; i < u->n; ++i)
    if (u->d[i].relid == relid) return i;
  return -1;
}

int find_root(int* parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// The extension's table `name`: in the extension's schema, and a member of
// the extension (so no role can stand another table in for it).
Relation open_extension_table(Oid ext, Oid nsp, const char* name) {
  const Oid relid = get_relname_relid(name, nsp);
  if (!OidIsValid(relid) || getExtensionOfObject(RelationRelationId, relid) != ext)
    ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                    errmsg("%s: the extension's table %s is missing (sql/35-units.sql): update the extension", kName,
                           name)));
  return table_open(relid, AccessShareLock);
}

// Reads the declarations with the statement's snapshot, by the tables' OIDs,
// with no permission check (the caller may not read them) and no SQL. The
// extension is not relocatable: its tables are in the schema of its
// function `fn` (private_groups).
Units load_units(Oid fn) {
  Units u{0, nullptr};
  const Oid ext = get_extension_oid("optdp", false);
  const Oid nsp = get_func_namespace(fn);
  int cap = 8;
  u.d = static_cast<Declared*>(palloc(cap * sizeof(Declared)));
  Relation rel = open_extension_table(ext, nsp, "optdp_units");
  TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, nullptr);
  HeapTuple tup;
  while ((tup = heap_getnext(scan, ForwardScanDirection)) != nullptr) {
    bool null_rel, null_col;
    const Datum r = heap_getattr(tup, 1, RelationGetDescr(rel), &null_rel);
    const Datum c = heap_getattr(tup, 2, RelationGetDescr(rel), &null_col);
    if (null_rel || null_col) continue;
    const char kind = get_rel_relkind(DatumGetObjectId(r));
    // Tables only: a view's rows are its tables' (declare those).
    if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_MATVIEW &&
        kind != RELKIND_FOREIGN_TABLE)
      continue;
    if (u.n == cap) {
      cap *= 2;
      u.d = static_cast<Declared*>(repalloc(u.d, cap * sizeof(Declared)));
    }
    Declared& d = u.d[u.n];
    d.relid = DatumGetObjectId(r);
    d.unit = get_attnum(d.relid, NameStr(*DatumGetName(c)));
    d.domain = u.n;
    ++u.n;
  }
  table_endscan(scan);
  table_close(rel, AccessShareLock);
  // The links: one domain per connected set of declared unit columns.
  int* parent = static_cast<int*>(palloc((u.n + 1) * sizeof(int)));
  for (int i = 0; i < u.n; ++i) parent[i] = i;
  rel = open_extension_table(ext, nsp, "optdp_links");
  scan = table_beginscan(rel, GetActiveSnapshot(), 0, nullptr);
  while ((tup = heap_getnext(scan, ForwardScanDirection)) != nullptr) {
    bool null[4];
    Datum v[4];
    for (int a = 0; a < 4; ++a) v[a] = heap_getattr(tup, a + 1, RelationGetDescr(rel), &null[a]);
    if (null[0] || null[1] || null[2] || null[3]) continue;
    const int i = declared(&u, DatumGetObjectId(v[0])), j = declared(&u, DatumGetObjectId(v[2]));
    if (i < 0 || j < 0 || u.d[i].unit == InvalidAttrNumber || u.d[j].unit == InvalidAttrNumber) continue;
    // A link counts only between the two declared unit columns.
    if (get_attnum(u.d[i].relid, NameStr(*DatumGetName(v[1]))) != u.d[i].unit ||
        get_attnum(u.d[j].relid, NameStr(*DatumGetName(v[3]))) != u.d[j].unit)
      continue;
    parent[find_root(parent, i)] = find_root(parent, j);
  }
  table_endscan(scan);
  table_close(rel, AccessShareLock);
  for (int i = 0; i < u.n; ++i) u.d[i].domain = find_root(parent, i);
  return u;
}

// Whether a query reads a declared relation anywhere, or (relations) any
// relation or CTE at all; a CTE it reads that an enclosing query defines
// is followed to that query's CTE list. `levels`: the queries being walked,
// innermost first (the enclosing ones of the query walked first included).
struct PrivateFinder {
  const Units* units;
  bool relations;
  List* levels;
  Oid found;     // the declared (or, with `relations`, any) relation found
  bool any_cte;  // with `relations`: a CTE was found
};

bool private_walker(Node* node, void* context) {
  if (node == nullptr) return false;
  auto* f = static_cast<PrivateFinder*>(context);
  if (IsA(node, RangeTblEntry)) {
    auto* rte = reinterpret_cast<RangeTblEntry*>(node);
    if (rte->rtekind == RTE_RELATION && (f->relations || declared(f->units, rte->relid) >= 0)) {
      f->found = rte->relid;
      return true;
    }
    if (rte->rtekind == RTE_CTE && f->relations) {
      f->any_cte = true;
      return true;
    }
    if (rte->rtekind == RTE_CTE && rte->ctelevelsup > 0 && rte->ctelevelsup < static_cast<Index>(list_length(f->levels))) {
      // A CTE of an enclosing query: walk its body as a child of that query
      // (its owner heads the list; the body's references to its sibling
      // CTEs are one level up). A CTE of this query is walked with its
      // cteList.
      List* saved = f->levels;
      f->levels = list_copy_tail(saved, static_cast<int>(rte->ctelevelsup));
      const Query* owner = static_cast<const Query*>(list_nth(saved, static_cast<int>(rte->ctelevelsup)));
      bool hit = false;
      ListCell* lc;
      foreach (lc, owner->cteList) {
        auto* cte = static_cast<CommonTableExpr*>(lfirst(lc));
        if (std::strcmp(cte->ctename, rte->ctename) == 0) hit = private_walker(cte->ctequery, context);
        if (hit) break;
      }
      f->levels = saved;
      return hit;
    }
    return false;
  }
  if (IsA(node, Query)) {
    f->levels = lcons(node, f->levels);
    const bool hit = query_tree_walker(reinterpret_cast<Query*>(node), walker_cast(private_walker), context,
                                       QTW_EXAMINE_RTES_BEFORE);
    f->levels = list_delete_first(f->levels);
    return hit;
  }
  return expression_tree_walker(node, walker_cast(private_walker), context);
}

bool reads_private(Query* q, const Units* units, List* levels, bool relations = false) {
  PrivateFinder f{units, relations, list_copy(levels), InvalidOid, false};
  private_walker(reinterpret_cast<Node*>(q), &f);
  return OidIsValid(f.found) || f.any_cte;
}

constexpr const char* kUnitDocs = " (docs/grouped.md, \"Declared units on PostgreSQL\")";

// A unit-preserving cast: a RelabelType or a widening integer cast.
Node* strip_unit_cast(Node* e) {
  for (;;) {
    if (e != nullptr && IsA(e, RelabelType)) {
      e = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(e)->arg);
    } else if (e != nullptr && IsA(e, FuncExpr) && list_length(reinterpret_cast<FuncExpr*>(e)->args) == 1 &&
               (reinterpret_cast<FuncExpr*>(e)->funcid == F_INT4_INT2 ||
                reinterpret_cast<FuncExpr*>(e)->funcid == F_INT8_INT2 ||
                reinterpret_cast<FuncExpr*>(e)->funcid == F_INT8_INT4)) {
      e = static_cast<Node*>(linitial(reinterpret_cast<FuncExpr*>(e)->args));
    } else {
      return e;
    }
  }
}

// The source (range-table index of q) and column that e reads, if e is a
// column of q's FROM (through join aliases and unit-preserving casts).
bool var_source(const Query* q, Node* e, int* rti, AttrNumber* att) {
  e = strip_unit_cast(e);
  if (e == nullptr || !IsA(e, Var)) return false;
  const Var* v = reinterpret_cast<const Var*>(e);
  if (v->varlevelsup != 0 || v->varattno <= 0) return false;
  const RangeTblEntry* rte = rt_fetch(v->varno, q->rtable);
  if (rte->rtekind == RTE_JOIN) {
    if (v->varattno > list_length(rte->joinaliasvars)) return false;
    return var_source(q, static_cast<Node*>(list_nth(rte->joinaliasvars, v->varattno - 1)), rti, att);
  }
  *rti = static_cast<int>(v->varno);
  *att = v->varattno;
  return true;
}

// The sources (range-table indexes) an expression of q reads; `unknown`
// when it reads a whole join row, an outer query or a subquery.
struct VarsOf {
  const Query* q;
  Bitmapset* rtis;
  bool unknown;
};

bool vars_walker(Node* node, void* context) {
  if (node == nullptr) return false;
  auto* c = static_cast<VarsOf*>(context);
  if (IsA(node, Var)) {
    const Var* v = reinterpret_cast<const Var*>(node);
    if (v->varlevelsup != 0) {
      c->unknown = true;
      return false;
    }
    const RangeTblEntry* rte = rt_fetch(v->varno, c->q->rtable);
    if (rte->rtekind == RTE_JOIN) {
      if (v->varattno <= 0 || v->varattno > list_length(rte->joinaliasvars)) {
        c->unknown = true;
        return false;
      }
      return vars_walker(static_cast<Node*>(list_nth(rte->joinaliasvars, v->varattno - 1)), context);
    }
    c->rtis = bms_add_member(c->rtis, static_cast<int>(v->varno));
    return false;
  }
  if (IsA(node, Query) || IsA(node, SubLink)) {
    c->unknown = true;
    return false;
  }
  return expression_tree_walker(node, walker_cast(vars_walker), context);
}

// The conjuncts of a qualification (AND flattened; not under OR or NOT).
void add_conjuncts(Node* n, List** out) {
  if (n == nullptr) return;
  ListCell* lc;
  if (IsA(n, List)) {
    foreach (lc, reinterpret_cast<List*>(n)) add_conjuncts(static_cast<Node*>(lfirst(lc)), out);
  } else if (is_andclause(n)) {
    foreach (lc, reinterpret_cast<BoolExpr*>(n)->args) add_conjuncts(static_cast<Node*>(lfirst(lc)), out);
  } else {
    *out = lappend(*out, n);
  }
}

// A conjunct of a join's ON or of WHERE, with what it guarantees: one of
// WHERE or of an inner join's ON holds in every row (strong); one of a LEFT
// or RIGHT join's ON holds in every row where a source of the join's
// nullable side is present (weak); one of a FULL join's ON guarantees
// nothing about either side.
enum QualKind : char { kStrong, kWeak, kNone };

struct JoinQual {
  Node* expr;
  QualKind kind;
  Bitmapset* nullable_side;   // kWeak: the sources of the join's nullable side
  Bitmapset* preserved_side;  // kWeak: those of its other side
};

void rtis_under(Node* n, Bitmapset** out) {
  if (n == nullptr) return;
  ListCell* lc;
  if (IsA(n, RangeTblRef)) {
    *out = bms_add_member(*out, reinterpret_cast<RangeTblRef*>(n)->rtindex);
  } else if (IsA(n, FromExpr)) {
    foreach (lc, reinterpret_cast<FromExpr*>(n)->fromlist) rtis_under(static_cast<Node*>(lfirst(lc)), out);
  } else if (IsA(n, JoinExpr)) {
    rtis_under(reinterpret_cast<JoinExpr*>(n)->larg, out);
    rtis_under(reinterpret_cast<JoinExpr*>(n)->rarg, out);
  }
}

void add_join_quals(Node* quals, QualKind kind, Bitmapset* nullable_side, Bitmapset* preserved_side, List** out) {
  List* conjuncts = NIL;
  add_conjuncts(quals, &conjuncts);
  ListCell* lc;
  foreach (lc, conjuncts) {
    auto* jq = static_cast<JoinQual*>(palloc(sizeof(JoinQual)));
    jq->expr = static_cast<Node*>(lfirst(lc));
    jq->kind = kind;
    jq->nullable_side = nullable_side;
    jq->preserved_side = preserved_side;
    *out = lappend(*out, jq);
  }
}

// The sources of a FROM (range-table indexes of its relations, subqueries,
// CTEs, VALUES, functions), the conjuncts of its WHERE and of every ON
// (JoinQual), and the sources on the nullable side of an outer join (their
// columns are NULL in rows of other units: a NULL unit is no unit to group
// or partition by).
void collect_from(Node* n, List** rtis, List** quals, Bitmapset** nullable, bool under_nullable) {
  if (n == nullptr) return;
  ListCell* lc;
  if (IsA(n, RangeTblRef)) {
    const int r = reinterpret_cast<RangeTblRef*>(n)->rtindex;
    *rtis = lappend_int(*rtis, r);
    if (under_nullable) *nullable = bms_add_member(*nullable, r);
  } else if (IsA(n, FromExpr)) {
    foreach (lc, reinterpret_cast<FromExpr*>(n)->fromlist)
      collect_from(static_cast<Node*>(lfirst(lc)), rtis, quals, nullable, under_nullable);
    add_join_quals(reinterpret_cast<FromExpr*>(n)->quals, kStrong, nullptr, nullptr, quals);
  } else if (IsA(n, JoinExpr)) {
    const auto* j = reinterpret_cast<JoinExpr*>(n);
    const bool left = j->jointype == JOIN_RIGHT || j->jointype == JOIN_FULL;
    const bool right = j->jointype == JOIN_LEFT || j->jointype == JOIN_FULL;
    collect_from(j->larg, rtis, quals, nullable, under_nullable || left);
    collect_from(j->rarg, rtis, quals, nullable, under_nullable || right);
    Bitmapset *l = nullptr, *r = nullptr;
    rtis_under(j->larg, &l);
    rtis_under(j->rarg, &r);
    if (j->jointype == JOIN_INNER) add_join_quals(j->quals, kStrong, nullptr, nullptr, quals);
    else if (j->jointype == JOIN_LEFT) add_join_quals(j->quals, kWeak, r, l, quals);
    else if (j->jointype == JOIN_RIGHT) add_join_quals(j->quals, kWeak, l, r, quals);
    else add_join_quals(j->quals, kNone, nullptr, nullptr, quals);
  }
}

bool integer_equality(Oid opno) {
  const Oid f = get_opcode(opno);
  return f == F_INT2EQ || f == F_INT4EQ || f == F_INT8EQ || f == F_INT24EQ || f == F_INT42EQ || f == F_INT28EQ ||
         f == F_INT82EQ || f == F_INT48EQ || f == F_INT84EQ;
}

// Whether `att` of the public relation of rte has a unique, immediate,
// valid, non-partial single-column index whose operator family has opno as
// its equality: then `att = x` matches at most one row for each x.
bool unique_column(const RangeTblEntry* rte, AttrNumber att, Oid opno, Oid collation) {
  const char kind = get_rel_relkind(rte->relid);
  if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE && kind != RELKIND_MATVIEW) return false;
  // A unique index of a plain table does not cover its inheritance children.
  if (rte->inh && kind == RELKIND_RELATION && has_subclass(rte->relid)) return false;
  // Equality under a nondeterministic collation can match several values
  // that a unique index keeps apart.
  if (OidIsValid(collation) && !get_collation_isdeterministic(collation)) return false;
  bool found = false;
  Relation rel = table_open(rte->relid, AccessShareLock);
  List* indexes = RelationGetIndexList(rel);
  ListCell* lc;
  foreach (lc, indexes) {
    HeapTuple t = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));
    if (!HeapTupleIsValid(t)) continue;
    const auto* ix = reinterpret_cast<Form_pg_index>(GETSTRUCT(t));
    if (ix->indisunique && ix->indimmediate && ix->indisvalid && ix->indnkeyatts == 1 && ix->indkey.values[0] == att &&
        heap_attisnull(t, Anum_pg_index_indpred, nullptr) && heap_attisnull(t, Anum_pg_index_indexprs, nullptr)) {
      bool isnull;
      const Datum d = SysCacheGetAttr(INDEXRELID, t, Anum_pg_index_indclass, &isnull);
      if (!isnull) {
        const auto* classes = reinterpret_cast<const oidvector*>(DatumGetPointer(d));
        const Oid family = get_opclass_family(classes->values[0]);
        if (get_op_opfamily_strategy(opno, family) == BTEqualStrategyNumber) found = true;
      }
    }
    ReleaseSysCache(t);
    if (found) break;
  }
  list_free(indexes);
  table_close(rel, AccessShareLock);
  return found;
}

// What a query level reads, as its parent sees it.
struct Level {
  bool is_private;
  int domain;
  Bitmapset* unit_out;  // resnos of the output columns that carry the row's unit
};

enum SourceKind : char { kNotSource, kPrivate, kPublicTable, kBounded, kPublicOther };

struct UnitCheck {
  Guard* g;
  const Units* units;
  List* levels;  // the enclosing queries, innermost first (for a CTE's ctelevelsup)
};

// One query level's FROM.
struct Sources {
  int n;  // list_length(rtable) + 1
  char* kind;
  int* domain;
  Bitmapset** unit;  // per private source: its unit columns (attnos, or a subquery's resnos)
  Bitmapset* nullable;  // sources on the nullable side of an outer join
  int* parent;       // private sources joined on unit = unit (union-find)
  bool* bound;       // private, bounded, or a public relation bound by a unique column
};

Level analyze_level(UnitCheck* c, Query* q);

// Whether e is the unit of the row: a unit column of a private source that
// is not on an outer join's nullable side (there it is NULL in rows of other
// units, so grouping or partitioning by it would gather many units, and a
// parent query could not tell those rows' unit).
bool is_unit(const Query* q, const Sources& s, Node* e) {
  int rti;
  AttrNumber att;
  return var_source(q, e, &rti, &att) && s.kind[rti] == kPrivate && bms_is_member(att, s.unit[rti]) &&
         !bms_is_member(rti, s.nullable);
}

// Whether GROUP BY, PARTITION BY or DISTINCT ON clauses include the unit.
bool clause_has_unit(const Query* q, const Sources& s, List* clauses) {
  ListCell* lc;
  foreach (lc, clauses) {
    TargetEntry* tle = get_sortgroupclause_tle(static_cast<SortGroupClause*>(lfirst(lc)), q->targetList);
    if (tle != nullptr && is_unit(q, s, reinterpret_cast<Node*>(tle->expr))) return true;
  }
  return false;
}

// A subquery or CTE body, analysed with `levels` as its enclosing queries.
Level analyze_in(UnitCheck* c, Query* sub, List* levels) {
  List* saved = c->levels;
  c->levels = levels;
  Level l = analyze_level(c, sub);
  c->levels = saved;
  return l;
}

void classify(UnitCheck* c, Query* q, int rti, Sources* s) {
  RangeTblEntry* rte = rt_fetch(rti, q->rtable);
  if (rte->lateral) {
    refuse(c->g, "must not use LATERAL where it reads a private relation%s", kUnitDocs);
    return;
  }
  Level l{false, -1, nullptr};
  switch (rte->rtekind) {
    case RTE_RELATION: {
      const int i = declared(c->units, rte->relid);
      if (i < 0) {
        s->kind[rti] = kPublicTable;
        return;
      }
      if (c->units->d[i].unit == InvalidAttrNumber) {
        refuse(c->g, "must not read %s: its declared unit (optdp_units) names no column of it", get_rel_name(rte->relid));
        return;
      }
      s->kind[rti] = kPrivate;
      s->domain[rti] = c->units->d[i].domain;
      s->unit[rti] = bms_make_singleton(c->units->d[i].unit);
      return;
    }
    case RTE_SUBQUERY: l = analyze_in(c, rte->subquery, lcons(q, c->levels)); break;
    case RTE_CTE: {
      // The CTE's query, in the level that defines it; its enclosing queries
      // start with that level.
      List* levels = lcons(q, c->levels);
      if (rte->ctelevelsup >= static_cast<Index>(list_length(levels))) {
        refuse(c->g, "must read only tables, views and subqueries");
        return;
      }
      levels = list_copy_tail(levels, static_cast<int>(rte->ctelevelsup));
      const Query* owner = static_cast<const Query*>(linitial(levels));
      CommonTableExpr* cte = nullptr;
      ListCell* lc;
      foreach (lc, owner->cteList)
        if (std::strcmp(static_cast<CommonTableExpr*>(lfirst(lc))->ctename, rte->ctename) == 0)
          cte = static_cast<CommonTableExpr*>(lfirst(lc));
      if (cte == nullptr || !IsA(cte->ctequery, Query)) {
        refuse(c->g, "must read only tables, views and subqueries");
        return;
      }
      l = analyze_in(c, reinterpret_cast<Query*>(cte->ctequery), levels);
      break;
    }
    case RTE_VALUES:
    case RTE_RESULT:
    case RTE_FUNCTION: s->kind[rti] = kBounded; return;
    default: return;
  }
  if (l.is_private) {
    s->kind[rti] = kPrivate;
    s->domain[rti] = l.domain;
    s->unit[rti] = l.unit_out;
  } else if (rte->rtekind == RTE_SUBQUERY && !reads_private(rte->subquery, c->units, lcons(q, c->levels), true)) {
    // No relation and no CTE: rows written in the query's text ((VALUES ...) x).
    s->kind[rti] = kBounded;
  } else {
    s->kind[rti] = kPublicOther;
  }
}

// UNION [ALL] of private queries that each return the unit in the same
// column, in one domain.
void analyze_setop(UnitCheck* c, Query* q, Node* n, Level* out, bool* first) {
  if (c->g->found || n == nullptr) return;
  if (IsA(n, SetOperationStmt)) {
    auto* op = reinterpret_cast<SetOperationStmt*>(n);
    if (op->op != SETOP_UNION) {
      refuse(c->g, "must not use INTERSECT or EXCEPT where it reads a private relation%s", kUnitDocs);
      return;
    }
    analyze_setop(c, q, op->larg, out, first);
    analyze_setop(c, q, op->rarg, out, first);
    return;
  }
  if (!IsA(n, RangeTblRef)) return;
  RangeTblEntry* rte = rt_fetch(reinterpret_cast<RangeTblRef*>(n)->rtindex, q->rtable);
  const Level l = analyze_in(c, rte->subquery, lcons(q, c->levels));
  if (c->g->found) return;
  if (!l.is_private || (!*first && l.domain != out->domain)) {
    refuse(c->g, "must combine private rows by UNION only with private rows of linked units%s", kUnitDocs);
    return;
  }
  out->unit_out = *first ? l.unit_out : bms_intersect(out->unit_out, l.unit_out);
  out->domain = l.domain;
  *first = false;
}

Level analyze_level(UnitCheck* c, Query* q) {
  check_stack_depth();  // one frame per nested query (raises, as the parser would)
  Level out{false, -1, nullptr};
  Guard* g = c->g;
  if (g->found || !reads_private(q, c->units, c->levels)) return out;
  out.is_private = true;
  if (q->hasSubLinks) {
    refuse(g, "must not use a subquery in an expression (EXISTS, IN, ANY, ALL) where it reads a private relation: "
              "join on the unit instead%s", kUnitDocs);
    return out;
  }
  // LIMIT ALL and OFFSET 0 choose nothing (the guard made both constants).
  bool limit_null = true, offset_null = true;
  std::int64_t limit = 0, offset = 0;
  if (q->limitCount != nullptr && !limit_constant(q->limitCount, &limit_null, &limit)) limit_null = false;
  if (q->limitOffset != nullptr && !limit_constant(q->limitOffset, &offset_null, &offset)) offset = 1;
  if (!limit_null || (!offset_null && offset != 0)) {
    refuse(g, "must not use LIMIT or OFFSET where it reads a private relation (they choose rows across units)%s",
           kUnitDocs);
    return out;
  }
  if (q->setOperations != nullptr) {
    bool first = true;
    analyze_setop(c, q, q->setOperations, &out, &first);
    if (!g->found && bms_is_empty(out.unit_out))
      refuse(g, "must not combine by UNION private rows whose units are in different columns%s", kUnitDocs);
    return out;
  }
  if (q->groupingSets != NIL) {
    refuse(g, "must not use GROUPING SETS, ROLLUP or CUBE where it reads a private relation%s", kUnitDocs);
    return out;
  }

  List* rtis = NIL;
  List* quals = NIL;
  Sources s;
  s.nullable = nullptr;
  collect_from(reinterpret_cast<Node*>(q->jointree), &rtis, &quals, &s.nullable, false);
  s.n = list_length(q->rtable) + 1;
  s.kind = static_cast<char*>(palloc0(s.n));
  s.domain = static_cast<int*>(palloc0(s.n * sizeof(int)));
  s.unit = static_cast<Bitmapset**>(palloc0(s.n * sizeof(Bitmapset*)));
  s.parent = static_cast<int*>(palloc0(s.n * sizeof(int)));
  s.bound = static_cast<bool*>(palloc0(s.n * sizeof(bool)));
  ListCell* lc;
  foreach (lc, rtis) {
    classify(c, q, lfirst_int(lc), &s);
    if (g->found) return out;
  }

  // The private reads: one domain, joined into one on unit = unit. First
  // by the equalities that hold in every row; every read that is never
  // NULL-extended must be joined so. Then a read on an outer join's nullable
  // side joins them through an equality of that join's ON with a read of
  // its other side already joined (it is present only where that holds).
  // An equality through a nullable read never joins two reads that are
  // always present: where that read is NULL-extended they could be any
  // two units (patients p JOIN patients q ON q.id = 17 LEFT JOIN patients b
  // ON b.id = p.id AND b.id = q.id).
  int domain = -1, root = 0;
  foreach (lc, rtis) {
    const int r = lfirst_int(lc);
    s.parent[r] = r;
    if (s.kind[r] != kPrivate) continue;
    if (domain == -1) {
      domain = s.domain[r];
      root = r;
    } else if (s.domain[r] != domain) {
      refuse(g, "must not join private relations whose units are not declared linked (optdp_links)%s", kUnitDocs);
      return out;
    }
    if (bms_is_member(root, s.nullable) && !bms_is_member(r, s.nullable)) root = r;
  }
  if (domain == -1) {
    refuse(g, "must read a private relation only in FROM (not only in a CTE it does not read there)%s", kUnitDocs);
    return out;
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (bool changed = true; changed;) {
      changed = false;
      foreach (lc, quals) {
        const auto* jq = static_cast<const JoinQual*>(lfirst(lc));
        if (jq->kind != (pass == 0 ? kStrong : kWeak)) continue;
        Node* e = jq->expr;
        if (!IsA(e, OpExpr) || list_length(reinterpret_cast<OpExpr*>(e)->args) != 2 ||
            !integer_equality(reinterpret_cast<OpExpr*>(e)->opno))
          continue;
        int a, b;
        AttrNumber x, y;
        if (!(var_source(q, static_cast<Node*>(linitial(reinterpret_cast<OpExpr*>(e)->args)), &a, &x) &&
              var_source(q, static_cast<Node*>(lsecond(reinterpret_cast<OpExpr*>(e)->args)), &b, &y) &&
              s.kind[a] == kPrivate && s.kind[b] == kPrivate && bms_is_member(x, s.unit[a]) &&
              bms_is_member(y, s.unit[b])))
          continue;
        const int ra = find_root(s.parent, a), rb = find_root(s.parent, b), rr = find_root(s.parent, root);
        if (ra == rb) continue;
        if (pass == 1) {
          // a on the nullable side, b on the other, b already joined to the root (or the other way round)
          const bool ab = bms_is_member(a, jq->nullable_side) && bms_is_member(b, jq->preserved_side) && rb == rr;
          const bool ba = bms_is_member(b, jq->nullable_side) && bms_is_member(a, jq->preserved_side) && ra == rr;
          if (!ab && !ba) continue;
        }
        s.parent[ra] = rb;
        changed = true;
      }
    }
    if (pass == 0) {
      foreach (lc, rtis) {
        const int r = lfirst_int(lc);
        if (s.kind[r] == kPrivate && !bms_is_member(r, s.nullable) &&
            find_root(s.parent, r) != find_root(s.parent, root)) {
          refuse(g, "must join every read of a private relation to the others on their units (unit = unit in ON or "
                    "WHERE, not under OR or NOT), so that each row is one unit's%s", kUnitDocs);
          return out;
        }
      }
    }
  }
  foreach (lc, rtis) {
    const int r = lfirst_int(lc);
    if (s.kind[r] == kPrivate && find_root(s.parent, r) != find_root(s.parent, root)) {
      refuse(g, "must join every read of a private relation to the others on their units (unit = unit in ON or "
                "WHERE, not under OR or NOT), so that each row is one unit's%s", kUnitDocs);
      return out;
    }
    s.bound[r] = s.kind[r] == kPrivate || s.kind[r] == kBounded;
  }

  // The public relations: each bound by a unique column to bound sources.
  for (bool changed = true; changed;) {
    changed = false;
    foreach (lc, rtis) {
      const int r = lfirst_int(lc);
      if (s.kind[r] != kPublicTable || s.bound[r]) continue;
      ListCell* qc;
      foreach (qc, quals) {
        // Any conjunct bounds the rows it matches: at most one per row of the other side.
        Node* e = static_cast<const JoinQual*>(lfirst(qc))->expr;
        if (!IsA(e, OpExpr) || list_length(reinterpret_cast<OpExpr*>(e)->args) != 2) continue;
        auto* op = reinterpret_cast<OpExpr*>(e);
        for (int side = 0; side < 2 && !s.bound[r]; ++side) {
          int a;
          AttrNumber x;
          if (!var_source(q, static_cast<Node*>(list_nth(op->args, side)), &a, &x) || a != r) continue;
          VarsOf other{q, nullptr, false};
          vars_walker(static_cast<Node*>(list_nth(op->args, 1 - side)), &other);
          if (other.unknown || bms_is_member(r, other.rtis)) continue;
          bool all_bound = true;
          int m = -1;
          while ((m = bms_next_member(other.rtis, m)) >= 0)
            if (m >= s.n || !s.bound[m]) all_bound = false;
          if (all_bound && unique_column(rt_fetch(r, q->rtable), x, op->opno, op->inputcollid)) {
            s.bound[r] = true;
            changed = true;
          }
        }
      }
    }
  }
  foreach (lc, rtis) {
    const int r = lfirst_int(lc);
    if (s.kind[r] == kPublicTable && !s.bound[r]) {
      refuse(g, "must join public relation %s to private rows by equality on a column of it with a unique index (so "
                "that each private row meets at most one of its rows, and no private value decides how many rows "
                "are read)%s", get_rel_name(rt_fetch(r, q->rtable)->relid), kUnitDocs);
      return out;
    }
    if (s.kind[r] == kPublicOther) {
      refuse(g, "must not join a subquery or CTE without private rows to private rows (join public tables directly, "
                "on a unique column)%s", kUnitDocs);
      return out;
    }
  }

  // Nothing of one unit reaches another unit's row.
  if ((q->hasAggs || q->groupClause != NIL || q->havingQual != nullptr) && !clause_has_unit(q, s, q->groupClause)) {
    refuse(g, "must not aggregate across units: GROUP BY must include the unit where it reads a private relation%s",
           kUnitDocs);
    return out;
  }
  foreach (lc, q->windowClause) {
    if (!clause_has_unit(q, s, static_cast<WindowClause*>(lfirst(lc))->partitionClause)) {
      refuse(g, "must not use a window across units: PARTITION BY must include the unit where it reads a private "
                "relation%s", kUnitDocs);
      return out;
    }
  }
  if (q->distinctClause != NIL && !clause_has_unit(q, s, q->distinctClause)) {
    refuse(g, "must not use DISTINCT ON across units: it must include the unit where it reads a private relation%s",
           kUnitDocs);
    return out;
  }
  out.domain = domain;
  foreach (lc, q->targetList) {
    auto* tle = static_cast<TargetEntry*>(lfirst(lc));
    if (!tle->resjunk && is_unit(q, s, reinterpret_cast<Node*>(tle->expr)))
      out.unit_out = bms_add_member(out.unit_out, tle->resno);
  }
  return out;
}

// Whether `role` may read the columns rte reads (its SELECT privilege on the
// relation, or on each column it reads).
bool role_can_read(const RangeTblEntry* rte, Oid role) {
  if (pg_class_aclcheck(rte->relid, role, ACL_SELECT) == ACLCHECK_OK) return true;
  if (bms_is_empty(rte->selectedCols)) return false;
  int col = -1;
  while ((col = bms_next_member(rte->selectedCols, col)) >= 0) {
    const AttrNumber a = static_cast<AttrNumber>(col + FirstLowInvalidHeapAttributeNumber);
    if (a == InvalidAttrNumber) {
      if (pg_attribute_aclcheck_all(rte->relid, role, ACL_SELECT, ACLMASK_ALL) != ACLCHECK_OK) return false;
    } else if (pg_attribute_aclcheck(rte->relid, a, role, ACL_SELECT) != ACLCHECK_OK) {
      return false;
    }
  }
  return true;
}

// Every relation a query reads (views expanded): a keys query reads no
// private relation (its keys are released as they are); in analyst mode
// (`caller` valid: the role that called the SECURITY DEFINER function) every
// relation is private or readable by the caller.
struct ReadCheck {
  Guard* g;
  const Units* units;
  bool keys;
  Oid caller;
};

bool read_check_walker(Node* node, void* context) {
  if (node == nullptr) return false;
  auto* c = static_cast<ReadCheck*>(context);
  if (c->g->found) return true;
  if (IsA(node, RangeTblEntry)) {
    auto* rte = reinterpret_cast<RangeTblEntry*>(node);
    if (rte->rtekind != RTE_RELATION) return false;
    if (declared(c->units, rte->relid) >= 0) {
      if (c->keys) {
        refuse(c->g, "must not read private relation %s (optdp_units): the keys are released as they are, so they "
                     "must be public", get_rel_name(rte->relid));
        return true;
      }
      return false;
    }
    if (OidIsValid(c->caller) && rte->requiredPerms != 0 && !role_can_read(rte, c->caller)) {
      refuse(c->g, "must not read %s: it is neither a private relation declared in optdp_units nor readable by role %s",
             get_rel_name(rte->relid), GetUserNameFromId(c->caller, false));
      return true;
    }
    return false;
  }
  if (IsA(node, Query))
    return query_tree_walker(reinterpret_cast<Query*>(node), walker_cast(read_check_walker), context,
                             QTW_EXAMINE_RTES_BEFORE);
  return expression_tree_walker(node, walker_cast(read_check_walker), context);
}

// Analyst mode on PostgreSQL: this call runs with rights the role that
// called it does not have, in a SECURITY DEFINER function's body
// (docs/scale.md's deployment), not in a restricted operation (an index
// expression, a refresh, a maintenance command). Returns that role, else
// InvalidOid.
Oid definer_caller() {
  Oid user;
  int sec;
  GetUserIdAndSecContext(&user, &sec);
  if ((sec & SECURITY_LOCAL_USERID_CHANGE) == 0 || (sec & SECURITY_RESTRICTED_OPERATION) != 0) return InvalidOid;
  const Oid outer = GetOuterUserId();
  return outer == user ? InvalidOid : outer;
}

// ---- the call's shape -------------------------------------------------------------
//
// A release table function (private_groups, release_levels) runs (and is
// charged) each time the executor calls it. It must run exactly once per
// execution whatever the data, so the plan must be: a FunctionScan of this call alone, without a filter, under
// nothing but Sort, Limit, a plain Agg, WindowAgg, Result or an INSERT's
// ModifyTable, and with no subplan anywhere (a subquery, a CTE, a join would
// decide from rows how often, or whether, it runs). The arguments must be
// constants or query parameters (after constant folding).

[[noreturn]] void refuse_shape(const char* name, const char* why) {
  ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                  errmsg("%s: must be the only table of a top-level SELECT (SELECT ... FROM %s(...) [ORDER BY ...], "
                         "alone or in INSERT INTO ... SELECT or CREATE TABLE ... AS SELECT), so that it runs exactly "
                         "once; %s",
                         name, name, why)));
}

// Whether ps is the statement the client sent: a statement of the active
// portal (a query, EXECUTE, a cursor's FETCH), or the query of the active
// portal's CREATE TABLE AS or EXPLAIN when that query calls this function in
// its FROM. A statement that a function, a trigger or a DO block runs is not:
// that code, which may read any row, decides how often it runs.
bool sent_by_the_client(const PlannedStmt* ps, Oid fn) {
  const Portal portal = ActivePortal;
  if (portal == nullptr) return false;
  // A procedural language runs its code under an error context (PL/pgSQL's
  // "PL/pgSQL function ... line n", SQL functions', SPI's): a statement it
  // runs through a cursor of its own (PL/pgSQL's FOR ... IN SELECT) is that
  // cursor's portal's, but it is not the client's. The client's statements
  // run under none.
  if (error_context_stack != nullptr) return false;
  ListCell* lc;
  foreach (lc, portal->stmts)
    if (lfirst(lc) == ps) return true;
  if (list_length(portal->stmts) != 1) return false;
  const auto* top = static_cast<const PlannedStmt*>(linitial(portal->stmts));
  if (!IsA(top, PlannedStmt) || top->commandType != CMD_UTILITY || top->utilityStmt == nullptr) return false;
  Node* q = nullptr;
  if (IsA(top->utilityStmt, CreateTableAsStmt)) q = reinterpret_cast<CreateTableAsStmt*>(top->utilityStmt)->query;
  else if (IsA(top->utilityStmt, ExplainStmt)) q = reinterpret_cast<ExplainStmt*>(top->utilityStmt)->query;
  if (q == nullptr || !IsA(q, Query)) return false;
  foreach (lc, reinterpret_cast<Query*>(q)->rtable) {
    const auto* rte = static_cast<const RangeTblEntry*>(lfirst(lc));
    if (rte->rtekind != RTE_FUNCTION || list_length(rte->functions) != 1) continue;
    const auto* rtf = static_cast<const RangeTblFunction*>(linitial(rte->functions));
    if (IsA(rtf->funcexpr, FuncExpr) && reinterpret_cast<FuncExpr*>(rtf->funcexpr)->funcid == fn) return true;
  }
  return false;
}

}  // namespace

// Declared in common.hpp: private_groups' and release_levels' check.
void optdp_pg::check_release_shape(FunctionCallInfo fcinfo, const char* name) {
  auto* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  if (rsinfo == nullptr || !IsA(rsinfo, ReturnSetInfo) || rsinfo->econtext == nullptr ||
      rsinfo->econtext->ecxt_estate == nullptr || rsinfo->econtext->ecxt_estate->es_plannedstmt == nullptr)
    refuse_shape(name, "it is called where no plan is known");
  const PlannedStmt* ps = rsinfo->econtext->ecxt_estate->es_plannedstmt;
  // private_groups may also run in the body of a SECURITY DEFINER function
  // that a role without its owner's rights calls (docs/scale.md's
  // deployment, analyst mode): the owner wrote that code, and the caller's
  // own statement, which decides how often the function runs, reads only
  // what the caller may read. The statement in the body is checked as a
  // client's statement is, below.
  if (!sent_by_the_client(ps, fcinfo->flinfo->fn_oid) &&
      !(std::strcmp(name, kName) == 0 && OidIsValid(definer_caller())))
    refuse_shape(name, "it is run by a function, a trigger or a DO block, whose code decides how often it runs; call it "
                 "in a statement of its own, or in the body of a SECURITY DEFINER function that another role calls");
  if (ps->subplans != NIL) refuse_shape(name, "this statement has a subquery or a CTE; filter, join or limit the published "
                                        "rows in a later statement");
  const Plan* p = ps->planTree;
  for (int depth = 0; p != nullptr && depth < 16; ++depth) {
    if (p->initPlan != NIL || p->righttree != nullptr)
      refuse_shape(name, "it is joined or has a subquery; filter, join or limit the published rows in a later statement");
    switch (nodeTag(p)) {
      case T_ModifyTable:
        if (reinterpret_cast<const ModifyTable*>(p)->operation != CMD_INSERT)
          refuse_shape(name, "only INSERT INTO ... SELECT may store the published rows");
        break;
      case T_Limit:
      case T_Sort:
      case T_IncrementalSort:
      case T_WindowAgg: break;
      case T_Agg:
        if (reinterpret_cast<const Agg*>(p)->aggstrategy != AGG_PLAIN)
          refuse_shape(name, "after it comes GROUP BY; filter, join or limit the published rows in a later statement");
        break;
      case T_Result:
        if (reinterpret_cast<const Result*>(p)->resconstantqual != nullptr)
          refuse_shape(name, "after it comes WHERE; filter, join or limit the published rows in a later statement");
        break;
      case T_FunctionScan: {
        const auto* fs = reinterpret_cast<const FunctionScan*>(p);
        if (list_length(fs->functions) != 1)
          refuse_shape(name, "it is in ROWS FROM with other functions");
        const auto* rtf = static_cast<const RangeTblFunction*>(linitial(fs->functions));
        if (!IsA(rtf->funcexpr, FuncExpr) || reinterpret_cast<FuncExpr*>(rtf->funcexpr)->funcid != fcinfo->flinfo->fn_oid)
          refuse_shape(name, "it is called inside another expression");
        if (p->qual != NIL)
          refuse_shape(name, "after it comes WHERE; filter, join or limit the published rows in a later statement");
        ListCell* lc;
        foreach (lc, reinterpret_cast<FuncExpr*>(rtf->funcexpr)->args) {
          Node* a = static_cast<Node*>(lfirst(lc));
          while (IsA(a, RelabelType)) a = reinterpret_cast<Node*>(reinterpret_cast<RelabelType*>(a)->arg);
          if (!(IsA(a, Const) || (IsA(a, Param) && reinterpret_cast<Param*>(a)->paramkind == PARAM_EXTERN)))
            refuse_shape(name, "its arguments must be literals or query parameters (optdp fixes the noise before it reads "
                         "any row)");
        }
        return;
      }
      default:
        refuse_shape(name,
                     "it is joined, filtered or called in a select list; filter, join or limit the published rows in "
                     "a later statement");
    }
    p = p->lefttree;
  }
  refuse_shape(name, "it is called in a select list, not in FROM");
}

namespace {

// ---- the queries -----------------------------------------------------------------

// Prepares `text` (the argument `what`) with SPI and checks its analysed,
// rewritten trees (views expanded) before any row is read; raises the
// refusal. The plan is kept until SPI_finish.
// Runs body (a PostgreSQL call that parses, analyses or plans the user's
// query); an error it raises is reported as "<what> does not prepare: <its
// message>" (about the query text or its constants, never a row: no row has
// been read). The transaction aborts with that error, which releases what
// the failed call held.
template <class Body>
void as_preparation(const char* what, Body&& body) {
  const MemoryContext cxt = CurrentMemoryContext;
  PG_TRY();
  {
    body();
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(cxt);
    ErrorData* e = CopyErrorData();
    FlushErrorState();
    char why[1024];
    snprintf(why, sizeof why, "%s", e->message ? e->message : "unknown error");
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: %s does not prepare: %s", kName, what, why)));
  }
  PG_END_TRY();
}

// For the rows query (`rows`), also the declared units' rules; for both,
// the relations read: no private relation in the keys query, and in
// analyst mode (caller valid) only private relations and those the caller
// may read.
SPIPlanPtr guarded_prepare(const char* text, const char* what, const Units* units, bool rows, Oid caller) {
  SPIPlanPtr plan = nullptr;
  as_preparation(what, [&] { plan = SPI_prepare(text, 0, nullptr); });
  if (plan == nullptr)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: %s does not prepare: %s", kName, what, SPI_result_code_string(SPI_result))));
  List* sources = SPI_plan_get_plan_sources(plan);
  if (list_length(sources) != 1)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: %s must be one statement, but has %d", kName, what, list_length(sources))));
  auto* src = static_cast<CachedPlanSource*>(linitial(sources));
  if (src->raw_parse_tree == nullptr || src->query_list == NIL)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: %s must be a query, but is empty", kName, what)));
  Guard g{};
  ListCell* lc;
  foreach (lc, src->query_list) {
    guard_walker(static_cast<Node*>(lfirst(lc)), &g);
    if (g.found) break;
  }
  if (list_length(src->query_list) != 1 && !g.found) refuse(&g, "must be a read-only query (SELECT)");
  if (!g.found) {
    Node* top = static_cast<Node*>(linitial(src->query_list));
    ReadCheck rc{&g, units, !rows, caller};
    read_check_walker(top, &rc);
    if (rows && !g.found) {
      UnitCheck c{&g, units, NIL};
      const Level l = analyze_level(&c, reinterpret_cast<Query*>(top));
      if (!g.found && l.is_private && !bms_is_member(1, l.unit_out))
        refuse(&g, "must return as its unit (its first column) the declared unit column (optdp_units) of a private "
                   "relation it reads%s", kUnitDocs);
    }
  }
  if (g.found) ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), errmsg("%s: %s %s", kName, what, g.refused)));
  return plan;
}

// Opens a read-only cursor on plan: plans the query and starts its executor
// without reading a row. A failure here (a constant call that fails when it
// is folded) depends on the query alone; it is reported like a preparation's.
Portal open_cursor(SPIPlanPtr plan, const char* what) {
  Portal portal = nullptr;
  as_preparation(what, [&] { portal = SPI_cursor_open(nullptr, plan, nullptr, nullptr, true); });
  return portal;
}

const Query* query_of(SPIPlanPtr plan) {
  auto* src = static_cast<CachedPlanSource*>(linitial(SPI_plan_get_plan_sources(plan)));
  return static_cast<const Query*>(linitial(src->query_list));
}

TupleDesc desc_of(SPIPlanPtr plan) {
  return static_cast<CachedPlanSource*>(linitial(SPI_plan_get_plan_sources(plan)))->resultDesc;
}

// Whether the query's first sort key is its first column: then equal units
// (integers under their btree order) arrive together.
bool ordered_by_first_column(const Query* q) {
  if (q->sortClause == NIL) return false;
  auto* s = static_cast<SortGroupClause*>(linitial(q->sortClause));
  const TargetEntry* tle = get_sortgroupclause_tle(s, q->targetList);
  return tle != nullptr && tle->resno == 1;
}

bool integer_type(Oid t) { return t == INT2OID || t == INT4OID || t == INT8OID; }
bool number_type(Oid t) { return integer_type(t) || t == FLOAT4OID || t == FLOAT8OID || t == NUMERICOID; }

// A key's type: a built-in base type (its output function is built-in and
// prints every value).
bool key_type(Oid t) { return t < FirstGenbkiObjectId && get_typtype(t) == TYPTYPE_BASE; }

double number_of(Datum d, Oid t) {
  switch (t) {
    case INT2OID: return DatumGetInt16(d);
    case INT4OID: return DatumGetInt32(d);
    case INT8OID: return static_cast<double>(DatumGetInt64(d));
    case FLOAT4OID: return DatumGetFloat4(d);
    case FLOAT8OID: return DatumGetFloat8(d);
    default: return DatumGetFloat8(DirectFunctionCall1(numeric_float8_no_overflow, d));
  }
}

// ---- the release's C++ state --------------------------------------------------------

// A key as optdp identifies it: by its text form (as PostgreSQL prints it),
// NULL apart; ordered as SQLite orders keys: NULL, numbers by value, then text
// by bytes.
struct KeyId {
  bool null = false;
  bool is_number = false;
  double number = 0;
  std::string text;
};

struct GroupsRun {
  GroupsRun(double epsilon, const optdp::GroupedOptions& o, bool has_value, bool private_keys)
      : options(o), plan(epsilon, o, has_value, private_keys), acc(plan), priority(backend_rng()) {}
  optdp::GroupedOptions options;
  optdp::GroupedPlan plan;
  optdp::GroupedAccumulator acc;
  optdp::KeyPriority priority;
  optdp::KeyPriority::OfUnit of_unit = priority.of_unit(0);  // the current unit's priorities
  std::unordered_map<std::string, std::uint32_t> index;  // "\1" + text form; "" for NULL
  std::vector<KeyId> keys;
  bool in_unit = false;
  std::int64_t unit = 0;
  struct Out {
    std::uint32_t key;
    optdp::GroupedRelease r;
    std::optional<std::pair<double, double>> mean_interval;
  };
  std::vector<Out> out;
  std::optional<std::int64_t> count_hw;
  std::optional<double> sum_hw;

  // The index of key k, added if new (public keys, or private keys read from the rows).
  std::uint32_t add_key(const KeyId& k, std::string_view id) {
    auto it = index.find(std::string(id));
    if (it != index.end()) return it->second;
    const auto i = static_cast<std::uint32_t>(keys.size());
    index.emplace(std::string(id), i);
    keys.push_back(k);
    acc.reserve_keys(keys.size());
    return i;
  }
  void row(std::int64_t u, bool null_key, bool is_number, double number, std::string_view text, std::int64_t q,
           std::int64_t b, std::int64_t z, bool private_keys) {
    if (!in_unit || u != unit) {
      if (in_unit) acc.end_unit();
      of_unit = priority.of_unit(u);
    }
    in_unit = true;
    unit = u;
    std::string id;
    if (!null_key) {
      id.reserve(text.size() + 1);
      id.push_back('\1');
      id.append(text);
    }
    std::uint32_t k;
    auto it = index.find(id);
    if (it != index.end()) {
      k = it->second;
    } else {
      if (!private_keys) return;  // not a public key: dropped
      k = add_key(KeyId{null_key, is_number, number, std::string(text)}, id);
    }
    acc.add(k, of_unit(null_key ? 0 : 1, id), q, b, z, backend_rng());
  }
  void release() {
    if (in_unit) acc.end_unit();
    in_unit = false;
    std::vector<std::uint32_t> order(keys.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const KeyId &x = keys[a], &y = keys[b];
      const int rx = x.null ? 0 : (x.is_number ? 1 : 2), ry = y.null ? 0 : (y.is_number ? 1 : 2);
      if (rx != ry) return rx < ry;
      if (rx == 1 && x.number != y.number) return x.number < y.number;
      return x.text < y.text;
    });
    optdp::Rng& rng = backend_rng();
    for (const std::uint32_t k : order)
      if (auto r = optdp::release_key(plan, acc, k, rng))
        out.push_back({k, *r, optdp::mean_interval(plan, *r, options.confidence)});
    count_hw = plan.count_half_width(options.confidence);
    sum_hw = plan.sum_half_width(options.confidence);
  }
};

void delete_run(void* arg) { delete static_cast<GroupsRun*>(arg); }

constexpr const char* kReadFailed =
    "private_groups: reading the rows failed after the release was charged (an I/O error, an interrupt, or memory; "
    "the message of the cause is not shown: it could depend on the rows)";

[[noreturn]] void read_failed() {
  ereport(ERROR, (errcode(ERRCODE_DATA_EXCEPTION), errmsg("%s", kReadFailed)));
  pg_unreachable();
}

// Reads a cursor's rows as the executor produces them (a DestReceiver: no
// copy of a row), into the release's state. PostgreSQL side; C++ work in
// run_cpp, whose failure is kept in *f and stops the read.
struct Reader {
  DestReceiver pub;  // first: the executor calls through it
  GroupsRun* run;
  bool keys;  // the public keys (one column), else the rows
  Oid types[3];
  Oid out;  // the key's output function
  bool has_value, private_keys;
  Failure* f;
  MemoryContext rowcxt;  // the row's key text; reset every kResetRows rows
  std::uint64_t n;
};

constexpr std::uint64_t kResetRows = 1000;

bool read_one(TupleTableSlot* slot, DestReceiver* self) {
  auto* r = reinterpret_cast<Reader*>(self);
  if (r->f->failed) return false;
  const int k = r->keys ? 0 : 1;  // the key's column
  slot_getsomeattrs(slot, r->keys ? 1 : (r->has_value ? 3 : 2));
  const Datum* v = slot->tts_values;
  const bool* null = slot->tts_isnull;
  std::int64_t unit = 0;
  double value = 0;
  if (!r->keys) {
    if (null[0]) return true;  // a NULL unit: skipped, as a non-INTEGER unit in SQLite
    unit = r->types[0] == INT2OID ? DatumGetInt16(v[0]) : r->types[0] == INT4OID ? DatumGetInt32(v[0]) : DatumGetInt64(v[0]);
    if (r->has_value) {
      if (null[2]) return true;  // as avg() skips NULLs
      value = number_of(v[2], r->types[2]);
      if (std::isnan(value)) value = 0;  // never an error on a row's value
    }
  }
  const Oid kt = r->types[k];
  const bool null_key = null[k];
  const char* ktext = "";
  std::size_t len = 0;
  double number = 0;
  const bool num_key = number_type(kt);
  if (!null_key) {
    const MemoryContext old = MemoryContextSwitchTo(r->rowcxt);
    if (kt == TEXTOID || kt == VARCHAROID) {
      text* tx = DatumGetTextPP(v[k]);
      ktext = VARDATA_ANY(tx);
      len = VARSIZE_ANY_EXHDR(tx);
    } else {
      ktext = OidOutputFunctionCall(r->out, v[k]);
      len = std::strlen(ktext);
    }
    MemoryContextSwitchTo(old);
    if (num_key) number = number_of(v[k], kt);
  }
  GroupsRun* run = r->run;
  const bool has_value = r->has_value, private_keys = r->private_keys, keys = r->keys;
  run_cpp(*r->f, kName, [&] {
    const std::string_view t(ktext, len);
    if (keys) {
      std::string id;
      if (!null_key) {
        id.push_back('\1');
        id.append(t);
      }
      run->add_key(KeyId{null_key, num_key && !null_key, number, std::string(t)}, id);
    } else {
      const std::int64_t q = has_value ? run->plan.quantize(value) : 0;
      const std::int64_t b = has_value ? run->plan.bucket(value) : 0;
      const std::int64_t z = has_value ? run->plan.square(value) : 0;
      run->row(unit, null_key, num_key && !null_key, number, t, q, b, z, private_keys);
    }
  });
  if (++r->n % kResetRows == 0) MemoryContextReset(r->rowcxt);
  return !r->f->failed;
}

void reader_startup(DestReceiver*, int, TupleDesc) {}
void reader_shutdown(DestReceiver*) {}
void reader_destroy(DestReceiver*) {}

// Reads every row of portal (opened by open_cursor) and closes it.
void read_all(Portal portal, Reader& r) {
  r.pub.receiveSlot = read_one;
  r.pub.rStartup = reader_startup;
  r.pub.rShutdown = reader_shutdown;
  r.pub.rDestroy = reader_destroy;
  r.pub.mydest = DestNone;
  Oid out;
  bool varlena;
  getTypeOutputInfo(r.types[r.keys ? 0 : 1], &out, &varlena);
  r.out = out;
  PortalRunFetch(portal, FETCH_FORWARD, FETCH_ALL, &r.pub);
  MemoryContextReset(r.rowcxt);
  SPI_cursor_close(portal);
}

}  // namespace

extern "C" {

PG_FUNCTION_INFO_V1(optdp_private_groups);
PGDLLEXPORT Datum optdp_private_groups(PG_FUNCTION_ARGS);

Datum optdp_private_groups(PG_FUNCTION_ARGS) {
  check_release_shape(fcinfo, kName);

  // Parameters first, all from the arguments alone.
  Failure f;
  if (PG_ARGISNULL(0))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: rows_query must be text (a query returning (unit, key[, value]) ORDER BY 1), but is "
                           "NULL", kName)));
  if (PG_ARGISNULL(1))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s: epsilon must be a number, but is NULL", kName)));
  const char* rows_query = text_to_cstring(PG_GETARG_TEXT_PP(0));
  const double epsilon = PG_GETARG_FLOAT8(1);
  const char* options_text = PG_ARGISNULL(2) ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(2));
  const bool private_keys = PG_ARGISNULL(3);
  const char* keys_query = private_keys ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(3));
  optdp::GroupedOptions options;
  run_cpp(f, kName, [&] {
    optdp::check_positive(epsilon, "epsilon");
    if (options_text) options = optdp::parse_grouped_options(options_text);
  });
  raise(f);

  // The queries, checked when they are prepared, before any row is read.
  InitMaterializedSRF(fcinfo, 0);
  auto* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  const MemoryContext caller = CurrentMemoryContext;
  if (SPI_connect() != SPI_OK_CONNECT)
    ereport(ERROR, (errcode(ERRCODE_INTERNAL_ERROR), errmsg("%s: SPI_connect failed", kName)));
  const Units units = load_units(fcinfo->flinfo->fn_oid);
  const Oid analyst = definer_caller();
  SPIPlanPtr rows = guarded_prepare(rows_query, "rows_query", &units, true, analyst);
  const TupleDesc rdesc = desc_of(rows);
  const int columns = rdesc ? rdesc->natts : 0;
  if (columns != 2 && columns != 3)
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: rows_query must return 2 columns (unit, key) or 3 (unit, key, value), but returns %d",
                           kName, columns)));
  if (!ordered_by_first_column(query_of(rows)))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: rows_query must end with ORDER BY 1 (its unit column), so that each unit's rows "
                           "arrive together", kName)));
  Oid types[3] = {TupleDescAttr(rdesc, 0)->atttypid, TupleDescAttr(rdesc, 1)->atttypid,
                  columns == 3 ? TupleDescAttr(rdesc, 2)->atttypid : InvalidOid};
  if (!integer_type(types[0]))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: rows_query's unit (its first column) must be an integer (smallint, integer or "
                           "bigint), but is %s", kName, format_type_be(types[0]))));
  if (!key_type(types[1]))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: rows_query's key (its second column) must be of a built-in type, but is %s", kName,
                           format_type_be(types[1]))));
  if (columns == 3 && !number_type(types[2]))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("%s: rows_query's value (its third column) must be a number (smallint, integer, bigint, "
                           "real, double precision or numeric), but is %s", kName, format_type_be(types[2]))));
  const bool has_value = columns == 3;

  // The plan of the noise, the keys query, and memory fixed by the parameters.
  GroupsRun* run = nullptr;
  run_cpp(f, kName, [&] { run = new GroupsRun(epsilon, options, has_value, private_keys); });
  raise(f);
  MemoryContextCallback* cb = static_cast<MemoryContextCallback*>(MemoryContextAllocZero(caller, sizeof *cb));
  cb->func = delete_run;
  cb->arg = run;
  MemoryContextRegisterResetCallback(caller, cb);
  SPIPlanPtr keys = nullptr;
  Oid key_type_oid = InvalidOid;
  if (!private_keys) {
    keys = guarded_prepare(keys_query, "keys_query", &units, false, analyst);
    const TupleDesc kdesc = desc_of(keys);
    if (!kdesc || kdesc->natts != 1)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("%s: keys_query must return 1 column, but returns %d", kName, kdesc ? kdesc->natts : 0)));
    key_type_oid = TupleDescAttr(kdesc, 0)->atttypid;
    if (!key_type(key_type_oid))
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("%s: keys_query's column must be of a built-in type, but is %s", kName,
                             format_type_be(key_type_oid))));
  }

  // Plan both queries (constant calls are folded here, and fail here if they
  // fail) and start their executors, reading no row yet.
  Portal keys_portal = private_keys ? nullptr : open_cursor(keys, "keys_query");
  Portal rows_portal = open_cursor(rows, "rows_query");

  // The charge, before the first row. noise=gaussian: as SQLite's ledger
  // records a Gaussian release, its rho (the (epsilon, delta) converts to),
  // epsilon and delta 0, composed in zCDP by the ledger's rule.
  const std::int64_t entry = run->plan.gaussian() ? charge_release(kName, 0.0, 0.0, run->plan.rho())
                                                  : charge_release(kName, epsilon, run->plan.delta(), 0.0);

  // The rows. From here on every failure gives one message.
  MemoryContext rowcxt = AllocSetContextCreate(CurrentMemoryContext, "private_groups rows", ALLOCSET_DEFAULT_SIZES);
  PG_TRY();
  {
    if (!private_keys) {
      Reader r{};
      r.run = run;
      r.keys = true;
      r.types[0] = key_type_oid;
      r.f = &f;
      r.rowcxt = rowcxt;
      read_all(keys_portal, r);
    }
    if (!f.failed) {
      Reader r{};
      r.run = run;
      r.keys = false;
      std::copy(std::begin(types), std::end(types), r.types);
      r.has_value = has_value;
      r.private_keys = private_keys;
      r.f = &f;
      r.rowcxt = rowcxt;
      read_all(rows_portal, r);
    }
    if (!f.failed) run_cpp(f, kName, [&] { run->release(); });
  }
  PG_CATCH();
  {
    MemoryContextSwitchTo(caller);
    FlushErrorState();
    read_failed();
  }
  PG_END_TRY();
  if (f.failed) read_failed();

  // The published rows.
  const std::int64_t released = static_cast<std::int64_t>(run->out.size());
  const MemoryContext old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
  for (const GroupsRun::Out& o : run->out) {
    Datum values[11];
    bool nulls[11] = {false, false, false, false, false, false, false, false, false, false, false};
    const KeyId& k = run->keys[o.key];
    if (k.null) nulls[0] = true;
    else values[0] = PointerGetDatum(cstring_to_text_with_len(k.text.data(), static_cast<int>(k.text.size())));
    values[1] = Int64GetDatum(o.r.count);
    if (has_value) values[2] = Float8GetDatum(o.r.sum);
    else nulls[2] = true;
    if (o.r.mean) values[3] = Float8GetDatum(*o.r.mean);
    else nulls[3] = true;
    if (run->count_hw) values[4] = Int64GetDatum(*run->count_hw);
    else nulls[4] = true;
    if (has_value && run->sum_hw) values[5] = Float8GetDatum(*run->sum_hw);
    else nulls[5] = true;
    if (o.mean_interval) {
      values[6] = Float8GetDatum(o.mean_interval->first);
      values[7] = Float8GetDatum(o.mean_interval->second);
    } else {
      nulls[6] = nulls[7] = true;
    }
    if (o.r.quantile) values[8] = Float8GetDatum(*o.r.quantile);  // option quantile
    else nulls[8] = true;
    if (o.r.variance) values[9] = Float8GetDatum(*o.r.variance);  // option variance
    else nulls[9] = true;
    if (o.r.stddev) values[10] = Float8GetDatum(*o.r.stddev);
    else nulls[10] = true;
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  MemoryContextSwitchTo(old);
  SPI_finish();
  record_released_keys(kName, entry, released);
  return static_cast<Datum>(0);
}

}  // extern "C"
