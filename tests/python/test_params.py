#!/usr/bin/python3
"""Parameters of the aggregates in large groups, through Python's sqlite3.

    /usr/bin/python3 tests/python/test_params.py --module build/optdp.so [unittest args]

Every aggregate compares each row's parameters with the first row's until it
has compared 65536 rows (kProveConstantAfterRows in extension/sqlite/
connection.hpp; more only with a schema of over 6.5 KB of views and triggers,
params.hpp), that is up to row 65537 of the group; then it asks once whether the parameters are literals in every call that may
be running (params_are_literals), and if so stops re-reading them. These tests
check, on groups of 100,000 rows, that

  * a parameter that is not a literal (a column, an expression, a call in a
    view or a trigger, a quoted function name) and changes after row 65536,
    65537 or 99,999 is still an error: the proof does not hold for it;
  * with literal or bound parameters, every row is still counted and summed,
    and clamped, after the checks stop (exact results, noise negligible:
    alpha = 1e-12, eps = 60; see test_sums.py).
"""
import sys

from optdp_testlib import OptdpTestCase, main

ROWS = 100000
PROOF_AT = 65536
CHANGE_AFTER = (PROOF_AT - 1, PROOF_AT, PROOF_AT + 1, ROWS - 1)
SAME = "must be the same in every row of a group, but changed from "


class LargeGroupCase(OptdpTestCase):
    WATCHDOG_SECONDS = 60

    def setUp(self):
        super().setUp()
        self.db.execute("CREATE TABLE t(i INTEGER PRIMARY KEY, x)")
        self.db.execute("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
                        "INSERT INTO t SELECT i, i FROM c" % ROWS)


class ChangesAfterManyRows(LargeGroupCase):
    """A parameter that changes late in a large group is an error."""

    def check(self, template, first, later, message):
        for n in CHANGE_AFTER:
            value = "(CASE WHEN i > %d THEN %s ELSE %s END)" % (n, later, first)
            self.assertError(template.format(value), message, ())

    def test_private_count(self):
        self.check("SELECT private_count({}) FROM t", "0.5", "0.25", "private_count: alpha " + SAME + "0.5 to 0.25")
        self.check("SELECT private_count(x, {}) FROM t", "0.5", "0.25",
                   "private_count: alpha " + SAME + "0.5 to 0.25")

    def test_staircase_sum(self):
        fn = "staircase_sum"
        self.check("SELECT staircase_sum(x, {}, 10) FROM t", "1", "2", fn + ": eps " + SAME + "1 to 2")
        self.check("SELECT staircase_sum(x, 1, {}) FROM t", "10", "20", fn + ": delta " + SAME + "10 to 20")
        self.check("SELECT staircase_sum(x, 1, {}, 10) FROM t", "0", "1", fn + ": lower " + SAME + "0 to 1")
        self.check("SELECT staircase_sum(x, 1, 0, {}) FROM t", "10", "11", fn + ": upper " + SAME + "10 to 11")
        self.check("SELECT staircase_sum(x, 1, 0, 10, {}) FROM t", "'l1'", "'l2'",
                   fn + ": cost " + SAME + "'l1' to text 'l2'")

    def test_laplace_sum(self):
        self.check("SELECT laplace_sum(x, {}, 0, 10) FROM t", "1", "2", "laplace_sum: eps " + SAME + "1 to 2")
        self.check("SELECT laplace_sum(x, 1, {}) FROM t", "10", "20", "laplace_sum: delta " + SAME + "10 to 20")

    def test_private_count_levels(self):
        self.check("SELECT private_count_levels(0.1, {}) FROM t", "0.5", "0.25",
                   "private_count_levels: alpha_2 " + SAME + "0.5 to 0.25")
        self.check("SELECT private_count_levels_of(x, {}, 0.5) FROM t", "0.1", "0.2",
                   "private_count_levels_of: alpha_1 " + SAME + "0.1 to 0.2")

    def test_a_literal_call_beside_a_changing_one(self):
        # The proof covers every call in the statement: one literal call does
        # not excuse another whose parameter changes.
        self.check("SELECT private_count(0.5), private_count({}) FROM t", "0.5", "0.25",
                   "private_count: alpha " + SAME + "0.5 to 0.25")
        self.check('SELECT private_count(0.5), "PRIVATE_COUNT"({}) FROM t', "0.5", "0.25",
                   "private_count: alpha " + SAME + "0.5 to 0.25")

    def test_call_in_a_view(self):
        self.db.execute("CREATE VIEW v AS SELECT private_count(CASE WHEN i > %d THEN 0.25 ELSE 0.5 END) AS n "
                        "FROM t" % (PROOF_AT + 1000))
        msg = "private_count: alpha " + SAME + "0.5 to 0.25"
        self.assertError("SELECT n FROM v", msg)
        self.assertError("SELECT private_count(0.5) FROM t UNION ALL SELECT n FROM v", msg)

    def test_call_in_a_trigger(self):
        self.db.execute("CREATE TABLE s(a)")
        self.db.execute("CREATE TABLE out(n)")
        self.db.execute("CREATE TRIGGER tr AFTER INSERT ON s BEGIN INSERT INTO out SELECT "
                        "private_count(CASE WHEN i > %d THEN 0.25 ELSE 0.5 END) FROM t; END" % (PROOF_AT + 1000))
        self.assertError("INSERT INTO s VALUES (1)", "private_count: alpha " + SAME + "0.5 to 0.25")
        self.assertEqual(self.one("SELECT count(*) FROM out"), 0)

    def test_group_by(self):
        # Two groups of 50,000 rows and one of 100,000 (i and i + ROWS):
        # each group is checked on its own.
        self.db.execute("INSERT INTO t SELECT i + %d, i FROM t" % ROWS)
        self.assertError("SELECT x % 2, private_count(CASE WHEN i > 170000 THEN 0.25 ELSE 0.5 END) FROM t "
                         "GROUP BY x % 2", "private_count: alpha " + SAME + "0.5 to 0.25")


class LiteralParametersAfterManyRows(LargeGroupCase):
    """After the checks stop, every row still counts, is clamped and summed."""

    def test_private_count(self):
        self.assertEqual(self.one("SELECT private_count(1e-12) FROM t"), ROWS)
        self.assertEqual(self.one("SELECT private_count(?) FROM t", (1e-12,)), ROWS)
        self.assertEqual(self.one("SELECT private_count(CASE WHEN i % 3 THEN x END, 1e-12) FROM t"),
                         ROWS - ROWS // 3)
        rows = self.all("SELECT i % 2, private_count(1e-12) FROM t GROUP BY i % 2 ORDER BY 1")
        self.assertEqual(rows, [(0, ROWS // 2), (1, ROWS // 2)])

    def test_private_count_levels(self):
        self.assertEqual(self.one("SELECT private_count_levels(1e-12, 1e-11) FROM t"), "[%d,%d]" % (ROWS, ROWS))
        self.assertEqual(self.one("SELECT private_count_levels_of(CASE WHEN i > 10 THEN x END, 1e-12) FROM t"),
                         "[%d]" % (ROWS - 10))

    def test_staircase_sum(self):
        full = ROWS * (ROWS + 1) // 2
        self.assertEqual(self.one("SELECT staircase_sum(x, 60, 0, %d) FROM t" % ROWS), full)
        self.assertEqual(self.one("SELECT staircase_sum(x, ?, ?, ?, 'l1') FROM t", (60, 0, ROWS)), full)
        # Clamping into [0, 1000] and [90000, 95000] goes on after the proof.
        self.assertEqual(self.one("SELECT staircase_sum(x, 60, 1000) FROM t"), 1000 * 1000 // 2 + 1000 * (ROWS - 1000) + 500)
        clamped = sum(min(max(i, 90000), 95000) for i in range(1, ROWS + 1))
        self.assertEqual(self.one("SELECT staircase_sum(x, 60, 90000, 95000) FROM t"), clamped)
        # NULL and the rows after the proof point are skipped and summed.
        self.assertEqual(self.one("SELECT staircase_sum(CASE WHEN i %% 2 THEN x END, 60, 0, %d) FROM t" % ROWS),
                         (ROWS // 2) ** 2)

    def test_x_of_the_wrong_type_after_the_proof(self):
        self.assertError("SELECT staircase_sum(CASE WHEN i > 70000 THEN 'a' ELSE x END, 60, 0, 10) FROM t",
                         "staircase_sum: x must be a number, but is text 'a'")


if __name__ == "__main__":
    sys.exit(main(__name__, sys.argv))
