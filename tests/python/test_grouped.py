#!/usr/bin/python3
"""private_groups (a grouped release by privacy unit) through Python's sqlite3 module:
its exact bounded totals, its ledger entries, and the statement shapes it accepts.

    /usr/bin/python3 tests/python/test_grouped.py --module build/optdp.so [unittest args]

Standard library only. The statistical checks (empirical epsilon, partition
selection frequencies, uniform bounding) are C++ tests with Boost.Math p-values:
tests/sqlite/grouped_audit_test.cpp; the core classes are tested in
tests/core/grouped_test.cpp.

What is checked here:
- TestGroupedExact: at epsilon 1e6 every noise is 0 (the count's alpha is
  e^-(1e6/2GR), below the smallest double; the sums' staircase grid is finer
  than the values), so the released rows are the bounded totals themselves:
  public keys all present (0 when no row), rows of other keys dropped, NULL
  values and non-INTEGER units skipped, values clamped, max_groups and
  max_rows bound each unit, rows sorted by key.
- TestGroupedLedger: exactly one ledger entry per release, with its epsilon,
  delta and released_keys = the rows released, whatever the number of keys
  (0, 1000); a release the budget (epsilon or delta) cannot pay is refused
  before any row is released and records nothing; private keys with a
  ledger whose total_delta is 0 are refused and charge nothing.
- TestGroupedShape: joins, commas, WHERE, GROUP BY, subqueries, CTEs around
  the call, compounds (two calls), non-literal arguments and LIMITs are
  refused with the shape message and charge nothing; literal and bound
  arguments, ORDER BY, literal LIMIT, a WITH before, INSERT INTO ... SELECT
  and CREATE TABLE ... AS SELECT work and are charged once.
"""
import os
import shutil
import sqlite3
import sys
import tempfile
import unittest
from contextlib import closing

import optdp_testlib as lib

HUGE = 1e6  # every noise is exactly 0
SHAPE = ("private_groups: must be the only table of a top-level SELECT (SELECT ... FROM private_groups(...) "
         "[ORDER BY ...], alone or in INSERT INTO ... SELECT or CREATE TABLE ... AS SELECT), so that it runs "
         "exactly once; ")
ROWS = "select u, k from r order by 1"
ROWS_V = "select u, k, v from r order by 1"


def fill(db):
    """r(u, k, v): units 1..6; unit u has one row in each key 0..u-1 (key k gets 6 - k units);
    thousand(x), empty until a test fills it."""
    db.execute("create table thousand(x)")
    db.execute("create table r(u, k, v)")
    db.executemany("insert into r values (?, ?, ?)", [(u, k, float(k)) for u in range(1, 7) for k in range(u)])


class GroupedTestCase(lib.OptdpTestCase):
    FILE = True

    def setUp(self):
        super().setUp()
        fill(self.db)


# ----------------------------------------------------------------------------

class TestGroupedExact(GroupedTestCase):
    def setUp(self):
        super().setUp()
        self.run_sql("select dp_seed(20240601)")

    def groups(self, rows_query, options=None, keys_query=None, eps=HUGE):
        return self.all("select key, count, sum, mean from private_groups(?, ?, ?, ?)", (rows_query, eps, options, keys_query))

    def test_public_keys_exact_counts(self):
        # max_groups=6: nothing is bounded; key k has 6 - k rows. Key 9 has none, 'x' is
        # not an INTEGER key of the data; key 5's 1 row.
        got = self.groups(ROWS, "max_groups=6", "select column1 from (values (9), (0), (5), ('x'), (0))")
        self.assertEqual(got, [(0, 6, None, None), (5, 1, None, None), (9, 0, None, None), ('x', 0, None, None)])

    def test_values_sum_and_mean_and_clamp(self):
        got = self.groups(ROWS_V, "max_groups=6, lower=0, upper=3", "select distinct k from r")
        # key k: 6 - k rows of value k clamped to [0, 3].
        want = [(k, 6 - k, float((6 - k) * min(k, 3)), float(min(k, 3))) for k in range(6)]
        self.assertEqual(got, want)

    def test_null_values_and_non_integer_units_skipped(self):
        self.run_sql("insert into r values (7, 0, NULL), ('8', 0, 1.0), (9.5, 0, 1.0), (NULL, 0, 1.0), (10, 0, 2.0)")
        got = self.groups(ROWS_V, "max_groups=6, lower=0, upper=3", "select 0")
        self.assertEqual(got, [(0, 7, 2.0, 2.0 / 7)])
        # without a value column the NULL-value row of unit 7 counts
        self.assertEqual(self.groups(ROWS, "max_groups=6", "select 0"), [(0, 8, None, None)])

    def test_max_groups_bounds_each_unit(self):
        # each unit keeps min(u, 2) keys: 1 + 2 * 5 = 11 rows in all
        for _ in range(5):
            got = self.groups(ROWS, "max_groups=2", "select distinct k from r")
            self.assertEqual(sum(c for _, c, _, _ in got), 11, got)
            self.assertEqual(got[0][0], 0)

    def test_max_rows_bounds_each_key(self):
        self.run_sql("insert into r select 1, 0, 1.0 from (values (1), (2), (3), (4))")  # unit 1: 5 rows in key 0
        got = self.groups(ROWS_V, "max_groups=6, max_rows=2, lower=0, upper=3", "select 0")
        # unit 1: 2 of its 5 rows (values 0 and four 1s), units 2..6 one row of value 0
        self.assertEqual(got[0][1], 7)
        self.assertIn(got[0][2], (1.0, 2.0))

    # Hostile orders of one unit's rows: a unit of 50 rows at 100 in key 0
    # beside 10 units of one row at 0. Bounded to R = 2, key 0 keeps 12 rows,
    # 2 of them at 100, and the 0.9-quantile's best candidates are (0, 100];
    # were the unit's 50 rows counted (or more than R of them), they would be
    # (100, 200]. Whatever the order the rows query gives the unit's rows in,
    # only R are counted: in the count and in the quantile.
    QUANTILE_ORDERS = (
        "select u, k, v from q order by 1",
        "select u, k, v from (select u, k, v from q order by v desc) order by 1",
        "select u, k, v from (select u, k, v from q order by v asc) order by 1",
        "select u, k, v from (select u, k, v from q order by u desc, v) order by 1",
        "select u, k, v from q where v >= 0 order by 1",
    )

    def test_quantile_counts_at_most_max_rows_per_unit(self):
        self.run_sql("create table q(u, k, v)")
        self.db.executemany("insert into q values (?, ?, ?)",
                            [(1, 0, 100.0)] * 50 + [(u, 0, 0.0) for u in range(2, 12)])
        for rows in self.QUANTILE_ORDERS:
            with self.subTest(rows=rows):
                got = self.all("select key, count, sum, quantile from private_groups(?, ?, ?, ?)",
                               (rows, HUGE, "max_rows=2, lower=0, upper=200, quantile=0.9", "select 0"))
                self.assertEqual(len(got), 1)
                self.assertEqual(got[0][:3], (0, 12, 200.0))
                self.assertGreater(got[0][3], 0)
                self.assertLessEqual(got[0][3], 100)
        # without the option the column is NULL
        got = self.all("select quantile from private_groups(?, ?, ?, ?)",
                       (self.QUANTILE_ORDERS[0], HUGE, "max_rows=2, lower=0, upper=200", "select 0"))
        self.assertEqual(got, [(None,)])

    def test_private_keys_many_units_released(self):
        self.run_sql("create table big(u, k)")
        self.db.executemany("insert into big values (?, ?)", [(u, k) for u in range(300) for k in (3, 1)])
        got = self.groups("select u, k from big order by 1", "max_groups=2, delta=1e-6")
        self.assertEqual(got, [(1, 300, None, None), (3, 300, None, None)])

    def test_private_keys_single_unit_key_not_released_at_tiny_delta(self):
        got = self.groups(ROWS, "max_groups=6, delta=1e-12", eps=1.0)
        self.assertNotIn(5, [k for k, _, _, _ in got])


# ----------------------------------------------------------------------------

class LedgerCase(GroupedTestCase):
    def setUp(self):
        super().setUp()
        self.dir = tempfile.mkdtemp(prefix="optdp-grouped-")
        self.ledger = os.path.join(self.dir, "budget.ledger")

    def tearDown(self):
        super().tearDown()
        shutil.rmtree(self.dir, ignore_errors=True)

    def attach(self, eps, delta=None):
        args = (self.ledger, eps) + (() if delta is None else (delta,))
        self.run_sql("select dp_ledger_attach(%s)" % ", ".join("?" * len(args)), args)

    def entries(self):
        return self.all("select function, epsilon, delta, released_keys, sql from dp_ledger_entries order by id")

    def spent(self):
        return self.all("select dp_budget_spent(), dp_delta_spent()")[0]

    def receive(self, sql, params=()):
        return lib.receive(self.db, sql, params)


class TestGroupedLedger(LedgerCase):
    def test_one_entry_for_1000_public_keys(self):
        self.attach(10.0)
        self.db.executemany("insert into thousand values (?)", [(x,) for x in range(1000)])
        keys = "select x from thousand"
        sql = "select * from private_groups('%s', 1.5, 'max_groups=3', '%s')" % (ROWS, keys)
        rows = self.all(sql)
        self.assertEqual(len(rows), 1000)
        self.assertEqual(self.entries(), [("private_groups", 1.5, 0.0, 1000, sql)])
        self.assertEqual(self.spent(), (1.5, 0.0))

    def test_one_entry_with_values_and_zero_keys(self):
        self.attach(10.0)
        sql = "select * from private_groups('%s', 0.5, 'lower=0, upper=1', 'select 1 where 0')" % ROWS_V
        self.assertEqual(self.all(sql), [])
        self.assertEqual(self.entries(), [("private_groups", 0.5, 0.0, 0, sql)])

    def test_private_keys_entry_has_delta_and_released_keys(self):
        self.attach(10.0, 1e-3)
        self.run_sql("create table big(u, k)")
        self.db.executemany("insert into big values (?, ?)", [(u, k) for u in range(400) for k in (0, 1, 2)]
                            + [(1000, 7)])
        for n, eps in enumerate((2.0, 3.0), 1):
            sql = "select * from private_groups('select u, k from big order by 1', %r, 'max_groups=3, delta=1e-5')" % eps
            rows = self.all(sql)
            self.assertEqual([k for k, *_ in rows][:3], [0, 1, 2])  # 400 units: above the threshold
            ent = self.entries()
            self.assertEqual(len(ent), n)
            self.assertEqual(ent[-1], ("private_groups", eps, 1e-5, len(rows), sql))
        eps_spent, delta_spent = self.spent()
        self.assertEqual(eps_spent, 5.0)
        self.assertAlmostEqual(delta_spent, 2e-5, delta=1e-18)

    def test_budget_refusal_releases_nothing(self):
        self.attach(1.0)
        keys = "select distinct k from r"
        self.run_sql("select * from private_groups(?, 0.75, NULL, ?)", (ROWS, keys))
        before = self.entries()
        self.assertEqual(len(before), 1)
        got, err = self.receive("select * from private_groups(?, 0.5, NULL, ?)", (ROWS, keys))
        self.assertEqual(got, [])
        self.assertEqual(err, "private_groups: privacy budget exhausted: 0.75 of 1 spent, and this release costs 0.5")
        for sql in ("insert into out select * from private_groups(?, 0.5, NULL, ?)",
                    "create table out2 as select * from private_groups(?, 0.5, NULL, ?)"):
            if sql.startswith("insert"):
                self.run_sql("create table out(key, count, sum, mean, count_halfwidth, sum_halfwidth, mean_low, mean_high, quantile, variance, stddev)")
            got, err = self.receive(sql, (ROWS, keys))
            self.assertIsNotNone(err, sql)
            self.assertIn("privacy budget exhausted", err)
        self.assertEqual(self.all("select count(*) from out"), [(0,)])
        self.assertEqual(self.all("select count(*) from sqlite_master where name = 'out2'"), [(0,)])
        self.assertEqual(self.entries(), before)
        self.assertEqual(self.spent(), (0.75, 0.0))
        # what is left still pays
        self.assertEqual(len(self.all("select * from private_groups(?, 0.25, NULL, ?)", (ROWS, keys))), 6)
        self.assertEqual(len(self.entries()), 2)

    def test_delta_budget_refusal(self):
        self.attach(10.0, 1e-5)
        got, err = self.receive("select * from private_groups(?, 1.0, 'delta=2e-5')", (ROWS,))
        self.assertEqual(got, [])
        self.assertIsNotNone(err)
        self.assertIn("privacy budget exhausted", err)
        self.assertIn("delta", err)
        self.assertEqual(self.entries(), [])
        self.assertEqual(self.spent(), (0.0, 0.0))

    def test_private_keys_refused_with_zero_total_delta(self):
        for third in (None, 0.0):
            with self.subTest(total_delta=third):
                self.db.close()
                path = os.path.join(self.db_dir, "data%d.db" % (third is None))
                self.db = lib.connect(path=path)
                fill(self.db)
                shutil.rmtree(self.dir, ignore_errors=True)
                os.makedirs(self.dir)
                self.attach(5.0, third)
                got, err = self.receive("select * from private_groups(?, 1.0, 'delta=1e-6')", (ROWS,))
                self.assertEqual(got, [])
                self.assertIsNotNone(err)
                self.assertTrue(err.startswith("private_groups: "), err)
                self.assertIn("delta", err)
                self.assertEqual(self.entries(), [])
                self.assertEqual(self.spent(), (0.0, 0.0))
                # public keys still work on that ledger
                self.assertEqual(len(self.all("select * from private_groups(?, 1.0, NULL, 'select 1')", (ROWS,))), 1)
                self.assertEqual(len(self.entries()), 1)


# ----------------------------------------------------------------------------

PG = "private_groups('select u, k from r order by 1', 1.0, NULL, 'select 1')"


class TestGroupedShape(LedgerCase):
    def setUp(self):
        super().setUp()
        self.attach(100.0)

    def assertRefusedFree(self, sql, reason=None, params=()):
        before = self.entries()
        got, err = self.receive(sql, params)
        self.assertEqual(got, [], sql)
        self.assertIsNotNone(err, sql)
        self.assertTrue(err.startswith("private_groups: "), "%r for %s" % (err, sql))
        if reason is not None:
            self.assertIn(reason, err, sql)
        self.assertEqual(self.entries(), before, sql)
        self.assertEqual(self.spent(), (0.0, 0.0), sql)

    def test_releases_inside_the_queries_are_refused(self):
        # A randomised function in rows_query or keys_query would release and
        # be charged once per row it is evaluated for. optdp runs them on its
        # own connection, where optdp's functions do not exist and virtual
        # tables are refused: refused when prepared, before any row.
        for rows, keys, reason in (
                ("select u, k, (select private_count(0.5) from r) from r order by 1", "values (1)",
                 "rows_query does not prepare: no such function: private_count"),
                ("select u, k, staircase_sum(v, 1, 0, 1) over () from r order by 1", "values (1)",
                 "rows_query does not prepare: no such function: staircase_sum"),
                ("select u, k, 1 from r order by 1", "select released from release_levels(1, 2, '[0.5]')",
                 "keys_query does not prepare: ")):
            sql = "select * from private_groups(?, 1.0, 'lower=0, upper=1', ?)"
            self.assertRefusedFree(sql, reason, params=(rows, keys))

    def test_refused_shapes_charge_nothing(self):
        self.run_sql("create table out(key, count, sum, mean, count_halfwidth, sum_halfwidth, mean_low, mean_high, quantile, variance, stddev)")
        cases = [
            ("select * from %s where key = 1" % PG, SHAPE + "after it comes where"),
            ("select * from %s join r" % PG, SHAPE + "after it comes join"),
            ("select * from r join %s" % PG, SHAPE),
            ("select g.key from %s as g, r" % PG, SHAPE),
            ("select g.key from r, %s as g" % PG, SHAPE),
            ("select g.key from %s as g, %s as h" % (PG, PG), SHAPE),
            ("select * from %s group by key" % PG, SHAPE + "after it comes group"),
            ("select * from (select * from %s)" % PG, SHAPE + "here it is inside parentheses"),
            ("select (select count(*) from %s)" % PG, SHAPE + "here it is inside parentheses"),
            ("select * from r where u in (select key from %s)" % PG, SHAPE + "here it is inside parentheses"),
            ("with g as (select * from %s) select * from g" % PG, SHAPE + "here it is inside parentheses"),
            ("select * from %s union all select * from %s" % (PG, PG), SHAPE + "this statement calls it 2 times"),
            ("select * from %s union all select 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11" % PG, SHAPE),
            ("select * from %s limit (select 1)" % PG, SHAPE + "LIMIT and OFFSET must be literals"),
            ("insert into out select * from %s where count > 0" % PG, SHAPE),
            ("insert into out select * from (select * from %s)" % PG, SHAPE),
            ("select * from private_groups('select u, k from r order by 1', 1.0 + 0, NULL, 'select 1')",
             "epsilon must be a literal or a bound parameter"),
            ("select * from private_groups('select u, k from r order by 1', (select 1.0), NULL, 'select 1')",
             "epsilon must be a literal or a bound parameter"),
            ("select * from private_groups('select u, k from r ' || 'order by 1', 1.0, NULL, 'select 1')",
             "must be a literal or a bound parameter"),
            ("select * from private_groups('select u, k from r order by 1', 1.0, 'max_groups=' || 2, 'select 1')",
             "must be a literal or a bound parameter"),
            ("select * from private_groups('select u, k from r order by 1', 1.0, NULL, (select 'select 1'))",
             "must be a literal or a bound parameter"),
            ("select * from private_groups((select 'select u, k from r order by 1'), 1.0, NULL, 'select 1')",
             "must be a literal or a bound parameter"),
        ]
        for sql, reason in cases:
            with self.subTest(sql=sql):
                self.assertRefusedFree(sql, reason)
        self.assertEqual(self.all("select count(*) from out"), [(0,)])

    def test_column_argument_refused(self):
        # private_groups's argument from another table's column: refused (a join, and not a literal)
        self.assertRefusedFree("select * from r, private_groups(r.k, 1.0, NULL, 'select 1')")

    def test_accepted_shapes_charge_once(self):
        self.run_sql("create table out(key, count, sum, mean, count_halfwidth, sum_halfwidth, mean_low, mean_high, quantile, variance, stddev)")
        ok = [
            ("select * from %s" % PG, ()),
            ("select * from %s as g order by count desc" % PG, ()),
            ("select key, count from %s limit 1" % PG, ()),
            ("select * from %s limit 5 offset 0" % PG, ()),
            ("with w as (select 1) select * from %s" % PG, ()),
            ("select * from private_groups(?, ?, ?, ?)", (ROWS, 1.0, "max_groups=2", "select 1")),
            ("select * from private_groups(:q, :e, NULL, :k)", {"q": ROWS, "e": 1.0, "k": "select 1"}),
            ("insert into out select * from %s" % PG, ()),
            ("create table made as select * from %s" % PG, ()),
        ]
        for n, (sql, params) in enumerate(ok, 1):
            with self.subTest(sql=sql):
                got, err = self.receive(sql, params)
                self.assertIsNone(err, sql)
                self.assertEqual(len(self.entries()), n, sql)
                self.assertEqual(self.entries()[-1][:4], ("private_groups", 1.0, 0.0, 1), sql)
        self.assertEqual(self.all("select key from out"), [(1,)])
        self.assertEqual(self.all("select key from made"), [(1,)])
        self.assertEqual([r[1] for r in self.all("pragma table_info(made)")],
                         ["key", "count", "sum", "mean", "count_halfwidth", "sum_halfwidth", "mean_low", "mean_high",
                          "quantile", "variance", "stddev"])
        self.assertEqual(self.spent()[0], float(len(ok)))

    def test_prepared_statement_charges_each_run(self):
        cur = self.db.cursor()
        for n in range(1, 4):
            cur.execute("select * from private_groups(?, 0.5, NULL, 'select 1')", (ROWS,))
            self.assertEqual(len(cur.fetchall()), 1)
            self.assertEqual(len(self.entries()), n)


if __name__ == "__main__":
    sys.exit(lib.main(__name__, sys.argv))
