#!/usr/bin/env bash
# The demo command: installs the dependencies, builds optdp, creates the sample
# database from sql/fixtures/, and runs examples/demo.sql in the sqlite3 shell.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
rm -f build/hospital.db build/demo.ledger build/demo.ledger-wal build/demo.ledger-shm
sqlite3 build/hospital.db < sql/fixtures/hospital.sql
sqlite3 build/hospital.db -cmd '.load ./build/optdp' < examples/demo.sql
