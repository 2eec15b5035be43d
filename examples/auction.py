#!/usr/bin/python3
"""A private unlimited-supply auction: the exponential mechanism picks the price.

Run it from the repository root, after building (cmake --build build):

    /usr/bin/python3 examples/auction.py [path/to/optdp.so]

An auctioneer has an unlimited supply of a good and sells every bidder as many
units as that bidder's demand curve asks for at one posted price p in (0, 1].
Bidder i's demand b_i(p) never increases with p and p * b_i(p) <= 1, so the
revenue p * sum_i b_i(p) moves by at most 1 when one bidder comes, goes or
changes their bid: a score of sensitivity 1. The price is chosen from a public
grid of prices by private_select, with the exponential mechanism and with
permute-and-flip, at eps = 1.

McSherry and Talwar's theorem (docs/selection.md, "The auction") bounds the
exponential mechanism's expected revenue from below by
OPT - (3 / e) ln(e + e^2 OPT m), where OPT is the best revenue, m the number
of units sold at the best price, and e = eps / 2 (the theorem weighs prices by
exp(e q), private_select by exp(eps q / 2)). The example prints the revenue of
each mechanism averaged over many releases, the exact expected revenue from
selection_probabilities, OPT and the bound.

The bids are random but fixed (Python's random with a fixed seed); the prices
are drawn from the operating system's CSPRNG, unless --seed is given.
"""
import argparse
import json
import math
import os
import random
import sqlite3

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

EPS = 1.0
PRICES = 1000      # the public price grid: 0.001, 0.002, ..., 1.000
BIDDERS = 400
RELEASES = 2000


def bids(rng):
    """Each bidder wants one unit up to a value v1 and a second one up to v2 <= v1 / 2,
    so that p * b(p) <= 1: (bidder, up_to, units) rows, b_i(p) = sum of units with up_to >= p."""
    rows = []
    for i in range(BIDDERS):
        v1 = rng.randint(50, 1000)                  # in thousandths: on the price grid
        v2 = rng.randint(1, v1 // 2)
        rows += [(i, v1 / 1000, 1), (i, v2 / 1000, 1)]
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("module", nargs="?", default=os.path.join(ROOT, "build", "optdp"))
    ap.add_argument("--seed", type=int, help="seed optdp's noise (reproducible runs)")
    args = ap.parse_args()

    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(args.module)
    db.enable_load_extension(False)
    if args.seed is not None:
        db.execute("SELECT dp_seed(?)", (args.seed,))

    db.execute("CREATE TABLE demand(bidder INTEGER, up_to REAL, units INTEGER)")   # private
    db.executemany("INSERT INTO demand VALUES (?, ?, ?)", bids(random.Random(2026)))
    db.execute("CREATE TABLE prices(price REAL PRIMARY KEY)")                      # public
    db.executemany("INSERT INTO prices VALUES (?)", [(j / PRICES,) for j in range(1, PRICES + 1)])
    # The revenue at each public price, computed once from the private bids: the
    # scores of every release below (and, for the report only, OPT and the exact
    # expected revenue; a real auctioneer would print neither).
    db.execute("""CREATE TEMP TABLE revenue AS
                  SELECT price, price * sold AS revenue, sold
                  FROM (SELECT p.price, (SELECT coalesce(sum(units), 0) FROM demand d
                                         WHERE d.up_to >= p.price) AS sold
                        FROM prices p)
                  ORDER BY price""")
    table = db.execute("SELECT price, revenue, sold FROM revenue").fetchall()
    revenue = {price: rev for price, rev, _ in table}
    opt_price, opt, m = max(table, key=lambda r: r[1])
    e = EPS / 2
    bound = opt - 3 / e * math.log(math.e + e * e * opt * m)

    print(f"{BIDDERS} bidders, {len(table)} prices, eps = {EPS}")
    print(f"OPT = {opt:.3f} at price {opt_price:.3f}, selling m = {m} units")
    print(f"theorem's bound for the exponential mechanism: OPT - (3/e) ln(e + e^2 OPT m) = {bound:.3f}")
    print()
    print(f"{'method':18} {'mean revenue':>13} {'exact E[revenue]':>17} {'OPT - mean':>11}")
    scores = json.dumps([rev for _, rev, _ in table])
    for method in ("exponential", "permute_and_flip"):
        # The release: the candidates are the public prices, the scores their revenues.
        query = "SELECT private_select(price, revenue, ?, 1.0, ?) FROM revenue"
        total = 0.0
        for _ in range(RELEASES):
            price = db.execute(query, (EPS, method)).fetchone()[0]
            total += revenue[price]
        mean = total / RELEASES
        exact = sum(prob * table[k][1] for k, prob in db.execute(
            "SELECT candidate, probability FROM selection_probabilities(?, ?, 1.0, ?)", (scores, EPS, method)))
        print(f"{method:18} {mean:13.3f} {exact:17.3f} {opt - mean:11.3f}")


if __name__ == "__main__":
    main()
