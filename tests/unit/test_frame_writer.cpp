// Unit tests of the outputs issue 3 adds, each read back and compared: float32 EXR (bit-exact through
// cv::imread), the 16-bit millimetre PNG, the PLY point cloud (parsed by a small reader here: header,
// vertex count, hand-checked coordinates, colours), the JSON sidecar (nlohmann::json), the mirror
// layout's paths, the resume manifest's format and hashes, and the clean-up of a killed run's
// temporary files. All on the cpu backend; tests/gpu/test_backproject_parity.cpp holds the GPU side.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/kernels/backproject.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/manifest.h"
#include "depthmask/platform.h"
#include "test_support.h"

using dmtest::Contains;
using dmtest::message_of;
using dmtest::SameBits;
using dmtest::TempDir;

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::unique_ptr<dm::MemoryBackend> cpu_backend() {
  return dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
}

std::string text_of(const fs::path& p) {
  const auto b = dmtest::read_bytes(p);
  return std::string(b.begin(), b.end());
}

// ---------------------------------------------------------------------------------------------------
// A small PLY reader: what a consumer (Open3D, numpy) needs from our files, strictly checked.

struct Ply {
  std::string format;
  std::vector<std::string> comments;
  size_t vertices = 0;
  std::vector<std::string> properties;  // "float x", "uchar red", ...
  std::vector<float> xyz;               // 3 per vertex
  std::vector<uint8_t> rgb;             // 3 per vertex when the colour properties are present
  std::string error;
};

Ply read_ply(const std::vector<uint8_t>& bytes) {
  Ply p;
  size_t pos = 0;
  auto line = [&]() -> std::string {
    const auto nl = std::find(bytes.begin() + static_cast<long>(pos), bytes.end(), '\n');
    if (nl == bytes.end()) return "\x01<eof>";
    std::string l(bytes.begin() + static_cast<long>(pos), nl);
    pos = static_cast<size_t>(nl - bytes.begin()) + 1;
    return l;
  };
  if (line() != "ply") return p.error = "no 'ply' magic line", p;
  bool have_vertex = false;
  for (;;) {
    const std::string l = line();
    if (l == "\x01<eof>") return p.error = "no end_header", p;
    if (l == "end_header") break;
    if (l.rfind("format ", 0) == 0)
      p.format = l.substr(7);
    else if (l.rfind("comment ", 0) == 0)
      p.comments.push_back(l.substr(8));
    else if (l.rfind("element vertex ", 0) == 0)
      p.vertices = std::stoul(l.substr(15)), have_vertex = true;
    else if (l.rfind("property ", 0) == 0)
      p.properties.push_back(l.substr(9));
    else
      return p.error = "unexpected header line '" + l + "'", p;
  }
  if (!have_vertex) return p.error = "no vertex element", p;
  const std::vector<std::string> xyz{"float x", "float y", "float z"};
  const std::vector<std::string> xyzrgb{"float x", "float y", "float z", "uchar red", "uchar green", "uchar blue"};
  const bool rgb = p.properties == xyzrgb;
  if (!rgb && p.properties != xyz) return p.error = "unexpected properties", p;
  const size_t stride = rgb ? 15 : 12;
  if (bytes.size() - pos != p.vertices * stride)
    return p.error = "body is " + std::to_string(bytes.size() - pos) + " bytes, expected " +
                     std::to_string(p.vertices * stride),
           p;
  for (size_t i = 0; i < p.vertices; ++i) {
    float v[3];
    std::memcpy(v, bytes.data() + pos + i * stride, 12);
    p.xyz.insert(p.xyz.end(), v, v + 3);
    if (rgb)
      p.rgb.insert(p.rgb.end(), bytes.begin() + static_cast<long>(pos + i * stride + 12),
                   bytes.begin() + static_cast<long>(pos + i * stride + 15));
  }
  return p;
}

// ---------------------------------------------------------------------------------------------------
// A 5x4 frame of float depth (metres) with hand-checked points. Intrinsics fx = fy = 512, cx = 2,
// cy = 1: 1/512 and -cx/fx are exact in float, so x = (u - 2) / 512 * z is exact for these depths.
//
//   pixel (u, v)  depth   mask  kept  point (x, y, z)                     colour (r, g, b)
//   (0, 0)        2.0     1     yes   (-0.0078125, -0.00390625, 2.0)      (10, 20, 30)
//   (2, 1)        0.75    1     yes   (0, 0, 0.75)                        (40, 50, 60)
//   (4, 3)        1.5     1     yes   (0.005859375, 0.005859375, 1.5)     (70, 80, 90)
//   (1, 2)        1.0     0     no    (mask 0)
//   (3, 0)        12.0    1     no    (beyond depth.max 10 m)
//   (3, 3)        NaN     1     no    (no measurement)
//   every other pixel has depth 0: no measurement.
struct HandFrame {
  cv::Mat depth = cv::Mat(4, 5, CV_32FC1, cv::Scalar(0));
  cv::Mat mask = cv::Mat(4, 5, CV_8UC1, cv::Scalar(0));
  cv::Mat color = cv::Mat(4, 5, CV_8UC3, cv::Scalar(200, 200, 200));
  HandFrame() {
    auto px = [&](int u, int v, float z, uint8_t m, cv::Vec3b rgb) {
      depth.at<float>(v, u) = z;
      mask.at<uint8_t>(v, u) = m;
      color.at<cv::Vec3b>(v, u) = cv::Vec3b(rgb[2], rgb[1], rgb[0]);  // stored BGR
    };
    px(0, 0, 2.0f, 1, {10, 20, 30});
    px(2, 1, 0.75f, 1, {40, 50, 60});
    px(4, 3, 1.5f, 1, {70, 80, 90});
    px(1, 2, 1.0f, 0, {1, 2, 3});
    px(3, 0, 12.0f, 1, {4, 5, 6});
    px(3, 3, kNaN, 1, {7, 8, 9});
  }
};

dm::Intrinsics hand_intrinsics() {
  dm::Intrinsics k;
  k.fx = k.fy = 512;
  k.cx = 2;
  k.cy = 1;
  k.width = 5;
  k.height = 4;
  return k;
}

// A configuration writing into `dir`, with the hand frame's intrinsics.
dm::Config config_for(const fs::path& dir, std::vector<dm::OutputFormat> formats) {
  dm::Config c;
  c.input.root = dir / "in";
  c.input.intrinsics = hand_intrinsics();
  c.output.dir = dir / "out";
  c.output.formats = std::move(formats);
  fs::create_directories(c.output.dir);
  return c;
}

dm::FrameEntry entry_for(const fs::path& dir, const std::string& id) {
  dm::FrameEntry f;
  f.id = id;
  f.depth = dir / "in" / "depth" / (id + ".exr");
  f.mask = dir / "in" / "mask" / (id + ".png");
  f.color = dir / "in" / "color" / (id + ".png");
  f.relative = fs::path("depth") / (id + ".exr");
  return f;
}

// ---------------------------------------------------------------------------------------------------
// EXR

TEST(Exr, ReadsBackBitIdenticalFloat32) {
  dmtest::enable_opencv_exr();
  TempDir tmp;
  cv::Mat m(31, 33, CV_32FC1);
  const float specials[] = {
      0.0f, -0.0f, -1.0f, 1e-30f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
      kInf, 0.001f};
  for (int i = 0; i < m.rows * m.cols; ++i)
    m.at<float>(i) = (i % 7 == 0) ? specials[(i / 7) % 8] : 0.25f + 0.001f * static_cast<float>(i);
  const auto bytes = dm::encode_exr(m);
  dm::write_file_atomic(tmp / "a.exr", bytes.data(), bytes.size(), false);
  const cv::Mat back = cv::imread((tmp / "a.exr").string(), cv::IMREAD_UNCHANGED);
  ASSERT_FALSE(back.empty()) << "OpenCV could not read the EXR back";
  EXPECT_EQ(back.type(), CV_32FC1) << "float32, not half";
  EXPECT_TRUE(SameBits(m, back));
}

TEST(Exr, NanStaysNan) {
  dmtest::enable_opencv_exr();
  cv::Mat m(2, 3, CV_32FC1, cv::Scalar(kNaN));
  m.at<float>(0, 1) = 1.25f;
  const auto bytes = dm::encode_exr(m);
  const cv::Mat back = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
  ASSERT_EQ(back.type(), CV_32FC1);
  EXPECT_EQ(back.at<float>(0, 1), 1.25f);
  EXPECT_TRUE(std::isnan(back.at<float>(0, 0)));
  EXPECT_TRUE(std::isnan(back.at<float>(1, 2)));
}

TEST(Exr, SameImageSameBytes) {
  const cv::Mat m(48, 64, CV_32FC1, cv::Scalar(1.5f));
  EXPECT_EQ(dm::encode_exr(m), dm::encode_exr(m)) << "a redone frame must give the same bytes (resume)";
}

// ---------------------------------------------------------------------------------------------------
// 16-bit millimetre PNG

TEST(Png16, MillimetresRoundedToNearestInvalidIsZeroLargeIsClamped) {
  const float in[] = {1.0f, 1.2344f, 1.2346f, 0.0005f, 0.0004f, 0.0f, -1.0f, kNaN, kInf, 65.535f, 70.0f, 5.0f};
  const uint16_t want_invalid0[] = {1000, 1234, 1235, 1, 0, 0, 0, 0, 0, 65535, 65535, 5000};
  // With output.invalid 5.0 the 5.0 pixel is an invalid one (and -1 a negative, never kept).
  const uint16_t want_invalid5[] = {1000, 1234, 1235, 1, 0, 0, 0, 0, 0, 65535, 65535, 0};
  const cv::Mat m(1, 12, CV_32FC1, const_cast<float*>(in));
  const cv::Mat a = dm::depth_to_mm16(m, 0.0f), b = dm::depth_to_mm16(m, 5.0f), n = dm::depth_to_mm16(m, kNaN);
  ASSERT_EQ(a.type(), CV_16UC1);
  for (int i = 0; i < 12; ++i) {
    SCOPED_TRACE("value " + std::to_string(in[i]));
    EXPECT_EQ(a.at<uint16_t>(0, i), want_invalid0[i]);
    EXPECT_EQ(b.at<uint16_t>(0, i), want_invalid5[i]);
    EXPECT_EQ(n.at<uint16_t>(0, i), want_invalid0[i]);
  }
}

TEST(Png16, FileReadsBackAsSixteenBitMillimetres) {
  TempDir tmp;
  cv::Mat m(3, 4, CV_32FC1, cv::Scalar(-1.0f));
  m.at<float>(0, 0) = 0.5f;
  m.at<float>(1, 2) = 2.0015f;  // the float is 2.00149989...: 2001.4999 mm, rounds down
  m.at<float>(2, 3) = 9.9999f;
  const auto bytes = dm::encode_png16_mm(m, -1.0f);
  dm::write_file_atomic(tmp / "a.mm.png", bytes.data(), bytes.size(), false);
  const cv::Mat back = cv::imread((tmp / "a.mm.png").string(), cv::IMREAD_UNCHANGED);
  ASSERT_EQ(back.type(), CV_16UC1);
  ASSERT_EQ(back.size(), m.size());
  EXPECT_EQ(back.at<uint16_t>(0, 0), 500);
  EXPECT_EQ(back.at<uint16_t>(1, 2), 2001);
  EXPECT_EQ(back.at<uint16_t>(2, 3), 10000);
  EXPECT_EQ(cv::countNonZero(back), 3) << "the -1 (invalid) pixels are 0";
}

// ---------------------------------------------------------------------------------------------------
// Backprojection and PLY

TEST(Backproject, RuleOnHandCheckedPixels) {
  const dm::Pinhole k = dm::make_pinhole(512, 512, 2, 1);
  float p[3];
  dm::backproject_pixel(4, 3, 1.5f, 0.0f, k, p);
  EXPECT_EQ(p[0], 0.005859375f);
  EXPECT_EQ(p[1], 0.005859375f);
  EXPECT_EQ(p[2], 1.5f);
  dm::backproject_pixel(0, 0, 2.0f, 0.0f, k, p);
  EXPECT_EQ(p[0], -0.0078125f);
  EXPECT_EQ(p[1], -0.00390625f);
  dm::backproject_pixel(1, 1, -1.0f, -1.0f, k, p);
  EXPECT_EQ(p[2], 0.0f) << "the invalid value is no point";
  dm::backproject_pixel(1, 1, 5.0f, 5.0f, k, p);
  EXPECT_EQ(p[2], 0.0f) << "a positive invalid value is no point either";
  dm::backproject_pixel(1, 1, kNaN, kNaN, k, p);
  EXPECT_EQ(p[2], 0.0f);
  // Ordinary intrinsics: within float rounding of the textbook formula.
  const dm::Pinhole r = dm::make_pinhole(525.0, 523.5, 319.5, 239.5);
  dm::backproject_pixel(600, 17, 1.234f, 0.0f, r, p);
  EXPECT_NEAR(p[0], (600 - 319.5) / 525.0 * 1.234f, 1e-6);
  EXPECT_NEAR(p[1], (17 - 239.5) / 523.5 * 1.234f, 1e-6);
}

TEST(Backproject, CpuLoopEqualsTheRulePixelByPixel) {
  cv::Mat depth(33, 31, CV_32FC1);
  for (int i = 0; i < depth.rows * depth.cols; ++i)
    depth.at<float>(i) = (i % 5 == 0) ? 0.0f : 0.3f + 0.01f * static_cast<float>(i);
  cv::Mat xyz(depth.size(), CV_32FC3, cv::Scalar(7, 7, 7));
  dm::BackprojectJob job;
  job.depth = {depth.ptr<float>(), depth.step[0]};
  job.xyz = {xyz.ptr<float>(), xyz.step[0]};
  job.rows = depth.rows, job.cols = depth.cols;
  job.k = dm::make_pinhole(300.5, 301.25, 15.3, 16.7);
  dm::backproject_cpu(job);
  for (int v = 0; v < depth.rows; ++v)
    for (int u = 0; u < depth.cols; ++u) {
      float want[3];
      dm::backproject_pixel(u, v, depth.at<float>(v, u), 0.0f, job.k, want);
      ASSERT_EQ(std::memcmp(want, xyz.ptr<float>(v) + 3 * u, sizeof want), 0) << u << "," << v;
    }
}

TEST(Backproject, JobValidation) {
  dm::BackprojectJob job;
  job.rows = 2, job.cols = 2;
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::backproject_cpu(job); }), "null"));
  job.k.inv_fx = kNaN;
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::backproject_cpu(job); }), "intrinsics"));
  float d[4] = {}, x[12] = {};
  job.k = dm::make_pinhole(1, 1, 0, 0);
  job.depth = {d, 8}, job.xyz = {x, 12};  // a row of 2 points needs 24 bytes
  EXPECT_TRUE(Contains(message_of<std::invalid_argument>([&] { dm::backproject_cpu(job); }), "shorter"));
  job.rows = 0;
  EXPECT_NO_THROW(dm::backproject_cpu(job));
  if (!dm::have_cuda_kernels()) {
    EXPECT_TRUE(Contains(message_of<dm::PlatformError>([&] { dm::launch_backproject(job, nullptr); }), "without CUDA"));
  }
}

TEST(Ply, HandCheckedFrameWithColors) {
  TempDir tmp;
  const HandFrame h;
  auto be = cpu_backend();
  dm::FrameSlot slot(*be);
  slot.set(h.depth, h.mask, h.color);
  const dm::Config c = config_for(tmp.path(), {dm::OutputFormat::Ply});
  slot.run_mask(dm::mask_params(c));
  dm::FrameWriter w(c, *be);
  EXPECT_TRUE(w.wants_color());
  const auto files = w.write(entry_for(tmp.path(), "000007"), slot);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].name, "000007.ply");
  const auto bytes = dmtest::read_bytes(c.output.dir / "000007.ply");
  EXPECT_EQ(files[0].size, bytes.size());
  EXPECT_EQ(files[0].crc32, dm::crc32_of(bytes.data(), bytes.size()));
  const Ply p = read_ply(bytes);
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.format, "binary_little_endian 1.0");
  ASSERT_EQ(p.vertices, 3u) << "the kept pixels";
  // Row-major pixel order: (0,0), (2,1), (4,3).
  const std::vector<float> xyz{-0.0078125f, -0.00390625f, 2.0f, 0.0f, 0.0f, 0.75f, 0.005859375f, 0.005859375f, 1.5f};
  ASSERT_EQ(p.xyz.size(), xyz.size());
  for (size_t i = 0; i < xyz.size(); ++i) EXPECT_EQ(p.xyz[i], xyz[i]) << "coordinate " << i;
  EXPECT_EQ(p.rgb, (std::vector<uint8_t>{10, 20, 30, 40, 50, 60, 70, 80, 90})) << "red green blue, not BGR";
}

TEST(Ply, WithoutColorHasNoColorProperties) {
  TempDir tmp;
  const HandFrame h;
  auto be = cpu_backend();
  dm::FrameSlot slot(*be);
  slot.set(h.depth, h.mask);
  dm::Config c = config_for(tmp.path(), {dm::OutputFormat::Ply});
  c.output.invalid = kNaN;
  slot.run_mask(dm::mask_params(c));
  dm::FrameWriter w(c, *be);
  w.write(entry_for(tmp.path(), "1"), slot);
  const Ply p = read_ply(dmtest::read_bytes(c.output.dir / "1.ply"));
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.properties, (std::vector<std::string>{"float x", "float y", "float z"}));
  ASSERT_EQ(p.vertices, 3u) << "NaN as the invalid value changes nothing";
  EXPECT_EQ(p.xyz[8], 1.5f);
}

TEST(Ply, NoKeptPixelsGivesAnEmptyButValidCloud) {
  const cv::Mat xyz(4, 5, CV_32FC3, cv::Scalar(0, 0, 0));
  const Ply p = read_ply(dm::encode_ply(xyz));
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.vertices, 0u);
}

TEST(Ply, MissingOrMismatchedIntrinsicsFailTheFrameClearly) {
  TempDir tmp;
  const HandFrame h;
  auto be = cpu_backend();
  dm::FrameSlot slot(*be);
  slot.set(h.depth, h.mask);
  dm::Config c = config_for(tmp.path(), {dm::OutputFormat::Tiff, dm::OutputFormat::Ply});
  c.input.intrinsics.reset();
  slot.run_mask(dm::mask_params(c));
  {
    dm::FrameWriter w(c, *be);
    const std::string msg = message_of<dm::InputError>([&] { w.write(entry_for(tmp.path(), "a"), slot); });
    EXPECT_TRUE(Contains(msg, "ply"));
    EXPECT_TRUE(Contains(msg, "input.intrinsics"));
    EXPECT_FALSE(fs::exists(c.output.dir / "a.tiff")) << "a frame that cannot be encoded writes nothing";
  }
  dm::Intrinsics k = hand_intrinsics();
  k.width = 640;
  k.height = 480;
  c.input.intrinsics = k;
  {
    dm::FrameWriter w(c, *be);
    const std::string msg = message_of<dm::InputError>([&] { w.write(entry_for(tmp.path(), "a"), slot); });
    EXPECT_TRUE(Contains(msg, "640x480"));
    EXPECT_TRUE(Contains(msg, "5x4"));
  }
  // The frame's own intrinsics (BOP cam_K) win over the dataset's.
  dm::FrameEntry f = entry_for(tmp.path(), "b");
  f.intrinsics = hand_intrinsics();
  dm::FrameWriter w(c, *be);
  EXPECT_NO_THROW(w.write(f, slot));
  EXPECT_EQ(read_ply(dmtest::read_bytes(c.output.dir / "b.ply")).vertices, 3u);
}

// ---------------------------------------------------------------------------------------------------
// Every format at once, and the JSON sidecar

TEST(FrameWriter, AllFormatsReadBackAndTheSidecarDescribesThem) {
  dmtest::enable_opencv_exr();
  TempDir tmp;
  const HandFrame h;
  auto be = cpu_backend();
  dm::FrameSlot slot(*be);
  slot.set(h.depth, h.mask, h.color);
  dm::Config c = config_for(tmp.path(), {dm::OutputFormat::Json, dm::OutputFormat::Tiff, dm::OutputFormat::Npy,
                                         dm::OutputFormat::Exr, dm::OutputFormat::Png16, dm::OutputFormat::Ply});
  c.output.invalid = -1.0f;
  c.output.preview = true;
  slot.run_mask(dm::mask_params(c));
  dm::FrameWriter w(c, *be);
  const dm::FrameEntry f = entry_for(tmp.path(), "000042");
  const auto files = w.write(f, slot);
  std::vector<std::string> names;
  for (const auto& o : files) names.push_back(o.name);
  EXPECT_EQ(names, (std::vector<std::string>{"000042.tiff", "000042.npy", "000042.exr", "000042.mm.png", "000042.ply",
                                             "000042.preview.png", "000042.json"}))
      << "configured order, preview, the sidecar last";
  for (const auto& o : files) {
    const auto b = dmtest::read_bytes(c.output.dir / o.name);
    EXPECT_EQ(o.size, b.size()) << o.name;
    EXPECT_EQ(o.crc32, dm::crc32_of(b.data(), b.size())) << o.name;
  }
  const fs::path d = c.output.dir;
  const cv::Mat out = slot.out();
  EXPECT_TRUE(SameBits(cv::imread((d / "000042.tiff").string(), cv::IMREAD_UNCHANGED), out));
  EXPECT_TRUE(SameBits(dm::decode_npy(dmtest::read_bytes(d / "000042.npy"), "npy"), out));
  EXPECT_TRUE(SameBits(cv::imread((d / "000042.exr").string(), cv::IMREAD_UNCHANGED), out));
  const cv::Mat mm = cv::imread((d / "000042.mm.png").string(), cv::IMREAD_UNCHANGED);
  ASSERT_EQ(mm.type(), CV_16UC1);
  EXPECT_EQ(mm.at<uint16_t>(0, 0), 2000);
  EXPECT_EQ(mm.at<uint16_t>(1, 2), 750);
  EXPECT_EQ(mm.at<uint16_t>(3, 4), 1500);
  EXPECT_EQ(cv::countNonZero(mm), 3);
  EXPECT_EQ(read_ply(dmtest::read_bytes(d / "000042.ply")).vertices, 3u);

  const nlohmann::json j = nlohmann::json::parse(text_of(d / "000042.json"));
  EXPECT_EQ(j["id"], "000042");
  EXPECT_EQ(j["units"], "metres");
  EXPECT_EQ(j["depth_scale"].get<double>(), 0.001);
  EXPECT_EQ(j["depth_input"], "float32 metres");
  EXPECT_EQ(j["depth_range"]["min"].get<double>(), 0.0);
  EXPECT_EQ(j["depth_range"]["max"].get<double>(), 10.0);
  EXPECT_EQ(j["invalid_value"].get<double>(), -1.0);
  EXPECT_EQ(j["intrinsics"]["fx"].get<double>(), 512.0);
  EXPECT_EQ(j["intrinsics"]["cx"].get<double>(), 2.0);
  EXPECT_EQ(j["intrinsics"]["width"].get<int>(), 5);
  EXPECT_EQ(j["source"]["depth"], f.depth.string());
  EXPECT_EQ(j["source"]["mask"], f.mask.string());
  EXPECT_EQ(j["source"]["color"], f.color.string());
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["width"].get<int>(), 5);
  EXPECT_EQ(j["height"].get<int>(), 4);
  EXPECT_EQ(j["kept_pixels"].get<int>(), 3);
  EXPECT_EQ(j["outputs"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"000042.tiff", "000042.npy", "000042.exr", "000042.mm.png", "000042.ply",
                                      "000042.preview.png"}));
  EXPECT_EQ(dm::count_kept(out, -1.0f), 3u);
}

TEST(Sidecar, NanInvalidNoIntrinsicsNoColor) {
  dm::SidecarInfo s;
  s.id = "x";
  s.invalid = kNaN;
  s.depth_file = "/d/x.png";
  s.mask_file = "/m/x.png";
  const nlohmann::json j = nlohmann::json::parse(dm::encode_sidecar(s));
  EXPECT_EQ(j["invalid_value"], "nan") << "JSON has no NaN";
  EXPECT_TRUE(j["intrinsics"].is_null());
  EXPECT_TRUE(j["source"]["color"].is_null());
  EXPECT_EQ(j["depth_input"], "uint16 raw units (metres = raw * depth_scale)");
}

TEST(FrameWriter, RefusesToOverwriteAnInput) {
  TempDir tmp;
  const HandFrame h;
  auto be = cpu_backend();
  dm::FrameSlot slot(*be);
  slot.set(h.depth, h.mask);
  dm::Config c = config_for(tmp.path(), {dm::OutputFormat::Tiff});
  dm::FrameEntry f = entry_for(tmp.path(), "5");
  f.depth = c.output.dir / "5.tiff";  // a float TIFF input in the output folder
  dmtest::write_text(f.depth, "the input");
  slot.run_mask(dm::mask_params(c));
  dm::FrameWriter w(c, *be);
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>([&] { w.write(f, slot); }), "would overwrite an input"));
  EXPECT_EQ(text_of(f.depth), "the input");
}

// ---------------------------------------------------------------------------------------------------
// Output layout

TEST(OutputLayout, FlatUsesTheIdMirrorTheInputsFoldersAndNames) {
  dm::OutputConfig o;
  o.dir = "/out";
  dm::FrameEntry f;
  f.id = "000003";
  f.depth = "/data/seq1/depth/frame-000003.depth.png";
  f.relative = "seq1/depth/frame-000003.depth.png";
  EXPECT_EQ(dm::output_stem(o, f, "/data"), fs::path("/out/000003"));
  EXPECT_EQ(dm::with_ext(dm::output_stem(o, f, "/data"), "mm.png"), fs::path("/out/000003.mm.png"));
  o.layout = dm::OutputLayout::Mirror;
  EXPECT_EQ(dm::output_stem(o, f, "/data"), fs::path("/out/seq1/depth/frame-000003.depth"));
  EXPECT_EQ(dm::with_ext(dm::output_stem(o, f, "/data"), "tiff"), fs::path("/out/seq1/depth/frame-000003.depth.tiff"));
  // Without `relative` (a layout that does not fill it): the depth file relative to input.root.
  f.relative.clear();
  EXPECT_EQ(dm::output_stem(o, f, "/data"), fs::path("/out/seq1/depth/frame-000003.depth"));
  EXPECT_EQ(dm::output_stem(o, f, "/data/seq1"), fs::path("/out/depth/frame-000003.depth"));
  // A depth file outside input.root cannot be mirrored into the output folder.
  const std::string msg = message_of<dm::ConfigError>([&] { dm::output_stem(o, f, "/elsewhere"); });
  EXPECT_TRUE(Contains(msg, "not under input.root"));
  EXPECT_TRUE(Contains(msg, f.depth.string()));
}

TEST(OutputLayout, MirrorWritesIntoCreatedFolders) {
  TempDir tmp;
  const HandFrame h;
  auto be = cpu_backend();
  dm::FrameSlot slot(*be);
  slot.set(h.depth, h.mask);
  dm::Config c = config_for(tmp.path(), {dm::OutputFormat::Tiff, dm::OutputFormat::Json});
  c.output.layout = dm::OutputLayout::Mirror;
  dm::FrameEntry f = entry_for(tmp.path(), "000003");
  f.relative = fs::path("scene-1") / "depth" / "frame-000003.depth.png";
  slot.run_mask(dm::mask_params(c));
  dm::FrameWriter w(c, *be);
  const auto files = w.write(f, slot);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].name, "scene-1/depth/frame-000003.depth.tiff");
  EXPECT_EQ(files[1].name, "scene-1/depth/frame-000003.depth.json");
  EXPECT_TRUE(fs::is_regular_file(c.output.dir / "scene-1" / "depth" / "frame-000003.depth.tiff"));
  const nlohmann::json j =
      nlohmann::json::parse(text_of(c.output.dir / "scene-1" / "depth" / "frame-000003.depth.json"));
  EXPECT_EQ(j["outputs"].get<std::vector<std::string>>(), (std::vector<std::string>{"frame-000003.depth.tiff"}));
}

// ---------------------------------------------------------------------------------------------------
// Manifest and resume bookkeeping

TEST(Manifest, RoundTripsAndIsSortedAndStable) {
  dm::Manifest m;
  m.head.settings = "0123456789abcdef";
  m.frames["seq/10.png"] = {"10", "aa", {{"10.tiff", 12, 0xffffffffu}, {"sub/10.json", 0, 0}}, std::nullopt};
  m.frames["seq/02.png"] = {"02", "bb", {{"02.tiff", 7, 42}}, std::nullopt};
  const std::string text = m.to_json();
  EXPECT_LT(text.find("\"seq/02.png\""), text.find("\"seq/10.png\""));
  const dm::Manifest back = dm::Manifest::parse(text, "m.json");
  EXPECT_EQ(back.head.settings, m.head.settings);
  ASSERT_EQ(back.frames.size(), 2u);
  EXPECT_EQ(back.frames.at("seq/10.png").id, "10");
  EXPECT_EQ(back.frames.at("seq/10.png").inputs, "aa");
  EXPECT_EQ(back.frames.at("seq/10.png").files[0].crc32, 0xffffffffu);
  EXPECT_EQ(back.frames.at("seq/10.png").files[1].name, "sub/10.json");
  EXPECT_EQ(back.to_json(), text);
  EXPECT_NO_THROW(nlohmann::json::parse(text));
}

TEST(Manifest, SavesAreSpacedByTenTimesTheirCostAndAtLeastASecond) {
  using std::chrono::milliseconds;
  EXPECT_EQ(dm::manifest_save_interval(milliseconds(0)), std::chrono::seconds(1));
  EXPECT_EQ(dm::manifest_save_interval(milliseconds(99)), std::chrono::seconds(1));
  EXPECT_EQ(dm::manifest_save_interval(milliseconds(100)), std::chrono::seconds(1));
  EXPECT_EQ(dm::manifest_save_interval(milliseconds(250)), milliseconds(2500));  // a large manifest
}

TEST(Manifest, RejectsWhatIsNotOneOfOurs) {
  const std::vector<std::string> bad{
      "",
      "garbage",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":{",  // truncated
      "[]",
      "{\"format\":\"other\",\"version\":1,\"settings\":\"x\",\"frames\":{}}",
      "{\"format\":\"depthmask-manifest\",\"version\":3,\"settings\":\"x\",\"frames\":{}}",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"frames\":{}}",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":[]}",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":{\"1\":{\"inputs\":\"a\"}}}",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":{\"1\":{\"id\":\"1\",\"inputs\":"
      "\"a\","
      "\"outputs\":[{\"file\":\"1.tiff\",\"size\":-3,\"crc32\":1}]}}}",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":{\"1\":{\"id\":\"1\",\"inputs\":"
      "\"a\","
      "\"outputs\":[{\"file\":\"1.tiff\",\"size\":3,\"crc32\":4294967296}]}}}",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":{\"1\":{\"id\":\"1\",\"inputs\":"
      "\"a\","
      "\"outputs\":[{\"file\":\"../../etc/passwd\",\"size\":3,\"crc32\":1}]}}}",
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":{\"1\":{\"id\":\"1\",\"inputs\":"
      "\"a\","
      "\"outputs\":[{\"file\":\"/etc/passwd\",\"size\":3,\"crc32\":1}]}}}",
  };
  for (const auto& t : bad) {
    SCOPED_TRACE(t);
    const std::string msg = message_of<dm::InputError>([&] { dm::Manifest::parse(t, "/o/depthmask-manifest.json"); });
    EXPECT_TRUE(Contains(msg, "/o/depthmask-manifest.json"));
  }
  // A record without output files is a frame whose only output is the bag (output.format [mcap]).
  const dm::Manifest bag_only = dm::Manifest::parse(
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"x\",\"frames\":{\"1\":{\"id\":\"1\","
      "\"inputs\":\"a\",\"outputs\":[]}}}",
      "/o/depthmask-manifest.json");
  ASSERT_EQ(bag_only.frames.size(), 1u);
  EXPECT_TRUE(bag_only.frames.at("1").files.empty());
}

TEST(Manifest, SettingsHashFollowsOutputShapingSettingsOnly) {
  TempDir tmp;
  dm::Config c;
  const std::string h = dm::settings_hash(c);
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(dm::settings_hash(c), h) << "deterministic";
  auto differs = [&](auto change) {
    dm::Config d = c;
    change(d);
    return dm::settings_hash(d) != h;
  };
  EXPECT_TRUE(differs([](dm::Config& d) { d.depth.max = 2.0; }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.depth.scale = 0.0001; }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.mask.labels = {3}; }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.output.invalid = kNaN; }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.output.formats.push_back(dm::OutputFormat::Json); }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.output.preview = true; }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.output.layout = dm::OutputLayout::Mirror; }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.input.mask = "segm/{id}.png"; }));
  EXPECT_TRUE(differs([](dm::Config& d) { d.input.intrinsics = hand_intrinsics(); }));
  EXPECT_FALSE(differs([&](dm::Config& d) { d.output.dir = tmp / "elsewhere"; }));
  EXPECT_FALSE(differs([](dm::Config& d) { d.output.fsync = true; }));
  EXPECT_FALSE(differs([](dm::Config& d) { d.backend.kind = dm::BackendKind::Copy; }));
  EXPECT_FALSE(differs([](dm::Config& d) { d.run.force = true; }));
  EXPECT_FALSE(differs([](dm::Config& d) { d.run.on_error = dm::OnError::Stop; }));
  EXPECT_FALSE(differs([](dm::Config& d) { d.logging.level = "debug"; }));
  EXPECT_FALSE(differs([](dm::Config& d) {
    d.live.source = "replay:///data/seq";
    d.live.overflow = dm::Overflow::Block;
    d.live.buffers = 8;
    d.live.output_every = 5;
    d.live.publish = "tcp://127.0.0.1:5555";
  }));
  // Intrinsics from a file count by value: the same file name with other numbers is another setting.
  dm::Config a = c, b = c;
  a.input.intrinsics_file = b.input.intrinsics_file = tmp / "k.yaml";
  a.input.intrinsics = hand_intrinsics();
  b.input.intrinsics = hand_intrinsics();
  b.input.intrinsics->fx = 500;
  EXPECT_NE(dm::settings_hash(a), dm::settings_hash(b));
}

TEST(Manifest, InputsFingerprintFollowsTheFrameFiles) {
  TempDir tmp;
  dmtest::write_text(tmp / "d.png", "depth");
  dmtest::write_text(tmp / "m.png", "mask");
  dm::FrameEntry f;
  f.id = "1";
  f.depth = tmp / "d.png";
  f.mask = tmp / "m.png";
  const std::string fp = dm::inputs_fingerprint(f);
  EXPECT_EQ(dm::inputs_fingerprint(f), fp);
  dmtest::write_text(tmp / "m.png", "mask, recomputed");
  EXPECT_NE(dm::inputs_fingerprint(f), fp) << "a changed mask redoes the frame";
  const std::string fp2 = dm::inputs_fingerprint(f);
  f.color = tmp / "c.png";
  EXPECT_NE(dm::inputs_fingerprint(f), fp2);
  f.color.clear();
  f.depth_scale = 0.0002;
  EXPECT_NE(dm::inputs_fingerprint(f), fp2);
}

TEST(Crc32, KnownValue) {
  const char* s = "123456789";
  EXPECT_EQ(dm::crc32_of(s, 9), 0xCBF43926u) << "the CRC-32 check value";
  EXPECT_EQ(dm::crc32_of(s + 4, 5, dm::crc32_of(s, 4)), 0xCBF43926u) << "incremental";
}

// ---------------------------------------------------------------------------------------------------
// A killed run's temporary files

pid_t dead_pid() {
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  int status = 0;
  ::waitpid(p, &status, 0);
  return p;
}

TEST(StaleTempFiles, RemovesOnlyThoseOfProcessesThatAreGone) {
  TempDir tmp;
  const std::string dead = std::to_string(dead_pid()), alive = std::to_string(::getpid());
  fs::create_directories(tmp / "sub");
  const std::vector<std::string> stale{".000001.tiff.tmp-" + dead + "-0", "sub/.frame.depth.json.tmp-" + dead + "-17",
                                       ".depthmask-manifest.json.tmp-" + dead + "-3", ".depthmask-write-test-" + dead};
  const std::vector<std::string> kept{".000002.tiff.tmp-" + alive + "-1", ".hidden", "000001.tiff", ".x.tmp-abc-1",
                                      "sub/.depthmask-write-test-" + alive};
  for (const auto& n : stale) dmtest::write_text(tmp / n, "x");
  for (const auto& n : kept) dmtest::write_text(tmp / n, "x");
  EXPECT_EQ(dm::remove_stale_temp_files(tmp.path()), stale.size());
  for (const auto& n : stale) EXPECT_FALSE(fs::exists(tmp / n)) << n;
  for (const auto& n : kept) EXPECT_TRUE(fs::exists(tmp / n)) << n;
  EXPECT_EQ(dm::remove_stale_temp_files(tmp / "missing"), 0u);
}

}  // namespace
