#!/usr/bin/env bash
# The test command: installs the dependencies, builds, and runs the whole
# suite twice: once in the normal build (g++), once built with clang under
# AddressSanitizer + UndefinedBehaviorSanitizer, with short libFuzzer runs.
# OPTDP_SKIP_SANITIZERS=1 skips the second pass (quick local runs only).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)

echo "== 1/2: normal build, whole suite"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTDP_BUILD_TESTS=ON
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

if [ "${OPTDP_SKIP_SANITIZERS:-0}" = 1 ]; then
  echo "== 2/2: skipped (OPTDP_SKIP_SANITIZERS=1)"
  exit 0
fi
echo "== 2/2: ASan + UBSan build (clang), whole suite and short fuzz runs"
# The PostgreSQL module too (OPTDP_POSTGRES is off by default under the
# sanitizers): its tests start their servers from this process's environment
# (tests/postgres/pgserver.py), so the uninstrumented server runs with the ASan
# runtime preloaded and loads the instrumented module; as root the servers run
# as `nobody`, which reads the runtime from the system's directories and a
# copy of the module in the server's temporary tree.
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOPTDP_BUILD_TESTS=ON \
  -DOPTDP_SANITIZE=ON -DOPTDP_FUZZ=ON -DOPTDP_POSTGRES=ON
cmake --build build-asan -j"$jobs"
# The sqlite3 shell, Python and the PostgreSQL server are not instrumented:
# preload the shared ASan runtime (which carries UBSan) for every test; leak
# detection is switched on per test where no Python process is involved (see
# tests/CMakeLists.txt), and off for the servers (PostgreSQL frees a
# process's memory by ending it).
# tests/postgres/asan_first.c makes the runtime initialise outside glibc's
# gettext lock in PostgreSQL's binaries (without it they hang at their start);
# it lives in a directory the servers' user (`nobody` as root) can read.
asan_runtime=$(clang++ -print-file-name=libclang_rt.asan-x86_64.so)
test -r "$asan_runtime"
asan_dir=$(mktemp -d)
trap 'rm -rf "$asan_dir"' EXIT
chmod 755 "$asan_dir"
cc -shared -fPIC -O1 -o "$asan_dir/asan_first.so" tests/postgres/asan_first.c -ldl
chmod 644 "$asan_dir/asan_first.so"
# OPTDP_SERVER_PRELOAD: the preload for the PostgreSQL servers alone, whose
# Python drivers and clients run without the runtime where they load nothing
# instrumented (tests/postgres/CMakeLists.txt, pgserver.py);
# OPTDP_SANITIZER_PASS=1 tells tests that skip their statistical parts here.
# The audits, chi-square laws and install checks run in the first pass only
# (-E): thousands of releases take the paths one release takes, and the
# installs check files, not memory.
OPTDP_SERVER_PRELOAD="$asan_runtime $asan_dir/asan_first.so" OPTDP_SANITIZER_PASS=1 \
LD_PRELOAD="$asan_runtime $asan_dir/asan_first.so" ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs" -E 'Audit|ChiSquare|Law|^install[.]'
