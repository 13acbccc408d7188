// The bag's parts (bag_parts.h) and their merge into depthmask.mcap (finalize_bag, bag_output.h).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <memory>
#include <system_error>

#include "bag_parts.h"
#include "depthmask/bag_output.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/mcap.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace detail {

namespace {
constexpr std::string_view kPartPrefix = "depthmask.part-";
}

std::string bag_part_name(size_t seq, const std::string& shard_tag) {
  char digits[24];
  std::snprintf(digits, sizeof digits, "%04zu", seq);
  return std::string(kPartPrefix) + digits + "-" + shard_tag + ".mcap";
}

std::optional<size_t> bag_part_seq(const std::string& name) {
  const std::string_view n(name);
  const bool closed = n.size() > 5 && n.substr(n.size() - 5) == ".mcap";
  const bool open = n.size() > 10 && n.substr(n.size() - 10) == ".mcap.part";
  if (n.substr(0, kPartPrefix.size()) != kPartPrefix || (!closed && !open)) return std::nullopt;
  size_t seq = 0;
  const char* first = n.data() + kPartPrefix.size();
  const auto r = std::from_chars(first, n.data() + n.size(), seq);
  if (r.ec != std::errc() || r.ptr == first || *r.ptr != '-') return std::nullopt;
  return seq;
}

size_t next_bag_part_seq(const fs::path& dir) {
  size_t last = 0;
  for (const fs::path& p : list_bag_parts(dir)) last = std::max(last, bag_part_seq(p.filename().string()).value_or(0));
  return last + 1;
}

}  // namespace detail

std::vector<fs::path> list_bag_parts(const fs::path& dir) {
  std::vector<std::pair<size_t, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (const auto seq = detail::bag_part_seq(name); seq && it->is_regular_file(ec))
      found.emplace_back(*seq, it->path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> parts;
  parts.reserve(found.size());
  for (auto& f : found) parts.push_back(std::move(f.second));
  return parts;
}

namespace {

// A topic of the merged bag: its definition as the first file that has it gives it.
struct MergedTopic {
  std::string name;
  mcap::Schema schema;
  std::map<std::string, std::string> metadata;
  uint64_t count = 0;
};

// A message of some input file, located there.
struct Located {
  uint32_t file = 0;
  uint16_t topic = 0;  // index into the merged topics
  uint64_t log_time = 0, publish_time = 0;
  uint32_t frame_key = 0;  // the MCAP sequence: BagMessage::frame_key
  mcap::MessageLocation where;
};

// The input files: every message's place, the topics, in file order (oldest first).
struct Inputs {
  std::vector<std::unique_ptr<mcap::Reader>> readers;
  std::vector<MergedTopic> topics;
  std::vector<Located> messages;

  uint16_t topic_of(const mcap::Reader& r, uint16_t channel_id) {
    const mcap::Channel& ch = r.channels().at(channel_id);
    for (size_t i = 0; i < topics.size(); ++i)
      if (topics[i].name == ch.topic) return static_cast<uint16_t>(i);
    MergedTopic t;
    t.name = ch.topic;
    t.metadata = ch.metadata;
    const auto s = r.schemas().find(ch.schema_id);
    if (s != r.schemas().end()) t.schema = s->second;
    topics.push_back(std::move(t));
    return static_cast<uint16_t>(topics.size() - 1);
  }

  // Reads one file's index; a killed run's part (".part") up to its last whole chunk.
  void add(const fs::path& file) {
    const bool killed = file.extension() == ".part";
    std::unique_ptr<mcap::Reader> r;
    try {
      r = std::make_unique<mcap::Reader>(file);
    } catch (const InputError& e) {
      if (!killed) throw;
      detail::log().warn("bag part '{}' holds no frame: {}", file.filename().string(), e.what());
      return;
    }
    const auto index = static_cast<uint32_t>(readers.size());
    std::map<uint16_t, uint16_t> topic;  // the file's channel id -> merged topic
    try {
      r->scan([&](const mcap::MessageInfo& m, const uint8_t*, size_t) {
        auto t = topic.find(m.channel_id);
        if (t == topic.end()) t = topic.emplace(m.channel_id, topic_of(*r, m.channel_id)).first;
        messages.push_back({index, t->second, m.log_time, m.publish_time, m.sequence, m.location});
        return true;
      });
    } catch (const InputError& e) {
      // The frames of its whole chunks are in; the manifest never recorded the rest.
      (killed ? detail::log().info("bag part '{}' ends where its run was stopped; read up to there ({})",
                                   file.filename().string(), e.what())
              : detail::log().warn("bag part '{}' is damaged; read up to the damage: {}", file.filename().string(),
                                   e.what()));
    }
    readers.push_back(std::move(r));
  }
};

// Time order; of messages of the same frame (topic, stamp and frame key) in different files, the
// newest file's only. Frames that share a stamp (a bag input's repeated stamp) differ in their key.
uint64_t order_and_drop_repeats(std::vector<Located>& m) {
  std::stable_sort(m.begin(), m.end(), [](const Located& a, const Located& b) {
    return a.log_time != b.log_time ? a.log_time < b.log_time : a.topic < b.topic;
  });
  // Within a run of the same stamp and topic, keep each frame's messages of the newest file among them.
  std::vector<Located> kept;
  kept.reserve(m.size());
  for (size_t i = 0; i < m.size();) {
    size_t j = i;
    std::map<uint32_t, uint32_t> newest;  // frame key -> file
    for (; j < m.size() && m[j].log_time == m[i].log_time && m[j].topic == m[i].topic; ++j) {
      uint32_t& file = newest[m[j].frame_key];
      file = std::max(file, m[j].file);
    }
    for (size_t k = i; k < j; ++k)
      if (m[k].file == newest[m[k].frame_key]) kept.push_back(m[k]);
    i = j;
  }
  const uint64_t dropped = m.size() - kept.size();
  m = std::move(kept);
  return dropped;
}

}  // namespace

namespace {

// The caller's own part, in time order, alone in the folder: it is the bag as it stands. The rename
// is atomic; a crash before metadata.yaml leaves depthmask.mcap without it, which the next
// finalize_bag merges (rewrites) as a bag that later runs added to.
BagMerge take_part_as_bag(const fs::path& dir, const ClosedPart& part) {
  BagMerge out;
  fs::rename(part.file, dir / kBagName);
  bag::FileSummary file{kBagName, static_cast<int64_t>(part.first_ns),
                        static_cast<int64_t>(part.last_ns - part.first_ns), part.messages};
  bag::write_metadata(dir, {file}, part.topics);
  out.merged = true;
  out.parts = 1;
  out.messages = part.messages;
  if (!part.topics.empty()) out.depth_messages = part.topics.front().second;
  detail::log().info(
      "bag: {} message(s) ({} frame(s)) from 1 file merged into {} (the only part, in time order: "
      "renamed, not rewritten)",
      out.messages, out.depth_messages, (dir / kBagName).string());
  return out;
}

}  // namespace

BagMerge finalize_bag(const fs::path& dir, const ClosedPart* own) {
  BagMerge out;
  BagLock lock(dir, BagLock::Mode::TryExclusive);
  if (!lock.held()) {
    out.why_not = "a run is writing a part of the bag in " + dir.string() + " (it merges them when it finishes)";
    return out;
  }
  const std::vector<fs::path> parts = list_bag_parts(dir);
  const fs::path final_bag = dir / kBagName;
  std::error_code ec;
  const bool had_bag = fs::is_regular_file(final_bag, ec);
  if (parts.empty() && (!had_bag || fs::exists(dir / kBagMetadataName, ec))) {
    out.why_not = had_bag ? "the bag is merged already" : "no part of a bag in " + dir.string();
    lock.remove_file();  // nothing is left to merge: no lock file either
    return out;
  }
  if (own != nullptr && own->time_ordered && !had_bag && parts.size() == 1 && fs::equivalent(parts[0], own->file, ec)) {
    out = take_part_as_bag(dir, *own);
    lock.remove_file();  // no part left: no lock file either
    return out;
  }
  Inputs in;
  if (had_bag) in.add(final_bag);  // the oldest: a finished bag that later runs added frames to
  for (const fs::path& p : parts) in.add(p);
  out.parts = in.readers.size();
  out.duplicates = order_and_drop_repeats(in.messages);

  {
    mcap::Writer w(final_bag);  // "depthmask.mcap.part" until close() renames it
    std::map<std::string, uint16_t> schemas;
    std::vector<uint16_t> channels;
    for (const MergedTopic& t : in.topics) {
      auto s = schemas.find(t.schema.name);
      if (s == schemas.end())
        s = schemas.emplace(t.schema.name, w.add_schema(t.schema.name, t.schema.encoding, t.schema.data)).first;
      channels.push_back(w.add_channel(s->second, t.name, "cdr", t.metadata));
    }
    for (const Located& m : in.messages) {
      const std::vector<uint8_t> data = in.readers[m.file]->read(m.where);
      w.write(channels[m.topic], m.log_time, m.publish_time, data.data(), data.size(), m.frame_key);
      ++in.topics[m.topic].count;
    }
    w.close();
  }
  out.messages = in.messages.size();
  if (!in.topics.empty()) out.depth_messages = in.topics.front().count;

  bag::FileSummary file{kBagName, 0, 0, out.messages};
  if (!in.messages.empty()) {
    file.start_ns = static_cast<int64_t>(in.messages.front().log_time);
    file.duration_ns = static_cast<int64_t>(in.messages.back().log_time - in.messages.front().log_time);
  }
  std::vector<std::pair<bag::TopicSpec, uint64_t>> topics;
  for (const MergedTopic& t : in.topics) {
    const auto qos = t.metadata.find("offered_qos_profiles");
    topics.push_back({{t.name, t.schema.name, qos == t.metadata.end() ? "" : qos->second}, t.count});
  }
  bag::write_metadata(dir, {file}, topics);
  in.readers.clear();
  for (const fs::path& p : parts) {
    fs::remove(p, ec);
    if (ec) detail::log().warn("could not remove the bag part '{}': {}", p.string(), ec.message());
  }
  lock.remove_file();  // merged: the folder holds the bag and metadata.yaml, no part and no lock
  out.merged = true;
  detail::log().info("bag: {} message(s) ({} frame(s)) from {} file(s) merged into {}{}", out.messages,
                     out.depth_messages, out.parts, final_bag.string(),
                     out.duplicates ? ", " + std::to_string(out.duplicates) + " repeated message(s) dropped" : "");
  return out;
}

}  // namespace depthmask
