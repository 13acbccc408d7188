// The doctor's report (doctor.h) in its three forms: the text a person reads, JSON, and the suggested
// keys as a YAML configuration.
#include <nlohmann/json.hpp>

#include <algorithm>

#include "depthmask/doctor.h"
#include "doctor_checks.h"

namespace depthmask {

using detail::cformat;
using detail::plural;

std::string DoctorReport::to_text() const {
  static const char* const kMark[] = {"ok   ", "info ", "WARN ", "ERROR"};
  std::string s = "depthmask doctor: " + root + "\n";
  for (const DoctorCheck& c : checks) {
    s += "  " + std::string(kMark[static_cast<int>(c.level)]) + " " + c.title + "\n";
    size_t at = 0;
    while (at < c.detail.size()) {
      const size_t nl = c.detail.find('\n', at);
      const size_t end = nl == std::string::npos ? c.detail.size() : nl;
      s += "          " + c.detail.substr(at, end - at) + "\n";
      at = end + 1;
    }
    if (!c.hint.empty()) s += "          -> " + c.hint + "\n";
  }
  size_t errors = 0, warnings = 0;
  for (const DoctorCheck& c : checks) {
    errors += c.level == DoctorLevel::Error ? 1 : 0;
    warnings += c.level == DoctorLevel::Warning ? 1 : 0;
  }
  const size_t tweaks = suggested.size() > 2 ? suggested.size() - 2 : 0;  // besides input.root/layout
  if (tweaks) {
    s += "suggested keys (--write-config FILE saves them):\n";
    for (size_t i = 2; i < suggested.size(); ++i) s += "  " + suggested[i].first + ": " + suggested[i].second + "\n";
  }
  s += cformat("%s, %s in %.2f s (%zu frames listed, %zu decoded, %zu headers read)\n",
               plural(errors, "error", "errors").c_str(), plural(warnings, "warning", "warnings").c_str(), seconds,
               frames, decoded, headers_read);
  return s;
}

std::string DoctorReport::to_json() const {
  nlohmann::ordered_json j;
  j["version"] = 1;
  j["root"] = root;
  j["layout"] = layout;
  j["layout_reason"] = layout_reason;
  j["frames"] = frames;
  j["decoded"] = decoded;
  j["headers_read"] = headers_read;
  j["sample"] = sample;
  j["seconds"] = seconds;
  j["worst"] = std::string(to_string(worst()));
  j["exit_code"] = exit_code(false);
  j["exit_code_strict"] = exit_code(true);
  j["checks"] = nlohmann::ordered_json::array();
  for (const DoctorCheck& c : checks)
    j["checks"].push_back({{"id", c.id},
                           {"level", std::string(to_string(c.level))},
                           {"title", c.title},
                           {"detail", c.detail},
                           {"hint", c.hint}});
  j["suggested"] = nlohmann::ordered_json::object();
  for (const auto& [k, v] : suggested) j["suggested"][k] = v;
  return j.dump(2) + "\n";
}

std::string DoctorReport::suggested_yaml() const {
  std::string s = "# Suggested by `depthmask doctor` for " + root +
                  ".\n# Run: depthmask run --config THIS_FILE --output DIR (or copy the keys into your "
                  "configuration)\n";
  // Group the dotted keys by section, in the order they came.
  std::vector<std::string> sections;
  for (const auto& kv : suggested) {
    const std::string sec = kv.first.substr(0, kv.first.find('.'));
    if (std::find(sections.begin(), sections.end(), sec) == sections.end()) sections.push_back(sec);
  }
  for (const std::string& sec : sections) {
    s += sec + ":\n";
    for (const auto& [k, v] : suggested)
      if (k.compare(0, sec.size() + 1, sec + ".") == 0) s += "  " + k.substr(sec.size() + 1) + ": " + v + "\n";
  }
  return s;
}

}  // namespace depthmask
