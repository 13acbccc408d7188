// rosbag2's metadata.yaml: what the reader needs of it, and the default QoS text of the writer.
// Internal to the ros room; writing is bag::write_metadata (bag.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace depthmask::detail {

struct BagMetadata {
  int version = 0;
  std::string storage_identifier;           // "mcap", "sqlite3"
  std::vector<std::string> relative_files;  // relative_file_paths, in order
  std::string compression_format;           // "" or "zstd"
  std::string compression_mode;             // "", "FILE", "MESSAGE" (upper case)
};

// Reads `<dir>/metadata.yaml`; InputError naming it for a YAML error, a missing key, an unknown
// storage or compression, and for compression_mode FILE (refused: decompress the bag first).
BagMetadata read_bag_metadata(const std::filesystem::path& yaml);

// The offered_qos_profiles text rosbag2 (Humble) records for a reliable, volatile publisher.
const std::string& default_qos_profiles();

}  // namespace depthmask::detail
