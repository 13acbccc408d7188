#include "depthmask/frame.h"

#include <opencv2/imgcodecs.hpp>

#include <cstring>
#include <fstream>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"
#include "depthmask/registration.h"
#include "detail/exr_codec.h"
#include "detail/image_header.h"
#include "detail/pass_runner.h"
#include "detail/png_palette.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

std::string type_name(const cv::Mat& m) {
  const char* depth_names[] = {"8-bit unsigned", "8-bit signed", "16-bit unsigned", "16-bit signed",
                               "32-bit signed",  "32-bit float", "64-bit float",    "16-bit float"};
  const int d = m.depth();
  return std::to_string(m.channels()) + "-channel " + (d >= 0 && d < 8 ? depth_names[d] : "unknown");
}

}  // namespace

void read_image_file(const fs::path& file, const std::string& what, std::vector<uint8_t>& bytes,
                     const InputLimits& limits) {
  std::error_code ec;
  DM_EXPECT(fs::exists(file, ec), InputError, what << " file '" << file.string() << "' does not exist");
  DM_EXPECT(!fs::is_directory(file, ec), InputError,
            what << " file '" << file.string() << "' is a folder, not an image");
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  DM_EXPECT(in, InputError, what << " file '" << file.string() << "' cannot be opened for reading");
  const std::streamoff n = in.tellg();
  DM_EXPECT(n > 0, InputError, what << " file '" << file.string() << "' is empty");
  DM_EXPECT(static_cast<uint64_t>(n) <= limits.max_file_bytes, InputError,
            what << " file '" << file.string() << "' is " << n << " bytes; expected at most " << limits.max_file_bytes
                 << " (input.max_file_bytes), so it is not read");
  bytes.resize(static_cast<size_t>(n));
  in.seekg(0);
  DM_EXPECT(in.read(reinterpret_cast<char*>(bytes.data()), n), InputError,
            what << " file '" << file.string() << "' could not be read completely");
  detail::check_image_size(bytes.data(), bytes.size(), limits.max_image_pixels, what, file.string());
}

void check_depth_type(const cv::Mat& m, const std::string& file) {
  DM_EXPECT(m.type() == CV_16UC1 || m.type() == CV_32FC1, InputError,
            "depth file '" << file << "' is " << type_name(m)
                           << "; expected single-channel 16-bit (raw units) or 32-bit float (metres)");
}

void check_mask_type(const cv::Mat& m, const std::string& file) {
  DM_EXPECT(
      m.channels() == 1, InputError,
      "mask file '" << file << "' has " << m.channels()
                    << " channels; expected a single-channel 8- or 16-bit mask (binary, labels or probabilities)");
  DM_EXPECT(m.type() == CV_8UC1 || m.type() == CV_16UC1, InputError,
            "mask file '" << file << "' is " << type_name(m) << "; expected single-channel 8- or 16-bit");
}

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
  p.threshold = 0;
  p.threshold_by_type = false;
  p.label_count = 0;
  p.invert = false;
  return p;
}

MaskParams mask_params(const Config& c, const FrameEntry& f) {
  MaskParams p = mask_params(c);
  if (f.depth_scale) set_depth_range(p, *f.depth_scale, c.depth.min, c.depth.max);
  return p;
}

// OpenCV allocates a decoded image through the Mat's allocator. This one returns the backend buffer
// when it is large enough, so the decoder writes straight into pinned/mapped memory. Decoding into an
// *empty* Mat (rather than a header on last frame's buffer) matters: when OpenCV finds no decoder or
// fails on a corrupt file it leaves the Mat empty, so stale pixels can never pass as a new frame.
class BufferMatAllocator final : public cv::MatAllocator {
 public:
  void set_target(void* p, size_t capacity) {
    target_ = p;
    capacity_ = capacity;
  }

  cv::UMatData* allocate(int dims, const int* sizes, int type, void* data0, size_t* step, cv::AccessFlag flags,
                         cv::UMatUsageFlags usage) const override {
    size_t total = CV_ELEM_SIZE(type);
    for (int i = dims - 1; i >= 0; --i) {
      if (step) step[i] = total;
      total *= static_cast<size_t>(sizes[i]);
    }
    if (data0 != nullptr || target_ == nullptr || total > capacity_)
      return cv::Mat::getDefaultAllocator()->allocate(dims, sizes, type, data0, step, flags, usage);
    auto* u = new cv::UMatData(this);
    u->data = u->origdata = static_cast<uchar*>(target_);
    u->size = total;
    return u;
  }
  bool allocate(cv::UMatData* u, cv::AccessFlag, cv::UMatUsageFlags) const override { return u != nullptr; }
  // The memory belongs to the backend buffer; only the bookkeeping is freed.
  void deallocate(cv::UMatData* u) const override { delete u; }

 private:
  void* target_ = nullptr;
  size_t capacity_ = 0;
};

FrameSlot::FrameSlot(MemoryBackend& backend)
    : backend_(&backend),
      stream_(backend.create_stream()),
      depth_alloc_(std::make_unique<BufferMatAllocator>()),
      mask_alloc_(std::make_unique<BufferMatAllocator>()) {}

FrameSlot::~FrameSlot() {
  try {  // queued work must not outlive the buffers it uses
    if (backend_->device_executes()) backend_->synchronize(stream());
  } catch (...) {
  }
  // Release Mats that may hold allocator bookkeeping before the allocators go.
  depth_.release();
  mask_.release();
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
  schedule_.reset();
  depth_buf_ = Buffer();
  mask_buf_ = Buffer();
  out_buf_ = Buffer();
  registered_buf_ = Buffer();
  color_buf_ = Buffer();
  key_buf_ = Buffer();
}

// A header of src's size and type on `buf` (grown when too small), with src copied in.
cv::Mat FrameSlot::adopt(const cv::Mat& src, Buffer& buf) {
  const size_t need = src.total() * src.elemSize();
  if (buf.size() < need) {
    buf = Buffer();  // free the old one first: peak memory stays one buffer
    buf = backend_->allocate(need);
  }
  cv::Mat hdr(src.rows, src.cols, src.type(), buf.host());
  src.copyTo(hdr);
  return hdr;
}

cv::Mat FrameSlot::decode_into(const std::string& what, const fs::path& file, Buffer& buf, BufferMatAllocator& alloc) {
  read_image_file(file, what, file_bytes_, limits_);
  // Indexed-colour PNG masks: palette indices are the labels, and OpenCV would expand them to BGR.
  if (what == "mask") {
    const auto png = detail::png_header(file_bytes_.data(), file_bytes_.size());
    if (png && png->color_type == detail::kPngColorPalette) {
      // check_image_size() above bounded the header's size (input.max_image_pixels).
      const size_t need = size_t{png->width} * png->height;
      if (buf.size() < need) {
        buf = Buffer();
        buf = backend_->allocate(need);
      }
      detail::decode_palette_png(file_bytes_.data(), file_bytes_.size(), *png, file.string(),
                                 static_cast<uint8_t*>(buf.host()), png->width);
      buf.host_written();
      return cv::Mat(static_cast<int>(png->height), static_cast<int>(png->width), CV_8UC1, buf.host());
    }
  }
  alloc.set_target(buf.host(), buf.size());
  detail::enable_exr_codec_for(file_bytes_.data(), file_bytes_.size());  // float depth in metres
  cv::Mat dst;
  dst.allocator = &alloc;
  try {
    cv::imdecode(cv::_InputArray(file_bytes_.data(), static_cast<int>(file_bytes_.size())), cv::IMREAD_UNCHANGED, &dst);
  } catch (const cv::Exception& e) {
    throw InputError(what + " file '" + file.string() + "' could not be decoded: " + e.msg);
  }
  DM_EXPECT(!dst.empty(), InputError,
            what << " file '" << file.string()
                 << "' could not be decoded: corrupt, truncated or not an image format OpenCV reads");
  // Formats whose header check_image_size() does not read are bounded here, after decoding.
  DM_EXPECT(dst.total() <= limits_.max_image_pixels, InputError,
            what << " file '" << file.string() << "' is " << dst.cols << "x" << dst.rows << " pixels; expected at most "
                 << limits_.max_image_pixels << " pixels (input.max_image_pixels)");
  if (what == "depth")
    check_depth_type(dst, file.string());
  else
    check_mask_type(dst, file.string());
  // A larger frame than the buffer holds was decoded into OpenCV's memory: grow the buffer, copy once.
  cv::Mat out = (dst.data == buf.host() && dst.isContinuous()) ? dst : adopt(dst, buf);
  buf.host_written();
  return out;
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
  depth_.release();
  mask_.release();
  cv::Mat depth = decode_into("depth", f.depth, depth_buf_, *depth_alloc_);
  cv::Mat mask = decode_into("mask", f.mask, mask_buf_, *mask_alloc_);
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
    read_image_file(f.color, "color", file_bytes_, limits_);
    cv::Mat c;
    detail::enable_exr_codec_for(file_bytes_.data(), file_bytes_.size());
    try {
      c = cv::imdecode(cv::_InputArray(file_bytes_.data(), static_cast<int>(file_bytes_.size())), cv::IMREAD_COLOR);
    } catch (const cv::Exception& e) {
      throw InputError("color file '" + f.color.string() + "' could not be decoded: " + e.msg);
    }
    DM_EXPECT(!c.empty(), InputError,
              "color file '" << f.color.string() << "' could not be decoded: corrupt, truncated or not an image");
    // The color image shares the mask's grid (the output's); depth may differ when it is registered.
    DM_EXPECT(c.size() == mask_.size(), InputError,
              "color file '" << f.color.string() << "' is " << c.cols << "x" << c.rows << " but mask file '"
                             << f.mask.string() << "' is " << mask_.cols << "x" << mask_.rows
                             << "; expected the same size");
    stage_color(c, "color file '" + f.color.string() + "'");
  }
}

void FrameSlot::load_depth(const FrameEntry& f, bool want_color) {
  depth_.release();
  mask_.release();
  depth_ = decode_into("depth", f.depth, depth_buf_, *depth_alloc_);
  load_color(f, want_color);
}

void FrameSlot::load_mask(const fs::path& mask_file, const fs::path& depth_file) {
  DM_EXPECT(!depth_.empty(), std::logic_error, "load_mask() without a loaded depth");
  mask_.release();
  cv::Mat mask = decode_into("mask", mask_file, mask_buf_, *mask_alloc_);
  mask_ = mask;
  try {
    check_pair(depth_file, mask_file);
  } catch (...) {
    mask_.release();
    throw;
  }
}

namespace {
template <class MaskT>
void or_tests(const cv::Mat& mask, const MaskParams& p, cv::Mat& acc) {
  for (int y = 0; y < mask.rows; ++y) {
    const MaskT* m = mask.ptr<MaskT>(y);
    uint8_t* a = acc.ptr<uint8_t>(y);
    for (int x = 0; x < mask.cols; ++x)
      if (mask_keeps(m[x], p)) a[x] = 255;
  }
}
}  // namespace

void FrameSlot::load_instance_union(const FrameEntry& f, const MaskParams& params) {
  DM_EXPECT(!depth_.empty(), std::logic_error, "load_instance_union() without a loaded depth");
  DM_EXPECT(!f.instances.empty(), std::logic_error, "load_instance_union() for a frame without instance masks");
  union_.create(depth_.size(), CV_8UC1);
  union_.setTo(0);
  for (const auto& instance : f.instances) {
    load_mask(instance.second, f.depth);  // decoded into the mask buffer, size checked
    if (mask_.type() == CV_8UC1)
      or_tests<uint8_t>(mask_, params, union_);
    else
      or_tests<uint16_t>(mask_, params, union_);
  }
  mask_.release();
  mask_ = adopt(union_, mask_buf_);
  mask_buf_.host_written();
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
    if (!color_key_) {
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
  });
}

}  // namespace depthmask
