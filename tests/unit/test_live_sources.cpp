// Live sources: URI parsing, the synthetic scene, replay of dataset folders, GStreamer and V4L2.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio/registry.hpp>

#include <atomic>
#include <cstdlib>
#include <fstream>

#include "depthmask/errors.h"
#include "depthmask/live.h"
#include "depthmask/live_runner.h"
#include "depthmask/synth.h"
#include "layout_fixtures.h"
#include "live_support.h"
#include "png_support.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::Contains;
using dmtest::SameBits;

namespace {

std::string config_error(const std::string& uri) {
  return dmtest::message_of<dm::ConfigError>([&] { dm::parse_source_uri(uri); });
}

// The ConfigError make_live_source throws for `uri`.
std::string config_error_of_make(const std::string& uri) {
  return dmtest::message_of<dm::ConfigError>([&] { dm::make_live_source(dm::parse_source_uri(uri), dm::Config{}); });
}

std::unique_ptr<dm::LiveSource> open_source(const std::string& uri, const dm::Config& c = {}) {
  auto s = dm::make_live_source(dm::parse_source_uri(uri), c);
  s->open();
  return s;
}

}  // namespace

TEST(SourceUri, SplitsSchemePathAndQuery) {
  const auto u = dm::parse_source_uri("replay:///data/scene?fps=15&loop=1");
  EXPECT_EQ(u.text, "replay:///data/scene?fps=15&loop=1");
  EXPECT_EQ(u.scheme, "replay");
  EXPECT_EQ(u.path, "/data/scene");
  EXPECT_EQ(u.query.at("fps"), "15");
  EXPECT_EQ(u.query.at("loop"), "1");

  const auto s = dm::parse_source_uri("synthetic://?size=64x48&fps=0&frames=3");
  EXPECT_EQ(s.path, "");
  EXPECT_EQ(s.query.at("size"), "64x48");
  EXPECT_TRUE(dm::parse_source_uri("synthetic://").query.empty());

  const auto v = dm::parse_source_uri("v4l2:///dev/video0");
  EXPECT_EQ(v.path, "/dev/video0");
}

TEST(SourceUri, GstPipelineIsTheWholeRest) {
  // '?', '&' and '=' belong to the pipeline, not to a query.
  const std::string p = "videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8 ! appsink name=a?b&c";
  const auto u = dm::parse_source_uri("gst://" + p);
  EXPECT_EQ(u.scheme, "gst");
  EXPECT_EQ(u.path, p);
  EXPECT_TRUE(u.query.empty());
}

TEST(SourceUri, ErrorsNameTheUriAndTheProblem) {
  std::string m = config_error("/data/scene");
  EXPECT_TRUE(Contains(m, "'/data/scene'"));
  EXPECT_TRUE(Contains(m, "no scheme"));
  EXPECT_TRUE(Contains(m, "synthetic, replay, gst, v4l2"));

  m = config_error("rtsp://cam/stream");
  EXPECT_TRUE(Contains(m, "'rtsp://cam/stream'"));
  EXPECT_TRUE(Contains(m, "unknown scheme 'rtsp'"));
  EXPECT_TRUE(Contains(m, "synthetic, replay, gst, v4l2"));

  for (const char* u : {"replay://", "replay://?fps=3", "gst://", "v4l2://"}) {
    m = config_error(u);
    EXPECT_TRUE(Contains(m, std::string("'") + u + "'"));
    EXPECT_TRUE(Contains(m, "empty path"));
  }
  EXPECT_TRUE(Contains(config_error("synthetic://foo"), "takes no path"));

  m = config_error("replay://d?fps");
  EXPECT_TRUE(Contains(m, "malformed query item 'fps'"));
  EXPECT_TRUE(Contains(config_error("replay://d?fps=1&&loop=1"), "malformed query item ''"));
  EXPECT_TRUE(Contains(config_error("replay://d?=1"), "malformed query item '=1'"));
  EXPECT_TRUE(Contains(config_error("replay://d?fps=1&fps=2"), "'fps' given twice"));

  m = config_error("replay://d?speed=2");
  EXPECT_TRUE(Contains(m, "unknown query key 'speed'"));
  EXPECT_TRUE(Contains(m, "allowed: fps, loop"));
  EXPECT_TRUE(Contains(config_error("synthetic://?loop=1"), "allowed: size, fps, frames"));

  for (const char* fps : {"abc", "-1", "", "30fps", "nan", "inf"})
    EXPECT_TRUE(Contains(config_error(std::string("synthetic://?fps=") + fps), std::string("fps '") + fps + "'"));
  for (const char* size : {"640", "640x", "x480", "0x480", "640x-1", "axb", "640X480", "20000x10"})
    EXPECT_TRUE(Contains(config_error(std::string("synthetic://?size=") + size), std::string("size '") + size + "'"));
  EXPECT_TRUE(Contains(config_error("synthetic://?frames=0"), "frames '0'"));
  EXPECT_TRUE(Contains(config_error("synthetic://?frames=2.5"), "frames '2.5'"));
  EXPECT_TRUE(Contains(config_error("replay://d?loop=maybe"), "loop 'maybe' is not a boolean"));
}

TEST(SyntheticSource, DeliversTheRenderedSequence) {
  auto s = open_source("synthetic://?size=33x31&fps=200&frames=3");
  EXPECT_TRUE(Contains(s->describe(), "33x31"));
  dm::CapturedFrame f;
  auto last = std::chrono::steady_clock::time_point{};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s->read(f));
    const auto want = dm::render_synthetic_frame(i, 33, 31);
    EXPECT_TRUE(SameBits(f.depth, want.depth_mm));
    EXPECT_TRUE(SameBits(f.mask, want.mask));
    EXPECT_TRUE(SameBits(f.color, want.color));
    EXPECT_EQ(f.sequence, static_cast<uint64_t>(i));
    EXPECT_EQ(f.id, "00000" + std::to_string(i));
    EXPECT_GT(f.captured, last);
    last = f.captured;
  }
  EXPECT_FALSE(s->read(f));
  // open() starts the sequence again.
  s->open();
  ASSERT_TRUE(s->read(f));
  EXPECT_EQ(f.sequence, 0u);
}

TEST(SyntheticSource, IsEndlessWithoutFrames) {
  auto s = open_source("synthetic://?size=8x6&fps=0");
  dm::CapturedFrame f;
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(s->read(f));
  EXPECT_EQ(f.sequence, 49u);
}

TEST(ReplaySource, PlaysASyntheticDatasetInOrderThenEnds) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 3, 32, 24);
  auto s = open_source("replay://" + dir.path().string() + "?fps=0");
  dm::CapturedFrame f;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s->read(f));
    const std::string id = "00000" + std::to_string(i);
    EXPECT_EQ(f.id, id);
    EXPECT_EQ(f.sequence, static_cast<uint64_t>(i));
    EXPECT_TRUE(SameBits(f.depth, cv::imread((dir.path() / "depth" / (id + ".png")).string(), cv::IMREAD_UNCHANGED)));
    EXPECT_TRUE(SameBits(f.mask, cv::imread((dir.path() / "mask" / (id + ".png")).string(), cv::IMREAD_UNCHANGED)));
    EXPECT_TRUE(SameBits(f.color, cv::imread((dir.path() / "color" / (id + ".png")).string(), cv::IMREAD_COLOR)));
    EXPECT_TRUE(SameBits(f.depth, dm::render_synthetic_frame(i, 32, 24).depth_mm));
  }
  EXPECT_FALSE(s->read(f));
  EXPECT_FALSE(s->read(f));
}

TEST(ReplaySource, InputLimitsApplyBeforeReadingAndDecoding) {
  // The batch loader's bounds hold for replayed files too: input.max_image_pixels from the header
  // before decoding, input.max_file_bytes before reading. Each is the frame's error, naming the file.
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 2, 32, 24);
  dm::Config c;
  c.input.max_image_pixels = 32 * 24 - 1;
  auto s = open_source("replay://" + dir.path().string() + "?fps=0", c);
  dm::CapturedFrame f;
  std::string m = dmtest::message_of<dm::InputError>([&] { s->read(f); });
  EXPECT_TRUE(
      Contains(m, "depth file '" + (dir.path() / "depth" / "000000.png").string() + "' is a PNG image of 32x24 pixels"))
      << m;
  EXPECT_TRUE(Contains(m, "input.max_image_pixels")) << m;
  c = dm::Config{};
  c.input.max_file_bytes = 10;
  s = open_source("replay://" + dir.path().string() + "?fps=0", c);
  m = dmtest::message_of<dm::InputError>([&] { s->read(f); });
  EXPECT_TRUE(Contains(m, "depth file '" + (dir.path() / "depth" / "000000.png").string() + "' is ")) << m;
  EXPECT_TRUE(Contains(m, "input.max_file_bytes")) << m;
  c.input.max_file_bytes = uint64_t{1} << 20;
  c.input.max_image_pixels = 32 * 24;
  s = open_source("replay://" + dir.path().string() + "?fps=0", c);
  ASSERT_TRUE(s->read(f));
  EXPECT_EQ(f.depth.size(), cv::Size(32, 24));
}

TEST(ReplaySource, LoopRestartsAtTheEnd) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 2, 16, 12);
  auto s = open_source("replay://" + dir.path().string() + "?fps=1000&loop=1");
  dm::CapturedFrame f;
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(s->read(f));
    ids.push_back(f.id);
    EXPECT_EQ(f.sequence, static_cast<uint64_t>(i));  // the sequence keeps counting across passes
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"000000", "000001", "000000", "000001", "000000"}));
  EXPECT_TRUE(SameBits(f.depth, dm::render_synthetic_frame(0, 16, 12).depth_mm));
}

TEST(ReplaySource, MissingFolderIsAnInputErrorNamingIt) {
  dmtest::TempDir dir;
  const fs::path missing = dir.path() / "no-such-scene";
  auto s = dm::make_live_source(dm::parse_source_uri("replay://" + missing.string()), dm::Config{});
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->open(); });
  EXPECT_TRUE(Contains(m, missing.string()));
}

TEST(ReplaySource, MissingFrameFileIsAnInputErrorNamingIt) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 2, 16, 12);
  auto s = open_source("replay://" + dir.path().string() + "?fps=0");
  fs::remove(dir.path() / "mask" / "000001.png");
  dm::CapturedFrame f;
  ASSERT_TRUE(s->read(f));
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->read(f); });
  EXPECT_TRUE(Contains(m, (dir.path() / "mask" / "000001.png").string()));
}

TEST(ReplaySource, PaletteMasksGiveTheirIndicesAsRunReadsThem) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 1, 32, 24);
  cv::Mat indices(24, 32, CV_8UC1);
  for (int y = 0; y < 24; ++y)
    for (int x = 0; x < 32; ++x) indices.at<uint8_t>(y, x) = static_cast<uint8_t>((x + y) % 7);
  dmtest::write_palette_png(dir.path() / "mask" / "000000.png", indices, 8, 7, false, false);
  auto s = open_source("replay://" + dir.path().string() + "?fps=0");
  dm::CapturedFrame f;
  ASSERT_TRUE(s->read(f));
  EXPECT_TRUE(SameBits(f.mask, indices));
  EXPECT_FALSE(f.mask_tests);
}

TEST(ReplaySource, BopInstanceMasksUniteByTheMaskTestAsRunDoes) {
  // mask.invert keeps where an instance mask is 0: the union of the tests (run's rule) differs from
  // the union of nonzero pixels, and the runner must not test the union again.
  dmtest::TempDir dir;
  dmfix::write_bop(dir.path(), /*extra_instance=*/true);
  dm::Config c;
  c.mask.invert = true;
  c.depth.max = 1e4;
  auto s = open_source("replay://" + dir.path().string() + "?fps=0", c);
  dm::CapturedFrame f;
  ASSERT_TRUE(s->read(f));
  EXPECT_TRUE(f.mask_tests);
  const cv::Mat i0 = cv::imread((dir.path() / "mask_visib" / "000000_000000.png").string(), cv::IMREAD_UNCHANGED);
  const cv::Mat i1 = cv::imread((dir.path() / "mask_visib" / "000000_000001.png").string(), cv::IMREAD_UNCHANGED);
  const dm::MaskParams p = dm::mask_params(c);
  ASSERT_EQ(f.mask.size(), i0.size());
  for (int y = 0; y < i0.rows; ++y)
    for (int x = 0; x < i0.cols; ++x) {
      const bool keep = dm::mask_keeps(i0.at<uint8_t>(y, x), p) || dm::mask_keeps(i1.at<uint8_t>(y, x), p);
      ASSERT_EQ(f.mask.at<uint8_t>(y, x), keep ? 255 : 0) << x << "," << y;
    }
  // Live output of that frame = run's masking of the same union (FrameSlot, union_mask_params).
  c.live.overflow = dm::Overflow::Block;
  c.live.stats_interval = 0;
  auto backend = dmtest::cpu_backend();
  auto replay = dm::make_live_source(dm::parse_source_uri("replay://" + dir.path().string() + "?fps=0"), c);
  dmtest::OutputRecorder rec;
  dm::run_live(c, *backend, *replay, dm::LiveLimits{}, nullptr, &rec);
  ASSERT_TRUE(rec.outputs.count(0));
  dm::FrameSlot slot(*backend);
  slot.set(cv::imread((dir.path() / "depth" / "000000.png").string(), cv::IMREAD_UNCHANGED), f.mask);
  slot.run_mask(dm::union_mask_params(dm::mask_params(c)));
  EXPECT_TRUE(SameBits(rec.outputs.at(0), slot.out()));
}

TEST(ReplaySource, ApcSceneFromSharedData) {
  const fs::path scene = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000";
  if (!fs::exists(scene / "cam.info.txt")) GTEST_SKIP() << "no APC scene at " << scene << " (DEPTHMASK_TEST_DATA)";
  auto s = open_source("replay://" + scene.string() + "?fps=0");
  EXPECT_TRUE(Contains(s->describe(), "APC"));
  dm::CapturedFrame f;
  int n = 0;
  while (s->read(f)) {
    const std::string id = "00000" + std::to_string(n);
    EXPECT_EQ(f.id, id);
    EXPECT_TRUE(SameBits(f.depth, cv::imread((scene / ("frame-" + id + ".depth.png")).string(), cv::IMREAD_UNCHANGED)));
    EXPECT_TRUE(
        SameBits(f.mask, cv::imread((scene / "segm" / ("frame-" + id + ".segm.png")).string(), cv::IMREAD_UNCHANGED)));
    EXPECT_EQ(f.depth.type(), CV_16UC1);
    EXPECT_EQ(f.color.type(), CV_8UC3);
    ++n;
  }
  EXPECT_EQ(n, 8);
}

TEST(ReplaySource, DecodeAheadKeepsTheOrderOverManyLoopedPasses) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 7, 24, 16);
  auto s = open_source("replay://" + dir.path().string() + "?fps=0&loop=1");
  dm::CapturedFrame f;
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(s->read(f));
    EXPECT_EQ(f.sequence, static_cast<uint64_t>(i));
    EXPECT_EQ(f.id, "00000" + std::to_string(i % 7));
    const auto want = dm::render_synthetic_frame(i % 7, 24, 16);
    EXPECT_TRUE(SameBits(f.depth, want.depth_mm)) << "frame " << i;
    EXPECT_TRUE(SameBits(f.mask, want.mask)) << "frame " << i;
    EXPECT_TRUE(SameBits(f.color, want.color)) << "frame " << i;
  }
}

namespace {
// OpenCV's own allocator, counting the image buffers it hands out.
class CountingAllocator : public cv::MatAllocator {
 public:
  mutable std::atomic<int> count{0};
  cv::UMatData* allocate(int dims, const int* sizes, int type, void* data, size_t* step, cv::AccessFlag flags,
                         cv::UMatUsageFlags usage) const override {
    if (!data) ++count;
    return std_->allocate(dims, sizes, type, data, step, flags, usage);
  }
  bool allocate(cv::UMatData* u, cv::AccessFlag flags, cv::UMatUsageFlags usage) const override {
    return std_->allocate(u, flags, usage);
  }
  void deallocate(cv::UMatData* u) const override { std_->deallocate(u); }

 private:
  cv::MatAllocator* std_ = cv::Mat::getStdAllocator();
};
}  // namespace

TEST(ReplaySource, SteadyStateDecodesIntoTheRingsImages) {
  // One CapturedFrame read again and again (as the runner does): after the first pass through the
  // ring, frames are decoded into its images; no image memory is allocated per frame.
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 3, 24, 16);
  // Static: images it made may outlive the test (OpenCV's caches) and name it when freed.
  static CountingAllocator counting;
  counting.count = 0;
  cv::MatAllocator* const before = cv::Mat::getDefaultAllocator();
  cv::Mat::setDefaultAllocator(&counting);
  int warm = 0, steady = 0;
  {
    auto s = open_source("replay://" + dir.path().string() + "?fps=0&loop=1");
    dm::CapturedFrame f;
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(s->read(f));
    warm = counting.count.exchange(0);
    for (int i = 0; i < 60; ++i) ASSERT_TRUE(s->read(f));
    steady = counting.count.load();
  }
  cv::Mat::setDefaultAllocator(before);
  EXPECT_GT(warm, 0);  // the ring's images were made while warming up
  EXPECT_EQ(steady, 0) << "image buffers allocated over 60 frames in steady state";
}

TEST(ReplaySource, FramesKeptByTheCallerAreNotOverwritten) {
  // The decode ring reuses a slot's images only when nobody else holds them.
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 5, 24, 16);
  auto s = open_source("replay://" + dir.path().string() + "?fps=0&loop=1");
  std::vector<dm::CapturedFrame> kept(30);
  for (auto& f : kept) ASSERT_TRUE(s->read(f));
  for (size_t i = 0; i < kept.size(); ++i)
    EXPECT_TRUE(SameBits(kept[i].depth, dm::render_synthetic_frame(static_cast<int>(i % 5), 24, 16).depth_mm)) << i;
}

TEST(ReplaySource, DecodeAheadKeepsTheFixedRate) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 4, 24, 16);
  auto s = open_source("replay://" + dir.path().string() + "?fps=50&loop=1");
  dm::CapturedFrame f;
  ASSERT_TRUE(s->read(f));
  const auto first = f.captured;
  for (int i = 1; i < 10; ++i) ASSERT_TRUE(s->read(f));
  // Released at 50 fps (9 periods of 20 ms), not as fast as they were decoded (a few ms). Single gaps
  // vary with the machine's load: a late wake-up (the first frame's too) shortens the next gap.
  EXPECT_GE(f.captured - first, std::chrono::milliseconds(160));
}

namespace {
// The TUM fixture (4 frames, rgb 5 ms after depth; an rgb frame at .5 and a depth frame at .9 with
// no partner), optionally without frame `drop_rgb`'s rgb line.
fs::path tum_fixture(const fs::path& root, int drop_rgb = -1) {
  dmfix::write_tum(root);
  if (drop_rgb >= 0) {
    const std::string line = dmfix::kTumFrames[static_cast<size_t>(drop_rgb)].rgb_ts + " rgb/";
    std::ifstream in(root / "rgb.txt");
    std::string text, l;
    while (std::getline(in, l))
      if (l.rfind(line, 0) != 0) text += l + "\n";
    dmtest::write_text(root / "rgb.txt", text);
  }
  return root;
}
}  // namespace

TEST(ReplaySource, TumStreamsArePairedByTimestampAndTheUnpairedCounted) {
  dmtest::TempDir dir;
  const fs::path root = tum_fixture(dir.path());
  auto s = open_source("replay://" + root.string());
  EXPECT_TRUE(Contains(s->describe(), "recorded timestamps"));
  EXPECT_TRUE(Contains(s->describe(), "paired within 20 ms"));
  dm::CapturedFrame f;
  for (size_t i = 0; i < dmfix::kTumFrames.size(); ++i) {
    ASSERT_TRUE(s->read(f)) << i;
    const auto& t = dmfix::kTumFrames[i];
    EXPECT_EQ(f.id, t.depth_ts);
    EXPECT_TRUE(SameBits(f.depth, dmfix::depth16(static_cast<int>(i))));
    EXPECT_TRUE(SameBits(f.color, dmfix::color8(static_cast<int>(i))));
    EXPECT_TRUE(SameBits(f.mask, dmfix::mask8(static_cast<int>(i))));
    EXPECT_EQ(s->unpaired(), 0u);
  }
  EXPECT_FALSE(s->read(f));
  EXPECT_EQ(s->unpaired(), 2u);  // the rgb frame at .5 and the depth frame at .9
}

TEST(ReplaySource, TumFrameWithoutItsRgbIsDroppedWhenPlaybackPassesIt) {
  dmtest::TempDir dir;
  const fs::path root = tum_fixture(dir.path(), 2);
  auto s = open_source("replay://" + root.string());
  dm::CapturedFrame f;
  std::vector<std::string> ids;
  std::vector<uint64_t> unpaired;
  while (s->read(f)) {
    ids.push_back(f.id);
    unpaired.push_back(s->unpaired());
  }
  const auto& t = dmfix::kTumFrames;
  EXPECT_EQ(ids, (std::vector<std::string>{t[0].depth_ts, t[1].depth_ts, t[3].depth_ts}));
  EXPECT_EQ(unpaired, (std::vector<uint64_t>{0, 0, 1}));
  EXPECT_EQ(s->unpaired(), 3u);
}

TEST(ReplaySource, TumToleranceComesFromLiveSync) {
  dmtest::TempDir dir;
  const fs::path root = tum_fixture(dir.path());
  dm::Config c;
  c.live.sync.tolerance_ms = 4;  // rgb is 5 ms after depth: nothing pairs
  auto s = dm::make_live_source(dm::parse_source_uri("replay://" + root.string()), c);
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->open(); });
  EXPECT_TRUE(Contains(m, "live.sync.tolerance_ms (4 ms)"));
}

TEST(ReplaySource, TumUnpairedDropsReachTheRunnersSummary) {
  dmtest::TempDir dir;
  const fs::path root = tum_fixture(dir.path(), 1);
  dm::Config c;
  c.live.overflow = dm::Overflow::Block;
  c.live.stats_interval = 0;
  auto src = dm::make_live_source(dm::parse_source_uri("replay://" + root.string()), c);
  auto backend = dmtest::cpu_backend();
  const dm::LiveSummary s = dm::run_live(c, *backend, *src, {}, nullptr);
  EXPECT_TRUE(s.source_ended);
  EXPECT_EQ(s.captured, 3u);
  EXPECT_EQ(s.processed, 3u);
  EXPECT_EQ(s.drops_overflow, 0u);
  EXPECT_EQ(s.drops_unpaired, 3u);
}

// openni2://: what runs without a camera (the URI, its options, the errors; `info` in the CLI tests).
TEST(OpenNi2Source, UriPathAndOptions) {
  const auto any = dm::parse_source_uri("openni2://");
  EXPECT_EQ(any.scheme, "openni2");
  EXPECT_EQ(any.path, "");
  const auto dev = dm::parse_source_uri("openni2://1d27/0601@1/6?size=640x480&fps=30&color=1");
  EXPECT_EQ(dev.path, "1d27/0601@1/6");
  EXPECT_EQ(dev.query.at("size"), "640x480");
  EXPECT_EQ(dev.query.at("color"), "1");
  EXPECT_EQ(dm::parse_source_uri("openni2:///rec/a.oni?loop=1").path, "/rec/a.oni");
  std::string m = config_error("openni2://?speed=2");
  EXPECT_TRUE(Contains(m, "allowed: size, fps, color, loop"));
  EXPECT_TRUE(Contains(config_error("openni2://?color=maybe"), "color 'maybe' is not a boolean"));
  EXPECT_TRUE(Contains(config_error("openni2://?size=640"), "size '640'"));
}

namespace {
bool openni2_built() {
  for (const auto& s : dm::live_source_support())
    if (s.scheme == "openni2") return s.available;
  return false;
}
}  // namespace

TEST(OpenNi2Source, WithoutOpenNi2TheSchemeSaysItIsNotBuiltIn) {
  if (openni2_built()) GTEST_SKIP() << "this build has OpenNI2 (the other OpenNi2Source tests cover it)";
  const std::string m = config_error_of_make("openni2://");
  EXPECT_TRUE(Contains(m, "not built in"));
  EXPECT_TRUE(Contains(m, "libopenni2-dev"));
}

TEST(OpenNi2Source, NoDeviceAttachedIsAnInputErrorSayingSo) {
  if (!openni2_built()) GTEST_SKIP() << "this build has no OpenNI2 (install libopenni2-dev, DEPTHMASK_OPENNI2)";
  auto s = dm::make_live_source(dm::parse_source_uri("openni2://"), dm::Config{});
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->open(); });
  if (Contains(m, "cannot open the first device"))
    GTEST_SKIP() << "an OpenNI2 device is listed here (" << m << "): this test is for machines without one";
  EXPECT_TRUE(Contains(m, "openni2 source 'openni2://'"));
  // Where OpenNI2's drivers or its OpenNI.ini are missing (a copied bundle) it cannot even start.
  EXPECT_TRUE(Contains(m, "no OpenNI2 device is attached") || Contains(m, "OpenNI2 does not start")) << m;
}

TEST(OpenNi2Source, MissingRecordingAndLoopWithoutOneAreErrors) {
  if (!openni2_built()) GTEST_SKIP() << "this build has no OpenNI2 (install libopenni2-dev, DEPTHMASK_OPENNI2)";
  dmtest::TempDir dir;
  const std::string rec = (dir.path() / "none.oni").string();
  auto s = dm::make_live_source(dm::parse_source_uri("openni2://" + rec), dm::Config{});
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->open(); });
  EXPECT_TRUE(Contains(m, "recording '" + rec + "' does not exist"));
  EXPECT_TRUE(Contains(config_error_of_make("openni2://?loop=1"), "loop=1 is for a recording"));
}

namespace {
// Why the GStreamer test cannot run here, or empty when it can.
std::string gst_unavailable_reason() {
  if (!cv::videoio_registry::hasBackend(cv::CAP_GSTREAMER)) return "OpenCV is built without GStreamer";
  if (std::system("gst-inspect-1.0 videotestsrc >/dev/null 2>&1") != 0)
    return "GStreamer's videotestsrc is not installed (gstreamer1.0-plugins-base, gstreamer1.0-tools)";
  return "";
}
}  // namespace

TEST(GstSource, VideoTestSrcDelivers16BitDepthThenEnds) {
  if (const std::string why = gst_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  auto s = open_source("gst://videotestsrc num-buffers=5 ! video/x-raw,format=GRAY16_LE,width=64,height=48 ! appsink");
  dm::CapturedFrame f;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(s->read(f)) << "frame " << i;
    EXPECT_EQ(f.depth.type(), CV_16UC1);
    EXPECT_EQ(f.depth.size(), cv::Size(64, 48));
    EXPECT_TRUE(f.color.empty());
    EXPECT_EQ(f.sequence, static_cast<uint64_t>(i));
  }
  EXPECT_FALSE(s->read(f));
}

TEST(GstSource, ColorPipelineDeliversColor) {
  if (const std::string why = gst_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  auto s = open_source("gst://videotestsrc num-buffers=2 ! video/x-raw,format=BGR,width=32,height=24 ! appsink");
  dm::CapturedFrame f;
  ASSERT_TRUE(s->read(f));
  EXPECT_EQ(f.color.type(), CV_8UC3);
  EXPECT_TRUE(f.depth.empty());
}

TEST(GstSource, PipelineMustEndInAppsink) {
  const std::string m = dmtest::message_of<dm::ConfigError>(
      [] { dm::make_live_source(dm::parse_source_uri("gst://videotestsrc ! fakesink"), dm::Config{}); });
  EXPECT_TRUE(Contains(m, "must end in appsink"));
}

TEST(GstSource, BrokenPipelineIsAnInputError) {
  if (const std::string why = gst_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  auto s = dm::make_live_source(dm::parse_source_uri("gst://no-such-element-xyz ! appsink"), dm::Config{});
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->open(); });
  EXPECT_TRUE(Contains(m, "no-such-element-xyz"));
}

TEST(V4l2Source, AbsentDeviceNamesIt) {
  auto s = dm::make_live_source(dm::parse_source_uri("v4l2:///dev/video77"), dm::Config{});
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->open(); });
  EXPECT_TRUE(Contains(m, "v4l2 device '/dev/video77' does not exist"));
}

// A ROS 2 bag replays like a folder: its frames in stamp order, keyed by the depth stamp, the pixels
// the messages hold, paced at the recorded stamps unless the URI names fps; a lone .mcap file too.
TEST(ReplaySource, ABagReplaysItsMessagesAtTheRecordedStamps) {
  dmtest::TempDir dir;
  try {
    dm::write_synthetic_bag(dir.path() / "bag", 3, 48, 32);
  } catch (const dm::Error& e) {
    GTEST_SKIP() << e.what();  // built without the bag libraries
  }
  auto s = open_source("replay://" + (dir.path() / "bag").string());
  EXPECT_TRUE(Contains(s->describe(), "recorded timestamps")) << s->describe();
  dm::CapturedFrame f;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s->read(f)) << i;
    const dm::SyntheticFrame want = dm::render_synthetic_frame(i, 48, 32);
    EXPECT_EQ(f.id, std::to_string(1700000000000000000LL + int64_t{i} * 1000000000LL / 30));
    EXPECT_TRUE(SameBits(f.depth, want.depth_mm)) << i;
    EXPECT_TRUE(SameBits(f.mask, want.mask)) << i;
    EXPECT_TRUE(SameBits(f.color, want.color)) << i;
  }
  auto fast = open_source("replay://" + (dir.path() / "bag" / "synthetic_0.mcap").string() + "?fps=0");
  EXPECT_TRUE(Contains(fast->describe(), "as fast as possible")) << fast->describe();
  ASSERT_TRUE(fast->read(f));
  EXPECT_EQ(f.id, "1700000000000000000");
}
