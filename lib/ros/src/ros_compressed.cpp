// sensor_msgs/CompressedImage ↔ pixels: image_transport's "compressed" (PNG or JPEG as the format
// string names it) and "compressedDepth" (compressed_depth_image_transport: a 12-byte ConfigHeader of
// int32 format and float depthQuantA, depthQuantB, little-endian, then a 16-bit PNG or RVL image;
// 32FC1 is stored as quantised inverse depth q = A / depth + B, 0 meaning no depth). Image sizes are
// read from the PNG or JPEG header (base's detail/image_header.h, as for image files) or RVL's size
// words, and checked before a decoder allocates.
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include <opencv2/imgcodecs.hpp>

#include "depthmask/detail/image_header.h"
#include "depthmask/errors.h"
#include "depthmask/ros_image.h"
#include "ros_image_detail.h"

namespace depthmask::ros {
namespace {

constexpr size_t kConfigHeaderBytes = 12;  // int32 format, float depthQuantA, float depthQuantB
// compressed_depth_image_transport's defaults (depth_max 10 m, depth_quantization 100) and its rule
// for the coefficients: A = z0 (z0 + 1), B = 1 - A / depth_max.
constexpr float kDepthMax = 10.0f;
constexpr float kDepthQuantization = 100.0f;
constexpr float kQuantA = kDepthQuantization * (kDepthQuantization + 1.0f);
constexpr float kQuantB = 1.0f - kQuantA / kDepthMax;

uint32_t le32(const uint8_t* p) { return uint32_t{p[3]} << 24 | uint32_t{p[2]} << 16 | uint32_t{p[1]} << 8 | p[0]; }

cv::Mat decode_png_or_jpeg(const uint8_t* d, size_t n, int flags, size_t max_pixels, const std::string& what,
                           const std::string& format) {
  // The size its PNG (IHDR) or JPEG (first SOFn) header claims, checked before a decoder allocates.
  const auto size = detail::image_size(d, n);
  DM_EXPECT(size && (std::strcmp(size->format, "PNG") == 0 || std::strcmp(size->format, "JPEG") == 0), InputError,
            what << ": a CompressedImage of format '" << format << "' does not hold a PNG or JPEG image");
  detail::check_ros_pixels(size->width, size->height, max_pixels, what, "a compressed image");
  cv::Mat out;
  try {
    out = cv::imdecode(cv::Mat(1, static_cast<int>(n), CV_8UC1, const_cast<uint8_t*>(d)), flags);
  } catch (const cv::Exception& e) {
    throw InputError(what + ": its " + format + " image does not decode: " + e.what());
  }
  DM_EXPECT(!out.empty(), InputError, what << ": its " << format << " image does not decode (corrupt or truncated)");
  return out;
}

std::string trimmed(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

// "png", "jpeg", "bgr8; jpeg compressed bgr8", "rgb8; png compressed rgb8": image_transport's
// compressed plugin writes PNG or JPEG of standard colour, so OpenCV's decoders give BGR.
DecodedImage plain_to_pixels(const CompressedImage& m, const std::string& encoding, PixelRole role, size_t max_pixels,
                             const std::string& what) {
  const int flags = role == PixelRole::Color ? cv::IMREAD_COLOR : cv::IMREAD_UNCHANGED;
  const cv::Mat px = decode_png_or_jpeg(m.data.data(), m.data.size(), flags, max_pixels, what, m.format);
  std::string enc = encoding;
  if (enc.empty()) {  // the format names no encoding: the decoded pixels say it
    enc = px.type() == CV_16UC1 ? "16UC1" : px.type() == CV_8UC1 ? "mono8" : px.type() == CV_8UC3 ? "bgr8" : "";
  }
  const detail::RosEncoding& e = detail::expect_ros_encoding(enc, role, what, "a CompressedImage");
  const int want = role == PixelRole::Color ? CV_8UC3 : e.cv_type;
  DM_EXPECT(px.type() == want, InputError,
            what << ": the " << m.format << " image of a CompressedImage decodes to " << px.channels()
                 << " channel(s) of " << px.elemSize1() * 8 << " bits, not the " << enc << " its format names");
  DecodedImage out;
  out.pixels = px;
  out.encoding = enc;
  out.metres_per_unit = role == PixelRole::Depth ? e.metres_per_unit : 0;
  return out;
}

cv::Mat decode_rvl_payload(const uint8_t* d, size_t n, size_t max_pixels, const std::string& what) {
  DM_EXPECT(n >= 8, InputError, what << ": a compressedDepth rvl image ends before its width and height");
  const uint32_t cols = le32(d), rows = le32(d + 4);
  detail::check_ros_pixels(cols, rows, max_pixels, what, "a compressedDepth rvl image");
  DM_EXPECT(uint64_t{cols} * rows <= uint64_t{std::numeric_limits<int>::max()}, InputError,
            what << ": a compressedDepth rvl image of " << cols << "x" << rows << " pixels is too large");
  return rvl_decode(d + 8, n - 8, static_cast<int>(cols), static_cast<int>(rows), what);
}

// compressedDepth: "<encoding>; compressedDepth [png|rvl]" (no word after compressedDepth: png).
DecodedImage depth_to_pixels(const CompressedImage& m, const std::string& encoding, const std::string& codec,
                             PixelRole role, size_t max_pixels, const std::string& what) {
  const detail::RosEncoding& e = detail::expect_ros_encoding(encoding, role, what, "a compressedDepth image");
  DM_EXPECT(e.cv_type == CV_16UC1 || e.cv_type == CV_32FC1, InputError,
            what << ": compressedDepth holds 16UC1 or 32FC1 depth, not " << encoding);
  DM_EXPECT(codec == "png" || codec == "rvl", InputError,
            what << ": compressedDepth '" << codec << "' (format '" << m.format << "') is neither png nor rvl");
  DM_EXPECT(m.data.size() > kConfigHeaderBytes, InputError,
            what << ": a compressedDepth image of " << m.data.size() << " bytes ends inside its 12-byte header");
  float quant[2];
  std::memcpy(quant, m.data.data() + 4, sizeof quant);  // little-endian, as every machine ROS runs on
  const uint8_t* d = m.data.data() + kConfigHeaderBytes;
  const size_t n = m.data.size() - kConfigHeaderBytes;
  cv::Mat q = codec == "rvl" ? decode_rvl_payload(d, n, max_pixels, what)
                             : decode_png_or_jpeg(d, n, cv::IMREAD_UNCHANGED, max_pixels, what, m.format);
  DM_EXPECT(q.type() == CV_16UC1, InputError,
            what << ": a compressedDepth image holds " << q.channels() << " channel(s) of " << q.elemSize1() * 8
                 << " bits, not the 16-bit single channel of its format");
  DecodedImage out;
  out.encoding = encoding;
  out.metres_per_unit = role == PixelRole::Depth ? e.metres_per_unit : 0;
  if (e.cv_type == CV_16UC1) {
    out.pixels = q;
    return out;
  }
  out.pixels.create(q.rows, q.cols, CV_32FC1);
  for (int y = 0; y < q.rows; ++y) {
    const uint16_t* src = q.ptr<uint16_t>(y);
    float* dst = out.pixels.ptr<float>(y);
    for (int x = 0; x < q.cols; ++x) {
      dst[x] = src[x] == 0 ? std::numeric_limits<float>::quiet_NaN() : quant[0] / (float(src[x]) - quant[1]);
    }
  }
  return out;
}

}  // namespace

DecodedImage compressed_to_pixels(const CompressedImage& m, PixelRole role, size_t max_pixels,
                                  const std::string& what) {
  const size_t semi = m.format.find(';');
  const std::string encoding = semi == std::string::npos ? "" : trimmed(m.format.substr(0, semi));
  const size_t cd = m.format.find("compressedDepth");
  if (cd != std::string::npos) {
    const std::string codec = trimmed(m.format.substr(cd + std::string("compressedDepth").size()));
    return depth_to_pixels(m, encoding, codec.empty() ? "png" : codec, role, max_pixels, what);
  }
  std::string lower = m.format;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  DM_EXPECT(lower.find("png") != std::string::npos || lower.find("jpeg") != std::string::npos ||
                lower.find("jpg") != std::string::npos,
            InputError,
            what << ": a CompressedImage of format '" << m.format << "' is not png, jpeg or compressedDepth");
  return plain_to_pixels(m, encoding, role, max_pixels, what);
}

CompressedImage depth_to_compressed_depth(const cv::Mat& metres, const Header& header) {
  if (metres.type() != CV_32FC1) {
    throw Error(Failure::Internal,
                "compressedDepth is made of 32FC1 metres, not OpenCV type " + std::to_string(metres.type()));
  }
  // As the encoder of compressed_depth_image_transport: q = A / depth + B truncated to 16 bits, 0 for
  // what is no depth (NaN, 0, negative) or at least depth_max; depth closer than A / (65535 - B)
  // (0.15 m) saturates.
  cv::Mat q(metres.rows, metres.cols, CV_16UC1);
  for (int y = 0; y < metres.rows; ++y) {
    const float* src = metres.ptr<float>(y);
    uint16_t* dst = q.ptr<uint16_t>(y);
    for (int x = 0; x < metres.cols; ++x) {
      const float d = src[x];
      const float v = d > 0 && d < kDepthMax ? kQuantA / d + kQuantB : 0.0f;
      dst[x] = v >= 65535.0f ? uint16_t{65535} : static_cast<uint16_t>(v);
    }
  }
  std::vector<uint8_t> png;
  cv::imencode(".png", q, png);
  CompressedImage m;
  m.header = header;
  m.format = "32FC1; compressedDepth png";
  m.data.resize(kConfigHeaderBytes);
  const int32_t format = 0;  // compressionFormat INV_DEPTH
  const float quant[2] = {kQuantA, kQuantB};
  std::memcpy(m.data.data(), &format, 4);
  std::memcpy(m.data.data() + 4, quant, sizeof quant);
  m.data.insert(m.data.end(), png.begin(), png.end());
  return m;
}

}  // namespace depthmask::ros
