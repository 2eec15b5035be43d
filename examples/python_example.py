#!/usr/bin/python3
"""optdp from Python, with nothing but the standard library's sqlite3 module.

Run it from the repository root, after building (cmake --build build):

    /usr/bin/python3 examples/python_example.py [path/to/optdp.so]

The module path defaults to build/optdp.so. Use Debian's /usr/bin/python3:
its sqlite3 module can load extensions (Connection.enable_load_extension),
which some other Python builds leave out.

It builds the sample hospital database (sql/fixtures/hospital.sql) in memory
and shows, in four sections:
  1. private counts beside the true ones,
  2. a private sum with staircase noise and with Laplace noise beside the true sum,
  3. a count remapped by one user for its own loss and prior (remap_count),
  4. a privacy budget ledger: the budget being spent and a query refused.
Every private value changes from run to run: the noise comes from the
operating system's CSPRNG.
"""
import os
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(ROOT, "sql", "fixtures", "hospital.sql")


def connect(module):
    """An in-memory database with optdp loaded and the hospital data in it."""
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(module)
    db.enable_load_extension(False)  # no further extensions from SQL
    with open(FIXTURE, encoding="utf-8") as f:
        db.executescript(f.read())
    return db


def section(title):
    print()
    print(title)
    print("-" * len(title))


def main():
    module = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "optdp.so")
    db = connect(os.path.abspath(module))
    version, rng = db.execute("SELECT dp_version(), dp_rng()").fetchone()
    print(f"optdp {version}, noise from: {rng}")

    # 1. Counts. alpha = e^-epsilon is the privacy level: larger alpha, more noise.
    section("1. Private counts beside the true ones")
    # Parameters are literals or bound values, fixed before any row is read:
    # compute alpha for epsilon = 1 first, then bind it.
    (alpha_eps1,) = db.execute("SELECT dp_alpha(1.0)").fetchone()
    # Two levels of one count in one statement: private_count(x, alpha) counts
    # the rows where x is not NULL, so (1, alpha) is a second form beside
    # (alpha). Two calls of the same form with different alphas in one
    # statement are refused: with no rows, which call is which cannot be told.
    true, c1, c2 = db.execute(
        "SELECT count(*), private_count(?), private_count(1, 0.9) FROM patients WHERE smoker", (alpha_eps1,)
    ).fetchone()
    print(f"smokers: true {true}, private at eps 1: {c1}, private at alpha 0.9 (eps 0.105): {c2}")
    # Per ward: the keys come from the public table, so every ward gets a row,
    # also geriatrics, which has no patients (its private count is 0 + noise).
    print(f"{'ward':<12} {'true':>5} {'private (alpha 0.5)':>20}")
    for ward, true, private in db.execute(
        """SELECT w.ward, count(p.id), private_count(p.id, 0.5)
           FROM wards w LEFT JOIN patients p ON p.ward = w.ward
           GROUP BY w.ward ORDER BY w.ward"""
    ):
        print(f"{ward:<12} {true:>5} {private:>20}")

    # 2. Sums. Each income is clamped into [0, 200000] (the sensitivity); the
    # staircase mechanism adds less noise than Laplace at the same epsilon.
    section("2. A private sum: staircase vs Laplace (eps 1, incomes clamped into [0, 200000])")
    true, stair, lap = db.execute(
        """SELECT sum(income), staircase_sum(income, 1.0, 0, 200000), laplace_sum(income, 1.0, 0, 200000)
           FROM patients"""
    ).fetchone()
    print(f"true sum      {true:16,.2f}")
    print(f"staircase_sum {stair:16,.2f}   (off by {stair - true:+,.0f})")
    print(f"laplace_sum   {lap:16,.2f}   (off by {lap - true:+,.0f})")
    e_stair, e_lap = db.execute(
        "SELECT noise_cost('staircase', 1, 200000, 'l1'), noise_cost('laplace', 1, 200000, 'l1')"
    ).fetchone()
    print(f"expected |noise|: staircase {e_stair:,.0f}, Laplace {e_lap:,.0f}")

    # 3. Remap. The geometric mechanism is optimal for every user at once,
    # once each user post-processes the released count in its own optimal way.
    # Here: a user who knows the count is at most n = 50 (a public bound),
    # believes small counts are likelier (prior proportional to 0.95^k), and
    # wants a small expected absolute error. The remap is post-processing:
    # it costs no privacy.
    section("3. One user's optimal remap of a private count (remap_count)")
    n, alpha = 50, 0.8
    prior = "[" + ",".join(f"{0.95 ** k:.6f}" for k in range(n + 1)) + "]"
    # Release the count once, then remap the released value.
    true, released = db.execute(
        "SELECT count(*), private_count(?) FROM patients WHERE ward = 'pediatrics' AND age < 3", (alpha,)
    ).fetchone()
    remapped = db.execute("SELECT remap_count(?, ?, ?, 'absolute', ?)", (released, n, alpha, prior)).fetchone()[0]
    print(f"pediatric patients under 3: true {true}, released (alpha {alpha}) {released}, "
          f"remapped for this user {remapped}")
    # The whole remap, as ranges of released values (clamped into [0, n]) -> answer.
    ranges = []
    for observed, answer in db.execute("SELECT observed, answer FROM optimal_remap(?, ?, 'absolute', ?)",
                                       (n, alpha, prior)):
        if ranges and ranges[-1][2] == answer and ranges[-1][1] == observed - 1:
            ranges[-1][1] = observed
        else:
            ranges.append([observed, observed, answer])
    print("the user's remap: " + ", ".join(f"{lo}..{hi} -> {a}" if lo < hi else f"{lo} -> {a}"
                                           for lo, hi, a in ranges[:8]) + (", ..." if len(ranges) > 8 else ""))
    face, best = db.execute(
        """SELECT sum(g.probability * abs(g.input - g.output) * p.value) / (SELECT sum(value) FROM json_each(?1)),
                  optimal_loss(?2, ?3, 'absolute', ?1)
           FROM geometric_matrix(?2, ?3) g JOIN json_each(?1) p ON p.key = g.input""",
        (prior, n, alpha),
    ).fetchone()
    print(f"its expected |error|: {face:.3f} taking the count at face value, {best:.3f} after the remap")

    # 4. A budget. The ledger is a separate file that optdp writes on its own
    # connection; every release is charged before it is returned, and a
    # release that does not fit is refused (the query fails).
    section("4. A privacy budget ledger (total epsilon 2)")
    with tempfile.TemporaryDirectory() as tmp:
        ledger = os.path.join(tmp, "hospital.ledger")
        budget = db.execute("SELECT dp_ledger_attach(?, 2.0)", (ledger,)).fetchone()[0]
        print(f"attached {os.path.basename(ledger)}: remaining {budget}")
        cost = db.execute("SELECT dp_epsilon(0.5)").fetchone()[0]
        for i in range(1, 4):
            try:
                (value,) = db.execute("SELECT private_count(0.5) FROM patients WHERE smoker").fetchone()
                spent, left = db.execute("SELECT dp_budget_spent(), dp_budget_remaining()").fetchone()
                print(f"query {i}: private smokers {value:>4}  (cost {cost:.3f}; spent {spent:.3f}, remaining {left:.3f})")
            except sqlite3.OperationalError as e:
                print(f"query {i}: refused: {e}")
        print("ledger entries:")
        for id_, function, eps in db.execute("SELECT id, function, epsilon FROM dp_ledger_entries()"):
            print(f"  {id_}  {function:<14} {eps:.4f}")
        db.close()  # close before the temporary directory (and the ledger) is removed
    return 0


if __name__ == "__main__":
    sys.exit(main())
