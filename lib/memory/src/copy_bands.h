// The copy backend's single-frame schedule (its MaskSchedule): the frame split into row bands, so that
// the upload of band k+1 (on the slot's stream), the kernel of band k and the download of band k-1 (on
// a second stream) run at once — both bus directions busy, the kernel hidden between them. One frame's
// host-to-host latency then approaches its upload time instead of upload + kernel + download.
// CUDA builds only (the copy backend's room: backends/copy_backend.cpp makes one per frame slot).
#pragma once

#include <cstddef>
#include <memory>

#include "depthmask/backend.h"
#include "depthmask/kernels/mask_kernel.h"

namespace depthmask::detail {

class CopyBands final : public MaskSchedule {
 public:
  // About one band per 4 MB of input, 2 to 8, none below 1 MB: each band costs about 10 us of
  // per-copy overhead on the H200 (bench sweep of 1..16 bands, docs/PERFORMANCE.md), so small
  // frames gain little and 4K frames do best with 4 to 8.
  static constexpr size_t kMinSplitBytes = 1 << 20;
  static constexpr size_t kBytesPerBand = 4 << 20;
  static constexpr int kMaxAutoBands = 8;
  static constexpr int kMaxBands = 16;
  static int bands_for(size_t input_bytes);

  explicit CopyBands(MemoryBackend& backend);
  ~CopyBands() override;
  CopyBands(const CopyBands&) = delete;
  CopyBands& operator=(const CopyBands&) = delete;

  // Splits the frame when it is worth it and can be: bands (asked for, or bands_for() of the input's
  // size) above 1, no erode (a band's kernel would need its neighbours' mask rows), and depth and mask
  // fresh on the host only (there is an upload to overlap). Otherwise declines (false, nothing
  // enqueued). The schedule's stream and events are made at the first frame it splits.
  bool enqueue(const MaskJob& job, const MaskParams& params, Buffer& depth, Buffer& mask, Buffer& out, int bands,
               CUstream_st* stream) override;

 private:
  // Enqueues uploads of depth and mask, the masking kernel and the download of out, band by band,
  // and makes `stream` wait for all of it. `job` holds the device planes of the three buffers, whose
  // rows are job.depth.step / mask.step / out.step bytes apart from offset 0.
  void enqueue_bands(const MaskJob& job, const MaskParams& params, Buffer& depth, Buffer& mask, Buffer& out, int bands,
                     CUstream_st* stream);

  struct Impl;
  MemoryBackend* backend_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace depthmask::detail
