#!/usr/bin/env bash
# The demo itself (scripts/demo.sh builds first, then runs this): creates the
# sample database from sql/fixtures/, runs examples/demo.sql in the sqlite3
# shell, and then shows a release that the privacy ledger refuses. The
# refusal is the point of the last step, so it is shown, not failed on: the
# script exits 0 when everything behaved as designed (and 1 if the last
# release were NOT refused).
#
#   examples/run_demo.sh [WORKDIR [MODULE [SHELL]]]
#
# WORKDIR (default: the repository root) gets build/hospital.db and the
# ledger build/demo.ledger, which demo.sql attaches by that relative path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "${1:-$root}"
work=$(cd "${1:-$root}" && pwd)
module=${2:-$root/build/optdp}
module=$(cd "$(dirname "$module")" && pwd)/$(basename "$module")  # absolute: the shell runs in WORKDIR
shell=${3:-sqlite3}
mkdir -p "$work/build"
cd "$work"
rm -f build/hospital.db build/demo.ledger build/demo.ledger-wal build/demo.ledger-shm
"$shell" build/hospital.db < "$root/sql/fixtures/hospital.sql"
"$shell" build/hospital.db -cmd ".load $module" < "$root/examples/demo.sql"
echo "   One more count at alpha 0.5 (cost 0.693) no longer fits, so it is refused:"
if out=$("$shell" build/hospital.db -cmd ".load $module" -cmd ".output /dev/null" \
         -cmd "SELECT dp_ledger_attach('build/demo.ledger', 4.5, 1e-5)" -cmd ".output stdout" \
         "SELECT private_count(0.5) FROM patients" 2>&1); then
  echo "   not refused: $out" >&2
  exit 1
fi
echo "$out" | tail -n 1 | sed -e 's/^Error: \(stepping, \)\{0,1\}/   refused: /'
