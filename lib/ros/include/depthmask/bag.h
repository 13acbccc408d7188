// A rosbag2 bag, read the way `ros2 bag play` reads it: a folder with metadata.yaml and its storage
// files (MCAP `.mcap` or SQLite `.db3`; a split bag has several, read in metadata.yaml's order), or a
// lone `.mcap` file. rosbag2's own compression in message mode (each payload zstd-compressed,
// metadata.yaml's compression_mode MESSAGE) is undone here; file mode is refused with a clear
// message. Writing: an MCAP file and the metadata.yaml of rosbag2 version 5 (which Humble and Jazzy
// read), written atomically.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "depthmask/mcap.h"

namespace depthmask::bag {

/// A message's payload without a copy (mcap.h): a view into its decompressed chunk where the storage
/// holds it so, else into a buffer of its own.
using Payload = mcap::Payload;

/// One topic of a bag.
struct Topic {
  std::string name;                  ///< "/camera/depth/image_rect_raw"
  std::string type;                  ///< "sensor_msgs/msg/Image"
  std::string serialization_format;  ///< "cdr"
  std::string offered_qos_profiles;  ///< the YAML text rosbag2 records ("" when absent)
  uint64_t message_count = 0;        ///< what scan() saw (or the summary's statistics before a scan)
};

/// Where a message is, opaque outside bag.cpp: which storage file, and a place inside it (an MCAP
/// location, or a SQLite row id in `offset`).
struct MessageRef {
  uint32_t file = 0;
  uint64_t chunk = UINT64_MAX;
  uint64_t offset = 0;
};

/// A message's header as scan() delivers it.
struct MessageInfo {
  size_t topic = 0;      ///< index into Reader::topics()
  int64_t log_time = 0;  ///< nanoseconds, the recorder's receive time
  MessageRef ref;
};

/// What a storage file holds, for listings.
struct StorageFile {
  std::filesystem::path path;
  std::string storage;  ///< "mcap" or "sqlite3"
};

/// Reads a bag (a folder or a lone .mcap file). Errors (InputError) name the file, the topic and the
/// byte offset (or row) where it knows them.
class Reader {
 public:
  explicit Reader(const std::filesystem::path& bag);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  /// True when `path` looks like a bag: a folder with metadata.yaml or with .mcap/.db3 files, or a file
  /// ending in .mcap (or starting with MCAP's magic).
  static bool is_bag(const std::filesystem::path& path);

  const std::filesystem::path& path() const;
  const std::vector<StorageFile>& files() const;
  const std::vector<Topic>& topics() const;
  /// Every message of every file, file by file, each in its file's order, with its payload
  /// (decompressed when the bag compresses messages; a view valid during the call). `visit` returns
  /// false to stop. Counts each topic's messages into topics().
  void scan(const std::function<bool(const MessageInfo&, const uint8_t* data, size_t size)>& visit);
  /// Makes the scans that follow keep up to `bytes` of the first MCAP chunks they decompress, over all
  /// the bag's files, for the read()s and view()s after (mcap::Reader::keep_scanned_chunks).
  void keep_scanned_chunks(uint64_t bytes);
  /// One message's payload (decompressed). Safe to call from several threads.
  std::vector<uint8_t> read(const MessageRef& ref) const;
  /// The same payload as read(), as a view (no copy of an MCAP message that the bag does not
  /// compress per message). Safe to call from several threads.
  Payload view(const MessageRef& ref) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A topic to write: name, ROS type (its ros2msg definition is looked up in ros_msgs.h), QoS YAML.
struct TopicSpec {
  std::string name;
  std::string type;
  std::string offered_qos_profiles;  ///< "" → the default of a reliable, volatile, keep-last publisher
};

/// The offered_qos_profiles YAML text rosbag2 (Humble) records for a reliable, volatile, keep-last
/// publisher: what an MCAP channel of the ros2 profile carries in its metadata, and what
/// write_metadata writes for a TopicSpec without one.
const std::string& default_offered_qos_profiles();

/// One finished storage file's entry in metadata.yaml.
struct FileSummary {
  std::string relative_path;  ///< relative to the bag folder
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  uint64_t message_count = 0;
};

/// Writes `metadata.yaml` (rosbag2 version 5, storage_identifier mcap) of the bag folder `dir` for
/// `files` and `topics` (with their counts), atomically.
void write_metadata(const std::filesystem::path& dir, const std::vector<FileSummary>& files,
                    const std::vector<std::pair<TopicSpec, uint64_t>>& topics);

}  // namespace depthmask::bag
