#!/usr/bin/env bash
# Builds for sm_90 (the H200 of the development GPU machine) and packs a self-contained bundle:
# binaries, their shared libraries, config/, data/ (the sample plus the real captures of
# ../shared/data when present) and gpu-check.sh. Usage: scripts/make-gpu-bundle.sh [OUT_DIR=.gpu]
# (CUDA_ARCHS=90-real builds SASS only, which is quicker; the default 90 adds PTX; PEER_BUILD names the
# host CPU build whose Fast-DDS peer the bundle carries, build-cpu by default)
# The bundle also holds libdepthmask.so.0 and python/: its RUNPATH ($ORIGIN/lib) and that of every
# library in lib/ ($ORIGIN) make ctypes.CDLL("OUT_DIR/libdepthmask.so.0") load with no LD_LIBRARY_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null  # patchelf
out=${1:-.gpu}
bundler=${BUNDLE_GPU:-../shared/scripts/bundle-gpu.sh}
build=${BUILD:-build-sm90}  # BUILD=build reuses a build folder configured for sm_90
cmake -S . -B "$build" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" -DDEPTHMASK_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
extras=(data config scripts/gpu-check.sh tests/ros2/peer_test.sh)
[ -d ../shared/data ] && extras+=(../shared/data)
[ -d python ] && extras+=(python)
bins=("$build/depthmask" "$build/libdepthmask.so.0" "$build"/depthmask_*_tests)
for extra in depthmask_microbench depthmask_live_subscriber depthmask_codec_bench depthmask_bag_bench; do
  [ -x "$build/$extra" ] && bins+=("$build/$extra")
done
# The Fast-DDS peer of the ros2:// tests is built in the host CPU build only (tests/ros2/CMakeLists.txt)
# and uses no depthmask code: gpu-check.sh runs it against the GPU build's `live` when the bundle has it.
peer=${PEER_BUILD:-build-cpu}/tests/ros2/depthmask_dds_peer
if [ -x "$peer" ]; then bins+=("$peer"); else echo "make-gpu-bundle: no $peer (the ros2 peer steps will skip)" >&2; fi
bash "$bundler" "$out" "${bins[@]}" -- "${extras[@]}"
# RUNPATH is not inherited: the library finds its direct dependencies in lib/, and each of those its own.
# shellcheck disable=SC2016  # $ORIGIN is the loader's, not the shell's
origin='$ORIGIN'
patchelf --set-rpath "$origin/lib" "$out/libdepthmask.so.0"
for f in "$out"/lib/*.so*; do patchelf --set-rpath "$origin" "$f"; done
# Check: with no LD_LIBRARY_PATH, every library it loads but the system's (those the bundler leaves
# out) comes from lib/.
here=$(cd "$out" && pwd)
system='/(libc|libm|libdl|libpthread|librt|libresolv|libutil|libmvec|ld-linux-x86-64|libgcc_s|libstdc\+\+|libcuda|libnvidia-[a-z-]+)\.so'
outside=$(env -u LD_LIBRARY_PATH ldd "$here/libdepthmask.so.0" | awk '$2 == "=>" {print $1, $3}' |
          grep -v " $here/lib/" | grep -Ev "$system" || true)
if [ -n "$outside" ]; then
  echo "make-gpu-bundle: $out/libdepthmask.so.0 loads these from outside $out/lib:" >&2
  echo "$outside" >&2
  exit 1
fi
env -u LD_LIBRARY_PATH python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$here/libdepthmask.so.0"
du -sh "$out"
