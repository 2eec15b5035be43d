#!/usr/bin/env python3
"""optdp's aggregates on PostgreSQL 15 against the built-ins, serial and with 2
parallel workers, in one server and one run (ratios, not absolute times).

Usage: bench/pg_bench.py <build>/postgres [--rows N] [--rounds R]
Starts a throw-away server (tests/postgres/pgserver.py: initdb in a temporary
directory as an unprivileged user, Unix socket only, always stopped), loads
table t(g int, x float8) with N rows (default 10,000,000), and times each query
R times (default 7) in interleaved rounds with psql's \\timing; prints medians,
each private aggregate's ratio to its built-in counterpart in the same plan,
and each query's parallel speedup (serial / 2 workers), the private one's
relative to its counterpart's. private_groups (over table v: 10-row units,
1,000 public keys) is compared with the SQL that computes the same bounded
statistic. Figures: bench/README.md.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "postgres"))
from pgserver import Server  # noqa: E402

# (built-in, private): the private aggregate and the built-in that computes the
# same exact statistic.
PAIRS = [
    ("count(*)", "private_count(0.5)"),
    ("count(x)", "private_count(x, 0.5)"),
    ("sum(x)", "staircase_sum(x, 1.0, 0, 1000)"),
    ("sum(x)", "laplace_sum(x, 1.0, 0, 1000)"),
    ("avg(x)", "private_avg(x, 1.0, 0, 1000)"),
    ("var_samp(x)", "private_var(x, 1.0, 0, 1000)"),
]
SERIAL = "SET max_parallel_workers_per_gather = 0;"
# Two workers whatever the planner's costs (the table's parallel_workers is 2).
PARALLEL = ("SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; "
            "SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;")


def timed(server, statements):
    """Runs the statements in one psql session with \\timing; returns the ms of each."""
    script = "\\timing on\n" + "\n".join(statements) + "\n"
    r = subprocess.run([server.psql_path, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", server.socket_dir,
                        "-U", "postgres", "-d", "postgres"], input=script, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", r.stdout, re.M)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module_dir")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    settings = ["shared_buffers=1GB", "work_mem=64MB", "max_parallel_workers_per_gather=2"]
    with Server(args.module_dir, settings) as s:
        s.psql("CREATE EXTENSION optdp; SELECT dp_seed(1);"
               "CREATE TABLE t (g int, x float8) WITH (parallel_workers = 2);"
               f"INSERT INTO t SELECT i % 1000, (i % 1001)::float8 FROM generate_series(1, {args.rows}) i;"
               "VACUUM ANALYZE t;")
        # private_groups' table, as bench/grouped_bench.py's: units of 10
        # consecutive rows, each unit's keys among 20 consecutive keys, values
        # in [-10, 110); stored in unit order with an index, so ORDER BY 1 needs
        # no sort; 1,000 public keys.
        s.psql("CREATE TABLE v (unit int8, key int4, value float8);"
               f"INSERT INTO v SELECT i / 10, ((i / 10) % 980 + i % 20)::int4, (i * 7919 % 1200) / 10.0 - 10 "
               f"FROM generate_series(0::int8, {args.rows} - 1) i;"
               "CREATE INDEX ON v (unit); CREATE TABLE k AS SELECT generate_series(0, 999)::int4 AS k;"
               "VACUUM ANALYZE v; VACUUM ANALYZE k;")
        has_groups = s.psql("SELECT count(*) FROM pg_proc WHERE proname = 'private_groups'")[0][0] != "0"
        queries = sorted({q for pair in PAIRS for q in pair})
        stmts = {}
        for plan, setting in (("serial", SERIAL), ("2 workers", PARALLEL)):
            for q in queries:
                stmts[(plan, q)] = f"{setting} SELECT {q} FROM t;"
            if has_groups:
                # the same bounded statistic in SQL: per-unit pre-aggregation,
                # then GROUP BY key (it bounds rows per (unit, key) but does not
                # sample max_groups keys per unit: a little less work)
                stmts[(plan, "GROUP BY")] = (
                    f"{setting} SELECT key, sum(least(c, 2)), sum(s) FROM (SELECT unit, key, count(*) c, "
                    "sum(greatest(0, least(100, value))) s FROM v GROUP BY unit, key) a GROUP BY key;")
                # the rows query alone: the floor of anything that reads it
                stmts[(plan, "scan")] = (
                    f"{setting} SELECT count(unit), count(key), count(value) FROM "
                    "(SELECT unit, key, value FROM v ORDER BY 1) a;")
                stmts[(plan, "private_groups")] = (
                    f"{setting} SELECT count(*) FROM private_groups('SELECT unit, key, value FROM v ORDER BY 1', 1.0, "
                    "'max_groups=3, max_rows=2, lower=0, upper=100', 'SELECT k FROM k');")
        # the plans EXPLAIN shows, once
        for (plan, q), st in stmts.items():
            if q in ("GROUP BY", "private_groups", "scan"):
                continue
            pre, sel = st.split(" SELECT ", 1)
            out = "\n".join(r[0] for r in s.psql(pre + " EXPLAIN SELECT " + sel))
            want = "Gather" in out
            if want != (plan == "2 workers"):
                raise RuntimeError(f"unexpected plan for {q} ({plan}):\n{out}")
        keys = list(stmts)
        times = {k: [] for k in keys}
        _per_statement(s, [stmts[k] for k in keys])  # warm the cache
        for _ in range(args.rounds):
            for k, ms in zip(keys, _per_statement(s, [stmts[k] for k in keys])):
                times[k].append(ms)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"rows: {args.rows:,}, rounds: {args.rounds}, medians in ms")
        print(f"{'query':42s} {'serial':>9s} {'ratio':>6s} {'2 workers':>10s} {'ratio':>6s} {'speedup':>8s} {'rel.':>6s}")
        printed = set()
        for base, priv in PAIRS:
            for q in (base, priv):
                if q in printed and q == base:
                    continue
                printed.add(q)
                ser, par = med[("serial", q)], med[("2 workers", q)]
                speed = ser / par
                if q == priv:
                    rs = ser / med[("serial", base)]
                    rp = par / med[("2 workers", base)]
                    rel = speed / (med[("serial", base)] / med[("2 workers", base)])
                    print(f"{q:42s} {ser:9.0f} {rs:6.2f} {par:10.0f} {rp:6.2f} {speed:8.2f} {rel:6.2f}")
                else:
                    print(f"{q:42s} {ser:9.0f} {'':6s} {par:10.0f} {'':6s} {speed:8.2f}")
        if has_groups:
            for plan in ("serial", "2 workers"):
                for base in ("GROUP BY", "scan"):
                    r = med[(plan, "private_groups")] / med[(plan, base)]
                    print(f"private_groups / {base} ({plan}): {med[(plan, 'private_groups')]:.0f} / "
                          f"{med[(plan, base)]:.0f} ms = {r:.2f}")


def _per_statement(server, statements):
    """Each statement is a SET list and a SELECT: psql times every one; keep the SELECT's."""
    ms = timed(server, statements)
    out, i = [], 0
    for st in statements:
        n = st.count(";")  # the SETs and the SELECT, each timed
        out.append(ms[i + n - 1])
        i += n
    return out


if __name__ == "__main__":
    main()
