// metadata.yaml of rosbag2: read (the fields a player needs: storage, files, compression) and written
// in version 5's layout (rosbag2 of Humble), which Humble and later read alike.
#include "bag_metadata.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "depthmask/atomic_file.h"
#include "depthmask/bag.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/errors.h"

namespace depthmask::detail {
namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

BagMetadata read_bag_metadata(const std::filesystem::path& yaml) {
  const std::string text = read_file_bounded(yaml, kMaxTextFileBytes, "bag metadata");
  const std::string name = yaml.string();
  BagMetadata md;
  try {
    const YAML::Node root = YAML::Load(text);
    const YAML::Node info = root["rosbag2_bagfile_information"];
    if (!info || !info.IsMap()) throw InputError(name + ": it has no rosbag2_bagfile_information map");
    if (info["version"]) md.version = info["version"].as<int>();
    if (!info["storage_identifier"]) throw InputError(name + ": it has no storage_identifier");
    md.storage_identifier = info["storage_identifier"].as<std::string>();
    if (info["compression_format"]) md.compression_format = info["compression_format"].as<std::string>();
    if (info["compression_mode"]) md.compression_mode = upper(info["compression_mode"].as<std::string>());
    const YAML::Node files = info["relative_file_paths"];
    if (!files || !files.IsSequence() || files.size() == 0) {
      throw InputError(name + ": it lists no relative_file_paths");
    }
    for (const auto& f : files) md.relative_files.push_back(f.as<std::string>());
  } catch (const YAML::Exception& e) {
    throw InputError(name + ": it is not the metadata.yaml of a rosbag2 bag: " + e.what());
  }
  if (md.storage_identifier != "mcap" && md.storage_identifier != "sqlite3") {
    throw InputError(name + ": storage_identifier '" + md.storage_identifier +
                     "' is not one depthmask reads (mcap, sqlite3)");
  }
  if (md.compression_mode == "FILE") {
    throw InputError(name +
                     ": compression_mode FILE (the whole file zstd-compressed) is not supported; decompress it with "
                     "`ros2 bag convert` or `zstd -d` first");
  }
  if (md.compression_mode == "MESSAGE" && md.compression_format != "zstd") {
    throw InputError(name + ": compression_format '" + md.compression_format + "' is not one depthmask reads (zstd)");
  }
  if (md.compression_mode != "" && md.compression_mode != "NONE" && md.compression_mode != "MESSAGE") {
    throw InputError(name + ": compression_mode '" + md.compression_mode + "' is not one of '', MESSAGE, FILE");
  }
  return md;
}

const std::string& default_qos_profiles() {
  // history 3 (unknown: what the recorder sees of a keep-last publisher), reliability 1 (reliable),
  // durability 2 (volatile), liveliness 1 (automatic), infinite durations as Humble writes them.
  static const std::string text =
      "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 2\n  deadline:\n    sec: 9223372036\n"
      "    nsec: 854775807\n  lifespan:\n    sec: 9223372036\n    nsec: 854775807\n  liveliness: 1\n"
      "  liveliness_lease_duration:\n    sec: 9223372036\n    nsec: 854775807\n"
      "  avoid_ros_namespace_conventions: false";
  return text;
}

}  // namespace depthmask::detail

namespace depthmask::bag {

const std::string& default_offered_qos_profiles() { return detail::default_qos_profiles(); }

void write_metadata(const std::filesystem::path& dir, const std::vector<FileSummary>& files,
                    const std::vector<std::pair<TopicSpec, uint64_t>>& topics) {
  int64_t start = 0, end = 0;
  uint64_t count = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const FileSummary& f = files[i];
    start = i == 0 ? f.start_ns : std::min(start, f.start_ns);
    end = i == 0 ? f.start_ns + f.duration_ns : std::max(end, f.start_ns + f.duration_ns);
    count += f.message_count;
  }
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "rosbag2_bagfile_information" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "version" << YAML::Value << 5;
  e << YAML::Key << "storage_identifier" << YAML::Value << "mcap";
  e << YAML::Key << "duration" << YAML::Value << YAML::BeginMap << YAML::Key << "nanoseconds" << YAML::Value
    << (end - start) << YAML::EndMap;
  e << YAML::Key << "starting_time" << YAML::Value << YAML::BeginMap << YAML::Key << "nanoseconds_since_epoch"
    << YAML::Value << start << YAML::EndMap;
  e << YAML::Key << "message_count" << YAML::Value << count;
  e << YAML::Key << "topics_with_message_count" << YAML::Value << YAML::BeginSeq;
  for (const auto& [t, n] : topics) {
    e << YAML::BeginMap << YAML::Key << "topic_metadata" << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "name" << YAML::Value << t.name << YAML::Key << "type" << YAML::Value << t.type;
    e << YAML::Key << "serialization_format" << YAML::Value << "cdr";
    e << YAML::Key << "offered_qos_profiles" << YAML::Value << YAML::DoubleQuoted
      << (t.offered_qos_profiles.empty() ? detail::default_qos_profiles() : t.offered_qos_profiles);
    e << YAML::EndMap << YAML::Key << "message_count" << YAML::Value << n << YAML::EndMap;
  }
  e << YAML::EndSeq;
  e << YAML::Key << "compression_format" << YAML::Value << YAML::DoubleQuoted << "";
  e << YAML::Key << "compression_mode" << YAML::Value << YAML::DoubleQuoted << "";
  e << YAML::Key << "relative_file_paths" << YAML::Value << YAML::BeginSeq;
  for (const FileSummary& f : files) e << f.relative_path;
  e << YAML::EndSeq;
  e << YAML::Key << "files" << YAML::Value << YAML::BeginSeq;
  for (const FileSummary& f : files) {
    e << YAML::BeginMap << YAML::Key << "path" << YAML::Value << f.relative_path;
    e << YAML::Key << "starting_time" << YAML::Value << YAML::BeginMap << YAML::Key << "nanoseconds_since_epoch"
      << YAML::Value << f.start_ns << YAML::EndMap;
    e << YAML::Key << "duration" << YAML::Value << YAML::BeginMap << YAML::Key << "nanoseconds" << YAML::Value
      << f.duration_ns << YAML::EndMap;
    e << YAML::Key << "message_count" << YAML::Value << f.message_count << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap << YAML::EndMap;
  std::string text = e.c_str();
  text += '\n';
  write_file_atomic(dir / "metadata.yaml", text.data(), text.size(), true);
}

}  // namespace depthmask::bag
