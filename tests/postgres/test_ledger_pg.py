"""optdp on PostgreSQL 15: the ledger's connection (extension/postgres/ledger.cpp, docs/scale.md).

Usage: test_ledger_pg.py <build>/postgres [unittest args]
- optdp.ledger_conninfo is the superuser's: no other role can read it (SHOW,
  current_setting, pg_settings) or set it for a session, a role or a database.
- The ledger's tables are found in the extension's schema, never through a
  search_path, and must be the extension's: with optdp in schema dp and an
  empty public.optdp_budget of an analyst's, the budget still holds.
"""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server  # noqa: E402

MODULE_DIR = None
SERVER = None
PRELOADED = ["shared_preload_libraries = 'optdp_pg'"]
EXHAUSTED = "private_count: privacy budget exhausted: 0.6932 of 1 spent, and this release costs 0.6932"


def setUpModule():
    global SERVER
    SERVER = Server(MODULE_DIR, PRELOADED)
    SERVER.__enter__()
    SERVER.psql("CREATE ROLE analyst")


def tearDownModule():
    SERVER.stop()


def set_conninfo(server, value):
    """Sets optdp.ledger_conninfo by ALTER SYSTEM (None: reset) and waits until new sessions see it."""
    server.psql("ALTER SYSTEM %s; SELECT pg_reload_conf()" % (
        "SET optdp.ledger_conninfo = '%s'" % value if value is not None else "RESET optdp.ledger_conninfo"))
    for _ in range(200):
        if server.psql("SHOW optdp.ledger_conninfo") == ([[value]] if value else []):
            return
        time.sleep(0.05)
    raise AssertionError("optdp.ledger_conninfo was not reloaded")


class Conninfo(unittest.TestCase):
    def test_only_superusers_read_or_set_it(self):
        set_conninfo(SERVER, "host=/nowhere passfile=/etc/optdp/pgpass")
        self.addCleanup(set_conninfo, SERVER, None)
        refusal = 'must be superuser or have privileges of pg_read_all_settings to examine "optdp.ledger_conninfo"'
        for sql in ("SHOW optdp.ledger_conninfo", "SELECT current_setting('optdp.ledger_conninfo')",
                    "SELECT current_setting('optdp.ledger_conninfo', true)"):
            self.assertEqual(SERVER.error_of("SET ROLE analyst; " + sql), refusal, sql)
        self.assertEqual(SERVER.psql("SET ROLE analyst; SELECT count(*) FROM pg_settings "
                                     "WHERE name = 'optdp.ledger_conninfo'"), [["0"]])
        shown = "\n".join("|".join(r) for r in SERVER.psql("SET ROLE analyst; SHOW ALL"))
        self.assertNotIn("/etc/optdp/pgpass", shown)
        # postgresql.conf or ALTER SYSTEM only: a session's, a role's or a database's value
        # would be kept in pg_db_role_setting, which every role reads
        for sql in ("SET optdp.ledger_conninfo = 'host=/tmp'",
                    "ALTER ROLE analyst SET optdp.ledger_conninfo = 'host=/tmp'",
                    "ALTER DATABASE postgres SET optdp.ledger_conninfo = 'host=/tmp'"):
            self.assertEqual(SERVER.error_of(sql), 'parameter "optdp.ledger_conninfo" cannot be changed now', sql)

    def test_honoured_only_when_preloaded(self):
        # loaded later, optdp would meet the postgresql.conf line as a placeholder, which
        # any role can SHOW in a session that has not loaded optdp
        with Server(MODULE_DIR, ["optdp.ledger_conninfo = 'host=/nowhere'"]) as s:
            s.psql("CREATE EXTENSION optdp; CREATE ROLE analyst")
            self.assertEqual(s.psql("SET ROLE analyst; SHOW optdp.ledger_conninfo"), [["host=/nowhere"]])
            self.assertEqual(s.error_of("SELECT private_count(0.5)"),
                             "private_count: optdp.ledger_conninfo is honoured only with optdp in "
                             "shared_preload_libraries (there it is superuser-only from the server's start)")


class Schema(unittest.TestCase):
    """optdp in schema dp, public writable by every role (as in a database upgraded
    from before PostgreSQL 15): finding 5 of issue 26."""

    def setUp(self):
        self.db = "shadow_%s" % self._testMethodName[5:20]
        SERVER.psql("CREATE DATABASE %s" % self.db)
        self.addCleanup(SERVER.psql, "DROP DATABASE %s WITH (FORCE)" % self.db)
        self.sql("CREATE SCHEMA dp; CREATE EXTENSION optdp SCHEMA dp; GRANT USAGE ON SCHEMA dp TO analyst; "
                 "GRANT CREATE ON SCHEMA public TO PUBLIC; CREATE TABLE t AS SELECT g FROM generate_series(1, 50) g; "
                 "GRANT SELECT ON t TO analyst")

    def sql(self, text):
        return SERVER.psql(text, db=self.db)

    def error(self, text):
        return SERVER.error_of(text, db=self.db)

    def shadow(self):
        # the analyst's own, empty, tables of the ledger's names, first in every search_path
        self.sql("SET ROLE analyst; CREATE TABLE public.optdp_budget (id int, total_epsilon float8, "
                 "total_units bigint, spent_units bigint, created timestamptz, total_delta float8, "
                 "total_delta_units numeric, spent_delta_units numeric); "
                 "CREATE TABLE public.optdp_charges (id bigserial, time timestamptz DEFAULT now(), function text, "
                 "epsilon float8, units bigint, delta float8, sql text, pid int, delta_units numeric, rho float8, "
                 "released_keys bigint); "
                 "GRANT ALL ON public.optdp_budget, public.optdp_charges TO PUBLIC")

    def charges(self):
        return int(self.sql("SELECT count(*) FROM dp.optdp_charges")[0][0])

    def test_a_shadowing_table_is_never_the_ledger(self):
        self.shadow()
        self.sql("SET search_path = dp; SELECT dp_ledger_attach(1.0)")
        release = "SET ROLE analyst; SET search_path = public, dp; SELECT dp.private_count(0.5) FROM t"
        self.assertEqual(len(self.sql(release)), 1)
        for _ in range(2):
            self.assertEqual(self.error(release), EXHAUSTED)
        self.assertEqual(self.charges(), 1)
        self.assertEqual(self.sql("SELECT count(*) FROM public.optdp_budget"), [["0"]])
        self.assertEqual(self.sql("SELECT count(*) FROM public.optdp_charges"), [["0"]])

    def test_attach_writes_the_extensions_table_whatever_the_search_path(self):
        self.shadow()
        self.sql("SET search_path = public, dp; SELECT dp_ledger_attach(1.0); SELECT dp_ledger_attach(1.0, 0)")
        self.assertEqual(self.sql("SELECT total_epsilon FROM dp.optdp_budget"), [["1"]])
        self.assertEqual(self.sql("SELECT count(*) FROM public.optdp_budget"), [["0"]])
        self.assertEqual(self.sql("SET search_path = public, dp; SELECT dp_budget_remaining()"), [["1"]])
        self.sql("SET search_path = public, dp; SELECT private_count(0.5) FROM t")
        self.assertEqual(self.sql("SET search_path = public, dp; SELECT count(*) FROM dp_ledger_entries()"), [["1"]])

    def test_tables_that_are_not_the_extensions_are_refused(self):
        # a table of the ledger's name in the extension's schema that the extension does not own
        self.sql("SET search_path = dp; SELECT dp_ledger_attach(1.0); ALTER EXTENSION optdp DROP TABLE dp.optdp_budget")
        message = ("private_count: the ledger cannot be read: optdp_budget, optdp_charges, optdp_summary and "
                   "optdp_ledger_charge in the schema of the extension optdp are not all the extension's")
        for where in ("", " WHERE false"):
            self.assertEqual(self.error("SELECT dp.private_count(0.5) FROM t" + where), message)
        self.assertEqual(self.charges(), 0)
        self.sql("ALTER EXTENSION optdp ADD TABLE dp.optdp_budget")
        self.assertEqual(len(self.sql("SELECT dp.private_count(0.5) FROM t")), 1)
        self.assertEqual(self.charges(), 1)


if __name__ == "__main__":
    MODULE_DIR = os.path.abspath(sys.argv.pop(1))
    unittest.main()
