"""Debian's sqlite-utils loads the module with --load-extension and binds
parameters with -p (issue 30 item 4).

Usage: test_sqlite_utils.py MODULE

Fails when the module does not load in sqlite-utils' connection, or when a
bound parameter does not reach optdp's functions: a release with literal
parameters, a helper's exact value through a bound parameter, and the
refusal of a bound alpha. sqlite-utils' -p binds text, so the helper takes
CAST(:a AS REAL), and an aggregate's bound alpha is refused with the bound
text in its message (the aggregates' parameters are literals or bound
numbers, never expressions: write them as literals in sqlite-utils).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOOL = shutil.which("sqlite-utils")


def query(db, module, sql, *params):
    argv = [TOOL, "query", db, sql, "--load-extension", module]
    for name, value in params:
        argv += ["-p", name, value]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def main():
    module = os.path.abspath(sys.argv[1])
    if TOOL is None:
        print("sqlite-utils is not installed (Debian package sqlite-utils; scripts/install-deps.sh)")
        return 1
    tmp = tempfile.mkdtemp(prefix="optdp-sqlite-utils-")
    failures = []
    try:
        db = os.path.join(tmp, "t.db")
        r = subprocess.run([TOOL, "insert", db, "t", "-", "--nl"], input="".join('{"x": %d}\n' % i for i in range(30)),
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            failures.append("insert: " + r.stderr)
        # a release with literal parameters
        r = query(db, module, "SELECT private_count(0.5) AS c FROM t")
        if r.returncode != 0 or not isinstance(json.loads(r.stdout)[0]["c"], int):
            failures.append("private_count(0.5): %r %r" % (r.stdout, r.stderr))
        # -p binds text: a scalar gets the number through CAST, exactly
        r = query(db, module, "SELECT count_interval(CAST(:a AS REAL), 0.95) AS h, dp_version() IS NOT NULL AS v",
                  ("a", "0.5"))
        if r.returncode != 0 or json.loads(r.stdout) != [{"h": 4, "v": 1}]:
            failures.append("count_interval with a bound alpha: %r %r" % (r.stdout, r.stderr))
        # an aggregate's parameter must be a number: the bound text reaches
        # optdp and is refused with its value (the message of a bound parameter)
        r = query(db, module, "SELECT private_count(:a) AS c FROM t", ("a", "0.5"))
        if r.returncode == 0 or "private_count: alpha must be a number, but is text '0.5'" not in r.stderr:
            failures.append("a bound text alpha was not refused with its message: %r %r" % (r.stdout, r.stderr))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print("sqlite-utils: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
