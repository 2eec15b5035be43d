#!/usr/bin/env bash
# The demo command: installs the dependencies, builds optdp, and runs the
# demo (examples/run_demo.sh: the sample database from sql/fixtures/,
# examples/demo.sql in the sqlite3 shell, and a release the ledger refuses).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "== building optdp (build/optdp.so: the module alone, not the tests)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$(nproc)" --target optdp
echo "== the demo"
bash examples/run_demo.sh . ./build/optdp sqlite3
