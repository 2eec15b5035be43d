"""private_groups on PostgreSQL 15, in a server the suite starts itself (pgserver.py).

Usage: test_groups.py <build>/postgres [<build>/optdp.so] [unittest args]

With the SQLite module's path, the messages are compared with SQLite's own
for the same arguments (Debian's python3 loads SQLite extensions).

- Exact: at epsilon 1e6 every noise is 0, so the released rows are the
  bounded totals: public keys all present, other keys dropped, NULL units and
  values skipped, values clamped, max_groups and max_rows bound each unit,
  keys sorted (numbers by value).
- Laws: the counts' noise against the two-sided geometric of alpha =
  e^-(eps / 2GR) (chi-square; the law without the factor 2 is rejected);
  with noise=gaussian against the discrete Gaussian of sigma^2 = G R^2 / rho
  (rho from the ledger's entry; the law without G is rejected); a unit keeps
  a uniform G-subset of its keys (chi-square).
- Selection: private keys with many units are released, a one-unit key is
  not; a paired-neighbour audit (Clopper-Pearson) that P1 <= e^eps P0 + delta
  for the event "the key is released" and a count event.
- Boundary: off-allow-list functions, optdp's functions, scalar subqueries,
  text without a collation, through views, refused when prepared and
  identically on neighbouring data (a row with x = 0 under 1/x); calls on
  constants folded before the charge; refused shapes (joins, WHERE, GROUP
  BY, subqueries, a function, trigger or DO block running the call); a
  failure while reading (a statement timeout) gives the one message and
  stays charged; nothing charged otherwise.
- Ledger: one entry per release (delta and released_keys recorded), the
  delta budget and its messages, the one-argument form refusing a delta.
"""
import math
import os
import sqlite3
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server  # noqa: E402
from test_postgres import chi_square_p, geometric_law  # noqa: E402

MODULE_DIR = None
SQLITE_MODULE = None
SERVER = None
P_MIN = 1e-4
HUGE = 1e6  # every noise is exactly 0
DB = "groups"

ROWS = "SELECT u, k FROM r ORDER BY 1"
ROWS_V = "SELECT u, k, v FROM r ORDER BY 1"
SHAPE = ("private_groups: must be the only table of a top-level SELECT (SELECT ... FROM private_groups(...) "
         "[ORDER BY ...], alone or in INSERT INTO ... SELECT or CREATE TABLE ... AS SELECT), so that it runs "
         "exactly once; ")
ALLOW = " (optdp runs only functions that cannot fail on a value or quote one: docs/boundary.md)"


def q(s):
    """s as an SQL string literal (NULL for None)."""
    return "NULL" if s is None else "'" + str(s).replace("'", "''") + "'"


def call(rows, eps, options=None, keys=None):
    return "private_groups(%s, %s, %s, %s)" % (q(rows), "NULL" if eps is None else repr(eps), q(options), q(keys))


# Statements run on the server's kept connection per database (pgserver's
# kept_session, each call a new session but for the backend); a statement that
# seeds runs on a new backend instead, so that no seed stays in the kept one (a
# seeded backend is refused releases under a ledger).
def psql(sql, db=DB):
    return SERVER.psql(sql, db=db) if "dp_seed" in sql else SERVER.kept_session(db).psql(sql)


def error_of(sql, db=DB):
    return SERVER.error_of(sql, db=db) if "dp_seed" in sql else SERVER.kept_session(db).error_of(sql)


def setUpModule():
    global SERVER
    SERVER = Server(MODULE_DIR)
    SERVER.__enter__()
    psql("CREATE DATABASE %s" % DB, db="postgres")
    # r(u, k, v): units 1..6; unit u has one row in each key 0..u-1 (key k gets 6 - k units), v = k
    psql("CREATE EXTENSION optdp; "
         "CREATE TABLE r(u int, k int, v float8); "
         "INSERT INTO r SELECT u, k, k FROM generate_series(1, 6) u, generate_series(0, 5) k WHERE k < u; "
         "CREATE TABLE pub(k int); INSERT INTO pub VALUES (0), (1), (9); "
         "CREATE TABLE words(s text); INSERT INTO words VALUES ('a'), ('b');")


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


def entries():
    return int(psql("SELECT count(*) FROM dp_ledger_entries")[0][0])


class Exact(unittest.TestCase):
    def groups(self, rows, options=None, keys=None):
        return psql("SELECT key, count, sum, mean FROM %s" % call(rows, HUGE, options, keys))

    def test_public_keys_exact_counts(self):
        # max_groups=6: nothing bounded; key k has 6 - k rows; key 9 has none; keys 2..5 are dropped
        self.assertEqual(self.groups(ROWS, "max_groups=6", "SELECT k FROM pub"),
                         [["0", "6", "", ""], ["1", "5", "", ""], ["9", "0", "", ""]])

    def test_sorted_by_value(self):
        psql("CREATE TABLE many AS SELECT 1 AS u, k FROM generate_series(0, 11) k")
        try:
            got = [int(r[0]) for r in self.groups("SELECT u, k FROM many ORDER BY 1", "max_groups=12",
                                                  "SELECT k FROM many")]
            self.assertEqual(got, list(range(12)))  # 10 after 9, not after 1
        finally:
            psql("DROP TABLE many")

    def test_values_sum_mean_and_clamp(self):
        # upper = 3 clamps v = 4, 5; key 4 has units 5, 6: sum 6, mean 3
        got = self.groups(ROWS_V, "max_groups=6, lower=0, upper=3", "SELECT k FROM pub")
        self.assertEqual([r[:2] for r in got], [["0", "6"], ["1", "5"], ["9", "0"]])
        self.assertEqual(float(got[1][2]), 5.0)
        self.assertEqual(float(got[1][3]), 1.0)
        got = self.groups(ROWS_V, "max_groups=6, lower=0, upper=3", "SELECT 4")
        self.assertEqual((float(got[0][2]), float(got[0][3])), (6.0, 3.0))

    def test_null_units_and_values_skipped(self):
        psql("CREATE TABLE n(u int, k int, v float8); INSERT INTO n VALUES (1, 0, 1), (NULL, 0, 1), (2, 0, NULL), (3, 0, 'NaN')")
        try:
            self.assertEqual(self.groups("SELECT u, k FROM n ORDER BY 1", None, "SELECT 0"), [["0", "3", "", ""]])
            got = self.groups("SELECT u, k, v FROM n ORDER BY 1", "lower=0, upper=2", "SELECT 0")
            self.assertEqual(got[0][:3], ["0", "2", "1"])  # NaN reads as 0
        finally:
            psql("DROP TABLE n")

    def test_max_groups_bounds_each_unit(self):
        # a unit in many groups: unit u keeps min(u, G) keys
        for G in (1, 2, 3):
            total = sum(int(r[1]) for r in self.groups(ROWS, "max_groups=%d" % G, "SELECT k FROM r"))
            self.assertEqual(total, sum(min(u, G) for u in range(1, 7)), G)
        psql("CREATE TABLE wide AS SELECT 7 AS u, k FROM generate_series(1, 500) k")
        try:
            got = self.groups("SELECT u, k FROM wide ORDER BY 1", "max_groups=3", "SELECT k FROM wide")
            self.assertEqual(len(got), 500)
            self.assertEqual(sum(int(r[1]) for r in got), 3)
        finally:
            psql("DROP TABLE wide")

    def test_max_rows_bounds_each_key(self):
        psql("CREATE TABLE deep AS SELECT u, 0 AS k, g::float8 AS v FROM generate_series(1, 4) u, generate_series(1, 10) g")
        try:
            got = self.groups("SELECT u, k, v FROM deep ORDER BY 1", "max_rows=3, lower=0, upper=10", "SELECT 0")
            self.assertEqual(got[0][1], "12")
            self.assertTrue(12 <= float(got[0][2]) <= 120)
        finally:
            psql("DROP TABLE deep")

    def test_private_keys_many_units_released(self):
        psql("CREATE TABLE big AS SELECT u, u % 3 AS k FROM generate_series(1, 3000) u")
        try:
            got = psql("SELECT key, count FROM %s" % call("SELECT u, k FROM big ORDER BY 1", 1.0, "delta=1e-6"))
            self.assertEqual([r[0] for r in got], ["0", "1", "2"])
        finally:
            psql("DROP TABLE big")

    def test_allowed_expressions(self):
        # comparisons, IN, EXISTS, CASE, COALESCE, widening casts, count/min/max, row_number: accepted
        rows = ("SELECT u, k FROM (SELECT u, k, row_number() OVER (PARTITION BY u ORDER BY k) AS n FROM r "
                "WHERE k IN (0, 1, 2) AND EXISTS (SELECT 1 FROM pub WHERE pub.k >= 0) "
                "AND CASE WHEN v > 0.5 THEN true ELSE coalesce(v, 0) = 0 END AND k::int8 < 10) s "
                "WHERE n <= 6 ORDER BY 1")
        self.assertEqual(self.groups(rows, "max_groups=6", "SELECT k FROM pub"),
                         [["0", "6", "", ""], ["1", "5", "", ""], ["9", "0", "", ""]])
        rows = ("SELECT u, k FROM r WHERE k < 2 UNION SELECT u, k FROM r WHERE k = 1 OR EXISTS "
                "(SELECT 1 FROM words w WHERE w.s COLLATE \"C\" > 'zz') ORDER BY 1")
        self.assertEqual(self.groups(rows, "max_groups=6", "SELECT k FROM pub"),
                         [["0", "6", "", ""], ["1", "5", "", ""], ["9", "0", "", ""]])
        rows = "SELECT u, max(k) FROM r GROUP BY u HAVING count(*) > 1 ORDER BY 1"
        self.assertEqual(self.groups(rows, None, "SELECT k FROM pub"), [["0", "0", "", ""], ["1", "1", "", ""],
                                                                          ["9", "0", "", ""]])

    def test_quantile_counts_at_most_max_rows_per_unit(self):
        # tests/python/test_grouped.py's case on PostgreSQL: a unit of 50 rows
        # at 100 in key 0 beside 10 units of one row at 0. With R = 2 the
        # 0.9-quantile's best candidates are (0, 100]; counted in full, the
        # unit would move it to (100, 200]. Whatever the order of its rows,
        # only R are counted (in the count and in the quantile).
        psql("CREATE TABLE qh(u int, k int, v float8); "
             "INSERT INTO qh SELECT 1, 0, 100 FROM generate_series(1, 50); "
             "INSERT INTO qh SELECT u, 0, 0 FROM generate_series(2, 11) u")
        try:
            for rows in ("SELECT u, k, v FROM qh ORDER BY 1",
                         "SELECT u, k, v FROM (SELECT u, k, v FROM qh ORDER BY v DESC) s ORDER BY 1",
                         "SELECT u, k, v FROM (SELECT u, k, v FROM qh ORDER BY v ASC) s ORDER BY 1",
                         "SELECT u, k, v FROM qh WHERE v >= 0 ORDER BY 1"):
                with self.subTest(rows=rows):
                    got = psql("SELECT key, count, sum, quantile FROM %s" % call(
                        rows, HUGE, "max_rows=2, lower=0, upper=200, quantile=0.9", "SELECT 0"))
                    self.assertEqual(len(got), 1)
                    self.assertEqual(got[0][:3], ["0", "12", "200"])
                    self.assertTrue(0 < float(got[0][3]) <= 100, got)
            got = psql("SELECT quantile IS NULL FROM %s" % call("SELECT u, k, v FROM qh ORDER BY 1", HUGE,
                                                                "max_rows=2, lower=0, upper=200", "SELECT 0"))
            self.assertEqual(got, [["t"]])
        finally:
            psql("DROP TABLE qh")

    def test_variance_counts_at_most_max_rows_per_unit(self):
        # tests/sqlite/grouped_audit_test.cpp's GroupedVariance.ExactAtHugeEpsilon on
        # PostgreSQL: kept 1, 2, 3, 4, 10, 10 (unit 9's 8 rows at 10 count R = 2
        # times): variance 80 / 6, whatever the order of the unit's rows
        psql("CREATE TABLE vh(u int, k int, v float8); "
             "INSERT INTO vh SELECT u, 0, u FROM generate_series(1, 4) u; "
             "INSERT INTO vh SELECT 9, 0, 10 FROM generate_series(1, 8)")
        try:
            for rows in ("SELECT u, k, v FROM vh ORDER BY 1",
                         "SELECT u, k, v FROM (SELECT u, k, v FROM vh ORDER BY v DESC) s ORDER BY 1"):
                with self.subTest(rows=rows):
                    got = psql("SELECT count, variance, stddev FROM %s" % call(
                        rows, HUGE, "max_rows=2, lower=0, upper=10, variance=on", "SELECT 0"))
                    self.assertEqual(got[0][0], "6")
                    self.assertAlmostEqual(float(got[0][1]), 80 / 6, places=3)
                    self.assertAlmostEqual(float(got[0][2]), math.sqrt(80 / 6), places=3)
        finally:
            psql("DROP TABLE vh")

    def test_empty_input_releases_every_public_key(self):
        got = self.groups("SELECT u, k FROM r WHERE u < 0 ORDER BY 1", None, "SELECT k FROM pub")
        self.assertEqual(got, [["0", "0", "", ""], ["1", "0", "", ""], ["9", "0", "", ""]])


class Laws(unittest.TestCase):
    RELEASES = 60

    def test_counts_have_the_geometric_law(self):
        # 40 keys of 5 units each (one row per unit); G = 2, R = 1: alpha = e^-(eps / 4)
        psql("CREATE TABLE law AS SELECT u, u % 40 AS k FROM generate_series(0, 199) u")
        try:
            eps = 4 * math.log(2)  # alpha 0.5
            sql = "SELECT dp_seed(7);" + ("SELECT count FROM %s;" % call("SELECT u, k FROM law ORDER BY 1", eps,
                                                                       "max_groups=2", "SELECT k FROM law")) * self.RELEASES
            rows = psql(sql)[1:]
            self.assertEqual(len(rows), 40 * self.RELEASES)
            obs = {}
            for r in rows:
                z = int(r[0]) - 5
                obs[z] = obs.get(z, 0) + 1
            self.assertGreater(chi_square_p(obs, geometric_law(math.exp(-eps / 4))), P_MIN)
            # the test can fail: without the factor 2 (alpha = e^-(eps / 2)) the law is rejected
            self.assertLess(chi_square_p(obs, geometric_law(math.exp(-eps / 2))), P_MIN)
        finally:
            psql("DROP TABLE law")

    def test_gaussian_counts_have_the_discrete_gaussian_law(self):
        # noise=gaussian, public keys, no value: one part, rho from the ledger's entry;
        # each count gets the discrete Gaussian with sigma^2 = G R^2 / rho
        psql("CREATE TABLE glaw AS SELECT u, u % 40 AS k FROM generate_series(0, 199) u")
        try:
            c = call("SELECT u, k FROM glaw ORDER BY 1", 1.0, "max_groups=2, noise=gaussian, delta=1e-5",
                     "SELECT DISTINCT k FROM glaw")
            psql("TRUNCATE optdp_budget, optdp_charges; SELECT dp_ledger_attach(1000, 0.5)")
            psql("SELECT count(*) FROM %s" % c)
            rho = float(psql("SELECT rho FROM dp_ledger_entries")[0][0])
            psql("TRUNCATE optdp_budget, optdp_charges")
            rows = psql("SELECT dp_seed(9);" + ("SELECT count FROM %s;" % c) * 50)[1:]
            self.assertEqual(len(rows), 2000)
            obs = {}
            for r in rows:
                z = int(r[0]) - 5
                obs[z] = obs.get(z, 0) + 1

            def law(sigma2, width=400):
                w = {z: math.exp(-z * z / (2 * sigma2)) for z in range(-width, width + 1)}
                total = sum(w.values())
                return {z: p / total for z, p in w.items()}

            self.assertGreater(chi_square_p(obs, law(2 / rho)), P_MIN)
            # the test can fail: without the factor G (sigma^2 = R^2 / rho) the law is rejected
            self.assertLess(chi_square_p(obs, law(1 / rho)), P_MIN)
        finally:
            psql("DROP TABLE glaw; TRUNCATE optdp_budget, optdp_charges")

    @unittest.skipIf(os.environ.get("OPTDP_SANITIZER_PASS") == "1", "statistical: not in the sanitizer pass")
    def test_quantiles_have_the_exponential_mechanism_law(self):
        # 40 keys, each of 4 units of 2 rows (G = 1, R = 2: nothing is bounded
        # away). eps 6 over 3 parts (counts, sums, quantiles): per key
        # eps_part / (2G) = 1 for a score of sensitivity R = 2, so candidate c
        # of the grid of [0, 8] (step 2^-8) has weight exp(0.5 * score(c) / 2),
        # score(c) = -|#{x < c} - q n| (docs/grouped.md, "Quantiles per key").
        pairs = [(1, 2), (3, 5), (6, 7), (1, 3)]
        values = [v for pr in pairs for v in pr]
        psql("CREATE TABLE qlaw(u int, k int, v float8); INSERT INTO qlaw VALUES " + ", ".join(
            "(%d, %d, %r)" % (10 * k + i, k, float(v)) for k in range(40) for i, pr in enumerate(pairs) for v in pr))
        try:
            sql = "SELECT dp_seed(17);" + ("SELECT quantile FROM %s;" % call(
                "SELECT u, k, v FROM qlaw ORDER BY 1", 6.0, "lower=0, upper=8, max_rows=2, quantile=0.5",
                "SELECT DISTINCT k FROM qlaw")) * 50
            rows = psql(sql)[1:]
            self.assertEqual(len(rows), 40 * 50)
            obs = {}
            for r in rows:
                b = min(7, int(math.floor(float(r[0]))))
                obs[b] = obs.get(b, 0) + 1

            def law(eps):
                w = [0.0] * 8
                for j in range(8 * 256 + 1):
                    c = j / 256
                    score = -abs(sum(1 for x in values if x < c) - 0.5 * len(values))
                    w[min(7, j // 256)] += math.exp(eps * score / 2)
                total = sum(w)
                return {b: x / total for b, x in enumerate(w)}

            self.assertGreater(chi_square_p(obs, law(0.5)), P_MIN)
            # the test can fail: calibrated for sensitivity 1 instead of R (eps' = 1) the law is rejected
            self.assertLess(chi_square_p(obs, law(1.0)), P_MIN)
        finally:
            psql("DROP TABLE qlaw")

    def test_a_unit_keeps_a_uniform_subset_of_its_keys(self):
        # 100 units, each with keys 0..4, G = 2: each key is kept by 40 units on average
        psql("CREATE TABLE sub AS SELECT u, k FROM generate_series(1, 100) u, generate_series(0, 4) k")
        try:
            sql = "SELECT dp_seed(8);" + ("SELECT key, count FROM %s;" % call(
                "SELECT u, k FROM sub ORDER BY 1", HUGE, "max_groups=2", "SELECT DISTINCT k FROM sub")) * 20
            obs = {}
            for key, count in psql(sql)[1:]:
                obs[key] = obs.get(key, 0) + int(count)
            self.assertEqual(sum(obs.values()), 20 * 200)
            stat = sum((o - 800) ** 2 / 800 for o in obs.values())
            self.assertLess(stat, 18.47)  # chi-square, 4 degrees of freedom, p = 1e-3
        finally:
            psql("DROP TABLE sub")


def clopper_pearson(k, n, level):
    """The two-sided Clopper-Pearson interval for k successes in n at confidence 1 - level."""
    def cdf(k, p):  # P(Bin(n, p) <= k)
        if p <= 0:
            return 1.0
        if p >= 1:
            return 1.0 if k >= n else 0.0
        return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))

    def solve(f):  # the p in [0, 1] where the decreasing f crosses 0
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if f(mid) > 0:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(lambda p: (1 - cdf(k - 1, p)) < level / 2 and 1 or -1)
    high = 1.0 if k == n else solve(lambda p: cdf(k, p) > level / 2 and 1 or -1)
    return low, high


class Audit(unittest.TestCase):
    """Paired neighbours: D0 and D1 = D0 with one more unit in key 0."""
    N = 400

    def runs(self, table, eps, delta):
        sql = "SELECT dp_seed(%d);" % (11 if table == "d0" else 12)
        stmt = "SELECT key, count FROM %s;" % call("SELECT u, k FROM %s ORDER BY 1" % table, eps,
                                                   "delta=%r" % delta)
        out = []
        for _ in range(self.N):
            sql += stmt + "SELECT 'end';"
        cur = []
        for r in psql(sql)[1:]:
            if r == ["end"]:
                out.append(cur)
                cur = []
            else:
                cur.append(r)
        return out

    @staticmethod
    def within(k0, k1, n, eps, delta, level=1e-3):
        """Whether counts k0, k1 of an event in n runs on each neighbour are consistent with
        P1 <= e^eps P0 + delta and P0 <= e^eps P1 + delta (Clopper-Pearson at `level`)."""
        lo0, hi0 = clopper_pearson(k0, n, level)
        lo1, hi1 = clopper_pearson(k1, n, level)
        return lo1 <= math.exp(eps) * hi0 + delta and lo0 <= math.exp(eps) * hi1 + delta

    def test_partition_selection_neighbours(self):
        # key 0: 22 units in D0, 23 in D1 (released about half the time); key 1: 200 units in both
        psql("CREATE TABLE d0 AS SELECT u, CASE WHEN u <= 22 THEN 0 ELSE 1 END AS k FROM generate_series(1, 222) u; "
             "CREATE TABLE d1 AS SELECT * FROM d0 UNION ALL SELECT 0, 0")
        try:
            eps, delta = 1.0, 1e-3
            r0, r1 = self.runs("d0", eps, delta), self.runs("d1", eps, delta)
            self.assertEqual((len(r0), len(r1)), (self.N, self.N))
            events = {
                "key 0 released": lambda rel: any(k == "0" for k, _ in rel),
                "key 0 released with count >= 22": lambda rel: any(k == "0" and int(c) >= 22 for k, c in rel),
            }
            for name, event in events.items():
                k0, k1 = sum(map(event, r0)), sum(map(event, r1))
                self.assertTrue(self.within(k0, k1, self.N, eps, delta), (name, k0, k1))
                self.assertTrue(20 < k0 < self.N - 20, (name, k0))  # the event is neither rare nor sure
            # the audit can fail: a selection by a fixed threshold between 22 and 23 units is caught
            self.assertFalse(self.within(0, self.N, self.N, eps, delta))
        finally:
            psql("DROP TABLE d0, d1")


class Boundary(unittest.TestCase):
    def setUp(self):
        psql("TRUNCATE optdp_budget, optdp_charges; SELECT dp_ledger_attach(1000, 0.5)")

    def tearDown(self):
        psql("TRUNCATE optdp_budget, optdp_charges")

    def refused(self, rows, message, keys="SELECT k FROM pub", options=None):
        for neighbour in ("r", "r0"):  # without and with a row where x = 0
            self.assertEqual(error_of("SELECT * FROM %s" % call(rows.replace("FROM r ", "FROM %s " % neighbour),
                                                                 1.0, options, keys)),
                             "private_groups: " + message)

    def test_off_allow_list_refused_when_prepared_on_both_neighbours(self):
        psql("CREATE TABLE IF NOT EXISTS r0 AS SELECT * FROM r UNION ALL SELECT 7, 0, 0")
        cases = [
            ("SELECT u, k, 1 / v FROM r ORDER BY 1", "rows_query must not call float8div()" + ALLOW, "lower=0, upper=1"),
            ("SELECT u, k / 0 FROM r ORDER BY 1", "rows_query must not call int4div()" + ALLOW, None),
            ("SELECT u, abs(k) FROM r ORDER BY 1", "rows_query must not call abs()" + ALLOW, None),
            ("SELECT u, k + 1 FROM r ORDER BY 1", "rows_query must not call int4pl()" + ALLOW, None),
            ("SELECT u, k::text::int FROM r ORDER BY 1", "rows_query must not call int4in()" + ALLOW, None),
            ("SELECT u, k FROM r WHERE v::text LIKE '1%' ORDER BY 1", "rows_query must not call textlike()" + ALLOW, None),
            ("SELECT u, v::text FROM r ORDER BY 1", "rows_query must not call float8out()" + ALLOW, None),
            ("SELECT u, sum(k) FROM r GROUP BY u ORDER BY 1", "rows_query must not call sum()" + ALLOW, None),
            ("SELECT u, k FROM r WHERE random() < 2 ORDER BY 1", "rows_query must not call random()" + ALLOW, None),
            ("SELECT u, k FROM r WHERE k = (SELECT k FROM pub) ORDER BY 1",
             "rows_query must not use a scalar subquery (it fails when it returns more than one row); use EXISTS, IN "
             "or a join", None),
            ("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n FROM c) SELECT u, k FROM r ORDER BY 1",
             "rows_query must not use a recursive CTE (its time and memory could depend on the rows)", None),
            ("SELECT u, k::int2 FROM r ORDER BY 1", "rows_query must not call int2()" + ALLOW, None),
            # a built-in call on constants is folded when the query is planned, before the charge and any row
            ("SELECT u, k FROM r WHERE k > 1 / 0 ORDER BY 1", "rows_query does not prepare: division by zero", None),
            # text compared without a known collation fails at the first comparison, that is only with rows
            ("SELECT u, k FROM r WHERE EXISTS (SELECT 1 FROM words2 WHERE a = b) ORDER BY 1",
             "rows_query must compare text under a known collation (add COLLATE to the expression)", None),
            ("SELECT u, k FROM r WHERE EXISTS (SELECT 1 FROM words2 ORDER BY a || b) ORDER BY 1",
             'rows_query does not prepare: collation mismatch between implicit collations "C" and "POSIX"', None),
            # an immutable user function may read tables: not folded, refused
            ("SELECT u, k FROM r WHERE k < lying() ORDER BY 1", "rows_query must not call lying()" + ALLOW, None),
        ]
        psql("CREATE TABLE IF NOT EXISTS words2(a text COLLATE \"C\", b text COLLATE \"POSIX\")")
        psql("CREATE OR REPLACE FUNCTION lying() RETURNS int IMMUTABLE LANGUAGE sql AS 'SELECT 1 / count(*)::int FROM r0 WHERE v = 0'")
        for rows, message, options in cases:
            with self.subTest(rows=rows):
                self.refused(rows, message, options=options)
        self.assertEqual(entries(), 0)

    def test_optdp_functions_refused(self):
        cases = [
            ("SELECT u, private_count(0.5) FROM r GROUP BY u ORDER BY 1", "private_count"),
            ("SELECT u, k FROM r WHERE dp_seed(1) IS NOT NULL ORDER BY 1", "dp_seed"),
            ("SELECT u, k FROM r WHERE dp_version() IS NOT NULL ORDER BY 1", "dp_version"),
            ("SELECT 1, key FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT 0') ORDER BY 1",
             "private_groups"),
        ]
        for rows, fn in cases:
            with self.subTest(rows=rows):
                self.refused(rows, "rows_query must not call %s()" % fn + ALLOW)
        self.assertEqual(error_of("SELECT * FROM %s" % call(ROWS, 1.0, None, "SELECT dp_rng()")),
                         "private_groups: keys_query must not call dp_rng()" + ALLOW)
        self.assertEqual(entries(), 0)

    def test_refused_through_views(self):
        psql("CREATE OR REPLACE VIEW risky AS SELECT u, k, 1 / v AS w FROM r; "
             "CREATE OR REPLACE VIEW risky2 AS SELECT * FROM risky WHERE u > 0; "
             "CREATE OR REPLACE VIEW safe AS SELECT u, k FROM r WHERE k >= 0")
        self.refused("SELECT u, k, w FROM risky ORDER BY 1", "rows_query must not call float8div()" + ALLOW,
                     options="lower=0, upper=1")
        self.refused("SELECT u, k FROM risky2 ORDER BY 1", "rows_query must not call float8div()" + ALLOW)
        self.assertEqual(error_of("SELECT * FROM %s" % call(ROWS, 1.0, None, "SELECT k FROM risky")),
                         "private_groups: keys_query must not call float8div()" + ALLOW)
        self.assertEqual(entries(), 0)
        self.assertEqual(len(psql("SELECT * FROM %s" % call("SELECT u, k FROM safe ORDER BY 1", 1.0, None,
                                                             "SELECT k FROM pub"))), 3)
        self.assertEqual(entries(), 1)

    def test_a_failure_while_reading_gives_one_message_and_stays_charged(self):
        # a statement timeout while the rows are read (a sort of 9M rows takes
        # seconds; preparing and charging take milliseconds)
        psql("CREATE TABLE IF NOT EXISTS slow AS SELECT g AS u FROM generate_series(1, 3000) g")
        try:
            err = error_of("SET statement_timeout = 1000; SELECT * FROM %s" % call(
                "SELECT a.u, b.u FROM slow a, slow b ORDER BY 1", 1.0, None, "SELECT 1"))
            self.assertEqual(err, "private_groups: reading the rows failed after the release was charged (an I/O "
                                  "error, an interrupt, or memory; the message of the cause is not shown: it could "
                                  "depend on the rows)")
            self.assertEqual(entries(), 1)
        finally:
            psql("DROP TABLE slow")

    def test_refused_shapes_charge_nothing(self):
        c = call(ROWS, 1.0, None, "SELECT k FROM pub")
        cases = [
            "SELECT %s" % c,
            "SELECT * FROM pub, %s g" % c,
            "SELECT * FROM %s g WHERE key = '0'" % c,
            "SELECT key, count(*) FROM %s g GROUP BY key" % c,
            "SELECT * FROM pub WHERE EXISTS (SELECT 1 FROM %s g)" % c,
            "WITH w AS MATERIALIZED (SELECT * FROM %s) SELECT * FROM w" % c,
            "SELECT * FROM %s g UNION ALL SELECT * FROM %s h" % (c, c),
            "SELECT * FROM pub CROSS JOIN LATERAL private_groups('SELECT u, k FROM r ORDER BY 1', pub.k + 1.0) g",
        ]
        # run by code that decides how often: a PL/pgSQL or SQL function per row, a DO block, a trigger
        psql("CREATE OR REPLACE FUNCTION per_row() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT count(*) "
             "FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT 0')); END $$; "
             "CREATE OR REPLACE FUNCTION per_row_sql() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) "
             "FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT 0') $$; "
             "CREATE TABLE IF NOT EXISTS trig(x int); "
             "CREATE OR REPLACE FUNCTION trig_release() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
             "PERFORM * FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT 0'); RETURN NEW; END $$; "
             "CREATE OR REPLACE TRIGGER trig_release AFTER INSERT ON trig FOR EACH ROW EXECUTE FUNCTION trig_release()")
        cases += [
            "SELECT per_row() FROM pub",
            "SELECT per_row_sql() FROM pub",
            "DO $$ BEGIN PERFORM * FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT 0'); END $$",
            "DO $$ DECLARE r record; BEGIN FOR i IN 1..3 LOOP FOR r IN SELECT * FROM private_groups('SELECT u, k FROM r "
            "ORDER BY 1', 1.0, NULL, 'SELECT 0') LOOP END LOOP; END LOOP; END $$",
            "INSERT INTO trig SELECT k FROM pub",
        ]
        for sql in cases:
            with self.subTest(sql=sql):
                self.assertTrue((error_of(sql) or "").startswith(SHAPE), error_of(sql))
        self.assertEqual(entries(), 0)

    def test_accepted_shapes_charge_once(self):
        c = call(ROWS, 1.0, None, "SELECT k FROM pub")
        for sql in ["SELECT * FROM %s" % c, "SELECT key FROM %s g ORDER BY count DESC LIMIT 2" % c,
                    "SELECT count(*) FROM %s" % c, "CREATE TABLE pubd AS SELECT * FROM %s" % c,
                    "INSERT INTO pubd SELECT * FROM %s" % c, "WITH w AS (SELECT 1) SELECT * FROM %s" % c,
                    "EXPLAIN (ANALYZE, COSTS OFF) SELECT * FROM %s" % c,
                    "BEGIN; DECLARE cur CURSOR FOR SELECT * FROM %s; FETCH ALL cur; COMMIT" % c,
                    "PREPARE p(float8) AS SELECT * FROM private_groups('SELECT u, k FROM r ORDER BY 1', $1, NULL, "
                    "'SELECT k FROM pub'); EXECUTE p(1.0)"]:
            with self.subTest(sql=sql):
                before = entries()
                psql(sql)
                self.assertEqual(entries(), before + 1)
        psql("DROP TABLE pubd")


class Ledger(unittest.TestCase):
    def setUp(self):
        psql("TRUNCATE optdp_budget, optdp_charges")

    def tearDown(self):
        psql("TRUNCATE optdp_budget, optdp_charges")

    def test_one_entry_per_release_with_delta_and_released_keys(self):
        psql("SELECT dp_ledger_attach(10, 1e-5)")
        psql("SELECT * FROM %s" % call(ROWS, 1.0, None, "SELECT k FROM pub"))
        psql("SELECT * FROM %s" % call(ROWS, 1.0, "delta=1e-6"))
        psql("SELECT * FROM %s" % call(ROWS, 1.0, "noise=gaussian, delta=1e-6", "SELECT k FROM pub"))
        rows = psql("SELECT function, epsilon, delta, released_keys, rho > 0 FROM dp_ledger_entries ORDER BY id")
        self.assertEqual(len(rows), 3)
        self.assertEqual(rows[0], ["private_groups", "1", "0", "3", "f"])
        self.assertEqual(rows[1][:3], ["private_groups", "1", "1e-06"])
        self.assertTrue(0 <= int(rows[1][3]) <= 6)
        # noise=gaussian: recorded as SQLite records a Gaussian release, its rho
        # alone (epsilon and delta 0), composed in zCDP by the ledger's rule
        self.assertEqual(rows[2], ["private_groups", "0", "0", "3", "t"])
        self.assertEqual(psql("SELECT spent_epsilon, spent_delta FROM dp_ledger_budget"), [["2", "1e-06"]])

    def test_delta_budget(self):
        psql("SELECT dp_ledger_attach(10, 2e-6)")
        for _ in range(2):
            psql("SELECT * FROM %s" % call(ROWS, 0.5, "delta=1e-6"))
        # with a delta budget the refusal names zCDP's figures too (the ledger's rule, as SQLite's)
        msg = ("private_groups: privacy budget exhausted: delta 2e-06 of 2e-06 spent, and this release costs 1e-06; "
               "nor does zCDP fit: rho 0.375 gives delta 3e-06 at epsilon 10")
        for rows in (ROWS, "SELECT u, k FROM r WHERE u < 0 ORDER BY 1"):  # the same with rows and without
            self.assertEqual(error_of("SELECT * FROM %s" % call(rows, 0.5, "delta=1e-6")), msg)
        self.assertEqual(entries(), 2)
        # public keys cost no delta and still pay
        psql("SELECT * FROM %s" % call(ROWS, 0.5, None, "SELECT k FROM pub"))
        self.assertEqual(entries(), 3)

    def test_one_argument_ledger_refuses_a_delta(self):
        psql("SELECT dp_ledger_attach(10)")
        self.assertEqual(error_of("SELECT * FROM %s" % call(ROWS, 1.0, "delta=1e-6")),
                         "private_groups: privacy budget exhausted: this ledger has no delta budget (give one as "
                         "dp_ledger_attach(total_epsilon, total_delta)), and this release costs delta 1e-06")
        msg = error_of("SELECT * FROM %s" % call(ROWS, 1.0, "noise=gaussian, delta=1e-6", "SELECT k FROM pub"))
        self.assertTrue(msg.startswith("private_groups: privacy budget exhausted: this ledger has no delta budget (give "
                                       "one as dp_ledger_attach(total_epsilon, total_delta)), and a Gaussian release "
                                       "needs one (this one costs rho "), msg)
        self.assertEqual(entries(), 0)
        psql("SELECT * FROM %s" % call(ROWS, 1.0, None, "SELECT k FROM pub"))
        self.assertEqual(entries(), 1)

    def test_attach_checks_the_totals(self):
        psql("SELECT dp_ledger_attach(10, 1e-5)")
        self.assertEqual(psql("SELECT dp_ledger_attach(10, 1e-5)"), [["10"]])
        self.assertEqual(error_of("SELECT dp_ledger_attach(10)"),
                         "dp_ledger_attach: the ledger records total_delta 1e-05, but the value is 0")
        psql("TRUNCATE optdp_budget")
        self.assertEqual(error_of("SELECT dp_ledger_attach(10, 2)"),
                         "dp_ledger_attach: total_delta must be a number in [0, 1), but is 2")

    def test_budget_refusal_reads_nothing(self):
        psql("SELECT dp_ledger_attach(1, 1e-5)")
        self.assertEqual(error_of("SELECT * FROM %s" % call(ROWS, 2.0, None, "SELECT k FROM pub")),
                         "private_groups: privacy budget exhausted: 0 of 1 spent, and this release costs 2; nor does "
                         "zCDP fit: rho 2 gives delta 0.7706 at epsilon 1")
        self.assertEqual(entries(), 0)


# Argument and query errors: the same text as SQLite's binding.
MESSAGE_CASES = [
    (None, 1.0, None, "SELECT k FROM pub"),
    (ROWS, None, None, "SELECT k FROM pub"),
    (ROWS, 0.0, None, "SELECT k FROM pub"),
    (ROWS, 1.0, None, None),
    (ROWS, -1.0, None, "SELECT k FROM pub"),
    (ROWS, 1.0, "maxgroups=2", "SELECT k FROM pub"),
    (ROWS, 1.0, "max_groups=0", "SELECT k FROM pub"),
    (ROWS, 1.0, "max_rows=1001", "SELECT k FROM pub"),
    (ROWS, 1.0, "max_groups=2 max_groups=3", "SELECT k FROM pub"),
    (ROWS, 1.0, "delta=1e-6", "SELECT k FROM pub"),
    (ROWS, 1.0, "lower=0, upper=1", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "upper=1", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=2, upper=1", "SELECT k FROM pub"),
    (ROWS, 1.0, "noise=gaussian, delta=1e-6", None),
    (ROWS, 1.0, "noise=laplace", "SELECT k FROM pub"),
    (ROWS, 1.0, "confidence=1", "SELECT k FROM pub"),
    (ROWS, 1.0, "delta=2", None),
    ("SELECT u FROM r ORDER BY 1", 1.0, None, "SELECT k FROM pub"),
    ("SELECT u, k FROM r", 1.0, None, "SELECT k FROM pub"),
    (ROWS, 1.0, None, "SELECT k, k FROM pub"),
    ("SELECT u, abs(k) FROM r ORDER BY 1", 1.0, None, "SELECT k FROM pub"),
    ("SELECT u, k FROM r WHERE u = abs(u) ORDER BY 1", 1.0, None, "SELECT k FROM pub"),
    (ROWS, 1e-12, "max_groups=10000, max_rows=1000", "SELECT k FROM pub"),
    # option quantile (docs/grouped.md, "Quantiles per key")
    (ROWS, 1.0, "quantile=0.5", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, quantile=1.5", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, quantile=x", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, quantile=0.5, quantile=0.5", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, quantile=0.5, noise=gaussian, delta=1e-6", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, quantile=0.5", None),
    # option variance
    (ROWS, 1.0, "variance=on", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, variance=yes", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, variance=on, noise=gaussian, delta=1e-6", "SELECT k FROM pub"),
    (ROWS_V, 1.0, "lower=0, upper=1, variance=on, quantile=0.5", None),
]


class Messages(unittest.TestCase):
    def sqlite_error(self, db, args):
        try:
            db.execute("SELECT * FROM private_groups(?, ?, ?, ?)", args).fetchall()
        except sqlite3.Error as e:
            return str(e)
        return None

    def test_messages_equal_sqlite(self):
        if SQLITE_MODULE is None or not os.path.exists(SQLITE_MODULE):
            self.skipTest("the SQLite module was not given")
        with tempfile.TemporaryDirectory() as d:
            db = sqlite3.connect(os.path.join(d, "r.db"), isolation_level=None)
            db.enable_load_extension(True)
            db.load_extension(SQLITE_MODULE)
            db.execute("CREATE TABLE r(u INTEGER, k INTEGER, v REAL)")
            db.executemany("INSERT INTO r VALUES (?, ?, ?)", [(u, k, float(k)) for u in range(1, 7) for k in range(u)])
            db.execute("CREATE TABLE pub(k INTEGER)")
            for args in MESSAGE_CASES:
                with self.subTest(args=args):
                    mine = error_of("SELECT * FROM %s" % call(*args))
                    self.assertIsNotNone(mine)
                    self.assertEqual(mine, self.sqlite_error(db, args))
            db.close()


if __name__ == "__main__":
    MODULE_DIR = os.path.abspath(sys.argv.pop(1))
    if len(sys.argv) > 1 and sys.argv[1].endswith(".so"):
        SQLITE_MODULE = os.path.abspath(sys.argv.pop(1))
    unittest.main()
