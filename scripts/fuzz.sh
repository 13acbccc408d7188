#!/usr/bin/env bash
# Runs every libFuzzer target of fuzz/ for SECONDS each (default 30, what CI runs) from the build
# that scripts/sanitize.sh makes (DEPTHMASK_FUZZ=ON: clang, ASan + UBSan + coverage). Each target
# starts from its committed seeds (fuzz/corpus/<target>/, never modified) plus what earlier runs in
# the same build folder found. A crash, leak, sanitizer report, timeout or out-of-memory leaves the
# input in BUILD/fuzz-crashes/ and fails the script. Prints one line of figures per target (the
# figures docs/RELIABILITY.md quotes).
#   scripts/fuzz.sh [SECONDS] [BUILD]        BUILD defaults to build-asan
#   FUZZ_TARGETS="config tum_list" scripts/fuzz.sh 600     some targets only
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
dir="${2:-build-asan}"
[ -d "$dir/fuzz" ] || { echo "fuzz: no $dir/fuzz: build it first (scripts/sanitize.sh)" >&2; exit 1; }
targets="${FUZZ_TARGETS:-$(cd fuzz/corpus && ls)}"
crashes="$(cd "$dir" && pwd)/fuzz-crashes"
mkdir -p "$crashes"
# OpenCV checks image sizes against this before it allocates, for the formats whose headers
# depthmask does not read itself; it is read once, when OpenCV loads, so it is set here.
export OPENCV_IO_MAX_IMAGE_PIXELS="${OPENCV_IO_MAX_IMAGE_PIXELS:-4194304}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
failed=0
printf '%-14s %8s %12s %8s %8s %s\n' target seconds executions exec/s corpus result
for t in $targets; do
  exe="$dir/fuzz/fuzz_$t"
  [ -x "$exe" ] || { echo "fuzz: $exe is missing" >&2; failed=1; continue; }
  work="$dir/fuzz-corpus/$t"
  mkdir -p "$work"
  log="$dir/fuzz-$t.log"
  status=0
  "$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$crashes/$t-" "$work" "fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  corpus=$(ls "$work" | wc -l)
  result=ok
  if [ "$status" -ne 0 ]; then
    result="FAILED (exit $status, $log)"
    failed=1
    grep -E "ERROR|runtime error|Test unit written|SUMMARY" "$log" | head -20 >&2 || true
  fi
  printf '%-14s %8s %12s %8s %8s %s\n' "$t" "$secs" "$execs" "$rate" "$corpus" "$result"
done
if [ -n "$(ls -A "$crashes")" ]; then
  echo "fuzz: inputs that failed are in $crashes (add each as a regression test)" >&2
  ls -l "$crashes" >&2
  failed=1
fi
exit "$failed"
