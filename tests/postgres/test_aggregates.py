"""optdp on PostgreSQL 15: private_select, private_count_levels(_of), and the
paired-neighbour privacy audit of private_count, staircase_sum, laplace_sum
and private_avg.

Usage: test_aggregates.py <build>/postgres <pg_audit_tool> [unittest args]
The server (pgserver.py) runs as an unprivileged user on a Unix socket in a
temporary directory and is always stopped. Randomised outputs are checked by
chi-square against the exact laws from the core (pg_audit_tool, which links
it), with fixed seeds (dp_seed), never against golden values. The audit uses
the SQLite suite's event family and Clopper-Pearson bounds (tests/common/audit,
docs/audit.md), through pg_audit_tool.
"""
import math
import os
import subprocess
import sys
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server  # noqa: E402
from test_postgres import PARALLEL, SERIAL, P_MIN, chi_square_p, geometric_law  # noqa: E402

MODULE_DIR = None
TOOL = None
SERVER = None

GROUPS = 3000  # releases per query (one per group)
# the candidates' scores in every group (ten: with fewer rows per group the planner
# prefers to gather the rows and aggregate them in the leader)
SCORES = [667, 0, 445, 666, 222, 600, 100, 500, 650, 300]
SELECT_EPS = 0.01
# sel: GROUPS groups g of the candidates c0..c9 with SCORES; t: GROUPS groups k of
# 12 rows, x NULL in 4 of them (as in test_postgres.py)
SEL = ("SELECT g, 'c' || c AS c, c AS ci, (ARRAY%r)[c + 1]::float8 AS score "
       "FROM generate_series(0, %d) g, generate_series(0, %d) c" % (SCORES, GROUPS - 1, len(SCORES) - 1))
TABLE = ("SELECT g, g %% %d AS k, CASE WHEN (g / %d) %% 3 = 0 THEN NULL ELSE 2.0 END::float8 AS x "
         "FROM generate_series(0, %d) g" % (GROUPS, GROUPS, GROUPS * 12 - 1))


def tool(*args, stdin=None):
    r = subprocess.run([TOOL] + [str(a) for a in args], input=stdin, capture_output=True, text=True, check=True)
    return r.stdout


def selection_law(scores, eps, sensitivity, method):
    """The exact law of private_select, from the core (selection_probabilities)."""
    return [float(v) for v in tool("selection", eps, sensitivity, method, *scores).split()]


def plan_of(sql):
    return "\n".join(r[0] for r in SERVER.psql(PARALLEL + "EXPLAIN (COSTS OFF) " + sql))


def setUpModule():
    global SERVER
    SERVER = Server(MODULE_DIR)
    SERVER.__enter__()
    SERVER.psql("CREATE EXTENSION optdp; CREATE TABLE sel AS %s; CREATE TABLE t AS %s; ANALYZE sel; ANALYZE t"
                % (SEL, TABLE))


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


SELECT_FORMS = ["private_select(c, score, 0.01)", "private_select(c, score, 0.01, 1)",
                "private_select(c, score, 0.01, 1, 'exponential')"]
LEVEL_FORMS = ["private_count_levels(0.5, 0.8)", "private_count_levels_of(x, 0.5, 0.8)"]


class Plans(unittest.TestCase):
    def test_partial_aggregate_gather_finalize(self):
        for form, table in [(f, "sel") for f in SELECT_FORMS] + [(f, "t") for f in LEVEL_FORMS]:
            plan = plan_of("SELECT %s FROM %s" % (form, table))
            i, j, k = plan.find("Finalize Aggregate"), plan.find("Gather"), plan.find("Partial Aggregate")
            self.assertTrue(0 <= i < j < k, form + ":\n" + plan)
            group = "g" if table == "sel" else "k"
            plan = plan_of("SELECT %s, %s FROM %s GROUP BY %s" % (group, form, table, group))
            self.assertIn("Finalize HashAggregate", plan, form + ":\n" + plan)
            self.assertIn("Partial HashAggregate", plan, form + ":\n" + plan)



def assert_messages_with_and_without_rows(test, table, cases):
    """Each (form, message): the same message in serial and parallel plans, with rows and without."""
    for form, message in cases:
        for mode in (SERIAL, PARALLEL):
            for where in ("", " WHERE g < 0"):
                test.assertEqual(SERVER.error_of(mode + "SELECT %s FROM %s%s" % (form, table, where)), message,
                                 form + where)

class Select(unittest.TestCase):
    def test_law_serial_and_parallel(self):
        # each group is one release among the ten candidates; the counts of the chosen
        # candidates against the core's exact law, in both plans and for both methods
        for method, extra in (("permute_and_flip", ""), ("exponential", ", 1, 'exponential'")):
            law = selection_law(SCORES, SELECT_EPS, 1, method)
            for mode, seed in ((SERIAL, 21), (PARALLEL, 22)):
                sql = "SELECT g, private_select(c, score, 0.01%s) FROM sel GROUP BY g" % extra
                if mode is PARALLEL:
                    self.assertIn("Partial HashAggregate", plan_of(sql))
                rows = SERVER.psql(mode + "SELECT dp_seed(%d); %s" % (seed, sql))[1:]
                self.assertEqual(len(rows), GROUPS)
                obs = {}
                for r in rows:
                    obs[r[1]] = obs.get(r[1], 0) + 1
                p = chi_square_p(obs, {"c%d" % i: q for i, q in enumerate(law)})
                self.assertGreater(p, P_MIN, "%s %s: %r" % (method, "parallel" if mode is PARALLEL else "serial",
                                                            obs))

    def test_the_law_follows_the_scores(self):
        # sensitivity 2 halves the exponents: the law of eps / 2
        law = selection_law(SCORES, SELECT_EPS / 2, 1, "exponential")
        rows = SERVER.psql(PARALLEL + "SELECT dp_seed(23); SELECT g, private_select(ci, score, 0.01, 2, "
                                      "'exponential') FROM sel GROUP BY g")[1:]
        obs = {}
        for r in rows:
            obs[int(r[1])] = obs.get(int(r[1]), 0) + 1
        self.assertGreater(chi_square_p(obs, dict(enumerate(law))), P_MIN, repr(obs))

    def test_candidates_keep_their_type_and_value(self):
        # at eps 1e6 only the best candidate (score 1, the others 0) can come out; every
        # kind of type: by value, fixed length by reference, varlena (also long, toasted), NULL.
        # Two groups of sel (20 rows) are enough for both plans: all of sel's 30,000
        # made 384 MB of the long text's candidates (34 s of the file's 67 s)
        cases = [("integer", "c::int4"), ("bigint", "c::int8 * 10000000000"), ("numeric", "c::numeric / 3"),
                 ("text", "repeat('ab', c)"), ("text", "repeat(md5(c::text), 400)"), ("date", "'2020-01-01'::date + c"),
                 ("uuid", "md5(c::text)::uuid"), ("integer[]", "ARRAY[c, c + 1]"), ("bytea", "decode(md5(c::text), 'hex')")]
        for typ, expr in cases:
            for mode in (SERIAL, PARALLEL):
                sql = ("SELECT pg_typeof(s)::text, s = (SELECT %s FROM (SELECT 3 AS c) a) FROM (SELECT "
                       "private_select(%s, (c = 3)::int, 1e6) AS s FROM (SELECT ci AS c FROM sel WHERE g < 2) b) a"
                       % (expr, expr))
                self.assertEqual(SERVER.psql(mode + sql), [[typ, "t"]], expr)
        # stored long values are compressed (and could be toasted): the state holds them detoasted
        SERVER.psql("CREATE TABLE IF NOT EXISTS long_c AS SELECT c, repeat(md5(c::text), 400) AS v "
                    "FROM generate_series(0, 4) c")
        self.assertEqual(SERVER.psql("SELECT pg_column_size(v) < octet_length(v) FROM long_c WHERE c = 3"), [["t"]])
        self.assertEqual(SERVER.psql("SELECT private_select(v, (c = 3)::int, 1e6) = repeat(md5('3'), 400) "
                                     "FROM long_c"), [["t"]])
        self.assertEqual(SERVER.psql("SELECT private_select(NULLIF(c, 'c3'), (ci = 3)::int, 1e6) IS NULL FROM sel"),
                         [["t"]])
        self.assertEqual(SERVER.psql("SELECT private_select('a', 1, 1.0), pg_typeof(private_select('a', 1, 1.0))"),
                         [["a", "text"]])

    def test_scores_never_cause_an_error(self):
        # NULL and NaN read as 0, +-infinity as +-1.8e308: never an error on a row's value
        rows = SERVER.psql("SELECT private_select(v, s, 1.0) FROM (VALUES (1, NULL::float8), (2, 'NaN'), "
                           "(3, 'infinity'), (4, '-infinity')) a(v, s)")
        self.assertEqual(rows, [["3"]])

    def test_empty_input_is_null_in_both_plans(self):
        # no candidates: NULL (the empty set is public), with the parameters checked as with rows
        for mode in (SERIAL, PARALLEL):
            for form in SELECT_FORMS:
                self.assertEqual(SERVER.psql(mode + "SELECT %s IS NULL FROM sel WHERE g < 0" % form), [["t"]])

    def test_messages_with_and_without_rows(self):
        cases = [("private_select(c, score, 0)", "private_select: eps must be a finite number > 0, but is 0"),
                 ("private_select(c, score, 1, 0)",
                  "private_select: sensitivity must be a finite number > 0, but is 0"),
                 ("private_select(c, score, 1, 1, 'gumbel')",
                  "private_select: method must be 'exponential' or 'permute_and_flip', but is 'gumbel'"),
                 ("private_select(c, score, score)",
                  "private_select: eps must be a literal or a query parameter (optdp fixes the noise before it "
                  "reads any row), but is an expression that can depend on a row")]
        assert_messages_with_and_without_rows(self, "sel", cases)


class Calls(unittest.TestCase):
    FORMS = [("private_select(c, score, 1.0)", "sel"), ("private_select(c, score, 1.0, 2, 'exponential')", "sel"),
             ("private_count_levels(0.5, 0.8)", "t"), ("private_count_levels_of(x, 0.5)", "t")]

    def test_no_window_use(self):
        for form, table in self.FORMS:
            self.assertEqual(SERVER.error_of("SELECT %s OVER (ORDER BY g) FROM %s" % (form, table)),
                             "optdp: its aggregates cannot be used as window functions (every row would be a "
                             "release)")

    def test_query_parameters(self):
        # a generic plan keeps $1 as a Param: read through the executor, with rows and without
        rows = SERVER.psql("SET plan_cache_mode = force_generic_plan; PREPARE s(float8, text) AS "
                           "SELECT private_select(c, score, $1, 1, $2) IS NULL FROM sel WHERE g < 0; "
                           "EXECUTE s(0.5, 'exponential'); PREPARE l(float8, float8) AS "
                           "SELECT cardinality(private_count_levels($1, $2)) FROM t; EXECUTE l(0.25, 0.5)")
        self.assertEqual(rows, [["t"], ["2"]])
        self.assertEqual(SERVER.error_of("SET plan_cache_mode = force_generic_plan; PREPARE l(float8, float8) AS "
                                         "SELECT private_count_levels($1, $2) FROM t; EXECUTE l(0.5, 0.25)"),
                         "private_count_levels: alphas must be strictly increasing (the least private level "
                         "first), but alpha_2 is 0.25 after 0.5")

    def test_support_functions_are_not_public(self):
        SERVER.psql("DROP ROLE IF EXISTS analyst2; CREATE ROLE analyst2; GRANT SELECT ON sel, t TO analyst2; "
                    "GRANT CREATE ON SCHEMA public TO analyst2")
        self.assertEqual(len(SERVER.psql("SET ROLE analyst2; SELECT private_select(c, score, 1.0), "
                                         "private_count_levels(0.5, 0.8), private_count_levels_of(x, 0.5) "
                                         "FROM sel, t WHERE sel.g = t.g")), 1)
        for fn, args in (("optdp_select_trans", "bytea, anycompatible, float8, float8"),
                         ("optdp_select_combine", "bytea, bytea"),
                         ("optdp_levels_trans", "bytea, float8, float8"),
                         ("optdp_levels_of_trans", "bytea, anyelement, float8"),
                         ("optdp_levels_final", "bytea")):
            self.assertEqual(SERVER.psql("SELECT has_function_privilege('analyst2', '%s(%s)', 'EXECUTE')"
                                         % (fn, args)), [["f"]], fn)
        self.assertEqual(SERVER.error_of("SET ROLE analyst2; CREATE AGGREGATE exact_levels(float8) "
                                         "(SFUNC = optdp_levels_trans, STYPE = bytea)"),
                         "permission denied for function optdp_levels_trans")


class Levels(unittest.TestCase):
    A, B = 0.5, 0.8

    def joint_law(self):
        """(r_1 - n, r_2 - r_1): Z(a) and, independently, W = 0 with probability c0
        (from the core), otherwise Z(b)."""
        c0 = float(tool("keep", self.A, self.B))
        za, zb = geometric_law(self.A, 60), geometric_law(self.B, 120)
        law = {}
        for z1, p1 in za.items():
            for w, p2 in zb.items():
                law[(z1, w)] = p1 * ((1 - c0) * p2 + (c0 if w == 0 else 0))
        return law

    def test_law_serial_and_parallel(self):
        law = self.joint_law()
        for form, n in (("private_count_levels(0.5, 0.8)", 12), ("private_count_levels_of(x, 0.5, 0.8)", 8)):
            for mode, seed in ((SERIAL, 31), (PARALLEL, 32)):
                sql = "SELECT k, %s FROM t GROUP BY k" % form
                if mode is PARALLEL:
                    self.assertIn("Partial HashAggregate", plan_of(sql))
                rows = SERVER.psql(mode + "SELECT dp_seed(%d); %s" % (seed, sql))[1:]
                self.assertEqual(len(rows), GROUPS)
                obs = {}
                for r in rows:
                    r1, r2 = (int(v) for v in r[1].strip("{}").split(","))
                    obs[(r1 - n, r2 - r1)] = obs.get((r1 - n, r2 - r1), 0) + 1
                self.assertGreater(chi_square_p(obs, law), P_MIN,
                                   "%s %s" % (form, "parallel" if mode is PARALLEL else "serial"))

    def test_empty_input_releases_k_counts(self):
        for mode in (SERIAL, PARALLEL):
            for form in LEVEL_FORMS + ["private_count_levels(0.1, 0.2, 0.3)"]:
                rows = SERVER.psql(mode + "SELECT pg_typeof(r)::text, cardinality(r), array_position(r, NULL) "
                                          "FROM (SELECT %s AS r FROM t WHERE g < 0) a" % form)
                self.assertEqual(rows, [["bigint[]", str(form.count(",") + (1 if "_of" not in form else 0)), ""]], form)

    def test_one_to_sixteen_levels(self):
        alphas = ", ".join("%.2f" % (0.05 * i) for i in range(1, 17))
        self.assertEqual(SERVER.psql("SELECT cardinality(private_count_levels(%s)) FROM t" % alphas), [["16"]])
        self.assertEqual(SERVER.psql("SELECT cardinality(private_count_levels_of(x, %s)) FROM t" % alphas), [["16"]])
        self.assertIn("does not exist", SERVER.error_of("SELECT private_count_levels(%s, 0.9) FROM t" % alphas))

    def test_messages_with_and_without_rows(self):
        cases = [("private_count_levels(0.5, 0.1)",
                  "private_count_levels: alphas must be strictly increasing (the least private level first), but "
                  "alpha_2 is 0.1 after 0.5"),
                 ("private_count_levels(0.2, 0.5, 1.5)", "private_count_levels: alpha_3 must be in (0, 1), but is 1.5"),
                 ("private_count_levels_of(x, 0)", "private_count_levels_of: alpha_1 must be in (0, 1), but is 0"),
                 ("private_count_levels_of(x, 0.5, x)",
                  "private_count_levels_of: alpha_2 must be a literal or a query parameter (optdp fixes the noise "
                  "before it reads any row), but is an expression that can depend on a row")]
        assert_messages_with_and_without_rows(self, "t", cases)


class Ledger(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        SERVER.psql("DROP DATABASE IF EXISTS ledger2; CREATE DATABASE ledger2")
        SERVER.psql("CREATE EXTENSION optdp; CREATE TABLE sel AS %s; CREATE TABLE t AS %s; ANALYZE sel; ANALYZE t; "
                    "SELECT dp_ledger_attach(1000000)" % (SEL, TABLE), db="ledger2")

    def entries(self):
        return SERVER.psql("SELECT function, epsilon, count(*) FROM dp_ledger_entries GROUP BY 1, 2 ORDER BY 1",
                           db="ledger2")

    def test_one_charge_per_release_in_both_plans(self):
        for mode in (SERIAL, PARALLEL):
            SERVER.psql("TRUNCATE optdp_charges", db="ledger2")
            SERVER.psql(mode + "SELECT g % 20, private_select(c, score, 0.25) FROM sel GROUP BY g % 20; "
                               "SELECT private_select(c, score, 0.25) FROM sel WHERE g < 0; "
                               "SELECT k % 30, private_count_levels(0.5, 0.8) FROM t GROUP BY k % 30; "
                               "SELECT private_count_levels_of(x, 0.5, 0.8) FROM t WHERE g < 0", db="ledger2")
            # levels are charged once, at the least private level's epsilon (ln 2)
            self.assertEqual(self.entries(), [["private_count_levels", "0.6931471805599454", "30"],
                                              ["private_count_levels_of", "0.6931471805599454", "1"],
                                              ["private_select", "0.25", "21"]])


    def test_release_levels_one_charge_per_call_none_for_a_refused_one(self):
        # charged at the least private level's epsilon, before its rows; refused arguments
        # and shapes are not charged
        db = "ledger2"
        SERVER.psql("TRUNCATE optdp_charges", db=db)
        SERVER.psql("SELECT * FROM release_levels(3, 10, '[0.2, 0.5, 0.9]'); "
                    "SELECT * FROM release_levels(3, 10, ARRAY[0.25]) LIMIT 1; "
                    "CREATE TEMP TABLE published AS SELECT * FROM release_levels(0, 0, '[0.5]')", db=db)
        for sql in ("SELECT * FROM release_levels(3, 10, '[0.9, 0.2]')",
                    "SELECT * FROM sel, release_levels(3, 10, '[0.5]')",
                    "SELECT * FROM sel, release_levels(sel.g, 10, '[0.5]')",
                    "SELECT * FROM release_levels(3, 10, '[0.5]') WHERE level = 1",
                    "SELECT release_levels(3, 10, '[0.5]')",
                    "DO $$ BEGIN PERFORM * FROM release_levels(3, 10, '[0.5]'); END $$"):
            self.assertRegex(SERVER.error_of(sql, db=db), "^release_levels: ", sql)
        eps = [SERVER.psql("SELECT dp_epsilon(%s)" % a)[0][0] for a in ("0.2", "0.25", "0.5")]
        self.assertEqual(SERVER.psql("SELECT function, epsilon FROM dp_ledger_entries ORDER BY id", db=db),
                         [["release_levels", e] for e in eps])


class ReleaseLevels(unittest.TestCase):
    """release_levels(value, n, alphas): one release per statement."""
    N = 3000  # releases

    def test_joint_law_of_the_levels(self):
        # (level 1, level 2) of release_levels(3, 10, [0.5, 0.8]) against the core's law:
        # level 1 from the geometric mechanism G(10, 0.5) at 3, level 2 from the
        # derivation matrix T(0.5, 0.8) at level 1 (so level 2 has the law of G(10, 0.8))
        g = {(int(i), int(z)): float(p) for i, z, p in SERVER.psql("SELECT * FROM geometric_matrix(10, 0.5)")}
        t = {(int(o), int(z)): float(p) for o, z, p in SERVER.psql("SELECT * FROM derivation_matrix(10, 0.5, 0.8)")}
        law = {(a, b): g[(3, a)] * t[(a, b)] for a in range(11) for b in range(11)}
        for alphas, seed in (("'[0.5, 0.8]'", 41), ("ARRAY[0.5, 0.8]", 42)):
            out = SERVER.psql("SELECT dp_seed(%d);" % seed +
                              "SELECT * FROM release_levels(3, 10, %s);" % alphas * self.N)[1:]
            self.assertEqual(len(out), 2 * self.N)
            obs = {}
            for first, second in zip(out[0::2], out[1::2]):
                self.assertEqual((first[:2], second[:2]), (["1", "0.5"], ["2", "0.8"]))
                key = (int(first[2]), int(second[2]))
                obs[key] = obs.get(key, 0) + 1
            self.assertGreater(chi_square_p(obs, law), P_MIN, alphas)


# ---- the paired-neighbour audit (docs/audit.md) -----------------------------------
N_MAIN, N_PILOT = 5000, 1000  # releases per side, as the SQLite suite's short run


def releases(rows, form, seed, n):
    """n releases of `form` over the rows (a list of x values; None is NULL), all in one
    statement: one group per trial, each the trial's copy of the rows (a LEFT JOIN, so
    that an empty table still makes a group, of one row with x NULL, which the forms
    audited here ignore). Serial, from dp_seed(seed)."""
    values = ", ".join("(%s::float8)" % ("NULL" if v is None else repr(float(v))) for v in rows)
    d = "(VALUES %s) d(x)" % values if rows else "(SELECT NULL::float8 AS x WHERE false) d"
    out = SERVER.psql(SERIAL + "SELECT dp_seed(%d); SELECT %s FROM generate_series(1, %d) trial LEFT JOIN %s ON true "
                               "GROUP BY trial" % (seed, form, n, d))[1:]
    assert len(out) == n
    return " ".join(r[0] for r in out)


def audit(form, rows_a, rows_b):
    """eps_lb of form on the pair (rows_a, rows_b), from pilot and main batches drawn
    with seeds fixed by the pair's description, and the audit's summary line."""
    seed = zlib.crc32(("%s|%r|%r" % (form, rows_a, rows_b)).encode()) * 4
    lines = [releases(rows_a, form, seed, N_PILOT), releases(rows_b, form, seed + 1, N_PILOT),
             releases(rows_a, form, seed + 2, N_MAIN), releases(rows_b, form, seed + 3, N_MAIN)]
    out = tool("audit", 1, stdin="\n".join(lines) + "\n").splitlines()
    return float(out[0].split()[1]), out[1]


class Audit(unittest.TestCase):
    LN2 = 0.6931471805599454

    def check(self, form, claim, pairs):
        for a, b in pairs:
            eps_lb, summary = audit(form, a, b)
            print("[audit] %s on %r vs %r: %s" % (form, a, b, summary), file=sys.stderr)
            self.assertLessEqual(eps_lb, claim, "%s on %r vs %r: %s" % (form, a, b, summary))

    def test_private_count(self):
        # the releases audited are those of the calls as planned, with alpha
        # their direct argument (plan.cpp), as the self-check's below
        for form in ("private_count(0.5)", "private_count(x, 0.5)"):
            plan = "\n".join(r[0] for r in SERVER.psql(
                SERIAL + "SELECT dp_seed(1); EXPLAIN VERBOSE SELECT %s FROM generate_series(1, 2) trial "
                "LEFT JOIN (VALUES (1::float8), (NULL)) d(x) ON true GROUP BY trial" % form)[1:])
            self.assertIn("private_count(", plan)
            self.assertNotIn("'0.5'::double precision", plan)
        self.check("private_count(0.5)", self.LN2, [([1, 2, 3], [1, 2, 3, 4])])
        self.check("private_count(x, 0.5)", self.LN2, [([], [7]), ([None, 1], [1, 1])])

    def test_sums(self):
        for fn in ("staircase_sum", "laplace_sum"):
            self.check("%s(x, 1.0, 0, 10)" % fn, 1.0, [([], [10]), ([0], [10])])
            self.check("%s(x, 1.0, -5, 5)" % fn, 1.0, [([], [-5])])

    def test_private_avg(self):
        self.check("private_avg(x, 1.0, 0, 10)", 1.0, [([], [10]), ([0] * 5, [0] * 4 + [10])])
        self.check("private_avg(x, 1.0, 100, 200)", 1.0, [([100], [200])])

    def test_the_audit_catches_an_over_claim(self):
        # the same pairs at twice the epsilon (four times for the count's alpha 0.25 =
        # ln 4 = 2 ln 2) must prove more than the claim: the audit can fail
        for form, claim, a, b in (("private_count(0.25)", self.LN2, [1, 2, 3], [1, 2, 3, 4]),
                                  ("laplace_sum(x, 2.0, 0, 10)", 1.0, [], [10]),
                                  ("staircase_sum(x, 2.0, 0, 10)", 1.0, [0], [10]),
                                  ("private_avg(x, 2.0, 100, 200)", 1.0, [100], [200])):
            eps_lb, summary = audit(form, a, b)
            print("[audit] self-check %s on %r vs %r: %s" % (form, a, b, summary), file=sys.stderr)
            self.assertGreater(eps_lb, claim, "the audit no longer detects %s claimed at %g: %s"
                               % (form, claim, summary))


if __name__ == "__main__":
    MODULE_DIR = os.path.abspath(sys.argv.pop(1))
    TOOL = os.path.abspath(sys.argv.pop(1))
    unittest.main()
