#!/usr/bin/env python3
"""Per-release cost at SQL level (issue 29, "every release at its floor"):
30,000 grouped releases (groups of one row) of count(*), private_count at
noise sd 200, and gaussian_count at sigma 200 (rho = 1 / (2 * 200^2)), in
one SQLite connection, the three statements interleaved, each timed --reps
times; prints each one's median and the ratios gaussian / geometric and
private / count(*). Then private_groups with Gaussian noise over 10,000
units in 100 public keys (one row each, a database file in a temporary
directory), counts alone against counts and sums: their ratio per release.

  /usr/bin/python3 bench/floors_bench.py --optdp build-bench/optdp.so [--groups 30000] [--reps 9]
"""
import argparse
import os
import tempfile
import math
import sqlite3
import statistics
import time


def geometric_alpha_for_sd(sd):
    # the two-sided geometric's variance is 2 alpha / (1 - alpha)^2: solve for alpha
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if math.sqrt(2 * mid) / (1 - mid) < sd:
            lo = mid
        else:
            hi = mid
    return lo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--optdp", required=True)
    ap.add_argument("--groups", type=int, default=30000)
    ap.add_argument("--reps", type=int, default=9)
    ap.add_argument("--sd", type=float, default=200.0)
    a = ap.parse_args()
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(a.optdp)
    db.execute("CREATE TABLE t(k INTEGER)")
    db.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < ?) "
               "INSERT INTO t SELECT i FROM s", (a.groups - 1,))
    alpha = geometric_alpha_for_sd(a.sd)
    rho = 1 / (2 * a.sd * a.sd)
    queries = [("count(*)", "SELECT k, count(*) FROM t GROUP BY k"),
               ("private_count", "SELECT k, private_count(%r) FROM t GROUP BY k" % alpha),
               ("gaussian_count", "SELECT k, gaussian_count(%r) FROM t GROUP BY k" % rho)]
    times = {name: [] for name, _ in queries}
    for _ in range(a.reps):
        for name, sql in queries:
            t = time.perf_counter()
            rows = db.execute(sql).fetchall()
            times[name].append(time.perf_counter() - t)
            assert len(rows) == a.groups
    med = {name: statistics.median(v) for name, v in times.items()}
    print("%d grouped releases, noise sd %g, median of %d runs (interleaved)" % (a.groups, a.sd, a.reps))
    for name, _ in queries:
        print("  %-15s %8.1f ms   %6.2f us per release" % (name, med[name] * 1e3, med[name] / a.groups * 1e6))
    print("  gaussian_count / private_count = %.2fx" % (med["gaussian_count"] / med["private_count"]))
    print("  private_count / count(*)       = %.2fx" % (med["private_count"] / med["count(*)"]))
    grouped(a)


def grouped(a):
    with tempfile.TemporaryDirectory() as d:
        db = sqlite3.connect(os.path.join(d, "g.db"))  # private_groups reads a database file
        db.enable_load_extension(True)
        db.load_extension(a.optdp)
        db.execute("CREATE TABLE r(u INTEGER, k INTEGER, v REAL)")
        db.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 9999) "
                   "INSERT INTO r SELECT i, i % 100, (i % 7) * 1.5 FROM s")
        db.commit()
        opts = "noise=gaussian, delta=1e-6, max_groups=1, max_rows=1"
        queries = [("counts", "SELECT count(*) FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, "
                              "'%s', 'SELECT DISTINCT k FROM r')" % opts),
                   ("counts and sums", "SELECT count(*) FROM private_groups('SELECT u, k, v FROM r ORDER BY 1', 1.0, "
                                       "'%s, lower=0, upper=10', 'SELECT DISTINCT k FROM r')" % opts)]
        times = {name: [] for name, _ in queries}
        for _ in range(a.reps):
            for name, sql in queries:
                t = time.perf_counter()
                db.execute(sql).fetchall()
                times[name].append(time.perf_counter() - t)
        med = {name: statistics.median(v) for name, v in times.items()}
        print("private_groups, noise=gaussian, 10,000 units, 100 keys, median of %d runs (interleaved)" % a.reps)
        for name, _ in queries:
            print("  %-16s %8.2f ms per release" % (name, med[name] * 1e3))
        print("  counts and sums / counts = %.2fx" % (med["counts and sums"] / med["counts"]))


if __name__ == "__main__":
    main()
