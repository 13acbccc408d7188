# CMAKE_CUDA_ARCHITECTURES for a build that names none: included by the top-level CMakeLists.txt
# before enable_language(CUDA), with CMAKE_CUDA_COMPILER known. A list named with
# -DCMAKE_CUDA_ARCHITECTURES=... or CMake's CUDAARCHS environment variable always wins (the images,
# CI and scripts/ name theirs), and this file is not read then.
#
# A build for this machine (docs/BUILD.md): SASS for each GPU that nvidia-smi reports ("90-real" on
# an H200); with no GPU, PTX of one virtual architecture ("75-virtual": compute_75, the oldest that
# CUDA 13 builds for), which the driver compiles for any GPU of compute capability 7.5 or newer the
# first time the program runs there. One PTX compile per kernel instead of nine SASS compiles.
# Not "native": CMake 3.25 stops on it when there is no GPU.
#
# The answer goes into the cache, so every later configure of this build folder gives the same list
# whatever the machine says then: `make test` after `make run` recompiles nothing of the library. A
# GPU added later: a fresh build folder, or `cmake -U CMAKE_CUDA_ARCHITECTURES BUILD`.

set(_dm_archs "")
set(_dm_why "no GPU found (nvidia-smi absent or silent)")
find_program(_dm_nvidia_smi nvidia-smi NO_CACHE)
if(_dm_nvidia_smi)
  execute_process(COMMAND ${_dm_nvidia_smi} --query-gpu=compute_cap --format=csv,noheader
                  OUTPUT_VARIABLE _dm_caps RESULT_VARIABLE _dm_rc ERROR_QUIET TIMEOUT 60)
  if(_dm_rc EQUAL 0)
    # One "major.minor" line per GPU; the toolkit must know each (a GPU newer than the toolkit gets
    # the PTX instead).
    execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-code OUTPUT_VARIABLE _dm_codes ERROR_QUIET)
    string(REGEX MATCHALL "[0-9]+\\.[0-9]+" _dm_caps "${_dm_caps}")
    foreach(_dm_cap IN LISTS _dm_caps)
      string(REPLACE "." "" _dm_cc "${_dm_cap}")
      if(_dm_codes MATCHES "sm_${_dm_cc}([^0-9]|$)")
        list(APPEND _dm_archs "${_dm_cc}-real")
      else()
        set(_dm_why "the GPU (compute capability ${_dm_cap}) is newer than this nvcc knows")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _dm_archs)
    list(SORT _dm_archs)
  endif()
endif()
if(_dm_archs)
  set(_dm_why "this machine's GPU (nvidia-smi)")
else()
  set(_dm_archs 75-virtual)
  string(APPEND _dm_why ": compute_75 PTX, compiled by the driver on a GPU's first run")
endif()
set(CMAKE_CUDA_ARCHITECTURES "${_dm_archs}" CACHE STRING
    "CUDA architectures; chosen at the first configure: ${_dm_why} (cmake/cuda-architectures.cmake)")
message(STATUS "depthmask: CUDA architectures probed: ${_dm_why}")
