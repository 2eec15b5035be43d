#!/usr/bin/python3
"""Mechanism matrices and optimal post-processing through Python's
sqlite3 module: the table-valued functions geometric_matrix,
derivation_matrix, staircase_pmf, optimal_remap, optimal_mechanism,
minimax_remap, minimax_mechanism, and the scalars remap_count, optimal_loss,
minimax_loss, dp_derivable.

    /usr/bin/python3 tests/python/test_matrices.py --module build/optdp.so [unittest args]

Expected values come from docs/math.md's formulas, computed here in Python; the
matrix identities (rows sum to 1, the alpha ratio, G(n,a) T(a,b) = G(n,b),
G T = minimax_mechanism) are checked in SQL where that is natural.
Everything is deterministic and small (the whole file runs in about a second).
"""
import json
import math
import sys

from optdp_testlib import OptdpTestCase, hidden, main

INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63


def geometric(n, a):
    """G(n, a) of docs/math.md: P[out = z | true k]."""
    def entry(k, z):
        if n == 0:
            return 1.0
        if z in (0, n):
            return a ** abs(z - k) / (1 + a)
        return (1 - a) / (1 + a) * a ** abs(z - k)
    return [[entry(k, z) for z in range(n + 1)] for k in range(n + 1)]


def loss_matrix(spec, n):
    if isinstance(spec, list):
        return spec
    if spec == "absolute":
        f = lambda d: float(d)
    elif spec == "squared":
        f = lambda d: float(d * d)
    elif spec == "binary":
        f = lambda d: 0.0 if d == 0 else 1.0
    elif spec.startswith("power:"):
        p = float(spec[6:])
        f = lambda d: float(d) ** p
    else:
        raise ValueError(spec)
    return [[f(abs(i - r)) for r in range(n + 1)] for i in range(n + 1)]


def prior_vector(spec, n):
    if spec == "uniform":
        return [1.0 / (n + 1)] * (n + 1)
    p = json.loads(spec)
    s = math.fsum(p)
    return [v / s for v in p]


def sql_text(spec):
    return json.dumps(spec) if isinstance(spec, list) else spec


def expected_loss(x, L, prior):
    return math.fsum(prior[i] * x[i][r] * L[i][r] for i in range(len(x)) for r in range(len(x)))


def row_losses(x, L):
    return [math.fsum(x[i][r] * L[i][r] for r in range(len(x))) for i in range(len(x))]


def matmul(a, b):
    return [[math.fsum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


# A JSON loss matrix for n = 3: non-negative, non-decreasing in |i - r| along each row, asymmetric.
JSON_LOSS_3 = [[0, 1, 3, 3], [2, 0, 0.5, 4], [1, 1, 0, 1], [9, 2, 1, 0]]


class MatrixTestCase(OptdpTestCase):
    def matrix(self, fn, args, n):
        """The (n+1)x(n+1) matrix of a table-valued function; checks that every
        cell appears exactly once, row by row."""
        rows = self.all("select * from %s(%s)" % (fn, ", ".join("?" * len(args))), args)
        self.assertEqual(len(rows), (n + 1) ** 2, "%s%r" % (fn, args))
        self.assertEqual([(r[0], r[1]) for r in rows], [(i, j) for i in range(n + 1) for j in range(n + 1)],
                         "%s%r: cells in row-major order" % (fn, args))
        for r in rows:
            self.assertIsInstance(r[2], float)
        return [[rows[i * (n + 1) + j][2] for j in range(n + 1)] for i in range(n + 1)]

    def assertStochastic(self, x, tol, what):
        for i, row in enumerate(x):
            self.assertLessEqual(abs(math.fsum(row) - 1), tol, "%s: row %d sums to %r" % (what, i, math.fsum(row)))
            for j, v in enumerate(row):
                self.assertGreaterEqual(v, -tol, "%s: entry [%d][%d] = %r" % (what, i, j, v))

    def assertAlphaDP(self, x, a, tol, what):
        for i in range(len(x) - 1):
            for r in range(len(x)):
                self.assertGreaterEqual(x[i][r], a * x[i + 1][r] - tol, "%s: [%d][%d]" % (what, i, r))
                self.assertGreaterEqual(x[i + 1][r], a * x[i][r] - tol, "%s: [%d][%d]" % (what, i + 1, r))

    def assertMatrixClose(self, x, y, tol, what):
        self.assertEqual(len(x), len(y))
        for i in range(len(x)):
            for j in range(len(x)):
                self.assertLessEqual(abs(x[i][j] - y[i][j]), tol, "%s: [%d][%d] %r vs %r" % (what, i, j, x[i][j], y[i][j]))

    def json_of_geometric(self, n, a):
        """G(n, a) as a JSON matrix built in SQL from geometric_matrix rows."""
        return self.one("select json_group_array(json(r)) from (select input, json_group_array(probability) as r "
                        "from (select * from geometric_matrix(?, ?) order by input, output) "
                        "group by input order by input)", (n, a))


class TestGeometricMatrix(MatrixTestCase):
    CASES = [(0, 0.5), (1, 0.5), (2, 0.3), (5, 0.5), (10, 0.9), (30, 0.1), (12, 0.999), (4, 1e-300), (3, 5e-324)]

    def test_closed_form(self):
        for n, a in self.CASES:
            got = self.matrix("geometric_matrix", (n, a), n)
            want = geometric(n, a)
            for k in range(n + 1):
                for z in range(n + 1):
                    self.assertLessEqual(abs(got[k][z] - want[k][z]), 1e-14 * want[k][z],
                                         "G(%d, %r)[%d][%d] = %r, closed form %r" % (n, a, k, z, got[k][z], want[k][z]))

    def test_rows_sum_to_one_in_sql(self):
        for n, a in self.CASES + [(200, 0.999), (300, 0.5)]:
            rows = self.all("select input, sum(probability), count(*) from geometric_matrix(?, ?) group by input "
                            "order by input", (n, a))
            self.assertEqual([r[0] for r in rows], list(range(n + 1)))
            for i, s, c in rows:
                self.assertEqual(c, n + 1)
                self.assertLessEqual(abs(s - 1), 1e-12, "G(%d, %r) row %d sums to %r" % (n, a, i, s))

    def test_neighbouring_rows_respect_alpha_in_sql(self):
        for n, a in [(1, 0.5), (5, 0.5), (10, 0.9), (16, 0.1), (12, 0.999)]:
            bad = self.one("select count(*) from geometric_matrix(?1, ?2) g1 join geometric_matrix(?1, ?2) g2 "
                           "on g2.input = g1.input + 1 and g2.output = g1.output "
                           "where g1.probability < ?2 * g2.probability * (1 - 1e-12) "
                           "or g2.probability < ?2 * g1.probability * (1 - 1e-12)", (n, a))
            self.assertEqual(bad, 0, "G(%d, %r)" % (n, a))
            # and the ratio is attained (the mechanism is not more private than alpha)
            worst = self.one("select min(g2.probability / g1.probability) from geometric_matrix(?1, ?2) g1 "
                             "join geometric_matrix(?1, ?2) g2 on g2.input = g1.input + 1 and g2.output = g1.output",
                             (n, a))
            self.assertAlmostEqual(worst, a, delta=1e-12)

    def test_clamping_a_private_count_is_g(self):
        # max(0, min(n, private_count(alpha))) is G(n, alpha): with alpha = 1e-300 it is the clamped count.
        self.db.execute("create table t(x)")
        self.db.executemany("insert into t values (?)", [(i,) for i in range(7)])
        self.assertEqual(self.one("select max(0, min(5, private_count(1e-300))) from t"), 5)


class TestDerivationMatrix(MatrixTestCase):
    CASES = [(0, 0.5, 0.5), (1, 0.3, 0.6), (4, 0.5, 0.8), (10, 0.1, 0.9), (25, 0.6, 0.61), (40, 0.2, 0.95),
             (8, 0.5, 0.5)]

    def test_g_alpha_times_t_is_g_beta_in_sql(self):
        for n, a, b in self.CASES:
            worst = self.one("""
                select max(abs(coalesce(p.probability, 0) - g.probability)), count(*)
                from geometric_matrix(?1, ?3) g left join (
                  select ga.input, t.output, sum(ga.probability * t.probability) as probability
                  from geometric_matrix(?1, ?2) ga join derivation_matrix(?1, ?2, ?3) t on t.observed = ga.output
                  group by ga.input, t.output) p on p.input = g.input and p.output = g.output""", (n, a, b))
            self.assertLessEqual(worst, 1e-12, "G(%d, %r) T(%r, %r) vs G(%d, %r)" % (n, a, a, b, n, b))

    def test_t_is_stochastic(self):
        for n, a, b in self.CASES:
            t = self.matrix("derivation_matrix", (n, a, b), n)
            self.assertStochastic(t, 1e-12, "T(%d, %r, %r)" % (n, a, b))

    def test_equal_levels_give_identity(self):
        t = self.matrix("derivation_matrix", (6, 0.4, 0.4), 6)
        self.assertMatrixClose(t, [[float(i == j) for j in range(7)] for i in range(7)], 1e-12, "T(a, a)")

    def test_chain_of_levels(self):
        # Releasing at 0.3, then 0.6, then 0.8 is the same as releasing at 0.3 then 0.8 directly.
        n = 6
        t1 = self.matrix("derivation_matrix", (n, 0.3, 0.6), n)
        t2 = self.matrix("derivation_matrix", (n, 0.6, 0.8), n)
        t13 = self.matrix("derivation_matrix", (n, 0.3, 0.8), n)
        self.assertMatrixClose(matmul(t1, t2), t13, 1e-12, "T(.3,.6) T(.6,.8) vs T(.3,.8)")

    def test_python_product(self):
        n, a, b = 7, 0.45, 0.7
        prod = matmul(geometric(n, a), self.matrix("derivation_matrix", (n, a, b), n))
        self.assertMatrixClose(prod, geometric(n, b), 1e-12, "G(a) T vs G(b)")

    def test_less_privacy_cannot_be_derived(self):
        self.assertError("select * from derivation_matrix(4, 0.8, 0.5)",
                         "derivation_matrix: alpha must be at most beta (only more privacy can be added), "
                         "but alpha is 0.8 and beta is 0.5")


class TestStaircasePmf(MatrixTestCase):
    @staticmethod
    def pmf(eps, D, r, i):
        b = math.exp(-eps)
        a = (1 - b) / (2 * r + 2 * b * (D - r) - (1 - b))
        k, u = divmod(abs(i), D)
        return a * b ** (k if u < r else k + 1)

    @staticmethod
    def cost(eps, D, r, p):
        # E|X|^p from the pmf, summed far into the tail.
        return math.fsum(2 * TestStaircasePmf.pmf(eps, D, r, i) * i ** p for i in range(1, D * int(60 / eps + 2)))

    def pmf_rows(self, *args):
        return self.all("select noise, probability from staircase_pmf(%s)" % ", ".join("?" * len(args)), args)

    def test_formula_with_explicit_r(self):
        for eps, D, r in [(1.0, 3, 2), (1.0, 3, 1), (1.0, 3, 3), (0.5, 7, 4), (3, 10, 1), (2, 1, 1)]:
            rows = self.pmf_rows(eps, D, -4 * D, 4 * D, "r=%d" % r)
            self.assertEqual([i for i, _ in rows], list(range(-4 * D, 4 * D + 1)))
            for i, p in rows:
                want = self.pmf(eps, D, r, i)
                self.assertLessEqual(abs(p - want), 1e-13 * want, "eps %r D %d r %d i %d: %r vs %r" % (eps, D, r, i, p, want))

    def test_sums_to_one_and_symmetric(self):
        for eps, D, cost in [(1.0, 3, "l1"), (0.5, 5, "l2"), (2.0, 4, "r=3"), (1.0, 1, "l1")]:
            span = D * int(45 / eps)
            rows = self.pmf_rows(eps, D, -span, span, cost)
            self.assertLessEqual(abs(math.fsum(p for _, p in rows) - 1), 1e-12, "eps %r D %d %s" % (eps, D, cost))
            p = dict(rows)
            for i in range(1, span + 1):
                self.assertEqual(p[i], p[-i])

    def test_delta_one_is_the_geometric_mechanism(self):
        for eps in (0.3, 1.0, 4.0):
            a = math.exp(-eps)
            for i, p in self.pmf_rows(eps, 1, -10, 10):
                want = (1 - a) / (1 + a) * a ** abs(i)
                self.assertLessEqual(abs(p - want), 1e-13 * want)

    def test_default_cost_is_l1(self):
        self.assertEqual(self.pmf_rows(1.0, 6, -20, 20), self.pmf_rows(1.0, 6, -20, 20, "l1"))

    def test_l1_and_l2_choose_the_best_r(self):
        for eps, D in [(0.5, 6), (1.0, 5), (2.0, 8), (4.0, 9)]:
            for cost, p in (("l1", 1), ("l2", 2)):
                rows = dict(self.pmf_rows(eps, D, 0, D - 1, cost))
                r = sum(1 for i in range(D) if rows[i] == rows[0])
                costs = [self.cost(eps, D, k, p) for k in range(1, D + 1)]
                self.assertLessEqual(costs[r - 1], min(costs) * (1 + 1e-12),
                                     "eps %r D %d %s: r = %d, costs %r" % (eps, D, cost, r, costs))

    def test_where_syntax(self):
        self.assertEqual(self.all("select noise, probability from staircase_pmf where eps = 1.0 and delta = 3 "
                                  "and lo = -2 and hi = 2 and cost = 'r=1'"),
                         self.pmf_rows(1.0, 3, -2, 2, "r=1"))

    def test_extreme_lo(self):
        rows = self.pmf_rows(1.0, 3, INT64_MIN, INT64_MIN + 2)
        self.assertEqual([i for i, _ in rows], [INT64_MIN, INT64_MIN + 1, INT64_MIN + 2])
        self.assertEqual([p for _, p in rows], [0.0, 0.0, 0.0])

    def test_extreme_hi_terminates(self):
        # hi = 2^63 - 1: the row counter must not overflow and wrap around
        # (which would loop forever; the watchdog interrupts it after 3 s).
        self.WATCHDOG_SECONDS = 3
        self.assertEqual(self.one("select count(*) from staircase_pmf(1.0, 3, ?, ?)", (INT64_MAX, INT64_MAX)), 1)
        self.assertEqual(self.one("select count(*) from staircase_pmf(1.0, 3, ?, ?)", (INT64_MAX - 2, INT64_MAX)), 3)

    def test_row_cap(self):
        # hi - lo must be below 10^8; just below is accepted (rows are streamed).
        self.assertEqual(self.one("select count(*) from (select * from staircase_pmf(1, 3, 0, 99999999) limit 2)"), 2)
        self.assertError("select * from staircase_pmf(1, 3, 0, 100000000)",
                         "staircase_pmf: hi must be at least lo and hi - lo below 100000000, but lo is 0 and hi is 100000000")
        self.assertError("select * from staircase_pmf(1, 3, 5, 4)",
                         "staircase_pmf: hi must be at least lo and hi - lo below 100000000, but lo is 5 and hi is 4")
        self.assertErrorNames("select * from staircase_pmf(1, 3, ?, ?)", "staircase_pmf", "hi", (INT64_MIN, INT64_MAX))


class TestOptimalRemap(MatrixTestCase):
    CASES = [(1, 0.5, "absolute", "uniform"), (6, 0.3, "absolute", "[1,2,3,4,3,2,1]"), (8, 0.6, "squared", "uniform"),
             (5, 0.5, "binary", "[5,1,0,0,1,5]"), (7, 0.7, "power:0.5", "uniform"), (6, 0.4, "power:3", "[0,0,1,1,1,0,0]"),
             (3, 0.5, JSON_LOSS_3, "[0.1,0.2,0.3,0.4]"), (0, 0.5, "squared", "uniform"), (40, 0.8, "absolute", "uniform")]

    def remap(self, n, a, loss, prior):
        rows = self.all("select observed, answer from optimal_remap(?, ?, ?, ?)", (n, a, sql_text(loss), prior))
        self.assertEqual([o for o, _ in rows], list(range(n + 1)))
        return [r for _, r in rows]

    def test_paper_worked_example(self):
        # Ghosh et al. Example 2.2: n odd, binary loss, prior p_0 = p_n = 1/2.
        for n in (1, 3, 5, 9, 21):
            prior = json.dumps([0.5] + [0] * (n - 1) + [0.5])
            for a in (0.2, 0.5, 0.9):
                got = self.one("select optimal_loss(?, ?, 'binary', ?)", (n, a, prior))
                want = a ** ((n + 1) // 2) / (1 + a)
                self.assertLessEqual(abs(got - want), 1e-12 * want, "n %d alpha %r: %r vs %r" % (n, a, got, want))
                self.assertEqual(self.remap(n, a, "binary", prior), [n if o >= (n + 1) // 2 else 0 for o in range(n + 1)],
                                 "n %d alpha %r" % (n, a))

    def test_bayes_optimal(self):
        # Each answer minimises the posterior expected loss sum_i p_i G[i][o] l(i, r).
        for n, a, loss, prior in self.CASES:
            g, L, p = geometric(n, a), loss_matrix(loss, n), prior_vector(prior, n)
            answers = self.remap(n, a, loss, prior)
            for o in range(n + 1):
                post = [math.fsum(p[i] * g[i][o] * L[i][r] for i in range(n + 1)) for r in range(n + 1)]
                self.assertIn(answers[o], range(n + 1))
                self.assertLessEqual(post[answers[o]], min(post) * (1 + 1e-12) + 1e-300,
                                     "%r: observed %d answered %d" % ((n, a, loss, prior), o, answers[o]))

    def test_ties_go_to_the_smallest_answer(self):
        # n even, prior on 0 and n only, observed n/2: answers 0 and n tie exactly.
        self.assertEqual(self.remap(4, 0.5, "binary", "[1,0,0,0,1]")[2], 0)

    def test_optimal_loss_is_the_loss_of_remap_after_g(self):
        for n, a, loss, prior in self.CASES:
            answers = self.remap(n, a, loss, prior)
            g = geometric(n, a)
            x = [[math.fsum(g[i][o] for o in range(n + 1) if answers[o] == r) for r in range(n + 1)] for i in range(n + 1)]
            want = expected_loss(x, loss_matrix(loss, n), prior_vector(prior, n))
            got = self.one("select optimal_loss(?, ?, ?, ?)", (n, a, sql_text(loss), prior))
            self.assertLessEqual(abs(got - want), 1e-12 * max(1, want), "%r" % ((n, a, loss, prior),))

    def test_prior_is_normalised(self):
        self.assertEqual(self.remap(6, 0.3, "absolute", "[1,2,3,4,3,2,1]"),
                         self.remap(6, 0.3, "absolute", "[0.5,1,1.5,2,1.5,1,0.5]"))

    def test_big_n_absolute(self):
        rows = self.all("select count(*), min(answer), max(answer) from optimal_remap(1000, 0.5, 'absolute', 'uniform')")
        self.assertEqual(rows, [(1001, 0, 1000)])


class TestOptimalMechanism(MatrixTestCase):
    CASES = [(1, 0.5, "absolute", "uniform"), (3, 0.5, "absolute", "uniform"), (4, 0.3, "squared", "[1,2,3,2,1]"),
             (5, 0.5, "binary", "[1,0,0,0,0,1]"), (6, 0.7, "power:0.5", "uniform"),
             (3, 0.4, JSON_LOSS_3, "[0.1,0.2,0.3,0.4]"), (0, 0.5, "absolute", "uniform")]

    def test_remap_and_lp_agree(self):
        for n, a, loss, prior in self.CASES:
            args = (n, a, sql_text(loss), prior)
            L, p = loss_matrix(loss, n), prior_vector(prior, n)
            xr = self.matrix("optimal_mechanism", args + ("remap",), n)
            xl = self.matrix("optimal_mechanism", args + ("lp",), n)
            lr, ll = expected_loss(xr, L, p), expected_loss(xl, L, p)
            self.assertLessEqual(abs(lr - ll), 1e-9, "%r: remap %r, lp %r" % (args, lr, ll))
            self.assertLessEqual(abs(lr - self.one("select optimal_loss(?, ?, ?, ?)", args)), 1e-12)
            self.assertStochastic(xr, 1e-12, "remap %r" % (args,))
            self.assertStochastic(xl, 1e-9, "lp %r" % (args,))
            self.assertAlphaDP(xr, a, 1e-12, "remap %r" % (args,))
            self.assertAlphaDP(xl, a, 1e-9, "lp %r" % (args,))

    def test_default_method_is_remap(self):
        args = (4, 0.3, "squared", "[1,2,3,2,1]")
        self.assertEqual(self.all("select * from optimal_mechanism(?, ?, ?, ?)", args),
                         self.all("select * from optimal_mechanism(?, ?, ?, ?, 'remap')", args))

    def test_remap_rows_are_g_followed_by_the_remap(self):
        n, a, loss, prior = 6, 0.7, "power:0.5", "uniform"
        answers = [r for _, r in self.all("select * from optimal_remap(?, ?, ?, ?)", (n, a, loss, prior))]
        g = geometric(n, a)
        want = [[math.fsum(g[i][o] for o in range(n + 1) if answers[o] == r) for r in range(n + 1)] for i in range(n + 1)]
        self.assertMatrixClose(self.matrix("optimal_mechanism", (n, a, loss, prior), n), want, 1e-15, "remap o G")

    def test_rows_sum_to_one_in_sql(self):
        for method in ("remap", "lp"):
            worst = self.one("select max(abs(s - 1)) from (select sum(probability) s from "
                             "optimal_mechanism(8, 0.5, 'absolute', 'uniform', ?) group by input)", (method,))
            self.assertLessEqual(worst, 1e-9, method)

    def test_lp_at_the_cap(self):
        n = 40
        x = self.matrix("optimal_mechanism", (n, 0.6, "absolute", "uniform", "lp"), n)
        got = expected_loss(x, loss_matrix("absolute", n), prior_vector("uniform", n))
        self.assertLessEqual(abs(got - self.one("select optimal_loss(40, 0.6, 'absolute', 'uniform')")), 1e-9)


class TestMinimax(MatrixTestCase):
    CASES = [(3, 0.5, "absolute", 1, 2), (6, 0.4, "squared", 0, 6), (5, 0.6, "binary", 2, 2),
             (4, 0.5, "power:2", 1, 3), (3, 0.3, JSON_LOSS_3, 0, 2), (0, 0.5, "absolute", 0, 0),
             (8, 0.7, "absolute", 0, 0), (10, 0.5, "binary", 3, 7)]

    def test_minimax_loss_is_the_worst_row_of_the_mechanism(self):
        for n, a, loss, lo, hi in self.CASES:
            args = (n, a, sql_text(loss), lo, hi)
            x = self.matrix("minimax_mechanism", args, n)
            worst = max(row_losses(x, loss_matrix(loss, n))[lo:hi + 1])
            got = self.one("select minimax_loss(?, ?, ?, ?, ?)", args)
            self.assertLessEqual(abs(got - worst), 1e-9, "%r: %r vs %r" % (args, got, worst))
            # no worse than taking G at face value (G = G I is derivable)
            face = max(row_losses(geometric(n, a), loss_matrix(loss, n))[lo:hi + 1])
            self.assertLessEqual(got, face + 1e-9, "%r" % (args,))
            self.assertStochastic(x, 1e-9, "minimax_mechanism %r" % (args,))
            self.assertAlphaDP(x, a, 1e-9, "minimax_mechanism %r" % (args,))

    def test_mechanism_is_g_times_the_remap_in_sql(self):
        for n, a, loss, lo, hi in self.CASES:
            args = (n, a, sql_text(loss), lo, hi)
            worst = self.one("""
                select max(abs(coalesce(p.probability, 0) - m.probability))
                from minimax_mechanism(?1, ?2, ?3, ?4, ?5) m left join (
                  select g.input, t.answer, sum(g.probability * t.probability) as probability
                  from geometric_matrix(?1, ?2) g join minimax_remap(?1, ?2, ?3, ?4, ?5) t on t.observed = g.output
                  group by g.input, t.answer) p on p.input = m.input and p.answer = m.output""", args)
            self.assertLessEqual(worst, 1e-12, "%r" % (args,))

    def test_remap_is_stochastic(self):
        for n, a, loss, lo, hi in self.CASES:
            rows = self.all("select * from minimax_remap(?, ?, ?, ?, ?)", (n, a, sql_text(loss), lo, hi))
            self.assertEqual([(r[0], r[1]) for r in rows], [(i, j) for i in range(n + 1) for j in range(n + 1)])
            t = [[rows[i * (n + 1) + j][2] for j in range(n + 1)] for i in range(n + 1)]
            self.assertStochastic(t, 1e-9, "minimax_remap %r" % ((n, a, loss, lo, hi),))

    def test_mechanism_is_derivable(self):
        for n, a, loss, lo, hi in self.CASES[:4]:
            x = self.matrix("minimax_mechanism", (n, a, sql_text(loss), lo, hi), n)
            self.assertEqual(self.one("select dp_derivable(?, ?)", (json.dumps(x), a)), 1)

    def test_at_the_cap(self):
        v = self.one("select minimax_loss(40, 0.5, 'absolute', 0, 40)")
        self.assertGreater(v, 0)
        self.assertLessEqual(v, max(row_losses(geometric(40, 0.5), loss_matrix("absolute", 40))) + 1e-9)


class TestRemapCount(MatrixTestCase):
    PRIOR = "[1,0,0,0,0,1]"  # the worked example with n = 5: outputs >= 3 go to 5, the rest to 0

    def test_inside_an_aggregate_query(self):
        self.db.execute("create table t(g, x)")
        self.db.executemany("insert into t values (?, ?)", [(g, 1) for g in range(6) for _ in range(g)])
        self.db.execute("create table keys(g integer primary key)")
        self.db.executemany("insert into keys values (?)", [(g,) for g in range(6)])
        self.assertEqual(self.one("select remap_count(private_count(1e-300), 5, 0.5, 'binary', ?) from t where g = 4",
                                  (self.PRIOR,)), 5)
        self.assertEqual(self.one("select remap_count(private_count(1e-300), 5, 0.5, 'binary', ?) from t where g = 2",
                                  (self.PRIOR,)), 0)
        rows = self.all("select keys.g, remap_count(private_count(t.x, 1e-300), 5, 0.5, 'binary', ?) "
                        "from keys left join t on t.g = keys.g group by keys.g order by keys.g", (self.PRIOR,))
        self.assertEqual(rows, [(0, 0), (1, 0), (2, 0), (3, 5), (4, 5), (5, 5)])

    def test_noisy_counts_stay_in_range(self):
        self.db.execute("create table t(g, x)")
        self.db.executemany("insert into t values (?, ?)", [(g, 1) for g in range(300) for _ in range(g % 9)])
        self.one("select dp_seed(5)")
        values = [r[0] for r in self.all("select remap_count(private_count(0.7), 8, 0.7, 'absolute', 'uniform') "
                                         "from t group by g")]
        self.assertEqual(len(values), sum(1 for g in range(300) if g % 9))
        self.assertTrue(all(0 <= v <= 8 for v in values), values)

    def test_matches_optimal_remap_and_clamps(self):
        for n, a, loss, prior in [(5, 0.5, "binary", self.PRIOR), (10, 0.3, "absolute", "uniform"),
                                  (6, 0.6, "power:1.5", "[1,1,1,5,1,1,1]"), (3, 0.4, json.dumps(JSON_LOSS_3), "uniform")]:
            answers = [r for _, r in self.all("select * from optimal_remap(?, ?, ?, ?)", (n, a, loss, prior))]
            for o in range(n + 1):
                self.assertEqual(self.one("select remap_count(?, ?, ?, ?, ?)", (o, n, a, loss, prior)), answers[o])
            for o, clamped in ((-1, 0), (-7, 0), (INT64_MIN, 0), (n + 1, n), (10 ** 12, n), (INT64_MAX, n)):
                self.assertEqual(self.one("select remap_count(?, ?, ?, ?, ?)", (o, n, a, loss, prior)), answers[clamped],
                                 "observed %d" % o)

    def test_alternating_parameters_in_one_query(self):
        # The per-connection cache of the last remap must not leak between parameter sets.
        a5 = [r for _, r in self.all("select * from optimal_remap(5, 0.5, 'binary', ?)", (self.PRIOR,))]
        u5 = [r for _, r in self.all("select * from optimal_remap(5, 0.5, 'binary', 'uniform')")]
        s5 = [r for _, r in self.all("select * from optimal_remap(5, 0.9, 'squared', '[9,1,1,1,1,1]')")]
        self.assertNotEqual(a5, u5)
        rows = self.all("""
            with recursive o(v) as (select 0 union all select v + 1 from o where v < 5)
            select v, remap_count(v, 5, 0.5, 'binary', ?1), remap_count(v, 5, 0.5, 'binary', 'uniform'),
                   remap_count(v, 5, 0.9, 'squared', '[9,1,1,1,1,1]'), remap_count(v, 5, 0.5, 'binary', ?1)
            from o order by v""", (self.PRIOR,))
        self.assertEqual(rows, [(o, a5[o], u5[o], s5[o], a5[o]) for o in range(6)])

    def test_big_n(self):
        self.assertEqual(self.one("select remap_count(2500, 5000, 0.5, 'absolute', 'uniform')"), 2500)


class TestDpDerivable(MatrixTestCase):
    def test_geometric_of_a_larger_alpha(self):
        for n, beta in [(0, 0.5), (1, 0.5), (4, 0.6), (12, 0.3), (30, 0.9)]:
            m = self.json_of_geometric(n, beta)
            for a in (beta / 4, beta / 2, beta * 0.99, beta):
                self.assertEqual(self.one("select dp_derivable(?, ?)", (m, a)), 1, "G(%d, %r) from %r" % (n, beta, a))
            if n > 0:
                for a in (min(0.999, beta * 1.05), (1 + beta) / 2):
                    self.assertEqual(self.one("select dp_derivable(?, ?)", (m, a)), 0, "G(%d, %r) from %r" % (n, beta, a))

    def test_in_one_sql_statement(self):
        self.assertEqual(self.one("""
            select dp_derivable(json_group_array(json(r)), 0.5) from (
              select input, json_group_array(probability) as r
              from (select * from geometric_matrix(6, 0.7) order by input, output) group by input order by input)"""), 1)

    def test_other_matrices(self):
        self.assertEqual(self.one("select dp_derivable('[[1]]', 0.5)"), 1)
        self.assertEqual(self.one("select dp_derivable('[[1,0],[0,1]]', 0.5)"), 0)  # not even DP
        self.assertEqual(self.one("select dp_derivable('[[0.5,0.5],[0.5,0.5]]', 0.5)"), 1)  # constant: anything derives it
        # the remap of G is G followed by post-processing
        n, a = 5, 0.4
        x = self.matrix("optimal_mechanism", (n, a, "absolute", "uniform"), n)
        self.assertEqual(self.one("select dp_derivable(?, ?)", (json.dumps(x), a)), 1)

    def test_errors(self):
        self.assertScalarError("select dp_derivable('[[1,0],[0]]', 0.5)",
                         "dp_derivable: matrix must be square, but row 1 has 1 entries and there are 2 rows")
        self.assertScalarError("select dp_derivable('[[-0.5,1.5],[0.5,0.5]]', 0.5)",
                         "dp_derivable: matrix entries must be non-negative, but matrix[0][0] is -0.5")
        self.assertScalarError("select dp_derivable('[[0.5,0.5],[0.6,0.6]]', 0.5)",
                         "dp_derivable: matrix rows must sum to 1, but row 1 sums to 1.2")
        self.assertScalarError("select dp_derivable(3, 0.5)", "dp_derivable: matrix must be text (a JSON square matrix), but is 3")
        self.assertScalarError("select dp_derivable('[]', 0.5)", "dp_derivable: matrix must have at least one row")
        self.assertScalarError("select dp_derivable('[[1]]', 1.5)", "dp_derivable: alpha must be in (0, 1), but is 1.5")
        self.assertErrorNames("select dp_derivable('x', 0.5)", "dp_derivable", "matrix")
        self.assertErrorNames("select dp_derivable(NULL, 0.5)", "dp_derivable", "matrix")
        self.assertErrorNames("select dp_derivable('[[1]]', NULL)", "dp_derivable", "alpha")
        self.assertErrorNames("select dp_derivable('[[1]]', 1)", "dp_derivable", "alpha")


class TestTableFunctionSyntax(MatrixTestCase):
    CALLS = [("geometric_matrix", ("n", "alpha"), (3, 0.5)),
             ("derivation_matrix", ("n", "alpha", "beta"), (3, 0.5, 0.7)),
             ("staircase_pmf", ("eps", "delta", "lo", "hi"), (1.0, 3, -5, 5)),
             ("staircase_pmf", ("eps", "delta", "lo", "hi", "cost"), (1.0, 3, -5, 5, "l2")),
             ("optimal_remap", ("n", "alpha", "loss", "prior"), (4, 0.5, "absolute", "uniform")),
             ("optimal_mechanism", ("n", "alpha", "loss", "prior"), (4, 0.5, "squared", "uniform")),
             ("optimal_mechanism", ("n", "alpha", "loss", "prior", "method"), (3, 0.5, "absolute", "uniform", "lp")),
             ("minimax_remap", ("n", "alpha", "loss", "lo", "hi"), (3, 0.5, "absolute", 1, 2)),
             ("minimax_mechanism", ("n", "alpha", "loss", "lo", "hi"), (3, 0.5, "absolute", 1, 2))]

    SIGNATURES = {"geometric_matrix": "geometric_matrix(n, alpha)",
                  "derivation_matrix": "derivation_matrix(n, alpha, beta)",
                  "staircase_pmf": "staircase_pmf(eps, delta, lo, hi, [cost])",
                  "optimal_remap": "optimal_remap(n, alpha, loss, prior)",
                  "optimal_mechanism": "optimal_mechanism(n, alpha, loss, prior, [method])",
                  "minimax_remap": "minimax_remap(n, alpha, loss, lo, hi)",
                  "minimax_mechanism": "minimax_mechanism(n, alpha, loss, lo, hi)"}

    def test_where_syntax_equals_call_syntax(self):
        for fn, names, args in self.CALLS:
            call = self.all("select * from %s(%s)" % (fn, ", ".join("?" * len(args))), args)
            where = self.all("select * from %s where %s" % (fn, " and ".join("%s = ?" % n for n in names)), args)
            self.assertEqual(call, where, fn)
            self.assertGreater(len(call), 0)

    def test_hidden_columns_echo_the_arguments(self):
        for fn, names, args in self.CALLS:
            rows = self.all("select %s from %s(%s) limit 1" % (", ".join(names), fn, ", ".join("?" * len(args))), args)
            self.assertEqual(rows, [tuple(args)], fn)
            # not part of select *
            ncols = len(self.db.execute("select * from %s(%s) limit 1" % (fn, ", ".join("?" * len(args))), args).description)
            self.assertEqual(ncols, 2 if fn in ("staircase_pmf", "optimal_remap") else 3, fn)

    def test_column_names(self):
        for fn, cols in [("geometric_matrix(2, 0.5)", ["input", "output", "probability"]),
                         ("derivation_matrix(2, 0.5, 0.6)", ["observed", "output", "probability"]),
                         ("staircase_pmf(1, 2, 0, 1)", ["noise", "probability"]),
                         ("optimal_remap(2, 0.5, 'absolute', 'uniform')", ["observed", "answer"]),
                         ("optimal_mechanism(2, 0.5, 'absolute', 'uniform')", ["input", "output", "probability"]),
                         ("minimax_remap(2, 0.5, 'absolute', 0, 2)", ["observed", "answer", "probability"]),
                         ("minimax_mechanism(2, 0.5, 'absolute', 0, 2)", ["input", "output", "probability"])]:
            cur = self.db.execute("select * from " + fn)
            self.assertEqual([d[0] for d in cur.description], cols, fn)
            cur.fetchall()

    def test_correlated_arguments_and_in_lists(self):
        self.db.execute("create table sizes(n integer)")
        self.db.executemany("insert into sizes values (?)", [(1,), (2,), (3,)])
        self.assertEqual(self.all("select s.n, count(*), round(sum(g.probability), 12) from sizes s, "
                                  "geometric_matrix(s.n, 0.5) g group by s.n order by s.n"),
                         [(1, 4, 2.0), (2, 9, 3.0), (3, 16, 4.0)])
        self.assertEqual(self.all("select s.n, count(g.input) from sizes s left join geometric_matrix g "
                                  "on g.n = s.n and g.alpha = 0.5 group by s.n order by s.n"),
                         [(1, 4), (2, 9), (3, 16)])
        self.assertEqual(self.all("select n, count(*) from geometric_matrix where n in (1, 2) and alpha = 0.5 "
                                  "group by n order by n"), [(1, 4), (2, 9)])
        self.assertEqual(self.all("select (select answer from optimal_remap(5, 0.5, 'binary', '[1,0,0,0,0,1]') r "
                                  "where r.observed = s.n) from sizes s order by s.n"), [(0,), (0,), (5,)])

    def test_missing_arguments(self):
        for fn, names, args in self.CALLS:
            required = len(self.SIGNATURES[fn].split("[")[0].split(","))
            if fn in ("staircase_pmf", "optimal_mechanism"):
                required -= 1  # the trailing ", [" of the optional one
            for given in range(required):
                missing = names[given]
                sql = "select * from %s(%s)" % (fn, ", ".join("?" * given))
                self.assertError(sql, "%s: argument %s is missing (call it as %s)" % (fn, missing, self.SIGNATURES[fn]),
                                 args[:given])
        self.assertError("select * from geometric_matrix",
                         "geometric_matrix: argument n is missing (call it as geometric_matrix(n, alpha))")
        self.assertError("select * from geometric_matrix where alpha = 0.5",
                         "geometric_matrix: argument n is missing (call it as geometric_matrix(n, alpha))")
        self.assertError("select * from geometric_matrix where n > 3 and alpha = 0.5",
                         "geometric_matrix: argument n is missing (call it as geometric_matrix(n, alpha))")

    def test_too_many_arguments(self):
        self.assertError("select * from geometric_matrix(2, 0.5, 3)", "too many arguments on geometric_matrix() - max 2")
        self.assertError("select * from optimal_mechanism(2, 0.5, 'absolute', 'uniform', 'lp', 1)",
                         "too many arguments on optimal_mechanism() - max 5")

    def test_scalar_argument_counts(self):
        for fn, counts in (("remap_count", (0, 4, 6)), ("optimal_loss", (0, 3, 5)), ("minimax_loss", (0, 4, 6)),
                           ("dp_derivable", (0, 1, 3))):
            for k in counts:
                self.assertError("select %s(%s)" % (fn, ", ".join(["1"] * k)),
                                 "wrong number of arguments to function %s()" % fn)

    def test_no_create_virtual_table(self):
        msg = self.error_of("create virtual table g using geometric_matrix(2, 0.5)")
        self.assertIn("geometric_matrix", msg)


class TestMatrixErrors(MatrixTestCase):
    def test_representative_messages(self):
        cases = [
            ("select * from geometric_matrix(5001, 0.5)", "geometric_matrix: n must be an integer in [0, 5000], but is 5001"),
            ("select * from geometric_matrix(-1, 0.5)", "geometric_matrix: n must be an integer in [0, 5000], but is -1"),
            ("select * from geometric_matrix(2.0, 0.5)", "geometric_matrix: n must be an integer, but is 2.0"),
            ("select * from geometric_matrix('2', 0.5)", "geometric_matrix: n must be an integer, but is text '2'"),
            ("select * from geometric_matrix(NULL, 0.5)", "geometric_matrix: n must be an integer, but is NULL"),
            ("select * from geometric_matrix(2, 1)", "geometric_matrix: alpha must be in (0, 1), but is 1"),
            ("select * from geometric_matrix(2, 0)", "geometric_matrix: alpha must be in (0, 1), but is 0"),
            ("select * from geometric_matrix(2, 0.0)", "geometric_matrix: alpha must be in (0, 1), but is 0.0"),
            ("select * from geometric_matrix(2, 1.5)", "geometric_matrix: alpha must be in (0, 1), but is 1.5"),
            ("select * from geometric_matrix(2, -1e999)", "geometric_matrix: alpha must be in (0, 1), but is -inf"),
            ("select * from geometric_matrix(2, NULL)", "geometric_matrix: alpha must be a number, but is NULL"),
            ("select * from geometric_matrix(2, x'00')", "geometric_matrix: alpha must be a number, but is a blob of 1 byte"),
            ("select * from derivation_matrix(2, 0.5, 1)", "derivation_matrix: beta must be in (0, 1), but is 1"),
            ("select * from derivation_matrix(2, 0.5, NULL)", "derivation_matrix: beta must be a number, but is NULL"),
            ("select * from staircase_pmf(0, 3, 0, 1)", "staircase_pmf: eps must be a finite number > 0, but is 0"),
            ("select * from staircase_pmf('1', 3, 0, 1)", "staircase_pmf: eps must be a number, but is text '1'"),
            ("select * from staircase_pmf(1e-20, 3, 0, 1)",
             "staircase_pmf: eps must be greater than 2^-53 (e^-eps rounds to 1), but is 1e-20"),
            ("select * from staircase_pmf(1, 0, 0, 1)", "staircase_pmf: delta must be an integer >= 1, but is 0"),
            ("select * from staircase_pmf(1, 3.0, 0, 1)", "staircase_pmf: delta must be an integer, but is 3.0"),
            ("select * from staircase_pmf(1, 3, 0.5, 1)", "staircase_pmf: lo must be an integer, but is 0.5"),
            ("select * from staircase_pmf(1, 3, 0, NULL)", "staircase_pmf: hi must be an integer, but is NULL"),
            ("select * from staircase_pmf(1, 3, 0, 1, 'r=4')",
             "staircase_pmf: cost must be 'l1', 'l2' or 'r=K' with K an integer in [1, 3], but is 'r=4'"),
            ("select * from staircase_pmf(1, 3, 0, 1, 'r=0')",
             "staircase_pmf: cost must be 'l1', 'l2' or 'r=K' with K an integer in [1, 3], but is 'r=0'"),
            ("select * from staircase_pmf(1, 3, 0, 1, 'gamma=0.5')",
             "staircase_pmf: cost must be 'l1', 'l2' or 'r=K' with K an integer in [1, 3], but is 'gamma=0.5'"),
            ("select * from staircase_pmf(1, 3, 0, 1, 3)",
             "staircase_pmf: cost must be text ('l1', 'l2' or 'r=K'), but is 3"),
            ("select * from optimal_remap(3, 0.5, 'foo', 'uniform')",
             "optimal_remap: loss must be 'absolute', 'squared', 'binary', 'power:P' (P > 0) or a JSON (n+1)x(n+1) "
             "matrix, but is 'foo'"),
            ("select * from optimal_remap(3, 0.5, 'power:0', 'uniform')",
             "optimal_remap: loss must be 'absolute', 'squared', 'binary', 'power:P' (P > 0) or a JSON (n+1)x(n+1) "
             "matrix, but is 'power:0': P must be a finite number > 0"),
            ("select * from optimal_remap(1, 0.5, 3, 'uniform')",
             "optimal_remap: loss must be text ('absolute', 'squared', 'binary', 'power:P' or a JSON matrix), but is 3"),
            ("select * from optimal_remap(3, 0.5, 'absolute', 'foo')",
             "optimal_remap: prior must be 'uniform' or a JSON array of n+1 non-negative numbers, but is 'foo'"),
            ("select * from optimal_remap(3, 0.5, 'absolute', NULL)",
             "optimal_remap: prior must be text ('uniform' or a JSON array), but is NULL"),
            ("select * from optimal_remap(3, 0.5, 'absolute', '[1,2]')",
             "optimal_remap: prior must have n+1 = 4 entries, but has 2"),
            ("select * from optimal_remap(3, 0.5, 'absolute', '[1,2,-1,0]')",
             "optimal_remap: prior must be non-negative, but prior[2] is -1"),
            ("select * from optimal_remap(3, 0.5, 'absolute', '[0,0,0,0]')",
             "optimal_remap: prior must have a positive finite sum, but its sum is 0"),
            ("select * from optimal_remap(1, 0.5, '[[0,-1],[1,0]]', 'uniform')",
             "optimal_remap: loss must be non-negative, but loss[0][1] is -1"),
            ("select * from optimal_remap(1, 0.5, '[[0,1],[1]]', 'uniform')",
             "optimal_remap: loss must be a 2x2 matrix, but row 1 has 1 entries"),
            ("select * from optimal_remap(2, 0.5, '[[0,2,1],[1,0,1],[1,1,0]]', 'uniform')",
             "optimal_remap: loss must be non-decreasing in |i - r| along each row, but row 0 has 2 at distance 1 "
             "and 1 at distance 2"),
            ("select * from optimal_mechanism(4, 0.5, 'absolute', 'uniform', 'simplex')",
             "optimal_mechanism: method must be 'remap' or 'lp', but is text 'simplex'"),
            ("select * from optimal_mechanism(4, 0.5, 'absolute', 'uniform', 3)",
             "optimal_mechanism: method must be text ('remap' or 'lp'), but is 3"),
            ("select * from minimax_remap(4, 0.5, 'absolute', 5, 5)",
             "minimax_remap: lo must be an integer in [0, n] = [0, 4], but is 5"),
            ("select * from minimax_remap(4, 0.5, 'absolute', -1, 2)",
             "minimax_remap: lo must be an integer in [0, n] = [0, 4], but is -1"),
            ("select minimax_loss(4, 0.5, 'absolute', 3, 2)",
             "minimax_loss: hi must be an integer in [lo, n] = [3, 4], but is 2"),
            ("select minimax_loss(4, 0.5, 'absolute', 1, 5)",
             "minimax_loss: hi must be an integer in [lo, n] = [1, 4], but is 5"),
            ("select * from minimax_mechanism(2, 0.5, 'absolute', 1.0, 2)",
             "minimax_mechanism: lo must be an integer, but is 1.0"),
            ("select remap_count(1.5, 5, 0.5, 'binary', 'uniform')",
             "remap_count: observed must be an integer, but is 1.5"),
            ("select remap_count('3', 5, 0.5, 'binary', 'uniform')",
             "remap_count: observed must be an integer, but is text '3'"),
            ("select optimal_loss(3, 0.5, 'absolute', '[1,1] x')",
             "optimal_loss: prior must be a JSON array of numbers, but text follows the array at offset 6"),
        ]
        for sql, message in cases:
            if sql.startswith("select * from"):
                self.assertError(sql, message)
            else:
                self.assertScalarError(sql, message)

    def test_every_bad_argument_names_itself(self):
        good = {"n": "3", "alpha": "0.5", "beta": "0.7", "loss": "'absolute'", "prior": "'uniform'", "lo": "1",
                "hi": "2", "eps": "1.0", "delta": "3", "cost": "'l1'", "method": "'lp'", "observed": "2",
                "matrix": "'[[1]]'", "pmf_lo": "-2", "pmf_hi": "2"}
        bad = {"n": ["NULL", "'3'", "3.0", "-1", "x'01'"], "alpha": ["NULL", "'a'", "0", "1", "2.5", "-0.5", "1e999"],
               "beta": ["NULL", "1", "0.4", "x'00'"], "loss": ["NULL", "1", "'abs'", "'power:-1'", "'[[0]]'", "'[1,2]'"],
               "prior": ["NULL", "1", "'unif'", "'[1,1]'", "'[-1,1,1,1]'", "'[1,1,1,\"a\"]'"],
               "lo": ["NULL", "'1'", "1.5", "-1", "4"], "hi": ["NULL", "'2'", "2.5", "0", "4"],
               "eps": ["NULL", "'1'", "0", "-1", "1e999"], "delta": ["NULL", "'3'", "3.5", "0", "-2"],
               "cost": ["NULL", "1", "'l3'", "'r=9'", "'r=x'"], "method": ["NULL", "1", "'LP'", "''"],
               "observed": ["NULL", "'2'", "2.5", "x'02'"], "matrix": ["NULL", "1", "'[[1]'", "'{}'", "'[[2]]'"],
               "pmf_lo": ["NULL", "0.5"], "pmf_hi": ["NULL", "'x'", "-3"]}
        shapes = [("geometric_matrix", True, ["n", "alpha"]), ("derivation_matrix", True, ["n", "alpha", "beta"]),
                  ("staircase_pmf", True, ["eps", "delta", "pmf_lo", "pmf_hi", "cost"]),
                  ("optimal_remap", True, ["n", "alpha", "loss", "prior"]),
                  ("optimal_mechanism", True, ["n", "alpha", "loss", "prior", "method"]),
                  ("minimax_remap", True, ["n", "alpha", "loss", "lo", "hi"]),
                  ("minimax_mechanism", True, ["n", "alpha", "loss", "lo", "hi"]),
                  ("remap_count", False, ["observed", "n", "alpha", "loss", "prior"]),
                  ("optimal_loss", False, ["n", "alpha", "loss", "prior"]),
                  ("minimax_loss", False, ["n", "alpha", "loss", "lo", "hi"]),
                  ("dp_derivable", False, ["matrix", "alpha"])]
        checked = 0
        for fn, table, params in shapes:
            for k, p in enumerate(params):
                for value in bad[p]:
                    args = [good[q] for q in params]
                    args[k] = value
                    sql = ("select * from %s(%s)" if table else "select %s(%s)") % (fn, ", ".join(args))
                    name = {"pmf_lo": "lo", "pmf_hi": "hi"}.get(p, p)
                    msg = self.assertErrorNames(sql, fn, name)
                    self.assertIn(" must ", msg, sql)
                    checked += 1
        self.assertGreater(checked, 200)

    def test_errors_leave_the_connection_usable(self):
        self.error_of("select * from geometric_matrix(2, 5)")
        self.assertEqual(self.one("select count(*) from geometric_matrix(2, 0.5)"), 9)


class TestCaps(MatrixTestCase):
    """Sizes beyond the caps are refused by the argument check, whose message
    names the cap, before anything is computed (not timed: no wall-clock
    assertions in the suite)."""

    def assertQuickError(self, sql, function, argument="n"):
        return self.assertErrorNames(sql, function, argument)

    def test_matrix_cap_5000(self):
        for sql, fn in [("select * from geometric_matrix(5001, 0.5)", "geometric_matrix"),
                        ("select * from derivation_matrix(5001, 0.5, 0.6)", "derivation_matrix"),
                        ("select * from optimal_remap(5001, 0.5, 'absolute', 'uniform')", "optimal_remap"),
                        ("select * from optimal_mechanism(5001, 0.5, 'binary', 'uniform')", "optimal_mechanism"),
                        ("select optimal_loss(5001, 0.5, 'squared', 'uniform')", "optimal_loss"),
                        ("select remap_count(1, 5001, 0.5, 'absolute', 'uniform')", "remap_count"),
                        ("select optimal_loss(9223372036854775807, 0.5, 'squared', 'uniform')", "optimal_loss")]:
            want = "%s: n must be an integer in [0, 5000], but is %s" % (fn, sql.split("(")[1].split(",")[0]
                                                                        if fn != "remap_count" else "5001")
            self.assertEqual(self.assertQuickError(sql, fn), want if "* from" in sql else hidden(want))

    def test_general_loss_cap_400(self):
        big = json.dumps([[abs(i - r) for r in range(402)] for i in range(402)])
        for sql, fn, kind in [("select * from optimal_remap(401, 0.5, 'power:2', 'uniform')", "optimal_remap", "a power loss"),
                              ("select optimal_loss(401, 0.5, 'power:0.5', 'uniform')", "optimal_loss", "a power loss"),
                              ("select remap_count(1, 401, 0.5, 'power:2', 'uniform')", "remap_count", "a power loss"),
                              ("select * from optimal_mechanism(401, 0.5, 'power:2', 'uniform')", "optimal_mechanism",
                               "a power loss"),
                              ("select optimal_loss(401, 0.5, '%s', 'uniform')" % big, "optimal_loss",
                               "a JSON loss matrix")]:
            want = "%s: n must be at most 400 with %s (the remap is O(n^3)), but is 401" % (fn, kind)
            self.assertEqual(self.assertQuickError(sql, fn), want if "* from" in sql else hidden(want))

    def test_lp_cap_40(self):
        for sql, fn in [("select * from optimal_mechanism(41, 0.5, 'absolute', 'uniform', 'lp')", "optimal_mechanism"),
                        ("select * from minimax_remap(41, 0.5, 'absolute', 0, 1)", "minimax_remap"),
                        ("select * from minimax_mechanism(41, 0.5, 'absolute', 0, 1)", "minimax_mechanism"),
                        ("select minimax_loss(41, 0.5, 'absolute', 0, 1)", "minimax_loss"),
                        ("select minimax_loss(5000, 0.5, 'absolute', 0, 1)", "minimax_loss")]:
            msg = self.assertQuickError(sql, fn)
            self.assertTrue(msg.startswith(fn + ": n must be an integer in [0, 40], but is "), msg)

    def test_at_the_caps_it_runs(self):
        self.assertGreater(self.one("select optimal_loss(400, 0.5, 'power:1.5', 'uniform')"), 0)
        # (n = 5000 for a remap: TestRemapCount.test_big_n)
        self.assertEqual(self.one("select count(*) from (select * from geometric_matrix(5000, 0.5) limit 3)"), 3)
        self.assertEqual(self.one("select count(*) from (select * from derivation_matrix(5000, 0.5, 0.6) limit 3)"), 3)


if __name__ == "__main__":
    sys.exit(main(__name__, sys.argv))
