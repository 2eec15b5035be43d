#!/usr/bin/python3
"""optdp's PostgreSQL aggregates against the built-ins and against the floor
of their shape: aggregates of pg_noop.so (bench/pg_noop.cpp) with the same
arguments and kind of state that do nothing of optdp's. Serial plans, the
backend's CPU time.

    /usr/bin/python3 bench/pg_floor.py build-bench/postgres [--rows 2000000] [--rounds 15] [--only count]

build-bench/postgres holds optdp_pg.so and pg_noop.so (bench/run.sh builds
both; pg_noop.so is built when the benchmarks are on, OPTDP_BUILD_BENCH=ON).
Starts a throw-away server (tests/postgres/pgserver.py), loads pg_bench.py's
table t(g int, x float8). Each round is one psql session (one backend): every
query once to warm it (the table's pages mapped into the backend, the modules
loaded), then every query timed, in an order reversed every other round. The
time of a query is the backend's CPU time (sum_exec_runtime of
/proc/PID/schedstat, read with psql's \\! before and after it: pg_bench.py's
timed()). Printed per
query: the median CPU time, and the medians [min-max] of its per-round ratios
to the built-in and to the floor of its shape. Figures: bench/README.md,
"The floor of an aggregate's shape".
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "postgres"))
from pgserver import Server  # noqa: E402
sys.path.insert(0, HERE)
import pg_bench  # noqa: E402  (its timed(): psql, and the backend's CPU time by /proc/PID/schedstat)

ZEROS = "\\x" + "00" * 16  # 16 zero bytes (bytea hex)


def noop_sql(so):
    """The no-op aggregates, each of the shape of the optdp aggregate named in its comment."""
    return (
        f"CREATE FUNCTION noop_count_trans(bytea) RETURNS bytea AS '{so}' LANGUAGE C;"
        f"CREATE FUNCTION noop_count_trans(bytea, float8) RETURNS bytea AS '{so}' LANGUAGE C;"
        f"CREATE FUNCTION noop_count_trans(bytea, float8, float8) RETURNS bytea AS '{so}' LANGUAGE C;"
        f"CREATE FUNCTION noop_count_final(bytea) RETURNS int8 AS '{so}' LANGUAGE C;"
        # private_count(alpha) as planned (plan.cpp: alpha a direct argument):
        # a bytea state counted in place, no argument
        f"CREATE AGGREGATE noop_count(*) (SFUNC = noop_count_trans, STYPE = bytea, "
        f"FINALFUNC = noop_count_final, INITCOND = '{ZEROS}');"
        # private_count(alpha) as written, one constant; and private_count(x,
        # alpha) as planned, noop_count(x)
        f"CREATE AGGREGATE noop_count(float8) (SFUNC = noop_count_trans, STYPE = bytea, "
        f"FINALFUNC = noop_count_final, INITCOND = '{ZEROS}');"
        # private_count(x, alpha) as written
        f"CREATE AGGREGATE noop_count(float8, float8) (SFUNC = noop_count_trans, STYPE = bytea, "
        f"FINALFUNC = noop_count_final, INITCOND = '{ZEROS}');"
        # staircase_sum(x, eps, lower, upper), with sum(x)'s float8 state by value
        f"CREATE FUNCTION noop_sum_trans(float8, float8, float8, float8, float8) RETURNS float8 "
        f"AS '{so}' LANGUAGE C STRICT;"
        "CREATE AGGREGATE noop_sum(float8, float8, float8, float8) (SFUNC = noop_sum_trans, STYPE = float8);"
        # the same with a bytea state updated in place, as the sums'
        f"CREATE FUNCTION noop_sum_ref_trans(bytea, float8, float8, float8, float8) RETURNS bytea "
        f"AS '{so}' LANGUAGE C;"
        f"CREATE FUNCTION noop_sum_ref_final(bytea) RETURNS float8 AS '{so}' LANGUAGE C;"
        f"CREATE AGGREGATE noop_sum_ref(float8, float8, float8, float8) (SFUNC = noop_sum_ref_trans, STYPE = bytea, "
        f"FINALFUNC = noop_sum_ref_final, INITCOND = '{ZEROS}');"
        # the same with the three constants as one array: the form optdp's
        # planner hook gives staircase_sum and laplace_sum (extension/postgres/plan.cpp)
        f"CREATE FUNCTION noop_sum_packed_trans(bytea, float8, float8[]) RETURNS bytea "
        f"AS '{so}', 'noop_sum_ref_trans' LANGUAGE C;"
        f"CREATE AGGREGATE noop_sum_packed(float8, float8[]) (SFUNC = noop_sum_packed_trans, STYPE = bytea, "
        f"FINALFUNC = noop_sum_ref_final, INITCOND = '{ZEROS}');"
        # the sums' arithmetic (clamp, scale, round, 128-bit add) without their checks
        f"CREATE FUNCTION noop_sum_grid_trans(bytea, float8, float8, float8, float8) RETURNS bytea "
        f"AS '{so}' LANGUAGE C;"
        f"CREATE FUNCTION noop_sum_grid_final(bytea) RETURNS int8 AS '{so}' LANGUAGE C;"
        f"CREATE AGGREGATE noop_sum_grid(float8, float8, float8, float8) (SFUNC = noop_sum_grid_trans, "
        f"STYPE = bytea, FINALFUNC = noop_sum_grid_final, INITCOND = '{ZEROS}');")


# (query, its built-in, the floor of its shape)
QUERIES = [
    ("count(*)", None, None),
    ("noop_count(*)", "count(*)", None),
    ("noop_count(0.5)", "count(*)", None),
    ("private_count(0.5)", "count(*)", "noop_count(*)"),
    ("gaussian_count(0.5)", "count(*)", "noop_count(*)"),
    ("count(x)", None, None),
    ("noop_count(x)", "count(x)", None),
    ("noop_count(x, 0.5)", "count(x)", None),
    ("private_count(x, 0.5)", "count(x)", "noop_count(x)"),
    ("sum(x)", None, None),
    ("noop_sum(x, 1.0, 0, 1000)", "sum(x)", None),
    ("noop_sum_ref(x, 1.0, 0, 1000)", "sum(x)", None),
    ("noop_sum_grid(x, 1.0, 0, 1000)", "sum(x)", "noop_sum_ref(x, 1.0, 0, 1000)"),
    ("noop_sum_packed(x, '{1,0,1000}')", "sum(x)", None),
    ("staircase_sum(x, 1.0, 0, 1000)", "sum(x)", "noop_sum_packed(x, '{1,0,1000}')"),
    ("laplace_sum(x, 1.0, 0, 1000)", "sum(x)", "noop_sum_packed(x, '{1,0,1000}')"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("module_dir")
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--only", metavar="TEXT",
                    help="only the queries that contain TEXT, with their built-ins and floors (e.g. count)")
    args = ap.parse_args()
    chosen = QUERIES
    if args.only:
        keep = {x for q, base, floor in QUERIES if args.only in q for x in (q, base, floor) if x}
        chosen = [e for e in QUERIES if e[0] in keep]
    so = os.path.abspath(os.path.join(args.module_dir, "pg_noop.so"))
    if not os.path.exists(so):
        sys.exit(f"{so} not found: build with -DOPTDP_BUILD_BENCH=ON (bench/run.sh)")
    queries = [q for q, _, _ in chosen]
    with Server(args.module_dir, ["shared_buffers=1GB", "max_parallel_workers_per_gather=0"]) as s:
        s.psql("CREATE EXTENSION optdp; SELECT dp_seed(1); CREATE TABLE t (g int, x float8);"
               f"INSERT INTO t SELECT i % 1000, (i % 1001)::float8 FROM generate_series(1, {args.rows}) i;"
               "VACUUM ANALYZE t;" + noop_sql(so))
        # The no-ops do their shape's work: they count and sum as the built-ins.
        got = s.psql("SELECT noop_count(*) = count(*), noop_count(0.5) = count(*), noop_count(x) = count(x), "
                     "noop_count(x, 0.5) = count(x), "
                     "noop_sum(x, 1.0, 0, 1000) = sum(x), noop_sum_ref(x, 1.0, 0, 1000) = sum(x), "
                     "noop_sum_packed(x, '{1,0,1000}') = sum(x), "
                     "noop_sum_grid(x, 1.0, 0, 1000) = sum(round(least(greatest(x, 0), 1000) / 64)::int8) FROM t")[0]
        if got != ["t"] * 8:
            raise RuntimeError(f"the no-op aggregates do not count and sum as the built-ins: {got}")
        cpu = {q: [] for q in queries}
        for r in range(args.rounds):
            order = queries if r % 2 == 0 else queries[::-1]
            # every query once to warm the round's backend, then each timed
            _, ms = pg_bench.timed(s, [f"SELECT {q} FROM t;" for q in queries + order], cpu=True)
            for q, t in zip(order, ms[len(queries):]):
                cpu[q].append(t)

    def ratio(q, base):
        rs = [a / b for a, b in zip(cpu[q], cpu[base])]
        return f"{statistics.median(rs):.3f} [{min(rs):.2f}-{max(rs):.2f}]"

    print(f"rows: {args.rows:,}, rounds: {args.rounds}, serial, the backend's CPU time; ratios: medians of the "
          "per-round ratios [min-max]")
    print(f"{'query':34s} {'CPU ms':>7s}  {'/ built-in':>19s}  {'/ floor of its shape':>19s}")
    for q, base, floor in chosen:
        print(f"{q:34s} {statistics.median(cpu[q]):7.1f}  {ratio(q, base) if base else '':>19s}  "
              f"{ratio(q, floor) if floor else '':>19s}")


if __name__ == "__main__":
    main()
