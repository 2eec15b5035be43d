#!/usr/bin/env bash
# Runs every SQL test script (tests/shell/*.sql) and the demo through the real
# sqlite3 shell with the sanitizer-built module, LeakSanitizer ON, and fails
# on any sanitizer report (leak, memory error, undefined behaviour). Outputs
# are checked by the shell tests themselves; this only looks for reports.
# Usage: run_scripts_under_sanitizers.sh SQLITE3 MODULE SOURCE_DIR
set -u
shell=$1 module=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0
run() {  # name, then the shell's arguments; stdin is the script
  local name=$1
  shift
  ASAN_OPTIONS=detect_leaks=1 "$shell" "$@" >"$work/out" 2>"$work/err"
  if grep -qE 'ERROR: (LeakSanitizer|AddressSanitizer)|runtime error:' "$work/err"; then
    echo "FAIL: sanitizer report for $name:"
    cat "$work/err"
    fail=1
  else
    echo "ok: $name"
  fi
}
for f in "$src"/tests/shell/*.sql; do
  (cd "$work" && run "$(basename "$f")" :memory: -cmd ".load $module" <"$f")
done
sqlite3_db="$work/hospital.db"
"$shell" "$sqlite3_db" <"$src/sql/fixtures/hospital.sql"
mkdir -p "$work/build"
(cd "$work" && run demo.sql "$sqlite3_db" -cmd ".load $module" <"$src/examples/demo.sql")
exit $fail
