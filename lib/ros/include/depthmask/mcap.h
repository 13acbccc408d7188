// MCAP (https://mcap.dev/spec), the container of ROS 2 bags since Iron (and of Foxglove): reading with
// chunks uncompressed, zstd or lz4 (frame format), with a summary and index or none (then by scanning
// the data section), CRCs checked where written (a CRC of 0 means "not computed": skipped); writing
// the `ros2` profile with zstd chunks, message indexes, a summary (schemas, channels, statistics, chunk
// indexes), summary offsets and CRCs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace depthmask::mcap {

/// A Schema record.
struct Schema {
  uint16_t id = 0;
  std::string name;      ///< "sensor_msgs/msg/Image"
  std::string encoding;  ///< "ros2msg"
  std::string data;      ///< the definition text
};

/// A Channel record.
struct Channel {
  uint16_t id = 0;
  uint16_t schema_id = 0;
  std::string topic;
  std::string message_encoding;                 ///< "cdr"
  std::map<std::string, std::string> metadata;  ///< rosbag2: "offered_qos_profiles", "topic_type_hash"
};

/// Where a message's bytes are: in the chunk starting at `chunk_offset` (its record's first byte),
/// at `offset` of the chunk's decompressed records; or, for a message outside chunks (chunk_offset
/// == UINT64_MAX), at file offset `offset` (the Message record's first byte).
struct MessageLocation {
  uint64_t chunk_offset = UINT64_MAX;
  uint64_t offset = 0;
};

/// A Message record's header, its location and (during scan) its payload.
struct MessageInfo {
  uint16_t channel_id = 0;
  uint32_t sequence = 0;
  uint64_t log_time = 0;
  uint64_t publish_time = 0;
  MessageLocation location;
};

/// A message's payload without a copy: a view into the decompressed chunk that holds it (or into the
/// record read from the file), valid while `keep` (which owns those bytes) is.
struct Payload {
  std::shared_ptr<const void> keep;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

/// Reads one MCAP file. Errors (InputError) name the file, the record and its byte offset, and the
/// channel's topic where one is known: a bad magic, a truncated file, a record length past the end, a
/// chunk that does not decompress or whose CRC differs, an unknown compression.
class Reader {
 public:
  explicit Reader(const std::filesystem::path& file);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::filesystem::path& file() const;
  const std::string& profile() const;                   ///< the Header's profile ("ros2")
  const std::map<uint16_t, Schema>& schemas() const;    ///< every schema of the file
  const std::map<uint16_t, Channel>& channels() const;  ///< every channel of the file
  bool has_summary() const;                             ///< a usable summary section was read
  /// The file ends with MCAP's footer and magic; false for a file cut off (a recorder killed before
  /// it closed the file) or still being written, which is read by scanning.
  bool has_footer() const;
  /// Messages per channel as the summary's Statistics record counts them (empty without one).
  const std::map<uint16_t, uint64_t>& message_counts() const;

  /// Every message in file order (for a bag written in time order, time order), with its payload (a
  /// view valid during the call). `visit` returns false to stop. Messages of the data section read
  /// before an error are delivered before it is thrown. Chunks are decompressed ahead, several at a
  /// time on oneTBB's threads.
  void scan(const std::function<bool(const MessageInfo&, const uint8_t* data, size_t size)>& visit);

  /// One message's payload by its location (chunks decompressed on demand, the last few kept).
  /// Safe to call from several threads.
  std::vector<uint8_t> read(const MessageLocation& where);
  /// The same payload as read(), as a view into the cached chunk instead of a copy.
  Payload view(const MessageLocation& where);

  /// Makes the scans that follow keep up to `bytes` of the first chunks they decompress, for the
  /// read()s and view()s after (a listing, then its frames in about the same order): those chunks are
  /// not decompressed twice. Each kept chunk is let go when first read. 0 (the default): none.
  void keep_scanned_chunks(uint64_t bytes);
  /// The bytes of decompressed chunks kept now (keep_scanned_chunks).
  uint64_t kept_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Chunk compression of the writer.
enum class Compression { None, Zstd, Lz4 };

/// Writer options.
struct WriterOptions {
  std::string profile = "ros2";
  std::string library = "depthmask";
  Compression compression = Compression::Zstd;
  uint64_t chunk_size = uint64_t{4} * 1024 * 1024;  ///< a chunk is closed when its records reach this many bytes
  bool index = true;    ///< message indexes, chunk indexes, summary; false: no summary section
  bool chunked = true;  ///< false: Message records straight into the data section (as
                        ///< rosbag2's `fastwrite` preset writes them); no compression
  int zstd_level = 1;   ///< zstd's level for Compression::Zstd
};

/// Writes one MCAP file (the path gets a `.part` name until close() renames it; finished chunks are
/// on disk and readable by scanning the part before that).
class Writer {
 public:
  Writer(const std::filesystem::path& file, WriterOptions options = {});
  ~Writer();  ///< closes (writes summary and footer) if close() was not called; never throws
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  uint16_t add_schema(const std::string& name, const std::string& encoding, const std::string& data);
  uint16_t add_channel(uint16_t schema_id, const std::string& topic, const std::string& message_encoding,
                       const std::map<std::string, std::string>& metadata);
  /// One message; its sequence is `sequence` where given, else the channel's count of messages so far.
  void write(uint16_t channel_id, uint64_t log_time, uint64_t publish_time, const uint8_t* data, size_t size,
             std::optional<uint32_t> sequence = std::nullopt);
  /// Closes the open chunk, writes it and (with `sync`) syncs the file: every message written so far
  /// is in the file (on disk with `sync`). Returns the number of messages now in the file.
  uint64_t flush(bool sync = true);
  /// Writes the last chunk, the summary and the footer, syncs and renames the file to its name.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace depthmask::mcap
