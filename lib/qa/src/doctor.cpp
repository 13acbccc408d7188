// `depthmask doctor` (doctor.h): the driver that runs the checks in report order (doctor_checks.h),
// the report's verdict, and the words the checks share.
#include "depthmask/doctor.h"

#include <algorithm>
#include <chrono>

#include "depthmask/detail/enum_names.h"
#include "doctor_checks.h"

namespace depthmask {

constexpr detail::EnumName<DoctorLevel> kDoctorLevels[] = {{DoctorLevel::Ok, "ok"},
                                                           {DoctorLevel::Info, "info"},
                                                           {DoctorLevel::Warning, "warning"},
                                                           {DoctorLevel::Error, "error"}};

std::string_view to_string(DoctorLevel level) { return detail::name_of(kDoctorLevels, level); }

namespace detail {

void Diagnosis::add(const char* id, DoctorLevel level, std::string title, std::string detail, std::string hint) {
  report.checks.push_back({id, level, std::move(title), std::move(detail), std::move(hint)});
}

void Diagnosis::suggest(const std::string& key, const std::string& value) {
  for (auto& kv : report.suggested)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  report.suggested.emplace_back(key, value);
}

std::string num(double v) { return cformat("%.10g", v); }
std::string metres(double m) { return m >= 1000.0 ? cformat("%.0f m", m) : cformat("%.3g m", m); }
std::string percent(size_t part, size_t whole) {
  return whole ? cformat("%.1f %%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "0 %";
}
std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }
std::string plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::vector<size_t> evenly_spaced(size_t n, size_t k) {
  std::vector<size_t> v;
  if (n == 0 || k == 0) return v;
  if (k >= n) {
    for (size_t i = 0; i < n; ++i) v.push_back(i);
    return v;
  }
  if (k == 1) return {0};
  for (size_t i = 0; i < k; ++i) v.push_back(i * (n - 1) / (k - 1));
  return v;
}

std::string spacing(size_t taken, size_t n) {
  if (taken >= n) return "all " + plural(n, "frame", "frames");
  return std::to_string(taken) + " of " + std::to_string(n) + " frames, evenly spaced (about every " +
         std::to_string((n + taken - 1) / taken) + ")";
}

void Tally::add(const std::string& value, const std::string& id) {
  ++counts[value];
  auto& ids = first_ids[value];
  if (ids.size() < 3) ids.push_back(id);
}

std::string Tally::common() const {
  if (counts.empty()) return "unknown";
  std::string best;
  size_t n = 0;
  for (const auto& [v, c] : counts)
    if (c > n) best = v, n = c;
  return best;
}

std::string Tally::describe() const {
  if (counts.empty()) return "unknown (no header could be read)";
  std::string s;
  const std::string main = common();
  for (const auto& [v, c] : counts) {
    if (!s.empty()) s += "; ";
    s += v + " (" + plural(c, "frame", "frames");
    if (v != main) {
      s += ": ";
      const auto& ids = first_ids.at(v);
      for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + ids[i];
      if (c > ids.size()) s += ", ...";
    }
    s += ")";
  }
  return s;
}

}  // namespace detail

DoctorLevel DoctorReport::worst() const {
  DoctorLevel w = DoctorLevel::Ok;
  for (const DoctorCheck& c : checks) w = std::max(w, c.level);
  return w;
}

int DoctorReport::exit_code(bool strict) const {
  const DoctorLevel w = worst();
  return w == DoctorLevel::Error || (strict && w == DoctorLevel::Warning) ? 1 : 0;
}

DoctorReport diagnose(const Config& config, const DoctorOptions& options) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  detail::Diagnosis d(config, options);
  if (detail::check_input(d)) {
    detail::check_topics(d);
    detail::check_pairing(d);
    detail::check_skipped(d);
    detail::check_sizes(d);
    detail::decode_sample(d);
    detail::check_types(d);
    detail::check_three_channel(d);
    detail::check_decode(d);
    detail::check_units(d);
    detail::check_intrinsics(d);
    detail::check_mask_rule(d);
  }
  d.report.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return std::move(d.report);
}

}  // namespace depthmask
