// A rosbag2 bag read as `ros2 bag play` reads it: the files metadata.yaml lists, in its order (or, with
// no metadata.yaml, the folder's .mcap/.db3 files in natural order), each in its own order; topics
// united by name across files; payloads of a bag compressed per message (zstd) decompressed.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>

#include "bag_metadata.h"
#include "compression.h"
#include "depthmask/bag.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/mcap.h"
#include "mcap_format.h"
#include "sqlite_storage.h"

namespace depthmask::bag {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxMessageBytes = size_t{1} << 30;  // a decompressed message's bound: 1 GiB

bool has_ext(const fs::path& p, const char* ext) {
  std::string e = p.extension().string();
  for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return e == ext;
}

bool starts_with_mcap_magic(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  char b[8] = {};
  return in.read(b, 8) && std::memcmp(b, detail::mcap_format::kMagic, 8) == 0;
}

bool is_storage_file(const fs::path& p) { return has_ext(p, ".mcap") || has_ext(p, ".db3"); }

std::string digits_value(const std::string& s, size_t from, size_t to) {
  while (from + 1 < to && s[from] == '0') ++from;  // "007" is "7"
  return s.substr(from, to - from);
}

// "rec_2.mcap" before "rec_10.mcap": runs of digits compare by value.
bool natural_less(const std::string& a, const std::string& b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      const std::string na = digits_value(a, i, ie), nb = digits_value(b, j, je);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

struct Storage {
  std::unique_ptr<mcap::Reader> mcap;
  std::unique_ptr<detail::SqliteStorage> sqlite;
  std::map<int64_t, size_t> topic_of;  // a channel's (MCAP) or topic row's (SQLite) id → Reader::topics()
};

}  // namespace

struct Reader::Impl {
  fs::path path;
  std::vector<StorageFile> files;
  std::vector<Topic> topics;
  std::vector<size_t> topic_file;  // the file that first named each topic
  std::vector<Storage> storages;
  bool message_compression = false;
  uint64_t keep_budget = 0;  // keep_scanned_chunks

  size_t add_topic(Topic t, size_t file) {
    for (size_t i = 0; i < topics.size(); ++i) {
      if (topics[i].name != t.name) continue;
      if (topics[i].type != t.type) {
        throw InputError("bag '" + path.string() + "': topic '" + t.name + "' is of type '" + topics[i].type +
                         "' in '" + files[topic_file[i]].path.string() + "' but of type '" + t.type + "' in '" +
                         files[file].path.string() + "'");
      }
      topics[i].message_count += t.message_count;
      if (topics[i].offered_qos_profiles.empty()) topics[i].offered_qos_profiles = t.offered_qos_profiles;
      return i;
    }
    topics.push_back(std::move(t));
    topic_file.push_back(file);
    return topics.size() - 1;
  }

  // The topic of an MCAP channel (channels may first appear during a scan of a file with no summary).
  size_t mcap_topic(size_t file, uint16_t channel_id) {
    Storage& s = storages[file];
    const auto it = s.topic_of.find(channel_id);
    if (it != s.topic_of.end()) return it->second;
    const mcap::Channel& c = s.mcap->channels().at(channel_id);
    Topic t;
    t.name = c.topic;
    const auto schema = s.mcap->schemas().find(c.schema_id);
    if (schema != s.mcap->schemas().end()) t.type = schema->second.name;
    t.serialization_format = c.message_encoding;
    const auto qos = c.metadata.find("offered_qos_profiles");
    if (qos != c.metadata.end()) t.offered_qos_profiles = qos->second;
    const auto n = s.mcap->message_counts().find(channel_id);
    if (n != s.mcap->message_counts().end()) t.message_count = n->second;
    return s.topic_of[channel_id] = add_topic(std::move(t), file);
  }

  void open_file(const fs::path& file, const std::string& storage) {
    files.push_back({file, storage});
    storages.emplace_back();
    Storage& s = storages.back();
    const size_t index = files.size() - 1;
    if (storage == "mcap") {
      s.mcap = std::make_unique<mcap::Reader>(file);
      if (!s.mcap->has_footer()) {
        detail::log().warn(
            "bag file '{}' has no footer: its recorder stopped before closing it (or is still writing); "
            "reading its messages by scanning, up to where it ends",
            file.string());
      }
      for (const auto& kv : s.mcap->channels()) mcap_topic(index, kv.first);
      return;
    }
    s.sqlite = std::make_unique<detail::SqliteStorage>(file);
    for (const detail::SqliteTopic& st : s.sqlite->topics()) {
      s.topic_of[st.id] = add_topic({st.name, st.type, st.serialization_format, st.offered_qos_profiles, 0}, index);
    }
  }

  void open_folder();

  // The payload as the bag's messages hold it, decompressed when the bag compresses each message.
  // `where` names the message in an error.
  template <class Where>
  const uint8_t* payload(const uint8_t* data, size_t& size, std::vector<uint8_t>& buf, size_t file,
                         const Where& where) const {
    if (!message_compression) return data;
    const std::string why = detail::zstd_decompress_bounded(data, size, kMaxMessageBytes, buf);
    if (!why.empty()) {
      throw InputError("bag file '" + files[file].path.string() + "': " + where() + " does not decompress: " + why);
    }
    size = buf.size();
    return buf.data();
  }
};

void Reader::Impl::open_folder() {
  const fs::path yaml = path / "metadata.yaml";
  if (fs::exists(yaml)) {
    const detail::BagMetadata md = detail::read_bag_metadata(yaml);
    message_compression = md.compression_mode == "MESSAGE";
    for (const std::string& rel : md.relative_files) {
      fs::path file = path / rel;
      // Some rosbag2 versions wrote the bag's folder into the relative path: take the file beside metadata.yaml.
      if (!fs::exists(file) && fs::exists(path / fs::path(rel).filename())) file = path / fs::path(rel).filename();
      if (!fs::exists(file)) throw InputError(yaml.string() + ": its file '" + rel + "' is missing");
      open_file(file, md.storage_identifier);
    }
    return;
  }
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(path)) {
    if (e.is_regular_file() && is_storage_file(e.path())) found.push_back(e.path());
  }
  if (found.empty())
    throw InputError("'" + path.string() + "' is not a bag: it has no metadata.yaml and no .mcap or .db3 file");
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return natural_less(a.filename().string(), b.filename().string());
  });
  std::string list;
  for (const fs::path& f : found) list += (list.empty() ? "" : ", ") + f.filename().string();
  detail::log().warn("bag '{}' has no metadata.yaml: reading its files in natural order: {}", path.string(), list);
  for (const fs::path& f : found) open_file(f, has_ext(f, ".mcap") ? "mcap" : "sqlite3");
}

Reader::Reader(const std::filesystem::path& bag) : impl_(std::make_unique<Impl>()) {
  if (!detail::rosbag_built()) throw InputError(detail::kNoRosbag);
  Impl& m = *impl_;
  m.path = bag;
  if (fs::is_directory(bag)) {
    m.open_folder();
  } else if (fs::is_regular_file(bag) && (has_ext(bag, ".mcap") || starts_with_mcap_magic(bag))) {
    m.open_file(bag, "mcap");
  } else if (fs::is_regular_file(bag) && has_ext(bag, ".db3")) {
    m.open_file(bag, "sqlite3");
  } else {
    throw InputError("'" + bag.string() + "' is not a bag: neither a folder nor an .mcap file");
  }
}

Reader::~Reader() = default;

bool Reader::is_bag(const std::filesystem::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    if (fs::exists(path / "metadata.yaml", ec)) return true;
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (e.is_regular_file(ec) && is_storage_file(e.path())) return true;
    }
    return false;
  }
  return fs::is_regular_file(path, ec) && (has_ext(path, ".mcap") || starts_with_mcap_magic(path));
}

const std::filesystem::path& Reader::path() const { return impl_->path; }
const std::vector<StorageFile>& Reader::files() const { return impl_->files; }
const std::vector<Topic>& Reader::topics() const { return impl_->topics; }

void Reader::scan(const std::function<bool(const MessageInfo&, const uint8_t* data, size_t size)>& visit) {
  Impl& m = *impl_;
  for (Topic& t : m.topics) t.message_count = 0;
  std::vector<uint8_t> buf;
  uint64_t kept = 0;  // by the files before
  for (size_t fi = 0; fi < m.storages.size(); ++fi) {
    Storage& s = m.storages[fi];
    bool go = true;
    if (s.mcap) {
      s.mcap->keep_scanned_chunks(m.keep_budget - std::min(m.keep_budget, kept));
      s.mcap->scan([&](const mcap::MessageInfo& mi, const uint8_t* data, size_t size) {
        MessageInfo info;
        info.topic = m.mcap_topic(fi, mi.channel_id);
        info.log_time = static_cast<int64_t>(mi.log_time);
        info.ref = {static_cast<uint32_t>(fi), mi.location.chunk_offset, mi.location.offset};
        const uint8_t* p = m.payload(data, size, buf, fi, [&] {
          return "the message of topic '" + m.topics[info.topic].name + "' logged at " + std::to_string(mi.log_time);
        });
        ++m.topics[info.topic].message_count;
        return go = visit(info, p, size);
      });
      kept += s.mcap->kept_bytes();
    } else {
      s.sqlite->scan([&](int64_t row, int64_t topic_id, int64_t time, const uint8_t* data, size_t size) {
        const auto t = s.topic_of.find(topic_id);
        if (t == s.topic_of.end()) {
          throw InputError("bag file '" + m.files[fi].path.string() + "': message row " + std::to_string(row) +
                           " names topic id " + std::to_string(topic_id) + ", which its topics table does not have");
        }
        MessageInfo info{t->second, time, {static_cast<uint32_t>(fi), UINT64_MAX, static_cast<uint64_t>(row)}};
        const uint8_t* p = m.payload(data, size, buf, fi, [&] {
          return "the message of topic '" + m.topics[t->second].name + "' in row " + std::to_string(row);
        });
        ++m.topics[t->second].message_count;
        return go = visit(info, p, size);
      });
    }
    if (!go) return;
  }
}

Payload Reader::view(const MessageRef& ref) const {
  const Impl& m = *impl_;
  if (ref.file >= m.storages.size()) throw std::out_of_range("bag::Reader::view: no file " + std::to_string(ref.file));
  const Storage& s = m.storages[ref.file];
  if (s.mcap && !m.message_compression) return s.mcap->view({ref.chunk, ref.offset});
  std::vector<uint8_t> data =
      s.mcap ? s.mcap->read({ref.chunk, ref.offset}) : s.sqlite->read(static_cast<int64_t>(ref.offset));
  auto out = std::make_shared<std::vector<uint8_t>>();
  if (!m.message_compression) {
    *out = std::move(data);
  } else {
    size_t size = data.size();
    m.payload(data.data(), size, *out, ref.file, [&] { return "the message at " + std::to_string(ref.offset); });
  }
  return {out, out->data(), out->size()};
}

void Reader::keep_scanned_chunks(uint64_t bytes) { impl_->keep_budget = bytes; }

std::vector<uint8_t> Reader::read(const MessageRef& ref) const {
  const Payload p = view(ref);
  return std::vector<uint8_t>(p.data, p.data + p.size);
}

}  // namespace depthmask::bag
