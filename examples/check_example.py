#!/usr/bin/python3
"""Runs one example and sanity-checks its output (for ctest, label "examples").

    check_example.py python         --python PY --module SO
    check_example.py embed          --exe PROGRAM
    check_example.py reconstruction --exe PROGRAM
    check_example.py plots          --python PY --module SO --out DIR
    check_example.py demo           --shell SQLITE3 --module SO
    check_example.py auction        --python PY --module SO

The checks are about the shape of the output and what must hold whatever the
noise (true values, integers, the attack's success and failure by a wide
margin), never about exact noisy values. The example's output is echoed so
that a failing test shows it. Exits 1 on the first failed check.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd, cwd=None, stdin=None, expect_ok=True):
    print("$ " + " ".join(cmd))
    p = subprocess.run(cmd, cwd=cwd, stdin=stdin, capture_output=True, text=True, timeout=120)
    print(p.stdout)
    if p.stderr:
        print("stderr:\n" + p.stderr)
    if expect_ok and p.returncode != 0:
        fail(f"exit status {p.returncode}")
    return p.stdout + p.stderr  # the shell reports errors on stderr


def fail(msg):
    print("CHECK FAILED: " + msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def check_python(args):
    out = run([args.python, os.path.join(HERE, "python_example.py"), args.module])
    for heading in ("1. Private counts beside the true ones", "2. A private sum: staircase vs Laplace",
                    "3. One user's optimal remap", "4. A privacy budget ledger"):
        expect(heading in out, f"section '{heading}' printed")
    expect(re.search(r"smokers: true 400, private at eps 1: -?\d+,", out), "true smokers 400 beside an integer")
    for ward, count in (("cardiology", 667), ("geriatrics", 0), ("neurology", 445), ("oncology", 666),
                        ("pediatrics", 222)):
        expect(re.search(rf"^{ward}\s+{count}\s+-?\d+$", out, re.M), f"ward {ward}: true {count}, private integer")
    expect(re.search(r"^true sum\s+123,081,817\.50$", out, re.M), "true income sum")
    expect(re.search(r"^staircase_sum\s+-?[\d,]+\.\d+", out, re.M) and re.search(r"^laplace_sum\s+-?[\d,]+\.\d+",
                                                                                   out, re.M), "both private sums")
    expect(re.search(r"remapped for this user \d+$", out, re.M), "a remapped count")
    expect(re.search(r"^query 1: private smokers\s+-?\d+ .*remaining 1\.307\)$", out, re.M), "query 1 charged")
    expect(re.search(r"^query 2: private smokers\s+-?\d+ .*remaining 0\.614\)$", out, re.M), "query 2 charged")
    expect(re.search(r"^query 3: refused: private_count: privacy budget exhausted", out, re.M), "query 3 refused")
    expect(len(re.findall(r"^  \d+  private_count\s+0\.6931$", out, re.M)) == 2, "two ledger entries")


def check_embed(args):
    out = run([args.exe])
    expect("version=" in out and "rng=os" in out, "version and noise source")
    expect(re.search(r"-> true_count=100 \| private_count=-?\d+$", out, re.M), "smokers: true 100, private integer")
    for ward, count in (("cardiology", 250), ("oncology", 125), ("pediatrics", 125)):
        expect(re.search(rf"-> ward={ward} \| true_count={count} \| private_count=-?\d+$", out, re.M),
               f"ward {ward}: true {count}, private integer")
    expect(re.search(r"-> true_sum=2754 \| private_sum=-?\d+(\.\d+)?$", out, re.M), "a private sum")


def check_reconstruction(args):
    out = run([args.exe])
    rows = re.findall(r"^\((a|b|c)\) .*?\s(\d+)/(\d+)\s+[\d.]+\s+\S+\s+([\d.]+)%$", out, re.M)
    expect(len(rows) == 5, "five rows in the table (three of scenario a, b, c)")
    for scenario, answered, asked, pct in rows:
        pct = float(pct)
        if scenario == "a":
            expect(pct >= 90 and answered == asked, f"(a) all {asked} queries answered, {pct}% recovered >= 90%")
        elif scenario == "b":
            expect(0 < int(answered) < int(asked) // 10, f"(b) the ledger answered only {answered} of {asked}")
            expect(pct <= 75, f"(b) {pct}% recovered <= 75%")
        else:
            expect(pct <= 70 and answered == asked, f"(c) {pct}% recovered <= 70%")
    expect(re.search(r"^\(b\) the ledger stopped the attack after \d+ of \d+ queries: "
                     r"private_count: privacy budget exhausted", out, re.M), "(b) reports the refusal")


def check_plots(args):
    names = ("noise_cost.png", "remap.png", "intervals.png")
    os.makedirs(args.out, exist_ok=True)
    for name in names:  # no stale files from an earlier run
        if os.path.exists(os.path.join(args.out, name)):
            os.remove(os.path.join(args.out, name))
    run([args.python, os.path.join(HERE, "plots.py"), "--module", args.module, "--out", args.out])
    for name in names:
        path = os.path.join(args.out, name)
        expect(os.path.exists(path), f"{path} written")
        with open(path, "rb") as f:
            data = f.read()
        expect(data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20000, f"{name} is a PNG of {len(data)} bytes")


def check_demo(args):
    # run_demo.sh writes its database and ledger under WORKDIR/build: a fresh
    # temporary directory, so the ledger is new.
    with tempfile.TemporaryDirectory() as tmp:
        # The demo exits 0: the refused release at the end is shown, not failed on.
        out = run(["bash", os.path.join(HERE, "run_demo.sh"), tmp, os.path.abspath(args.module), args.shell])
    expect(re.search(r"│\s+400\s+│\s+-?\d+\s+│\s+-?\d+\s+│\s+-?\d+\s+│", out), "true smokers 400 beside three private counts")
    for ward, count in (("cardiology", 667), ("geriatrics", 0), ("neurology", 445), ("oncology", 666),
                        ("pediatrics", 222)):
        # The 3-column table (ward, true, private); private_groups' 4-column rows can
        # show the same ward with a noisy count equal to this true count.
        expect(len(re.findall(rf"^│ {ward}\s+│\s+{count}\s+│\s+-?\d+\s+│$", out, re.M)) == 1,
               f"ward {ward}: true {count}")
    expect(re.search(r"privacy budget exhausted: [\d.]+ of 4\.5 spent, and this release costs 0\.69", out),
           "the refused release")


def check_auction(args):
    out = run([args.python, os.path.join(HERE, "auction.py"), args.module, "--seed", "2026"])
    m = re.search(r"^OPT = ([\d.]+) at price", out, re.M)
    expect(m is not None, "OPT printed")
    opt = float(m.group(1))
    bound = float(re.search(r"= (-?[\d.]+)$", out.split("theorem's bound")[1].splitlines()[0]).group(1))
    rows = {r[0]: (float(r[1]), float(r[2])) for r in re.findall(r"^(exponential|permute_and_flip)\s+([\d.]+)\s+([\d.]+)",
                                                                   out, re.M)}
    expect(set(rows) == {"exponential", "permute_and_flip"}, "both mechanisms ran")
    # The theorem holds for the expectation; the mean of 2000 releases is within a
    # few revenue units of it (revenues lie in [0, OPT], so its standard error is
    # below OPT / sqrt(2000) < 0.023 OPT), far from the bound's margin.
    for method, (mean, exact) in rows.items():
        expect(exact >= bound, f"{method}: exact expected revenue {exact} >= the theorem's bound {bound}")
        expect(abs(mean - exact) <= 0.1 * opt, f"{method}: mean revenue {mean} near its exact expectation {exact}")
        expect(mean >= bound, f"{method}: mean revenue {mean} >= the theorem's bound {bound}")
    expect(rows["permute_and_flip"][1] >= rows["exponential"][1] - 1e-9,
           "permute-and-flip's expected revenue is at least the exponential mechanism's")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("example", choices=["python", "embed", "reconstruction", "plots", "demo", "auction"])
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--module")
    ap.add_argument("--exe")
    ap.add_argument("--out")
    ap.add_argument("--shell", default=shutil.which("sqlite3"))
    args = ap.parse_args()
    globals()["check_" + args.example](args)
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
