// FrameSlot's `reason` pass (kernels/reason.h): after the masking pass, on the same side and stream,
// over the planes that pass read, into an 8-bit plane of codes. Apart from frame.cpp so the masking
// path reads as it did.
#include "depthmask/detail/pass_runner.h"
#include "depthmask/frame.h"
#include "depthmask/registration.h"

namespace depthmask {

void FrameSlot::set_reason(bool on, std::optional<MaskParams> configured) {
  reason_on_ = on;
  reason_configured_ = configured;
  if (!on) reason_ = cv::Mat();
}

void FrameSlot::prepare_reason(int rows, int cols, const MaskParams& rule) {
  reason_ = cv::Mat();
  if (!reason_on_) return;
  const size_t bytes = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  // Both only grow: same-sized frames allocate nothing in steady state.
  if (reason_buf_.size() < bytes) {
    reason_buf_ = Buffer();
    reason_buf_ = backend_->allocate(bytes);
  }
  if (rule.erode > 0 && reason_scratch_buf_.size() < bytes) {
    reason_scratch_buf_ = Buffer();
    reason_scratch_buf_ = backend_->allocate(bytes);
  }
  reason_ = cv::Mat(rows, cols, CV_8UC1, reason_buf_.host());
}

ReasonParams FrameSlot::reason_params_for(const MaskParams& rule, const MaskParams& frame_params, bool registered,
                                          bool depth_raw) const {
  // The configured range: the live runner's (without its depth band), else the frame's own rule.
  MaskParams configured = frame_params;
  if (reason_configured_) {
    configured.scale = reason_configured_->scale;
    configured.min_m = reason_configured_->min_m, configured.max_m = reason_configured_->max_m;
    configured.raw_min = reason_configured_->raw_min, configured.raw_max = reason_configured_->raw_max;
  }
  if (registered) configured = registered_mask_params(configured, depth_raw);
  return reason_params(rule, configured);
}

void FrameSlot::run_reason(const detail::PassRunner& passes, ReasonJob job, ReasonParams params) {
  const size_t step = static_cast<size_t>(job.cols);
  job.out = passes.at<uint8_t>(reason_buf_, step);
  if (params.rule.erode > 0) job.scratch = passes.at<uint8_t>(reason_scratch_buf_, step);
  passes.pass(
      reason_buf_, [&](CUstream_st* s) { launch_reason(job, params, s); }, [&] { reason_cpu(job, params); });
  passes.to_host(reason_buf_, step * static_cast<size_t>(job.rows));
}

}  // namespace depthmask
