#include "depthmask/encoders.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <regex>

#include "depthmask/detail/exr_codec.h"
#include "depthmask/detail/png_codec.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/backproject.h"
#include "depthmask/reason.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

void append(std::vector<uint8_t>& out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}

}  // namespace

FileBytes npy_file(const cv::Mat& m) {
  DM_EXPECT(m.type() == CV_32FC1, std::invalid_argument, "encode_npy: expected CV_32FC1");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(m.rows) + ", " +
                       std::to_string(m.cols) + "), }";
  // magic(6) + version(2) + header length(2) + header + '\n', padded with spaces to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> head;
  const uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  head.insert(head.end(), magic, magic + 8);
  head.push_back(static_cast<uint8_t>(header.size() & 0xff));
  head.push_back(static_cast<uint8_t>(header.size() >> 8));
  head.insert(head.end(), header.begin(), header.end());
  FileBytes file(std::move(head));
  for (int y = 0; y < m.rows; ++y) file.add_view(m.ptr<uint8_t>(y), static_cast<size_t>(m.cols) * 4);
  return file;
}

std::vector<uint8_t> encode_npy(const cv::Mat& m) { return npy_file(m).flatten(); }

cv::Mat decode_npy(const std::vector<uint8_t>& b, const std::string& name) {
  DM_EXPECT(b.size() >= 10 && b[0] == 0x93 && std::memcmp(&b[1], "NUMPY", 5) == 0, InputError,
            "'" << name << "' is not a .npy file");
  DM_EXPECT(b[6] == 1, InputError, "'" << name << "': only .npy format 1.x is read");
  const size_t hlen = b[8] | (static_cast<size_t>(b[9]) << 8);
  DM_EXPECT(b.size() >= 10 + hlen, InputError, "'" << name << "': truncated .npy header");
  const std::string h(b.begin() + 10, b.begin() + 10 + static_cast<long>(hlen));
  DM_EXPECT(h.find("'descr': '<f4'") != std::string::npos && h.find("'fortran_order': False") != std::string::npos,
            InputError, "'" << name << "': expected little-endian float32 in C order, header " << h);
  int rows = 0, cols = 0;
  const auto s = h.find("'shape': (");
  DM_EXPECT(
      s != std::string::npos && std::sscanf(h.c_str() + s + 10, "%d, %d", &rows, &cols) == 2 && rows > 0 && cols > 0,
      InputError, "'" << name << "': expected a 2-D shape, header " << h);
  const size_t need = 10 + hlen + static_cast<size_t>(rows) * cols * 4;
  DM_EXPECT(b.size() == need, InputError, "'" << name << "': " << b.size() << " bytes, expected " << need);
  cv::Mat m(rows, cols, CV_32FC1);
  std::memcpy(m.data, b.data() + 10 + hlen, static_cast<size_t>(rows) * cols * 4);
  return m;
}

FileBytes tiff_file(const cv::Mat& m) {
  DM_EXPECT(m.type() == CV_32FC1, std::invalid_argument, "encode_tiff: expected CV_32FC1");
  DM_EXPECT(m.rows > 0 && m.cols > 0, std::invalid_argument, "encode_tiff: empty image");
  // Layout: header (8) | IFD (2 + 11 x 12 + 4) | strip offsets | strip byte counts | pixels.
  const uint64_t row_bytes = static_cast<uint64_t>(m.cols) * 4;
  const uint64_t rows_per_strip = std::clamp<uint64_t>(8192 / row_bytes, 1, static_cast<uint64_t>(m.rows));
  const uint64_t strips = (static_cast<uint64_t>(m.rows) + rows_per_strip - 1) / rows_per_strip;
  constexpr uint64_t kEntries = 11, kIfd = 2 + kEntries * 12 + 4;
  // One strip keeps its offset and count inside the IFD entries (values of 4 bytes or less).
  const uint64_t tables = strips > 1 ? 2 * strips * 4 : 0;
  const uint64_t offsets_at = 8 + kIfd, counts_at = offsets_at + strips * 4;
  const uint64_t pixels_at = (8 + kIfd + tables + 15) / 16 * 16;
  const uint64_t total = pixels_at + row_bytes * static_cast<uint64_t>(m.rows);
  DM_EXPECT(total <= 0xFFFFFFFFull, OutputError,
            "a " << m.cols << "x" << m.rows << " float32 TIFF needs " << total << " bytes, past classic TIFF's 4 GiB");
  std::vector<uint8_t> head(pixels_at, 0);
  auto put16 = [&](uint64_t at, uint32_t v) {
    head[at] = static_cast<uint8_t>(v), head[at + 1] = static_cast<uint8_t>(v >> 8);
  };
  auto put32 = [&](uint64_t at, uint64_t v) {
    for (int i = 0; i < 4; ++i) head[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  head[0] = 'I', head[1] = 'I';
  put16(2, 42);
  put32(4, 8);
  put16(8, kEntries);
  uint64_t e = 10;
  // Entries in ascending tag order; SHORT (3) and LONG (4) values of count 1 sit in the entry.
  auto entry = [&](uint32_t tag, uint32_t type, uint64_t count, uint64_t value) {
    put16(e, tag), put16(e + 2, type), put32(e + 4, count);
    if (type == 3 && count == 1)
      put16(e + 8, static_cast<uint32_t>(value));
    else
      put32(e + 8, value);
    e += 12;
  };
  entry(256, 4, 1, static_cast<uint64_t>(m.cols));             // ImageWidth
  entry(257, 4, 1, static_cast<uint64_t>(m.rows));             // ImageLength
  entry(258, 3, 1, 32);                                        // BitsPerSample
  entry(259, 3, 1, 1);                                         // Compression: none
  entry(262, 3, 1, 1);                                         // PhotometricInterpretation: BlackIsZero
  entry(273, 4, strips, strips > 1 ? offsets_at : pixels_at);  // StripOffsets
  entry(277, 3, 1, 1);                                         // SamplesPerPixel
  entry(278, 4, 1, rows_per_strip);                            // RowsPerStrip
  const uint64_t last_strip = (static_cast<uint64_t>(m.rows) - (strips - 1) * rows_per_strip) * row_bytes;
  entry(279, 4, strips, strips > 1 ? counts_at : last_strip);  // StripByteCounts
  entry(284, 3, 1, 1);                                         // PlanarConfiguration: contiguous
  entry(339, 3, 1, 3);                                         // SampleFormat: IEEE floating point
  put32(e, 0);                                                 // no next IFD
  if (strips > 1) {
    for (uint64_t s = 0; s < strips; ++s) {
      put32(offsets_at + 4 * s, pixels_at + s * rows_per_strip * row_bytes);
      put32(counts_at + 4 * s, s + 1 < strips ? rows_per_strip * row_bytes : last_strip);
    }
  }
  FileBytes file(std::move(head));
  // The floats as they lie in memory: x86-64 and aarch64 are little-endian, as the header says ("II").
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "tiff_file writes host floats as little-endian");
  for (int y = 0; y < m.rows; ++y) file.add_view(m.ptr<uint8_t>(y), row_bytes);
  return file;
}

std::vector<uint8_t> encode_tiff(const cv::Mat& m) { return tiff_file(m).flatten(); }

std::vector<uint8_t> encode_exr(const cv::Mat& m) {
  DM_EXPECT(m.type() == CV_32FC1, std::invalid_argument, "encode_exr: expected CV_32FC1");
  detail::enable_exr_codec();  // OpenCV builds that guard EXR guard writing it too
  std::vector<uint8_t> out;
  const std::vector<int> params{cv::IMWRITE_EXR_TYPE, cv::IMWRITE_EXR_TYPE_FLOAT};
  DM_EXPECT(cv::imencode(".exr", m, out, params), OutputError, "OpenCV could not encode a float32 EXR");
  return out;
}

cv::Mat depth_to_mm16(const cv::Mat& m, float invalid) {
  DM_EXPECT(m.type() == CV_32FC1, std::invalid_argument, "depth_to_mm16: expected CV_32FC1");
  cv::Mat mm(m.size(), CV_16UC1);
  for (int y = 0; y < m.rows; ++y) {
    const float* d = m.ptr<float>(y);
    uint16_t* o = mm.ptr<uint16_t>(y);
    for (int x = 0; x < m.cols; ++x) {
      if (!depth_kept(d[x], invalid)) {
        o[x] = 0;
        continue;
      }
      // In double: float(z) * 1000 in float could round a value just below a half-millimetre up.
      const double v = std::round(static_cast<double>(d[x]) * 1000.0);
      o[x] = v >= 65535.0 ? uint16_t{65535} : static_cast<uint16_t>(v);
    }
  }
  return mm;
}

std::vector<uint8_t> encode_png16_mm(const cv::Mat& m, float invalid) {
  // libdeflate and the Up filter (detail/png_codec.h): about 2x faster than cv::imencode at the same size
  // (depthmask_codec_bench). The millimetre conversion stays a pass of its own: it is not the cost.
  const cv::Mat mm = depth_to_mm16(m, invalid);
  return detail::encode_png_grey16(mm.ptr<uint16_t>(), mm.rows, mm.cols, mm.step);
}

size_t count_kept(const cv::Mat& m, float invalid) {
  DM_EXPECT(m.type() == CV_32FC1, std::invalid_argument, "count_kept: expected CV_32FC1");
  size_t n = 0;
  for (int y = 0; y < m.rows; ++y) {
    const float* d = m.ptr<float>(y);
    for (int x = 0; x < m.cols; ++x) n += depth_kept(d[x], invalid) ? 1u : 0u;
  }
  return n;
}

std::vector<uint8_t> encode_ply(const cv::Mat& xyz, const cv::Mat& color) {
  DM_EXPECT(xyz.type() == CV_32FC3, std::invalid_argument, "encode_ply: expected CV_32FC3 points");
  const bool rgb = !color.empty();
  DM_EXPECT(!rgb || (color.type() == CV_8UC3 && color.size() == xyz.size()), std::invalid_argument,
            "encode_ply: color must be CV_8UC3 of the points' size");
  size_t n = 0;
  for (int y = 0; y < xyz.rows; ++y) {
    const float* p = xyz.ptr<float>(y);
    for (int x = 0; x < xyz.cols; ++x) n += p[3 * x + 2] != 0.0f ? 1u : 0u;
  }
  std::string header =
      "ply\n"
      "format binary_little_endian 1.0\n"
      "comment depthmask: masked depth backprojected, metres, camera frame (x right, y down, z forward)\n"
      "element vertex " +
      std::to_string(n) +
      "\n"
      "property float x\n"
      "property float y\n"
      "property float z\n";
  if (rgb) header += "property uchar red\nproperty uchar green\nproperty uchar blue\n";
  header += "end_header\n";
  const size_t vertex_bytes = 3 * sizeof(float) + (rgb ? 3 : 0);
  std::vector<uint8_t> out;
  out.reserve(header.size() + n * vertex_bytes);
  append(out, header.data(), header.size());
  for (int y = 0; y < xyz.rows; ++y) {
    const float* p = xyz.ptr<float>(y);
    const uint8_t* c = rgb ? color.ptr<uint8_t>(y) : nullptr;
    for (size_t x = 0; x < static_cast<size_t>(xyz.cols); ++x) {
      if (p[3 * x + 2] == 0.0f) continue;
      append(out, p + 3 * x, 3 * sizeof(float));  // x86-64 and aarch64 are little-endian
      if (rgb) {
        const uint8_t bgr[3] = {c[3 * x + 2], c[3 * x + 1], c[3 * x]};
        append(out, bgr, 3);
      }
    }
  }
  return out;
}

cv::Mat reason_colors(const cv::Mat& reason) {
  CV_Assert(reason.type() == CV_8UC1);
  cv::Mat lut(1, 256, CV_8UC3, cv::Scalar(255, 255, 255));
  for (int code = 0; code < kDropReasonCount; ++code) {
    const ReasonStyle& s = kReasonStyles[static_cast<size_t>(code)];
    lut.at<cv::Vec3b>(0, code) = cv::Vec3b(s.b, s.g, s.r);
  }
  cv::Mat bgr;
  cv::cvtColor(reason, bgr, cv::COLOR_GRAY2BGR);
  cv::Mat out;
  cv::LUT(bgr, lut, out);
  return out;
}

cv::Mat make_preview(const cv::Mat& color, const cv::Mat& mask, const cv::Mat& depth, float invalid,
                     const cv::Mat& reason) {
  const cv::Size sz = depth.size();
  cv::Mat left;
  if (!color.empty() && color.size() == sz && color.type() == CV_8UC3)
    left = color.clone();
  else
    left = cv::Mat(sz, CV_8UC3, cv::Scalar(96, 96, 96));

  // Mask: non-zero white, zero black (labels and probabilities alike).
  cv::Mat m8;
  cv::compare(mask, 0, m8, cv::CMP_NE);
  cv::Mat middle;
  cv::cvtColor(m8, middle, cv::COLOR_GRAY2BGR);

  // Masked depth: valid pixels scaled over their own range through TURBO; invalid ones black.
  cv::Mat valid = (depth == depth);  // NaN fails
  if (!std::isnan(invalid)) valid &= (depth != invalid);
  double lo = 0, hi = 0;
  cv::Mat right(sz, CV_8UC3, cv::Scalar(0, 0, 0));
  if (cv::countNonZero(valid) > 0) {
    cv::minMaxLoc(depth, &lo, &hi, nullptr, nullptr, valid);
    cv::Mat d8;
    const double span = hi > lo ? hi - lo : 1.0;
    depth.convertTo(d8, CV_8UC1, 255.0 / span, -lo * 255.0 / span);
    cv::Mat colored;
    cv::applyColorMap(d8, colored, cv::COLORMAP_TURBO);
    colored.copyTo(right, valid);
  }
  std::vector<cv::Mat> panels{left, middle, right};
  if (!reason.empty() && reason.size() == sz) panels.push_back(reason_colors(reason));
  cv::Mat out;
  cv::hconcat(panels, out);
  return out;
}

fs::path output_path(const fs::path& dir, const std::string& id, const std::string& kind_ext) {
  return dir / (id + "." + kind_ext);
}

fs::path output_stem(const OutputConfig& out, const FrameEntry& f, const fs::path& input_root) {
  if (out.layout == OutputLayout::Flat) return out.dir / f.id;
  const fs::path rel = (f.relative.empty() ? f.depth.lexically_relative(input_root) : f.relative).lexically_normal();
  bool escapes = rel.empty() || rel.is_absolute() || !rel.has_filename();
  for (const auto& part : rel) escapes = escapes || part == "..";
  DM_EXPECT(!escapes, ConfigError,
            "output.layout mirror: depth file '" << f.depth.string() << "' is not under input.root '"
                                                 << input_root.string() << "', so its folders cannot be mirrored");
  return out.dir / rel.parent_path() / rel.stem();
}

fs::path with_ext(const fs::path& stem, const std::string& ext) {
  fs::path p = stem;
  p += "." + ext;
  return p;
}

}  // namespace depthmask
