// The preview PNG ({id}.preview.png) through libdeflate (detail::encode_png_bgr8): libpng (OpenCV)
// reads back exactly the pixels make_preview drew, for awkward sizes, ROIs and images large enough to
// need several IDAT chunks; FrameWriter's file is make_preview's image, reason panel included.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/detail/png_codec.h"
#include "depthmask/encoders.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/platform.h"
#include "depthmask/synth.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

namespace {

cv::Mat libpng_decode(const Bytes& png) {
  return cv::imdecode(cv::Mat(1, static_cast<int>(png.size()), CV_8UC1, const_cast<uint8_t*>(png.data())),
                      cv::IMREAD_UNCHANGED);
}

void expect_round_trip(const cv::Mat& bgr, const std::string& name) {
  SCOPED_TRACE(name);
  const Bytes png = dm::detail::encode_png_bgr8(bgr.data, bgr.rows, bgr.cols, bgr.step[0]);
  EXPECT_EQ(png[25], 2) << "colour type: truecolour";
  const cv::Mat back = libpng_decode(png);
  ASSERT_EQ(back.type(), CV_8UC3);
  ASSERT_EQ(back.size(), bgr.size());
  EXPECT_EQ(cv::norm(back, bgr, cv::NORM_INF), 0.0);
}

size_t idat_chunks(const Bytes& png) {
  size_t n = 0;
  for (size_t at = 8; at + 8 <= png.size();) {
    const uint32_t len = (uint32_t{png[at]} << 24) | (uint32_t{png[at + 1]} << 16) | (uint32_t{png[at + 2]} << 8) |
                         uint32_t{png[at + 3]};
    n += std::string(png.begin() + static_cast<long>(at + 4), png.begin() + static_cast<long>(at + 8)) == "IDAT";
    at += 12 + len;
  }
  return n;
}

TEST(PreviewPng, Bgr8RoundTripsThroughLibpng) {
  std::mt19937 rng(11);
  for (const cv::Size size : {cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(33, 31), cv::Size(639, 481)}) {
    for (const bool noisy : {false, true}) {
      cv::Mat big(size.height + 3, size.width + 2, CV_8UC3);
      for (int y = 0; y < big.rows; ++y)
        for (int x = 0; x < big.cols; ++x)
          big.at<cv::Vec3b>(y, x) =
              noisy ? cv::Vec3b(static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()), static_cast<uint8_t>(rng()))
                    : cv::Vec3b(static_cast<uint8_t>(x), static_cast<uint8_t>(y), static_cast<uint8_t>((x + y) / 3));
      // A ROI: rows further apart than their width, and not starting at the buffer's first byte.
      expect_round_trip(big(cv::Rect(1, 2, size.width, size.height)),
                        std::to_string(size.width) + "x" + std::to_string(size.height) + (noisy ? " noise" : " ramps"));
    }
  }
}

TEST(PreviewPng, IncompressibleImagesSplitIntoIdatChunks) {
  cv::Mat noise(1700, 1800, CV_8UC3);  // 9.2 MB of noise: more than one IDAT chunk
  cv::randu(noise, 0, 256);
  const Bytes png = dm::detail::encode_png_bgr8(noise.data, noise.rows, noise.cols, noise.step[0]);
  EXPECT_GE(idat_chunks(png), 2u);
  expect_round_trip(noise, "noise");
}

TEST(PreviewPng, RefusesEmptyImagesAndShortStrides) {
  const uint8_t px[12] = {};
  EXPECT_THROW(dm::detail::encode_png_bgr8(px, 0, 2, 6), std::invalid_argument);
  EXPECT_THROW(dm::detail::encode_png_bgr8(px, 2, 0, 6), std::invalid_argument);
  EXPECT_THROW(dm::detail::encode_png_bgr8(px, 2, 2, 5), std::invalid_argument);
  EXPECT_THROW(dm::detail::encode_png_bgr8(nullptr, 2, 2, 6), std::invalid_argument);
}

// The written preview decodes (OpenCV) to make_preview's image of the same slot: colour, mask, masked
// depth and, when the reason output is on, the reason panel.
TEST(PreviewPng, TheFrameWritersPreviewIsMakePreviewsImage) {
  for (const bool reason : {false, true}) {
    SCOPED_TRACE(reason ? "with the reason panel" : "three panels");
    dmtest::TempDir tmp;
    const dm::SyntheticFrame s = dm::render_synthetic_frame(3, 97, 61);
    auto be = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
    dm::Config c;
    c.input.root = tmp / "in";
    c.output.dir = tmp / "out";
    c.output.formats = {dm::OutputFormat::Tiff};
    if (reason) c.output.formats.push_back(dm::OutputFormat::Reason);
    c.output.preview = true;
    c.depth.max = 1.5;  // some pixels dropped as out of range: every panel has both kinds
    fs::create_directories(c.output.dir);
    dm::FrameSlot slot(*be);
    slot.set_reason(reason, dm::mask_params(c));
    slot.set(s.depth_mm, s.mask, s.color);
    slot.run_mask(dm::mask_params(c));
    dm::FrameWriter w(c, *be);
    dm::FrameEntry f;
    f.id = "000003";
    f.depth = tmp / "in" / "depth" / "000003.png";
    f.mask = tmp / "in" / "mask" / "000003.png";
    w.write(f, slot);
    const cv::Mat want = dm::make_preview(slot.color(), slot.mask(), slot.out(), c.output.invalid, slot.reason());
    ASSERT_EQ(want.cols, 97 * (reason ? 4 : 3));
    const cv::Mat got = cv::imread((c.output.dir / "000003.preview.png").string(), cv::IMREAD_UNCHANGED);
    ASSERT_EQ(got.type(), CV_8UC3);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(cv::norm(got, want, cv::NORM_INF), 0.0);
  }
}

}  // namespace
