"""optdp on PostgreSQL 15: gaussian_count, gaussian_sum and their partial
states, and the ledger's zCDP accounting and planning (dp_ledger_accounts,
dp_further_releases, dp_gaussian_sigma).

Usage: test_gaussian.py <build>/postgres <pg_audit_tool> <build>/optdp.so [unittest args]

The server (pgserver.py) runs as an unprivileged user on a Unix socket in a
temporary directory and is always stopped. Randomised outputs are checked by
chi-square against the exact discrete Gaussian (pg_audit_tool dgauss), with
fixed seeds (dp_seed), never against golden values; each law test also checks
that the same samples are rejected against a sigma 20% larger (the test can
fail). The ledger's decisions are compared with SQLite's ledger (Debian's
/usr/bin/python3 sqlite3 module with build/optdp.so loaded) on the same
sequences of releases. The audit is the SQLite suite's paired-neighbour audit
with delta (tests/sqlite/gaussian_sql_test.cpp), through pg_audit_tool.
"""
import math
import os
import random
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server, SqlError  # noqa: E402
from test_postgres import PARALLEL, SERIAL, P_MIN, chi_square_p, keyed  # noqa: E402
from test_functions import pg_not_literal  # noqa: E402

MODULE_DIR = TOOL = SQLITE_MODULE = None
SERVER = None

GROUPS = 3000  # releases per query (one per group)
# t: GROUPS groups k of 12 rows, x = 2 in 8 of them and NULL in 4 (as in test_postgres.py)
TABLE = ("SELECT g, g %% %d AS k, CASE WHEN (g / %d) %% 3 = 0 THEN NULL ELSE 2.0 END::float8 AS x "
         "FROM generate_series(0, %d) g" % (GROUPS, GROUPS, GROUPS * 12 - 1))
RHO = 0.02  # counts: sigma^2 = 1 / (2 rho) = 25
FORMS = ["gaussian_count(0.02)", "gaussian_count(x, 0.02)", "gaussian_sum(x, 0.125, 0, 10)"]
NOT_LITERAL = ("must be a literal or a query parameter (optdp fixes the noise before it reads any row), but is an "
               "expression that can depend on a row")
PG_ATTACH = "dp_ledger_attach(total_epsilon, total_delta)"
LITE_ATTACH = "dp_ledger_attach(path, total_epsilon, total_delta)"


def psql(sql, db="postgres"):
    return SERVER.psql(sql, db)


def tool(*args, stdin=None):
    r = subprocess.run([TOOL] + [str(a) for a in args], input=stdin, capture_output=True, text=True, check=True)
    return r.stdout


def dgauss_law(sigma2, width):
    """The discrete Gaussian's probabilities of z in [-width, width] (pg_audit_tool)."""
    law = {}
    for line in tool("dgauss", repr(sigma2), -width, width).splitlines():
        z, p = line.split()
        law[int(z)] = float(p)
    return law


def plan_of(sql):
    return "\n".join(r[0] for r in psql(PARALLEL + "EXPLAIN (COSTS OFF) " + sql))


def histogram(values):
    obs = {}
    for v in values:
        obs[v] = obs.get(v, 0) + 1
    return obs


def setUpModule():
    global SERVER
    SERVER = Server(MODULE_DIR, **keyed())  # optdp preloaded with a state key file: shipped states are sealed
    SERVER.__enter__()
    psql("CREATE EXTENSION optdp; CREATE TABLE t AS %s; ANALYZE t" % TABLE)


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


def lite_connect(path=":memory:"):
    db = sqlite3.connect(path, isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(SQLITE_MODULE)
    return db


def lite_error(db, sql):
    """SQLite's message for sql, or None if it runs."""
    try:
        db.execute(sql).fetchall()
    except sqlite3.Error as e:
        return str(e)
    return None


class Plans(unittest.TestCase):
    def test_partial_aggregate_gather_finalize(self):
        for form in FORMS:
            plan = plan_of("SELECT %s FROM t" % form)
            i, j, k = plan.find("Finalize Aggregate"), plan.find("Gather"), plan.find("Partial Aggregate")
            self.assertTrue(0 <= i < j < k, form + ":\n" + plan)
            plan = plan_of("SELECT k, %s FROM t GROUP BY k" % form)
            self.assertIn("Finalize HashAggregate", plan, form + ":\n" + plan)
            self.assertIn("Partial HashAggregate", plan, form + ":\n" + plan)

    def test_empty_input_releases_in_both_plans(self):
        # no row: 0 + noise, never NULL, never an error
        for mode in (SERIAL, PARALLEL):
            for form in FORMS:
                self.assertEqual(psql(mode + "SELECT %s IS NOT NULL FROM t WHERE g < 0" % form), [["t"]], form)


class Laws(unittest.TestCase):
    def check_law(self, noise, sigma2, label):
        obs = histogram(noise)
        width = int(12 * math.sqrt(sigma2)) + 10
        self.assertGreater(chi_square_p(obs, dgauss_law(sigma2, width)), P_MIN, label)
        # the test can fail: the same samples against a sigma 20% larger
        self.assertLess(chi_square_p(obs, dgauss_law(1.44 * sigma2, width)), P_MIN, label + " (self-check)")

    def test_count_law_serial_and_parallel(self):
        for mode, seed in ((SERIAL, 41), (PARALLEL, 42)):
            for form, n in (("gaussian_count(0.02)", 12), ("gaussian_count(x, 0.02)", 8)):
                sql = "SELECT k, %s FROM t GROUP BY k" % form
                if mode is PARALLEL:
                    self.assertIn("Partial HashAggregate", plan_of(sql))
                rows = psql(mode + "SELECT dp_seed(%d); %s" % (seed, sql))[1:]
                self.assertEqual(len(rows), GROUPS)
                self.check_law([int(r[1]) - n for r in rows], 1 / (2 * RHO),
                               "%s %s" % (form, "parallel" if mode is PARALLEL else "serial"))

    def test_empty_input_law(self):
        # one release per statement over no row (serially: it is the same final function)
        rows = psql("SELECT dp_seed(43);" + "SELECT gaussian_count(0.02) FROM t WHERE g < 0;" * 2000)[1:]
        self.check_law([int(r[0]) for r in rows], 1 / (2 * RHO), "empty input")

    def test_sum_law_serial_and_parallel(self):
        # gaussian_sum(x, 0.125, 0, 10): on the grid of a pure sum at eps = sqrt(2 rho) = 0.5, the
        # discrete Gaussian of sigma^2 = D^2 / (2 rho) grid steps. Here sigma > 2^20 steps, where
        # the discrete Gaussian's mass on an interval is the normal's to within 1e-6 (its terms
        # are below 1 / (sigma sqrt(2 pi)) each: Euler-Maclaurin), so the noise / sigma is binned
        # against the normal's probabilities.
        rho = 0.125
        g = float(psql("SELECT dp_sum_grid(0.5, 0, 10)")[0][0])
        D = round(10 / g)
        sigma = D / math.sqrt(2 * rho)
        self.assertGreater(sigma, 2 ** 20)
        edges = [-2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5]
        cdf = [0.0] + [0.5 * (1 + math.erf(e / math.sqrt(2))) for e in edges] + [1.0]
        law = {i: cdf[i + 1] - cdf[i] for i in range(len(edges) + 1)}
        wrong = {}
        cdf_w = [0.0] + [0.5 * (1 + math.erf(e / 1.2 / math.sqrt(2))) for e in edges] + [1.0]
        wrong = {i: cdf_w[i + 1] - cdf_w[i] for i in range(len(edges) + 1)}
        for mode, seed in ((SERIAL, 44), (PARALLEL, 45)):
            rows = psql(mode + "SELECT dp_seed(%d); SELECT k, gaussian_sum(x, 0.125, 0, 10) FROM t GROUP BY k"
                        % seed)[1:]
            self.assertEqual(len(rows), GROUPS)
            obs = {}
            for r in rows:
                steps = float(r[1]) / g - 16 / g  # eight rows of x = 2
                self.assertEqual(steps, round(steps), "%s is not on the grid %r" % (r[1], g))
                b = sum(1 for e in edges if steps / sigma >= e)
                obs[b] = obs.get(b, 0) + 1
            label = "parallel" if mode is PARALLEL else "serial"
            self.assertGreater(chi_square_p(obs, law), P_MIN, label)
            self.assertLess(chi_square_p(obs, wrong), P_MIN, label + " (self-check)")


class Messages(unittest.TestCase):
    CASES = [
        ("gaussian_count(0)", "gaussian_count: rho must be a number in [2^-30, 2^20] (9.3e-10 to 1048576), but is 0"),
        ("gaussian_count(x, 2e6)",
         "gaussian_count: rho must be a number in [2^-30, 2^20] (9.3e-10 to 1048576), but is 2e+06"),
        ("gaussian_count(NULL)", "gaussian_count: rho must be a number, but is NULL"),
        ("gaussian_count(x)", "gaussian_count: rho " + NOT_LITERAL),
        ("gaussian_sum(x, 0.5, 10, 0)", "gaussian_sum: lower must be less than upper, but lower is 10 and upper is 0"),
        ("gaussian_sum(x, 1e-10, 0, 10)",
         "gaussian_sum: rho must be a number in [2^-30, 2^20] (9.3e-10 to 1048576), but is 1e-10"),
        ("gaussian_sum(x, 0.5, NULL, 10)", "gaussian_sum: lower must be a number, but is NULL"),
        ("gaussian_sum(x, 0, 0, x)", "gaussian_sum: upper " + NOT_LITERAL),
        ("gaussian_sum(x, x, 0, 10)", "gaussian_sum: rho " + NOT_LITERAL),
        ("gaussian_sum(x, 0.5, 0, 'infinity')", "gaussian_sum: upper must be finite, but is inf"),
    ]

    def test_same_message_in_both_plans_with_rows_and_without(self):
        for form, message in self.CASES:
            for mode in (SERIAL, PARALLEL):
                for where in ("", " WHERE g < 0"):
                    self.assertEqual(SERVER.error_of(mode + "SELECT %s FROM t%s" % (form, where)), message,
                                     form + where)

    def test_sqlites_messages(self):
        # the same calls in SQLite (its 'bound parameter' is a query parameter here;
        # 'infinity' is text there; an expression of the row is named in PostgreSQL's words)
        lite = lite_connect()
        lite.execute("CREATE TABLE t(g, k, x)")
        lite.execute("INSERT INTO t VALUES (1, 1, 2.0)")
        for form, message in self.CASES:
            if "infinity" in form:
                continue
            self.assertEqual(pg_not_literal(lite_error(lite, "SELECT %s FROM t" % form)), message, form)

    def test_no_window_use(self):
        for form in FORMS:
            self.assertEqual(SERVER.error_of("SELECT %s OVER (ORDER BY g) FROM t" % form),
                             "optdp: its aggregates cannot be used as window functions (every row would be a release)")

    def test_query_parameters(self):
        rows = psql("SET plan_cache_mode = force_generic_plan; PREPARE q(float8, float8) AS "
                    "SELECT gaussian_count($1), gaussian_sum(x, $1, 0, $2) FROM t WHERE g < 0; EXECUTE q(0.5, 10)")
        self.assertEqual(len(rows), 1)
        self.assertEqual(SERVER.error_of("SET plan_cache_mode = force_generic_plan; PREPARE q(float8) AS "
                                         "SELECT gaussian_count($1) FROM t; EXECUTE q(0)"),
                         "gaussian_count: rho must be a number in [2^-30, 2^20] (9.3e-10 to 1048576), but is 0")

    def test_support_functions_only_through_optdp_aggregates(self):
        psql("DROP AGGREGATE IF EXISTS my_gauss(float8); CREATE AGGREGATE my_gauss(float8) "
             "(SFUNC = optdp_gaussian_count_trans, STYPE = bytea, INITCOND = '\\x%s', "
             "FINALFUNC = optdp_gaussian_count_final)" % ("0" * 16))
        self.assertEqual(SERVER.error_of("SELECT my_gauss(0.5) FROM t"),
                         "optdp: its support functions work only in its own aggregates, whose calls hold the "
                         "parameters, not in my_gauss")


FORGED = ("state is not a state this cluster shipped (its authentication tag does not verify; shards and "
          "coordinator must share the key of optdp.state_key_file)")


class States(unittest.TestCase):
    """Partial states for shards: the halves of t (g even, g odd) stand for two
    servers' states (test_postgres.py's Shards ships them through dblink)."""

    def merged(self, state, merge, seed):
        parts = " UNION ALL ".join("SELECT k, %s AS s FROM t WHERE g %% 2 = %d GROUP BY k" % (state, half)
                                   for half in (0, 1))
        return psql("SELECT dp_seed(%d); SELECT k, %s FROM (%s) p GROUP BY k" % (seed, merge, parts))[1:]

    def test_merged_count_has_the_law_of_one_release(self):
        rows = self.merged("gaussian_count_state(x, 0.02)", "gaussian_count_merge(s, 0.02)", 46)
        self.assertEqual(len(rows), GROUPS)
        obs = histogram(int(r[1]) - 8 for r in rows)
        self.assertGreater(chi_square_p(obs, dgauss_law(1 / (2 * RHO), 80)), P_MIN)
        self.assertLess(chi_square_p(obs, dgauss_law(1.44 / (2 * RHO), 80)), P_MIN)

    def test_merged_sum_is_on_the_grid_around_the_sum(self):
        g = float(psql("SELECT dp_sum_grid(0.5, 0, 10)")[0][0])
        rows = self.merged("gaussian_sum_state(x, 0.125, 0, 10)", "gaussian_sum_merge(s, 0.125, 0, 10)", 47)
        self.assertEqual(len(rows), GROUPS)
        sigma = round(10 / g) / 0.5
        z = [(float(r[1]) / g - 16 / g) / sigma for r in rows]
        self.assertTrue(all(float(r[1]) / g == round(float(r[1]) / g) for r in rows))
        mean, var = sum(z) / len(z), sum(v * v for v in z) / len(z)
        self.assertLess(abs(mean) * math.sqrt(len(z)), 4.5)
        self.assertLess(abs(var - 1) / math.sqrt(2 / len(z)), 4.5)

    def test_a_state_of_other_parameters_is_refused(self):
        cases = [
            ("SELECT gaussian_count_merge(s, 0.5) FROM (SELECT gaussian_count_state(0.25) s FROM t) a",
             "gaussian_count_merge: state was computed with rho 0.25, but rho is 0.5"),
            # an empty shard's state carries its parameters too
            ("SELECT gaussian_sum_merge(s, 0.5, 0, 10) FROM (SELECT gaussian_sum_state(x, 0.5, 0, 20) s FROM t "
             "WHERE g < 0) a",
             "gaussian_sum_merge: state was computed with (rho, lower, upper) = (0.5, 0, 20), but they are "
             "(0.5, 0, 10)"),
            # another aggregate's state, or one made by hand: its authentication tag does not verify
            ("SELECT gaussian_sum_merge(s, 0.5, 0, 10) FROM (SELECT staircase_sum_state(x, 0.5, 0, 10) s FROM t) a",
             "gaussian_sum_merge: " + FORGED),
            ("SELECT gaussian_count_merge(s, 0.5) FROM (SELECT private_count_state(0.5) s FROM t) a",
             "gaussian_count_merge: " + FORGED),
            ("SELECT gaussian_count_merge(s, 0.5) FROM (SELECT private_avg_state(x, 0.5, 0, 10) s FROM t) a",
             "gaussian_count_merge: " + FORGED),
            ("SELECT gaussian_sum_merge(s, 0.5, 0, 10) FROM (SELECT gaussian_count_state(0.5) s FROM t) a",
             "gaussian_sum_merge: " + FORGED),
            # the kind, rho 0.5 and a count of 10^6, and a tag of zeros
            ("SELECT gaussian_count_merge(s, 0.5) FROM (SELECT '\\x0a00646f00000000000000000000e03f40420f0000000000'"
             "::bytea || '\\x%s'::bytea AS s) a" % ("00" * 32), "gaussian_count_merge: " + FORGED),
            ("SELECT gaussian_count_merge(NULL::bytea, 0.5) FROM t",
             "gaussian_count_merge: state must be a gaussian_count_state state, but is NULL"),
            ("SELECT gaussian_count_merge(s, x) FROM (SELECT gaussian_count_state(0.5) s, 0.5::float8 x FROM t) a",
             "gaussian_count_merge: rho " + NOT_LITERAL),
        ]
        for sql, message in cases:
            self.assertEqual(SERVER.error_of(sql), message, sql)


class Privileges(unittest.TestCase):
    def test_states_support_and_planning_functions_are_not_public(self):
        psql("DROP ROLE IF EXISTS gauss_analyst; CREATE ROLE gauss_analyst; GRANT SELECT ON t TO gauss_analyst")
        self.assertEqual(len(psql("SET ROLE gauss_analyst; SELECT gaussian_count(0.5), gaussian_count(x, 0.5), "
                                  "gaussian_sum(x, 0.5, 0, 10) FROM t")), 1)
        for sql, what in [("SELECT gaussian_count_state(0.5) FROM t", "aggregate gaussian_count_state"),
                          ("SELECT gaussian_sum_state(x, 0.5, 0, 10) FROM t", "aggregate gaussian_sum_state"),
                          ("SELECT dp_further_releases('gaussian', 200)", "function dp_further_releases"),
                          ("SELECT dp_gaussian_sigma(10)", "function dp_gaussian_sigma"),
                          ("SELECT * FROM dp_ledger_accounts()", "function dp_ledger_accounts"),
                          ("SELECT optdp_ledger_accounts()", "function optdp_ledger_accounts")]:
            self.assertEqual(SERVER.error_of("SET ROLE gauss_analyst; " + sql), "permission denied for " + what)


# ---- the ledger ---------------------------------------------------------------------
class Ledger(unittest.TestCase):
    """The ledger of database `gledger`."""

    @classmethod
    def setUpClass(cls):
        psql("DROP DATABASE IF EXISTS gledger; CREATE DATABASE gledger")
        psql("CREATE EXTENSION optdp; CREATE TABLE t AS %s; ANALYZE t" % TABLE, db="gledger")

    def setUp(self):
        psql("TRUNCATE optdp_budget, optdp_charges", db="gledger")

    def entries(self):
        return int(psql("SELECT count(*) FROM dp_ledger_entries", db="gledger")[0][0])

    def test_one_charge_per_release_recorded_as_rho(self):
        psql("SELECT dp_ledger_attach(1000, 0.5)", db="gledger")
        for mode in (SERIAL, PARALLEL):
            psql("TRUNCATE optdp_charges", db="gledger")
            psql(mode + "SELECT gaussian_count(0.01) FROM t; SELECT gaussian_sum(x, 0.02, 0, 10) FROM t WHERE g < 0; "
                        "SELECT k % 20, gaussian_count(x, 0.03) FROM t GROUP BY k % 20", db="gledger")
            rows = psql("SELECT function, epsilon, delta, rho, count(*) FROM dp_ledger_entries GROUP BY 1, 2, 3, 4 "
                        "ORDER BY 1, 4", db="gledger")
            self.assertEqual(rows, [["gaussian_count", "0", "0", "0.01", "1"],
                                    ["gaussian_count", "0", "0", "0.03", "20"],
                                    ["gaussian_sum", "0", "0", "0.02", "1"]],
                             "parallel" if mode is PARALLEL else "serial")
        # a Gaussian release spends no epsilon by basic composition (as in SQLite)
        self.assertEqual(psql("SELECT dp_budget_spent(), dp_delta_spent()", db="gledger"), [["0", "0"]])

    def test_a_rolled_back_release_stays_charged(self):
        psql("SELECT dp_ledger_attach(1, 1e-6); BEGIN; SELECT gaussian_count(0.001) FROM t; ROLLBACK", db="gledger")
        self.assertEqual(psql("SELECT function, rho FROM dp_ledger_entries", db="gledger"),
                         [["gaussian_count", "0.001"]])

    def test_pure_ledger_refuses_gaussian_releases(self):
        psql("SELECT dp_ledger_attach(10)", db="gledger")
        lite = lite_connect()
        with tempfile.TemporaryDirectory() as d:
            lite.execute("SELECT dp_ledger_attach(?, 10.0)", (os.path.join(d, "l"),))
            lite.execute("CREATE TABLE t(x)")
            for form in ("gaussian_count(0.01)", "gaussian_sum(x, 0.01, 0, 10)"):
                want = lite_error(lite, "SELECT %s FROM t" % form).replace(LITE_ATTACH, PG_ATTACH)
                self.assertTrue(want.endswith("and a Gaussian release needs one (this one costs rho 0.01)"), want)
                for where in ("", " WHERE g < 0"):
                    self.assertEqual(SERVER.error_of("SELECT %s FROM t%s" % (form, where), db="gledger"), want)
        self.assertEqual(self.entries(), 0)

    def test_states_are_not_charged_the_merge_is_once(self):
        psql("SELECT dp_ledger_attach(1000, 0.5)", db="gledger")
        psql("SELECT gaussian_count_state(0.5) FROM t; SELECT gaussian_sum_state(x, 0.5, 0, 10) FROM t", db="gledger")
        self.assertEqual(self.entries(), 0)
        psql("SELECT gaussian_count_merge(s, 0.5) FROM (SELECT gaussian_count_state(0.5) s FROM t "
             "UNION ALL SELECT gaussian_count_state(0.5) FROM t) a; "
             "SELECT gaussian_sum_merge(s, 0.5, 0, 10) FROM (SELECT gaussian_sum_state(x, 0.5, 0, 10) s FROM t) a",
             db="gledger")
        self.assertEqual(self.entries(), 2)

    def test_no_seed_with_a_ledger(self):
        # seeded before the ledger was attached (in another session): refused, not charged
        psql("CREATE EXTENSION IF NOT EXISTS dblink", db="gledger")
        self.assertEqual(SERVER.error_of("SELECT dp_seed(1); SELECT * FROM dblink('%s', 'SELECT dp_ledger_attach(1, "
                                         "1e-6)') AS a(x float8); SELECT gaussian_count(0.01) FROM t"
                                         % SERVER.conninfo("gledger"), db="gledger"),
                         "gaussian_count: refused: a privacy ledger is attached, and a known seed makes the noise "
                         "predictable")
        self.assertEqual(self.entries(), 0)

    def test_the_charge_is_checked_only_with_a_ledger(self):
        # as in SQLite: an epsilon beyond any budget (1e308) is released without a ledger,
        # first in its statement or not, and refused with SQLite's message with one
        sql = "SELECT staircase_sum(x, 1e308, 0, 10) FROM t"
        self.assertEqual(len(psql(sql + "; SELECT gaussian_count(0.5), staircase_sum(x, 1e308, 0, 10) FROM t",
                                  db="gledger")), 2)
        psql("SELECT dp_ledger_attach(1, 1e-6)", db="gledger")
        lite = lite_connect()
        with tempfile.TemporaryDirectory() as d:
            lite.execute("SELECT dp_ledger_attach(?, 1.0, 1e-6)", (os.path.join(d, "l"),))
            lite.execute("CREATE TABLE t(x)")
            want = lite_error(lite, sql)
        self.assertIn("epsilon must be a number in (0, 1e6]", want)
        self.assertEqual(SERVER.error_of(sql, db="gledger"), want)

    def test_planning_without_a_ledger(self):
        for sql, fn in [("SELECT * FROM dp_ledger_accounts()", "dp_ledger_accounts"),
                        ("SELECT dp_further_releases('gaussian', 200)", "dp_further_releases"),
                        ("SELECT dp_further_releases('uniform', -1, 0)", "dp_further_releases"),
                        ("SELECT dp_gaussian_sigma(0)", "dp_gaussian_sigma")]:
            self.assertEqual(SERVER.error_of(sql, db="gledger"),
                             "%s: no privacy ledger is attached to this database (see dp_ledger_attach)" % fn)

    def test_planning_messages_are_sqlites(self):
        psql("SELECT dp_ledger_attach(1, 1e-6)", db="gledger")
        lite = lite_connect()
        with tempfile.TemporaryDirectory() as d:
            lite.execute("SELECT dp_ledger_attach(?, 1.0, 1e-6)", (os.path.join(d, "l"),))
            # SQLite shows the values of bound parameters (PostgreSQL those of constants too)
            for fn, args in [("dp_further_releases", ("uniform", 1)), ("dp_further_releases", ("geometric", 1.5)),
                             ("dp_further_releases", ("gaussian", 0)), ("dp_further_releases", ("gaussian", 1, -1)),
                             ("dp_further_releases", ("laplace", -2)), ("dp_further_releases", (None, 1)),
                             ("dp_further_releases", ("gaussian", None)),
                             ("dp_further_releases", ("gaussian", 1, None)), ("dp_gaussian_sigma", (0,)),
                             ("dp_gaussian_sigma", (5, 0)), ("dp_gaussian_sigma", (None,)),
                             ("dp_gaussian_sigma", (2000000000,)), ("dp_gaussian_sigma", (5, None))]:
                try:
                    lite.execute("SELECT %s(%s)" % (fn, ", ".join("?" * len(args))), args).fetchall()
                    want = None
                except sqlite3.Error as e:
                    want = str(e)
                self.assertIsNotNone(want, (fn, args))
                sql = "SELECT %s(%s)" % (fn, ", ".join("NULL" if a is None else "'%s'" % a if isinstance(a, str)
                                                       else repr(a) for a in args))
                self.assertEqual(SERVER.error_of(sql, db="gledger"), want, sql)
        # a value that could be a row's is not shown
        self.assertEqual(SERVER.error_of("SELECT dp_further_releases('geometric', x) FROM t WHERE x IS NOT NULL "
                                         "LIMIT 1", db="gledger"),
                         "dp_further_releases: noise (alpha) must be in (0, 1), but is a value not shown (it may be "
                         "a row's)")


def lite_ledger(directory, total, total_delta):
    """A SQLite connection with the module, a table t(g, k, x) like PostgreSQL's (one row per
    group k < 3000, x = 2) and a ledger file in directory."""
    db = lite_connect(os.path.join(directory, "main.db"))  # private_groups reads a database file
    db.execute("CREATE TABLE t(g, k, x)")
    db.execute("WITH RECURSIVE n(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM n WHERE v < %d) "
               "INSERT INTO t SELECT v, v, 2.0 FROM n" % (GROUPS - 1))
    db.execute("SELECT dp_ledger_attach(?, ?, ?)", (os.path.join(directory, "ledger"), total, total_delta))
    return db


PLANS = ["SELECT dp_further_releases('gaussian', 200)", "SELECT dp_further_releases('gaussian', 50, 2)",
         "SELECT dp_further_releases('geometric', 0.99)", "SELECT dp_further_releases('geometric', 0.99, 2)",
         "SELECT dp_further_releases('laplace', 0.1)", "SELECT dp_further_releases('staircase', 0.01)",
         "SELECT dp_gaussian_sigma(10)", "SELECT dp_gaussian_sigma(5, 2)", "SELECT dp_gaussian_sigma(1000)",
         "SELECT dp_budget_spent()", "SELECT dp_budget_remaining()", "SELECT dp_delta_spent()",
         "SELECT dp_delta_remaining()"]


class SameDecisionsAsSQLite(unittest.TestCase):
    """The same sequence of releases against a SQLite ledger and the
    PostgreSQL ledger: the same releases accepted, the same refusals, and the
    planning functions return the same values along the way."""

    @classmethod
    def setUpClass(cls):
        psql("DROP DATABASE IF EXISTS gsame; CREATE DATABASE gsame")
        psql("CREATE EXTENSION optdp; CREATE TABLE t AS %s; ANALYZE t" % TABLE, db="gsame")
        # the releases and plans of a history run on one kept connection (pgserver.Session),
        # whose backend keeps its ledger connection across attaches, as an application's
        # would; test_exact_values_whatever_extra_float_digits needs new backends
        cls.S = SERVER.session("gsame")

    @classmethod
    def tearDownClass(cls):
        cls.S.close()

    def setUp(self):
        psql("TRUNCATE optdp_budget, optdp_charges", db="gsame")

    def compare_plans(self, lite, label, run=None):
        # this session's floats in their shortest exact form, whatever the database's default;
        # NULL printed as a word: psql prints a one-column NULL as an empty line, which
        # Server.psql drops, and the later plans' values would move up one place each
        run = run or self.S.psql
        got = [r[0] for r in run("\\pset null NULL\nSET extra_float_digits = 1;" + ";".join(PLANS))]
        self.assertEqual(len(got), len(PLANS), "%s: %r" % (label, got))
        for sql, g in zip(PLANS, got):
            w = lite.execute(sql).fetchone()[0]
            self.assertTrue(g == "NULL" if w is None else float(g) == float(w),
                            "%s %s: %r on PostgreSQL, %r in SQLite" % (label, sql, g, w))
        got = run("SET extra_float_digits = 1; SELECT * FROM dp_ledger_accounts()")
        want = lite.execute("SELECT * FROM dp_ledger_accounts").fetchall()
        self.assertEqual(len(got), 3)
        for g, w in zip(got, want):
            self.assertEqual(g[0], w[0])
            self.assertEqual({"t": 1, "f": 0}[g[4]], w[4], "%s %s" % (label, g))
            for a, b in zip(g[1:4], w[1:4]):
                self.assertTrue(a == "" if b is None else float(a) == float(b), "%s %s vs %s" % (label, g, w))

    def test_a_mixed_history(self):
        # pure counts and sums, partition selections (approximate) and Gaussian releases, drawn
        # at random (a fixed seed) until well past the budget; a refused release may be followed
        # by an accepted smaller one
        forms = ["SELECT gaussian_count(0.0005) FROM t", "SELECT gaussian_count(0.002) FROM t",
                 "SELECT gaussian_sum(x, 0.001, 0, 10) FROM t", "SELECT gaussian_count(x, 0.01) FROM t",
                 "SELECT private_count(0.99) FROM t", "SELECT private_count(0.95) FROM t",
                 "SELECT laplace_sum(x, 0.02, 10) FROM t", "SELECT staircase_sum(x, 0.1, 0, 10) FROM t",
                 "SELECT count(*) FROM private_groups('SELECT 1, 1 ORDER BY 1', 0.05, 'delta=1e-8')",
                 "SELECT count(*) FROM private_groups('SELECT 1, 1 ORDER BY 1', 0.5, 'noise=gaussian, delta=1e-7', "
                 "'VALUES (1)')"]
        rnd = random.Random(20)
        sequence = [rnd.choice(forms) for _ in range(120)]
        self.S.psql("SELECT dp_ledger_attach(1, 1e-6)")
        outcomes = {"accepted": 0, "refused": 0}
        kinds = set()
        with tempfile.TemporaryDirectory() as d:
            lite = lite_ledger(d, 1.0, 1e-6)
            self.compare_plans(lite, "fresh")
            for i, sql in enumerate(sequence):
                want = lite_error(lite, sql)
                if want is not None:
                    want = want.replace(LITE_ATTACH, PG_ATTACH)
                got = self.S.error_of(sql)
                self.assertEqual(got, want, "step %d: %s" % (i, sql))
                outcomes["accepted" if got is None else "refused"] += 1
                if got is not None:
                    kinds.add(got.split("privacy budget exhausted: ")[1][:20])
                if i % 10 == 9:
                    self.compare_plans(lite, "after step %d" % i)
            self.assertEqual(int(self.S.psql("SELECT count(*) FROM dp_ledger_entries")[0][0]),
                             lite.execute("SELECT count(*) FROM dp_ledger_entries").fetchone()[0])
        # the sequence reaches both accountings' limits
        self.assertGreater(outcomes["accepted"], 20, outcomes)
        self.assertGreater(outcomes["refused"], 20, outcomes)

    def test_pure_releases_past_basic_composition(self):
        # with a delta budget, many small pure releases fit by zCDP past what basic
        # composition allows (eps 0.01 each: 100 by basic composition)
        self.S.psql("SELECT dp_ledger_attach(1, 1e-6)")
        with tempfile.TemporaryDirectory() as d:
            lite = lite_ledger(d, 1.0, 1e-6)
            n = lite.execute("SELECT dp_further_releases('laplace', 0.01)").fetchone()[0]
            self.assertGreater(n, 100)
            sql = "SELECT k, laplace_sum(x, 0.01, 10) FROM t WHERE k < %d GROUP BY k" % n
            self.assertIsNone(lite_error(lite, sql))
            self.S.psql(sql)
            self.compare_plans(lite, "after %d pure releases" % n)
            # the history fits only by its privacy curve, which a Gaussian entry without a
            # shift (a sensitivity that is not an integer) turns off: no sigma lets one more
            # such release fit, on either engine
            self.assertIsNone(lite.execute("SELECT dp_gaussian_sigma(1, 1.5)").fetchone()[0])
            self.assertEqual(self.S.psql("\\pset null NULL\nSELECT dp_gaussian_sigma(1, 1.5)"), [["NULL"]])
            one = "SELECT laplace_sum(x, 0.01, 10) FROM t"
            want = lite_error(lite, one)
            self.assertIsNotNone(want)
            self.assertEqual(self.S.error_of(one), want)
            self.assertEqual(self.S.psql("SELECT count(*) FROM dp_ledger_entries"), [[str(n)]])

    def test_a_mixed_history_decided_by_the_privacy_curve(self):
        # Gaussian counts (recorded with shift 1) and geometric counts until the budget's end:
        # past what zCDP allows, the privacy curve (PLD) decides, identically on both engines
        # (fails when either engine drops the shift: it then refuses where the other accepts)
        self.S.psql("SELECT dp_ledger_attach(1, 1e-6)")
        g, p = "SELECT gaussian_count(0.002) FROM t", "SELECT private_count(0.95) FROM t"
        accepted = 0
        with tempfile.TemporaryDirectory() as d:
            lite = lite_ledger(d, 1.0, 1e-6)
            for i, sql in enumerate([g, p] * 3 + [g] * 10):
                want = lite_error(lite, sql)
                if want is not None:
                    want = want.replace(LITE_ATTACH, PG_ATTACH)
                got = self.S.error_of(sql)
                self.assertEqual(got, want, "step %d: %s" % (i, sql))
                accepted += got is None
            # the sequence reached the budget's end, and what was accepted fits by neither
            # basic composition nor zCDP: the curve took it
            self.assertLess(accepted, 16)
            self.assertEqual(self.S.psql("SELECT accounting, fits FROM dp_ledger_accounts()"),
                             [["basic", "f"], ["zcdp", "f"], ["pld", "t"]])
            self.compare_plans(lite, "a mixed history by the curve")

    def test_exact_values_whatever_extra_float_digits(self):
        # the ledger's connection reads the history's doubles exactly, also where the
        # database's default prints floats to 15 digits (rho 1/3000 needs 16)
        psql("ALTER DATABASE gsame SET extra_float_digits = 0", db="gsame")
        try:
            psql("SELECT dp_ledger_attach(1, 1e-6)", db="gsame")
            with tempfile.TemporaryDirectory() as d:
                lite = lite_ledger(d, 1.0, 1e-6)
                for _ in range(7):
                    sql = "SELECT gaussian_count(%r) FROM t" % (0.001 / 3)
                    self.assertIsNone(lite_error(lite, sql))
                    psql(sql, db="gsame")
                self.compare_plans(lite, "after 7 releases of rho 1/3000", lambda sql: psql(sql, db="gsame"))
        finally:
            psql("ALTER DATABASE gsame RESET extra_float_digits", db="gsame")

    def test_planned_gaussian_releases_are_accepted_exactly(self):
        # SQLite's GaussianLedger.PlanningAgreesWithWhatTheLedgerThenAccepts: on a fresh
        # (1, 1e-6) ledger, k further counts of sigma 20 (19 by zCDP, more by the privacy
        # curve); spend k - 3, then exactly 3 fit
        self.S.psql("SELECT dp_ledger_attach(1, 1e-6)")
        rho = repr(1 / (2 * 20.0 * 20.0))
        with tempfile.TemporaryDirectory() as d:
            lite = lite_ledger(d, 1.0, 1e-6)
            k = lite.execute("SELECT dp_further_releases('gaussian', 20)").fetchone()[0]
            self.assertGreater(k, 19)
            self.assertEqual(self.S.psql("SELECT dp_further_releases('gaussian', 20)"), [[str(k)]])
            spend = "SELECT k, gaussian_count(%s) FROM t WHERE k < %d GROUP BY k" % (rho, k - 3)
            self.assertIsNone(lite_error(lite, spend))
            self.assertEqual(len(self.S.psql(spend)), k - 3)
            self.compare_plans(lite, "after k - 3")
            self.assertEqual(self.S.psql("SELECT dp_further_releases('gaussian', 20)"), [["3"]])
            one = "SELECT gaussian_count(%s) FROM t" % rho
            for _ in range(3):
                self.assertIsNone(lite_error(lite, one))
                self.S.psql(one)
            want = lite_error(lite, one)
            self.assertIsNotNone(want)
            self.assertEqual(self.S.error_of(one), want)
            self.assertEqual(self.S.psql("SELECT count(*) FROM dp_ledger_entries"), [[str(k)]])
            # one more fits with more noise than 20, and the ledger then accepts it
            sigma = float(self.S.psql("SELECT dp_gaussian_sigma(1)")[0][0])
            self.assertEqual(sigma, lite.execute("SELECT dp_gaussian_sigma(1)").fetchone()[0])
            self.assertGreater(sigma, 20)
            psql("SELECT gaussian_count(%r) FROM t" % (1 / (2 * sigma * sigma)), db="gsame")


def kept_groups(text):
    """The groups of a kept summary (core/ledger_rule.hpp, encode_history): {(kind, params): count},
    with its last id and entries."""
    lines = text.split("\n")
    assert lines[0] == "optdp history summary 1" and lines[-1] == "", text
    _, last, _, entries = lines[1].split()
    groups = {}
    f = lambda h: struct.unpack("<d", struct.pack("<Q", int(h, 16)))[0]
    for line in lines[2:-2]:
        w = line.split()
        if w[0] == "p":
            groups[("p", f(w[1]))] = int(w[2])
        elif w[0] == "a":
            groups[("a", f(w[1]), f(w[2]))] = int(w[3])
        else:
            groups[("g", f(w[1]), int(w[2]))] = int(w[3])
    assert lines[-2].startswith("digest "), text
    return groups, int(last), int(entries)


class KeptSummary(unittest.TestCase):
    """The summary of the history the ledger keeps (optdp_summary, docs/accounting.md "What a
    charge reads"): the entries' after every charge, and rebuilt from the entries, never
    trusted, when it is not the one written for them (SQLite's
    LedgerDelta.AStaleOrAlteredSummaryIsRebuiltNotTrusted)."""

    @classmethod
    def setUpClass(cls):
        psql("DROP DATABASE IF EXISTS gkept; CREATE DATABASE gkept")
        psql("CREATE EXTENSION optdp; CREATE TABLE t AS %s; ANALYZE t" % TABLE, db="gkept")
        cls.S = SERVER.session("gkept")  # its hundreds of statements on one kept connection

    @classmethod
    def tearDownClass(cls):
        cls.S.close()

    def setUp(self):
        self.S.psql("TRUNCATE optdp_budget, optdp_charges")

    def summary(self):
        # one line of psql's output: the summary's newlines as ';'
        rows = self.S.psql("SELECT replace(summary, E'\\n', ';') FROM optdp_summary")
        return rows[0][0].replace(";", "\n") if rows else None

    def kept_is_entries(self):
        text = self.summary()
        if text is None:
            return False
        groups, last, entries = kept_groups(text)
        want = {}
        for e, d, r, sh, n in self.S.psql("SELECT epsilon, delta, rho, shift, count(*) FROM optdp_charges "
                                   "GROUP BY 1, 2, 3, 4"):
            e, d, r, sh, n = float(e), float(d), float(r), int(sh), int(n)
            key = ("g", r, sh if 0 <= sh <= 1 << 20 else 0) if r > 0 else ("a", e, d) if d > 0 else ("p", e)
            want[key] = want.get(key, 0) + n
        last_id, count = self.S.psql("SELECT coalesce(max(id), 0), count(*) FROM optdp_charges")[0]
        return groups == want and last == int(last_id) and entries == int(count)

    def charge(self):
        return self.S.error_of("SELECT gaussian_count(0.0002) FROM t") is None

    def test_the_kept_summary_is_the_entries_after_every_charge(self):
        self.S.psql("SELECT dp_ledger_attach(1, 1e-6)")
        forms = ["SELECT gaussian_count(0.0002) FROM t", "SELECT gaussian_sum(x, 0.001, 0, 10) FROM t",
                 "SELECT private_count(0.95) FROM t", "SELECT laplace_sum(x, 0.02, 10) FROM t",
                 "SELECT count(*) FROM private_groups('SELECT 1, 1 ORDER BY 1', 0.05, 'delta=1e-8')"]
        rnd = random.Random(7)
        for i in range(40):
            self.S.error_of(rnd.choice(forms))
            self.assertTrue(self.kept_is_entries(), "step %d: %s" % (i, self.summary()))

    def test_a_stale_or_altered_summary_is_rebuilt_not_trusted(self):
        self.S.psql("SELECT dp_ledger_attach(1, 1e-6)")
        n = int(self.S.psql("SELECT dp_further_releases('gaussian', 50)")[0][0])
        self.assertGreater(n, 121)  # past zCDP's 121: the privacy curve decides the last ones
        self.S.psql("SELECT k, gaussian_count(0.0002) FROM t WHERE k < %d GROUP BY k" % n)
        self.assertFalse(self.charge())
        self.assertTrue(self.kept_is_entries())
        good = self.summary()
        # edited to claim 10 fewer entries (its digest no longer matches): trusted, it would
        # let the next charge pass
        lines = good.split("\n")
        w = lines[2].split()
        lines[2] = " ".join(w[:-1] + [str(int(w[-1]) - 10)])
        w = lines[1].split()
        lines[1] = " ".join(w[:-1] + [str(int(w[-1]) - 10)])
        self.S.psql("UPDATE optdp_summary SET summary = replace('%s', ';', E'\\n')" % ";".join(lines))
        self.assertFalse(self.charge())
        self.assertEqual(self.summary(), good)  # rebuilt, and kept
        self.S.psql("DELETE FROM optdp_summary")
        self.assertFalse(self.charge())
        self.assertEqual(self.summary(), good)
        # ten entries deleted by hand (not the last): the trigger empties the summary, and
        # the ledger finds room for ten more
        self.S.psql("DELETE FROM optdp_charges WHERE id IN (SELECT id FROM optdp_charges ORDER BY id LIMIT 10)")
        self.assertIsNone(self.summary())
        for i in range(10):
            self.assertTrue(self.charge(), i)
        self.assertFalse(self.charge())
        self.assertTrue(self.kept_is_entries())
        # one entry inserted by hand into a gap of ids (the last id stays): counted
        self.S.psql("DELETE FROM optdp_charges WHERE id IN (SELECT id FROM optdp_charges ORDER BY id LIMIT 10)")
        self.assertTrue(self.charge())
        self.S.psql("INSERT INTO optdp_charges(id, function, epsilon, units, pid, rho, shift) "
             "SELECT min(id) - 1, 'by hand', 0, 0, 0, 0.002, 0 FROM optdp_charges")
        self.assertIsNone(self.summary())
        self.assertFalse(self.charge())  # ten releases' rho without a shift: no room, and no curve
        self.assertTrue(self.kept_is_entries())
        # an entry altered by hand: the summary is emptied, and rebuilt by the next charge
        self.S.psql("UPDATE optdp_charges SET rho = rho / 4 WHERE id = (SELECT max(id) FROM optdp_charges)")
        self.assertIsNone(self.summary())
        self.assertFalse(self.charge())
        self.assertTrue(self.kept_is_entries())


class Concurrency(unittest.TestCase):
    """rho = dp_rho(1, 1e-6) / 10.5: on a (1, 1e-6) ledger ten releases fit by zCDP (10 rho <
    dp_rho), and the privacy curve takes a few more (the count's shift is recorded): K, the
    number released one after another on a fresh ledger (FITS), is what racing sessions
    must not pass."""

    @classmethod
    def setUpClass(cls):
        psql("DROP DATABASE IF EXISTS gconc; CREATE DATABASE gconc")
        psql("CREATE EXTENSION optdp; CREATE TABLE t AS SELECT 1.0::float8 AS x", db="gconc")
        cls.rho = float(psql("SELECT dp_rho(1, 1e-6) / 10.5", db="gconc")[0][0])
        psql("TRUNCATE optdp_budget, optdp_charges; SELECT dp_ledger_attach(1, 1e-6)", db="gconc")
        cls.fits = cls.race(cls, 1, 20)[0]  # one session, one release after another

    def setUp(self):
        psql("TRUNCATE optdp_budget, optdp_charges; SELECT dp_ledger_attach(1, 1e-6)", db="gconc")

    def race(self, n, per_session):
        """(released, refused) of n sessions each sending its releases at once (every
        session's input is written before any output is read)."""
        procs = [subprocess.Popen([SERVER.psql_path, "-X", "-q", "-A", "-t", "-h", SERVER.socket_dir, "-U",
                                   "postgres", "-d", "gconc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(n)]
        for p in procs:
            p.stdin.write(("SELECT gaussian_count(%r) FROM t;" % self.rho) * per_session)
            p.stdin.close()
        outs = [(p.stdout.read(), p.stderr.read()) for p in procs]
        for p in procs:
            p.wait()
        return (sum(len(o.splitlines()) for o, _ in outs), sum(e.count("nor does zCDP fit") for _, e in outs))

    def test_concurrent_sessions_cannot_overspend_under_zcdp(self):
        k = self.fits
        self.assertTrue(10 <= k < 20, k)  # zCDP's ten at least, and fewer than the race sends
        self.assertEqual(self.race(4, 5), (k, 20 - k))
        self.assertEqual(psql("SELECT count(*), count(DISTINCT rho) FROM dp_ledger_entries", db="gconc"),
                         [[str(k), "1"]])
        self.assertEqual(psql("SELECT bool_or(fits) FROM dp_ledger_accounts()", db="gconc"), [["t"]])

    def test_charges_queued_on_the_budget_row_decide_one_after_another(self):
        # K - 1 spent, one more fits; four sessions release while another holds the budget
        # row's lock: they queue on it, and each decides on what the previous committed
        # (a charge that read the history before taking the lock would let all four through)
        psql(("SELECT gaussian_count(%r) FROM t;" % self.rho) * (self.fits - 1), db="gconc")
        holder = subprocess.Popen([SERVER.psql_path, "-X", "-q", "-h", SERVER.socket_dir, "-U", "postgres", "-d",
                                   "gconc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        holder.stdin.write("BEGIN; SELECT 1 FROM optdp_budget FOR UPDATE; SELECT pg_sleep(3); COMMIT;\n")
        holder.stdin.flush()
        time.sleep(0.5)
        self.assertEqual(self.race(4, 1), (1, 3))
        holder.communicate()
        self.assertEqual(psql("SELECT count(*) FROM dp_ledger_entries", db="gconc"), [[str(self.fits)]])


# ---- the paired-neighbour audit (docs/audit.md) -----------------------------------
N_MAIN, N_PILOT = 5000, 1000  # releases per side, as the SQLite suite's short run


def releases(rows, form, seed, n):
    """n releases of form over the rows (x values), one group per trial, serially from dp_seed(seed)."""
    values = ", ".join("(%r::float8)" % float(v) for v in rows)
    out = psql(SERIAL + "SELECT dp_seed(%d); SELECT %s FROM generate_series(1, %d) trial LEFT JOIN (VALUES %s) d(x) "
                        "ON true GROUP BY trial" % (seed, form, n, values))[1:]
    assert len(out) == n
    return " ".join(r[0] for r in out)


def audit(form, rows_a, rows_b, delta):
    seed = zlib.crc32(("%s|%r|%r" % (form, rows_a, rows_b)).encode()) * 4
    lines = [releases(rows_a, form, seed, N_PILOT), releases(rows_b, form, seed + 1, N_PILOT),
             releases(rows_a, form, seed + 2, N_MAIN), releases(rows_b, form, seed + 3, N_MAIN)]
    out = tool("audit", 1, repr(delta), stdin="\n".join(lines) + "\n").splitlines()
    return float(out[0].split()[1]), out[1]


class Audit(unittest.TestCase):
    """As tests/sqlite/gaussian_sql_test.cpp: a release of gaussian_count(rho) is claimed
    (epsilon_of_rho(rho, delta), delta)-DP, the ledger's own conversion; neighbours are
    three rows and four."""

    def test_count_is_eps_delta_as_the_ledger_counts_it(self):
        for rho in (0.5, 0.125):
            for delta in (1e-2, 1e-3):
                claim = float(tool("eps_of_rho", repr(rho), repr(delta)))
                eps_lb, summary = audit("gaussian_count(x, %r)" % rho, [1, 1, 1], [1, 1, 1, 1], delta)
                print("[audit] gaussian_count(x, %r) delta %g: %s" % (rho, delta, summary), file=sys.stderr)
                self.assertLessEqual(eps_lb, claim, "rho %r delta %g: %s" % (rho, delta, summary))

    def test_the_audit_catches_rho_claimed_at_a_quarter(self):
        # gaussian_count(2.0) (sigma 0.5) claimed as rho 0.125 (sigma 2): caught
        delta = 1e-2
        claim = float(tool("eps_of_rho", "0.125", repr(delta)))
        eps_lb, summary = audit("gaussian_count(x, 2.0)", [1, 1, 1], [1, 1, 1, 1], delta)
        print("[audit] self-check gaussian_count(x, 2.0) as rho 0.125: %s" % summary, file=sys.stderr)
        self.assertGreater(eps_lb, claim, summary)


if __name__ == "__main__":
    MODULE_DIR = os.path.abspath(sys.argv.pop(1))
    TOOL = os.path.abspath(sys.argv.pop(1))
    SQLITE_MODULE = os.path.abspath(sys.argv.pop(1))
    unittest.main()
