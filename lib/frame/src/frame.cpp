#include "depthmask/frame.h"

#include <cstring>

#include "depthmask/config.h"
#include "depthmask/detail/pass_runner.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"
#include "depthmask/registration.h"

namespace fs = std::filesystem;

namespace depthmask {

MaskParams mask_params(const Config& c) {
  MaskParams p;
  set_depth_range(p, c.depth.scale, c.depth.min, c.depth.max);
  p.invalid = c.output.invalid;
  p.threshold = c.mask.threshold;
  p.invert = c.mask.invert;
  DM_EXPECT(c.mask.labels.size() <= static_cast<size_t>(kMaxLabels), ConfigError,
            "config key 'mask.labels': at most " << kMaxLabels << " labels are supported");
  p.label_count = static_cast<int32_t>(c.mask.labels.size());
  for (size_t i = 0; i < c.mask.labels.size(); ++i) p.labels[i] = c.mask.labels[i];
  if (c.mask.threshold_fraction) {
    DM_EXPECT(
        *c.mask.threshold_fraction >= 0.0 && *c.mask.threshold_fraction <= 1.0, ConfigError,
        "config key 'mask.threshold_fraction': expected a fraction in [0, 1], got " << *c.mask.threshold_fraction);
    set_threshold_fraction(p, *c.mask.threshold_fraction);
  }
  p.apc_encoding = c.depth.encoding == DepthEncoding::Apc;
  DM_EXPECT(c.depth.invalid_values.size() <= static_cast<size_t>(kMaxInvalidRaw), ConfigError,
            "config key 'depth.invalid_values': at most " << kMaxInvalidRaw << " values are supported");
  p.invalid_raw_count = static_cast<int32_t>(c.depth.invalid_values.size());
  for (size_t i = 0; i < c.depth.invalid_values.size(); ++i) {
    DM_EXPECT(c.depth.invalid_values[i] <= 65535u, ConfigError,
              "config key 'depth.invalid_values': " << c.depth.invalid_values[i] << " is not a 16-bit value");
    p.invalid_raw[i] = static_cast<uint16_t>(c.depth.invalid_values[i]);
  }
  DM_EXPECT(c.mask.erode >= 0 && c.mask.erode <= kMaxErode, ConfigError,
            "config key 'mask.erode': expected 0.." << kMaxErode << " pixels, got " << c.mask.erode);
  p.erode = c.mask.erode;
  return p;
}

InputLimits input_limits(const Config& c) { return InputLimits{c.input.max_file_bytes, c.input.max_image_pixels}; }

MaskParams union_mask_params(const MaskParams& params) {
  MaskParams p = params;
  // kTestKeep (255) is kept; kTestLiveDrop (1) and 0 are not (mask_rule.h).
  p.threshold = kTestLiveDrop;
  p.threshold_by_type = false;
  p.label_count = 0;
  p.invert = false;
  p.tests_plane = true;
  return p;
}

MaskParams mask_params(const Config& c, const FrameEntry& f) {
  MaskParams p = mask_params(c);
  if (f.depth_scale) set_depth_range(p, *f.depth_scale, c.depth.min, c.depth.max);
  return p;
}

FrameSlot::FrameSlot(MemoryBackend& backend) : backend_(&backend), stream_(backend.create_stream()) {}

FrameSlot::~FrameSlot() {
  try {  // queued work must not outlive the buffers it uses
    if (backend_->device_executes()) backend_->synchronize(stream());
  } catch (...) {
  }
}

void FrameSlot::release_buffers() noexcept {
  try {  // queued work must not outlive the buffers it uses
    if (backend_->device_executes()) backend_->synchronize(stream());
  } catch (...) {
  }
  depth_ = cv::Mat();
  mask_ = cv::Mat();
  color_ = cv::Mat();
  out_ = cv::Mat();
  reason_ = cv::Mat();
  schedule_.reset();
  reason_buf_ = Buffer();
  reason_scratch_buf_ = Buffer();
  depth_buf_ = Buffer();
  mask_buf_ = Buffer();
  out_buf_ = Buffer();
  registered_buf_ = Buffer();
  color_buf_ = Buffer();
  key_buf_ = Buffer();
}

cv::Mat FrameSlot::host_mat(int rows, int cols, int type, Buffer& buf) {
  const size_t need = size_t(rows) * size_t(cols) * CV_ELEM_SIZE(type);
  if (buf.size() < need) {
    buf = Buffer();  // free the old one first: peak memory stays one buffer
    buf = backend_->allocate(need);
  }
  return cv::Mat(rows, cols, type, buf.host());
}

// A header of src's size and type on `buf` (grown when too small), with src copied in.
cv::Mat FrameSlot::adopt(const cv::Mat& src, Buffer& buf) {
  cv::Mat hdr = host_mat(src.rows, src.cols, src.type(), buf);
  src.copyTo(hdr);
  return hdr;
}

void FrameSlot::check_pair(const fs::path& depth_file, const fs::path& mask_file) const {
  if (depth_.size() == mask_.size()) return;
  // Registration brings depth of another size onto the mask grid, when the rule says it applies.
  const RegistrationPlan plan = plan_registration(registration_, geometry_, depth_.size(), mask_.size());
  DM_EXPECT(plan.mode != RegistrationMode::None, InputError,
            "depth file '" << depth_file.string() << "' is " << depth_.cols << "x" << depth_.rows << " but mask file '"
                           << mask_file.string() << "' is " << mask_.cols << "x" << mask_.rows
                           << "; expected the same size (registration: " << plan.reason << ")");
}

void FrameSlot::load(const FrameEntry& f, bool want_color) {
  if (f.bag) return load_bag_images(f, want_color, nullptr);  // frame_bag.cpp
  depth_.release();
  mask_.release();
  depth_channels_ = 0;
  cv::Mat depth = reader_.read(f.depth, ImageRole::Depth, *backend_, depth_buf_);
  depth_channels_ = reader_.last_stored_channels();
  cv::Mat mask = reader_.read(f.mask, ImageRole::Mask, *backend_, mask_buf_);
  depth_ = depth;
  mask_ = mask;
  try {
    check_pair(f.depth, f.mask);
  } catch (...) {
    depth_.release();
    mask_.release();
    throw;
  }
  load_color(f, want_color);
}

void FrameSlot::load_color(const FrameEntry& f, bool want_color) {
  color_ = cv::Mat();
  if (want_color && !f.color.empty()) {
    const cv::Mat c = reader_.read(f.color, ImageRole::Color, color_decoded_);
    // The color image shares the mask's grid (the output's); depth may differ when it is registered.
    DM_EXPECT(c.size() == mask_.size(), InputError,
              "color file '" << f.color.string() << "' is " << c.cols << "x" << c.rows << " but mask file '"
                             << f.mask.string() << "' is " << mask_.cols << "x" << mask_.rows
                             << "; expected the same size");
    stage_color(c, "color file '" + f.color.string() + "'");
  }
}

void FrameSlot::load_depth(const FrameEntry& f, bool want_color) {
  if (f.bag) {  // a bag frame with several mask topics: load_instance_union() decodes everything
    bag_want_color_ = want_color;
    return;
  }
  depth_.release();
  mask_.release();
  depth_channels_ = 0;
  depth_ = reader_.read(f.depth, ImageRole::Depth, *backend_, depth_buf_);
  depth_channels_ = reader_.last_stored_channels();
  load_color(f, want_color);
}

void FrameSlot::load_mask(const fs::path& mask_file, const fs::path& depth_file) {
  DM_EXPECT(!depth_.empty(), std::logic_error, "load_mask() without a loaded depth");
  mask_.release();
  cv::Mat mask = reader_.read(mask_file, ImageRole::Mask, *backend_, mask_buf_);
  mask_ = mask;
  try {
    check_pair(depth_file, mask_file);
  } catch (...) {
    mask_.release();
    throw;
  }
}

void FrameSlot::load_instance_union(const FrameEntry& f, const MaskParams& params) {
  if (f.bag) return load_bag_images(f, bag_want_color_, &params);
  DM_EXPECT(!depth_.empty(), std::logic_error, "load_instance_union() without a loaded depth");
  DM_EXPECT(!f.instances.empty(), std::logic_error, "load_instance_union() for a frame without instance masks");
  mask_.release();
  cv::Mat mask = reader_.read_instance_union(f.instances, params, *backend_, mask_buf_);
  mask_ = mask;
  try {
    check_pair(f.depth, f.instances.front().second);
  } catch (...) {
    mask_.release();
    throw;
  }
}

void FrameSlot::set(const cv::Mat& depth, const cv::Mat& mask, const cv::Mat& color) {
  check_depth_type(depth, "<memory>");
  check_mask_type(mask, "<memory>");
  depth_.release();
  mask_.release();
  depth_ = adopt(depth, depth_buf_);
  depth_buf_.host_written();
  mask_ = adopt(mask, mask_buf_);
  mask_buf_.host_written();
  try {
    check_pair("<memory>", "<memory>");
  } catch (...) {
    depth_.release();
    mask_.release();
    throw;
  }
  stage_color(color, "the frame's color image");
}

void FrameSlot::run_mask(const MaskParams& params) {
  DM_EXPECT(!depth_.empty() && !mask_.empty(), std::logic_error, "run_mask() without a loaded frame");
  if (const RegistrationPlan plan = plan_registration(registration_, geometry_, depth_.size(), mask_.size());
      plan.mode != RegistrationMode::None)
    return run_mask_registered(params, plan.mode);
  DM_EXPECT(depth_.size() == mask_.size(), std::logic_error, "run_mask(): depth and mask sizes differ");
  // With a colour key the masking pass reads the key pass's plane (frame_color_key.cpp).
  const MaskPlane plane = mask_plane(params);
  const size_t out_bytes = depth_.total() * sizeof(float);
  if (out_buf_.size() < out_bytes) {
    out_ = cv::Mat();
    out_buf_ = Buffer();
    out_buf_ = backend_->allocate(out_bytes);
  }
  out_ = cv::Mat(depth_.rows, depth_.cols, CV_32FC1, out_buf_.host());
  prepare_reason(depth_.rows, depth_.cols, plane.params);

  MaskJob job;
  job.depth_type = depth_.type() == CV_16UC1 ? DepthType::U16 : DepthType::F32;
  job.mask_type = plane.mat.type() == CV_8UC1 ? MaskType::U8 : MaskType::U16;
  job.rows = depth_.rows;
  job.cols = depth_.cols;
  const size_t depth_bytes = depth_.total() * depth_.elemSize(), mask_bytes = plane.mat.total() * plane.mat.elemSize();
  const detail::PassRunner passes(*backend_, stream(), wait_);
  passes.run([&] {
    job.depth = passes.at<const void>(depth_buf_, depth_.step[0]);
    job.mask = passes.at<const void>(*plane.buf, plane.mat.step[0]);
    job.out = passes.at<float>(out_buf_, out_.step[0]);
    // The backend's own schedule (copy: row bands) takes the frame when it suits it. Not with a colour
    // key: the key pass writes the mask plane on the device, so there is no upload to overlap.
    if (!color_key_ && !reason_on_) {
      if (!schedule_) schedule_ = backend_->make_mask_schedule();
      if (schedule_ && schedule_->enqueue(job, params, depth_buf_, mask_buf_, out_buf_, copy_bands_, stream())) return;
    }
    run_color_key(passes, params);
    passes.fresh(depth_buf_, depth_bytes);
    passes.fresh(*plane.buf, mask_bytes);
    passes.pass(
        out_buf_,
        [&](CUstream_st* s) {
          // Kernels reading host memory across the bus have their own best walk (mask_variants.h).
          launch_mask_variant(
              job, plane.params,
              backend_->kernels_read_host_memory() ? mapped_mask_kernel_variant() : default_mask_kernel_variant(), s);
        },
        [&] { mask_cpu(job, plane.params, cpu_tasks_); });
    passes.to_host(out_buf_, out_bytes);
    if (reason_on_) {
      ReasonJob rj;
      rj.depth = job.depth, rj.depth_type = job.depth_type, rj.mask = job.mask, rj.mask_type = job.mask_type;
      rj.rows = job.rows, rj.cols = job.cols;
      run_reason(passes, rj, reason_params_for(plane.params, params, false, job.depth_type == DepthType::U16));
    }
  });
}

}  // namespace depthmask
