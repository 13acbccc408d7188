// Depth stored in three identical channels (a depth EXR or a 16-bit PNG written as RGB, as some capture
// tools and datasets do): ImageReader reads it as its one channel, into the caller's memory, with the
// same pixels as the single-channel file; channels that differ are an InputError naming the file and
// the first pixel that differs. The same through `run`'s library entry (run_batch: one info line per
// run) and replay:// (the runner's one line per run).
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/image_reader.h"
#include "depthmask/live.h"
#include "depthmask/live_runner.h"
#include "depthmask/logging.h"
#include "depthmask/pipeline.h"
#include "depthmask/synth.h"
#include "live_support.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::Contains;
using dmtest::SameBits;

namespace {

cv::Mat depth16(int rows, int cols, unsigned seed) {
  cv::Mat m(rows, cols, CV_16UC1);
  cv::RNG(seed).fill(m, cv::RNG::UNIFORM, 0, 65536);
  return m;
}

cv::Mat depth32(int rows, int cols, unsigned seed) {
  cv::Mat m(rows, cols, CV_32FC1);
  cv::RNG(seed).fill(m, cv::RNG::UNIFORM, 0.1, 4.0);
  m.at<float>(0, 1) = std::numeric_limits<float>::quiet_NaN();  // no measurement: equal in every channel
  return m;
}

cv::Mat three(const cv::Mat& one) {
  cv::Mat out;
  cv::merge(std::vector<cv::Mat>{one, one, one}, out);
  return out;
}

fs::path write(const fs::path& p, const cv::Mat& m) {
  dmtest::enable_opencv_exr();
  fs::create_directories(p.parent_path());
  const std::vector<int> params =
      p.extension() == ".exr" ? std::vector<int>{cv::IMWRITE_EXR_TYPE, cv::IMWRITE_EXR_TYPE_FLOAT} : std::vector<int>{};
  EXPECT_TRUE(cv::imwrite(p.string(), m, params)) << p;
  return p;
}

// Pixels equal bit for bit, NaN included.
bool same_bytes(const cv::Mat& a, const cv::Mat& b) {
  if (a.size() != b.size() || a.type() != b.type()) return false;
  for (int y = 0; y < a.rows; ++y)
    if (std::memcmp(a.ptr(y), b.ptr(y), a.cols * a.elemSize()) != 0) return false;
  return true;
}

// The library's log lines while alive (Info and above); the default (stderr, Warn) again afterwards.
class LogLines {
 public:
  LogLines() {
    dm::set_log_callback(
        [this](int, std::string_view line) {
          const std::lock_guard<std::mutex> lock(m_);
          lines_.emplace_back(line);
        },
        static_cast<int>(dm::LogLevel::Info));
  }
  ~LogLines() { dm::set_log_callback(nullptr, static_cast<int>(dm::LogLevel::Warn)); }
  LogLines(const LogLines&) = delete;
  LogLines& operator=(const LogLines&) = delete;
  int count(const std::string& part) {
    const std::lock_guard<std::mutex> lock(m_);
    int n = 0;
    for (const auto& l : lines_) n += Contains(l, part) ? 1 : 0;
    return n;
  }

 private:
  std::mutex m_;
  std::vector<std::string> lines_;
};

const char* kNote = "stores depth in three equal channels";

struct Case {
  const char* ext;
  int type;
};

class ThreeChannelDepth : public ::testing::TestWithParam<Case> {
 protected:
  cv::Mat one(unsigned seed) const {
    return GetParam().type == CV_16UC1 ? depth16(29, 37, seed) : depth32(29, 37, seed);
  }
  std::string ext() const { return GetParam().ext; }
};

}  // namespace

TEST_P(ThreeChannelDepth, EqualChannelsReadAsTheOneIntoTheBackendBuffer) {
  dmtest::TempDir dir;
  const cv::Mat src = one(3);
  const fs::path single = write(dir / ("single" + ext()), src);
  const fs::path rgb = write(dir / ("rgb" + ext()), three(src));
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  const cv::Mat got = reader.read(rgb, dm::ImageRole::Depth, *backend, buf);
  EXPECT_EQ(reader.last_stored_channels(), 3);
  EXPECT_EQ(got.data, buf.host()) << "decoded into the backend buffer";
  EXPECT_EQ(buf.size(), src.total() * src.elemSize()) << "the buffer holds one channel, not three";
  cv::Mat expected;
  const cv::Mat from_single = reader.read(single, dm::ImageRole::Depth, expected);
  EXPECT_EQ(reader.last_stored_channels(), 1);
  EXPECT_TRUE(same_bytes(got, from_single));
  EXPECT_TRUE(same_bytes(got, src));

  // Into a cv::Mat, frame after frame: the reader's scratch is reused.
  cv::Mat m;
  reader.read(rgb, dm::ImageRole::Depth, m);
  EXPECT_TRUE(same_bytes(m, src));
  EXPECT_EQ(reader.last_stored_channels(), 3);
}

TEST_P(ThreeChannelDepth, ChannelsThatDifferAreAnErrorNamingTheFileAndThePixel) {
  dmtest::TempDir dir;
  cv::Mat src = three(one(4));
  if (GetParam().type == CV_16UC1)
    src.at<cv::Vec3w>(5, 7)[0] = static_cast<uint16_t>(src.at<cv::Vec3w>(5, 7)[1] + 1);  // B differs
  else
    src.at<cv::Vec3f>(5, 7)[0] = src.at<cv::Vec3f>(5, 7)[1] + 0.25f;
  const fs::path p = write(dir / ("differs" + ext()), src);
  dm::ImageReader reader;
  cv::Mat m;
  const std::string msg = dmtest::message_of<dm::InputError>([&] { reader.read(p, dm::ImageRole::Depth, m); });
  EXPECT_TRUE(Contains(msg, "depth file '" + p.string() + "'")) << msg;
  EXPECT_TRUE(Contains(msg, "3-channel")) << msg;
  EXPECT_TRUE(Contains(msg, "differ at pixel (x 7, y 5)")) << msg;
  EXPECT_TRUE(Contains(msg, "expected single-channel")) << msg;
  EXPECT_EQ(reader.last_stored_channels(), 0);
  if (GetParam().type == CV_16UC1) {
    const cv::Vec3w v = src.at<cv::Vec3w>(5, 7);
    EXPECT_TRUE(
        Contains(msg, "R " + std::to_string(v[2]) + ", G " + std::to_string(v[1]) + ", B " + std::to_string(v[0])))
        << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ThreeChannelDepth, ::testing::Values(Case{".png", CV_16UC1}, Case{".exr", CV_32FC1}),
                         [](const auto& p) { return std::string(p.param.ext + 1); });

TEST(ThreeChannelDepthOther, EightBitRgbDepthAndThreeChannelMasksKeepTodaysError) {
  dmtest::TempDir dir;
  cv::Mat rgb8(6, 5, CV_8UC3, cv::Scalar(9, 9, 9));
  const fs::path p = write(dir / "d.png", rgb8);
  dm::ImageReader reader;
  cv::Mat m;
  EXPECT_TRUE(Contains(dmtest::message_of<dm::InputError>([&] { reader.read(p, dm::ImageRole::Depth, m); }),
                       "is 3-channel 8-bit unsigned; expected single-channel"));
  const fs::path mask = write(dir / "m.png", three(depth16(6, 5, 1)));
  EXPECT_TRUE(Contains(dmtest::message_of<dm::InputError>([&] { reader.read(mask, dm::ImageRole::Mask, m); }),
                       "has 3 channels"));
}

TEST(ThreeChannelDepthOther, TheFrameSlotReportsTheStoredChannelsOfItsDepth) {
  dmtest::TempDir dir;
  const cv::Mat d = depth16(8, 6, 2);
  dm::FrameEntry f;
  f.id = "a";
  f.depth = write(dir / "a.depth.png", three(d));
  f.mask = write(dir / "a.mask.png", cv::Mat(8, 6, CV_8UC1, cv::Scalar(255)));
  auto backend = dmtest::cpu_backend();
  dm::FrameSlot slot(*backend);
  slot.load(f, false);
  EXPECT_EQ(slot.depth_stored_channels(), 3);
  EXPECT_TRUE(SameBits(slot.depth(), d));
  f.depth = write(dir / "b.depth.png", d);
  slot.load(f, false);
  EXPECT_EQ(slot.depth_stored_channels(), 1);
}

namespace {

// A synthetic dataset whose depth files are rewritten as three equal channels (PNG) or as float EXR
// of metres, one or three channels.
void rewrite_depth(const fs::path& root, int frames, const std::string& ext, bool rgb) {
  for (int i = 0; i < frames; ++i) {
    const std::string id = "00000" + std::to_string(i);
    const fs::path png = root / "depth" / (id + ".png");
    cv::Mat d = cv::imread(png.string(), cv::IMREAD_UNCHANGED);
    if (ext == ".exr") {
      d.convertTo(d, CV_32F, 1e-3);
      fs::remove(png);
    }
    write(root / "depth" / (id + ext), rgb ? three(d) : d);
  }
}

// one/ with single-channel depth files, rgb/ with the same depth in three equal channels: 3 frames.
void write_pair(const fs::path& dir, const std::string& ext) {
  for (const bool rgb : {false, true}) {
    const fs::path root = dir / (rgb ? "rgb" : "one");
    dm::write_synthetic_dataset(root, 3, 32, 24);
    rewrite_depth(root, 3, ext, rgb);
  }
}

dm::Config batch_config(const fs::path& root, const fs::path& out, const std::string& ext) {
  dm::Config c;
  c.input.root = root;
  c.input.depth = "depth/{id}" + ext;
  c.input.mask = "mask/{id}.png";
  c.output.dir = out;
  c.output.preview = false;
  return c;
}

// The outputs of a run, by name (the manifest aside: it holds fingerprints of the inputs).
std::map<std::string, std::vector<uint8_t>> outputs(const fs::path& dir) {
  std::map<std::string, std::vector<uint8_t>> m;
  for (const auto& e : fs::directory_iterator(dir))
    // The manifest and the run record (its date and times) are the run's bookkeeping, not outputs.
    if (e.is_regular_file() && e.path().filename() != "depthmask-manifest.json" &&
        e.path().filename() != "depthmask-run.json")
      m[e.path().filename().string()] = dmtest::read_bytes(e.path());
  return m;
}

}  // namespace

TEST_P(ThreeChannelDepth, RunBatchMasksThemAsTheSingleChannelFilesAndLogsOncePerRun) {
  dmtest::TempDir dir;
  write_pair(dir.path(), ext());
  auto backend = dmtest::cpu_backend();
  const dm::BackendChoice choice{dm::BackendKind::Cpu, 0, "test", false};
  const dm::RunSummary a = dm::run_batch(batch_config(dir / "one", dir / "out-one", ext()), *backend, choice);
  LogLines log;
  const dm::RunSummary b = dm::run_batch(batch_config(dir / "rgb", dir / "out-rgb", ext()), *backend, choice);
  EXPECT_EQ(a.ok, 3u);
  EXPECT_EQ(b.ok, 3u);
  EXPECT_EQ(outputs(dir / "out-one"), outputs(dir / "out-rgb"));
  EXPECT_EQ(log.count(kNote), 1);
  EXPECT_EQ(log.count("depth file '" + (dir / "rgb" / "depth" / ("000000" + ext())).string() + "' " + kNote), 1)
      << "the first file in listing order is named";
  // A library user's second run logs it again.
  fs::remove_all(dir / "out-rgb");
  (void)dm::run_batch(batch_config(dir / "rgb", dir / "out-rgb", ext()), *backend, choice);
  EXPECT_EQ(log.count(kNote), 2);
}

TEST_P(ThreeChannelDepth, ReplayReadsThemAsTheOneChannelAndTheRunnerLogsOncePerRun) {
  dmtest::TempDir dir;
  write_pair(dir.path(), ext());
  dm::Config c;
  c.input.depth = "depth/{id}" + ext();
  c.mark_set_by_user("input.depth");
  auto single = dm::make_live_source(dm::parse_source_uri("replay://" + (dir / "one").string() + "?fps=0"), c);
  auto rgb = dm::make_live_source(dm::parse_source_uri("replay://" + (dir / "rgb").string() + "?fps=0"), c);
  single->open();
  rgb->open();
  dm::CapturedFrame a, b;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(single->read(a));
    ASSERT_TRUE(rgb->read(b));
    EXPECT_TRUE(same_bytes(a.depth, b.depth)) << i;
    EXPECT_TRUE(a.three_channel_depth.empty());
    EXPECT_EQ(b.three_channel_depth, dir / "rgb" / "depth" / (b.id + ext()));
  }

  // The runner: one line per run, naming the first file.
  c.live.overflow = dm::Overflow::Block;  // every frame processed
  LogLines log;
  auto backend = dmtest::cpu_backend();
  for (int run = 1; run <= 2; ++run) {
    auto src = dm::make_live_source(dm::parse_source_uri("replay://" + (dir / "rgb").string() + "?fps=0"), c);
    const dm::LiveSummary s = dm::run_live(c, *backend, *src, {}, nullptr);
    EXPECT_EQ(s.processed, 3u);
    EXPECT_EQ(log.count(kNote), run);
  }
  EXPECT_EQ(log.count("depth file '" + (dir / "rgb" / "depth" / ("000000" + ext())).string() + "' " + kNote), 2);
}

TEST_P(ThreeChannelDepth, ReplayOfChannelsThatDifferIsTheFramesErrorNamingFileAndPixel) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir.path(), 1, 32, 24);
  rewrite_depth(dir.path(), 1, ext(), true);
  const fs::path p = dir / "depth" / ("000000" + ext());
  cv::Mat d = cv::imread(p.string(), cv::IMREAD_UNCHANGED);
  if (d.depth() == CV_16U)
    d.at<cv::Vec3w>(2, 3)[2] ^= 1;
  else
    d.at<cv::Vec3f>(2, 3)[2] += 1.0f;
  write(p, d);
  dm::Config c;
  c.input.depth = "depth/{id}" + ext();
  c.mark_set_by_user("input.depth");
  auto s = dm::make_live_source(dm::parse_source_uri("replay://" + dir.path().string() + "?fps=0"), c);
  s->open();
  dm::CapturedFrame f;
  const std::string m = dmtest::message_of<dm::InputError>([&] { s->read(f); });
  EXPECT_TRUE(Contains(m, "replay source 'replay://")) << m;
  EXPECT_TRUE(Contains(m, "depth file '" + p.string() + "'")) << m;
  EXPECT_TRUE(Contains(m, "differ at pixel (x 3, y 2)")) << m;
}
