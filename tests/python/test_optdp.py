#!/usr/bin/python3
"""optdp through Python's sqlite3 module (unittest, standard library only).

Run with Debian's interpreter, the one whose sqlite3 has enable_load_extension:

    /usr/bin/python3 tests/python/test_optdp.py --module build/optdp.so [unittest args, e.g. TestErrors -v]

The module path comes from --module, else $OPTDP_MODULE, else build/optdp.so
at the top of the source tree.

Randomised results are only checked in ways that do not depend on the noise
drawn: exact counts with alpha = 1e-300 (the noise is non-zero with
probability 2a/(1+a) ~ 2e-300), loose bounds, equality of two runs with the
same seed, and one statistical test (seeded, hence deterministic) whose
bounds are 5 standard errors wide.

The function-list snapshot (function_list.expected) is regenerated with
--update-snapshot or OPTDP_UPDATE_SNAPSHOT=1; review the diff before committing.
"""
import difflib
import math
import os
import random
import sqlite3
import sys
import unittest
from decimal import Decimal, localcontext

import optdp_testlib
from optdp_testlib import module_path

HERE = os.path.dirname(os.path.abspath(__file__))
SNAPSHOT = os.path.join(HERE, "function_list.expected")
UPDATE_SNAPSHOT = os.environ.get("OPTDP_UPDATE_SNAPSHOT") == "1"

TINY = 1e-300  # noise is 0 except with probability ~2e-300
# Two calls of one form with different parameters in the running statements:
# refused on every path (with no rows, which call is releasing cannot be told).
def different(a, b):
    return ("private_count: the running statements call it with different parameters (alpha %s; alpha %s), and "
            "which call is releasing cannot be told: give each its own statement" % (a, b))


NOT_LITERAL = ("private_count: alpha must be a literal or a bound parameter (optdp fixes the noise before it reads "
               "any row), but is the expression '%s'")


def connect(load=True):
    db = sqlite3.connect(":memory:", isolation_level=None)
    if load:
        db.enable_load_extension(True)
        db.load_extension(module_path())
        db.enable_load_extension(False)
    return db


def up(x):
    """The smallest double >= the Decimal x."""
    d = float(x)
    while Decimal(d) < x:
        d = math.nextafter(d, math.inf)
    while Decimal(math.nextafter(d, 0.0)) >= x:
        d = math.nextafter(d, 0.0)
    return d


def exact_exp_neg(eps):
    with localcontext() as ctx:
        ctx.prec = 60
        return (-Decimal(eps)).exp()


def exact_neg_ln(alpha):
    with localcontext() as ctx:
        ctx.prec = 60
        return -Decimal(alpha).ln()


class OptdpTestCase(unittest.TestCase):
    def setUp(self):
        self.db = connect()

    def tearDown(self):
        self.db.close()

    def one(self, sql, params=()):
        return self.db.execute(sql, params).fetchone()[0]

    def assertError(self, sql, message, params=()):
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute(sql, params).fetchall()
        self.assertEqual(str(cm.exception), message, "for: " + sql)

    def make_fixture(self):
        self.db.executescript("""
            create table visits(id integer primary key, ward text, age integer, note text);
            insert into visits(ward, age, note) values
              ('A', 30, 'x'), ('A', 41, NULL), ('A', 52, 'y'), ('A', 63, NULL),
              ('B', 25, 'z'), ('B', 36, 'w'),
              ('C', 70, NULL);
            create table wards(ward text primary key);
            insert into wards values ('A'), ('B'), ('C'), ('D'), ('E');
        """)


class TestLoading(OptdpTestCase):
    def test_version(self):
        self.assertEqual(self.one("select dp_version()"), "0.1.0")

    def test_default_generator_is_os(self):
        self.assertEqual(self.one("select dp_rng()"), "os")

    def test_not_available_without_loading(self):
        db = connect(load=False)
        with self.assertRaises(sqlite3.OperationalError):
            db.execute("select dp_version()")
        db.close()

    def test_loading_twice_on_one_connection(self):
        # Re-registration replaces every function (SQLite releases the old
        # per-connection state through xDestroy); everything keeps working.
        self.db.enable_load_extension(True)
        self.db.load_extension(module_path())
        self.assertEqual(self.one("select private_count(?) from (select 1 union all select 2)", (TINY,)), 2)
        self.assertEqual(self.one("select dp_seed(1)"), "seeded")
        self.assertEqual(self.one("select dp_rng()"), "seeded")

    def test_many_connections(self):
        for i in range(50):
            db = connect()
            self.assertEqual(db.execute("select dp_seed(?)", (i,)).fetchone()[0], "seeded")
            db.execute("select private_count(0.5) from (select 1)").fetchall()
            db.close()


class TestResultsAndTypes(OptdpTestCase):
    def test_private_count_is_integer(self):
        v, t = self.db.execute("select private_count(0.5), typeof(private_count(0.5)) "
                               "from (select 1 union all select 2)").fetchone()
        self.assertIs(type(v), int)
        self.assertEqual(t, "integer")

    def test_private_count_two_args_is_integer(self):
        v, t = self.db.execute("select private_count(x, 0.5), typeof(private_count(x, 0.5)) "
                               "from (select 1 x union all select null)").fetchone()
        self.assertIs(type(v), int)
        self.assertEqual(t, "integer")

    def test_scalar_types(self):
        row = self.db.execute("select dp_alpha(1), typeof(dp_alpha(1)), dp_epsilon(0.5), typeof(dp_epsilon(0.5)), "
                              "dp_version(), dp_rng(), typeof(dp_seed(NULL))").fetchone()
        self.assertIs(type(row[0]), float)
        self.assertEqual(row[1], "real")
        self.assertIs(type(row[2]), float)
        self.assertEqual(row[3], "real")
        self.assertEqual(row[4], "0.1.0")
        self.assertEqual(row[5], "os")
        self.assertEqual(row[6], "text")

    def test_exact_counts_with_tiny_alpha(self):
        self.make_fixture()
        self.assertEqual(self.one("select private_count(?) from visits", (TINY,)), 7)
        self.assertEqual(self.one("select private_count(?) from visits where age > 40", (TINY,)), 4)
        self.assertEqual(self.one("select private_count(note, ?) from visits", (TINY,)), 4)
        self.assertEqual(self.one("select private_count(5e-324) from visits"), 7)
        self.assertEqual(self.one("select private_count(9.8596765437597728e-305) from visits"), 7)  # dp_alpha(700)

    def test_loose_bounds_with_half(self):
        self.make_fixture()
        for _ in range(20):
            self.assertLess(abs(self.one("select private_count(0.5) from visits") - 7), 500)

    def test_alpha_from_a_column_is_refused_on_every_path(self):
        # alpha is read from the statement's text, never from the rows.
        self.db.execute("create table t(a real)")
        self.assertError("select private_count(a) from t", NOT_LITERAL % "a")
        self.db.executemany("insert into t values (?)", [(TINY,)] * 5)
        self.assertError("select private_count(a) from t", NOT_LITERAL % "a")

    def test_alpha_just_below_one(self):
        v = self.one("select private_count(%r) from (select 1)" % math.nextafter(1.0, 0.0))
        self.assertIs(type(v), int)

    def test_dp_alpha_values(self):
        for eps in (1.0, 0.5, 0.1, 2.0, 10.0, 1e-10, 700.0, 744.44, 745.0, 1000.0):
            self.assertEqual(self.one("select dp_alpha(?)", (eps,)), up(exact_exp_neg(eps)), "eps = %r" % eps)
        self.assertEqual(self.one("select dp_alpha(1)"), 0.36787944117144233)

    def test_dp_epsilon_values(self):
        for a in (0.5, 0.1, 0.9, 1e-10, math.nextafter(1.0, 0.0)):
            self.assertEqual(self.one("select dp_epsilon(?)", (a,)), up(exact_neg_ln(a)), "alpha = %r" % a)


class TestErrors(OptdpTestCase):
    def test_alpha_out_of_range(self):
        cases = [("1.5", "1.5"), ("0", "0"), ("0.0", "0.0"), ("1", "1"), ("1.0", "1.0"), ("-0.5", "-0.5"),
                 ("1e999", "inf"), ("-1e999", "-inf"), ("2", "2")]
        for sql_value, shown in cases:
            msg = "private_count: alpha must be in (0, 1), but is " + shown
            self.assertError("select private_count(%s) from (select 1)" % sql_value, msg)
            self.assertError("select private_count(x, %s) from (select 1 x)" % sql_value, msg)
            self.assertError("select private_count(%s) where 0" % sql_value, msg)

    def test_alpha_out_of_range_as_parameter(self):
        for value, shown in [(1.5, "1.5"), (0, "0"), (1, "1"), (-0.5, "-0.5")]:
            msg = "private_count: alpha must be in (0, 1), but is " + shown
            self.assertError("select private_count(?) from (select 1)", msg, (value,))
            self.assertError("select private_count(?) where 0", msg, (value,))
        for value, shown in [(math.inf, "inf"), (-math.inf, "-inf")]:
            msg = "private_count: alpha must be in (0, 1), but is " + shown
            self.assertError("select private_count(?) from (select 1)", msg, (value,))

    def test_alpha_not_a_number(self):
        cases = [("NULL", "NULL"), ("'abc'", "text 'abc'"), ("'0.5'", "text '0.5'"),
                 ("x'010203'", "a blob of 3 bytes")]
        for sql_value, shown in cases:
            msg = "private_count: alpha must be a number, but is " + shown
            self.assertError("select private_count(%s) from (select 1)" % sql_value, msg)
            self.assertError("select private_count(x, %s) from (select 1 x)" % sql_value, msg)
            self.assertError("select private_count(%s) where 0" % sql_value, msg)

    def test_alpha_not_a_number_as_parameter(self):
        for value, shown in [(None, "NULL"), ("abc", "text 'abc'"), (b"abc", "a blob of 3 bytes")]:
            msg = "private_count: alpha must be a number, but is " + shown
            self.assertError("select private_count(?) from (select 1)", msg, (value,))
            self.assertError("select private_count(?) where 0", msg, (value,))

    def test_long_text_is_shortened(self):
        self.assertError("select private_count(?) from (select 1)",
                         "private_count: alpha must be a number, but is text '" + "a" * 40 + "...'", ("a" * 50,))

    def test_non_literal_alpha_is_refused_with_and_without_rows(self):
        for sql, shown in [("select private_count(v) from (select 0.01 v union all select 0.02)", "v"),
                           ("select private_count(x, v) from (select 1 x, 0.01 v)", "v"),
                           ("select private_count(v) from (select 0.01 v) where 0", "v"),
                           ("select private_count(0.25 + 0.25) from (select 1)", "0.25 + 0.25"),
                           ("select private_count(0.25 + 0.25) where 0", "0.25 + 0.25"),
                           ("select private_count((select 0.5)) where 0", "(select 0.5)")]:
            self.assertError(sql, NOT_LITERAL % shown)

    def test_alpha_may_differ_between_statements(self):
        self.assertEqual(self.one("select private_count(1e-300) from (select 1)"), 1)
        self.assertEqual(self.one("select private_count(1e-200) from (select 1 union all select 2)"), 2)

    def test_different_alphas_in_one_statement_are_refused_on_every_path(self):
        for where in ("", " where 0"):
            self.assertError("select private_count(0.5), private_count(0.25) from (select 1)" + where,
                             different("0.5", "0.25"))
            self.assertError("select private_count(?), private_count(?) from (select 1)" + where,
                             different("0.5", "0.25"), (0.5, 0.25))
        # Different forms are different functions: fine.
        self.assertEqual(self.db.execute("select private_count(1e-300), private_count(1, 1e-200) from (select 1)"
                                         ).fetchone(), (1, 1))

    def test_wrong_number_of_arguments(self):
        for sql, name in [("select private_count() from (select 1)", "private_count"),
                          ("select private_count(1, 2, 3) from (select 1)", "private_count"),
                          ("select dp_alpha()", "dp_alpha"), ("select dp_alpha(1, 2)", "dp_alpha"),
                          ("select dp_epsilon()", "dp_epsilon"), ("select dp_version(1)", "dp_version"),
                          ("select dp_seed()", "dp_seed"), ("select dp_seed(1, 2)", "dp_seed"),
                          ("select dp_rng(1)", "dp_rng")]:
            self.assertError(sql, "wrong number of arguments to function %s()" % name)

    def test_not_a_window_function(self):
        self.assertError("select private_count(0.5) over () from (select 1)",
                         "private_count() may not be used as a window function")

    def test_dp_alpha_errors(self):
        for value, shown in [(0, "0"), (0.0, "0"), (-1, "-1"), (-0.0, "-0"), (math.inf, "inf"), (-math.inf, "-inf")]:
            self.assertError("select dp_alpha(?)", "dp_alpha: eps must be a finite number > 0, but is " + shown,
                             (value,))
        for value, shown in [(None, "NULL"), ("1", "text '1'"), (b"\0", "a blob of 1 byte")]:
            self.assertError("select dp_alpha(?)", "dp_alpha: eps must be a number, but is " + shown, (value,))
        for value, shown in [(1e-20, "1e-20"), (5e-324, "5e-324")]:
            self.assertError("select dp_alpha(?)",
                             "dp_alpha: eps must be greater than 2^-53 (e^-eps rounds to 1), but is " + shown, (value,))

    def test_dp_epsilon_errors(self):
        for value, shown in [(1.5, "1.5"), (0, "0"), (1, "1"), (-0.5, "-0.5"), (math.inf, "inf"),
                             (-math.inf, "-inf")]:
            self.assertError("select dp_epsilon(?)", "dp_epsilon: alpha must be in (0, 1), but is " + shown, (value,))
        for value, shown in [(None, "NULL"), ("abc", "text 'abc'"), (b"abc", "a blob of 3 bytes")]:
            self.assertError("select dp_epsilon(?)", "dp_epsilon: alpha must be a number, but is " + shown, (value,))

    def test_errors_leave_connection_usable(self):
        self.assertError("select private_count(1.5) from (select 1)",
                         "private_count: alpha must be in (0, 1), but is 1.5")
        self.assertEqual(self.one("select private_count(?) from (select 1)", (TINY,)), 1)


class TestErrorMessageValues(OptdpTestCase):
    """Messages show the value the user passed (sql/reference.md: NULL, a
    number, text '...', a blob of N bytes), as valid UTF-8."""

    def test_long_text_cut_at_character_boundary(self):
        # 39 ASCII characters then a 2-byte character straddling the 40-byte cut.
        value = "a" * 39 + "\u00e9" + "bbb"
        with self.assertRaises(sqlite3.OperationalError) as cm:  # not UnicodeDecodeError
            self.db.execute("select private_count(?) from (select 1)", (value,)).fetchall()
        msg = str(cm.exception)
        prefix = "private_count: alpha must be a number, but is text '"
        self.assertTrue(msg.startswith(prefix) and msg.endswith("...'"), msg)
        shown = msg[len(prefix):-len("...'")]
        self.assertTrue(value.startswith(shown) and len(shown) >= 39, msg)

    def test_multibyte_text_shortened_validly(self):
        value = "\u20ac" * 30  # 30 characters, 90 bytes
        with self.assertRaises(sqlite3.OperationalError) as cm:
            self.db.execute("select dp_epsilon(?)", (value,)).fetchall()
        msg = str(cm.exception)
        prefix = "dp_epsilon: alpha must be a number, but is text '"
        self.assertTrue(msg.startswith(prefix), msg)
        shown = msg[len(prefix):].rstrip("'")
        if shown.endswith("..."):
            shown = shown[:-3]
        self.assertTrue(value.startswith(shown) and shown, msg)

    def test_huge_integer_alpha_shown_exactly(self):
        self.assertError("select private_count(9223372036854775807) from (select 1)",
                         "private_count: alpha must be in (0, 1), but is 9223372036854775807")
        # A scalar shows the value only when it is bound (a literal may be a row's).
        self.assertError("select dp_epsilon(?)", "dp_epsilon: alpha must be in (0, 1), but is 9007199254740993",
                         (9007199254740993,))
        self.assertError("select dp_epsilon(9007199254740993)",
                         optdp_testlib.hidden("dp_epsilon: alpha must be in (0, 1), but is 9007199254740993"))


class TestGroupByAndJoin(OptdpTestCase):
    def setUp(self):
        super().setUp()
        self.make_fixture()

    def test_group_by(self):
        self.assertEqual(self.db.execute("select ward, private_count(?) from visits group by ward order by ward",
                                         (TINY,)).fetchall(), [("A", 4), ("B", 2), ("C", 1)])
        self.assertEqual(self.db.execute("select ward, private_count(note, ?) from visits group by ward "
                                         "order by ward", (TINY,)).fetchall(), [("A", 2), ("B", 2), ("C", 0)])

    def test_left_join_gives_every_key(self):
        rows = self.db.execute("select k.ward, private_count(v.id, ?), typeof(private_count(v.id, ?)) "
                               "from wards k left join visits v on v.ward = k.ward group by k.ward order by k.ward",
                               (TINY, TINY)).fetchall()
        self.assertEqual(rows, [("A", 4, "integer"), ("B", 2, "integer"), ("C", 1, "integer"),
                                ("D", 0, "integer"), ("E", 0, "integer")])

    def test_left_join_one_argument_form_counts_null_row(self):
        rows = self.db.execute("select k.ward, private_count(?) from wards k left join visits v "
                               "on v.ward = k.ward group by k.ward order by k.ward", (TINY,)).fetchall()
        self.assertEqual(rows, [("A", 4), ("B", 2), ("C", 1), ("D", 1), ("E", 1)])

    def test_empty_keys_get_noise(self):
        self.db.execute("select dp_seed(11)")
        keys = ",".join("(%d)" % i for i in range(300))
        self.db.execute("create table k(i)")
        self.db.execute("insert into k values " + keys)
        vals = [r[0] for r in self.db.execute("select private_count(v.id, 0.5) from k left join visits v on 0 "
                                              "group by k.i")]
        self.assertEqual(len(vals), 300)
        self.assertTrue(any(v > 0 for v in vals) and any(v < 0 for v in vals))

    def test_alternating_alphas_between_groups(self):
        # Two forms with alphas 1e-300 and 0.5 in every group: the first stays
        # exact while the second is noisy (exercises the per-alpha sampler cache).
        self.db.execute("create table t(g, v)")
        self.db.executemany("insert into t values (?, ?)", [(g, g % 2) for g in range(100) for _ in range(10)])
        rows = self.db.execute("select g, private_count(1e-300), private_count(v, 0.5) "
                               "from t group by g order by g").fetchall()
        self.assertEqual([c for g, c, _ in rows], [10] * 100)
        self.assertTrue(any(c != 10 for g, _, c in rows if g % 2 == 1))

    def test_having_and_filter(self):
        self.assertEqual(self.db.execute("select ward from visits group by ward having private_count(?) > 1 "
                                         "order by ward", (TINY,)).fetchall(), [("A",), ("B",)])
        self.assertEqual(self.one("select private_count(?) filter (where ward = 'A') from visits", (TINY,)), 4)


class TestEmptyInput(OptdpTestCase):
    """No rows and no GROUP BY: 0 + noise, an INTEGER, never NULL; alpha read from the statement."""

    def setUp(self):
        super().setUp()
        self.db.execute("create table empty(id, x)")

    def test_integer_not_null(self):
        for sql in ["select private_count(0.5) from empty", "select private_count(x, 0.5) from empty",
                    "select private_count(0.5) where 0", "select private_count(0.36787944117144233) from empty",
                    "select (select private_count(0.5) from empty)",
                    "select private_count(0.5) filter (where 0) from (select 1)"]:
            v = self.one(sql)
            self.assertIs(type(v), int, sql)

    def test_tiny_alpha_gives_zero(self):
        self.assertEqual(self.one("select private_count(1e-300) from empty"), 0)
        self.assertEqual(self.one("select private_count(x, 1e-300) from empty"), 0)
        self.assertEqual(self.one("select private_count(1e-300), private_count(1e-300) from empty"), 0)

    def test_statement_text_parsing(self):
        self.assertEqual(self.one("select PRIVATE_COUNT /* c */ (1e-300) from empty"), 0)
        self.assertEqual(self.one("select Private_Count\n  (1e-300) from empty"), 0)
        row = self.db.execute("select 'private_count(0.9)', private_count(1e-300) as \"private_count(0.8)\" "
                              "from empty -- private_count(0.7)").fetchone()
        self.assertEqual(row, ("private_count(0.9)", 0))

    def test_empty_group_by_has_no_rows(self):
        self.assertEqual(self.db.execute("select x, private_count(0.5) from empty group by x").fetchall(), [])

    def test_noise_on_empty_input_is_real(self):
        self.db.execute("select dp_seed(3)")
        vals = [self.one("select private_count(0.5) from empty") for _ in range(300)]
        self.assertTrue(any(v > 0 for v in vals) and any(v < 0 for v in vals))


class TestEmptyInputIsolation(OptdpTestCase):
    """On empty input alpha must come from the statement being evaluated, not
    from other statements that happen to be running on the connection."""

    def setUp(self):
        super().setUp()
        self.db.execute("create table t(g)")
        self.db.executemany("insert into t values (?)", [(i % 5,) for i in range(100)])
        self.db.execute("create table empty(x)")

    def test_other_running_statement_with_the_same_alpha(self):
        busy = self.db.execute("select g, private_count(0.2) from t group by g")
        busy.fetchone()  # the statement stays busy
        v = self.one("select private_count(0.2) from empty")
        self.assertIs(type(v), int)
        busy.fetchall()

    def test_other_running_statement_with_another_alpha_fails_closed(self):
        # Which call is being finalised cannot be told from inside SQLite, so
        # optdp refuses rather than risk the other statement's alpha, with
        # rows or without (documented limitation).
        busy = self.db.execute("select g, private_count(0.1) from t group by g")
        busy.fetchone()
        self.assertError("select private_count(0.2) from empty", different("0.2", "0.1"))
        self.assertError("select private_count(0.2) from t", different("0.2", "0.1"))
        busy.fetchall()
        self.assertIs(type(self.one("select private_count(0.2) from empty")), int)

    def test_another_form_in_a_running_statement_does_not_interfere(self):
        busy = self.db.execute("select g, private_count(0.1) from t group by g")
        busy.fetchone()
        v = self.one("select private_count(e.x, 0.2) from (select 1) left join empty e on 1")
        self.assertIs(type(v), int)
        busy.fetchall()

    def test_views_cannot_call_the_aggregates(self):
        # DIRECTONLY: a view's call would not be in a running statement's text.
        self.db.execute("create view v as select private_count(0.9) c from empty")
        busy = self.db.execute("select g, private_count(1e-300) from t group by g")
        busy.fetchone()
        self.assertError("select c from v", "unsafe use of private_count()")
        busy.fetchall()


class TestBoundParameters(OptdpTestCase):
    def setUp(self):
        super().setUp()
        self.db.execute("create table t(x)")
        self.db.executemany("insert into t values (?)", [(1,), (2,), (None,)])

    def test_positional(self):
        self.assertEqual(self.one("select private_count(?) from t", (TINY,)), 3)
        self.assertEqual(self.one("select private_count(x, ?) from t", (TINY,)), 2)

    def test_named_and_numbered(self):
        self.assertEqual(self.one("select private_count(:alpha) from t", {"alpha": TINY}), 3)
        self.assertEqual(self.one("select private_count(?1), private_count(x, ?1) from t", (TINY,)), 3)

    def test_empty_input(self):
        self.assertEqual(self.one("select private_count(?) from t where 0", (TINY,)), 0)
        self.assertEqual(self.one("select private_count(x, ?) from t where 0", (TINY,)), 0)
        self.assertEqual(self.one("select private_count(:alpha) from t where 0", {"alpha": TINY}), 0)
        self.assertIs(type(self.one("select private_count(?) from t where 0", (0.5,))), int)
        self.assertIs(type(self.one("select private_count(?) from t where 0", (1 / 3,))), int)

    def test_same_statement_reused_with_other_values(self):
        sql = "select private_count(?) from t where x > ?"
        self.assertEqual(self.one(sql, (TINY, 0)), 2)
        self.assertEqual(self.one(sql, (TINY, 100)), 0)
        self.assertError(sql, "private_count: alpha must be in (0, 1), but is 2", (2, 100))
        self.assertEqual(self.one(sql, (TINY, 1)), 1)


class TestBoundParameterFidelity(OptdpTestCase):
    """On empty input alpha is read from the statement text with its bound
    parameters expanded; the value used must be exactly the value bound."""

    def setUp(self):
        super().setUp()
        self.db.execute("create table t(x)")
        self.db.execute("insert into t values (1)")

    def test_alpha_just_below_one_fails_closed_on_every_path(self):
        # SQLite expands bound REALs with 15 significant digits, so 1 - 2^-53
        # reads back as 1: an error with rows and without, never a silently
        # different alpha (finding 2 of the audit: it used to fail only
        # without rows).
        a = math.nextafter(1.0, 0.0)
        for where in ("", " where 0"):
            self.assertError("select private_count(?) from t" + where,
                             "private_count: alpha must be in (0, 1), but is 1.0", (a,))

    def test_bound_alpha_too_close_to_one_to_read_back_is_refused_on_every_path(self):
        # 0.9999999999999994 reads back as 0.999999999999999: 1.8x its epsilon.
        for where in ("", " where 0"):
            with self.assertRaisesRegex(sqlite3.OperationalError, "alpha was bound as a REAL"):
                self.one("select private_count(?) from t" + where, (0.9999999999999994,))
        # Written in the SQL text it is exact.
        self.assertIs(type(self.one("select private_count(0.9999999999999994) from t where 0")), int)

    def test_bound_value_used_is_the_value_read_back_on_both_paths(self):
        # A bound alpha with 17 significant digits: both paths use the same
        # 15-digit value, charged as such (ledger tests check the charge).
        a = 0.36787944117144233
        for where in ("", " where 0"):
            self.assertIs(type(self.one("select private_count(?) from t" + where, (a,))), int)

    def test_fifteen_digit_alpha_is_exact_on_empty_input(self):
        self.db.execute("select dp_seed(3)")
        a = 0.123456789012345
        self.assertIs(type(self.one("select private_count(?) from t where 0", (a,))), int)

    def test_infinite_parameter_on_empty_input_is_an_error(self):
        for value in (math.inf, -math.inf):
            with self.assertRaises(sqlite3.OperationalError):
                self.one("select private_count(?) from t where 0", (value,))


class TestSeed(OptdpTestCase):
    GROUPS = "select g, private_count(0.5) from t group by g order by g"

    def setUp(self):
        super().setUp()
        self.db.execute("create table t(g, v)")
        self.db.executemany("insert into t values (?, ?)", [(i % 50, i) for i in range(1000)])

    def run_sequence(self, db, seed):
        self.assertEqual(db.execute("select dp_seed(?)", (seed,)).fetchone()[0], "seeded")
        a = db.execute(self.GROUPS).fetchall()
        b = db.execute("select g, private_count(v, 0.25) from t group by g order by g").fetchall()
        c = db.execute("select private_count(0.5) from t where 0").fetchone()
        return a, b, c

    def test_returns_and_rng(self):
        self.assertEqual(self.one("select dp_seed(42)"), "seeded")
        self.assertEqual(self.one("select dp_rng()"), "seeded")
        self.assertEqual(self.one("select dp_seed(NULL)"), "os")
        self.assertEqual(self.one("select dp_rng()"), "os")
        for n in (0, -1, 2 ** 63 - 1, -2 ** 63):
            self.assertEqual(self.one("select dp_seed(?)", (n,)), "seeded")

    def test_same_seed_same_noise(self):
        first = self.run_sequence(self.db, 42)
        self.assertEqual(self.run_sequence(self.db, 42), first)
        self.assertTrue(any(c != 20 for g, c in first[0]), "noise should not be all zero")

    def test_same_seed_same_noise_across_connections(self):
        other = connect()
        self.assertEqual(other.execute("select dp_rng()").fetchone()[0], "os")
        other.executescript("create table t(g, v);")
        other.executemany("insert into t values (?, ?)", [(i % 50, i) for i in range(1000)])
        self.assertEqual(self.run_sequence(other, 7), self.run_sequence(self.db, 7))
        other.close()

    def test_other_seed_other_noise(self):
        self.assertNotEqual(self.run_sequence(self.db, 42)[0], self.run_sequence(self.db, 43)[0])

    def test_seed_is_per_connection(self):
        other = connect()
        self.db.execute("select dp_seed(1)")
        self.assertEqual(other.execute("select dp_rng()").fetchone()[0], "os")
        other.execute("select dp_seed(2)")
        self.db.execute("select dp_seed(NULL)")
        self.assertEqual(other.execute("select dp_rng()").fetchone()[0], "seeded")
        self.assertEqual(self.one("select dp_rng()"), "os")
        other.close()

    def test_back_to_os_and_reseed(self):
        first = self.run_sequence(self.db, 42)
        self.db.execute("select dp_seed(NULL)")
        self.db.execute(self.GROUPS).fetchall()
        self.assertEqual(self.run_sequence(self.db, 42), first)

    def test_refuses_non_integers(self):
        for value, shown in [(1.5, "1.5"), (1.0, "1.0"), ("1", "text '1'"), ("abc", "text 'abc'"),
                             (b"abc", "a blob of 3 bytes")]:
            self.assertError("select dp_seed(?)", "dp_seed: seed must be an integer or NULL, but is " + shown, (value,))
        self.assertEqual(self.one("select dp_rng()"), "os")  # a failed dp_seed changes nothing

    def test_direct_only_view(self):
        self.db.execute("create view seed_view as select dp_seed(1) s")
        self.assertError("select * from seed_view", "unsafe use of dp_seed()")
        self.assertEqual(self.one("select dp_rng()"), "os")

    def test_direct_only_trigger(self):
        self.db.execute("create table log(x)")
        self.db.execute("create trigger seed_trigger after insert on log begin select dp_seed(2); end")
        self.assertError("insert into log values (1)", "unsafe use of dp_seed()")
        self.assertEqual(self.one("select dp_rng()"), "os")
        self.assertEqual(self.one("select count(*) from log"), 0)

    def test_other_functions_allowed_in_views_and_triggers(self):
        self.db.execute("create view ok_view as select dp_rng() r, dp_alpha(1) a, dp_version() v")
        self.assertEqual(self.db.execute("select r, v from ok_view").fetchone(), ("os", "0.1.0"))
        self.db.execute("create table log(x)")
        self.db.execute("create table out(c)")
        self.db.execute("create trigger count_trigger after insert on log begin "
                        "insert into out select private_count(1e-300) from t; end")
        # The randomised aggregates are DIRECTONLY: not in triggers or views.
        self.assertError("insert into log values (1)", "unsafe use of private_count()")


class TestFunctionFlags(OptdpTestCase):
    def test_deterministic_functions_in_schema(self):
        self.db.execute("create table g(eps real, a real as (dp_alpha(eps)), e real as (dp_epsilon(0.5)), "
                        "ver as (dp_version()))")
        self.db.execute("create index g_alpha on g(dp_alpha(eps))")
        self.db.execute("insert into g(eps) values (1.0)")
        self.assertEqual(self.db.execute("select a, e, ver from g").fetchone(),
                         (self.one("select dp_alpha(1.0)"), self.one("select dp_epsilon(0.5)"), "0.1.0"))

    def test_random_functions_not_deterministic(self):
        self.db.execute("create table g(x)")
        self.assertError("create index bad on g(dp_rng())", "non-deterministic functions prohibited in index expressions")
        self.assertError("create table bad(x, y as (dp_rng()))",
                         "non-deterministic functions prohibited in generated columns")


class TestRounding(OptdpTestCase):
    """dp_alpha rounds e^-eps up, dp_epsilon rounds -ln(alpha) up, both to the
    nearest double in that direction (checked against 60-digit decimals)."""

    def test_dp_alpha_rounds_up_exactly(self):
        rnd = random.Random(1)
        eps_values = [rnd.uniform(1e-15, 744) for _ in range(300)] + [10 ** rnd.uniform(-15, 2.87) for _ in range(300)]
        for eps in eps_values:
            a = self.one("select dp_alpha(?)", (eps,))
            exact = exact_exp_neg(eps)
            self.assertTrue(Decimal(a) >= exact and Decimal(math.nextafter(a, 0.0)) < exact,
                            "dp_alpha(%r) = %r, e^-eps = %s" % (eps, a, exact))

    def test_dp_epsilon_rounds_up_exactly(self):
        rnd = random.Random(2)
        alphas = [rnd.random() or 0.5 for _ in range(300)] + [10 ** rnd.uniform(-15, 0) for _ in range(300)]
        for a in alphas:
            if not 0 < a < 1:
                continue
            e = self.one("select dp_epsilon(?)", (a,))
            exact = exact_neg_ln(a)
            self.assertTrue(Decimal(e) >= exact and Decimal(math.nextafter(e, 0.0)) < exact,
                            "dp_epsilon(%r) = %r, -ln(alpha) = %s" % (a, e, exact))


class TestDpAlphaHugeEps(OptdpTestCase):
    """sql/reference.md: a very large eps gives the least positive double (4.94e-324), not 0."""

    def test_dp_alpha_huge_eps_gives_least_positive_double(self):
        for eps in (745.0, 5000.0, 20000.0, 1e308):
            self.assertEqual(self.one("select dp_alpha(?)", (eps,)), 5e-324, "eps = %r" % eps)
        self.assertEqual(self.one("select private_count(?) from (select 1 union all select 2)",
                                  (self.one("select dp_alpha(1e308)"),)), 2)


class TestDpEpsilonTinyAlpha(OptdpTestCase):
    """dp_epsilon(alpha) is -ln(alpha) rounded up for every alpha in (0, 1), tiny ones included."""

    def test_dp_epsilon_tiny_alpha(self):
        rnd = random.Random(3)
        alphas = [1e-21, 1e-30, 1e-40, 1e-300, 2.2250738585072014e-308, 5e-324] + \
                 [10 ** rnd.uniform(-307, -15) for _ in range(200)]
        for a in alphas:
            e = self.one("select dp_epsilon(?)", (a,))
            self.assertEqual(e, up(exact_neg_ln(a)), "dp_epsilon(%r)" % a)


class TestStatistics(OptdpTestCase):
    """One light, seeded (hence deterministic) check of the noise distribution:
    P[Z = z] = (1 - a)/(1 + a) a^|z|; for a = 0.5: E = 0, Var = 2a/(1-a)^2 = 4,
    E[Z^4] = 100, P[Z = 0] = 1/3, P[Z > 0] = P[Z < 0] = 1/3. Bounds: 5 standard errors."""

    N = 2000
    ROWS = 10

    def check(self, values):
        n = len(values)
        self.assertEqual(n, self.N)
        mean = sum(values) / n
        var = sum((v - mean) ** 2 for v in values) / (n - 1)
        self.assertLess(abs(mean - self.ROWS), 5 * math.sqrt(4 / n), "mean %r" % mean)
        self.assertLess(abs(var - 4), 5 * math.sqrt((100 - 16) / n), "variance %r" % var)
        zeros = sum(v == self.ROWS for v in values)
        self.assertLess(abs(zeros - n / 3), 5 * math.sqrt(n * (1 / 3) * (2 / 3)), "zeros %d" % zeros)
        pos = sum(v > self.ROWS for v in values)
        neg = sum(v < self.ROWS for v in values)
        self.assertLess(abs(pos - neg), 5 * math.sqrt(n * 2 / 3), "positive %d, negative %d" % (pos, neg))

    def test_private_count_half(self):
        self.db.execute("create table t(g, v)")
        self.db.executemany("insert into t values (?, ?)", [(g, 1) for g in range(self.N) for _ in range(self.ROWS)])
        self.db.execute("select dp_seed(2024)")
        self.check([r[0] for r in self.db.execute("select private_count(0.5) from t group by g")])

    def test_private_count_half_two_argument_form(self):
        # Half of the rows have x NULL: the count is still ROWS.
        self.db.execute("create table t(g, x)")
        self.db.executemany("insert into t values (?, ?)",
                            [(g, v) for g in range(self.N) for v in [1] * self.ROWS + [None] * self.ROWS])
        self.db.execute("select dp_seed(2025)")
        self.check([r[0] for r in self.db.execute("select private_count(x, 0.5) from t group by g")])


class TestFunctionListSnapshot(unittest.TestCase):
    """The functions optdp registers, with their flags, against function_list.expected."""

    FLAG_NAMES = [(0x000800, "DETERMINISTIC"), (0x080000, "DIRECTONLY"), (0x100000, "SUBTYPE"),
                  (0x200000, "INNOCUOUS")]

    @classmethod
    def describe_flags(cls, flags):
        names = [name for bit, name in cls.FLAG_NAMES if flags & bit]
        rest = flags & ~sum(bit for bit, _ in cls.FLAG_NAMES)
        if rest:
            names.append(hex(rest))
        return ",".join(names) or "-"

    @staticmethod
    def function_rows(db):
        return set(db.execute("select name, narg, type, flags from pragma_function_list").fetchall())

    @staticmethod
    def module_rows(db):
        return set(r[0] for r in db.execute("select name from pragma_module_list").fetchall())

    def current(self):
        plain, loaded = connect(load=False), connect()
        try:
            added = sorted(self.function_rows(loaded) - self.function_rows(plain))
            removed = sorted(self.function_rows(plain) - self.function_rows(loaded))
            modules = sorted(self.module_rows(loaded) - self.module_rows(plain))
        finally:
            plain.close()
            loaded.close()
        self.assertEqual(removed, [], "loading optdp changed built-in functions")
        return (["%s|%d|%s|%d|%s" % (name, narg, typ, flags, self.describe_flags(flags))
                 for name, narg, typ, flags in added] +
                ["table-valued function|%s" % name for name in modules])

    def test_snapshot(self):
        lines = self.current()
        header = ["# Functions optdp registers: name|narg|type|flags|decoded flags, from",
                  "#   SELECT name, narg, type, flags FROM pragma_function_list",
                  "# with the module loaded minus without (type: s scalar, a aggregate, w window),",
                  "# then the table-valued functions (virtual table modules) from pragma_module_list.",
                  "# Regenerate: OPTDP_UPDATE_SNAPSHOT=1 /usr/bin/python3 tests/python/test_optdp.py \\",
                  "#   --module build/optdp.so TestFunctionListSnapshot  (then review the diff)"]
        if UPDATE_SNAPSHOT:
            with open(SNAPSHOT, "w", encoding="utf-8") as f:
                f.write("\n".join(header + lines) + "\n")
            return
        with open(SNAPSHOT, encoding="utf-8") as f:
            expected = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
        if lines != expected:
            diff = "\n".join(difflib.unified_diff(expected, lines, "function_list.expected", "current build",
                                                  lineterm=""))
            self.fail("the registered functions differ from the snapshot (- snapshot, + current build):\n" + diff +
                      "\nIf the change is intended, regenerate with OPTDP_UPDATE_SNAPSHOT=1 and review the diff.")


def main(argv):
    def update_snapshot():
        global UPDATE_SNAPSHOT
        UPDATE_SNAPSHOT = True
    return optdp_testlib.main(__name__, argv, {"--update-snapshot": update_snapshot})


if __name__ == "__main__":
    sys.exit(main(sys.argv))
