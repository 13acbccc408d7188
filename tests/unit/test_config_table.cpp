// Unit tests of the configuration tables (lib/src/config/keys.cpp): the set-by-user bit that the YAML
// reader and Config::set share (a C++ caller's value survives a detected layout), the key list, the
// limits taken from the kernels' constants, and the settings hash's text.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/kernels/mask_rule.h"
#include "depthmask/layouts.h"
#include "layout_fixtures.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
using dmtest::Contains;
using dmtest::message_of;
using dmtest::TempDir;

dm::Config config_at(const fs::path& root) {
  return dm::load_config(std::nullopt, {{"input.root", root.string(), "--input", true}}, root);
}

// The dotted names of the value keys in to_yaml's text, in order (nested maps as prefixes).
std::vector<std::string> keys_in_yaml(const std::string& yaml) {
  std::vector<std::string> out, stack;
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) {
    const size_t indent = line.find_first_not_of(' ');
    const size_t colon = line.find(':');
    if (indent == std::string::npos || colon == std::string::npos) continue;
    stack.resize(indent / 2);
    const std::string name = line.substr(indent, colon - indent);
    std::string dotted;
    for (const auto& s : stack) dotted += s + ".";
    dotted += name;
    if (colon + 1 == line.size())
      stack.push_back(name);  // a nested block map
    else
      out.push_back(dotted);
  }
  return out;
}

TEST(ConfigSetByUser, ACppSetDepthScaleSurvivesTumDetection) {
  TempDir tmp;
  dmfix::write_tum(tmp.path());
  // Not set: TUM's factor 5000.
  EXPECT_DOUBLE_EQ(dm::resolve_input(config_at(tmp.path())).config.depth.scale, 1.0 / 5000.0);
  // Set through Config::set, even to the default value: the user's.
  dm::Config c = config_at(tmp.path());
  c.set(c.depth.scale, 0.001);
  EXPECT_TRUE(c.is_set_by_user("depth.scale"));
  EXPECT_DOUBLE_EQ(dm::resolve_input(c).config.depth.scale, 0.001);
  // A plain assignment changes the value, not the bit: the layout's default replaces it.
  dm::Config plain = config_at(tmp.path());
  plain.depth.scale = 0.001;
  EXPECT_FALSE(plain.is_set_by_user("depth.scale"));
  EXPECT_DOUBLE_EQ(dm::resolve_input(plain).config.depth.scale, 1.0 / 5000.0);
}

TEST(ConfigSetByUser, ACppSetIntrinsicsSurvivesTheLayoutsCameraFile) {
  TempDir tmp;
  dmfix::write_seven_scenes(tmp.path());
  dm::Config c = config_at(tmp.path());
  dm::Intrinsics k;
  k.fx = k.fy = 500;
  k.cx = 4;
  k.cy = 3;
  c.set(c.input.intrinsics, k);
  EXPECT_TRUE(c.is_set_by_user("input.intrinsics"));
  const dm::ResolvedInput r = dm::resolve_input(c);
  ASSERT_TRUE(r.config.input.intrinsics);
  EXPECT_DOUBLE_EQ(r.config.input.intrinsics->fx, 500);  // not camera-intrinsics.txt's 585
  EXPECT_TRUE(r.config.input.intrinsics_file.empty());
  // The file field of the same key sets the same bit.
  dm::Config f = config_at(tmp.path());
  f.set(f.input.intrinsics_file, tmp / "camera-intrinsics.txt");
  EXPECT_TRUE(f.is_set_by_user("input.intrinsics"));
}

TEST(ConfigSetByUser, TheYamlReaderSetsTheBitOfEachKeyItNames) {
  TempDir tmp;
  const dm::Config c =
      dm::load_config_text("depth: {max: 2}\nlive: {sync: {tolerance_ms: 5}}\nregistration: {depth_distortion: ~}\n",
                           "t.yaml", tmp.path(), {dm::parse_override("mask.labels=[3]")}, tmp.path());
  for (const char* k : {"depth.max", "live.sync.tolerance_ms", "registration.depth_distortion.model",
                        "registration.depth_distortion.coeffs", "mask.labels"})
    EXPECT_TRUE(c.is_set_by_user(k)) << k;
  for (const char* k : {"depth.scale", "depth.min", "input.root", "output.dir", "mask.threshold"})
    EXPECT_FALSE(c.is_set_by_user(k)) << k;
  // A copy keeps the bits.
  const dm::Config copy = c;
  EXPECT_TRUE(copy.is_set_by_user("depth.max"));
}

TEST(ConfigSetByUser, NamesAndFieldsThatAreNoKeyAreRefused) {
  dm::Config c, other;
  EXPECT_THROW((void)c.is_set_by_user("depth.scal"), std::invalid_argument);
  EXPECT_THROW((void)c.is_set_by_user("live.mask"), std::invalid_argument);  // a map, not a key
  EXPECT_THROW(c.set(other.depth.scale, 0.5), std::invalid_argument);        // another Config's field
  EXPECT_THROW(c.set(c.registration.depth_distortion, dm::Distortion{}), std::invalid_argument);
  c.mark_set_by_user("live.buffers");
  EXPECT_TRUE(c.is_set_by_user("live.buffers"));
}

TEST(ConfigTable, EveryKeyHasADocLineAndToYamlWritesThemInTableOrder) {
  const auto& keys = dm::config_keys();
  std::vector<std::string> names;
  std::set<std::string> unique;
  for (const auto& k : keys) {
    EXPECT_FALSE(k.doc.empty()) << k.name;
    names.push_back(k.name);
    unique.insert(k.name);
  }
  EXPECT_EQ(unique.size(), names.size());
  EXPECT_LE(names.size(), dm::kMaxConfigKeys);
  // A configuration where no nested map is written as ~ (depth_distortion needs a model for that).
  dm::Config c;
  c.registration.depth_distortion.model = dm::DistortionModel::InverseBrownConrady;
  c.registration.depth_distortion.coeffs[0] = 0.1;
  EXPECT_EQ(keys_in_yaml(dm::to_yaml(c)), names);
}

TEST(ConfigTable, HashAndLayoutColumns) {
  std::set<std::string> outside_hash;
  for (const auto& k : dm::config_keys()) {
    if (!k.hashed) outside_hash.insert(k.name);
    if (k.name == "input.bop_masks") {
      EXPECT_EQ(k.layouts, std::vector<dm::InputLayout>{dm::InputLayout::Bop});
    }
    if (k.name == "input.max_time_diff") {
      EXPECT_EQ(k.layouts, (std::vector<dm::InputLayout>{dm::InputLayout::Tum, dm::InputLayout::Rosbag2}));
    }
    if (k.name.rfind("input.topics.", 0) == 0) {
      EXPECT_EQ(k.layouts, std::vector<dm::InputLayout>{dm::InputLayout::Rosbag2}) << k.name;
    }
    if (k.name == "depth.scale") {
      EXPECT_TRUE(k.layouts.empty());
    }
  }
  EXPECT_TRUE(outside_hash.count("output.dir"));
  EXPECT_TRUE(outside_hash.count("output.fsync"));
  EXPECT_TRUE(outside_hash.count("backend.kind"));
  EXPECT_TRUE(outside_hash.count("live.mask.color_key"));
  EXPECT_TRUE(outside_hash.count("logging.level"));
  EXPECT_FALSE(outside_hash.count("output.format"));
  EXPECT_FALSE(outside_hash.count("depth.scale"));
  EXPECT_FALSE(outside_hash.count("input.intrinsics"));
}

// Manifests of format 1 hash this text: a change here makes every existing manifest unresumable.
TEST(ConfigTable, TheSettingsHashTextOfTheDefaultsIsUnchanged) {
  const std::string expected =
      "input:\n  layout: auto\n  root: .\n  depth: \"depth/{id}.png\"\n  mask: \"mask/{id}.png\"\n"
      "  color: \"color/{id}.png\"\n  intrinsics: ~\n  max_time_diff: 0.02\n  object: ~\n  bop_masks: mask_visib\n"
      "  allow_paths_outside_root: false\n  max_file_bytes: 1073741824\n  max_image_pixels: 268435456\n"
      "depth:\n  scale: 0.001\n  min: 0\n  max: 10\n  encoding: plain\n  invalid_values: []\n"
      "mask:\n  threshold: 0\n  labels: []\n  threshold_fraction: ~\n  invert: false\n  erode: 0\n"
      "  per_instance: false\n"
      "registration:\n  mode: auto\n  depth_distortion: ~\n"
      "output:\n  dir: .\n  format: tiff\n  invalid: 0\n  preview: false\n  fsync: false\n  layout: flat\n"
      "backend:\n  kind: auto\n  device: 0\n  memory_limit_mb: 0\n"
      "run:\n  on_error: skip\n  force: false\n  frames_in_flight: 0\n  threads: 0\n"
      "live:\n  source: \"synthetic://?size=640x480&fps=30\"\n  overflow: drop_oldest\n  buffers: 4\n"
      "  output_every: 0\n  publish: \"\"\n  stats_interval: 5\n  serve: \"\"\n  serve_fps: 10\n  serve_token: \"\"\n"
      "  serve_depth: png\n  serve_queue: 16\n  serve_timeout: 5\n  reconnect_max: 5\n  sync:\n"
      "    tolerance_ms: 20\n  preview: false\n  mask:\n    static: ~\n    depth_band: ~\n    color_key: ~\n"
      "logging:\n  level: info\n";
  dm::Config c;
  c.input.root = ".";
  EXPECT_EQ(dm::settings_yaml(c), expected);
  // Keys outside the hash are written at their defaults; intrinsics by value, not by file name.
  c.output.dir = "/elsewhere";
  c.backend.kind = dm::BackendKind::Cpu;
  c.live.buffers = 9;
  EXPECT_EQ(dm::settings_yaml(c), expected);
  c.input.intrinsics_file = "/cam/K.txt";
  dm::Intrinsics k;
  k.fx = k.fy = 2;
  c.input.intrinsics = k;
  EXPECT_TRUE(Contains(dm::settings_yaml(c), "intrinsics: {fx: 2, fy: 2, cx: 0, cy: 0}"));
  EXPECT_TRUE(Contains(dm::to_yaml(c), "intrinsics: /cam/K.txt"));
}

// output.mcap shapes the bag only: in the hash where output.format has mcap, nowhere else, so that
// adding the section changed no existing settings hash (the test above).
TEST(ConfigTable, TheMcapSectionIsHashedOnlyWithTheMcapFormat) {
  TempDir tmp;
  auto load = [&](std::vector<std::string> sets) {
    std::vector<dm::Override> o;
    for (const auto& s : sets) o.push_back(dm::parse_override(s));
    return dm::load_config(std::nullopt, o, tmp.path());
  };
  const dm::Config tiff = load({});
  EXPECT_EQ(dm::settings_yaml(load({"output.mcap.namespace=/other", "output.mcap.fps=10"})), dm::settings_yaml(tiff));
  const dm::Config bag = load({"output.format=[tiff,mcap]"});
  EXPECT_TRUE(Contains(dm::settings_yaml(bag), "format: [tiff, mcap]"));
  EXPECT_TRUE(Contains(dm::settings_yaml(bag), "mcap:\n    namespace: /depthmask"));
  EXPECT_NE(dm::settings_yaml(load({"output.format=[tiff,mcap]", "output.mcap.namespace=/other"})),
            dm::settings_yaml(bag));
  EXPECT_EQ(load({"output.mcap.namespace=/a/b_1"}).output.mcap.ns, "/a/b_1");
  for (const char* bad : {"output.mcap.namespace=depthmask", "output.mcap.namespace=/a//b", "output.mcap.namespace=/a/",
                          "output.mcap.namespace=/a-b", "output.mcap.fps=0"})
    EXPECT_THROW(load({bad}), dm::ConfigError) << bad;
}

TEST(ConfigTable, LimitsAreTheKernelsConstants) {
  TempDir tmp;
  auto load = [&](const std::string& set) {
    return dm::load_config(std::nullopt, {dm::parse_override(set)}, tmp.path());
  };
  const std::string erode = std::to_string(dm::kMaxErode);
  EXPECT_EQ(load("mask.erode=" + erode).mask.erode, dm::kMaxErode);
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>([&] { load("mask.erode=" + std::to_string(dm::kMaxErode + 1)); }),
                       "[0, " + erode + "]"));
  std::string list;
  for (int i = 0; i < dm::kMaxInvalidRaw; ++i) list += (i ? "," : "") + std::to_string(i + 1);
  EXPECT_EQ(load("depth.invalid_values=[" + list + "]").depth.invalid_values.size(),
            static_cast<size_t>(dm::kMaxInvalidRaw));
  EXPECT_TRUE(Contains(message_of<dm::ConfigError>([&] { load("depth.invalid_values=[" + list + ",9]"); }),
                       "at most " + std::to_string(dm::kMaxInvalidRaw)));
}

}  // namespace
