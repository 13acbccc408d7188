#include "depthmask/frame.h"

#include <opencv2/imgcodecs.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/mask_kernel.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

std::string type_name(const cv::Mat& m) {
  const char* depth_names[] = {"8-bit unsigned", "8-bit signed", "16-bit unsigned", "16-bit signed",
                               "32-bit signed", "32-bit float", "64-bit float", "16-bit float"};
  const int d = m.depth();
  return std::to_string(m.channels()) + "-channel " + (d >= 0 && d < 8 ? depth_names[d] : "unknown");
}

// OpenCV reads EXR only when this is set before the first EXR decode (a guard against untrusted
// EXR files in OpenCV >= 4.5.2). depthmask reads float depth from EXR by design.
const bool kExrEnabled = [] {
  ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0);
  return true;
}();

void read_file(const fs::path& file, const std::string& what, std::vector<uint8_t>& bytes) {
  std::error_code ec;
  DM_EXPECT(fs::exists(file, ec), InputError, what << " file '" << file.string() << "' does not exist");
  DM_EXPECT(!fs::is_directory(file, ec), InputError, what << " file '" << file.string() << "' is a folder, not an image");
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  DM_EXPECT(in, InputError, what << " file '" << file.string() << "' cannot be opened for reading");
  const std::streamoff n = in.tellg();
  DM_EXPECT(n > 0, InputError, what << " file '" << file.string() << "' is empty");
  bytes.resize(static_cast<size_t>(n));
  in.seekg(0);
  DM_EXPECT(in.read(reinterpret_cast<char*>(bytes.data()), n), InputError,
            what << " file '" << file.string() << "' could not be read completely");
}

}  // namespace

void check_depth_type(const cv::Mat& m, const std::string& file) {
  DM_EXPECT(m.type() == CV_16UC1 || m.type() == CV_32FC1, InputError,
            "depth file '" << file << "' is " << type_name(m)
                           << "; expected single-channel 16-bit (raw units) or 32-bit float (metres)");
}

void check_mask_type(const cv::Mat& m, const std::string& file) {
  DM_EXPECT(m.channels() == 1, InputError,
            "mask file '" << file << "' has " << m.channels()
                          << " channels; expected a single-channel 8- or 16-bit mask (binary, labels or probabilities)");
  DM_EXPECT(m.type() == CV_8UC1 || m.type() == CV_16UC1, InputError,
            "mask file '" << file << "' is " << type_name(m) << "; expected single-channel 8- or 16-bit");
}

MaskParams mask_params(const Config& c) {
  MaskParams p;
  p.scale = static_cast<float>(c.depth.scale);
  p.min_m = static_cast<float>(c.depth.min);
  p.max_m = static_cast<float>(c.depth.max);
  p.invalid = c.output.invalid;
  p.threshold = c.mask.threshold;
  p.invert = c.mask.invert;
  DM_EXPECT(c.mask.labels.size() <= static_cast<size_t>(kMaxLabels), ConfigError,
            "config key 'mask.labels': at most " << kMaxLabels << " labels are supported");
  p.label_count = static_cast<int32_t>(c.mask.labels.size());
  for (size_t i = 0; i < c.mask.labels.size(); ++i) p.labels[i] = c.mask.labels[i];
  return p;
}

// Makes `hdr` a header of src's size and type on `buf` (growing buf when too small) and copies src in.
void FrameSlot::adopt(const cv::Mat& src, Buffer& buf, cv::Mat& hdr) {
  const size_t need = src.total() * src.elemSize();
  if (buf.size() < need) {
    hdr.release();
    buf = Buffer();  // free the old one first: peak memory stays one buffer
    buf = backend_->allocate(need);
  }
  hdr = cv::Mat(src.rows, src.cols, src.type(), buf.host());
  src.copyTo(hdr);
}

void FrameSlot::decode_into(const std::string& what, const fs::path& file, Buffer& buf, cv::Mat& hdr) {
  read_file(file, what, file_bytes_);
  // Decode straight into the backend's buffer: imdecode keeps dst's memory when size and type
  // match; otherwise it allocates a new Mat (and on a corrupt file releases dst) — so the data
  // pointer is checked after every decode, and a shape change costs one copy.
  cv::Mat dst = hdr;
  try {
    cv::imdecode(cv::_InputArray(file_bytes_.data(), static_cast<int>(file_bytes_.size())), cv::IMREAD_UNCHANGED, &dst);
  } catch (const cv::Exception& e) {
    throw InputError(what + " file '" + file.string() + "' could not be decoded: " + e.msg);
  }
  DM_EXPECT(!dst.empty(), InputError,
            what << " file '" << file.string() << "' could not be decoded: corrupt, truncated or not an image format OpenCV reads");
  if (what == "depth") check_depth_type(dst, file.string());
  else check_mask_type(dst, file.string());
  if (dst.data != buf.host() || !dst.isContinuous()) adopt(dst, buf, hdr);
  else hdr = dst;
  buf.host_written();
}

void FrameSlot::check_pair(const fs::path& depth_file, const fs::path& mask_file) const {
  DM_EXPECT(depth_.size() == mask_.size(), InputError,
            "depth file '" << depth_file.string() << "' is " << depth_.cols << "x" << depth_.rows << " but mask file '"
                           << mask_file.string() << "' is " << mask_.cols << "x" << mask_.rows
                           << "; expected the same size");
}

void FrameSlot::load(const FrameEntry& f, bool want_color) {
  depth_ = cv::Mat();
  mask_ = cv::Mat();
  decode_into("depth", f.depth, depth_buf_, depth_hdr_);
  depth_ = depth_hdr_;
  decode_into("mask", f.mask, mask_buf_, mask_hdr_);
  mask_ = mask_hdr_;
  check_pair(f.depth, f.mask);
  color_ = cv::Mat();
  if (want_color && !f.color.empty()) {
    read_file(f.color, "color", file_bytes_);
    cv::Mat c;
    try {
      c = cv::imdecode(cv::_InputArray(file_bytes_.data(), static_cast<int>(file_bytes_.size())), cv::IMREAD_COLOR);
    } catch (const cv::Exception& e) {
      throw InputError("color file '" + f.color.string() + "' could not be decoded: " + e.msg);
    }
    DM_EXPECT(!c.empty(), InputError, "color file '" << f.color.string() << "' could not be decoded: corrupt, truncated or not an image");
    DM_EXPECT(c.size() == depth_.size(), InputError,
              "color file '" << f.color.string() << "' is " << c.cols << "x" << c.rows << " but depth file '"
                             << f.depth.string() << "' is " << depth_.cols << "x" << depth_.rows << "; expected the same size");
    color_ = c;
  }
}

void FrameSlot::set(const cv::Mat& depth, const cv::Mat& mask, const cv::Mat& color) {
  check_depth_type(depth, "<memory>");
  check_mask_type(mask, "<memory>");
  adopt(depth, depth_buf_, depth_hdr_);
  depth_ = depth_hdr_;
  depth_buf_.host_written();
  adopt(mask, mask_buf_, mask_hdr_);
  mask_ = mask_hdr_;
  mask_buf_.host_written();
  check_pair("<memory>", "<memory>");
  color_ = color;
}

void FrameSlot::run_mask(const MaskParams& params) {
  DM_EXPECT(!depth_.empty() && !mask_.empty(), std::logic_error, "run_mask() before load()");
  const size_t out_bytes = depth_.total() * sizeof(float);
  if (out_buf_.size() < out_bytes) {
    out_ = cv::Mat();
    out_buf_ = Buffer();
    out_buf_ = backend_->allocate(out_bytes);
  }
  out_ = cv::Mat(depth_.rows, depth_.cols, CV_32FC1, out_buf_.host());

  MaskJob job;
  job.depth_type = depth_.type() == CV_16UC1 ? DepthType::U16 : DepthType::F32;
  job.mask_type = mask_.type() == CV_8UC1 ? MaskType::U8 : MaskType::U16;
  job.depth_step = depth_.step[0];
  job.mask_step = mask_.step[0];
  job.out_step = out_.step[0];
  job.rows = depth_.rows;
  job.cols = depth_.cols;
  if (backend_->device_executes()) {
    depth_buf_.to_device();
    mask_buf_.to_device();
    job.depth = depth_buf_.device();
    job.mask = mask_buf_.device();
    job.out = static_cast<float*>(out_buf_.device());
    launch_mask(job, params, backend_->stream());
    out_buf_.device_written();
    out_buf_.to_host();
    backend_->synchronize();
  } else {
    job.depth = depth_buf_.host();
    job.mask = mask_buf_.host();
    job.out = static_cast<float*>(out_buf_.host());
    mask_cpu(job, params);
    out_buf_.host_written();
  }
}

}  // namespace depthmask
