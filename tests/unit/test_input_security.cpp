// The security of inputs (docs/RELIABILITY.md): paths from dataset index files stay inside the dataset
// folder unless input.allow_paths_outside_root; files and image sizes are bounded before they are
// read or decoded (input.max_file_bytes, input.max_image_pixels); outputs never overwrite inputs; text
// files the readers take are bounded; and the regression tests of what the fuzzers found.
#include <gtest/gtest.h>

#include <zlib.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/frame_writer.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "layout_fixtures.h"
#include "test_support.h"

using dmtest::Contains;
using dmtest::message_of;

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;

dm::Config tum_config(const fs::path& root, bool allow = false) {
  dm::Config c;
  c.input.root = root;
  c.input.layout = dm::InputLayout::Tum;
  c.input.allow_paths_outside_root = allow;
  return c;
}

// A TUM sequence whose depth.txt names one more image, `path`, on line 4.
void write_tum_naming(const fs::path& root, const std::string& path) {
  dmfix::write_tum(root);
  std::ifstream in(root / "depth.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t third = text.find('\n', text.find('\n', text.find('\n') + 1) + 1);  // after the 3 comment lines
  text.insert(third + 1, "1305031102.000000 " + path + "\n");
  dmtest::write_text(root / "depth.txt", text);
}

TEST(IndexPaths, DotDotOutOfTheDatasetIsRefusedWithFileLineAndPath) {
  dmtest::TempDir tmp;
  write_tum_naming(tmp / "seq", "depth/../../secret.png");
  const std::string msg = message_of<dm::InputError>([&] { dm::resolve_input(tum_config(tmp / "seq")); });
  EXPECT_TRUE(Contains(msg, (tmp / "seq" / "depth.txt").string() + "' line 4"));
  EXPECT_TRUE(Contains(msg, "'depth/../../secret.png' climbs out of the dataset folder"));
  EXPECT_TRUE(Contains(msg, "input.allow_paths_outside_root"));
}

TEST(IndexPaths, AbsolutePathIsRefused) {
  dmtest::TempDir tmp;
  write_tum_naming(tmp / "seq", (tmp / "elsewhere.png").string());
  const std::string msg = message_of<dm::InputError>([&] { dm::resolve_input(tum_config(tmp / "seq")); });
  EXPECT_TRUE(Contains(msg, "line 4"));
  EXPECT_TRUE(Contains(msg, "is an absolute path"));
}

TEST(IndexPaths, DotDotThatStaysInsideIsAccepted) {
  dmtest::TempDir tmp;
  // depth/../depth/x.png never leaves the folder.
  write_tum_naming(tmp / "seq", "depth/../depth/1305031102.000000.png");
  EXPECT_NO_THROW(dm::resolve_input(tum_config(tmp / "seq")));
}

TEST(IndexPaths, AllowPathsOutsideRootLetsThemThrough) {
  dmtest::TempDir tmp;
  dmfix::write_tum(tmp / "seq");
  // rgb.txt names images in a sibling folder, as a user who keeps color elsewhere would.
  std::ifstream in(tmp / "seq" / "rgb.txt");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t p = text.find(" rgb/"); p != std::string::npos; p = text.find(" rgb/", p + 1))
    text.replace(p, 5, " ../colors/");
  dmtest::write_text(tmp / "seq" / "rgb.txt", text);
  fs::rename(tmp / "seq" / "rgb", tmp / "colors");
  EXPECT_THROW(dm::resolve_input(tum_config(tmp / "seq")), dm::InputError);
  const dm::ResolvedInput r = dm::resolve_input(tum_config(tmp / "seq", true));
  ASSERT_EQ(r.listing.frames.size(), dmfix::kTumFrames.size());
  EXPECT_EQ(r.listing.frames[0].color, (tmp / "colors" / (dmfix::kTumFrames[0].rgb_ts + ".png")).lexically_normal());
}

TEST(IndexPaths, ConfigKeysParseValidateAndRoundTrip) {
  dmtest::TempDir tmp;
  dmtest::write_text(tmp / "c.yaml",
                     "input:\n  allow_paths_outside_root: true\n  max_file_bytes: 1000\n  max_image_pixels: 64\n");
  const dm::Config c = dm::load_config(tmp / "c.yaml", {});
  EXPECT_TRUE(c.input.allow_paths_outside_root);
  EXPECT_EQ(c.input.max_file_bytes, 1000u);
  EXPECT_EQ(c.input.max_image_pixels, 64u);
  const dm::Config d = dm::load_config(std::nullopt, {});
  EXPECT_FALSE(d.input.allow_paths_outside_root);
  EXPECT_EQ(d.input.max_file_bytes, uint64_t{1} << 30);
  EXPECT_EQ(d.input.max_image_pixels, uint64_t{1} << 28);
  dmtest::write_text(tmp / "back.yaml", dm::to_yaml(c, tmp.path()));
  const dm::Config back = dm::load_config(tmp / "back.yaml", {});
  EXPECT_TRUE(back.input.allow_paths_outside_root);
  EXPECT_EQ(back.input.max_file_bytes, 1000u);
  EXPECT_EQ(back.input.max_image_pixels, 64u);
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>(
                           [] { dm::load_config(std::nullopt, {dm::parse_override("input.max_image_pixels=0")}); }),
                       "'input.max_image_pixels'"));
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>(
                           [] { dm::load_config(std::nullopt, {dm::parse_override("input.max_file_bytes=-5")}); }),
                       "'input.max_file_bytes'"));
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>([] {
                         dm::load_config(std::nullopt, {dm::parse_override("input.allow_paths_outside_root=maybe")});
                       }),
                       "expected true or false"));
  // OpenCV takes byte counts as int: larger limits are refused rather than wrapped.
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>([] {
                         dm::load_config(std::nullopt, {dm::parse_override("input.max_file_bytes=3000000000")});
                       }),
                       "expected an integer in [1, 2147483647]"));
}

// --- regressions: what the sanitizers and fuzzers found ----------------------------------------------

// output.invalid beyond float's range: the double -> float conversion was undefined behaviour (UBSan
// float-cast-overflow), seen while writing fuzz_config.
TEST(FuzzRegressions, OutputInvalidBeyondFloatRangeIsAConfigError) {
  for (const char* v : {"1e300", "-3.5e38"})
    EXPECT_TRUE(Contains(message_of<dm::ConfigError>([&] {
                           dm::load_config(std::nullopt, {dm::parse_override(std::string("output.invalid=") + v)});
                         }),
                         "expected 0, nan or a finite 32-bit float number"))
        << v;
  EXPECT_EQ(dm::load_config(std::nullopt, {dm::parse_override("output.invalid=-3.4e38")}).output.invalid, -3.4e38f);
}

// --- bounds before decoding ------------------------------------------------------------------------

std::unique_ptr<dm::MemoryBackend> cpu_backend() {
  return dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
}

void put_be32(std::vector<uint8_t>& v, uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<uint8_t>(x >> s));
}
void put_chunk(std::vector<uint8_t>& png, const char* type, const std::vector<uint8_t>& data) {
  put_be32(png, static_cast<uint32_t>(data.size()));
  const size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  put_be32(png, static_cast<uint32_t>(crc32(0, png.data() + start, static_cast<uInt>(png.size() - start))));
}
// A PNG whose header (with a valid CRC) claims w x h 16-bit gray pixels, followed by no image data.
std::vector<uint8_t> png_claiming(uint32_t w, uint32_t h) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> ihdr;
  put_be32(ihdr, w);
  put_be32(ihdr, h);
  ihdr.insert(ihdr.end(), {16, 0, 0, 0, 0});
  put_chunk(png, "IHDR", ihdr);
  put_chunk(png, "IEND", {});
  return png;
}

struct Frame {
  dmtest::TempDir tmp;
  dm::FrameEntry f;
  Frame() {
    f.id = "0";
    f.depth = tmp / "depth.png";
    f.mask = tmp / "mask.png";
    dmfix::write_png(f.depth, dmfix::depth16(1));
    dmfix::write_png(f.mask, dmfix::mask8(1));
  }
};

TEST(InputLimits, PngHeaderClaiming100000x100000IsRefusedBeforeDecoding) {
  Frame fr;
  const std::vector<uint8_t> png = png_claiming(100000, 100000);
  std::ofstream(fr.f.depth, std::ios::binary)
      .write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  const std::string msg = message_of<dm::InputError>([&] { slot.load(fr.f, false); });
  EXPECT_TRUE(Contains(msg, "depth file '" + fr.f.depth.string() + "' is a PNG image of 100000x100000 pixels"));
  EXPECT_TRUE(Contains(msg, "input.max_image_pixels"));
  EXPECT_TRUE(slot.depth().empty());
  // The same header for an indexed-colour mask (libpng's path, not OpenCV's) is refused the same way.
  std::vector<uint8_t> palette = png;
  palette[25] = 3;  // colour type: palette (the CRC no longer matches: the check comes first)
  std::ofstream(fr.f.mask, std::ios::binary)
      .write(reinterpret_cast<const char*>(palette.data()), static_cast<std::streamsize>(palette.size()));
  dmfix::write_png(fr.f.depth, dmfix::depth16(1));
  EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { slot.load(fr.f, false); }), "is a PNG image of 100000x100000"));
}

TEST(InputLimits, ConfiguredPixelLimitAppliesToPngTiffExrAndJpegHeaders) {
  Frame fr;
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  dmtest::enable_opencv_exr();                              // the cv::imwrite of an EXR below
  slot.set_limits(dm::InputLimits{uint64_t{1} << 30, 47});  // the fixtures are 8x6 = 48 pixels
  EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { slot.load(fr.f, false); }), "is a PNG image of 8x6 pixels"));
  cv::Mat f32(dmfix::kH, dmfix::kW, CV_32FC1, cv::Scalar(1.5f));
  for (const char* ext : {"tiff", "exr"}) {
    fr.f.depth = fr.tmp / (std::string("depth.") + ext);
    ASSERT_TRUE(cv::imwrite(fr.f.depth.string(), f32));
    const std::string format = std::string(ext) == "tiff" ? "TIFF" : "EXR";
    EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { slot.load(fr.f, false); }),
                         "is a " + format + " image of 8x6 pixels"))
        << ext;
  }
  fr.f.color = fr.tmp / "color.jpg";
  ASSERT_TRUE(cv::imwrite(fr.f.color.string(), dmfix::color8(1)));
  fr.f.depth = fr.tmp / "depth.png";
  slot.set_limits(dm::InputLimits{uint64_t{1} << 30, 48});
  EXPECT_NO_THROW(slot.load(fr.f, true));
  EXPECT_EQ(slot.color().size(), cv::Size(dmfix::kW, dmfix::kH));
  // A JPEG color image larger than the limit: 9x6.
  ASSERT_TRUE(cv::imwrite(fr.f.color.string(), cv::Mat(6, 9, CV_8UC3, cv::Scalar(1, 2, 3))));
  EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { slot.load(fr.f, true); }),
                       "color file '" + fr.f.color.string() + "' is a JPEG image of 9x6"));
}

TEST(InputLimits, FileLargerThanMaxFileBytesIsNotRead) {
  Frame fr;
  auto backend = cpu_backend();
  dm::FrameSlot slot(*backend);
  const auto size = fs::file_size(fr.f.depth);
  slot.set_limits(dm::InputLimits{size - 1, uint64_t{1} << 28});
  const std::string msg = message_of<dm::InputError>([&] { slot.load(fr.f, false); });
  EXPECT_TRUE(Contains(msg, "depth file '" + fr.f.depth.string() + "' is " + std::to_string(size) + " bytes"));
  EXPECT_TRUE(Contains(msg, "input.max_file_bytes"));
  slot.set_limits(dm::InputLimits{size, uint64_t{1} << 28});
  EXPECT_NO_THROW(slot.load(fr.f, false));
}

TEST(InputLimits, ConfigLimitsReachTheLoader) {
  dm::Config c;
  c.input.max_file_bytes = 123;
  c.input.max_image_pixels = 45;
  const dm::InputLimits l = dm::input_limits(c);
  EXPECT_EQ(l.max_file_bytes, 123u);
  EXPECT_EQ(l.max_image_pixels, 45u);
}

TEST(TextFiles, AnEndlessFileIsCutOffNotReadIntoMemory) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  const std::string msg = message_of<dm::ConfigError>(
      [] { dm::load_config(std::nullopt, {dm::parse_override("input.intrinsics=/dev/zero")}); });
  EXPECT_TRUE(Contains(msg, "'/dev/zero' is larger than 256 MiB"));
}

// --- outputs never overwrite inputs ----------------------------------------------------------------

TEST(OutputsSpareInputs, AnOutputThatIsAnInputIsRefusedAtTheStart) {
  dmtest::TempDir tmp;
  // Depth files named like the outputs: out/<id>.tiff in the input folder itself.
  ASSERT_TRUE(cv::imwrite((tmp / "0.tiff").string(), dmfix::depth16(0)));
  ASSERT_TRUE(cv::imwrite((tmp / "1.tiff").string(), dmfix::depth16(1)));
  dmfix::write_png(tmp / "m" / "0.png", dmfix::mask8(0));
  dmfix::write_png(tmp / "m" / "1.png", dmfix::mask8(1));
  dm::Config c;
  c.input.root = tmp.path();
  c.input.depth = "{id}.tiff";
  c.input.mask = "m/{id}.png";
  c.input.color.clear();
  c.output.dir = tmp.path();
  c.output.formats = {dm::OutputFormat::Tiff};
  const dm::DatasetListing listing = dm::list_frames(c.input);
  const std::string msg = message_of<dm::ConfigError>([&] { dm::check_outputs_spare_inputs(c, listing); });
  EXPECT_TRUE(Contains(msg, "output '" + (tmp / "0.tiff").string() + "' of frame 0 would overwrite the input file"));
  EXPECT_TRUE(Contains(msg, "choose an output.dir"));
  // Through a link to the input folder too.
  fs::create_directory_symlink(tmp.path(), tmp / "link");
  c.output.dir = tmp / "link";
  EXPECT_THROW(dm::check_outputs_spare_inputs(c, listing), dm::ConfigError);
  // Another format, or another folder, writes nothing over the inputs.
  c.output.formats = {dm::OutputFormat::Npy, dm::OutputFormat::Json};
  EXPECT_NO_THROW(dm::check_outputs_spare_inputs(c, listing));
  c.output.formats = {dm::OutputFormat::Tiff};
  c.output.dir = tmp / "out";
  EXPECT_NO_THROW(dm::check_outputs_spare_inputs(c, listing));
}

TEST(OutputsSpareInputs, TheRunsOwnFilesSpareInputsToo) {
  // input.intrinsics named like the run record or the QA report, in the output folder.
  for (const char* name : {"depthmask-run.json", "depthmask-report.html", "depthmask-manifest.json"}) {
    SCOPED_TRACE(name);
    dmtest::TempDir tmp;
    ASSERT_TRUE(cv::imwrite((tmp / "0.png").string(), dmfix::depth16(0)));
    dmfix::write_png(tmp / "m" / "0.png", dmfix::mask8(0));
    dmtest::write_text(tmp / name, "fx: 500\nfy: 500\ncx: 2\ncy: 2\n");
    dm::Config c;
    c.input.root = tmp.path();
    c.input.depth = "{id}.png";
    c.input.mask = "m/{id}.png";
    c.input.color.clear();
    c.input.intrinsics_file = tmp / name;
    c.output.dir = tmp.path();
    c.output.formats = {dm::OutputFormat::Npy};
    const dm::DatasetListing listing = dm::list_frames(c.input);
    const std::string msg = message_of<dm::ConfigError>([&] { dm::check_outputs_spare_inputs(c, listing); });
    EXPECT_TRUE(Contains(msg, "would overwrite the input file '" + (tmp / name).string() + "'")) << msg;
  }
}

TEST(OutputsSpareInputs, TheRunStopsBeforeWritingAnything) {
  dmtest::TempDir tmp;
  ASSERT_TRUE(cv::imwrite((tmp / "0.tiff").string(), dmfix::depth16(0)));
  dmfix::write_png(tmp / "m" / "0.png", dmfix::mask8(0));
  dm::Config c;
  c.input.root = tmp.path();
  c.input.layout = dm::InputLayout::Pattern;
  c.input.depth = "{id}.tiff";
  c.input.mask = "m/{id}.png";
  c.input.color.clear();
  c.output.dir = tmp.path();
  c.output.formats = {dm::OutputFormat::Tiff};
  const auto before = fs::last_write_time(tmp / "0.tiff");
  auto backend = cpu_backend();
  const dm::BackendChoice choice{dm::BackendKind::Cpu, 0, "test", false};
  EXPECT_THROW(dm::run_batch(c, *backend, choice, nullptr, nullptr), dm::ConfigError);
  EXPECT_EQ(fs::last_write_time(tmp / "0.tiff"), before);
  EXPECT_FALSE(fs::exists(tmp / dm::kManifestName));
}

}  // namespace
