#!/usr/bin/env bash
# The demo command: installs what the module needs (not the test suite's
# dependencies), builds the module alone, and runs the demo
# (examples/run_demo.sh: the sample database from sql/fixtures/,
# examples/demo.sql in the sqlite3 shell, and a release the ledger refuses).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh module
echo "== building optdp (build/optdp.so: the module alone, not the tests)"
# A first configure leaves the tests out (their dependencies may be missing);
# a build directory that scripts/test.sh configured keeps its settings.
tests=()
[ -f build/CMakeCache.txt ] || tests=(-DOPTDP_BUILD_TESTS=OFF)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "${tests[@]}"
cmake --build build -j"$(nproc)" --target optdp
echo "== the demo"
bash examples/run_demo.sh . ./build/optdp sqlite3
