#include "depthmask/manifest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/version.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

// FNV-1a 64: tiny, no dependency, and plenty to tell settings or input fingerprints apart (these
// guard against mistakes, not adversaries).
struct Fnv {
  uint64_t h = 1469598103934665603ull;
  void add(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\0", 1);  // a separator, so ("ab","c") and ("a","bc") differ
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
    return buf;
  }
};

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void add_file(Fnv& h, const fs::path& p) {
  h.add(p.string());
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) {
    h.add("missing");
    return;
  }
  const auto mtime = fs::last_write_time(p, ec);
  h.add(std::to_string(size));
  h.add(ec ? std::string("?") : std::to_string(mtime.time_since_epoch().count()));
}

// True when `file` (relative to dir) exists with the recorded size and CRC-32.
bool output_holds(const fs::path& dir, const OutputFile& file, std::vector<uint8_t>& buf) {
  const fs::path p = dir / fs::path(file.name);
  std::error_code ec;
  if (!fs::is_regular_file(p, ec) || fs::file_size(p, ec) != file.size || ec) return false;
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  uint32_t crc = 0;
  buf.resize(1 << 20);
  while (in) {
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    crc = crc32_of(buf.data(), n, crc);
  }
  return !in.bad() && crc == file.crc32;
}

}  // namespace

std::string fnv1a64_hex(const std::string& text) {
  Fnv h;
  h.add(text.data(), text.size());
  return h.hex();
}

std::string settings_hash(const Config& c) {
  // The output-shaping keys only (the configuration tables say which): not where outputs go, how they
  // are flushed, which backend computes them (CPU and GPU are bit-identical), run, live and logging
  // behaviour; intrinsics by value, not by file name. "manifest 1" stays although the file format is 2:
  // the records' outputs did not change, so a version 1 manifest of the same settings resumes.
  return fnv1a64_hex(std::string("depthmask ") + DEPTHMASK_VERSION + " manifest 1\n" + settings_yaml(c));
}

std::string inputs_fingerprint(const FrameEntry& f) {
  Fnv h;
  add_file(h, f.depth);
  add_file(h, f.mask);
  h.add(f.color.empty() ? std::string("no color") : std::string("color"));
  if (!f.color.empty()) add_file(h, f.color);
  for (const auto& [inst, file] : f.instances) {
    h.add(inst);
    add_file(h, file);
  }
  if (f.intrinsics) {
    const Intrinsics& k = *f.intrinsics;
    for (double v : {k.fx, k.fy, k.cx, k.cy}) h.add(number_text(v));
    h.add(std::to_string(k.width) + "x" + std::to_string(k.height));
  } else {
    h.add("no intrinsics");
  }
  h.add(f.depth_scale ? number_text(*f.depth_scale) : std::string("no scale"));
  h.add(f.relative.generic_string());
  return h.hex();
}

std::string manifest_key(const FrameEntry& f) { return f.relative.empty() ? f.id : f.relative.generic_string(); }

namespace {

constexpr Failure kRecordedFailures[] = {Failure::Input,    Failure::Config,      Failure::Platform,
                                         Failure::Resource, Failure::Interrupted, Failure::Internal};

std::optional<Failure> failure_named(const std::string& name) {
  for (const Failure f : kRecordedFailures)
    if (to_string(f) == name) return f;
  return std::nullopt;
}

nlohmann::ordered_json spec_json(const HistogramSpec& h) { return {{"min", h.min}, {"max", h.max}, {"bins", h.bins}}; }

}  // namespace

std::string Manifest::head_text(const std::string& settings, const std::optional<HistogramSpec>& hist) {
  nlohmann::ordered_json head;
  head["format"] = "depthmask-manifest";
  head["version"] = 2;
  head["settings"] = settings;
  if (hist) head["depth_hist"] = spec_json(*hist);
  std::string text = head.dump();
  text.pop_back();  // the closing brace
  return text + ",\"frames\":{";
}

std::string Manifest::line_text(const std::string& key, const ManifestRecord& rec) {
  nlohmann::ordered_json outs = nlohmann::ordered_json::array();
  for (const OutputFile& f : rec.files) outs.push_back({{"file", f.name}, {"size", f.size}, {"crc32", f.crc32}});
  nlohmann::ordered_json r = {{"id", rec.id}, {"inputs", rec.inputs}, {"outputs", std::move(outs)}};
  if (rec.stats) {
    r["kept"] = rec.stats->kept;
    r["pixels"] = rec.stats->pixels;
    r["hist"] = rec.stats->hist;
  }
  return nlohmann::json(key).dump() + ":" + r.dump();
}

std::string Manifest::failure_line_text(const std::string& key, const ManifestFailure& failure) {
  const nlohmann::ordered_json r = {
      {"id", failure.id}, {"class", std::string(to_string(failure.failure))}, {"message", failure.message}};
  // Messages quote file names, which may be any bytes: replace what is not UTF-8 rather than throw.
  return nlohmann::json(key).dump() + ":" + r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

const char* Manifest::middle_text() { return "\n},\"failures\":{"; }
const char* Manifest::tail_text() { return "\n}}\n"; }

namespace {
// head, then "\n" + first frame line, ",\n" + each next one, the middle, the failure lines alike, then
// the tail, into `text` (cleared first).
template <class Lines>
void join_manifest(std::string& text, const std::string& head, const Lines& frames, const Lines& failures) {
  text.clear();
  text += head;
  for (const Lines* lines : {&frames, &failures}) {
    if (lines == &failures) text += Manifest::middle_text();
    bool first = true;
    for (const auto& [key, line] : *lines) {
      text += first ? "\n" : ",\n";
      text += line;
      first = false;
    }
  }
  text += Manifest::tail_text();
}

using Json = nlohmann::json;

[[noreturn]] void bad_manifest(const std::string& name, const std::string& what) {
  throw InputError("'" + name + "': " + what);
}

ManifestRecord record_of(const Json& rec, const std::string& key, const std::string& name) {
  const std::string where = "frame '" + key + "': ";
  auto bad = [&](const std::string& what) { bad_manifest(name, where + what); };
  if (!rec.is_object() || !rec.contains("id") || !rec["id"].is_string() || !rec.contains("inputs") ||
      !rec["inputs"].is_string() || !rec.contains("outputs") || !rec["outputs"].is_array())
    bad("expected {\"id\": string, \"inputs\": string, \"outputs\": [...]}");
  ManifestRecord r;
  r.id = rec["id"].get<std::string>();
  r.inputs = rec["inputs"].get<std::string>();
  for (const auto& o : rec["outputs"]) {
    if (!o.is_object() || !o.contains("file") || !o["file"].is_string() || !o.contains("size") ||
        !o["size"].is_number_unsigned() || !o.contains("crc32") || !o["crc32"].is_number_unsigned() ||
        o["crc32"].get<uint64_t>() > 0xffffffffull)
      bad("expected outputs of {\"file\": string, \"size\": unsigned, \"crc32\": 32-bit unsigned}");
    OutputFile f{o["file"].get<std::string>(), o["size"].get<uint64_t>(),
                 static_cast<uint32_t>(o["crc32"].get<uint64_t>())};
    // Outputs live under output.dir: a record naming anything else is not ours.
    const fs::path p(f.name);
    bool outside = f.name.empty() || p.is_absolute();
    for (const auto& part : p) outside = outside || part == "..";
    if (outside) bad("output '" + f.name + "' is not a path inside the output folder");
    r.files.push_back(std::move(f));
  }
  if (r.files.empty()) bad("no outputs");
  if (rec.contains("kept") || rec.contains("pixels") || rec.contains("hist")) {
    auto count = [&](const char* k) {
      if (!rec.contains(k) || !rec[k].is_number_unsigned())
        bad(std::string("expected \"") + k + "\" to be an unsigned count");
      return rec[k].get<uint64_t>();
    };
    FrameStats st;
    st.kept = count("kept");
    st.pixels = count("pixels");
    if (st.kept > st.pixels) bad("\"kept\" exceeds \"pixels\"");
    if (!rec.contains("hist") || !rec["hist"].is_array()) bad("expected \"hist\" to be an array of counts");
    for (const auto& n : rec["hist"]) {
      if (!n.is_number_unsigned()) bad("expected \"hist\" to be an array of counts");
      st.hist.push_back(n.get<uint64_t>());
    }
    r.stats = std::move(st);
  }
  return r;
}

ManifestFailure failure_of_record(const Json& rec, const std::string& key, const std::string& name) {
  if (!rec.is_object() || !rec.contains("id") || !rec["id"].is_string() || !rec.contains("class") ||
      !rec["class"].is_string() || !rec.contains("message") || !rec["message"].is_string())
    bad_manifest(name, "failure '" + key + "': expected {\"id\": string, \"class\": string, \"message\": string}");
  const auto f = failure_named(rec["class"].get<std::string>());
  if (!f)
    bad_manifest(name, "failure '" + key + "': unknown class '" + rec["class"].get<std::string>() +
                           "' (expected input, config, platform, resource, interrupted or internal)");
  return ManifestFailure{rec["id"].get<std::string>(), *f, rec["message"].get<std::string>()};
}

}  // namespace

ManifestHead read_manifest(std::istream& in, const std::string& name,
                           const std::function<void(const std::string&, ManifestRecord&&)>& on_frame,
                           const std::function<void(const std::string&, ManifestFailure&&)>& on_failure) {
  // nlohmann's parser callback sees each record complete (object_end at depth 2) and discards it once
  // handed on, so the document held at the end is the head and two empty objects.
  std::string section, key;
  const Json::parser_callback_t cb = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::key && depth == 1) section = parsed.get<std::string>();
    if (event == Json::parse_event_t::key && depth == 2) key = parsed.get<std::string>();
    if (event != Json::parse_event_t::object_end || depth != 2) return true;
    if (section == "frames") {
      ManifestRecord r = record_of(parsed, key, name);
      if (on_frame) on_frame(key, std::move(r));
      return false;
    }
    if (section == "failures") {
      ManifestFailure f = failure_of_record(parsed, key, name);
      if (on_failure) on_failure(key, std::move(f));
      return false;
    }
    return true;
  };
  Json j;
  try {
    j = Json::parse(in, cb);
  } catch (const Json::exception& e) {
    throw InputError("'" + name + "' is not valid JSON: " + e.what());
  }
  auto bad = [&](const std::string& what) { bad_manifest(name, what); };
  if (!j.is_object() || j.value("format", std::string()) != "depthmask-manifest")
    bad("not a depthmask manifest (no \"format\": \"depthmask-manifest\")");
  const int64_t version = j.contains("version") && j["version"].is_number_integer() ? j["version"].get<int64_t>() : 0;
  if (version != 1 && version != 2) bad("unsupported manifest version (expected 1 or 2)");
  if (!j.contains("settings") || !j["settings"].is_string()) bad("\"settings\" is missing or not a string");
  if (!j.contains("frames") || !j["frames"].is_object()) bad("\"frames\" is missing or not an object");
  if (j.contains("failures") && !j["failures"].is_object()) bad("\"failures\" is not an object");
  ManifestHead head;
  head.version = static_cast<int>(version);
  head.settings = j["settings"].get<std::string>();
  if (j.contains("depth_hist")) {
    const Json& h = j["depth_hist"];
    if (!h.is_object() || !h.contains("min") || !h["min"].is_number() || !h.contains("max") || !h["max"].is_number() ||
        !h.contains("bins") || !h["bins"].is_number_unsigned() || h["bins"].get<uint64_t>() == 0 ||
        h["bins"].get<uint64_t>() > 4096 || !(h["max"].get<double>() > h["min"].get<double>()))
      bad("\"depth_hist\": expected {\"min\": number, \"max\": number above min, \"bins\": 1..4096}");
    head.hist =
        HistogramSpec{h["min"].get<double>(), h["max"].get<double>(), static_cast<int>(h["bins"].get<uint64_t>())};
  }
  return head;
}

std::string Manifest::to_json() const {
  // One record per line: readable, diffable, and a tenth of an indented dump's size. std::map: sorted
  // keys, so the same records give the same bytes.
  std::map<std::string, std::string> lines, failure_lines;
  for (const auto& [key, rec] : frames) lines.emplace(key, line_text(key, rec));
  for (const auto& [key, f] : failures) failure_lines.emplace(key, failure_line_text(key, f));
  std::string text;
  join_manifest(text, head_text(head.settings, head.hist), lines, failure_lines);
  return text;
}

namespace {
Manifest collect_manifest(std::istream& in, const std::string& name) {
  Manifest m;
  m.head = read_manifest(
      in, name, [&](const std::string& key, ManifestRecord&& r) { m.frames.emplace(key, std::move(r)); },
      [&](const std::string& key, ManifestFailure&& f) { m.failures.emplace(key, std::move(f)); });
  return m;
}
}  // namespace

Manifest Manifest::parse(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  return collect_manifest(in, name);
}

Manifest Manifest::read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  DM_EXPECT(in, InputError, "'" << path.string() << "' cannot be opened for reading");
  return collect_manifest(in, path.string());
}

ResumeLog::ResumeLog(const Config& c) : c_(&c), path_(c.output.dir / kManifestName) {
  manifest_.head.settings = settings_hash(c);
  manifest_.head.hist = HistogramSpec::of(c);
  if (c.run.force) {
    detail::log().info("run.force: every frame is redone (the resume manifest is ignored)");
    return;
  }
  std::error_code ec;
  if (!fs::exists(path_, ec)) return;
  try {
    Manifest loaded = Manifest::read(path_);
    if (loaded.head.settings != manifest_.head.settings) {
      detail::log().info("the resume manifest '{}' was written with other settings: every frame is redone",
                         path_.string());
      return;
    }
    manifest_.frames = std::move(loaded.frames);
    manifest_.failures = std::move(loaded.failures);
  } catch (const std::exception& e) {
    detail::log().warn("ignoring the resume manifest: {}; every frame is redone", e.what());
  }
}

std::vector<bool> ResumeLog::plan(const std::vector<FrameEntry>& frames) {
  std::vector<bool> done(frames.size(), false);
  std::map<std::string, ManifestRecord> kept;
  std::map<std::string, ManifestFailure> failures;
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < frames.size(); ++i) {
    const FrameEntry& f = frames[i];
    const std::string fp = inputs_fingerprint(f);
    const std::string key = manifest_key(f);
    fingerprints_[key] = fp;
    const auto it = manifest_.frames.find(key);
    if (it == manifest_.frames.end() || it->second.inputs != fp) {
      // Not done: a failure recorded earlier stays until this run redoes the frame (it names no output).
      const auto failed = manifest_.failures.find(key);
      if (failed != manifest_.failures.end()) failures.insert(*failed);
      continue;
    }
    bool holds = true;
    for (const OutputFile& o : it->second.files) holds = holds && output_holds(c_->output.dir, o, buf);
    if (!holds) {
      detail::log().debug("frame {}: its recorded outputs changed or are missing; redoing it", f.id);
      continue;
    }
    // A version 1 record keeps its frame done, without stats (the report shows n/a for it).
    done[i] = true;
    kept.insert(*it);
  }
  if (!kept.empty())
    detail::log().info("resume: {} of {} frame(s) already done by an earlier run ({}); --force redoes them",
                       kept.size(), frames.size(), path_.string());
  manifest_.frames.clear();
  manifest_.failures.clear();
  head_ = Manifest::head_text(manifest_.head.settings, manifest_.head.hist);
  lines_.clear();
  for (const auto& [key, rec] : kept) lines_.emplace(key, Manifest::line_text(key, rec));
  failure_lines_.clear();
  for (const auto& [key, f] : failures) failure_lines_.emplace(key, Manifest::failure_line_text(key, f));
  save();  // before any output is touched: the manifest on disk names only frames this run skips
  return done;
}

void ResumeLog::finished(const FrameEntry& f, std::vector<OutputFile> files, const std::optional<FrameStats>& stats) {
  const std::string key = manifest_key(f);
  const auto fp = fingerprints_.find(key);
  lines_[key] = Manifest::line_text(
      key,
      ManifestRecord{f.id, fp != fingerprints_.end() ? fp->second : inputs_fingerprint(f), std::move(files), stats});
  failure_lines_.erase(key);
  dirty_ = true;
  maybe_save();
}

void ResumeLog::failed(const FrameEntry& f, Failure failure, const std::string& message) {
  const std::string key = manifest_key(f);
  failure_lines_[key] = Manifest::failure_line_text(key, ManifestFailure{f.id, failure, message});
  // A frame redone and failed has no outputs this run vouches for.
  lines_.erase(key);
  dirty_ = true;
  maybe_save();
}

void ResumeLog::maybe_save() {
  // At most about once a second: a frame finished but not yet recorded is only redone, identically.
  if (std::chrono::steady_clock::now() - last_save_ >= save_interval_) {
    try {
      save();
    } catch (const OutputError& e) {
      // Disk full, folder gone or read-only: the frames' own outputs already failed or will fail and
      // say so; the manifest on disk stays the last complete one (it is replaced atomically), and
      // saving is tried again a second later and at the end, where a failure is the run's error.
      if (!save_failing_)
        detail::log().warn("the resume manifest could not be updated (tried again later): {}", e.what());
      save_failing_ = true;
      last_save_ = std::chrono::steady_clock::now();
    }
  }
}

void ResumeLog::flush() {
  if (dirty_) save();
}

std::chrono::steady_clock::duration manifest_save_interval(std::chrono::steady_clock::duration last_save_took) {
  return std::max<std::chrono::steady_clock::duration>(std::chrono::seconds(1), 10 * last_save_took);
}

void ResumeLog::save() {
  const auto t0 = std::chrono::steady_clock::now();
  if (head_.empty()) head_ = Manifest::head_text(manifest_.head.settings, manifest_.head.hist);  // without plan()
  join_manifest(text_, head_, lines_, failure_lines_);
  write_file_atomic(path_, text_.data(), text_.size(), c_->output.fsync);
  last_save_ = std::chrono::steady_clock::now();
  save_interval_ = manifest_save_interval(last_save_ - t0);
  dirty_ = false;
  save_failing_ = false;
}

}  // namespace depthmask
