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

    def test_messages(self):
        self.assertErrorWithAndWithoutRows("private_quantile(x, 1.5, 1, 0, 10)", "private_quantile: q must be in [0, 1], but is 1.5")
        self.assertErrorWithAndWithoutRows("private_quantile(x, -0.1, 1, 0, 10)", "private_quantile: q must be in [0, 1], but is -0.1")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, 0, 0, 10)", "private_quantile: eps must be a finite number > 0, but is 0")
        self.assertErrorWithAndWithoutRows("private_median(x, 1, 10, 0)",
                  "private_median: lower must be less than upper, but lower is 10 and upper is 0")
        self.assertErrorWithAndWithoutRows("private_median(x, 1, 0, 1e999)", "private_median: upper must be finite, but is inf")
        self.assertErrorWithAndWithoutRows("private_median(x, NULL, 0, 1)", "private_median: eps must be a number, but is NULL")
        self.assertErrorWithAndWithoutRows("private_median(x, x, 0, 1)",
                  "private_median: eps must be a literal or a bound parameter (optdp fixes the noise before it "
                  "reads any row), but is the expression 'x'")

    def test_every_parameter(self):
        q = "private_quantile: "
        self.assertErrorWithAndWithoutRows("private_quantile(x, 1e999, 1, 0, 10)", q + "q must be in [0, 1], but is inf")
        self.assertErrorWithAndWithoutRows("private_quantile(x, -1e999, 1, 0, 10)", q + "q must be in [0, 1], but is -inf")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 2, 1, 0, 10)", q + "q must be in [0, 1], but is 2")
        self.assertErrorWithAndWithoutRows("private_quantile(x, '0.5', 1, 0, 10)", q + "q must be a number, but is text '0.5'")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5 + 0, 1, 0, 10)",
                  q + "q must be a literal or a bound parameter (optdp fixes the noise before it reads any row), "
                  "but is the expression '0.5 + 0'")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, -1, 0, 10)", q + "eps must be a finite number > 0, but is -1")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, 1e999, 0, 10)", q + "eps must be a finite number > 0, but is inf")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, 'abc', 0, 10)", q + "eps must be a number, but is text 'abc'")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, 1, 3, 3)", q + "lower must be less than upper, but lower is 3 and upper is 3")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, 1, -1e999, 3)", q + "lower must be finite, but is -inf")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, 1, 0, '10')", q + "upper must be a number, but is text '10'")
        self.assertErrorWithAndWithoutRows("private_quantile(x, 0.5, 1, -1e308, 1e308)", q + "upper - lower must be finite, but is inf")
        self.assertErrorWithAndWithoutRows("private_median(x, 1, 5e-324, 1e-323)",
                  "private_median: [lower, upper] must hold a multiple of 2^-1022, but [5e-324, 1e-323] does not")
        self.assertErrorWithAndWithoutRows("private_median(x, 1, x, 10)",
                  "private_median: lower must be a literal or a bound parameter (optdp fixes the noise before it "
                  "reads any row), but is the expression 'x'")

    def test_bound_parameters(self):
        for table in ("t", "e"):
            c = self.one("SELECT private_quantile(x, ?, ?, ?, ?) FROM %s" % table, (0.5, 1.0, 0, 10))
            self.assertTrue(0 <= c <= 10)
            self.assertError("SELECT private_quantile(x, ?, ?, ?, ?) FROM %s" % table,
                             "private_quantile: q must be in [0, 1], but is 1.5", (1.5, 1.0, 0, 10))


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

    def test_null_rows_are_skipped_and_text_rows_read_as_sum_reads_them(self):
        self.db.execute("CREATE TABLE t(x)")
        # 1000 NULLs and 9 rows 1..9: the median lies in (4, 6] (NULLs counted as 0 would put it at 0).
        self.db.executemany("INSERT INTO t VALUES (?)", [(None,)] * 1000 + [(v,) for v in range(1, 10)])
        for _ in range(5):
            self.assertLess(abs(self.one("SELECT private_median(x, 20.0, 0, 10) FROM t") - 5), 1.01)
        # Texts '1'..'9' read as 1..9 and 'abc' 4 times as 0, as sum() reads them: the median of
        # 0, 0, 0, 0, 1, ..., 9 lies in (2, 4] (in (4, 6] if 'abc' were skipped).
        self.db.execute("CREATE TABLE s(x TEXT)")
        self.db.executemany("INSERT INTO s VALUES (?)", [(str(v),) for v in range(1, 10)] + [("abc",)] * 4)
        for _ in range(5):
            self.assertLess(abs(self.one("SELECT private_median(x, 20.0, 0, 10) FROM s") - 3), 1.01)

    def test_only_null_rows_are_no_rows(self):
        # Uniform on the grid of [0, 1] (4096 points) either way: both halves come up.
        self.db.execute("CREATE TABLE t(x)")
        self.db.executemany("INSERT INTO t VALUES (?)", [(None,)] * 10)
        outs = [self.one("SELECT private_median(x, 5.0, 0, 1) FROM t") for _ in range(60)]
        self.assertTrue(any(c < 0.5 for c in outs) and any(c > 0.5 for c in outs), outs)

    def test_empty_input_one_ledger_entry(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.db.execute("CREATE TABLE e(x)")
            self.db.execute("SELECT dp_ledger_attach(?, 10)", (os.path.join(tmp, "l.ledger"),))
            c = self.one("SELECT private_median(x, 0.5, -2, 2) FROM e")
            self.assertTrue(-2 <= c <= 2 and math.fmod(c, 2.0 ** -10) == 0, c)
            self.assertEqual(self.all("SELECT function, epsilon FROM dp_ledger_entries()"), [("private_median", 0.5)])
            # A refused call charges nothing, with rows or without.
            self.assertIn("q must be in [0, 1]", self.error_of("SELECT private_quantile(x, 7, 0.5, 0, 1) FROM e"))
            self.assertEqual(len(self.all("SELECT * FROM dp_ledger_entries()")), 1)

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
