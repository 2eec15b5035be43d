#!/usr/bin/env python3
"""Instructions per row of optdp's PostgreSQL aggregates against the built-ins,
counted by valgrind (callgrind), so independent of the machine's load.

Usage: bench/pg_rowcost.py <build>/postgres [--rows N] [--query SQL ...]
Starts a throw-away server (tests/postgres/pgserver.py), loads table
t(g int, x float8) of N rows (default 2,000,000; as bench/pg_bench.py's),
then restarts the server under valgrind --tool=callgrind (every process:
backends are forks of the postmaster), collecting only inside PortalRun (the
execution: the scan, the transitions, the admission and the final function;
not parsing or planning). Each query runs serially in a backend of its own,
after a warm-up that reads the table into shared buffers. Prints each
query's instructions over N (the fixed cost of the admission and the final
function included: under 0.1 of an instruction a row at 2M rows; the
ledger's own connection is another backend, not counted) and each private
aggregate's ratio to its built-in. Figures: bench/README.md, "Per-row
instructions, PostgreSQL aggregates against built-ins".
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


def instructions(server, out_dir, query):
    """Instructions inside PortalRun of the backend that ran query (serially)."""
    r = server.psql("SET max_parallel_workers_per_gather = 0; SELECT pg_backend_pid(), %s FROM t" % query)
    pid = r[-1][0]
    path = os.path.join(out_dir, "cg." + pid)
    for _ in range(600):  # written when the backend exits, after psql's
        if os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path) as f:
                text = f.read()
            m = re.search(r"^(?:totals|summary): (\d+)", text, re.M)
            if m:
                if os.environ.get("OPTDP_ROWCOST_KEEP"):
                    os.rename(path, os.environ["OPTDP_ROWCOST_KEEP"] + "." + re.sub(r"\W+", "_", query))
                return int(m.group(1))
        time.sleep(0.1)
    raise RuntimeError("no callgrind output for " + query)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module_dir")
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--query", action="append", help="only these (the pairs of bench/pg_bench.py by default)")
    args = ap.parse_args()
    with Server(args.module_dir, ["shared_buffers=256MB", "autovacuum=off"]) as s:
        s.psql("CREATE EXTENSION optdp;"
               "CREATE TABLE t (g int, x float8);"
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
                                              "--toggle-collect=PortalRun",
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
            per_row[q] = instructions(s, out_dir, q) / args.rows
            print("%-40s %8.1f instructions/row" % (q, per_row[q]), flush=True)
        print()
        for builtin, private in PAIRS:
            if builtin in per_row and private in per_row:
                print("%-40s / %-12s %.3f" % (private, builtin, per_row[private] / per_row[builtin]))


if __name__ == "__main__":
    main()
