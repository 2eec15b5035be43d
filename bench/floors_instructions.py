#!/usr/bin/env python3
"""Instructions per release of private_groups with Gaussian noise, counts alone
against counts and sums (bench/README.md, "Release floors"), and of the rows
query alone: deterministic, so a loaded machine does not move the figures.

Usage: /usr/bin/python3 bench/floors_instructions.py build/optdp.so
Runs valgrind's callgrind over a child process making N releases and over
one making 1, for each query, and prints the difference per release.
"""
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

OPTS = "noise=gaussian, delta=1e-6, max_groups=1, max_rows=1"
QUERIES = {
    "counts": "SELECT count(*) FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, "
              "'%s', 'SELECT DISTINCT k FROM r')" % OPTS,
    "sums": "SELECT count(*) FROM private_groups('SELECT u, k, v FROM r ORDER BY 1', 1.0, "
            "'%s, lower=0, upper=10', 'SELECT DISTINCT k FROM r')" % OPTS,
    "rows2": "SELECT max(k) FROM (SELECT u, k FROM r ORDER BY 1)",
    "rows3": "SELECT max(v) FROM (SELECT u, k, v FROM r ORDER BY 1)",
}
N = 21


def child(module, path, which, n):
    db = sqlite3.connect(path)
    db.enable_load_extension(True)
    db.load_extension(module)
    for _ in range(n):
        db.execute(QUERIES[which]).fetchall()


def callgrind_instructions(argv, out):
    """Instructions that valgrind's callgrind counts over this Python running argv
    (bench/grouped_instructions.py uses it too)."""
    run = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, sys.executable] + argv,
                         capture_output=True, text=True, check=True)
    return int(re.search(r"Collected : (\d+)", run.stderr).group(1))


def instructions(module, path, which, n, out):
    return callgrind_instructions([os.path.abspath(__file__), "--child", module, path, which, str(n)], out)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    module = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "g.db")
        db = sqlite3.connect(path)
        db.execute("CREATE TABLE r(u INTEGER, k INTEGER, v REAL)")
        db.execute("WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 9999) "
                   "INSERT INTO r SELECT i, i % 100, (i % 7) * 1.5 FROM s")
        db.commit()
        db.close()
        per = {}
        for which in QUERIES:
            a = instructions(module, path, which, 1, os.path.join(d, "cg.1"))
            b = instructions(module, path, which, N, os.path.join(d, "cg.n"))
            per[which] = (b - a) / (N - 1)
            print("  %-6s %6.2f M instructions per statement" % (which, per[which] / 1e6))
    print("counts and sums / counts: %.3fx" % (per["sums"] / per["counts"]))
    print("rows query, 3 columns / 2: %.3fx" % (per["rows3"] / per["rows2"]))
    print("optdp's own (release minus its rows query): %.2f M / %.2f M = %.3fx"
          % ((per["sums"] - per["rows3"]) / 1e6, (per["counts"] - per["rows2"]) / 1e6,
             (per["sums"] - per["rows3"]) / (per["counts"] - per["rows2"])))


if __name__ == "__main__":
    main()
