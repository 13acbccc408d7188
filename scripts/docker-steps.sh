#!/usr/bin/env bash
# The steps of the Docker images as one script, so that docker/Dockerfile and docker/Dockerfile.jetson
# run literally the same commands (scripts/container-check.sh and scripts/arm64-check.sh build both in
# CI with a real engine). tests/unit/test_deploy_files.cpp fails when a Dockerfile stops calling them.
#
#   scripts/docker-steps.sh deps                     the build's packages only (install-deps.sh)
#   scripts/docker-steps.sh build BUILD_DIR          packages (install-deps.sh), configure with
#                                                    cmake/release-options.cmake, build
#   scripts/docker-steps.sh stage BUILD_DIR DEST     cmake --install into DEST (the CLI, libdepthmask.so.0,
#                                                    the Python package) less the -dev files, plus
#                                                    depthmask_live_subscriber; DEST/share/depthmask:
#                                                    config/, data/sample, the runtime package list and
#                                                    these scripts
#   DEST/share/depthmask/docker-steps.sh runtime DEST   (in the runtime image) install the listed runtime
#                                                    packages, then check that the binary starts, masks
#                                                    the sample on the cpu backend and Python imports it
#   scripts/docker-steps.sh user NAME                (runtime image) the unprivileged user it runs as
# Environment:
#   DEPTHMASK_CUDA_ARCHITECTURES  the image's CMAKE_CUDA_ARCHITECTURES ("87-real"); unset: this machine's GPU,
#                                 else compute_75 PTX (cmake/cuda-architectures.cmake): images name it
#   DEPTHMASK_REQUIRE_CUDA=1      stop when the build came out without CUDA (the GPU images set it)
#   DEPTHMASK_CROSS=ARCH          cross-compile for ARCH (arm64), CPU-only, with Debian's cross toolchain
#                                 (install-deps.sh --cross, cmake/toolchains/debian-ARCH.cmake); ARCH equal
#                                 to this machine's is a native build
#   DEPTHMASK_BUILD_TARGETS       targets to build (default: depthmask depthmask_live_subscriber
#                                 depthmask_shared); with test targets (*_tests) or "all" the tests are
#                                 configured and their packages installed
#   JOBS                          parallel build jobs (default: nproc)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
step=${1:-}

# What DEPTHMASK_BUILD_TARGETS and DEPTHMASK_CROSS ask for: targets, tests, the install-deps.sh mode.
select_build() {
  read -r -a targets <<<"${DEPTHMASK_BUILD_TARGETS:-depthmask depthmask_live_subscriber depthmask_shared}"
  tests=OFF benchmarks=OFF
  case " ${targets[*]} " in *" all "*) tests=ON benchmarks=ON ;; *_tests" "*) tests=ON ;; esac
  cross=${DEPTHMASK_CROSS:-}
  [ "$cross" != "$(dpkg --print-architecture)" ] || cross=""
  # The image's build needs only what the shipped targets link; tests bring their own libraries.
  deps=(--image)
  [ "$tests" = ON ] && deps=()
  # Never Node: the images do not run the ROS bag tests' Node checker (the host CPU build does).
  export DEPTHMASK_NODE_TESTS=0
  [ -n "$cross" ] && deps=(--cross "$cross") && [ "$tests" = ON ] && deps+=(--tests)
  return 0
}

case "$step" in
  deps)
    # The packages of the build alone (its own layer, so a source change does not download them again).
    cd "$here/.."
    select_build
    bash scripts/install-deps.sh "${deps[@]}"
    ;;
  build)
    build=${2:?usage: docker-steps.sh build BUILD_DIR}
    cd "$here/.."
    select_build
    bash scripts/install-deps.sh "${deps[@]}"
    # The Python package goes to DEST/lib/python3/dist-packages (relative: under the install prefix;
    # typed STRING so that CMake keeps it relative instead of resolving it against this folder).
    args=(-S . -B "$build" -G Ninja -C cmake/release-options.cmake -DDEPTHMASK_PYTHON_DIR:STRING=lib/python3/dist-packages
          "-DDEPTHMASK_BUILD_TESTS=$tests" "-DDEPTHMASK_BUILD_BENCHMARKS=$benchmarks")
    [ -n "$cross" ] && args+=("-DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/debian-$cross.cmake" -DDEPTHMASK_CUDA=OFF)
    [ -n "${DEPTHMASK_CUDA_ARCHITECTURES:-}" ] && args+=("-DCMAKE_CUDA_ARCHITECTURES=${DEPTHMASK_CUDA_ARCHITECTURES}")
    cmake "${args[@]}"
    cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "${targets[@]}"
    if [ "${DEPTHMASK_REQUIRE_CUDA:-0}" = 1 ]; then
      if ! grep -q "^CUDA in this build: yes" <<<"$("$build/depthmask" info)"; then
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
    cmake --install "$build" --prefix "$dest" >/dev/null
    # A runtime image holds what runs, not what builds against it: no headers, CMake or pkg-config
    # files, no unversioned libdepthmask.so.
    rm -rf "$dest/include" "$dest/lib/cmake" "$dest/lib/pkgconfig" "$dest/lib/libdepthmask.so"
    cp "$build/depthmask_live_subscriber" "$dest/bin/"
    mkdir -p "$dest/share/depthmask/data"
    cp -r config "$dest/share/depthmask/"
    cp -r data/sample "$dest/share/depthmask/data/"
    cp scripts/install-deps.sh scripts/docker-steps.sh docker/healthcheck.sh "$dest/share/depthmask/"
    {
      bash scripts/install-deps.sh --runtime-list "$dest"/bin/* "$dest"/lib/libdepthmask.so.0
      # The Python package (pure Python over the C ABI) needs the interpreter and NumPy.
      if [ -d "$dest/lib/python3/dist-packages/depthmask" ]; then printf '%s\n' python3 python3-numpy; fi
    } | sort -u >"$dest/share/depthmask/runtime-packages.txt"
    echo "docker-steps: runtime packages: $(tr '\n' ' ' <"$dest/share/depthmask/runtime-packages.txt")"
    ;;
  runtime)
    dest=${2:?usage: docker-steps.sh runtime DEST}
    share="$dest/share/depthmask"
    bash "$here/install-deps.sh" --runtime "$share/runtime-packages.txt"
    if ldd "$dest"/bin/* "$dest"/lib/libdepthmask.so.* | grep "not found"; then
      echo "docker-steps: a shared library the binaries need is missing from this image" >&2
      exit 1
    fi
    "$dest/bin/depthmask" info
    out=$(mktemp -d)
    "$dest/bin/depthmask" run --config "$share/config/default.yaml" --backend cpu --output "$out"
    [ -s "$out/000000.tiff" ] || { echo "docker-steps: the sample run wrote no $out/000000.tiff" >&2; exit 1; }
    rm -rf "$out"
    if [ -d "$dest/lib/python3/dist-packages/depthmask" ]; then
      PYTHONPATH="$dest/lib/python3/dist-packages" python3 -c \
        'import depthmask; print("docker-steps: Python: depthmask", depthmask.__version__, "from", depthmask.__file__)'
    fi
    ;;
  user)
    # The images run as this unprivileged user; `video` lets `live` open /dev/video* (and the Jetson's
    # GPU device nodes, which belong to that group on L4T).
    name=${2:?usage: docker-steps.sh user NAME}
    getent group video >/dev/null || groupadd --system video
    id "$name" >/dev/null 2>&1 || useradd --system --create-home --home-dir "/home/$name" --groups video "$name"
    ;;
  *)
    echo "usage: docker-steps.sh deps | build BUILD_DIR | stage BUILD_DIR DEST | runtime DEST | user NAME" >&2
    exit 2
    ;;
esac
