"""optdp on a real Citus cluster (label citus): a coordinator and two workers.

Usage: test_citus.py <build>/postgres <pg_audit_tool> <build>/catalogue/catalogue.json [unittest args]
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
import json
import math
import os
import re
import subprocess
import sys
import time
import unittest
import zlib

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
TOOL = None  # pg_audit_tool (tests/postgres/audit_tool.cpp)
CATALOGUE = None  # the build's catalogue.json (sql/catalogue.py)
COORD = None
WORKERS = []
SQL = None  # one session on the coordinator for the tests' statements (pgserver.Session)
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
# The *_state form of each (the exact state of the rows, for a coordinator's
# *_merge; docs/scale.md, "Across servers"), which is not a release.
STATE_FORMS = [f.replace("(", "_state(", 1) for f in FORMS]
N_ROWS = 2000
STATE_KEY = "c1" * 32


def start_cluster(rows=N_ROWS, extra=()):
    """Starts the coordinator and two workers (COORD, WORKERS) and distributes
    t(id, k, x) of `rows` rows by id over 4 shards (2 on each worker)."""
    global COORD, WORKERS
    # one state key on every node: the *_state forms' states are sealed on the coordinator, under the
    # shards' own key checks (docs/scale.md, "Across servers")
    COORD = Server(MODULE_DIR, COMMON + list(extra), state_key=STATE_KEY)
    COORD.start()
    # The workers charge the coordinator's ledger (docs/scale.md, "On Citus").
    for _ in range(2):
        w = Server(MODULE_DIR, COMMON + list(extra) + ["optdp.ledger_conninfo = '%s'" % COORD.conninfo()],
                   state_key=STATE_KEY)
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
    global SQL
    try:
        start_cluster()
        SQL = COORD.session()
    except BaseException:
        stop_cluster()
        raise


def tearDownModule():
    if SQL:
        SQL.close()
    stop_cluster()


def explain(sql):
    return "\n".join(r[0] for r in SQL.psql("EXPLAIN (VERBOSE, COSTS OFF) " + sql))


def ledger():
    """(entries, spent) of the coordinator's ledger, and the number of entries on the workers."""
    n, spent = SQL.psql("SELECT count(*), coalesce(sum(epsilon), 0) FROM optdp_charges")[0]
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
        for form in FORMS + STATE_FORMS:
            with self.subTest(form=form):
                rows = SQL.psql("SELECT id, %s FROM t WHERE id <= 20 GROUP BY id ORDER BY id" % form)
                self.assertEqual([int(r[0]) for r in rows], list(range(1, 21)))
                self.assertTrue(all(r[1] != "" for r in rows))

    def test_law_of_one_server(self):
        # Each id is one row: private_count(0.5) - 1 is the two-sided geometric noise.
        rows = SQL.psql("SELECT private_count(0.5) - 1 FROM t GROUP BY id")
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


# The forms whose data argument is polymorphic (x anyelement, candidate
# anycompatible), with the type of the column they take here: Citus's
# worker_partial_agg_sfunc compares the aggregate's declared argument types
# with the row's, which a polymorphic type never matches, so each also has a
# form of its own per common column type (extension/postgres/sql/65-types.sql).
POLYMORPHIC_FORMS = {"private_count(x, 0.5)": "private_count(double precision,double precision)",
                     "gaussian_count(x, 0.01)": "gaussian_count(double precision,double precision)",
                     "private_count_levels_of(x, 0.2, 0.5)":
                         "private_count_levels_of(double precision,double precision,double precision)",
                     "private_select(k, x, 1.0)": "private_select(integer,double precision,double precision)"}
POLYMORPHIC_FORMS.update({f.replace("(", "_state(", 1): t.replace("(", "_state(", 1)
                          for f, t in POLYMORPHIC_FORMS.items()})
# The column types with forms of their own, a value of each, and the type
# private_select returns for it.
TYPED = [("bool", "i % 2 = 0"), ("int2", "i"), ("int4", "i"), ("int8", "i"), ("float4", "i"), ("float8", "i"),
         ("numeric", "i"), ("text", "i::text"), ("varchar(8)", "i::text"), ("char(4)", "i::text"), ("name", "i::text"),
         ('"char"', "chr(65 + i % 26)"),
         ("date", "date '2020-01-01' + i"), ("timestamp", "timestamp '2020-01-01' + i * interval '1 hour'"),
         ("timestamptz", "timestamptz '2020-01-01' + i * interval '1 hour'"),
         ("uuid", "md5(i::text)::uuid")]


def catalogued(refusal, function):
    """The message the catalogue gives for one of PostgreSQL's refusals (sql/catalogue.py, POSTGRES_REFUSALS)."""
    with open(CATALOGUE, encoding="utf-8") as f:
        for r in json.load(f)["postgres_refusals"]:
            if r["id"] == refusal:
                return r["message"] % function
    raise KeyError(refusal)


def log_lines(server, since, text):
    """The lines of server's log after offset `since` that contain text."""
    with open(server.log, errors="replace") as f:
        f.seek(since)
        return [line for line in f.read().splitlines() if text in line]


def log_size(server):
    return os.path.getsize(server.log)


def set_setting(servers, name, value, seen=None):
    """ALTER SYSTEM SET name = value (None: RESET) on the servers, reloaded,
    and waits until a new backend sees `seen` (by default value)."""
    for s in servers:
        if value is None:
            s.psql("ALTER SYSTEM RESET %s; SELECT pg_reload_conf();" % name)
        else:
            s.psql("ALTER SYSTEM SET %s = '%s'; SELECT pg_reload_conf();" % (name, value))
    want = "[%s]" % (value if seen is None else seen)
    for s in servers:
        for _ in range(100):
            if s.psql("SELECT '[' || current_setting('%s') || ']'" % name)[0][0] == want:
                break
            time.sleep(0.05)


def states_table():
    """st(id, k, s, sel): each row's private_count_state(x, 0.9) and
    private_select_state(k, x, 1.0) for ids 1..200 of t, made pushed down,
    distributed by id."""
    if SQL.psql("SELECT to_regclass('st') IS NOT NULL")[0][0] == "t":
        return
    SQL.psql("CREATE TABLE st (id int, k int, s bytea, sel bytea); SELECT create_distributed_table('st', 'id'); "
             "INSERT INTO st SELECT id, k, private_count_state(x, 0.9), private_select_state(k, x, 1.0) FROM t "
             "WHERE id <= 200 GROUP BY id, k")


# Each *_merge (sql/reference.md) with the *_state form that makes its
# states (merge % column names the state's column in ms), and for those
# whose noise is negligible here, the built-in aggregate of the same rows and
# how far the release may be from it (alpha 0.001: |noise| >= 3 with
# probability 2e-9; eps 10^4 and rho 10^6: noise of sd below 0.01).
MERGES = [
    ("private_count_state(0.001)", "private_count_merge(%s, 0.001)", "count(*)", 2),
    ("staircase_sum_state(x, 1.0, 10)", "staircase_sum_merge(%s, 1.0, 10)", None, None),
    ("staircase_sum_state(x, 1.0, 0, 10)", "staircase_sum_merge(%s, 1.0, 0, 10)", None, None),
    ("staircase_sum_state(x, 1.0, 0, 10, 'l2')", "staircase_sum_merge(%s, 1.0, 0, 10, 'l2')", None, None),
    ("laplace_sum_state(x, 1.0, 10)", "laplace_sum_merge(%s, 1.0, 10)", None, None),
    ("laplace_sum_state(x, 10000.0, 0, 10)", "laplace_sum_merge(%s, 10000.0, 0, 10)", "sum(x)", 0.1),
    ("private_avg_state(x, 10000.0, 0, 10)", "private_avg_merge(%s, 10000.0, 0, 10)", "avg(x)", 0.01),
    ("private_var_state(x, 10000.0, 0, 10)", "private_var_merge(%s, 10000.0, 0, 10)", "var_pop(x)", 0.01),
    ("private_stddev_state(x, 1.0, 0, 10)", "private_stddev_merge(%s, 1.0, 0, 10)", None, None),
    ("private_quantile_state(x, 0.25, 1.0, 0, 10)", "private_quantile_merge(%s, 0.25, 1.0, 0, 10)", None, None),
    ("private_median_state(x, 1.0, 0, 10)", "private_median_merge(%s, 1.0, 0, 10)", None, None),
    ("private_count_levels_state(0.001, 0.5)", "private_count_levels_merge(%s, 0.001, 0.5)", "count(*)", 2),
    ("private_count_levels_of_state(x, 0.001)", "private_count_levels_merge(%s, 0.001)", "count(x)", 2),
    ("private_select_state(k, x, 1.0)", "private_select_merge(%s, NULL::int, 1.0)", None, None),
    ("private_select_state(k, x, 1.0, 2.0, 'exponential')",
     "private_select_merge(%s, NULL::int, 1.0, 2.0, 'exponential')", None, None),
    ("gaussian_count_state(x, 1000000.0)", "gaussian_count_merge(%s, 1000000.0)", "count(x)", 0.5),
    ("gaussian_sum_state(x, 1000000.0, 0, 10)", "gaussian_sum_merge(%s, 1000000.0, 0, 10)", "sum(x)", 0.1),
]


def merges_table():
    """ms(id, k, s0, s1, ...): for ids 1..200 of t, each row's state of each
    of MERGES (made pushed down), distributed by id."""
    if SQL.psql("SELECT to_regclass('ms') IS NOT NULL")[0][0] == "t":
        return
    SQL.psql("CREATE TABLE ms (id int, k int, %s); SELECT create_distributed_table('ms', 'id'); "
             "INSERT INTO ms SELECT id, k, %s FROM t WHERE id <= 200 GROUP BY id, k"
             % (", ".join("s%d bytea" % n for n in range(len(MERGES))), ", ".join(m[0] for m in MERGES)))


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
        for form in FORMS + STATE_FORMS:
            with self.subTest(form=form):
                self.assertEqual(len(SQL.psql("SELECT %s FROM t" % form)), 1)
                rows = SQL.psql("SELECT k, %s FROM t GROUP BY k ORDER BY k" % form)
                self.assertEqual([int(r[0]) for r in rows], list(range(10)))

    def test_polymorphic_forms_run_by_their_typed_form(self):
        # the typed form is the one Citus wraps (its signature in the worker
        # query, its OID in the coordinator's call)
        for form, typed in POLYMORPHIC_FORMS.items():
            oid = SQL.psql("SELECT 'public.%s'::regprocedure::oid" % typed)[0][0]
            for sql in ("SELECT %s FROM t" % form, "SELECT k, %s FROM t GROUP BY k" % form):
                with self.subTest(sql=sql):
                    plan = explain(sql)
                    self.assertIn("worker_partial_agg('public.%s'::regprocedure" % typed, plan)
                    self.assertIn("coord_combine_agg('%s'::oid" % oid, plan)

    def test_every_typed_column(self):
        # a column of each type with a form of its own, in both plans, the
        # releases and the *_state forms; the candidate comes back in its
        # column's type
        SQL.psql("CREATE TABLE IF NOT EXISTS ty (id int, %s); SELECT create_distributed_table('ty', 'id'); "
                 "INSERT INTO ty SELECT i, %s FROM generate_series(1, 40) i;"
                 % (", ".join("c%d %s" % (n, t) for n, (t, _) in enumerate(TYPED)), ", ".join(v for _, v in TYPED)))
        own = SQL.psql("SELECT %s FROM ty LIMIT 1" % ", ".join("pg_typeof(c%d)::text" % n for n in range(len(TYPED))))[0]
        for group, groups in (("", 1), (" GROUP BY id % 2", 2), (" GROUP BY id", 40)):
            rows = SQL.psql(" ".join("SELECT private_count(c{0}, 0.5), gaussian_count(c{0}, 0.01), "
                                     "private_count_levels_of(c{0}, 0.2, 0.5), pg_typeof(private_select(c{0}, id, 1.0)), "
                                     "length(private_count_state(c{0}, 0.5)) > 0, "
                                     "length(gaussian_count_state(c{0}, 0.01)) > 0, "
                                     "length(private_count_levels_of_state(c{0}, 0.2, 0.5)) > 0, "
                                     "length(private_select_state(c{0}, id, 1.0)) > 0 "
                                     "FROM ty{1};".format(n, group) for n in range(len(TYPED))))
            self.assertEqual(len(rows), groups * len(TYPED))
            for n, (t, _) in enumerate(TYPED):
                with self.subTest(type=t, group=group):
                    mine = rows[n * groups:(n + 1) * groups]
                    self.assertEqual({r[3] for r in mine}, {own[n]})
                    self.assertEqual({tuple(r[4:8]) for r in mine}, {("t", "t", "t", "t")})

    def test_other_types_stay_polymorphic(self):
        # a type without a form of its own (an array) resolves to the
        # polymorphic form as on one server: pushed down it runs; the partial
        # plan, which Citus's worker_partial_agg would refuse at a shard's
        # first row only (an error with rows, a release without), optdp
        # refuses before the scan, with rows or without
        self.assertEqual(len(SQL.psql("SELECT id, private_count(ARRAY[x], 0.5) FROM t WHERE id <= 5 GROUP BY id")),
                         5)
        self.assertEqual(len(SQL.psql("SELECT id, private_count_state(ARRAY[x], 0.5) FROM t WHERE id <= 5 "
                                      "GROUP BY id")), 5)
        forms = [("private_count(ARRAY[x], 0.5)", "private_count"),
                 ("gaussian_count(ARRAY[x], 0.01)", "gaussian_count"),
                 ("private_count_levels_of(ARRAY[x], 0.2, 0.5)", "private_count_levels_of"),
                 ("private_select(ARRAY[k], x, 1.0)", "private_select")]
        forms += [(f.replace("(", "_state(", 1), fn + "_state") for f, fn in forms]
        for form, fn in forms:
            for sql in ("SELECT %s FROM t%s", "SELECT k, %s FROM t%s GROUP BY k"):
                for where in ("", " WHERE id < 0"):
                    with self.subTest(sql=sql % (form, where)):
                        self.assertEqual(SQL.error_of(sql % (form, where)),
                                         catalogued("citus/polymorphic_partial", fn))

    def test_merges_in_both_plans(self):
        # every *_merge over a distributed table of states (one per id), all
        # in one statement (each call keeps its own parameters): pushed down
        # grouped by the distribution column, and in the partial plan
        # (worker_partial_agg on the shards, coord_combine_agg on the
        # coordinator) ungrouped and grouped by another column, with rows or
        # without; those of negligible noise give the built-in aggregate of
        # the rows, as the same states merged on the coordinator do (OFFSET
        # 0: the states pulled there)
        merges_table()
        calls = ", ".join("(%s)[1]" % (m[1] % ("s%d" % n)) if "levels" in m[1] else m[1] % ("s%d" % n)
                          for n, m in enumerate(MERGES))
        self.assertEqual(len(SQL.psql("SELECT id, %s FROM ms WHERE id <= 5 GROUP BY id" % calls)), 5)
        plan = explain("SELECT k, %s FROM ms GROUP BY k" % calls)
        self.assertEqual(plan.count("coord_combine_agg("), len(MERGES))
        self.assertGreaterEqual(plan.count("worker_partial_agg("), len(MERGES))
        self.assertEqual(len(SQL.psql("SELECT 1, %s FROM ms WHERE id < 0" % calls)), 1)
        exact = [(n, m[2], m[3]) for n, m in enumerate(MERGES) if m[2]]
        want = SQL.psql("SELECT %s FROM t WHERE id <= 200" % ", ".join(e for _, e, _ in exact))[0]
        want_k = SQL.psql("SELECT k, %s FROM t WHERE id <= 200 GROUP BY k ORDER BY k"
                          % ", ".join(e for _, e, _ in exact))
        for table in ("ms", "(SELECT * FROM ms OFFSET 0) a"):
            with self.subTest(table=table):
                rows = SQL.psql("SELECT %s FROM %s" % (calls, table))
                self.assertEqual(len(rows), 1)
                self.assertEqual(len(rows[0]), len(MERGES))
                for i, (n, e, tol) in enumerate(exact):
                    self.assertLessEqual(abs(float(rows[0][n]) - float(want[i])), tol, (MERGES[n][1], rows[0][n]))
                rows = SQL.psql("SELECT k, %s FROM %s GROUP BY k ORDER BY k" % (calls, table))
                self.assertEqual([int(r[0]) for r in rows], list(range(10)))
                for r, w in zip(rows, want_k):
                    for i, (n, e, tol) in enumerate(exact):
                        self.assertLessEqual(abs(float(r[1 + n]) - float(w[1 + i])), tol,
                                             (MERGES[n][1], r[0], r[1 + n]))
        # a candidate of a type without a form of its own: refused before
        # the scan, as the polymorphic releases are
        sel = [n for n, m in enumerate(MERGES) if m[0].startswith("private_select_state")][0]
        for sql in ("SELECT private_select_merge(s%d, NULL::int[], 1.0) FROM ms%s",
                    "SELECT k, private_select_merge(s%d, NULL::int[], 1.0) FROM ms%s GROUP BY k"):
            for where in ("", " WHERE id < 0"):
                self.assertEqual(SQL.error_of(sql % (sel, where)),
                                 catalogued("citus/polymorphic_partial", "private_select_merge"))

    def test_a_state_stored_twice_counts_once(self):
        # One state of all 2,000 rows stored on two shards (ids 1 and 2):
        # with the nonces counted in each process only, each worker's backend
        # opens its own copy and the merge released 4,000 rows. The partial
        # states carry the nonces, and the coordinator's combine refuses the
        # second copy with one server's message, as it refuses the copies
        # pulled to the coordinator; so too a state stored twice on one shard
        # (id 3 twice), and grouped.
        SQL.psql("CREATE TABLE IF NOT EXISTS st2 (id int, s bytea); SELECT create_distributed_table('st2', 'id'); "
                 "INSERT INTO st2 SELECT i, s FROM (SELECT private_count_state(x, 0.001) AS s FROM t OFFSET 0) a, "
                 "generate_series(1, 2) i")
        self.assertEqual(len({r[0] for r in SQL.psql("SELECT get_shard_id_for_distribution_column('st2', id) "
                                                     "FROM st2")}), 2)
        SQL.psql("CREATE TABLE IF NOT EXISTS st3 (id int, s bytea); SELECT create_distributed_table('st3', 'id'); "
                 "INSERT INTO st3 SELECT 3, s FROM (SELECT private_count_state(x, 0.001) AS s FROM t OFFSET 0) a, "
                 "generate_series(1, 2) i")
        twice = "private_count_merge: state was already merged in this transaction (a shipped state counts once)"
        for table in ("st2", "st3"):
            for sql in ("SELECT private_count_merge(s, 0.001) FROM %s",
                        "SELECT id %% 1, private_count_merge(s, 0.001) FROM %s GROUP BY 1",
                        "SELECT private_count_merge(s, 0.001) FROM (SELECT s FROM %s OFFSET 0) a"):
                with self.subTest(sql=sql % table):
                    self.assertEqual(SQL.error_of(sql % table), twice)
        # each copy alone is one release of the 2,000 rows
        self.assertLessEqual(abs(int(SQL.psql("SELECT private_count_merge(s, 0.001) FROM st2 WHERE id = 2")[0][0])
                                 - N_ROWS), 2)

    def test_two_merges_of_one_transaction(self):
        # the coordinator records the nonces the partial states bring, as the
        # states it opens itself: in one transaction, a state merged in the
        # partial plan is refused when merged again on the coordinator, and
        # the other way round; in separate transactions both run
        merges_table()
        partial = "SELECT private_count_merge(s0, 0.001) FROM ms"
        local = "SELECT private_count_merge(s0, 0.001) FROM (SELECT s0 FROM ms OFFSET 0) a"
        twice = "private_count_merge: state was already merged in this transaction (a shipped state counts once)"
        for first, second in ((partial, local), (local, partial), (partial, partial)):
            with self.subTest(first=first, second=second):
                try:
                    self.assertEqual(SQL.run("BEGIN")[0], "ok")
                    self.assertEqual(SQL.run(first)[0], "ok")
                    self.assertEqual(SQL.run(second)[-1], twice)
                finally:
                    SQL.run("ROLLBACK")
                self.assertEqual(len(SQL.psql(first)), 1)
                self.assertEqual(len(SQL.psql(second)), 1)

    def test_law_of_partial_merges(self):
        # 2,000 states of one row each (private_count_state(0.5) per id),
        # merged in the partial plan in 1,000 groups of two (ids i and
        # i + 1000): the law of private_count(0.5) over two rows
        SQL.psql("CREATE TABLE IF NOT EXISTS cs (id int, s bytea); SELECT create_distributed_table('cs', 'id'); "
                 "INSERT INTO cs SELECT id, private_count_state(0.5) FROM t GROUP BY id")
        sql = "SELECT private_count_merge(s, 0.5) FROM cs GROUP BY id % 1000"
        self.assertIn("coord_combine_agg", explain(sql))
        rows = SQL.psql(sql)
        self.assertEqual(len(rows), 1000)
        p = geometric_p([int(r[0]) for r in rows], 0.5, 2)
        print("[citus] partial private_count_merge(s, 0.5) over 1000 groups: chi-square p = %.3g" % p,
              file=sys.stderr)
        self.assertGreater(p, P_MIN)

    def test_parameters_read_once_per_execution(self):
        # Citus's wrappers call optdp's functions through a new FmgrInfo per
        # row (and per group): the parameters must still be read once per
        # function and execution, not per row (optdp_pg.cpp's read_call logs
        # each reading at DEBUG2)
        servers = [COORD] + WORKERS
        text = "optdp: %s reads its call's parameters"
        try:
            set_setting(servers, "log_min_messages", "debug2")
            for fn, sql, groups in (("private_count", "SELECT private_count(0.5) FROM t", 1),
                                    ("staircase_sum", "SELECT k, staircase_sum(x, 1.0, 0, 10) FROM t GROUP BY k", 10),
                                    ("private_avg", "SELECT k, private_avg(x, 1.0, 0, 10) FROM t GROUP BY k", 10)):
                since = [log_size(s) for s in servers]
                rows = SQL.psql(sql)
                self.assertEqual(len(rows), groups)
                on_coord = len(log_lines(COORD, since[0], text % fn))
                on_workers = sum(len(log_lines(w, n, text % fn)) for w, n in zip(WORKERS, since[1:]))
                print("[citus] %s: parameters read %d times on the coordinator, %d on the workers (%d rows, "
                      "4 shards, %d groups)" % (fn, on_coord, on_workers, N_ROWS, groups), file=sys.stderr)
                # the coordinator: its hook, before the scan, and the final
                # function once; each of the 4 shards' executions once
                self.assertGreaterEqual(on_coord, 1)
                self.assertLessEqual(on_coord, 2)
                self.assertGreaterEqual(on_workers, 4)
                self.assertLessEqual(on_workers, 4)
        finally:
            set_setting(servers, "log_min_messages", None, "warning")

    def test_bound_parameters(self):
        rows = SQL.psql("PREPARE q(float8) AS SELECT k, private_count($1) FROM t GROUP BY k; "
                          "EXECUTE q(0.5); EXECUTE q(0.5); EXECUTE q(0.5); EXECUTE q(0.5); EXECUTE q(0.5); "
                          "EXECUTE q(0.5); EXECUTE q(0.5);")
        self.assertEqual(len(rows), 70)
        self.assertEqual(SQL.error_of("PREPARE r(float8) AS SELECT private_count($1) FROM t; EXECUTE r(1.5);"),
                         SQL.error_of("SELECT private_count(1.5) FROM t"))

    def test_parameters_forgotten_with_their_subtransaction(self):
        # A statement that fails inside a savepoint never reaches ExecutorEnd,
        # where the execution's cache of the parameters (citus.cpp) is
        # forgotten: it goes with its subtransaction. The failing statement
        # and the next one have the same plan shape (custom plans of one
        # prepared statement, literals of one length), so the next one's
        # executor state and Aggrefs often sit where the failed one's did;
        # with the cache kept, that statement read alpha 0.9 instead of its
        # own 0.01 (or was refused), in the second round here when tried.
        failing = ["EXECUTE q(0.90, 2.00)", "SELECT k, private_count(0.90), private_count(2.00) FROM t GROUP BY k"]
        good = ["EXECUTE q(0.01, 0.50)", "SELECT k, private_count(0.01), private_count(0.50) FROM t GROUP BY k"]
        run = SQL.run
        self.assertEqual(run("PREPARE q(float8, float8) AS SELECT k, private_count($1), private_count($2) FROM t "
                             "GROUP BY k")[0], "ok")
        try:
            self.assertEqual(run("BEGIN")[0], "ok")
            narrow = []
            for _ in range(4):
                for bad, ok in zip(failing, good):
                    self.assertEqual(run("SAVEPOINT s")[0], "ok")
                    self.assertEqual(run(bad)[2], "private_count: alpha must be in (0, 1), but is 2")
                    self.assertEqual(run("ROLLBACK TO SAVEPOINT s")[0], "ok")
                    got = run(ok)
                    self.assertEqual(got[0], "ok", got)
                    self.assertEqual(len(got[1]), 10)
                    narrow += [int(r[1]) - 200 for r in got[1]]
            # alpha 0.01: |noise| >= 1 with probability 0.0198, >= 4 with 2e-8 (alpha 0.9: 0.95, 0.69)
            self.assertLessEqual(max(abs(v) for v in narrow), 3, narrow)
            self.assertLessEqual(sum(1 for v in narrow if v != 0), 12, narrow)
        finally:
            run("ROLLBACK")
            run("DEALLOCATE q")

    def test_messages_name_the_aggregate(self):
        # the same refusal as on one server, before any row, with rows or without
        for where in ("", " WHERE id < 0"):
            self.assertEqual(SQL.error_of("SELECT private_count(2.0) FROM t" + where),
                             "private_count: alpha must be in (0, 1), but is 2")
            self.assertEqual(SQL.error_of("SELECT k, staircase_sum(x, 1.0, 5, 0) FROM t%s GROUP BY k" % where),
                             SQL.error_of("SELECT staircase_sum(x, 1.0, 5, 0) FROM (VALUES (1.0::float8)) v(x)"))

    def test_states_hold_the_exact_rows(self):
        # the shards' states of the *_state forms, in both plans, merged on
        # the coordinator (OFFSET 0: from the states pulled there): the exact
        # count of the rows (alpha 0.001: the noise is 0 with probability
        # 0.998, |noise| >= 3 with 2e-9)
        for state, merge in (("private_count_state(0.001)", "private_count_merge(s, 0.001)"),
                             ("private_count_state(x, 0.001)", "private_count_merge(s, 0.001)"),
                             ("private_count_levels_of_state(x, 0.001)", "(private_count_levels_merge(s, 0.001))[1]")):
            for by in ("k", "id"):  # partial, pushed down
                with self.subTest(state=state, by=by):
                    got = int(SQL.psql("SELECT %s FROM (SELECT %s, %s AS s FROM t GROUP BY %s OFFSET 0) a"
                                       % (merge, by, state, by))[0][0])
                    self.assertLessEqual(abs(got - N_ROWS), 2)

    def test_law_of_merged_partial_states(self):
        # 1000 groups of two rows, each group's state from the partial plan
        # merged once on the coordinator: the law of private_count(0.5)
        rows = SQL.psql("SELECT private_count_merge(s, 0.5) FROM (SELECT id % 1000 AS g, private_count_state(0.5) AS s "
                        "FROM t GROUP BY 1) a GROUP BY g")
        self.assertEqual(len(rows), 1000)
        p = geometric_p([int(r[0]) for r in rows], 0.5, 2)
        print("[citus] merged partial private_count_state(0.5) over 1000 groups: chi-square p = %.3g" % p,
              file=sys.stderr)
        self.assertGreater(p, P_MIN)

    def test_two_calls_keep_their_parameters(self):
        # private_count(0.9) has variance 2a/(1-a)^2 = 180, private_count(0.01) 0.0002:
        # the calls' parameters swapped would show
        rows = SQL.psql("SELECT id % 1000, private_count(0.9), private_count(0.01) FROM t GROUP BY 1")
        wide = [int(r[1]) - 2 for r in rows]
        narrow = [int(r[2]) - 2 for r in rows]
        self.assertGreater(sum(v * v for v in wide) / len(wide), 90)
        self.assertLess(sum(v * v for v in narrow) / len(narrow), 0.1)

    def test_law_of_one_server(self):
        # 1000 groups of two rows (ids i and i + 1000), each released on the coordinator
        rows = SQL.psql("SELECT private_count(0.5) FROM t GROUP BY id % 1000")
        self.assertEqual(len(rows), 1000)
        p = geometric_p([int(r[0]) for r in rows], 0.5, 2)
        print("[citus] partial private_count(0.5) noise over 1000 groups: chi-square p = %.3g" % p, file=sys.stderr)
        self.assertGreater(p, P_MIN)

    def test_hostile_calls_refused_as_on_one_server(self):
        # what an analyst would try, on the distributed table and on a local
        # copy of it on the coordinator: the same refusal, with rows or without
        SQL.psql("CREATE TABLE IF NOT EXISTS lt AS SELECT * FROM t")
        for sql in ("SELECT staircase_sum(x, x, 0, 10) FROM %s%s",
                    "SELECT k, private_count(x / 100) FROM %s%s GROUP BY k",
                    "SELECT private_avg(x, 1.0, 0, (SELECT max(x) FROM lt)) FROM %s%s",
                    "SELECT private_count(random()) FROM %s%s",
                    "SELECT private_quantile(x, k, 1.0, 0, 10) FROM %s%s",
                    "SELECT private_count(0.5 ORDER BY x) FROM %s%s"):
            for where in ("", " WHERE id < 0"):
                with self.subTest(sql=sql, where=where):
                    one = SQL.error_of(sql % ("lt", where))
                    self.assertIsNotNone(one)
                    self.assertEqual(SQL.error_of(sql % ("t", where)), one)

    def test_direct_citus_calls_are_refused(self):
        # coord_combine_agg written by hand over no Citus plan: no worker query
        # holds its parameters, so it releases nothing, with rows or without
        for where in ("", " WHERE false"):
            self.assertEqual(SQL.error_of(
                "SELECT coord_combine_agg('private_count(float8)'::regprocedure, s::cstring, NULL::bigint) "
                "FROM (VALUES ('\\x0100000000000000000000000000e03f'::text)) v(s)" + where),
                catalogued("plan/no_parameters", "private_count"))
        # nor over a merge: a partial state written by hand (here 10^6 rows,
        # the same state listed twice, as no worker would ship it) is never
        # combined, released or charged
        forged = "\\x" + (10 ** 6).to_bytes(8, "little").hex() + "cdcccccccccc" + "ec3f" + "ab" * 32 + \
            (2).to_bytes(8, "little").hex()
        for where in ("", " WHERE false"):
            self.assertEqual(SQL.error_of(
                "SELECT coord_combine_agg('private_count_merge(bytea, float8)'::regprocedure, s::cstring, "
                "NULL::bigint) FROM (VALUES ('%s'::text)) v(s)%s" % (forged, where)),
                catalogued("plan/no_parameters", "private_count_merge"))


# ---- the paired-neighbour audit (docs/audit.md), in both plans -----------------
# au_a and au_b: N_PILOT + N_MAIN trials, each trial's rows the neighbouring
# databases' copies, x = 0, 1, 2 in au_a and 0, 1, 2, 10 in au_b (one row
# more: the count moves by 1, a sum over [0, 10] by 10). Distributed by
# trial: grouped by trial each trial's release is made on a worker (pushed
# down), grouped by tk (the same number, not the distribution column) on the
# coordinator from the shards' partial states.
N_MAIN, N_PILOT = 5000, 1000  # releases per side, as tests/postgres/test_aggregates.py's audit
AUDIT_ROWS = {"au_a": [0, 1, 2], "au_b": [0, 1, 2, 10]}


def audit_tables():
    for name, xs in AUDIT_ROWS.items():
        SQL.psql("CREATE TABLE IF NOT EXISTS %s (trial int, tk int, x float8); "
                   "SELECT create_distributed_table('%s', 'trial'); "
                   "INSERT INTO %s SELECT i, i, x FROM generate_series(1, %d) i, unnest(ARRAY%r::float8[]) x;"
                   % (name, name, name, N_PILOT + N_MAIN, xs))


def releases(session, form, table, by, first, n, seed):
    """n releases of form over table's trials first.., one per trial, grouped
    by `by`; the coordinator's generator seeded (the workers' draw from the
    OS's: no seed reaches Citus's connections)."""
    out = session.psql("SELECT dp_seed(%d); SELECT %s FROM %s WHERE trial BETWEEN %d AND %d GROUP BY %s"
                     % (seed, form, table, first, first + n - 1, by))[1:]
    assert len(out) == n
    return " ".join(r[0] for r in out)


def audit(session, form, by):
    """(eps_lb, summary) of form on (au_a, au_b), its releases grouped by `by`."""
    seed = zlib.crc32(("%s|%s" % (form, by)).encode()) * 4
    lines = [releases(session, form, "au_a", by, 1, N_PILOT, seed),
             releases(session, form, "au_b", by, 1, N_PILOT, seed + 1),
             releases(session, form, "au_a", by, N_PILOT + 1, N_MAIN, seed + 2),
             releases(session, form, "au_b", by, N_PILOT + 1, N_MAIN, seed + 3)]
    r = subprocess.run([TOOL, "audit", "1"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                       check=True)
    out = r.stdout.splitlines()
    return float(out[0].split()[1]), out[1]


class C_Audit(unittest.TestCase):
    """Seeded releases on two neighbouring distributed tables, in both plans:
    the Clopper-Pearson lower bound on the realised epsilon stays at or below
    the claim, and the same audit proves more than the claim of a release
    made at twice the epsilon (it can fail)."""

    LN2 = 0.6931471805599453
    PLANS = {"pushed down": "trial", "partial": "tk"}

    @classmethod
    def setUpClass(cls):
        audit_tables()
        cls.seeded = COORD.session()  # dp_seed's session: a seeded one refuses releases once a ledger is attached

    @classmethod
    def tearDownClass(cls):
        cls.seeded.close()

    def test_plans(self):
        for plan, by in self.PLANS.items():
            text = explain("SELECT private_count(0.5) FROM au_a GROUP BY %s" % by)
            self.assertEqual("worker_partial_agg" in text, plan == "partial", text)

    def check(self, form, claim, over):
        for plan, by in self.PLANS.items():
            with self.subTest(form=form, plan=plan):
                eps_lb, summary = audit(self.seeded, form, by)
                print("[citus audit] %s %s%s: %s" % (plan, form, " (self-check)" if over else "", summary),
                      file=sys.stderr)
                if over:
                    self.assertGreater(eps_lb, claim, "the audit no longer detects %s claimed at %g: %s"
                                       % (form, claim, summary))
                else:
                    self.assertLessEqual(eps_lb, claim, summary)

    def test_private_count(self):
        self.check("private_count(0.5)", self.LN2, over=False)

    def test_laplace_sum(self):
        self.check("laplace_sum(x, 1.0, 0, 10)", 1.0, over=False)

    def test_the_audit_catches_an_over_claim(self):
        # alpha 0.25 is epsilon ln 4 = 2 ln 2, claimed at ln 2; laplace_sum at 2.0 claimed at 1.0
        self.check("private_count(0.25)", self.LN2, over=True)
        self.check("laplace_sum(x, 2.0, 0, 10)", 1.0, over=True)


class C_Privileges(unittest.TestCase):
    """Who may call what under Citus. Citus's worker_partial_agg and
    coord_combine_agg check the caller's EXECUTE on the wrapped aggregate's
    support functions (PostgreSQL checks the aggregate owner's), which optdp
    revokes from PUBLIC: a role without it is refused the partial plan, and
    runs the pushed-down one. worker_partial_agg written by hand is not
    restricted further: on the coordinator Citus evaluates it over the rows
    it pulls, where its first argument is no constant and optdp finds no call
    (no release, no state); on a worker, over a shard, it returns the shard's
    exact state, and only to a role that may read the shard and execute the
    support functions, which could read the same with count(*). A check of
    "a query Citus sent" would rest on application_name, which any session
    sets."""

    @classmethod
    def setUpClass(cls):
        SQL.psql("CREATE ROLE analyst LOGIN; GRANT SELECT ON t TO analyst;")  # Citus propagates both to the workers
        cls.shard, node = SQL.psql("SELECT shard_name, nodename FROM citus_shards WHERE table_name = 't'::regclass "
                                   "ORDER BY 1 LIMIT 1")[0]
        cls.worker = [w for w in WORKERS if w.socket_dir == node][0]

    def test_the_partial_plan_needs_execute_on_the_support_functions(self):
        self.assertEqual(len(SQL.psql("SET ROLE analyst; SELECT id, private_count(0.5) FROM t WHERE id <= 3 "
                                      "GROUP BY id; RESET ROLE;")), 3)
        self.assertEqual(SQL.error_of("SET ROLE analyst; SELECT private_count(0.5) FROM t"),
                         "permission denied for function optdp_count_final")
        SQL.psql("RESET ROLE")

    def test_hand_written_worker_partial_agg(self):
        call = "worker_partial_agg('private_count(float8)'::regprocedure, 0.5::float8)"
        self.assertEqual(SQL.error_of("SELECT %s FROM t" % call), catalogued("plan/no_parameters", "private_count"))
        self.assertEqual(self.worker.error_of("SET ROLE analyst; SELECT %s FROM %s" % (call, self.shard)),
                         "permission denied for function optdp_count_final")
        exact = int(self.worker.psql("SELECT count(*) FROM %s" % self.shard)[0][0])
        state = self.worker.psql("SELECT %s FROM %s" % (call, self.shard))[0][0]
        self.assertEqual(int.from_bytes(bytes.fromhex(state[2:18]), "little"), exact)


class D_Budget(unittest.TestCase):
    """One budget, the coordinator's, binds every release: the coordinator
    charges what it releases (the partial plan), the workers charge what Citus
    pushes down to them on the coordinator's ledger (optdp.ledger_conninfo),
    and a worker without it refuses."""

    TOTAL = 45.0

    @classmethod
    def setUpClass(cls):
        SQL.psql("SELECT dp_ledger_attach(%r)" % cls.TOTAL)

    def test_1_pushed_down_charges_the_coordinator(self):
        n0, spent0, w0 = ledger()
        self.assertEqual(len(SQL.psql("SELECT id, private_count(0.5) FROM t WHERE id <= 20 GROUP BY id")), 20)
        self.assertEqual(len(SQL.psql("SELECT id, private_count(x, 0.5) FROM t WHERE id <= 5 GROUP BY id")), 5)
        n, spent, w = ledger()
        self.assertEqual(n - n0, 25)  # one charge per release
        self.assertAlmostEqual(spent - spent0, 25 * LN2, places=9)
        self.assertEqual(w, 0)

    def test_2_partial_charges_the_coordinator(self):
        n0, spent0, _ = ledger()
        SQL.psql("SELECT private_count(0.5) FROM t")
        SQL.psql("SELECT k, private_count(0.5) FROM t GROUP BY k")
        SQL.psql("SELECT k, private_count(x, 0.5) FROM t GROUP BY k")
        n, spent, w = ledger()
        self.assertEqual(n - n0, 21)
        self.assertAlmostEqual(spent - spent0, 21 * LN2, places=9)
        self.assertEqual(w, 0)

    def test_2_states_charge_nothing_merges_once(self):
        # a *_state form releases nothing: no charge in either plan; a merge
        # of states in a distributed table, pushed down, is one release per
        # group, charged on the coordinator's ledger (alpha 0.9: epsilon
        # ln(1/0.9), so that the budget's later tests keep their margins)
        states_table()
        n0, spent0, _ = ledger()
        for sql in ("SELECT %s FROM t", "SELECT k, %s FROM t GROUP BY k", "SELECT id, %s FROM t WHERE id <= 5 GROUP BY id"):
            for form in ("private_count_state(0.5)", "private_count_state(x, 0.5)", "private_select_state(k, x, 1.0)"):
                self.assertGreater(len(SQL.psql(sql % form)), 0)
        self.assertEqual(ledger(), (n0, spent0, 0))
        self.assertEqual(len(SQL.psql("SELECT id, private_count_merge(s, 0.9) FROM st WHERE id <= 5 GROUP BY id")), 5)
        # in the partial plan, one release ungrouped and one per group of k, charged on the coordinator
        self.assertEqual(len(SQL.psql("SELECT private_count_merge(s, 0.9) FROM st")), 1)
        self.assertEqual(len(SQL.psql("SELECT k, private_count_merge(s, 0.9) FROM st GROUP BY k")), 10)
        n, spent, w = ledger()
        self.assertEqual(n - n0, 16)
        self.assertAlmostEqual(spent - spent0, 16 * math.log(1 / 0.9), places=9)
        self.assertEqual(w, 0)
        # a state refused as given twice (after its admission) releases nothing more
        SQL.psql("CREATE TABLE IF NOT EXISTS st5 (id int, s bytea); SELECT create_distributed_table('st5', 'id'); "
                 "INSERT INTO st5 SELECT i, s FROM (SELECT private_count_state(x, 0.9) AS s FROM t OFFSET 0) a, "
                 "generate_series(1, 2) i")
        self.assertIsNotNone(SQL.error_of("SELECT id % 1, private_count_merge(s, 0.9) FROM st5 GROUP BY 1"))
        self.assertEqual(ledger()[0], n)

    def test_3_worker_without_the_coordinators_ledger_refuses(self):
        def set_conninfo(workers, value):
            set_setting(workers, "optdp.ledger_conninfo", value, COORD.conninfo() if value is None else value)

        sql = "SELECT id, private_count(0.5) FROM t WHERE %s GROUP BY id"
        try:
            # Both workers without the coordinator's ledger: every pushed-down
            # release is refused before its scan, with rows or without, and
            # nothing is charged.
            set_conninfo(WORKERS, "")
            n0, spent0, _ = ledger()
            errors = [SQL.error_of(sql % cond) for cond in ("id <= 20", "id < 0")]
            self.assertEqual(errors[0], errors[1])
            self.assertEqual(errors[0], catalogued("citus/worker_without_ledger", "private_count"))
            # a merge pushed down is a release too; a *_state form is none, and runs
            for cond in ("id <= 20", "id < 0"):
                self.assertEqual(SQL.error_of("SELECT id, private_count_merge(s, 0.9) FROM st WHERE %s GROUP BY id"
                                              % cond), catalogued("citus/worker_without_ledger", "private_count_merge"))
            self.assertEqual(len(SQL.psql("SELECT id, private_count_state(0.5) FROM t WHERE id <= 5 GROUP BY id")), 5)
            self.assertEqual(ledger(), (n0, spent0, 0))
            # the partial plan releases on the coordinator: charged there
            SQL.psql("SELECT private_count(0.5) FROM t")
            self.assertEqual(ledger()[0], n0 + 1)
            # One worker without it: the statement is refused (the other
            # worker's groups may be charged before the refusal arrives:
            # charged, never released).
            set_conninfo(WORKERS[1:], None)
            self.assertEqual(SQL.error_of(sql % "id <= 20"), catalogued("citus/worker_without_ledger", "private_count"))
        finally:
            set_conninfo(WORKERS, None)

    def test_4_the_budget_refuses_across_nodes(self):
        # 47 or more releases at ln 2 are charged by now (over 32.5 of 45): 20 more exceed it
        err = SQL.error_of("SELECT id, private_count(0.5) FROM t WHERE id <= 20 GROUP BY id")
        self.assertIsNotNone(err)
        self.assertIn("budget", err)
        _, spent, _ = ledger()
        self.assertLessEqual(spent, self.TOTAL)
        err = SQL.error_of("SELECT private_count(0.001) FROM t")  # ln 1000 = 6.9 > what is left
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
    TOOL = os.path.abspath(sys.argv.pop(1))
    CATALOGUE = os.path.abspath(sys.argv.pop(1))
    unittest.main()
