#!/usr/bin/env bash
# Every test on a GPU machine, including the GPU ones, compute-sanitizer on the GPU tests, `info`,
# and `run` on the sample with every backend (outputs compared byte for byte with the cpu backend's).
# Prints a short table last; logs go to $OUT (or ./gpu-logs).
#
# Where the GPU machine has the build dependencies:   make build && scripts/gpu-check.sh build
# Where it has not (only the driver and CUDA tools): build here, carry a bundle, run it there:
#   scripts/make-gpu-bundle.sh .gpu        (here)
#   cd .gpu && ./gpu-check.sh              (there)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -f "$here/run.sh" ]; then  # inside a bundle
  root=$here
  runner="$here/run.sh"
  export DEPTHMASK_SOURCE_DIR=$here DEPTHMASK_SAMPLE=$here/data/sample DEPTHMASK_TEST_DATA=$here/data
  export DEPTHMASK_BIN="$runner depthmask"
  bin() { "$runner" "$@"; }
  gpu_tests=("$runner" depthmask_gpu_tests)
  peer_test=$here/peer_test.sh shared_data=$here/data
  peer_bin=""; [ -x "$here/depthmask_dds_peer" ] && peer_bin=depthmask_dds_peer
else                             # a build folder of a checkout
  root=$(cd "$here/.." && pwd)
  build=$(cd "${1:-$root/build}" && pwd)
  export DEPTHMASK_BIN="$build/depthmask"
  bin() { local b=$1; shift; "$build/$b" "$@"; }
  gpu_tests=("$build/depthmask_gpu_tests")
  peer_test=$root/tests/ros2/peer_test.sh shared_data=$root/../shared/data
  peer_bin=""; [ -x "$build/tests/ros2/depthmask_dds_peer" ] && peer_bin=tests/ros2/depthmask_dds_peer
fi
logs=${OUT:-$PWD/gpu-logs}
mkdir -p "$logs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows=()

# step NAME COMMAND...: runs, logs to $logs/NAME.log, records rc, seconds and the last summary line.
step() {
  local name=$1; shift
  local t0 t1 rc
  t0=$(date +%s.%N)
  "$@" >"$logs/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local summary
  summary=$(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test|^\[  SKIPPED \] [0-9]+ test|ERROR SUMMARY|frame\(s\):|auto picks|differ|identical|error:|^ros2 peer:|^dds_peer: .*(not|differ|did)|^SKIP:' "$logs/$name.log" | tr '\n' ' ' | cut -c1-110)
  rows+=("$(printf '%-28s %4s %7ss  %s' "$name" "$rc" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')" "$summary")")
  echo "--- $name: rc=$rc"
}

compare_outputs() {
  local ref=$work/out-cpu status=0
  for b in auto copy zero_copy managed; do
    # depthmask-run.json records the run itself (its backend, its times): not an output.
    if diff -rq -x depthmask-run.json "$ref" "$work/out-$b" >/dev/null; then echo "$b: identical to cpu ($(ls "$ref" | wc -l) files)"
    else echo "$b: outputs differ from cpu"; diff -rq -x depthmask-run.json "$ref" "$work/out-$b" | head; status=1; fi
  done
  return $status
}

compare_bag_outputs() {
  local status=0
  for b in copy zero_copy managed; do
    if diff -rq -x depthmask-run.json "$work/bag-cpu" "$work/bag-$b" >/dev/null; then
      echo "bag $b: identical to cpu ($(ls "$work/bag-cpu" | wc -l) files, depthmask.mcap included)"
    else echo "bag $b: outputs differ from cpu"; diff -rq -x depthmask-run.json "$work/bag-cpu" "$work/bag-$b" | head; status=1; fi
  done
  return $status
}
# ROS 2 over DDS (issue 31): `depthmask live` masking on GPU backend $1 between the Fast-DDS peer's
# topics, every frame it publishes bit-identical to `run --backend cpu` (tests/ros2/peer_test.sh); the
# rest of the arguments are the peer test's environment (DDS_PEER_SIZE, DDS_PEER_PACE_MS, PEER_CASES).
ros2_peer() {
  local backend=$1; shift
  if [ -z "$peer_bin" ]; then echo "SKIP: no depthmask_dds_peer (built with Fast-DDS in the host build only)"; return 0; fi
  printf '#!/bin/sh\nexec %s "$@"\n' "$DEPTHMASK_BIN" >"$work/dm.sh"
  if [ -f "$here/run.sh" ]; then printf '#!/bin/sh\nexec %s %s "$@"\n' "$runner" "$peer_bin" >"$work/peer.sh"
  else printf '#!/bin/sh\nexec %s "$@"\n' "$build/$peer_bin" >"$work/peer.sh"; fi
  chmod +x "$work/dm.sh" "$work/peer.sh"
  env PEER_LIVE_BACKEND="$backend" "$@" bash "$peer_test" "$work/dm.sh" "$work/peer.sh" "$shared_data"
}

# GPU_CHECK_PARTS: all (default), tests (no sanitizers) or sanitizers — to split the work over two
# calls where one call's time is limited; ros: only the ROS 2 parts (bags and DDS, every backend).
parts=${GPU_CHECK_PARTS:-all}
if [ "$parts" != sanitizers ]; then
  step info bin depthmask info
fi
if [ "$parts" = all ] || [ "$parts" = tests ]; then
  for b in cpu auto copy zero_copy managed; do
    step "run-$b" bin depthmask run --config "$root/config/default.yaml" --backend "$b" --output "$work/out-$b"
  done
  step compare-backends compare_outputs
fi
if [ "$parts" != sanitizers ]; then
  # A ROS 2 bag in (synth --format mcap) and out (the mcap format) on every backend: the same bytes.
  if bin depthmask synth -o "$work/bag" --frames 6 --size 640x480 --format mcap >"$logs/bag-synth.log" 2>&1; then
    for b in cpu copy zero_copy managed; do
      step "bag-run-$b" bin depthmask run --input "$work/bag" --backend "$b" --output "$work/bag-$b" \
        --set output.format=[tiff,npy,mcap] --set output.preview=false
    done
    step compare-bag-backends compare_bag_outputs
  fi
  # The peer's four cases (16UC1/32FC1, sensor_data/default) with live on copy, two on the others, and
  # the 4K case (the captures scaled; 33 MB 32FC1 messages, 100 MB clouds) on copy, reliable only: a
  # best-effort message bigger than the socket buffers (net.core.rmem_max) is lost whole (docs/ROS2.md).
  step ros2-peer-copy ros2_peer copy
  for b in zero_copy managed; do step "ros2-peer-$b" ros2_peer "$b" PEER_CASES="16UC1:sensor_data 32FC1:default"; done
  step ros2-peer-4k-copy ros2_peer copy DDS_PEER_SIZE=3840x2160 DDS_PEER_PACE_MS=100 PEER_CASES="32FC1:default 16UC1:default"
fi
if [ "$parts" = all ] || [ "$parts" = tests ]; then
  [ "$parts" = all ] && step unit-tests bin depthmask_unit_tests
  step gpu-tests bin depthmask_gpu_tests
  step cli-tests bin depthmask_cli_tests
fi
if [ "$parts" = all ] || [ "$parts" = sanitizers ]; then
  if command -v compute-sanitizer >/dev/null; then
    # Every GPU test but most kernel-variant sizes: those at 33x31 and 639x481 (odd widths, every
    # layout) cover the same code, and the others would take many minutes under memcheck.
    skip='Variants/*_1x1_*:Variants/*_13x1_*:Variants/*_1x13_*:Variants/*_31x33_*:Variants/*_640x480_*'
    skip+=':Variants/*_1920x1080_*:Variants/*_5x70000_*:Batches/*639x481*'
    # The device-memory fault tests fill the GPU on purpose; the sanitizers need memory of their own.
    skip+=':DeviceMemoryFaults.*'
    step memcheck compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 "${gpu_tests[@]}" \
      --gtest_filter="-$skip"
    step racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "${gpu_tests[@]}" --gtest_filter='Sizes/*'
    # Reads of device memory nothing wrote (docs/RELIABILITY.md), over the same tests as memcheck.
    step initcheck compute-sanitizer --tool initcheck --error-exitcode 9 "${gpu_tests[@]}" --gtest_filter="-$skip"
  else
    rows+=("compute-sanitizer          not found on this machine")
  fi
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1 || true

echo
echo "GPU: $(cat "$logs/gpu.txt")   date: $(date -u +%F)"
printf '%-28s %4s %8s  %s\n' step rc time summary
for r in "${rows[@]}"; do echo "$r"; done
