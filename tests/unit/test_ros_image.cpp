// ROS 2 image messages as pixels (ros_image.h): Image with its step padding, byte order and colour
// orders; the roles' encodings; CompressedImage as PNG, JPEG and image_transport's compressedDepth (png
// and rvl, 16UC1 and quantised 32FC1); the RVL codec on its own, its bitstream pinned by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <opencv2/imgcodecs.hpp>

#include "depthmask/errors.h"
#include "depthmask/ros_image.h"
#include "test_support.h"

namespace dm = depthmask;
namespace ros = depthmask::ros;
using dmtest::Contains;
using dmtest::message_of;
using dmtest::SameBits;

namespace {

constexpr size_t kMaxPixels = size_t{1} << 24;

ros::Image image_of(uint32_t w, uint32_t h, const std::string& encoding, uint32_t step, std::vector<uint8_t> data) {
  ros::Image m;
  m.width = w;
  m.height = h;
  m.encoding = encoding;
  m.step = step;
  m.data = std::move(data);
  return m;
}

cv::Mat random_depth16(int rows, int cols, double zero_share, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> v(1, 65535);
  cv::Mat m(rows, cols, CV_16UC1);
  for (int y = 0; y < rows; ++y) {
    for (int x = 0; x < cols; ++x) m.at<uint16_t>(y, x) = u(rng) < zero_share ? 0 : static_cast<uint16_t>(v(rng));
  }
  return m;
}

// A compressedDepth payload: the 12-byte ConfigHeader (format 0, A, B), then `body`.
std::vector<uint8_t> compressed_depth(float a, float b, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> d(12 + body.size(), 0);
  std::memcpy(d.data() + 4, &a, 4);
  std::memcpy(d.data() + 8, &b, 4);
  std::copy(body.begin(), body.end(), d.begin() + 12);
  return d;
}

std::vector<uint8_t> rvl_body(const cv::Mat& q) {
  std::vector<uint8_t> body(8);
  const uint32_t cols = q.cols, rows = q.rows;
  std::memcpy(body.data(), &cols, 4);
  std::memcpy(body.data() + 4, &rows, 4);
  const std::vector<uint8_t> words = ros::rvl_encode(q);
  body.insert(body.end(), words.begin(), words.end());
  return body;
}

std::vector<uint8_t> png_of(const cv::Mat& m) {
  std::vector<uint8_t> png;
  cv::imencode(".png", m, png);
  return png;
}

}  // namespace

TEST(RosImage, StepPaddingIsDropped) {
  // 3x2 16UC1 with rows of 8 bytes: 6 of pixels, 2 of padding (0xEE)
  const std::vector<uint8_t> data = {1, 0, 2, 0, 3, 0, 0xEE, 0xEE, 4, 0, 5, 0, 0x06, 0x01, 0xEE, 0xEE};
  const ros::DecodedImage d =
      ros::image_to_pixels(image_of(3, 2, "16UC1", 8, data), ros::PixelRole::Depth, kMaxPixels, "t");
  ASSERT_EQ(d.pixels.type(), CV_16UC1);
  const cv::Mat want = (cv::Mat_<uint16_t>(2, 3) << 1, 2, 3, 4, 5, 0x0106);
  EXPECT_TRUE(SameBits(d.pixels, want));
  EXPECT_EQ(d.metres_per_unit, 0.001);
  EXPECT_EQ(d.encoding, "16UC1");
}

TEST(RosImage, BigEndianDepthIsSwapped) {
  ros::Image m = image_of(2, 1, "16UC1", 4, {0x01, 0x02, 0xAB, 0xCD});
  m.is_bigendian = 1;
  const ros::DecodedImage d = ros::image_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t");
  EXPECT_EQ(d.pixels.at<uint16_t>(0, 0), 0x0102);
  EXPECT_EQ(d.pixels.at<uint16_t>(0, 1), 0xABCD);
  const float f = 1.25f;
  uint8_t b[4];
  std::memcpy(b, &f, 4);
  ros::Image g = image_of(1, 1, "32FC1", 4, {b[3], b[2], b[1], b[0]});
  g.is_bigendian = 1;
  const ros::DecodedImage e = ros::image_to_pixels(g, ros::PixelRole::Depth, kMaxPixels, "t");
  EXPECT_EQ(e.pixels.at<float>(0, 0), 1.25f);
  EXPECT_EQ(e.metres_per_unit, 1.0);
}

TEST(RosImage, ColourBecomesBgr) {
  const cv::Vec3b want(30, 20, 10);  // B, G, R
  const auto colour = [&](const std::string& enc, std::vector<uint8_t> px) {
    const uint32_t n = static_cast<uint32_t>(px.size());
    return ros::image_to_pixels(image_of(1, 1, enc, n, px), ros::PixelRole::Color, kMaxPixels, "t").pixels;
  };
  for (const cv::Mat& m : {colour("rgb8", {10, 20, 30}), colour("bgr8", {30, 20, 10}),
                           colour("rgba8", {10, 20, 30, 255}), colour("bgra8", {30, 20, 10, 255})}) {
    ASSERT_EQ(m.type(), CV_8UC3);
    EXPECT_EQ(m.at<cv::Vec3b>(0, 0), want);
  }
  EXPECT_EQ(colour("mono8", {77}).at<cv::Vec3b>(0, 0), cv::Vec3b(77, 77, 77));
}

TEST(RosImage, MasksKeepTheirValues) {
  const ros::DecodedImage a =
      ros::image_to_pixels(image_of(2, 1, "mono8", 2, {0, 255}), ros::PixelRole::Mask, kMaxPixels, "t");
  EXPECT_EQ(a.pixels.type(), CV_8UC1);
  EXPECT_EQ(a.pixels.at<uint8_t>(0, 1), 255);
  EXPECT_EQ(a.metres_per_unit, 0);
  const ros::DecodedImage b =
      ros::image_to_pixels(image_of(1, 1, "16UC1", 2, {0x34, 0x12}), ros::PixelRole::Mask, kMaxPixels, "t");
  EXPECT_EQ(b.pixels.at<uint16_t>(0, 0), 0x1234);
  EXPECT_EQ(b.metres_per_unit, 0);
}

TEST(RosImage, ARoleRefusesAnEncodingItDoesNotTake) {
  const std::string depth = message_of<dm::InputError>([] {
    (void)ros::image_to_pixels(image_of(1, 1, "rgb8", 3, {1, 2, 3}), ros::PixelRole::Depth, kMaxPixels, "msg 4 of /d");
  });
  EXPECT_EQ(depth,
            "msg 4 of /d: an Image of encoding 'rgb8' cannot be a depth image: a depth image is 16UC1, mono16, 32FC1");
  const std::string mask = message_of<dm::InputError>([] {
    (void)ros::image_to_pixels(image_of(1, 1, "32FC1", 4, {0, 0, 0, 0}), ros::PixelRole::Mask, kMaxPixels, "m");
  });
  EXPECT_TRUE(Contains(mask, "a mask is 16UC1, mono16, mono8, 8UC1")) << mask;
  const std::string colour = message_of<dm::InputError>([] {
    (void)ros::image_to_pixels(image_of(1, 1, "16UC1", 2, {0, 0}), ros::PixelRole::Color, kMaxPixels, "m");
  });
  EXPECT_TRUE(Contains(colour, "a colour image is mono8, rgb8, bgr8, rgba8, bgra8")) << colour;
  EXPECT_THROW(
      (void)ros::image_to_pixels(image_of(1, 1, "bayer_rggb8", 1, {0}), ros::PixelRole::Color, kMaxPixels, "m"),
      dm::InputError);
}

TEST(RosImage, SizesAreCheckedBeforeCopying) {
  const std::string big = message_of<dm::InputError>([] {
    (void)ros::image_to_pixels(image_of(4, 4, "mono8", 4, std::vector<uint8_t>(16)), ros::PixelRole::Mask, 15, "m");
  });
  EXPECT_TRUE(Contains(big, "4x4 pixels; expected 1 to 15 pixels")) << big;
  const std::string step = message_of<dm::InputError>([] {
    (void)ros::image_to_pixels(image_of(4, 1, "16UC1", 6, std::vector<uint8_t>(6)), ros::PixelRole::Depth, 100, "m");
  });
  EXPECT_TRUE(Contains(step, "a step of 6 bytes, less than the row's 8")) << step;
  const std::string data = message_of<dm::InputError>([] {
    (void)ros::image_to_pixels(image_of(2, 2, "mono8", 2, std::vector<uint8_t>(3)), ros::PixelRole::Mask, 100, "m");
  });
  EXPECT_TRUE(Contains(data, "2 rows of 2 bytes holds only 3 bytes")) << data;
  EXPECT_THROW((void)ros::image_to_pixels(image_of(0, 0, "mono8", 0, {}), ros::PixelRole::Mask, 100, "m"),
               dm::InputError);
}

TEST(RosImage, PixelsToImageAndBack) {
  cv::Mat big = random_depth16(9, 13, 0.3, 7);
  const cv::Mat roi = big(cv::Rect(2, 1, 7, 5));  // not continuous
  ros::Header h;
  h.frame_id = "f";
  const ros::Image m = ros::pixels_to_image(roi, h);
  EXPECT_EQ(m.encoding, "16UC1");
  EXPECT_EQ(m.step, 14u);
  EXPECT_EQ(m.header.frame_id, "f");
  EXPECT_TRUE(SameBits(ros::image_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t").pixels, roi));
  cv::Mat f(3, 2, CV_32FC1, cv::Scalar(2.5f));
  f.at<float>(1, 1) = std::numeric_limits<float>::quiet_NaN();
  const ros::Image fm = ros::pixels_to_image(f, h);
  EXPECT_EQ(fm.encoding, "32FC1");
  EXPECT_TRUE(SameBits(ros::image_to_pixels(fm, ros::PixelRole::Depth, kMaxPixels, "t").pixels, f));
  const cv::Mat mask(2, 3, CV_8UC1, cv::Scalar(9));
  EXPECT_EQ(ros::pixels_to_image(mask, h).encoding, "mono8");
  const cv::Mat bgr(2, 3, CV_8UC3, cv::Scalar(1, 2, 3));
  const ros::Image cm = ros::pixels_to_image(bgr, h);
  EXPECT_EQ(cm.encoding, "bgr8");
  EXPECT_TRUE(SameBits(ros::image_to_pixels(cm, ros::PixelRole::Color, kMaxPixels, "t").pixels, bgr));
}

TEST(RosImageCompressed, CompressedDepth16PngIsBitExact) {
  const cv::Mat depth = random_depth16(31, 33, 0.2, 1);
  ros::CompressedImage m;
  m.format = "16UC1; compressedDepth png";
  m.data = compressed_depth(0, 0, png_of(depth));
  const ros::DecodedImage d = ros::compressed_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t");
  EXPECT_TRUE(SameBits(d.pixels, depth));
  EXPECT_EQ(d.encoding, "16UC1");
  EXPECT_EQ(d.metres_per_unit, 0.001);
  m.format = "16UC1; compressedDepth";  // no codec word: png, as image_transport reads it
  EXPECT_TRUE(SameBits(ros::compressed_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t").pixels, depth));
}

TEST(RosImageCompressed, CompressedDepth32FC1IsWithinItsQuantisation) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.2f, 9.99f);
  cv::Mat metres(17, 19, CV_32FC1);
  for (auto it = metres.begin<float>(); it != metres.end<float>(); ++it) *it = u(rng);
  metres.at<float>(0, 0) = 0;
  metres.at<float>(0, 1) = std::numeric_limits<float>::quiet_NaN();
  metres.at<float>(0, 2) = 10.0f;  // depth_max: no depth
  metres.at<float>(0, 3) = -1.0f;
  ros::Header h;
  h.frame_id = "cam";
  const ros::CompressedImage m = ros::depth_to_compressed_depth(metres, h);
  EXPECT_EQ(m.format, "32FC1; compressedDepth png");
  EXPECT_EQ(m.header.frame_id, "cam");
  float ab[2];
  std::memcpy(ab, m.data.data() + 4, 8);
  EXPECT_EQ(ab[0], 10100.0f);  // z0 (z0 + 1), z0 = 100
  EXPECT_EQ(ab[1], -1009.0f);  // 1 - A / depth_max, depth_max = 10
  const ros::DecodedImage d = ros::compressed_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t");
  ASSERT_EQ(d.pixels.type(), CV_32FC1);
  EXPECT_EQ(d.metres_per_unit, 1.0);
  for (int x = 0; x < 4; ++x) EXPECT_TRUE(std::isnan(d.pixels.at<float>(0, x))) << x;
  for (int y = 0; y < metres.rows; ++y) {
    for (int x = y == 0 ? 4 : 0; x < metres.cols; ++x) {
      const float z = metres.at<float>(y, x), got = d.pixels.at<float>(y, x);
      // q = floor(A / z + B) gives A / (q - B) in [z, z / (1 - z / A)): one step of inverse depth
      EXPECT_GE(got, z * (1 - 1e-6f)) << y << "," << x;
      EXPECT_LT(got - z, z * z / (10100.0f - z) + 1e-5f) << y << "," << x;
    }
  }
}

TEST(RosImageCompressed, CompressedDepthRvl) {
  const cv::Mat depth = random_depth16(33, 31, 0.6, 2);
  ros::CompressedImage m;
  m.format = "16UC1; compressedDepth rvl";
  m.data = compressed_depth(0, 0, rvl_body(depth));
  EXPECT_TRUE(SameBits(ros::compressed_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t").pixels, depth));
  // 32FC1 over rvl: depth = A / (q - B), q == 0 → NaN
  const cv::Mat q = (cv::Mat_<uint16_t>(1, 3) << 0, 1010, 11109);
  m.format = "32FC1; compressedDepth rvl";
  m.data = compressed_depth(10100.0f, -1009.0f, rvl_body(q));
  const cv::Mat f = ros::compressed_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t").pixels;
  EXPECT_TRUE(std::isnan(f.at<float>(0, 0)));
  EXPECT_FLOAT_EQ(f.at<float>(0, 1), 10100.0f / 2019.0f);
  EXPECT_FLOAT_EQ(f.at<float>(0, 2), 10100.0f / 12118.0f);
  // rvl's own size words are checked against the limit before decoding
  m.data = compressed_depth(0, 0, rvl_body(cv::Mat(100, 100, CV_16UC1, cv::Scalar(5))));
  m.format = "16UC1; compressedDepth rvl";
  const std::string msg =
      message_of<dm::InputError>([&] { (void)ros::compressed_to_pixels(m, ros::PixelRole::Depth, 9999, "t"); });
  EXPECT_TRUE(Contains(msg, "rvl image of 100x100 pixels; expected 1 to 9999")) << msg;
}

TEST(RosImageCompressed, PngAndJpegDecodeForTheirRoles) {
  cv::Mat bgr(8, 8, CV_8UC3, cv::Scalar(200, 100, 50));
  std::vector<uint8_t> jpg;
  cv::imencode(".jpg", bgr, jpg);
  ros::CompressedImage m;
  m.data = jpg;
  for (const char* format : {"jpeg", "bgr8; jpeg compressed bgr8", "rgb8; jpeg compressed bgr8"}) {
    m.format = format;
    const ros::DecodedImage d = ros::compressed_to_pixels(m, ros::PixelRole::Color, kMaxPixels, "t");
    ASSERT_EQ(d.pixels.type(), CV_8UC3) << format;
    const cv::Vec3b px = d.pixels.at<cv::Vec3b>(4, 4);
    EXPECT_NEAR(px[0], 200, 4) << format;
    EXPECT_NEAR(px[2], 50, 4) << format;
  }
  const cv::Mat mask = (cv::Mat_<uint8_t>(2, 2) << 0, 255, 7, 0);
  m.format = "png";
  m.data = png_of(mask);
  const ros::DecodedImage d = ros::compressed_to_pixels(m, ros::PixelRole::Mask, kMaxPixels, "t");
  EXPECT_TRUE(SameBits(d.pixels, mask));
  EXPECT_EQ(d.encoding, "mono8");
  const std::string depth =
      message_of<dm::InputError>([&] { (void)ros::compressed_to_pixels(m, ros::PixelRole::Depth, kMaxPixels, "t"); });
  EXPECT_TRUE(Contains(depth, "encoding 'mono8' cannot be a depth image")) << depth;
}

TEST(RosImageCompressed, BadPayloadsAreInputErrors) {
  ros::CompressedImage m;
  m.format = "tiff";
  m.data = {1, 2, 3};
  EXPECT_TRUE(
      Contains(message_of<dm::InputError>([&] { (void)ros::compressed_to_pixels(m, ros::PixelRole::Mask, 99, "t"); }),
               "format 'tiff' is not png, jpeg or compressedDepth"));
  // a PNG header claiming 100000 x 100000 pixels is refused before a decoder sees it
  std::vector<uint8_t> png = png_of(cv::Mat(1, 1, CV_8UC1, cv::Scalar(0)));
  const uint8_t side[4] = {0, 1, 0x86, 0xA0};
  std::memcpy(png.data() + 16, side, 4);
  std::memcpy(png.data() + 20, side, 4);
  m.format = "png";
  m.data = png;
  EXPECT_TRUE(Contains(
      message_of<dm::InputError>([&] { (void)ros::compressed_to_pixels(m, ros::PixelRole::Mask, kMaxPixels, "t"); }),
      "100000x100000 pixels"));
  m.data = png_of(cv::Mat(4, 4, CV_8UC1, cv::Scalar(1)));
  m.data.resize(m.data.size() / 2);
  EXPECT_THROW((void)ros::compressed_to_pixels(m, ros::PixelRole::Mask, kMaxPixels, "t"), dm::InputError);
  m.format = "16UC1; compressedDepth png";
  m.data = {0, 0, 0, 0, 0, 0};
  EXPECT_TRUE(
      Contains(message_of<dm::InputError>([&] { (void)ros::compressed_to_pixels(m, ros::PixelRole::Depth, 99, "t"); }),
               "ends inside its 12-byte header"));
  m.format = "16UC1; compressedDepth zstd";
  EXPECT_THROW((void)ros::compressed_to_pixels(m, ros::PixelRole::Depth, 99, "t"), dm::InputError);
}

TEST(Rvl, TheBitstreamIsImageTransports) {
  // {0, 0, 5}: 2 zeros (nibble 2), 1 non-zero (1), zigzag(5) = 10 = 3-bit groups 2 then 1 (A, 1):
  // the nibbles 2 1 A 1 fill one word from its top, stored little-endian.
  const cv::Mat px = (cv::Mat_<uint16_t>(1, 3) << 0, 0, 5);
  EXPECT_EQ(ros::rvl_encode(px), (std::vector<uint8_t>{0x00, 0x00, 0xA1, 0x21}));
  const std::vector<uint8_t> words = {0x00, 0x00, 0xA1, 0x21};
  EXPECT_TRUE(SameBits(ros::rvl_decode(words.data(), words.size(), 3, 1, "t"), px));
}

TEST(Rvl, RandomSparseDepthRoundTripsBitExact) {
  const cv::Size sizes[] = {{1, 1}, {13, 1}, {1, 13}, {31, 33}, {640, 480}};
  for (const cv::Size s : sizes) {
    for (double zeros : {0.0, 0.5, 0.9, 1.0}) {
      const cv::Mat d = random_depth16(s.height, s.width, zeros, static_cast<uint32_t>(s.area() + zeros * 10));
      const std::vector<uint8_t> enc = ros::rvl_encode(d);
      EXPECT_TRUE(SameBits(ros::rvl_decode(enc.data(), enc.size(), s.width, s.height, "t"), d)) << s << " " << zeros;
    }
  }
  const cv::Mat extremes = (cv::Mat_<uint16_t>(1, 4) << 65535, 1, 65535, 0);  // the largest deltas
  const std::vector<uint8_t> enc = ros::rvl_encode(extremes);
  EXPECT_TRUE(SameBits(ros::rvl_decode(enc.data(), enc.size(), 4, 1, "t"), extremes));
}

TEST(Rvl, ATruncatedOrCorruptStreamIsAnInputError) {
  const cv::Mat d = random_depth16(20, 20, 0.5, 9);
  const std::vector<uint8_t> enc = ros::rvl_encode(d);
  for (size_t n : {size_t{0}, size_t{3}, enc.size() / 2, enc.size() - 4}) {
    const std::string msg = message_of<dm::InputError>([&] { (void)ros::rvl_decode(enc.data(), n, 20, 20, "msg 9"); });
    EXPECT_TRUE(Contains(msg, "msg 9: the RVL stream ends before its pixels do")) << n << ": " << msg;
  }
  // a run of 9 zeros in a 2x2 image
  const std::vector<uint8_t> run = {0x00, 0x00, 0x00, 0x91};
  EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { (void)ros::rvl_decode(run.data(), run.size(), 2, 2, "t"); }),
                       "a run of 9 zeros runs past the image's end"));
  const std::vector<uint8_t> endless(64, 0xFF);  // continuation nibbles only
  EXPECT_TRUE(
      Contains(message_of<dm::InputError>([&] { (void)ros::rvl_decode(endless.data(), endless.size(), 2, 2, "t"); }),
               "longer than 11 nibbles"));
}
