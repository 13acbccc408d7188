// The QA report's parts (report.h), private to the qa room: the model read from the folder
// (report_data.cpp: manifests, run records, sidecars), the thumbnails (report_thumbs.cpp) and the
// page (report_page.cpp); write_report (report.cpp) joins them.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "depthmask/detail/run_record_file.h"
#include "depthmask/frame_stats.h"
#include "depthmask/manifest.h"
#include "depthmask/report.h"
#include "depthmask/sidecar.h"

namespace depthmask::report_parts {

// What the page needs of one frame (not its outputs' sizes and CRCs: a million-frame manifest's
// records are read one by one and only this is kept).
struct ReportFrame {
  std::string key, id;
  std::vector<std::string> files;  // relative to the output folder
  std::optional<FrameStats> stats;
};

// Everything the page shows, read from the folder.
struct ReportModel {
  std::filesystem::path dir;
  std::vector<ReportFrame> frames;  // the manifests' (in the order read), else the sidecars'
  FrameStats all;                   // every frame's, summed: the histogram
  std::vector<ManifestFailure> failures;
  std::optional<ManifestHead> head;  // the first counted manifest's; none: no manifest counted
  std::vector<std::string> manifests_read;
  std::vector<Shard> shards_read;
  std::optional<detail::RunRecord> record;  // the run's record, else the first shard's with a summary
  // The record's summary, or the shards' summed; null: none (by pointer: see detail::RunRecord).
  std::shared_ptr<nlohmann::json> summary = std::make_shared<nlohmann::json>();
  size_t shard_records = 0;                     // shard records summed (0: the unsharded record or none)
  std::map<std::string, SidecarInfo> sidecars;  // by path relative to dir, without ".json"
};

// Reads the folder (ManifestSet with the run records' settings, run records, sidecars). Throws
// InputError when it holds neither a manifest nor sidecars, ConfigError when its run records name
// different settings.
ReportModel read_report_model(const std::filesystem::path& dir);

// The inputs behind a frame's composed thumbnail: its sidecar, else the run's own listing (the run
// record's configuration), listed once when first needed.
class ReportInputs {
 public:
  explicit ReportInputs(ReportModel& model) : model_(model) {}
  const SidecarInfo* of(const ReportFrame& f);

 private:
  void list();
  ReportModel& model_;
  std::map<std::string, SidecarInfo> listed_;
  bool listed_tried_ = false;
};

// The thumbnail of one frame as a data: URI (JPEG), empty when nothing of it reads.
struct Thumbnail {
  std::string uri;
  bool composed = false;     // not the run's preview
  bool with_inputs = false;  // composed with the frame's mask (and colour, when it has one)
  bool reason = false;       // has the reason panel
};
Thumbnail thumbnail(const std::filesystem::path& dir, const ReportFrame& f, const SidecarInfo* side, int panel_width);
// Which frames the contact sheet shows, in order, with why.
std::vector<std::pair<size_t, std::string>> pick_frames(const std::vector<ReportFrame>& frames, size_t n);

// The page.
std::string report_page(ReportModel& model, const ReportOptions& o);

// Shared text helpers.
std::string read_text(const std::filesystem::path& p);
inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace depthmask::report_parts
