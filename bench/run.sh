#!/usr/bin/env bash
# Builds the benchmarks in Release in a separate build directory and runs them.
#
#   bench/run.sh                      # all four: sampler_bench, sql_bench at 10M rows, matrix_bench, release_timing
#   bench/run.sh timing               # only release_timing (a release with and without matching rows)
#   bench/run.sh sql sampler          # any of: sampler sql matrix timing grouped
#   bench/run.sh grouped              # private_groups vs its SQL baseline, 10M rows (not in the default set)
#   bench/run.sh select               # private_select over 10,000 candidates (not in the default set)
#   bench/run.sh gaussian             # discrete Gaussian vs two-sided geometric per sample (not in the default set)
#   bench/run.sh gaussian_groups      # private_groups' count errors, Gaussian vs geometric, by max_groups (not in the default set)
#   bench/run.sh floors               # 30,000 grouped releases: gaussian_count vs private_count vs count(*)
#   bench/run.sh moments              # private_avg's error vs the naive ratio; avg, var, median vs sum() at 10M rows
#   bench/run.sh postgres             # PostgreSQL 15: the aggregates vs the built-ins, serial and 2 workers, 10M rows
#   bench/run.sh pg_floor             # PostgreSQL 15: the aggregates vs the built-ins and vs no-op aggregates of their shape (CPU, 2M rows)
#   GROUPED_ARGS="--rows 1000000 --reps 7" bench/run.sh grouped
#   ROWS=1000000 bench/run.sh sql     # smaller SQL table
#   BUILD_DIR=/tmp/b bench/run.sh     # another build directory (default: build-bench)
#   SAMPLER_ARGS="--benchmark_repetitions=3" SQL_ARGS="--reps 5" MATRIX_ARGS="--reps 5" bench/run.sh
#   TIMING_ARGS="--runs 5000 --no-ledger" bench/run.sh timing
#   PYTHON=python3 SQLITE3=/path/to/sqlite3 bench/run.sh   # interpreter and shell for matrix_bench.py
#
# Output is also saved to $BUILD_DIR/{sampler,sql,matrix}_bench.txt and
# $BUILD_DIR/release_timing.txt ($BUILD_DIR/grouped_bench.txt; grouped_bench's
# generated tables are cached in $BUILD_DIR/grouped_bench/).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build-bench}"
rows="${ROWS:-10000000}"
python="${PYTHON:-/usr/bin/python3}"
sqlite3_shell="${SQLITE3:-$(command -v sqlite3 || echo /usr/bin/sqlite3)}"

benches=("$@")
[ ${#benches[@]} -eq 0 ] && benches=(sampler sql matrix timing)
targets=(optdp)
for b in "${benches[@]}"; do
  case "$b" in
    sampler) targets+=(sampler_bench) ;;
    sql) targets+=(sql_bench) ;;
    matrix) ;;
    timing) targets+=(release_timing) ;;
    grouped) ;;
    select|moments|floors) ;;
    gaussian) targets+=(gaussian_bench) ;;
    gaussian_groups) ;;
    postgres) targets+=(optdp_pg) ;;
    pg_floor) targets+=(optdp_pg pg_noop) ;;
    *) echo "bench/run.sh: unknown benchmark '$b' (sampler, sql, matrix, timing, grouped, select, moments, floors, gaussian, gaussian_groups, postgres, pg_floor)" >&2; exit 2 ;;
  esac
done

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DOPTDP_BUILD_BENCH=ON -DOPTDP_BUILD_TESTS=OFF
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

echo "== machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "== source: $(git -C "$root" describe --always --dirty 2>/dev/null || echo "$root (not a git checkout)")"
for b in "${benches[@]}"; do
  case "$b" in
    sampler)
      echo "== sampler_bench"
      # shellcheck disable=SC2086
      "$build/bench/sampler_bench" ${SAMPLER_ARGS:-} | tee "$build/sampler_bench.txt" ;;
    sql)
      echo "== sql_bench"
      # shellcheck disable=SC2086
      "$build/bench/sql_bench" --rows "$rows" ${SQL_ARGS:-} | tee "$build/sql_bench.txt" ;;
    matrix)
      echo "== matrix_bench"
      # shellcheck disable=SC2086
      "$python" "$root/bench/matrix_bench.py" --optdp "$build/optdp.so" --sqlite3 "$sqlite3_shell" ${MATRIX_ARGS:-} |
        tee "$build/matrix_bench.txt" ;;
    timing)
      echo "== release_timing"
      # shellcheck disable=SC2086
      "$build/bench/release_timing" ${TIMING_ARGS:-} | tee "$build/release_timing.txt" ;;
    grouped)
      echo "== grouped_bench"
      # shellcheck disable=SC2086
      "$python" "$root/bench/grouped_bench.py" --module "$build/optdp.so" --dir "$build/grouped_bench" \
        ${GROUPED_ARGS:-} | tee "$build/grouped_bench.txt" ;;
    select)
      echo "== select_bench"
      # shellcheck disable=SC2086
      "$python" "$root/bench/select_bench.py" --optdp "$build/optdp.so" ${SELECT_ARGS:-} | tee "$build/select_bench.txt" ;;
    gaussian)
      echo "== gaussian_bench"
      # shellcheck disable=SC2086
      "$build/bench/gaussian_bench" ${GAUSSIAN_ARGS:---benchmark_repetitions=7 --benchmark_report_aggregates_only=true} |
        tee "$build/gaussian_bench.txt" ;;
    gaussian_groups)
      echo "== gaussian_groups_bench"
      # shellcheck disable=SC2086
      "$python" "$root/bench/gaussian_groups_bench.py" --module "$build/optdp.so" ${GAUSSIAN_GROUPS_ARGS:-} |
        tee "$build/gaussian_groups_bench.txt" ;;
    floors)
      echo "== floors_bench"
      "$python" "$root/bench/floors_bench.py" --optdp "$build/optdp.so" ${FLOORS_ARGS:-} | tee "$build/floors_bench.txt" ;;
    moments)
      echo "== moments_bench"
      # shellcheck disable=SC2086
      "$python" "$root/bench/moments_bench.py" --optdp "$build/optdp.so" ${MOMENTS_ARGS:-} | tee "$build/moments_bench.txt" ;;
    postgres)
      echo "== pg_bench"
      # shellcheck disable=SC2086
      "$python" "$root/bench/pg_bench.py" "$build/postgres" --rows "$rows" ${PG_ARGS:-} | tee "$build/pg_bench.txt" ;;
    pg_floor)
      echo "== pg_floor"
      "$python" "$root/bench/pg_floor.py" "$build/postgres" | tee "$build/pg_floor.txt" ;;
  esac
done
