// to_yaml_changed: a configuration with only the keys that differ from the built-in defaults, which
// reads back as the same configuration; the shipped config/*.yaml and the committed sample's
// depthmask.yaml name exactly those keys; the pattern layout reads the input folder's own
// intrinsics.yaml; the pattern hint when a configuration's patterns miss a detected layout's frames.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>

#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/layouts.h"
#include "depthmask/synth.h"
#include "layout_fixtures.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::Contains;

namespace {

// The dotted keys a YAML text names (a map is a section unless its dotted name is a key).
void collect(const YAML::Node& n, const std::string& prefix, const std::set<std::string>& keys,
             std::set<std::string>& out) {
  for (const auto& kv : n) {
    const std::string full = (prefix.empty() ? "" : prefix + ".") + kv.first.as<std::string>();
    if (keys.count(full) || !kv.second.IsMap())
      out.insert(full);
    else
      collect(kv.second, full, keys, out);
  }
}

std::set<std::string> named_keys(const std::string& yaml) {
  std::set<std::string> keys, out;
  for (const auto& k : dm::config_keys()) keys.insert(k.name);
  const YAML::Node n = YAML::Load(yaml);
  if (n.IsMap()) collect(n, "", keys, out);
  return out;
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

TEST(ToYamlChanged, TheDefaultsWriteNothingAndAChangedKeyWritesOnlyItself) {
  EXPECT_EQ(dm::to_yaml_changed(dm::Config{}), "{}\n");
  dm::Config c;
  c.depth.max = 2.0;
  c.live.sync.tolerance_ms = 5;
  c.output.formats = {dm::OutputFormat::Tiff, dm::OutputFormat::Npy};
  EXPECT_EQ(named_keys(dm::to_yaml_changed(c)),
            (std::set<std::string>{"depth.max", "live.sync.tolerance_ms", "output.format"}));
}

TEST(ToYamlChanged, ReadsBackAsTheSameConfiguration) {
  dmtest::TempDir dir;
  dm::Config c;
  c.input.root = dir.path() / "data";
  c.output.dir = dir.path() / "out";
  c.depth.max = 2.5;
  c.mask.labels = {1, 3};
  c.live.mask.depth_band = dm::LiveMaskConfig::DepthBand{0.5, 1.5};
  c.backend.kind = dm::BackendKind::Cpu;
  const std::string yaml = dm::to_yaml_changed(c, dir.path());
  const dm::Config back = dm::load_config_text(yaml, "changed.yaml", dir.path(), {});
  EXPECT_EQ(dm::to_yaml(back), dm::to_yaml(c)) << yaml;
}

TEST(ShippedConfigs, NameOnlyTheKeysThatDifferFromTheBuiltInDefaults) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dmtest::source_dir() / "config"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  files.push_back(dmtest::sample_dir() / "depthmask.yaml");  // what depthmask synth writes
  ASSERT_GE(files.size(), 6u);
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    const dm::Config c = dm::load_config(f, {});
    const std::set<std::string> named = named_keys(text_of(f));
    EXPECT_EQ(named, named_keys(dm::to_yaml_changed(c, f.parent_path())));
    for (const char* k : {"input.depth", "input.mask", "input.color", "live.output_every", "depth.scale"})
      EXPECT_FALSE(named.count(k)) << k;
  }
}

TEST(PatternLayout, ReadsTheInputFoldersOwnIntrinsicsUnlessTheConfigurationNamesSome) {
  dmtest::TempDir dir;
  dm::write_synthetic_dataset(dir / "a", 1, 32, 24);
  dm::Config c;
  c.input.root = dir / "a";
  dm::ResolvedInput r = dm::resolve_input(c);
  ASSERT_TRUE(r.config.input.intrinsics.has_value());
  EXPECT_EQ(r.config.input.intrinsics_file, dir / "a" / "intrinsics.yaml");
  EXPECT_EQ(r.config.input.intrinsics->fx, dm::synthetic_intrinsics(32, 24).fx);

  // input.intrinsics: ~ (the user's): none.
  dm::Config none = dm::load_config_text("input: {intrinsics: ~}", "none.yaml", dir.path(), {});
  none.input.root = dir / "a";
  EXPECT_FALSE(dm::resolve_input(none).config.input.intrinsics.has_value());

  // A folder without one has none.
  fs::remove(dir / "a" / "intrinsics.yaml");
  EXPECT_FALSE(dm::resolve_input(c).config.input.intrinsics.has_value());

  // A broken one is the run's error, naming the file and how to go without it.
  dmtest::write_text(dir / "a" / "intrinsics.yaml", "fx: what\n");
  const std::string m = dmtest::message_of<dm::Error>([&] { dm::resolve_input(c); });
  EXPECT_TRUE(Contains(m, (dir / "a" / "intrinsics.yaml").string())) << m;
  EXPECT_TRUE(Contains(m, "input.intrinsics: ~")) << m;
}

TEST(PatternHint, ConfiguredPatternsThatMissADetectedLayoutsFramesNameTheKeysToDrop) {
  dmtest::TempDir dir;
  dmfix::write_seven_scenes(dir / "7s");
  dm::Config c = dm::load_config_text("input: {depth: \"depth/{id}.png\"}", "p.yaml", dir.path(), {});
  c.input.root = dir / "7s";
  const std::string m = dmtest::message_of<dm::InputError>([&] { dm::resolve_input(c); });
  EXPECT_TRUE(Contains(m, "matches the depth pattern 'depth/{id}.png'")) << m;
  EXPECT_TRUE(Contains(m, "input.layout '7scenes'")) << m;
  EXPECT_TRUE(Contains(m, "with its own patterns (input.depth 'frame-{id}.depth.png'): drop input.depth from")) << m;

  // Patterns that find nothing under any layout: today's error, no hint.
  dm::Config p = dm::load_config_text("input: {depth: \"nothing/{id}.png\"}", "p.yaml", dir.path(), {});
  p.input.root = dir / "empty";
  fs::create_directories(p.input.root);
  const std::string n = dmtest::message_of<dm::InputError>([&] { dm::resolve_input(p); });
  EXPECT_FALSE(Contains(n, "drop")) << n;
}
