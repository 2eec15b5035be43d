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
import math
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "postgres"))
from pgserver import Server, SqlError, _pg  # noqa: E402
from test_postgres import chi_square_p  # noqa: E402

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

# Every release form, over t (id, k, x); as in tests/postgres/test_postgres.py's FORMS.
FORMS = [
    "private_count(0.5)",
    "private_count(x, 0.5)",
    "staircase_sum(x, 1.0, 10)",
    "staircase_sum(x, 1.0, 0, 10)",
    "staircase_sum(x, 1.0, 0, 10, 'l2')",
    "laplace_sum(x, 1.0, 10)",
    "laplace_sum(x, 1.0, 0, 10)",
    "private_avg(x, 1.0, 0, 10)",
    "private_var(x, 1.0, 0, 10)",
    "private_stddev(x, 1.0, 0, 10)",
    "private_quantile(x, 0.25, 1.0, 0, 10)",
    "private_median(x, 1.0, 0, 10)",
    "gaussian_count(0.01)",
    "gaussian_sum(x, 0.01, 0, 10)",
    "private_count_levels(0.2, 0.5)",
]
N_ROWS = 2000


def start_cluster():
    global COORD, WORKERS
    COORD = Server(MODULE_DIR, COMMON)
    COORD.start()
    # The workers charge the coordinator's ledger (docs/scale.md, "On Citus").
    for _ in range(2):
        w = Server(MODULE_DIR, COMMON + ["optdp.ledger_conninfo = '%s'" % COORD.conninfo()])
        w.start()
        WORKERS.append(w)
    for s in [COORD] + WORKERS:
        s.psql("CREATE EXTENSION citus; CREATE EXTENSION optdp;")
    COORD.psql("SELECT citus_set_coordinator_host('%s', 5432);" % COORD.socket_dir)
    for w in WORKERS:
        COORD.psql("SELECT citus_add_node('%s', 5432);" % w.socket_dir)
    COORD.psql("SET citus.shard_count = 4; "
               "CREATE TABLE t (id int, k int, x float8); SELECT create_distributed_table('t', 'id'); "
               "INSERT INTO t SELECT i, i %% 10, i %% 11 FROM generate_series(1, %d) i;" % N_ROWS)


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
