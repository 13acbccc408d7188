/// \file
/// output.format mcap: the masked frames as a ROS 2 bag (docs/ROSBAG.md, "Writing"). Each run (a
/// shard, a resumed run) appends to its own part, `depthmask.part-<seq>-<shard tag>.mcap` in
/// output.dir, one chunk per frame, flushed before the frame's manifest record; once the dataset is
/// complete, finalize_bag merges the parts into one time-ordered `depthmask.mcap` and `metadata.yaml`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "depthmask/bag.h"
#include "depthmask/config.h"
#include "depthmask/dataset.h"
#include "depthmask/frame.h"
#include "depthmask/intrinsics.h"
#include "depthmask/ros_msgs.h"

namespace depthmask {

/// The finished bag's file in output.dir, and its rosbag2 metadata beside it.
inline constexpr const char* kBagName = "depthmask.mcap";
inline constexpr const char* kBagMetadataName = "metadata.yaml";

/// Whether output.format has mcap.
bool writes_bag(const Config& c);

/// The bag's topics for output.mcap, in channel order: depth, camera_info, then mask, reason and
/// depth/compressedDepth where asked for.
std::vector<bag::TopicSpec> bag_topics(const Config& c);

/// sensor_msgs/CameraInfo of a pinhole without distortion (plumb_bob, D empty): K, R = I, P = [K | 0];
/// K all zero ("uncalibrated", as ROS reads it) without intrinsics. The header is left to the caller.
ros::CameraInfo pinhole_camera_info(const std::optional<Intrinsics>& k, int width, int height);

/// One message of a frame, encoded: its topic (an index into bag_topics), its stamp (log and publish
/// time, nanoseconds), its CDR bytes, and the frame's key: the CRC-32 of its frame id, written as the
/// MCAP message's sequence, so that a merge tells a redone frame (same key) from another frame of
/// the same stamp (a bag input's "-1" id).
struct BagMessage {
  uint8_t topic = 0;
  uint64_t time_ns = 0;
  std::vector<uint8_t> data;
  uint32_t frame_key = 0;
};

/// The frame key of BagMessage for a frame id.
uint32_t bag_frame_key(const std::string& frame_id);

/// A part a run has just closed, as that run knows it: finalize_bag takes it as the bag itself (a rename,
/// no rewrite) when it is the folder's only part and its messages are in time order.
struct ClosedPart {
  std::filesystem::path file;
  bool time_ordered = true;  ///< every message's log time at or after the one before
  uint64_t messages = 0;
  uint64_t first_ns = 0, last_ns = 0;                       ///< the first and last log time
  std::vector<std::pair<bag::TopicSpec, uint64_t>> topics;  ///< the topics with messages, and their counts
};

/// The bag part of one run. encode() is const and touches no shared state (the batch's parallel write
/// stage); append() is serial (the commit stage, in listing order).
class BagOutput {
 public:
  /// `c`: the run's effective configuration; `shard_tag`: the run's (shard_spec.h). Opens nothing yet.
  BagOutput(const Config& c, std::string shard_tag);
  ~BagOutput();  ///< closes the part (never throws)
  BagOutput(const BagOutput&) = delete;
  BagOutput& operator=(const BagOutput&) = delete;

  /// Frame f's messages from its masked slot (after run_mask): depth (32FC1 metres, NaN where dropped
  /// unless output.invalid was set), camera_info, and the optional topics. The header: the bag
  /// input's (stamp, frame_id), else the frame's timestamp or index / output.mcap.fps, and
  /// output.mcap.frame_id.
  std::vector<BagMessage> encode(const FrameEntry& f, const FrameSlot& slot) const;

  /// Makes this run's part now, so that a build without the bag libraries (ConfigError) or a folder
  /// that takes no file (OutputError) fails before the first frame; append() makes it otherwise.
  void open();

  /// Appends a frame's messages to this run's part (made on the first call) and writes them out as
  /// one chunk (synced with output.fsync): when it returns, the frame is in the part. Throws
  /// OutputError.
  void append(std::vector<BagMessage>&& messages);

  /// Closes the part (summary, footer, its final name); a part that got no message is removed. Throws
  /// OutputError.
  void close();

  /// The part close() closed; nullopt before that, or when it held no message.
  const std::optional<ClosedPart>& closed_part() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The lock that keeps a merge away from parts still being written: each writing run holds it shared
/// (from before its part exists until it is closed), finalize_bag exclusively. An flock() on
/// `.depthmask-bag.lock` in output.dir, released with its holder (a killed run holds nothing); the
/// merge removes the file when it leaves no part behind, and a holder that locked the removed file
/// takes the lock again on the one at the name.
class BagLock {
 public:
  enum class Mode { Shared, TryExclusive };
  /// Shared: waits for a merge in progress. TryExclusive: held() is false when a run writes a part.
  /// Throws OutputError when the lock file cannot be opened.
  BagLock(const std::filesystem::path& dir, Mode mode);
  ~BagLock();
  BagLock(const BagLock&) = delete;
  BagLock& operator=(const BagLock&) = delete;
  bool held() const { return fd_ >= 0; }
  /// Removes the lock file while holding it (exclusively: no writer is between its lock and its part).
  void remove_file();

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

/// The parts in `dir` (closed `.mcap` and a killed run's `.mcap.part`), oldest run first.
std::vector<std::filesystem::path> list_bag_parts(const std::filesystem::path& dir);

/// What finalize_bag did.
struct BagMerge {
  bool merged = false;          ///< depthmask.mcap and metadata.yaml written, the parts removed
  std::string why_not;          ///< when not merged: why (a run still writes a part; nothing to merge)
  size_t parts = 0;             ///< part files read (and the earlier depthmask.mcap, when there was one)
  uint64_t messages = 0;        ///< messages in depthmask.mcap
  uint64_t depth_messages = 0;  ///< of which on the depth topic: one per frame
  uint64_t duplicates = 0;      ///< messages dropped: a newer part holds the same topic and stamp
};

/// Merges the parts of `dir` (and a depthmask.mcap already there, as the oldest part) into one
/// time-ordered `depthmask.mcap` (zstd chunks, index, summary, statistics), drops messages a newer
/// part repeats (same topic and stamp: a frame redone after a crash between its chunk and its
/// manifest record), writes metadata.yaml (rosbag2 version 5) atomically, then removes the parts. The
/// caller knows the dataset is complete. A killed run's part is read up to its last whole chunk.
/// Takes BagLock exclusively; when a run holds it, returns merged false. Throws OutputError (cannot
/// write), InputError (a part that cannot be read at all).
/// `own`: the part the caller just closed (BagOutput::closed_part); when it is the only part, no
/// depthmask.mcap is there yet and its messages are in time order, it is renamed to depthmask.mcap
/// instead of rewritten (its chunks are one frame each, zstd, with index, summary and statistics).
BagMerge finalize_bag(const std::filesystem::path& dir, const ClosedPart* own = nullptr);

}  // namespace depthmask
