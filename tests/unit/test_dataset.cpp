// Unit tests of the frame listing: natural order, `{id}` substitution and list_frames over folders
// built in a temporary directory, plus the committed sample.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/errors.h"
#include "test_support.h"

using dmtest::Contains;
using dmtest::message_of;

namespace {

namespace fs = std::filesystem;
using depthmask::DatasetListing;
using depthmask::InputConfig;
using depthmask::InputError;
using depthmask::list_frames;
using depthmask::natural_less;
using depthmask::substitute_id;

void touch(const fs::path& p, const std::string& content = "x") {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

std::vector<std::string> ids_of(const DatasetListing& l) {
  std::vector<std::string> ids;
  for (const auto& f : l.frames) ids.push_back(f.id);
  return ids;
}

InputConfig input_at(const fs::path& root) {
  InputConfig in;
  in.root = root;
  return in;
}

// ---------------------------------------------------------------------------------------------------
// natural_less

TEST(NaturalLess, NumbersCompareByValue) {
  EXPECT_TRUE(natural_less("2", "10"));
  EXPECT_FALSE(natural_less("10", "2"));
  EXPECT_TRUE(natural_less("9", "10"));
  EXPECT_TRUE(natural_less("99", "100"));
  EXPECT_TRUE(natural_less("frame-2", "frame-10"));
  EXPECT_FALSE(natural_less("frame-10", "frame-2"));
  EXPECT_TRUE(natural_less("a2b", "a2c"));
  EXPECT_TRUE(natural_less("a2b9", "a2b10"));
  EXPECT_TRUE(natural_less("18446744073709551616", "18446744073709551617"));  // beyond 64 bits
  EXPECT_TRUE(natural_less("123456789012345678901", "1234567890123456789010"));
}

TEST(NaturalLess, TextComparesBytewise) {
  EXPECT_TRUE(natural_less("a", "b"));
  EXPECT_FALSE(natural_less("b", "a"));
  EXPECT_TRUE(natural_less("A", "a"));
  EXPECT_TRUE(natural_less("frame", "frame-1"));  // prefix first
  EXPECT_FALSE(natural_less("frame-1", "frame"));
  EXPECT_TRUE(natural_less("", "a"));
  EXPECT_FALSE(natural_less("", ""));
  EXPECT_TRUE(natural_less("1", "a"));  // '1' < 'a' bytewise
}

TEST(NaturalLess, EqualStringsAreNotLess) {
  for (const char* s : {"", "a", "10", "frame-000010", "007", "x1y2z3"}) EXPECT_FALSE(natural_less(s, s)) << s;
}

TEST(NaturalLess, LeadingZeros) {
  EXPECT_TRUE(natural_less("000002", "000010"));
  EXPECT_FALSE(natural_less("000010", "000002"));
  EXPECT_TRUE(natural_less("02", "10"));
  EXPECT_TRUE(natural_less("007", "10"));
  EXPECT_TRUE(natural_less("0", "1"));
  EXPECT_TRUE(natural_less("00", "1"));
  // Same value: a strict order still (fewer leading zeros first), never both ways.
  EXPECT_NE(natural_less("1", "01"), natural_less("01", "1"));
  EXPECT_NE(natural_less("01", "001"), natural_less("001", "01"));
  EXPECT_NE(natural_less("0", "00"), natural_less("00", "0"));
  EXPECT_TRUE(natural_less("1", "01"));
}

TEST(NaturalLess, SortsAMixedList) {
  std::vector<std::string> v = {"frame-10", "frame-2", "10", "2", "1", "frame-1", "b", "a10", "a9", "000003"};
  std::sort(v.begin(), v.end(), natural_less);
  const std::vector<std::string> want = {"1", "2", "000003", "10", "a9", "a10", "b", "frame-1", "frame-2", "frame-10"};
  EXPECT_EQ(v, want);
}

// ---------------------------------------------------------------------------------------------------
// substitute_id

TEST(SubstituteId, ReplacesTheId) {
  EXPECT_EQ(substitute_id("depth/{id}.png", "000001"), "depth/000001.png");
  EXPECT_EQ(substitute_id("{id}/depth.png", "scene-3"), "scene-3/depth.png");
  EXPECT_EQ(substitute_id("frame-{id}.segm.png", "000007"), "frame-000007.segm.png");
  EXPECT_EQ(substitute_id("{id}", "x"), "x");
  EXPECT_EQ(substitute_id("no-id.png", "x"), "no-id.png");
  EXPECT_EQ(substitute_id("d/{id}.png", ""), "d/.png");
}

// ---------------------------------------------------------------------------------------------------
// list_frames

TEST(ListFrames, NumericIdsInNaturalOrderWithMaskAndColorPaths) {
  dmtest::TempDir tmp;
  for (const char* id : {"10", "2", "1", "9"}) {
    touch(tmp / (std::string("depth/") + id + ".png"));
    touch(tmp / (std::string("mask/") + id + ".png"));
    touch(tmp / (std::string("color/") + id + ".png"));
  }
  const DatasetListing l = list_frames(input_at(tmp.path()));
  EXPECT_EQ(ids_of(l), (std::vector<std::string>{"1", "2", "9", "10"}));
  ASSERT_EQ(l.frames.size(), 4u);
  for (size_t i = 0; i < l.frames.size(); ++i) {
    const auto& f = l.frames[i];
    EXPECT_EQ(f.index, i);
    EXPECT_EQ(f.depth, tmp / ("depth/" + f.id + ".png"));
    EXPECT_EQ(f.mask, tmp / ("mask/" + f.id + ".png"));
    EXPECT_EQ(f.color, tmp / ("color/" + f.id + ".png"));
  }
  EXPECT_EQ(l.unmatched_files, 0u);
  EXPECT_TRUE(l.unmatched_examples.empty());
}

TEST(ListFrames, ZeroPaddedIdsKeepTheirText) {
  dmtest::TempDir tmp;
  for (const char* id : {"000010", "000002", "000000"}) touch(tmp / (std::string("depth/") + id + ".png"));
  const DatasetListing l = list_frames(input_at(tmp.path()));
  EXPECT_EQ(ids_of(l), (std::vector<std::string>{"000000", "000002", "000010"}));
  EXPECT_EQ(l.frames[1].mask, tmp / "mask/000002.png");  // paths exist or not: the mask is checked at load
}

TEST(ListFrames, IdsWithLetters) {
  dmtest::TempDir tmp;
  InputConfig in = input_at(tmp.path());
  in.depth = "frame-{id}.depth.png";
  in.mask = "segm/frame-{id}.segm.png";
  in.color = "frame-{id}.color.png";
  for (const char* id : {"b10", "a", "b9", "B"}) {
    touch(tmp / (std::string("frame-") + id + ".depth.png"));
    touch(tmp / (std::string("segm/frame-") + id + ".segm.png"));
    touch(tmp / (std::string("frame-") + id + ".color.png"));
  }
  const DatasetListing l = list_frames(in);
  EXPECT_EQ(ids_of(l), (std::vector<std::string>{"B", "a", "b9", "b10"}));
  ASSERT_EQ(l.frames.size(), 4u);
  EXPECT_EQ(l.frames[3].depth, tmp / "frame-b10.depth.png");
  EXPECT_EQ(l.frames[3].mask, tmp / "segm/frame-b10.segm.png");
  EXPECT_EQ(l.frames[3].color, tmp / "frame-b10.color.png");
  // Depth and color share the root folder: each belongs to a frame, none is a stray.
  EXPECT_EQ(l.unmatched_files, 0u);
}

TEST(ListFrames, IdInAFolderComponent) {
  dmtest::TempDir tmp;
  InputConfig in = input_at(tmp.path());
  in.depth = "{id}/depth.png";
  in.mask = "{id}/mask.png";
  in.color = "{id}/color.png";
  for (const char* id : {"scene10", "scene2", "scene1"}) {
    touch(tmp / (std::string(id) + "/depth.png"));
    touch(tmp / (std::string(id) + "/mask.png"));
  }
  touch(tmp / "scene2/color.png");
  touch(tmp / "scene3/mask.png");        // no depth: not a frame, a stray
  touch(tmp / "scene1/deep/depth.png");  // one level too deep: not matched
  touch(tmp / "depth.png");              // at the root: no id, not matched
  const DatasetListing l = list_frames(in);
  EXPECT_EQ(ids_of(l), (std::vector<std::string>{"scene1", "scene2", "scene10"}));
  ASSERT_EQ(l.frames.size(), 3u);
  EXPECT_EQ(l.frames[0].depth, tmp / "scene1/depth.png");
  EXPECT_EQ(l.frames[0].mask, tmp / "scene1/mask.png");
  EXPECT_TRUE(l.frames[0].color.empty());
  EXPECT_EQ(l.frames[1].color, tmp / "scene2/color.png");
  EXPECT_TRUE(l.frames[2].color.empty());
  EXPECT_EQ(l.unmatched_files, 1u);  // scene3/mask.png
  ASSERT_EQ(l.unmatched_examples.size(), 1u);
  EXPECT_EQ(l.unmatched_examples[0], tmp / "scene3/mask.png");
}

TEST(ListFrames, IdInAMiddleFolderUnderAFixedFolder) {
  dmtest::TempDir tmp;
  InputConfig in = input_at(tmp.path());
  in.depth = "scenes/{id}/aligned/depth.png";
  in.mask = "scenes/{id}/aligned/mask.png";
  in.color = "";
  touch(tmp / "scenes/s-20/aligned/depth.png");
  touch(tmp / "scenes/s-3/aligned/depth.png");
  touch(tmp / "scenes/s-4/raw/depth.png");  // wrong middle folder
  const DatasetListing l = list_frames(in);
  EXPECT_EQ(ids_of(l), (std::vector<std::string>{"s-3", "s-20"}));
  EXPECT_EQ(l.frames[0].mask, tmp / "scenes/s-3/aligned/mask.png");
  EXPECT_TRUE(l.frames[0].color.empty());
}

TEST(ListFrames, ColorEmptyWhenTheFileIsMissingOrThePatternUnset) {
  dmtest::TempDir tmp;
  for (const char* id : {"1", "2", "3"}) {
    touch(tmp / (std::string("depth/") + id + ".png"));
    touch(tmp / (std::string("mask/") + id + ".png"));
  }
  touch(tmp / "color/2.png");
  DatasetListing l = list_frames(input_at(tmp.path()));
  ASSERT_EQ(l.frames.size(), 3u);
  EXPECT_TRUE(l.frames[0].color.empty());
  EXPECT_EQ(l.frames[1].color, tmp / "color/2.png");
  EXPECT_TRUE(l.frames[2].color.empty());
  EXPECT_EQ(l.unmatched_files, 0u);

  InputConfig in = input_at(tmp.path());
  in.color.clear();
  l = list_frames(in);
  ASSERT_EQ(l.frames.size(), 3u);
  for (const auto& f : l.frames) EXPECT_TRUE(f.color.empty()) << f.id;
}

TEST(ListFrames, CountsUnmatchedFiles) {
  dmtest::TempDir tmp;
  for (const char* id : {"1", "2"}) {
    touch(tmp / (std::string("depth/") + id + ".png"));
    touch(tmp / (std::string("mask/") + id + ".png"));
  }
  touch(tmp / "mask/3.png");      // a mask without its depth
  touch(tmp / "depth/README");    // a stray README
  touch(tmp / "depth/4.jpg");     // wrong extension
  touch(tmp / "color/7.png");     // a color without its depth
  touch(tmp / "elsewhere/junk");  // not in a folder the patterns read: ignored
  touch(tmp / "notes.txt");       // ditto
  const DatasetListing l = list_frames(input_at(tmp.path()));
  EXPECT_EQ(ids_of(l), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(l.unmatched_files, 4u);
  std::vector<fs::path> ex = l.unmatched_examples;
  std::sort(ex.begin(), ex.end());
  EXPECT_EQ(
      ex, (std::vector<fs::path>{tmp / "color/7.png", tmp / "depth/4.jpg", tmp / "depth/README", tmp / "mask/3.png"}));
}

TEST(ListFrames, KeepsAtMostFiveUnmatchedExamples) {
  dmtest::TempDir tmp;
  touch(tmp / "depth/1.png");
  for (int i = 0; i < 9; ++i) touch(tmp / ("depth/stray" + std::to_string(i) + ".txt"));
  const DatasetListing l = list_frames(input_at(tmp.path()));
  EXPECT_EQ(l.unmatched_files, 9u);
  EXPECT_EQ(l.unmatched_examples.size(), 5u);
}

TEST(ListFrames, YamlFilesNextToFramesAreNotStrays) {
  dmtest::TempDir tmp;
  InputConfig in = input_at(tmp.path());
  in.depth = "{id}-depth.png";
  in.mask = "{id}-mask.png";
  touch(tmp / "1-depth.png");
  touch(tmp / "1-mask.png");
  touch(tmp / "depthmask.yaml");
  touch(tmp / "intrinsics.yml");
  touch(tmp / "stray.txt");
  const DatasetListing l = list_frames(in);
  EXPECT_EQ(ids_of(l), (std::vector<std::string>{"1"}));
  EXPECT_EQ(l.unmatched_files, 1u);
}

TEST(ListFrames, EmptyFolderOrNoMatchIsAnInputErrorNamingThePattern) {
  dmtest::TempDir tmp;
  std::string msg = message_of<InputError>([&] { list_frames(input_at(tmp.path())); });
  EXPECT_TRUE(Contains(msg, "depth/{id}.png"));
  EXPECT_TRUE(Contains(msg, tmp.path().string()));
  EXPECT_TRUE(Contains(msg, "input.depth"));

  touch(tmp / "depth/1.jpg");
  touch(tmp / "mask/1.png");
  touch(tmp / "1.png");
  msg = message_of<InputError>([&] { list_frames(input_at(tmp.path())); });
  EXPECT_TRUE(Contains(msg, "depth/{id}.png"));

  InputConfig in = input_at(tmp.path());
  in.depth = "frame-{id}.depth.png";
  msg = message_of<InputError>([&] { list_frames(in); });
  EXPECT_TRUE(Contains(msg, "frame-{id}.depth.png"));
}

TEST(ListFrames, MissingRootIsAnInputError) {
  dmtest::TempDir tmp;
  const fs::path root = tmp / "does-not-exist";
  std::string msg = message_of<InputError>([&] { list_frames(input_at(root)); });
  EXPECT_TRUE(Contains(msg, root.string()));
  EXPECT_TRUE(Contains(msg, "input.root"));

  touch(tmp / "a-file");
  msg = message_of<InputError>([&] { list_frames(input_at(tmp / "a-file")); });
  EXPECT_TRUE(Contains(msg, (tmp / "a-file").string()));
}

TEST(ListFrames, TheCommittedSampleHasEightFrames) {
  const fs::path root = dmtest::sample_dir();
  ASSERT_TRUE(fs::is_directory(root)) << root;
  const DatasetListing l = list_frames(input_at(root));
  ASSERT_EQ(l.frames.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const auto& f = l.frames[i];
    EXPECT_EQ(f.index, i);
    EXPECT_EQ(f.id, "00000" + std::to_string(i));
    EXPECT_TRUE(fs::is_regular_file(f.depth)) << f.depth;
    EXPECT_TRUE(fs::is_regular_file(f.mask)) << f.mask;
    EXPECT_TRUE(fs::is_regular_file(f.color)) << f.color;
  }
  EXPECT_EQ(l.unmatched_files, 0u);
}

TEST(ListFrames, TheSampleThroughItsOwnConfig) {
  const fs::path file = dmtest::sample_dir() / "depthmask.yaml";
  ASSERT_TRUE(fs::exists(file)) << file;
  const depthmask::Config c = depthmask::load_config(file, {}, fs::temp_directory_path());
  const DatasetListing l = list_frames(c.input);
  ASSERT_EQ(l.frames.size(), 8u);
  EXPECT_EQ(l.frames.front().id, "000000");
  EXPECT_EQ(l.frames.back().id, "000007");
}

TEST(ListFrames, TheApcLayoutWhenPresent) {
  const fs::path scene = dmtest::shared_data_dir() / "apc-vision-toolbox/scene-0000";
  if (!fs::is_directory(scene)) GTEST_SKIP() << "real data not present: " << scene;
  InputConfig in = input_at(scene);
  in.depth = "frame-{id}.depth.png";
  in.mask = "segm/frame-{id}.segm.png";
  in.color = "frame-{id}.color.png";
  const DatasetListing l = list_frames(in);
  ASSERT_EQ(l.frames.size(), 8u);
  EXPECT_EQ(l.frames[0].id, "000000");
  EXPECT_EQ(l.frames[7].id, "000007");
  for (const auto& f : l.frames) {
    EXPECT_TRUE(fs::is_regular_file(f.mask)) << f.mask;
    EXPECT_FALSE(f.color.empty()) << f.id;
  }
  // cam.info.txt sits in the root, which the depth and color patterns read from.
  EXPECT_GE(l.unmatched_files, 1u);
}

}  // namespace
