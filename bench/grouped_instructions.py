#!/usr/bin/python3
"""Instructions per release of private_groups over a database of
bench/grouped_bench.py, for modules built from different commits: valgrind's
callgrind over a child process making 3 releases and over one making 1, the
difference halved (deterministic, so a loaded machine does not move the
figures; bench/README.md, "Release floors").

    /usr/bin/python3 bench/grouped_instructions.py DB MODULE [MODULE...]
        [--options 'max_groups=5, max_rows=2, lower=0, upper=100'] [--queries public,scan]

Each child connects to DB as bench/grouped_ab.py's workers do (mmap_size 4
GiB, cache_size 256 MiB, temp_store=MEMORY on the user's connection) and
loads one module. Queries as grouped_ab.py's:
  scan     SELECT count(unit), count(key), count(value) FROM (rows_query)
  public   SELECT * FROM private_groups(rows_query, 1.0, options, 'SELECT k FROM keys')
with rows_query = 'SELECT unit, key, value FROM visits ORDER BY 1'.
"""
import argparse
import os
import sqlite3
import sys
import tempfile

from floors_instructions import callgrind_instructions

ROWS = "SELECT unit, key, value FROM visits ORDER BY 1"


def query(which, options):
    if which == "scan":
        return "SELECT count(unit), count(key), count(value) FROM (%s)" % ROWS
    return "SELECT * FROM private_groups('%s', 1.0, '%s', 'SELECT k FROM keys')" % (ROWS, options)


def child(module, path, sql, n):
    db = sqlite3.connect(path)
    for p in ("PRAGMA mmap_size=4294967296", "PRAGMA cache_size=-262144", "PRAGMA temp_store=MEMORY"):
        db.execute(p).fetchall()
    db.enable_load_extension(True)
    db.load_extension(module)
    for _ in range(n):
        db.execute(sql).fetchall()


def collected(module, path, sql, n, out):
    return callgrind_instructions([os.path.abspath(__file__), "--child", module, path, sql, str(n)], out)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("modules", nargs="+")
    ap.add_argument("--options", default="max_groups=5, max_rows=2, lower=0, upper=100")
    ap.add_argument("--queries", default="public,scan")
    a = ap.parse_args()
    first = None
    with tempfile.TemporaryDirectory() as d:
        for module in a.modules:
            for which in a.queries.split(","):
                sql = query(which, a.options)
                one = collected(os.path.abspath(module), a.db, sql, 1, os.path.join(d, "cg.1"))
                three = collected(os.path.abspath(module), a.db, sql, 3, os.path.join(d, "cg.3"))
                per = (three - one) / 2
                line = "%s %s: %.1f M instructions per release" % (module, which, per / 1e6)
                if which == "public":
                    first = first or per
                    line += " (%.3fx the first module's)" % (per / first)
                print(line, flush=True)


if __name__ == "__main__":
    main()
