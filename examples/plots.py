#!/usr/bin/python3
"""Draws the three figures of docs/ from optdp's own SQL functions.

    /usr/bin/python3 examples/plots.py [--module build/optdp.so] [--out build/plots]

The committed pictures in docs/ are regenerated only on request:
    /usr/bin/python3 examples/plots.py --out docs

Needs Debian's python3 (its sqlite3 can load extensions) and python3-matplotlib
(in scripts/install-deps.sh). Writes, into the --out directory:

  noise_cost.png  the expected noise of the staircase mechanism and of Laplace
                  noise for sensitivity 1, eps from 0.1 to 10: magnitude E|X|
                  and power E[X^2], from noise_cost(), on log scales.
  remap.png       the range-restricted geometric mechanism G(20, 0.7) for a
                  true count of 6 (from geometric_matrix()), the optimal remap
                  of a user with absolute loss and a prior favouring small
                  counts (from optimal_remap()), and what the user ends up with.
  intervals.png   per ward of the sample database, private_count releases and
                  staircase_sum releases of income clamped into [0, 100000],
                  each with its exact 95% noise interval (count_interval,
                  sum_interval), against the true values, at eps 0.5 and 1.
                  The sample database is sql/fixtures/hospital.sql (what the
                  demo command writes to build/hospital.db), built in memory;
                  the noise is seeded (dp_seed(INTERVALS_SEED)), so the picture
                  is the same on every run.
"""
import argparse
import json
import os
import sqlite3
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAIR, LAPLACE = "#1f77b4", "#d62728"
INTERVALS_SEED = 42  # reproducible noise for the picture only: dp_seed makes noise predictable


def connect(module):
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(module)
    db.enable_load_extension(False)
    return db


def plot_noise_cost(db, path):
    # 60 values of eps, evenly spaced on a log scale from 0.1 to 10.
    eps = [10 ** (-1 + 2 * k / 59) for k in range(60)]
    cost = {}
    for mech in ("staircase", "laplace"):
        for c in ("l1", "l2"):
            cost[mech, c] = [db.execute("SELECT noise_cost(?, ?, 1, ?)", (mech, e, c)).fetchone()[0] for e in eps]

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.4))
    for ax, c, title in ((axes[0], "l1", "noise magnitude E|X|"), (axes[1], "l2", "noise power E[X²]")):
        ax.loglog(eps, cost["staircase", c], color=STAIR, lw=2, label="staircase (optimal)")
        ax.loglog(eps, cost["laplace", c], color=LAPLACE, lw=2, ls="--", label="Laplace")
        ax.set_title(title)
        ax.set_xlabel("epsilon")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("expected cost (sensitivity 1)")
    ax = axes[2]
    for c, ls, label in (("l1", "-", "E|X|"), ("l2", "--", "E[X²]")):
        ratio = [lap / st for lap, st in zip(cost["laplace", c], cost["staircase", c])]
        ax.semilogx(eps, ratio, color="black", ls=ls, lw=2, label=label)
    ax.set_title("Laplace / staircase")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("ratio of expected costs")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.suptitle("Staircase vs Laplace noise: noise_cost(mechanism, eps, 1, cost)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_remap(db, path):
    n, alpha, true = 20, 0.7, 6
    weights = [0.85 ** k for k in range(n + 1)]  # the user's prior: small counts likelier
    prior = json.dumps([round(w / sum(weights), 8) for w in weights])

    # Row `true` of G(n, alpha): the law of the released (clamped) count.
    pmf = [p for (p,) in db.execute(
        "SELECT probability FROM geometric_matrix(?, ?) WHERE input = ? ORDER BY output", (n, alpha, true))]
    remap = dict(db.execute("SELECT observed, answer FROM optimal_remap(?, ?, 'absolute', ?)", (n, alpha, prior)))
    answers = sorted(set(remap.values()))
    # The law of the user's answer: the released count pushed through the remap.
    remapped = [0.0] * (n + 1)
    for o, p in enumerate(pmf):
        remapped[remap[o]] += p
    err_raw = sum(p * abs(o - true) for o, p in enumerate(pmf))
    err_remap = sum(p * abs(r - true) for r, p in enumerate(remapped))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5))
    # Left: the released count; the outputs remapped to the same answer share a
    # colour, and consecutive answers alternate between two colours.
    colour = {a: (STAIR if i % 2 == 0 else "#ff7f0e") for i, a in enumerate(answers)}
    ax1.bar(range(n + 1), pmf, color=[colour[remap[o]] for o in range(n + 1)], edgecolor="black", lw=0.5)
    for o, p in enumerate(pmf):
        ax1.annotate(f"→{remap[o]}", (o, p), ha="center", va="bottom", fontsize=8, xytext=(0, 2),
                     textcoords="offset points")
    ax1.axvline(true, color="black", ls=":", lw=1)
    ax1.set_ylim(0, max(pmf) * 1.12)
    ax1.set_xticks(range(n + 1))
    ax1.set_xlabel("released count o  (bar label: →remap(o), the user's answer)")
    ax1.set_ylabel("probability")
    ax1.set_title(f"G({n}, {alpha}) for true count {true}: the law of the released count,\n"
                  f"grouped (colours) by the answer the user remaps it to (optimal_remap)")
    twin = ax1.twinx()
    twin.plot(range(n + 1), json.loads(prior), color="gray", marker=".", lw=1)
    twin.set_ylabel("the user's prior (gray)", color="gray")
    twin.tick_params(axis="y", colors="gray")
    twin.set_ylim(0, max(json.loads(prior)) * 1.6)

    # Right: the raw release against the remapped answer.
    xs = range(n + 1)
    ax2.bar([x - 0.2 for x in xs], pmf, width=0.4, color="#999999", label=f"released count, E|error| = {err_raw:.2f}")
    ax2.bar([x + 0.2 for x in xs], remapped, width=0.4, color=STAIR,
            label=f"user's remapped answer, E|error| = {err_remap:.2f}")
    ax2.axvline(true, color="black", ls=":", lw=1, label=f"true count {true}")
    ax2.set_xticks(list(xs))
    ax2.set_xlabel("value")
    ax2.set_ylabel("probability")
    ax2.set_title("the released count vs the user's remapped answer\n"
                  "(absolute loss, prior ∝ 0.85^k; optimal on average over the prior)")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_intervals(module, path):
    db = connect(module)
    with open(os.path.join(ROOT, "sql", "fixtures", "hospital.sql")) as f:
        db.executescript(f.read())
    db.execute("SELECT dp_seed(?)", (INTERVALS_SEED,)).fetchone()
    wards = [w for (w,) in db.execute("SELECT ward FROM wards ORDER BY ward")]
    upper, confidence, releases = 100000, 0.95, 10
    epsilons, colours = (0.5, 1.0), ("#ff7f0e", STAIR)
    per_ward = "FROM wards w LEFT JOIN patients p ON p.ward = w.ward GROUP BY w.ward ORDER BY w.ward"
    true_count = dict(db.execute(f"SELECT w.ward, count(p.id) {per_ward}"))
    true_sum = dict(db.execute(f"SELECT w.ward, total(p.income) {per_ward}"))
    # What a sum's interval covers: the sum of the incomes clamped into
    # [0, upper] (they are multiples of 0.5, so already on the grid, dp_sum_grid = 1/16).
    clamped_sum = dict(db.execute(f"SELECT w.ward, total(max(0, min(?, p.income))) {per_ward}", (upper,)))

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 6.6))
    width = 0.8 / (len(epsilons) * releases)  # the x offset of one release within its ward
    missed = {ax1: 0, ax2: 0}

    def release(ax, x, y, h, target, colour, label):
        """One release y with its interval y +- h, ringed when the interval misses its target."""
        ax.errorbar(x, y, yerr=h, fmt="o", ms=3, color=colour, elinewidth=1.2, capsize=0, label=label)
        if abs(y - target) > h:
            ax.plot(x, y, "o", ms=9, mfc="none", mec="red", mew=1.2,
                    label=None if missed[ax] else "interval misses what it covers")
            missed[ax] += 1

    for j, (eps, colour) in enumerate(zip(epsilons, colours)):
        alpha = db.execute("SELECT dp_alpha(?)", (eps,)).fetchone()[0]
        hc = db.execute("SELECT count_interval(?, ?)", (alpha, confidence)).fetchone()[0]
        hs = db.execute("SELECT sum_interval('staircase', ?, 0, ?, ?)", (eps, upper, confidence)).fetchone()[0]
        for r in range(releases):
            counts = dict(db.execute(f"SELECT w.ward, private_count(p.id, ?) {per_ward}", (alpha,)))
            sums = dict(db.execute(f"SELECT w.ward, staircase_sum(p.income, ?, 0, ?) {per_ward}", (eps, upper)))
            for i, ward in enumerate(wards):
                x = i - 0.4 + width * (j * releases + r + 0.5)
                first = r == 0 and i == 0
                # y: the release minus the true value; the bar: release +- h.
                release(ax1, x, counts[ward] - true_count[ward], hc, 0, colour,
                        f"eps {eps:g} (alpha {alpha:.3f}): release ± {hc}" if first else None)
                release(ax2, x, (sums[ward] - true_sum[ward]) / 1000, hs / 1000,
                        (clamped_sum[ward] - true_sum[ward]) / 1000, colour,
                        f"eps {eps:g}: release ± {hs:,.0f}" if first else None)

    n = len(epsilons) * releases * len(wards)
    expected = f"at most {n * (1 - confidence):.0f} expected"
    ax1.axhline(0, color="black", lw=1, label="true count (what the interval covers)")
    ax1.set_xticks(range(len(wards)))
    ax1.set_xticklabels([f"{w}\ntrue {true_count[w]}" for w in wards])
    ax1.set_ylabel("released count − true count")
    ax1.set_title(f"private_count(p.id, alpha) per ward, {releases} releases at each eps\n"
                  f"bars: ± count_interval(alpha, {confidence})\n{missed[ax1]} of {n} miss ({expected})")
    ax2.axhline(0, color="black", lw=1, label="true sum of income")
    for i, ward in enumerate(wards):
        ax2.hlines((clamped_sum[ward] - true_sum[ward]) / 1000, i - 0.42, i + 0.42, color="black", ls="--", lw=1.5,
                   label=f"sum clamped into [0, {upper:,}] (what the interval covers)" if i == 0 else None)
    ax2.set_xticks(range(len(wards)))
    ax2.set_xticklabels([f"{w}\ntrue {true_sum[w] / 1e6:.2f} M" for w in wards])
    ax2.set_ylabel("released sum − true sum (thousands)")
    ax2.set_title(f"staircase_sum(p.income, eps, 0, {upper:,}) per ward, {releases} releases at each eps\n"
                  f"bars: ± sum_interval('staircase', eps, 0, {upper:,}, {confidence})\n"
                  f"{missed[ax2]} of {n} miss the clamped sum ({expected})")
    for ax in (ax1, ax2):
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(f"Exact {confidence:.0%} noise intervals on the sample database (dp_seed({INTERVALS_SEED}))")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default=os.path.join(ROOT, "build", "optdp.so"), help="path to optdp.so")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "plots"),
                    help="directory for the PNG files (docs to regenerate the committed ones)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    module = os.path.abspath(args.module)
    db = connect(module)
    for name, plot in (("noise_cost.png", plot_noise_cost), ("remap.png", plot_remap)):
        path = os.path.join(args.out, name)
        plot(db, path)
        print(f"wrote {path}")
    path = os.path.join(args.out, "intervals.png")
    plot_intervals(module, path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
