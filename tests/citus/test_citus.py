"""optdp on a real Citus cluster (label citus): a coordinator and two workers.

Usage: test_citus.py <build>/postgres [unittest args]
       test_citus.py --check-skip <build>/postgres
The three servers (tests/postgres/pgserver.py) run as an unprivileged user on
Unix sockets with citus and optdp preloaded, and are always stopped. When
Citus is not installed for the PostgreSQL that pg_config names (its citus.so
and citus.control; OPTDP_CITUS_SO names another citus.so to look for), the
script prints one line and exits with 77, which ctest counts as skipped: CI
has no Citus. scripts/build-citus.sh builds and installs it. --check-skip runs
this script with OPTDP_CITUS_SO naming a missing file and checks that it
skips. docs/scale.md, "On Citus", says what these tests establish.
"""
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "postgres"))
from pgserver import Server, SqlError, _pg  # noqa: E402
from test_postgres import FORMS as SERVER_FORMS, chi_square_p  # noqa: E402

SKIP = 77
LN2 = 0.6931471805599453
P_MIN = 1e-6  # the workers draw from the OS generator (no seed reaches them): one false alarm in 10^6 runs


def citus_installed():
    so = os.environ.get("OPTDP_CITUS_SO") or os.path.join(_pg("--pkglibdir"), "citus.so")
    control = os.path.join(_pg("--sharedir"), "extension", "citus.control")
    return os.path.exists(so) and os.path.exists(control), so


MODULE_DIR = None
COORD = None
WORKERS = []
PRELOAD = "shared_preload_libraries = 'citus,optdp_pg'"
COMMON = [PRELOAD, "max_connections = 60", "citus.max_adaptive_executor_pool_size = 4",
          "max_prepared_transactions = 20"]

# Every release form, over t (id, k, x): test_postgres.py's, and the forms it tests elsewhere.
FORMS = SERVER_FORMS + [
    "gaussian_count(0.01)",
    "gaussian_sum(x, 0.01, 0, 10)",
    "private_count_levels(0.2, 0.5)",
    "gaussian_count(x, 0.01)",
    "private_count_levels_of(x, 0.2, 0.5)",
    "private_select(k, x, 1.0)",
]
N_ROWS = 2000


def start_cluster(rows=N_ROWS, extra=()):
    """Starts the coordinator and two workers (COORD, WORKERS) and distributes
    t(id, k, x) of `rows` rows by id over 4 shards (2 on each worker)."""
    global COORD, WORKERS
    COORD = Server(MODULE_DIR, COMMON + list(extra))
    COORD.start()
    # The workers charge the coordinator's ledger (docs/scale.md, "On Citus").
    for _ in range(2):
        w = Server(MODULE_DIR, COMMON + list(extra) + ["optdp.ledger_conninfo = '%s'" % COORD.conninfo()])
        w.start()
        WORKERS.append(w)
    for s in [COORD] + WORKERS:
        s.psql("CREATE EXTENSION citus; CREATE EXTENSION optdp;")
    COORD.psql("SELECT citus_set_coordinator_host('%s', 5432);" % COORD.socket_dir)
    for w in WORKERS:
        COORD.psql("SELECT citus_add_node('%s', 5432);" % w.socket_dir)
    COORD.psql("SET citus.shard_count = 4; "
               "CREATE TABLE t (id int, k int, x float8); SELECT create_distributed_table('t', 'id'); "
               "INSERT INTO t SELECT i, i %% 10, i %% 11 FROM generate_series(1, %d) i;" % rows)


def stop_cluster():
    problems = []
    for s in WORKERS + ([COORD] if COORD else []):
        try:
            s.stop()
        except RuntimeError as e:
            problems.append(str(e))
    if problems:
        raise RuntimeError("\n".join(problems))


def setUpModule():
    try:
        start_cluster()
    except BaseException:
        stop_cluster()
        raise


def tearDownModule():
    stop_cluster()


def explain(sql):
    return "\n".join(r[0] for r in COORD.psql("EXPLAIN (VERBOSE, COSTS OFF) " + sql))


def ledger():
    """(entries, spent) of the coordinator's ledger, and the number of entries on the workers."""
    n, spent = COORD.psql("SELECT count(*), coalesce(sum(epsilon), 0) FROM optdp_charges")[0]
    on_workers = sum(int(w.psql("SELECT count(*) FROM optdp_charges")[0][0]) for w in WORKERS)
    return int(n), float(spent), on_workers


class A_PushedDown(unittest.TestCase):
    """Grouped by the distribution column: Citus sends the whole query to the shards."""

    def test_plan_is_pushed_down(self):
        plan = explain("SELECT id, private_count(0.5) FROM t GROUP BY id")
        self.assertIn("private_count", plan)  # the worker query holds the aggregate itself
        self.assertNotIn("coord_combine_agg", plan)
        self.assertNotIn("worker_partial_agg", plan)

    def test_every_form_runs(self):
        for form in FORMS:
            with self.subTest(form=form):
                rows = COORD.psql("SELECT id, %s FROM t WHERE id <= 20 GROUP BY id ORDER BY id" % form)
                self.assertEqual([int(r[0]) for r in rows], list(range(1, 21)))
                self.assertTrue(all(r[1] != "" for r in rows))

    def test_law_of_one_server(self):
        # Each id is one row: private_count(0.5) - 1 is the two-sided geometric noise.
        rows = COORD.psql("SELECT private_count(0.5) - 1 FROM t GROUP BY id")
        self.assertEqual(len(rows), N_ROWS)
        obs = {}
        for r in rows:
            obs[int(r[0])] = obs.get(int(r[0]), 0) + 1
        a = 0.5
        probs = {z: (1 - a) / (1 + a) * a ** abs(z) for z in range(-60, 61)}
        p = chi_square_p(obs, probs)
        print("[citus] pushed-down private_count(0.5) noise over %d groups: chi-square p = %.3g" % (N_ROWS, p),
              file=sys.stderr)
        self.assertGreater(p, P_MIN)


def geometric_p(values, alpha, shift):
    """chi-square p-value of values - shift against the two-sided geometric law at alpha."""
    obs = {}
    for v in values:
        obs[v - shift] = obs.get(v - shift, 0) + 1
    probs = {z: (1 - alpha) / (1 + alpha) * alpha ** abs(z) for z in range(-80, 81)}
    return chi_square_p(obs, probs)


# The forms whose data argument is anyelement: Citus's worker_partial_agg_sfunc
# compares the declared argument types with the row's, and anyelement is never
# an argument's own type, so Citus refuses them in its partial plan (not optdp).
ANYELEMENT_FORMS = ["private_count(x, 0.5)", "gaussian_count(x, 0.01)", "private_count_levels_of(x, 0.2, 0.5)",
                    "private_select(k, x, 1.0)"]
PARTIAL_FORMS = [f for f in FORMS if f not in ANYELEMENT_FORMS]


class B_Partial(unittest.TestCase):
    """Not grouped by the distribution column: partial states on the shards
    (worker_partial_agg), combined and finalised on the coordinator
    (coord_combine_agg); the parameters come from Citus's worker query."""

    def test_plan_is_partial(self):
        for sql in ("SELECT private_count(0.5) FROM t", "SELECT k, private_count(0.5) FROM t GROUP BY k"):
            plan = explain(sql)
            self.assertIn("coord_combine_agg", plan)
            self.assertIn("worker_partial_agg", plan)

    def test_every_form_runs(self):
        for form in PARTIAL_FORMS:
            with self.subTest(form=form):
                self.assertEqual(len(COORD.psql("SELECT %s FROM t" % form)), 1)
                rows = COORD.psql("SELECT k, %s FROM t GROUP BY k ORDER BY k" % form)
                self.assertEqual([int(r[0]) for r in rows], list(range(10)))

    def test_bound_parameters(self):
        rows = COORD.psql("PREPARE q(float8) AS SELECT k, private_count($1) FROM t GROUP BY k; "
                          "EXECUTE q(0.5); EXECUTE q(0.5); EXECUTE q(0.5); EXECUTE q(0.5); EXECUTE q(0.5); "
                          "EXECUTE q(0.5); EXECUTE q(0.5);")
        self.assertEqual(len(rows), 70)
        self.assertEqual(COORD.error_of("PREPARE r(float8) AS SELECT private_count($1) FROM t; EXECUTE r(1.5);"),
                         COORD.error_of("SELECT private_count(1.5) FROM t"))

    def test_messages_name_the_aggregate(self):
        # the same refusal as on one server, before any row, with rows or without
        for where in ("", " WHERE id < 0"):
            self.assertEqual(COORD.error_of("SELECT private_count(2.0) FROM t" + where),
                             "private_count: alpha must be in (0, 1), but is 2")
            self.assertEqual(COORD.error_of("SELECT k, staircase_sum(x, 1.0, 5, 0) FROM t%s GROUP BY k" % where),
                             COORD.error_of("SELECT staircase_sum(x, 1.0, 5, 0) FROM (VALUES (1.0::float8)) v(x)"))

    def test_anyelement_forms_refused_by_citus(self):
        for form in ANYELEMENT_FORMS:
            self.assertEqual(COORD.error_of("SELECT %s FROM t" % form),
                             "worker_partial_agg_sfunc could not confirm type correctness")

    def test_two_calls_keep_their_parameters(self):
        # private_count(0.9) has variance 2a/(1-a)^2 = 180, private_count(0.01) 0.0002:
        # the calls' parameters swapped would show
        rows = COORD.psql("SELECT id % 1000, private_count(0.9), private_count(0.01) FROM t GROUP BY 1")
        wide = [int(r[1]) - 2 for r in rows]
        narrow = [int(r[2]) - 2 for r in rows]
        self.assertGreater(sum(v * v for v in wide) / len(wide), 90)
        self.assertLess(sum(v * v for v in narrow) / len(narrow), 0.1)

    def test_law_of_one_server(self):
        # 1000 groups of two rows (ids i and i + 1000), each released on the coordinator
        rows = COORD.psql("SELECT private_count(0.5) FROM t GROUP BY id % 1000")
        self.assertEqual(len(rows), 1000)
        p = geometric_p([int(r[0]) for r in rows], 0.5, 2)
        print("[citus] partial private_count(0.5) noise over 1000 groups: chi-square p = %.3g" % p, file=sys.stderr)
        self.assertGreater(p, P_MIN)

    def test_hostile_calls_refused_as_on_one_server(self):
        # what an analyst would try, on the distributed table and on a local
        # copy of it on the coordinator: the same refusal, with rows or without
        COORD.psql("CREATE TABLE IF NOT EXISTS lt AS SELECT * FROM t")
        for sql in ("SELECT staircase_sum(x, x, 0, 10) FROM %s%s",
                    "SELECT k, private_count(x / 100) FROM %s%s GROUP BY k",
                    "SELECT private_avg(x, 1.0, 0, (SELECT max(x) FROM lt)) FROM %s%s",
                    "SELECT private_count(random()) FROM %s%s",
                    "SELECT private_quantile(x, k, 1.0, 0, 10) FROM %s%s",
                    "SELECT private_count(0.5 ORDER BY x) FROM %s%s"):
            for where in ("", " WHERE id < 0"):
                with self.subTest(sql=sql, where=where):
                    one = COORD.error_of(sql % ("lt", where))
                    self.assertIsNotNone(one)
                    self.assertEqual(COORD.error_of(sql % ("t", where)), one)

    def test_direct_citus_calls_are_refused(self):
        # coord_combine_agg written by hand over no Citus plan: no worker query
        # holds its parameters, so it releases nothing, with rows or without
        for where in ("", " WHERE false"):
            self.assertEqual(COORD.error_of(
                "SELECT coord_combine_agg('private_count(float8)'::regprocedure, s::cstring, NULL::bigint) "
                "FROM (VALUES ('\\x0100000000000000000000000000e03f'::text)) v(s)" + where),
                "private_count: cannot find the call's parameters in this plan")


class C_Budget(unittest.TestCase):
    """One budget, the coordinator's, binds every release: the coordinator
    charges what it releases (the partial plan), the workers charge what Citus
    pushes down to them on the coordinator's ledger (optdp.ledger_conninfo),
    and a worker without it refuses."""

    TOTAL = 30.0

    @classmethod
    def setUpClass(cls):
        COORD.psql("SELECT dp_ledger_attach(%r)" % cls.TOTAL)

    def test_1_pushed_down_charges_the_coordinator(self):
        n0, spent0, w0 = ledger()
        self.assertEqual(len(COORD.psql("SELECT id, private_count(0.5) FROM t WHERE id <= 20 GROUP BY id")), 20)
        n, spent, w = ledger()
        self.assertEqual(n - n0, 20)  # one charge per release
        self.assertAlmostEqual(spent - spent0, 20 * LN2, places=9)
        self.assertEqual(w, 0)

    def test_2_partial_charges_the_coordinator(self):
        n0, spent0, _ = ledger()
        COORD.psql("SELECT private_count(0.5) FROM t")
        COORD.psql("SELECT k, private_count(0.5) FROM t GROUP BY k")
        n, spent, w = ledger()
        self.assertEqual(n - n0, 11)
        self.assertAlmostEqual(spent - spent0, 11 * LN2, places=9)
        self.assertEqual(w, 0)

    def test_3_worker_without_the_coordinators_ledger_refuses(self):
        def set_conninfo(workers, value):
            for w in workers:
                if value is None:
                    w.psql("ALTER SYSTEM RESET optdp.ledger_conninfo; SELECT pg_reload_conf();")
                else:
                    w.psql("ALTER SYSTEM SET optdp.ledger_conninfo = '%s'; SELECT pg_reload_conf();" % value)
            for w in workers:  # the reload has reached a new backend
                for _ in range(100):
                    want = "[%s]" % (COORD.conninfo() if value is None else value)
                    if w.psql("SELECT '[' || current_setting('optdp.ledger_conninfo') || ']'")[0][0] == want:
                        break
                    time.sleep(0.05)
        sql = "SELECT id, private_count(0.5) FROM t WHERE %s GROUP BY id"
        try:
            # Both workers without the coordinator's ledger: every pushed-down
            # release is refused before its scan, with rows or without, and
            # nothing is charged.
            set_conninfo(WORKERS, "")
            n0, spent0, _ = ledger()
            errors = [COORD.error_of(sql % cond) for cond in ("id <= 20", "id < 0")]
            self.assertEqual(errors[0], errors[1])
            self.assertIn("optdp.ledger_conninfo names no ledger", errors[0] or "")
            self.assertEqual(ledger(), (n0, spent0, 0))
            # the partial plan releases on the coordinator: charged there
            COORD.psql("SELECT private_count(0.5) FROM t")
            self.assertEqual(ledger()[0], n0 + 1)
            # One worker without it: the statement is refused (the other
            # worker's groups may be charged before the refusal arrives:
            # charged, never released).
            set_conninfo(WORKERS[1:], None)
            self.assertIn("optdp.ledger_conninfo names no ledger", COORD.error_of(sql % "id <= 20") or "")
        finally:
            set_conninfo(WORKERS, None)

    def test_4_the_budget_refuses_across_nodes(self):
        # 34 or more releases at ln 2 are charged by now (over 23.5 of 30): 20 more exceed it
        err = COORD.error_of("SELECT id, private_count(0.5) FROM t WHERE id <= 20 GROUP BY id")
        self.assertIsNotNone(err)
        self.assertIn("budget", err)
        _, spent, _ = ledger()
        self.assertLessEqual(spent, self.TOTAL)
        err = COORD.error_of("SELECT private_count(0.001) FROM t")  # ln 1000 = 6.9 > what is left
        self.assertIn("budget", err or "")
        self.assertLessEqual(ledger()[1], self.TOTAL)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--check-skip":
        env = dict(os.environ, OPTDP_CITUS_SO="/nonexistent/citus.so")
        r = subprocess.run([sys.executable, os.path.abspath(__file__)] + sys.argv[2:], env=env,
                           capture_output=True, text=True)
        lines = r.stdout.splitlines()
        ok = r.returncode == SKIP and len(lines) == 1 and "skipped" in lines[0] and r.stderr == ""
        print("without Citus the label skips: %s (exit %d, output %r)" % ("yes" if ok else "NO", r.returncode,
                                                                           r.stdout + r.stderr))
        sys.exit(0 if ok else 1)
    installed, so = citus_installed()
    if not installed:
        print("citus tests skipped: Citus is not installed for this PostgreSQL (no %s); "
              "scripts/build-citus.sh installs it" % so)
        sys.exit(SKIP)
    MODULE_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
