#!/usr/bin/python3
"""private_groups with Gaussian against optimal (geometric) noise: the median
absolute error of the released counts, and where the two cross over.

A database of units each in exactly G of 1,000 public keys (one row per key),
so that bounding with max_groups=G, max_rows=1 keeps every row and the true
count of each key is known. For each G, `--reps` releases of each noise at
epsilon = 1 (Gaussian: delta = 1e-6 through zCDP); the median over all keys and
releases of |released - true|.

usage: gaussian_groups_bench.py --module build/optdp.so [--units 2000] [--reps 5] [--g 1,2,5,10,20,50,100]
"""
import argparse
import os
import random
import sqlite3
import statistics
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", required=True)
    ap.add_argument("--units", type=int, default=2000)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--g", default="1,2,5,10,20,50,100")
    args = ap.parse_args()
    rnd = random.Random(1)
    print("G | median |error| optimal (geometric) | median |error| gaussian | ratio")
    print("---:|---:|---:|---:")
    for G in [int(x) for x in args.g.split(",")]:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.db")
            db = sqlite3.connect(path)
            db.execute("CREATE TABLE r(u INTEGER, k INTEGER)")
            db.execute("CREATE TABLE ks(k INTEGER)")
            db.executemany("INSERT INTO ks VALUES (?)", [(k,) for k in range(args.keys)])
            rows, true = [], [0] * args.keys
            for u in range(args.units):
                for k in rnd.sample(range(args.keys), G):
                    rows.append((u, k))
                    true[k] += 1
            db.executemany("INSERT INTO r VALUES (?, ?)", rows)
            db.commit()
            db.enable_load_extension(True)
            db.load_extension(os.path.abspath(args.module))
            err = {}
            for noise in ("optimal", "gaussian"):
                opts = "max_groups=%d, max_rows=1, noise=%s" % (G, noise) + (", delta=1e-6" if noise == "gaussian" else "")
                e = []
                for _ in range(args.reps):
                    for k, c in db.execute(
                            "SELECT key, count FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, ?, "
                            "'SELECT k FROM ks')", (opts,)):
                        e.append(abs(c - true[k]))
                err[noise] = statistics.median(e)
            print("%d | %.1f | %.1f | %.2fx" % (G, err["optimal"], err["gaussian"], err["optimal"] / err["gaussian"]))
            db.close()


if __name__ == "__main__":
    main()
