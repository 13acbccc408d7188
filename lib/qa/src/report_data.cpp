// The report's model (report_parts.h): the folder's manifests (ManifestSet, counting the settings
// its run records name), its run records (the unsharded one, else the shards' summed) and, without a
// manifest, the frames' sidecars.

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "depthmask/config.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/layouts.h"
#include "depthmask/manifest_set.h"
#include "depthmask/run_files.h"
#include "depthmask/run_record.h"
#include "report_parts.h"

#include "depthmask/detail/read_file.h"

namespace fs = std::filesystem;

namespace depthmask::report_parts {

// An output read back whole (a .npy for a thumbnail): 2 GiB bounds a masked depth of
// input.max_image_pixels' default (2^28) float32 pixels, which is 1 GiB.
std::string read_text(const fs::path& p) { return detail::read_file_bounded(p, size_t{1} << 31, "output"); }

namespace {

// The report's step of the read: every record that counts becomes a ReportFrame (its counts kept, its
// histogram summed), in the order read; a manifest that turns out unreadable gives back its frames.
class ReportReader : public ManifestSetReader {
 public:
  ReportReader(const ManifestSet& set, ReportModel& m) : set_(set), frames_(m.frames), all_(m.all) {}

  bool on_record(size_t, size_t slot, ManifestRecord&& r) override {
    // A frame keeps its counts; its histogram goes into the sum (a million frames' histograms are not
    // held).
    if (r.stats) {
      sum_.add(*r.stats);
      r.stats->hist = {};
    }
    ReportFrame f{set_.key(slot), std::move(r.id), {}, std::move(r.stats)};
    for (OutputFile& file : r.files) f.files.push_back(std::move(file.name));
    frames_.push_back(std::move(f));
    return true;
  }
  void on_manifest(size_t m, const ManifestHead& h, bool counted) override {
    const ManifestFileName& file = set_.files()[m];
    if (!counted) {
      detail::log().warn("report: leaving out '{}': its settings ({}) are not those of '{}' ({})", file.path.string(),
                         h.settings, manifests_read.empty() ? "" : manifests_read.front(),
                         set_.settings().value_or(""));
    } else {
      if (!head) head = h;
      manifests_read.push_back(file.path.filename().string());
      if (file.shard) shards_read.push_back(*file.shard);
      all_.add(sum_);
    }
    next();
  }
  void on_error(size_t, const std::string& message) override {
    detail::log().warn("report: leaving out {}", message);
    frames_.resize(first_);
    next();
  }

  std::optional<ManifestHead> head;  // the first counted manifest's
  std::vector<std::string> manifests_read;
  std::vector<Shard> shards_read;

 private:
  void next() {
    first_ = frames_.size();
    sum_ = FrameStats{};
  }

  const ManifestSet& set_;
  std::vector<ReportFrame>& frames_;
  FrameStats& all_;
  size_t first_ = 0;
  FrameStats sum_;
};

// The run record: depthmask-run.json, else the records of the shards whose manifests were read, their
// counts summed (their configurations differ only in run.shard).
void read_records(ReportModel& m, const detail::RunRecords& records) {
  for (const std::string& why : records.unreadable) detail::log().warn("report: ignoring {}", why);
  for (const detail::RunRecord& r : records.records)
    if (r.path.filename() == kRunRecordName) m.record = r;
  if (m.record) {
    if (m.record->summary) *m.summary = *m.record->summary;
    return;
  }
  nlohmann::json& summary = *m.summary;
  for (const Shard& k : m.shards_read) {
    const auto it = std::find_if(records.records.begin(), records.records.end(),
                                 [&](const detail::RunRecord& r) { return r.path.filename() == run_record_name(k); });
    if (it == records.records.end() || !it->summary) continue;
    const nlohmann::json& s = *it->summary;
    if (m.shard_records++ == 0) {
      m.record = *it;
      summary = s;
      continue;
    }
    for (const char* key : {"total", "ok", "failed", "skipped", "skipped_done"})
      summary[key] = summary.value(key, uint64_t{0}) + s.value(key, uint64_t{0});
    summary["seconds"] = std::max(summary.value("seconds", 0.0), s.value("seconds", 0.0));
    if (s.value("interrupted", false)) summary["interrupted"] = true;
    if (summary.value("manifest_error", std::string()).empty() && !s.value("manifest_error", std::string()).empty())
      summary["manifest_error"] = s["manifest_error"];
    if (s.contains("failures") && s["failures"].is_array()) {
      if (!summary.contains("failures") || !summary["failures"].is_array())
        summary["failures"] = nlohmann::json::array();
      for (const auto& f : s["failures"]) summary["failures"].push_back(f);
    }
  }
  if (m.shard_records > 1) {
    const double seconds = summary.value("seconds", 0.0);
    summary["fps"] = seconds > 0 ? static_cast<double>(summary.value("ok", uint64_t{0})) / seconds : 0.0;
  }
}

// Without a manifest: the frames from their sidecars (every {id}.json of the folder, the live
// runner's folders), their failures from the run record's summary.
void read_sidecars(ReportModel& m) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(m.dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (!it->is_regular_file(ec) || p.extension() != ".json" || p.filename().string().rfind("depthmask-", 0) == 0)
      continue;
    if (auto s = read_sidecar(p)) {
      const std::string rel = p.lexically_relative(m.dir).generic_string();
      m.sidecars.emplace(rel.substr(0, rel.size() - 5), std::move(*s));
    }
  }
  DM_EXPECT(!m.sidecars.empty(), InputError,
            "report: '" << m.dir.string() << "' holds no " << kManifestName
                        << " and no frame sidecars ({id}.json): nothing to report (is it a depthmask output folder?)");
  for (auto& [stem, s] : m.sidecars) {
    const auto pixels = static_cast<uint64_t>(s.width) * static_cast<uint64_t>(s.height);
    ReportFrame f{stem, s.id, {}, FrameStats{s.kept_pixels, pixels, {}}};
    const size_t slash = stem.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "" : stem.substr(0, slash + 1);
    for (const std::string& out : s.outputs) f.files.push_back(folder + out);
    f.files.push_back(stem + ".json");
    m.frames.push_back(std::move(f));
  }
}

void failures_from_summary(ReportModel& m) {
  const nlohmann::json& summary = *m.summary;
  if (!summary.is_object() || !summary.contains("failures") || !summary["failures"].is_array()) return;
  for (const auto& f : summary["failures"]) {
    ManifestFailure mf;
    mf.id = f.value("id", "");
    mf.message = f.value("message", "");
    const std::string cls = f.value("failure", "input");
    for (const Failure k : {Failure::Input, Failure::Platform, Failure::Resource, Failure::Internal})
      if (to_string(k) == cls) mf.failure = k;
    m.failures.push_back(std::move(mf));
  }
}

}  // namespace

ReportModel read_report_model(const fs::path& dir) {
  ReportModel m;
  m.dir = dir;
  // The settings the run records agree on count; without any (no record, or version 1 records only),
  // the first readable manifest's (ManifestSet's rule).
  const detail::RunRecords records = detail::read_run_records(dir);
  // Every manifest of the folder, read once (ManifestSet's rule: a frame counts once, from the first
  // manifest that records it; a failure only while no manifest records the frame done; a manifest of
  // other settings, or one that cannot be read, is left out with a warning).
  ManifestSet set(dir, ManifestSetOptions{records.settings, {}, true, nullptr});
  ReportReader reader(set, m);
  set.read(reader);
  m.head = reader.head;
  m.manifests_read = reader.manifests_read;
  m.shards_read = reader.shards_read;
  for (size_t i = 0; i < set.failures().size(); ++i)
    if (set.standing(i)) m.failures.push_back(set.failures()[i].failure);
  if (!m.head) read_sidecars(m);
  read_records(m, records);
  if (!m.head) failures_from_summary(m);
  return m;
}

void ReportInputs::list() {
  // The record spells out every key; read back only those that differ from the defaults, as a file of
  // the user's would say them, so listing warns about none of them.
  listed_tried_ = true;
  if (!model_.record || !model_.record->config) return;
  try {
    const std::string name = model_.record->path.string();  // in messages only
    const Config full = load_config_text(*model_.record->config, name, model_.dir, {});
    const Config c = load_config_text(to_yaml_changed(full), name, model_.dir, {});
    for (const FrameEntry& e : resolve_input(c).listing.frames) {
      SidecarInfo s;
      s.id = e.id;
      s.color_file = e.color;
      s.mask_file = !e.mask.empty() ? e.mask : e.instances.empty() ? fs::path() : e.instances.front().second;
      listed_.emplace(manifest_key(e), std::move(s));
    }
  } catch (const std::exception& e) {
    detail::log().info("report: the run's inputs are not readable ({}): thumbnails show no colour or mask", e.what());
  }
}

const SidecarInfo* ReportInputs::of(const ReportFrame& f) {
  // Its sidecar ({id}.json among its outputs), else the run's own listing, keyed as the manifest is
  // (manifest_key).
  for (const std::string& name : f.files)
    if (ends_with(name, ".json")) {
      const std::string stem = name.substr(0, name.size() - 5);
      const auto it = model_.sidecars.find(stem);
      if (it != model_.sidecars.end()) return &it->second;
      if (auto s = read_sidecar(model_.dir / name)) return &model_.sidecars.emplace(stem, *s).first->second;
    }
  if (!listed_tried_) list();
  const auto it = listed_.find(f.key);
  return it == listed_.end() ? nullptr : &it->second;
}

}  // namespace depthmask::report_parts
