"""pg_regress for the PostgreSQL extension, installcheck style.

Usage: run_regress.py MODULE_DIR REGRESS_DIR [OUTPUT_DIR]

Starts a throw-away server (pgserver.py: the build's extension installed into a
relocated copy of the server's tree), creates the database contrib_regression,
and runs PostgreSQL's own pg_regress with --use-existing against it on the
tests named in REGRESS_DIR/schedule: each REGRESS_DIR/sql/NAME.sql through
psql, its output compared with REGRESS_DIR/expected/NAME.out. The results and
regression.diffs go to OUTPUT_DIR (a temporary directory unless given), never
into the source tree; the diffs are printed when a test fails.

To accept a reviewed change of the output: run with OUTPUT_DIR, then copy
OUTPUT_DIR/results/NAME.out over REGRESS_DIR/expected/NAME.out (DEVELOPERS.md).
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server, _pg  # noqa: E402

DB = "contrib_regression"


def main():
    module_dir, regress_dir = sys.argv[1], os.path.abspath(sys.argv[2])
    out = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
    pg_regress = os.path.join(_pg("--pkglibdir"), "pgxs", "src", "test", "regress", "pg_regress")
    if not os.path.exists(pg_regress):
        print("pg_regress not found at %s (postgresql-server-dev-15)" % pg_regress)
        return 1
    tmp = tempfile.mkdtemp(prefix="optdp-regress-")
    outdir = out or tmp
    os.makedirs(outdir, exist_ok=True)
    try:
        with Server(module_dir) as server:
            server.psql("CREATE DATABASE %s" % DB)
            r = subprocess.run([pg_regress, "--use-existing", "--inputdir=" + regress_dir,
                                "--outputdir=" + outdir, "--bindir=" + _pg("--bindir"),
                                "--host=" + server.socket_dir, "--user=postgres", "--dbname=" + DB,
                                "--schedule=" + os.path.join(regress_dir, "schedule")],
                               capture_output=True, text=True)
            sys.stdout.write(r.stdout + r.stderr)
            if r.returncode != 0:
                diffs = os.path.join(outdir, "regression.diffs")
                if os.path.exists(diffs):
                    with open(diffs) as f:
                        sys.stdout.write(f.read())
            return r.returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
