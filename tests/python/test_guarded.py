#!/usr/bin/python3
"""The queries private_groups runs (rows_query, keys_query) cannot fail, release
or exhaust memory on the data's say-so (docs/boundary.md, "Queries optdp runs").

    /usr/bin/python3 tests/python/test_guarded.py --module build/optdp.so [unittest args]

On the sample database (sql/fixtures/hospital.sql) in a temporary file, and on
its neighbour without patient 17 where that matters:
- TestPreparedChecks: functions off the allow-list are refused when the query
  is prepared, naming the function, identically whether a row would reach
  them (a patient's income is never quoted; abs() overflowing exactly when a
  patient smokes is refused before any row); optdp's own functions and
  virtual tables (directly or through a view) cannot run inside; allowed
  queries (WHERE, CASE, subqueries, joins) still release.
- TestTempObjects: a TEMP view that would release once per matching private
  row does not exist on optdp's connection: refused, no ledger entry.
- TestMmapFollowsTheCaller: optdp's connection maps the file exactly when
  the caller's PRAGMA mmap_size does, following a change.
- TestChargeFirst: a release the ledger refuses reads no row (a database
  whose data pages are corrupt gives the ledger's message, not a read error);
  a charged release whose reading fails gives one fixed message and stays
  charged.
- TestHeapLimit: refused under a hard heap limit, with or without a matching row.
- TestAggregatesHeapLimit, TestAggregatesChargeFirst: the same for every
  randomised aggregate, and their charge comes with the first row.
- TestMemoryBound: one unit with 200,000 keys and max_rows=1000 releases
  within a 1 GiB address space (before, R slots per key: 1.6 GB).
"""
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest

import optdp_testlib as lib

FIXTURE = os.path.join(lib.HERE, "..", "..", "sql", "fixtures", "hospital.sql")
WARDS = "SELECT ward FROM wards"


def make_hospital(path, without=None):
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("pragma synchronous = off")
    with open(FIXTURE) as f:
        db.executescript(f.read())
    if without is not None:
        db.execute("delete from visits where patient_id = ?", (without,))
        db.execute("delete from patients where id = ?", (without,))
    db.close()


class HospitalCase(lib.OptdpTestCase):
    FILE = True

    def setUp(self):
        super().setUp()
        self.db.close()
        self.paths = {}
        for name, without in (("d", None), ("d17", 17)):
            self.paths[name] = os.path.join(self.db_dir, name + ".db")
            make_hospital(self.paths[name], without)
        self.db = lib.connect(path=self.paths["d"])
        self.ledger = os.path.join(self.db_dir, "budget.ledger")

    def on(self, name):
        db = lib.connect(path=self.paths[name])
        self.addCleanup(db.close)
        return db

    def groups(self, db, rows_query, options=None, keys_query=WARDS, eps=1.0):
        return lib.receive(db, "select * from private_groups(?, ?, ?, ?)", (rows_query, eps, options, keys_query))


class TestPreparedChecks(HospitalCase):
    def test_a_rows_value_is_never_quoted(self):
        # Before: "rows_query failed: dp_alpha: eps must be a finite number > 0, but is -78742.5"
        # (patient 17's income), uncharged, only when the row matched.
        q = "SELECT id, ward, dp_alpha(-income) FROM patients WHERE id = %d ORDER BY 1"
        outcomes = set()
        for pid in (17, 100000):
            got, err = self.groups(self.db, q % pid, "lower=0, upper=1")
            self.assertEqual(got, [])
            self.assertIsNotNone(err)
            self.assertNotIn("78742", err)
            outcomes.add(err)
        self.assertEqual(outcomes, {"private_groups: rows_query does not prepare: no such function: dp_alpha"})

    def test_overflow_that_depends_on_a_row_is_refused_before_any_row(self):
        # Before: "integer overflow" exactly when patient 5 smokes.
        q = ("SELECT id, ward FROM patients WHERE id = %d AND CASE WHEN smoker THEN abs(-9223372036854775808) "
             "ELSE 1 END ORDER BY 1")
        smokers = [r[0] for r in sqlite3.connect(self.paths["d"]).execute(
            "select id from patients where smoker order by id limit 1")]
        non = [r[0] for r in sqlite3.connect(self.paths["d"]).execute(
            "select id from patients where not smoker order by id limit 1")]
        errs = {self.groups(self.db, q % pid)[1] for pid in smokers + non}
        self.assertEqual(len(errs), 1, errs)
        err = errs.pop()
        self.assertTrue(err.startswith("private_groups: rows_query must not call abs() "), err)

    def test_every_refused_function_is_named(self):
        for fn, expr in (("abs", "abs(age)"), ("sum", "(select sum(age) from patients)"),
                         ("like", "ward like 'c%'"), ("glob", "ward glob 'c*'"),
                         ("json_extract", "json_extract(ward, '$.a')"), ("printf", "printf('%d', age)"),
                         ("group_concat", "(select group_concat(ward) from patients)"), ("hex", "hex(ward)"),
                         ("zeroblob", "zeroblob(age)"), ("replace", "replace(ward, 'a', 'bb')"),
                         ("quote", "quote(ward)"), ("strftime", "strftime(ward, 'now')"),
                         ("random", "random()")):
            with self.subTest(fn=fn):
                got, err = self.groups(self.db, "SELECT id, ward FROM patients WHERE %s IS NOT NULL ORDER BY 1" % expr)
                self.assertEqual(got, [])
                self.assertTrue((err or "").startswith("private_groups: rows_query must not call %s() " % fn), err)

    def test_optdp_functions_and_virtual_tables_cannot_run_inside(self):
        self.run_sql("create view jv as select key from json_each('[1, 2]')")
        for q in ("SELECT id, ward, (SELECT private_count(0.5) FROM patients) FROM patients ORDER BY 1",
                  "SELECT id, ward FROM patients WHERE id IN (SELECT count FROM private_groups('x', 1.0)) ORDER BY 1",
                  "SELECT key, 'x' FROM json_each('[1, 2]') ORDER BY 1",
                  "SELECT key, 'x' FROM jv ORDER BY 1",
                  "SELECT 1, name FROM pragma_table_info('patients') ORDER BY 1"):
            with self.subTest(q=q):
                got, err = self.groups(self.db, q)
                self.assertEqual(got, [])
                self.assertTrue((err or "").startswith("private_groups: rows_query does not prepare: "), err)

    def test_recursive_cte_refused(self):
        got, err = self.groups(self.db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                                        "WHERE x < 5) SELECT x, 'cardiology' FROM c ORDER BY 1")
        self.assertEqual(err, "private_groups: rows_query must not use a recursive CTE (its time and memory "
                              "could depend on the rows)")

    def test_allowed_queries_release(self):
        for q in ("SELECT v.patient_id, v.ward, CASE WHEN v.cost > 100 THEN 1 ELSE 0 END FROM visits v "
                  "JOIN patients p ON p.id = v.patient_id WHERE p.age > 30 AND coalesce(p.income, 0) >= 0 "
                  "ORDER BY 1",
                  "SELECT id, lower(substr(ward, 1, 4)), min(max(age, 0), 1) FROM patients "
                  "WHERE ward IN (SELECT ward FROM wards WHERE floor < 4) ORDER BY 1",
                  "WITH s AS (SELECT id, ward FROM patients WHERE smoker) SELECT id, ward, 1 FROM s ORDER BY 1"):
            with self.subTest(q=q):
                got, err = self.groups(self.db, q, keys_query=None,
                                       options="lower=0, upper=1, delta=1e-6" if q.count(",") > 2 else "delta=1e-6")
                self.assertIsNone(err)

    def test_neighbours_give_the_same_outcome(self):
        # Whatever the query, whether it fails, and its message, are the same
        # with and without patient 17.
        queries = ["SELECT id, ward FROM patients WHERE id = 17 AND %s ORDER BY 1" % c for c in (
            "abs(income) > 0", "income / 0 IS NULL", "CAST(income AS INTEGER) > 5", "-(-9223372036854775808) > 0",
            "9223372036854775807 + id > 0", "ward || ward = 'x'", "instr(ward, 'o') > 0", "exp(income) > 1",
            "sqrt(-income) IS NULL", "date(income) IS NULL", "dp_epsilon(income) > 0")]
        for q in queries:
            with self.subTest(q=q):
                outs = []
                for name in ("d", "d17"):
                    db = self.on(name)
                    db.execute("select dp_seed(7)")
                    got, err = self.groups(db, q)
                    outs.append((len(got), err))
                self.assertEqual(outs[0], outs[1])
                if outs[0][1] is None:
                    self.assertEqual(outs[0][0], 5)  # every public ward released


class TestTempObjects(HospitalCase):
    def test_temp_view_releasing_per_row_is_not_visible(self):
        # Before: one ledger entry per smoker with id < 40 (7 entries).
        self.run_sql("select dp_ledger_attach(?, 100.0, 1e-3)", (self.ledger,))
        self.run_sql("create temp view v as select id, ward from patients where smoker and id < 40 and "
                     "(select count(*) from private_groups('SELECT id, ward FROM patients ORDER BY 1', 0.01, "
                     "NULL, 'SELECT ward FROM wards')) >= 0")
        got, err = self.groups(self.db, "SELECT id, ward FROM v ORDER BY 1")
        self.assertEqual(got, [])
        self.assertEqual(err, "private_groups: rows_query does not prepare: no such table: v")
        self.assertEqual(self.all("select count(*) from dp_ledger_entries()"), [(0,)])


class TestMmapFollowsTheCaller(HospitalCase):
    """optdp's connection reads with the caller's mmap limit: mapped when the
    caller maps (bench/README.md: reading a large file by pread on every
    release), not when the caller does not. Its mappings of the file are
    counted in /proc/self/maps beside the caller's own."""

    def mappings(self):
        with open("/proc/self/maps") as f:
            return sum(1 for line in f if line.rstrip().endswith(os.path.realpath(self.paths["d"])))

    def release(self):
        got, err = self.groups(self.db, "SELECT id, ward FROM patients ORDER BY 1")
        self.assertIsNone(err)
        self.assertTrue(got)

    @unittest.skipUnless(os.path.exists("/proc/self/maps"), "needs /proc/self/maps")
    def test_mapped_exactly_when_the_caller_maps(self):
        self.all("pragma mmap_size = 0")  # whatever SQLite's build defaults to
        self.release()  # neither connection maps
        self.assertEqual(self.mappings(), 0)
        self.all("pragma mmap_size = 1073741824")
        self.all("select count(*) from patients")  # the caller maps
        self.assertEqual(self.mappings(), 1)
        self.release()  # and now optdp's connection too
        self.assertEqual(self.mappings(), 2)
        self.all("pragma mmap_size = 0")
        self.assertEqual(self.mappings(), 1)  # the caller's is unmapped, optdp's still there
        self.release()  # and gone at the next release
        self.assertEqual(self.mappings(), 0)


class TestChargeFirst(HospitalCase):
    def corrupt(self, path):
        """A database whose table r spans many pages, its data pages then overwritten."""
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("pragma synchronous = off")
        db.execute("create table r(u, k)")
        db.execute("begin")
        db.executemany("insert into r values (?, ?)", [(i, "k%d" % (i % 5)) for i in range(20000)])
        db.execute("commit")
        root = db.execute("select rootpage from sqlite_master where name = 'r'").fetchone()[0]
        pages = db.execute("pragma page_count").fetchone()[0]
        size = db.execute("pragma page_size").fetchone()[0]
        db.close()
        with open(path, "r+b") as f:
            for p in range(root + 1, pages + 1):
                f.seek((p - 1) * size)
                f.write(b"\xff" * size)

    def test_a_refused_release_reads_no_row(self):
        path = os.path.join(self.db_dir, "corrupt.db")
        self.corrupt(path)
        db = lib.connect(path=path)
        self.addCleanup(db.close)
        db.execute("select dp_ledger_attach(?, 0.5)", (self.ledger,))
        got, err = self.groups(db, "SELECT u, k FROM r ORDER BY 1", options=None, keys_query="SELECT 'k1'")
        self.assertEqual(got, [])
        self.assertTrue(err.startswith("private_groups: privacy budget exhausted"), err)
        # Within the budget it is charged first; the read then fails with the one fixed message.
        got, err = self.groups(db, "SELECT u, k FROM r ORDER BY 1", options=None, keys_query="SELECT 'k1'", eps=0.25)
        self.assertEqual(got, [])
        self.assertEqual(err, "private_groups: reading the rows failed after the release was charged (an I/O "
                              "error, an interrupt, or memory; the message of the cause is not shown: it could "
                              "depend on the rows)")
        self.assertEqual(db.execute("select function, epsilon from dp_ledger_entries()").fetchall(),
                         [("private_groups", 0.25)])



class TestHeapLimit(HospitalCase):
    # The limit is the process's and PRAGMA cannot lift it: its own class (one process per class).
    def test_refused_under_a_hard_heap_limit(self):
        self.assertIsNone(self.groups(self.db, "SELECT id, ward FROM patients ORDER BY 1")[1])
        self.run_sql("pragma hard_heap_limit = 400000000")
        for pid in (5, 100000):  # a matching row or none: the same refusal
            got, err = self.groups(self.db, "SELECT id, ward FROM patients WHERE id = %d ORDER BY 1" % pid)
            self.assertEqual(got, [])
            self.assertEqual(err, "private_groups: refused while a hard heap limit is set (PRAGMA "
                                  "hard_heap_limit): whether memory runs out could depend on the rows")


AGGREGATES = ["private_count(0.5)", "private_count(age, 0.5)", "staircase_sum(age, 1.0, 0, 100)",
              "laplace_sum(age, 1.0, 0, 100)", "private_avg(age, 1.0, 0, 100)", "private_var(age, 1.0, 0, 100)",
              "private_stddev(age, 1.0, 0, 100)", "private_median(age, 0.001, 0, 4095)",
              "private_quantile(age, 0.25, 1.0, 0, 100)", "private_select(ward, age, 1.0)",
              "private_count_levels(0.2, 0.5)", "private_count_levels_of(age, 0.2, 0.5)"]


class TestAggregatesHeapLimit(HospitalCase):
    # Before: under PRAGMA hard_heap_limit = 340000, private_median(age, 0.001, 0, 4095) over patient 5
    # failed with out-of-memory when the row matched (its buckets were allocated by the first row) and
    # released when it did not. Now every aggregate is refused on both paths. (Own class: the limit is
    # the process's and cannot be lifted.)
    def test_every_aggregate_refused_with_and_without_rows(self):
        self.run_sql("pragma hard_heap_limit = 340000")
        for agg in AGGREGATES:
            with self.subTest(agg=agg):
                errs = set()
                for where in ("id = 5", "id = -1"):
                    got, err = lib.receive(self.db, "select %s from patients where %s" % (agg, where))
                    self.assertEqual(got, [])
                    errs.add(err)
                name = agg.split("(")[0]
                self.assertEqual(errs, {name + ": refused while a hard heap limit is set (PRAGMA hard_heap_limit): "
                                               "whether memory runs out could depend on the rows"})


class TestAggregatesChargeFirst(HospitalCase):
    # The ledger is charged when a release begins (its first row), before any
    # row is added: a function in x sees, from the second row on, the entry
    # of the release it is feeding. Before, the charge came in the final step.
    def test_charged_before_the_second_row(self):
        self.run_sql("select dp_ledger_attach(?, 100.0)", (self.ledger,))
        seen = []

        def probe(x):
            with sqlite3.connect(self.ledger) as other:
                seen.append(other.execute("select count(*) from optdp_charges").fetchone()[0])
            return x

        self.db.create_function("probe", 1, probe)
        for agg in AGGREGATES:
            if "(age" not in agg and "(ward" not in agg:
                continue
            with self.subTest(agg=agg):
                seen.clear()
                before = self.all("select count(*) from dp_ledger_entries()")[0][0]
                call = agg.replace("(age", "(probe(age)", 1).replace("(ward, age", "(probe(ward), age", 1)
                got, err = lib.receive(self.db, "select %s from patients where id <= 3" % call)
                self.assertIsNone(err)
                self.assertEqual(seen, [before, before + 1, before + 1])


class TestTableFunctionMessages(lib.OptdpTestCase):
    # A table function's argument can be a row's value: its message quotes
    # the value only when it is a literal known when the statement is
    # prepared or a bound parameter. Before, FROM t, geometric_matrix(t.n, 0.5)
    # quoted t.n.
    def test_a_rows_value_is_not_quoted(self):
        self.run_sql("create table t(n, a)")
        self.run_sql("insert into t values (5000001, 78742.5)")
        shown = "geometric_matrix: n must be an integer in [0, 5000], but is 5000001"
        hidden = "geometric_matrix: n must be an integer in [0, 5000], but is a value not shown (it may be a row's)"
        self.assertError("select * from geometric_matrix(5000001, 0.5)", shown)
        self.assertError("select * from geometric_matrix(?, 0.5)", shown, (5000001,))
        self.assertError("select * from t, geometric_matrix(t.n, 0.5)", hidden)
        self.assertError("select * from geometric_matrix((select n from t), 0.5)", hidden)
        err = self.error_of("select * from t, staircase_pmf(-t.a, 1, -2, 2)")
        self.assertNotIn("78742", err)
        self.assertIn("not shown", err)


CHILD = r"""
import resource, sqlite3, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
db = sqlite3.connect(sys.argv[2], isolation_level=None)
db.enable_load_extension(True)
db.load_extension(sys.argv[1])
rows = db.execute("select count(*) from private_groups('SELECT u, k, 1 FROM many ORDER BY 1', 1.0, "
                  "'max_groups=3, max_rows=1000, lower=0, upper=1, delta=1e-6')").fetchall()
print(rows[0][0])
"""


@unittest.skipIf("asan" in os.environ.get("LD_PRELOAD", ""), "AddressSanitizer reserves more address space than the limit")
class TestMemoryBound(HospitalCase):
    def test_one_unit_with_200000_keys(self):
        path = os.path.join(self.db_dir, "many.db")
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("pragma synchronous = off")
        db.execute("create table many(u, k)")
        db.execute("with recursive c(x) as (select 0 union all select x + 1 from c where x < 199999) "
                   "insert into many select 1, x from c")
        db.close()
        out = subprocess.run([sys.executable, "-c", CHILD, lib.module_path(), path], capture_output=True, text=True,
                             timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertTrue(out.stdout.strip().isdigit(), out.stdout)


if __name__ == "__main__":
    sys.exit(lib.main(__name__, sys.argv))
