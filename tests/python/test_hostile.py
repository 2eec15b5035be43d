#!/usr/bin/python3
"""Hostile SQL in analyst mode (docs/boundary.md, "Analyst mode"): several
hundred statements that try to make a release, an error or the ledger depend
on a private row, each run on the sample database and on its neighbour
without patient 17.

    /usr/bin/python3 tests/python/test_hostile.py --module build/optdp.so [unittest args]

Every case is a short script (setup statements, then the statement under
test) run on a fresh connection in analyst mode with patients and visits
private and a ledger attached. For each case, on both databases: whether it
fails, its message (SQLite's and optdp's reason, dp_analyst_refusal()), the
number of rows it returns and the number of ledger entries it leaves must be
the same. And a case that reads a private table outside private_groups must
be refused when prepared, before any row (no ledger entry).

Payloads: errors that depend on a row (abs() of the least integer, json,
LIKE patterns, zeroblob/printf sizes, || lengths, dp_alpha of a column,
division, CAST), nested releases and optdp functions; contexts: WHERE,
select lists, correlated and uncorrelated subqueries, CTEs and recursive
CTEs, joins with a release, GROUP BY with public keys, TEMP views, TEMP
triggers, writes, PRAGMAs (the heap limit among them), ATTACH, and
private_groups' own query.
"""
import itertools
import os
import sqlite3
import sys
import tempfile
import shutil
import unittest

import optdp_testlib as lib

FIXTURE = os.path.join(lib.HERE, "..", "..", "sql", "fixtures", "hospital.sql")
PRIVATE = "patients(id), visits(patient_id -> patients.id)"
NEIGHBOUR = 17

PAYLOADS = [
    "1",
    "p.id = 17",
    "p.smoker",
    "CASE WHEN p.smoker THEN abs(-9223372036854775808) ELSE 1 END",
    "abs(p.age) > 0",
    "json_extract(p.ward, '$') IS NULL",
    "p.ward LIKE p.ward",
    "p.ward GLOB p.ward",
    "length(zeroblob(p.age * 40000000)) > 0",
    "length(printf('%.*c', p.age * 40000000, 'x')) > 0",
    "length(p.ward || p.ward || p.ward) > 0",
    "dp_alpha(-p.income) > 0",
    "dp_epsilon(p.income) > 0",
    "p.income / 0 IS NULL",
    "CAST(p.ward AS INTEGER) = 0",
    "p.age + 9223372036854775807 > 0",
    "(SELECT private_count(0.5) FROM wards) > 0",
    "sqrt(-p.income) IS NULL",
    "substr(p.ward, p.age, 2) = 'ab'",
    "coalesce(p.income, 0) >= 0",
]

CONTEXTS = [
    # reads of a private table outside private_groups: refused when prepared
    (True, [], "SELECT {P} FROM patients p WHERE p.id = 17"),
    (True, [], "SELECT count(*) FROM patients p WHERE {P}"),
    (True, [], "SELECT w.ward FROM wards w WHERE EXISTS (SELECT 1 FROM patients p WHERE p.ward = w.ward AND {P})"),
    (True, [], "SELECT (SELECT 1 FROM patients p WHERE p.id = 17 AND {P})"),
    (True, [], "WITH c AS (SELECT p.id FROM patients p WHERE {P}) SELECT count(*) FROM c"),
    (True, [], "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c, patients p WHERE p.id = 17 AND x < 3 "
         "AND {P}) SELECT * FROM c"),
    (True, [], "SELECT private_count(0.5) FROM patients p WHERE {P}"),
    (True, [], "SELECT w.ward, private_count(p.id, 0.5) FROM wards w LEFT JOIN patients p ON p.ward = w.ward AND {P} "
         "GROUP BY w.ward"),
    (True, [], "SELECT * FROM {G} g WHERE EXISTS (SELECT 1 FROM patients p WHERE p.id = 17 AND {P})"),
    (True, [], "SELECT * FROM wards w, {G} g WHERE w.ward IN (SELECT p.ward FROM patients p WHERE p.id = 17 AND {P})"),
    (True, ["CREATE TEMP VIEW hv AS SELECT p.id, p.ward FROM patients p WHERE {P}"], "SELECT count(*) FROM hv"),
    (True, ["CREATE TEMP VIEW hv AS SELECT p.id, p.ward FROM patients p WHERE {P}"],
     "SELECT * FROM private_groups('SELECT id, ward FROM hv ORDER BY 1', 1.0, NULL, 'SELECT ward FROM wards')"),
    (True, ["CREATE TEMP TRIGGER ht AFTER INSERT ON pubt BEGIN INSERT INTO pubt2 SELECT p.id FROM patients p "
      "WHERE p.id = 17 AND {P}; END"], "INSERT INTO pubt VALUES (1)"),
    (True, [], "UPDATE patients SET age = age WHERE id = 17 AND {P}"),
    (True, [], "DELETE FROM visits WHERE patient_id = 17 AND ({P} OR 1) AND 0"),
    # private_groups' own query (runs on optdp's connection, checked by the allow-list)
    (False, [], "SELECT * FROM private_groups('SELECT p.id, p.ward FROM patients p WHERE {Q} ORDER BY 1', 1.0, NULL, "
         "'SELECT ward FROM wards')"),
    (False, [], "SELECT * FROM private_groups('SELECT p.id, p.ward, p.age FROM patients p WHERE {Q} ORDER BY 1', 1.0, "
         "'lower=0, upper=100', 'SELECT ward FROM wards')"),
    # public tables and released rows only: allowed, the same on both
    (False, [], "SELECT count(*) FROM wards w WHERE {W}"),
    (False, ["CREATE TEMP TABLE rel AS SELECT * FROM {G}"], "SELECT count(*) FROM rel WHERE {W}"),
]

OTHERS = [
    (False, [], "PRAGMA hard_heap_limit = 340000"),
    (False, [], "PRAGMA soft_heap_limit = 1000"),
    (True, [], "PRAGMA table_info(patients)"),
    (True, [], "SELECT * FROM pragma_table_info('patients')"),
    (False, [], "SELECT * FROM dbstat"),
    (False, [], "ANALYZE"),
    (False, [], "SELECT * FROM sqlite_stat1"),
    (False, [], "ATTACH ':memory:' AS x"),
    (False, [], "SELECT dp_seed(1)"),
    (False, [], "SELECT load_extension('x')"),
    (True, [], "DROP TABLE patients"),
    (True, [], "ALTER TABLE patients ADD COLUMN z"),
    (True, [], "CREATE INDEX hi ON patients(age)"),
    (True, [], "CREATE TEMP TRIGGER ht2 AFTER UPDATE ON patients BEGIN SELECT 1; END"),
    (False, [], "CREATE VIRTUAL TABLE vt USING fts5(a)"),
    (False, [], "SELECT * FROM wards"),
    (False, [], "SELECT private_count(0.5) FROM wards"),
    (False, [], "SELECT w.ward FROM wards w ORDER BY w.floor"),
    (False, [], "SELECT * FROM {G}"),
    (False, [], "SELECT * FROM {G} ORDER BY count DESC LIMIT 2"),
    (False, [], "SELECT * FROM wards, {G}"),
    (False, ["CREATE TABLE pub AS SELECT * FROM {G}"], "SELECT count(*) FROM pub"),
    (False, [], "SELECT * FROM private_groups('SELECT v.patient_id, v.ward FROM visits v ORDER BY 1', 1.0, NULL, "
         "'SELECT ward FROM wards')"),
    (False, [], "SELECT * FROM private_groups('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < "
         "1000000) SELECT x, ''cardiology'' FROM c ORDER BY 1', 1.0, NULL, 'SELECT ward FROM wards')"),
    (False, [], "SELECT * FROM private_groups('SELECT id, ward FROM patients ORDER BY 1', 1.0, NULL, "
         "'SELECT ward FROM wards WHERE ward IN (SELECT ward FROM patients)')"),
    (False, [], "SELECT * FROM private_groups('SELECT id, ward FROM patients ORDER BY 1', 1.0, NULL, "
         "'SELECT key FROM json_each(''[1]'')')"),
    (False, [], "SELECT dp_analyst_mode('wards')"),
]

G = "private_groups('SELECT id, ward FROM patients ORDER BY 1', 1.0, NULL, 'SELECT ward FROM wards')"
PUBLIC_PAYLOADS = ["1", "w.floor > 2", "abs(w.floor) > 0", "w.ward LIKE 'c%'", "length(w.ward) > 5"]


def cases():
    """(reads a private table outside private_groups, setup statements, statement)."""
    out = []
    for (private, setup, stmt), p in itertools.product(CONTEXTS, PAYLOADS):
        if "{W}" in stmt:
            continue
        sub = lambda t: t.replace("{G}", G).replace("{Q}", p.replace("'", "''")).replace("{P}", p)
        out.append((private, [sub(s) for s in setup], sub(stmt)))
    for (private, setup, stmt), p in itertools.product(CONTEXTS, PUBLIC_PAYLOADS):
        if "{W}" in stmt:
            w = p.replace("w.floor", "count").replace("w.ward", "key") if "rel" in stmt else p
            sub = lambda t: t.replace("{G}", G).replace("{W}", w)
            out.append((private, [sub(s) for s in setup], sub(stmt)))
    for private, setup, stmt in OTHERS:
        out.append((private, [s.replace("{G}", G) for s in setup], stmt.replace("{G}", G)))
    return out


class TestHostile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="optdp-hostile-")
        cls.paths = {}
        for name, without in (("d", None), ("d17", NEIGHBOUR)):
            path = os.path.join(cls.dir, name + ".db")
            db = sqlite3.connect(path, isolation_level=None)
            db.execute("pragma synchronous = off")
            with open(FIXTURE) as f:
                db.executescript(f.read())
            if without is not None:
                db.execute("delete from visits where patient_id = ?", (without,))
                db.execute("delete from patients where id = ?", (without,))
            db.execute("create table pubt(a)")
            db.execute("create table pubt2(a)")
            db.close()
            cls.paths[name] = path

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_case(self, name, setup, stmt, n):
        # A copy of the database per case: cases write (CREATE TABLE pub, INSERT INTO pubt).
        path = os.path.join(self.dir, "%s-%d.db" % (name, n))
        shutil.copyfile(self.paths[name], path)
        ledger = path + ".ledger"
        db = lib.connect(path=path)
        try:
            db.execute("select dp_ledger_attach(?, 1000000.0, 0.5, 'normal')", (ledger,))
            db.execute("select dp_analyst_mode(?)", (PRIVATE,))
            for s in setup:
                got, err = lib.receive(db, s)
                if err:
                    return ("setup failed", s, err, db.execute("select dp_analyst_refusal()").fetchone()[0], 0)
            got, err = lib.receive(db, stmt)
            why = db.execute("select dp_analyst_refusal()").fetchone()[0] if err else None
            entries = db.execute("select count(*) from dp_ledger_entries()").fetchone()[0]
            return (err is not None, err, why, len(got) if err is None else 0, entries)
        finally:
            db.close()
            for f in (path, ledger, ledger + "-wal", ledger + "-shm"):
                if os.path.exists(f):
                    os.remove(f)

    def test_every_statement_is_refused_or_the_same_on_neighbours(self):
        all_cases = cases()
        self.assertGreaterEqual(len(all_cases), 300)
        refused = 0
        for n, (private, setup, stmt) in enumerate(all_cases):
            with self.subTest(stmt=stmt, setup=setup):
                a = self.run_case("d", setup, stmt, n)
                b = self.run_case("d17", setup, stmt, n)
                self.assertEqual(a, b)
                if private:
                    # refused when prepared: an error, and no ledger entry
                    self.assertTrue(a[0] is True or a[0] == "setup failed", a)
                    self.assertEqual(a[-1], 0, a)
                if a[0]:
                    refused += 1
        self.assertGreater(refused, 250)


if __name__ == "__main__":
    sys.exit(lib.main(__name__, sys.argv))
