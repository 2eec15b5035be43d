#!/usr/bin/python3
"""CPU time of gaussian_count charges (shift 1) on (1, 1e-6) SQLite ledgers
where the privacy curve decides them (docs/accounting.md, "Charges decided by
the curve"; issue 29, item 4). Process CPU time (the ledger runs in this
process; the machine is shared, wall time is noise). Three measures:

  1. sigma 200: every charge timed alone, from 15 entries to the last one the
     curve allows (2,241): the charges zCDP decides (to 1,948) and those only
     the curve decides (1,949 to 2,241), median, mean and max per charge.
  2. "10 vs 10,000": a ledger at sigma 14 (zCDP fits 9 releases, the curve 10:
     its 10th charge is the curve's) against one at sigma 423 (zCDP fits
     8,716, the curve 10,000 or so): the 10th charge of the first (each time
     on a fresh ledger file; the first of them with an empty cache, the others
     find the cache's entry) against the charges of the second from 9,001 on,
     all decided by the curve (median, mean, max).
  3. dp_further_releases at the end of the sigma 200 ledger.

    /usr/bin/python3 bench/pld_charge_bench.py build/optdp.so
"""
import os
import sqlite3
import statistics
import sys
import tempfile
import time

d = tempfile.mkdtemp(prefix="optdp-pld-charge-")
files = iter(range(10**6))
db = None


def attach():
    """A new connection (one ledger per connection) on a new ledger file."""
    global db
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.enable_load_extension(True)
    db.load_extension(sys.argv[1])
    db.execute("CREATE TABLE t(k INTEGER PRIMARY KEY)")
    db.execute("WITH RECURSIVE n(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM n WHERE v < 10999) "
               "INSERT INTO t SELECT v FROM n")
    db.execute("SELECT dp_ledger_attach(?, 1.0, 1e-6, 'normal')", (os.path.join(d, "l%d" % next(files)),))


def one(sigma):
    return "SELECT gaussian_count(%r) FROM t WHERE k = 0" % (1 / (2 * sigma * sigma))


def charge(q):
    """CPU seconds of one charge, and whether it was accepted."""
    t = time.process_time()
    try:
        db.execute(q).fetchone()
        ok = True
    except sqlite3.Error:
        ok = False
    return time.process_time() - t, ok


def entries():
    return db.execute("SELECT count(*) FROM dp_ledger_entries").fetchone()[0]


def stats(xs):
    return "median %.2f ms, mean %.2f ms, max %.1f ms (%d charges)" % (
        statistics.median(xs) * 1e3, statistics.mean(xs) * 1e3, max(xs) * 1e3, len(xs))


# 1. sigma 200, every charge.
attach()
q = one(200.0)
zcdp, curve = [], []
while True:
    n = entries()
    dt, ok = charge(q)
    if not ok:
        break
    (zcdp if n < 1948 else curve).append(dt)
last = entries()
t = time.process_time()
further = db.execute("SELECT dp_further_releases('gaussian', 200)").fetchone()[0]
p = time.process_time() - t
print("sigma 200: %d charges accepted" % last)
print("  charges 15-1,948 (zCDP decides): %s" % stats(zcdp[14:]))
print("  charges 1,949-%d (the curve decides): %s" % (last, stats(curve)))
print("  dp_further_releases('gaussian', 200) at the end: %d, %.1f ms" % (further, p * 1e3))

# 2. 10 vs 10,000.
short = []
for _ in range(9):
    attach()
    q = one(14.0)
    db.execute("SELECT k, gaussian_count(%r) FROM t WHERE k < 9 GROUP BY k" % (1 / (2 * 14.0 * 14.0))).fetchall()
    assert entries() == 9
    dt, ok = charge(q)
    assert ok and entries() == 10, "the 10th charge at sigma 14 is accepted"
    short.append(dt)
    assert not charge(q)[1], "the 11th is refused"
attach()
q = one(423.0)
db.execute("SELECT k, gaussian_count(%r) FROM t WHERE k < 9000 GROUP BY k" % (1 / (2 * 423.0 * 423.0))).fetchall()
assert entries() == 9000
long_ = []
while True:
    dt, ok = charge(q)
    if not ok:
        break
    long_.append(dt)
print("sigma 14, the 10th charge (the curve decides; 11th refused): first %.2f ms (empty cache), then %s"
      % (short[0] * 1e3, stats(short[1:])))
print("sigma 423, charges 9,001-%d (the curve decides): %s" % (entries(), stats(long_)))
print("10,000 / 10: ratio of medians %.2f; of means %.2f (against the 10th charges that found the cache), "
      "%.3f (against the first)" % (statistics.median(long_) / statistics.median(short[1:]),
                                    statistics.mean(long_) / statistics.mean(short[1:]), statistics.mean(long_) / short[0]))
