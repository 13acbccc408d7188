#!/usr/bin/env bash
# Installs the system packages depthmask needs to build and test, on Debian 12 or Ubuntu 22.04/24.04.
# Idempotent: packages already present are left alone, and apt runs only when something is missing.
# Used by the README's commands, by CI (.ci/run) and by the Docker images.
#   scripts/install-deps.sh                        build + test dependencies, and the ROS bag tests
#                                                  Node packages (tests/ros: `npm ci` from its lock;
#                                                  Debian's nodejs + npm only where no npm is found;
#                                                  DEPTHMASK_NODE_TESTS=0 leaves Node out)
#   scripts/install-deps.sh --image                what the images' build stage needs for the shipped
#                                                  targets (no test, benchmark or browser packages)
#   scripts/install-deps.sh --cross ARCH [--tests] a cross build for ARCH (arm64) on this machine's
#                                                  Debian: `dpkg --add-architecture ARCH`, Debian's
#                                                  crossbuild-essential-ARCH and the -dev packages as
#                                                  PKG:ARCH (with --tests: the test libraries too). Run
#                                                  it in a root of its own (a container or chroot): the
#                                                  -dev packages of OpenCV and yaml-cpp are not
#                                                  Multi-Arch: same, so ARCH's replace the host's.
#   scripts/install-deps.sh --sanitizers           the same and clang for scripts/sanitize.sh, fuzz.sh
#   scripts/install-deps.sh --lint                 the same and clang-format-14, clang-tidy-14, doxygen
#                                                  (scripts/lint.sh)
#   scripts/install-deps.sh --runtime-list BIN...   print the packages that own BIN's shared libraries
#                                                   (BIN may be of another architecture: a cross build's)
#   scripts/install-deps.sh --runtime FILE          install the packages FILE lists (one a line): the
#                                                   runtime image's libraries, listed in the build stage
# Runtime library packages are named after their soname and differ between Debian 12 (libopencv-core406),
# Ubuntu 22.04 (libopencv-core4.5d) and 24.04 (...t64), so they are read off the built binary
# (readelf's NEEDED, resolved by ldd or, for a foreign binary, in ARCH's library folders, then
# dpkg -S) on the same distribution rather than listed here.
# A build package this distribution lacks is replaced by its entry in `fallback` when there is one
# (Ubuntu 22.04's libzmq3-dev may carry zmq.hpp where cppzmq-dev is missing); otherwise the script
# stops naming the packages apt cannot find.
set -euo pipefail

# The tools of a build (host architecture, also in a cross build) and the libraries it links.
tool_pkgs=(build-essential cmake ninja-build pkg-config git)
lib_pkgs=(libopencv-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev libtbb-dev libpng-dev libdeflate-dev
          nlohmann-json3-dev libzmq3-dev cppzmq-dev libopenni2-dev
          libzstd-dev liblz4-dev libsqlite3-dev)  # the last three: ROS 2 bags (lib/ros, DEPTHMASK_WITH_ROSBAG)
# The tests' libraries, and what the tests, the benchmarks and the GPU bundle run.
test_lib_pkgs=(libgtest-dev libgmock-dev libbenchmark-dev)
test_pkgs=(python3 python3-numpy gstreamer1.0-plugins-base gstreamer1.0-tools valgrind xvfb patchelf)
declare -A fallback=([cppzmq-dev]=libzmq3-dev)
arch_all_pkgs=(libcli11-dev nlohmann-json3-dev)
# The Python package's tests (python/tests: pytest, hypothesis, Pillow for the PNG frames). PyTorch
# (python3-torch, ~330 MB installed) is left out: its tests skip without it.
test_pkgs+=(python3-pytest python3-hypothesis python3-pil)
# bench/pool: the process-pool baseline reads and writes the frames with OpenCV (cv2).
test_pkgs+=(python3-opencv)
# tests/deploy/test_kubernetes.py reads the Kubernetes examples with PyYAML.
test_pkgs+=(python3-yaml)
# tests/ros/make_bag.mjs writes SQLite bags (.db3) with the sqlite3 program; read_bag.mjs reads them.
test_pkgs+=(sqlite3)
build_pkgs=("${tool_pkgs[@]}" "${lib_pkgs[@]}" "${test_lib_pkgs[@]}" "${test_pkgs[@]}")
# The QA report's browser test (tests/integration/report_in_chromium.sh): Debian's chromium. Optional:
# Ubuntu packages it only as a snap, which does not run in containers; the test skips without it.
optional_pkgs=(chromium)

# --runtime-list: the package of every shared library BIN links directly (DT_NEEDED; apt brings what
# those need), except the CUDA and driver libraries that the CUDA base image or the NVIDIA container
# runtime provide.
if [ "${1:-}" = "--runtime-list" ]; then
  shift
  [ $# -gt 0 ] || { echo "install-deps: --runtime-list needs the binaries to inspect" >&2; exit 2; }
  host_machine=$(readelf -h /bin/sh | awk -F: '/Machine:/ {gsub(/^ +/, "", $2); print $2}')
  {
  for bin in "$@"; do
    needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
    machine=$(readelf -h "$bin" | awk -F: '/Machine:/ {gsub(/^ +/, "", $2); print $2}')
    if [ "$machine" = "$host_machine" ]; then
      # ldd resolves them as the loader will (RUNPATH, the loader's cache).
      paths=$(ldd "$bin" | awk -v needed="$needed" 'BEGIN {n = split(needed, a, "\n"); for (i = 1; i <= n; i++) want[a[i]] = 1}
                                                    $2 == "=>" && ($1 in want) && $3 ~ /^\// {print $3}')
    else
      # A foreign binary (a cross build): ldd cannot run its loader, so look each soname up in that
      # architecture's library folders, where the cross build's -dev packages put them.
      case "$machine" in
        AArch64) triplet=aarch64-linux-gnu ;;
        *) echo "install-deps: $bin is for '$machine', which --runtime-list does not know" >&2; exit 1 ;;
      esac
      paths=$(for so in $needed; do
        for dir in /usr/lib/$triplet /lib/$triplet; do
          [ -e "$dir/$so" ] && { echo "$dir/$so"; break; }
        done
      done)
    fi
    for so in $needed; do
      case "$so" in ld-linux*|libcuda.so*|libcudart.so*|libnvidia*) continue ;; esac  # the loader: libc6
      grep -q "/$so\$" <<<"$paths" || [ -e "$(dirname "$bin")/$so" ] ||
        { echo "install-deps: $so (needed by $bin) is not installed here" >&2; exit 1; }
    done
    for lib in $paths; do
      case "$lib" in */cuda*|*/libcuda.so*|*/libnvidia*|*/tegra/*) continue ;; esac
      owner=$(dpkg -S "$lib" 2>/dev/null || dpkg -S "$(readlink -f "$lib")" 2>/dev/null ||
              dpkg -S "*/$(basename "$lib")" 2>/dev/null || true)
      [ -n "$owner" ] || { echo "install-deps: no package owns $lib (needed by $bin)" >&2; exit 1; }
      # "libopencv-core406:arm64: /usr/lib/...": the runtime image is of that architecture itself.
      owner=${owner%%: *}
      echo "${owner%%:*}"
    done
  done | sed 's/, .*//'
  # Loaded at run time, not linked: the GStreamer elements gst:// pipelines end in (appsink,
  # videoconvert, videotestsrc). Pipelines with other elements (v4l2src: gstreamer1.0-plugins-good)
  # need their plugin packages added to the image.
  printf '%s\n' gstreamer1.0-plugins-base
  } | sort -u
  exit 0
fi
# --sanitizers: the build packages and what the sanitizer and fuzz builds need (scripts/sanitize.sh,
# scripts/fuzz.sh): clang 14 and its ASan, UBSan and libFuzzer runtimes, libclang-rt-14-dev (only
# recommended by clang-14; Ubuntu 22.04 has no such package and ships them in libclang-common-14-dev).
sanitizer_pkgs=(clang-14)
[ "$(. /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}")" = "jammy" ] || sanitizer_pkgs+=(libclang-rt-14-dev)

pkgs=("${build_pkgs[@]}")
use_optional=1
[ "${1:-}" = "--sanitizers" ] && pkgs+=("${sanitizer_pkgs[@]}")
# --lint: the formatter, the static analyser and the API documentation's check CI runs (scripts/lint.sh).
[ "${1:-}" = "--lint" ] && pkgs+=(clang-format-14 clang-tidy-14 doxygen)
if [ "${1:-}" = "--image" ]; then
  pkgs=("${tool_pkgs[@]}" "${lib_pkgs[@]}")
  use_optional=0
fi
if [ "${1:-}" = "--cross" ]; then
  arch=${2:?usage: install-deps.sh --cross ARCH [--tests]}
  [ "$arch" != "$(dpkg --print-architecture)" ] || { echo "install-deps: --cross $arch is this machine's own architecture" >&2; exit 2; }
  # Only in a root of its own: the host's -dev packages must not be swapped for ARCH's.
  for p in libopencv-dev libyaml-cpp-dev; do
    if dpkg-query -W -f='${Status}' "$p:$(dpkg --print-architecture)" 2>/dev/null | grep -q "install ok installed"; then
      echo "install-deps: --cross $arch would replace this machine's $p (not Multi-Arch: same); run it in a root of its own (docker/Dockerfile.jetson BUILD=cross-cpu does)" >&2
      exit 1
    fi
  done
  dpkg --print-foreign-architectures | grep -qx "$arch" || {
    echo "install-deps: dpkg --add-architecture $arch"
    dpkg --add-architecture "$arch"
    rm -f /var/lib/apt/lists/*Packages* 2>/dev/null || true  # so that apt-get update below runs
  }
  cross_libs=("${lib_pkgs[@]}")
  [ "${3:-}" = "--tests" ] && cross_libs+=("${test_lib_pkgs[@]}")
  pkgs=("${tool_pkgs[@]}" "crossbuild-essential-$arch")
  # Architecture: all packages (headers only) are named as they are; the others as PKG:ARCH.
  for p in "${cross_libs[@]}"; do
    case " ${arch_all_pkgs[*]} " in *" $p "*) pkgs+=("$p") ;; *) pkgs+=("$p:$arch") ;; esac
  done
  use_optional=0
fi
if [ "${1:-}" = "--runtime" ]; then
  [ -f "${2:-}" ] || { echo "install-deps: --runtime needs the package list made by --runtime-list" >&2; exit 2; }
  mapfile -t pkgs < <(grep -v '^[[:space:]]*\(#\|$\)' "$2")
  use_optional=0
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# The ROS bag tests' independent reader and writer (tests/ros, issue 29): Foxglove's npm packages,
# installed by `npm ci` from the committed lock, in the default mode only (the image, cross, sanitizer
# and lint stages never run them) and only in a checkout (the Docker build stages copy scripts/
# alone). Machines with Node from elsewhere (NodeSource's nodejs carries its own npm, and Debian's npm
# conflicts with it) keep it: Debian's nodejs + npm are installed only where no npm is found. A stamp
# of the lock's hash skips `npm ci` when node_modules already matches it.
node_tests() {
  [ $# -eq 0 ] && [ "${DEPTHMASK_NODE_TESTS:-1}" != 0 ] || return 0
  local dir lock stamp want
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/ros"
  lock="$dir/package-lock.json" stamp="$dir/node_modules/.depthmask-lock.sha256"
  [ -f "$lock" ] || return 0
  if ! command -v npm >/dev/null; then
    echo "install-deps: no npm here: installing Debian's nodejs npm (the ROS bag tests, tests/ros)"
    $sudo_cmd apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q --no-install-recommends nodejs npm
  fi
  want=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    echo "install-deps: tests/ros node_modules matches its lock"
    return 0
  fi
  echo "install-deps: npm ci in tests/ros (Foxglove's MCAP and ROS 2 packages, for the tests)"
  # --ignore-scripts: the packages ship built (WebAssembly included); nothing needs to run.
  (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
}
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
missing=()
for p in "${pkgs[@]}"; do
  installed "$p" || { [ -n "${fallback[$p]:-}" ] && installed "${fallback[$p]}"; } || missing+=("$p")
done
# The optional packages (never with --runtime): installed where apt has them, skipped with a note where
# not (so on such a system apt-get update runs on every call).
declare -A optional=()
if [ "$use_optional" = 1 ]; then
  for p in "${optional_pkgs[@]}"; do
    installed "$p" || { missing+=("$p"); optional[$p]=1; }
  done
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
  node_tests "$@"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# Swap in the fallback of a package this distribution does not have; stop on one without any.
wanted=() unavailable=()
for p in "${missing[@]}"; do
  if apt-cache show "$p" >/dev/null 2>&1; then wanted+=("$p")
  elif [ -n "${fallback[$p]:-}" ] && apt-cache show "${fallback[$p]}" >/dev/null 2>&1; then
    echo "install-deps: $p is not available here, using ${fallback[$p]}"
    wanted+=("${fallback[$p]}")
  elif [ -n "${optional[$p]:-}" ]; then echo "install-deps: $p (optional) is not available here: the tests that need it skip"
  else unavailable+=("$p")
  fi
done
if [ ${#unavailable[@]} -gt 0 ]; then
  echo "install-deps: not available from this system's apt sources: ${unavailable[*]}" >&2
  exit 1
fi
[ ${#wanted[@]} -eq 0 ] || $sudo apt-get install -y -q --no-install-recommends "${wanted[@]}"
node_tests "$@"
