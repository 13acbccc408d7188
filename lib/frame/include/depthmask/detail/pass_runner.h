// The one place that decides whether a frame's passes (registration, colour key, masking,
// backprojection) run on the device or on the CPU: a PassRunner picks the side once, from
// MemoryBackend::device_executes(), and every pass of the frame then takes its buffers' planes for
// that side and runs either its kernel launch or its CPU loop. A frame's passes cannot end up on
// different sides, and no pass asks the backend itself.
//
//   detail::PassRunner passes(backend, slot_stream, slot_wait);
//   passes.run([&] {                                  // on the device: inside run_and_wait
//     job.depth = passes.in(depth_buf, depth_bytes, depth_step);   // uploaded when stale there
//     job.out = passes.at<float>(out_buf, out_step);
//     passes.pass(out_buf, [&](CUstream_st* s) { launch_x(job, s); }, [&] { x_cpu(job); });
//     passes.to_host(out_buf, out_bytes);            // downloaded on the device; nothing on the CPU
//   });
#pragma once

#include <cstddef>
#include <utility>

#include "depthmask/backend.h"
#include "depthmask/kernels/image_view.h"

namespace depthmask::detail {

class PassRunner {
 public:
  // `stream` and `wait`: the frame slot's (its copies and kernels go on its own stream).
  PassRunner(MemoryBackend& backend, CUstream_st* stream, Wait wait)
      : backend_(&backend), stream_(stream), wait_(wait), device_(backend.device_executes()) {}

  // True when the passes run on the device (kernel launches), false for the CPU loops.
  bool on_device() const { return device_; }
  MemoryBackend& backend() const { return *backend_; }
  CUstream_st* stream() const { return stream_; }

  // Runs `passes` (the calls below): on the device inside run_and_wait() on the slot's stream with the
  // slot's wait, so the device's work is waited for (also when a pass throws) before the host reads
  // a result; on the CPU, here.
  template <class Passes>
  void run(Passes&& passes) const {
    if (device_)
      backend_->run_and_wait(passes, stream_, wait_);
    else
      passes();
  }

  // `buf`'s plane on the passes' side, rows `step` bytes apart, as it is (nothing is copied).
  template <class T = void>
  Plane<T> at(Buffer& buf, size_t step) const {
    return Plane<T>{static_cast<T*>(device_ ? buf.device() : buf.host()), step};
  }
  // The plane a pass reads: the first `bytes` of `buf` made fresh on the passes' side first (an
  // upload on the slot's stream when the device's copy is stale; the CPU reads the host's, where
  // every input is decoded).
  template <class T = const void>
  Plane<T> in(Buffer& buf, size_t bytes, size_t step) const {
    fresh(buf, bytes);
    return at<T>(buf, step);
  }
  void fresh(Buffer& buf, size_t bytes) const {
    if (device_) buf.to_device(bytes, stream_);
  }

  // One pass: `launch(stream)` enqueued on the slot's stream, or `cpu()` run here; then `written` is
  // marked fresh on that side.
  template <class Launch, class Cpu>
  void pass(Buffer& written, Launch&& launch, Cpu&& cpu) const {
    if (device_) {
      std::forward<Launch>(launch)(stream_);
      written.device_written();
    } else {
      std::forward<Cpu>(cpu)();
      written.host_written();
    }
  }

  // Makes the first `bytes` of `buf` readable on the host once run() returns (a download on the
  // slot's stream when the device wrote it; the CPU's results already are).
  void to_host(Buffer& buf, size_t bytes) const {
    if (device_) buf.to_host(bytes, stream_);
  }

 private:
  MemoryBackend* backend_;
  CUstream_st* stream_;
  Wait wait_;
  bool device_;
};

}  // namespace depthmask::detail
