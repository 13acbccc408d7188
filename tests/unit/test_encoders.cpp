// Unit tests of the output writers: NPY and TIFF encoding, atomic file writes, the output folder
// check and the preview image.
#include <gtest/gtest.h>
#include <zlib.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "depthmask/encoders.h"
#include "depthmask/errors.h"
#include "test_support.h"

using dmtest::Contains;
using dmtest::message_of;
using dmtest::SameBits;

namespace {

namespace fs = std::filesystem;
using depthmask::OutputError;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A CV_32FC1 test image with ordinary values, -1, NaN, 0, -0, infinities and denormals sprinkled in.
cv::Mat test_image(int rows, int cols) {
  cv::Mat m(rows, cols, CV_32FC1);
  const float specials[] = {kNaN,
                            -1.0f,
                            0.0f,
                            -0.0f,
                            std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            1e-30f};
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      const int i = y * cols + x;
      m.at<float>(y, x) = (i % 5 == 0) ? specials[(i / 5) % 8] : 0.001f * static_cast<float>(i) + 0.25f;
    }
  return m;
}

// ---------------------------------------------------------------------------------------------------
// NPY

class NpyRoundTrip : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(NpyRoundTrip, BitIdenticalWithAlignedHeader) {
  const auto [rows, cols] = GetParam();
  const cv::Mat m = test_image(rows, cols);
  const std::vector<uint8_t> bytes = depthmask::encode_npy(m);

  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes[0], 0x93);
  EXPECT_EQ(std::memcmp(bytes.data() + 1, "NUMPY", 5), 0);
  EXPECT_EQ(bytes[6], 1);  // format 1.0
  EXPECT_EQ(bytes[7], 0);
  const size_t hlen = bytes[8] | (static_cast<size_t>(bytes[9]) << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u) << "header length " << hlen;
  ASSERT_EQ(bytes.size(), 10 + hlen + static_cast<size_t>(rows) * cols * 4);
  const std::string header(bytes.begin() + 10, bytes.begin() + 10 + static_cast<long>(hlen));
  EXPECT_EQ(header.back(), '\n');
  EXPECT_TRUE(Contains(header, "'descr': '<f4'"));
  EXPECT_TRUE(Contains(header, "'fortran_order': False"));
  EXPECT_TRUE(Contains(header, "'shape': (" + std::to_string(rows) + ", " + std::to_string(cols) + ")"));
  // The data is the matrix, row-major, as is.
  EXPECT_EQ(std::memcmp(bytes.data() + 10 + hlen, m.data, m.total() * 4), 0);

  const cv::Mat back = depthmask::decode_npy(bytes, "mem.npy");
  EXPECT_TRUE(SameBits(m, back));
}

INSTANTIATE_TEST_SUITE_P(OddSizes, NpyRoundTrip,
                         ::testing::Values(std::make_pair(1, 1), std::make_pair(13, 1), std::make_pair(1, 13),
                                           std::make_pair(31, 33), std::make_pair(480, 640), std::make_pair(7, 1000)),
                         [](const auto& p) {
                           return std::to_string(p.param.first) + "x" + std::to_string(p.param.second);
                         });

TEST(Npy, EncodesANonContinuousRoi) {
  const cv::Mat big = test_image(20, 30);
  const cv::Mat roi = big(cv::Rect(3, 2, 11, 9));
  ASSERT_FALSE(roi.isContinuous());
  const cv::Mat back = depthmask::decode_npy(depthmask::encode_npy(roi), "roi.npy");
  EXPECT_TRUE(SameBits(roi.clone(), back));
}

TEST(Npy, DecodeRejectsWhatItCannotRead) {
  const std::vector<uint8_t> good = depthmask::encode_npy(test_image(3, 4));
  // Not .npy at all.
  std::vector<uint8_t> bad(good.size(), 'x');
  EXPECT_TRUE(Contains(message_of<depthmask::InputError>([&] { depthmask::decode_npy(bad, "junk.npy"); }), "junk.npy"));
  // Too short.
  EXPECT_TRUE(Contains(message_of<depthmask::InputError>([&] {
                         depthmask::decode_npy({0x93, 'N'}, "short.npy");
                       }),
                       "short.npy"));
  // Truncated data.
  std::vector<uint8_t> cut(good.begin(), good.end() - 4);
  EXPECT_TRUE(Contains(message_of<depthmask::InputError>([&] { depthmask::decode_npy(cut, "cut.npy"); }), "cut.npy"));
  // Another dtype.
  std::vector<uint8_t> f8 = good;
  const std::string h(f8.begin(), f8.end());
  const size_t pos = h.find("<f4");
  ASSERT_NE(pos, std::string::npos);
  f8[pos + 2] = '8';
  EXPECT_TRUE(Contains(message_of<depthmask::InputError>([&] { depthmask::decode_npy(f8, "f8.npy"); }), "float32"));
}

TEST(Npy, EncodeRejectsOtherTypes) {
  EXPECT_THROW(depthmask::encode_npy(cv::Mat(2, 2, CV_16UC1, cv::Scalar(1))), std::invalid_argument);
  EXPECT_THROW(depthmask::encode_tiff(cv::Mat(2, 2, CV_8UC3, cv::Scalar(1, 2, 3))), std::invalid_argument);
}

// Debian's python3-numpy (installed by scripts/install-deps.sh) lives with /usr/bin/python3; a python3
// earlier on PATH (pyenv, venv) may lack it.
std::string python() {
  return std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0 ? "/usr/bin/python3" : "python3";
}
bool have_numpy() { return std::system((python() + " -c 'import numpy' >/dev/null 2>&1").c_str()) == 0; }

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 512> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

TEST(Npy, NumpyReadsTheFile) {
  if (!have_numpy()) GTEST_SKIP() << "python3 with numpy is not available; cannot cross-check .npy files";
  dmtest::TempDir tmp;
  cv::Mat m = test_image(31, 33);
  m.at<float>(17, 29) = 1.5f;
  m.at<float>(30, 32) = -1.0f;
  m.at<float>(0, 0) = kNaN;
  const fs::path file = tmp / "frame.npy";
  const std::vector<uint8_t> bytes = depthmask::encode_npy(m);
  depthmask::write_file_atomic(file, bytes.data(), bytes.size(), false);
  const std::string py = "import numpy; a=numpy.load('" + file.string() +
                         "'); print(a.shape, a.dtype, float(a[17][29]), float(a[30][32]), bool(numpy.isnan(a[0][0])), "
                         "a.flags['C_CONTIGUOUS'])";
  const std::string out = run_capture(python() + " -c " + dmtest::q(py) + " 2>&1");
  EXPECT_EQ(out, "(31, 33) float32 1.5 -1.0 True True\n");
}

// ---------------------------------------------------------------------------------------------------
// TIFF

TEST(Tiff, OpenCvReadsBackBitIdenticalFloat32) {
  dmtest::TempDir tmp;
  // One strip (1x1, 13x1, 1x13: the strip's offset and count inside the IFD), several rows per strip
  // (33x31, 640x480), one row per strip (2049 wide: rows over 8 KiB), an odd last strip (640x479).
  for (const auto& sz : {cv::Size(1, 1), cv::Size(13, 1), cv::Size(1, 13), cv::Size(33, 31), cv::Size(640, 480),
                         cv::Size(640, 479), cv::Size(2049, 7)}) {
    const cv::Mat m = test_image(sz.height, sz.width);
    const std::vector<uint8_t> bytes = depthmask::encode_tiff(m);
    const fs::path file = tmp / ("d" + std::to_string(sz.width) + "x" + std::to_string(sz.height) + ".tiff");
    depthmask::write_file_atomic(file, bytes.data(), bytes.size(), false);
    const cv::Mat back = cv::imread(file.string(), cv::IMREAD_UNCHANGED);
    ASSERT_FALSE(back.empty()) << file;
    EXPECT_EQ(back.type(), CV_32FC1) << file;
    EXPECT_TRUE(SameBits(m, back)) << file;
  }
}

TEST(Tiff, LibtiffReadsTheTagsBack) {
  // What the header says, through OpenCV's TIFF decoder (libtiff): a strided ROI of a larger image,
  // NaN, infinities and negative zero keep their bits, and the file is as large as header + pixels.
  dmtest::TempDir tmp;
  cv::Mat big = test_image(300, 500);
  big.at<float>(20, 30) = kNaN;
  big.at<float>(21, 31) = std::numeric_limits<float>::infinity();
  big.at<float>(22, 32) = -std::numeric_limits<float>::infinity();
  big.at<float>(23, 33) = -0.0f;
  const cv::Mat roi = big(cv::Rect(10, 10, 333, 257));
  ASSERT_FALSE(roi.isContinuous());
  const depthmask::FileBytes file = depthmask::tiff_file(roi);
  EXPECT_GT(file.parts().size(), 64u);  // more parts than one writev takes: the write goes round again
  const fs::path path = tmp / "roi.tiff";
  depthmask::write_file_atomic(path, file, false);
  const std::vector<uint8_t> flat = file.flatten();
  EXPECT_EQ(flat, depthmask::encode_tiff(roi));
  EXPECT_EQ(fs::file_size(path), flat.size());
  EXPECT_EQ(file.crc32(), depthmask::crc32_of(flat.data(), flat.size()));
  EXPECT_LT(flat.size() - 333u * 257u * 4u, 4096u);  // header and strip tables only
  const cv::Mat back = cv::imread(path.string(), cv::IMREAD_UNCHANGED);
  ASSERT_EQ(back.type(), CV_32FC1);
  ASSERT_EQ(back.size(), roi.size());
  EXPECT_TRUE(SameBits(roi.clone(), back));
}

TEST(FileBytes, OwnedBlocksAndViewsInOrder) {
  depthmask::FileBytes b(std::vector<uint8_t>{1, 2});
  const uint8_t tail[] = {3, 4, 5};
  b.add_view(tail, 2);
  b.add_view(tail + 2, 1);  // adjacent to the last view: joined
  b.add_owned({});          // empty: nothing
  b.add_owned({6});
  EXPECT_EQ(b.size(), 6u);
  EXPECT_EQ(b.parts().size(), 3u);
  EXPECT_EQ(b.flatten(), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  dmtest::TempDir tmp;
  depthmask::write_file_atomic(tmp / "b.bin", b, false);
  EXPECT_EQ(dmtest::read_bytes(tmp / "b.bin"), b.flatten());
}

// ---------------------------------------------------------------------------------------------------
// write_file_atomic

TEST(WriteFileAtomic, WritesTheContentAndLeavesNoTemporaryFile) {
  dmtest::TempDir tmp;
  const std::string text("hello\0world\xff\n", 13);
  const fs::path file = tmp / "a.bin";
  depthmask::write_file_atomic(file, text.data(), text.size(), false);
  EXPECT_EQ(read_all(file), text);
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"a.bin"});
}

TEST(WriteFileAtomic, OverwritesAnExistingFile) {
  dmtest::TempDir tmp;
  const fs::path file = tmp / "frame.tiff";
  const std::string first(5000, 'a'), second = "short";
  depthmask::write_file_atomic(file, first.data(), first.size(), false);
  depthmask::write_file_atomic(file, second.data(), second.size(), false);
  EXPECT_EQ(read_all(file), second);
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"frame.tiff"});
}

TEST(WriteFileAtomic, WithFsync) {
  dmtest::TempDir tmp;
  const fs::path file = tmp / "synced.npy";
  std::string data(100000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  depthmask::write_file_atomic(file, data.data(), data.size(), true);
  EXPECT_EQ(read_all(file), data);
  depthmask::write_file_atomic(file, "x", 1, true);
  EXPECT_EQ(read_all(file), "x");
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"synced.npy"});
}

TEST(WriteFileAtomic, EmptyContent) {
  dmtest::TempDir tmp;
  const fs::path file = tmp / "empty";
  depthmask::write_file_atomic(file, "old", 3, false);
  depthmask::write_file_atomic(file, nullptr, 0, false);
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(fs::file_size(file), 0u);
}

TEST(WriteFileAtomic, MissingFolderThrowsNamingThePath) {
  dmtest::TempDir tmp;
  const fs::path file = tmp / "no/such/dir/x.tiff";
  const std::string msg = message_of<OutputError>([&] { depthmask::write_file_atomic(file, "abc", 3, false); });
  EXPECT_TRUE(Contains(msg, file.string()));
  EXPECT_TRUE(names_in(tmp.path()).empty());
}

TEST(WriteFileAtomic, PathThroughARegularFileThrowsAndKeepsTheFile) {
  dmtest::TempDir tmp;
  const fs::path blocker = tmp / "file.txt";
  depthmask::write_file_atomic(blocker, "keep me", 7, false);
  const fs::path file = blocker / "x.tiff";
  for (bool sync : {false, true}) {
    const std::string msg = message_of<OutputError>([&] { depthmask::write_file_atomic(file, "abc", 3, sync); });
    EXPECT_TRUE(Contains(msg, file.string()));
    EXPECT_TRUE(Contains(msg, "Not a directory"));
  }
  EXPECT_EQ(read_all(blocker), "keep me");
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"file.txt"});
}

TEST(WriteFileAtomic, RenameFailureKeepsTheOldContentAndRemovesTheTemporary) {
  dmtest::TempDir tmp;
  // The target is a non-empty folder: the temporary file is written, the rename over it fails.
  const fs::path target = tmp / "out.tiff";
  fs::create_directories(target);
  depthmask::write_file_atomic(target / "inside", "old", 3, false);
  const std::string msg = message_of<OutputError>([&] { depthmask::write_file_atomic(target, "new", 3, false); });
  EXPECT_TRUE(Contains(msg, target.string()));
  EXPECT_TRUE(Contains(msg, "rename"));
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(read_all(target / "inside"), "old");
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"out.tiff"});
}

// ---------------------------------------------------------------------------------------------------
// ensure_output_dir and output_path

TEST(EnsureOutputDir, CreatesNestedFoldersAndLeavesNoProbe) {
  dmtest::TempDir tmp;
  const fs::path dir = tmp / "a/b/c";
  depthmask::ensure_output_dir(dir);
  EXPECT_TRUE(fs::is_directory(dir));
  EXPECT_TRUE(names_in(dir).empty());
  depthmask::ensure_output_dir(dir);  // existing: fine
  EXPECT_TRUE(names_in(dir).empty());
}

TEST(EnsureOutputDir, PathThroughARegularFileThrowsNamingTheFolder) {
  dmtest::TempDir tmp;
  const fs::path blocker = tmp / "file.txt";
  depthmask::write_file_atomic(blocker, "x", 1, false);
  const fs::path dir = blocker / "out";
  std::string msg = message_of<OutputError>([&] { depthmask::ensure_output_dir(dir); });
  EXPECT_TRUE(Contains(msg, dir.string()));
  // The path itself is a regular file.
  msg = message_of<OutputError>([&] { depthmask::ensure_output_dir(blocker); });
  EXPECT_TRUE(Contains(msg, blocker.string()));
  EXPECT_EQ(read_all(blocker), "x");
}

TEST(OutputPath, NamesFilesAfterTheId) {
  EXPECT_EQ(depthmask::output_path("/o", "000001", "tiff"), fs::path("/o/000001.tiff"));
  EXPECT_EQ(depthmask::output_path("out", "frame-7", "preview.png"), fs::path("out/frame-7.preview.png"));
}

// ---------------------------------------------------------------------------------------------------
// make_preview

struct PreviewInput {
  cv::Mat color, mask, depth;
};

// 7x5: a color gradient, a mask with a zero column, depth with invalid values at known places.
PreviewInput preview_input(float invalid) {
  const int w = 7, h = 5;
  PreviewInput in;
  in.color = cv::Mat(h, w, CV_8UC3);
  in.mask = cv::Mat(h, w, CV_8UC1, cv::Scalar(200));
  in.depth = cv::Mat(h, w, CV_32FC1);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      in.color.at<cv::Vec3b>(y, x) = cv::Vec3b(static_cast<uchar>(10 * x), static_cast<uchar>(20 * y), 77);
      in.depth.at<float>(y, x) = 0.5f + 0.1f * static_cast<float>(x + y);
    }
  in.mask.col(2).setTo(0);
  in.depth.at<float>(1, 1) = invalid;
  in.depth.at<float>(3, 4) = kNaN;
  in.depth.at<float>(0, 0) = 0.5f;  // the minimum valid value
  in.depth.at<float>(4, 6) = 2.0f;  // the maximum
  return in;
}

cv::Vec3b turbo(uchar v) {
  cv::Mat one(1, 1, CV_8UC1, cv::Scalar(v)), c;
  cv::applyColorMap(one, c, cv::COLORMAP_TURBO);
  return c.at<cv::Vec3b>(0, 0);
}

void check_preview(const PreviewInput& in, const cv::Mat& p, float invalid) {
  const int w = in.depth.cols, h = in.depth.rows;
  ASSERT_EQ(p.type(), CV_8UC3);
  ASSERT_EQ(p.cols, 3 * w);
  ASSERT_EQ(p.rows, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const auto mid = p.at<cv::Vec3b>(y, w + x);
      const uchar m = in.mask.at<uchar>(y, x) ? 255 : 0;
      EXPECT_EQ(mid, cv::Vec3b(m, m, m)) << "mask at " << x << "," << y;
      const float d = in.depth.at<float>(y, x);
      const bool bad = std::isnan(d) || d == invalid;
      const auto right = p.at<cv::Vec3b>(y, 2 * w + x);
      if (bad)
        EXPECT_EQ(right, cv::Vec3b(0, 0, 0)) << "invalid depth at " << x << "," << y << " must be black";
      else
        EXPECT_NE(right, cv::Vec3b(0, 0, 0)) << "valid depth at " << x << "," << y << " must be coloured";
    }
  // The colour scale spans the valid values.
  EXPECT_EQ(p.at<cv::Vec3b>(0, 2 * w), turbo(0));
  EXPECT_EQ(p.at<cv::Vec3b>(h - 1, 3 * w - 1), turbo(255));
}

TEST(Preview, ThreePanelsWithInvalidPixelsBlack) {
  const float invalid = 0.0f;
  const PreviewInput in = preview_input(invalid);
  const cv::Mat p = depthmask::make_preview(in.color, in.mask, in.depth, invalid);
  check_preview(in, p, invalid);
  // Left third: the color image as is.
  cv::Mat diff;
  cv::absdiff(p(cv::Rect(0, 0, in.color.cols, in.color.rows)), in.color, diff);
  EXPECT_EQ(cv::countNonZero(diff.reshape(1)), 0);
}

TEST(Preview, NegativeAndNanInvalid) {
  for (const float invalid : {-1.0f, kNaN}) {
    const PreviewInput in = preview_input(invalid);
    const cv::Mat p = depthmask::make_preview(in.color, in.mask, in.depth, invalid);
    check_preview(in, p, invalid);
  }
}

TEST(Preview, ZeroIsAValidDepthWhenInvalidIsNan) {
  PreviewInput in = preview_input(kNaN);
  in.depth.at<float>(2, 3) = 0.0f;  // below every other value: the new minimum
  const cv::Mat p = depthmask::make_preview(in.color, in.mask, in.depth, kNaN);
  EXPECT_EQ(p.at<cv::Vec3b>(2, 2 * in.depth.cols + 3), turbo(0));
  EXPECT_EQ(p.at<cv::Vec3b>(1, 2 * in.depth.cols + 1), cv::Vec3b(0, 0, 0));  // NaN stays black
}

TEST(Preview, GreyLeftThirdWithoutColor) {
  const PreviewInput in = preview_input(0.0f);
  for (const cv::Mat& color : {cv::Mat(), cv::Mat(3, 3, CV_8UC3, cv::Scalar(1, 2, 3))}) {  // none, or the wrong size
    const cv::Mat p = depthmask::make_preview(color, in.mask, in.depth, 0.0f);
    ASSERT_EQ(p.size(), cv::Size(3 * in.depth.cols, in.depth.rows));
    const cv::Vec3b first = p.at<cv::Vec3b>(0, 0);
    EXPECT_EQ(first[0], first[1]);
    EXPECT_EQ(first[1], first[2]);
    EXPECT_GT(first[0], 0);
    EXPECT_LT(first[0], 255);
    for (int y = 0; y < in.depth.rows; ++y)
      for (int x = 0; x < in.depth.cols; ++x) EXPECT_EQ(p.at<cv::Vec3b>(y, x), first) << x << "," << y;
  }
}

TEST(Preview, AllInvalidGivesABlackRightThird) {
  const cv::Mat depth(4, 6, CV_32FC1, cv::Scalar(0));
  const cv::Mat mask(4, 6, CV_16UC1, cv::Scalar(1000));
  const cv::Mat p = depthmask::make_preview(cv::Mat(), mask, depth, 0.0f);
  ASSERT_EQ(p.size(), cv::Size(18, 4));
  EXPECT_EQ(cv::countNonZero(p(cv::Rect(12, 0, 6, 4)).clone().reshape(1)), 0);
  EXPECT_EQ(cv::countNonZero(p(cv::Rect(6, 0, 6, 4)).clone().reshape(1)), 6 * 4 * 3);  // 16-bit mask, all set
}

}  // namespace

TEST(Crc32, IsZlibsCrc32SoEarlierManifestsStillVerify) {
  const char check[] = "123456789";
  EXPECT_EQ(depthmask::crc32_of(check, 9), 0xCBF43926u);  // the CRC-32 check value
  std::vector<uint8_t> bytes(3 << 20);
  uint32_t x = 12345;
  for (uint8_t& b : bytes) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 24);
  for (const size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{4096}, bytes.size()}) {
    const uLong z = ::crc32(0L, bytes.data(), static_cast<uInt>(n));
    EXPECT_EQ(depthmask::crc32_of(bytes.data(), n), static_cast<uint32_t>(z)) << n;
    // Continued over parts, as FileBytes::crc32() does.
    const size_t half = n / 2;
    EXPECT_EQ(depthmask::crc32_of(bytes.data() + half, n - half, depthmask::crc32_of(bytes.data(), half)),
              static_cast<uint32_t>(z))
        << n;
  }
}
