#!/usr/bin/python3
"""private_avg, private_var and private_stddev through Python's sqlite3 module:
messages, empty input, ranges, the ledger, GROUP BY, rows that never fail.

    /usr/bin/python3 tests/python/test_moments.py --module build/optdp.so [unittest args]

Unbiasedness and the empirical epsilon are C++ tests: tests/sqlite/moments_stat_test.cpp
and tests/sqlite/moments_audit_test.cpp; the plan in tests/core/moments_test.cpp.
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
                self.assertError(q("%s(x, dp_alpha(0.5), 0, 10)" % f),
                                 "%s: eps must be a literal or a bound parameter (optdp fixes the noise before it "
                                 "reads any row), but is the expression 'dp_alpha(0.5)'" % f)
                self.assertError(q("%s(x, 1, (SELECT min(x) FROM t), 10)" % f),
                                 "%s: lower must be a literal or a bound parameter (optdp fixes the noise before it "
                                 "reads any row), but is the expression '(SELECT min(x) FROM t)'" % f)
                self.assertError(q("%s(x, NULL, 0, 10)" % f), "%s: eps must be a number, but is NULL" % f)
                self.assertError(q("%s(x, 1, -1e999, 10)" % f), "%s: lower must be finite, but is -inf" % f)
                self.assertError(q("%s(x, 1, -1e308, 1e308)" % f), "%s: upper - lower must be finite, but is inf" % f)
                self.assertError(q("%s(x, 4.656612873077393e-10, 0, 10)" % f),
                                 "%s: eps must be at least 2^-30 (9.3e-10) for sums, but is 4.656612873077393e-10" % f)
                # Only the width matters, not the bounds' distance from 0 (the sums are centred).
                self.assertError(q("%s(x, 1, 1e-280, 1.000000000001e-280)" % f),
                                 "%s: upper - lower must be at least 2^-960 (1.1e-289), but is %r" %
                                 (f, 1.000000000001e-280 - 1e-280))
                # eps at least 2^-30 is enough, although its parts are smaller.
                self.assertIsInstance(self.one(q("%s(x, 1e-9, 0, 10)" % f)), float)
                self.assertIsInstance(self.one(q("%s(x, 1, 1e-280, 2e-280)" % f)), float)
                # Bound parameters are read like literals.
                self.assertError(q("%s(x, ?, ?, ?)" % f), "%s: eps must be a finite number > 0, but is -1" % f,
                                 (-1, 0, 10))
                self.assertIsInstance(self.one(q("%s(x, ?, ?, ?)" % f), (1.0, 0, 10)), float)


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

    def test_null_rows_are_skipped_and_text_rows_read_as_sum_reads_them(self):
        # At eps = 1000 the noise is far below the differences tested here.
        self.db.execute("CREATE TABLE t(x)")
        self.db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in (2, 4, None, None, None, None)])
        self.assertAlmostEqual(self.one("SELECT private_avg(x, 1000.0, 0, 10) FROM t"), 3.0, delta=0.05)
        self.assertAlmostEqual(self.one("SELECT private_var(x, 1000.0, 0, 10) FROM t"), 1.0, delta=0.3)
        only_null = self.one("SELECT private_avg(x, 1000.0, 0, 10) FROM t WHERE x IS NULL")
        self.assertTrue(0 <= only_null <= 10, only_null)
        # '6' is 6, 'abc' and a blob are 0 (as sum() reads them), 1e999 is clamped to upper.
        self.db.execute("DELETE FROM t")
        self.db.executemany("INSERT INTO t VALUES (?)", [("6",), ("abc",), (b"\x01",), (1e999,)])
        self.assertAlmostEqual(self.one("SELECT private_avg(x, 1000.0, 0, 10) FROM t"), 4.0, delta=0.05)
        self.assertAlmostEqual(self.one("SELECT private_avg(x, 1000.0, 0, 10) FROM t"),
                               min(self.one("SELECT avg(min(max(x + 0.0, 0), 10)) FROM t"), 10), delta=0.05)

    def test_wide_bounds_stay_in_range(self):
        self.db.execute("CREATE TABLE t(x)")
        self.db.executemany("INSERT INTO t VALUES (?)", [(v,) for v in (0, 1e308, 5e307)])
        for _ in range(20):
            s = self.one("SELECT private_stddev(x, 1.0, 0, 1.7e308) FROM t")
            self.assertTrue(0 <= s <= 0.85e308, s)
            v = self.one("SELECT private_var(x, 1.0, 0, 1e150) FROM t")
            self.assertTrue(0 <= v <= 0.25e300, v)

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
            for f in FUNCTIONS:  # empty input: a value, one entry at eps
                self.assertIsInstance(self.one("SELECT %s(x, 0.25, 0, 10) FROM t WHERE 0" % f), float)
            self.assertEqual(self.all("SELECT function, epsilon FROM dp_ledger_entries() ORDER BY id"),
                             [("private_avg", 0.5)] * 3 + [(f, 0.25) for f in FUNCTIONS])
            # An error (on either path) charges nothing.
            self.error_of("SELECT private_var(x, 0.25, 10, 0) FROM t")
            self.error_of("SELECT private_var(x, 0.25, 10, 0) FROM t WHERE 0")
            self.assertEqual(len(self.all("SELECT * FROM dp_ledger_entries()")), 6)
            # GROUP BY over a LEFT JOIN: a group without rows gets a value too.
            rows = self.all("SELECT k.g, private_avg(t.x, 0.5, 0, 10) FROM (SELECT 0 AS g UNION SELECT 7) k "
                            "LEFT JOIN t ON t.g = k.g GROUP BY k.g")
            self.assertEqual([g for g, _ in rows], [0, 7])
            self.assertTrue(all(0 <= v <= 10 for _, v in rows), rows)


if __name__ == "__main__":
    sys.exit(lib.main(__name__, sys.argv))
