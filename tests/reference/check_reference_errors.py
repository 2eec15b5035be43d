#!/usr/bin/python3
"""The error messages quoted in sql/reference.md against the catalogue's.

The catalogue (sql/catalogue.py) is the specification of every message an
optdp function gives for a bad input, and its cases run against the build.
The reference quotes messages as examples, with its own values. So that the
two cannot drift apart, every `function: message` the reference quotes must
be, once values are abstracted (a quoted text becomes Q, a number N, and
"..." stands for anything), a message of the catalogue or a part of one.

usage: check_reference_errors.py REFERENCE_MD CATALOGUE_JSON
"""
import json
import re
import sys


def prose(markdown):
    """The reference without its code blocks (they hold SQL, not messages)."""
    lines, fence = [], False
    for line in markdown.split("\n"):
        if line.strip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            lines.append(line)
    return "\n".join(lines).replace("```sql", "")  # the conventions mention the fence in prose


def abstract(message):
    message = re.sub(r"'(?:[^']|'')*'", "Q", message)
    message = re.sub(r"-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|[-+]?inf\b|NaN", "N", message)
    return re.sub(r"\s+", " ", message).strip()


def pattern(quoted):
    """A regex for an abstracted quoted message: its '...' (or '(...)') match anything."""
    parts = re.split(r"\(\.\.\.\)|\.\.\.|…", abstract(quoted))
    return re.compile(".*".join(re.escape(p) for p in parts))


def main(argv):
    with open(argv[1], encoding="utf-8") as f:
        text = prose(f.read())
    with open(argv[2], encoding="utf-8") as f:
        catalogue = json.load(f)
    functions = sorted({c["function"] for c in catalogue["cases"]}, key=len, reverse=True)
    specified = {abstract(c["expect"]["error"]) for c in catalogue["cases"] if "error" in c["expect"]}
    # the messages of PostgreSQL's one-array form of the sums, for each of its functions
    array_form = catalogue["postgres_array_form"]
    specified |= {abstract(c["message"] % f) for c in array_form["cases"] for f in array_form["functions"]}
    checked, failures = 0, []
    for quoted in re.findall(r"`([^`]+)`", text.replace("\n", " ")):
        quoted = quoted.replace("\\|", "|")  # a | escaped inside a table cell
        if not any(quoted.startswith(f + ": ") for f in functions):
            continue
        checked += 1
        p = pattern(quoted)
        if not any(p.search(m) for m in specified):
            failures.append(quoted)
    for q in failures:
        print("FAIL: the reference quotes a message the catalogue does not give:\n  " + q)
    print("%d quoted messages checked against %d specified, %d failures" % (checked, len(specified), len(failures)))
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
