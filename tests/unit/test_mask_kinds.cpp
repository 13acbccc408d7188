// Depth encodings and mask kinds, hand-checked: the APC encoding and invalid raw values in the rule,
// scale presets through the configuration, exact threshold_fraction thresholds for 8- and 16-bit
// masks, indexed (palette) PNG masks read as indices, per-instance masks (union and one output per
// instance), erode, and the unit sanity check. Real APC data when present.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_rule.h"
#include "depthmask/pipeline.h"
#include "depthmask/unit_check.h"
#include "png_support.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::Contains;
using dmtest::message_of;
using dmtest::TempDir;

namespace {

// The APC writer's side: rotate left by 3 bits on 16 bits.
uint16_t apc_encode(uint16_t v) { return static_cast<uint16_t>(((uint32_t{v} << 3) | (uint32_t{v} >> 13)) & 0xFFFFu); }

std::unique_ptr<dm::MemoryBackend> cpu_backend() {
  return dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
}

dm::Config config_with(const std::vector<std::string>& sets) {
  std::vector<dm::Override> o;
  for (const auto& s : sets) o.push_back(dm::parse_override(s));
  return dm::load_config(std::nullopt, o);
}

cv::Mat run_cpu(const cv::Mat& depth, const cv::Mat& mask, const dm::MaskParams& p) {
  cv::Mat out(depth.size(), CV_32FC1, cv::Scalar(12345.0f));
  dm::MaskJob job;
  job.depth = {depth.data, depth.step[0]};
  job.depth_type = depth.type() == CV_16UC1 ? dm::DepthType::U16 : dm::DepthType::F32;
  job.mask = {mask.data, mask.step[0]};
  job.mask_type = mask.type() == CV_8UC1 ? dm::MaskType::U8 : dm::MaskType::U16;
  job.out = {out.ptr<float>(), out.step[0]}, job.rows = depth.rows, job.cols = depth.cols;
  dm::mask_cpu(job, p);
  return out;
}

void write_png(const fs::path& p, const cv::Mat& m) {
  fs::create_directories(p.parent_path());
  ASSERT_TRUE(cv::imwrite(p.string(), m)) << p;
}

// Indices 0..colors-1 in a pattern with every value present.
cv::Mat index_pattern(int rows, int cols, int colors) {
  cv::Mat m(rows, cols, CV_8UC1);
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) m.at<uint8_t>(y, x) = static_cast<uint8_t>((x + 3 * y) % colors);
  return m;
}

dm::FrameEntry entry(const fs::path& depth, const fs::path& mask) {
  dm::FrameEntry f;
  f.id = depth.stem().string();
  f.depth = depth;
  f.mask = mask;
  return f;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Depth encodings

TEST(DepthEncoding, ApcDecodeOfKnownWords) {
  dm::MaskParams p;
  p.apc_encoding = true;
  // Hand-computed: 5500 (0.55 m, the README's median) << 3 = 44000 with nothing rotated in.
  EXPECT_EQ(dm::decode_depth_raw(44000, p), 5500);
  // 0.09 m and 1.496 m, the README's decoded range of frame-000000: 900 << 3 = 7200;
  // 14960 << 3 = 119680 = 54144 + 65536 (bit 16 drops) and 14960 >> 13 = 1 rotates in: 54145.
  EXPECT_EQ(dm::decode_depth_raw(7200, p), 900);
  EXPECT_EQ(dm::decode_depth_raw(54145, p), 14960);
  // The README's largest stored word 65528 = 0xFFF8 decodes to 0x1FFF = 8191 (0.8191 m).
  EXPECT_EQ(dm::decode_depth_raw(65528, p), 8191);
  // Low bits rotate to the top: stored 1 is 8192, stored 7 is 0xE000.
  EXPECT_EQ(dm::decode_depth_raw(1, p), 8192);
  EXPECT_EQ(dm::decode_depth_raw(7, p), 0xE000);
  EXPECT_EQ(dm::decode_depth_raw(0, p), 0) << "a stored 0 stays no measurement";
  EXPECT_EQ(dm::decode_depth_raw(65535, p), 65535);
  // Every word round-trips.
  for (uint32_t v = 1; v < 65536; ++v) ASSERT_EQ(dm::decode_depth_raw(apc_encode(static_cast<uint16_t>(v)), p), v) << v;
  // Plain is the identity.
  p.apc_encoding = false;
  EXPECT_EQ(dm::decode_depth_raw(44000, p), 44000);
}

TEST(DepthEncoding, ApcPixelIsDecodedScaledAndRangeCheckedOnTheDecodedValue) {
  dm::MaskParams p;
  dm::set_depth_range(p, 0.0001, 0.5, 1.0);
  p.apc_encoding = true;
  EXPECT_EQ(dm::mask_pixel(uint16_t{44000}, uint8_t{1}, p), 5500.0f * 0.0001f);
  // Stored 7200 is 0.09 m decoded (out of range) although 7200 * 1e-4 = 0.72 m would be inside.
  EXPECT_EQ(dm::mask_pixel(uint16_t{7200}, uint8_t{1}, p), p.invalid);
  // Stored 54145 is 1.496 m decoded (out of range) although 5.4 m undecoded: also out; and a word
  // whose undecoded value is out of range but decoded is in: 0.7 m = 7000 -> stored 56000.
  EXPECT_EQ(dm::mask_pixel(uint16_t{54145}, uint8_t{1}, p), p.invalid);
  EXPECT_EQ(dm::mask_pixel(apc_encode(7000), uint8_t{1}, p), 7000.0f * 0.0001f);
  // Range bounds are inclusive on the decoded value: 0.5 m and 1.0 m kept, one unit beyond dropped.
  EXPECT_NE(dm::mask_pixel(apc_encode(5000), uint8_t{1}, p), p.invalid);
  EXPECT_NE(dm::mask_pixel(apc_encode(10000), uint8_t{1}, p), p.invalid);
  EXPECT_EQ(dm::mask_pixel(apc_encode(4999), uint8_t{1}, p), p.invalid);
  EXPECT_EQ(dm::mask_pixel(apc_encode(10001), uint8_t{1}, p), p.invalid);
  // Float depth ignores the encoding.
  EXPECT_EQ(dm::mask_pixel(0.75f, uint8_t{1}, p), 0.75f);
}

TEST(DepthEncoding, InvalidValuesAreStoredWords) {
  dm::MaskParams p;
  dm::set_depth_range(p, 0.001, 0.0, 100.0);
  p.invalid = -1.0f;
  EXPECT_EQ(dm::mask_pixel(uint16_t{65535}, uint8_t{1}, p), 65535.0f * 0.001f);
  p.invalid_raw_count = 2;
  p.invalid_raw[0] = 65535;  // 7-Scenes
  p.invalid_raw[1] = 1234;
  EXPECT_EQ(dm::decode_depth_raw(65535, p), 0);
  EXPECT_EQ(dm::mask_pixel(uint16_t{65535}, uint8_t{1}, p), -1.0f);
  EXPECT_EQ(dm::mask_pixel(uint16_t{1234}, uint8_t{1}, p), -1.0f);
  EXPECT_EQ(dm::mask_pixel(uint16_t{1235}, uint8_t{1}, p), 1235.0f * 0.001f);
  EXPECT_EQ(dm::mask_pixel(uint16_t{0}, uint8_t{1}, p), -1.0f);
  // With APC encoding the marker is compared with the stored word, not the decoded value.
  p.apc_encoding = true;
  p.invalid_raw_count = 1;
  p.invalid_raw[0] = 44000;  // stored word of 5500
  dm::set_depth_range(p, 0.0001, 0.0, 7.0);
  EXPECT_EQ(dm::mask_pixel(uint16_t{44000}, uint8_t{1}, p), -1.0f);
  EXPECT_EQ(dm::decode_depth_raw(apc_encode(44000), p), 44000) << "decoded 44000 is not the marker";
  EXPECT_EQ(dm::mask_pixel(apc_encode(44000), uint8_t{1}, p), 44000.0f * 0.0001f);
}

TEST(DepthEncoding, ConfigFillsTheRule) {
  EXPECT_EQ(dm::mask_params(config_with({"depth.scale=mm"})).scale, 0.001f);
  EXPECT_EQ(dm::mask_params(config_with({"depth.scale=0.1mm"})).scale, 0.0001f);
  EXPECT_EQ(dm::mask_params(config_with({"depth.scale=tum"})).scale, static_cast<float>(1.0 / 5000));
  EXPECT_EQ(dm::mask_params(config_with({"depth.scale=d405"})).scale, 0.0001f);
  // TUM: 5000 units per metre, so 1.5 m = 7500 is kept at max 1.5 exactly, 7501 not.
  const dm::MaskParams tum = dm::mask_params(config_with({"depth.scale=tum", "depth.max=1.5"}));
  EXPECT_EQ(tum.raw_max, 7500u);
  const dm::MaskParams apc =
      dm::mask_params(config_with({"depth.encoding=apc", "depth.scale=0.1mm", "depth.invalid_values=[65535, 7]"}));
  EXPECT_TRUE(apc.apc_encoding);
  EXPECT_EQ(apc.invalid_raw_count, 2);
  EXPECT_EQ(apc.invalid_raw[0], 65535);
  EXPECT_EQ(apc.invalid_raw[1], 7);
  EXPECT_FALSE(dm::mask_params(config_with({})).apc_encoding);
  EXPECT_EQ(dm::mask_params(config_with({"mask.erode=3"})).erode, 3);
}

// ---------------------------------------------------------------------------------------------------
// threshold_fraction

TEST(ThresholdFraction, HandCheckedBoundaries) {
  // 0.5: 127/255 = 0.498 is not above, 128/255 is; 32767/65535 = 0.4999924 not, 32768 is.
  EXPECT_EQ(dm::fraction_threshold(0.5, 255), 127u);
  EXPECT_EQ(dm::fraction_threshold(0.5, 65535), 32767u);
  // APC's chenille threshold: 0.30941 * 65535 = 20277.18; 20277/65535 = 0.3094072 <= 0.30941 < 20278/65535.
  EXPECT_EQ(dm::fraction_threshold(0.30941, 65535), 20277u);
  // 0 keeps every non-zero value; 1 keeps nothing (m / full > 1 never holds).
  EXPECT_EQ(dm::fraction_threshold(0.0, 255), 0u);
  EXPECT_EQ(dm::fraction_threshold(0.0, 65535), 0u);
  EXPECT_EQ(dm::fraction_threshold(1.0, 255), 255u);
  EXPECT_EQ(dm::fraction_threshold(1.0, 65535), 65535u);
  // Exactly on a step: 100/255 is not above itself; the next double above it keeps 100.
  EXPECT_EQ(dm::fraction_threshold(100.0 / 255.0, 255), 100u);
  EXPECT_EQ(dm::fraction_threshold(std::nextafter(100.0 / 255.0, 0.0), 255), 99u);
  EXPECT_THROW(dm::fraction_threshold(-0.1, 255), std::invalid_argument);
  EXPECT_THROW(dm::fraction_threshold(1.5, 255), std::invalid_argument);
}

TEST(ThresholdFraction, EqualsTheUpstreamDoubleTestForEveryMaskValue) {
  std::vector<double> fractions = {0.0, 1.0, 0.5, 0.30941, 0.37183, 0.34326, 0.35028, 1e-9, 1.0 - 1e-12, 0.999, 0.001};
  for (const uint32_t full : {255u, 65535u})
    for (const uint32_t m : {1u, 2u, 77u, 128u, 254u, 255u, 20277u, 20278u, 32767u, 32768u, 65534u})
      if (m <= full) {
        const double at = static_cast<double>(m) / full;  // exactly on a step, and its neighbours
        fractions.push_back(at);
        fractions.push_back(std::nextafter(at, 0.0));
        fractions.push_back(std::nextafter(at, 2.0));
      }
  for (double f : fractions) {
    if (f < 0.0 || f > 1.0) continue;
    dm::MaskParams p;
    dm::set_threshold_fraction(p, f);
    for (uint32_t m = 0; m <= 255; ++m)
      ASSERT_EQ(dm::mask_keeps(static_cast<uint8_t>(m), p), static_cast<double>(m) / 255.0 > f)
          << "f " << f << " m " << m;
    for (uint32_t m = 0; m <= 65535; ++m)
      ASSERT_EQ(dm::mask_keeps(static_cast<uint16_t>(m), p), static_cast<double>(m) / 65535.0 > f)
          << "f " << f << " m " << m;
  }
}

TEST(ThresholdFraction, ConfigSetsPerTypeThresholdsAndInvertStillApplies) {
  dm::MaskParams p = dm::mask_params(config_with({"mask.threshold_fraction=0.5", "mask.threshold=3"}));
  EXPECT_TRUE(p.threshold_by_type);
  EXPECT_EQ(p.threshold_u8, 127u);
  EXPECT_EQ(p.threshold_u16, 32767u);
  EXPECT_FALSE(dm::mask_keeps(uint8_t{127}, p));
  EXPECT_TRUE(dm::mask_keeps(uint8_t{128}, p));
  EXPECT_FALSE(dm::mask_keeps(uint16_t{128}, p)) << "the fraction is of the mask type's own full scale";
  EXPECT_TRUE(dm::mask_keeps(uint16_t{32768}, p));
  p.invert = true;
  EXPECT_TRUE(dm::mask_keeps(uint8_t{127}, p));
  EXPECT_FALSE(dm::mask_keeps(uint16_t{32768}, p));
}

// ---------------------------------------------------------------------------------------------------
// Indexed (palette) PNG masks

class PaletteMask : public ::testing::TestWithParam<std::tuple<int /*bit depth*/, bool /*interlace*/>> {};

TEST_P(PaletteMask, LoaderKeepsPaletteIndices) {
  const auto [bit_depth, interlace] = GetParam();
  const int colors = 1 << std::min(bit_depth, 4);  // 2, 4, 16, 16 colours
  TempDir tmp;
  const cv::Mat indices = index_pattern(9, 13, colors);
  dmtest::write_palette_png(tmp / "mask" / "a.png", indices, bit_depth, colors, interlace, /*trns=*/bit_depth == 8);
  write_png(tmp / "depth" / "a.png", cv::Mat(9, 13, CV_16UC1, cv::Scalar(1000)));
  // OpenCV alone would give colours here, not indices.
  EXPECT_NE(cv::imread((tmp / "mask" / "a.png").string(), cv::IMREAD_UNCHANGED).channels(), 1);

  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  slot.load(entry(tmp / "depth" / "a.png", tmp / "mask" / "a.png"), false);
  ASSERT_EQ(slot.mask().type(), CV_8UC1);
  EXPECT_TRUE(dmtest::SameBits(slot.mask(), indices));
  // Labels select palette indices.
  dm::MaskParams p = dm::mask_params(config_with({"mask.labels=[1]"}));
  slot.run_mask(p);
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 13; ++x)
      ASSERT_EQ(slot.out().at<float>(y, x), indices.at<uint8_t>(y, x) == 1 ? 1.0f : 0.0f) << x << "," << y;
  // A second, different palette mask into the same slot replaces the first completely.
  const cv::Mat other = index_pattern(9, 13, 2);
  dmtest::write_palette_png(tmp / "mask" / "b.png", other, 1, 2, false, false);
  slot.load(entry(tmp / "depth" / "a.png", tmp / "mask" / "b.png"), false);
  EXPECT_TRUE(dmtest::SameBits(slot.mask(), other));
}

INSTANTIATE_TEST_SUITE_P(BitDepths, PaletteMask, ::testing::Combine(::testing::Values(1, 2, 4, 8), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<PaletteMask::ParamType>& i) {
                           return "bits" + std::to_string(std::get<0>(i.param)) +
                                  (std::get<1>(i.param) ? "_adam7" : "");
                         });

TEST(PaletteMaskErrors, CorruptOrTruncatedPaletteMaskNamesTheFile) {
  TempDir tmp;
  dmtest::write_palette_png(tmp / "good.png", index_pattern(40, 50, 16), 8, 16, false, false);
  write_png(tmp / "depth.png", cv::Mat(40, 50, CV_16UC1, cv::Scalar(1000)));
  std::vector<uint8_t> bytes = dmtest::read_bytes(tmp / "good.png");
  // Truncated in the middle of the image data.
  dmtest::write_bytes(
      tmp / "truncated.png",
      std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2)));
  // Image data bytes flipped (the CRC no longer matches).
  std::vector<uint8_t> flipped = bytes;
  for (size_t i = 60; i < flipped.size() - 20; ++i) flipped[i] = static_cast<uint8_t>(flipped[i] ^ 0x5A);
  dmtest::write_bytes(tmp / "flipped.png", flipped);
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  for (const char* name : {"truncated.png", "flipped.png"}) {
    SCOPED_TRACE(name);
    const std::string msg = message_of<dm::InputError>([&] { slot.load(entry(tmp / "depth.png", tmp / name), false); });
    EXPECT_TRUE(Contains(msg, (tmp / name).string()));
    EXPECT_TRUE(Contains(msg, "indexed-colour"));
    EXPECT_TRUE(slot.mask().empty()) << "no half frame after a failed load";
  }
  // Size mismatch with the depth names both files.
  dmtest::write_palette_png(tmp / "small.png", index_pattern(4, 5, 4), 2, 4, false, false);
  const std::string msg =
      message_of<dm::InputError>([&] { slot.load(entry(tmp / "depth.png", tmp / "small.png"), false); });
  EXPECT_TRUE(Contains(msg, "small.png"));
  EXPECT_TRUE(Contains(msg, "5x4"));
}

// ---------------------------------------------------------------------------------------------------
// Per-instance masks

namespace {
// Three 4x6 instances: two binary 8-bit (0/255), one 16-bit probability map.
struct Instances {
  TempDir tmp;
  dm::FrameEntry frame;
  cv::Mat a = (cv::Mat_<uint8_t>(4, 6) << 255, 255, 0, 0, 0, 0,  //
               255, 255, 0, 0, 0, 0,                             //
               0, 0, 0, 0, 0, 0,                                 //
               0, 0, 0, 0, 0, 0);
  cv::Mat b = (cv::Mat_<uint8_t>(4, 6) << 0, 0, 0, 0, 255, 255,  //
               0, 0, 0, 0, 0, 255,                               //
               0, 0, 0, 0, 0, 0,                                 //
               255, 0, 0, 0, 0, 0);
  cv::Mat c = (cv::Mat_<uint16_t>(4, 6) << 0, 0, 0, 0, 0, 0,  //
               0, 0, 40000, 30000, 0, 0,                      //
               0, 0, 65535, 1, 0, 0,                          //
               0, 0, 0, 0, 0, 0);
  Instances() {
    cv::Mat depth(4, 6, CV_16UC1);
    for (int i = 0; i < 24; ++i) depth.at<uint16_t>(i / 6, i % 6) = static_cast<uint16_t>(1000 + 100 * i);
    depth.at<uint16_t>(0, 0) = 0;  // a hole inside instance a
    write_png(tmp / "depth" / "000007.png", depth);
    write_png(tmp / "mask" / "000007_000000.png", a);
    write_png(tmp / "mask" / "000007_000001.png", b);
    write_png(tmp / "mask" / "000007_000002.png", c);
    frame.id = "000007";
    frame.depth = tmp / "depth" / "000007.png";
    for (const char* inst : {"000000", "000001", "000002"})
      frame.instances.emplace_back(inst, tmp / "mask" / ("000007_" + std::string(inst) + ".png"));
  }
  static float depth_at(int y, int x) { return static_cast<float>(1000 + 100 * (y * 6 + x)) * 0.001f; }
};
}  // namespace

TEST(PerInstance, UnionKeepsAPixelWhenAnyInstanceKeepsIt) {
  Instances in;
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  // threshold_fraction 0.5: a and b at 255 pass, c passes at 40000 and 65535 but not 30000 or 1. An
  // OR of raw values would not be the same (30000 | 1 ...); the union is of the mask tests.
  const dm::Config c = config_with({"mask.threshold_fraction=0.5"});
  const dm::MaskParams p = dm::mask_params(c);
  slot.load_depth(in.frame, false);
  slot.load_instance_union(in.frame, p);
  const cv::Mat want_mask = (cv::Mat_<uint8_t>(4, 6) << 255, 255, 0, 0, 255, 255,  //
                             255, 255, 255, 0, 0, 255,                             //
                             0, 0, 255, 0, 0, 0,                                   //
                             255, 0, 0, 0, 0, 0);
  EXPECT_TRUE(dmtest::SameBits(slot.mask(), want_mask));
  slot.run_mask(dm::union_mask_params(p));
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 6; ++x) {
      const bool keep = want_mask.at<uint8_t>(y, x) != 0 && !(x == 0 && y == 0);
      EXPECT_EQ(slot.out().at<float>(y, x), keep ? Instances::depth_at(y, x) : 0.0f) << x << "," << y;
    }
  // Invert applies per instance: "kept if any instance keeps it" means not in every instance.
  const dm::MaskParams inv = dm::mask_params(config_with({"mask.threshold_fraction=0.5", "mask.invert=true"}));
  slot.load_instance_union(in.frame, inv);
  EXPECT_EQ(cv::countNonZero(slot.mask()), 24) << "no pixel passes all three instances, so each fails one";
}

TEST(PerInstance, ProcessFrameWritesTheUnionOrOneOutputPerInstanceFromOneDepthDecode) {
  Instances in;
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  {
    dm::Config c = config_with({"output.format=npy"});
    c.output.dir = in.tmp / "union";
    fs::create_directories(c.output.dir);
    std::vector<std::string> ids;
    dm::FrameWriter writer(c, *backend);
    dm::process_frame(
        c, in.frame, slot, dm::mask_params(c), [&](const dm::FrameSlot&, const std::string& id) { ids.push_back(id); },
        &writer);
    EXPECT_EQ(ids, std::vector<std::string>{"000007"});
    EXPECT_TRUE(fs::exists(c.output.dir / "000007.npy"));
  }
  dm::Config c = config_with({"mask.per_instance=true", "output.format=tiff"});
  c.output.dir = in.tmp / "each";
  fs::create_directories(c.output.dir);
  std::vector<std::string> ids;
  dm::FrameWriter writer(c, *backend);
  // The depth file disappears after the first pass: the later instances must not read it again.
  dm::process_frame(
      c, in.frame, slot, dm::mask_params(c),
      [&](const dm::FrameSlot&, const std::string& id) {
        ids.push_back(id);
        fs::remove(in.frame.depth);
      },
      &writer);
  EXPECT_EQ(ids, (std::vector<std::string>{"000007_000000", "000007_000001", "000007_000002"}));
  const cv::Mat inst_c = cv::imread((c.output.dir / "000007_000002.tiff").string(), cv::IMREAD_UNCHANGED);
  ASSERT_EQ(inst_c.type(), CV_32FC1);
  // Threshold 0 on instance c: every non-zero probability is kept.
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 6; ++x)
      EXPECT_EQ(inst_c.at<float>(y, x), in.c.at<uint16_t>(y, x) > 0 ? Instances::depth_at(y, x) : 0.0f)
          << x << "," << y;
  const cv::Mat inst_a = cv::imread((c.output.dir / "000007_000000.tiff").string(), cv::IMREAD_UNCHANGED);
  EXPECT_EQ(cv::countNonZero(inst_a), 3) << "instance a minus the hole at (0,0)";
  EXPECT_FALSE(fs::exists(c.output.dir / "000007.tiff"));
}

TEST(PerInstance, AnInstanceOfAnotherSizeFailsTheFrameNamingIt) {
  Instances in;
  write_png(in.tmp / "mask" / "000007_000001.png", cv::Mat(3, 6, CV_8UC1, cv::Scalar(255)));
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  dm::Config c = config_with({});
  c.output.dir = in.tmp / "out";
  fs::create_directories(c.output.dir);
  const std::string msg = message_of<dm::InputError>([&] { dm::process_frame(c, in.frame, slot, dm::mask_params(c)); });
  EXPECT_TRUE(Contains(msg, "000007_000001.png"));
  EXPECT_TRUE(Contains(msg, "6x3"));
}

// ---------------------------------------------------------------------------------------------------
// Erode

namespace {
// 7x6, 1 = object. Zeros at (3,0), (0,3), (6,4); a depth hole at (6,1).
const uint8_t kErodeMask[6][7] = {{1, 1, 1, 0, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1},
                                  {0, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 1, 1}};

cv::Mat erode_case(int n) {
  cv::Mat depth(6, 7, CV_16UC1, cv::Scalar(8));
  depth.at<uint16_t>(1, 6) = 0;
  cv::Mat mask(6, 7, CV_8UC1, const_cast<uint8_t*>(&kErodeMask[0][0]));
  dm::MaskParams p;
  dm::set_depth_range(p, 0.25, 0.0, 10.0);
  p.invalid = -1.0f;
  p.erode = n;
  return run_cpu(depth, mask, p);
}

void expect_keep_grid(const cv::Mat& out, const int (&keep)[6][7]) {
  for (int y = 0; y < 6; ++y)
    for (int x = 0; x < 7; ++x)
      EXPECT_EQ(out.at<float>(y, x), keep[y][x] ? 2.0f : -1.0f) << "at (" << x << ", " << y << ")";
}

// Straight from the definition: every mask test in the clipped square window passes.
cv::Mat erode_reference(const cv::Mat& depth, const cv::Mat& mask, const dm::MaskParams& p) {
  cv::Mat out(depth.size(), CV_32FC1);
  for (int y = 0; y < depth.rows; ++y)
    for (int x = 0; x < depth.cols; ++x) {
      bool all = true;
      for (int v = std::max(0, y - p.erode); v <= std::min(depth.rows - 1, y + p.erode); ++v)
        for (int u = std::max(0, x - p.erode); u <= std::min(depth.cols - 1, x + p.erode); ++u)
          all = all && (mask.type() == CV_8UC1 ? dm::mask_keeps(mask.at<uint8_t>(v, u), p)
                                               : dm::mask_keeps(mask.at<uint16_t>(v, u), p));
      out.at<float>(y, x) = depth.type() == CV_16UC1 ? dm::depth_pixel(depth.at<uint16_t>(y, x), all, p)
                                                     : dm::depth_pixel(depth.at<float>(y, x), all, p);
    }
  return out;
}
}  // namespace

TEST(Erode, OnePixelHandChecked) {
  // 3x3 windows; outside the image counts as passing, so border pixels survive unless a zero is near.
  // The depth hole at (6,1) is invalid itself but erodes nothing.
  const int keep[6][7] = {{1, 1, 0, 0, 0, 1, 1}, {1, 1, 0, 0, 0, 1, 0}, {0, 0, 1, 1, 1, 1, 1},
                          {0, 0, 1, 1, 1, 0, 0}, {0, 0, 1, 1, 1, 0, 0}, {1, 1, 1, 1, 1, 0, 0}};
  expect_keep_grid(erode_case(1), keep);
}

TEST(Erode, TwoPixelsHandChecked) {
  const int keep[6][7] = {{1, 0, 0, 0, 0, 0, 1}, {0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0},
                          {0, 0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 0, 0}};
  expect_keep_grid(erode_case(2), keep);
}

TEST(Erode, ZeroIsTheUnerodedRuleAndLargeRadiiEatEverythingNearAZero) {
  const int all[6][7] = {{1, 1, 1, 0, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 1, 1},
                         {0, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 0}, {1, 1, 1, 1, 1, 1, 1}};
  expect_keep_grid(erode_case(0), all);
  const int none[6][7] = {};
  expect_keep_grid(erode_case(7), none);
  expect_keep_grid(erode_case(16), none);
}

TEST(Erode, CpuLoopEqualsTheDefinitionOnRandomMasks) {
  std::mt19937 rng(7);
  for (const cv::Size size : {cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(31, 33), cv::Size(70, 45)}) {
    for (const int mtype : {CV_8UC1, CV_16UC1}) {
      cv::Mat depth(size, CV_16UC1), mask(size, mtype);
      std::uniform_int_distribution<int> d(0, 3000), pick(0, 29);
      for (int y = 0; y < size.height; ++y)
        for (int x = 0; x < size.width; ++x) {
          depth.at<uint16_t>(y, x) = static_cast<uint16_t>(pick(rng) == 0 ? 0 : d(rng));
          const int v = pick(rng) == 0 ? 0 : 200;  // mostly kept, scattered zeros
          if (mtype == CV_8UC1)
            mask.at<uint8_t>(y, x) = static_cast<uint8_t>(v);
          else
            mask.at<uint16_t>(y, x) = static_cast<uint16_t>(v * 250);
        }
      for (const int n : {1, 2, 3, 4, 9, 16}) {
        for (const bool invert : {false, true}) {
          dm::MaskParams p;
          p.erode = n;
          p.invert = invert;
          SCOPED_TRACE(std::to_string(size.width) + "x" + std::to_string(size.height) + " erode " + std::to_string(n) +
                       (invert ? " invert" : ""));
          EXPECT_TRUE(dmtest::SameBits(run_cpu(depth, mask, p), erode_reference(depth, mask, p)));
        }
      }
    }
  }
}

TEST(Erode, ParamsOutsideTheSupportedRangeAreRejected) {
  cv::Mat depth(2, 2, CV_16UC1, cv::Scalar(5)), mask(2, 2, CV_8UC1, cv::Scalar(1));
  dm::MaskParams p;
  p.erode = dm::kMaxErode + 1;
  EXPECT_THROW(run_cpu(depth, mask, p), std::invalid_argument);
  p.erode = -1;
  EXPECT_THROW(run_cpu(depth, mask, p), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------------
// Unit sanity check

TEST(UnitCheck, WarningNamesTheScaleThatWouldMakeTheMedianPlausible) {
  EXPECT_EQ(dm::depth_unit_warning(0.55, 0.0001, false), "");
  EXPECT_EQ(dm::depth_unit_warning(0.1, 0.001, false), "");
  EXPECT_EQ(dm::depth_unit_warning(20.0, 0.001, false), "");
  // 0.1 mm data read as millimetres, ten times too far.
  const std::string far = dm::depth_unit_warning(52.3, 0.001, false);
  EXPECT_TRUE(Contains(far, "median masked depth 52.3 m at depth.scale 0.001"));
  EXPECT_TRUE(Contains(far, "with depth.scale 0.0001 (0.1mm) it would be 5.23 m"));
  // Millimetres read as metres: the preset unit wins over the nearer 0.01 (8.5 m).
  EXPECT_TRUE(Contains(dm::depth_unit_warning(850.0, 1.0, false), "with depth.scale 0.001 (mm) it would be 0.85 m"));
  EXPECT_TRUE(Contains(dm::depth_unit_warning(4500.0, 1.0, false), "with depth.scale 0.001 (mm) it would be 4.5 m"));
  // TUM data read as millimetres: 4.1 m looks plausible, no warning (a median gives the order of
  // magnitude only, so TUM's 1/5000 is never guessed).
  EXPECT_EQ(dm::depth_unit_warning(4.1, 0.001, false), "");
  // Both preset units plausible: the one fewer decades away (0.1 mm from 1e-5, not mm).
  EXPECT_TRUE(
      Contains(dm::depth_unit_warning(0.0523, 0.00001, false), "with depth.scale 0.0001 (0.1mm) it would be 0.523 m"));
  // Millimetres read as 0.1 mm: 0.05 m -> 0.5 m at 0.001.
  const std::string near = dm::depth_unit_warning(0.0523, 0.0001, false);
  EXPECT_TRUE(Contains(near, "median masked depth 0.0523 m at depth.scale 0.0001"));
  EXPECT_TRUE(Contains(near, "with depth.scale 0.001 (mm) it would be 0.523 m"));
  // No preset fits: the power of ten fewest decades away. 0.5 mm at mm scale -> scale 1 gives 0.5 m;
  // 75 m at TUM's scale -> 1e-05 gives 3.75 m.
  EXPECT_TRUE(Contains(dm::depth_unit_warning(0.0005, 0.001, false), "with depth.scale 1 it would be 0.5 m"));
  EXPECT_TRUE(Contains(dm::depth_unit_warning(150.0, 0.0001, false), "with depth.scale 1e-05 it would be 15 m"));
  // Float depth: the files' unit, not the scale.
  const std::string f = dm::depth_unit_warning(1500.0, 0.001, true);
  EXPECT_TRUE(Contains(f, "float depth, which is read as metres"));
  EXPECT_TRUE(Contains(f, "units of 0.001 m it would be 1.5 m"));
}

TEST(UnitCheck, MedianOfKeptPixels) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  cv::Mat out = (cv::Mat_<float>(2, 4) << 0.f, 3.f, 1.f, nan, 2.f, -1.f, 5.f, 4.f);
  EXPECT_EQ(dm::median_kept_depth(out, 0.0f, 1), 3.0) << "kept: 1 2 3 4 5";
  EXPECT_EQ(dm::median_kept_depth(out, 5.0f, 1), 3.0) << "kept: 1 2 3 4 (the upper median)";
  EXPECT_FALSE(dm::median_kept_depth(out, 0.0f, 6)) << "too few kept pixels";
  EXPECT_FALSE(dm::median_kept_depth(cv::Mat(3, 3, CV_32FC1, cv::Scalar(0)), 0.0f, 1));
  // ROI outputs read with their step.
  cv::Mat big(10, 10, CV_32FC1, cv::Scalar(100.0f));
  big(cv::Rect(2, 2, 3, 3)).setTo(0.5f);
  EXPECT_EQ(dm::median_kept_depth(big(cv::Rect(2, 2, 3, 3)), 0.0f, 9), 0.5);
}

// ---------------------------------------------------------------------------------------------------
// Real data (../shared/data, see its README)

namespace {
fs::path apc_scene() { return dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000"; }
#define DM_REQUIRE_APC()                                                      \
  do {                                                                        \
    if (!fs::exists(apc_scene() / "frame-000000.depth.png"))                  \
      GTEST_SKIP() << "real data not present: " << apc_scene()                \
                   << " (set DEPTHMASK_TEST_DATA to the shared data folder)"; \
  } while (0)

size_t kept(const cv::Mat& out) { return static_cast<size_t>(cv::countNonZero(out > 0.0f)); }
}  // namespace

TEST(RealApc, Frame0DecodesToTheDocumentedRangeAndKeepsTheGroundTruthCount) {
  DM_REQUIRE_APC();
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  const dm::Config c = config_with({"depth.encoding=apc", "depth.scale=0.0001"});
  const dm::MaskParams p = dm::mask_params(c);
  slot.load(entry(apc_scene() / "frame-000000.depth.png", apc_scene() / "segm" / "frame-000000.segm.png"), false);
  // Decoded metres of every valid pixel: README 0.090..1.496 m, 81,376 valid, median 0.550.
  double lo = 1e9, hi = 0;
  size_t valid = 0;
  for (int y = 0; y < slot.depth().rows; ++y)
    for (int x = 0; x < slot.depth().cols; ++x) {
      const uint16_t v = dm::decode_depth_raw(slot.depth().at<uint16_t>(y, x), p);
      if (v == 0) continue;
      ++valid;
      lo = std::min(lo, v * 1e-4);
      hi = std::max(hi, v * 1e-4);
    }
  EXPECT_EQ(valid, 81376u);
  EXPECT_NEAR(lo, 0.090, 0.0005);
  EXPECT_NEAR(hi, 1.496, 0.0005);
  slot.run_mask(p);
  EXPECT_EQ(kept(slot.out()), 26485u) << "depth>0 AND segm>0";
  double mn = 1e9, mx = 0;
  cv::minMaxLoc(slot.out(), nullptr, &mx);
  for (int y = 0; y < slot.out().rows; ++y)
    for (int x = 0; x < slot.out().cols; ++x)
      if (slot.out().at<float>(y, x) > 0) mn = std::min(mn, static_cast<double>(slot.out().at<float>(y, x)));
  EXPECT_GE(mn, 0.0895);
  EXPECT_LE(mx, 1.4965);
  const auto median = dm::median_kept_depth(slot.out(), 0.0f);
  ASSERT_TRUE(median);
  EXPECT_EQ(dm::depth_unit_warning(*median, p.scale, false), "") << "median " << *median;
  // Undecoded, the same words at millimetre scale give a median far beyond a shelf bin.
  const dm::MaskParams wrong = dm::mask_params(config_with({"depth.scale=0.001", "depth.max=100"}));
  slot.run_mask(wrong);
  const auto wrong_median = dm::median_kept_depth(slot.out(), 0.0f);
  ASSERT_TRUE(wrong_median);
  EXPECT_TRUE(Contains(dm::depth_unit_warning(*wrong_median, wrong.scale, false), "with depth.scale 0.0001 (0.1mm)"));
}

TEST(RealApc, PredictedMasksWithTheirThresholdsGiveTheDocumentedCounts) {
  DM_REQUIRE_APC();
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  const std::pair<const char*, size_t> objects[] = {{"creativity_chenille_stems", 1688},
                                                    {"i_am_a_bunny_book", 9013},
                                                    {"kleenex_tissue_box", 4545},
                                                    {"laugh_out_loud_joke_book", 7}};
  for (const auto& [object, want] : objects) {
    SCOPED_TRACE(object);
    std::ifstream t(apc_scene() / "masks" / (std::string(object) + ".thresh.txt"));
    std::string thresh;
    ASSERT_TRUE(t >> thresh);
    const dm::MaskParams p =
        dm::mask_params(config_with({"depth.encoding=apc", "depth.scale=0.1mm", "mask.threshold_fraction=" + thresh}));
    slot.load(entry(apc_scene() / "frame-000000.depth.png",
                    apc_scene() / "masks" / ("frame-000000." + std::string(object) + ".mask.png")),
              false);
    ASSERT_EQ(slot.mask().type(), CV_16UC1);
    slot.run_mask(p);
    EXPECT_EQ(kept(slot.out()), want);
  }
}

TEST(RealApc, PerInstanceObjectsFromTheGroundTruthUnionToTheSegmCount) {
  DM_REQUIRE_APC();
  // Ground-truth per-object masks built from segm (value == 6 x object id), as BOP-style instances.
  TempDir tmp;
  const cv::Mat segm = cv::imread((apc_scene() / "segm" / "frame-000000.segm.png").string(), cv::IMREAD_UNCHANGED);
  ASSERT_EQ(segm.type(), CV_8UC1);
  dm::FrameEntry f;
  f.id = "000000";
  f.depth = apc_scene() / "frame-000000.depth.png";
  const std::pair<int, size_t> objects[] = {{48, 3952}, {114, 12851}, {132, 8075}, {144, 1607}};
  for (const auto& [value, count] : objects) {
    const std::string inst = std::to_string(value);
    write_png(tmp / "mask" / (inst + ".png"), segm == value);
    f.instances.emplace_back(inst, tmp / "mask" / (inst + ".png"));
  }
  dm::Config c = config_with({"depth.encoding=apc", "depth.scale=0.1mm", "mask.per_instance=true"});
  c.output.dir = tmp / "out";
  fs::create_directories(c.output.dir);
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  std::vector<size_t> counts;
  dm::process_frame(c, f, slot, dm::mask_params(c),
                    [&](const dm::FrameSlot& s, const std::string&) { counts.push_back(kept(s.out())); });
  EXPECT_EQ(counts, (std::vector<size_t>{3952, 12851, 8075, 1607}));
  c.mask.per_instance = false;
  counts.clear();
  dm::process_frame(c, f, slot, dm::mask_params(c),
                    [&](const dm::FrameSlot& s, const std::string&) { counts.push_back(kept(s.out())); });
  EXPECT_EQ(counts, std::vector<size_t>{26485});
}

// ---------------------------------------------------------------------------------------------------
// The CPU loop's vector paths (the common rule vectorises, and on x86-64 runs as an AVX2 copy where
// the CPU has it) against the rule called pixel by pixel: rows wide enough for every vector width and
// its tails, starting off alignment inside pitched images, over the values where a lane could differ.

namespace {
// Per-pixel reference: mask_pixel, one call a pixel.
cv::Mat rule_reference(const cv::Mat& depth, const cv::Mat& mask, const dm::MaskParams& p) {
  cv::Mat out(depth.size(), CV_32FC1);
  for (int y = 0; y < depth.rows; ++y)
    for (int x = 0; x < depth.cols; ++x) {
      const uint32_t m = mask.type() == CV_8UC1 ? mask.at<uint8_t>(y, x) : mask.at<uint16_t>(y, x);
      out.at<float>(y, x) =
          depth.type() == CV_16UC1
              ? (mask.type() == CV_8UC1 ? dm::mask_pixel(depth.at<uint16_t>(y, x), static_cast<uint8_t>(m), p)
                                        : dm::mask_pixel(depth.at<uint16_t>(y, x), static_cast<uint16_t>(m), p))
              : (mask.type() == CV_8UC1 ? dm::mask_pixel(depth.at<float>(y, x), static_cast<uint8_t>(m), p)
                                        : dm::mask_pixel(depth.at<float>(y, x), static_cast<uint16_t>(m), p));
    }
  return out;
}

// Edge values first (so narrow rows still meet them), then random ones.
cv::Mat edge_depth(cv::Size s, int type, std::mt19937& rng) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float fl[] = {nan,           -nan,
                      inf,           -inf,
                      -2.0f,         -0.0f,
                      0.0f,          1e-40f,
                      0.2f,          std::nextafter(0.2f, 0.0f),
                      10.0f,         std::nextafter(10.0f, 11.0f),
                      3.4028235e38f, 1.5f,
                      0.75f};
  const uint16_t u[] = {0, 65535, 199, 200, 10000, 10001, 1500, 1, 7, 4000, 65534};
  std::uniform_int_distribution<int> pick(0, 3), mm(0, 12000);
  cv::Mat d(s, type);
  int i = 0;
  for (int y = 0; y < s.height; ++y)
    for (int x = 0; x < s.width; ++x, ++i) {
      const bool edge = i < 64 || pick(rng) == 0;
      if (type == CV_16UC1)
        d.at<uint16_t>(y, x) = edge ? u[(i * 7 + y) % std::size(u)] : static_cast<uint16_t>(mm(rng));
      else
        d.at<float>(y, x) = edge ? fl[(i * 7 + y) % std::size(fl)] : static_cast<float>(mm(rng)) * 0.001f;
    }
  return d;
}

cv::Mat edge_mask(cv::Size s, int type, std::mt19937& rng) {
  const int vals[] = {0, 1, 2, 3, 99, 100, 101, 127, 128, 254, 255};
  std::uniform_int_distribution<int> pick(0, static_cast<int>(std::size(vals)) - 1), wide(0, 65535);
  cv::Mat m(s, type);
  for (int y = 0; y < s.height; ++y)
    for (int x = 0; x < s.width; ++x) {
      const int v = vals[pick(rng)];
      if (type == CV_8UC1)
        m.at<uint8_t>(y, x) = static_cast<uint8_t>(v);
      else
        m.at<uint16_t>(y, x) = static_cast<uint16_t>(pick(rng) == 0 ? wide(rng) : v * 257);
    }
  return m;
}

// The rules worth a lane each: the common threshold rule (the vectorised loop) and its variants, and
// the general loop's labels, markers and APC decoding.
std::vector<std::pair<std::string, dm::MaskParams>> vector_path_rules() {
  dm::MaskParams base;
  dm::set_depth_range(base, 0.001, 0.2, 10.0);
  std::vector<std::pair<std::string, dm::MaskParams>> rules;
  rules.emplace_back("threshold 0", base);
  dm::MaskParams p = base;
  p.threshold = 100;
  rules.emplace_back("threshold 100", p);
  p.invert = true;
  p.invalid = std::numeric_limits<float>::quiet_NaN();
  rules.emplace_back("threshold 100 invert NaN-invalid", p);
  p = base;
  dm::set_threshold_fraction(p, 0.5);
  p.invalid = -1.0f;
  rules.emplace_back("fraction 0.5", p);
  p = base;
  p.label_count = 3, p.labels[0] = 1, p.labels[1] = 101, p.labels[2] = 255 * 257;
  rules.emplace_back("labels", p);
  p = base;
  p.invalid_raw_count = 1, p.invalid_raw[0] = 65535;
  rules.emplace_back("marker 65535", p);
  p = base;
  p.apc_encoding = true;
  rules.emplace_back("apc", p);
  return rules;
}
}  // namespace

TEST(CpuLoop, WideAndMisalignedRowsEqualTheRulePixelByPixel) {
  std::mt19937 rng(11);
  for (const cv::Size size : {cv::Size(1, 1), cv::Size(13, 1), cv::Size(67, 3), cv::Size(1003, 4)}) {
    for (const int dtype : {CV_16UC1, CV_32FC1}) {
      for (const int mtype : {CV_8UC1, CV_16UC1}) {
        // Views one column into images two columns wider: rows start off alignment, steps are padded.
        const cv::Mat depth_full = edge_depth(size + cv::Size(2, 0), dtype, rng);
        const cv::Mat mask_full = edge_mask(size + cv::Size(2, 0), mtype, rng);
        const cv::Mat depth = depth_full(cv::Rect(1, 0, size.width, size.height));
        const cv::Mat mask = mask_full(cv::Rect(1, 0, size.width, size.height));
        for (const auto& [name, p] : vector_path_rules()) {
          SCOPED_TRACE(std::to_string(size.width) + "x" + std::to_string(size.height) +
                       (dtype == CV_16UC1 ? " u16" : " f32") + (mtype == CV_8UC1 ? " mask8 " : " mask16 ") + name);
          EXPECT_TRUE(dmtest::SameBits(run_cpu(depth, mask, p), rule_reference(depth, mask, p)));
        }
      }
    }
  }
}
