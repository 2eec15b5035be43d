#!/usr/bin/python3
"""Instructions per row of aggregates in a PostgreSQL backend, by callgrind:
the build's server runs under valgrind (every backend traced), each query runs
in a backend of its own over a table of N rows and one of 2N, and a query's
figure is (instructions of the 2N backend - of the N backend) / N, which
cancels everything but the rows. Deterministic where CPU times are not.

    /usr/bin/python3 bench/pg_instructions.py build-bench/postgres [more module dirs] [--rows N] [--query Q ...]

Each module directory's optdp_pg.so is measured in turn in the same data
directory (the no-op aggregates of bench/pg_floor.py from the first one's
pg_noop.so). Each backend first loads optdp (dp_seed(1)), so the planner hook
(extension/postgres/plan.cpp) plans the query. Figures: bench/README.md, "The
sums' parameters as one array".
"""
import argparse
import glob
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "postgres"))
from pgserver import Server, _client_env  # noqa: E402
sys.path.insert(0, HERE)
import pg_floor  # noqa: E402  (its no-op aggregates)

QUERIES = ["sum(x)", "noop_sum_ref(x, 1.0, 0, 1000)", "noop_sum_packed(x, '{1,0,1000}')",
           "staircase_sum(x, 1.0, 0, 1000)", "laplace_sum(x, 1.0, 0, 1000)",
           "count(*)", "noop_count(*)", "noop_count(0.5)", "private_count(0.5)", "gaussian_count(0.5)",
           "count(x)", "private_count(x, 0.5)", "var_samp(x)", "private_var(x, 1.0, 0, 1000)"]


def psql(s, *commands):
    argv = ["psql", "-X", "-qAt", "-h", s.socket_dir, "-U", "postgres"]
    for c in commands:
        argv += ["-c", c]
    r = subprocess.run(argv, capture_output=True, text=True, env=_client_env())
    if r.returncode:
        raise RuntimeError(r.stderr)
    return r.stdout


def total(path):
    """The instructions callgrind counted in the output file of an exited backend."""
    for _ in range(600):
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    if line.startswith(("summary:", "totals:")):
                        return int(line.split()[1])
        time.sleep(0.1)
    raise RuntimeError("no callgrind totals in " + path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module_dirs", nargs="+")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--query", action="append", help="an aggregate call over t(g int, x float8) (default: a set)")
    args = ap.parse_args()
    queries = args.query or QUERIES
    n = args.rows
    s = Server(args.module_dirs[0], ["max_parallel_workers_per_gather=0"])
    s.start()
    try:
        so = os.path.abspath(os.path.join(args.module_dirs[0], "pg_noop.so"))
        s.psql("CREATE EXTENSION optdp; CREATE TABLE t1 (g int, x float8); CREATE TABLE t2 (g int, x float8);"
               f"INSERT INTO t1 SELECT i % 1000, (i % 1001)::float8 FROM generate_series(1, {n}) i;"
               f"INSERT INTO t2 SELECT i % 1000, (i % 1001)::float8 FROM generate_series(1, {2 * n}) i;"
               "VACUUM ANALYZE t1; VACUUM ANALYZE t2;" + pg_floor.noop_sql(so))
        s.proc.send_signal(signal.SIGINT)
        s.proc.wait()
        postgres = glob.glob(os.path.join(s.tmp, "root", "lib", "postgresql", "*", "bin", "postgres"))[0]
        lib = os.path.dirname(os.path.dirname(postgres)) + "/lib"
        out = os.path.join(s.tmp, "callgrind")
        os.makedirs(out)
        os.chmod(out, 0o777)
        for m in args.module_dirs:
            subprocess.run(["cp", os.path.join(m, "optdp_pg.so"), os.path.join(lib, "optdp_pg.so")], check=True)
            with open(os.path.join(s.tmp, "valgrind.log"), "w") as log:
                s.proc = subprocess.Popen(s._as_user(["valgrind", "--tool=callgrind", "--trace-children=yes",
                                                      f"--callgrind-out-file={out}/cg.%p", postgres, "-D", s.data]),
                                          stdout=log, stderr=subprocess.STDOUT, cwd=s.tmp)
            for _ in range(600):
                if subprocess.run(["pg_isready", "-q", "-h", s.socket_dir, "-U", "postgres"]).returncode == 0:
                    break
                time.sleep(0.2)
            # the tables' pages and the catalogue's caches warm before the first figure
            psql(s, "SELECT count(*) FROM t1", "SELECT count(*) FROM t2",
                 "SELECT dp_seed(1)", "SELECT staircase_sum(x, 1.0, 0, 1000) FROM t1")
            for q in queries:
                counts = []
                for t in ("t1", "t2"):
                    pid = psql(s, "SELECT pg_backend_pid(), dp_seed(1)", f"SELECT {q} FROM {t}").split("|")[0].strip()
                    counts.append(total(f"{out}/cg.{pid}"))
                print(f"{os.path.basename(os.path.normpath(m)):20s} {q:36s} {(counts[1] - counts[0]) / n:8.1f} "
                      "instructions a row", flush=True)
            s.proc.send_signal(signal.SIGINT)
            s.proc.wait()
    finally:
        s.stop()


if __name__ == "__main__":
    main()
