#include <cstdint>
#include <stdexcept>
#include <string>

#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"

namespace depthmask {

namespace {
size_t elem_size(DepthType t) { return t == DepthType::U16 ? 2 : 4; }
size_t elem_size(MaskType t) { return t == MaskType::U8 ? 1 : 2; }

void check_plane(const char* name, const void* p, size_t step, size_t elem, int cols) {
  if (p == nullptr) throw std::invalid_argument(std::string("mask job: ") + name + " pointer is null");
  // Misaligned element access is undefined on the CPU and a sticky error on the GPU.
  if (reinterpret_cast<uintptr_t>(p) % elem != 0 || step % elem != 0)
    throw std::invalid_argument(std::string("mask job: ") + name + " pointer or row step is not aligned to its " +
                                std::to_string(elem) + "-byte pixels");
  if (step < elem * static_cast<size_t>(cols))
    throw std::invalid_argument(std::string("mask job: ") + name + " row step " + std::to_string(step) +
                                " bytes is shorter than a row of " + std::to_string(cols) + " pixels");
}
}  // namespace

void validate(const MaskJob& job) {
  if (job.rows < 0 || job.cols < 0)
    throw std::invalid_argument("mask job: negative size " + std::to_string(job.cols) + "x" + std::to_string(job.rows));
  if (job.rows == 0 || job.cols == 0) return;
  check_plane("depth", job.depth, job.depth_step, elem_size(job.depth_type), job.cols);
  check_plane("mask", job.mask, job.mask_step, elem_size(job.mask_type), job.cols);
  check_plane("output", job.out, job.out_step, sizeof(float), job.cols);
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
