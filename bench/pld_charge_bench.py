#!/usr/bin/python3
"""CPU time of one gaussian_count charge (noise sd 200) on a (1, 1e-6) SQLite
ledger at three history lengths: 15 entries, 1,915 (zCDP still fits), and the
last ones the privacy curve allows (each decided by the PLD, docs/accounting.md).
Ratios against the 15-entry charge of the same run. Process CPU time (the
machine is shared; wall time is noise).

    /usr/bin/python3 bench/pld_charge_bench.py build/optdp.so
"""
import sqlite3, time, os, sys, tempfile
d = tempfile.mkdtemp(dir="/tmp/pld2_bench")
db = sqlite3.connect(":memory:", isolation_level=None)
db.enable_load_extension(True)
db.load_extension(sys.argv[1])
db.execute("CREATE TABLE t(k)")
db.execute("WITH RECURSIVE n(v) AS (SELECT 0 UNION ALL SELECT v + 1 FROM n WHERE v < 2999) INSERT INTO t SELECT v FROM n")
db.execute("SELECT dp_ledger_attach(?, 1.0, 1e-6, 'normal')", (os.path.join(d, "l"),))
rho = repr(1 / (2 * 200.0 * 200.0))
one = "SELECT gaussian_count(%s) FROM t WHERE k = 0" % rho
def per_charge(n):
    t = time.process_time()
    for _ in range(n): db.execute(one).fetchone()
    return (time.process_time() - t) / n
db.execute("SELECT k, gaussian_count(%s) FROM t WHERE k < 10 GROUP BY k" % rho).fetchall()
a = per_charge(5)
db.execute("SELECT k, gaussian_count(%s) FROM t WHERE k < 1900 GROUP BY k" % rho).fetchall()
b = per_charge(5)   # entries 1915..1919: zCDP still fits
n = db.execute("SELECT dp_further_releases('gaussian', 200)").fetchone()[0]
db.execute("SELECT k, gaussian_count(%s) FROM t WHERE k < %d GROUP BY k" % (rho, n - 5)).fetchall()
c = per_charge(5)   # the last five the curve allows
t = time.process_time(); db.execute("SELECT dp_further_releases('gaussian', 200)").fetchone(); p = time.process_time() - t
print("CPU per charge: 15 entries %.2f ms, 1,915 (zCDP fits) %.2f ms, %d (by the curve) %.2f ms; ratio %.1fx, %.1fx; dp_further_releases at the end %.0f ms"
      % (a * 1e3, b * 1e3, 1920 + n - 5, c * 1e3, b / a, c / a, p * 1e3))
