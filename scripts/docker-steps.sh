#!/usr/bin/env bash
# The steps of the Docker images as one script, so that docker/Dockerfile, docker/Dockerfile.jetson and
# CI run literally the same commands (no Docker engine runs on CI; it runs these steps on its own clean
# Debian 12). tests/unit/test_deploy_files.cpp fails when a Dockerfile stops calling them.
#
#   scripts/docker-steps.sh build BUILD_DIR          packages (install-deps.sh), configure with
#                                                    cmake/release-options.cmake, build
#   scripts/docker-steps.sh stage BUILD_DIR DEST     DEST/bin: the binaries; DEST/share/depthmask: config/,
#                                                    data/sample, the runtime package list and these scripts
#   DEST/share/depthmask/docker-steps.sh runtime DEST   (in the runtime image) install the listed runtime
#                                                    packages, then check that the binary starts and masks
#                                                    the sample on the cpu backend
#   scripts/docker-steps.sh user NAME                (runtime image) the unprivileged user it runs as
# Environment:
#   DEPTHMASK_CUDA_ARCHITECTURES  the image's CMAKE_CUDA_ARCHITECTURES ("87-real"); unset: the default list
#   DEPTHMASK_REQUIRE_CUDA=1      stop when the build came out without CUDA (the images set it)
#   DEPTHMASK_BUILD_TARGETS       targets to build (default: depthmask depthmask_live_subscriber; "all")
#   JOBS                          parallel build jobs (default: nproc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step=${1:-}

case "$step" in
  build)
    build=${2:?usage: docker-steps.sh build BUILD_DIR}
    cd "$here/.."
    bash scripts/install-deps.sh
    args=(-S . -B "$build" -G Ninja -C cmake/release-options.cmake)
    [ -n "${DEPTHMASK_CUDA_ARCHITECTURES:-}" ] && args+=("-DCMAKE_CUDA_ARCHITECTURES=${DEPTHMASK_CUDA_ARCHITECTURES}")
    cmake "${args[@]}"
    read -r -a targets <<<"${DEPTHMASK_BUILD_TARGETS:-depthmask depthmask_live_subscriber}"
    cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "${targets[@]}"
    if [ "${DEPTHMASK_REQUIRE_CUDA:-0}" = 1 ]; then
      if ! "$build/depthmask" info | grep -q "^CUDA in this build: yes"; then
        echo "docker-steps: this image must carry the CUDA kernels, but the build has none (no nvcc found?)" >&2
        exit 1
      fi
      # Every SASS the list asks for is in the binary (what the compatibility guard will report):
      # cuobjdump's list of cubins where the toolkit has it, else the cubins' sm_NN tags in the binary.
      cuobjdump=${CUDA_HOME:-/usr/local/cuda}/bin/cuobjdump
      if [ -x "$cuobjdump" ]; then elfs=$("$cuobjdump" --list-elf "$build/depthmask")
      else elfs=$(grep -ao 'sm_[0-9][0-9]*[af]\?' "$build/depthmask" | sort -u)
      fi
      for arch in ${DEPTHMASK_CUDA_ARCHITECTURES//[;,]/ }; do
        case "$arch" in *-virtual|all|all-major|native) continue ;; esac
        sm=sm_${arch%-real}
        grep -qx ".*${sm}\(\.cubin\)\?" <<<"$elfs" || { echo "docker-steps: no $sm cubin in $build/depthmask" >&2; exit 1; }
      done
      echo "docker-steps: $build/depthmask carries $(grep -o 'sm_[0-9][0-9]*[af]\?' <<<"$elfs" | sort -u | tr '\n' ' ')"
    fi
    ;;
  stage)
    build=${2:?usage: docker-steps.sh stage BUILD_DIR DEST}
    dest=${3:?usage: docker-steps.sh stage BUILD_DIR DEST}
    cd "$here/.."
    mkdir -p "$dest/bin" "$dest/share/depthmask/data"
    cp "$build/depthmask" "$build/depthmask_live_subscriber" "$dest/bin/"
    cp -r config "$dest/share/depthmask/"
    cp -r data/sample "$dest/share/depthmask/data/"
    cp scripts/install-deps.sh scripts/docker-steps.sh docker/healthcheck.sh "$dest/share/depthmask/"
    bash scripts/install-deps.sh --runtime-list "$dest"/bin/* >"$dest/share/depthmask/runtime-packages.txt"
    echo "docker-steps: runtime packages: $(tr '\n' ' ' <"$dest/share/depthmask/runtime-packages.txt")"
    ;;
  runtime)
    dest=${2:?usage: docker-steps.sh runtime DEST}
    share="$dest/share/depthmask"
    bash "$here/install-deps.sh" --runtime "$share/runtime-packages.txt"
    if ldd "$dest"/bin/* | grep "not found"; then
      echo "docker-steps: a shared library the binaries need is missing from this image" >&2
      exit 1
    fi
    "$dest/bin/depthmask" info
    out=$(mktemp -d)
    "$dest/bin/depthmask" run --config "$share/config/default.yaml" --backend cpu --output "$out"
    [ -s "$out/000000.tiff" ] || { echo "docker-steps: the sample run wrote no $out/000000.tiff" >&2; exit 1; }
    rm -rf "$out"
    ;;
  user)
    # The images run as this unprivileged user; `video` lets `live` open /dev/video* (and the Jetson's
    # GPU device nodes, which belong to that group on L4T).
    name=${2:?usage: docker-steps.sh user NAME}
    getent group video >/dev/null || groupadd --system video
    id "$name" >/dev/null 2>&1 || useradd --system --create-home --home-dir "/home/$name" --groups video "$name"
    ;;
  *)
    echo "usage: docker-steps.sh build BUILD_DIR | stage BUILD_DIR DEST | runtime DEST | user NAME" >&2
    exit 2
    ;;
esac
