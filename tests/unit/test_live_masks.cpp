// Unit tests of live.mask (live_runner.h) with the fake source on the cpu backend: a static mask
// alone and AND-ed with the mask stream, a depth band alone and on top of the stream, the config
// keys' errors and printing, and the static mask's errors (missing file, size mismatch).
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <map>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/live_runner.h"
#include "depthmask/manifest.h"
#include "live_support.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::FakeSource;

namespace {

constexpr int kW = 37, kH = 29;
constexpr uint64_t kFrames = 12;

dm::Config live_config() {
  dm::Config c;
  c.depth.max = 9.0;
  c.live.overflow = dm::Overflow::Block;
  c.live.buffers = 3;
  c.live.stats_interval = 0;
  return c;
}

using Recorder = dmtest::OutputRecorder;

// Runs the fake source (kFrames frames) through run_live; every frame must be processed.
std::map<uint64_t, cv::Mat> run(const dm::Config& c, bool frames_have_masks) {
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, kFrames);
  src.no_mask = !frames_have_masks;
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr, &rec);
  EXPECT_EQ(s.processed, kFrames);
  EXPECT_EQ(s.failed, 0u);
  return rec.outputs;
}

// The gold's configuration for a depth band: the plain depth range [min, max] does the same.
dm::Config with_depth_range(double min, double max) {
  dm::Config c = live_config();
  c.depth.min = min;
  c.depth.max = max;
  return c;
}

// A 16-bit static mask with 0, 1 and 2 (1 is nonzero but not above mask.threshold 1).
cv::Mat static_mask16() {
  cv::Mat m(kH, kW, CV_16UC1);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) m.at<uint16_t>(y, x) = static_cast<uint16_t>((x / 4 + y / 3) % 3);
  return m;
}

// FrameSlot::run_mask of depth with `mask` on the cpu backend.
cv::Mat run_mask(const cv::Mat& depth, const cv::Mat& mask, const dm::MaskParams& p) {
  auto backend = dmtest::cpu_backend();
  dm::FrameSlot slot(*backend);
  slot.set(depth, mask);
  slot.run_mask(p);
  return slot.out().clone();
}

// `out` with every pixel where the static mask is 0 set to `invalid`.
cv::Mat outside_roi_invalid(cv::Mat out, const cv::Mat& roi, float invalid) {
  for (int y = 0; y < out.rows; ++y)
    for (int x = 0; x < out.cols; ++x)
      if (roi.at<uint16_t>(y, x) == 0) out.at<float>(y, x) = invalid;
  return out;
}

TEST(LiveMasks, StaticMaskAloneEqualsRunMaskWithThatMask) {
  dmtest::TempDir dir;
  const cv::Mat roi = static_mask16();
  ASSERT_TRUE(cv::imwrite((dir / "roi.png").string(), roi));
  dm::Config c = live_config();
  c.mask.threshold = 1;  // applies to the mask stream; the static mask keeps wherever it is nonzero
  c.live.mask.static_file = dir / "roi.png";
  const auto outputs = run(c, false);
  ASSERT_EQ(outputs.size(), kFrames);
  for (const auto& [seq, out] : outputs) {
    cv::Mat depth, unused;
    dmtest::fake_frame(seq, kW, kH, depth, unused);
    dm::MaskParams nonzero = dm::mask_params(c);  // the static mask keeps wherever it is nonzero
    nonzero.threshold = 0;
    EXPECT_TRUE(dmtest::SameBits(run_mask(depth, roi, nonzero), out)) << "frame " << seq;
  }
}

TEST(LiveMasks, StaticMaskIsAndedWithTheMaskStream) {
  dmtest::TempDir dir;
  const cv::Mat roi = static_mask16();
  ASSERT_TRUE(cv::imwrite((dir / "roi.png").string(), roi));
  dm::Config c = live_config();
  c.mask.threshold = 1;
  c.output.invalid = -1.0f;
  c.live.mask.static_file = dir / "roi.png";
  const auto outputs = run(c, true);
  ASSERT_EQ(outputs.size(), kFrames);
  for (const auto& [seq, out] : outputs)
    EXPECT_TRUE(dmtest::SameBits(outside_roi_invalid(dmtest::gold_frame(c, seq, kW, kH), roi, -1.0f), out))
        << "frame " << seq;
}

TEST(LiveMasks, DepthBandAloneKeepsDepthInTheBand) {
  dm::Config c = live_config();
  c.live.mask.depth_band = dm::LiveMaskConfig::DepthBand{2.0, 5.5};
  const auto outputs = run(c, false);
  ASSERT_EQ(outputs.size(), kFrames);
  for (const auto& [seq, out] : outputs) {
    cv::Mat depth, unused;
    dmtest::fake_frame(seq, kW, kH, depth, unused);
    cv::Mat want(kH, kW, CV_32FC1);
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) {
        const uint16_t raw = depth.at<uint16_t>(y, x);  // mm
        want.at<float>(y, x) = raw >= 2000 && raw <= 5500 ? static_cast<float>(raw) * 0.001f : 0.0f;
      }
    EXPECT_TRUE(dmtest::SameBits(want, out)) << "frame " << seq;
  }
}

TEST(LiveMasks, DepthBandOnTopOfTheMaskStreamNarrowsTheDepthRange) {
  dm::Config c = live_config();
  c.depth.min = 3.0;  // the band reaches below depth.min: depth.min stays
  c.live.mask.depth_band = dm::LiveMaskConfig::DepthBand{2.0, 5.5};
  const dm::Config gold = with_depth_range(3.0, 5.5);
  const auto outputs = run(c, true);
  ASSERT_EQ(outputs.size(), kFrames);
  for (const auto& [seq, out] : outputs)
    EXPECT_TRUE(dmtest::SameBits(dmtest::gold_frame(gold, seq, kW, kH), out)) << "frame " << seq;
}

TEST(LiveMasks, StreamStaticAndDepthBandTogether) {
  dmtest::TempDir dir;
  const cv::Mat roi = static_mask16();
  ASSERT_TRUE(cv::imwrite((dir / "roi.png").string(), roi));
  dm::Config c = live_config();
  c.live.mask.static_file = dir / "roi.png";
  c.live.mask.depth_band = dm::LiveMaskConfig::DepthBand{1.0, 4.0};
  const dm::Config gold = with_depth_range(1.0, 4.0);
  const auto outputs = run(c, true);
  ASSERT_EQ(outputs.size(), kFrames);
  for (const auto& [seq, out] : outputs)
    EXPECT_TRUE(dmtest::SameBits(outside_roi_invalid(dmtest::gold_frame(gold, seq, kW, kH), roi, 0.0f), out))
        << "frame " << seq;
}

TEST(LiveMasks, FramesWithoutAnyMaskFail) {
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 3);
  src.no_mask = true;
  const dm::LiveSummary s = dm::run_live(live_config(), *backend, src, dm::LiveLimits{}, nullptr);
  EXPECT_EQ(s.failed, 3u);
  EXPECT_EQ(s.processed, 0u);
}

TEST(LiveMasks, StaticMaskOfAnotherSizeIsAnInputErrorNamingTheFileAndBothSizes) {
  dmtest::TempDir dir;
  ASSERT_TRUE(cv::imwrite((dir / "small.png").string(), cv::Mat(10, 12, CV_8UC1, cv::Scalar(255))));
  dm::Config c = live_config();
  c.live.mask.static_file = dir / "small.png";
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 3);
  const std::string msg =
      dmtest::message_of<dm::InputError>([&] { dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, (dir / "small.png").string()));
  EXPECT_TRUE(dmtest::Contains(msg, "12x10"));
  EXPECT_TRUE(dmtest::Contains(msg, "37x29"));
}

TEST(LiveMasks, StaticMaskThatCannotBeReadFailsAtTheStart) {
  dmtest::TempDir dir;
  dm::Config c = live_config();
  c.live.mask.static_file = dir / "missing.png";
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 3);
  std::string msg =
      dmtest::message_of<dm::InputError>([&] { dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, "live.mask.static"));
  EXPECT_TRUE(dmtest::Contains(msg, (dir / "missing.png").string()));
  EXPECT_EQ(src.opens.load(), 0);

  ASSERT_TRUE(cv::imwrite((dir / "color.png").string(), cv::Mat(kH, kW, CV_8UC3, cv::Scalar(1, 2, 3))));
  c.live.mask.static_file = dir / "color.png";
  msg = dmtest::message_of<dm::InputError>([&] { dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, "3 channels"));
}

TEST(LiveMasks, StaticMaskIsReadWithinTheInputLimits) {
  // live.mask.static goes through the batch loader's reader: input.max_file_bytes and
  // input.max_image_pixels hold for it too.
  dmtest::TempDir dir;
  ASSERT_TRUE(cv::imwrite((dir / "roi.png").string(), static_mask16()));
  dm::Config c = live_config();
  c.live.mask.static_file = dir / "roi.png";
  c.input.max_file_bytes = 16;
  auto backend = dmtest::cpu_backend();
  FakeSource src(kW, kH, 3);
  std::string msg =
      dmtest::message_of<dm::InputError>([&] { dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, "live.mask.static")) << msg;
  EXPECT_TRUE(dmtest::Contains(msg, "input.max_file_bytes")) << msg;
  c.input.max_file_bytes = uint64_t{1} << 20;
  c.input.max_image_pixels = kW * kH - 1;
  msg = dmtest::message_of<dm::InputError>([&] { dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, "input.max_image_pixels")) << msg;
  EXPECT_EQ(src.opens.load(), 0);
}

TEST(LiveMasks, ConfigKeysAreValidatedAndNameTheKey) {
  dmtest::TempDir dir;
  const auto error_of = [&](const std::string& set) {
    return dmtest::message_of<dm::ConfigError>(
        [&] { dm::load_config(std::nullopt, {dm::parse_override(set)}, dir.path()); });
  };
  for (const char* bad :
       {"live.mask.depth_band=[1]", "live.mask.depth_band=[1, 2, 3]", "live.mask.depth_band=2",
        "live.mask.depth_band=[2, 1]", "live.mask.depth_band=[1, 1]", "live.mask.depth_band=[0, .inf]",
        "live.mask.depth_band=[nan, 1]", "live.mask.depth_band=[a, 1]"})
    EXPECT_TRUE(dmtest::Contains(error_of(bad), "'live.mask.depth_band'")) << bad;
  // A path is taken as written through --set (a file may be named "[a]"); a list in a file is refused.
  EXPECT_EQ(
      dm::load_config(std::nullopt, {dm::parse_override("live.mask.static=[a]")}, dir.path()).live.mask.static_file,
      dir.path() / "[a]");
  EXPECT_TRUE(dmtest::Contains(dmtest::message_of<dm::ConfigError>([&] {
                                 dm::load_config_text("live:\n  mask:\n    static: [a]\n", "c.yaml", dir.path(), {},
                                                      dir.path());
                               }),
                               "'live.mask.static'"));
  EXPECT_TRUE(dmtest::Contains(error_of("live.mask.hsv=1"), "unknown config key 'live.mask.hsv'"));
  EXPECT_TRUE(dmtest::Contains(error_of("live.mask=3"), "'live.mask'"));
}

TEST(LiveMasks, KeysArePrintedReadBackAndLeaveTheManifestHashAlone) {
  dmtest::TempDir dir;
  const dm::Config c = dm::load_config(
      std::nullopt,
      {dm::parse_override("live.mask.static=roi.png"), dm::parse_override("live.mask.depth_band=[0.4, 1.25]")},
      dir.path());
  EXPECT_EQ(c.live.mask.static_file, dir / "roi.png");
  ASSERT_TRUE(c.live.mask.depth_band);
  EXPECT_EQ(c.live.mask.depth_band->min, 0.4);
  EXPECT_EQ(c.live.mask.depth_band->max, 1.25);
  const std::string yaml = dm::to_yaml(c, dir.path());
  EXPECT_TRUE(dmtest::Contains(yaml, "static: roi.png"));
  EXPECT_TRUE(dmtest::Contains(yaml, "depth_band: [0.4, 1.25]"));
  dmtest::write_text(dir / "printed.yaml", yaml);
  const dm::Config back = dm::load_config(dir / "printed.yaml", {}, dir.path());
  EXPECT_EQ(back.live.mask.static_file, c.live.mask.static_file);
  ASSERT_TRUE(back.live.mask.depth_band);
  EXPECT_EQ(back.live.mask.depth_band->min, 0.4);
  EXPECT_EQ(back.live.mask.depth_band->max, 1.25);
  EXPECT_EQ(dm::to_yaml(back, dir.path()), yaml);
  // Defaults print as nulls and read back as none.
  const std::string defaults = dm::to_yaml(dm::Config{});
  EXPECT_TRUE(dmtest::Contains(defaults, "static: ~"));
  EXPECT_TRUE(dmtest::Contains(defaults, "depth_band: ~"));
  EXPECT_EQ(dm::settings_hash(c), dm::settings_hash(dm::load_config(std::nullopt, {}, dir.path())));
}

}  // namespace
