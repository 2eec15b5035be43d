#!/usr/bin/python3
"""private_quantile and private_median through Python's sqlite3 module:
messages, empty input, the grid, the ledger, GROUP BY, rows that never fail.

    /usr/bin/python3 tests/python/test_quantile.py --module build/optdp.so [unittest args]

The statistical checks (the exact law, the utility bound, the empirical
epsilon) are C++ tests: tests/sqlite/quantile_stat_test.cpp and
tests/sqlite/audit_test.cpp; the core in tests/core/quantile_test.cpp.
"""
import math
import os
import sys
import tempfile
import unittest

import optdp_testlib as lib


class TestQuantileErrors(lib.OptdpTestCase):
    def setUp(self):
        super().setUp()
        self.db.executescript("CREATE TABLE t(x); INSERT INTO t VALUES (1), (2), (3); CREATE TABLE e(x);")

    def both(self, call, message):
        for table in ("t", "e"):
            self.assertError("SELECT %s FROM %s" % (call, table), message)

    def test_messages(self):
        self.both("private_quantile(x, 1.5, 1, 0, 10)", "private_quantile: q must be in [0, 1], but is 1.5")
        self.both("private_quantile(x, -0.1, 1, 0, 10)", "private_quantile: q must be in [0, 1], but is -0.1")
        self.both("private_quantile(x, 0.5, 0, 0, 10)", "private_quantile: eps must be a finite number > 0, but is 0")
        self.both("private_median(x, 1, 10, 0)",
                  "private_median: lower must be less than upper, but lower is 10 and upper is 0")
        self.both("private_median(x, 1, 0, 1e999)", "private_median: upper must be finite, but is inf")
        self.both("private_median(x, NULL, 0, 1)", "private_median: eps must be a number, but is NULL")
        self.both("private_median(x, x, 0, 1)",
                  "private_median: eps must be a literal or a bound parameter (optdp fixes the noise before it "
                  "reads any row), but is the expression 'x'")


class TestQuantileValues(lib.OptdpTestCase):
    def test_outputs_on_the_grid_inside_the_bounds(self):
        self.db.execute("CREATE TABLE t(x)")
        self.db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in (None, "abc", -50, 3.3, 7, 1e308 * 10, b"x")])
        for lo, hi in ((0, 10), (-3.5, 2.25), (1e6, 2e6)):
            step = 2.0 ** math.ceil(math.log2((hi - lo) / 4095))
            for _ in range(20):
                for sql in ("SELECT private_median(x, 1.0, ?, ?) FROM t", "SELECT private_quantile(x, 0.9, 1.0, ?, ?) FROM t",
                            "SELECT private_median(x, 1.0, ?, ?) FROM t WHERE 0"):
                    c = self.one(sql, (lo, hi))
                    self.assertIsInstance(c, float)
                    self.assertTrue(lo <= c <= hi, (c, lo, hi))
                    self.assertEqual(math.fmod(c, step), 0.0, (c, step))

    def test_a_clear_median_at_high_eps(self):
        self.db.execute("CREATE TABLE t(x)")
        self.db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in range(1, 1000)])
        for _ in range(5):
            self.assertLess(abs(self.one("SELECT private_median(x, 10.0, 0, 1000) FROM t") - 500), 5)
            self.assertLess(abs(self.one("SELECT private_quantile(x, 0.1, 10.0, 0, 1000) FROM t") - 100), 5)

    def test_group_by_and_ledger(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.db.execute("CREATE TABLE t(g, x)")
            self.db.executemany("INSERT INTO t VALUES (?, ?)", [(g, v) for g in range(3) for v in range(10)])
            self.db.execute("SELECT dp_ledger_attach(?, 10)", (os.path.join(tmp, "l.ledger"),))
            self.assertEqual(len(self.all("SELECT g, private_median(x, 0.5, 0, 10) FROM t GROUP BY g")), 3)
            self.one("SELECT private_quantile(x, 0.25, 0.25, 0, 10) FROM t WHERE 0")
            self.assertEqual(self.all("SELECT function, epsilon FROM dp_ledger_entries() ORDER BY id"),
                             [("private_median", 0.5)] * 3 + [("private_quantile", 0.25)])


if __name__ == "__main__":
    sys.exit(lib.main(__name__, sys.argv))
