#!/usr/bin/env bash
# Builds for sm_90 (the H200 of the development GPU machine) and packs a self-contained bundle:
# binaries, their shared libraries, config/, data/ (the sample plus the real captures of
# ../shared/data when present) and gpu-check.sh. Usage: scripts/make-gpu-bundle.sh [OUT_DIR=.gpu]
# (CUDA_ARCHS=90-real builds SASS only, which is quicker; the default 90 adds PTX)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu}
bundler=${BUNDLE_GPU:-../shared/scripts/bundle-gpu.sh}
build=${BUILD:-build-sm90}  # BUILD=build reuses a build folder configured for sm_90
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DDEPTHMASK_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
extras=(data config scripts/gpu-check.sh)
[ -d ../shared/data ] && extras+=(../shared/data)
bins=("$build/depthmask" "$build"/depthmask_*_tests)
for extra in depthmask_microbench depthmask_live_subscriber; do
  [ -x "$build/$extra" ] && bins+=("$build/$extra")
done
bash "$bundler" "$out" "${bins[@]}" -- "${extras[@]}"
du -sh "$out"
