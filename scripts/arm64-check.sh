#!/usr/bin/env bash
# depthmask on aarch64 (every Jetson's CPU), proven on an x86_64 machine, from a clean checkout (root):
#   bash scripts/arm64-check.sh [X86_BUILD_DIR]
# 1. dockerd (scripts/engine.sh), qemu-user-static + binfmt-support with qemu-aarch64 enabled.
# 2. Base images from debootstrap: Debian 12 for amd64 (the cross build's root) and for arm64 (the
#    runtime image's base).
# 3. docker/Dockerfile.jetson with BUILD=cross-cpu for linux/arm64: the build stage runs natively on
#    the amd64 Debian root, where `install-deps.sh --cross arm64` adds the arm64 architecture, Debian's
#    crossbuild-essential-arm64 and only the arm64 -dev packages (OpenCV's and yaml-cpp's are not
#    Multi-Arch: same: this machine's own packages are never touched), and cross-compiles the library,
#    the CLI and (DEPTHMASK_BUILD_TARGETS) the unit and CLI tests, CPU-only; the runtime stage is the
#    arm64 Debian root, with the packages the build stage read off the arm64 binaries (readelf's NEEDED
#    resolved in /usr/lib/aarch64-linux-gnu, then dpkg -S: ldd cannot read foreign binaries), and its
#    checks (info, the sample, import depthmask) run under qemu.
# 4. The unit and CLI tests run under qemu in the build stage's image, less the exclusions below.
# 5. The arm64 image (under qemu) and the x86 build (X86_BUILD_DIR, default build-cpu; built when
#    missing) mask the sample and the APC frames of ../shared/data with tiff, npy, exr, png16, ply,
#    reason and the preview: every frame output byte-identical.
# Prints one table last. Idempotent: cached roots and images are reused (DEPTHMASK_CACHE).
set -Eeuo pipefail
# Whatever stops the script says where (a failing command substitution exits without a word otherwise).
trap 'echo "arm64-check: line $LINENO: exit $? from: $BASH_COMMAND" >&2' ERR
cd "$(dirname "$0")/.."
repo=$PWD
[ "$(id -u)" -eq 0 ] || { echo "arm64-check: run as root (it installs packages and starts dockerd)" >&2; exit 1; }
. scripts/engine.sh

image=depthmask-ci/arm64-cpu
build_image=depthmask-ci/arm64-cpu-build
x86_build=${1:-build-cpu}
shared_data=$(cd "$repo/.." && pwd)/shared/data
logs=$repo/build-arm64
mkdir -p "$logs"
work=$(mktemp -d /tmp/arm64-check.XXXXXX)
failures=0
fail() { echo "arm64-check: FAILED: $*" >&2; engine_result "$1" "FAILED"; failures=$((failures + 1)); }
trap 'rm -rf "$work"; engine_stop' EXIT

# The test programs run whole under qemu (one emulated process per program and gtest shard, rather than
# ctest's process per test: starting a test program under qemu costs seconds). Not run there, and why
# (each runs on x86 in CI): ctest's own entries (python_tests: the build root's Python cannot load an
# arm64 library, the arm64 image's own Python imports it in the image build; leak_check, doctor_bench,
# report_in_chromium: valgrind, a benchmark, a browser), and the gtest cases below, which hold
# start-up to a time budget that qemu's 5-20x slower execution breaks by design.
gtest_excluded='CliStartup.*:Startup.*'
gtest_shards=${DEPTHMASK_ARM64_TEST_SHARDS:-$(nproc)}

engine_stage "dockerd, qemu-user-static + binfmt-support (qemu-aarch64)"
engine_start
engine_qemu

engine_stage "base images (debootstrap Debian 12 amd64 + arm64)"
engine_base_images arm64

targets="depthmask depthmask_live_subscriber depthmask_shared depthmask_unit_tests depthmask_cli_tests"
build_args=(--network host --platform linux/arm64 -f docker/Dockerfile.jetson --build-arg BUILD=cross-cpu
            --build-arg CROSS_BUILD_IMAGE="$LOCAL_DEBIAN" --build-arg CROSS_RUNTIME_IMAGE="$LOCAL_DEBIAN_ARM64"
            --build-arg DEPTHMASK_BUILD_TARGETS="$targets")
engine_stage "cross build + arm64 image (Dockerfile.jetson BUILD=cross-cpu)"
if ! $DOCKER build "${build_args[@]}" -t "$image" . >"$logs/build.log" 2>&1; then
  tail -40 "$logs/build.log" >&2
  echo "arm64-check: the image build failed (log: $logs/build.log)" >&2
  exit 1
fi
# The same stage, from the build cache: its image holds the build folder with the test programs. It is
# labelled linux/arm64 (the build's --platform) but holds the amd64 root the cross build ran in; a run
# without --platform starts it as it is (asking for linux/amd64 would send dockerd to a registry).
$DOCKER build "${build_args[@]}" --target build-cross-cpu -t "$build_image" . >"$logs/build-stage.log" 2>&1
arch=$($DOCKER image inspect -f '{{.Os}}/{{.Architecture}}' "$image")
file_out=$($DOCKER run --rm --network none --entrypoint bash "$build_image" -c \
  'readelf -h /src/build-image/depthmask | sed -n "s/^ *Machine: *//p"')
engine_result "arm64 image" "$arch, depthmask is $file_out"
runtime_pkgs=$($DOCKER run --rm --network none --entrypoint cat "$image" /opt/depthmask/share/depthmask/runtime-packages.txt | tr '\n' ' ')
echo "runtime packages (arm64, from readelf + dpkg -S in the cross root): $runtime_pkgs" >"$logs/runtime-packages.txt"
engine_result "arm64 runtime packages" "$(wc -w <<<"$runtime_pkgs") (build-arm64/runtime-packages.txt)"
size=$(($($DOCKER image inspect -f '{{.Size}}' "$image") / 1000000))
engine_result "arm64 image size" "$size MB"

engine_stage "unit + CLI tests under qemu-aarch64"
mkdir -p "$logs/tests"
rm -f "$logs"/tests/*.log
# shellcheck disable=SC2016
runner='
cd /src/build-image/tests
for bin in depthmask_unit_tests depthmask_cli_tests; do
  for i in $(seq 0 $((SHARDS - 1))); do
    GTEST_TOTAL_SHARDS=$SHARDS GTEST_SHARD_INDEX=$i ../$bin --gtest_filter="-$EXCLUDED" >/logs/$bin-$i.log 2>&1 &
  done
  rc=0
  for job in $(jobs -p); do wait "$job" || rc=1; done
  [ "$rc" -eq 0 ] || exit 1
done'
set +e
$DOCKER run --rm --network none -e SHARDS="$gtest_shards" -e EXCLUDED="$gtest_excluded" \
  -v "$shared_data:/shared/data:ro" -v "$logs/tests:/logs" "$build_image" bash -c "$runner"
rc=$?
set -e
count() { cat "$logs"/tests/*.log 2>/dev/null | sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) tests\{0,1\}.*/\1/p" | awk '{n += $1} END {print n + 0}'; }
passed=$(count PASSED)
skipped=$(count SKIPPED)
failed=$(count FAILED)
if [ "$rc" -eq 0 ] && [ "$passed" -gt 0 ] && [ "$failed" -eq 0 ]; then
  engine_result "arm64 unit + CLI tests (qemu)" "$passed passed, $skipped skipped, 0 failed ($gtest_shards gtest shards)"
else
  grep -h "^\[  FAILED  \]" "$logs"/tests/*.log >&2 || tail -40 "$logs"/tests/*.log >&2
  fail "arm64 unit + CLI tests (qemu): $passed passed, $failed failed (exit $rc; logs: $logs/tests)"
fi
engine_result "not run under emulation" "python_tests leak_check doctor_bench report_in_chromium $gtest_excluded"

engine_stage "arm64 vs x86 outputs (sample, APC), byte for byte"
if [ ! -x "$x86_build/depthmask" ]; then
  x86_build=build-arm64-x86ref
  cmake -S . -B "$x86_build" -G Ninja -C cmake/release-options.cmake -DDEPTHMASK_CUDA=OFF -DDEPTHMASK_BUILD_TESTS=OFF >/dev/null
  cmake --build "$x86_build" --target depthmask >/dev/null
fi
formats=(--set 'output.format=[tiff, npy, exr, png16, ply, reason]' --set output.preview=true)
runs=("sample|--config /config/default.yaml|--config config/default.yaml")
if [ -d "$shared_data/apc-vision-toolbox/scene-0000" ]; then
  runs+=("apc|--input /shared/data/apc-vision-toolbox/scene-0000|--input $shared_data/apc-vision-toolbox/scene-0000")
else
  echo "arm64-check: $shared_data/apc-vision-toolbox absent: the APC frames are not compared" >&2
fi
uid=$($DOCKER run --rm --network none --entrypoint id "$image" -u)
for r in "${runs[@]}"; do
  IFS='|' read -r name image_args host_args <<<"$r"
  mkdir -p "$work/arm64-$name"
  chown "$uid" "$work/arm64-$name"
  # shellcheck disable=SC2086
  $DOCKER run --rm --network none -v "$repo/data:/data:ro" -v "$repo/config:/config:ro" \
    -v "$shared_data:/shared/data:ro" -v "$work/arm64-$name:/out" "$image" \
    run $image_args --output /out "${formats[@]}" >"$logs/run-$name-arm64.log" 2>&1 ||
    { tail -20 "$logs/run-$name-arm64.log" >&2; fail "arm64 run on $name"; continue; }
  # shellcheck disable=SC2086
  "$x86_build/depthmask" run $host_args --output "$work/x86-$name" "${formats[@]}" >"$logs/run-$name-x86.log" 2>&1
  if res=$(engine_same_outputs "$work/x86-$name" "$work/arm64-$name"); then
    engine_result "arm64 = x86 on $name" "identical, $res"
  else
    fail "arm64 vs x86 on $name: $res"
  fi
done

engine_table
[ "$failures" -eq 0 ] || { echo "arm64-check: $failures check(s) failed" >&2; exit 1; }
echo "arm64-check: all checks passed"
