# The CMake options of every build of depthmask that someone runs or ships: `make` (the README's
# commands), CI (.ci/run) and both Docker images (through scripts/docker-steps.sh). One place, loaded
# as an initial cache: `cmake -S . -B build -G Ninja -C cmake/release-options.cmake [-D...]`.
# tests/unit/test_deploy_files.cpp fails when a Dockerfile, the Makefile or CI stops using it.
#
# Not here, on purpose: CMAKE_CUDA_ARCHITECTURES (each image builds for its own GPUs; without it
# cmake/cuda-architectures.cmake picks this machine's GPU, else compute_75 PTX) and DEPTHMASK_CUDA (AUTO: a laptop
# without nvcc gets the CPU-only build; the images check that they got CUDA). Nothing here downloads:
# every dependency comes from scripts/install-deps.sh, so offline builds with a package mirror work.
set(CMAKE_BUILD_TYPE Release CACHE STRING "Build type")
set(DEPTHMASK_CUDA AUTO CACHE STRING "Build the CUDA kernels and GPU backends (AUTO, ON, OFF)")
set(DEPTHMASK_BUILD_TESTS ON CACHE BOOL "Build the tests")
set(DEPTHMASK_BUILD_BENCHMARKS ON CACHE BOOL "Build the micro-benchmarks when Google Benchmark is found")
