#!/usr/bin/python3
"""The time of one charge against the length of the ledger's history (issue 29,
item 3: "a charge at 10,000 ledger entries within 2x the time of a charge at
10"), on SQLite and, given the build's postgres directory, on PostgreSQL 15.

Two ledgers with a (1, 1e-6) budget, one holding 10 entries and one 10,000
(gaussian_count at sigma 500, recorded with shift 1; zCDP still fits at 10,000:
rho 0.02 of the 0.0244 the budget allows), are charged in turn, ROUNDS rounds
of BATCH releases of the same one-row gaussian_count on each (the short one
stays short: 10 + ROUNDS * BATCH entries). Reported: per charge, the median
over rounds, and the median of the per-round ratios long / short (both
measured seconds apart, so slow phases of the shared machine cancel).
SQLite: process CPU time (the ledger runs in this process) and wall time;
PostgreSQL: the client's wall time (the charge runs in two server backends),
with the server's log counting the statements the ledger's connection sends
per charge (its round trips).

    /usr/bin/python3 bench/ledger_charge_bench.py build/optdp.so [build/postgres]
"""
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIGMA = 500.0
RHO = repr(1 / (2 * SIGMA * SIGMA))
LONG = 10000
ROUNDS, BATCH = 15, 10
ONE = "SELECT gaussian_count(%s) FROM t WHERE k = 0" % RHO
FILL = "SELECT k, gaussian_count(%s) FROM t WHERE k < %%d GROUP BY k" % RHO


def report(engine, what, short, long_):
    ratios = [b / a for a, b in zip(short, long_)]
    print("%s %s per charge: %d entries %.3f ms, %d entries %.3f ms; ratio %.2f (median of per-round ratios; "
          "range %.2f-%.2f)" % (engine, what, 10, statistics.median(short) * 1e3, LONG, statistics.median(long_) * 1e3,
                                statistics.median(ratios), min(ratios), max(ratios)))


def sqlite_bench(module):
    d = tempfile.mkdtemp(prefix="optdp-charge-bench-")
    conns = {}
    for n in (10, LONG):
        db = sqlite3.connect(":memory:", isolation_level=None)
        db.enable_load_extension(True)
        db.load_extension(module)
        db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY)")
        db.execute("WITH RECURSIVE n(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM n WHERE v < %d) "
                   "INSERT INTO t SELECT v FROM n" % (LONG - 1))
        db.execute("SELECT dp_ledger_attach(?, 1.0, 1e-6, 'normal')", (os.path.join(d, "l%d" % n),))
        db.execute(FILL % n).fetchall()
        assert db.execute("SELECT count(*) FROM dp_ledger_entries").fetchone()[0] == n
        conns[n] = db
    cpu = {10: [], LONG: []}
    wall = {10: [], LONG: []}
    for _ in range(ROUNDS):
        for n in (10, LONG):
            w, c = time.perf_counter(), time.process_time()
            for _ in range(BATCH):
                conns[n].execute(ONE).fetchone()
            cpu[n].append((time.process_time() - c) / BATCH)
            wall[n].append((time.perf_counter() - w) / BATCH)
    accounts = conns[LONG].execute("SELECT accounting, fits FROM dp_ledger_accounts").fetchall()
    print("SQLite: the long ledger's accountings at its end: %s" % accounts)
    report("SQLite", "CPU", cpu[10], cpu[LONG])
    report("SQLite", "wall", wall[10], wall[LONG])


def postgres_bench(module_dir):
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "postgres"))
    from pgserver import Server, Session
    settings = ["log_statement = 'all'", "log_line_prefix = '[%a] '"]
    with Server(module_dir, settings=settings) as server:
        for n in (10, LONG):
            server.psql("CREATE DATABASE l%d" % n)
            server.psql("CREATE EXTENSION optdp; CREATE TABLE t(k int PRIMARY KEY); "
                        "INSERT INTO t SELECT g FROM generate_series(0, %d) g; ANALYZE t; "
                        "SELECT dp_ledger_attach(1, 1e-6)" % (LONG - 1), db="l%d" % n)
            with Session(server, "l%d" % n) as s:  # no client timeout: 10,000 charges take a while
                s.ok(FILL % n)
        sessions = {n: Session(server, "l%d" % n) for n in (10, LONG)}
        wall = {10: [], LONG: []}
        log_before = os.path.getsize(server.log)
        for _ in range(ROUNDS):
            for n in (10, LONG):
                w = time.perf_counter()
                for _ in range(BATCH):
                    sessions[n].ok(ONE)
                wall[n].append((time.perf_counter() - w) / BATCH)
        with open(server.log) as f:
            f.seek(log_before)
            # simple queries log "statement: ...", PQexecParams' "execute <unnamed>: ..."
            ledger = [re.sub(r"^\[optdp ledger\] LOG:  (statement|execute <unnamed>): ", "", line).strip()
                      for line in f if re.match(r"\[optdp ledger\] LOG:  (statement|execute <unnamed>): ", line)]
        charges = 2 * ROUNDS * BATCH
        counts = sessions[LONG].ok("SELECT count(*) FROM dp_ledger_entries")[0][0]
        print("PostgreSQL: %s entries in the long ledger at the end; the ledger's connections sent %d statements "
              "for %d charges:" % (counts, len(ledger), charges))
        kinds = {}
        for line in ledger:
            head = re.sub(r"\(.*", "(...)", line)[:100]
            kinds[head] = kinds.get(head, 0) + 1
        for head, k in sorted(kinds.items(), key=lambda x: -x[1]):
            print("  %5d  %s" % (k, head))
        for s in sessions.values():
            s.close()
        report("PostgreSQL", "wall", wall[10], wall[LONG])


if __name__ == "__main__":
    sqlite_bench(sys.argv[1])
    if len(sys.argv) > 2:
        postgres_bench(sys.argv[2])
