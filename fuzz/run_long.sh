#!/usr/bin/env bash
# A long fuzz run of one target.
#
#   fuzz/run_long.sh TARGET SECONDS [BUILD_DIR] [-- extra libFuzzer flags...]
#   fuzz/run_long.sh fuzz_sql 3600
#   fuzz/run_long.sh fuzz_json 600 build-fuzz -- -jobs=4 -workers=4
#
# TARGET is one of fuzz_json fuzz_loss_prior fuzz_cost fuzz_levels fuzz_sql;
# BUILD_DIR (default build-fuzz) is a build configured with -DOPTDP_FUZZ=ON
# (see fuzz/README.md); the target is built first. New corpus inputs go to
# BUILD_DIR/fuzz/corpus/TARGET (kept between runs; the seeds in fuzz/corpus
# and the inputs in fuzz/regressions are read, never written), crashes to
# BUILD_DIR/fuzz/artifacts/TARGET/, and the log to
# BUILD_DIR/fuzz/logs/TARGET-<time>.log. Exit status: libFuzzer's (0: no
# finding). Environment: OPTDP_FUZZ_KNOWN=tag,... skips checks of known,
# already reported issues (see fuzz/fuzz_check.hpp).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
[[ $# -ge 2 ]] || usage
target=$1 seconds=$2
shift 2
build=build-fuzz
if [[ $# -gt 0 && $1 != -- ]]; then build=$1; shift; fi
[[ $# -gt 0 && $1 == -- ]] && shift
case $target in fuzz_json|fuzz_loss_prior|fuzz_cost|fuzz_levels|fuzz_sql) ;; *) usage ;; esac
[[ $seconds =~ ^[0-9]+$ ]] || usage

src=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$src")
[[ $build = /* ]] || build=$root/$build
[[ -f $build/CMakeCache.txt ]] || { echo "run_long.sh: $build is not a CMake build directory; configure it as in fuzz/README.md" >&2; exit 2; }
cmake --build "$build" --target "$target" >/dev/null

work=$build/fuzz/corpus/$target
artifacts=$build/fuzz/artifacts/$target
logs=$build/fuzz/logs
mkdir -p "$work" "$artifacts" "$logs"
dict=()
[[ -f $src/dict/$target.dict ]] && dict=(-dict="$src/dict/$target.dict")
log=$logs/$target-$(date +%Y%m%d-%H%M%S).log

echo "fuzzing $target for $seconds s; log: $log" >&2
set +e
"$build/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "${dict[@]}" "$@" \
  "$work" "$src/corpus/$target" "$src/regressions/$target" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
echo "--- $target: $(grep -Eo 'cov: [0-9]+' "$log" | tail -1), $(grep -Eo 'exec/s: [0-9]+' "$log" | tail -1), exit $status" >&2
ls "$artifacts" 2>/dev/null | sed 's/^/finding: /' >&2 || true
exit "$status"
