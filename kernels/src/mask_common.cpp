#include <cstdint>
#include <stdexcept>
#include <string>

#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"

namespace depthmask {

void validate(const MaskJob& job) {
  if (job.rows < 0 || job.cols < 0)
    throw std::invalid_argument("mask job: negative size " + std::to_string(job.cols) + "x" + std::to_string(job.rows));
  if (job.rows == 0 || job.cols == 0) return;
  const size_t depth_bytes = pixel_bytes(job.depth_type), mask_bytes = pixel_bytes(job.mask_type);
  check_plane("mask job", "depth", job.depth, depth_bytes, depth_bytes, job.cols);
  check_plane("mask job", "mask", job.mask, mask_bytes, mask_bytes, job.cols);
  check_plane("mask job", "output", job.out, sizeof(float), sizeof(float), job.cols);
}

void validate(const MaskParams& p) {
  if (p.erode < 0 || p.erode > kMaxErode)
    throw std::invalid_argument("mask params: erode " + std::to_string(p.erode) + " is outside 0.." +
                                std::to_string(kMaxErode));
  if (p.label_count < 0 || p.label_count > kMaxLabels)
    throw std::invalid_argument("mask params: label count " + std::to_string(p.label_count) + " is outside 0.." +
                                std::to_string(kMaxLabels));
  if (p.invalid_raw_count < 0 || p.invalid_raw_count > kMaxInvalidRaw)
    throw std::invalid_argument("mask params: invalid value count " + std::to_string(p.invalid_raw_count) +
                                " is outside 0.." + std::to_string(kMaxInvalidRaw));
}

std::string to_string(const MaskKernelVariant& v) {
  if (v.shape == MaskBlockShape::Rows256) return "row256 vec";
  if (v.shape == MaskBlockShape::Rows256x2) return "row256x2 vec";
  return std::string(v.shape == MaskBlockShape::Threads32x8 ? "32x8" : "32x32") + (v.vectorized ? " vec" : " scalar") +
         (v.kept_only ? " kept-only" : "");
}

}  // namespace depthmask
