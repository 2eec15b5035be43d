#!/usr/bin/python3
"""Draws the two figures of docs/ from optdp's own SQL functions.

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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", default=os.path.join(ROOT, "build", "optdp.so"), help="path to optdp.so")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "plots"),
                    help="directory for the PNG files (docs to regenerate the committed ones)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    db = connect(os.path.abspath(args.module))
    for name, plot in (("noise_cost.png", plot_noise_cost), ("remap.png", plot_remap)):
        path = os.path.join(args.out, name)
        plot(db, path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
