// live.mask.color_key on the cpu backend: the config key (validation, errors naming the key and the
// line, printing), run_live with the key alone, AND-ed with the mask stream, the static mask and the
// depth band (outputs equal to the cvtColor reference applied to the plain gold), the frame errors
// (no colour, another size), and FrameSlot's key (allocation once, errors).
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <map>

#include "color_key_support.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/live_runner.h"
#include "depthmask/manifest.h"
#include "live_support.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

constexpr int kW = 41, kH = 23;
constexpr uint64_t kFrames = 9;

dm::Config live_config() {
  dm::Config c;
  c.depth.max = 9.0;
  c.live.overflow = dm::Overflow::Block;
  c.live.buffers = 3;
  c.live.stats_interval = 0;
  return c;
}

dm::LiveMaskConfig::ColorKey color_key(int h0, int h1, int s0, int s1, int v0, int v1, bool inside) {
  dm::LiveMaskConfig::ColorKey k;
  k.h[0] = h0, k.h[1] = h1, k.s[0] = s0, k.s[1] = s1, k.v[0] = v0, k.v[1] = v1;
  k.keep_inside = inside;
  return k;
}

using Recorder = dmtest::OutputRecorder;

std::map<uint64_t, cv::Mat> run(const dm::Config& c, bool frames_have_masks) {
  auto backend = dmtest::cpu_backend();
  dmtest::ColorFakeSource src(kW, kH, kFrames);
  src.no_mask = !frames_have_masks;
  Recorder rec;
  const dm::LiveSummary s = dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr, &rec);
  EXPECT_EQ(s.processed, kFrames);
  EXPECT_EQ(s.failed, 0u);
  return rec.outputs;
}

// How many pixels the key keeps: the tests check that it decides something either way.
int kept_pixels(const cv::Mat& keep) { return cv::countNonZero(keep); }

TEST(LiveColorKey, KeyAndedWithTheMaskStreamEqualsTheReference) {
  for (const bool inside : {true, false}) {
    dm::Config c = live_config();
    c.output.invalid = -1.0f;
    c.live.mask.color_key = color_key(20, 100, 40, 255, 30, 255, inside);
    const auto outputs = run(c, true);
    ASSERT_EQ(outputs.size(), kFrames);
    for (const auto& [seq, out] : outputs) {
      const cv::Mat keep = dmtest::key_reference(dmtest::fake_color(seq, kW, kH), *c.live.mask.color_key);
      ASSERT_GT(kept_pixels(keep), kW * kH / 10);
      ASSERT_LT(kept_pixels(keep), kW * kH * 9 / 10);
      EXPECT_TRUE(dmtest::SameBits(dmtest::invalid_where_dropped(dmtest::gold_frame(c, seq, kW, kH), keep, -1.0f), out))
          << "frame " << seq << (inside ? " inside" : " outside");
    }
  }
}

TEST(LiveColorKey, WrappingHueKeyAloneOnFramesWithoutMasks) {
  dm::Config c = live_config();
  c.live.mask.color_key = color_key(160, 15, 0, 255, 0, 255, true);  // reds, through 0
  const auto outputs = run(c, false);
  ASSERT_EQ(outputs.size(), kFrames);
  for (const auto& [seq, out] : outputs) {
    cv::Mat depth, unused;
    dmtest::fake_frame(seq, kW, kH, depth, unused);
    const cv::Mat keep = dmtest::key_reference(dmtest::fake_color(seq, kW, kH), *c.live.mask.color_key);
    ASSERT_GT(kept_pixels(keep), 0);
    cv::Mat want(kH, kW, CV_32FC1);
    for (int y = 0; y < kH; ++y)
      for (int x = 0; x < kW; ++x) {
        const uint16_t raw = depth.at<uint16_t>(y, x);  // mm; depth.max 9 m
        want.at<float>(y, x) =
            keep.at<uint8_t>(y, x) && raw > 0 && raw <= 9000 ? static_cast<float>(raw) * 0.001f : 0.0f;
      }
    EXPECT_TRUE(dmtest::SameBits(want, out)) << "frame " << seq;
  }
}

TEST(LiveColorKey, StreamStaticDepthBandAndKeyTogether) {
  dmtest::TempDir dir;
  cv::Mat roi(kH, kW, CV_8UC1);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) roi.at<uint8_t>(y, x) = (x / 5 + y / 4) % 2 ? 200 : 0;
  ASSERT_TRUE(cv::imwrite((dir / "roi.png").string(), roi));
  dm::Config c = live_config();
  c.live.mask.static_file = dir / "roi.png";
  c.live.mask.depth_band = dm::LiveMaskConfig::DepthBand{1.0, 6.0};
  c.live.mask.color_key = color_key(0, 179, 30, 255, 0, 255, true);  // any saturated colour: greys go
  dm::Config gold = live_config();
  gold.depth.min = 1.0, gold.depth.max = 6.0;
  const auto outputs = run(c, true);
  ASSERT_EQ(outputs.size(), kFrames);
  for (const auto& [seq, out] : outputs) {
    cv::Mat keep = dmtest::key_reference(dmtest::fake_color(seq, kW, kH), *c.live.mask.color_key);
    keep.setTo(0, roi == 0);
    EXPECT_TRUE(dmtest::SameBits(dmtest::invalid_where_dropped(dmtest::gold_frame(gold, seq, kW, kH), keep, 0.0f), out))
        << "frame " << seq;
  }
}

TEST(LiveColorKey, FrameWithoutColorStopsTheRunNamingTheFrame) {
  dm::Config c = live_config();
  c.live.mask.color_key = color_key(0, 179, 0, 255, 0, 255, true);
  auto backend = dmtest::cpu_backend();
  dmtest::ColorFakeSource src(kW, kH, 3);
  src.color_size = cv::Size();
  const std::string msg =
      dmtest::message_of<dm::InputError>([&] { dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, "live frame f0"));
  EXPECT_TRUE(dmtest::Contains(msg, "no color image"));
  EXPECT_TRUE(dmtest::Contains(msg, "live.mask.color_key"));
  EXPECT_TRUE(dmtest::Contains(msg, src.describe()));
}

TEST(LiveColorKey, ColorOfAnotherSizeStopsTheRunNamingFrameAndSizes) {
  dm::Config c = live_config();
  c.live.mask.color_key = color_key(0, 179, 0, 255, 0, 255, true);
  auto backend = dmtest::cpu_backend();
  dmtest::ColorFakeSource src(kW, kH, 3);
  src.color_size = cv::Size(kW * 2, kH * 2);
  const std::string msg =
      dmtest::message_of<dm::InputError>([&] { dm::run_live(c, *backend, src, dm::LiveLimits{}, nullptr); });
  EXPECT_TRUE(dmtest::Contains(msg, "live frame f0"));
  EXPECT_TRUE(dmtest::Contains(msg, "82x46"));
  EXPECT_TRUE(dmtest::Contains(msg, "41x23"));
  EXPECT_TRUE(dmtest::Contains(msg, "registered"));
}

TEST(LiveColorKey, WithoutTheKeyColourIsIgnoredAsBefore) {
  // The same coloured frames and no key: exactly the mask stream's gold.
  const dm::Config c = live_config();
  const auto outputs = run(c, true);
  for (const auto& [seq, out] : outputs) EXPECT_TRUE(dmtest::SameBits(dmtest::gold_frame(c, seq, kW, kH), out)) << seq;
}

TEST(LiveColorKey, ConfigKeyIsValidatedNamingTheKeyAndLine) {
  dmtest::TempDir dir;
  const auto error_of = [&](std::vector<std::string> sets) {
    std::vector<dm::Override> o;
    for (const auto& s : sets) o.push_back(dm::parse_override(s));
    return dmtest::message_of<dm::ConfigError>([&] { dm::load_config(std::nullopt, o, dir.path()); });
  };
  const std::string k = "live.mask.color_key=";
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 180], s: [0, 255], v: [0, 255]}"}), "'live.mask.color_key.h'"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 180], s: [0, 255], v: [0, 255]}"}), "0..179"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [-1, 10], s: [0, 255], v: [0, 255]}"}), "got [-1, 10]"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 10], s: [0, 256], v: [0, 255]}"}), "'live.mask.color_key.s'"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 10], s: [9, 8], v: [0, 255]}"}), "expected min <= max"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 10], s: [0, 255], v: [200, 100]}"}), "'live.mask.color_key.v'"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 10, 20], s: [0, 255], v: [0, 255]}"}), "3 numbers"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: 5, s: [0, 255], v: [0, 255]}"}), "expected [min, max]"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [a, 5], s: [0, 255], v: [0, 255]}"}), "expected an integer"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 10], s: [0, 255]}"}), "'v' is missing"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{s: [0, 255], v: [0, 255]}"}), "'h' is missing"));
  EXPECT_TRUE(dmtest::Contains(error_of({"live.mask.color_key.h=[1, 2]"}), "'s' is missing"));
  EXPECT_TRUE(
      dmtest::Contains(error_of({k + "{h: [0, 10], s: [0, 255], v: [0, 255], keep: in}"}), "allowed values: inside"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "{h: [0, 10], s: [0, 255], v: [0, 255], hue: 3}"}),
                               "unknown config key 'live.mask.color_key.hue'"));
  EXPECT_TRUE(dmtest::Contains(error_of({k + "green"}), "'live.mask.color_key'"));

  // From a file: the error names the line.
  dmtest::write_text(dir / "c.yaml",
                     "live:\n  mask:\n    color_key:\n      h: [35, 85]\n      s: [300, 255]\n      v: [0, 255]\n");
  const std::string msg = dmtest::message_of<dm::ConfigError>([&] { dm::load_config(dir / "c.yaml", {}, dir.path()); });
  EXPECT_TRUE(dmtest::Contains(msg, "line 5"));
  EXPECT_TRUE(dmtest::Contains(msg, "saturation in 0..255"));
}

TEST(LiveColorKey, ConfigKeyIsReadMergedPrintedAndReadBack) {
  dmtest::TempDir dir;
  dm::Config c = dm::load_config(
      std::nullopt,
      {dm::parse_override("live.mask.color_key={h: [170, 10], s: [80, 255], v: [40, 250], keep: outside}"),
       dm::parse_override("live.mask.color_key.h=[35, 85]")},  // an override merges into the key
      dir.path());
  ASSERT_TRUE(c.live.mask.color_key);
  const auto& k = *c.live.mask.color_key;
  EXPECT_EQ(k.h[0], 35);
  EXPECT_EQ(k.h[1], 85);
  EXPECT_EQ(k.s[0], 80);
  EXPECT_EQ(k.v[1], 250);
  EXPECT_FALSE(k.keep_inside);
  const std::string yaml = dm::to_yaml(c, dir.path());
  EXPECT_TRUE(dmtest::Contains(yaml, "color_key: {h: [35, 85], s: [80, 255], v: [40, 250], keep: outside}")) << yaml;
  dmtest::write_text(dir / "printed.yaml", yaml);
  const dm::Config back = dm::load_config(dir / "printed.yaml", {}, dir.path());
  ASSERT_TRUE(back.live.mask.color_key);
  EXPECT_EQ(dm::to_yaml(back, dir.path()), yaml);
  // keep defaults to inside; ~ removes the key; the default prints as ~; the manifest hash ignores it.
  const dm::Config inside = dm::load_config(
      std::nullopt, {dm::parse_override("live.mask.color_key={h: [1, 2], s: [3, 4], v: [5, 6]}")}, dir.path());
  EXPECT_TRUE(inside.live.mask.color_key->keep_inside);
  const dm::Config none = dm::load_config(std::nullopt,
                                          {dm::parse_override("live.mask.color_key={h: [1, 2], s: [3, 4], v: [5, 6]}"),
                                           dm::parse_override("live.mask.color_key=~")},
                                          dir.path());
  EXPECT_FALSE(none.live.mask.color_key);
  EXPECT_TRUE(dmtest::Contains(dm::to_yaml(dm::Config{}), "color_key: ~"));
  EXPECT_EQ(dm::settings_hash(c), dm::settings_hash(dm::load_config(std::nullopt, {}, dir.path())));
}

// mask.erode applies to the combined mask: the key AND the mask test, then the erode window.
TEST(FrameSlotColorKey, ErodeAppliesToTheMaskTestAndKeyCombined) {
  auto backend = dmtest::cpu_backend();
  dm::FrameSlot keyed(*backend), plain(*backend);
  dm::ColorKey key;
  key.s_min = 40;
  keyed.set_color_key(key);
  dm::MaskParams p;
  dm::set_depth_range(p, 0.001, 0.0, 9.0);
  p.erode = 1;
  p.invalid = -1.0f;
  cv::Mat depth, mask;
  dmtest::fake_frame(3, kW, kH, depth, mask);
  const cv::Mat color = dmtest::fake_color(3, kW, kH);
  keyed.set(depth, mask, color);
  keyed.run_mask(p);
  dm::LiveMaskConfig::ColorKey k;
  k.s[0] = 40;
  cv::Mat both = dmtest::key_reference(color, k);
  both.setTo(0, mask == 0);  // the mask test: mask > 0
  plain.set(depth, both);
  plain.run_mask(dm::union_mask_params(p));
  EXPECT_TRUE(dmtest::SameBits(plain.out(), keyed.out()));
  // And erode made a difference: without it more pixels are kept.
  dm::MaskParams no_erode = p;
  no_erode.erode = 0;
  keyed.run_mask(no_erode);
  EXPECT_GT(cv::countNonZero(keyed.out() > 0), cv::countNonZero(plain.out() > 0));
}

TEST(FrameSlotColorKey, AllocatesOnceForSameSizedFramesAndRejectsMissingOrMismatchedColour) {
  auto backend = dmtest::cpu_backend();
  dm::FrameSlot slot(*backend);
  dm::ColorKey key;
  key.s_min = 40;
  slot.set_color_key(key);
  dm::MaskParams p;
  uint64_t after_first = 0;
  for (uint64_t seq = 0; seq < 5; ++seq) {
    cv::Mat depth, mask;
    dmtest::fake_frame(seq, kW, kH, depth, mask);
    const cv::Mat color = dmtest::fake_color(seq, kW, kH);
    slot.set(depth, mask, color);
    EXPECT_NE(slot.color().data, color.data);  // copied into the slot's backend buffer
    slot.run_mask(p);
    if (seq == 0) after_first = backend->stats().allocations;
  }
  EXPECT_EQ(backend->stats().allocations, after_first);

  cv::Mat depth, mask;
  dmtest::fake_frame(0, kW, kH, depth, mask);
  slot.set(depth, mask);
  std::string msg = dmtest::message_of<dm::InputError>([&] { slot.run_mask(p); });
  EXPECT_TRUE(dmtest::Contains(msg, "no color image"));
  slot.set(depth, mask, dmtest::fake_color(0, kW + 1, kH));
  msg = dmtest::message_of<dm::InputError>([&] { slot.run_mask(p); });
  EXPECT_TRUE(dmtest::Contains(msg, "42x23"));
  EXPECT_TRUE(dmtest::Contains(msg, "41x23"));
  msg = dmtest::message_of<dm::InputError>([&] { slot.set(depth, mask, cv::Mat(kH, kW, CV_8UC1, cv::Scalar(0))); });
  EXPECT_TRUE(dmtest::Contains(msg, "8-bit BGR"));
  EXPECT_THROW(slot.set_color_key(dm::ColorKey{0, 200}), std::invalid_argument);
}

}  // namespace
