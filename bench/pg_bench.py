#!/usr/bin/env python3
"""optdp's aggregates on PostgreSQL 15 against the built-ins, serial and with 2
parallel workers, in one server and one run (ratios, not absolute times).

Usage: bench/pg_bench.py <build>/postgres [--rows N] [--rounds R] [--group-rounds G] [--cpu | --cgroup]
Starts a throw-away server (tests/postgres/pgserver.py: initdb in a temporary
directory as an unprivileged user, Unix socket only, always stopped), loads
table t(g int, x float8) with N rows (default 10,000,000), and times each query
R times (default 15) with psql's \\timing, each private aggregate next to its
built-in counterpart in the same plan (in turn before and after it); prints
medians, the median of the per-round ratios private / built-in, and each
query's parallel speedup (serial / 2 workers), the private one's relative to
its counterpart's (median per round). With --cpu the serial plan's times are
the backend's CPU time (sum_exec_runtime of /proc/PID/schedstat, read by psql's
\\! before and after each line of statements): on a shared machine it moves less than
wall time; the 2-worker plan's stay wall times (its work is in other
processes). With --cgroup (root, cgroup v1) both plans' times are the CPU
time of all the server's processes, the leader and its workers: the
postmaster runs in a cpuacct cgroup of its own, read the same way. private_groups (over table v: 10-row units,
1,000 public keys) is compared with the SQL that computes the same bounded
statistic. Figures: bench/README.md.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

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


# With --cgroup: the cpuacct cgroup that holds the server's postmaster, so
# every backend and parallel worker it starts (CgroupServer).
CGROUP = None


def timed(server, statements, cpu=False):
    """Runs the statements in one psql session with \\timing; returns the ms of each.
    cpu: also the CPU ms of each line of statements, (wall, cpu): the backend's,
    or with CGROUP every process of the server's (its leader and workers)."""
    if cpu and CGROUP:
        read = f"\\! echo cpuacct $(cat {CGROUP}/cpuacct.usage)"
        script = "\\timing on\n" + "".join(f"{read}\n{st}\n{read}\n" for st in statements)
    elif cpu:
        read = "\\! cat /proc/$OPTDP_BENCH_PID/schedstat"  # \\! does not interpolate psql's variables
        script = ("SELECT pg_backend_pid() AS pid \\gset\n\\setenv OPTDP_BENCH_PID :pid\n\\timing on\n" +
                  "".join(f"{read}\n{st}\n{read}\n" for st in statements))
    else:
        script = "\\timing on\n" + "\n".join(statements) + "\n"
    r = subprocess.run([server.psql_path, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", server.socket_dir,
                        "-U", "postgres", "-d", "postgres"], input=script, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    wall = [float(m) for m in re.findall(r"^Time: ([0-9.]+) ms", r.stdout, re.M)]
    if not cpu:
        return wall
    pattern = r"^cpuacct ([0-9]+)$" if CGROUP else r"^([0-9]+) [0-9]+ [0-9]+$"
    ns = [int(m) for m in re.findall(pattern, r.stdout, re.M)]
    if len(ns) != 2 * len(statements):
        raise RuntimeError("schedstat: %d readings for %d statements" % (len(ns), len(statements)))
    return wall, [(ns[2 * i + 1] - ns[2 * i]) / 1e6 for i in range(len(statements))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("module_dir")
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--group-rounds", type=int, default=3)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--cgroup", action="store_true",
                    help="time both plans by the CPU time of all the server's processes (root: a cpuacct cgroup)")
    args = ap.parse_args()
    settings = ["shared_buffers=1GB", "work_mem=64MB", "max_parallel_workers_per_gather=2"]
    if args.cgroup:
        settings.append("autovacuum = off")  # no autovacuum worker's time in the server's
    with (CgroupServer if args.cgroup else Server)(args.module_dir, settings) as s:
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
        # The aggregates: each private aggregate right after (or, every other
        # round, right before) its built-in counterpart in the same plan, so
        # that each ratio is of two times measured seconds apart; the headline
        # ratios are the medians of these per-round ratios (a slow phase of a
        # shared machine falls on both sides of one pair).
        pair_keys = [(plan, q) for plan in ("serial", "2 workers") for pair in PAIRS for q in pair]
        group_keys = [k for k in stmts if k[1] in ("GROUP BY", "scan", "private_groups")]
        times = {k: [] for k in stmts}
        ratio = {(plan, priv): [] for plan in ("serial", "2 workers") for _, priv in PAIRS}
        rel = {priv: [] for _, priv in PAIRS}
        _per_statement(s, [stmts[k] for k in pair_keys])  # warm the cache
        for r in range(args.rounds):
            order = []  # (plan, pair index, query)
            for plan in ("serial", "2 workers"):
                for i, (base, priv) in enumerate(PAIRS):
                    pair = [(plan, i, base), (plan, i, priv)]
                    order += pair if r % 2 == 0 else pair[::-1]
            got = dict(zip(order, _per_statement(s, [stmts[(plan, q)] for plan, _, q in order],
                                                 [(plan == "serial" and args.cpu) or args.cgroup
                                                  for plan, _, q in order])))
            for (plan, _, q), ms in got.items():
                times[(plan, q)].append(ms)
            for i, (base, priv) in enumerate(PAIRS):
                for plan in ("serial", "2 workers"):
                    ratio[(plan, priv)].append(got[(plan, i, priv)] / got[(plan, i, base)])
                rel[priv].append((got[("serial", i, priv)] / got[("2 workers", i, priv)]) /
                                 (got[("serial", i, base)] / got[("2 workers", i, base)]))
        for _ in range(args.group_rounds if group_keys else 0):
            for k, ms in zip(group_keys, _per_statement(s, [stmts[k] for k in group_keys])):
                times[k].append(ms)
        med = {k: statistics.median(v) for k, v in times.items() if v}
        print(f"rows: {args.rows:,}, rounds: {args.rounds} (private_groups: {args.group_rounds}), medians in ms; "
              "ratio, rel.: medians of the per-round ratios (in brackets: the ratio of the medians)" +
              ("; CPU time of all the server's processes" if args.cgroup else
               "; serial: the backend's CPU time, 2 workers: wall time" if args.cpu else ""))
        print(f"{'query':34s} {'serial':>7s} {'ratio':>13s} {'2 workers':>10s} {'ratio':>13s} {'speedup':>8s} "
              f"{'rel.':>13s}")
        printed = set()
        for base, priv in PAIRS:
            for q in (base, priv):
                if q in printed and q == base:
                    continue
                printed.add(q)
                ser, par = med[("serial", q)], med[("2 workers", q)]
                speed = ser / par
                if q == priv:
                    rs = statistics.median(ratio[("serial", q)])
                    rp = statistics.median(ratio[("2 workers", q)])
                    rr = statistics.median(rel[q])
                    rs_m = ser / med[("serial", base)]
                    rp_m = par / med[("2 workers", base)]
                    rr_m = speed / (med[("serial", base)] / med[("2 workers", base)])
                    print(f"{q:34s} {ser:7.0f} {rs:6.2f} ({rs_m:4.2f}) {par:10.0f} {rp:6.2f} ({rp_m:4.2f}) "
                          f"{speed:8.2f} {rr:6.2f} ({rr_m:4.2f})")
                else:
                    print(f"{q:34s} {ser:7.0f} {'':13s} {par:10.0f} {'':13s} {speed:8.2f}")
        if group_keys and args.group_rounds > 0:
            for plan in ("serial", "2 workers"):
                for base in ("GROUP BY", "scan"):
                    r = med[(plan, "private_groups")] / med[(plan, base)]
                    print(f"private_groups / {base} ({plan}): {med[(plan, 'private_groups')]:.0f} / "
                          f"{med[(plan, base)]:.0f} ms = {r:.2f}")


class CgroupServer(Server):
    """A Server whose postmaster runs in a cpuacct cgroup of its own (cgroup v1,
    root), so that the backends and parallel workers it forks from then on are
    in it too: its cpuacct.usage is their CPU time together, to the
    nanosecond. Sets CGROUP; the group is removed once the server stopped."""

    def start(self):
        global CGROUP
        base = "/sys/fs/cgroup/cpuacct"
        if os.getuid() != 0 or not os.path.isdir(base):
            raise SystemExit("--cgroup needs root and cgroup v1's cpuacct at " + base)
        super().start()
        CGROUP = os.path.join(base, "optdp-bench-%d" % os.getpid())
        os.makedirs(CGROUP, exist_ok=True)
        with open(os.path.join(CGROUP, "cgroup.procs"), "w") as f:
            f.write(str(self.proc.pid))

    def stop(self):
        global CGROUP
        try:
            super().stop()
        finally:
            if CGROUP:
                for _ in range(100):
                    try:
                        os.rmdir(CGROUP)
                        break
                    except OSError:  # a process still leaving
                        time.sleep(0.05)
                CGROUP = None


def _per_statement(server, statements, cpu=None):
    """Each statement is a SET list and a SELECT: psql times every one; keep the SELECT's
    (or, where cpu[i], the backend's CPU time of the whole line)."""
    # Each call is a new psql session, so a new backend: its first scan of a
    # table also maps shared_buffers' pages into it (page faults: 3.5 times
    # the time of a warm scan here), and its first call of optdp's functions
    # loads the module (40 ms). The first two statements (a built-in and its
    # private counterpart) run once more before the others, their times dropped.
    warm = min(2, len(statements))
    statements = statements[:warm] + statements
    cpu = cpu[:warm] + cpu if cpu else None
    want_cpu = bool(cpu) and any(cpu)
    if want_cpu:
        ms, cpu_ms = timed(server, statements, cpu=True)
    else:
        ms = timed(server, statements)
    out, i = [], 0
    for k, st in enumerate(statements):
        n = st.count(";")  # the SETs and the SELECT, each timed
        out.append(cpu_ms[k] if want_cpu and cpu[k] else ms[i + n - 1])
        i += n
    return out[warm:]


if __name__ == "__main__":
    main()
