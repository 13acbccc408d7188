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
#include "manifest_text.h"

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

// A file's path (as `as`: where the run read it), size and modification time.
void add_file(Fnv& h, const fs::path& p, const fs::path& as) {
  h.add(as.string());
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

std::string inputs_fingerprint(const FrameEntry& f, const fs::path& now, const fs::path& then) {
  const auto as = [&](const fs::path& p) {
    if (now.empty()) return p;
    const fs::path rel = p.lexically_relative(now);
    return rel.empty() || *rel.begin() == ".." ? p : then / rel;
  };
  const auto add = [&](Fnv& h, const fs::path& p) { add_file(h, p, as(p)); };
  Fnv h;
  add(h, f.depth);
  add(h, f.mask);
  h.add(f.color.empty() ? std::string("no color") : std::string("color"));
  if (!f.color.empty()) add(h, f.color);
  for (const auto& [inst, file] : f.instances) {
    h.add(inst);
    add(h, file);
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

std::string inputs_fingerprint(const FrameEntry& f) { return inputs_fingerprint(f, {}, {}); }

std::string manifest_key(const FrameEntry& f) { return f.relative.empty() ? f.id : f.relative.generic_string(); }

OutputCheck check_output(const fs::path& dir, const OutputFile& file, bool crc, std::vector<uint8_t>& buf) {
  const fs::path p = dir / fs::path(file.name);
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (st.type() == fs::file_type::not_found) return {OutputState::Missing};
  if (st.type() == fs::file_type::none) return {OutputState::Unreadable};  // a folder on the way denies access
  if (!fs::is_regular_file(st)) return {OutputState::NotAFile};
  OutputCheck c;
  c.size = fs::file_size(p, ec);
  if (ec) return {OutputState::Unreadable};
  if (c.size != file.size) {
    c.state = OutputState::SizeDiffers;
    return c;
  }
  if (!crc) return c;
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    c.state = OutputState::Unreadable;
    return c;
  }
  uint32_t sum = 0;
  buf.resize(1 << 20);
  while (in) {
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    sum = crc32_of(buf.data(), n, sum);
  }
  if (in.bad())
    c.state = OutputState::Unreadable;
  else if (sum != file.crc32)
    c.state = OutputState::CrcDiffers;
  return c;
}

std::string describe(const OutputCheck& check, const OutputFile& file) {
  const std::string name = "output '" + file.name + "'";
  switch (check.state) {
    case OutputState::Ok:
      return "";
    case OutputState::Missing:
      return name + " is missing";
    case OutputState::NotAFile:
      return name + " is not a regular file";
    case OutputState::SizeDiffers:
      return name + " has " + std::to_string(check.size) + " bytes, the manifest records " + std::to_string(file.size);
    case OutputState::CrcDiffers:
      return name + " does not match its recorded CRC-32 (changed or damaged since)";
    case OutputState::Unreadable:
      return name + " cannot be read";
  }
  return name + " cannot be read";
}

std::vector<ManifestFileName> list_manifests(const fs::path& dir) {
  std::vector<ManifestFileName> out;
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found) return out;
  DM_EXPECT(st.type() != fs::file_type::none, InputError, "'" << dir.string() << "' cannot be read: " << ec.message());
  DM_EXPECT(fs::is_directory(st), InputError, "'" << dir.string() << "' is not a folder");
  fs::directory_iterator it(dir, ec);
  DM_EXPECT(!ec, InputError, "'" << dir.string() << "' cannot be listed: " << ec.message());
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!is_manifest_name(name)) continue;
    std::error_code fec;
    if (!it->is_regular_file(fec)) continue;
    ManifestFileName m{it->path(), manifest_shard(name), true};
    m.recognised = name == kManifestName || m.shard.has_value();
    out.push_back(std::move(m));
  }
  DM_EXPECT(!ec, InputError, "'" << dir.string() << "' cannot be listed: " << ec.message());
  // The unsharded one, the shards by (count, index), then the other names.
  auto rank = [](const ManifestFileName& m) { return m.shard ? 1 : m.recognised ? 0 : 2; };
  std::sort(out.begin(), out.end(), [&](const ManifestFileName& a, const ManifestFileName& b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    if (a.shard && b.shard && !(*a.shard == *b.shard))
      return a.shard->count != b.shard->count ? a.shard->count < b.shard->count : a.shard->index < b.shard->index;
    return a.path.filename().string() < b.path.filename().string();
  });
  return out;
}

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

std::string manifest_name(const std::optional<Shard>& shard) {
  if (!shard) return kManifestName;
  return "depthmask-manifest.shard-" + std::to_string(shard->index) + "-of-" + std::to_string(shard->count) + ".json";
}

bool is_manifest_name(const std::string& file_name) {
  static const std::string prefix = "depthmask-manifest", suffix = ".json";
  return file_name.size() >= prefix.size() + suffix.size() && file_name.compare(0, prefix.size(), prefix) == 0 &&
         file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::optional<Shard> manifest_shard(const std::string& file_name) {
  static const std::string prefix = "depthmask-manifest.shard-", suffix = ".json";
  if (file_name.size() <= prefix.size() + suffix.size() || file_name.compare(0, prefix.size(), prefix) != 0 ||
      file_name.compare(file_name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  std::string mid = file_name.substr(prefix.size(), file_name.size() - prefix.size() - suffix.size());
  const size_t of = mid.find("-of-");
  if (of == std::string::npos) return std::nullopt;
  const auto s = parse_shard(mid.substr(0, of) + "/" + mid.substr(of + 4));
  // Only the name manifest_name() writes ("01" or "+1" would name the same shard twice).
  if (!s || manifest_name(s) != file_name) return std::nullopt;
  return s;
}

std::string Manifest::head_text(const std::string& settings, const std::optional<HistogramSpec>& hist,
                                const std::optional<Shard>& shard) {
  nlohmann::ordered_json head;
  head["format"] = "depthmask-manifest";
  head["version"] = 2;
  head["settings"] = settings;
  if (hist) head["depth_hist"] = spec_json(*hist);
  if (shard) head["shard"] = {{"index", shard->index}, {"count", shard->count}};
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
  // No output file is a frame whose only output is the bag (output.format [mcap]): its part holds it.
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
                           const std::function<void(const std::string&, ManifestFailure&&)>& on_failure,
                           const std::function<void(const ManifestHead&)>& on_head) {
  // nlohmann's parser callback sees each record complete (object_end at depth 2) and discards it once
  // handed on, so the document held at the end is the head and two empty objects.
  std::string section, key;
  // The head's first fields as they stream by (depthmask writes them before the records).
  bool format_ok = false, head_sent = false;
  ManifestHead early;
  early.version = 0;
  std::optional<std::string> early_settings;
  const Json::parser_callback_t cb = [&](int depth, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::value && depth == 1) {
      if (section == "format") format_ok = parsed.is_string() && parsed.get<std::string>() == "depthmask-manifest";
      if (section == "version" && parsed.is_number_integer()) early.version = parsed.get<int>();
      if (section == "settings" && parsed.is_string()) early_settings = parsed.get<std::string>();
    }
    if (event == Json::parse_event_t::key && depth == 1) {
      section = parsed.get<std::string>();
      if ((section == "frames" || section == "failures") && !head_sent && on_head && format_ok &&
          (early.version == 1 || early.version == 2) && early_settings) {
        head_sent = true;
        early.settings = *early_settings;
        on_head(early);
      }
    }
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
  if (j.contains("shard")) {
    const Json& sh = j["shard"];
    if (!sh.is_object() || !sh.contains("index") || !sh["index"].is_number_unsigned() || !sh.contains("count") ||
        !sh["count"].is_number_unsigned() || sh["count"].get<uint64_t>() == 0 ||
        sh["count"].get<uint64_t>() > kMaxShards || sh["index"].get<uint64_t>() >= sh["count"].get<uint64_t>())
      bad("\"shard\": expected {\"index\": K, \"count\": N} with 0 <= K < N");
    head.shard =
        Shard{static_cast<size_t>(sh["index"].get<uint64_t>()), static_cast<size_t>(sh["count"].get<uint64_t>())};
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
  detail::join_manifest(text, head_text(head.settings, head.hist, head.shard), lines, failure_lines);
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

}  // namespace depthmask
