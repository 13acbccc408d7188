# Cross build for arm64 (aarch64: every Jetson's CPU) with Debian's cross toolchain, CPU-only:
#   scripts/install-deps.sh --cross arm64     # crossbuild-essential-arm64 and the -dev packages as :arm64
#   cmake -S . -B build-arm64 -G Ninja -C cmake/release-options.cmake \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/debian-arm64.cmake
# The libraries are found where Debian's multiarch layout puts them (/usr/lib/aarch64-linux-gnu), so no
# sysroot is needed, but the root must hold only the arm64 -dev packages of OpenCV and yaml-cpp (they
# are not Multi-Arch: same): docker/Dockerfile.jetson's BUILD=cross-cpu stage is such a root.
# No aarch64 CUDA toolkit comes with Debian: DEPTHMASK_CUDA is OFF. Test programs run under
# qemu-user when binfmt_misc has it (scripts/arm64-check.sh); discovery waits for ctest
# (tests/CMakeLists.txt), so the build itself never runs an arm64 program.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Programs (cmake, ninja, python3) are the build machine's; libraries, headers and CMake packages arm64's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(DEPTHMASK_CUDA OFF CACHE STRING "No CUDA in an arm64 cross build" FORCE)
# pkg-config (libzmq, libdeflate) reads arm64's .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/pkgconfig:/usr/share/pkgconfig")
