#!/usr/bin/env python3
"""Instructions per row of optdp's PostgreSQL aggregates against the built-ins,
counted by valgrind (callgrind), so independent of the machine's load.

Usage: bench/pg_rowcost.py <build>/postgres [--rows N] [--workers W] [--query SQL ...]
Starts a throw-away server (tests/postgres/pgserver.py), loads table
t(g int, x float8) of N rows (default 2,000,000; as bench/pg_bench.py's),
then restarts the server under valgrind --tool=callgrind (every process:
backends and parallel workers are forks of the postmaster), collecting only
inside PortalRun and ParallelQueryMain (the execution: the scan, the
transitions, the admission and the final function; not parsing or
planning). Each query runs in a backend of its own, serially (or with W
parallel workers, their instructions added to the leader's), after a
warm-up that reads the table into shared buffers. Prints each query's
instructions over N and each private aggregate's ratio to its built-in.
The fixed costs are included: the admission and the final function (under
0.1 of an instruction a row at 2M rows serially); with workers, each
worker's start, which for optdp's aggregates loads optdp_pg.so unless it is
preloaded. With workers the totals are not reproducible (under valgrind the
split of the table between the processes, and the leader's waits, change
from query to query): bench/README.md. The ledger's own connection is
another backend, not counted.
Figures: bench/README.md, "Per-row instructions, PostgreSQL aggregates
against built-ins".
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "postgres"))
from pgserver import Server, _pg, _server_env  # noqa: E402
from pg_bench import PAIRS  # noqa: E402

SERIAL = "SET max_parallel_workers_per_gather = 0; "
# as bench/pg_bench.py's parallel plans; the table's parallel_workers fixes their number
PARALLEL = ("SET max_parallel_workers_per_gather = %d; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
            "SET min_parallel_table_scan_size = 0; ")


def total(path):
    """The instructions a finished process's callgrind file records, or None while it is being written."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    with open(path) as f:
        m = re.search(r"^(?:totals|summary): (\d+)", f.read(), re.M)
    return int(m.group(1)) if m else None


def instructions(server, out_dir, query, workers):
    """Instructions inside PortalRun of the backend that ran query and of its parallel workers."""
    before = set(os.listdir(out_dir))
    r = server.psql((PARALLEL % workers if workers else SERIAL) + "SELECT pg_backend_pid(), %s FROM t" % query)
    pid = r[-1][0]
    path = os.path.join(out_dir, "cg." + pid)
    for _ in range(600):  # written when the backend exits, after psql's
        n = total(path)
        if n is not None:
            break
        time.sleep(0.1)
    else:
        raise RuntimeError("no callgrind output for " + query)
    if os.environ.get("OPTDP_ROWCOST_KEEP"):
        os.rename(path, os.environ["OPTDP_ROWCOST_KEEP"] + "." + re.sub(r"\W+", "_", query))
    if workers:
        # the workers' files (ParallelQueryMain), not the ledger connection's
        # backend; under valgrind a worker starts late, and the leader reads
        # most of the table (the total over the processes is what counts)
        time.sleep(2)
        for f in set(os.listdir(out_dir)) - before - {"cg." + pid}:
            path = os.path.join(out_dir, f)
            for _ in range(600):
                m = total(path)
                if m is not None:
                    break
                time.sleep(0.1)
            with open(path) as text:
                if "ParallelQueryMain" in text.read():
                    n += m
            os.unlink(path)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module_dir")
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--workers", type=int, default=0, help="parallel workers per query (0: serial)")
    ap.add_argument("--query", action="append", help="only these (the pairs of bench/pg_bench.py by default)")
    args = ap.parse_args()
    with Server(args.module_dir, ["shared_buffers=256MB", "autovacuum=off"]) as s:
        s.psql("CREATE EXTENSION optdp;"
               "CREATE TABLE t (g int, x float8) WITH (parallel_workers = %d);" % max(args.workers, 1) +
               f"INSERT INTO t SELECT i % 1000, (i % 1001)::float8 FROM generate_series(1, {args.rows}) i;"
               "VACUUM (FREEZE, ANALYZE) t; CHECKPOINT;")
        s.proc.send_signal(signal.SIGINT)
        s.proc.wait(timeout=60)
        out_dir = os.path.join(s.tmp, "callgrind")
        os.mkdir(out_dir)
        if os.getuid() == 0:
            os.chown(out_dir, *s._server_ids())
        postgres = os.path.join(s.tmp, "root", os.path.relpath(_pg("--bindir"), "/usr"), "postgres")
        s.proc = subprocess.Popen(s._as_user(["valgrind", "--tool=callgrind", "--trace-children=yes",
                                              "--toggle-collect=PortalRun", "--toggle-collect=ParallelQueryMain",
                                              "--callgrind-out-file=" + os.path.join(out_dir, "cg.%p"),
                                              postgres, "-D", s.data]),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=s.tmp,
                                  env=_server_env())
        for _ in range(1200):
            try:
                s.psql("SELECT 1")
                break
            except Exception:
                time.sleep(0.25)
        s.psql("SELECT count(*) FROM t")  # the table into shared buffers
        queries = args.query or list(dict.fromkeys(q for pair in PAIRS for q in pair))
        per_row = {}
        for q in queries:
            per_row[q] = instructions(s, out_dir, q, args.workers) / args.rows
            print("%-40s %8.1f instructions/row" % (q, per_row[q]), flush=True)
        print()
        for builtin, private in PAIRS:
            if builtin in per_row and private in per_row:
                print("%-40s / %-12s %.3f" % (private, builtin, per_row[private] / per_row[builtin]))


if __name__ == "__main__":
    main()
