#!/usr/bin/python3
"""private_groups built from different commits, side by side in one run.

One worker process per module (each loads its module into Debian's sqlite3 on
its own connection to DB, with mmap_size 4 GiB, cache_size 256 MiB and
temp_store=MEMORY, as bench/grouped_bench.py's connections), and every
repetition runs each worker's queries in turn, the workers' order and the
queries' order alternating. Reported per module: the median time of each
query, and per repetition the ratio of `public` to each baseline and to the
first module's `public`.

    /usr/bin/python3 bench/grouped_ab.py DB MODULE [MODULE...] [--reps 9] [--cpu]
        [--options 'max_groups=5, max_rows=2, lower=0, upper=100'] [--queries plain,public]

DB: a database of bench/grouped_bench.py (visits, keys). Modules in different
directories (a module's file name is its entry point's). Queries:
  plain    SELECT key, count(*), sum(value) FROM visits GROUP BY key
  unitkey  SELECT unit, key, count(*), sum(value) FROM visits GROUP BY unit, key
  scan     SELECT count(unit), count(key), count(value) FROM (rows_query)
  public   SELECT * FROM private_groups(rows_query, 1.0, options, 'SELECT k FROM keys')
with rows_query = 'SELECT unit, key, value FROM visits ORDER BY 1'. --cpu times
the worker's CPU time (time.process_time) instead of wall time: on a shared
machine it moves less.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grouped_bench  # noqa: E402

ROWS_QUERY = "SELECT unit, key, value FROM visits ORDER BY 1"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def worker(db_path, module, options, cpu):
    db = grouped_bench.connect(module, db_path)  # grouped_bench.py's settings
    queries = {
        "plain": "SELECT key, count(*), sum(value) FROM visits GROUP BY key",
        "unitkey": "SELECT unit, key, count(*), sum(value) FROM visits GROUP BY unit, key",
        "scan": "SELECT count(unit), count(key), count(value) FROM (%s)" % ROWS_QUERY,
        "public": "SELECT * FROM private_groups(%s, 1.0, %s, %s)" % (q(ROWS_QUERY), q(options), q("SELECT k FROM keys")),
    }
    clock = time.process_time if cpu else time.perf_counter
    for line in sys.stdin:
        t0 = clock()
        db.execute(queries[line.strip()]).fetchall()
        print(clock() - t0, flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--options", default="max_groups=5, max_rows=2, lower=0, upper=100")
    ap.add_argument("--queries", default="plain,public")
    args = ap.parse_args()
    labels = args.queries.split(",")
    if "public" not in labels:
        labels.append("public")
    procs = [subprocess.Popen([sys.executable, __file__, "--worker", args.db, m, args.options, "1" if args.cpu else "0"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for m in args.modules]

    def run(p, label):
        p.stdin.write(label + "\n")
        p.stdin.flush()
        return float(p.stdout.readline())

    for p in procs:  # warm-up
        for label in labels:
            run(p, label)
    res = [{label: [] for label in labels} for _ in procs]
    for r in range(args.reps):
        order = list(range(len(procs)))
        if r % 2:
            order.reverse()
        for i in order:
            for label in labels[r % len(labels):] + labels[:r % len(labels)]:
                res[i][label].append(run(procs[i], label))
    unit = "CPU" if args.cpu else "wall"
    print("%d repetitions, %s time, options %r" % (args.reps, unit, args.options))
    for i, m in enumerate(args.modules):
        print("%s: %s" % (m, "  ".join("%s %.1f ms" % (lab, statistics.median(res[i][lab]) * 1e3) for lab in labels)))
        for base in labels:
            if base != "public":
                per = [a / b for a, b in zip(res[i]["public"], res[i][base])]
                print("    public / %-8s %.2f [%.2f-%.2f]" % (base, statistics.median(per), min(per), max(per)))
        if i:
            per = [a / b for a, b in zip(res[i]["public"], res[0]["public"])]
            print("    public / first module's public  %.2f [%.2f-%.2f]" % (
                statistics.median(per), min(per), max(per)))
    for p in procs:
        p.stdin.close()
        p.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
