#!/usr/bin/python3
"""private_select over many public candidates: time per release.

    /usr/bin/python3 bench/select_bench.py --optdp build-bench/optdp.so [--candidates 10000] [--reps 51]

A table c(k INTEGER PRIMARY KEY, score REAL) of --candidates rows (scores
drawn once with a fixed seed: integer counts in [0, 10^6), so a few
candidates lead and the rest trail, as with real counts; a flat variant
with scores in [0, 10), where many candidates are close; and three extreme
shapes that must take the same time as the others, since the time of a
release must not depend on the data: all tied, and all but one just on
either side of the point where a weight truncates to 0). Each query runs once as a warm-up, then --reps times; the
median and the 10th-90th percentiles of the wall time per release are
printed, with the SQL that reads the same rows (max(score)) as the baseline
of the same run.
"""
import argparse
import random
import sqlite3
import statistics
import time


def timed(db, sql, reps):
    db.execute(sql).fetchall()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        db.execute(sql).fetchall()
        out.append(time.perf_counter() - t0)
    out.sort()
    return statistics.median(out), out[len(out) // 10], out[(9 * len(out)) // 10]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--optdp", required=True)
    ap.add_argument("--candidates", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=51)
    a = ap.parse_args()
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(a.optdp)
    rng = random.Random(1)
    print("%d candidates, %d repetitions; ms per release: median [p10, p90]" % (a.candidates, a.reps))
    # The last three shapes are the extremes a query could aim at to make the
    # time depend on the data: every candidate tied with the best, or all but
    # one just on either side of the point (exponent 72 at eps 1) where its
    # weight truncates to 0. The time must be the same for all of them.
    shapes = (("counts in [0, 1e6)", [rng.randrange(10 ** 6) for _ in range(a.candidates)]),
              ("flat, in [0, 10)", [rng.random() * 10 for _ in range(a.candidates)]),
              ("all tied", [0] * a.candidates),
              ("one ahead by 143 (exponent 71.5)", [143] + [0] * (a.candidates - 1)),
              ("one ahead by 145 (exponent 72.5)", [145] + [0] * (a.candidates - 1)))
    for label, scores in shapes:
        db.execute("DROP TABLE IF EXISTS c")
        db.execute("CREATE TABLE c(k INTEGER PRIMARY KEY, score REAL)")
        db.executemany("INSERT INTO c VALUES (?, ?)", enumerate(scores))
        base = timed(db, "SELECT max(score) FROM c", a.reps)
        print("  scores %s" % label)
        print("    %-40s %8.3f [%.3f, %.3f]" % ("SELECT max(score) (baseline)", *(x * 1e3 for x in base)))
        for method in ("permute_and_flip", "exponential"):
            t = timed(db, "SELECT private_select(k, score, 1.0, 1, '%s') FROM c" % method, a.reps)
            print("    %-40s %8.3f [%.3f, %.3f]  %.2fx baseline" % ("private_select " + method,
                                                                  *(x * 1e3 for x in t), t[0] / base[0]))


if __name__ == "__main__":
    main()
