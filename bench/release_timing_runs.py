#!/usr/bin/env python3
"""Summarises several runs of release_timing (files written with --dump).

    for i in 1 2 3; do build-bench/bench/release_timing --dump /tmp/timing_$i.tsv; done
    python3 bench/release_timing_runs.py /tmp/timing_{1,2,3}.tsv

Prints, per setting (index, scan, ledger), one Markdown table: per form the
medians over the runs of the hit and miss medians, the gap (median(miss) -
median(hit)) of every run, the gap less that of the reference reading the same
columns (count(x) for forms with x, noop_count_agg(0.5) otherwise), the
interquartile and 5-95 % widths, in how many runs each median lay inside the
other case's IQR, and acc = 0.5 + D/2 (D: Kolmogorov-Smirnov distance, acc the
success rate of the best threshold on one timing). Main columns: releases
after one with the other id (read_params tokenizes); last column: after one
with the same id (read_params reuses its last result). See bench/README.md.
"""
import csv
import statistics
import sys
from collections import defaultdict

REFERENCES = {"count(x) [built-in]": True, "noop_count_agg(0.5) [C]": False}  # label -> reads x


def reads_x(label):
    return "(x" in label


def quantile(v, p):
    pos = p * (len(v) - 1)
    i = int(pos)
    f = pos - i
    return v[i] * (1 - f) + v[i + 1] * f if i + 1 < len(v) else v[i]


def ks_distance(a, b):
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        t = min(a[i], b[j])
        while i < len(a) and a[i] <= t:
            i += 1
        while j < len(b) and b[j] <= t:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    return d


def summarise(path):
    data = defaultdict(lambda: defaultdict(list))
    forms = []
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            key = (r["setting"], r["form"])
            if r["form"] not in forms:
                forms.append(r["form"])
            hit_first = r["hit_first"] == "1"
            h, m = float(r["hit_ns"]), float(r["miss_ns"])
            data[key]["hit_same" if hit_first else "hit_other"].append(h)
            data[key]["miss_other" if hit_first else "miss_same"].append(m)
    out = {}
    for key, d in data.items():
        for hist in ("same", "other"):
            hit, miss = sorted(d["hit_" + hist]), sorted(d["miss_" + hist])
            q = {name: (quantile(hit, p), quantile(miss, p))
                 for name, p in (("p5", .05), ("p25", .25), ("med", .5), ("p75", .75), ("p95", .95))}
            hm, mm = q["med"]
            out[key + (hist,)] = dict(
                n=len(hit), hit=hm, miss=mm, gap=mm - hm,
                iqr=(q["p75"][0] - q["p25"][0], q["p75"][1] - q["p25"][1]),
                w90=(q["p95"][0] - q["p5"][0], q["p95"][1] - q["p5"][1]),
                inside=q["p25"][0] <= mm <= q["p75"][0] and q["p25"][1] <= hm <= q["p75"][1],
                acc=0.5 + ks_distance(hit, miss) / 2)
    return forms, out


def main(paths):
    if not paths:
        sys.exit(__doc__)
    runs = [summarise(p) for p in paths]
    forms = runs[0][0]
    runs = [r for _, r in runs]
    med = statistics.median
    for setting in ("index", "scan", "ledger"):
        if (setting, forms[0], "other") not in runs[0]:
            continue
        n = runs[0][(setting, forms[0], "other")]["n"]
        print(f"\n{setting}: {len(runs)} runs, {n} releases per case and history per run; ns")
        print("| form | hit | miss | **gap** (runs) | gap − ref | IQR hit / miss | p5–p95 width hit / miss "
              "| inside | acc | same id: gap (gap − ref), inside |")
        print("|---|---:|---:|---|---:|---:|---:|:-:|---:|---|")
        for f in forms:
            ref = next(r for r, x in REFERENCES.items() if x == reads_x(f))
            cells = {}
            for hist in ("other", "same"):
                rs = [r[(setting, f, hist)] for r in runs]
                gaps = [x["gap"] for x in rs]
                excess = med([x["gap"] - r[(setting, ref, hist)]["gap"] for x, r in zip(rs, runs)])
                cells[hist] = (rs, gaps, excess)
            rs, gaps, excess = cells["other"]
            _, sgaps, sexcess = cells["same"]
            sinside = sum(x["inside"] for x in cells["same"][0])
            is_ref = f in REFERENCES
            name = f.replace(" [built-in]", "").replace(" [C]", "")
            print(f"| `{name}`{' (reference)' if is_ref else ''} | {med([x['hit'] for x in rs]):.0f} "
                  f"| {med([x['miss'] for x in rs]):.0f} | **{med(gaps):.0f}** ({', '.join(f'{g:.0f}' for g in gaps)}) "
                  f"| {'—' if is_ref else f'{excess:.0f}'} "
                  f"| {med([x['iqr'][0] for x in rs]):.0f} / {med([x['iqr'][1] for x in rs]):.0f} "
                  f"| {med([x['w90'][0] for x in rs]):.0f} / {med([x['w90'][1] for x in rs]):.0f} "
                  f"| {sum(x['inside'] for x in rs)}/{len(rs)} | {med([x['acc'] for x in rs]):.2f} "
                  f"| {med(sgaps):.0f}{'' if is_ref else f' ({sexcess:.0f})'}, {sinside}/{len(rs)} |")


if __name__ == "__main__":
    main(sys.argv[1:])
