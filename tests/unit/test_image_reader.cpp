// Unit tests of ImageReader (image_reader.h), the one decode path of run, live, replay:// and the
// bench: pixels equal OpenCV's (libpng's) for every role and decoder, straight into backend buffers
// or reused cv::Mats, the input limits, type checks and messages, palette masks, instance unions.
#include <gtest/gtest.h>

#include <opencv2/imgcodecs.hpp>

#include <fstream>
#include <random>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/image_reader.h"
#include "live_support.h"
#include "png_support.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::Contains;

namespace {

cv::Mat random_image(int rows, int cols, int type, unsigned seed) {
  cv::Mat m(rows, cols, type);
  cv::RNG rng(seed);
  rng.fill(m, cv::RNG::UNIFORM, 0, type == CV_32FC1 ? 10.0 : (CV_MAT_DEPTH(type) == CV_16U ? 65536.0 : 256.0));
  return m;
}

fs::path write(const fs::path& p, const cv::Mat& m) {
  fs::create_directories(p.parent_path());
  EXPECT_TRUE(cv::imwrite(p.string(), m)) << p;
  return p;
}

bool same_bits(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

}  // namespace

TEST(ImageReader, GreyscalePngsDecodeIntoTheBackendBufferWithOpenCvsPixels) {
  dmtest::TempDir dir;
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  for (const int type : {CV_16UC1, CV_8UC1}) {
    for (const cv::Size size : {cv::Size(37, 29), cv::Size(1, 5), cv::Size(640, 480)}) {
      const cv::Mat src = random_image(size.height, size.width, type, 7);
      const fs::path p = write(dir / ("img" + std::to_string(type) + "_" + std::to_string(size.width) + ".png"), src);
      const dm::ImageRole role = type == CV_16UC1 ? dm::ImageRole::Depth : dm::ImageRole::Mask;
      const cv::Mat got = reader.read(p, role, *backend, buf);
      EXPECT_TRUE(same_bits(got, cv::imread(p.string(), cv::IMREAD_UNCHANGED))) << p;
      EXPECT_EQ(got.data, buf.host()) << "decoded straight into the backend buffer";
      EXPECT_TRUE(got.isContinuous());
      EXPECT_EQ(reader.last_decoder(), dm::Decoder::FastPng) << p;
    }
  }
}

TEST(ImageReader, TheBufferGrowsForALargerImageAndIsReusedForASmallerOne) {
  dmtest::TempDir dir;
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  const fs::path small = write(dir / "s.png", random_image(10, 12, CV_16UC1, 1));
  const fs::path large = write(dir / "l.png", random_image(100, 120, CV_16UC1, 2));
  reader.read(small, dm::ImageRole::Depth, *backend, buf);
  const cv::Mat l = reader.read(large, dm::ImageRole::Depth, *backend, buf);
  EXPECT_GE(buf.size(), size_t{100 * 120 * 2});
  void* const grown = buf.host();
  const cv::Mat s = reader.read(small, dm::ImageRole::Depth, *backend, buf);
  EXPECT_EQ(buf.host(), grown);
  EXPECT_TRUE(same_bits(s, cv::imread(small.string(), cv::IMREAD_UNCHANGED)));
  EXPECT_EQ(l.size(), cv::Size(120, 100));
}

TEST(ImageReader, OtherFormatsAndColorGoThroughOpenCv) {
  dmtest::TempDir dir;
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  const cv::Mat metres = random_image(29, 37, CV_32FC1, 3);
  const fs::path tiff = write(dir / "d.tiff", metres);
  EXPECT_TRUE(same_bits(reader.read(tiff, dm::ImageRole::Depth, *backend, buf), metres));
  EXPECT_EQ(reader.last_decoder(), dm::Decoder::OpenCV);
  const cv::Mat bgr = random_image(29, 37, CV_8UC3, 4);
  const fs::path color = write(dir / "c.png", bgr);
  cv::Mat dst;
  EXPECT_TRUE(same_bits(reader.read(color, dm::ImageRole::Color, dst), bgr));
  EXPECT_EQ(reader.last_decoder(), dm::Decoder::OpenCV);
  // A greyscale PNG read as colour is converted as cv::IMREAD_COLOR does.
  const fs::path grey = write(dir / "g.png", random_image(29, 37, CV_8UC1, 5));
  EXPECT_TRUE(same_bits(reader.read(grey, dm::ImageRole::Color, dst), cv::imread(grey.string(), cv::IMREAD_COLOR)));
  // 16-bit PNG mask of an odd size through the fast path, then an interlaced one through libpng.
  const cv::Mat labels = random_image(31, 33, CV_16UC1, 6);
  const fs::path m16 = write(dir / "m16.png", labels);
  EXPECT_TRUE(same_bits(reader.read(m16, dm::ImageRole::Mask, *backend, buf), labels));
}

TEST(ImageReader, PaletteMasksGiveTheirIndices) {
  dmtest::TempDir dir;
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  cv::Mat indices(23, 41, CV_8UC1);
  for (int y = 0; y < indices.rows; ++y)
    for (int x = 0; x < indices.cols; ++x) indices.at<uint8_t>(y, x) = static_cast<uint8_t>((x + 3 * y) % 16);
  dmtest::write_palette_png(dir / "p.png", indices, 4, 16, false, false);
  EXPECT_TRUE(same_bits(reader.read(dir / "p.png", dm::ImageRole::Mask, *backend, buf), indices));
  EXPECT_EQ(reader.last_decoder(), dm::Decoder::PalettePng);
  // Read as depth it is a colour image (OpenCV expands the palette): the type check says so.
  const std::string m =
      dmtest::message_of<dm::InputError>([&] { reader.read(dir / "p.png", dm::ImageRole::Depth, *backend, buf); });
  EXPECT_TRUE(Contains(m, "depth file '" + (dir / "p.png").string() + "' is 3-channel 8-bit unsigned")) << m;
}

TEST(ImageReader, ErrorsNameTheRoleTheFileAndWhatWasExpected) {
  dmtest::TempDir dir;
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  // An 8-bit PNG as depth (the fast reader's type check, before any pixel is decoded).
  const fs::path m8 = write(dir / "m8.png", random_image(8, 9, CV_8UC1, 1));
  std::string m = dmtest::message_of<dm::InputError>([&] { reader.read(m8, dm::ImageRole::Depth, *backend, buf); });
  EXPECT_TRUE(Contains(m, "depth file '" + m8.string() + "' is 1-channel 8-bit unsigned; expected single-channel"))
      << m;
  // A colour image as a mask.
  const fs::path c = write(dir / "c.png", random_image(8, 9, CV_8UC3, 2));
  m = dmtest::message_of<dm::InputError>([&] { reader.read(c, dm::ImageRole::Mask, *backend, buf); });
  EXPECT_TRUE(Contains(m, "mask file '" + c.string() + "' has 3 channels")) << m;
  // Truncated PNG: neither decoder takes it.
  const fs::path full = write(dir / "full.png", random_image(40, 50, CV_16UC1, 3));
  std::vector<char> bytes(fs::file_size(full));
  std::ifstream(full, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const fs::path cut = dir / "cut.png";
  std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  m = dmtest::message_of<dm::InputError>([&] { reader.read(cut, dm::ImageRole::Depth, *backend, buf); });
  EXPECT_TRUE(Contains(m, "depth file '" + cut.string() + "' could not be decoded")) << m;
  // Missing file; the limits before reading and before decoding.
  m = dmtest::message_of<dm::InputError>([&] { reader.read(dir / "none.png", dm::ImageRole::Mask, *backend, buf); });
  EXPECT_TRUE(Contains(m, "mask file '" + (dir / "none.png").string() + "' does not exist")) << m;
  reader.set_limits(dm::InputLimits{100, uint64_t{1} << 20});
  m = dmtest::message_of<dm::InputError>([&] { reader.read(full, dm::ImageRole::Depth, *backend, buf); });
  EXPECT_TRUE(Contains(m, "input.max_file_bytes")) << m;
  reader.set_limits(dm::InputLimits{uint64_t{1} << 20, 40 * 50 - 1});
  m = dmtest::message_of<dm::InputError>([&] { reader.read(full, dm::ImageRole::Depth, *backend, buf); });
  EXPECT_TRUE(Contains(m, "input.max_image_pixels")) << m;
}

TEST(ImageReader, AMatIsReusedWhenUnsharedAndLeftAloneWhenACallerHoldsIt) {
  dmtest::TempDir dir;
  dm::ImageReader reader;
  const cv::Mat a = random_image(20, 30, CV_16UC1, 1), b = random_image(20, 30, CV_16UC1, 2);
  const fs::path pa = write(dir / "a.png", a), pb = write(dir / "b.png", b);
  cv::Mat dst;
  reader.read(pa, dm::ImageRole::Depth, dst);
  const uchar* first = dst.data;
  reader.read(pb, dm::ImageRole::Depth, dst);
  EXPECT_EQ(dst.data, first) << "an unshared Mat of the same size and type is decoded into again";
  const cv::Mat kept = dst;  // a caller keeps the image
  reader.read(pa, dm::ImageRole::Depth, dst);
  EXPECT_NE(dst.data, kept.data);
  EXPECT_TRUE(same_bits(kept, b)) << "the kept image is not overwritten";
  EXPECT_TRUE(same_bits(dst, a));
}

TEST(ImageReader, InstanceMasksUniteByTheMaskTest) {
  dmtest::TempDir dir;
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  const cv::Mat i0 = random_image(21, 17, CV_8UC1, 1), i1 = random_image(21, 17, CV_16UC1, 2);
  dm::Config c;
  c.mask.threshold = 200;
  const dm::MaskParams p = dm::mask_params(c);
  const dm::ImageReader::Instances instances{{"000000", write(dir / "i0.png", i0)},
                                             {"000001", write(dir / "i1.png", i1)}};
  const cv::Mat u = reader.read_instance_union(instances, p, *backend, buf);
  ASSERT_EQ(u.type(), CV_8UC1);
  EXPECT_EQ(u.data, buf.host());
  for (int y = 0; y < u.rows; ++y)
    for (int x = 0; x < u.cols; ++x) {
      const bool keep = dm::mask_keeps(i0.at<uint8_t>(y, x), p) || dm::mask_keeps(i1.at<uint16_t>(y, x), p);
      ASSERT_EQ(u.at<uint8_t>(y, x), keep ? 255 : 0) << x << "," << y;
    }
  cv::Mat dst;
  EXPECT_TRUE(same_bits(reader.read_instance_union(instances, p, dst), u));
  // An instance of another size names both files.
  const dm::ImageReader::Instances odd{instances[0], {"000002", write(dir / "i2.png", random_image(5, 5, CV_8UC1, 3))}};
  const std::string m = dmtest::message_of<dm::InputError>([&] { reader.read_instance_union(odd, p, dst); });
  EXPECT_TRUE(Contains(m, (dir / "i2.png").string() + "' is 5x5 but mask file '" + (dir / "i0.png").string())) << m;
}

TEST(ImageReader, EveryPngOfTheRealCapturesEqualsOpenCvs) {
  const fs::path data = dmtest::shared_data_dir();
  if (!fs::is_directory(data)) GTEST_SKIP() << "no shared data at " << data << " (DEPTHMASK_TEST_DATA)";
  auto backend = dmtest::cpu_backend();
  dm::ImageReader reader;
  dm::Buffer buf;
  cv::Mat color;
  int fast = 0, total = 0;
  for (const auto& e : fs::recursive_directory_iterator(data)) {
    if (e.path().extension() != ".png") continue;
    const cv::Mat ref = cv::imread(e.path().string(), cv::IMREAD_UNCHANGED);
    ASSERT_FALSE(ref.empty()) << e.path();
    ++total;
    if (ref.channels() == 1) {
      const dm::ImageRole role = ref.type() == CV_16UC1 ? dm::ImageRole::Depth : dm::ImageRole::Mask;
      EXPECT_TRUE(same_bits(reader.read(e.path(), role, *backend, buf), ref)) << e.path();
      fast += reader.last_decoder() == dm::Decoder::FastPng ? 1 : 0;
    } else {
      EXPECT_TRUE(same_bits(reader.read(e.path(), dm::ImageRole::Color, color),
                            cv::imread(e.path().string(), cv::IMREAD_COLOR)))
          << e.path();
    }
  }
  EXPECT_GT(total, 0);
  EXPECT_GT(fast, 0) << "the greyscale captures take the fast reader";
}

TEST(ImageReader, OutOfMemoryWhileOpenCvDecodesIsAResourceErrorNotACorruptFile) {
  // A buffer the backend cannot give (its memory limit) reaches the caller as the resource error it
  // is (exit code 4), never as a corrupt file, whichever decoder asked for it.
  dmtest::TempDir dir;
  auto backend = dmtest::cpu_backend();
  backend->set_memory_limit(1024);
  dm::ImageReader reader;
  for (const fs::path& p : {write(dir / "d.tiff", random_image(48, 64, CV_32FC1, 1)),
                            write(dir / "d.png", random_image(48, 64, CV_16UC1, 2))}) {
    dm::Buffer buf;
    EXPECT_THROW(reader.read(p, dm::ImageRole::Depth, *backend, buf), dm::ResourceError) << p;
  }
}
