#include "depthmask/image_reader.h"

#include <opencv2/imgcodecs.hpp>

#include <cmath>
#include <exception>
#include <fstream>
#include <type_traits>

#include "depthmask/detail/enum_names.h"
#include "depthmask/detail/exr_codec.h"
#include "depthmask/detail/image_header.h"
#include "depthmask/detail/png_codec.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/mask_rule.h"
#include "png_palette.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

std::string type_name(int type) {
  const char* depth_names[] = {"8-bit unsigned", "8-bit signed", "16-bit unsigned", "16-bit signed",
                               "32-bit signed",  "32-bit float", "64-bit float",    "16-bit float"};
  const int d = CV_MAT_DEPTH(type);
  return std::to_string(CV_MAT_CN(type)) + "-channel " + (d >= 0 && d < 8 ? depth_names[d] : "unknown");
}

void check_type(int type, ImageRole role, const std::string& file) {
  if (role == ImageRole::Depth)
    DM_EXPECT(type == CV_16UC1 || type == CV_32FC1, InputError,
              "depth file '" << file << "' is " << type_name(type)
                             << "; expected single-channel 16-bit (raw units) or 32-bit float (metres)");
  if (role == ImageRole::Mask) {
    DM_EXPECT(CV_MAT_CN(type) == 1, InputError,
              "mask file '" << file << "' has " << CV_MAT_CN(type)
                            << " channels; expected a single-channel 8- or 16-bit mask (binary, labels or "
                               "probabilities)");
    DM_EXPECT(type == CV_8UC1 || type == CV_16UC1, InputError,
              "mask file '" << file << "' is " << type_name(type) << "; expected single-channel 8- or 16-bit");
  }
}

// Equal as depth values: NaN (no measurement in float depth) equals NaN.
template <class T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a == b || (std::isnan(a) && std::isnan(b));
  return a == b;
}

// Three-channel depth (as OpenCV decodes it: B, G, R) into `out`, its one channel, when every pixel's
// channels are equal; InputError naming the file and the first pixel that differs otherwise.
template <class T>
void collapse_equal_channels(const cv::Mat& src, cv::Mat& out, const std::string& file) {
  for (int y = 0; y < src.rows; ++y) {
    const T* s = src.ptr<T>(y);
    T* o = out.ptr<T>(y);
    for (int x = 0; x < src.cols; ++x, s += 3) {
      const auto v = [](T t) { return +t; };  // 16-bit values print as numbers
      DM_EXPECT(same_value(s[0], s[1]) && same_value(s[0], s[2]), InputError,
                "depth file '" << file << "' is " << type_name(src.type()) << " whose channels differ at pixel (x " << x
                               << ", y " << y << "): R " << v(s[2]) << ", G " << v(s[1]) << ", B " << v(s[0])
                               << "; expected single-channel 16-bit (raw units) or 32-bit float (metres) depth, or "
                                  "three equal channels (read as the one)");
      o[x] = s[0];
    }
  }
}

// 16-bit or float depth stored in three channels: read as its one channel (when they are equal).
bool collapsible_depth(const cv::Mat& m, ImageRole role) {
  return role == ImageRole::Depth && m.channels() == 3 && (m.depth() == CV_16U || m.depth() == CV_32F);
}

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

constexpr detail::EnumName<ImageRole> kImageRoles[] = {
    {ImageRole::Depth, "depth"}, {ImageRole::Mask, "mask"}, {ImageRole::Color, "color"}};
constexpr detail::EnumName<Decoder> kDecoders[] = {{Decoder::None, "none"},
                                                   {Decoder::FastPng, "fast-png"},
                                                   {Decoder::PalettePng, "palette-png"},
                                                   {Decoder::OpenCV, "opencv"}};

// The words are string literals, so their data() ends with a NUL.
const char* to_string(ImageRole role) { return detail::name_of(kImageRoles, role, "image").data(); }
const char* to_string(Decoder d) { return detail::name_of(kDecoders, d, "unknown").data(); }

// Memory for a decoded image: continuous, of the shape and type asked for.
class ImageReader::Target {
 public:
  virtual ~Target() = default;
  virtual cv::Mat reserve(int rows, int cols, int type) = 0;
  virtual void written() {}
};

namespace {

// A backend buffer, grown when too small (the old one freed first: peak memory stays one buffer).
class BufferTarget final : public ImageReader::Target {
 public:
  BufferTarget(MemoryBackend& backend, Buffer& buf) : backend_(backend), buf_(buf) {}
  cv::Mat reserve(int rows, int cols, int type) override {
    const size_t need = size_t(rows) * size_t(cols) * CV_ELEM_SIZE(type);
    if (buf_.size() < need) {
      buf_ = Buffer();
      buf_ = backend_.allocate(need);
    }
    return cv::Mat(rows, cols, type, buf_.host());
  }
  void written() override { buf_.host_written(); }

 private:
  MemoryBackend& backend_;
  Buffer& buf_;
};

// A cv::Mat, reused when nobody else holds its memory (a caller may keep the previous frame's image).
class MatTarget final : public ImageReader::Target {
 public:
  explicit MatTarget(cv::Mat& m) : m_(m) {}
  cv::Mat reserve(int rows, int cols, int type) override {
    if (m_.u != nullptr && m_.u->refcount > 1) m_.release();
    m_.create(rows, cols, type);
    return m_;
  }

 private:
  cv::Mat& m_;
};

// OpenCV allocates a decoded image through the Mat's allocator. This one hands out the target's memory,
// so the decoder writes straight into pinned/mapped memory. Decoding into an *empty* Mat matters: when
// OpenCV finds no decoder or fails on a corrupt file it leaves the Mat empty, so stale pixels can never
// pass as a new frame. Anything but a 2-D single image goes to OpenCV's own allocator (the caller then
// copies once). A 3-channel image goes to `channels` when given (the reader's reused scratch for depth
// stored in three channels: the target only ever holds the one channel it becomes).
class TargetMatAllocator final : public cv::MatAllocator {
 public:
  explicit TargetMatAllocator(ImageReader::Target& t, cv::Mat* channels = nullptr) : target_(t), channels_(channels) {}
  cv::UMatData* allocate(int dims, const int* sizes, int type, void* data0, size_t* step, cv::AccessFlag flags,
                         cv::UMatUsageFlags usage) const override {
    if (data0 != nullptr || dims != 2 || used_)
      return cv::Mat::getDefaultAllocator()->allocate(dims, sizes, type, data0, step, flags, usage);
    used_ = true;
    try {
      if (channels_ != nullptr && CV_MAT_CN(type) == 3) {
        channels_->create(sizes[0], sizes[1], type);
        held_ = *channels_;
      } else {
        held_ = target_.reserve(sizes[0], sizes[1], type);
      }
    } catch (...) {
      // An exception inside a decoder may be swallowed (OpenCV's decoders catch and return an empty
      // image; 4.6 allocates before its try block, not every version does): keep the target's error
      // (out of memory, the memory limit) for the caller, and let OpenCV use its own memory meanwhile.
      failure_ = std::current_exception();
      return cv::Mat::getDefaultAllocator()->allocate(dims, sizes, type, data0, step, flags, usage);
    }
    if (step) {
      step[1] = CV_ELEM_SIZE(type);
      step[0] = step[1] * static_cast<size_t>(sizes[1]);
    }
    auto* u = new cv::UMatData(this);
    u->data = u->origdata = held_.data;
    u->size = held_.total() * held_.elemSize();
    return u;
  }
  bool allocate(cv::UMatData* u, cv::AccessFlag, cv::UMatUsageFlags) const override { return u != nullptr; }
  // The memory belongs to the target; only the bookkeeping is freed.
  void deallocate(cv::UMatData* u) const override { delete u; }
  // The target's memory handed to OpenCV (empty when OpenCV never asked).
  const cv::Mat& held() const { return held_; }
  // What the target threw when OpenCV asked for memory (null: nothing).
  const std::exception_ptr& failure() const { return failure_; }

 private:
  ImageReader::Target& target_;
  cv::Mat* channels_;
  mutable cv::Mat held_;  // keeps a MatTarget's memory alive while OpenCV writes into it
  mutable bool used_ = false;
  mutable std::exception_ptr failure_;
};

}  // namespace

ImageReader::ImageReader(const InputLimits& limits)
    : limits_(limits), png_(std::make_unique<detail::PngFastReader>()) {}
ImageReader::~ImageReader() = default;

cv::Mat ImageReader::decode(const fs::path& file, ImageRole role, Target& target) {
  const char* what = to_string(role);
  last_stored_channels_ = 0;
  read_image_file(file, what, bytes_, limits_);
  const uint8_t* data = bytes_.data();
  const size_t size = bytes_.size();
  if (role != ImageRole::Color) {
    // Greyscale 8/16-bit PNG: the fast reader, when it accepts every chunk of the file.
    if (const auto info = png_->inspect(data, size)) {
      const int type = info->bit_depth == 16 ? CV_16UC1 : CV_8UC1;
      check_type(type, role, file.string());
      cv::Mat out = target.reserve(static_cast<int>(info->height), static_cast<int>(info->width), type);
      if (png_->decode(data, size, *info, out.data, out.step[0])) {
        target.written();
        last_decoder_ = Decoder::FastPng;
        last_stored_channels_ = 1;
        return out;
      }
      // Not accepted after all (the zlib stream): libpng decides, below.
    }
    // Indexed-colour PNG masks: palette indices are the labels, and OpenCV would expand them to BGR.
    if (role == ImageRole::Mask) {
      const auto png = detail::png_header(data, size);
      if (png && png->color_type == detail::kPngColorPalette) {
        // read_image_file() bounded the header's size (input.max_image_pixels).
        cv::Mat out = target.reserve(static_cast<int>(png->height), static_cast<int>(png->width), CV_8UC1);
        detail::decode_palette_png(data, size, *png, file.string(), out.data, out.step[0]);
        target.written();
        last_decoder_ = Decoder::PalettePng;
        last_stored_channels_ = 1;
        return out;
      }
    }
  }
  detail::enable_exr_codec_for(data, size);  // float depth in metres
  TargetMatAllocator alloc(target, role == ImageRole::Depth ? &channels_ : nullptr);
  cv::Mat dst;
  dst.allocator = &alloc;
  try {
    cv::imdecode(cv::_InputArray(data, static_cast<int>(size)),
                 role == ImageRole::Color ? cv::IMREAD_COLOR : cv::IMREAD_UNCHANGED, &dst);
  } catch (const cv::Exception& e) {
    if (alloc.failure()) std::rethrow_exception(alloc.failure());
    throw InputError(std::string(what) + " file '" + file.string() + "' could not be decoded: " + e.msg);
  }
  if (alloc.failure()) std::rethrow_exception(alloc.failure());
  DM_EXPECT(!dst.empty(), InputError,
            what << " file '" << file.string()
                 << "' could not be decoded: corrupt, truncated or not an image format OpenCV reads");
  // Formats whose header check_image_size() does not read are bounded here, after decoding.
  DM_EXPECT(dst.total() <= limits_.max_image_pixels, InputError,
            what << " file '" << file.string() << "' is " << dst.cols << "x" << dst.rows << " pixels; expected at most "
                 << limits_.max_image_pixels << " pixels (input.max_image_pixels)");
  if (collapsible_depth(dst, role)) {
    cv::Mat out = target.reserve(dst.rows, dst.cols, CV_MAKETYPE(dst.depth(), 1));
    if (dst.depth() == CV_16U)
      collapse_equal_channels<uint16_t>(dst, out, file.string());
    else
      collapse_equal_channels<float>(dst, out, file.string());
    target.written();
    last_decoder_ = Decoder::OpenCV;
    last_stored_channels_ = 3;
    return out;
  }
  check_type(dst.type(), role, file.string());
  cv::Mat out = alloc.held();  // the target's memory, without the allocator about to go out of scope
  if (out.empty() || dst.data != out.data || dst.size() != out.size() || dst.type() != out.type() ||
      !dst.isContinuous()) {
    // OpenCV decoded into memory of its own (a conversion, an odd layout): copy once into the target.
    out = target.reserve(dst.rows, dst.cols, dst.type());
    dst.copyTo(out);
  }
  target.written();
  last_decoder_ = Decoder::OpenCV;
  last_stored_channels_ = out.channels();
  return out;
}

cv::Mat ImageReader::read(const fs::path& file, ImageRole role, MemoryBackend& backend, Buffer& buf) {
  BufferTarget t(backend, buf);
  return decode(file, role, t);
}

cv::Mat ImageReader::read(const fs::path& file, ImageRole role, cv::Mat& dst) {
  MatTarget t(dst);
  return decode(file, role, t);
}

cv::Mat ImageReader::unite(const Instances& instances, const MaskParams& params, Target& target) {
  DM_EXPECT(!instances.empty(), std::logic_error, "read_instance_union() without instance masks");
  cv::Mat acc;
  for (size_t i = 0; i < instances.size(); ++i) {
    const fs::path& file = instances[i].second;
    const cv::Mat m = read(file, ImageRole::Mask, instance_);
    if (i == 0) {
      acc = target.reserve(m.rows, m.cols, CV_8UC1);
      acc.setTo(0);
    }
    DM_EXPECT(m.size() == acc.size(), InputError,
              "mask file '" << file.string() << "' is " << m.cols << "x" << m.rows << " but mask file '"
                            << instances.front().second.string() << "' of the same frame is " << acc.cols << "x"
                            << acc.rows << "; expected every instance mask of a frame to have the same size");
    or_mask_tests(m, params, acc);
  }
  target.written();
  return acc;
}

void or_mask_tests(const cv::Mat& mask, const MaskParams& params, cv::Mat& acc) {
  if (mask.type() == CV_8UC1)
    or_tests<uint8_t>(mask, params, acc);
  else
    or_tests<uint16_t>(mask, params, acc);
}

cv::Mat ImageReader::read_instance_union(const Instances& instances, const MaskParams& params, MemoryBackend& backend,
                                         Buffer& buf) {
  BufferTarget t(backend, buf);
  return unite(instances, params, t);
}

cv::Mat ImageReader::read_instance_union(const Instances& instances, const MaskParams& params, cv::Mat& dst) {
  MatTarget t(dst);
  return unite(instances, params, t);
}

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

std::string three_channel_depth_note(const fs::path& file) {
  return "depth file '" + file.string() +
         "' stores depth in three equal channels: read as its one channel, as every such depth file of this run "
         "(logged once)";
}

void check_depth_type(const cv::Mat& m, const std::string& file) { check_type(m.type(), ImageRole::Depth, file); }
void check_mask_type(const cv::Mat& m, const std::string& file) { check_type(m.type(), ImageRole::Mask, file); }

}  // namespace depthmask
