#!/usr/bin/python3
"""What private_groups costs against the SQL that computes the same bounded statistic.

Builds (once, cached in --dir) a SQLite file with

  visits(unit INTEGER, key INTEGER|TEXT, seq INTEGER, value REAL,
         PRIMARY KEY(unit, key, seq)) WITHOUT ROWID
  keys(k PRIMARY KEY)                -- the --keys public keys

--rows rows, --units units (rows/units rows each, consecutive), --keys keys.
The table is stored in unit order (its primary key starts with unit), so the
rows query's ORDER BY 1 is a plain scan with no sort (the script prints the
query plans to show it), and the baseline's inner GROUP BY unit, key needs no
sort either. Each unit's rows fall among 20 consecutive keys (so units repeat
keys and max_rows binds as well as max_groups); values are spread over
[-10, 110) (so clamping to [0, 100] matters).

Queries (one connection each for "no ledger" and "ledger full"):

  scan       SELECT count(unit), count(key), count(value) FROM (rows_query)
             -- the rows query alone: the floor of any consumer of it
  sql        SELECT key, sum(min(c, 2)), sum(s) FROM (SELECT unit, key,
             count(*) c, sum(max(0, min(100, value))) s FROM visits
             GROUP BY unit, key) GROUP BY key
             -- the baseline: per-unit pre-aggregation then GROUP BY key;
             it bounds rows per (unit, key) but cannot sample max_groups
             keys per unit (nor max_rows rows for the sum: it keeps all of
             them), so it does a little less than private_groups
  public     SELECT * FROM private_groups(rows_query, 1.0,
             'max_groups=3, max_rows=2, lower=0, upper=100', 'SELECT k FROM keys')
  private    the same with 'delta=1e-6' and no keys_query (partition selection)
  public+ledger   public, on a connection with
             dp_ledger_attach(path, 1e6, 0.5, 'full')

with rows_query = 'SELECT unit, key, value FROM visits ORDER BY 1'.
Then the ledger pair (public vs public+ledger) again on small tables
(--ledger-rows rows each, same shape, rows/10 units) where the ledger's fixed cost (one
synchronous=FULL commit per release) is visible, --ledger-reps times. Each small
table is the main database of its own two connections: private_groups runs its
queries on optdp's own connection to the main database's file, which does not
see databases ATTACHed to the user's connection.

Every query runs once as a warm-up, then once per repetition, the starting
query rotating each repetition. Reported: median, min, max wall time and
median CPU time per query; ratios as the ratio of the medians and as the
median (min-max) of the per-repetition ratios (each pair measured in the same
repetition, seconds apart).

    /usr/bin/python3 bench/grouped_bench.py --module build/optdp.so [--rows 10000000] [--units 1000000]
        [--keys 1000] [--key-type integer|text] [--reps 5] [--ledger-rows 100000,10000,1000] [--ledger-reps 31] [--dir D]
        [--options 'max_groups=3, max_rows=2, lower=0, upper=100']

Standard library only; needs Debian's python3 (its sqlite3 can load extensions).
"""
import argparse
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS_QUERY = "SELECT unit, key, value FROM {t} ORDER BY 1"
OPTIONS = "max_groups=3, max_rows=2, lower=0, upper=100"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def queries(table, keys_table, options=OPTIONS):
    rows_query = ROWS_QUERY.format(t=table)
    return {
        "scan": "SELECT count(unit), count(key), count(value) FROM (%s)" % rows_query,
        "sql": ("SELECT key, sum(min(c, 2)), sum(s) FROM (SELECT unit, key, count(*) c, "
                "sum(max(0, min(100, value))) s FROM %s GROUP BY unit, key) GROUP BY key" % table),
        "public": "SELECT * FROM private_groups(%s, 1.0, %s, %s)" % (
            q(rows_query), q(options), q("SELECT k FROM %s" % keys_table)),
        "private": "SELECT * FROM private_groups(%s, 1.0, %s)" % (q(rows_query), q(options + ", delta=1e-6")),
    }


def generate(path, rows, units, keys, key_type):
    """Writes the table to path (a temporary name first, renamed when complete)."""
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.remove(tmp)
    db = sqlite3.connect(tmp, isolation_level=None)
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("PRAGMA cache_size=-262144")
    kt = "INTEGER" if key_type == "integer" else "TEXT"
    db.execute("CREATE TABLE visits(unit INTEGER, key %s, seq INTEGER, value REAL, "
               "PRIMARY KEY(unit, key, seq)) WITHOUT ROWID" % kt)
    db.execute("CREATE TABLE keys(k %s PRIMARY KEY)" % kt)

    def key_expr(n):
        return n if key_type == "integer" else "printf('k%%04d', %s)" % n

    t0 = time.perf_counter()
    db.execute("BEGIN")
    db.execute("WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d) "
               "INSERT INTO keys SELECT %s FROM c" % (keys - 1, key_expr("i")))
    # unit = i * units / rows (rows/units consecutive rows each); h a
    # multiplicative hash of i; key among 20 consecutive keys from unit*37.
    db.execute(
        "WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < %d), "
        "h(i, u, h) AS (SELECT i, i * %d / %d, (i * 2654435761) %% 4294967296 FROM c) "
        "INSERT INTO visits SELECT u, %s, i, (h %% 12001) / 100.0 - 10 FROM h"
        % (rows - 1, units, rows, key_expr("(u * 37 + (h >> 9) %% 20) %% %d" % keys)))
    db.execute("COMMIT")
    db.close()
    os.replace(tmp, path)
    return time.perf_counter() - t0


def ensure(dirpath, rows, units, keys, key_type):
    path = os.path.join(dirpath, "grouped_%s_%d_%d_%d.db" % (key_type, rows, units, keys))
    if os.path.exists(path):
        print("data: %s (cached)" % path)
    else:
        secs = generate(path, rows, units, keys, key_type)
        print("data: %s generated in %.1f s" % (path, secs))
    return path


def connect(module, path, ledger=None):
    db = sqlite3.connect(path, isolation_level=None)
    # The same settings for every query: memory-mapped reads, a 256 MiB page
    # cache and in-memory temporary b-trees (the baseline's GROUP BY key sorts).
    db.execute("PRAGMA mmap_size=4294967296")
    db.execute("PRAGMA cache_size=-262144")
    db.execute("PRAGMA temp_store=MEMORY")
    db.enable_load_extension(True)
    db.load_extension(module)
    db.enable_load_extension(False)
    if ledger:
        db.execute("SELECT dp_ledger_attach(?, 1e6, 0.5, 'full')", (ledger,)).fetchall()
    return db


def timed(db, sql):
    c0 = time.process_time()
    t0 = time.perf_counter()
    out = db.execute(sql).fetchall()
    return time.perf_counter() - t0, time.process_time() - c0, len(out)


def run(cases, reps):
    """cases: [(label, db, sql)]. Returns {label: [(wall, cpu)]} over reps, after one warm-up each."""
    res = {label: [] for label, _, _ in cases}
    rows = {}
    for label, db, sql in cases:
        rows[label] = timed(db, sql)[2]
    for r in range(reps):
        for j in range(len(cases)):
            label, db, sql = cases[(r + j) % len(cases)]
            w, c, _ = timed(db, sql)
            res[label].append((w, c))
    return res, rows


def report(res, rows, unit, scale):
    print("%-16s %10s %10s %10s %10s %6s" % ("query", "median", "min", "max", "cpu med", "rows"))
    for label, v in res.items():
        w = [x[0] for x in v]
        c = [x[1] for x in v]
        print("%-16s %10.3f %10.3f %10.3f %10.3f %6d  (%s)" % (
            label, statistics.median(w) * scale, min(w) * scale, max(w) * scale,
            statistics.median(c) * scale, rows[label], unit))


def ratio(res, a, b, target=None):
    wa = [x[0] for x in res[a]]
    wb = [x[0] for x in res[b]]
    per = [x / y for x, y in zip(wa, wb)]
    cper = [x[1] / y[1] for x, y in zip(res[a], res[b])]
    line = "%-16s / %-8s  %5.2fx (medians)  per-rep wall %5.2fx [%4.2f-%4.2f]  per-rep cpu %5.2fx" % (
        a, b, statistics.median(wa) / statistics.median(wb), statistics.median(per), min(per), max(per),
        statistics.median(cper))
    if target is not None:
        line += "  target <= %.2fx: %s" % (target, "MET" if statistics.median(per) <= target else "NOT MET")
    print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", default=os.environ.get("OPTDP_MODULE") or
                    os.path.join(HERE, "..", "build", "optdp.so"))
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--units", type=int, default=None, help="default rows / 10")
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--key-type", choices=("integer", "text"), default="integer")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--options", default=OPTIONS, help="private_groups' options (default %(default)r)")
    ap.add_argument("--ledger-rows", default="100000,10000,1000",
                    help="rows of the small tables of the ledger pair, comma-separated (default 100000,10000,1000)")
    ap.add_argument("--ledger-reps", type=int, default=31)
    ap.add_argument("--dir", help="directory for the data and the ledger (default: a temporary directory; "
                    "bench/run.sh passes its build directory so that the data is generated once)")
    args = ap.parse_args()
    units = args.units or max(1, args.rows // 10)
    ledger_rows = [int(x) for x in args.ledger_rows.split(",") if x.strip()]
    d = args.dir or tempfile.mkdtemp(prefix="optdp-grouped-")
    os.makedirs(d, exist_ok=True)

    print("python %s, SQLite %s, %s, %d CPUs" % (platform.python_version(), sqlite3.sqlite_version,
                                                   platform.machine(), os.cpu_count()))
    print("module: %s" % os.path.abspath(args.module))
    big = ensure(d, args.rows, units, args.keys, args.key_type)
    smalls = [ensure(d, n, max(1, n // 10), args.keys, args.key_type) for n in ledger_rows]
    ledger = os.path.join(d, "grouped_bench.ledger")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(ledger + suffix):
            os.remove(ledger + suffix)

    plain = connect(args.module, big)
    led = connect(args.module, big, ledger)
    Q = queries("visits", "keys", args.options)
    for label in ("scan", "sql"):
        plan = plain.execute("EXPLAIN QUERY PLAN " + Q[label]).fetchall()
        print("plan %-6s %s" % (label + ":", "; ".join(r[-1] for r in plan)))

    print("\n== %d rows, %d units, %d %s keys, %d repetitions (seconds)" % (
        args.rows, units, args.keys, args.key_type, args.reps))
    cases = [("scan", plain, Q["scan"]), ("sql", plain, Q["sql"]), ("public", plain, Q["public"]),
             ("private", plain, Q["private"]), ("public+ledger", led, Q["public"])]
    res, rows = run(cases, args.reps)
    report(res, rows, "s", 1.0)
    ratio(res, "public", "sql", 1.5)
    ratio(res, "private", "sql", 1.5)
    ratio(res, "public", "scan")
    ratio(res, "private", "scan")
    ratio(res, "sql", "scan")
    ratio(res, "public+ledger", "public", 1.2)

    S = queries("visits", "keys", args.options)
    for small, n in zip(smalls, ledger_rows):
        print("\n== ledger: %d rows, %d units, %d keys, %d repetitions (milliseconds)" % (
            n, max(1, n // 10), args.keys, args.ledger_reps))
        cases = [("public", connect(args.module, small), S["public"]),
                 ("public+ledger", connect(args.module, small, ledger), S["public"])]
        res, rows = run(cases, args.ledger_reps)
        report(res, rows, "ms", 1e3)
        ratio(res, "public+ledger", "public", 1.2)
    spent = led.execute("SELECT dp_budget_spent()").fetchone()[0]
    print("ledger: %s, spent %g after all releases" % (ledger, spent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
