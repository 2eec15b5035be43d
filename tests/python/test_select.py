#!/usr/bin/python3
"""private_select and selection_probabilities through Python's sqlite3 module:
messages, the empty candidate set, the ledger, candidate types, GROUP BY.

    /usr/bin/python3 tests/python/test_select.py --module build/optdp.so [unittest args]

The statistical checks (frequencies against selection_probabilities, the
empirical epsilon on neighbouring databases) are C++ tests with Boost.Math
p-values: tests/sqlite/select_stat_test.cpp and tests/sqlite/audit_test.cpp;
the core's laws and samplers are tested in tests/core/selection_test.cpp.
"""
import json
import math
import os
import sys
import tempfile
import unittest

import optdp_testlib as lib

SCORES = "CREATE TABLE c(k, score); INSERT INTO c VALUES ('a', 1), ('b', 5), ('c', 3), ('d', 5), ('e', 0);"


class TestSelectErrors(lib.OptdpTestCase):
    def setUp(self):
        super().setUp()
        self.db.executescript(SCORES + "CREATE TABLE empty(k, score);")

    def both(self, call, message):
        """The same message whether candidates are given or not."""
        self.assertErrorWithAndWithoutRows(call, message, ("c", "empty"))

    def test_eps(self):
        self.both("private_select(k, score, 0)", "private_select: eps must be a finite number > 0, but is 0")
        self.both("private_select(k, score, -1.5)", "private_select: eps must be a finite number > 0, but is -1.5")
        self.both("private_select(k, score, NULL)", "private_select: eps must be a number, but is NULL")
        self.both("private_select(k, score, 'x')", "private_select: eps must be a number, but is text 'x'")

    def test_sensitivity(self):
        self.both("private_select(k, score, 1, 0)", "private_select: sensitivity must be a finite number > 0, but is 0")
        self.both("private_select(k, score, 1, 1e999)",
                  "private_select: sensitivity must be a finite number > 0, but is inf")

    def test_method(self):
        self.both("private_select(k, score, 1, 1, 'gumbel')",
                  "private_select: method must be 'exponential' or 'permute_and_flip', but is 'gumbel'")
        self.both("private_select(k, score, 1, 1, 2)",
                  "private_select: method must be text ('exponential' or 'permute_and_flip'), but is 2")

    def test_parameters_are_literals(self):
        self.both("private_select(k, score, score)",
                  "private_select: eps must be a literal or a bound parameter (optdp fixes the noise before it "
                  "reads any row), but is the expression 'score'")

    def test_arity(self):
        for call in ("private_select(k, score)", "private_select(k, score, 1, 1, 'exponential', 0)"):
            self.assertIn("wrong number of arguments", self.error_of("SELECT %s FROM c" % call))


class TestSelectValues(lib.OptdpTestCase):
    def setUp(self):
        super().setUp()
        self.db.executescript(SCORES)

    def test_returns_a_candidate_of_any_type(self):
        self.db.execute("SELECT dp_seed(1)")
        self.assertIn(self.one("SELECT private_select(k, score, 1.0) FROM c"), "abcde")
        for value in (7, 2.5, b"\x01\x02", "text"):
            got = self.one("SELECT private_select(v, 1, 1.0) FROM (SELECT ? AS v)", (value,))
            self.assertEqual(got, value)
            self.assertEqual(type(got), type(value))

    def test_no_candidates_is_null(self):
        self.assertIsNone(self.one("SELECT private_select(k, score, 1.0) FROM c WHERE 0"))

    def test_a_best_candidate_far_ahead_always_wins(self):
        # At eps 100 every other candidate's coin is below e^-100.
        for method in ("exponential", "permute_and_flip"):
            for _ in range(50):
                self.assertEqual(self.one("SELECT private_select(k, score * 10, 100, 1, ?) FROM c WHERE k IN ('a', 'b', 'c')",
                                          (method,)), "b")

    def test_scores_never_fail(self):
        # NULL, text, NaN and infinite scores are read as sum() reads them; no row causes an error.
        self.db.execute("CREATE TABLE odd(k, score)")
        self.db.executemany("INSERT INTO odd VALUES (?, ?)",
                            [(1, None), (2, "abc"), (3, "12"), (4, 1e308 * 10), (5, -1e308 * 10), (6, b"x")])
        for method in ("exponential", "permute_and_flip"):
            self.assertIn(self.one("SELECT private_select(k, score, 1, 1, ?) FROM odd", (method,)), range(1, 7))

    def test_group_by_selects_once_per_group(self):
        self.db.execute("CREATE TABLE g(grp, k, score)")
        self.db.executemany("INSERT INTO g VALUES (?, ?, ?)", [(g, k, k) for g in range(20) for k in range(5)])
        rows = self.all("SELECT grp, private_select(k, score, 1.0) FROM g GROUP BY grp")
        self.assertEqual(len(rows), 20)
        self.assertTrue(all(0 <= k < 5 for _, k in rows))

    def test_bound_parameters(self):
        self.assertIn(self.one("SELECT private_select(k, score, ?, ?, ?) FROM c", (1.0, 2, "exponential")), "abcde")


class TestSelectLedger(lib.OptdpTestCase):
    def test_one_charge_per_release_with_or_without_candidates(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.db.executescript(SCORES)
            self.db.execute("SELECT dp_ledger_attach(?, 10)", (os.path.join(tmp, "l.ledger"),))
            self.one("SELECT private_select(k, score, 0.5) FROM c")
            self.one("SELECT private_select(k, score, 0.25, 1, 'exponential') FROM c WHERE 0")
            entries = self.all("SELECT function, epsilon FROM dp_ledger_entries() ORDER BY id")
            self.assertEqual(entries, [("private_select", 0.5), ("private_select", 0.25)])
            self.assertAlmostEqual(self.one("SELECT dp_budget_spent()"), 0.75)


class TestSelectionProbabilities(lib.OptdpTestCase):
    def test_reference_example(self):
        rows = self.all("SELECT candidate, score, probability FROM selection_probabilities('[1, 5, 3, 5, 0]', 1, 1, "
                        "'exponential') ORDER BY candidate")
        p = [math.exp(-2), 1, math.exp(-1), 1, math.exp(-2.5)]
        for (r, score, prob), want, s in zip(rows, p, [1, 5, 3, 5, 0]):
            self.assertAlmostEqual(prob, want / sum(p), places=14)
            self.assertEqual(score, s)
        self.assertEqual([r for r, _, _ in rows], list(range(5)))

    def test_defaults_and_permute_and_flip_is_never_worse(self):
        scores = [1, 5, 3, 5, 0, 4.5, -2]
        pf = self.all("SELECT probability FROM selection_probabilities(?, 1.0)", (json.dumps(scores),))
        em = self.all("SELECT probability FROM selection_probabilities(?, 1.0, 1, 'exponential')", (json.dumps(scores),))
        self.assertAlmostEqual(sum(p for (p,) in pf), 1.0, places=12)
        e_pf = sum(p * s for (p,), s in zip(pf, scores))
        e_em = sum(p * s for (p,), s in zip(em, scores))
        self.assertGreaterEqual(e_pf, e_em)

    def test_errors(self):
        self.assertError("SELECT * FROM selection_probabilities('[]', 1)",
                         "selection_probabilities: scores must hold at least one score, but is []")
        self.assertError("SELECT * FROM selection_probabilities('[1, 2]', 0)",
                         "selection_probabilities: eps must be a finite number > 0, but is 0")
        self.assertError("SELECT * FROM selection_probabilities('[1, 2]', 1, 1, 'x')",
                         "selection_probabilities: method must be 'exponential' or 'permute_and_flip', but is 'x'")
        self.assertIn("scores must be a JSON array of numbers",
                      self.error_of("SELECT * FROM selection_probabilities('[1, \"a\"]', 1)"))
        self.assertIn("scores", self.error_of("SELECT * FROM selection_probabilities(?, 1)",
                                              (json.dumps([0] * 10001),)))


if __name__ == "__main__":
    sys.exit(lib.main(__name__, sys.argv))
