#!/usr/bin/python3
"""The privacy-budget ledger (dp_ledger_attach) through Python's sqlite3 module.

Run with Debian's interpreter, the one whose sqlite3 has enable_load_extension:

    /usr/bin/python3 tests/python/test_ledger.py --module build/optdp.so [unittest args, e.g. TestLedgerCharges -v]

The module path comes from --module, else $OPTDP_MODULE, else build/optdp.so
at the top of the source tree. Standard library only; every test works in its
own temporary directory.

What is checked, and how:
- Budget arithmetic is compared in exact integer units of 1e-12 epsilon,
  read from the ledger file through a plain sqlite3 connection (no optdp):
  a charge is ceil(eps * 10^12) units, the total floor(total * 10^12),
  computed here with fractions.Fraction from the doubles involved.
- "Every released value is charged": a client can only be shown to have
  received a value, not which charge paid for it, so the tests compare counts
  (values received <= charges recorded, equal where the query shape makes it
  exact) and check that spent_units is exactly the sum of the charges and
  never above the total.
- The delta account (TestLedgerDelta): delta is counted in exact units of
  2^-120, stored as decimal text; no SQL function charges delta yet, so its
  charging is tested on the Ledger class in tests/sqlite/ledger_delta_test.cpp,
  and here the attach forms, the recorded totals, dp_delta_spent/remaining,
  the entries' delta and released_keys, and ledger files written before it.
- Concurrency and SIGKILL use child processes running this same file with
  --worker (sys.executable, i.e. /usr/bin/python3); they report every value
  they receive as one JSON line on stdout, flushed.
"""
import json
import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import unittest
from contextlib import closing
from fractions import Fraction

import optdp_testlib
from optdp_testlib import module_path, receive

HERE = os.path.dirname(os.path.abspath(__file__))
UNITS = 10 ** 12  # ledger units per epsilon
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
NO_LEDGER = "%s: no privacy ledger is attached to this connection (see dp_ledger_attach)"
# dp_ledger_attach's third argument when it is neither a number (total_delta) nor text (durability).
THIRD = "the third argument must be total_delta (a number in [0, 1)) or durability ('full' or 'normal'), but is %s"
DELTA_UNITS = 2 ** 120  # ledger units per delta
ALREADY = "dp_ledger_attach: a ledger is already attached ('%s'); it cannot be detached or replaced on this connection"
EXHAUSTED_RE = re.compile(r"^(\w+): privacy budget exhausted: (\S+) of (\S+) spent, and this release costs (\S+)$")


# ----------------------------------------------------------------------------
# helpers

def connect(path=":memory:", load=True, module=None):
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    if load:
        db.enable_load_extension(True)
        db.load_extension(module or module_path())
        db.enable_load_extension(False)
    return db


def plain(path):
    """A connection to the ledger file without optdp (the auditor's view)."""
    return sqlite3.connect(path, isolation_level=None, timeout=30)


def charge_units(eps):
    return max(1, math.ceil(Fraction(eps) * UNITS))


def total_units(total):
    return math.floor(Fraction(total) * UNITS)


def total_of_units(n):
    """A double total whose floor(total * 10^12) is exactly n units."""
    t = float(Fraction(n, UNITS))
    while total_units(t) < n:
        t = math.nextafter(t, math.inf)
    while total_units(t) > n:
        t = math.nextafter(t, 0.0)
    assert total_units(t) == n, n
    return t


def fmt(x):
    """format_double (std::to_chars, shortest round trip) for the values used here."""
    s = repr(float(x))
    return s[:-2] if s.endswith(".0") else s


def figure(x, up):
    """format_figure (extension/core/format.cpp): 4 significant digits, rounded
    up (what is spent or costs) or down (what the budget allows), as read back."""
    x = float(x)
    if x == 0:
        return fmt(x)
    mant, exp = ("%.3e" % x).split("e")
    m, e = int(mant.replace(".", "")), int(exp)
    near = float("%de%d" % (m, e - 3))
    if up and near < x:
        m, e = (1000, e + 1) if m == 9999 else (m + 1, e)
    elif not up and near > x:
        m, e = (9999, e - 1) if m == 1000 else (m - 1, e)
    return fmt(float("%de%d" % (m, e - 3)))


def exhausted(function, spent_units, total_u, cost):
    return "%s: privacy budget exhausted: %s of %s spent, and this release costs %s" % (
        function, figure(spent_units / 1e12, True), figure(total_u / 1e12, False), figure(cost, True))


def budget_row(path):
    with closing(plain(path)) as p:
        return p.execute("select total_epsilon, total_units, spent_units from optdp_budget").fetchall()


def spent_units(path):
    rows = budget_row(path)
    assert len(rows) == 1, rows
    return rows[0][2]


def charges(path, where="", params=()):
    with closing(plain(path)) as p:
        return p.execute("select id, time, function, epsilon, units, sql, pid from optdp_charges %s order by id"
                         % where, params).fetchall()


def integrity(path):
    with closing(plain(path)) as p:
        return p.execute("pragma integrity_check").fetchall()


def make_table(db, n=10, groups=None):
    db.execute("create table t(x, g)")
    db.executemany("insert into t values (?, ?)", [(i, i % groups if groups else 0) for i in range(n)])




class LedgerTestCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="optdp-ledger-")
        self.ledger = os.path.join(self.dir, "budget.ledger")
        self.db = connect()
        make_table(self.db)
        self.u05 = self.one("select dp_epsilon(0.5)")  # cost of private_count(0.5)

    def tearDown(self):
        self.db.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def one(self, sql, params=(), db=None):
        rows = (db or self.db).execute(sql, params).fetchall()
        self.assertEqual(len(rows), 1, sql)
        return rows[0][0]

    def error_of(self, sql, params=(), db=None):
        try:
            (db or self.db).execute(sql, params).fetchall()
        except sqlite3.Error as e:
            return str(e)
        self.fail("no error from: " + sql)

    def assertError(self, sql, message, params=(), db=None):
        """A scalar function's message shows values only when every argument
        of its call is bound (args.cpp): otherwise message is compared with
        its values hidden."""
        m = re.search(r"\b(dp_ledger_attach|dp_seed)\(([^)]*)\)", sql)
        if m and message.startswith(m.group(1) + ": ") and \
                any(a.strip() != "?" for a in m.group(2).split(",")):
            message = optdp_testlib.hidden(message)
        self.assertEqual(self.error_of(sql, params, db), message, "for: " + sql)

    def attach(self, total, durability=None, db=None, path=None):
        args = (path or self.ledger, total) + ((durability,) if durability else ())
        return self.one("select dp_ledger_attach(%s)" % ", ".join("?" * len(args)), args, db)

    def assertConsistent(self, path=None):
        """spent_units is the sum of the charges' units and within the total."""
        path = path or self.ledger
        self.assertEqual(integrity(path), [("ok",)])
        (_, tot, spent), = budget_row(path)
        self.assertEqual(spent, sum(c[4] for c in charges(path)))
        self.assertLessEqual(spent, tot)
        return spent


# ----------------------------------------------------------------------------
# 1. basics: attaching

class TestLedgerAttach(LedgerTestCase):
    def test_attach_returns_total_and_creates_the_file(self):
        self.assertEqual(self.attach(2.5), 2.5)
        self.assertEqual(budget_row(self.ledger), [(2.5, 2_500_000_000_000, 0)])
        self.assertEqual(charges(self.ledger), [])
        with closing(plain(self.ledger)) as p:
            self.assertEqual(p.execute("pragma journal_mode").fetchone()[0], "wal")
            created = p.execute("select created from optdp_budget").fetchone()[0]
        self.assertRegex(created, TIME_RE)
        self.assertEqual(self.one("select dp_budget_spent()"), 0.0)
        self.assertEqual(self.one("select dp_budget_remaining()"), 2.5)
        self.assertEqual(self.db.execute("select * from dp_ledger_entries").fetchall(), [])

    def test_integer_total_and_largest_total(self):
        self.assertEqual(self.attach(3), 3.0)
        db = connect()
        try:
            self.assertEqual(self.attach(1e6, db=db, path=os.path.join(self.dir, "big.ledger")), 1e6)
            self.assertEqual(budget_row(os.path.join(self.dir, "big.ledger"))[0][1], 10 ** 18)
        finally:
            db.close()

    def test_total_rounded_down_to_units(self):
        # 0.3 is 0.299999999999999988898 as a double: 299999999999 whole units.
        self.assertEqual(self.attach(0.3), 0.299999999999)
        self.assertEqual(budget_row(self.ledger), [(0.3, 299_999_999_999, 0)])

    def test_durability_argument(self):
        self.assertEqual(self.attach(1.0, "normal"), 1.0)
        db = connect()
        try:  # durability is per connection, not recorded in the file
            self.assertEqual(self.attach(1.0, "full", db=db), 1.0)
        finally:
            db.close()

    def test_reattach_same_is_a_no_op(self):
        self.attach(5.0)
        self.one("select private_count(0.5) from t")
        remaining = (total_units(5.0) - charge_units(self.u05)) / 1e12
        self.assertEqual(self.attach(5.0), remaining)
        self.assertEqual(self.attach(5.0, "full"), remaining)
        self.assertEqual(len(charges(self.ledger)), 1)
        self.assertEqual(spent_units(self.ledger), charge_units(self.u05))

    def test_existing_ledger_keeps_its_total(self):
        self.attach(5.0)
        db = connect()
        try:
            self.assertError("select dp_ledger_attach(?, 6)",
                             "dp_ledger_attach: the ledger '%s' records total_epsilon 5, but 6 was asked for"
                             % self.ledger, (self.ledger,), db)
            # The failed attach left that connection without a ledger ...
            self.assertError("select dp_budget_spent()", NO_LEDGER % "dp_budget_spent", db=db)
            # ... and the file unchanged; the right total attaches.
            self.assertEqual(budget_row(self.ledger), [(5.0, 5 * UNITS, 0)])
            self.assertEqual(self.attach(5.0, db=db), 5.0)
        finally:
            db.close()

    def test_second_ledger_refused(self):
        self.attach(5.0)
        other = os.path.join(self.dir, "other.ledger")
        self.assertError("select dp_ledger_attach(?, 5)", ALREADY % self.ledger, (other,))
        self.assertFalse(os.path.exists(other))
        self.assertError("select dp_ledger_attach(?, 4)", ALREADY % self.ledger, (self.ledger,))
        self.assertError("select dp_ledger_attach(?, 5, 'normal')", ALREADY % self.ledger, (self.ledger,))
        # Still attached to the first, charging it.
        self.one("select private_count(0.5) from t")
        self.assertEqual(len(charges(self.ledger)), 1)

    def test_bad_arguments(self):
        p = self.ledger
        cases = [
            ("select dp_ledger_attach(?, 0)", (p,), "total_epsilon must be a number in (0, 1e6], but is 0"),
            ("select dp_ledger_attach(?, -1)", (p,), "total_epsilon must be a number in (0, 1e6], but is -1"),
            ("select dp_ledger_attach(?, 1000001)", (p,),
             "total_epsilon must be a number in (0, 1e6], but is 1000001"),
            ("select dp_ledger_attach(?, NULL)", (p,), "total_epsilon must be a number, but is NULL"),
            ("select dp_ledger_attach(?, 'abc')", (p,), "total_epsilon must be a number, but is text 'abc'"),
            ("select dp_ledger_attach(?, '5')", (p,), "total_epsilon must be a number, but is text '5'"),
            ("select dp_ledger_attach(':memory:', 5)", (),
             "path must name a file (a ledger in memory could be lost), but is ':memory:'"),
            ("select dp_ledger_attach('', 5)", (),
             "path must name a file (a ledger in memory could be lost), but is ''"),
            ("select dp_ledger_attach(NULL, 5)", (), "path must be text (a file name), but is NULL"),
            ("select dp_ledger_attach(?, 5, 'off')", (p,), "durability must be 'full' or 'normal', but is 'off'"),
            ("select dp_ledger_attach(?, 5, 'FULL')", (p,), "durability must be 'full' or 'normal', but is 'FULL'"),
            ("select dp_ledger_attach(?, 5, NULL)", (p,), THIRD % "NULL"),
        ]
        for sql, params, msg in cases:
            with self.subTest(sql=sql):
                self.assertError(sql, "dp_ledger_attach: " + msg, params)
        self.assertFalse(os.path.exists(p), "a refused attach must not create the ledger")
        self.assertError("select dp_budget_spent()", NO_LEDGER % "dp_budget_spent")

    def test_not_from_views_or_triggers(self):
        self.db.execute("create view v as select dp_ledger_attach('%s', 5) as r" % self.ledger)
        self.assertError("select * from v", "unsafe use of dp_ledger_attach()")
        self.assertFalse(os.path.exists(self.ledger))

    def test_seeded_connection_refused(self):
        self.assertEqual(self.one("select dp_seed(7)"), "seeded")
        self.assertError("select dp_ledger_attach(?, 5)",
                         "dp_ledger_attach: the connection's noise is seeded (dp_seed); "
                         "call dp_seed(NULL) before attaching a ledger", (self.ledger,))
        self.assertFalse(os.path.exists(self.ledger))
        self.assertEqual(self.one("select dp_seed(NULL)"), "os")
        self.assertEqual(self.attach(5.0), 5.0)

    def test_seed_refused_after_attach(self):
        self.attach(5.0)
        self.assertError("select dp_seed(1)",
                         "dp_seed: refused: a privacy ledger is attached, and a known seed makes the noise predictable")
        self.assertEqual(self.one("select dp_rng()"), "os")
        self.assertEqual(self.one("select dp_seed(NULL)"), "os")

    def test_without_ledger_nothing_is_charged(self):
        self.assertError("select dp_budget_spent()", NO_LEDGER % "dp_budget_spent")
        self.assertError("select dp_budget_remaining()", NO_LEDGER % "dp_budget_remaining")
        self.assertError("select * from dp_ledger_entries", NO_LEDGER % "dp_ledger_entries")
        for _ in range(3):
            self.one("select private_count(0.5) from t")
        # A ledger attached afterwards starts from zero.
        self.assertEqual(self.attach(1.0), 1.0)
        self.assertEqual(charges(self.ledger), [])
        # Another connection in the same process without a ledger is not charged.
        db = connect()
        try:
            make_table(db)
            self.one("select private_count(0.5) from t", db=db)
            self.assertError("select dp_budget_spent()", NO_LEDGER % "dp_budget_spent", db=db)
        finally:
            db.close()
        self.assertEqual(spent_units(self.ledger), 0)


# ----------------------------------------------------------------------------
# 1. basics: what each function costs

class TestLedgerCharges(LedgerTestCase):
    def setUp(self):
        super().setUp()
        self.attach(1000.0)

    def charged(self, sql, params=()):
        """Runs sql; returns (rows, [(function, epsilon, units)] of the new charges)."""
        before = len(charges(self.ledger))
        rows = self.db.execute(sql, params).fetchall()
        new = charges(self.ledger)[before:]
        return rows, [(c[2], c[3], c[4]) for c in new]

    def test_private_count_costs_dp_epsilon(self):
        for alpha in (0.5, 0.9, 0.01, 1e-300, 0.999999):
            with self.subTest(alpha=alpha):
                eps = self.one("select dp_epsilon(?)", (alpha,))
                rows, new = self.charged("select private_count(?) from t", (alpha,))
                self.assertEqual(len(rows), 1)
                self.assertEqual(new, [("private_count", eps, charge_units(eps))])

    def test_sums_cost_eps(self):
        for sql, function in [
                ("select staircase_sum(x, ?, 10) from t", "staircase_sum"),
                ("select staircase_sum(x, ?, 0, 10) from t", "staircase_sum"),
                ("select staircase_sum(x, ?, 0, 10, 'l2') from t", "staircase_sum"),
                ("select laplace_sum(x, ?, 10) from t", "laplace_sum"),
                ("select laplace_sum(x, ?, -5, 10) from t", "laplace_sum")]:
            for eps in (0.25, 0.1, 1.0):
                with self.subTest(sql=sql, eps=eps):
                    rows, new = self.charged(sql, (eps,))
                    self.assertEqual(len(rows), 1)
                    self.assertEqual(new, [(function, eps, charge_units(eps))])

    def test_charges_rounded_up(self):
        # 0.1 is 0.1000000000000000055511 as a double: 100000000001 units, not 10^11.
        _, new = self.charged("select laplace_sum(x, 0.1, 0, 10) from t")
        self.assertEqual(new, [("laplace_sum", 0.1, 100_000_000_001)])
        # 0.25 is exact: exactly 2.5e11 units.
        _, new = self.charged("select laplace_sum(x, 0.25, 0, 10) from t")
        self.assertEqual(new[0][2], 250_000_000_000)

    def test_levels_cost_their_least_private_level(self):
        eps = self.one("select dp_epsilon(0.2)")
        rows, new = self.charged("select private_count_levels(0.2, 0.5, 0.9) from t")
        self.assertEqual(len(json.loads(rows[0][0])), 3)
        self.assertEqual(new, [("private_count_levels", eps, charge_units(eps))])
        eps = self.one("select dp_epsilon(0.3)")
        rows, new = self.charged("select private_count_levels_of(x, 0.3, 0.5) from t")
        self.assertEqual(len(json.loads(rows[0][0])), 2)
        self.assertEqual(new, [("private_count_levels_of", eps, charge_units(eps))])

    def test_release_levels_costs_per_call(self):
        eps = self.one("select dp_epsilon(0.2)")
        rows, new = self.charged("select * from release_levels(3, 10, '[0.2, 0.5, 0.9]')")
        self.assertEqual(len(rows), 3)  # one row per level, one charge per call
        self.assertEqual(new, [("release_levels", eps, charge_units(eps))])
        # In a join SQLite would run it once per row of the left side, so the
        # number of charges would count those rows: refused, nothing charged.
        for sql in ("select * from (values (1), (2), (3)) a, release_levels(a.column1, 10, '[0.2, 0.5]')",
                    "select * from (values (1)) a, release_levels(3, 10, '[0.2, 0.5]')",
                    "select * from release_levels(3, 10, '[0.2, 0.5]') where level = 1"):
            with self.assertRaisesRegex(sqlite3.OperationalError,
                                        "^release_levels: (must be the only table|value must be a literal)"):
                self.charged(sql)
            self.assertEqual(self.one("select count(*) from dp_ledger_entries where function = 'release_levels'"), 1)

    def test_k_groups_cost_k_eps(self):
        self.db.execute("create table s(x, g)")
        self.db.executemany("insert into s values (?, ?)", [(i, i % 7) for i in range(50)])
        rows, new = self.charged("select g, private_count(0.5) from s group by g")
        self.assertEqual(len(rows), 7)
        self.assertEqual(new, [("private_count", self.u05, charge_units(self.u05))] * 7)
        rows, new = self.charged("select g, laplace_sum(x, 0.5, 0, 50) from s where g < 4 group by g")
        self.assertEqual(len(rows), 4)
        self.assertEqual(new, [("laplace_sum", 0.5, 500_000_000_000)] * 4)
        # No group, no release, no charge.
        rows, new = self.charged("select g, private_count(0.5) from s where 0 group by g")
        self.assertEqual((rows, new), ([], []))

    def test_empty_input_is_still_a_release(self):
        rows, new = self.charged("select private_count(0.5) from t where 0")
        self.assertEqual(len(rows), 1)
        self.assertEqual(new, [("private_count", self.u05, charge_units(self.u05))])

    def test_one_release_used_twice_is_charged_once(self):
        # SQLite computes identical aggregates once; an uncorrelated subquery once.
        rows, new = self.charged("select private_count(0.5), private_count(0.5) from t")
        self.assertEqual(rows[0][0], rows[0][1])
        self.assertEqual(len(new), 1)
        rows, new = self.charged("select (select private_count(0.5) from t) from t")
        self.assertEqual(len(set(rows)), 1)
        self.assertEqual(len(new), 1)
        # A correlated subquery releases once per outer row.
        rows, new = self.charged("select (select private_count(0.5) from t where x < o.x) from t o")
        self.assertEqual(len(rows), 10)
        self.assertEqual(len(new), 10)

    def test_invalid_parameters_are_not_charged(self):
        before = spent_units(self.ledger)
        self.assertError("select private_count(2) from t", "private_count: alpha must be in (0, 1), but is 2")
        self.assertRegex(self.error_of("select laplace_sum(x, -1, 0, 10) from t"), r"^laplace_sum: eps")
        self.assertRegex(self.error_of("select * from release_levels(3, 10, '[0.9, 0.5]')"), r"^release_levels: ")
        self.assertEqual(spent_units(self.ledger), before)

    def test_entries_record_function_epsilon_sql_and_pid(self):
        self.db.execute("select private_count(?) from t", (0.5,)).fetchall()
        self.db.execute("select laplace_sum(x, 0.25, 0, 10) from t").fetchall()
        self.db.execute("select g, private_count_levels(0.2, 0.5) from t group by g").fetchall()
        self.db.execute("select * from release_levels(1, 5, '[0.5]')").fetchall()
        entries = self.db.execute("select * from dp_ledger_entries").fetchall()
        self.assertEqual({e[8] for e in entries}, {0.0})  # rho: none is a Gaussian release
        entries = [e[:8] for e in entries]
        # (function, epsilon, delta, released_keys, sql, pid): no release so far costs delta,
        # and released_keys is for grouped releases only.
        self.assertEqual([tuple(e[2:]) for e in entries], [
            ("private_count", self.u05, 0.0, None, "select private_count(0.5) from t", os.getpid()),  # bound value expanded
            ("laplace_sum", 0.25, 0.0, None, "select laplace_sum(x, 0.25, 0, 10) from t", os.getpid()),
            ("private_count_levels", self.one("select dp_epsilon(0.2)"), 0.0, None,
             "select g, private_count_levels(0.2, 0.5) from t group by g", os.getpid()),
            ("release_levels", self.u05, 0.0, None, "select * from release_levels(1, 5, '[0.5]')", os.getpid())])
        ids = [e[0] for e in entries]
        self.assertEqual(ids, sorted(ids))
        self.assertEqual(len(set(ids)), len(ids))
        for e in entries:
            self.assertRegex(e[1], TIME_RE)
        # The table function shows exactly what the file holds.
        with closing(plain(self.ledger)) as p:
            self.assertEqual(entries, p.execute("select id, time, function, epsilon, delta, released_keys, sql, pid "
                                                "from optdp_charges order by id").fetchall())
            self.assertEqual(p.execute("select distinct delta_units from optdp_charges").fetchall(), [("0",)])

    def test_spent_plus_remaining_is_total(self):
        self.db.execute("select private_count(0.5) from t").fetchall()
        self.db.execute("select g, laplace_sum(x, 0.1, 0, 10) from t group by x % 3").fetchall()
        self.db.execute("select private_count_levels(0.3, 0.6) from t").fetchall()
        spent_u = charge_units(self.u05) + 3 * 100_000_000_001 + charge_units(self.one("select dp_epsilon(0.3)"))
        self.assertEqual(spent_units(self.ledger), spent_u)
        self.assertConsistent()
        spent, remaining = self.db.execute("select dp_budget_spent(), dp_budget_remaining()").fetchone()
        self.assertEqual(spent, spent_u / 1e12)
        self.assertEqual(remaining, (total_units(1000.0) - spent_u) / 1e12)
        self.assertEqual(round(spent * UNITS) + round(remaining * UNITS), total_units(1000.0))
        self.assertAlmostEqual(spent + remaining, 1000.0, places=9)

    def test_connections_sharing_a_ledger_see_each_others_charges(self):
        db = connect()
        try:
            make_table(db)
            self.attach(1000.0, db=db)
            self.one("select private_count(0.5) from t", db=db)
            self.one("select private_count(0.5) from t")
            spent = 2 * charge_units(self.u05) / 1e12
            self.assertEqual(self.one("select dp_budget_spent()"), spent)
            self.assertEqual(self.one("select dp_budget_spent()", db=db), spent)
        finally:
            db.close()


# ----------------------------------------------------------------------------
# 1. basics: loading the extension again keeps the ledger

class TestLedgerReload(LedgerTestCase):
    def test_load_extension_again_keeps_the_ledger(self):
        self.attach(10.0)
        self.one("select private_count(0.5) from t")
        self.db.enable_load_extension(True)
        self.db.load_extension(module_path())
        self.db.load_extension(module_path())
        self.db.enable_load_extension(False)
        self.assertEqual(self.one("select dp_budget_spent()"), charge_units(self.u05) / 1e12)
        self.one("select private_count(0.5) from t")  # still charged
        self.assertEqual(len(charges(self.ledger)), 2)
        self.assertEqual(spent_units(self.ledger), 2 * charge_units(self.u05))
        self.assertError("select dp_seed(1)",
                         "dp_seed: refused: a privacy ledger is attached, and a known seed makes the noise predictable")
        self.assertError("select dp_ledger_attach(?, 10)", ALREADY % self.ledger,
                         (os.path.join(self.dir, "fresh.ledger"),))
        self.assertEqual(self.attach(10.0), (total_units(10.0) - 2 * charge_units(self.u05)) / 1e12)

    @unittest.skipUnless(shutil.which("sqlite3"), "no sqlite3 shell")
    def test_dot_load_twice_in_the_shell(self):
        script = "\n".join([
            ".load %s" % module_path(),
            "select dp_ledger_attach('%s', 10);" % self.ledger,
            "create table t(x); insert into t values (1), (2), (3);",
            "select 'count', private_count(0.5) from t;",
            ".load %s" % module_path(),
            "select 'spent', dp_budget_spent();",
            "select 'count', private_count(0.5) from t;",
            "select dp_seed(1);",
            "select 'seed', dp_rng();",
            ""])
        r = subprocess.run([shutil.which("sqlite3"), "-batch", ":memory:"], input=script, capture_output=True,
                           text=True, timeout=60)
        out = r.stdout.splitlines()
        self.assertEqual(out[0], "10.0")
        self.assertEqual(out[2], "spent|%s" % (charge_units(self.u05) / 1e12))
        self.assertEqual([l.split("|")[0] for l in out], ["10.0", "count", "spent", "count", "seed"])
        self.assertEqual(out[-1], "seed|os")
        self.assertIn("dp_seed: refused: a privacy ledger is attached", r.stderr)
        cs = charges(self.ledger)
        self.assertEqual(len(cs), 2)
        self.assertEqual({c[6] for c in cs}, {cs[0][6]})
        self.assertNotEqual(cs[0][6], os.getpid())  # the shell's pid
        self.assertEqual(spent_units(self.ledger), 2 * charge_units(self.u05))


# ----------------------------------------------------------------------------
# 2. the budget runs out in the middle of a query

class TestLedgerExhaustedMidQuery(LedgerTestCase):
    GROUPS = 5

    def setUp(self):
        super().setUp()
        self.db.execute("create table s(g)")
        self.db.executemany("insert into s values (?)", [(i % self.GROUPS,) for i in range(40)])
        self.u = charge_units(self.u05)

    def check_exhausted(self, sql, total, fits, received_max=None):
        """Runs sql (one private_count(0.5) per group) against a ledger covering
        `fits` of the groups; returns the rows received."""
        got, err = receive(self.db, sql)
        tot = total_units(total)
        self.assertEqual(err, exhausted("private_count", fits * self.u, tot, self.u05))
        cs = charges(self.ledger)
        self.assertEqual(len(cs), fits)
        self.assertEqual([c[2:5] for c in cs], [("private_count", self.u05, self.u)] * fits)
        self.assertEqual(spent_units(self.ledger), fits * self.u)
        self.assertLessEqual(spent_units(self.ledger), tot)
        # Every value received was charged (at most one per charge).
        self.assertLessEqual(len(got), fits)
        if received_max is not None:
            self.assertLessEqual(len(got), received_max)
        self.assertConsistent()
        return got

    def test_total_covers_exactly_three_groups(self):
        total = total_of_units(3 * self.u)  # spent + cost == total is allowed
        self.assertEqual(self.attach(total), 3 * self.u / 1e12)
        got = self.check_exhausted("select g, private_count(0.5) from s group by g", total, 3)
        # The groups come out in order: whatever arrived is groups 0, 1, (2).
        # Python's cursor steps one row ahead, so the error on group 3 discards
        # group 2's row (charged, computed, never handed over): it receives 2
        # rows; a C client (the sqlite3 shell, below) receives 3.
        self.assertEqual([r[0] for r in got], list(range(len(got))))
        self.assertIn(len(got), (2, 3))
        # fetchall() reports the failure.
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("select g, private_count(0.5) from s group by g").fetchall()
        self.assertEqual(str(cm.exception), exhausted("private_count", 3 * self.u, 3 * self.u, self.u05))
        self.assertEqual(spent_units(self.ledger), 3 * self.u)
        self.assertEqual(self.one("select dp_budget_remaining()"), 0.0)

    def test_a_cheaper_release_still_fits(self):
        total = 2.2  # 3 charges of ln 2 (2.079...) and 0.1 (1e11 + 1 units) fit, a 4th ln 2 does not
        self.attach(total)
        self.check_exhausted("select g, private_count(0.5) from s group by g", total, 3)
        self.assertEqual(len(self.db.execute("select laplace_sum(g, 0.1, 0, 5) from s").fetchall()), 1)
        self.assertEqual(spent_units(self.ledger), 3 * self.u + 100_000_000_001)
        self.assertError("select laplace_sum(g, 0.1, 0, 5) from s",
                         exhausted("laplace_sum", 3 * self.u + 100_000_000_001, total_units(total), 0.1))
        self.assertConsistent()

    def test_sorted_groups_are_charged_before_any_row_is_returned(self):
        # ORDER BY on the noisy count: every group is finalised (and charged)
        # before the first row comes out, so the client receives nothing; the
        # charges of the unreleased groups are lost (conservative, not a leak).
        total = total_of_units(3 * self.u)
        self.attach(total)
        got = self.check_exhausted("select g, private_count(0.5) c from s group by g order by c", total, 3,
                                   received_max=0)
        self.assertEqual(got, [])

    @unittest.skipUnless(shutil.which("sqlite3"), "no sqlite3 shell")
    def test_what_the_sqlite3_shell_receives(self):
        # The shell prints each row as soon as it is stepped: the three charged
        # groups arrive, then the error.
        total = total_of_units(3 * self.u)
        script = "\n".join([
            ".load %s" % module_path(),
            "select dp_ledger_attach('%s', %r);" % (self.ledger, total),
            "create table s(g);",
            "insert into s select value %% %d from generate_series(1, 40);" % self.GROUPS,
            "select g, private_count(0.5) from s group by g;",
            ""])
        r = subprocess.run([shutil.which("sqlite3"), "-batch", ":memory:"], input=script, capture_output=True,
                           text=True, timeout=60)
        rows = r.stdout.splitlines()[1:]
        self.assertEqual([l.split("|")[0] for l in rows], ["0", "1", "2"])
        self.assertIn(exhausted("private_count", 3 * self.u, 3 * self.u, self.u05), r.stderr)
        self.assertEqual(len(charges(self.ledger)), 3)
        self.assertEqual(spent_units(self.ledger), 3 * self.u)


# ----------------------------------------------------------------------------
# 3. nothing on the analyst's connection refunds a charge

class TestLedgerNoRefund(LedgerTestCase):
    def setUp(self):
        super().setUp()
        self.db.close()
        self.data = os.path.join(self.dir, "data.db")
        self.db = connect(self.data)
        make_table(self.db)
        self.u = charge_units(self.u05)

    def test_rollback(self):
        self.attach(10.0)
        self.db.execute("begin")
        self.one("select private_count(0.5) from t")
        self.db.execute("insert into t values (100, 0)")
        self.db.execute("rollback")
        self.assertEqual(spent_units(self.ledger), self.u)
        self.db.execute("begin immediate")
        self.one("select private_count(0.5) from t")
        self.db.execute("savepoint sp")
        self.db.execute("select g, private_count(0.5) from t group by x % 2").fetchall()
        self.db.execute("rollback to sp")
        self.db.execute("rollback")
        self.assertEqual(spent_units(self.ledger), 4 * self.u)
        self.assertEqual(len(charges(self.ledger)), 4)
        self.assertEqual(self.one("select dp_budget_spent()"), 4 * self.u / 1e12)
        self.assertConsistent()

    def test_close_reopen_reattach(self):
        self.attach(10.0)
        self.one("select private_count(0.5) from t")
        self.db.execute("begin")
        self.one("select private_count(0.5) from t")
        self.db.close()  # with the transaction open: rolled back, the charge stays
        self.db = connect(self.data)
        self.assertEqual(spent_units(self.ledger), 2 * self.u)
        self.assertEqual(self.attach(10.0), (total_units(10.0) - 2 * self.u) / 1e12)
        self.assertEqual(self.one("select dp_budget_spent()"), 2 * self.u / 1e12)
        self.one("select private_count(0.5) from t")
        self.assertEqual(spent_units(self.ledger), 3 * self.u)
        self.assertEqual(len(self.db.execute("select * from dp_ledger_entries").fetchall()), 3)
        self.db.close()
        # Reopened with the other durability: the same account.
        self.db = connect(self.data)
        self.assertEqual(self.attach(10.0, "normal"), (total_units(10.0) - 3 * self.u) / 1e12)
        self.assertConsistent()

    def test_exhausted_stays_exhausted_after_reconnecting(self):
        total = total_of_units(2 * self.u)
        self.attach(total)
        self.one("select private_count(0.5) from t")
        self.one("select private_count(0.5) from t")
        for _ in range(2):
            self.db.close()
            self.db = connect(self.data)
            self.assertEqual(self.attach(total), 0.0)
            self.assertError("select private_count(0.5) from t",
                             exhausted("private_count", 2 * self.u, 2 * self.u, self.u05))
        self.assertEqual(spent_units(self.ledger), 2 * self.u)


# ----------------------------------------------------------------------------
# The analyst's SQL session must not be able to rewrite its own ledger: the
# process can write the file (optdp charges it), so without a guard
# `ATTACH 'budget.ledger' AS l; UPDATE l.optdp_budget SET spent_units = 0`
# refunds everything. Since 1797cb6 an authorizer on the analyst's connection
# refuses ATTACH of the ledger file (by inode), of URIs and of non-literal
# names, and dp_ledger_attach refuses a ledger the session already has open.

class TestLedgerSessionCannotRewriteLedger(LedgerTestCase):
    def spend_all(self):
        self.attach(total_of_units(charge_units(self.u05)))
        self.one("select private_count(0.5) from t")  # the whole budget

    def try_refund(self, attach_sql, params=()):
        """Runs attach_sql and, if it is allowed, rewrites the ledger through it."""
        try:
            self.db.execute(attach_sql, params)
        except sqlite3.Error:
            return False  # refused: the correct outcome
        try:
            self.db.execute("update l.optdp_budget set spent_units = 0")
            self.db.execute("delete from l.optdp_charges")
        except sqlite3.Error:
            pass
        finally:
            self.db.execute("detach database l")
        return True

    def assertNothingMoreReleased(self, how):
        try:
            self.db.execute("select private_count(0.5) from t").fetchall()
            released = True
        except sqlite3.OperationalError:
            released = False
        self.assertFalse(released, "a value was released beyond the total after the session rewrote the ledger "
                                   "through " + how)
        self.assertEqual(spent_units(self.ledger), charge_units(self.u05))
        self.assertEqual(len(charges(self.ledger)), 1)

    def test_attach_database_cannot_refund(self):
        self.spend_all()
        os.symlink(self.ledger, os.path.join(self.dir, "link.ledger"))
        os.link(self.ledger, os.path.join(self.dir, "hard.ledger"))
        other = os.path.join(self.dir, "other.db")
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            for sql, params in [
                    ("attach database ? as l", (self.ledger,)),  # not a literal
                    ("attach database '%s' as l" % self.ledger, ()),
                    ("attach database 'budget.ledger' as l", ()),  # relative
                    ("attach database './/budget.ledger' as l", ()),
                    ("attach database '%s' as l" % os.path.join(self.dir, "link.ledger"), ()),  # symlink
                    ("attach database 'hard.ledger' as l", ()),  # hard link, same inode
                    ("attach database 'file:%s' as l" % self.ledger, ()),  # URI
                    ("attach database 'budget' || '.ledger' as l", ())]:  # expression
                with self.subTest(sql=sql):
                    self.assertFalse(self.try_refund(sql, params), "allowed: " + sql)
                    self.assertNothingMoreReleased(sql)
            # No database at all can be attached once a ledger is (documented):
            # an authorizer would replace the application's own.
            with self.assertRaises(sqlite3.OperationalError) as cm:
                self.db.execute("attach database '%s' as o" % other)
            self.assertEqual(str(cm.exception), "too many attached databases - max 0")
        finally:
            os.chdir(cwd)

    def test_statement_prepared_before_the_ledger(self):
        # A cached ATTACH statement prepared before dp_ledger_attach is
        # re-prepared (and checked) afterwards.
        other = os.path.join(self.dir, "other.db")
        self.db.execute("attach database ? as l", (other,))
        self.db.execute("detach database l")
        self.spend_all()
        self.assertFalse(self.try_refund("attach database ? as l", (self.ledger,)))
        self.assertNothingMoreReleased("a statement prepared before the ledger was attached")

    def test_ledger_already_open_in_the_session_is_refused(self):
        self.db.execute("attach database '%s' as early" % self.ledger)
        self.db.execute("create table early.z(a)")  # the file exists now
        msg = self.error_of("select dp_ledger_attach(?, 5)", (self.ledger,))
        self.assertTrue(msg.startswith("dp_ledger_attach: "), msg)
        self.assertIn("'early'", msg)
        self.assertError("select dp_budget_spent()", NO_LEDGER % "dp_budget_spent")
        self.db.execute("detach database early")
        self.assertEqual(self.attach(5.0), 5.0)


# dp_ledger_attach installs its ATTACH guard with sqlite3_set_authorizer, which
# replaces whatever authorizer the application had installed.

class TestLedgerKeepsApplicationAuthorizer(LedgerTestCase):
    def test_the_applications_authorizer_is_kept(self):
        # The application restricts the analyst with its own authorizer (here:
        # no reading secret.x except through optdp's aggregates). Attaching a
        # ledger must not silently drop that restriction: either the attach is
        # refused, or the application's authorizer still applies afterwards.
        self.db.execute("create table secret(x)")
        self.db.execute("insert into secret values (42)")

        def app_authorizer(action, arg1, arg2, dbname, source):
            if action == sqlite3.SQLITE_READ and arg1 == "secret":
                return sqlite3.SQLITE_DENY
            return sqlite3.SQLITE_OK
        self.db.set_authorizer(app_authorizer)
        self.assertError("select x from secret", "access to secret.x is prohibited")
        try:
            self.attach(5.0)
        except sqlite3.Error:
            return  # refusing to replace the application's authorizer is one correct outcome
        try:
            rows = self.db.execute("select x from secret").fetchall()
        except sqlite3.Error:
            rows = None
        self.assertIsNone(rows, "dp_ledger_attach replaced the application's authorizer: the raw table is readable")


# ----------------------------------------------------------------------------
# 4. many processes (and threads) racing on one ledger

def run_workers(testcase, configs, timeout=120):
    """Starts one worker per config, waits until all are ready, releases them
    together and returns [(returncode, [messages after "ready"], stderr, pid)]."""
    procs = []
    try:
        for cfg in configs:
            procs.append(subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", json.dumps(cfg)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
        for p in procs:
            line = p.stdout.readline()
            testcase.assertEqual(json.loads(line or "null"), {"ready": p.pid}, p.stderr.read() if not line else "")
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        watchdog = threading.Timer(timeout, lambda: [p.kill() for p in procs])
        watchdog.start()
        try:
            results = []
            for p in procs:  # the workers write little to stderr: reading stdout first cannot block them
                out = p.stdout.read()
                err = p.stderr.read()
                results.append((p.wait(), [json.loads(l) for l in out.splitlines()], err, p.pid))
            return results
        finally:
            watchdog.cancel()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


class TestLedgerConcurrency(LedgerTestCase):
    PROCESSES = 6
    QUERIES = 50
    FITS = 120  # of PROCESSES * QUERIES = 300 releases

    def test_processes_never_exceed_the_total(self):
        u = charge_units(self.u05)
        total = total_of_units(self.FITS * u + u // 2)
        self.attach(total)
        tot = total_units(total)
        # Three kinds of release, all of cost -ln(0.5), one value per query.
        queries = ["select private_count(0.5) from t",
                   "select laplace_sum(x, %r, 0, 10) from t" % self.u05,
                   "select group_concat(released) from release_levels(3, 10, '[0.5, 0.8]')"]
        configs = [{"module": module_path(), "ledger": self.ledger, "total": total, "durability": "full",
                    "sql": queries[i % 3], "n": self.QUERIES, "barrier": True} for i in range(self.PROCESSES)]
        results = run_workers(self, configs)
        received = {}
        errors = []
        for rc, msgs, err, pid in results:
            self.assertEqual(rc, 0, err)
            self.assertEqual(msgs[-1]["pid"], pid)
            self.assertEqual(msgs[-1]["integrity"], [["ok"]], "the ledger as seen by %d" % pid)
            values = [m["v"] for m in msgs if "v" in m]
            errors += [m["e"] for m in msgs if "e" in m]
            self.assertFalse([m for m in msgs if "x" in m], "unexpected exceptions in %d" % pid)
            self.assertEqual(len(values) + len([m for m in msgs if "e" in m]), self.QUERIES)
            received[pid] = len(values)
        # Exactly FITS values were released, each with exactly one charge row of its process.
        self.assertEqual(sum(received.values()), self.FITS)
        per_pid = {}
        for c in charges(self.ledger):
            per_pid[c[6]] = per_pid.get(c[6], 0) + 1
            self.assertEqual(c[4], u)
        self.assertEqual({p: n for p, n in per_pid.items()}, {p: n for p, n in received.items() if n})
        self.assertEqual(spent_units(self.ledger), self.FITS * u)
        self.assertLessEqual(spent_units(self.ledger), tot)
        # Every failure is the budget running out, once the whole budget is spent.
        self.assertEqual(len(errors), self.PROCESSES * self.QUERIES - self.FITS)
        for e in errors:
            m = EXHAUSTED_RE.match(e)
            self.assertTrue(m, e)
            self.assertIn(m.group(1), ("private_count", "laplace_sum", "release_levels"))
            self.assertEqual(m.group(2), figure(self.FITS * u / 1e12, True))
        self.assertConsistent()

    def test_processes_creating_one_ledger_at_once(self):
        configs = [{"module": module_path(), "ledger": self.ledger, "total": 10.0, "durability": "full",
                    "sql": "select private_count(0.5) from t", "n": 2, "barrier": True, "attach_after_go": True}
                   for _ in range(4)]
        results = run_workers(self, configs)
        for rc, msgs, err, pid in results:
            self.assertEqual(rc, 0, err)
            attached = [m["attached"] for m in msgs if "attached" in m]
            self.assertEqual(len(attached), 1, msgs)
            self.assertTrue(0 < attached[0] <= 10.0, attached)  # the others may have charged already
            self.assertFalse([m for m in msgs if "x" in m or "e" in m], msgs)
        self.assertEqual(budget_row(self.ledger)[0][:2], (10.0, 10 * UNITS))
        self.assertEqual(len(charges(self.ledger)), 8)
        self.assertConsistent()

    def test_threads_with_their_own_connections(self):
        u = charge_units(self.u05)
        total = total_of_units(60 * u)
        self.attach(total)
        received = []
        failures = []
        lock = threading.Lock()

        def run():
            db = connect()
            try:
                make_table(db)
                db.execute("select dp_ledger_attach(?, ?)", (self.ledger, total)).fetchall()
                for _ in range(40):
                    try:
                        v = db.execute("select private_count(0.5) from t").fetchall()
                        with lock:
                            received.append(v)
                    except sqlite3.OperationalError as e:
                        with lock:
                            failures.append(str(e))
            finally:
                db.close()

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        self.assertEqual(len(received), 60)
        self.assertEqual(len(charges(self.ledger)), 60)
        self.assertEqual(spent_units(self.ledger), 60 * u)
        self.assertEqual(set(failures), {exhausted("private_count", 60 * u, 60 * u, self.u05)})
        self.assertEqual(len(failures), 100)
        self.assertConsistent()


# ----------------------------------------------------------------------------
# 5. a process killed with SIGKILL in the middle of a stream of releases

class TestLedgerSigkill(LedgerTestCase):
    def kill_after(self, lines, durability):
        cfg = {"module": module_path(), "ledger": self.ledger, "total": 1e6, "durability": durability,
               "sql": "select private_count(0.5) from t", "n": -1, "barrier": False}
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", json.dumps(cfg)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            printed = []
            while len(printed) < lines:
                line = p.stdout.readline()
                if not line:
                    self.fail("the worker ended: " + p.stderr.read())
                m = json.loads(line)
                if "v" not in m:
                    self.fail("the worker reported %r" % m)
                printed.append(m["v"])
            os.kill(p.pid, signal.SIGKILL)
            # Whatever it printed before dying counts too (read through the same
            # buffered reader: communicate() would skip what readline() buffered).
            rest = p.stdout.read()
            printed += [json.loads(l)["v"] for l in rest.splitlines() if l.endswith("}") and '"v"' in l]
            self.assertEqual(p.wait(30), -signal.SIGKILL)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        n = len(charges(self.ledger, "where pid = ?", (p.pid,)))
        self.assertGreaterEqual(n, len(printed), "a printed value has no charge")
        self.assertLessEqual(n, len(printed) + 1, "more than the value in flight was charged")
        return n, len(printed)

    def check(self, durability):
        self.attach(1e6)
        for lines in (1, 9, 40):
            self.kill_after(lines, durability)
            self.assertConsistent()
        # The killed writers left no lock behind: a write transaction on the
        # ledger starts without waiting (timeout 0: a lock would fail it at
        # once with "database is locked"), and a charge goes through.
        probe = sqlite3.connect(self.ledger, timeout=0, isolation_level=None)
        try:
            probe.execute("begin immediate")
            probe.execute("rollback")
        finally:
            probe.close()
        self.one("select private_count(0.5) from t")
        self.assertConsistent()

    def test_full(self):
        self.check("full")

    def test_normal(self):
        self.check("normal")


# ----------------------------------------------------------------------------
# 6. the delta account: (epsilon, delta) budgets
#
# No SQL function charges delta yet (the Ledger class's delta charging is
# tested in tests/sqlite/ledger_delta_test.cpp); here: the attach forms and
# their errors, the recorded total_delta, dp_delta_spent / dp_delta_remaining,
# the new dp_ledger_entries columns, and ledger files written before the delta
# account.

# The schema of the ledger files written before the delta account
# (extension/sqlite/ledger.cpp at the commit before it).
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS optdp_budget(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  total_epsilon REAL NOT NULL,
  total_units INTEGER NOT NULL,
  spent_units INTEGER NOT NULL DEFAULT 0,
  created TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS optdp_charges(
  id INTEGER PRIMARY KEY,
  time TEXT NOT NULL,
  function TEXT NOT NULL,
  epsilon REAL NOT NULL,
  units INTEGER NOT NULL,
  sql TEXT,
  pid INTEGER NOT NULL);
"""
ENTRY_COLUMNS = ["id", "time", "function", "epsilon", "delta", "released_keys", "sql", "pid", "rho"]


def delta_total_units(d):
    return math.floor(Fraction(d) * DELTA_UNITS)


def write_old_ledger(path, total, epsilons):
    """A ledger file as the code before the delta account left it: WAL, the
    old schema, one charge per epsilon."""
    with closing(plain(path)) as p:
        p.execute("pragma journal_mode=wal")
        p.executescript(OLD_SCHEMA)
        p.execute("insert into optdp_budget(id, total_epsilon, total_units, created) "
                  "values (1, ?, ?, '2024-01-01T00:00:00.000Z')", (total, total_units(total)))
        for eps in epsilons:
            p.execute("insert into optdp_charges(time, function, epsilon, units, sql, pid) "
                      "values ('2024-01-01T00:00:01.000Z', 'laplace_sum', ?, ?, 'select laplace_sum(x, 0.1, 0, 10) "
                      "from t', 1)", (eps, charge_units(eps)))
            p.execute("update optdp_budget set spent_units = spent_units + ? where id = 1", (charge_units(eps),))


def columns(path, table):
    with closing(plain(path)) as p:
        return [r[1] for r in p.execute("select * from pragma_table_info(?)", (table,))]


def delta_row(path):
    with closing(plain(path)) as p:
        return p.execute("select total_delta, total_delta_units, spent_delta_units from optdp_budget").fetchall()


class TestLedgerDelta(LedgerTestCase):
    def other(self, name):
        return os.path.join(self.dir, name)

    def attach_on_new_connection(self, *args):
        db = connect()
        try:
            return self.one("select dp_ledger_attach(%s)" % ", ".join("?" * len(args)), args, db)
        finally:
            db.close()

    def test_attach_forms(self):
        # (path, total_epsilon): delta budget 0, as every ledger had before.
        self.assertEqual(self.attach(2.0), 2.0)
        self.assertEqual(delta_row(self.ledger), [(0.0, "0", "0")])
        self.assertEqual(self.one("select dp_delta_spent()"), 0.0)
        self.assertEqual(self.one("select dp_delta_remaining()"), 0.0)
        # A number third is total_delta; text is durability; four arguments are both.
        for name, args, delta in [("a", (2.0, 1e-5), 1e-5), ("b", (2.0, 1e-5, "normal"), 1e-5),
                                  ("c", (2.0, 1e-5, "full"), 1e-5), ("d", (2.0, 0), 0.0), ("e", (2.0, 0.0), 0.0),
                                  ("f", (2.0, "normal"), 0.0), ("g", (2.0, "full"), 0.0),
                                  ("h", (2.0, 0.9999999999999999), 0.9999999999999999),
                                  ("i", (2.0, 5e-324), 5e-324), ("j", (2.0, -0.0), 0.0)]:
            with self.subTest(args=args):
                path = self.other(name + ".ledger")
                self.assertEqual(self.attach_on_new_connection(path, *args), 2.0)
                (total_d, total_u, spent_u), = delta_row(path)
                self.assertEqual(total_d, delta)
                self.assertFalse(math.copysign(1, total_d) < 0)
                self.assertEqual(total_u, str(delta_total_units(delta)))
                self.assertEqual(spent_u, "0")
                db = connect()
                try:
                    self.one("select dp_ledger_attach(%s)" % ", ".join("?" * (1 + len(args))), (path,) + args, db)
                    self.assertEqual(self.one("select dp_delta_remaining()", db=db),
                                     float(Fraction(delta_total_units(delta), DELTA_UNITS)))
                    self.assertEqual(self.one("select dp_delta_spent()", db=db), 0.0)
                finally:
                    db.close()
        # Exact: 1e-5 (and every double >= 2^-68) is a whole number of units of 2^-120.
        self.assertEqual(delta_row(self.other("a.ledger"))[0][1], str(Fraction(1e-5) * DELTA_UNITS))

    def test_reattach_same_is_a_no_op_other_delta_refused(self):
        self.assertEqual(self.attach(5.0), 5.0)
        self.one("select private_count(0.5) from t")
        remaining = (total_units(5.0) - charge_units(self.u05)) / 1e12
        db = connect()
        try:
            make_table(db)
            self.assertEqual(self.one("select dp_ledger_attach(?, 1.0, 1e-5)", (self.other("d.ledger"),), db),
                             1.0)
            for args in [(1.0, 1e-5), (1.0, 1e-5, "full")]:  # the same ledger: nothing happens
                self.assertEqual(self.one("select dp_ledger_attach(?%s)" % (", ?" * len(args)),
                                          (self.other("d.ledger"),) + args, db), 1.0)
            for args in [(1.0,), (1.0, 2e-5), (1.0, "full"), (1.0, 1e-5, "normal"), (1.0, 0)]:
                with self.subTest(args=args):
                    self.assertError("select dp_ledger_attach(?%s)" % (", ?" * len(args)),
                                     ALREADY % self.other("d.ledger"), (self.other("d.ledger"),) + args, db)
        finally:
            db.close()
        # (path, total) on a ledger attached that way is the same call.
        self.assertEqual(self.attach(5.0), remaining)
        self.assertEqual(self.one("select dp_ledger_attach(?, 5.0, 0)", (self.ledger,)), remaining)
        self.assertError("select dp_ledger_attach(?, 5.0, 1e-9)", ALREADY % self.ledger, (self.ledger,))

    def test_existing_ledger_keeps_its_total_delta(self):
        self.assertEqual(self.one("select dp_ledger_attach(?, 5, 1e-5)", (self.ledger,)), 5.0)
        rec = "dp_ledger_attach: the ledger '%s' records total_delta 1e-05, but %s was asked for"
        db = connect()
        try:
            for sql, asked in [("select dp_ledger_attach(?, 5)", "0"), ("select dp_ledger_attach(?, 5, 'full')", "0"),
                               ("select dp_ledger_attach(?, 5, 0)", "0"),
                               ("select dp_ledger_attach(?, 5, 2e-5)", "2e-05"),
                               ("select dp_ledger_attach(?, 5, 1e-6, 'normal')", "1e-06")]:
                with self.subTest(sql=sql):
                    self.assertError(sql, rec % (self.ledger, asked), (self.ledger,), db)
                    self.assertError("select dp_delta_spent()", NO_LEDGER % "dp_delta_spent", db=db)
            # total_epsilon is checked first, with the message it always had.
            self.assertError("select dp_ledger_attach(?, 6, 2e-5)",
                             "dp_ledger_attach: the ledger '%s' records total_epsilon 5, but 6 was asked for"
                             % self.ledger, (self.ledger,), db)
            self.assertEqual(delta_row(self.ledger), [(1e-5, str(delta_total_units(1e-5)), "0")])
            self.assertEqual(self.one("select dp_ledger_attach(?, 5, 1e-5, 'normal')", (self.ledger,), db), 5.0)
            self.assertEqual(self.one("select dp_delta_remaining()", db=db), 1e-5)
        finally:
            db.close()

    def test_bad_arguments(self):
        p = self.ledger
        rng = "total_delta must be a number in [0, 1), but is %s"
        cases = [
            ("select dp_ledger_attach(?, 5, 1)", rng % "1"),
            ("select dp_ledger_attach(?, 5, 2)", rng % "2"),
            ("select dp_ledger_attach(?, 5, 2.0)", rng % "2"),
            ("select dp_ledger_attach(?, 5, 1.0)", rng % "1"),
            ("select dp_ledger_attach(?, 5, -1e-9)", rng % "-1e-09"),
            ("select dp_ledger_attach(?, 5, -1)", rng % "-1"),
            ("select dp_ledger_attach(?, 5, 1e999)", rng % "inf"),
            ("select dp_ledger_attach(?, 5, -1e999)", rng % "-inf"),
            # shown as the double it is read as (like total_epsilon)
            ("select dp_ledger_attach(?, 5, 9223372036854775807)", rng % "9223372036854775808"),
            ("select dp_ledger_attach(?, 5, NULL)", THIRD % "NULL"),
            ("select dp_ledger_attach(?, 5, 1e999 - 1e999)", THIRD % "NULL"),  # NaN is NULL in SQLite
            ("select dp_ledger_attach(?, 5, x'00')", THIRD % "a blob of 1 byte"),
            ("select dp_ledger_attach(?, 5, x'')", THIRD % "a blob of 0 bytes"),
            # Text is durability, even if it looks like a number.
            ("select dp_ledger_attach(?, 5, '1e-5')", "durability must be 'full' or 'normal', but is '1e-5'"),
            ("select dp_ledger_attach(?, 5, 1e-5, NULL)", "durability must be text ('full' or 'normal'), but is NULL"),
            ("select dp_ledger_attach(?, 5, 1e-5, 1)", "durability must be text ('full' or 'normal'), but is 1"),
            ("select dp_ledger_attach(?, 5, 1e-5, 'off')", "durability must be 'full' or 'normal', but is 'off'"),
            ("select dp_ledger_attach(?, 5, NULL, 'full')", "total_delta must be a number, but is NULL"),
            ("select dp_ledger_attach(?, 5, '1e-5', 'full')", "total_delta must be a number, but is text '1e-5'"),
            ("select dp_ledger_attach(?, 5, x'00', 'full')", "total_delta must be a number, but is a blob of 1 byte"),
            ("select dp_ledger_attach(?, 5, 2, 'full')", rng % "2"),
            ("select dp_ledger_attach(?, 5, 2, 'off')", rng % "2"),  # in argument order
            # total_epsilon before total_delta, path before both.
            ("select dp_ledger_attach(?, 0, 2)", "total_epsilon must be a number in (0, 1e6], but is 0"),
            ("select dp_ledger_attach(?, NULL, NULL, NULL)", "total_epsilon must be a number, but is NULL"),
            ("select dp_ledger_attach(':memory:', 5, 2, 'off')",
             "path must name a file (a ledger in memory could be lost), but is ':memory:'"),
        ]
        for sql, msg in cases:
            with self.subTest(sql=sql):
                self.assertError(sql, "dp_ledger_attach: " + msg, () if ":memory:" in sql else (p,))
        self.assertError("select dp_ledger_attach(?, 5, 1e-5, 'full', 1)",
                         "wrong number of arguments to function dp_ledger_attach()", (p,))
        self.assertFalse(os.path.exists(p), "a refused attach must not create the ledger")
        self.assertError("select dp_delta_spent()", NO_LEDGER % "dp_delta_spent")

    def test_delta_functions(self):
        self.assertError("select dp_delta_spent()", NO_LEDGER % "dp_delta_spent")
        self.assertError("select dp_delta_remaining()", NO_LEDGER % "dp_delta_remaining")
        self.assertEqual(self.one("select dp_ledger_attach(?, 3, 2.5e-6)", (self.ledger,)), 3.0)
        self.assertEqual(self.db.execute("select dp_budget_spent(), dp_budget_remaining(), dp_delta_spent(), "
                                         "dp_delta_remaining()").fetchall(), [(0.0, 3.0, 0.0, 2.5e-6)])
        # Registered like their epsilon counterparts.
        flags = dict(self.db.execute("select name, flags from pragma_function_list where name like 'dp\_%' "
                                     "escape '\\' and narg = 0").fetchall())
        self.assertEqual(flags["dp_delta_spent"], flags["dp_budget_spent"])
        self.assertEqual(flags["dp_delta_remaining"], flags["dp_budget_remaining"])
        # They read the file: a spend recorded by anyone shows at once, shown
        # as the exact count of units rounded to the nearest double.
        tot = delta_total_units(2.5e-6)
        for spent in [delta_total_units(1e-6) * 2, tot - 1, tot, 1]:
            with self.subTest(spent=spent):
                with closing(plain(self.ledger)) as p:
                    p.execute("update optdp_budget set spent_delta_units = ?", (str(spent),))
                self.assertEqual(self.one("select dp_delta_spent()"), float(Fraction(spent, DELTA_UNITS)))
                self.assertEqual(self.one("select dp_delta_remaining()"), float(Fraction(tot - spent, DELTA_UNITS)))
        self.assertEqual(self.one("select dp_delta_remaining()"), float(Fraction(tot - 1, DELTA_UNITS)))

    def test_a_spend_that_cannot_be_read_refuses_every_release(self):
        self.assertEqual(self.one("select dp_ledger_attach(?, 3, 1e-6)", (self.ledger,)), 3.0)
        self.one("select private_count(0.5) from t")
        why = "the ledger '%s' cannot be read: spent_delta_units is not a count of delta units" % self.ledger
        for bad in ["12x", "", "-1", "1e5", str(2 ** 122 + 1), 1.5, b"1"]:
            with self.subTest(bad=bad):
                with closing(plain(self.ledger)) as p:
                    p.execute("update optdp_budget set spent_delta_units = ?", (bad,))
                self.assertEqual(receive(self.db, "select private_count(0.5) from t"), ([], "private_count: " + why))
                self.assertError("select dp_delta_spent()", "dp_delta_spent: " + why)
        self.assertEqual(len(charges(self.ledger)), 1)

    def test_ordinary_releases_cost_no_delta(self):
        self.assertEqual(self.one("select dp_ledger_attach(?, 1000, 1e-5)", (self.ledger,)), 1000.0)
        for sql in ["select private_count(0.5) from t", "select private_count(x, 0.5) from t",
                    "select laplace_sum(x, 0.25, 0, 10) from t", "select staircase_sum(x, 0.25, 10) from t",
                    "select private_count_levels(0.2, 0.5) from t", "select * from release_levels(3, 10, '[0.5]')",
                    "select g, private_count(0.5) from t group by x % 3"]:
            self.db.execute(sql).fetchall()
        cur = self.db.execute("select * from dp_ledger_entries")
        entries = cur.fetchall()
        self.assertEqual([d[0] for d in cur.description], ENTRY_COLUMNS)
        self.assertEqual(len(entries), 9)
        self.assertEqual({(e[4], e[5]) for e in entries}, {(0.0, None)})
        self.assertEqual(self.db.execute("select typeof(delta), typeof(released_keys), count(*) "
                                         "from dp_ledger_entries group by 1, 2").fetchall(), [("real", "null", 9)])
        self.assertEqual(self.one("select dp_delta_spent()"), 0.0)
        self.assertEqual(self.one("select dp_delta_remaining()"), 1e-5)
        self.assertEqual(delta_row(self.ledger), [(1e-5, str(delta_total_units(1e-5)), "0")])
        with closing(plain(self.ledger)) as p:
            self.assertEqual(p.execute("select delta, delta_units, released_keys, count(*) from optdp_charges "
                                       "group by 1, 2, 3").fetchall(), [(0.0, "0", None, 9)])
        self.assertConsistent()

    def test_a_zero_delta_budget_still_pays_releases(self):
        self.assertEqual(self.attach(1.0), 1.0)
        self.assertEqual(len(self.db.execute("select private_count(0.5) from t").fetchall()), 1)
        self.assertEqual(len(charges(self.ledger)), 1)

    def test_old_format_ledger_opens_with_delta_zero(self):
        write_old_ledger(self.ledger, 3.0, [0.1, 0.25])
        old_budget, old_charges = columns(self.ledger, "optdp_budget"), columns(self.ledger, "optdp_charges")
        spent0 = charge_units(0.1) + charge_units(0.25)
        # A different total_delta is refused, and the refusal leaves the file as it was.
        self.assertError("select dp_ledger_attach(?, 3, 1e-5)",
                         "dp_ledger_attach: the ledger '%s' records total_delta 0, but 1e-05 was asked for"
                         % self.ledger, (self.ledger,))
        self.assertEqual((columns(self.ledger, "optdp_budget"), columns(self.ledger, "optdp_charges")),
                         (old_budget, old_charges))
        # The call it was always opened with opens it, and migrates the schema.
        self.assertEqual(self.attach(3.0), (total_units(3.0) - spent0) / 1e12)
        self.assertEqual(columns(self.ledger, "optdp_budget"),
                         old_budget + ["total_delta", "total_delta_units", "spent_delta_units"])
        self.assertEqual(columns(self.ledger, "optdp_charges"), old_charges + ["delta", "delta_units", "released_keys", "rho",
                                                                      "shift"])
        self.assertEqual(delta_row(self.ledger), [(0.0, "0", "0")])
        self.assertEqual(self.db.execute("select dp_budget_spent(), dp_delta_spent(), dp_delta_remaining()").fetchall(),
                         [(spent0 / 1e12, 0.0, 0.0)])
        entries = self.db.execute("select function, epsilon, delta, released_keys, pid from dp_ledger_entries")
        self.assertEqual(entries.fetchall(), [("laplace_sum", 0.1, 0.0, None, 1), ("laplace_sum", 0.25, 0.0, None, 1)])
        # It goes on charging as before.
        self.one("select private_count(0.5) from t")
        self.assertEqual(spent_units(self.ledger), spent0 + charge_units(self.u05))
        self.assertEqual(self.one("select delta from dp_ledger_entries where id = 3"), 0.0)
        self.assertConsistent()
        # Other connections open it with any spelling of delta 0.
        self.assertEqual(self.attach_on_new_connection(self.ledger, 3.0, 0), self.one("select dp_budget_remaining()"))
        self.assertEqual(self.attach_on_new_connection(self.ledger, 3.0, "normal"),
                         self.one("select dp_budget_remaining()"))
        # A process still running the older code names its columns: it can go on charging the file.
        with closing(plain(self.ledger)) as p:
            p.execute("begin immediate")
            p.execute("insert into optdp_charges(time, function, epsilon, units, sql, pid) "
                      "values ('2024-01-02T00:00:00.000Z', 'private_count', 0.5, 500000000000, NULL, 2)")
            p.execute("update optdp_budget set spent_units = spent_units + 500000000000")
            p.execute("commit")
        self.assertEqual(self.one("select delta || '|' || quote(released_keys) from dp_ledger_entries where id = 4"),
                         "0.0|NULL")
        self.assertConsistent()

    def test_old_format_ledger_migrated_by_processes_at_once(self):
        write_old_ledger(self.ledger, 10.0, [0.5])
        configs = [{"module": module_path(), "ledger": self.ledger, "total": 10.0, "durability": "full",
                    "sql": "select private_count(0.5) from t", "n": 2, "barrier": True, "attach_after_go": True}
                   for _ in range(4)]
        for rc, msgs, err, pid in run_workers(self, configs):
            self.assertEqual(rc, 0, err)
            self.assertEqual(len([m for m in msgs if "attached" in m]), 1, msgs)
            self.assertFalse([m for m in msgs if "x" in m or "e" in m], msgs)
        self.assertEqual(columns(self.ledger, "optdp_budget")[-3:],
                         ["total_delta", "total_delta_units", "spent_delta_units"])
        self.assertEqual(columns(self.ledger, "optdp_charges")[-5:],
                         ["delta", "delta_units", "released_keys", "rho", "shift"])
        self.assertEqual(len(charges(self.ledger)), 9)
        self.assertEqual(delta_row(self.ledger), [(0.0, "0", "0")])
        self.assertConsistent()


# ----------------------------------------------------------------------------
# the worker process

def worker(cfg):
    """One client process: attaches the ledger, runs cfg['sql'] cfg['n'] times
    (forever if n < 0) and prints one JSON line per outcome, flushed: {"v": value},
    {"e": message} for an sqlite3 error, {"x": repr} for anything else; at the
    end {"integrity": ..., "pid": pid}."""
    def out(obj):
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    db = connect(module=cfg["module"])
    make_table(db)
    attach = "select dp_ledger_attach(?, ?, ?)"
    args = (cfg["ledger"], cfg["total"], cfg["durability"])
    if not cfg.get("attach_after_go"):
        db.execute(attach, args).fetchall()
    if cfg["barrier"]:
        out({"ready": os.getpid()})
        sys.stdin.readline()
    if cfg.get("attach_after_go"):
        try:
            out({"attached": db.execute(attach, args).fetchone()[0]})
        except sqlite3.Error as e:
            out({"e": str(e)})
            return 0
    i = 0
    while cfg["n"] < 0 or i < cfg["n"]:
        i += 1
        try:
            for row in db.execute(cfg["sql"]).fetchall():
                out({"v": row[0]})
        except sqlite3.OperationalError as e:
            out({"e": str(e)})
        except Exception as e:  # noqa: BLE001 - reported to the parent
            out({"x": repr(e)})
    db.close()
    out({"integrity": integrity(cfg["ledger"]), "pid": os.getpid()})
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "--worker":
        return worker(json.loads(argv[2]))
    return optdp_testlib.main(__name__, argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
