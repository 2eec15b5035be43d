#!/usr/bin/env python3
"""optdp's aggregates against the built-ins on a local Citus cluster (a
coordinator and two workers, tests/citus/test_citus.py's cluster; t(id, k, x)
distributed by id over 4 shards, 2 on each worker), serial on every node.

Usage: bench/citus_bench.py <build>/postgres [--rows N] [--rounds R]
Each private aggregate is timed next to its built-in counterpart (in turn
before and after it) with psql's \\timing on the coordinator, in Citus's two
plans: partial states (no GROUP BY, and GROUP BY k) and pushed down whole
(GROUP BY id over 10,000 ids, counted on the coordinator). Prints medians and the median of
the per-round ratios private / built-in. Needs Citus installed
(scripts/build-citus.sh). Figures: bench/README.md.
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "citus"))
import test_citus as cluster  # noqa: E402
sys.path.insert(0, HERE)
import pg_bench  # noqa: E402  (its timed())

PAIRS = [
    ("SELECT count(*) FROM t", "SELECT private_count(0.5) FROM t"),
    # the same count through Citus's worker_partial_agg / coord_combine_agg,
    # which it uses for every aggregate it does not know (optdp's included)
    ("SELECT wrapped_count(0.5) FROM t", "SELECT private_count(0.5) FROM t"),
    ("SELECT sum(x) FROM t", "SELECT staircase_sum(x, 1.0, 0, 10) FROM t"),
    ("SELECT avg(x) FROM t", "SELECT private_avg(x, 1.0, 0, 10) FROM t"),
    ("SELECT k, count(*) FROM t GROUP BY k", "SELECT k, private_count(0.5) FROM t GROUP BY k"),
    ("SELECT count(c) FROM (SELECT id, count(*) AS c FROM t WHERE id <= 10000 GROUP BY id) s",
     "SELECT count(c) FROM (SELECT id, private_count(0.5) AS c FROM t WHERE id <= 10000 GROUP BY id) s"),
]


def timed(server, statements):
    return pg_bench.timed(server, [st + ";" for st in statements])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module_dir")
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    cluster.MODULE_DIR = os.path.abspath(args.module_dir)
    try:
        cluster.start_cluster(args.rows, ["max_parallel_workers_per_gather = 0", "shared_buffers = 256MB",
                                          "work_mem = '64MB'"])
        coord = cluster.COORD
        coord.psql("VACUUM ANALYZE t; CREATE AGGREGATE wrapped_count(float8) (SFUNC = int8inc_any, STYPE = int8, "
                   "COMBINEFUNC = int8pl, INITCOND = '0');")
        for built, private in PAIRS:
            timed(coord, [built, private])  # warm-up
        print("| query | built-in ms | private ms | ratio |\n|---|---:|---:|---:|")
        for built, private in PAIRS:
            b_ms, p_ms, ratios = [], [], []
            for r in range(args.rounds):
                order = [built, private] if r % 2 == 0 else [private, built]
                t = dict(zip(order, timed(coord, order)))
                b_ms.append(t[built])
                p_ms.append(t[private])
                ratios.append(t[private] / t[built])
            print("| `%s` vs `%s` | %.0f | %.0f | %.2f |" % (built, private, statistics.median(b_ms),
                                                          statistics.median(p_ms), statistics.median(ratios)))
            sys.stdout.flush()
    finally:
        cluster.stop_cluster()


if __name__ == "__main__":
    main()
