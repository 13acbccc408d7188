#!/usr/bin/env bash
# Installs the system packages depthmask needs to build and test, on Debian 12 or Ubuntu 22.04/24.04.
# Idempotent: packages already present are left alone, and apt runs only when something is missing.
# Used by the README's commands, by CI (.ci/run) and by the Docker images.
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --runtime  only the shared libraries the binary needs at run time
set -euo pipefail

build_pkgs=(
  build-essential cmake ninja-build pkg-config git
  libopencv-dev libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev libtbb-dev
  libgtest-dev libgmock-dev libbenchmark-dev libpng-dev nlohmann-json3-dev libzmq3-dev cppzmq-dev
  python3 python3-numpy
  gstreamer1.0-plugins-base gstreamer1.0-tools
)
# The sanitizer and fuzz builds (scripts/sanitize.sh, scripts/fuzz.sh): clang 14 and its ASan, UBSan
# and libFuzzer runtimes, libclang-rt-14-dev (only recommended by clang-14; Ubuntu 22.04 has no such
# package and ships them in clang-14's libclang-common-14-dev).
build_pkgs+=(clang-14)
[ "$(. /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}")" = "jammy" ] || build_pkgs+=(libclang-rt-14-dev)
runtime_pkgs=(
  libopencv-core-dev libopencv-imgcodecs-dev libopencv-imgproc-dev libopencv-videoio-dev libyaml-cpp-dev libspdlog-dev libtbb-dev
  libzmq5
)

pkgs=("${build_pkgs[@]}")
[ "${1:-}" = "--runtime" ] && pkgs=("${runtime_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#pkgs[@]} packages present"
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
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
