#!/usr/bin/python3
"""Run one SQL script through the real sqlite3 shell with optdp loaded and
compare what it prints with the committed expected output.

    run_sql_test.py --shell /usr/bin/sqlite3 --module build/optdp.so foo.sql [foo.expected]

The script is fed to the shell on stdin, as in

    sqlite3 -batch -list -noheader -nullvalue NULL :memory: -cmd ".load MODULE" < foo.sql

so errors do not stop it (no -bail): each failing statement prints an error and
the shell goes on with the next one. stdout and stderr are captured together
(the shell flushes after every statement, so they stay in order).

Before comparing, the output is normalised so that the expected files do not
depend on line numbers or on how a given shell version decorates errors:

  * "Runtime error near line 12: msg", "Parse error near line 12: msg" and the
    older "Error: near line 12: msg" all become "Error: msg";
  * the statement echo and "^--- error here" caret that newer shells print
    after a parse error are dropped (they are the lines indented by two spaces
    that follow an error line; no expected output line starts with two spaces);
  * trailing blanks and a trailing empty line are dropped.

Regenerate an expected file from the current build with --update (or the
environment variable OPTDP_UPDATE_EXPECTED=1), then review the diff.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile

ERROR_RE = re.compile(r"^(?:Runtime error|Parse error|Error:?)\s+near line \d+:\s*")


def normalise(text):
    out = []
    after_error = False
    for line in text.replace("\r\n", "\n").split("\n"):
        line = line.rstrip()
        m = ERROR_RE.match(line)
        if m:
            out.append("Error: " + line[m.end():])
            after_error = True
            continue
        if after_error and line.startswith("  "):
            continue  # statement echo / caret of the error above
        after_error = False
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def run(shell, module, script):
    with open(script, "rb") as f:
        sql = f.read()
    # Run in a scratch directory so that a script can never litter the tree.
    with tempfile.TemporaryDirectory(prefix="optdp-shell-") as tmp:
        module_arg = ".load '" + os.path.abspath(module).replace("'", "''") + "'"
        cmd = [shell, "-batch", "-list", "-noheader", "-nullvalue", "NULL", ":memory:", "-cmd", module_arg]
        proc = subprocess.run(cmd, input=sql, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp, timeout=120)
    if proc.returncode < 0:
        sys.exit("FAIL: %s: the shell died with signal %d\n%s" % (script, -proc.returncode,
                                                                    proc.stdout.decode("utf-8", "replace")))
    return normalise(proc.stdout.decode("utf-8", "replace"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shell", required=True, help="the sqlite3 shell")
    ap.add_argument("--module", default=os.environ.get("OPTDP_MODULE"), help="path of optdp.so")
    ap.add_argument("--update", action="store_true", default=os.environ.get("OPTDP_UPDATE_EXPECTED") == "1",
                    help="write the expected file from the current output instead of comparing")
    ap.add_argument("script")
    ap.add_argument("expected", nargs="?")
    args = ap.parse_args()
    if not args.module:
        ap.error("give --module or set OPTDP_MODULE")
    expected_path = args.expected or os.path.splitext(args.script)[0] + ".expected"

    actual = run(args.shell, args.module, args.script)
    if args.update:
        with open(expected_path, "w", encoding="utf-8") as f:
            f.write(actual)
        print("wrote %s" % expected_path)
        return 0
    try:
        with open(expected_path, encoding="utf-8") as f:
            expected = normalise(f.read())
    except FileNotFoundError:
        expected = ""
        print("no expected file %s (create it with --update)" % expected_path)
    if actual == expected:
        print("ok: %s" % os.path.basename(args.script))
        return 0
    print("FAIL: output of %s differs from %s (- expected, + actual):" % (args.script, expected_path))
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                               "expected", "actual"))
    print("\nIf the new output is right, regenerate with OPTDP_UPDATE_EXPECTED=1 (or --update) and review the diff.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
