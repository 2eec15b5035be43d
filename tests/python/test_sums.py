#!/usr/bin/python3
"""Private sums through Python's sqlite3 module: staircase_sum,
laplace_sum, staircase_gamma, noise_cost, dp_sum_grid.

    /usr/bin/python3 tests/python/test_sums.py --module build/optdp.so [unittest args]

Exact results use eps = 60 with the default cost 'l1': the staircase's first
step is then the single grid point 0 (r = 1), so the noise is 0 except with
probability about 2 e^-60 D ~ 2e-14 (D ~ 2^40 grid steps). Everything else is
checked either without depending on the noise (grid multiples, types, errors,
equality under the same seed) or by one light seeded statistical test whose
bounds are 5 standard errors wide.
"""
import math
import sys

from optdp_testlib import OptdpTestCase, connect, main

EXACT_EPS = 60


def staircase_moments(eps, delta, gamma):
    """(E|X|, E[X^2]) of the continuous staircase, summed segment by segment
    from the density of docs/math.md (independent of the extension's closed form)."""
    b = math.exp(-eps)
    a = (1 - b) / (2 * delta * (gamma + (1 - gamma) * b))
    m1, m2 = [], []
    k = 0
    while True:
        lo, mid, hi = k * delta, (k + gamma) * delta, (k + 1) * delta
        inner, outer = a * b ** k, a * b ** (k + 1)
        t1 = inner * (mid ** 2 - lo ** 2) / 2 + outer * (hi ** 2 - mid ** 2) / 2
        t2 = inner * (mid ** 3 - lo ** 3) / 3 + outer * (hi ** 3 - mid ** 3) / 3
        m1.append(2 * t1)
        m2.append(2 * t2)
        if b ** k * (k + 2) ** 3 < 1e-20:
            break
        k += 1
    return math.fsum(m1), math.fsum(m2)


def l2_gamma(eps):
    b = math.exp(-eps)
    inner = b - 2 * b ** 2 + 2 * b ** 4 - b ** 5
    return -b / (1 - b) + inner ** (1 / 3) / (2 ** (1 / 3) * (1 - b) ** 2)


def expected_grid(eps, lower, upper):
    c = math.exp(eps / 2) / math.expm1(eps) if eps < 700 else 0.0
    s = max(upper - lower, abs(lower), abs(upper)) * min(max(c, 2.0 ** -20), 1.0)  # sensitivity (docs/sums.md)
    _, e = math.frexp(s)  # s = f 2^e, f in [0.5, 1)
    return math.ldexp(1.0, e - 1 - 20)


class TestStaircaseReferenceValues(OptdpTestCase):
    """docs/math.md's 6-decimal reference values (Delta = 1), compared to 5e-7."""

    def close6(self, sql, value):
        got = self.one("select " + sql)
        self.assertIsInstance(got, float, sql)
        self.assertLessEqual(abs(got - value), 5e-7, "%s = %r, reference %r" % (sql, got, value))

    def test_eps_1(self):
        self.close6("noise_cost('staircase', 1, 1, 'l1')", 0.959517)
        self.close6("noise_cost('laplace', 1, 1, 'l1')", 1.0)
        self.close6("staircase_gamma(1, 'l2')", 0.416737)
        self.close6("noise_cost('staircase', 1, 1, 'l2')", 1.918104)
        self.close6("noise_cost('laplace', 1, 1, 'l2')", 2.0)

    def test_eps_3(self):
        self.close6("noise_cost('staircase', 3, 1, 'l1')", 0.234821)
        self.close6("noise_cost('laplace', 3, 1, 'l1')", 0.333333)

    def test_eps_6(self):
        self.close6("noise_cost('staircase', 6, 1, 'l1')", 0.049911)
        self.close6("noise_cost('laplace', 6, 1, 'l1')", 0.166667)
        self.close6("noise_cost('staircase', 6, 1, 'l2')", 0.014106)
        self.close6("noise_cost('laplace', 6, 1, 'l2')", 0.055556)

    def test_readme_table(self):
        # README's table, to half a unit of its last printed digit.
        rows = [(0.1, 9.9958, 1e-4, 199.917, 1e-3), (0.5, 1.9793, 1e-4, 7.9170, 1e-4),
                (1, 0.9595, 1e-4, 1.9181, 1e-4), (2, 0.4255, 1e-4, 0.42273, 1e-5)]
        for eps, l1, u1, l2, u2 in rows:
            got1 = self.one("select noise_cost('staircase', ?, 1, 'l1')", (eps,))
            got2 = self.one("select noise_cost('staircase', ?, 1, 'l2')", (eps,))
            self.assertLessEqual(abs(got1 - l1), u1 / 2 + 1e-12, "eps %r l1 %r" % (eps, got1))
            self.assertLessEqual(abs(got2 - l2), u2 / 2 + 1e-12, "eps %r l2 %r" % (eps, got2))

    def test_l1_closed_form(self):
        # E|X| = delta e^(eps/2) / (e^eps - 1) at the l1-optimal gamma, to 1e-12.
        for eps in (0.01, 0.1, 0.5, 1, 2, 3, 6, 10, 20):
            got = self.one("select noise_cost('staircase', ?, 1, 'l1')", (eps,))
            want = math.exp(eps / 2) / math.expm1(eps)
            self.assertLessEqual(abs(got - want), 1e-12 * want, "eps %r: %r vs %r" % (eps, got, want))
            got5 = self.one("select noise_cost('staircase', ?, 5, 'l1')", (eps,))
            self.assertLessEqual(abs(got5 - 5 * want), 5e-12 * want, "eps %r delta 5" % eps)

    def test_l1_gamma_closed_form(self):
        for eps in (0.1, 1, 3, 6, 30):
            got = self.one("select staircase_gamma(?, 'l1')", (eps,))
            want = 1 / (1 + math.exp(eps / 2))
            self.assertLessEqual(abs(got - want), 1e-14 * want, "eps %r" % eps)

    def test_l2_gamma_closed_form(self):
        for eps in (0.1, 0.5, 1, 2, 3, 6):
            got = self.one("select staircase_gamma(?, 'l2')", (eps,))
            self.assertLessEqual(abs(got - l2_gamma(eps)), 1e-10, "eps %r: %r" % (eps, got))
            self.assertTrue(0 <= got <= 1)

    def test_costs_against_the_density(self):
        # noise_cost = the moments of the staircase density at staircase_gamma,
        # summed independently here; and that gamma is a local minimum.
        for eps in (0.5, 1, 3, 6):
            for delta in (1, 2.5):
                g1 = self.one("select staircase_gamma(?, 'l1')", (eps,))
                g2 = self.one("select staircase_gamma(?, 'l2')", (eps,))
                m1 = staircase_moments(eps, delta, g1)[0]
                m2 = staircase_moments(eps, delta, g2)[1]
                c1 = self.one("select noise_cost('staircase', ?, ?, 'l1')", (eps, delta))
                c2 = self.one("select noise_cost('staircase', ?, ?, 'l2')", (eps, delta))
                self.assertLessEqual(abs(c1 - m1), 1e-10 * m1, "eps %r delta %r l1 %r vs %r" % (eps, delta, c1, m1))
                self.assertLessEqual(abs(c2 - m2), 1e-10 * m2, "eps %r delta %r l2 %r vs %r" % (eps, delta, c2, m2))
                for h in (-1e-3, 1e-3):
                    self.assertLessEqual(m1, staircase_moments(eps, delta, g1 + h)[0])
                    self.assertLessEqual(m2, staircase_moments(eps, delta, g2 + h)[1])

    def test_laplace_costs(self):
        for eps, delta in ((0.5, 1), (1, 3), (2, 0.25)):
            self.assertAlmostEqual(self.one("select noise_cost('laplace', ?, ?, 'l1')", (eps, delta)),
                                   delta / eps, delta=1e-15 * delta / eps)
            self.assertAlmostEqual(self.one("select noise_cost('laplace', ?, ?, 'l2')", (eps, delta)),
                                   2 * delta ** 2 / eps ** 2, delta=1e-15 * 2 * delta ** 2 / eps ** 2)

    def test_staircase_never_worse_than_laplace(self):
        for eps in (0.1, 0.5, 1, 2, 5, 10):
            for cost in ("l1", "l2"):
                s, l = self.db.execute("select noise_cost('staircase', ?, 1, ?), noise_cost('laplace', ?, 1, ?)",
                                       (eps, cost, eps, cost)).fetchone()
                self.assertLessEqual(s, l * (1 + 1e-12), "eps %r %s" % (eps, cost))

    def test_deterministic_and_real(self):
        row = self.db.execute("select typeof(staircase_gamma(1, 'l1')), typeof(noise_cost('laplace', 1, 1, 'l2')), "
                              "typeof(dp_sum_grid(1, 0, 1))").fetchone()
        self.assertEqual(row, ("real", "real", "real"))


class TestGrid(OptdpTestCase):
    def test_dp_sum_grid_values(self):
        for eps, lower, upper in ((1, 0, 1), (1, 0, 100), (0.1, -5, 5), (3, 0, 200000), (60, 0, 10),
                                  (1e-9, 0, 1), (0.5, -0.001, 0.002), (2, 1e6, 1e6 + 3)):
            g = self.one("select dp_sum_grid(?, ?, ?)", (eps, lower, upper))
            self.assertEqual(g, expected_grid(eps, lower, upper), "dp_sum_grid(%r, %r, %r)" % (eps, lower, upper))
            m, _ = math.frexp(g)
            self.assertEqual(m, 0.5, "a power of two")

    def test_integer_bounds_of_width_below_2_21_sum_exactly(self):
        # Reference: integer data with integer bounds of width up to 2^21 is
        # summed exactly (g <= 1). Exactly 2^21 gives g = 2 when eps is small
        # (the scale is clamped to the width), so "up to" means "below".
        for eps in (0.01, 1, 60):
            self.assertLessEqual(self.one("select dp_sum_grid(?, 0, ?)", (eps, 2 ** 21 - 1)), 1.0)
        self.db.execute("create table t(x)")
        self.db.executemany("insert into t values (?)", [(2 ** 21 - 1 - i,) for i in range(7)])
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, ?) from t", (2 ** 21 - 1,)),
                         float(sum(2 ** 21 - 1 - i for i in range(7))))

    def test_outputs_are_multiples_of_the_grid(self):
        self.db.execute("create table t(g, x)")
        self.db.executemany("insert into t values (?, ?)",
                            [(i % 50, (i * 0.7310585786300049) % 17 - 4.1) for i in range(400)])
        self.one("select dp_seed(99)")
        cases = [("staircase_sum(x, ?, ?, ?)", (0.3, -3.7, 12.25)),
                 ("staircase_sum(x, ?, ?, ?, 'l2')", (1.0, -3.7, 12.25)),
                 ("staircase_sum(x, ?, ?, ?, 'gamma=0.3')", (2.0, -1, 1)),
                 ("laplace_sum(x, ?, ?, ?)", (0.7, -3.7, 12.25))]
        for call, (eps, lower, upper) in cases:
            g = self.one("select dp_sum_grid(?, ?, ?)", (eps, lower, upper))
            values = [r[0] for r in self.all("select %s from t group by g" % call, (eps, lower, upper))]
            self.assertEqual(len(values), 50)
            for v in values:
                self.assertIsInstance(v, float)
                self.assertTrue((v / g).is_integer(), "%s: %r is not a multiple of %r" % (call, v, g))
        for call, args in (("staircase_sum(x, 0.8, 3)", ()), ("laplace_sum(x, 0.8, 3)", ())):
            g = self.one("select dp_sum_grid(0.8, 0, 3)")
            for (v,) in self.all("select %s from t group by g" % call, args):
                self.assertTrue((v / g).is_integer(), "%s: %r" % (call, v))


class TestExactSums(OptdpTestCase):
    """eps = 60, cost 'l1': the noise is 0 except with probability ~2e-14."""

    def setUp(self):
        super().setUp()
        self.db.executescript("""
            create table t(k text, x);
            insert into t values ('a', 5), ('a', 20), ('a', -3), ('a', NULL), ('b', 1e999), ('b', -1e999),
                                 ('b', 2.5), ('c', NULL);
            create table keys(k text primary key);
            insert into keys values ('a'), ('b'), ('c'), ('d');
        """)

    def test_clamping(self):
        # [0, 10]: 5 + 10 + 0 (NULL skipped) + 10 + 0 + 2.5 = 27.5
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 10) from t"), 27.5)
        self.assertEqual(self.one("select staircase_sum(x, 60, 10) from t"), 27.5)
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 10, 'l1') from t"), 27.5)
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 10, 'gamma=0') from t"), 27.5)
        # [-2, 3]: 3 + 3 - 2 + 3 - 2 + 2.5 = 7.5
        self.assertEqual(self.one("select staircase_sum(x, 60, -2, 3) from t"), 7.5)
        # bounds as REAL and as INTEGER are the same parameters
        self.assertEqual(self.one("select staircase_sum(x, 60.0, -2.0, 3.0) from t"), 7.5)

    def test_clamping_l2_and_laplace_loosely(self):
        # l2 at eps = 60 widens the first step (noise |z| < ~1e-8), and
        # laplace_sum has scale (upper - lower)/eps = 1/6: loose bounds only.
        self.assertLess(abs(self.one("select staircase_sum(x, 60, 0, 10, 'l2') from t") - 27.5), 1e-6)
        self.assertLess(abs(self.one("select laplace_sum(x, 60, 0, 10) from t") - 27.5), 5)
        self.assertLess(abs(self.one("select laplace_sum(x, 60, 10) from t") - 27.5), 5)
        self.assertLess(abs(self.one("select laplace_sum(x, 60, -2, 3) from t") - 7.5), 3)

    def test_rows_rounded_to_the_grid(self):
        # g = 2^-40 for eps = 60 on [0, 1]; each row is rounded to the grid (ties to even).
        self.assertEqual(self.one("select dp_sum_grid(60, 0, 1)"), 2.0 ** -40)
        self.db.execute("create table f(x)")
        self.db.executemany("insert into f values (?)", [(0.1,)] * 3 + [(1 / 3,)] * 2)
        want = (3 * round(0.1 * 2 ** 40) + 2 * round((1 / 3) * 2 ** 40)) / 2 ** 40
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 1) from f"), want)
        # Row order cannot change the result (exact integer sum).
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 1) from (select x from f order by x desc)"), want)

    def test_group_by(self):
        rows = self.all("select k, staircase_sum(x, 60, 0, 10) from t group by k order by k")
        self.assertEqual(rows, [("a", 15.0), ("b", 12.5), ("c", 0.0)])

    def test_left_join_from_public_keys(self):
        rows = self.all("select keys.k, staircase_sum(t.x, 60, 0, 10), typeof(staircase_sum(t.x, 60, 0, 10)) "
                        "from keys left join t on t.k = keys.k group by keys.k order by keys.k")
        self.assertEqual(rows, [("a", 15.0, "real"), ("b", 12.5, "real"), ("c", 0.0, "real"), ("d", 0.0, "real")])
        rows = self.all("select keys.k, laplace_sum(t.x, 60, 0, 10) from keys left join t on t.k = keys.k "
                        "group by keys.k order by keys.k")
        self.assertEqual([r[0] for r in rows], ["a", "b", "c", "d"])
        for (_, v), want in zip(rows, (15, 12.5, 0, 0)):
            self.assertIsInstance(v, float)
            self.assertLess(abs(v - want), 5)

    def test_integers_are_exact(self):
        self.db.execute("create table big(x)")
        self.db.executemany("insert into big values (?)", [(i,) for i in range(1000)])
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 1000) from big"), 499500.0)
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 500) from big"), 500 * 499 / 2 + 500 * 500)


class TestEmptyInput(OptdpTestCase):
    def setUp(self):
        super().setUp()
        self.db.execute("create table t(x)")

    def test_real_not_null(self):
        for call in ("staircase_sum(x, 60, 10)", "staircase_sum(x, 60, 0, 10)", "staircase_sum(x, 60, 0, 10, 'l1')",
                     "staircase_sum(x, 60, -5, 10, 'gamma=0')"):
            v, t = self.db.execute("select %s, typeof(%s) from t" % (call, call)).fetchone()
            self.assertEqual((v, t), (0.0, "real"), call)
        for call in ("staircase_sum(x, 1, 0, 10, 'l2')", "staircase_sum(x, 1, 0, 10, 'gamma=0.5')",
                     "laplace_sum(x, 60, 10)", "laplace_sum(x, 60, 0, 10)"):
            v = self.one("select %s from t" % call)
            self.assertIsInstance(v, float, call)
            self.assertLess(abs(v), 100, call)

    def test_only_null_rows(self):
        self.db.execute("insert into t values (NULL), (NULL)")
        self.assertEqual(self.one("select staircase_sum(x, 60, 0, 10) from t"), 0.0)

    def test_one_row_left_join(self):
        self.assertEqual(self.one("select staircase_sum(t.x, 60, 0, 10) from (select 1) left join t on 1"), 0.0)

    def test_errors_from_the_statement(self):
        self.assertError("select staircase_sum(x, 0, 10) from t", "staircase_sum: eps must be a finite number > 0, but is 0")
        self.assertError("select staircase_sum(x, 1, 0, 10, 'l3') from t",
                         "staircase_sum: cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is 'l3'")
        self.assertError("select laplace_sum(x, 1, 10, 0) from t",
                         "laplace_sum: lower must be less than upper, but lower is 10 and upper is 0")
        self.assertError("select staircase_sum(x, x, 10) from t",
                         "staircase_sum: eps must be a literal or a bound parameter (optdp fixes the noise before it "
                         "reads any row), but is the expression 'x'")


class TestSeed(OptdpTestCase):
    QUERY = ("select g, staircase_sum(x, 1, 0, 10), staircase_sum(x, 0.5, -1, 10, 'l2'), laplace_sum(x, 1, 10) "
             "from t group by g order by g")

    def setUp(self):
        super().setUp()
        self.db.execute("create table t(g, x)")
        self.db.executemany("insert into t values (?, ?)", [(i % 20, i * 0.37) for i in range(100)])

    def run_seeded(self, seed, db=None):
        db = db or self.db
        db.execute("select dp_seed(?)", (seed,)).fetchall()
        return db.execute(self.QUERY).fetchall()

    def test_same_seed_same_noise(self):
        a = self.run_seeded(7)
        b = self.run_seeded(7)
        self.assertEqual(a, b)
        other = connect()
        try:
            other.execute("create table t(g, x)")
            other.executemany("insert into t values (?, ?)", [(i % 20, i * 0.37) for i in range(100)])
            self.assertEqual(self.run_seeded(7, other), a)
        finally:
            other.close()

    def test_other_seed_other_noise(self):
        self.assertNotEqual(self.run_seeded(7), self.run_seeded(8))

    def test_consecutive_draws_differ(self):
        self.one("select dp_seed(7)")
        self.assertNotEqual(self.all(self.QUERY), self.all(self.QUERY))


class TestSumStatistics(OptdpTestCase):
    """Seeded (deterministic) checks that the mean noise matches noise_cost,
    within 5 standard errors (the sample standard deviation over sqrt(N))."""

    N = 3000

    def setUp(self):
        super().setUp()
        self.db.execute("create table t(g, x)")
        self.db.executemany("insert into t values (?, ?)", [(g, 0.25) for g in range(self.N)])

    def noise(self, call, seed, true):
        self.one("select dp_seed(?)", (seed,))
        values = [r[0] for r in self.all("select %s from t group by g" % call)]
        self.assertEqual(len(values), self.N)
        return [v - true for v in values]

    def check_mean(self, samples, want, what):
        n = len(samples)
        mean = math.fsum(samples) / n
        sd = math.sqrt(math.fsum((s - mean) ** 2 for s in samples) / (n - 1))
        self.assertLess(abs(mean - want), 5 * sd / math.sqrt(n), "%s: mean %r, expected %r" % (what, mean, want))

    def test_staircase_l1(self):
        d = self.noise("staircase_sum(x, 1, 0, 1)", 31, 0.25)
        self.check_mean([abs(v) for v in d], self.one("select noise_cost('staircase', 1, 1, 'l1')"), "E|X|")
        self.check_mean(d, 0.0, "E[X]")

    def test_staircase_l2(self):
        d = self.noise("staircase_sum(x, 2, -1, 1, 'l2')", 32, 0.25)
        self.check_mean([v * v for v in d], self.one("select noise_cost('staircase', 2, 2, 'l2')"), "E[X^2]")

    def test_laplace_l1(self):
        d = self.noise("laplace_sum(x, 1, 1)", 33, 0.25)
        self.check_mean([abs(v) for v in d], self.one("select noise_cost('laplace', 1, 1, 'l1')"), "E|X|")


class TestSumErrors(OptdpTestCase):
    ROW = " from (select 1 as x)"

    def both(self, args, message):
        """The same message, with the function's name, from staircase_sum and laplace_sum."""
        for fn in ("staircase_sum", "laplace_sum"):
            self.assertError("select %s(x, %s)%s" % (fn, args, self.ROW), "%s: %s" % (fn, message))

    def test_eps(self):
        self.both("0, 10", "eps must be a finite number > 0, but is 0")
        self.both("-1, 10", "eps must be a finite number > 0, but is -1")
        self.both("-0.5, 0, 10", "eps must be a finite number > 0, but is -0.5")
        self.both("1e999, 10", "eps must be a finite number > 0, but is inf")
        self.both("-1e999, 0, 10", "eps must be a finite number > 0, but is -inf")
        self.both("1e-11, 10", "eps must be at least 2^-30 (9.3e-10) for sums, but is 1e-11")
        self.both("9.3e-10, 0, 10", "eps must be at least 2^-30 (9.3e-10) for sums, but is 9.3e-10")
        self.both("NULL, 10", "eps must be a number, but is NULL")
        self.both("'abc', 10", "eps must be a number, but is text 'abc'")
        self.both("x'010203', 0, 10", "eps must be a number, but is a blob of 3 bytes")
        # 2^-30 itself is allowed
        self.assertIsInstance(self.one("select staircase_sum(x, ?, 10)" + self.ROW, (2.0 ** -30,)), float)

    def test_delta(self):
        self.both("1, 0", "delta must be a finite number > 0, but is 0")
        self.both("1, -1", "delta must be a finite number > 0, but is -1")
        self.both("1, 1e999", "delta must be a finite number > 0, but is inf")
        self.both("1, -1e999", "delta must be a finite number > 0, but is -inf")
        self.both("1, NULL", "delta must be a number, but is NULL")
        self.both("1, 'abc'", "delta must be a number, but is text 'abc'")
        self.both("1, x'01'", "delta must be a number, but is a blob of 1 byte")

    def test_lower_upper(self):
        self.both("1, 100, 1", "lower must be less than upper, but lower is 100 and upper is 1")
        self.both("1, 5, 5", "lower must be less than upper, but lower is 5 and upper is 5")
        self.both("1, 0.5, -0.5", "lower must be less than upper, but lower is 0.5 and upper is -0.5")
        self.both("1, -1e999, 1", "lower must be finite, but is -inf")
        self.both("1, 1e999, 1", "lower must be finite, but is inf")
        self.both("1, 0, 1e999", "upper must be finite, but is inf")
        self.both("1, 0, -1e999", "upper must be finite, but is -inf")
        self.both("1, NULL, 1", "lower must be a number, but is NULL")
        self.both("1, 0, NULL", "upper must be a number, but is NULL")
        self.both("1, 'a', 1", "lower must be a number, but is text 'a'")
        self.both("1, 0, 'b'", "upper must be a number, but is text 'b'")
        self.both("1, x'0000', 1", "lower must be a number, but is a blob of 2 bytes")
        self.both("1, 0, x'00'", "upper must be a number, but is a blob of 1 byte")
        self.both("1, -1e308, 1e308", "upper - lower must be finite, but is inf")
        self.both("1, 1e-300, 2e-300", "max(upper - lower, |lower|, |upper|) must be at least 2^-960 (1.1e-289), "
                  "but is 2e-300")
        self.both("1, -2e-300, -1e-300", "max(upper - lower, |lower|, |upper|) must be at least 2^-960 (1.1e-289), "
                  "but is 2e-300")
        # Bounds far from 0: the grid follows the sensitivity max(|lower|, |upper|).
        self.assertIsInstance(self.one("select staircase_sum(x, 1, 1e30, 1.00000000000001e30)" + self.ROW), float)

    def test_cost(self):
        def sc(cost, message):
            self.assertError("select staircase_sum(x, 1, 0, 10, %s)%s" % (cost, self.ROW), "staircase_sum: " + message)
        bad = "cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is '%s'"
        for text in ("l3", "L1", " l1", "l1 ", "", "gamma=", "gamma=-0.1", "gamma=1.5", "gamma=abc", "gamma= 0.5",
                     "gamma=0.5x", "gamma=inf", "gamma=nan"):
            sc("'%s'" % text, bad % text)
        sc("1", "cost must be text ('l1', 'l2' or 'gamma=G'), but is 1")
        sc("1.5", "cost must be text ('l1', 'l2' or 'gamma=G'), but is 1.5")
        sc("NULL", "cost must be text ('l1', 'l2' or 'gamma=G'), but is NULL")
        sc("x'01'", "cost must be text ('l1', 'l2' or 'gamma=G'), but is a blob of 1 byte")
        # the edges of gamma are allowed
        for text in ("gamma=0", "gamma=1", "gamma=0.5", "gamma=1e-3"):
            self.assertIsInstance(self.one("select staircase_sum(x, 1, 0, 10, '%s')%s" % (text, self.ROW)), float)

    def test_long_cost_is_shortened(self):
        msg = self.error_of("select staircase_sum(x, 1, 0, 10, ?)" + self.ROW, ("z" * 100,))
        self.assertEqual(msg, "staircase_sum: cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is '%s'"
                         % ("z" * 40 + "..."))

    def test_x_is_read_like_sum(self):
        # No error for any x: an error would tell what the rows hold. Text and
        # blobs are read as sum() reads them (a number's text as the number,
        # anything else as 0), then clamped. staircase_sum at eps = 60: the
        # noise is below 1e-6 here; laplace_sum: only the type is checked.
        for sql, value in [("select %s(x, 60, 0, 10) from (select 'a' as x)", 0.0),
                           ("select %s(x, 60, 0, 10) from (select 1 as x union all select x'00')", 1.0),
                           ("select %s(x, 60, 0, 10) from (select '5' as x)", 5.0),
                           ("select %s(x, 60, 2, 10) from (select 'a' as x)", 2.0)]:
            self.assertAlmostEqual(self.one(sql % "staircase_sum"), value, places=6)
            self.assertIsInstance(self.one(sql % "laplace_sum"), float)

    def test_parameters_that_are_not_literals(self):
        # Refused on every path, with the argument as written.
        rows = " from (select 1 as x union all select 2)"
        lit = ": %s must be a literal or a bound parameter (optdp fixes the noise before it reads any row), " \
              "but is the expression '%s'"
        for fn in ("staircase_sum", "laplace_sum"):
            for where in ("", " where 0"):
                self.assertError("select %s(x, x, 10)%s%s" % (fn, rows, where), fn + lit % ("eps", "x"))
                self.assertError("select %s(x, 1, 10 * x)%s%s" % (fn, rows, where), fn + lit % ("delta", "10 * x"))
                self.assertError("select %s(x, 1, x - 1, 10)%s%s" % (fn, rows, where), fn + lit % ("lower", "x - 1"))
                self.assertError("select %s(x, 1, 0, x + 5)%s%s" % (fn, rows, where), fn + lit % ("upper", "x + 5"))
        self.assertError("select staircase_sum(x, 1, 0, 10, case x when 1 then 'l1' else 'l2' end)" + rows,
                         "staircase_sum" + lit % ("cost", "case x when 1 then 'l1' else 'l2' end"))
        self.assertError("select staircase_sum(x, 1, 0, 10, 'l1' || '')" + rows,
                         "staircase_sum" + lit % ("cost", "'l1' || ''"))

    def test_literal_forms(self):
        rows = " from (select 5 as x)"
        for form in ("60, 0, 10", "60.0, -0, +10", "(60), (0), (10)", "6e1, 0x0, 0xA", "- -60, 0, 10"):
            sql = "select staircase_sum(x, %s)%s" % (form, rows)
            self.assertAlmostEqual(self.one(sql), 5.0, places=6, msg=sql)
        self.assertAlmostEqual(self.one("select staircase_sum(x, ?, ?, ?, ?)" + rows, (60, 0, 10.0, "l2")), 5.0, places=6)

    def test_wrong_argument_counts(self):
        for fn, counts in (("staircase_sum", (0, 1, 2, 6)), ("laplace_sum", (0, 1, 2, 5)),
                           ("staircase_gamma", (0, 1, 3)), ("noise_cost", (0, 3, 5)), ("dp_sum_grid", (0, 2, 4))):
            for n in counts:
                self.assertError("select %s(%s)" % (fn, ", ".join(["1"] * n)),
                                 "wrong number of arguments to function %s()" % fn)

    def test_errors_leave_the_connection_usable(self):
        self.error_of("select staircase_sum(x, 0, 10)" + self.ROW)
        self.assertEqual(self.one("select staircase_sum(x, 60, 10)" + self.ROW), 1.0)


class TestScalarErrors(OptdpTestCase):
    def test_staircase_gamma(self):
        self.assertScalarError("select staircase_gamma(0, 'l1')", "staircase_gamma: eps must be a finite number > 0, but is 0")
        self.assertScalarError("select staircase_gamma(-2, 'l1')", "staircase_gamma: eps must be a finite number > 0, but is -2")
        self.assertScalarError("select staircase_gamma(1e999, 'l2')", "staircase_gamma: eps must be a finite number > 0, but is inf")
        self.assertScalarError("select staircase_gamma(NULL, 'l1')", "staircase_gamma: eps must be a number, but is NULL")
        self.assertScalarError("select staircase_gamma('1', 'l1')", "staircase_gamma: eps must be a number, but is text '1'")
        self.assertScalarError("select staircase_gamma(1, 'l3')", "staircase_gamma: cost must be 'l1' or 'l2', but is 'l3'")
        self.assertScalarError("select staircase_gamma(1, 'gamma=0.5')",
                         "staircase_gamma: cost must be 'l1' or 'l2', but is 'gamma=0.5'")
        self.assertScalarError("select staircase_gamma(1, NULL)", "staircase_gamma: cost must be text ('l1' or 'l2'), but is NULL")
        self.assertScalarError("select staircase_gamma(1, 2)", "staircase_gamma: cost must be text ('l1' or 'l2'), but is 2")

    def test_noise_cost(self):
        self.assertScalarError("select noise_cost('gauss', 1, 1, 'l1')",
                         "noise_cost: mechanism must be 'staircase' or 'laplace', but is text 'gauss'")
        self.assertScalarError("select noise_cost(1, 1, 1, 'l1')",
                         "noise_cost: mechanism must be text ('staircase' or 'laplace'), but is 1")
        self.assertScalarError("select noise_cost(NULL, 1, 1, 'l1')",
                         "noise_cost: mechanism must be text ('staircase' or 'laplace'), but is NULL")
        for mech in ("staircase", "laplace"):
            pre = "select noise_cost('%s', " % mech
            self.assertScalarError(pre + "0, 1, 'l1')", "noise_cost: eps must be a finite number > 0, but is 0")
            self.assertScalarError(pre + "-1e999, 1, 'l1')", "noise_cost: eps must be a finite number > 0, but is -inf")
            self.assertScalarError(pre + "NULL, 1, 'l1')", "noise_cost: eps must be a number, but is NULL")
            self.assertScalarError(pre + "1, 0, 'l1')", "noise_cost: delta must be a finite number > 0, but is 0")
            self.assertScalarError(pre + "1, -1, 'l1')", "noise_cost: delta must be a finite number > 0, but is -1")
            self.assertScalarError(pre + "1, 1e999, 'l1')", "noise_cost: delta must be a finite number > 0, but is inf")
            self.assertScalarError(pre + "1, 'a', 'l1')", "noise_cost: delta must be a number, but is text 'a'")
            self.assertScalarError(pre + "1, x'00', 'l1')", "noise_cost: delta must be a number, but is a blob of 1 byte")
            self.assertScalarError(pre + "1, 1, 'l3')", "noise_cost: cost must be 'l1' or 'l2', but is 'l3'")
            self.assertScalarError(pre + "1, 1, NULL)", "noise_cost: cost must be text ('l1' or 'l2'), but is NULL")

    def test_dp_sum_grid(self):
        self.assertScalarError("select dp_sum_grid(0, 0, 1)", "dp_sum_grid: eps must be a finite number > 0, but is 0")
        self.assertScalarError("select dp_sum_grid(1e999, 0, 1)", "dp_sum_grid: eps must be a finite number > 0, but is inf")
        self.assertScalarError("select dp_sum_grid(1e-11, 0, 1)",
                         "dp_sum_grid: eps must be at least 2^-30 (9.3e-10) for sums, but is 1e-11")
        self.assertScalarError("select dp_sum_grid(NULL, 0, 1)", "dp_sum_grid: eps must be a number, but is NULL")
        self.assertScalarError("select dp_sum_grid(1, 1, 0)", "dp_sum_grid: lower must be less than upper, but lower is 1 and upper is 0")
        self.assertScalarError("select dp_sum_grid(1, -1e999, 0)", "dp_sum_grid: lower must be finite, but is -inf")
        self.assertScalarError("select dp_sum_grid(1, 0, 1e999)", "dp_sum_grid: upper must be finite, but is inf")
        self.assertScalarError("select dp_sum_grid(1, NULL, 0)", "dp_sum_grid: lower must be a number, but is NULL")
        self.assertScalarError("select dp_sum_grid(1, 0, 'a')", "dp_sum_grid: upper must be a number, but is text 'a'")


if __name__ == "__main__":
    sys.exit(main(__name__, sys.argv))
