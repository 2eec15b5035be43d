#!/usr/bin/python3
"""matrix_bench: the mechanism-matrix and remap functions, timed in the sqlite3 shell.

Debian's libsqlite3 3.40 has no generate_series, but the sqlite3 shell
compiles in ext/misc/series.c, so this script drives the real shell: it
.loads optdp.so, turns on .timer, runs every query once as a warm-up and
then REPS times interleaved (the starting query rotates every repetition)
in the same shell process, and parses the shell's
"Run Time: real R user U sys S" lines. Only the standard library is used
(subprocess), so any python3 runs it.

Queries (T = timed):
  (a) T geometric_matrix  SELECT sum(probability) FROM geometric_matrix(2000, 0.5)      4,004,001 rows
      T generate_series   SELECT sum(value * 0.5) FROM generate_series(0, 4004000)     4,004,001 rows
      target: geometric_matrix / generate_series <= 2 (ratio of the median real times)
  (b) T optimal_remap(2000, 0.5, 'absolute', 'uniform')
      T optimal_remap(2000, 0.5, 'squared', 'uniform')
      T optimal_remap(300, 0.5, <JSON (301x301) matrix |i-r|^1.5>, 'uniform')
      target: each under 1 s (median real time)
  (c) T optimal_mechanism(40, 0.5, 'absolute', 'uniform', 'remap')
      T optimal_mechanism(40, 0.5, 'absolute', 'uniform', 'lp')     (COIN-OR Clp)
      reported: lp / remap; target: the expected losses
      sum_i prior_i sum_r p(i, r) |i - r|, computed here from the rows (fetched
      once, untimed, at 17 significant digits), agree to 1e-9.

The JSON loss matrix (about 1.6 MB of text) is generated here and stored
untimed in a temporary table; the timed query passes it as
(SELECT m FROM losses), so its time includes parsing the JSON but not the
SQL tokenizer reading a 1.6 MB literal. The (b) and (c) queries consume
every row (count(*) and sums), so streaming is included.

The shell prints real time to the millisecond and user/sys time to the
microsecond. (a) and (b) take tens of milliseconds, so their figures are
real time; optimal_mechanism(..., 'remap') at n = 40 takes ~0.1 ms, below
the resolution of the real time, so (c) is reported in CPU time (user +
sys), with the real times alongside.

  matrix_bench.py [--optdp PATH] [--sqlite3 PATH] [--reps N]

Exit status: 0 when everything ran and the results checked out (row counts,
the JSON and 'power:1.5' remaps identical, the losses compared), whether
or not timing targets were met; 1 on an error.
"""

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

N_MATRIX = 2000  # (a), (b)
N_JSON = 300  # (b), general loss matrix
N_LP = 40  # (c)
ALPHA = 0.5
ROWS_A = (N_MATRIX + 1) ** 2  # 4,004,001

# (label, sql) in print order. The JSON matrix is in the temp table losses(m).
QUERIES = [
    ("geometric_matrix(2000, 0.5)", f"SELECT sum(probability) FROM geometric_matrix({N_MATRIX}, {ALPHA});"),
    ("generate_series(0, 4004000)", f"SELECT sum(value * 0.5) FROM generate_series(0, {ROWS_A - 1});"),
    ("optimal_remap absolute n=2000",
     f"SELECT count(*), sum(answer) FROM optimal_remap({N_MATRIX}, {ALPHA}, 'absolute', 'uniform');"),
    ("optimal_remap squared n=2000",
     f"SELECT count(*), sum(answer) FROM optimal_remap({N_MATRIX}, {ALPHA}, 'squared', 'uniform');"),
    ("optimal_remap JSON n=300",
     f"SELECT count(*), sum(answer) FROM optimal_remap({N_JSON}, {ALPHA}, (SELECT m FROM losses), 'uniform');"),
    ("optimal_mechanism remap n=40",
     f"SELECT count(*), sum(probability * abs(input - output)) / {N_LP + 1}.0 "
     f"FROM optimal_mechanism({N_LP}, {ALPHA}, 'absolute', 'uniform', 'remap');"),
    ("optimal_mechanism lp n=40",
     f"SELECT count(*), sum(probability * abs(input - output)) / {N_LP + 1}.0 "
     f"FROM optimal_mechanism({N_LP}, {ALPHA}, 'absolute', 'uniform', 'lp');"),
]
A_QUERY, A_BASE = QUERIES[0][0], QUERIES[1][0]
A_LIMIT = 2.0
B_QUERIES = [q for q, _ in QUERIES[2:5]]
B_LIMIT_S = 1.0
C_REMAP, C_LP = QUERIES[5][0], QUERIES[6][0]
C_LOSS_TOL = 1e-9

MARK = "@@query "
TIMER = re.compile(r"^Run Time: real ([0-9.]+) user ([0-9.]+) sys ([0-9.]+)$")


def die(msg):
    print(f"matrix_bench: {msg}", file=sys.stderr)
    sys.exit(1)


def json_loss_matrix(n, power=1.5):
    """(n+1)x(n+1) JSON matrix l[i][r] = |i - r|^power, shortest round-trip decimals."""
    return "[" + ",".join("[" + ",".join(repr(abs(i - r) ** power) for r in range(n + 1)) + "]"
                          for i in range(n + 1)) + "]"


def sql_text(s):
    return "'" + s.replace("'", "''") + "'"


def shell(sqlite3, script):
    """Runs script in one sqlite3 shell process on :memory:; returns stdout. Fails on any error output."""
    p = subprocess.run([sqlite3, "-batch", "-bail", ":memory:"], input=script, capture_output=True, text=True)
    if p.returncode != 0 or p.stderr.strip():
        die(f"sqlite3 shell failed (exit {p.returncode}): {p.stderr.strip()[:2000]}")
    return p.stdout


def preamble(optdp, json_matrix):
    return (f".load {optdp}\n"
            ".mode list\n"
            "CREATE TEMP TABLE losses(m TEXT);\n"
            f"INSERT INTO losses VALUES ({sql_text(json_matrix)});\n")


def verify(sqlite3, optdp, json_matrix):
    """Untimed correctness checks; returns (remap_loss, lp_loss, optimal_loss scalar)."""
    script = preamble(optdp, json_matrix) + f"""
.print @@counts
SELECT count(*) FROM geometric_matrix({N_MATRIX}, {ALPHA});
SELECT count(*) FROM generate_series(0, {ROWS_A - 1});
.print @@json
SELECT group_concat(answer) FROM (SELECT answer FROM optimal_remap({N_JSON}, {ALPHA}, (SELECT m FROM losses), 'uniform') ORDER BY observed);
SELECT group_concat(answer) FROM (SELECT answer FROM optimal_remap({N_JSON}, {ALPHA}, 'power:1.5', 'uniform') ORDER BY observed);
.print @@remap
SELECT input, output, printf('%!.17g', probability) FROM optimal_mechanism({N_LP}, {ALPHA}, 'absolute', 'uniform', 'remap');
.print @@lp
SELECT input, output, printf('%!.17g', probability) FROM optimal_mechanism({N_LP}, {ALPHA}, 'absolute', 'uniform', 'lp');
.print @@scalar
SELECT printf('%!.17g', optimal_loss({N_LP}, {ALPHA}, 'absolute', 'uniform'));
"""
    out = shell(sqlite3, script)
    sections, cur = {}, None
    for line in out.splitlines():
        if line.startswith("@@"):
            cur = line[2:]
            sections[cur] = []
        elif cur:
            sections[cur].append(line)
    counts = [int(x) for x in sections["counts"]]
    if counts != [ROWS_A, ROWS_A]:
        die(f"expected {ROWS_A} rows from both (a) queries, got {counts}")
    json_answers, power_answers = sections["json"]
    if json_answers != power_answers:
        die("optimal_remap with the JSON matrix differs from 'power:1.5'")
    if len(json_answers.split(",")) != N_JSON + 1:
        die("optimal_remap JSON: wrong number of rows")

    def loss(lines):
        m = {}
        for line in lines:
            i, r, p = line.split("|")
            m[int(i), int(r)] = float(p)
        if len(m) != (N_LP + 1) ** 2:
            die(f"optimal_mechanism: expected {(N_LP + 1) ** 2} rows, got {len(m)}")
        prior = 1.0 / (N_LP + 1)
        # sum_i prior_i sum_r p(i, r) |i - r|, and the largest |row sum - 1|
        total = math.fsum(prior * math.fsum(m[i, r] * abs(i - r) for r in range(N_LP + 1)) for i in range(N_LP + 1))
        rowdev = max(abs(math.fsum(m[i, r] for r in range(N_LP + 1)) - 1) for i in range(N_LP + 1))
        return total, rowdev, min(m.values())

    return loss(sections["remap"]), loss(sections["lp"]), float(sections["scalar"][0])


def timed(sqlite3, optdp, json_matrix, reps):
    script = [preamble(optdp, json_matrix), ".timer on\n"]
    order = list(range(len(QUERIES)))
    plan = [order]  # warm-up
    for r in range(reps):
        plan.append(order[r % len(order):] + order[:r % len(order)])
    for rnd, qs in enumerate(plan):
        for q in qs:
            script.append(f".print {MARK}{rnd} {q}\n{QUERIES[q][1]}\n")
    out = shell(sqlite3, "".join(script))
    real = [[] for _ in QUERIES]
    cpu = [[] for _ in QUERIES]
    result = [None] * len(QUERIES)
    cur = None
    for line in out.splitlines():
        if line.startswith(MARK):
            rnd, q = map(int, line[len(MARK):].split())
            cur = (rnd, q)
            continue
        m = TIMER.match(line)
        if m:
            if cur is None:
                continue  # a statement outside the plan (none expected)
            rnd, q = cur
            if rnd > 0:
                real[q].append(float(m.group(1)))
                cpu[q].append(float(m.group(2)) + float(m.group(3)))
            cur = None
        elif cur is not None:
            result[cur[1]] = line
    for q, (label, _) in enumerate(QUERIES):
        if len(real[q]) != reps:
            die(f"{label}: parsed {len(real[q])} timings, expected {reps}")
    return real, cpu, result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--optdp", default=os.path.join(ROOT, "build-bench", "optdp.so"),
                    help="optdp extension (default build-bench/optdp.so)")
    ap.add_argument("--sqlite3", default=shutil.which("sqlite3") or "/usr/bin/sqlite3",
                    help="sqlite3 shell with generate_series (default: sqlite3 on PATH)")
    ap.add_argument("--reps", type=int, default=11, help="interleaved repetitions; medians are reported (default 11)")
    args = ap.parse_args()
    if args.reps < 1:
        die("--reps must be positive")
    if not os.path.exists(args.optdp):
        die(f"no optdp extension at {args.optdp} (build it first, e.g. bench/run.sh)")
    optdp = os.path.abspath(args.optdp)

    version = subprocess.run([args.sqlite3, "--version"], capture_output=True, text=True).stdout.split()[0]
    print(f"matrix_bench: sqlite3 shell {args.sqlite3} (SQLite {version}), {args.reps} interleaved repetitions "
          f"after a warm-up, medians reported")
    print(f"  optdp: {optdp}")
    json_matrix = json_loss_matrix(N_JSON)
    print(f"  JSON loss matrix |i-r|^1.5, {N_JSON + 1}x{N_JSON + 1}: {len(json_matrix)} characters")
    sys.stdout.flush()

    (remap_loss, remap_rowdev, remap_min), (lp_loss, lp_rowdev, lp_min), scalar = verify(args.sqlite3, optdp,
                                                                                        json_matrix)
    print(f"  checks: both (a) queries return {ROWS_A} rows; the JSON-matrix remap equals the 'power:1.5' remap")
    real, cpu, result = timed(args.sqlite3, optdp, json_matrix, args.reps)

    med = [statistics.median(v) for v in real]
    medc = [statistics.median(v) for v in cpu]
    print(f"\n{'query':<30} {'real med ms':>12} {'min':>8} {'max':>8} {'cpu med ms':>11}  last result")
    for q, (label, _) in enumerate(QUERIES):
        print(f"{label:<30} {med[q] * 1e3:12.1f} {min(real[q]) * 1e3:8.1f} {max(real[q]) * 1e3:8.1f} "
              f"{medc[q] * 1e3:11.3f}  {result[q]}")
    print("\nqueries:")
    for label, sql in QUERIES:
        print(f"  {label:<30} {sql.replace('(SELECT m FROM losses)', '<JSON matrix>')}")

    idx = {label: q for q, (label, _) in enumerate(QUERIES)}

    def paired(a, b, v):
        return statistics.median(x / y for x, y in zip(v[idx[a]], v[idx[b]]))

    a, b = idx[A_QUERY], idx[A_BASE]
    ratio_a = med[a] / med[b]
    ns_a, ns_b = med[a] * 1e9 / ROWS_A, med[b] * 1e9 / ROWS_A
    print(f"\n(a) streaming {ROWS_A} rows: {A_QUERY} {ns_a:.1f} ns/row, {A_BASE} {ns_b:.1f} ns/row")
    print(f"    target {A_QUERY} / {A_BASE} <= {A_LIMIT:.0f}: measured {ratio_a:.3f} "
          f"(median of per-repetition ratios {paired(A_QUERY, A_BASE, real):.3f}): "
          f"{'MET' if ratio_a <= A_LIMIT else 'NOT MET'}")
    print(f"(b) target: each under {B_LIMIT_S:.0f} s (median real time)")
    for label in B_QUERIES:
        q = idx[label]
        print(f"    {label:<30} median {med[q] * 1e3:.1f} ms (max {max(real[q]) * 1e3:.1f} ms): "
              f"{'MET' if med[q] < B_LIMIT_S else 'NOT MET'}")
    r, l = idx[C_REMAP], idx[C_LP]
    print(f"(c) optimal_mechanism({N_LP}, {ALPHA}, 'absolute', 'uniform', ...): "
          f"remap {medc[r] * 1e3:.3f} ms cpu ({med[r] * 1e3:.0f} ms real), "
          f"lp {medc[l] * 1e3:.3f} ms cpu ({med[l] * 1e3:.0f} ms real)")
    print(f"    lp / remap = {medc[l] / medc[r]:.0f} (cpu medians; median of per-repetition ratios "
          f"{paired(C_LP, C_REMAP, cpu):.0f}) (reported, no target)")
    diff = abs(lp_loss - remap_loss)
    print(f"    expected loss from the rows: remap {remap_loss:.17g}, lp {lp_loss:.17g}; "
          f"optimal_loss() {scalar:.17g}")
    print(f"    row sums: max |sum_r p(i,r) - 1| remap {remap_rowdev:.2e}, lp {lp_rowdev:.2e}; "
          f"min entry remap {remap_min:.3g}, lp {lp_min:.3g}")
    print(f"    target |loss(lp) - loss(remap)| <= {C_LOSS_TOL:g}: measured {diff:.3e}: "
          f"{'MET' if diff <= C_LOSS_TOL else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
