// The masking kernel's alternatives, kept so that `depthmask bench`, the micro-benchmarks and the
// parity tests can measure and check every one of them; launch_mask() (mask_kernel.h) uses the one
// that measured best (docs/PERFORMANCE.md says which and why).
//
// Plain C++ header (no CUDA headers), like mask_kernel.h.
#pragma once

#include <string>
#include <vector>

#include "depthmask/kernels/mask_kernel.h"

struct CUstream_st;

namespace depthmask {

// Threads per 32x32 output tile: 32x8 (each thread walks 4 rows) or 32x32 (one row each); or the
// row walk: 256 threads along one row, blocks in memory order (vectorised only), one chunk of four
// pixels per thread (Rows256) or two, 256 chunks apart, loaded before either is stored (Rows256x2).
enum class MaskBlockShape { Threads32x8, Threads32x32, Rows256, Rows256x2 };

struct MaskKernelVariant {
  MaskBlockShape shape = MaskBlockShape::Threads32x8;
  // 16-byte loads and stores where the rows' alignment allows (scalar head/tail otherwise).
  bool vectorized = true;
  // Reads the mask first and the depth only where the mask keeps a pixel (of the thread's pixel, or
  // of its chunk when vectorised): a dropped pixel is `invalid` whatever its depth (mask_rule.h), so
  // the output is the same. Worth it where every byte read crosses the bus (mapped host memory); on
  // device memory the full read is what the D2D comparison counts. 32x8 shapes only.
  bool kept_only = false;
};

// The variants this build carries (empty without CUDA), the default first.
std::vector<MaskKernelVariant> mask_kernel_variants();
// "32x8 vec", "32x32 scalar", ...
std::string to_string(const MaskKernelVariant& v);
// The variant launch_mask() uses.
MaskKernelVariant default_mask_kernel_variant();
// The variants measured on mapped host memory (zero_copy): every one above plus the kept-only ones.
std::vector<MaskKernelVariant> mapped_mask_kernel_variants();
// The variant for frames in mapped host memory (zero_copy), chosen by measurement like the default
// (docs/PERFORMANCE.md).
MaskKernelVariant mapped_mask_kernel_variant();

// Enqueues one variant on `stream`, like launch_mask(): same checks, same results.
void launch_mask_variant(const MaskJob& job, const MaskParams& params, const MaskKernelVariant& variant,
                         CUstream_st* stream);

// Several frames in one launch (for small frames, where launch overhead dominates): every job must
// have the same size and pixel types. At most kMaxBatchedJobs per call.
constexpr int kMaxBatchedJobs = 32;
void launch_mask_batch(const MaskJob* jobs, int count, const MaskParams& params, CUstream_st* stream,
                       const MaskKernelVariant& variant = default_mask_kernel_variant());

}  // namespace depthmask
