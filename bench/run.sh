#!/usr/bin/env bash
# Builds the benchmarks in Release in a separate build directory and runs both.
#
#   bench/run.sh                      # full run: sampler_bench, then sql_bench at 10M rows
#   ROWS=1000000 bench/run.sh         # smaller SQL table
#   BUILD_DIR=/tmp/b bench/run.sh     # another build directory (default: build-bench)
#   SAMPLER_ARGS="--benchmark_repetitions=3" SQL_ARGS="--reps 5" bench/run.sh
#
# Output is also saved to $BUILD_DIR/sampler_bench.txt and $BUILD_DIR/sql_bench.txt.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-bench}"
rows="${ROWS:-10000000}"

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DOPTDP_BUILD_BENCH=ON -DOPTDP_BUILD_TESTS=OFF
cmake --build "$build" -j"$(nproc)" --target sampler_bench sql_bench

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "== sampler_bench"
# shellcheck disable=SC2086
"$build/bench/sampler_bench" ${SAMPLER_ARGS:-} | tee "$build/sampler_bench.txt"
echo "== sql_bench"
# shellcheck disable=SC2086
"$build/bench/sql_bench" --rows "$rows" ${SQL_ARGS:-} | tee "$build/sql_bench.txt"
