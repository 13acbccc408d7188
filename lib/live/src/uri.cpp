// Source URIs: scheme://path?key=value&key=value, checked against what each scheme accepts so a typo
// fails at start-up with the URI and the allowed words, not as a silently ignored setting.
#include "uri.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <vector>

#include "depthmask/detail/boolean_words.h"
#include "depthmask/errors.h"

namespace depthmask {
namespace detail {
namespace {

struct SchemeRule {
  const char* name;
  bool needs_path;  // replay://DIR, gst://PIPELINE, v4l2:///dev/videoN
  bool takes_path;  // synthetic:// has none
  bool has_query;   // gst: the whole rest is the pipeline ('?' and '&' are left to GStreamer)
  std::vector<std::string> keys;
};

const std::vector<SchemeRule>& rules() {
  static const std::vector<SchemeRule> r{
      {"synthetic", false, false, true, {"size", "fps", "frames"}},
      {"replay", true, true, true, {"fps", "loop"}},
      {"gst", true, true, false, {}},
      {"v4l2", true, true, true, {"size", "fps"}},
      {"openni2", false, true, true, {"size", "fps", "color", "loop"}},
      // ros2:///DEPTH_TOPIC?color=&mask=A,B&camera_info=&qos=&domain=&config= (ros2_live.cpp); as a
      // publisher ros2://NODE?qos=&domain=&config=&mask=1&reason=1&points=1.
      {"ros2", true, true, true, {"color", "mask", "camera_info", "qos", "domain", "config", "reason", "points"}},
  };
  return r;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

[[noreturn]] void fail(const std::string& uri, const std::string& problem) {
  throw ConfigError("source URI '" + uri + "': " + problem);
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(s.c_str(), &end);
  return errno == 0 && end == s.c_str() + s.size() && std::isfinite(out);
}

bool parse_int(const std::string& s, long long& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(s.c_str(), &end, 10);
  return errno == 0 && end == s.c_str() + s.size();
}

bool parse_size(const std::string& s, Size2& out) {
  const auto x = s.find('x');
  long long w = 0, h = 0;
  if (x == std::string::npos || !parse_int(s.substr(0, x), w) || !parse_int(s.substr(x + 1), h)) return false;
  if (w < 1 || h < 1 || w > 16384 || h > 16384) return false;
  out = {static_cast<int>(w), static_cast<int>(h)};
  return true;
}

// A boolean option (loop, color): the configuration's words (detail::parse_boolean_word) and 1/0.
bool parse_flag(const std::string& uri, const std::string& key, const std::string& value) {
  if (value == "1") return true;
  if (value == "0") return false;
  if (const std::optional<bool> b = detail::parse_boolean_word(value)) return *b;
  fail(uri, key + " '" + value + "' is not a boolean; expected " + detail::kBooleanWords + ", or 1/0");
}

const std::string* find(const SourceUri& uri, const std::string& key) {
  const auto it = uri.query.find(key);
  return it == uri.query.end() ? nullptr : &it->second;
}

// Checks one query value by its key (the same key means the same thing in every scheme).
void check_value(const std::string& uri, const std::string& key, const std::string& value) {
  if (key == "fps") {
    double f = 0;
    if (!parse_double(value, f) || f < 0)
      fail(uri, "fps '" + value + "' is not a number >= 0 (frames per second; 0 = as fast as possible)");
  } else if (key == "size") {
    Size2 s;
    if (!parse_size(value, s)) fail(uri, "size '" + value + "' is not WxH with W and H in 1..16384 (e.g. 640x480)");
  } else if (key == "frames") {
    long long n = 0;
    if (!parse_int(value, n) || n < 1) fail(uri, "frames '" + value + "' is not a whole number >= 1");
  } else if (key == "loop" || key == "color") {
    parse_flag(uri, key, value);
  }
}

}  // namespace

std::string known_schemes() {
  std::vector<std::string> names;
  for (const auto& r : rules()) names.emplace_back(r.name);
  return join(names);
}

double query_fps(const SourceUri& uri, double fallback) {
  const std::string* v = find(uri, "fps");
  if (!v) return fallback;
  double f = 0;
  if (!parse_double(*v, f) || f < 0) fail(uri.text, "fps '" + *v + "' is not a number >= 0");
  return f;
}

Size2 query_size(const SourceUri& uri, Size2 fallback) {
  const std::string* v = find(uri, "size");
  if (!v) return fallback;
  Size2 s;
  if (!parse_size(*v, s)) fail(uri.text, "size '" + *v + "' is not WxH");
  return s;
}

std::optional<long long> query_count(const SourceUri& uri, const std::string& key) {
  const std::string* v = find(uri, key);
  if (!v) return std::nullopt;
  long long n = 0;
  if (!parse_int(*v, n)) fail(uri.text, key + " '" + *v + "' is not a whole number");
  return n;
}

bool query_flag(const SourceUri& uri, const std::string& key, bool fallback) {
  const std::string* v = find(uri, key);
  if (!v) return fallback;
  return parse_flag(uri.text, key, *v);
}

}  // namespace detail

SourceUri parse_source_uri(const std::string& text) {
  using detail::fail;
  SourceUri u;
  u.text = text;
  const auto sep = text.find("://");
  if (sep == std::string::npos)
    fail(text, "no scheme; expected scheme://... with a scheme of " + detail::known_schemes());
  u.scheme = text.substr(0, sep);
  const detail::SchemeRule* rule = nullptr;
  for (const auto& r : detail::rules())
    if (u.scheme == r.name) rule = &r;
  if (!rule) fail(text, "unknown scheme '" + u.scheme + "'; known schemes: " + detail::known_schemes());

  std::string rest = text.substr(sep + 3);
  std::string query;
  if (rule->has_query) {
    if (const auto q = rest.find('?'); q != std::string::npos) {
      query = rest.substr(q + 1);
      rest.resize(q);
    }
  }
  u.path = rest;
  if (rule->needs_path && u.path.empty())
    fail(text, "empty path; " + u.scheme + ":// needs " +
                   (u.scheme == "replay" ? std::string("a dataset folder (replay://DIR)")
                    : u.scheme == "gst"  ? std::string("a pipeline ending in appsink (gst://... ! appsink)")
                    : u.scheme == "ros2" ? std::string("a depth topic (ros2:///camera/depth/image_rect_raw)")
                                         : std::string("a device (v4l2:///dev/video0)")));
  if (!rule->takes_path && !u.path.empty())
    fail(text, u.scheme + ":// takes no path, only a query (" + u.scheme + "://?" + rule->keys.front() +
                   "=...), got '" + u.path + "'");

  if (!query.empty()) {
    size_t start = 0;
    while (true) {
      const auto amp = query.find('&', start);
      const std::string item = query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
      const auto eq = item.find('=');
      if (item.empty() || eq == std::string::npos || eq == 0)
        fail(text, "malformed query item '" + item + "'; expected key=value pairs joined by '&'");
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      bool known = false;
      for (const auto& k : rule->keys) known = known || k == key;
      if (!known)
        fail(text, "unknown query key '" + key + "' for " + u.scheme + "://; allowed: " + detail::join(rule->keys));
      if (u.query.count(key)) fail(text, "query key '" + key + "' given twice");
      // ros2://'s color and mask name topics (openni2's color is a flag); ros2_live.cpp checks them.
      if (u.scheme != "ros2") detail::check_value(text, key, value);
      u.query.emplace(key, value);
      if (amp == std::string::npos) break;
      start = amp + 1;
    }
  }
  return u;
}

}  // namespace depthmask
