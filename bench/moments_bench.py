#!/usr/bin/python3
"""private_avg against the naive staircase_sum / private_count at the same total eps.

    /usr/bin/python3 bench/moments_bench.py --optdp build-bench/optdp.so [--releases 2000]

For each dataset (n rows, bounds containing 0 or not), many seeded releases
of each estimator; prints the root-mean-square error against the true mean
(of the clamped rows). The naive estimator splits eps in halves: a
staircase_sum at eps/2 and a private_count at alpha = e^(-eps/2).
Also times private_avg, private_var, private_median and staircase_sum
against sum() over --rows rows (one release each, --reps interleaved rounds,
medians), and one release over no rows (the fixed cost per release or group).
"""
import argparse
import math
import sqlite3
import statistics
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--optdp", required=True)
    ap.add_argument("--releases", type=int, default=2000)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=9)
    a = ap.parse_args()
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(a.optdp)
    db.execute("SELECT dp_seed(7)")
    eps = 1.0
    print("RMSE over %d releases at eps = %g (true mean of the clamped rows)" % (a.releases, eps))
    print("%-8s %-14s %12s %12s %8s" % ("n", "bounds", "private_avg", "naive", "ratio"))
    for n in (100, 1000, 100000):
        for lo, hi in ((0, 100), (1000, 1100)):
            db.execute("DROP TABLE IF EXISTS t")
            db.execute("CREATE TABLE t(x REAL)")
            db.executemany("INSERT INTO t VALUES (?)", [(lo + (i * 7919 % 1000) / 10,) for i in range(n)])
            truth = db.execute("SELECT avg(x) FROM t").fetchone()[0]
            half = math.exp(-eps / 2)
            errs = {"avg": [], "naive": []}
            reps = a.releases if n <= 1000 else a.releases // 10
            for _ in range(reps):
                v = db.execute("SELECT private_avg(x, ?, ?, ?) FROM t", (eps, lo, hi)).fetchone()[0]
                errs["avg"].append((v - truth) ** 2)
                s = db.execute("SELECT staircase_sum(x, ?, ?, ?) FROM t", (eps / 2, lo, hi)).fetchone()[0]
                c = db.execute("SELECT private_count(x, %r) FROM t" % half).fetchone()[0]
                naive = min(max(s / c, lo), hi) if c > 0 else (lo + hi) / 2
                errs["naive"].append((naive - truth) ** 2)
            r_avg, r_naive = (math.sqrt(statistics.fmean(errs[k])) for k in ("avg", "naive"))
            print("%-8d %-14s %12.4g %12.4g %8.2f" % (n, "[%g, %g]" % (lo, hi), r_avg, r_naive, r_naive / r_avg))
    db.execute("DROP TABLE IF EXISTS big")
    db.execute("CREATE TABLE big(x REAL)")
    db.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ?) "
               "INSERT INTO big SELECT (i * 7919 % 100000) / 1000.0 FROM s", (a.rows - 1,))

    # Interleaved: each round runs every query once, so drifts of the machine
    # fall on all of them alike; medians over the rounds.
    queries = ["SELECT sum(x) FROM big", "SELECT private_avg(x, 1.0, 0, 100) FROM big",
               "SELECT private_var(x, 1.0, 0, 100) FROM big", "SELECT private_median(x, 1.0, 0, 100) FROM big",
               "SELECT staircase_sum(x, 1.0, 0, 100) FROM big"]
    times = {q: [] for q in queries}
    for q in queries:
        db.execute(q).fetchall()  # warm-up
    for _ in range(a.reps):
        for q in queries:
            t0 = time.perf_counter()
            db.execute(q).fetchall()
            times[q].append(time.perf_counter() - t0)
    base = statistics.median(times[queries[0]])
    print("\n%d rows, median of %d interleaved rounds: sum() %.3f s" % (a.rows, a.reps, base))
    for q in queries[1:]:
        t = statistics.median(times[q])
        print("  %-50s %.3f s  %.2fx sum()" % (q, t, t / base))
    # The fixed cost of one release (parameters, charge, noise) over an empty table.
    db.execute("CREATE TABLE empty(x REAL)")
    for fn in ("private_avg", "private_var", "staircase_sum"):
        q = "SELECT %s(x, 1.0, 0, 100) FROM empty" % fn
        db.execute(q).fetchall()
        t0 = time.perf_counter()
        for _ in range(2000):
            db.execute(q).fetchall()
        print("  one release of %-14s over no rows: %.1f us" % (fn, (time.perf_counter() - t0) / 2000 * 1e6))

if __name__ == "__main__":
    main()
