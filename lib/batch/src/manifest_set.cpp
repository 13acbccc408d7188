// The manifests of a folder, read once (manifest_set.h).

#include "depthmask/manifest_set.h"

#include <algorithm>
#include <fstream>
#include <utility>

#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask {

// What one manifest gave while it is read: whether it counts (known from its head), the slots it
// marked done (undone when it turns out corrupt), and its records while its head is not known yet.
struct ManifestSet::Pending {
  std::optional<bool> counted;
  bool chose_settings = false;  // its settings became the set's (none were given)
  std::vector<uint32_t> marked;
  size_t failures_from = 0;  // failures_.size() when it began
  std::vector<std::pair<std::string, ManifestRecord>> held_records;
  std::vector<std::pair<std::string, ManifestFailure>> held_failures;
};

ManifestSet::ManifestSet(const fs::path& dir, ManifestSetOptions options)
    : dir_(dir), o_(std::move(options)), files_(list_manifests(dir)), settings_(o_.settings) {
  if (!o_.first.empty())
    std::stable_partition(files_.begin(), files_.end(), [&](const ManifestFileName& f) { return f.path == o_.first; });
}

size_t ManifestSet::add_key(const std::string& key) {
  const auto [it, inserted] = slot_.try_emplace(key, static_cast<uint32_t>(keys_.size()));
  if (inserted) {
    keys_.push_back(&it->first);
    done_by_.push_back(-1);
    failure_.push_back(-1);
  }
  return it->second;
}

std::optional<size_t> ManifestSet::find(const std::string& key) const {
  const auto it = slot_.find(key);
  if (it == slot_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> ManifestSet::slot_of(const std::string& key) {
  if (o_.keys_from_records) return add_key(key);
  const auto it = slot_.find(key);
  if (it == slot_.end()) return std::nullopt;
  return it->second;
}

void ManifestSet::check_stop() const {
  if (o_.stop && o_.stop->load(std::memory_order_relaxed)) throw InterruptedError("interrupted");
}

bool ManifestSet::standing(size_t i) const {
  const Failure& f = failures_[i];
  return !done(f.slot) && failure_[f.slot] == static_cast<int32_t>(i);
}

void ManifestSet::read(ManifestSetReader& reader) {
  for (size_t m = 0; m < files_.size(); ++m) read_one(m, reader);
}

void ManifestSet::record(size_t m, Pending& p, const std::string& key, ManifestRecord&& r, ManifestSetReader& reader) {
  check_stop();
  if (!p.counted) {
    p.held_records.emplace_back(key, std::move(r));
    return;
  }
  if (!*p.counted) {
    reader.on_other_settings(m, key);
    return;
  }
  const std::optional<size_t> slot = slot_of(key);
  if (!slot) {
    reader.on_unknown(m, key);
    return;
  }
  if (done_by_[*slot] >= 0) {
    reader.on_duplicate(m, *slot);
    return;
  }
  if (reader.on_record(m, *slot, std::move(r))) {
    done_by_[*slot] = static_cast<int32_t>(m);
    p.marked.push_back(static_cast<uint32_t>(*slot));
  }
}

void ManifestSet::failure(size_t m, Pending& p, const std::string& key, ManifestFailure&& f,
                          ManifestSetReader& reader) {
  check_stop();
  if (!p.counted) {
    p.held_failures.emplace_back(key, std::move(f));
    return;
  }
  reader.on_failure_record(m, *p.counted);
  if (!*p.counted) return;
  const std::optional<size_t> slot = slot_of(key);
  if (!slot) return;
  failure_[*slot] = static_cast<int32_t>(failures_.size());
  failures_.push_back({*slot, m, std::move(f)});
}

void ManifestSet::read_one(size_t m, ManifestSetReader& reader) {
  const ManifestFileName& file = files_[m];
  Pending p;
  p.failures_from = failures_.size();
  auto decide = [&](const ManifestHead& head) {
    if (!settings_) {
      settings_ = head.settings;
      p.chose_settings = true;
    }
    p.counted = head.settings == *settings_;
  };
  try {
    std::ifstream in(file.path, std::ios::binary);
    DM_EXPECT(in, InputError, "'" << file.path.string() << "' cannot be opened for reading");
    const ManifestHead head = read_manifest(
        in, file.path.string(),
        [&](const std::string& key, ManifestRecord&& r) { record(m, p, key, std::move(r), reader); },
        [&](const std::string& key, ManifestFailure&& f) { failure(m, p, key, std::move(f), reader); }, decide);
    if (!p.counted) {
      // The head followed the records (a hand-made file): its records now.
      decide(head);
      for (auto& [key, r] : p.held_records) record(m, p, key, std::move(r), reader);
      for (auto& [key, f] : p.held_failures) failure(m, p, key, std::move(f), reader);
    }
    reader.on_manifest(m, head, *p.counted);
  } catch (const InterruptedError&) {
    throw;
  } catch (const std::exception& e) {
    // Nothing of it counts: what it marked done is undone, its failure records dropped.
    for (const uint32_t slot : p.marked) done_by_[slot] = -1;
    failures_.resize(p.failures_from);
    std::fill(failure_.begin(), failure_.end(), -1);
    for (size_t i = 0; i < failures_.size(); ++i) failure_[failures_[i].slot] = static_cast<int32_t>(i);
    if (p.chose_settings) settings_ = o_.settings;
    reader.on_error(m, e.what());
  }
}

}  // namespace depthmask
