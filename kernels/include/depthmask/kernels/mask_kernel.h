// Launchers for the masking pass: the CUDA kernel and the CPU loop, over the same type-erased job.
//
// Plain C++ header (no CUDA headers): the stream is passed as the runtime's opaque CUstream_st*,
// which is what cudaStream_t is.
#pragma once

#include <cstddef>
#include <cstdint>

#include "depthmask/kernels/image_view.h"
#include "depthmask/kernels/mask_rule.h"

struct CUstream_st;

namespace depthmask {

enum class DepthType { U16, F32 };
enum class MaskType { U8, U16 };

// Bytes per pixel of each type.
inline size_t pixel_bytes(DepthType t) { return t == DepthType::U16 ? 2 : 4; }
inline size_t pixel_bytes(MaskType t) { return t == MaskType::U8 ? 1 : 2; }

// One frame's worth of planes (image_view.h). Depth and mask are read, out (float32 metres) is
// written; all three have rows x cols pixels. Steps are in bytes, so ROIs of larger images are fine.
// For the GPU launcher the pointers must be device-accessible (device, mapped or managed memory).
struct MaskJob {
  Plane<const void> depth;
  DepthType depth_type = DepthType::U16;
  Plane<const void> mask;
  MaskType mask_type = MaskType::U8;
  Plane<float> out;
  int rows = 0;
  int cols = 0;
};

// Throws std::invalid_argument describing the first problem (null pointer, step shorter than a row,
// negative size). An empty job (rows or cols 0) is valid and does nothing.
void validate(const MaskJob& job);
// Throws std::invalid_argument when the parameters are outside what the rule supports (erode radius
// beyond kMaxErode, label or invalid-value counts beyond their arrays).
void validate(const MaskParams& params);

// The CPU loop: the same per-pixel rule, rows spread over cores with oneTBB. With params.erode > 0
// each pixel's mask test is the AND over its window (see mask_rule.h); results equal the GPU's.
// `tasks`: 0 lets oneTBB split the rows (bands of at least 16 rows); n > 0 cuts them into exactly
// n equal bands (at most one per row), for measuring how many cores a small frame is worth.
void mask_cpu(const MaskJob& job, const MaskParams& params, int tasks = 0);

// True when this build carries the CUDA kernel.
bool have_cuda_kernels() noexcept;

// Enqueues the masking kernel on `stream` and checks the launch (cudaGetLastError); never
// synchronises. Throws CudaError on a launch failure, std::invalid_argument on a bad job, and
// PlatformError when the build has no CUDA kernels.
void launch_mask(const MaskJob& job, const MaskParams& params, CUstream_st* stream);

}  // namespace depthmask
