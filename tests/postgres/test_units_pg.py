"""Declared privacy units for private_groups on PostgreSQL 15 (issue 27), and
private_groups in a SECURITY DEFINER function (issue 26, item 9), in a server
the suite starts itself (pgserver.py).

Usage: test_units_pg.py <build>/postgres <source dir> [unittest args]

Two neighbouring databases hold the sample database (sql/fixtures/hospital.sql):
`units1` as it is and `units0` without patient 17 (and the patient's
visits); a third, `unitsl`, is `units1` with a ledger (dp_seed is refused
where a ledger is attached), to count the charges. All declare the units
(optdp_units: patients.id, visits.patient_id, doctors.id; optdp_links:
visits.patient_id -> patients.id; doctors are another kind of unit).

- Findings of issue 27 on PostgreSQL: the self-join that made patient 17's
  ward 2,001 (finding 1) and the OFFSET / multidimensional ARRAY that fail
  on one row (finding 2) are refused when prepared, identically on both
  neighbours, and charge nothing. On 55e760e the first releases 2,001 and
  the second fails after the charge on one neighbour only. A private
  condition over a large public table (finding 3) is refused when prepared
  and reads no row of either table (the transaction's statistics), where
  55e760e reads all of the public table for patient 17 alone.
- Unit spoofing: 100+ rows queries (self-joins, joins on non-unit columns,
  CROSS JOIN, subqueries and CTEs re-reading a private table, UNION under
  different unit columns, windows, correlated subqueries, GROUP BY across
  units, views, LIMIT/OFFSET expressions, joins with large public tables on
  private conditions), each refused when prepared (the same message on
  both neighbours, no charge) or released on both with the same dp_seed:
  then the counts may differ by at most what one unit moves (max_groups=1,
  max_rows=1: one count by one). The expected outcome of each is checked
  too, so that the allowed shapes stay allowed. Allowed joins with a value
  column move sums by at most one unit's bound as well.
- Analyst mode (docs/scale.md's deployment): an analyst without SELECT on
  the private tables releases through a SECURITY DEFINER wrapper of
  private_groups; the unit rules hold there, relations neither declared nor
  readable by the analyst are refused, keys must be public, the analyst can
  neither read nor change the declarations, and each call is charged once.
"""
import os
import sqlite3
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server  # noqa: E402

MODULE_DIR = None
SOURCE = None
SERVER = None
DBS = ("units1", "units0")  # with and without patient 17
LEDGER = "unitsl"  # with patient 17 and a ledger
SEED = 20261127
WARDS = "SELECT ward FROM wards"
BOUNDS = "max_groups=1, max_rows=1"  # one unit moves one count by at most 1
DOCS = ' (docs/grouped.md, "Declared units on PostgreSQL")'


def q(s):
    return "NULL" if s is None else "'" + str(s).replace("'", "''") + "'"


def call(rows, eps=1.0, options=BOUNDS, keys=WARDS, fn="private_groups"):
    return "%s(%s, %s, %s, %s)" % (fn, q(rows), repr(eps), q(options), q(keys))


def psql(sql, db):
    return SERVER.psql(sql, db=db)


def error_of(sql, db):
    return SERVER.error_of(sql, db=db)


def entries(db):
    return int(psql("SELECT count(*) FROM dp_ledger_entries", db)[0][0])


def load_sample(db):
    lite = sqlite3.connect(":memory:")
    with open(os.path.join(SOURCE, "sql", "fixtures", "hospital.sql")) as f:
        lite.executescript(f.read())
    patients = ", ".join("(%d, '%s', %d, %s, %s, %d)" % (i, w, a, "true" if s else "false",
                                                           "NULL" if inc is None else repr(inc), v)
                         for i, w, a, s, inc, v in
                         lite.execute("SELECT id, ward, age, smoker, income, visits FROM patients"))
    wards = ", ".join("('%s', %d)" % r for r in lite.execute("SELECT ward, floor FROM wards"))
    visits = ", ".join("(%d, %d, '%s', '%s', %s)" % (i, p, w, d, "NULL" if c is None else repr(c))
                       for i, p, w, d, c in
                       lite.execute("SELECT id, patient_id, ward, diagnosis, cost FROM visits"))
    psql("CREATE TABLE wards(ward text PRIMARY KEY, floor int8); INSERT INTO wards VALUES %s; "
         "CREATE TABLE patients(id int8 PRIMARY KEY, ward text, age int8, smoker boolean, income float8, "
         "visits int8); INSERT INTO patients VALUES %s; "
         "CREATE TABLE visits(id int8 PRIMARY KEY, patient_id int8, ward text, diagnosis text, cost float8); "
         "INSERT INTO visits VALUES %s;" % (wards, patients, visits), db)


def make_db(db, without_17=False, ledger=False):
    psql("CREATE DATABASE %s" % db, "postgres")
    psql("CREATE EXTENSION optdp", db)
    load_sample(db)
    if without_17:
        psql("DELETE FROM visits WHERE patient_id = 17; DELETE FROM patients WHERE id = 17", db)
    psql("CREATE TABLE doctors(id int8 PRIMARY KEY, ward text); "
         "INSERT INTO doctors SELECT g, (ARRAY['cardiology','oncology','neurology'])[1 + g % 3] "
         "FROM generate_series(1, 40) g; "
         # public tables: big (no index), bigu (a primary key)
         "CREATE TABLE big AS SELECT g::int8 AS id, (g % 90)::int8 AS w FROM generate_series(1, 100000) g; "
         "CREATE TABLE bigu(id int8 PRIMARY KEY, note int8); "
         "INSERT INTO bigu SELECT g, g % 7 FROM generate_series(1, 20000) g; "
         # views the analyst (here the session) creates
         "CREATE VIEW spoof AS SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id = 17; "
         "CREATE VIEW v_window AS SELECT id, ward, count(*) OVER () AS n FROM patients; "
         "CREATE VIEW v_limit AS SELECT id, ward FROM patients ORDER BY age LIMIT 5; "
         "CREATE VIEW v_cross AS SELECT p.id, v.ward FROM patients p, visits v WHERE v.patient_id = 17; "
         "CREATE VIEW v_group AS SELECT min(id) AS id, ward FROM patients GROUP BY ward; "
         "CREATE VIEW smokers AS SELECT id, ward FROM patients WHERE smoker; "
         "CREATE VIEW v_join AS SELECT v.patient_id, p.ward FROM visits v JOIN patients p ON p.id = v.patient_id",
         db)
    try:
        psql("INSERT INTO optdp_units VALUES ('patients', 'id'), ('visits', 'patient_id'), ('doctors', 'id'); "
             "INSERT INTO optdp_links VALUES ('visits', 'patient_id', 'patients', 'id')", db)
    except Exception as e:  # noqa: BLE001 (a build without declared units, 55e760e: the tests then fail on what they check)
        if "does not exist" not in e.args[0]:
            raise
    if ledger:
        psql("SELECT dp_ledger_attach(1e6)", db)


def setUpModule():
    global SERVER
    SERVER = Server(MODULE_DIR)
    SERVER.__enter__()
    # the neighbours take dp_seed, which a ledger refuses; LEDGER (the
    # sample database with a ledger) counts the charges
    make_db(DBS[0])
    make_db(DBS[1], without_17=True)
    make_db(LEDGER, ledger=True)


def tearDownModule():
    if SERVER is not None:
        SERVER.stop()


def release(db, rows, keys=WARDS, options=BOUNDS):
    """("error", message) or ("rows", {key: count}) of one seeded release."""
    try:
        # on the server's kept connection (each release sets its seed first): a
        # fresh backend per release cost most of this file's time
        out = SERVER.kept_session(db).psql("SELECT dp_seed(%d); SELECT key, count FROM %s" % (SEED, call(rows, 1.0, options, keys)))
    except Exception as e:  # noqa: BLE001 (SqlError)
        msg = e.args[0]
        for line in msg.splitlines():
            if "ERROR:" in line:
                return ("error", line.split("ERROR:", 1)[1].strip())
        return ("error", msg)
    return ("rows", {r[0]: int(r[1]) for r in out[1:]})


# ---- finding 1 and finding 2 of issue 27 ---------------------------------------------------

SELF_JOIN = "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id = 17 ORDER BY 1"
NOT_JOINED = ("private_groups: rows_query must join every read of a private relation to the others on their units "
              "(unit = unit in ON or WHERE, not under OR or NOT), so that each row is one unit's" + DOCS)


class Findings(unittest.TestCase):
    def refused_on_both(self, rows, message, keys=WARDS):
        got = [release(db, rows, keys) for db in DBS]
        self.assertEqual(got[0], got[1], "the neighbours differ: %r" % (got,))
        self.assertEqual(got[0], ("error", message))
        before = entries(LEDGER)  # refused before the charge
        self.assertEqual(error_of("SELECT * FROM %s" % call(rows, keys=keys), LEDGER), message)
        self.assertEqual(entries(LEDGER), before)

    def test_finding_1_self_join_is_refused(self):
        # On 55e760e: oncology (patient 17's ward, which every patient's row
        # then takes) is about 2,000 with patient 17 and about 0 without.
        got = [release(db, SELF_JOIN) for db in DBS]
        if got[0][0] == "rows" and got[1][0] == "rows":
            self.fail("released: oncology %d with patient 17, %d without" % (got[0][1].get("oncology"),
                                                                              got[1][1].get("oncology")))
        self.refused_on_both(SELF_JOIN, NOT_JOINED)

    def test_finding_1_mean_through_the_self_join_is_refused(self):
        rows = "SELECT p.id, q.ward, q.income FROM patients p JOIN patients q ON q.id = 17 ORDER BY 1"
        for db in DBS:
            self.assertEqual(error_of("SELECT * FROM %s" % call(rows, 1.0, "lower=0, upper=200000"), db), NOT_JOINED)

    def test_finding_2_offset_expression_is_refused_when_prepared(self):
        rows = ("SELECT id, ward FROM patients ORDER BY 1 OFFSET CASE WHEN EXISTS (SELECT 1 FROM patients WHERE "
                "id = 17 AND NOT smoker) THEN -1 ELSE 0 END")
        self.refused_on_both(rows, "private_groups: rows_query must give LIMIT and OFFSET as constants (an "
                                   "expression is evaluated only when a row is read)")
        rows = ("SELECT id, ward FROM patients ORDER BY 1 LIMIT CASE WHEN EXISTS (SELECT 1 FROM patients WHERE "
                "id = 17 AND NOT smoker) THEN -1 ELSE 5 END")
        self.refused_on_both(rows, "private_groups: rows_query must give LIMIT and OFFSET as constants (an "
                                   "expression is evaluated only when a row is read)")

    def test_finding_2_multidimensional_array_is_refused_when_prepared(self):
        rows = ("SELECT id, ward FROM patients WHERE ARRAY[ARRAY[1], CASE WHEN id = 17 THEN ARRAY[1, 2] "
                "ELSE ARRAY[2] END] IS NOT NULL ORDER BY 1")
        self.refused_on_both(rows, "private_groups: rows_query must not build a multidimensional array (it fails "
                                   "when its parts' dimensions differ, which only a row can show)")
        rows = "SELECT id, ward FROM patients WHERE ARRAY[ward, 'x'] IS NOT NULL ORDER BY 1"
        self.refused_on_both(rows, "private_groups: rows_query must not build an array of variable-length values "
                                   "from columns (its size could exceed the largest array on one row's values)")

    def test_finding_2_negative_constant_limit_is_refused_when_prepared(self):
        self.refused_on_both("SELECT x.id, w.ward FROM wards w, (VALUES (1::int8)) x(id) ORDER BY 1 LIMIT -1",
                             "private_groups: rows_query must not give a negative LIMIT or OFFSET")


    def test_finding_3_a_private_condition_over_a_public_table_reads_no_row(self):
        # Refused when prepared, on both neighbours: the work (rows read, as
        # the statistics count them, not time) is none on either.
        rows = "SELECT p.id, p.ward FROM patients p JOIN big b ON p.id = 17 AND NOT p.smoker ORDER BY 1"
        message = ("private_groups: rows_query must join public relation big to private rows by equality on a column "
                   "of it with a unique index (so that each private row meets at most one of its rows, and no private "
                   "value decides how many rows are read)" + DOCS)
        self.refused_on_both(rows, message)
        for db in DBS:
            out = psql("\\set ON_ERROR_STOP 0\nBEGIN; SAVEPOINT s; SELECT * FROM %s; ROLLBACK TO s; "
                       "SELECT relname, seq_tup_read + coalesce(idx_tup_fetch, 0) FROM pg_stat_xact_user_tables "
                       "WHERE relname IN ('big', 'patients') ORDER BY 1; COMMIT;" % call(rows), db)
            self.assertEqual(out, [["big", "0"], ["patients", "0"]], db)


# ---- the unit-spoofing suite --------------------------------------------------------------

A, R = "allowed", "refused"
SPOOFING = [
    # plain reads and joins along the declared link
    (A, "SELECT id, ward FROM patients ORDER BY 1"),
    (A, "SELECT p.id, p.ward FROM patients p ORDER BY 1"),
    (A, "SELECT patient_id, ward FROM visits ORDER BY 1"),
    (A, "SELECT v.patient_id, p.ward FROM visits v JOIN patients p ON p.id = v.patient_id ORDER BY 1"),
    (A, "SELECT p.id, v.ward FROM patients p JOIN visits v ON v.patient_id = p.id ORDER BY 1"),
    (A, "SELECT p.id, v.ward FROM patients p, visits v WHERE v.patient_id = p.id ORDER BY 1"),
    (A, "SELECT p.id, v.ward FROM patients p JOIN visits v ON v.patient_id = p.id AND v.cost > 100 ORDER BY 1"),
    (A, "SELECT p.id, v.ward FROM patients p JOIN visits v ON p.id = v.patient_id WHERE p.id = 17 ORDER BY 1"),
    (A, "SELECT p.id, p.ward FROM patients p LEFT JOIN visits v ON v.patient_id = p.id ORDER BY 1"),
    (A, "SELECT v.patient_id, p.ward FROM visits v LEFT JOIN patients p ON p.id = v.patient_id ORDER BY 1"),
    (A, "SELECT p.id, w.ward FROM patients p LEFT JOIN visits v ON v.patient_id = p.id LEFT JOIN visits w ON "
        "w.patient_id = v.patient_id ORDER BY 1"),
    (A, "SELECT p.id, v.ward FROM patients p LEFT JOIN (visits v JOIN patients q ON q.id = v.patient_id) ON "
        "v.patient_id = p.id ORDER BY 1"),
    (A, "SELECT id, ward FROM patients WHERE id = 17 ORDER BY 1"),
    (A, "SELECT id, ward FROM patients WHERE smoker ORDER BY 1"),
    (A, "SELECT id, ward FROM patients WHERE ward IN ('oncology', 'cardiology') ORDER BY 1"),
    (A, "SELECT id, ward FROM patients WHERE id IN (17, 18) ORDER BY 1"),
    (A, "SELECT id, CASE WHEN smoker THEN 'oncology' ELSE ward END FROM patients ORDER BY 1"),
    (A, "SELECT id, ward FROM patients ORDER BY 1 LIMIT ALL"),
    (A, "SELECT id, ward FROM patients ORDER BY 1 OFFSET 0"),
    (A, "SELECT id, ward FROM patients ORDER BY 1, 2"),
    (A, "SELECT d.id, d.ward FROM doctors d ORDER BY 1"),
    # a private relation read twice, joined on the unit
    (A, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id = p.id ORDER BY 1"),
    (A, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id = p.id AND q.id = 17 ORDER BY 1"),
    (A, "SELECT v.patient_id, w.ward FROM visits v JOIN visits w ON w.patient_id = v.patient_id ORDER BY 1"),
    (A, "WITH c AS (SELECT id, ward FROM patients) SELECT a.id, b.ward FROM c a JOIN c b ON b.id = a.id ORDER BY 1"),
    (A, "SELECT p.id, x.ward FROM patients p JOIN (SELECT patient_id AS u, ward FROM visits) x ON x.u = p.id "
        "ORDER BY 1"),
    # subqueries, CTEs, UNION under the same unit column
    (A, "SELECT s.id, s.ward FROM (SELECT id, ward FROM patients WHERE age > 30) s ORDER BY 1"),
    (A, "WITH c AS (SELECT id, ward FROM patients) SELECT id, ward FROM c ORDER BY 1"),
    (A, "WITH c AS (SELECT patient_id AS u, ward FROM visits) SELECT u, ward FROM (SELECT * FROM c) s ORDER BY 1"),
    (A, "WITH a AS (SELECT id, ward FROM patients), b AS (SELECT id, ward FROM a) SELECT id, ward FROM "
        "(SELECT * FROM b) s ORDER BY 1"),
    (R, "WITH a AS (SELECT id, ward FROM patients), b AS (SELECT x.id, y.ward FROM a x JOIN a y ON y.id = 17) "
        "SELECT id, ward FROM (SELECT * FROM b) s ORDER BY 1"),
    (A, "SELECT id, ward FROM patients UNION ALL SELECT patient_id, ward FROM visits ORDER BY 1"),
    (A, "SELECT id, ward FROM patients UNION SELECT patient_id, ward FROM visits ORDER BY 1"),
    (A, "SELECT t.id, t.ward FROM (SELECT id, ward FROM patients UNION ALL SELECT id, ward FROM patients "
        "WHERE id = 17) t ORDER BY 1"),
    # grouping, windows and DISTINCT within a unit
    (A, "SELECT patient_id, min(ward) FROM visits GROUP BY patient_id ORDER BY 1"),
    (A, "SELECT id, ward FROM patients GROUP BY ward, id ORDER BY 1"),
    (A, "SELECT patient_id, ward FROM (SELECT patient_id, ward, row_number() OVER (PARTITION BY patient_id "
        "ORDER BY id) AS n FROM visits) s WHERE n <= 2 ORDER BY 1"),
    (A, "SELECT id, ward FROM (SELECT id, ward, dense_rank() OVER (PARTITION BY id ORDER BY ward) AS r "
        "FROM patients) s WHERE r = 1 ORDER BY 1"),
    (A, "SELECT DISTINCT patient_id, ward FROM visits ORDER BY 1"),
    (A, "SELECT p.id, p.ward FROM (SELECT p.id, p.ward, count(*) OVER (PARTITION BY p.id) AS n FROM patients p "
        "LEFT JOIN visits v ON v.patient_id = p.id) p WHERE p.n > 2 ORDER BY 1"),
    (A, "SELECT s.patient_id, s.ward FROM (SELECT DISTINCT ON (patient_id) patient_id, ward FROM visits "
        "ORDER BY patient_id, id) s ORDER BY 1"),
    # public tables bound by a unique column
    (A, "SELECT p.id, w.ward FROM patients p JOIN wards w ON w.ward = p.ward ORDER BY 1"),
    (A, "SELECT p.id, w.ward FROM patients p JOIN wards w ON w.ward = 'oncology' ORDER BY 1"),
    (A, "SELECT p.id, v.ward FROM patients p JOIN visits v ON p.id = v.patient_id JOIN wards w ON w.ward = v.ward "
        "ORDER BY 1"),
    (A, "SELECT p.id, p.ward FROM patients p JOIN bigu b ON b.id = p.id ORDER BY 1"),
    (A, "SELECT v.patient_id, v.ward FROM visits v JOIN bigu b ON b.id = v.id ORDER BY 1"),
    (A, "SELECT p.id, p.ward FROM patients p JOIN bigu a ON a.id = p.id JOIN bigu b ON b.id = a.note ORDER BY 1"),
    (A, "SELECT p.id, p.ward FROM patients p LEFT JOIN bigu b ON b.id = p.age ORDER BY 1"),
    (A, "SELECT p.id, p.ward FROM patients p JOIN (VALUES ('oncology'), ('neurology')) x(w) ON x.w = p.ward "
        "ORDER BY 1"),
    # docs/grouped.md's example (visits with their patient)
    (A, "SELECT p.id, v.ward FROM visits v JOIN patients p ON p.id = v.patient_id WHERE p.age >= 65 ORDER BY 1"),
    # views
    (A, "SELECT id, ward FROM smokers ORDER BY 1"),
    (A, "SELECT patient_id, ward FROM v_join ORDER BY 1"),

    # self-joins, joins on non-unit columns, CROSS JOIN
    (R, SELF_JOIN),
    (R, "SELECT p.id, q.ward FROM patients p CROSS JOIN patients q WHERE q.id = 17 ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p CROSS JOIN patients q ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.age = p.age ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.ward = p.ward ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id = p.id OR q.id = 17 ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON NOT (q.id <> p.id) ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id < p.id ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p LEFT JOIN patients q ON q.id = 17 ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p FULL JOIN patients q ON q.id = 17 ORDER BY 1"),
    # an equality through an outer join's nullable side joins nothing that is always present
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id = 17 LEFT JOIN patients b ON b.id = p.id "
        "AND b.id = q.id ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p CROSS JOIN patients q LEFT JOIN visits b ON b.patient_id = p.id "
        "AND b.patient_id = q.id WHERE q.id = 17 ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p FULL JOIN patients q ON q.id = p.id ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.smoker = p.smoker AND q.id = 17 ORDER BY 1"),
    (R, "SELECT p.id, v.ward FROM patients p JOIN visits v ON v.id = p.id ORDER BY 1"),
    (R, "SELECT p.id, v.ward FROM patients p JOIN visits v ON v.patient_id = 17 ORDER BY 1"),
    (R, "SELECT p.id, v.ward FROM patients p, visits v ORDER BY 1"),
    (R, "SELECT p.id, v.ward FROM patients p JOIN visits v ON v.patient_id = p.id OR v.patient_id = 17 ORDER BY 1"),
    (R, "SELECT p.id, v.ward FROM patients p JOIN visits v ON v.patient_id = p.id JOIN visits v2 ON "
        "v2.patient_id = 17 ORDER BY 1"),
    (R, "SELECT p.id, v.ward FROM patients p JOIN visits v ON v.patient_id = p.id JOIN patients q ON q.id = v.id "
        "ORDER BY 1"),
    (R, "SELECT v.patient_id, w.ward FROM visits v JOIN visits w ON w.id = v.id ORDER BY 1"),
    (R, "SELECT p.id, d.ward FROM patients p JOIN doctors d ON d.id = p.id ORDER BY 1"),
    (R, "SELECT d.id, p.ward FROM doctors d JOIN patients p ON p.id = d.id ORDER BY 1"),
    # the unit column is not the declared one
    (R, "SELECT age, ward FROM patients ORDER BY 1"),
    (R, "SELECT v.id, v.ward FROM visits v ORDER BY 1"),
    (R, "SELECT 17, ward FROM patients ORDER BY 1"),
    (R, "SELECT COALESCE(p.id, 17), p.ward FROM patients p ORDER BY 1"),
    (R, "SELECT CASE WHEN p.smoker THEN 17 ELSE p.id END, p.ward FROM patients p ORDER BY 1"),
    (R, "SELECT GREATEST(p.id, 17), p.ward FROM patients p ORDER BY 1"),
    (R, "SELECT x.u, x.ward FROM (SELECT id AS u, ward FROM visits) x ORDER BY 1"),
    (R, "SELECT x.u, x.ward FROM (SELECT age AS u, ward FROM patients) x ORDER BY 1"),
    (R, "SELECT 17::int8, w.ward FROM wards w, patients p WHERE p.id = 17 ORDER BY 1"),
    # subqueries and CTEs that re-read a private table
    (R, "SELECT id, ward FROM patients WHERE EXISTS (SELECT 1 FROM patients q WHERE q.id = 17 AND NOT q.smoker) "
        "ORDER BY 1"),
    (R, "SELECT id, ward FROM patients p WHERE p.ward IN (SELECT ward FROM patients WHERE id = 17) ORDER BY 1"),
    (R, "SELECT id, ward FROM patients WHERE id = ANY (SELECT patient_id FROM visits WHERE ward = 'oncology') "
        "ORDER BY 1"),
    (R, "SELECT id, ward FROM patients p WHERE p.ward = ALL (SELECT ward FROM patients WHERE id = 17) ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p WHERE p.id = 17 OR EXISTS (SELECT 1 FROM visits) ORDER BY 1"),
    (R, "WITH c AS (SELECT id, ward FROM patients WHERE id = 17) SELECT p.id, c.ward FROM patients p, c ORDER BY 1"),
    (R, "WITH c AS (SELECT id, ward FROM patients) SELECT a.id, b.ward FROM c a JOIN c b ON b.id = 17 ORDER BY 1"),
    (R, "WITH c AS (SELECT id, ward FROM patients) SELECT id, ward FROM wards w, (VALUES (1::int8)) x(id) "
        "WHERE EXISTS (SELECT 1 FROM c) ORDER BY 1"),
    (R, "SELECT p.id, s.ward FROM patients p JOIN (SELECT ward FROM patients WHERE id = 17) s ON true ORDER BY 1"),
    (R, "SELECT p.id, x.ward FROM patients p JOIN (SELECT patient_id, ward FROM visits WHERE patient_id = 17) x "
        "ON true ORDER BY 1"),
    (R, "SELECT p.id, x.ward FROM patients p, LATERAL (SELECT v.ward FROM visits v WHERE v.patient_id = p.id) x "
        "ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p, LATERAL (SELECT b.id FROM bigu b WHERE b.id = p.id) x ORDER BY 1"),
    # UNION, INTERSECT, EXCEPT
    (R, "SELECT id, ward FROM patients UNION ALL SELECT id, ward FROM visits ORDER BY 1"),
    (R, "SELECT age, ward FROM patients UNION ALL SELECT patient_id, ward FROM visits ORDER BY 1"),
    (R, "SELECT id, ward FROM patients UNION ALL SELECT id, ward FROM doctors ORDER BY 1"),
    (R, "SELECT id, ward FROM patients UNION ALL SELECT 17, 'oncology' ORDER BY 1"),
    (R, "SELECT id, ward FROM patients INTERSECT SELECT patient_id, ward FROM visits ORDER BY 1"),
    (R, "SELECT id, ward FROM patients EXCEPT SELECT patient_id, ward FROM visits ORDER BY 1"),
    (R, "SELECT t.u, t.ward FROM (SELECT id AS u, ward FROM patients UNION ALL SELECT age, ward FROM patients) t "
        "ORDER BY 1"),
    # windows
    (R, "SELECT id, ward FROM (SELECT id, ward, count(*) OVER () AS n FROM patients) s ORDER BY 1"),
    (R, "SELECT id, max(ward) OVER (ORDER BY id) FROM patients ORDER BY 1"),
    (R, "SELECT id, min(ward) OVER (PARTITION BY ward) FROM patients ORDER BY 1"),
    (R, "SELECT id, ward FROM (SELECT id, ward, row_number() OVER (ORDER BY id) AS n FROM patients) s WHERE n > 1 "
        "ORDER BY 1"),
    (R, "SELECT id, ward FROM (SELECT id, ward, rank() OVER (PARTITION BY ward ORDER BY id) AS n FROM patients) s "
        "WHERE n = 1 ORDER BY 1"),
    (R, "SELECT v.patient_id, max(p.ward) OVER (PARTITION BY v.ward) FROM visits v JOIN patients p ON "
        "p.id = v.patient_id ORDER BY 1"),
    # a unit from an outer join's nullable side is NULL in other units' rows
    (R, "SELECT s.id, s.ward FROM (SELECT p.id, p.ward, count(*) OVER (PARTITION BY v.patient_id) AS n FROM "
        "patients p LEFT JOIN visits v ON v.patient_id = p.id AND v.cost > 5000) s WHERE s.n > 1000 ORDER BY 1"),
    (R, "SELECT s.id, s.ward FROM (SELECT DISTINCT ON (v.patient_id) p.id, p.ward FROM patients p LEFT JOIN visits v "
        "ON v.patient_id = p.id AND v.cost > 5000) s ORDER BY 1"),
    (R, "SELECT s.id, s.ward FROM (SELECT p.id, p.ward, count(*) OVER (PARTITION BY p.id) AS n FROM visits v "
        "FULL JOIN patients p ON v.patient_id = p.id) s WHERE s.n > 1 ORDER BY 1"),
    (R, "SELECT s.pid, s.ward FROM (SELECT t.pid, t.ward, count(*) OVER (PARTITION BY t.u) AS n FROM (SELECT p.id AS "
        "pid, p.ward, q.id AS u FROM patients p LEFT JOIN patients q ON q.id = p.id AND p.smoker) t) s "
        "WHERE s.n > 1000 ORDER BY 1"),
    (R, "SELECT p.id, v.ward FROM visits v LEFT JOIN patients p ON p.id = v.patient_id ORDER BY 1"),
    # GROUP BY and DISTINCT across units
    (R, "SELECT min(id), ward FROM patients GROUP BY ward ORDER BY 1"),
    (R, "SELECT max(p.id), q.ward FROM patients p JOIN patients q ON q.id = p.id GROUP BY q.ward ORDER BY 1"),
    (R, "SELECT count(*), 'x' FROM patients ORDER BY 1"),
    (R, "SELECT s.n, s.ward FROM (SELECT count(*) AS n, ward FROM patients GROUP BY ward) s ORDER BY 1"),
    (R, "SELECT p.id, s.w FROM patients p JOIN (SELECT min(ward) AS w FROM patients) s ON true ORDER BY 1"),
    (R, "WITH c AS (SELECT ward, count(*) AS n FROM patients GROUP BY ward) SELECT p.id, c.ward FROM patients p "
        "JOIN c ON c.ward = p.ward ORDER BY 1"),
    (R, "SELECT 1::int8, 'x' FROM patients HAVING count(*) > 1999 ORDER BY 1"),
    (R, "SELECT id, ward FROM patients GROUP BY GROUPING SETS ((id, ward), ()) ORDER BY 1"),
    (R, "SELECT id, ward FROM (SELECT DISTINCT ON (ward) id, ward FROM patients) s ORDER BY 1"),
    (R, "SELECT id, ward FROM patients p WHERE p.id = (SELECT min(id) FROM patients) ORDER BY 1"),
    # views the analyst creates
    (R, "SELECT id, ward FROM spoof ORDER BY 1"),
    (R, "SELECT id, ward FROM v_window ORDER BY 1"),
    (R, "SELECT id, ward FROM v_limit ORDER BY 1"),
    (R, "SELECT id, ward FROM v_cross ORDER BY 1"),
    (R, "SELECT id, ward FROM v_group ORDER BY 1"),
    (R, "SELECT s.id, q.ward FROM smokers s JOIN patients q ON q.id = 17 ORDER BY 1"),
    # LIMIT and OFFSET
    (R, "SELECT id, ward FROM patients ORDER BY 1 LIMIT 10"),
    (R, "SELECT id, ward FROM patients ORDER BY 1 OFFSET 5"),
    (R, "SELECT id, ward FROM patients ORDER BY 1 FETCH FIRST 3 ROWS ONLY"),
    (R, "SELECT id, ward FROM (SELECT id, ward FROM patients ORDER BY age LIMIT 100) s ORDER BY 1"),
    (R, "SELECT id, ward FROM patients ORDER BY 1 LIMIT (SELECT 5)"),
    (R, "SELECT id, ward FROM patients ORDER BY 1 LIMIT CASE WHEN EXISTS (SELECT 1 FROM patients WHERE id = 17) "
        "THEN 1 ELSE 2000 END"),
    (R, "SELECT id, ward FROM patients ORDER BY 1 OFFSET CASE WHEN EXISTS (SELECT 1 FROM patients WHERE id = 17 "
        "AND NOT smoker) THEN -1 ELSE 0 END"),
    (R, "SELECT id, ward FROM patients ORDER BY 1 FETCH FIRST (CASE WHEN EXISTS (SELECT 1 FROM visits WHERE "
        "patient_id = 17) THEN 1 ELSE 2 END) ROWS ONLY"),
    (R, "SELECT id, ward FROM patients ORDER BY 1 LIMIT -1"),
    # joins with large public tables on private conditions (finding 3)
    (R, "SELECT p.id, p.ward FROM patients p JOIN big b ON p.id = 17 AND NOT p.smoker ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p CROSS JOIN big b ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN big b ON b.w = p.age ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN big b ON b.id = p.id ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN big b ON b.id = b.w ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p LEFT JOIN big b ON p.smoker ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN bigu b ON b.id > p.id ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN bigu b ON b.note = p.id ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN bigu b ON b.id = p.id OR p.smoker ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p, bigu a, bigu b WHERE a.id = b.note AND b.id = a.note ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN (SELECT id FROM big) b ON b.id = p.id ORDER BY 1"),
    (R, "SELECT p.id, w.ward FROM patients p CROSS JOIN wards w ORDER BY 1"),
    (R, "SELECT p.id, w.ward FROM patients p JOIN wards w ON w.floor = p.age ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p WHERE EXISTS (SELECT 1 FROM big b WHERE b.w = p.age) ORDER BY 1"),
    (R, "SELECT p.id, p.ward FROM patients p JOIN big b ON p.id = 17 JOIN bigu u ON u.id = b.id ORDER BY 1"),
    # the allow-list still applies
    (R, "SELECT id, ward FROM patients TABLESAMPLE BERNOULLI (50) ORDER BY 1"),
    (R, "SELECT p.id, q.ward FROM patients p JOIN patients q ON q.id = p.id + 0 ORDER BY 1"),
]


class Spoofing(unittest.TestCase):
    def test_refused_when_prepared_or_equal_up_to_one_unit(self):
        self.assertGreaterEqual(len(SPOOFING), 100)
        self.assertEqual(len({rows for _, rows in SPOOFING}), len(SPOOFING))
        allowed = 0
        for expected, rows in SPOOFING:
            with self.subTest(rows=rows):
                got = [release(db, rows) for db in DBS]
                if got[0][0] == "error" or got[1][0] == "error":
                    # refused when prepared: the same message on both, nothing charged
                    self.assertEqual(got[0], got[1])
                    self.assertTrue(got[0][1].startswith("private_groups: rows_query "), got[0][1])
                    self.assertNotIn("reading the rows failed", got[0][1])
                    self.assertEqual(expected, R, got[0][1])
                    continue
                allowed += 1
                self.assertEqual(expected, A)
                # the same seed: the same noise on both; the bounded counts
                # differ by what unit 17 contributes (at most 1 with G = R = 1)
                one, zero = got[0][1], got[1][1]
                self.assertEqual(sorted(one), sorted(zero))
                moved = sum(abs(one[k] - zero[k]) for k in one)
                self.assertLessEqual(moved, 1, (one, zero))
        self.assertGreaterEqual(allowed, 40)

    def test_refusals_charge_nothing(self):
        before = entries(LEDGER)
        for expected, rows in SPOOFING[::7]:
            with self.subTest(rows=rows):
                err = error_of("SELECT * FROM %s" % call(rows), LEDGER)
                self.assertEqual(err is None, expected == A, err)
                before += expected == A
                self.assertEqual(entries(LEDGER), before)

    def test_values_move_by_at_most_one_unit(self):
        # With max_rows above any patient's rows in a ward (11 visits at most)
        # no reservoir draw is made, so the same seed gives the same noise on
        # both neighbours: counts move by at most R rows and sums by at most
        # R * upper, in the one key (G = 1) of the one unit that differs.
        R, upper = 20, 5000.0
        options = "max_groups=1, max_rows=%d, lower=0, upper=%g" % (R, upper)
        for rows in ("SELECT p.id, v.ward, v.cost FROM visits v JOIN patients p ON p.id = v.patient_id ORDER BY 1",
                     "SELECT v.patient_id, p.ward, p.income FROM visits v JOIN patients p ON p.id = v.patient_id "
                     "ORDER BY 1",
                     "SELECT p.id, q.ward, q.income FROM patients p JOIN patients q ON q.id = p.id ORDER BY 1",
                     "SELECT patient_id, ward, cost FROM visits UNION ALL SELECT id, ward, income FROM patients "
                     "ORDER BY 1"):
            with self.subTest(rows=rows):
                got = []
                for db in DBS:
                    out = psql("SELECT dp_seed(%d); SELECT key, count, sum FROM %s" % (
                        SEED, call(rows, 1.0, options)), db)
                    got.append({r[0]: (int(r[1]), float(r[2])) for r in out[1:]})
                self.assertEqual(sorted(got[0]), sorted(got[1]))
                self.assertLessEqual(sum(abs(got[0][k][0] - got[1][k][0]) for k in got[0]), R)
                self.assertLessEqual(sum(abs(got[0][k][1] - got[1][k][1]) for k in got[0]), R * upper + 1e-6)

    def test_keys_query_must_not_read_a_private_relation(self):
        for keys in ("SELECT ward FROM patients", "SELECT DISTINCT ward FROM visits", "SELECT ward FROM smokers",
                     "SELECT w.ward FROM wards w WHERE EXISTS (SELECT 1 FROM patients p WHERE p.ward = w.ward)"):
            with self.subTest(keys=keys):
                got = [release(db, "SELECT id, ward FROM patients ORDER BY 1", keys) for db in DBS]
                self.assertEqual(got[0], got[1])
                self.assertEqual(got[0][0], "error")
                self.assertRegex(got[0][1], r"^private_groups: keys_query must not read private relation "
                                            r"(patients|visits) \(optdp_units\): the keys are released as they are, "
                                            r"so they must be public$")

    def test_messages(self):
        db = DBS[0]
        cases = [
            ("SELECT age, ward FROM patients ORDER BY 1",
             "rows_query must return as its unit (its first column) the declared unit column (optdp_units) of a "
             "private relation it reads" + DOCS),
            ("SELECT p.id, d.ward FROM patients p JOIN doctors d ON d.id = p.id ORDER BY 1",
             "rows_query must not join private relations whose units are not declared linked (optdp_links)" + DOCS),
            ("SELECT p.id, p.ward FROM patients p JOIN big b ON p.id = 17 AND NOT p.smoker ORDER BY 1",
             "rows_query must join public relation big to private rows by equality on a column of it with a unique "
             "index (so that each private row meets at most one of its rows, and no private value decides how many "
             "rows are read)" + DOCS),
            ("SELECT id, ward FROM patients ORDER BY 1 LIMIT 10",
             "rows_query must not use LIMIT or OFFSET where it reads a private relation (they choose rows across "
             "units)" + DOCS),
            ("SELECT min(id), ward FROM patients GROUP BY ward ORDER BY 1",
             "rows_query must not aggregate across units: GROUP BY must include the unit where it reads a private "
             "relation" + DOCS),
            ("SELECT id, max(ward) OVER (ORDER BY id) FROM patients ORDER BY 1",
             "rows_query must not use a window across units: PARTITION BY must include the unit where it reads a "
             "private relation" + DOCS),
            ("SELECT id, ward FROM patients UNION ALL SELECT age, ward FROM patients ORDER BY 1",
             "rows_query must not combine by UNION private rows whose units are in different columns" + DOCS),
            ("SELECT id, ward FROM patients WHERE id IN (SELECT patient_id FROM visits) ORDER BY 1",
             "rows_query must not use a subquery in an expression (EXISTS, IN, ANY, ALL) where it reads a private "
             "relation: join on the unit instead" + DOCS),
        ]
        for rows, message in cases:
            with self.subTest(rows=rows):
                self.assertEqual(error_of("SELECT * FROM %s" % call(rows), db), "private_groups: " + message)

    def test_a_declaration_takes_effect_at_once_and_is_the_owners(self):
        db = DBS[0]
        rows = "SELECT age, ward FROM doctors2 ORDER BY 1"
        psql("CREATE TABLE doctors2 AS SELECT id, id AS age, ward FROM doctors", db)
        try:
            self.assertEqual(len(psql("SELECT * FROM %s" % call(rows), db)), 5)  # not declared: the query's unit
            psql("INSERT INTO optdp_units VALUES ('doctors2', 'id')", db)
            self.assertTrue(error_of("SELECT * FROM %s" % call(rows), db).startswith(
                "private_groups: rows_query must return as its unit"))
            self.assertEqual(len(psql("SELECT * FROM %s" % call("SELECT id, ward FROM doctors2 ORDER BY 1"), db)), 5)
            # a declaration that names no column refuses every read of its table
            psql("UPDATE optdp_units SET unit_column = 'nope' WHERE relation = 'doctors2'::regclass", db)
            self.assertEqual(error_of("SELECT * FROM %s" % call("SELECT id, ward FROM doctors2 ORDER BY 1"), db),
                             "private_groups: rows_query must not read doctors2: its declared unit (optdp_units) "
                             "names no column of it")
            # a dropped table's declaration counts for nothing
            psql("CREATE TABLE gone(id int8); INSERT INTO optdp_units VALUES ('gone', 'id'); DROP TABLE gone", db)
            self.assertEqual(len(psql("SELECT * FROM %s" % call("SELECT id, ward FROM patients ORDER BY 1"), db)), 5)
        finally:
            psql("DELETE FROM optdp_units WHERE relation = 'doctors2'::regclass OR relation::oid NOT IN "
                 "(SELECT oid FROM pg_class); DROP TABLE doctors2", db)


# ---- analyst mode: SECURITY DEFINER (issue 26, item 9) --------------------------------------------

WRAPPER = """
CREATE FUNCTION analyst_groups(rows_query text, epsilon float8, options text DEFAULT NULL, keys_query text DEFAULT NULL)
  RETURNS TABLE (key text, count int8, sum float8, mean float8, count_halfwidth int8, sum_halfwidth float8,
                 mean_low float8, mean_high float8, quantile float8,
                 variance float8, stddev float8)
  LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $$
BEGIN
  RETURN QUERY SELECT * FROM private_groups(rows_query, epsilon, options, keys_query);
END $$;
REVOKE ALL ON FUNCTION analyst_groups(text, float8, text, text) FROM PUBLIC;
"""


class AnalystMode(unittest.TestCase):
    db = LEDGER

    @classmethod
    def setUpClass(cls):
        psql("CREATE ROLE steward NOLOGIN; CREATE ROLE analyst NOLOGIN; "
             "GRANT SELECT ON patients, visits, wards, bigu TO steward; "
             "CREATE TABLE secret(id int8, ward text); INSERT INTO secret VALUES (1, 'oncology'); "
             "GRANT SELECT ON secret TO steward; GRANT SELECT ON wards, bigu TO analyst; "
             "GRANT USAGE, CREATE ON SCHEMA public TO analyst; " + WRAPPER +
             "ALTER FUNCTION analyst_groups(text, float8, text, text) OWNER TO steward; "
             "GRANT EXECUTE ON FUNCTION analyst_groups(text, float8, text, text) TO analyst", cls.db)

    def as_analyst(self, sql):
        return psql("SET ROLE analyst; " + sql, self.db)

    def error_as_analyst(self, sql):
        return error_of("SET ROLE analyst; " + sql, self.db)

    def wrapped(self, rows, keys=WARDS, options=BOUNDS):
        return "SELECT key, count FROM %s" % call(rows, 1.0, options, keys, fn="analyst_groups")

    def test_the_analyst_releases_through_the_definer_function_once_per_call(self):
        before = entries(self.db)
        got = self.as_analyst(self.wrapped("SELECT id, ward FROM patients ORDER BY 1"))
        self.assertEqual([r[0] for r in got], ["cardiology", "geriatrics", "neurology", "oncology", "pediatrics"])
        got = self.as_analyst(self.wrapped("SELECT v.patient_id, p.ward FROM visits v JOIN patients p ON "
                                           "p.id = v.patient_id JOIN wards w ON w.ward = p.ward ORDER BY 1"))
        self.assertEqual(len(got), 5)
        self.assertEqual(entries(self.db), before + 2)

    def test_the_analyst_cannot_read_the_tables_or_the_declarations(self):
        for sql in ("SELECT count(*) FROM patients", "SELECT * FROM optdp_units", "SELECT * FROM optdp_links",
                    "INSERT INTO optdp_units VALUES ('wards', 'floor')", "DELETE FROM optdp_units",
                    "UPDATE optdp_links SET to_column = 'age'"):
            with self.subTest(sql=sql):
                self.assertRegex(self.error_as_analyst(sql) or "", r"^permission denied for table ")
        # nor through private_groups itself, called directly
        err = self.error_as_analyst("SELECT * FROM " + call("SELECT id, ward FROM patients ORDER BY 1"))
        self.assertEqual(err, "private_groups: rows_query does not prepare: permission denied for table patients")

    def test_the_unit_rules_hold_in_analyst_mode(self):
        before = entries(self.db)
        self.assertEqual(self.error_as_analyst(self.wrapped(SELF_JOIN)), NOT_JOINED)
        self.assertEqual(self.error_as_analyst(self.wrapped("SELECT age, ward FROM patients ORDER BY 1")),
                         "private_groups: rows_query must return as its unit (its first column) the declared unit "
                         "column (optdp_units) of a private relation it reads" + DOCS)
        self.assertEqual(self.error_as_analyst(self.wrapped("SELECT id, ward FROM patients ORDER BY 1",
                                                            keys="SELECT ward FROM patients")),
                         "private_groups: keys_query must not read private relation patients (optdp_units): the keys "
                         "are released as they are, so they must be public")
        self.assertEqual(entries(self.db), before)

    def test_relations_neither_declared_nor_readable_are_refused(self):
        for rows, rel in (("SELECT id, ward FROM secret ORDER BY 1", "secret"),
                          ("SELECT p.id, p.ward FROM patients p JOIN secret s ON s.id = p.id ORDER BY 1", "secret"),
                          ("SELECT 1::int8, 'x' FROM optdp_units ORDER BY 1", "optdp_units"),
                          ("SELECT 1::int8, 'x' FROM optdp_charges ORDER BY 1", "optdp_charges")):
            with self.subTest(rows=rows):
                self.assertEqual(self.error_as_analyst(self.wrapped(rows)),
                                 "private_groups: rows_query must not read %s: it is neither a private relation "
                                 "declared in optdp_units nor readable by role analyst" % rel)
        self.assertEqual(self.error_as_analyst(self.wrapped("SELECT id, ward FROM patients ORDER BY 1",
                                                            keys="SELECT ward FROM secret")),
                         "private_groups: keys_query must not read secret: it is neither a private relation "
                         "declared in optdp_units nor readable by role analyst")
        # a public table the analyst may read is fine
        self.assertEqual(len(self.as_analyst(self.wrapped("SELECT p.id, p.ward FROM patients p JOIN bigu b ON "
                                                          "b.id = p.id ORDER BY 1"))), 5)

    def test_a_view_the_analyst_creates_runs_with_the_analysts_rights(self):
        self.as_analyst("CREATE OR REPLACE VIEW mine AS SELECT id, ward FROM patients")
        try:
            # the view is checked against the function's owner, its table against the view's owner
            self.assertEqual(self.error_as_analyst(self.wrapped("SELECT id, ward FROM mine ORDER BY 1")),
                             "private_groups: rows_query does not prepare: permission denied for view mine")
            self.as_analyst("CREATE OR REPLACE VIEW mine2 AS SELECT p.id, q.ward FROM patients p JOIN patients q "
                            "ON q.id = 17")
            self.assertEqual(self.error_as_analyst(self.wrapped("SELECT id, ward FROM mine2 ORDER BY 1")), NOT_JOINED)
        finally:
            psql("DROP VIEW IF EXISTS mine, mine2", self.db)

    def test_other_functions_still_refused(self):
        shape = "private_groups: must be the only table of a top-level SELECT"
        # the definer function called by its own owner: no rights change, so it is code deciding how often
        self.assertTrue(error_of("SET ROLE steward; " + self.wrapped("SELECT id, ward FROM patients ORDER BY 1"),
                                 self.db).startswith(shape))
        # a function the analyst writes (no SECURITY DEFINER)
        self.as_analyst("CREATE OR REPLACE FUNCTION mine_groups() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN "
                        "RETURN (SELECT count(*) FROM private_groups('SELECT 1::int8, ward FROM wards ORDER BY 1', "
                        "1.0, NULL, 'SELECT ward FROM wards')); END $$")
        try:
            self.assertTrue(self.error_as_analyst("SELECT mine_groups()").startswith(shape))
        finally:
            psql("DROP FUNCTION IF EXISTS mine_groups()", self.db)


if __name__ == "__main__":
    MODULE_DIR = os.path.abspath(sys.argv.pop(1))
    SOURCE = os.path.abspath(sys.argv.pop(1))
    unittest.main()
