#!/usr/bin/python3
"""What the privacy-budget ledger costs per query.

Queries per second of `SELECT private_count(0.5) FROM t` (t: a small table)
through Python's sqlite3 module, on one connection:

  none    no ledger attached (nothing is charged)
  full    dp_ledger_attach(path, 1e6, 'full')    WAL, synchronous=FULL (default)
  normal  dp_ledger_attach(path, 1e6, 'normal')  WAL, synchronous=NORMAL

plus `SELECT count(*) FROM t` (no optdp function) as the floor set by the
Python loop itself. Each mode runs --rounds times, interleaved, for --seconds
each; the median round is reported. Every charged query is one BEGIN IMMEDIATE
... COMMIT on the ledger file, so the figures depend on the file system that
holds it (--dir; default: a temporary directory).

    /usr/bin/python3 bench/ledger_bench.py [--module build/optdp.so] [--seconds 2] [--rounds 3] [--rows 100] [--dir D]

Standard library only; needs Debian's python3 (its sqlite3 can load extensions).
"""
import argparse
import os
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
QUERY = "SELECT private_count(0.5) FROM t"
FLOOR = "SELECT count(*) FROM t"


def connect(module, rows):
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(module)
    db.enable_load_extension(False)
    db.execute("CREATE TABLE t(x)")
    db.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(rows)])
    return db


def rate(db, sql, seconds):
    """(queries per second of wall-clock time, CPU microseconds per query) of sql on db, over about `seconds`."""
    n = 0
    run = db.execute
    c0 = time.process_time()
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _ in range(50):
            run(sql).fetchall()
        n += 50
        t = time.perf_counter()
        if t >= deadline:
            return n / (t - t0), (time.process_time() - c0) * 1e6 / n


def filesystem(path):
    try:
        out = subprocess.run(["df", "-T", path], capture_output=True, text=True, timeout=10).stdout.splitlines()
        fields = out[1].split()
        return "%s (%s)" % (fields[1], fields[0])
    except Exception:  # noqa: BLE001 - informational only
        return "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", default=os.environ.get("OPTDP_MODULE") or
                    os.path.join(HERE, "..", "build", "optdp.so"))
    ap.add_argument("--seconds", type=float, default=2.0, help="per round and mode (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per mode, interleaved (default 3)")
    ap.add_argument("--rows", type=int, default=100, help="rows of t (default 100)")
    ap.add_argument("--dir", help="directory for the ledgers (default: a temporary directory)")
    args = ap.parse_args()
    module = os.path.abspath(args.module)
    if not os.path.exists(module):
        sys.exit("optdp module not found: %s (give --module or set OPTDP_MODULE)" % module)
    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        sys.exit("%s: this Python's sqlite3 cannot load extensions; use Debian's /usr/bin/python3" % sys.executable)

    tmp = tempfile.mkdtemp(prefix="optdp-ledger-bench-", dir=args.dir)
    try:
        dbs = {"floor": connect(module, args.rows), "none": connect(module, args.rows)}
        for mode in ("full", "normal"):
            dbs[mode] = connect(module, args.rows)
            dbs[mode].execute("SELECT dp_ledger_attach(?, 1e6, ?)", (os.path.join(tmp, mode + ".ledger"), mode))
        for db in dbs.values():  # warm up (statement cache, sampler cache, ledger pages)
            rate(db, QUERY if db is not dbs["floor"] else FLOOR, 0.1)
        samples = {m: [] for m in dbs}
        for _ in range(args.rounds):
            for mode, db in dbs.items():
                samples[mode].append(rate(db, FLOOR if mode == "floor" else QUERY, args.seconds))
        fs = filesystem(tmp)
        charged = {m: dbs[m].execute("SELECT count(*) FROM dp_ledger_entries").fetchone()[0] for m in ("full", "normal")}
        for db in dbs.values():
            db.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    qps = {m: statistics.median(q for q, _ in v) for m, v in samples.items()}
    cpu = {m: statistics.median(c for _, c in v) for m, v in samples.items()}
    print("ledger_bench: %s, rows=%d, %d rounds x %.1f s per mode, median round" %
          (QUERY, args.rows, args.rounds, args.seconds))
    print("python %s, SQLite %s, %s, %d CPUs, load average %.2f, ledger on %s" %
          (platform.python_version(), sqlite3.sqlite_version, platform.machine(), os.cpu_count(),
           os.getloadavg()[0], fs))
    print()
    print("%-28s %12s %12s %10s %14s" % ("mode", "queries/s", "us/query", "vs none", "CPU us/query"))
    rows = [("count(*) (Python loop floor)", "floor"), ("no ledger", "none"),
            ("ledger, durability 'normal'", "normal"), ("ledger, durability 'full'", "full")]
    for label, m in rows:
        print("%-28s %12.0f %12.1f %9.3fx %14.1f" % (label, qps[m], 1e6 / qps[m], qps[m] / qps["none"], cpu[m]))
    print()
    print("'full' is %.1fx slower than 'normal'; a charge costs about %.1f us ('normal') and %.1f us ('full') "
          "on top of the query" % (qps["normal"] / qps["full"], 1e6 / qps["normal"] - 1e6 / qps["none"],
                                   1e6 / qps["full"] - 1e6 / qps["none"]))
    print("charges recorded: full %d, normal %d; spread of rounds (min..max q/s): %s" %
          (charged["full"], charged["normal"],
           ", ".join("%s %.0f..%.0f" % (m, min(q for q, _ in samples[m]), max(q for q, _ in samples[m]))
                     for m in ("none", "normal", "full"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
