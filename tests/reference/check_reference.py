#!/usr/bin/python3
"""Runs every ```sql example of sql/reference.md (and README.md) through the
real sqlite3 shell, with optdp loaded, on a fresh copy of the sample database
(sql/fixtures/hospital.sql), in a temporary directory. Every statement must
succeed, and where a statement is followed by lines starting with "-->",
its output must be exactly those lines. Random outputs are not compared.

usage: check_reference.py SQLITE3 MODULE SOURCE_DIR
"""
import os
import re
import subprocess
import sys
import tempfile


def blocks(markdown):
    """Yields (line number, lines) of every ```sql block."""
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sql":
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            yield start + 1, body
        i += 1


def statements(body):
    """Splits a block into [(sql, expected lines or None)]."""
    out, current, expected = [], [], None
    for line in body:
        if line.startswith("-->"):
            if not out:
                raise ValueError("'-->' before any statement")
            exp = out[-1][1] if out[-1][1] is not None else []
            exp.append(line[3:].strip())
            out[-1] = (out[-1][0], exp)
            continue
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("--") or stripped.startswith(".")):
            continue  # blank, comment, or a shell dot-command such as .load (the runner loads optdp itself)
        current.append(line)
        if re.search(r";\s*(--.*)?$", line):
            out.append(("\n".join(current), None))
            current = []
    if current:
        raise ValueError("unterminated statement: " + "\n".join(current))
    return out


def run_block(shell, module, fixture, sql_statements, workdir):
    script = [".bail on"]
    for k, (sql, _) in enumerate(sql_statements):
        script.append(".print @@%d" % k)
        script.append(sql)
    db = os.path.join(workdir, "hospital.db")
    if os.path.exists(db):
        os.remove(db)
    # The examples put their ledgers under build/, as a user running them
    # from the repository root would; each block starts with none.
    os.makedirs(os.path.join(workdir, "build"), exist_ok=True)
    for d in (workdir, os.path.join(workdir, "build")):
        for f in os.listdir(d):
            if ".ledger" in f:
                os.remove(os.path.join(d, f))
    subprocess.run([shell, db], input=fixture, text=True, check=True, cwd=workdir)
    r = subprocess.run([shell, db, "-cmd", ".load " + module], input="\n".join(script) + "\n", text=True,
                       capture_output=True, cwd=workdir, timeout=120)
    outputs, current = {}, None
    for line in r.stdout.split("\n"):
        m = re.fullmatch(r"@@(\d+)", line)
        if m:
            current = int(m.group(1))
            outputs[current] = []
        elif current is not None and line != "":
            outputs[current].append(line)
    return r, outputs


def main(argv):
    shell, module, src = argv[1], os.path.abspath(argv[2]), argv[3]
    with open(os.path.join(src, "sql", "fixtures", "hospital.sql")) as f:
        fixture = f.read()
    failures, checked, compared = [], 0, 0
    with tempfile.TemporaryDirectory() as workdir:
        for doc in ("sql/reference.md", "README.md"):
            with open(os.path.join(src, doc)) as f:
                text = f.read()
            for line_no, body in blocks(text):
                where = "%s:%d" % (doc, line_no)
                try:
                    stmts = statements(body)
                except ValueError as e:
                    failures.append("%s: %s" % (where, e))
                    continue
                if not stmts:
                    continue
                r, outputs = run_block(shell, module, fixture, stmts, workdir)
                if r.returncode != 0 or r.stderr.strip():
                    failures.append("%s: the example fails:\n%s" % (where, r.stderr.strip()))
                    continue
                for k, (sql, expected) in enumerate(stmts):
                    checked += 1
                    if expected is None:
                        continue
                    compared += 1
                    got = outputs.get(k, [])
                    if got != expected:
                        failures.append("%s: %s\n  expected: %s\n  got:      %s" % (where, sql, expected, got))
    for f in failures:
        print("FAIL", f)
    print("%d statements run, %d outputs compared, %d failures" % (checked, compared, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
