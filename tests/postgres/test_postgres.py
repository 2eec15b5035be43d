"""optdp on PostgreSQL 15: the extension in servers the suite starts itself.

Usage: test_postgres.py <build>/postgres [unittest args]
The servers (pgserver.py) run as an unprivileged user on Unix sockets in
temporary directories and are always stopped. Randomised outputs are checked
with chi-square tests against the exact laws (fixed seeds, dp_seed), never
against golden values.
"""
import math
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sql"))
import catalogue  # noqa: E402  (the messages of the sums' one-array form)

MODULE_DIR = None
SERVER = None
P_MIN = 1e-4  # a law is rejected below this p-value (fixed seeds: the outcome is reproducible)

PARALLEL = ("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
            "SET max_parallel_workers_per_gather = 2; SET force_parallel_mode = on; ")
SERIAL = "SET max_parallel_workers_per_gather = 0; "

# Every aggregate form, called on table t (columns g, k, x).
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
]


# ---- statistics (standard library only) -------------------------------------
def _gammaincc(a, x):
    """The regularised upper incomplete gamma Q(a, x)."""
    if x <= 0:
        return 1.0
    if x < a + 1:  # series for P
        term = total = 1.0 / a
        n = a
        for _ in range(10000):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return 1.0 - total * math.exp(-x + a * math.log(x) - math.lgamma(a))
    b = x + 1 - a  # continued fraction for Q (Lentz)
    c = 1e300
    d = 1 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def chi_square_p(observed, probs):
    """p-value of counts `observed` (dict bin -> count) against probabilities
    `probs` (dict bin -> p, summing to 1 with the tail bin None); bins with an
    expected count below 5 are pooled into the tail."""
    n = sum(observed.values())
    assert set(observed) <= set(probs), "an outcome outside the law's support: %r" % (set(observed) - set(probs))
    exp_bins, obs_bins = [], []
    tail_e = tail_o = 0.0
    for b, p in probs.items():
        if n * p >= 5:
            exp_bins.append(n * p)
            obs_bins.append(observed.get(b, 0))
        else:
            tail_e += n * p
            tail_o += observed.get(b, 0)
    exp_bins.append(tail_e)
    obs_bins.append(tail_o)
    stat = sum((o - e) ** 2 / e for o, e in zip(obs_bins, exp_bins) if e > 0)
    df = len(exp_bins) - 1
    return _gammaincc(df / 2, stat / 2)


def two_sample_p(a, b, edges):
    """p-value of the chi-square test that samples a and b have one law, binned by edges."""
    def hist(xs):
        h = [0] * (len(edges) + 1)
        for x in xs:
            h[sum(1 for e in edges if x >= e)] += 1
        return h
    ha, hb = hist(a), hist(b)
    na, nb = len(a), len(b)
    stat, df = 0.0, -1
    for oa, ob in zip(ha, hb):
        tot = oa + ob
        if tot == 0:
            continue
        df += 1
        ea, eb = tot * na / (na + nb), tot * nb / (na + nb)
        stat += (oa - ea) ** 2 / ea + (ob - eb) ** 2 / eb
    return _gammaincc(df / 2, stat / 2)


def geometric_law(alpha, width=200):
    """Two-sided geometric: P(z) = (1 - a) / (1 + a) a^|z|, z in [-width, width] (the rest is below 1e-60)."""
    probs = {z: (1 - alpha) / (1 + alpha) * alpha ** abs(z) for z in range(-width, width + 1)}
    return probs


def sum_grid(eps, delta):
    """The grid step g of the sums (core/staircase.hpp, Grid) for [0, delta]."""
    c = math.exp(eps / 2) / math.expm1(eps)
    s = delta * min(max(c, 2.0 ** -20), 1.0)
    return 2.0 ** (math.floor(math.log2(s)) - 20)


def staircase_bins(eps, D, r, kmax=60):
    """The integer staircase (b = e^-eps, D, r) binned by step k = floor(|i| / D)
    and by part (high: |i| mod D < r, low otherwise)."""
    b = math.exp(-eps)
    a = (1 - b) / (2 * r + 2 * b * (D - r) - (1 - b))
    probs = {}
    for k in range(kmax):
        probs[(k, "high")] = a * (2 * r * b ** k - (1 if k == 0 else 0))
        probs[(k, "low")] = 2 * a * (D - r) * b ** (k + 1)
    return probs


def staircase_bin(i, D, r):
    k, m = divmod(abs(i), D)
    return (k, "high" if m < r else "low")


# ---- tests --------------------------------------------------------------------
GROUPS = 3000  # releases per query (one per group)
PER_GROUP = 12  # rows per group, of which 8 have x = 2 and 4 have x NULL
TABLE = ("SELECT g, g %% %d AS k, CASE WHEN (g / %d) %% 3 = 0 THEN NULL ELSE 2.0 END::float8 AS x "
         "FROM generate_series(0, %d) g" % (GROUPS, GROUPS, GROUPS * PER_GROUP - 1))


# Shipped states are authenticated with the key in the file optdp.state_key_file names
# (extension/postgres/states.cpp), which optdp honours only when preloaded: the
# coordinator and the shards share it. pgserver.Server(..., state_key=KEY) writes the file.
STATE_KEY = "8f" * 32
OTHER_KEY = "8e" * 32
FORGED_MESSAGE = ("%s: state is not a state this cluster shipped (its authentication tag does not verify; "
                  "shards and coordinator must share the key of optdp.state_key_file)")


def keyed(key=STATE_KEY):
    """Server(MODULE_DIR, **keyed()): optdp preloaded, the key in a file of the server's."""
    return {"settings": ["shared_preload_libraries = 'optdp_pg'"], "state_key": key}


def set_state_key(server, key):
    """Writes key into the server's key file (None: back to STATE_KEY); the server reads
    it again at its next use, as the file is a new one."""
    server.write_state_key(STATE_KEY if key is None else key)


def set_state_key_file(server, path):
    """Sets optdp.state_key_file by ALTER SYSTEM (None: back to postgresql.conf's) and
    waits until new sessions see it."""
    server.psql("ALTER SYSTEM %s; SELECT pg_reload_conf()"
                % ("SET optdp.state_key_file = '%s'" % path if path is not None else "RESET optdp.state_key_file"))
    want = server.state_key_path if path is None else path
    for _ in range(200):
        if server.psql("SELECT current_setting('optdp.state_key_file') = '%s'" % want) == [["t"]]:
            return
        time.sleep(0.05)
    raise AssertionError("optdp.state_key_file was not reloaded")


# a private_count state whose 8 bytes of rows are g's (little-endian), with alpha 0.5
FORGED_COUNT = ("decode((SELECT string_agg(substr(lpad(to_hex(g), 16, '0'), i * 2 + 1, 2), '' ORDER BY i DESC) "
                "FROM generate_series(0, 7) i) || '000000000000e03f', 'hex')")


def setUpModule():
    global SERVER
    SERVER = Server(MODULE_DIR, **keyed())
    SERVER.__enter__()
    # t: GROUPS groups k of 3 rows each, x = 2 in every row, one row of x NULL per group
    SERVER.psql("CREATE EXTENSION optdp; CREATE EXTENSION dblink; CREATE TABLE t AS %s; ANALYZE t;" % TABLE)


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


class Parallel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.S = SERVER.session()  # one kept connection (pgserver.Session)

    @classmethod
    def tearDownClass(cls):
        cls.S.close()

    def test_every_aggregate_has_a_partial_plan(self):
        for form in FORMS:
            plan = "\n".join(r[0] for r in self.S.psql(PARALLEL + "EXPLAIN (COSTS OFF) SELECT %s FROM t" % form))
            i, j, k = plan.find("Finalize Aggregate"), plan.find("Gather"), plan.find("Partial Aggregate")
            self.assertTrue(0 <= i < j < k, form + ":\n" + plan)
            plan = "\n".join(r[0] for r in self.S.psql(PARALLEL + "EXPLAIN (COSTS OFF) SELECT k, %s FROM t GROUP BY k"
                                                       % form))
            self.assertIn("Finalize HashAggregate", plan, form + ":\n" + plan)
            self.assertIn("Partial HashAggregate", plan, form + ":\n" + plan)

    def test_states_made_in_a_single_copy_worker_merge_on_the_leader(self):
        # The *_state forms are PARALLEL SAFE, so PostgreSQL may put a whole one in
        # a worker under a single-copy Gather (here forced: no partial scan). The
        # worker's state must be one the leader's merge opens (the same key) and
        # counts once (its nonce, recorded by the merge on the leader).
        one = ("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = '8GB'; "
               "SET max_parallel_workers_per_gather = 2; SET force_parallel_mode = on; ")
        rows, with_x = GROUPS * PER_GROUP, GROUPS * PER_GROUP * 2 // 3  # x = 2 in two rows of three
        exact = {"count": rows, "sum": 2 * with_x}
        for kind, state, merge in (("count", "private_count_state(1e-12)", "private_count_merge(s, 1e-12)"),
                                   ("count", "private_count_state(x, 1e-12)", "private_count_merge(s, 1e-12)"),
                                   ("sum", "staircase_sum_state(x, 1000, 0, 10)", "staircase_sum_merge(s, 1000, 0, 10)"),
                                   ("sum", "laplace_sum_state(x, 1000, 0, 10)", "laplace_sum_merge(s, 1000, 0, 10)"),
                                   ("count", "gaussian_count_state(1e6)", "gaussian_count_merge(s, 1e6)")):
            plan = [r[0].strip() for r in self.S.psql(one + "EXPLAIN (COSTS OFF) SELECT %s FROM t" % state)]
            self.assertEqual(plan[:4], ["Gather", "Workers Planned: 1", "Single Copy: true", "->  Aggregate"], state)
            shipped = self.S.psql(one + "SELECT %s FROM t" % state)[-1][0]
            value = float(self.S.psql("SELECT %s FROM (VALUES ('%s'::bytea)) v(s)" % (merge, shipped))[0][0])
            want = with_x if state.startswith("private_count_state(x") else exact[kind]
            self.assertAlmostEqual(value, want, delta=0.5, msg=state)  # noise of sd below 0.02
            twice = "SELECT %s FROM (VALUES ('%s'::bytea), ('%s'::bytea)) v(s)" % (merge, shipped, shipped)
            self.assertIn("state was already merged in this transaction", self.S.error_of(twice), state)

    def test_empty_input_releases_in_both_plans(self):
        # g < 0 matches no row: 0 + noise, never NULL, never an error
        for mode in (SERIAL, PARALLEL):
            for form in FORMS:
                rows = self.S.psql(mode + "SELECT %s IS NOT NULL FROM t WHERE g < 0" % form)
                self.assertEqual(rows, [["t"]], form)


class Laws(unittest.TestCase):
    def count_noise(self, mode, form, true_count, seed):
        if mode is PARALLEL:
            plan = SERVER.psql(mode + "EXPLAIN (COSTS OFF) SELECT %s FROM t GROUP BY k" % form)
            self.assertIn("Partial", "\n".join(r[0] for r in plan))
        rows = SERVER.psql(mode + "SELECT dp_seed(%d); SELECT %s FROM t GROUP BY k" % (seed, form))
        return [int(r[0]) - true_count for r in rows[1:]]

    def test_private_count_law_serial_and_parallel(self):
        law = geometric_law(0.5)
        for mode, seed in ((SERIAL, 1), (PARALLEL, 2)):
            for form, n in (("private_count(0.5)", PER_GROUP), ("private_count(x, 0.5)", 8)):
                noise = self.count_noise(mode, form, n, seed)
                self.assertEqual(len(noise), GROUPS)
                obs = {}
                for z in noise:
                    obs[z] = obs.get(z, 0) + 1
                p = chi_square_p(obs, law)
                self.assertGreater(p, P_MIN, "%s %s" % (form, "parallel" if mode is PARALLEL else "serial"))

    def test_empty_input_law(self):
        # one release per statement: the group-less aggregate over no row (serially: a
        # parallel plan starts workers per statement, ~0.1 s; it runs the same final function)
        law = geometric_law(0.5)
        for mode in (SERIAL,):
            sql = mode + "SELECT dp_seed(7);" + "SELECT private_count(0.5) FROM t WHERE g < 0;" * 1000
            obs = {}
            for r in SERVER.psql(sql)[1:]:
                obs[int(r[0])] = obs.get(int(r[0]), 0) + 1
            self.assertGreater(chi_square_p(obs, law), P_MIN)

    def test_staircase_sum_law_serial_and_parallel(self):
        eps, delta = 1.0, 10.0
        g = sum_grid(eps, delta)
        D = round(delta / g)
        r = round(0.5 * D)
        law = staircase_bins(eps, D, r)
        for mode, seed in ((SERIAL, 3), (PARALLEL, 4)):
            rows = SERVER.psql(mode + "SELECT dp_seed(%d); SELECT staircase_sum(x, 1.0, 0, 10, 'gamma=0.5') FROM t "
                                      "GROUP BY k" % seed)
            obs = {}
            for row in rows[1:]:
                i = float(row[0]) / g - 16 / g  # eight rows of x = 2
                self.assertEqual(i, round(i))
                b = staircase_bin(int(i), D, r)
                obs[b] = obs.get(b, 0) + 1
            self.assertGreater(chi_square_p(obs, law), P_MIN, "parallel" if mode is PARALLEL else "serial")

    def test_laplace_sum_law(self):
        # discrete Laplace on the grid with alpha = e^(-eps/D), binned by units of D
        eps, delta = 1.0, 10.0
        g = sum_grid(eps, delta)
        D = round(delta / g)
        b = math.exp(-eps)
        # P(floor(|z| / D) = k): the two-sided geometric with alpha = b^(1/D), summed over a step
        alpha = math.exp(-eps / D)
        c = (1 - alpha) / (1 + alpha)
        probs = {}
        step = c * (1 - alpha ** D) / (1 - alpha)  # sum_{m=0}^{D-1} alpha^m
        for k in range(60):
            probs[k] = 2 * step * b ** k - (c if k == 0 else 0)
        for mode, seed in ((SERIAL, 5), (PARALLEL, 6)):
            rows = SERVER.psql(mode + "SELECT dp_seed(%d); SELECT laplace_sum(x, 1.0, 10) FROM t GROUP BY k" % seed)
            obs = {}
            for row in rows[1:]:
                z = round(float(row[0]) / g - 16 / g)
                obs[abs(z) // D] = obs.get(abs(z) // D, 0) + 1
            self.assertGreater(chi_square_p(obs, probs), P_MIN)


    def test_moments_same_law_serial_and_parallel(self):
        # the noisy mean, variance and stddev: no closed law, so serial against parallel
        for form, edges in (("private_avg(x, 1.0, 0, 10)", [1.0, 1.5, 1.8, 1.9, 2.0, 2.1, 2.2, 2.5, 3.0]),
                            ("private_var(x, 1.0, 0, 10)", [0.01, 0.5, 1, 2, 4, 8]),
                            ("private_stddev(x, 1.0, 0, 10)", [0.01, 0.5, 1, 1.5, 2, 3]),
                            ("private_median(x, 1.0, 0, 10)", [0.5, 1.5, 1.9, 2.0, 2.01, 2.5, 4, 7]),
                            ("private_quantile(x, 0.9, 2.0, 0, 10)", [0.5, 1.5, 1.9, 2.0, 2.01, 2.5, 4, 7])):
            samples = []
            for mode, seed in ((SERIAL, 8), (PARALLEL, 9)):
                # the quantiles' release weighs 4097 candidates (~1 ms): fewer groups
                where = " WHERE k < %d" % (GROUPS // 3) if "quantile" in form or "median" in form else ""
                rows = SERVER.psql(mode + "SELECT dp_seed(%d); SELECT %s FROM t%s GROUP BY k" % (seed, form, where))
                samples.append([float(r[0]) for r in rows[1:]])
            self.assertEqual(len(samples[1]), GROUPS // 3 if where else GROUPS)
            self.assertGreater(two_sample_p(samples[0], samples[1], edges), P_MIN, form)
            mean = sum(samples[0]) / len(samples[0])
            if form.startswith("private_avg"):
                self.assertLess(abs(mean - 2.0), 0.2)  # x = 2 in the 8 rows counted


class Parameters(unittest.TestCase):
    # Its hundreds of statements run on one kept connection (pgserver.Session,
    # each call a new session but for the backend): as psql calls they took
    # most of this file's time.
    @classmethod
    def setUpClass(cls):
        cls.S = SERVER.session()

    @classmethod
    def tearDownClass(cls):
        cls.S.close()

    def assertSameErrorWithAndWithoutRows(self, form, message):
        for mode in (SERIAL, PARALLEL):
            for where in ("", " WHERE g < 0"):
                self.assertEqual(self.S.error_of(mode + "SELECT %s FROM t%s" % (form, where)), message,
                                 form + where)

    def test_messages(self):
        cases = [
            ("private_count(1.5)", "private_count: alpha must be in (0, 1), but is 1.5"),
            ("private_count(x, 0)", "private_count: alpha must be in (0, 1), but is 0"),
            ("private_count(NULL)", "private_count: alpha must be a number, but is NULL"),
            ("staircase_sum(x, 0, 10)", "staircase_sum: eps must be a finite number > 0, but is 0"),
            ("staircase_sum(x, 1, 5, 1)",
             "staircase_sum: lower must be less than upper, but lower is 5 and upper is 1"),
            ("staircase_sum(x, 1, 0, 1, 'l3')",
             "staircase_sum: cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is 'l3'"),
            ("laplace_sum(x, 1, -1)", "laplace_sum: delta must be a finite number > 0, but is -1"),
            ("private_avg(x, 1, 10, 0)", "private_avg: lower must be less than upper, but lower is 10 and upper is 0"),
            ("private_stddev(x, 1, 0, 'infinity')", "private_stddev: upper must be finite, but is inf"),
            ("private_quantile(x, 1.5, 1, 0, 10)", "private_quantile: q must be in [0, 1], but is 1.5"),
            ("private_median(x, 1, 10, 0)", "private_median: lower must be less than upper, but lower is 10 and upper is 0"),
        ]
        for form, message in cases:
            self.assertSameErrorWithAndWithoutRows(form, message)

    def test_merge_messages_with_and_without_rows(self):
        # a merge reads its parameters from the call before its first state, by the
        # release's own reader: the same message with states and without, in both plans
        not_literal = ("must be a literal or a query parameter (optdp fixes the noise before it reads any row), but "
                       "is an expression that can depend on a row")
        cases = [
            ("private_avg_merge(NULL::bytea, 0, 0, 10)", "private_avg_merge: eps must be a finite number > 0, but is 0"),
            ("private_var_merge(NULL::bytea, 1, 0, x)", "private_var_merge: upper " + not_literal),
            ("private_stddev_merge(NULL::bytea, 1, 10, 0)",
             "private_stddev_merge: lower must be less than upper, but lower is 10 and upper is 0"),
            ("private_quantile_merge(NULL::bytea, 1.5, 1, 0, 10)", "private_quantile_merge: q must be in [0, 1], but is 1.5"),
            ("private_median_merge(NULL::bytea, x, 0, 10)", "private_median_merge: eps " + not_literal),
            ("private_count_levels_merge(NULL::bytea, 0.5, 0.1)",
             "private_count_levels_merge: alphas must be strictly increasing (the least private level first), but "
             "alpha_2 is 0.1 after 0.5"),
            ("private_select_merge(NULL::bytea, NULL::int, 0)", "private_select_merge: eps must be a finite number > 0, "
                                                                "but is 0"),
            ("private_select_merge(NULL::bytea, NULL::int, 1, 1, 'gumbel')",
             "private_select_merge: method must be 'exponential' or 'permute_and_flip', but is 'gumbel'"),
        ]
        for form, message in cases:
            self.assertSameErrorWithAndWithoutRows(form, message)
        # with valid parameters a NULL state is refused; no state at all releases
        self.assertEqual(self.S.error_of("SELECT private_avg_merge(NULL::bytea, 1, 0, 10) FROM t"),
                         "private_avg_merge: state must be a private_avg_state state, but is NULL")
        self.assertEqual(len(self.S.psql("SELECT private_avg_merge(NULL::bytea, 1, 0, 10) FROM t WHERE g < 0")), 1)

    def test_a_parameter_that_can_depend_on_a_row_is_refused(self):
        msg = ("private_count: alpha must be a literal or a query parameter (optdp fixes the noise before it reads "
               "any row), but is an expression that can depend on a row")
        self.assertSameErrorWithAndWithoutRows("private_count(x / 10)", msg)
        self.assertSameErrorWithAndWithoutRows("private_count(random())", msg)
        self.assertSameErrorWithAndWithoutRows("private_count((SELECT 0.5::float8))", msg)
        self.assertEqual(self.S.error_of("SELECT staircase_sum(x, 1, 0, k) FROM t"),
                         "staircase_sum: upper must be a literal or a query parameter (optdp fixes the noise before "
                         "it reads any row), but is an expression that can depend on a row")

    def test_a_setting_read_again_is_refused(self):
        # issue 26: current_setting() is STABLE, and each function of the release read it
        # again: set_config in the same statement moved eps (rho) between the rows'
        # quantisation and the final function's noise and charge
        not_literal = ("must be a literal or a query parameter (optdp fixes the noise before it reads any row), but "
                       "is an expression that can depend on a row")
        for form, arg in (("staircase_sum(x, current_setting('my.p')::float8, 0, 1000000)", "eps"),
                          ("gaussian_sum(x, current_setting('my.p')::float8, 0, 1000000)", "rho")):
            for where in ("", " WHERE g < 0"):
                self.assertEqual(self.S.error_of("SET my.p = '1000'; SELECT %s, min(set_config('my.p', '1', false)) "
                                                 "FROM t%s" % (form, where)),
                                 "%s: %s %s" % (form.split("(")[0], arg, not_literal))

    def test_a_function_of_the_data_is_refused(self):
        # issue 26: a STABLE function that reads the table made the charge depend on the rows
        msg = ("private_count: alpha must be a literal or a query parameter (optdp fixes the noise before it reads "
               "any row), but is an expression that can depend on a row")
        self.S.psql("CREATE OR REPLACE FUNCTION alpha_sql() RETURNS float8 STABLE LANGUAGE sql AS "
                    "$$ SELECT 0.5::float8 FROM t WHERE g = 5 UNION ALL SELECT 0.25 LIMIT 1 $$; "
                    "CREATE OR REPLACE FUNCTION alpha_plpgsql() RETURNS float8 STABLE LANGUAGE plpgsql AS "
                    "$$ BEGIN RETURN CASE WHEN EXISTS (SELECT 1 FROM t WHERE g = 5 LIMIT 1) THEN 0.5 ELSE 0.25 END; END $$")
        for f in ("alpha_sql", "alpha_plpgsql"):
            self.assertSameErrorWithAndWithoutRows("private_count(%s())" % f, msg)
            self.assertSameErrorWithAndWithoutRows("private_count(x, %s()::float8)" % f, msg)
        # a PL/pgSQL variable is a query parameter: fixed for the statement, accepted
        self.assertEqual(self.S.psql("DO $$ DECLARE a float8 := 0.5; c int8; BEGIN "
                                     "SELECT private_count(a) INTO c FROM t; END $$"), [])

    def test_support_functions_only_through_optdp_aggregates(self):
        # a superuser's own aggregate over optdp's support functions: refused, not read at random
        self.S.psql("DROP AGGREGATE IF EXISTS my_count(float8); CREATE AGGREGATE my_count(float8) "
                    "(SFUNC = optdp_count_trans, STYPE = bytea, INITCOND = '\\x00000000000000000000000000000000', "
                    "FINALFUNC = optdp_count_final)")
        self.assertEqual(self.S.error_of("SELECT my_count(0.5) FROM t"),
                         "optdp: its support functions work only in its own aggregates, whose calls hold the "
                         "parameters, not in my_count")

    # The parameters carried in the state (aggregate.hpp): a superuser's own
    # aggregates over optdp's support functions show the transition's state
    # (private_* names pass read_call's check), combine states made by
    # different calls, and hand a state of other parameters to a final function.
    RAW = ("DROP AGGREGATE IF EXISTS private_raw_count(float8); DROP AGGREGATE IF EXISTS private_raw_sum(float8, "
           "float8, float8, float8); DROP AGGREGATE IF EXISTS private_raw_gsum(float8, float8, float8, float8); "
           "CREATE AGGREGATE private_raw_count(float8) (SFUNC = optdp_count_trans, STYPE = bytea, "
           "INITCOND = '\\x%s', COMBINEFUNC = optdp_count_combine, PARALLEL = SAFE); "
           "CREATE AGGREGATE private_raw_sum(float8, float8, float8, float8) (SFUNC = optdp_sum_trans, STYPE = bytea, "
           "INITCOND = '\\x%s', COMBINEFUNC = optdp_sum_combine, PARALLEL = SAFE); "
           "CREATE AGGREGATE private_raw_gsum(float8, float8, float8, float8) (SFUNC = optdp_gaussian_sum_trans, "
           "STYPE = bytea, INITCOND = '\\x%s', COMBINEFUNC = optdp_gaussian_sum_combine, PARALLEL = SAFE); "
           "DROP AGGREGATE IF EXISTS private_raw_avg(float8, float8, float8, float8); "
           "CREATE AGGREGATE private_raw_avg(float8, float8, float8, float8) (SFUNC = optdp_avg_trans, "
           "STYPE = bytea, INITCOND = '\\x%s', COMBINEFUNC = optdp_moments_combine, PARALLEL = SAFE); "
           "DROP AGGREGATE IF EXISTS private_raw_quantile(float8, float8, float8, float8, float8); "
           "CREATE AGGREGATE private_raw_quantile(float8, float8, float8, float8, float8) (SFUNC = "
           "optdp_quantile_trans, STYPE = bytea, INITCOND = '', COMBINEFUNC = optdp_quantile_combine, "
           "PARALLEL = SAFE); "
           "DROP AGGREGATE IF EXISTS private_raw_select(anycompatible, float8, float8); "
           "CREATE AGGREGATE private_raw_select(anycompatible, float8, float8) (SFUNC = optdp_select_trans, "
           "STYPE = bytea, INITCOND = '', COMBINEFUNC = optdp_select_combine, PARALLEL = SAFE); "
           % ("00" * 16, "00" * 56, "00" * 48, "00" * 72))
    COMBINES = ("DROP AGGREGATE IF EXISTS my_count_combine(bytea); DROP AGGREGATE IF EXISTS my_sum_combine(bytea); "
                "DROP AGGREGATE IF EXISTS my_gsum_combine(bytea); DROP AGGREGATE IF EXISTS my_avg_combine(bytea); "
                "DROP AGGREGATE IF EXISTS my_quantile_combine(bytea); "
                "DROP AGGREGATE IF EXISTS my_select_combine(bytea); "
                "CREATE AGGREGATE my_avg_combine(bytea) (SFUNC = optdp_moments_combine, STYPE = bytea); "
                "CREATE AGGREGATE my_quantile_combine(bytea) (SFUNC = optdp_quantile_combine, STYPE = bytea); "
                "CREATE AGGREGATE my_select_combine(bytea) (SFUNC = optdp_select_combine, STYPE = bytea); "
                "CREATE AGGREGATE my_count_combine(bytea) (SFUNC = optdp_count_combine, STYPE = bytea); "
                "CREATE AGGREGATE my_sum_combine(bytea) (SFUNC = optdp_sum_combine, STYPE = bytea); "
                "CREATE AGGREGATE my_gsum_combine(bytea) (SFUNC = optdp_gaussian_sum_combine, STYPE = bytea); ")

    # where the parameters are in each combined state's hex
    PARAMS_AT = {"my_count_combine": (16, 32), "my_sum_combine": (32, 112), "my_gsum_combine": (32, 96),
                 "my_avg_combine": (80, 144), "my_quantile_combine": (0, 64), "my_select_combine": (48, 96)}

    def test_the_transition_writes_its_parameters_into_the_state(self):
        self.S.psql(self.RAW)
        rows = int(self.S.psql("SELECT count(*) FROM t")[0][0])
        for mode in (SERIAL, PARALLEL):
            # the count (int64, little-endian), then alpha 0.5 (float8 3fe0000000000000)
            self.assertEqual(self.S.psql(mode + "SELECT encode(private_raw_count(0.5), 'hex') FROM t"),
                             [[rows.to_bytes(8, "little").hex() + "000000000000e03f"]], mode)
            # no rows: the empty state, no parameters yet
            self.assertEqual(self.S.psql(mode + "SELECT encode(private_raw_count(0.5), 'hex') FROM t WHERE g < 0"),
                             [["00" * 16]], mode)
            # a sum's: its parameters after the 16 bytes of the sum, has_params 1
            state = self.S.psql(mode + "SELECT encode(private_raw_sum(x, 1, 0, 10), 'hex') FROM t")[0][0]
            self.assertEqual(state[32:], "000000000000f03f" + "00" * 8 + "0000000000002440" + "00" * 8 + "01000000"
                             + "00" * 4, mode)
            state = self.S.psql(mode + "SELECT encode(private_raw_gsum(x, 0.5, 0, 10), 'hex') FROM t")[0][0]
            self.assertEqual(state[32:], "000000000000e03f" + "00" * 8 + "0000000000002440" + "01000000" + "00" * 4,
                             mode)

    def test_exact_states_whatever_path_each_row_takes(self):
        # The transitions update the state in place on a short path and take the
        # general one for a group's first row, NULL and NaN rows (and a state
        # without parameters); both must give the exact state: the count, the
        # 128-bit sums of grid integers (crossing zero many times: the carry
        # between their two 64-bit words), clamped rows, NaN read as 0. Checked
        # against the sums computed here, serially, in parallel and by group.
        self.S.psql(self.RAW + "DROP AGGREGATE IF EXISTS private_raw_count(float8, float8); "
                    "CREATE AGGREGATE private_raw_count(float8, float8) (SFUNC = optdp_count_trans, STYPE = bytea, "
                    "INITCOND = '\\x%s', COMBINEFUNC = optdp_count_combine, PARALLEL = SAFE); "
                    "DROP TABLE IF EXISTS paths; CREATE TABLE paths AS SELECT i, CASE WHEN i %% 17 = 0 OR i IN (0, 3001) "
                    "THEN NULL WHEN i %% 13 = 0 THEN 'NaN'::float8 WHEN i %% 2 = 0 THEN -(i %% 1500) - 0.5 "
                    "ELSE i %% 1500 + 1 END::float8 AS x FROM generate_series(0, 3001) i; ANALYZE paths;"
                    % ("00" * 16))
        rows = [(int(i), None if x == "NULL" else float(x))
                for i, x in self.S.psql("SELECT i, coalesce(x::text, 'NULL') FROM paths")]
        self.assertEqual(len(rows), 3002)

        def le(hex_text, signed=True):
            return int.from_bytes(bytes.fromhex(hex_text), "little", signed=signed)

        # the grid steps, from one row at the upper bound
        one = "SELECT encode(%s, 'hex') FROM (VALUES (1000::float8)) v(x)"
        sum_q = le(self.S.psql(one % "private_raw_sum(x, 1, -1000, 1000)")[0][0][:32])
        avg_q = le(self.S.psql(one % "private_raw_avg(x, 1, -1000, 1000)")[0][0][:32])
        self.assertTrue(sum_q > 1000 and avg_q > 1000, (sum_q, avg_q))

        def grid(x, q):  # round(clamp(x) / g) with g = 1000 / q, exact (integer x, g a power of two)
            x = 0.0 if x != x else min(max(x, -1000.0), 1000.0)
            return round(x * q / 1000)

        for mode in (SERIAL, PARALLEL):
            for groups in (1, 3):
                got = self.S.psql(mode + "SELECT i %% %d, encode(private_raw_count(0.5), 'hex'), "
                                  "encode(private_raw_count(x, 0.5), 'hex'), "
                                  "encode(private_raw_sum(x, 1, -1000, 1000), 'hex'), "
                                  "encode(private_raw_avg(x, 1, -1000, 1000), 'hex') FROM paths GROUP BY 1 ORDER BY 1"
                                  % groups)
                self.assertEqual(len(got), groups)
                for key, count, count_x, sum_state, avg_state in got:
                    mine = [x for i, x in rows if i % groups == int(key)]
                    values = [x for x in mine if x is not None]
                    where = (mode, groups, key)
                    self.assertEqual(le(count[:16]), len(mine), where)
                    self.assertEqual(le(count_x[:16]), len(values), where)
                    self.assertEqual(le(sum_state[:32]), sum(grid(x, sum_q) for x in values), where)
                    self.assertEqual(sum_state[96:104], "01000000", where)  # has_params
                    self.assertEqual(le(avg_state[:32]), sum(grid(x, avg_q) for x in values), where)
                    self.assertEqual(le(avg_state[64:80]), len(values), where)  # n

    def test_combine_refuses_states_made_with_other_parameters(self):

        self.S.psql(self.RAW + self.COMBINES)
        for combine, made, other in (
                ("my_count_combine", "private_raw_count(0.5)", "private_raw_count(0.25)"),
                ("my_sum_combine", "private_raw_sum(x, 1, 0, 10)", "private_raw_sum(x, 2, 0, 10)"),
                ("my_sum_combine", "private_raw_sum(x, 1, 0, 10)", "private_raw_sum(x, 1, 0, 20)"),
                ("my_gsum_combine", "private_raw_gsum(x, 0.5, 0, 10)", "private_raw_gsum(x, 0.25, 0, 10)"),
                ("my_avg_combine", "private_raw_avg(x, 1, 0, 10)", "private_raw_avg(x, 1, -10, 10)"),
                ("my_quantile_combine", "private_raw_quantile(x, 0.5, 1, 0, 10)",
                 "private_raw_quantile(x, 0.25, 1, 0, 10)"),
                ("my_select_combine", "private_raw_select(g, x, 1)", "private_raw_select(g, x, 2)")):
            states = "SELECT %s AS s FROM t UNION ALL SELECT %s FROM t" % (made, other)
            self.assertEqual(self.S.error_of("SELECT %s(s) FROM (%s) p" % (combine, states)),
                             "%s: cannot combine states made with different parameters" % combine, other)
            # the same parameters, or an empty state (no parameters yet): added, the parameters kept
            for second in ("SELECT %s FROM t" % made, "SELECT %s FROM t WHERE g < 0" % other):
                states = "SELECT %s AS s FROM t UNION ALL %s" % (made, second)
                one, both = self.S.psql("SELECT encode(%s, 'hex') FROM t; SELECT encode(%s(s), 'hex') FROM (%s) p"
                                        % (made, combine, states))
                at = self.PARAMS_AT[combine]
                self.assertEqual(both[0][at[0]:at[1]], one[0][at[0]:at[1]], second)

    def test_levels_states_carry_a_digest_of_their_alphas(self):
        # private_count_levels' state is a count's: it carries its alphas' digest where
        # a count carries its alpha (levels.cpp), so that the count's combine refuses
        # states of other levels, and a levels final function a state of other levels
        self.S.psql("DROP AGGREGATE IF EXISTS private_raw_levels(float8, float8); "
                    "CREATE AGGREGATE private_raw_levels(float8, float8) (SFUNC = optdp_levels_trans, "
                    "STYPE = bytea, INITCOND = '\\x%s', COMBINEFUNC = optdp_count_combine, PARALLEL = SAFE); "
                    % ("00" * 16) + self.COMBINES)
        rows = int(self.S.psql("SELECT count(*) FROM t")[0][0])
        for mode in (SERIAL, PARALLEL):
            state = self.S.psql(mode + "SELECT encode(private_raw_levels(0.5, 0.8), 'hex') FROM t")[0][0]
            self.assertEqual(state[:16], rows.to_bytes(8, "little").hex(), mode)
            self.assertNotEqual(state[16:], "00" * 8, mode)
            self.assertEqual(self.S.psql(mode + "SELECT encode(private_raw_levels(0.5, 0.8), 'hex') FROM t")[0][0],
                             state, mode)
            self.assertNotEqual(self.S.psql(mode + "SELECT encode(private_raw_levels(0.5, 0.9), 'hex') FROM t")[0][0],
                                state, mode)
        states = "SELECT private_raw_levels(0.5, 0.8) AS s FROM t UNION ALL SELECT private_raw_levels(0.5, 0.9) FROM t"
        self.assertEqual(self.S.error_of("SELECT my_count_combine(s) FROM (%s) p" % states),
                         "my_count_combine: cannot combine states made with different parameters")
        same = "SELECT private_raw_levels(0.5, 0.8) AS s FROM t UNION ALL SELECT private_raw_levels(0.5, 0.8) FROM t"
        self.assertEqual(len(self.S.psql("SELECT my_count_combine(s) FROM (%s) p" % same)), 1)
        # a final function of levels handed a state of other levels fails closed
        self.S.psql("CREATE OR REPLACE FUNCTION pass_state(bytea, bytea, float8, float8) RETURNS bytea "
                    "AS 'SELECT $2' LANGUAGE sql; "
                    "DROP AGGREGATE IF EXISTS private_refinal_levels(bytea, float8, float8); "
                    "CREATE AGGREGATE private_refinal_levels(bytea, float8, float8) (SFUNC = pass_state, "
                    "STYPE = bytea, FINALFUNC = optdp_levels_final)")
        made = "(SELECT private_raw_levels(0.5, 0.9) AS s FROM t) p"
        self.assertEqual(self.S.error_of("SELECT private_refinal_levels(s, 0.5, 0.8) FROM %s" % made),
                         "private_refinal_levels: the state was made with other parameters than the call's that "
                         "was admitted and charged, so nothing is released")
        self.assertEqual(len(self.S.psql("SELECT private_refinal_levels(s, 0.5, 0.9) FROM %s" % made)), 1)

    def test_a_final_function_refuses_a_state_of_other_parameters(self):
        # a state handed to the final function by a pass-through transition: the
        # release was admitted and charged at the call's parameters, so a state of
        # other parameters fails closed; a state of the call's releases
        self.S.psql(self.RAW + "CREATE OR REPLACE FUNCTION pass_state(bytea, bytea, float8) RETURNS bytea "
                    "AS 'SELECT $2' LANGUAGE sql; "
                    "CREATE OR REPLACE FUNCTION pass_state(bytea, bytea, float8, float8, float8) RETURNS bytea "
                    "AS 'SELECT $2' LANGUAGE sql; "
                    "CREATE OR REPLACE FUNCTION pass_state(bytea, bytea, float8, float8, float8, float8) RETURNS bytea "
                    "AS 'SELECT $2' LANGUAGE sql; "
                    "DROP AGGREGATE IF EXISTS private_refinal_avg(bytea, float8, float8, float8); "
                    "DROP AGGREGATE IF EXISTS private_refinal_quantile(bytea, float8, float8, float8, float8); "
                    "CREATE AGGREGATE private_refinal_avg(bytea, float8, float8, float8) (SFUNC = pass_state, "
                    "STYPE = bytea, FINALFUNC = optdp_avg_final); "
                    "CREATE AGGREGATE private_refinal_quantile(bytea, float8, float8, float8, float8) (SFUNC = "
                    "pass_state, STYPE = bytea, FINALFUNC = optdp_quantile_final); "
                    "DROP AGGREGATE IF EXISTS private_refinal(bytea, float8); "
                    "DROP AGGREGATE IF EXISTS private_refinal_sum(bytea, float8, float8, float8); "
                    "DROP AGGREGATE IF EXISTS private_refinal_gsum(bytea, float8, float8, float8); "
                    "CREATE AGGREGATE private_refinal(bytea, float8) (SFUNC = pass_state, STYPE = bytea, "
                    "FINALFUNC = optdp_count_final); "
                    "CREATE AGGREGATE private_refinal_sum(bytea, float8, float8, float8) (SFUNC = pass_state, "
                    "STYPE = bytea, FINALFUNC = optdp_staircase_final); "
                    "CREATE AGGREGATE private_refinal_gsum(bytea, float8, float8, float8) (SFUNC = pass_state, "
                    "STYPE = bytea, FINALFUNC = optdp_gaussian_sum_final)")
        refused = "%s: the state was made with other parameters than the call's that was admitted and charged, so " \
                  "nothing is released"
        for final, made, other in (
                ("private_refinal(s, 0.5)", "private_raw_count(0.5)", "private_raw_count(0.25)"),
                ("private_refinal_sum(s, 1, 0, 10)", "private_raw_sum(x, 1, 0, 10)", "private_raw_sum(x, 1, 0, 20)"),
                ("private_refinal_gsum(s, 0.5, 0, 10)", "private_raw_gsum(x, 0.5, 0, 10)",
                 "private_raw_gsum(x, 2, 0, 10)"),
                ("private_refinal_avg(s, 1, 0, 10)", "private_raw_avg(x, 1, 0, 10)", "private_raw_avg(x, 2, 0, 10)"),
                ("private_refinal_quantile(s, 0.5, 1, 0, 10)", "private_raw_quantile(x, 0.5, 1, 0, 10)",
                 "private_raw_quantile(x, 0.75, 1, 0, 10)")):
            name = final.split("(")[0]
            self.assertEqual(self.S.error_of("SELECT %s FROM (SELECT %s AS s FROM t) p" % (final, other)),
                             refused % name, other)
            for same in ("SELECT %s AS s FROM t" % made, "SELECT %s AS s FROM t WHERE g < 0" % other):
                self.assertEqual(self.S.psql("SELECT %s IS NOT NULL FROM (%s) p" % (final, same)), [["t"]], same)

    def rows_read(self, sql):
        # sql refused in a savepoint, and the rows of t it read (t's sequential and
        # index reads, the refusal's included): the transaction's counters after it
        # less before it, since PostgreSQL 15's pg_stat_xact_* also count what the
        # backend's earlier transactions read and it has not reported yet
        reads = ("SELECT coalesce(sum(seq_tup_read), 0) + coalesce(sum(idx_tup_fetch), 0) FROM pg_stat_xact_user_tables "
                 "WHERE relname = 't';")
        out = self.S.psql("\\set ON_ERROR_STOP off\n%sBEGIN; %s SAVEPOINT s; %s; ROLLBACK TO s; %s COMMIT;"
                          % (SERIAL, reads, sql, reads))
        return str(int(out[-1][0]) - int(out[-2][0]))

    def test_no_window_use(self):
        # refused before the scan: main read one row on both neighbours first (the
        # window function's first transition), and a cursor's first FETCH too
        msg = "optdp: its aggregates cannot be used as window functions (every row would be a release)"
        for form in FORMS:
            for over in ("OVER (ORDER BY g)", "OVER ()"):
                self.assertEqual(self.S.error_of("SELECT %s %s FROM t" % (form, over)), msg)
        for form in FORMS[:4] + ["private_count_state(0.5)"]:
            for sql in ("SELECT %s OVER () FROM t" % form, "SELECT g, %s OVER (ORDER BY g) FROM t WHERE g < 0" % form,
                        "SELECT * FROM (SELECT g, %s OVER () AS c FROM t) s WHERE g = 1" % form):
                self.assertEqual(self.S.error_of(sql), msg, sql)
                self.assertEqual(self.rows_read(sql), "0", sql)
            cursor = "DECLARE c CURSOR FOR SELECT g, %s OVER () FROM t; FETCH 1 FROM c" % form
            self.assertEqual(self.S.error_of("BEGIN; " + cursor), msg)
            self.assertEqual(self.rows_read(cursor), "0", cursor)

    def test_no_order_by_or_distinct_inside_the_call(self):
        # Aggref->args holds an ORDER BY's keys after the call's arguments, and main
        # read them as parameters: private_count(0.999999 ORDER BY 1e-300::float8)
        # released at alpha 1e-300, private_count_levels(0.5, 0.8 ORDER BY 0.9::float8)
        # three levels, and staircase_sum(x, 1.0, 0, 10 ORDER BY 5.0::float8) quoted
        # memory as its cost. Refused, before the scan, with rows and without.
        def msg(f):
            return ("%s: ORDER BY and DISTINCT inside the call are not supported (the order of the rows cannot change "
                    "a release; for distinct values, aggregate over SELECT DISTINCT in a subquery)" % f)
        for form in ("private_count(0.999999 ORDER BY 1e-300::float8)", "private_count(x, 0.5 ORDER BY 1e-300::float8)",
                     "private_count_levels(0.5, 0.8 ORDER BY 0.9::float8)",
                     "staircase_sum(x, 1.0, 0, 10 ORDER BY 5.0::float8)", "laplace_sum(x, 1.0, 10 ORDER BY x)",
                     "private_avg(x, 1.0, 0, 10 ORDER BY g)", "private_quantile(x, 0.5, 1.0, 0, 10 ORDER BY x)",
                     "gaussian_count(0.5 ORDER BY 1e-300::float8)", "gaussian_sum(x, 0.5, 0, 10 ORDER BY x DESC)",
                     "private_select(k, x, 1.0 ORDER BY 1e-300::float8)", "private_count(DISTINCT x, 0.5)",
                     "private_count(DISTINCT k, 0.5)", "staircase_sum(DISTINCT x, 1.0, 0, 10)",
                     "private_median(DISTINCT x, 1.0, 0, 10)", "private_select(DISTINCT k, 1.0, 1.0)",
                     "private_count_state(0.5 ORDER BY g)", "staircase_sum_state(DISTINCT x, 1.0, 0, 10)"):
            m = msg(form.split("(")[0])
            self.assertSameErrorWithAndWithoutRows(form, m)
            self.assertSameErrorWithAndWithoutRows("count(*), " + form, m)
            for sql in ("SELECT %s FROM t" % form, "SELECT k, %s FROM t GROUP BY k" % form):
                self.assertEqual(self.rows_read(sql), "0", sql)
        # a parameter after the call's arguments is still read as written
        self.assertEqual(len(self.S.psql("SELECT private_count_levels(0.5, 0.8) FROM t")[0][0].strip("{}").split(",")),
                         2)

    def test_query_parameters_and_constant_expressions(self):
        # a generic plan keeps $1 as a Param: read through the executor, with rows and without
        rows = self.S.psql("SET plan_cache_mode = force_generic_plan; PREPARE q(float8) AS SELECT private_count($1) "
                           "FROM t WHERE g < 0; EXECUTE q(0.5); EXECUTE q(0.25)")
        self.assertEqual(len(rows), 2)
        self.assertEqual(self.S.error_of("SET plan_cache_mode = force_generic_plan; PREPARE q(float8) AS "
                                         "SELECT private_count($1) FROM t WHERE g < 0; EXECUTE q(1.5)"),
                         "private_count: alpha must be in (0, 1), but is 1.5")
        self.assertEqual(len(self.S.psql("SELECT private_count(exp(-1.0)::float8) FROM t")), 1)


class Privileges(unittest.TestCase):
    def test_states_and_support_functions_are_not_public(self):
        SERVER.psql("DROP ROLE IF EXISTS analyst; CREATE ROLE analyst; GRANT SELECT ON t TO analyst; "
                    "GRANT CREATE ON SCHEMA public TO analyst")
        self.assertEqual(len(SERVER.psql("SET ROLE analyst; SELECT private_count(0.5), staircase_sum(x, 1, 10) "
                                         "FROM t")), 1)
        self.assertEqual(SERVER.error_of("SET ROLE analyst; SELECT private_count_state(0.5) FROM t"),
                         "permission denied for aggregate private_count_state")
        self.assertEqual(SERVER.error_of("SET ROLE analyst; SELECT staircase_sum_state(x, 1, 10) FROM t"),
                         "permission denied for aggregate staircase_sum_state")
        # every shipped state is an exact aggregate: not for PUBLIC
        for state in ("private_avg_state(x, 1, 0, 10)", "private_var_state(x, 1, 0, 10)",
                      "private_stddev_state(x, 1, 0, 10)", "private_quantile_state(x, 0.5, 1, 0, 10)",
                      "private_median_state(x, 1, 0, 10)", "private_count_levels_state(0.5, 0.8)",
                      "private_count_levels_of_state(x, 0.5)", "private_select_state(g, x, 1.0)"):
            self.assertEqual(SERVER.error_of("SET ROLE analyst; SELECT %s FROM t" % state),
                             "permission denied for aggregate " + state.split("(")[0])
        # nor the merges (docs/scale.md: a merge adds what it is given, a state given
        # twice counts its rows twice)
        for merge in ("private_count_merge(%s, 0.5)" % FORGED_COUNT, "staircase_sum_merge(NULL::bytea, 1, 10)",
                      "laplace_sum_merge(NULL::bytea, 1, 0, 10)", "private_avg_merge(NULL::bytea, 1, 0, 10)",
                      "private_var_merge(NULL::bytea, 1, 0, 10)", "private_stddev_merge(NULL::bytea, 1, 0, 10)",
                      "private_quantile_merge(NULL::bytea, 0.5, 1, 0, 10)", "private_median_merge(NULL::bytea, 1, 0, 10)",
                      "private_count_levels_merge(NULL::bytea, 0.5)", "private_select_merge(NULL::bytea, NULL::int, 1)"):
            self.assertEqual(SERVER.error_of("SET ROLE analyst; SELECT %s FROM t WHERE g = 35000" % merge),
                             "permission denied for aggregate " + merge.split("(")[0])
        self.assertEqual(SERVER.error_of("SET ROLE analyst; SELECT dp_seed(1)"),
                         "permission denied for function dp_seed")
        self.assertEqual(SERVER.error_of("SET ROLE analyst; CREATE AGGREGATE exact(float8) "
                                         "(SFUNC = optdp_count_trans, STYPE = bytea)"),
                         "permission denied for function optdp_count_trans")


    def test_a_forged_state_is_refused_to_a_role_that_has_the_merge(self):
        # a count state made of a row's value (g = 35000's bytes, alpha 0.5), with and
        # without a tag's room, is refused with a message that quotes nothing of it
        SERVER.psql("DROP ROLE IF EXISTS coordinator; CREATE ROLE coordinator; GRANT SELECT ON t TO coordinator; "
                    "GRANT EXECUTE ON FUNCTION private_count_merge(bytea, float8) TO coordinator")
        # a genuine state's tag, on the forged bytes
        tag = SERVER.psql("SELECT encode(substr(private_count_state(0.5), 17), 'hex') FROM t")[0][0]
        try:
            for role in ("", "SET ROLE coordinator; "):
                for forged in (FORGED_COUNT, FORGED_COUNT + " || decode(repeat('00', 32), 'hex')",
                               FORGED_COUNT + " || decode('%s', 'hex')" % tag):
                    sql = ("%sSELECT private_count_merge(f, 0.5) FROM (SELECT %s f FROM t WHERE g = 35000) a"
                           % (role, forged))
                    self.assertEqual(SERVER.error_of(sql), FORGED_MESSAGE % "private_count_merge", sql)
        finally:
            SERVER.psql("DROP OWNED BY coordinator; DROP ROLE coordinator")

    def test_the_state_key_file_is_hidden_from_other_roles(self):
        SERVER.psql("DROP ROLE IF EXISTS reader; CREATE ROLE reader")
        self.addCleanup(SERVER.psql, "DROP ROLE reader")
        # the superuser's view: the file's path, never the key
        self.assertEqual(SERVER.psql("SHOW optdp.state_key_file"), [[SERVER.state_key_path]])
        refusal = 'must be superuser or have privileges of pg_read_all_settings to examine "optdp.state_key_file"'
        for sql in ("SHOW optdp.state_key_file", "SELECT current_setting('optdp.state_key_file')",
                    "SELECT current_setting('optdp.state_key_file', true)"):
            self.assertEqual(SERVER.error_of("SET ROLE reader; " + sql), refusal, sql)
        self.assertEqual(SERVER.psql("SET ROLE reader; SELECT count(*) FROM pg_settings WHERE name = "
                                     "'optdp.state_key_file'"), [["0"]])
        self.assertNotIn(STATE_KEY, "\n".join("|".join(r) for r in SERVER.psql("SHOW ALL")))
        # SIGHUP: only postgresql.conf (or ALTER SYSTEM) sets it, never a session, a role or a
        # database (pg_db_role_setting, where a role's or database's settings are kept, is public)
        for sql in ("SET optdp.state_key_file = '/tmp/k'", "ALTER ROLE reader SET optdp.state_key_file = '/tmp/k'",
                    "ALTER DATABASE postgres SET optdp.state_key_file = '/tmp/k'"):
            self.assertEqual(SERVER.error_of(sql), 'parameter "optdp.state_key_file" cannot be changed now', sql)
        # the key is no setting at all
        for sql in ("SHOW optdp.state_key", "ALTER SYSTEM SET optdp.state_key = 'k'"):
            self.assertIn('"optdp.state_key"', SERVER.error_of(sql), sql)

    def test_the_state_key_never_reaches_the_server_log(self):
        # PostgreSQL logs a reloaded setting's new value ("parameter ... changed to ..."),
        # superuser-only or not: the key is read from a file, so only its path is logged
        other = os.path.join(os.path.dirname(SERVER.state_key_path), "other.key")
        SERVER.write_state_key(OTHER_KEY + "\n", path=other)
        try:
            set_state_key_file(SERVER, other)
            merge = ("SELECT private_count_merge(s, 0.5) IS NOT NULL FROM (SELECT private_count_state(0.5) s "
                     "FROM t) a")
            self.assertEqual(SERVER.psql(merge), [["t"]])
        finally:
            set_state_key_file(SERVER, None)
        self.assertEqual(SERVER.psql(merge), [["t"]])
        with open(SERVER.log) as f:
            log = f.read()
        self.assertIn('parameter "optdp.state_key_file" changed to', log)
        for key in (STATE_KEY, OTHER_KEY):
            self.assertNotIn(key, log)
            self.assertNotIn(key.upper(), log)


    def test_the_state_key_needs_optdp_preloaded(self):
        # loaded by CREATE EXTENSION or a first call, optdp meets the key's postgresql.conf
        # line as a placeholder, which any role can read in a session that has not loaded
        # optdp yet: so the states and merges refuse unless optdp was preloaded
        with Server(MODULE_DIR, state_key=STATE_KEY) as s:
            s.psql("CREATE EXTENSION optdp; CREATE ROLE reader; CREATE TABLE t AS SELECT 1.0::float8 x")
            self.assertEqual(s.psql("SET ROLE reader; SHOW optdp.state_key_file"), [[s.state_key_path]])
            message = ("%s: shipped states need optdp in shared_preload_libraries (there optdp.state_key_file "
                       "is defined, superuser-only, from the server's start; loaded later, a session meets its "
                       "postgresql.conf line as a placeholder any role can read)")
            for sql in ("SELECT private_count_state(0.5) FROM t",
                        "SELECT private_count_merge(s, 0.5) FROM (SELECT NULL::bytea s WHERE false) a"):
                self.assertEqual(s.error_of(sql), message % sql.split()[1].split("(")[0], sql)


class Ledger(unittest.TestCase):
    """The ledger of database `ledger` (each database has its own)."""
    EPS = 0.6931471805599454  # epsilon_of_alpha(0.5), ln 2 rounded up
    UNITS = 693147180560      # its charge in units of 1e-12, rounded up

    @classmethod
    def setUpClass(cls):
        SERVER.psql("DROP DATABASE IF EXISTS ledger; CREATE DATABASE ledger")
        SERVER.psql("CREATE EXTENSION optdp; CREATE EXTENSION dblink; CREATE TABLE t AS %s; ANALYZE t" % TABLE,
                    db="ledger")

    def setUp(self):
        SERVER.psql("TRUNCATE optdp_budget, optdp_charges", db="ledger")

    def entries(self):
        return int(SERVER.psql("SELECT count(*) FROM dp_ledger_entries", db="ledger")[0][0])

    def test_no_ledger_no_charge(self):
        SERVER.psql("SELECT private_count(0.5) FROM t", db="ledger")
        self.assertEqual(self.entries(), 0)

    def test_a_rolled_back_release_stays_charged(self):
        SERVER.psql("SELECT dp_ledger_attach(7.0); BEGIN; SELECT private_count(0.5) FROM t; "
                    "SELECT staircase_sum(x, 0.25, 10) FROM t WHERE g < 0; ROLLBACK", db="ledger")
        rows = SERVER.psql("SELECT function, epsilon, sql FROM dp_ledger_entries ORDER BY id", db="ledger")
        # psql sends one statement at a time: each entry records its own
        self.assertEqual(rows, [["private_count", repr(self.EPS), "SELECT private_count(0.5) FROM t;"],
                                ["staircase_sum", "0.25", "SELECT staircase_sum(x, 0.25, 10) FROM t WHERE g < 0;"]])

    def test_budget_scalars(self):
        for f in ("dp_budget_spent", "dp_budget_remaining", "dp_delta_spent", "dp_delta_remaining"):
            self.assertEqual(SERVER.error_of("SELECT %s()" % f, db="ledger"),
                             "%s: no privacy ledger is attached to this database (see dp_ledger_attach)" % f)
        SERVER.psql("SELECT dp_ledger_attach(2.0, 1e-6); SELECT private_count(0.5) FROM t", db="ledger")
        row = SERVER.psql("SELECT dp_budget_spent(), dp_budget_remaining(), dp_delta_spent(), dp_delta_remaining()",
                          db="ledger")[0]
        self.assertEqual(float(row[0]), self.UNITS / 1e12)
        self.assertEqual(float(row[1]), (2 * 10**12 - self.UNITS) / 1e12)
        self.assertEqual([float(row[2]), float(row[3])], [0.0, 1e-6])

    def test_refused_when_the_budget_does_not_allow_it(self):
        # 7.0 allows 10 releases at ln 2 (6.93...), not 11
        SERVER.psql("SELECT dp_ledger_attach(7.0);" + "SELECT private_count(0.5) FROM t;" * 10, db="ledger")
        msg = "private_count: privacy budget exhausted: 6.932 of 7 spent, and this release costs 0.6932"
        for where in ("", " WHERE g < 0"):  # the same with rows and without
            self.assertEqual(SERVER.error_of("SELECT private_count(0.5) FROM t" + where, db="ledger"), msg)
        self.assertEqual(self.entries(), 10)

    def test_concurrent_sessions_cannot_overspend(self):
        import subprocess
        SERVER.psql("SELECT dp_ledger_attach(7.0)", db="ledger")
        procs = [subprocess.Popen([SERVER.psql_path, "-X", "-q", "-A", "-t", "-h", SERVER.socket_dir, "-U", "postgres",
                                   "-d", "ledger"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
        # every session's input first, then the outputs: communicate() one session at a
        # time would run them one after another
        for p in procs:
            p.stdin.write("SELECT private_count(0.5) FROM t;" * 5)
            p.stdin.close()
        outs = [(p.stdout.read(), p.stderr.read()) for p in procs]
        for p in procs:
            p.wait()
        released = sum(len(o.splitlines()) for o, _ in outs)
        refused = sum(e.count("privacy budget exhausted") for _, e in outs)
        self.assertEqual((released, refused), (10, 10))
        self.assertEqual(self.entries(), 10)
        self.assertEqual(SERVER.psql("SELECT spent_units FROM optdp_budget", db="ledger"), [[str(10 * self.UNITS)]])

    def test_one_charge_per_release_in_parallel_plans(self):
        SERVER.psql("SELECT dp_ledger_attach(1000000)", db="ledger")
        for mode in (SERIAL, PARALLEL):
            before = self.entries()
            SERVER.psql(mode + "SELECT private_count(0.5) FROM t; SELECT staircase_sum(x, 1, 10) FROM t WHERE g < 0; "
                               "SELECT k % 20, laplace_sum(x, 1, 10) FROM t GROUP BY k % 20", db="ledger")
            self.assertEqual(self.entries() - before, 22)

    def test_no_seed_with_a_ledger(self):
        seeded = "private_count: refused: a privacy ledger is attached, and a known seed makes the noise predictable"
        # seeded before the ledger was attached (in another session): the release is refused, not charged
        self.assertEqual(SERVER.error_of("SELECT dp_seed(1); SELECT * FROM dblink('%s', 'SELECT dp_ledger_attach(7.0)') AS a(x float8); "
                                         "SELECT private_count(0.5) FROM t" % SERVER.conninfo("ledger"), db="ledger"),
                         seeded)
        self.assertEqual(self.entries(), 0)
        self.assertEqual(SERVER.error_of("SELECT dp_seed(1)", db="ledger"),
                         "dp_seed: refused: a privacy ledger is attached, and a known seed makes the noise predictable")
        self.assertEqual(SERVER.psql("SELECT dp_seed(NULL)", db="ledger"), [["os"]])

    def test_a_refused_release_reads_no_row(self):
        # issue 26: the charge was made by the final function, after the scan, so a
        # refused release had read every row of its input, which an analyst without
        # SELECT on the table saw in pg_stat_xact_user_tables
        SERVER.psql("DROP TABLE IF EXISTS patients CASCADE; CREATE TABLE patients AS "
                    "SELECT g, 'w' || (g % 5) AS ward FROM generate_series(1, 10000) g; "
                    "CREATE FUNCTION ward_count(w text, alpha float8) RETURNS int8 LANGUAGE sql SECURITY DEFINER "
                    "AS $$ SELECT private_count(alpha) FROM patients WHERE ward = w $$; "
                    "CREATE FUNCTION ward_counts(alpha float8) RETURNS SETOF int8 LANGUAGE sql SECURITY DEFINER "
                    "AS $$ SELECT private_count(alpha) FROM patients GROUP BY ward $$; "
                    "DROP ROLE IF EXISTS ward_analyst; CREATE ROLE ward_analyst; "
                    "GRANT EXECUTE ON FUNCTION ward_count(text, float8), ward_counts(float8) TO ward_analyst; "
                    "SELECT dp_ledger_attach(1)", db="ledger")
        reads = ("SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
                 "WHERE relname = 'patients';")

        def rows_read(call):
            # the refusal in a savepoint, then the transaction's counters
            out = SERVER.psql("\\set ON_ERROR_STOP off\nSET ROLE ward_analyst; BEGIN; SAVEPOINT s; %s; "
                              "ROLLBACK TO s; %s COMMIT;" % (call, reads), db="ledger")
            return [r for r in out if r != ["t"]][-1]

        for call in ("SELECT ward_count('w3', 1e-300)", "SELECT ward_count('w3', 1e-300) FROM generate_series(1, 3)",
                     "SELECT * FROM ward_counts(1e-300)", "SELECT ward_count('w3', 0.25)"):
            self.assertEqual(SERVER.error_of("SET ROLE ward_analyst; " + call, db="ledger").split(":")[1].strip(),
                             "privacy budget exhausted", call)
            self.assertEqual(rows_read(call), ["0"], call)
        self.assertEqual(self.entries(), 0)
        # a release that is charged reads its rows, which the counters show; the
        # definer function's SET track_counts = off (docs/boundary.md) hides them
        self.assertEqual(rows_read("SELECT ward_count('w3', 0.75) IS NOT NULL"), ["10000"])
        SERVER.psql("ALTER FUNCTION ward_count(text, float8) SET track_counts = off", db="ledger")
        self.assertEqual(rows_read("SELECT ward_count('w3', 0.75) IS NOT NULL"), ["0"])
        self.assertEqual(self.entries(), 2)

    def test_a_ledger_attached_while_a_statement_runs_charges_its_later_releases(self):
        # issue 26: the first release of a statement that found no ledger let the
        # statement's later releases skip the ledger, also after dp_ledger_attach
        attach = ("PERFORM * FROM dblink('%s', 'SELECT dp_ledger_attach(1)') AS a(x float8);"
                  % SERVER.conninfo("ledger"))
        msg = "private_count: privacy budget exhausted: 0.6932 of 1 spent, and this release costs 0.6932"
        for release in ("PERFORM private_count(0.5) FROM t;", "PERFORM k, private_count(0.5) FROM t WHERE k < 3 GROUP BY k;"):
            SERVER.psql("TRUNCATE optdp_budget, optdp_charges", db="ledger")
            self.assertEqual(SERVER.error_of("DO $$ BEGIN %s %s FOR i IN 1..5 LOOP %s END LOOP; END $$"
                                             % (release, attach, release), db="ledger"), msg, release)
            self.assertEqual(self.entries(), 1, release)

    def test_a_statement_stopped_after_its_charge_stays_charged(self):
        # the charge of a release without GROUP BY is committed before the first row;
        # a statement_timeout during the scan stops the release, not the charge
        SERVER.psql("SELECT dp_ledger_attach(100)", db="ledger")
        self.assertEqual(SERVER.error_of("SET statement_timeout = '300ms'; SELECT private_count(0.5) FROM t "
                                         "WHERE pg_sleep(0.01) IS NOT NULL", db="ledger"),
                         "canceling statement due to statement timeout")
        self.assertEqual(self.entries(), 1)

    def test_cursors_and_rescans_are_charged_per_release(self):
        SERVER.psql("SELECT dp_ledger_attach(100)", db="ledger")
        # a cursor: charged at its first FETCH, once; a grouped one, per group fetched
        SERVER.psql("BEGIN; DECLARE c CURSOR FOR SELECT private_count(0.5) FROM t; FETCH 0 FROM c; FETCH 1 FROM c; "
                    "FETCH 1 FROM c; COMMIT; BEGIN; DECLARE d CURSOR FOR SELECT k, private_count(0.5) FROM t "
                    "WHERE k < 3 GROUP BY k; FETCH 1 FROM d; FETCH 1 FROM d; COMMIT", db="ledger")
        self.assertEqual(self.entries(), 3)
        # a correlated sub-query: one release per outer row, each charged
        SERVER.psql("SELECT (SELECT private_count(0.5) FROM t WHERE t.k = o.k) FROM (VALUES (1), (2), (3)) o(k)",
                    db="ledger")
        self.assertEqual(self.entries(), 6)

    def test_states_are_not_charged_the_merge_is_once(self):
        SERVER.psql("SELECT dp_ledger_attach(1000000)", db="ledger")
        SERVER.psql("SELECT private_count_state(0.5) FROM t; SELECT staircase_sum_state(x, 1, 10) FROM t", db="ledger")
        self.assertEqual(self.entries(), 0)
        SERVER.psql("SELECT private_count_merge(s, 0.5) FROM (SELECT private_count_state(0.5) s FROM t "
                    "UNION ALL SELECT private_count_state(0.5) FROM t) a", db="ledger")
        self.assertEqual(self.entries(), 1)
        # every other state and merge: the states are not charged, each merge once, under its own name
        SERVER.psql("TRUNCATE optdp_charges", db="ledger")
        merges = []
        for state, merge in (("private_avg_state(x, 1, 0, 10)", "private_avg_merge(s, 1, 0, 10)"),
                             ("private_var_state(x, 1, 0, 10)", "private_var_merge(s, 1, 0, 10)"),
                             ("private_stddev_state(x, 1, 0, 10)", "private_stddev_merge(s, 1, 0, 10)"),
                             ("private_quantile_state(x, 0.25, 1, 0, 10)", "private_quantile_merge(s, 0.25, 1, 0, 10)"),
                             ("private_median_state(x, 1, 0, 10)", "private_median_merge(s, 1, 0, 10)"),
                             ("private_count_levels_of_state(x, 0.5, 0.8)", "private_count_levels_merge(s, 0.5, 0.8)"),
                             ("private_select_state(g, x, 0.25)", "private_select_merge(s, NULL::int, 0.25)")):
            SERVER.psql("SELECT %s FROM t; SELECT k %% 10, %s FROM t GROUP BY k %% 10" % (state, state), db="ledger")
            self.assertEqual(self.entries(), 0, state)
            merges.append("SELECT %s FROM (SELECT %s s FROM t GROUP BY k %% 2) a" % (merge, state))
        SERVER.psql(";".join(merges), db="ledger")
        self.assertEqual(SERVER.psql("SELECT function, epsilon FROM dp_ledger_entries ORDER BY id", db="ledger"),
                         [["private_avg_merge", "1"], ["private_var_merge", "1"], ["private_stddev_merge", "1"],
                          ["private_quantile_merge", "1"], ["private_median_merge", "1"],
                          ["private_count_levels_merge", repr(self.EPS)], ["private_select_merge", "0.25"]])


class Inputs(unittest.TestCase):
    def test_numeric_values_beyond_float8(self):
        # issue 26: a numeric row beyond float8 made the cast to float8 fail, quoting the
        # row's value; read as +-inf and clamped, it releases as any other row
        with SERVER.session() as S:
            self.numeric_values_beyond_float8(S)

    def numeric_values_beyond_float8(self, S):
        S.psql("DROP TABLE IF EXISTS nums; CREATE TABLE nums AS SELECT 1::numeric AS x FROM generate_series(1, 10)")
        forms = ["staircase_sum(x, 1, 0, 10)", "staircase_sum(x, 1, 10)", "laplace_sum(x, 1, 0, 10)",
                 "gaussian_sum(x, 1, 0, 10)", "private_avg(x, 1, 0, 10)", "private_var(x, 1, 0, 10)",
                 "private_stddev(x, 1, 0, 10)", "private_quantile(x, 0.5, 1, 0, 10)", "private_median(x, 1, 0, 10)",
                 "private_select(x::text, x, 1)"]
        for rows in ("", "INSERT INTO nums VALUES (1e400), (-1e400), ('NaN'), (1e-400);"):
            S.psql(rows)
            for mode in (SERIAL, PARALLEL):
                for form in forms:
                    self.assertEqual(len(S.psql(mode + "SELECT %s FROM nums" % form)), 1, form)
        # an integer column (and a float4 one) still resolves to one form, the float8 one
        for form in forms:
            self.assertEqual(len(S.psql("SELECT %s FROM (SELECT g AS x FROM t) a" % form)), 1, form)
            self.assertEqual(len(S.psql("SELECT %s FROM (SELECT g::float4 AS x FROM t) a" % form)), 1, form)


    def test_polymorphic_forms_resolve_to_one_form(self):
        # private_count(x, alpha), gaussian_count(x, rho), private_count_levels_of
        # and private_select, and their *_state forms, are declared for the
        # common column types as well as for any type
        # (extension/postgres/sql/65-types.sql, for Citus): every type resolves
        # to one form, with the same result (private_select's, and
        # private_select_merge's of its states, in the candidate's own type, a
        # domain's base type), and an untyped literal
        # reads as text. "char" and name cast implicitly to text: without forms
        # of their own they were ambiguous ("char") or became text (name).
        SERVER.psql("DROP TABLE IF EXISTS ty; DROP TYPE IF EXISTS ty_mood; DROP DOMAIN IF EXISTS ty_pos; "
                    "CREATE TYPE ty_mood AS ENUM ('sad', 'ok'); CREATE DOMAIN ty_pos AS int CHECK (VALUE > 0); "
                    "CREATE TABLE ty AS SELECT g, g % 2 = 0 AS c_bool, g::int2 AS c_int2, g::int4 AS c_int4, "
                    "g::int8 AS c_int8, g::float4 AS c_float4, g::float8 AS c_float8, g::numeric AS c_numeric, "
                    "g::text AS c_text, g::varchar(8) AS c_varchar, g::char(4) AS c_bpchar, "
                    "date '2020-01-01' + g AS c_date, timestamp '2020-01-01' + g * interval '1 hour' AS c_timestamp, "
                    "timestamptz '2020-01-01' + g * interval '1 hour' AS c_timestamptz, md5(g::text)::uuid AS c_uuid, "
                    "g::text::name AS c_name, ('x' || g)::\"char\" AS c_char, g * interval '1 s' AS c_interval, ARRAY[g] AS c_array, "
                    "(ARRAY['sad', 'ok'])[g % 2 + 1]::ty_mood AS c_enum, g::ty_pos AS c_domain, "
                    "('{\"a\": ' || g || '}')::jsonb AS c_jsonb, g::oid AS c_oid FROM generate_series(1, 20) g")
        typed = SERVER.psql("SELECT attname, format_type(atttypid, NULL) FROM pg_attribute "
                            "WHERE attrelid = 'ty'::regclass AND attname LIKE 'c\\_%' ORDER BY attnum")
        columns = [r[0] for r in typed]
        self.assertEqual(len(columns), 22)
        for c, typ in typed:
            with self.subTest(column=c):
                rows = SERVER.psql("SELECT private_count({0}, 0.5) IS NOT NULL, gaussian_count({0}, 0.01) IS NOT NULL, "
                                   "cardinality(private_count_levels_of({0}, 0.2, 0.5)), "
                                   "pg_typeof(private_select({0}, g, 1.0))::text = "
                                   "(SELECT pg_typeof({1})::text FROM ty LIMIT 1), "
                                   "length(private_count_state({0}, 0.5)) > 0, length(gaussian_count_state({0}, 0.01)) > 0, "
                                   "length(private_count_levels_of_state({0}, 0.2, 0.5)) > 0, "
                                   "length(private_select_state({0}, g, 1.0)) > 0 FROM ty"
                                   .format(c, c + "::int" if c == "c_domain" else c))  # a domain's base type
                self.assertEqual(rows, [["t", "t", "2", "t", "t", "t", "t", "t"]])
                # private_select_merge of the states, in the candidate's own type (named by NULL::type)
                rows = SERVER.psql("SELECT pg_typeof(private_select_merge(s, NULL::{1}, 1.0))::text = "
                                   "(SELECT pg_typeof({0})::text FROM ty LIMIT 1) "
                                   "FROM (SELECT private_select_state({0}, g, 1.0) AS s FROM ty) a"
                                   .format(c + "::int" if c == "c_domain" else c, "int" if c == "c_domain" else typ))
                self.assertEqual(rows, [["t"]])
        for literal, typ in (("'a'", "text"), ("NULL", "text"), ("1", "integer"), ("1.5", "numeric")):
            with self.subTest(literal=literal):
                self.assertEqual(SERVER.psql("SELECT private_count(%s, 0.5) IS NOT NULL, pg_typeof(private_select(%s, 1, "
                                             "1.0)) FROM t" % (literal, literal)), [["t", typ]])
        # a numeric score still takes the numeric form (no cast that could fail on a row)
        self.assertEqual(SERVER.psql("SELECT pg_typeof(private_select(c_int4, 1e400::numeric * c_int4, 1.0)) FROM ty"),
                         [["integer"]])


def check_explain_example(test, heading):
    """The EXPLAIN block after `heading` in sql/reference.md, run on an empty
    patients(income float8) once optdp is loaded: its output as printed."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sql", "reference.md")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    block = text[text.index(heading):]
    block = block[block.index("```\n") + 4:]
    lines = block[:block.index("```")].rstrip("\n").split("\n")
    sql = lines[0].split("=# ", 1)[1]
    SERVER.psql("DROP TABLE IF EXISTS patients; CREATE TABLE patients (income float8)")
    try:
        got = [r[0] for r in SERVER.psql("SELECT dp_version(); " + sql)[1:]]
    finally:
        SERVER.psql("DROP TABLE patients")
    test.assertEqual(got, [line[1:] for line in lines[1:]])


def generic_plan(prepare, sql):
    """EXPLAIN VERBOSE of sql once optdp is loaded, after `prepare` (a PREPARE of
    p), with generic plans forced."""
    return "\n".join(r[0] for r in SERVER.psql(
        PackedParams.LOAD + prepare + "SET plan_cache_mode = force_generic_plan; EXPLAIN VERBOSE " + sql)[1:])


def ledger_database(db, budget):
    """A new database db with optdp, the table t and a ledger of dp_ledger_attach(budget)."""
    SERVER.psql("DROP DATABASE IF EXISTS %s; CREATE DATABASE %s" % (db, db))
    SERVER.psql("CREATE EXTENSION optdp; CREATE TABLE t AS %s; ANALYZE t; SELECT dp_ledger_attach(%s)" % (TABLE, budget),
                db=db)


class PackedParams(unittest.TestCase):
    """The planner hook (plan.cpp): staircase_sum and laplace_sum calls whose
    parameters are float8 constants are planned in their (x, params float8[])
    form, with the same releases, charges and messages as the others."""
    LOAD = "SELECT dp_seed(7); "  # loads the module (its hook plans the statements after it) and seeds
    CALLS = ["staircase_sum(x, 1.0, 0, 10)", "staircase_sum(x, 1.0, 10)", "laplace_sum(x, 0.5, 0, 10)",
             "laplace_sum(x, 0.5, 10)"]

    def plan(self, sql, mode=SERIAL, db="postgres", load=LOAD):
        return "\n".join(r[0] for r in SERVER.psql(load + mode + "EXPLAIN VERBOSE " + sql, db=db)[1:])

    def test_constant_parameters_are_planned_as_one_array(self):
        for call, array in zip(self.CALLS, ["'{1,0,10}'", "'{1,10}'", "'{0.5,0,10}'", "'{0.5,10}'"]):
            packed = "%s(x, %s::double precision[])" % (call.split("(")[0], array)
            for mode in (SERIAL, PARALLEL):
                for sql in ("SELECT %s FROM t" % call, "SELECT k, %s FROM t GROUP BY k" % call):
                    plan = self.plan(sql, mode)
                    self.assertIn(packed, plan, sql)
                    self.assertNotIn(call, plan, sql)

    def test_other_calls_keep_their_form(self):
        for sql, kept in (
                # a query parameter in a generic plan
                ("EXECUTE p(1.0)", "staircase_sum(x, $1, '0'::double precision, '10'::double precision)"),
                # the form with a cost, and a numeric x
                ("SELECT staircase_sum(x, 1.0, 0, 10, 'l2') FROM t", "'l2'::text"),
                ("SELECT staircase_sum(x::numeric, 1.0, 0, 10) FROM t", "'10'::double precision)"),
                ("SELECT private_avg(x, 1.0, 0, 10) FROM t", "'10'::double precision)")):
            plan = generic_plan("PREPARE p(float8) AS SELECT staircase_sum(x, $1, 0, 10) FROM t; ", sql)
            self.assertIn(kept, plan, sql)
            self.assertNotIn("double precision[]", plan, sql)

    def test_the_same_releases(self):
        # seeded: the rewritten call, the call with a query parameter in a
        # generic plan (not rewritten: checked above) and the array form
        # written by hand release the same values
        for call, by_hand in zip(self.CALLS, ["staircase_sum(x, ARRAY[1.0, 0, 10])", "staircase_sum(x, '{1, 10}')",
                                              "laplace_sum(x, ARRAY[0.5, 0, 10])", "laplace_sum(x, '{0.5, 10}')"]):
            name, params = call.split("(x, ")
            first, rest = params.split(", ", 1)
            prepared = "PREPARE p(float8) AS SELECT %s(x, $1, %s FROM t%%s; SET plan_cache_mode = force_generic_plan; " \
                       "EXECUTE p(%s)" % (name, rest, first)
            # (not parallel and grouped: there the order in which the groups
            # are finalized, so which noise each one takes, varies from run to run)
            for mode, grouped in ((SERIAL, ""), (SERIAL, " GROUP BY k ORDER BY k"), (PARALLEL, "")):
                got = [SERVER.psql(self.LOAD + mode + sql)[1:] for sql in (
                    "SELECT %s FROM t%s" % (call, grouped), prepared % grouped,
                    "SELECT %s FROM t%s" % (by_hand, grouped))]
                self.assertEqual(len(got[0]), GROUPS if grouped else 1)
                self.assertEqual(got[1], got[0], (call, mode, grouped))
                self.assertEqual(got[2], got[0], (call, mode, grouped))

    def test_the_same_charges(self):
        ledger_database("packed", "100.0")
        for call in self.CALLS:
            name, params = call.split("(x, ")
            first, rest = params.split(", ", 1)
            self.assertIn("double precision[]", self.plan("SELECT %s FROM t" % call, db="packed",
                                                          load="SELECT dp_version(); "))
            SERVER.psql("SELECT private_count(0.5); SELECT %s FROM t; PREPARE p(float8) AS SELECT %s(x, $1, %s FROM t; "
                        "SET plan_cache_mode = force_generic_plan; EXECUTE p(%s)" % (call, name, rest, first),
                        db="packed")
        rows = SERVER.psql("SELECT function, epsilon FROM dp_ledger_entries ORDER BY id", db="packed")
        want = []
        for call in self.CALLS:
            eps = call.split(", ")[1]
            want += [["private_count", repr(Ledger.EPS)]] + [[call.split("(")[0], "%g" % float(eps)]] * 2
        self.assertEqual(rows, want)

    def test_messages_of_the_array_form(self):
        # the catalogue's (sql/catalogue.py, POSTGRES_ARRAY_FORM), each for both functions
        for case in catalogue.POSTGRES_ARRAY_FORM:
            for name in catalogue.POSTGRES_ARRAY_FORM_FUNCTIONS:
                self.assertEqual(SERVER.error_of("SELECT %s(x, %s) FROM t" % (name, case["params"])),
                                 case["message"] % name, case)
        # the same messages as the forms with separate parameters
        self.assertEqual(SERVER.error_of("SELECT staircase_sum(x, -1.0, 0, 10) FROM t"),
                         "staircase_sum: eps must be a finite number > 0, but is -1")

    def test_the_references_example(self):
        check_explain_example(self, "**One array of parameters (PostgreSQL).**")

    def test_an_aggregate_of_another_schema_is_not_rewritten(self):
        # a user's staircase_sum of the same arguments, with an array form of
        # its own: neither is optdp's, so the call keeps its form and value
        SERVER.psql("DROP SCHEMA IF EXISTS mine CASCADE; CREATE SCHEMA mine; "
                    "CREATE FUNCTION mine.add(float8, float8, float8, float8, float8) RETURNS float8 "
                    "LANGUAGE sql IMMUTABLE AS 'SELECT $1 + coalesce($2, 0)'; "
                    "CREATE AGGREGATE mine.staircase_sum(float8, float8, float8, float8) "
                    "(SFUNC = mine.add, STYPE = float8, INITCOND = '0'); "
                    "CREATE FUNCTION mine.neg(float8, float8, float8[]) RETURNS float8 "
                    "LANGUAGE sql IMMUTABLE AS 'SELECT $1 - 1'; "
                    "CREATE AGGREGATE mine.staircase_sum(float8, float8[]) (SFUNC = mine.neg, STYPE = float8, "
                    "INITCOND = '0')")
        try:
            plan = self.plan("SELECT mine.staircase_sum(x, 1.0, 0, 10) FROM t")
            self.assertIn("mine.staircase_sum(x, '1'::double precision, '0'::double precision", plan)
            rows = GROUPS * PER_GROUP * 2 // 3  # x = 2 in two rows of three
            self.assertEqual(SERVER.psql(self.LOAD + "SELECT mine.staircase_sum(x, 1.0, 0, 10) FROM t"),
                             [["seeded"], [str(2 * rows)]])
        finally:
            SERVER.psql("DROP SCHEMA mine CASCADE")


class DirectCountParams(unittest.TestCase):
    """The planner hook (plan.cpp): a private_count or gaussian_count call
    whose parameter is a float8 constant is planned with the parameter as its
    direct argument, which nodeAgg evaluates once per group, not per row: the
    same releases, charges and messages as the call as written."""
    LOAD = PackedParams.LOAD
    CALLS = ["private_count(0.5)", "private_count(x, 0.5)", "gaussian_count(0.5)", "gaussian_count(x, 0.5)"]

    def plan(self, sql, mode=SERIAL, db="postgres", load=LOAD):
        return "\n".join(r[0] for r in SERVER.psql(load + mode + "EXPLAIN VERBOSE " + sql, db=db)[1:])

    def test_the_parameter_is_a_direct_argument(self):
        for call in self.CALLS:
            name, args = call.split("(")
            planned = "%s(%s)" % (name, "x" if args.startswith("x") else "")
            for mode in (SERIAL, PARALLEL):
                for sql in ("SELECT %s FROM t" % call, "SELECT k, %s FROM t GROUP BY k" % call):
                    plan = self.plan(sql, mode)
                    self.assertIn(planned, plan, sql)
                    self.assertNotIn("'0.5'::double precision", plan, sql)

    def test_other_calls_keep_their_form(self):
        for sql, kept in (
                # a query parameter in a generic plan
                ("EXECUTE p(0.5)", "private_count(x, $1)"),
                # another count: of levels
                ("SELECT private_count_levels(0.5, 0.25) FROM t", "private_count_levels('0.5'::double precision"),
                # a NULL parameter (refused when run, as written)
                ("SELECT private_count(NULL::float8) FROM t", "private_count(NULL::double precision)")):
            plan = generic_plan("PREPARE p(float8) AS SELECT private_count(x, $1) FROM t; ", sql)
            self.assertIn(kept, plan, sql)

    def test_the_same_releases(self):
        # seeded: the rewritten call and the call with a query parameter in a
        # generic plan (not rewritten: checked above) release the same values,
        # which count the rows (x not NULL) as the built-ins do
        for call in self.CALLS:
            name, args = call.split("(")
            prepared = "PREPARE p(float8) AS SELECT %s(%s$1) FROM t%%s; SET plan_cache_mode = force_generic_plan; " \
                       "EXECUTE p(0.5)" % (name, "x, " if args.startswith("x") else "")
            for mode, grouped in ((SERIAL, ""), (SERIAL, " GROUP BY k ORDER BY k"), (PARALLEL, "")):
                got = [SERVER.psql(self.LOAD + mode + sql)[1:] for sql in (
                    "SELECT %s FROM t%s" % (call, grouped), prepared % grouped)]
                self.assertEqual(len(got[0]), GROUPS if grouped else 1)
                self.assertEqual(got[1], got[0], (call, mode, grouped))
        # and the noise is the count's: one count with and one without NULLs,
        # seeded alike, differ by the rows of x NULL alone
        rows = [SERVER.psql(self.LOAD + SERIAL + "SELECT %s FROM t" % c)[1][0] for c in self.CALLS[:2]]
        self.assertEqual(int(rows[0]) - int(rows[1]), GROUPS * PER_GROUP // 3)

    def test_the_same_charges(self):
        ledger_database("direct", "100.0, 0.5")
        for call in self.CALLS:
            name, args = call.split("(")
            self.assertNotIn("'0.5'", self.plan("SELECT %s FROM t" % call, db="direct", load="SELECT dp_version(); "))
            SERVER.psql("SELECT %s FROM t; PREPARE p(float8) AS SELECT %s(%s$1) FROM t; "
                        "SET plan_cache_mode = force_generic_plan; EXECUTE p(0.5)"
                        % (call, name, "x, " if args.startswith("x") else ""), db="direct")
        rows = SERVER.psql("SELECT function, epsilon, rho FROM dp_ledger_entries ORDER BY id", db="direct")
        self.assertEqual(len(rows), 8)
        for i in range(0, 8, 2):
            self.assertEqual(rows[i], rows[i + 1], rows)
        self.assertEqual([r[0] for r in rows[::2]], [c.split("(")[0] for c in self.CALLS])

    def test_a_transition_state_shared_with_a_call_as_written(self):
        # PostgreSQL's planner gives private_count(0.5) and private_count_state(0.5)
        # one transition state (same transition, arguments and INITCOND); the
        # first is rewritten, the second is not, and nodeAgg calls the
        # transition as either one's: the same rows count, in either order
        for call in ("private_count(0.5)", "private_count(x, 0.5)"):
            state = call.replace("private_count(", "private_count_state(")
            for mode in (SERIAL, PARALLEL):
                alone = SERVER.psql(self.LOAD + mode + "SELECT %s FROM t" % call)[1]
                self.assertEqual(SERVER.psql(self.LOAD + mode + "SELECT %s, %s IS NOT NULL FROM t" % (call, state))[1],
                                 alone + ["t"], (call, mode))
                self.assertEqual(SERVER.psql(self.LOAD + mode + "SELECT %s IS NOT NULL, %s FROM t" % (state, call))[1],
                                 ["t"] + alone, (call, mode))

    def test_the_same_messages(self):
        for sql, message in (
                ("SELECT private_count(1.5) FROM t", "private_count: alpha must be in (0, 1), but is 1.5"),
                ("SELECT private_count(x, 0) FROM t", "private_count: alpha must be in (0, 1), but is 0"),
                ("SELECT k, private_count(0.5) OVER () FROM t", None)):
            got = SERVER.error_of(self.LOAD + sql)
            if message:
                self.assertEqual(got, message, sql)
            else:
                self.assertIn("window functions", got, sql)

    def test_the_references_example(self):
        check_explain_example(self, "**The parameter as a direct argument (PostgreSQL).**")

    def test_an_aggregate_of_another_schema_is_not_rewritten(self):
        SERVER.psql("DROP SCHEMA IF EXISTS mine CASCADE; CREATE SCHEMA mine; "
                    "CREATE FUNCTION mine.add(float8, float8) RETURNS float8 "
                    "LANGUAGE sql IMMUTABLE AS 'SELECT $1 + $2'; "
                    "CREATE AGGREGATE mine.private_count(float8) (SFUNC = mine.add, STYPE = float8, INITCOND = '0')")
        try:
            plan = self.plan("SELECT mine.private_count(0.5) FROM t")
            self.assertIn("mine.private_count('0.5'::double precision)", plan)
            self.assertEqual(SERVER.psql(self.LOAD + "SELECT mine.private_count(0.5) FROM t"),
                             [["seeded"], [str(GROUPS * PER_GROUP // 2)]])
        finally:
            SERVER.psql("DROP SCHEMA mine CASCADE")


class Module(unittest.TestCase):
    def test_no_static_destructors(self):
        # issue 26: PostgreSQL processes leave through exit(), also from signal
        # handlers; a C++ object with static storage and a destructor (the_chain
        # in levels.cpp) then ran, and crashed the postmaster. No function of the
        # module registers a destructor with __cxa_atexit, but for libstdc++'s
        # std::ios_base::Init, which <iostream> (included by Clp's headers) puts in
        # a translation unit: its destructor only flushes the standard streams.
        import re
        import subprocess
        so = os.path.join(MODULE_DIR, "optdp_pg.so")
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", so], capture_output=True, text=True,
                             check=True).stdout
        registered, fn, rdi = set(), None, None
        for line in out.splitlines():
            m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
            if m:
                fn, rdi = m.group(1), None
            elif re.search(r",%rdi\s*#", line):
                rdi = line.split("#", 1)[1].strip()  # the function pointer handed over
            elif fn and not fn.endswith("@plt") and re.search(r"\b(call|jmp)\s.*<__cxa_atexit", line):
                registered.add((fn, rdi))
        self.assertEqual({r for r in registered if not (r[1] or "").endswith("<std::ios_base::Init::~Init()@GLIBCXX_3.4>")},
                         set())


class Shards(unittest.TestCase):
    """Two more servers hold halves of the rows; each ships its exact partial
    states (private_count_state, staircase_sum_state, private_avg_state, ...,
    private_select_state) to the coordinator (the first server) through
    dblink, which merges them and releases once."""

    @classmethod
    def setUpClass(cls):
        cls.shards = []
        try:
            for part in (0, 1):
                s = Server(MODULE_DIR, **keyed())
                s.__enter__()
                cls.shards.append(s)
                # every group k has half of its rows on each shard (g %% 2 would put a group
                # on one shard: GROUPS is even), so that every merge adds two states
                s.psql("CREATE EXTENSION optdp; CREATE TABLE t AS SELECT * FROM (%s) a WHERE (g / %d) %% 2 = %d"
                       % (TABLE, GROUPS, part))
            # the coordinator's statements on one kept connection (pgserver.Session)
            cls.S = SERVER.session()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        # every server is stopped; then the first crash any of them logged is raised
        if getattr(cls, "S", None) is not None:
            cls.S.close()
        failures = []
        for s in cls.shards:
            try:
                s.stop()
            except RuntimeError as e:
                failures.append(e)
        if failures:
            raise failures[0]

    def merged(self, state_sql, merge_call, seed):
        parts = " UNION ALL ".join(
            "SELECT * FROM dblink('%s', '%s') AS s(k int, state bytea)" % (s.conninfo(), state_sql.replace("'", "''"))
            for s in self.shards)
        return self.S.psql("SELECT dp_seed(%d); SELECT k, %s FROM (%s) parts GROUP BY k" % (seed, merge_call, parts))[1:]

    def test_merged_count_has_the_law_of_one_server(self):
        rows = self.merged("SELECT k, private_count_state(x, 0.5) FROM t GROUP BY k",
                           "private_count_merge(state, 0.5)", 11)
        self.assertEqual(len(rows), GROUPS)
        obs = {}
        for r in rows:
            z = int(r[1]) - 8
            obs[z] = obs.get(z, 0) + 1
        self.assertGreater(chi_square_p(obs, geometric_law(0.5)), P_MIN)

    def test_merged_sum_has_the_law_of_one_server(self):
        eps, delta = 1.0, 10.0
        g = sum_grid(eps, delta)
        D = round(delta / g)
        r = round(0.5 * D)
        rows = self.merged("SELECT k, staircase_sum_state(x, 1.0, 0, 10, 'gamma=0.5') FROM t GROUP BY k",
                           "staircase_sum_merge(state, 1.0, 0, 10, 'gamma=0.5')", 12)
        obs = {}
        for row in rows:
            i = float(row[1]) / g - 16 / g
            self.assertEqual(i, round(i))
            b = staircase_bin(int(i), D, r)
            obs[b] = obs.get(b, 0) + 1
        self.assertGreater(chi_square_p(obs, staircase_bins(eps, D, r)), P_MIN)

    def test_merged_moments_and_quantiles_have_the_law_of_one_server(self):
        # no closed law: the merged releases (one per group k, each merging the two
        # shards' states) against one server's releases of the same form, two-sample,
        # binned at the deciles of both samples. The value is y = g / GROUPS (0 to 11:
        # even on one shard, odd on the other), so that a merge that lost a shard's
        # state would move the law.
        y = "(g / %d)::float8" % GROUPS
        for name, params in (("avg", "1.0, 0, 10"), ("var", "1.0, 0, 10"), ("stddev", "1.0, 0, 10"),
                             ("median", "1.0, 0, 10"), ("quantile", "0.75, 2.0, 0, 10")):
            # the quantiles' release weighs 4097 candidates (~1 ms): fewer groups
            where = " WHERE k < %d" % (GROUPS // 3) if name in ("quantile", "median") else ""
            merge = "private_%s_merge(state, %s)" % (name, params)
            rows = self.merged("SELECT k, private_%s_state(%s, %s) FROM t%s GROUP BY k" % (name, y, params, where),
                               merge, 13)
            single = self.S.psql(SERIAL + "SELECT dp_seed(14); SELECT private_%s(%s, %s) FROM t%s GROUP BY k"
                                 % (name, y, params, where))[1:]
            a, b = [float(r[1]) for r in rows], [float(r[0]) for r in single]
            self.assertEqual(len(a), GROUPS // 3 if where else GROUPS)
            self.assertEqual(len(a), len(b))
            pooled = sorted(a + b)
            edges = sorted({pooled[len(pooled) * i // 10] for i in range(1, 10)})
            self.assertGreater(two_sample_p(a, b, edges), P_MIN, merge)

    def test_merged_levels_have_the_law_of_one_server(self):
        # each level of the merged release has the law of one release at its alpha
        for state, n in (("private_count_levels_state(0.5, 0.8)", PER_GROUP),
                         ("private_count_levels_of_state(x, 0.5, 0.8)", 8)):
            rows = self.merged("SELECT k, %s FROM t GROUP BY k" % state, "private_count_levels_merge(state, 0.5, 0.8)",
                               15)
            self.assertEqual(len(rows), GROUPS)
            for level, alpha in ((0, 0.5), (1, 0.8)):
                obs = {}
                for r in rows:
                    z = int(r[1].strip("{}").split(",")[level]) - n
                    obs[z] = obs.get(z, 0) + 1
                self.assertGreater(chi_square_p(obs, geometric_law(alpha)), P_MIN, "%s level %d" % (state, level + 1))

    def test_merged_selection_has_the_law_of_one_server(self):
        # candidates j = g / GROUPS (0..11) in every group k, scored 100 j, spread over the
        # shards; the merged choice against the core's exact law (selection_probabilities),
        # returned in the type of the merge's candidate argument
        scores = [100 * j for j in range(PER_GROUP)]
        for cand, typ, extra, seed in (("'c' || (g / %d)" % GROUPS, "text", "", 16),
                                       ("g / %d" % GROUPS, "integer", ", 1, 'exponential'", 17)):
            method = "exponential" if extra else "permute_and_flip"
            law = [float(r[0]) for r in self.S.psql(
                "SELECT probability FROM selection_probabilities(ARRAY%r, 0.01, 1, '%s') ORDER BY candidate"
                % (scores, method))]
            rows = self.merged("SELECT k, private_select_state(%s, 100.0 * (g / %d), 0.01%s) FROM t GROUP BY k"
                               % (cand, GROUPS, extra),
                               "private_select_merge(state, NULL::%s, 0.01%s), pg_typeof(private_select_merge("
                               "state, NULL::%s, 0.01%s))" % (typ, extra, typ, extra), seed)
            self.assertEqual(len(rows), GROUPS)
            self.assertEqual({r[2] for r in rows}, {typ})
            obs = {}
            for r in rows:
                obs[r[1]] = obs.get(r[1], 0) + 1
            names = ["c%d" % j if typ == "text" else str(j) for j in range(PER_GROUP)]
            self.assertGreater(chi_square_p(obs, dict(zip(names, law))), P_MIN, "%s: %r" % (method, obs))

    def test_selection_of_a_type_that_differs_between_servers(self):
        # an enum of the same name with a label the coordinator lacks: every candidate is
        # read back before the draw, so the merge fails whichever candidate would win
        # (here 'happy' scores far below the others and never would, at eps 1e6)
        self.shards[0].psql("DROP TABLE IF EXISTS moods; DROP TYPE IF EXISTS mood; "
                            "CREATE TYPE mood AS ENUM ('ok', 'sad', 'happy'); "
                            "CREATE TABLE moods AS SELECT 'ok'::mood m, 1.0::float8 s UNION ALL "
                            "SELECT 'sad', 5 UNION ALL SELECT 'happy', -1000")
        parts = ("SELECT * FROM dblink('%s', 'SELECT private_select_state(m, s, 1e6) FROM moods') AS s(state bytea)"
                 % self.shards[0].conninfo())
        self.S.psql("DROP TYPE IF EXISTS mood; CREATE TYPE mood AS ENUM ('ok', 'sad')")
        self.assertEqual(self.S.error_of("SELECT private_select_merge(state, NULL::mood, 1e6) FROM (%s) p" % parts),
                         "private_select_merge: a shipped candidate cannot be read as mood (the candidate's type "
                         "must be defined alike on the shards and the coordinator; the candidate is not shown)")
        self.S.psql("DROP TYPE mood; CREATE TYPE mood AS ENUM ('ok', 'sad', 'happy')")
        self.assertEqual(self.S.psql("SELECT v, pg_typeof(v) FROM (SELECT private_select_merge(state, NULL::mood, 1e6) v "
                                     "FROM (%s) p) a" % parts), [["sad", "mood"]])
        self.S.psql("DROP TYPE mood")

    def test_a_state_of_other_parameters_is_refused(self):
        parts = "SELECT * FROM dblink('%s', 'SELECT private_count_state(0.25) FROM t') AS s(state bytea)" % (
            self.shards[0].conninfo())
        self.assertEqual(self.S.error_of("SELECT private_count_merge(state, 0.5) FROM (%s) p" % parts),
                         "private_count_merge: state was computed with alpha 0.25, but alpha is 0.5")
        # an empty shard's state carries its parameters too
        parts = ("SELECT * FROM dblink('%s', 'SELECT staircase_sum_state(x, 1.0, 10) FROM t WHERE g < 0') "
                 "AS s(state bytea)" % self.shards[0].conninfo())
        self.assertEqual(self.S.error_of("SELECT staircase_sum_merge(state, 2.0, 10) FROM (%s) p" % parts),
                         "staircase_sum_merge: state was computed with (eps, lower, upper) = (1, 0, 10), but they "
                         "are (2, 0, 10)")
        # every later state records its aggregate and its parameters, an empty shard's too
        for state, merge, message in (
                ("private_avg_state(x, 1.0, 0, 10)", "private_avg_merge(state, 1.0, 0, 20)",
                 "private_avg_merge: state was computed with (eps, lower, upper) = (1, 0, 10), but they are (1, 0, 20)"),
                ("private_var_state(x, 0.5, 0, 10)", "private_var_merge(state, 1.0, 0, 10)",
                 "private_var_merge: state was computed with (eps, lower, upper) = (0.5, 0, 10), but they are (1, 0, 10)"),
                # another aggregate's state does not verify: the kind is in its tag
                ("private_avg_state(x, 1.0, 0, 10)", "private_stddev_merge(state, 1.0, 0, 10)",
                 FORGED_MESSAGE % "private_stddev_merge"),
                ("private_quantile_state(x, 0.25, 1.0, 0, 10)", "private_quantile_merge(state, 0.75, 1.0, 0, 10)",
                 "private_quantile_merge: state was computed with (q, eps, lower, upper) = (0.25, 1, 0, 10), but they "
                 "are (0.75, 1, 0, 10)"),
                ("private_median_state(x, 1.0, -10, 10)", "private_median_merge(state, 1.0, 0, 10)",
                 "private_median_merge: state was computed with (eps, lower, upper) = (1, -10, 10), but they are "
                 "(1, 0, 10)"),
                ("private_median_state(x, 1.0, 0, 10)", "private_quantile_merge(state, 0.5, 1.0, 0, 10)",
                 FORGED_MESSAGE % "private_quantile_merge"),
                ("private_count_levels_of_state(x, 0.5, 0.8)", "private_count_levels_merge(state, 0.5, 0.9)",
                 "private_count_levels_merge: state was computed with alphas (0.5, 0.8), but they are (0.5, 0.9)"),
                ("private_count_levels_state(0.5, 0.8)", "private_count_levels_merge(state, 0.5)",
                 "private_count_levels_merge: state was computed with alphas (0.5, 0.8), but they are (0.5)"),
                ("private_select_state(g, x, 1.0)", "private_select_merge(state, NULL::int, 2.0)",
                 "private_select_merge: state was computed with (eps, sensitivity, method) = (1, 1, "
                 "'permute_and_flip'), but they are (2, 1, 'permute_and_flip')"),
                ("private_select_state(g, x, 1.0, 2)", "private_select_merge(state, NULL::int, 1.0, 2, 'exponential')",
                 "private_select_merge: state was computed with (eps, sensitivity, method) = (1, 2, "
                 "'permute_and_flip'), but they are (1, 2, 'exponential')"),
                ("private_select_state(g, x, 1.0)", "private_select_merge(state, NULL::text, 1.0)",
                 "private_select_merge: state was computed with candidates of type integer, but candidate is of "
                 "type text"),
                ("private_count_state(0.5)", "private_avg_merge(state, 1.0, 0, 10)",
                 FORGED_MESSAGE % "private_avg_merge"),
                ("staircase_sum_state(x, 1.0, 10)", "private_count_merge(state, 0.5)",
                 FORGED_MESSAGE % "private_count_merge"),
                ("private_count_levels_state(0.5)", "private_count_merge(state, 0.5)",
                 FORGED_MESSAGE % "private_count_merge")):
            for where in ("", " WHERE g < 0"):
                parts = "SELECT * FROM dblink('%s', 'SELECT %s FROM t%s') AS s(state bytea)" % (
                    self.shards[0].conninfo(), state.replace("'", "''"), where)
                self.assertEqual(self.S.error_of("SELECT %s FROM (%s) p" % (merge, parts)), message, merge + where)


    def shipped(self, shard, state, where=""):
        return "SELECT * FROM dblink('%s', 'SELECT %s FROM t%s') AS s(state bytea)" % (
            shard.conninfo(), state.replace("'", "''"), where)

    def test_a_changed_state_is_refused(self):
        # every byte of a genuine state counts, the nonce's and the tag's too: flipping one
        # bit anywhere (its rows, its alpha, its nonce, its tag) is refused with the one message
        parts = self.shipped(self.shards[0], "private_count_state(x, 0.5)")
        self.assertEqual(self.S.psql("SELECT length(state) FROM (%s) p" % parts), [["64"]])
        for i in (0, 8, 15, 16, 31, 32, 63):
            sql = "SELECT private_count_merge(set_byte(state, %d, get_byte(state, %d) # 1), 0.5) FROM (%s) p" % (
                i, i, parts)
            self.assertEqual(self.S.error_of(sql), FORGED_MESSAGE % "private_count_merge", "byte %d" % i)
        self.assertEqual(self.S.error_of("SELECT private_count_merge(substr(state, 1, 63), 0.5) FROM (%s) p" % parts),
                         FORGED_MESSAGE % "private_count_merge")
        # a state of the format before the nonce (16 bytes and a tag) is refused alike
        self.assertEqual(self.S.error_of("SELECT private_count_merge(substr(state, 1, 16) || substr(state, 33), 0.5) "
                                         "FROM (%s) p" % parts), FORGED_MESSAGE % "private_count_merge")
        # the same state unchanged merges
        self.assertEqual(len(self.S.psql("SELECT private_count_merge(state, 0.5) FROM (%s) p" % parts)), 1)

    def test_servers_with_another_key_are_refused(self):
        set_state_key(self.shards[1], OTHER_KEY)
        try:
            for state, merge in (("private_count_state(0.5)", "private_count_merge(state, 0.5)"),
                                 ("laplace_sum_state(x, 1.0, 0, 10)", "laplace_sum_merge(state, 1.0, 0, 10)"),
                                 ("private_avg_state(x, 1.0, 0, 10)", "private_avg_merge(state, 1.0, 0, 10)"),
                                 ("private_median_state(x, 1.0, 0, 10)", "private_median_merge(state, 1.0, 0, 10)"),
                                 ("private_count_levels_state(0.5)", "private_count_levels_merge(state, 0.5)"),
                                 ("private_select_state(g, x, 1.0)", "private_select_merge(state, NULL::int, 1.0)")):
                parts = self.shipped(self.shards[0], state) + " UNION ALL " + self.shipped(self.shards[1], state)
                self.assertEqual(self.S.error_of("SELECT %s FROM (%s) p" % (merge, parts)),
                                 FORGED_MESSAGE % merge.split("(")[0], merge)
                # the shard that shares the coordinator's key still merges
                self.assertEqual(len(self.S.psql("SELECT %s FROM (%s) p" % (merge, self.shipped(self.shards[0],
                                                                                              state)))), 1)
        finally:
            set_state_key(self.shards[1], None)

    def test_merges_stay_in_the_leader(self):
        # a merge's nonces are counted in one process, or listed in its partial states
        # (states.cpp), but a whole merge that a parallel plan put in a worker (under a
        # single-copy Gather, or as a Parallel Append's subplan) would count them in the
        # worker's table, which the leader's transaction never sees, so the planner must
        # never put a merge in a parallel worker (where it refuses at its first state:
        # with rows, not without)
        rows = self.S.psql("SELECT p.proname, p.proparallel FROM pg_proc p JOIN pg_aggregate a ON a.aggfnoid = p.oid "
                           "WHERE p.proname LIKE '%\\_merge' ORDER BY 1")
        self.assertGreaterEqual(len(rows), 15, rows)
        self.assertEqual([r for r in rows if r[1] != "r"], [], rows)

    def test_a_state_counts_once(self):
        # two copies of one genuine state (UNION ALL of one shard's answer, a state given
        # again) would add its rows twice under one release's noise and charge: each sealed
        # state carries a nonce under its tag, and a transaction merges it once
        message = "%s: state was already merged in this transaction (a shipped state counts once)"
        # (every merge opens its states through open_state: three of them here)
        for state, merge in (("private_count_state(x, 0.5)", "private_count_merge(state, 0.5)"),
                             ("private_median_state(x, 1.0, 0, 10)", "private_median_merge(state, 1.0, 0, 10)"),
                             ("private_select_state(g, x, 1.0)", "private_select_merge(state, NULL::int, 1.0)")):
            name = merge.split("(")[0]
            once = self.shipped(self.shards[0], state)
            self.assertEqual(self.S.error_of("WITH s AS MATERIALIZED (%s) SELECT %s FROM (SELECT state FROM s "
                                             "UNION ALL SELECT state FROM s) p" % (once, merge)), message % name, merge)
            # kept in a table and given twice, in one statement or in two of one transaction
            self.S.psql("DROP TABLE IF EXISTS kept; CREATE TABLE kept AS %s" % once)
            self.assertEqual(self.S.error_of("SELECT %s FROM (SELECT state FROM kept UNION ALL SELECT state FROM kept) p"
                                             % merge), message % name, merge)
            self.assertEqual(self.S.error_of("BEGIN; SELECT %s FROM kept; SELECT %s FROM kept; COMMIT"
                                             % (merge, merge)), message % name, merge)
            # once per transaction: the next transaction merges it again (a second release, charged again)
            self.assertEqual(len(self.S.psql("SELECT %s FROM kept" % merge)), 1)
            self.assertEqual(len(self.S.psql("SELECT %s FROM kept" % merge)), 1)
        self.S.psql("DROP TABLE kept")
        # finding 8: 50 rows merged from one state given twice released about 100
        rows = "SELECT private_count_state(0.5) FROM generate_series(1, 50)"
        self.S.psql("DROP TABLE IF EXISTS kept; CREATE TABLE kept AS SELECT * FROM dblink('%s', '%s') AS s(state bytea)"
                    % (self.shards[0].conninfo(), rows))
        self.assertEqual(self.S.error_of("SELECT private_count_merge(s, 0.5) FROM (SELECT state s FROM kept UNION ALL "
                                         "SELECT state FROM kept) a"), message % "private_count_merge")
        self.S.psql("DROP TABLE kept")

    def test_without_a_key_states_and_merges_refuse(self):
        shard = self.shards[1]
        missing = ("%s: optdp.state_key_file is not set: shipped states are authenticated with a key that the "
                   "administrator keeps in a file readable only by the server's OS user, the same key on every "
                   "shard and the coordinator (optdp.state_key_file = its path in postgresql.conf; the file holds "
                   "64 hexadecimal digits, e.g. from openssl rand -hex 32)")
        malformed = ("%s: the file optdp.state_key_file names must hold 64 hexadecimal digits (32 random bytes, "
                     "e.g. from openssl rand -hex 32)")
        exposed = ("%s: the file optdp.state_key_file names must be a regular file that only the server's OS user "
                   "can read (owned by it, mode 0600 or less; or owned by root, mode 0640 or less)")
        unreadable = "%s: the file optdp.state_key_file names cannot be read: No such file or directory"
        absent = os.path.join(os.path.dirname(shard.state_key_path), "absent.key")

        def no_file():
            set_state_key_file(shard, "")

        def key(text, mode=0o600):
            return lambda: shard.write_state_key(text, mode)
        try:
            # every form for two of the keys; one state and one merge for the others
            for make, message, every in ((no_file, missing, True),
                                         (lambda: set_state_key_file(shard, absent), unreadable, False),
                                         (lambda: set_state_key_file(shard, None), None, False),
                                         (key("8f" * 31), malformed, True), (key(""), malformed, False),
                                         (key("zz" * 32), malformed, False), (key("8f" * 33), malformed, False),
                                         (key(STATE_KEY + " x"), malformed, False),
                                         (key(STATE_KEY, 0o640), exposed, False),
                                         (key(STATE_KEY, 0o604), exposed, False)):
                make()
                if message is None:
                    continue
                if not every:
                    self.assertEqual(shard.error_of("SELECT private_count_state(0.5) FROM t"),
                                     message % "private_count_state")
                    self.assertEqual(shard.error_of("SELECT private_count_merge(s, 0.5) FROM (SELECT NULL::bytea s "
                                                    "WHERE false) a"), message % "private_count_merge")
                    continue
                for state in ("private_count_state(0.5)", "staircase_sum_state(x, 1.0, 10)",
                              "private_var_state(x, 1.0, 0, 10)", "private_quantile_state(x, 0.5, 1.0, 0, 10)",
                              "private_count_levels_of_state(x, 0.5)", "private_select_state(g, x, 1.0)"):
                    # with rows or without, serial or parallel, grouped or not
                    for sql in ("SELECT %s FROM t" % state, "SELECT %s FROM t WHERE g < 0" % state,
                                PARALLEL + "SELECT k, %s FROM t GROUP BY k" % state):
                        self.assertEqual(shard.error_of(sql), message % state.split("(")[0], sql)
                # a merge, whatever it is given (a genuine state of this shard before, nothing)
                for merge in ("private_count_merge(s, 0.5)", "staircase_sum_merge(s, 1.0, 10)",
                              "private_var_merge(s, 1.0, 0, 10)", "private_quantile_merge(s, 0.5, 1.0, 0, 10)",
                              "private_count_levels_merge(s, 0.5)", "private_select_merge(s, NULL::int, 1.0)"):
                    for rows in ("SELECT NULL::bytea s WHERE false", "SELECT '\\x00'::bytea s"):
                        sql = "SELECT %s FROM (%s) a" % (merge, rows)
                        self.assertEqual(shard.error_of(sql), message % merge.split("(")[0], sql)
        finally:
            set_state_key_file(shard, None)
            set_state_key(shard, None)
        self.assertEqual(len(shard.psql("SELECT private_count_state(0.5) FROM t")), 1)
        # a key followed by a line end, as openssl rand -hex 32 > file writes it
        shard.write_state_key(STATE_KEY + "\n")
        self.assertEqual(len(shard.psql("SELECT private_count_state(0.5) FROM t")), 1)
        set_state_key(shard, None)
        # a symbolic link to the file is followed (the file's mode and owner are checked)
        link = os.path.join(os.path.dirname(shard.state_key_path), "link.key")
        os.symlink(shard.state_key_path, link)
        try:
            set_state_key_file(shard, link)
            self.assertEqual(len(shard.psql("SELECT private_count_state(0.5) FROM t")), 1)
        finally:
            set_state_key_file(shard, None)


if __name__ == "__main__":
    MODULE_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
