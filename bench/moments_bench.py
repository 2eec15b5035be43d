#!/usr/bin/python3
"""private_avg against the naive staircase_sum / private_count at the same total eps.

    /usr/bin/python3 bench/moments_bench.py --optdp build-bench/optdp.so [--releases 2000]

For each dataset (n rows, bounds containing 0 or not), many seeded releases
of each estimator; prints the root-mean-square error against the true mean
(of the clamped rows). The naive estimator splits eps in halves: a
staircase_sum at eps/2 and a private_count at alpha = e^(-eps/2).
Also times private_avg against sum() over --rows rows (one release each,
median of --reps).
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
    ap.add_argument("--reps", type=int, default=5)
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

    def timed(sql):
        db.execute(sql).fetchall()
        out = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            db.execute(sql).fetchall()
            out.append(time.perf_counter() - t0)
        return statistics.median(out)
    base = timed("SELECT sum(x) FROM big")
    print("\n%d rows, median of %d: sum() %.3f s" % (a.rows, a.reps, base))
    for sql in ("SELECT private_avg(x, 1.0, 0, 100) FROM big", "SELECT private_var(x, 1.0, 0, 100) FROM big",
                "SELECT private_median(x, 1.0, 0, 100) FROM big", "SELECT staircase_sum(x, 1.0, 0, 100) FROM big"):
        t = timed(sql)
        print("  %-50s %.3f s  %.2fx sum()" % (sql, t, t / base))


if __name__ == "__main__":
    main()
