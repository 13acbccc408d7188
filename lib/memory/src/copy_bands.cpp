// The copy backend's row bands (copy_bands.h).
#include "copy_bands.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>

#include "depthmask/detail/cuda_check.h"
#include "depthmask/errors.h"

namespace depthmask::detail {

int CopyBands::bands_for(size_t input_bytes) {
  if (input_bytes < kMinSplitBytes) return 1;
  return static_cast<int>(std::clamp<size_t>((input_bytes + kBytesPerBand / 2) / kBytesPerBand, 2, kMaxAutoBands));
}

struct CopyBands::Impl {
  StreamHandle down;                                // kernels and downloads; the caller's stream carries the uploads
  std::array<cudaEvent_t, kMaxBands + 1> events{};  // one per band uploaded, and "all done"

  explicit Impl(MemoryBackend& b) : down(b.create_stream()) {
    for (auto& e : events) {
      const cudaError_t r = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      if (r != cudaSuccess) {
        destroy();
        DM_CUDA(r);
      }
    }
  }
  ~Impl() { destroy(); }
  void destroy() noexcept {
    for (auto& e : events)
      if (e != nullptr) DM_CUDA_NOTHROW(cudaEventDestroy(e));
    events.fill(nullptr);
  }
};

CopyBands::CopyBands(MemoryBackend& backend) : backend_(&backend) {}
CopyBands::~CopyBands() = default;

bool CopyBands::enqueue(const MaskJob& job, const MaskParams& params, Buffer& depth, Buffer& mask, Buffer& out,
                        int bands, CUstream_st* stream) {
  const size_t depth_bytes = static_cast<size_t>(job.rows) * job.cols * pixel_bytes(job.depth_type);
  const size_t mask_bytes = static_cast<size_t>(job.rows) * job.cols * pixel_bytes(job.mask_type);
  if (bands <= 0) bands = bands_for(depth_bytes + mask_bytes);
  // Split only where there are fresh host data to upload, and no erode.
  if (params.erode != 0 || bands <= 1 || depth.head() != Head::AtHost || mask.head() != Head::AtHost) return false;
  if (!impl_) impl_ = std::make_unique<Impl>(*backend_);
  enqueue_bands(job, params, depth, mask, out, bands, stream);
  depth.mark_synced();
  mask.mark_synced();
  out.mark_synced();
  return true;
}

void CopyBands::enqueue_bands(const MaskJob& job, const MaskParams& params, Buffer& depth, Buffer& mask, Buffer& out,
                              int bands, CUstream_st* stream) {
  DM_EXPECT(params.erode == 0, std::logic_error, "CopyBands: erode needs whole frames");
  bands = std::clamp(bands, 1, std::min(kMaxBands, std::max(job.rows, 1)));
  CUstream_st* down = impl_->down.get();
  for (int k = 0; k < bands; ++k) {
    const int r0 = static_cast<int>(int64_t{job.rows} * k / bands);
    const int r1 = static_cast<int>(int64_t{job.rows} * (k + 1) / bands);
    const auto rows = static_cast<size_t>(r1 - r0);
    depth.copy_range_to_device(r0 * job.depth.step, rows * job.depth.step, stream);
    mask.copy_range_to_device(r0 * job.mask.step, rows * job.mask.step, stream);
    DM_CUDA(cudaEventRecord(impl_->events[k], stream));
    DM_CUDA(cudaStreamWaitEvent(down, impl_->events[k], 0));
    MaskJob band = job;
    band.depth = job.depth.from_row(r0);
    band.mask = job.mask.from_row(r0);
    band.out = job.out.from_row(r0);
    band.rows = r1 - r0;
    launch_mask(band, params, down);
    out.copy_range_to_host(r0 * job.out.step, rows * job.out.step, down);
  }
  // The caller waits on its own stream: make it wait for the downloads too.
  DM_CUDA(cudaEventRecord(impl_->events[kMaxBands], down));
  DM_CUDA(cudaStreamWaitEvent(stream, impl_->events[kMaxBands], 0));
}

}  // namespace depthmask::detail
