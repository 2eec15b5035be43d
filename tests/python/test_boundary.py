#!/usr/bin/python3
"""The privacy boundary: nothing but the noisy value may depend on the rows.

    /usr/bin/python3 tests/python/test_boundary.py --module build/optdp.so [unittest args]

One test class per finding of the audit of main at 2791f14 (the issue "A sound
privacy boundary"); each failed there. The randomised aggregates read their
parameters from the statement's text, identically with rows and without
(extension/sqlite/params.hpp), never evaluate SQL to do so, and are DIRECTONLY.
"""
import math
import os
import sqlite3
import sys
import tempfile

from optdp_testlib import OptdpTestCase, connect, main

# Every randomised aggregate form, with {} for its parameters and a valid value.
FORMS = [
    ("private_count({})", "0.5"),
    ("private_count(x, {})", "0.5"),
    ("staircase_sum(x, {})", "1, 10"),
    ("staircase_sum(x, {})", "1, 0, 10"),
    ("staircase_sum(x, {})", "1, 0, 10, 'l2'"),
    ("laplace_sum(x, {})", "1, 10"),
    ("laplace_sum(x, {})", "1, 0, 10"),
    ("private_count_levels({})", "0.5, 0.9"),
    ("private_count_levels_of(x, {})", "0.5, 0.9"),
]

# Parameter texts that are errors or tricky, for every form (first parameter
# replaced; the rest kept).
BAD_FIRST = ["1.5", "0", "-1", "NULL", "'0.5'", "x'00'", "1e999", "x", "x + 0", "(SELECT 0.5)", "abs(0.5)",
             "0.9999999999999999", "CASE WHEN x THEN 0.5 END", "?", "random()"]


class Patients(OptdpTestCase):
    """A table with a secret: whether one person's row matches a filter."""

    def setUp(self):
        super().setUp()
        self.db.execute("CREATE TABLE patients(id INTEGER PRIMARY KEY, name TEXT, x, hiv INTEGER)")
        self.db.executemany("INSERT INTO patients VALUES (?, ?, ?, ?)",
                            [(i, "p%d" % i, i % 7, i % 2) for i in range(60)])

    def outcome(self, sql, params=()):
        """('ok', type of the value) or ('error', message): what an analyst sees besides the noise."""
        try:
            rows = self.db.execute(sql, params).fetchall()
            return ("ok", tuple(tuple(type(v).__name__ for v in r) for r in rows))
        except sqlite3.Error as e:
            return ("error", str(e))

    def assertPathsAgree(self, select, params=()):
        """The same outcome when the WHERE matches one row and when it matches none."""
        with_row = self.outcome(select + " FROM patients WHERE id = 7", params)
        without = self.outcome(select + " FROM patients WHERE id = -7", params)
        self.assertEqual(with_row, without, select)
        return with_row


class Finding1NoSqlIsEvaluated(Patients):
    """Parameters are read, never run: no view, trigger or argument text is executed."""

    def setUp(self):
        super().setUp()
        self.calls = []
        self.db.create_function("side_effect", 0, lambda: self.calls.append(1) or 0.5)

    def test_argument_text_is_never_run_on_empty_input(self):
        for form in ["private_count((SELECT side_effect()))", "private_count(side_effect())",
                     "staircase_sum(x, side_effect(), 0, 1)", "private_count_levels(side_effect())"]:
            self.assertEqual(self.outcome("SELECT %s FROM patients WHERE 0" % form)[0], "error")
        self.assertEqual(self.calls, [])

    def test_views_and_triggers_are_never_read_or_run(self):
        self.db.execute("CREATE TEMP VIEW spy AS SELECT private_count((SELECT side_effect())) AS c")
        self.db.execute("CREATE VIEW spy2 AS SELECT staircase_sum(1, side_effect(), 0, 1)")
        self.db.execute("CREATE TABLE log(v)")
        self.db.execute("CREATE TRIGGER tr AFTER INSERT ON log BEGIN SELECT private_count(side_effect()); END")
        for _ in range(3):
            self.assertIs(type(self.one("SELECT private_count(0.5) FROM patients WHERE 0")), int)
            self.assertIs(type(self.one("SELECT staircase_sum(x, 1, 0, 1) FROM patients WHERE 0")), float)
        self.assertEqual(self.calls, [])
        # Views and triggers of a schema cannot run the aggregates (DIRECTONLY).
        self.assertError("SELECT * FROM spy2", "unsafe use of staircase_sum()")
        self.assertError("INSERT INTO log VALUES (1)", "unsafe use of private_count()")
        # SQLite lets TEMP views use DIRECTONLY functions (the connection's own
        # objects), but their calls are not in the running statement's text:
        # refused, rows or none.
        self.assertError("SELECT * FROM spy", "private_count: its parameters cannot be read: no call with 1 "
                                              "argument is in the text of a running statement")

    def test_untrusted_attached_view_cannot_seed_or_charge(self):
        with tempfile.TemporaryDirectory() as tmp:
            other = os.path.join(tmp, "untrusted.db")
            evil = sqlite3.connect(other)
            evil.execute("CREATE VIEW v AS SELECT private_count((SELECT dp_seed(7))) AS c")
            evil.execute("CREATE VIEW w AS SELECT private_count((SELECT 0.5 FROM release_levels(0,0,'[0.999]')))")
            evil.commit()
            evil.close()
            ledger = os.path.join(tmp, "l.ledger")
            self.db.execute("PRAGMA trusted_schema=OFF")
            self.db.execute("ATTACH ? AS other", (other,))
            self.one("SELECT dp_ledger_attach(?, 10)", (ledger,))
            for _ in range(5):
                self.one("SELECT private_count(0.5) FROM patients WHERE 0")
            self.assertEqual(self.one("SELECT dp_rng()"), "os")
            self.assertEqual(self.one("SELECT count(*) FROM dp_ledger_entries"), 5)
            self.assertEqual({r[0] for r in self.all("SELECT function FROM dp_ledger_entries")}, {"private_count"})


class Finding2ErrorsDoNotDependOnRows(Patients):
    """Whether a release fails, and its message, are the same with and without matching rows."""

    def test_every_form_and_bad_parameter(self):
        for form, good in FORMS:
            self.assertEqual(self.assertPathsAgree("SELECT " + form.format(good))[0], "ok", form)
            rest = good.split(",")[1:]
            for bad in BAD_FIRST:
                params = ", ".join([bad] + rest)
                self.assertPathsAgree("SELECT " + form.format(params), (0.5,) if "?" in bad else ())

    def test_two_calls_with_different_parameters(self):
        for select in ["SELECT private_count(0.9999999999999999), private_count(0.9999999999999998)",
                       "SELECT private_count(0.5), private_count(0.25)",
                       "SELECT staircase_sum(x, 1, 0, 10), staircase_sum(x, 2, 0, 10)",
                       "SELECT private_count_levels(0.5, 0.9), private_count_levels(0.5, 0.8)"]:
            self.assertEqual(self.assertPathsAgree(select)[0], "error", select)

    def test_bound_reals_that_cannot_be_read_back(self):
        # 1 - 2^-53 is shown by SQLite as 1.0; 0.9999999999999994 as
        # 0.999999999999999 (1.8x its epsilon): errors on both paths.
        for value in (0.9999999999999999, 0.9999999999999994):
            out = self.assertPathsAgree("SELECT private_count(?)", (value,))
            self.assertEqual(out[0], "error")
        for value in (0.5, 0.36787944117144233, 1e-300, 0.999999):
            self.assertEqual(self.assertPathsAgree("SELECT private_count(?)", (value,))[0], "ok")

    def test_a_later_call_fails_before_an_earlier_one_is_charged(self):
        # With no rows the first aggregate's final step would run (and be
        # charged) before the second one's error; with rows the second one's
        # first step fails first. Every call is checked before any release.
        with tempfile.TemporaryDirectory() as tmp:
            self.one("SELECT dp_ledger_attach(?, 100)", (os.path.join(tmp, "l.ledger"),))
            for select in ["SELECT private_count(0.5), private_count(x, 1.5)",
                           "SELECT private_count(0.5), staircase_sum(x, 1, 10, 0)",
                           "SELECT (SELECT private_count(0.5) FROM patients WHERE id = -1), private_count(x, 'a')",
                           "SELECT private_count(0.5), private_count_levels(0.9, 0.5)"]:
                before = self.one("SELECT count(*) FROM dp_ledger_entries")
                out = self.assertPathsAgree(select)
                self.assertEqual(out[0], "error", select)
                self.assertEqual(self.one("SELECT count(*) FROM dp_ledger_entries"), before, select)

    def test_functions_in_parameters_are_refused_on_every_path(self):
        # No function is accepted as a parameter, not even dp_alpha(1.0).
        # (An argument that SQLite itself fails to evaluate, such as
        # dp_alpha(0), fails in SQLite only when a row is read, with SQLite's
        # message: like any failing expression of the query, that is outside
        # what optdp can see; see docs/boundary.md.)
        for select in ["SELECT private_count(dp_alpha(1.0))", "SELECT staircase_sum(x, abs(-1), 0, 10)"]:
            out = self.assertPathsAgree(select)
            self.assertEqual(out[0], "error", select)
            self.assertIn("must be a literal or a bound parameter", out[1])

    def test_long_arguments_are_shortened_on_a_character_boundary(self):
        out = self.assertPathsAgree("SELECT private_count(CASE WHEN x THEN 0.5 ELSE '" + "é" * 40 + "' END)")
        self.assertEqual(out[0], "error")
        out[1].encode("utf-8")  # a str from sqlite3 is valid UTF-8 or it would not have decoded
        self.assertTrue(out[1].endswith("...'"), out[1])

    def test_secret_bits_are_not_read_from_errors(self):
        # The attack of the audit: one query per person, an error iff no row.
        select = "SELECT private_count(0.9999999999999999), private_count(0.9999999999999998) FROM patients " \
                 "WHERE name = ? AND hiv"
        outcomes = {self.outcome(select, ("p%d" % i,)) for i in range(60)}
        self.assertEqual(len(outcomes), 1, outcomes)


class Finding4OneFinalPerArity(Patients):
    def test_levels_of_each_call_on_empty_input(self):
        row = self.db.execute("SELECT private_count_levels(0.5, 0.9), private_count_levels(0.2) "
                              "FROM patients WHERE 0").fetchone()
        self.assertEqual([len(eval(v)) for v in row], [2, 1])
        row = self.db.execute("SELECT private_count_levels_of(x, 0.5, 0.9, 0.95), private_count_levels_of(x, 0.2) "
                              "FROM patients WHERE 0").fetchone()
        self.assertEqual([len(eval(v)) for v in row], [3, 1])

    def test_unrelated_view_does_not_change_the_levels(self):
        self.db.execute("CREATE TEMP VIEW other AS SELECT private_count_levels(0.000001) FROM patients")
        with tempfile.TemporaryDirectory() as tmp:
            self.one("SELECT dp_ledger_attach(?, 10)", (os.path.join(tmp, "l.ledger"),))
            v = self.one("SELECT private_count_levels(0.5, 0.9) FROM patients WHERE 0")
            self.assertEqual(len(eval(v)), 2)
            self.assertAlmostEqual(self.one("SELECT epsilon FROM dp_ledger_entries"), math.log(2), places=12)


class Finding6MessagesNeverQuoteData(Patients):
    """x of any type is read like sum() reads it: no error, so no message, can quote a row."""

    def test_text_and_blob_values_of_x(self):
        self.db.execute("CREATE TABLE mixed(x)")
        self.db.executemany("INSERT INTO mixed VALUES (?)", [("p6",), (b"\x01\x02",), ("12",), (3.5,), (None,)])
        for form, good in FORMS:
            if "x" not in form:
                continue
            sql = "SELECT %s FROM mixed" % form.format(good)
            self.assertEqual(self.outcome(sql)[0], "ok", sql)
        self.assertEqual(self.outcome("SELECT staircase_sum(name, 1, 0, 1) FROM patients WHERE id = 7")[0], "ok")

    def test_text_is_summed_as_sum_reads_it(self):
        self.db.execute("CREATE TABLE mixed(x)")
        self.db.executemany("INSERT INTO mixed VALUES (?)", [("p6",), ("12",), (3.5,)])
        # eps = 60 on [0, 20]: the staircase noise is below 1e-6 (a few grid steps at most).
        self.assertAlmostEqual(self.one("SELECT staircase_sum(x, 60, 0, 20) FROM mixed"),
                               self.one("SELECT sum(x) FROM mixed"), places=6)


class ScalarMessagesNeverQuoteARow(OptdpTestCase):
    """A scalar function's argument can be a column: its message shows a value
    only when every argument is a bound parameter (SQLite does not tell a
    literal from a column)."""

    def test_a_column_value_is_not_shown(self):
        self.db.execute("CREATE TABLE patients(income, name)")
        self.db.execute("INSERT INTO patients VALUES (78742.5, 'Ada Lovelace')")
        for sql in ("SELECT dp_alpha(-income) FROM patients",
                    "SELECT dp_epsilon(income) FROM patients",
                    "SELECT dp_seed(name) FROM patients",
                    "SELECT staircase_gamma(-income, 'l1') FROM patients",
                    "SELECT staircase_gamma(1, name) FROM patients",
                    "SELECT noise_cost(name, 1, 1, 'l1') FROM patients",
                    "SELECT noise_cost('laplace', 1, -income, 'l1') FROM patients",
                    "SELECT dp_sum_grid(1, income, 0) FROM patients",
                    "SELECT remap_count(income, 3, 0.5, 'absolute', 'uniform') FROM patients",
                    "SELECT optimal_loss(income, 0.5, 'absolute', 'uniform') FROM patients",
                    "SELECT minimax_loss(4, 0.5, 'absolute', 1, income) FROM patients",
                    "SELECT dp_derivable(name, 0.5) FROM patients",
                    "SELECT dp_ledger_attach('/nonexistent/' || name, 1.0) FROM patients"):
            msg = self.error_of(sql)
            for shown in ("78742", "Ada", "Lovelace"):
                self.assertNotIn(shown, msg, sql)

    def test_a_bound_value_is_shown(self):
        self.assertError("SELECT dp_alpha(?)", "dp_alpha: eps must be a finite number > 0, but is -78742.5",
                         (-78742.5,))
        self.assertError("SELECT dp_alpha(-78742.5)",
                         "dp_alpha: eps must be a finite number > 0, but is a value not shown (it may be a row's)")


class Finding7LedgerCannotBeShed(OptdpTestCase):
    def test_no_extension_can_be_loaded_after_attach(self):
        # A copy of optdp under another path has its own (ledger-less) state.
        # The audit loaded one as the shell's .load does (sqlite3_load_extension,
        # outside any statement); SQL's load_extension() is covered too.
        with tempfile.TemporaryDirectory() as tmp:
            os.mkdir(os.path.join(tmp, "copy"))
            copy = os.path.join(tmp, "copy", "optdp.so")  # entry point sqlite3_optdp_init
            with open(sys.modules["optdp_testlib"].module_path(), "rb") as src, open(copy, "wb") as dst:
                dst.write(src.read())
            db = sqlite3.connect(":memory:", isolation_level=None)
            db.enable_load_extension(True)
            db.load_extension(sys.modules["optdp_testlib"].module_path())
            db.execute("SELECT dp_ledger_attach(?, 10)", (os.path.join(tmp, "l.ledger"),))
            with self.assertRaisesRegex(sqlite3.Error, "not authorized"):
                db.load_extension(copy)
            with self.assertRaisesRegex(sqlite3.Error, "not authorized"):
                db.execute("SELECT load_extension(?, 'sqlite3_optdp_init')", (copy,)).fetchall()
            db.execute("SELECT private_count(0.5)").fetchall()
            self.assertEqual(db.execute("SELECT count(*) FROM dp_ledger_entries").fetchone()[0], 1)
            with self.assertRaises(sqlite3.Error):
                db.execute("SELECT dp_seed(1)").fetchall()
            db.close()

    def test_an_attached_ledger_file_is_found_whatever_the_views(self):
        # dp_ledger_attach refuses a ledger file the session has attached as a
        # database (it could rewrite it); a TEMP view named
        # pragma_database_list must not hide it (no SQL is run to look).
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "l.ledger")
            other = connect()
            other.execute("SELECT dp_ledger_attach(?, 10)", (path,))
            other.close()
            self.db.execute("ATTACH ? AS led", (path,))
            self.db.execute("CREATE TEMP VIEW pragma_database_list AS SELECT 'main' AS name, '' AS file")
            with self.assertRaisesRegex(sqlite3.Error, "the ledger file is open on this connection as database 'led'"):
                self.db.execute("SELECT dp_ledger_attach(?, 10)", (path,)).fetchall()

    def test_shadowing_the_ledger_table_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.one("SELECT dp_ledger_attach(?, 10)", (os.path.join(tmp, "l.ledger"),))
            self.one("SELECT private_count(0.5)")
            self.db.execute("CREATE TEMP VIEW dp_ledger_entries AS SELECT 1 AS id WHERE 0")
            for sql in ["SELECT private_count(0.5)", "SELECT dp_budget_spent()", "SELECT dp_budget_remaining()"]:
                with self.assertRaisesRegex(sqlite3.Error, "dp_ledger_entries"):
                    self.db.execute(sql).fetchall()
            # The call form cannot be answered by a view: SQLite refuses to call one.
            with self.assertRaisesRegex(sqlite3.Error, "'dp_ledger_entries' is not a function"):
                self.db.execute("SELECT count(*) FROM dp_ledger_entries()").fetchall()
            self.db.execute("DROP VIEW temp.dp_ledger_entries")
            self.assertEqual(self.one("SELECT count(*) FROM dp_ledger_entries()"), 1)
            self.db.execute("CREATE TABLE dp_ledger_entries(id)")  # a table in main shadows too
            with self.assertRaisesRegex(sqlite3.Error, "hides the ledger's own table"):
                self.db.execute("SELECT private_count(0.5)").fetchall()
            with self.assertRaisesRegex(sqlite3.Error, "'dp_ledger_entries' is not a function"):
                self.db.execute("SELECT count(*) FROM dp_ledger_entries()").fetchall()


if __name__ == "__main__":
    sys.exit(main(__name__, sys.argv))
