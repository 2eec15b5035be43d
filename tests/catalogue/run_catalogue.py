#!/usr/bin/python3
"""Walk the catalogue of optdp's SQL functions (sql/catalogue.json, generated
by sql/catalogue.py) and check every case's outcome.

    run_catalogue.py --module build/optdp.so --driver shell --shell /usr/bin/sqlite3
    run_catalogue.py --module build/optdp.so --driver python
    run_catalogue.py --module build/optdp.so --driver coverage   # catalogue complete and up to date
    run_catalogue.py --self-test --shell /usr/bin/sqlite3 --module build/optdp.so

Drivers:
  shell   the real sqlite3 shell, all cases batched into one script (a few
          invocations at most). Each case is one line between two marker
          SELECTs ('@@B i' and '@@E i'); errors come back on stderr as
          "... error near line N: msg" and are matched to the case by N. If
          the shell dies (a signal) or stops making progress (a hang), the
          case that opened a marker without closing it is the culprit: it is
          reported as a crash/hang and the walk resumes after it in a new
          shell.
  python  Python's sqlite3 module, in a child process that reports each case
          as a JSON line before and after running it, with the same
          crash/hang detection and resumption.
Isolated cases (they attach a ledger or seed the noise) run on a fresh
connection: '.open :memory:' and '.load' again in the shell, a new
connection in Python. A case with "bind" runs with bound parameters: a list
(?1, ?2, ...) or an object keyed by name (":a", "@a", "$a"); the shell sets
them with '.parameter set' (and clears them after the case), Python passes
them to execute().

A case fails on: a crash or hang; a value where an error was due (or an
error where a value was due); an optdp error that does not start with
"<function>: ", does not name the argument, is not valid UTF-8 or is longer
than the catalogue's max_message; a message other than the exact expected
one. Cases marked "bug" are expected-correct behaviour the extension does
not have yet: they fail like any other and are listed with their bug.

Standard library only; run under Debian's /usr/bin/python3.
"""
import argparse
import json
import os
import re
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_CATALOGUE = os.path.join(ROOT, "sql", "catalogue.json")

HANG_SECONDS = 20.0   # no new output for this long: the case in progress hangs
CASE_SECONDS = 15.0   # Python: a statement running longer is interrupted

ERROR_RE = re.compile(rb"^(?:Runtime error|Parse error|Error:?)\s+near line (\d+):\s?(.*)$")


# ---------------------------------------------------------------------------
# Loading and preparing cases.


def load_cases(path, tmp, only=None):
    with open(path, encoding="utf-8") as f:
        cat = json.load(f)
    cases = []
    for n, c in enumerate(cat["cases"]):
        if only and not any(o in c["id"] for o in only):
            continue
        c = json.loads(json.dumps(c).replace("{tmp}", tmp.replace("\\", "\\\\").replace('"', '\\"'))
                       .replace("{case}", "case%d" % n))
        cases.append(c)
    return cat, cases


# ---------------------------------------------------------------------------
# Checking one outcome.


def check(case, outcome, max_message):
    """Returns None if the outcome is what the case expects, else why not.
    outcome: {"status": "done"|"crash"|"hang"|"harness", "error": bytes|None,
              "rows": [[str...]]|None, "detail": str}"""
    st = outcome["status"]
    if st == "crash":
        return "CRASH: " + outcome.get("detail", "")
    if st == "hang":
        return "HANG: " + outcome.get("detail", "")
    if st != "done":
        return "HARNESS: " + outcome.get("detail", "")
    exp = case["expect"]
    err = outcome.get("error")
    fn = case["function"]
    if err is not None:
        try:
            msg = err.decode("utf-8")
        except UnicodeDecodeError:
            return "the error message is not valid UTF-8: %r" % err[:200]
        if "ok" in exp or "rows" in exp:
            return "an error where a value was due: %s" % shorten(msg)
        if exp.get("or_ok") and not msg.startswith(fn + ": "):
            return "neither a value nor an error of %s: %s" % (fn, shorten(msg))
        if case.get("source") != "sqlite":
            if not msg.startswith(fn + ": "):
                return "the message does not start with %r: %s" % (fn + ": ", shorten(msg))
            if len(msg) > max_message:
                return "the message is %d characters long (at most %d): %s" % (len(msg), max_message, shorten(msg))
        if "error" in exp:
            if msg != exp["error"]:
                return "message differs:\n      expected: %s\n      got:      %s" % (shorten(exp["error"]), shorten(msg))
            return None
        like = exp["error_like"]
        rest = msg[len(fn) + 2:]
        for name in like.get("names", []):
            if not re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), rest):
                return "the message does not name %r: %s" % (name, shorten(msg))
        for rx in like.get("contains", []):
            if not re.search(rx, rest):
                return "the message does not contain %r: %s" % (rx, shorten(msg))
        for rx in like.get("forbid", []):
            if re.search(rx, rest):
                return "the message matches the forbidden %r: %s" % (rx, shorten(msg))
        return None
    rows = outcome.get("rows") or []
    if ("error" in exp or "error_like" in exp) and not exp.get("or_ok"):
        return "a value where an error was due: %s" % shorten(repr(rows))
    if exp.get("not_null") and any(v == "NULL" for r in rows for v in r):
        return "NULL in the result of a valid call (a NaN?): %s" % shorten(repr(rows))
    if "rows" in exp:
        want = [[str(v) for v in r] for r in exp["rows"]]
        if rows != want:
            return "rows differ: expected %r, got %s" % (want, shorten(repr(rows)))
    return None


def shorten(s, n=400):
    s = str(s)
    return s if len(s) <= n else s[:n] + "... (%d characters)" % len(s)


# ---------------------------------------------------------------------------
# The shell driver.


def sql_line(sql):
    if "\n" in sql or "\r" in sql:
        raise ValueError("a case's SQL must be one line: %r" % sql[:80])
    return sql if sql.rstrip().endswith(";") else sql + ";"


def shell_script(cases, start, module, setup):
    """Lines of the script from case `start` on, and who owns each line."""
    lines, owner = [], []
    load = ".load '%s'" % os.path.abspath(module).replace("'", "''")

    def emit(text, who):
        lines.append(text)
        owner.append(who)

    def fresh(i, what):
        emit(".open :memory:", ("harness", i))
        emit(load, ("harness", i))
        for s in setup:
            emit(sql_line(s), ("harness", i))

    for s in setup:
        emit(sql_line(s), ("harness", None))
    for i in range(start, len(cases)):
        c = cases[i]
        if c.get("isolated"):
            if c.get("setup_other_connection"):
                fresh(i, "other")
                for s in c["setup_other_connection"]:
                    emit(sql_line(s), ("setup", i))
            fresh(i, "isolated")
        for s in c.get("setup", []):
            emit(sql_line(s), ("setup", i))
        for key, value in bindings(c):
            emit(".parameter set %s %s" % (key, sql_literal(value)), ("setup", i))
        emit("SELECT '@@B %d';" % i, ("marker", i))
        emit(sql_line(c["sql"]), ("case", i))
        emit("SELECT '@@E %d';" % i, ("marker", i))
        if c.get("bind") is not None:
            emit(".parameter clear", ("setup", i))
        if c.get("isolated"):
            fresh(i, "shared")
    return "\n".join(lines) + "\n", owner


def bindings(case):
    """(name as the shell's .parameter wants it, value) for a case's "bind"."""
    b = case.get("bind")
    if b is None:
        return []
    if isinstance(b, list):
        return [("?%d" % (k + 1), v) for k, v in enumerate(b)]
    return list(b.items())


def python_bindings(case):
    """The parameters for Python's execute(): a tuple, or a dict without the ':', '@' or '$'."""
    b = case.get("bind")
    if b is None:
        return ()
    return tuple(b) if isinstance(b, list) else {k[1:]: v for k, v in b.items()}


def sql_literal(v):
    """A value as an argument of the shell's '.parameter set' (which strips one
    level of quotes: a string literal goes inside double quotes)."""
    if v is None:
        return "NULL"
    if isinstance(v, str):
        if any(c in v for c in '"\\\n'):
            raise ValueError("a bound text must not contain a double quote, a backslash or a newline: %r" % v)
        return "\"'" + v.replace("'", "''") + "'\""
    return repr(v)


def run_process(cmd, stdin_bytes, cwd, progress_re, hang_seconds):
    """Runs cmd, feeding stdin; returns (stdout lines, stderr bytes, returncode,
    hung). hung: True if no line matching progress_re arrived for hang_seconds."""
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                            start_new_session=True)

    def feed():
        try:
            proc.stdin.write(stdin_bytes)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    err_chunks = []

    def drain_err():
        for chunk in iter(lambda: proc.stderr.read(65536), b""):
            err_chunks.append(chunk)

    drainer = threading.Thread(target=drain_err, daemon=True)
    drainer.start()
    out, buf, last = [], b"", time.monotonic()
    hung = False
    fd = proc.stdout.fileno()
    while True:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            *done, buf = buf.split(b"\n")
            for line in done:
                out.append(line)
                if progress_re.match(line):
                    last = time.monotonic()
        elif time.monotonic() - last > hang_seconds:
            hung = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break
    if buf:
        out.append(buf)
    rc = proc.wait()
    drainer.join(5)
    feeder.join(5)
    return out, b"".join(err_chunks), rc, hung


def run_shell(cases, shell, module, setup, tmp, hang_seconds=HANG_SECONDS, log=None):
    """Outcomes of all cases through the sqlite3 shell."""
    outcomes = [None] * len(cases)
    start = 0
    invocations = 0
    marker = re.compile(rb"^@@[BE] \d+$")
    while start < len(cases):
        invocations += 1
        script, owner = shell_script(cases, start, module, setup)
        cmd = [shell, "-batch", "-list", "-noheader", "-nullvalue", "NULL", ":memory:",
               "-cmd", ".load '%s'" % os.path.abspath(module).replace("'", "''")]
        out, err, rc, hung = run_process(cmd, script.encode("utf-8"), tmp, marker, hang_seconds)
        # Rows and markers from stdout.
        begun, ended, rows = set(), set(), {}
        current = None
        for line in out:
            m = re.match(rb"^@@([BE]) (\d+)$", line)
            if m:
                i = int(m.group(2))
                if m.group(1) == b"B":
                    begun.add(i)
                    current = i
                    rows[i] = []
                else:
                    ended.add(i)
                    current = None
                continue
            if current is not None:
                rows[current].append(line.decode("utf-8", "replace").split("|"))
            # Lines outside markers: output of setup statements (none expected).
        # Errors from stderr, matched by line number.
        errors, harness = {}, []
        after_error = False
        for line in err.split(b"\n"):
            m = ERROR_RE.match(line)
            if m:
                after_error = True
                n = int(m.group(1)) - 1
                who = owner[n] if 0 <= n < len(owner) else ("harness", None)
                kind, i = who
                if kind == "case":
                    if i in errors:
                        errors[i] += b"\n" + m.group(2)
                    else:
                        errors[i] = m.group(2)
                elif kind == "setup":
                    harness.append((i, "setup failed: " + m.group(2).decode("utf-8", "replace")))
                else:
                    harness.append((i, "harness statement failed: " + m.group(2).decode("utf-8", "replace")))
                continue
            if after_error and line.startswith(b"  "):
                continue  # the statement echo and caret after a parse error
            after_error = False
            if line.strip():
                harness.append((None, "unexpected shell output on stderr: " + line.decode("utf-8", "replace")[:300]))
        for i, why in harness:
            if i is not None and i >= start and outcomes[i] is None:
                outcomes[i] = {"status": "harness", "detail": why}
            elif i is None:
                print("  (shell) " + why, file=log or sys.stderr)
        # The cases that ran to their end marker.
        culprit = None
        for i in range(start, len(cases)):
            if i in ended:
                if outcomes[i] is None:
                    outcomes[i] = {"status": "done", "error": errors.get(i), "rows": rows.get(i, [])}
            else:
                culprit = i
                break
        if culprit is None:
            break
        if rc == 0 and not hung:
            outcomes[culprit] = {"status": "harness", "detail": "the shell exited (0) before the case ended"}
        else:
            died = ("killed after %.0f s without progress" % hang_seconds if hung else
                    "the shell died with signal %d" % -rc if rc < 0 else "the shell exited with status %d" % rc)
            if culprit not in begun:
                # The case never started: something before it (a fresh-connection line) killed the shell.
                died += " before the case began"
            outcomes[culprit] = {"status": "hang" if hung else "crash", "detail": died}
        start = culprit + 1
    return outcomes, invocations


# ---------------------------------------------------------------------------
# The Python driver (parent side).


def run_python(cases, module, catalogue, setup, tmp, only, hang_seconds=HANG_SECONDS, selftest=False):
    outcomes = [None] * len(cases)
    start = 0
    invocations = 0
    progress = re.compile(rb"^\{")
    while start < len(cases):
        invocations += 1
        cmd = [sys.executable, os.path.abspath(__file__), "--python-child", "--module", module,
               "--catalogue", catalogue, "--start", str(start), "--tmp", tmp]
        for o in only or []:
            cmd += ["--only", o]
        if selftest:
            cmd += ["--self-test"]
        out, err, rc, hung = run_process(cmd, b"", tmp, progress, hang_seconds)
        begun = set()
        for line in out:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            i = msg["i"]
            if msg.get("begin"):
                begun.add(i)
                continue
            o = msg["outcome"]
            if o.get("error") is not None:
                o["error"] = bytes.fromhex(o["error"])
            outcomes[i] = o
        culprit = next((i for i in range(start, len(cases)) if outcomes[i] is None), None)
        if culprit is None:
            break
        if rc == 0 and not hung:
            outcomes[culprit] = {"status": "harness", "detail": "the Python child exited before the case ended: " +
                                 err.decode("utf-8", "replace")[-500:]}
        else:
            died = ("killed after %.0f s without progress" % hang_seconds if hung else
                    "Python died with signal %d" % -rc if rc < 0 else
                    "Python exited with status %d: %s" % (rc, err.decode("utf-8", "replace")[-500:]))
            outcomes[culprit] = {"status": "hang" if hung else "crash", "detail": died}
        start = culprit + 1
    return outcomes, invocations


# ---------------------------------------------------------------------------
# The Python driver (child side): runs cases from --start on, one JSON line each.


def connect(module, setup):
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(module)
    db.enable_load_extension(False)
    for s in setup:
        db.execute(s).fetchall()
    return db


def run_one(db, sql, params=()):
    deadline = time.monotonic() + CASE_SECONDS
    db.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 100000)
    try:
        cur = db.execute(sql, params)
        rows = cur.fetchall()
        cur.close()
        return {"status": "done", "error": None, "rows": [[py_text(v) for v in r] for r in rows]}
    except sqlite3.Error as e:
        return {"status": "done", "error": str(e).encode("utf-8", "surrogateescape").hex(), "rows": None}
    except UnicodeDecodeError as e:
        # Python's sqlite3 could not decode the error message: keep the raw bytes.
        return {"status": "done", "error": e.object.hex() if isinstance(e.object, bytes) else b"\xff".hex(),
                "rows": None, "note": "UnicodeDecodeError: %s" % e}
    finally:
        db.set_progress_handler(None, 0)


def py_text(v):
    """A value as the shell prints it in list mode (integers and text only are compared)."""
    if v is None:
        return "NULL"
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def python_child(args):
    cat, cases = load_cases(args.catalogue, args.tmp, args.only)
    if args.self_test:
        cases = selftest_cases()
    os.chdir(args.tmp)
    setup = cat["setup"]
    shared = connect(args.module, setup)
    out = sys.stdout
    for i in range(args.start, len(cases)):
        c = cases[i]
        out.write(json.dumps({"i": i, "begin": True}) + "\n")
        out.flush()
        if args.self_test and c.get("selftest_action") == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if args.self_test and c.get("selftest_action") == "hang":
            time.sleep(3600)
        try:
            if c.get("isolated"):
                if c.get("setup_other_connection"):
                    other = connect(args.module, setup)
                    for s in c["setup_other_connection"]:
                        other.execute(s).fetchall()
                    other.close()
                db = connect(args.module, setup)
            else:
                db = shared
            failed = None
            for s in c.get("setup", []):
                try:
                    db.execute(s).fetchall()
                except sqlite3.Error as e:
                    failed = "setup failed: %s" % e
            o = {"status": "harness", "detail": failed} if failed else run_one(db, c["sql"], python_bindings(c))
            if c.get("isolated"):
                db.close()
        except Exception as e:  # the harness itself
            o = {"status": "harness", "detail": "%s: %s" % (type(e).__name__, e)}
        out.write(json.dumps({"i": i, "outcome": o}) + "\n")
        out.flush()
    return 0


# ---------------------------------------------------------------------------
# Coverage: every registered function is catalogued, and the catalogue is fresh.


def registered(module):
    plain = sqlite3.connect(":memory:")
    loaded = connect(module, [])
    q_fn = "SELECT name, narg, type FROM pragma_function_list"
    q_mod = "SELECT name FROM pragma_module_list"
    fns = set(loaded.execute(q_fn).fetchall()) - set(plain.execute(q_fn).fetchall())
    mods = set(loaded.execute(q_mod).fetchall()) - set(plain.execute(q_mod).fetchall())
    out = {}
    for name, narg, typ in fns:
        out.setdefault(name, {"kind": {"s": "scalar", "a": "aggregate", "w": "aggregate"}[typ], "arities": set()})
        out[name]["arities"].add(narg)
    for (name,) in mods:
        out[name] = {"kind": "table", "arities": {0}}
    return out


def coverage(args):
    problems = []
    with open(args.catalogue, encoding="utf-8") as f:
        cat = json.load(f)
    reg = registered(args.module)
    catalogued = {f["name"]: f for f in cat["functions"]}
    for name in sorted(set(reg) - set(catalogued)):
        problems.append("registered but not catalogued: %s" % name)
    for name in sorted(set(catalogued) - set(reg)):
        problems.append("catalogued but not registered: %s" % name)
    for name in sorted(set(reg) & set(catalogued)):
        f, r = catalogued[name], reg[name]
        if f["kind"] != r["kind"]:
            problems.append("%s: catalogued as %s, registered as %s" % (name, f["kind"], r["kind"]))
        if r["kind"] != "table" and set(f["arities"]) != r["arities"]:
            problems.append("%s: catalogued arities %s, registered %s" % (name, sorted(f["arities"]),
                                                                          sorted(r["arities"])))
        cs = [c for c in cat["cases"] if c["function"] == name]
        if not any("ok" in c["expect"] or "rows" in c["expect"] for c in cs):
            problems.append("%s: no case with a valid call" % name)
        if not any(c["id"].startswith(name + "/arity/") for c in cs):
            problems.append("%s: no wrong-argument-count case" % name)
        for a in f["arguments"]:
            if not any(c.get("argument") == a["name"] for c in cs):
                problems.append("%s: argument %s has no case" % (name, a["name"]))
    gen = os.path.join(os.path.dirname(os.path.abspath(args.catalogue)), "catalogue.py")
    if os.path.exists(gen):
        r = subprocess.run([sys.executable, gen, "--check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            problems.append("the catalogue is stale: " + r.stdout.decode("utf-8", "replace").strip())
    for p in problems:
        print("FAIL: " + p)
    print("coverage: %d functions registered, %d catalogued, %d cases%s" %
          (len(reg), len(catalogued), len(cat["cases"]), "" if problems else ", all covered"))
    return 1 if problems else 0


# ---------------------------------------------------------------------------
# Self-test: a crash, a hang and a wrong value are caught, and the walk goes on.


def selftest_cases():
    return [
        {"id": "st/ok", "function": "dp_alpha", "argument": "eps", "sql": "SELECT dp_alpha(1.0)", "expect": {"ok": True}},
        {"id": "st/crash", "function": "dp_alpha", "argument": "eps", "sql": ".system kill -SEGV $PPID",
         "expect": {"ok": True}, "selftest_action": "crash"},
        {"id": "st/error", "function": "dp_alpha", "argument": "eps", "sql": "SELECT dp_alpha(NULL)",
         "expect": {"error": "dp_alpha: eps must be a number, but is NULL"}},
        {"id": "st/value where an error was due", "function": "dp_alpha", "argument": "eps",
         "sql": "SELECT dp_alpha(2.0)", "expect": {"error_like": {"names": ["eps"]}}},
        {"id": "st/hang", "function": "dp_alpha", "argument": "eps", "sql": ".system sleep 3600",
         "expect": {"ok": True}, "selftest_action": "hang"},
        {"id": "st/wrong message", "function": "dp_alpha", "argument": "eps", "sql": "SELECT dp_alpha(0)",
         "expect": {"error": "dp_alpha: something else"}},
        {"id": "st/isolated", "function": "dp_seed", "argument": "n", "sql": "SELECT dp_rng()",
         "expect": {"rows": [["seeded"]]}, "isolated": True, "setup": ["SELECT dp_seed(1)"]},
        {"id": "st/shared again", "function": "dp_rng", "argument": None, "sql": "SELECT dp_rng()",
         "expect": {"rows": [["os"]]}},
        {"id": "st/last", "function": "dp_alpha", "argument": "eps", "sql": "SELECT dp_alpha(2.0)",
         "expect": {"ok": True}},
    ]


def self_test(args, tmp):
    want = {"st/ok": None, "st/crash": "CRASH", "st/error": None, "st/value where an error was due": "a value where",
            "st/hang": "HANG", "st/wrong message": "message differs", "st/isolated": None, "st/shared again": None,
            "st/last": None}
    cases = selftest_cases()
    setup = ["CREATE TABLE t(x)"]
    bad = 0
    for driver in ("shell", "python"):
        if driver == "shell":
            outcomes, inv = run_shell(cases, args.shell, args.module, setup, tmp, hang_seconds=3)
        else:
            outcomes, inv = run_python(cases, args.module, args.catalogue, setup, tmp, None, hang_seconds=3,
                                       selftest=True)
        for c, o in zip(cases, outcomes):
            why = check(c, o, 1000)
            w = want[c["id"]]
            ok = (why is None) if w is None else (why is not None and why.startswith(w) or (why or "").find(w) >= 0)
            print("%s %-7s %-34s -> %s" % ("ok  " if ok else "FAIL", driver, c["id"], why or "pass"))
            bad += not ok
        if inv != 3:
            print("FAIL %s: %d invocations, expected 3 (one per crash/hang, then the rest)" % (driver, inv))
            bad += 1
    print("self-test: %s" % ("passed" if not bad else "%d FAILED" % bad))
    return 1 if bad else 0


# ---------------------------------------------------------------------------


def report(cat, cases, outcomes, driver, elapsed, invocations, verbose):
    failures, by_bug = [], {}
    for c, o in zip(cases, outcomes):
        why = check(c, o, cat["max_message"])
        if why:
            failures.append((c, why))
            if c.get("bug"):
                by_bug.setdefault(c["bug"], []).append((c, why))
    unexpected = [(c, w) for c, w in failures if not c.get("bug")]
    for c, why in unexpected:
        print("FAIL [%s] %s\n    SQL: %s\n    %s" % (driver, c["id"], shorten(c["sql"], 300), why))
    for b, items in by_bug.items():
        print("KNOWN BUG (%d cases fail): %s" % (len(items), b))
        for c, why in items[: (len(items) if verbose else 3)]:
            print("    %s\n      SQL: %s\n      %s" % (c["id"], shorten(c["sql"], 200), why))
        if not verbose and len(items) > 3:
            print("    ... and %d more (--verbose)" % (len(items) - 3))
    fixed = [c for c, o in zip(cases, outcomes) if c.get("bug") and not check(c, o, cat["max_message"])]
    if fixed:
        print("NOTE: %d case(s) marked with a bug pass now (the bug may be fixed, or not hit by this build)%s" %
              (len(fixed), ":" if verbose else "; --verbose lists them"))
        for c in fixed if verbose else []:
            print("    %s: %s" % (c["id"], c["bug"]))
    crashes = sum(1 for o in outcomes if o["status"] in ("crash", "hang"))
    print("catalogue/%s: %d cases, %d passed, %d failed (%d known bugs, %d unexpected, %d crashes/hangs); "
          "%d invocation(s), %.1f s" % (driver, len(cases), len(cases) - len(failures), len(failures),
                                        len(failures) - len(unexpected), len(unexpected), crashes, invocations, elapsed))
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default=os.environ.get("OPTDP_MODULE") or os.path.join(ROOT, "build", "optdp.so"))
    ap.add_argument("--shell", default=shutil.which("sqlite3"))
    ap.add_argument("--catalogue", default=DEFAULT_CATALOGUE)
    ap.add_argument("--driver", choices=("shell", "python", "coverage"), default="shell")
    ap.add_argument("--only", action="append", help="run only the cases whose id contains this (repeatable)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--python-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--tmp", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.module = os.path.abspath(args.module)
    if args.python_child:
        return python_child(args)
    if args.driver == "coverage" and not args.self_test:
        return coverage(args)
    tmp = tempfile.mkdtemp(prefix="optdp-catalogue-")
    try:
        if args.self_test:
            return self_test(args, tmp)
        cat, cases = load_cases(args.catalogue, tmp, args.only)
        t0 = time.monotonic()
        if args.driver == "shell":
            if not args.shell:
                print("no sqlite3 shell (--shell)")
                return 1
            outcomes, inv = run_shell(cases, args.shell, args.module, cat["setup"], tmp)
        else:
            outcomes, inv = run_python(cases, args.module, args.catalogue, cat["setup"], tmp, args.only)
        return report(cat, cases, outcomes, args.driver, time.monotonic() - t0, inv, args.verbose)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
