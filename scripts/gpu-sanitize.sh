#!/usr/bin/env bash
# compute-sanitizer over the GPU tests: memcheck (with leak check), racecheck and initcheck, each
# expected to report zero errors (docs/RELIABILITY.md). Needs a CUDA build with its GPU tests
# (`make test` builds build/) and a GPU; prints one line per tool.
#   scripts/gpu-sanitize.sh [BUILD] [gtest filter]      defaults: build, '*'
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
filter="${2:-*}"
san="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
[ -x "$san" ] || { echo "gpu-sanitize: compute-sanitizer not found" >&2; exit 1; }
exe="$dir/depthmask_gpu_tests"
[ -x "$exe" ] || { echo "gpu-sanitize: $exe not found (a CUDA build: make test)" >&2; exit 1; }
failed=0
for tool in memcheck racecheck initcheck; do
  extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  log="$dir/compute-sanitizer-$tool.log"
  status=0
  "$san" --tool "$tool" "${extra[@]}" --error-exitcode 1 "$exe" --gtest_filter="$filter" >"$log" 2>&1 || status=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  tests=$(grep -E "^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]" "$log" | tr '\n' ' ')
  echo "$tool: ${summary:-no summary} | $tests| exit $status ($log)"
  [ "$status" -eq 0 ] || failed=1
done
exit "$failed"
