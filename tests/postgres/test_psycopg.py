"""psycopg 3 (Debian's python3-psycopg) against a throw-away server, with
server-side parameters and forced generic plans (issue 30 item 4).

Usage: test_psycopg.py MODULE_DIR

psycopg 3 sends %s as $n parameters of the extended protocol; prepare=True
makes the statement a server-side prepared one at once, and
plan_cache_mode = force_generic_plan keeps $n a Param in its plan (the form
where optdp reads the value through the executor). Checks: the plan was
generic (pg_prepared_statements.generic_plans), a release whose eps is a
bound parameter works and is charged to the ledger at that eps, a bound value
out of range is refused with its message, and a parameter that is not a
constant of the statement (it depends on a row) is refused.
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server  # noqa: E402

import psycopg  # noqa: E402

MODULE_DIR = None
SERVER = None
NOT_CONSTANT = ("must be a literal or a query parameter (optdp fixes the noise before it reads any row), but is an "
                "expression that can depend on a row")


def setUpModule():
    global SERVER
    SERVER = Server(MODULE_DIR)
    SERVER.__enter__()
    SERVER.psql("CREATE EXTENSION optdp; CREATE TABLE t AS SELECT g, (g % 5)::float8 AS x "
                "FROM generate_series(1, 30) g; SELECT dp_ledger_attach(100)")


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


class Psycopg(unittest.TestCase):
    def setUp(self):
        self.conn = psycopg.connect(SERVER.conninfo(), autocommit=True)
        self.conn.execute("SET plan_cache_mode = force_generic_plan")

    def tearDown(self):
        self.conn.close()

    def test_bound_eps_in_a_generic_plan(self):
        sql = "SELECT staircase_sum(x, %s, 0, 10) FROM t"
        before = self.conn.execute("SELECT coalesce(max(id), 0) FROM dp_ledger_entries()").fetchone()[0]
        for eps in (0.5, 1.0, 0.5):
            value = self.conn.execute(sql, (eps,), prepare=True).fetchone()[0]
            self.assertIsInstance(value, float)
        plans = self.conn.execute("SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                                  "WHERE statement LIKE '%staircase_sum(x, $1, 0, 10)%'").fetchall()
        self.assertEqual(len(plans), 1, plans)
        self.assertGreater(plans[0][0], 0)
        self.assertEqual(plans[0][1], 0)
        # each release charged at its own bound eps, in order
        charged = self.conn.execute("SELECT epsilon FROM dp_ledger_entries() WHERE id > %s ORDER BY id",
                                    (before,)).fetchall()
        self.assertEqual([float(e) for (e,) in charged], [0.5, 1.0, 0.5])

    def test_helpers_with_bound_parameters(self):
        self.assertEqual(self.conn.execute("SELECT count_interval(%s, %s)", (0.5, 0.95), prepare=True).fetchone()[0], 4)

    def test_a_bound_value_out_of_range_is_refused(self):
        with self.assertRaises(psycopg.Error) as cm:
            self.conn.execute("SELECT staircase_sum(x, %s, 0, 10) FROM t", (0.0,), prepare=True)
        self.assertEqual(cm.exception.diag.message_primary, "staircase_sum: eps must be a finite number > 0, but is 0")

    def test_a_parameter_that_is_not_a_constant_is_refused(self):
        with self.assertRaises(psycopg.Error) as cm:
            self.conn.execute("SELECT staircase_sum(x, %s * g, 0, 10) FROM t", (0.5,), prepare=True)
        self.assertEqual(cm.exception.diag.message_primary, "staircase_sum: eps " + NOT_CONSTANT)


if __name__ == "__main__":
    MODULE_DIR = sys.argv.pop(1)
    unittest.main()
