#!/usr/bin/env python3
"""The README's function index names every function optdp registers.

Usage: check_readme_index.py SOURCE_DIR

The registered functions are read from
  - tests/python/function_list.expected: the SQLite module's scalar and
    aggregate functions and table-valued functions (TestFunctionListSnapshot
    checks that file against the loaded module);
  - extension/postgres/sql/*.sql: the PostgreSQL extension's functions and
    aggregates (CREATE FUNCTION / CREATE AGGREGATE, and the _state / _merge
    forms its loops create), minus optdp_* support functions, which are not
    for users.
The index is README.md's table that starts with "| function | kind |": a
name is indexed when it appears there in backquotes, as `name(` or `name`.
The _state and _merge forms of an aggregate are indexed by the row of their
family (`<aggregate>_state`). Prints the missing names and fails if any.
"""
import glob
import os
import re
import sys


def sqlite_names(src):
    names = set()
    with open(os.path.join(src, "tests", "python", "function_list.expected")) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("|")
            names.add(fields[1] if fields[0] == "table-valued function" else fields[0])
    return names


def postgres_names(src):
    names = set()
    for path in glob.glob(os.path.join(src, "extension", "postgres", "sql", "*.sql")):
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|AGGREGATE)\s+(?:@extschema@\.)?(\w+)\s*\(",
                             text):
            names.add(m.group(1))
    return {n for n in names if not n.startswith("optdp_")}


def index_table(src):
    with open(os.path.join(src, "README.md")) as f:
        text = f.read()
    start = text.find("| function | kind |")
    if start < 0:
        sys.exit("README.md has no function index (a table starting with '| function | kind |')")
    end = text.find("\n\n", start)
    return text[start:end if end >= 0 else len(text)]


def main():
    src = sys.argv[1]
    table = index_table(src)

    def indexed(name):
        if re.search(r"`%s[(`]" % re.escape(name), table):
            return True
        family = re.match(r"(\w+)_(state|merge)$", name)
        return bool(family) and "`<aggregate>_state" in table

    names = sqlite_names(src) | postgres_names(src)
    if len(names) < 40:
        sys.exit("only %d registered functions found: the sources moved?" % len(names))
    missing = sorted(n for n in names if not indexed(n))
    for n in missing:
        print("README.md's function index does not name %s" % n)
    print("%d registered functions, %d missing from the index" % (len(names), len(missing)))
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
