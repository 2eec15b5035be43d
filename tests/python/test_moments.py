#!/usr/bin/python3
"""private_avg, private_var and private_stddev through Python's sqlite3 module:
messages, empty input, ranges, the ledger, GROUP BY, rows that never fail.

    /usr/bin/python3 tests/python/test_moments.py --module build/optdp.so [unittest args]

Unbiasedness and the empirical epsilon are C++ tests: tests/sqlite/moments_stat_test.cpp
and tests/sqlite/audit_test.cpp; the plan in tests/core/moments_test.cpp.
"""
import os
import sys
import tempfile
import unittest

import optdp_testlib as lib

FUNCTIONS = ("private_avg", "private_var", "private_stddev")


class TestMomentsErrors(lib.OptdpTestCase):
    def setUp(self):
        super().setUp()
        self.db.executescript("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3); CREATE TABLE e(x);")

    def test_messages(self):
        for f in FUNCTIONS:
            for table in ("t", "e"):
                q = lambda call: "SELECT %s FROM %s" % (call, table)
                self.assertError(q("%s(x, 0, 0, 10)" % f), "%s: eps must be a finite number > 0, but is 0" % f)
                self.assertError(q("%s(x, 1, 10, 0)" % f),
                                 "%s: lower must be less than upper, but lower is 10 and upper is 0" % f)
                self.assertError(q("%s(x, 1, 0, 1e999)" % f), "%s: upper must be finite, but is inf" % f)
                self.assertError(q("%s(x, 'a', 0, 1)" % f), "%s: eps must be a number, but is text 'a'" % f)
                self.assertError(q("%s(x, 1, 0, x)" % f),
                                 "%s: upper must be a literal or a bound parameter (optdp fixes the noise before it "
                                 "reads any row), but is the expression 'x'" % f)


class TestMomentsValues(lib.OptdpTestCase):
    def test_ranges_rows_never_fail_and_empty_input(self):
        self.db.execute("CREATE TABLE t(x)")
        self.db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in (None, "abc", "12", -50, 3.3, 1e308 * 10, b"x")])
        for _ in range(50):
            for where in ("", " WHERE 0"):
                a = self.one("SELECT private_avg(x, 1.0, 100, 200) FROM t" + where)
                v = self.one("SELECT private_var(x, 1.0, 100, 200) FROM t" + where)
                s = self.one("SELECT private_stddev(x, 1.0, 100, 200) FROM t" + where)
                self.assertTrue(100 <= a <= 200, a)
                self.assertTrue(0 <= v <= 2500, v)
                self.assertTrue(0 <= s <= 50, s)

    def test_close_at_high_eps(self):
        self.db.execute("CREATE TABLE t(x)")
        self.db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in range(100)])
        self.assertAlmostEqual(self.one("SELECT private_avg(x, 1000.0, 0, 100) FROM t"), 49.5, delta=0.01)
        self.assertAlmostEqual(self.one("SELECT private_var(x, 1000.0, 0, 100) FROM t"), 833.25, delta=1)
        self.assertAlmostEqual(self.one("SELECT private_stddev(x, 1000.0, 0, 100) FROM t"), 833.25 ** 0.5, delta=0.05)

    def test_group_by_and_ledger(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.db.execute("CREATE TABLE t(g, x)")
            self.db.executemany("INSERT INTO t VALUES (?, ?)", [(g, v) for g in range(3) for v in range(10)])
            self.db.execute("SELECT dp_ledger_attach(?, 10)", (os.path.join(tmp, "l.ledger"),))
            self.assertEqual(len(self.all("SELECT g, private_avg(x, 0.5, 0, 10) FROM t GROUP BY g")), 3)
            self.one("SELECT private_stddev(x, 0.25, 0, 10) FROM t WHERE 0")
            self.assertEqual(self.all("SELECT function, epsilon FROM dp_ledger_entries() ORDER BY id"),
                             [("private_avg", 0.5)] * 3 + [("private_stddev", 0.25)])


if __name__ == "__main__":
    sys.exit(lib.main(__name__, sys.argv))
