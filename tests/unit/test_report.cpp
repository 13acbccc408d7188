// The manifest version 2 (frame stats, failure records; version 1 still read and resumed), the frame
// stats on a hand-checked image, the run record, and the QA report's page (report.h): thumbnails
// sampled, failures listed and escaped, a run without previews, a folder without a manifest. The page
// in a real browser is tests/integration/report_in_chromium.sh.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "depthmask/frame_stats.h"
#include "depthmask/manifest.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "depthmask/reason.h"
#include "depthmask/report.h"
#include "test_support.h"

using dmtest::Contains;
using dmtest::message_of;
using dmtest::TempDir;

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;

std::string text_of(const fs::path& p) {
  const auto b = dmtest::read_bytes(p);
  return std::string(b.begin(), b.end());
}

void write_text(const fs::path& p, const std::string& t) { std::ofstream(p, std::ios::binary) << t; }

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// ---------------------------------------------------------------------------------------------------
// Frame stats

TEST(FrameStats, CountsKeptPixelsAndBinsTheirDepthInOnePass) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  // Not kept: 0 (invalid), NaN, -1, inf. Kept: 0.5, 2, 5, 9.99, 10 (the closed last bin).
  const cv::Mat m = (cv::Mat_<float>(3, 3) << 0.0f, nan, -1.0f, 0.5f, 2.0f, 5.0f, 9.99f, 10.0f, inf);
  const dm::HistogramSpec spec{0.0, 10.0, 32};
  const dm::FrameStats s = dm::frame_stats(m, 0.0f, spec);
  EXPECT_EQ(s.kept, 5u);
  EXPECT_EQ(s.pixels, 9u);
  ASSERT_EQ(s.hist.size(), 32u);
  std::vector<uint64_t> want(32, 0);
  want[1] = 1;   // 0.5 m: 0.5 * 3.2 = 1.6
  want[6] = 1;   // 2 m: 6.4
  want[16] = 1;  // 5 m
  want[31] = 2;  // 9.99 m and 10 m
  EXPECT_EQ(s.hist, want);
  EXPECT_EQ(spec.bin_of(0.5f), 1);
  EXPECT_EQ(spec.bin_of(10.0f), 31);
  EXPECT_EQ(spec.bin_of(0.0f), 0);

  dm::FrameStats sum = s;
  sum.add(s);  // two outputs of one frame (mask.per_instance)
  EXPECT_EQ(sum.kept, 10u);
  EXPECT_EQ(sum.pixels, 18u);
  EXPECT_EQ(sum.hist[31], 4u);
  EXPECT_DOUBLE_EQ(sum.kept_fraction(), 10.0 / 18.0);
}

TEST(FrameStats, AgreesWithCountKeptAndBinOfOverAwkwardSizes) {
  // Blocks of 16 and the row tails: sizes around the block, kept pixels sparse and dense.
  cv::RNG rng(17);
  for (const cv::Size size : {cv::Size(1, 1), cv::Size(13, 1), cv::Size(31, 33), cv::Size(639, 481)}) {
    for (const double dense : {0.02, 0.9}) {
      SCOPED_TRACE(std::to_string(size.width) + "x" + std::to_string(size.height) + " " + std::to_string(dense));
      cv::Mat m(size, CV_32FC1);
      for (int y = 0; y < m.rows; ++y)
        for (int x = 0; x < m.cols; ++x)
          m.at<float>(y, x) = rng.uniform(0.0, 1.0) < dense ? static_cast<float>(rng.uniform(0.0, 2.5)) : 0.0f;
      const dm::HistogramSpec spec{0.0, 2.5, 32};
      const dm::FrameStats s = dm::frame_stats(m, 0.0f, spec);
      EXPECT_EQ(s.kept, dm::count_kept(m, 0.0f));
      std::vector<uint64_t> want(32, 0);
      for (int y = 0; y < m.rows; ++y)
        for (int x = 0; x < m.cols; ++x)
          if (m.at<float>(y, x) > 0.0f) ++want[static_cast<size_t>(spec.bin_of(m.at<float>(y, x)))];
      EXPECT_EQ(s.hist, want);
    }
  }
}

TEST(FrameStats, TheSpecFollowsTheDepthRange) {
  dm::Config c;
  c.depth.min = 0.2;
  c.depth.max = 3.4;
  const dm::HistogramSpec s = dm::HistogramSpec::of(c);
  EXPECT_EQ(s.min, 0.2);
  EXPECT_EQ(s.max, 3.4);
  EXPECT_EQ(s.bins, dm::HistogramSpec::kDefaultBins);
}

// ---------------------------------------------------------------------------------------------------
// Manifest version 2

dm::Manifest sample_manifest() {
  dm::Manifest m;
  m.head.settings = "0123456789abcdef";
  m.head.hist = dm::HistogramSpec{0.0, 10.0, 4};
  m.frames["seq/10.png"] = {"10", "aa", {{"10.tiff", 12, 0xffffffffu}}, dm::FrameStats{3, 8, {1, 0, 2, 0}}};
  m.frames["seq/02.png"] = {"02", "bb", {{"02.tiff", 7, 42}}, std::nullopt};  // a frame resumed from version 1
  m.failures["seq/05.png"] = {"05", dm::Failure::Resource, "frame 05 (#6): disk full"};
  m.failures["seq/03.png"] = {"03", dm::Failure::Input, "frame 03 (#4): 'seq/03.png' is truncated"};
  return m;
}

TEST(ManifestV2, RoundTripsStatsAndFailuresInSortedStableBytes) {
  const dm::Manifest m = sample_manifest();
  const std::string text = m.to_json();
  EXPECT_TRUE(Contains(text, "\"version\":2"));
  EXPECT_TRUE(Contains(text, "\"depth_hist\":{\"min\":0.0,\"max\":10.0,\"bins\":4}")) << text;
  EXPECT_LT(text.find("\"seq/03.png\""), text.find("\"seq/05.png\"")) << "failures sorted too";
  EXPECT_EQ(count_of(text, "\n"), 1u + 2u + 1u + 2u + 1u) << "the head, one line per record, the middle: " << text;
  const dm::Manifest back = dm::Manifest::parse(text, "m.json");
  EXPECT_EQ(back.head.version, 2);
  EXPECT_EQ(back.head.settings, m.head.settings);
  ASSERT_TRUE(back.head.hist);
  EXPECT_EQ(*back.head.hist, *m.head.hist);
  ASSERT_EQ(back.frames.size(), 2u);
  ASSERT_TRUE(back.frames.at("seq/10.png").stats);
  EXPECT_EQ(back.frames.at("seq/10.png").stats->kept, 3u);
  EXPECT_EQ(back.frames.at("seq/10.png").stats->pixels, 8u);
  EXPECT_EQ(back.frames.at("seq/10.png").stats->hist, (std::vector<uint64_t>{1, 0, 2, 0}));
  EXPECT_FALSE(back.frames.at("seq/02.png").stats);
  ASSERT_EQ(back.failures.size(), 2u);
  EXPECT_EQ(back.failures.at("seq/05.png").failure, dm::Failure::Resource);
  EXPECT_EQ(back.failures.at("seq/05.png").message, "frame 05 (#6): disk full");
  EXPECT_EQ(back.failures.at("seq/03.png").id, "03");
  EXPECT_EQ(back.to_json(), text) << "the same records give the same bytes";
}

TEST(ManifestV2, ReadsRecordByRecord) {
  std::istringstream in(sample_manifest().to_json());
  std::vector<std::string> frames, failures;
  const dm::ManifestHead head = dm::read_manifest(
      in, "m.json", [&](const std::string& key, dm::ManifestRecord&&) { frames.push_back(key); },
      [&](const std::string& key, dm::ManifestFailure&&) { failures.push_back(key); });
  EXPECT_EQ(head.settings, "0123456789abcdef");
  EXPECT_EQ(frames, (std::vector<std::string>{"seq/02.png", "seq/10.png"}));
  EXPECT_EQ(failures, (std::vector<std::string>{"seq/03.png", "seq/05.png"}));
}

// A version 1 manifest as depthmask 0.x wrote it.
constexpr const char* kVersion1 =
    "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"0123456789abcdef\",\"frames\":{\n"
    "\"seq/02.png\":{\"id\":\"02\",\"inputs\":\"bb\",\"outputs\":[{\"file\":\"02.tiff\",\"size\":7,\"crc32\":42}]}\n"
    "}}\n";

TEST(ManifestV2, StillReadsVersion1) {
  const dm::Manifest m = dm::Manifest::parse(kVersion1, "old.json");
  EXPECT_EQ(m.head.version, 1);
  EXPECT_FALSE(m.head.hist);
  ASSERT_EQ(m.frames.size(), 1u);
  EXPECT_FALSE(m.frames.at("seq/02.png").stats);
  EXPECT_EQ(m.frames.at("seq/02.png").files[0].crc32, 42u);
  EXPECT_TRUE(m.failures.empty());
}

TEST(ManifestV2, RejectsBadStatsAndFailures) {
  const std::string head =
      "{\"format\":\"depthmask-manifest\",\"version\":2,\"settings\":\"x\",\"depth_hist\":{\"min\":0,\"max\":10,"
      "\"bins\":4},\"frames\":{";
  const std::string rec =
      "\"1\":{\"id\":\"1\",\"inputs\":\"a\",\"outputs\":[{\"file\":\"1.tiff\",\"size\":3,\"crc32\":1}]";
  const std::vector<std::string> bad{
      head + rec + ",\"kept\":9,\"pixels\":4,\"hist\":[]}},\"failures\":{}}",    // kept > pixels
      head + rec + ",\"kept\":1,\"pixels\":4}},\"failures\":{}}",                // no hist
      head + rec + ",\"kept\":1,\"pixels\":4,\"hist\":[-1]}},\"failures\":{}}",  // a negative count
      head + "},\"failures\":{\"1\":{\"id\":\"1\",\"class\":\"oops\",\"message\":\"m\"}}}",
      head + "},\"failures\":{\"1\":{\"id\":\"1\",\"class\":\"input\"}}}",
      head + "},\"failures\":[]}",
      "{\"format\":\"depthmask-manifest\",\"version\":2,\"settings\":\"x\",\"depth_hist\":{\"min\":3,\"max\":1,"
      "\"bins\":4},\"frames\":{}}",
  };
  for (const auto& t : bad) {
    SCOPED_TRACE(t);
    EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { dm::Manifest::parse(t, "/o/m.json"); }), "/o/m.json"));
  }
}

TEST(ManifestV2, AFailureMessageOfAnyBytesIsWritten) {
  dm::Manifest m;
  m.head.settings = "x";
  m.failures["a"] = {"a", dm::Failure::Input, "cannot read '\xff\xfe.png'"};
  std::string text;
  ASSERT_NO_THROW(text = m.to_json());
  EXPECT_NO_THROW(dm::Manifest::parse(text, "m.json"));
}

// ---------------------------------------------------------------------------------------------------
// Runs on the committed sample (cpu backend)

std::unique_ptr<dm::MemoryBackend> cpu_backend() {
  return dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
}

class SampleRun : public ::testing::Test {
 protected:
  void SetUp() override { fs::copy(dmtest::sample_dir(), data_, fs::copy_options::recursive); }
  dm::Config config(const fs::path& out, const std::vector<std::string>& sets) const {
    std::vector<dm::Override> ov;
    for (const auto& s : sets) ov.push_back(dm::parse_override(s));
    ov.push_back({"output.dir", out.string(), "test", true});
    ov.push_back({"backend.kind", "cpu", "test", true});
    return dm::load_config(data_ / "depthmask.yaml", ov);
  }
  dm::RunSummary run(const fs::path& out, const std::vector<std::string>& sets = {"output.format=[tiff,json]"}) const {
    auto backend = cpu_backend();
    return dm::run_batch(config(out, sets), *backend, dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false});
  }
  TempDir tmp_;
  fs::path data_ = tmp_ / "data";
};

TEST_F(SampleRun, TheManifestRecordsEachFramesStatsAsItsSidecarCountsThem) {
  const fs::path out = tmp_ / "out";
  const dm::RunSummary s = run(out);
  ASSERT_GT(s.ok, 0u);
  const dm::Manifest m = dm::Manifest::read(out / dm::kManifestName);
  EXPECT_EQ(m.head.version, 2);
  ASSERT_TRUE(m.head.hist);
  EXPECT_EQ(m.frames.size(), s.ok);
  for (const auto& [key, rec] : m.frames) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(rec.stats);
    const nlohmann::json side = nlohmann::json::parse(text_of(out / (rec.id + ".json")));
    EXPECT_EQ(rec.stats->kept, side["kept_pixels"].get<uint64_t>());
    EXPECT_EQ(rec.stats->pixels, side["width"].get<uint64_t>() * side["height"].get<uint64_t>());
    uint64_t sum = 0;
    for (const uint64_t n : rec.stats->hist) sum += n;
    EXPECT_EQ(sum, rec.stats->kept);
  }
  // The run record: the summary and the configuration.
  const nlohmann::json r = nlohmann::json::parse(text_of(out / dm::kRunRecordName));
  EXPECT_EQ(r["format"], "depthmask-run");
  EXPECT_EQ(r["summary"]["ok"].get<size_t>(), s.ok);
  EXPECT_TRUE(Contains(r["config"].get<std::string>(), "output:"));
}

TEST_F(SampleRun, AFailureIsRecordedAndClearedWhenTheFrameSucceedsLater) {
  const fs::path out = tmp_ / "out";
  const fs::path depth = data_ / "depth" / "000002.png";
  ASSERT_TRUE(fs::exists(depth));
  const std::string good = text_of(depth);
  write_text(depth, good.substr(0, good.size() / 3));  // truncated
  const dm::RunSummary s = run(out);
  ASSERT_EQ(s.failed, 1u);
  dm::Manifest m = dm::Manifest::read(out / dm::kManifestName);
  ASSERT_EQ(m.failures.size(), 1u);
  const dm::ManifestFailure& f = m.failures.begin()->second;
  EXPECT_EQ(f.id, "000002");
  EXPECT_EQ(f.failure, dm::Failure::Input);
  EXPECT_EQ(f.message, s.failures.at(0).message);
  EXPECT_EQ(m.frames.count(m.failures.begin()->first), 0u);

  // A re-run that does not reach the frame (nothing else to do: interrupted at once) keeps the record.
  {
    std::atomic<bool> stop{true};
    auto backend = cpu_backend();
    dm::run_batch(config(out, {"output.format=[tiff,json]"}), *backend,
                  dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, nullptr, &stop);
    EXPECT_EQ(dm::Manifest::read(out / dm::kManifestName).failures.size(), 1u);
  }

  write_text(depth, good);
  const dm::RunSummary again = run(out);
  EXPECT_EQ(again.failed, 0u);
  EXPECT_EQ(again.ok, 1u) << "only the failed frame is redone";
  m = dm::Manifest::read(out / dm::kManifestName);
  EXPECT_TRUE(m.failures.empty());
  EXPECT_EQ(m.frames.size(), s.total);
}

TEST_F(SampleRun, AVersion1ManifestResumesAndTheReportShowsNa) {
  const fs::path out = tmp_ / "out";
  const dm::RunSummary first = run(out);
  ASSERT_GT(first.ok, 0u);
  // The same records as version 1 wrote them: no depth_hist, no stats, no failures.
  const dm::Manifest v2 = dm::Manifest::read(out / dm::kManifestName);
  std::string v1 =
      "{\"format\":\"depthmask-manifest\",\"version\":1,\"settings\":\"" + v2.head.settings + "\",\"frames\":{";
  bool first_line = true;
  for (const auto& [key, rec] : v2.frames) {
    v1 += std::string(first_line ? "\n" : ",\n") + "\"" + key + "\":{\"id\":\"" + rec.id + "\",\"inputs\":\"" +
          rec.inputs + "\",\"outputs\":[";
    for (size_t i = 0; i < rec.files.size(); ++i)
      v1 += std::string(i ? "," : "") + "{\"file\":\"" + rec.files[i].name +
            "\",\"size\":" + std::to_string(rec.files[i].size) + ",\"crc32\":" + std::to_string(rec.files[i].crc32) +
            "}";
    v1 += "]}";
    first_line = false;
  }
  v1 += "\n}}\n";
  write_text(out / dm::kManifestName, v1);

  const dm::RunSummary again = run(out);
  EXPECT_EQ(again.skipped_done, first.ok) << "every frame of the version 1 manifest is done";
  EXPECT_EQ(again.ok, 0u);
  const dm::Manifest now = dm::Manifest::read(out / dm::kManifestName);
  EXPECT_EQ(now.head.version, 2);
  EXPECT_EQ(now.frames.size(), first.ok);
  for (const auto& kv : now.frames) EXPECT_FALSE(kv.second.stats) << "carried over without stats";

  const std::string page = text_of(dm::write_report(out));
  EXPECT_TRUE(Contains(page, "Kept fraction per frame: n/a"));
  EXPECT_TRUE(Contains(page, "kept: n/a"));
}

TEST_F(SampleRun, TheReportSamplesThumbnailsListsFailuresAndNamesWhatItShows) {
  const fs::path out = tmp_ / "out";
  const fs::path depth = data_ / "depth" / "000001.png";
  write_text(depth, "not a png");
  const dm::RunSummary s = run(out, {"output.format=[tiff,json]", "output.preview=true"});
  ASSERT_EQ(s.failed, 1u);
  ASSERT_GE(s.ok, 4u);
  dm::ReportOptions o;
  o.thumbnails = 3;
  const fs::path page_path = dm::write_report(out, o);
  EXPECT_EQ(page_path, out / dm::kReportName);
  const std::string page = text_of(page_path);
  EXPECT_EQ(count_of(page, "<img "), 3u);
  EXPECT_TRUE(Contains(page, "3 of " + std::to_string(s.ok) + " frames shown")) << page.substr(0, 4000);
  EXPECT_TRUE(Contains(page, "lowest kept"));
  EXPECT_TRUE(Contains(page, "highest kept"));
  EXPECT_TRUE(Contains(page, "data:image/jpeg;base64,"));
  EXPECT_FALSE(Contains(page, "composed from the outputs")) << "the run wrote previews";
  EXPECT_TRUE(Contains(page, "<polyline")) << "the kept-fraction plot";
  EXPECT_TRUE(Contains(page, "class=\"hbar\"")) << "the histogram";
  EXPECT_TRUE(Contains(page, "<td>000001</td><td>input</td>")) << "the failure";
  EXPECT_TRUE(Contains(page, "data-selfcheck=\"pending\""));
  EXPECT_TRUE(Contains(page, "<pre class=\"config\">"));
  EXPECT_FALSE(Contains(page, "http://") && !Contains(page, "xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_FALSE(Contains(page, "<script src")) << "no external script";
  EXPECT_FALSE(Contains(page, "<link")) << "no external style sheet";

  // --out elsewhere.
  o.out = tmp_ / "elsewhere.html";
  EXPECT_EQ(dm::write_report(out, o), tmp_ / "elsewhere.html");
  EXPECT_TRUE(fs::exists(tmp_ / "elsewhere.html"));
}

TEST_F(SampleRun, WithoutPreviewsTheReportComposesThumbnailsFromTheOutputs) {
  const fs::path out = tmp_ / "out";
  const dm::RunSummary s = run(out, {"output.format=[npy,json]", "output.preview=false"});
  ASSERT_GT(s.ok, 0u);
  const std::string page = text_of(dm::write_report(out));
  EXPECT_EQ(count_of(page, "<img "), s.ok);
  EXPECT_TRUE(Contains(page, std::to_string(s.ok) + " composed from the outputs"));
}

// The thumbnails embedded in a page, decoded (data:image/jpeg;base64,...).
std::vector<cv::Mat> thumbnails_of(const std::string& page) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::vector<cv::Mat> out;
  const std::string lead = "data:image/jpeg;base64,";
  for (size_t at = page.find(lead); at != std::string::npos; at = page.find(lead, at + 1)) {
    std::vector<uint8_t> bytes;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = at + lead.size(); i < page.size() && page[i] != '"' && page[i] != '='; ++i) {
      acc = (acc << 6) | static_cast<uint32_t>(kAlphabet.find(page[i]));
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes.push_back(static_cast<uint8_t>(acc >> bits));
      }
    }
    out.push_back(cv::imdecode(bytes, cv::IMREAD_COLOR));
  }
  return out;
}

TEST_F(SampleRun, TheReasonOutputIsTheFourthPanelOnceWithOrWithoutPreviews) {
  for (const bool preview : {true, false}) {
    SCOPED_TRACE(preview ? "preview (drawn with the reason panel)" : "no preview, no sidecar");
    const fs::path out = tmp_ / (preview ? "with" : "without");
    ASSERT_GT(
        run(out, {"output.format=[tiff,reason]", std::string("output.preview=") + (preview ? "true" : "false")}).ok,
        0u);
    const std::string page = text_of(dm::write_report(out));
    EXPECT_TRUE(Contains(page, "colour | mask | masked depth | reason"));
    const std::vector<cv::Mat> thumbs = thumbnails_of(page);
    ASSERT_FALSE(thumbs.empty());
    for (const cv::Mat& t : thumbs) {
      ASSERT_FALSE(t.empty());
      EXPECT_EQ(t.cols, 4 * dm::ReportOptions{}.thumbnail_width) << "four panels of the thumbnail width";
      // The colour panel shows the frame's colour image (from the run's inputs without a sidecar), not grey.
      cv::Scalar mean, sd;
      cv::meanStdDev(t(cv::Rect(0, 0, t.cols / 4, t.rows)), mean, sd);
      EXPECT_GT(sd[0] + sd[1] + sd[2], 10.0);
    }
    EXPECT_FALSE(Contains(page, "without their input files"));
  }
}

TEST_F(SampleRun, WithoutAManifestTheReportReadsTheSidecars) {
  const fs::path out = tmp_ / "out";
  const dm::RunSummary s = run(out, {"output.format=[tiff,json]", "output.preview=true"});
  fs::remove(out / dm::kManifestName);
  fs::remove(out / dm::kRunRecordName);
  const std::string page = text_of(dm::write_report(out));
  EXPECT_TRUE(Contains(page, "none (no depthmask-manifest.json)"));
  EXPECT_EQ(count_of(page, "<img "), s.ok);
  EXPECT_TRUE(Contains(page, "<polyline")) << "kept fractions from the sidecars";
  EXPECT_TRUE(Contains(page, "Kept-depth histogram: n/a"));

  // Nothing of ours at all: a clear error.
  fs::create_directories(tmp_ / "empty");
  const std::string msg = message_of<dm::InputError>([&] { dm::write_report(tmp_ / "empty"); });
  EXPECT_TRUE(Contains(msg, "nothing to report")) << msg;
  EXPECT_TRUE(Contains(msg, (tmp_ / "empty").string())) << msg;
}

TEST_F(SampleRun, AReasonImageIsAFourthColourMappedPanelWithALegend) {
  const fs::path out = tmp_ / "out";
  ASSERT_GT(run(out, {"output.format=[tiff]", "output.preview=true"}).ok, 0u);
  std::string page = text_of(dm::write_report(out));
  EXPECT_FALSE(Contains(page, "class=\"legend\"")) << "no reason file, no legend";
  // What the reason output writes: 8-bit codes of the masked depth's size (depthmask/reason.h).
  cv::Mat codes(480 / 2, 640 / 2, CV_8UC1, cv::Scalar(dm::kDropMaskRule));
  codes(cv::Rect(0, 0, 40, 40)).setTo(dm::kKept);
  codes(cv::Rect(40, 0, 40, 40)).setTo(dm::kDropNoDepth);
  const cv::Mat depth = cv::imread((out / "000000.tiff").string(), cv::IMREAD_UNCHANGED);
  ASSERT_FALSE(depth.empty());
  cv::resize(codes, codes, depth.size(), 0, 0, cv::INTER_NEAREST);
  ASSERT_TRUE(cv::imwrite((out / "000000.reason.png").string(), codes));
  page = text_of(dm::write_report(out));
  EXPECT_TRUE(Contains(page, "colour | mask | masked depth | reason"));
  EXPECT_TRUE(Contains(page, "class=\"legend\""));
  for (const dm::ReasonStyle& r : dm::kReasonStyles) EXPECT_TRUE(Contains(page, r.name)) << r.name;
}

TEST(Report, ReadsEveryShardsManifestCountingEachFrameOnceAndLeavesOutOtherSettings) {
  TempDir tmp;
  // Shard 0/2 did 10 and failed 05; shard 1/2 did 05 on its re-run (another N) and 02; a manifest of
  // other settings (another output format, say) records 07: it describes other outputs.
  dm::Manifest a = sample_manifest();
  a.frames.erase("seq/02.png");
  a.failures.erase("seq/03.png");
  dm::Manifest b;
  b.head.settings = a.head.settings;
  b.head.hist = a.head.hist;
  b.frames["seq/05.png"] = {"05", "cc", {{"05.tiff", 9, 1}}, dm::FrameStats{1, 8, {0, 1, 0, 0}}};
  b.frames["seq/02.png"] = {"02", "bb", {{"02.tiff", 7, 42}}, dm::FrameStats{8, 8, {8, 0, 0, 0}}};
  b.frames["seq/10.png"] = {"10", "aa", {{"10.tiff", 12, 0xffffffffu}}, dm::FrameStats{3, 8, {1, 0, 2, 0}}};
  dm::Manifest other;
  other.head.settings = "fedcba9876543210";
  other.head.hist = a.head.hist;
  other.frames["seq/07.png"] = {"07", "dd", {{"07.npy", 9, 1}}, dm::FrameStats{1, 8, {0, 1, 0, 0}}};
  write_text(tmp / dm::manifest_name(dm::Shard{0, 2}), a.to_json());
  write_text(tmp / dm::manifest_name(dm::Shard{1, 2}), b.to_json());
  write_text(tmp / dm::manifest_name(dm::Shard{0, 3}), other.to_json());
  const std::string page = text_of(dm::write_report(tmp.path()));
  EXPECT_TRUE(Contains(page,
                       "2 manifests (depthmask-manifest.shard-0-of-2.json ... "
                       "depthmask-manifest.shard-1-of-2.json), version 2: 3 frame(s) done, 0 failed"))
      << "10 once, 07 (other settings) not at all: " << page.substr(0, 4000);
  EXPECT_FALSE(Contains(page, "disk full")) << "05 is done in the other shard's manifest";
  // 10 counted once: 3 + 1 + 8 kept of 24 pixels.
  EXPECT_TRUE(Contains(page, "12 of 24")) << page.substr(0, 4000);
}

TEST(Report, EscapesEveryTextItPlacesInTheHtml) {
  TempDir tmp;
  dm::Manifest m;
  m.head.settings = "x";
  m.head.hist = dm::HistogramSpec{0, 10, 4};
  m.failures["<b>k</b>"] = {"<img src=x onerror=alert(1)>", dm::Failure::Input,
                            "bad file '<script>alert(\"x\")</script>' & more"};
  write_text(tmp / dm::kManifestName, m.to_json());
  const std::string page = text_of(dm::write_report(tmp.path()));
  EXPECT_FALSE(Contains(page, "<script>alert"));
  EXPECT_FALSE(Contains(page, "<img src=x"));
  EXPECT_TRUE(Contains(page, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; more")) << page;
  EXPECT_TRUE(Contains(page, "&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_EQ(count_of(page, "<script>"), 1u) << "the self-check only";
}

}  // namespace
