// Helpers for the end-to-end CLI tests: running the binary in a folder, reading outputs back, and
// computing the expected masked depth from the input PNGs with the same float arithmetic as the rule.
#pragma once

#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace dmcli {

namespace fs = std::filesystem;
using dmtest::CmdResult;
using dmtest::q;
using dmtest::read_bytes;
using dmtest::run_shell;
using dmtest::write_bytes;
using dmtest::write_text;

// Runs `depthmask <args>` with `dir` as the working directory.
inline CmdResult run_in(const fs::path& dir, const std::string& args) {
  return run_shell("cd " + q(dir) + " && " + dmtest::depthmask_cmd() + " " + args);
}

// Copies the committed sample into `dst` (which must not exist yet) and returns it.
// Starts `[prefix]depthmask <args>` (prefix: e.g. "env VAR=value ") in its own process group, output
// to `log`; returns its pid (the depthmask process itself: the shell execs it).
inline pid_t start_background(const std::string& args, const fs::path& log, const std::string& prefix = "") {
  const std::string cmd = "exec " + prefix + dmtest::depthmask_cmd() + " " + args + " > " + q(log) + " 2>&1";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  if (pid > 0) ::setpgid(pid, pid);
  return pid;
}

inline fs::path copy_sample(const fs::path& dst) {
  fs::copy(dmtest::sample_dir(), dst, fs::copy_options::recursive);
  return dst;
}

// Names of the regular files in `dir` (not recursive), sorted.
inline std::set<std::string> file_names(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  // The resume manifest and the run record are the run's bookkeeping, not outputs: tests count outputs.
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != "depthmask-manifest.json" && e.path().filename() != "depthmask-run.json")
      out.insert(e.path().filename().string());
  return out;
}

inline size_t count_with_suffix(const std::set<std::string>& names, const std::string& suffix) {
  size_t n = 0;
  for (const auto& s : names)
    if (s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) ++n;
  return n;
}

// The frame ids of the committed sample.
inline std::vector<std::string> sample_ids() {
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) {
    char b[16];
    std::snprintf(b, sizeof b, "%06d", i);
    ids.emplace_back(b);
  }
  return ids;
}

// The configuration the rule sees, as the tests spell it out independently of the library.
struct Rule {
  float scale = 0.001f;
  float min_m = 0.0f;
  float max_m = 10.0f;
  uint32_t threshold = 0;
  std::vector<uint32_t> labels;
  bool invert = false;
  float invalid = 0.0f;
};

// The sample's own depthmask.yaml: scale 0.001, min 0, max 2, threshold 0.
inline Rule sample_rule() {
  Rule r;
  r.max_m = 2.0f;
  return r;
}

// Expected output for a 16-bit depth image and an 8/16-bit mask, pixel by pixel.
inline cv::Mat expected_output(const cv::Mat& depth16, const cv::Mat& mask, const Rule& r) {
  EXPECT_EQ(depth16.type(), CV_16UC1);
  EXPECT_TRUE(mask.type() == CV_8UC1 || mask.type() == CV_16UC1);
  cv::Mat out(depth16.rows, depth16.cols, CV_32FC1);
  for (int y = 0; y < depth16.rows; ++y) {
    for (int x = 0; x < depth16.cols; ++x) {
      const uint16_t raw = depth16.at<uint16_t>(y, x);
      const uint32_t m = mask.type() == CV_8UC1 ? mask.at<uint8_t>(y, x) : mask.at<uint16_t>(y, x);
      const float d = static_cast<float>(raw) * r.scale;
      bool keep_mask;
      if (!r.labels.empty()) {
        keep_mask = false;
        for (uint32_t l : r.labels) keep_mask = keep_mask || m == l;
      } else {
        keep_mask = m > r.threshold;
      }
      keep_mask = keep_mask != r.invert;
      const bool keep = raw > 0 && d >= r.min_m && d <= r.max_m && keep_mask;
      out.at<float>(y, x) = keep ? d : r.invalid;
    }
  }
  return out;
}

inline cv::Mat read_tiff(const fs::path& p) { return cv::imread(p.string(), cv::IMREAD_UNCHANGED); }

// Number of pixels that differ (NaN equals NaN); the first difference goes to `first`.
inline size_t count_differences(const cv::Mat& a, const cv::Mat& b, std::string* first = nullptr) {
  if (a.size() != b.size() || a.type() != CV_32FC1 || b.type() != CV_32FC1) {
    if (first) *first = "shape or type differs";
    return static_cast<size_t>(-1);
  }
  size_t n = 0;
  for (int y = 0; y < a.rows; ++y)
    for (int x = 0; x < a.cols; ++x) {
      const float u = a.at<float>(y, x), v = b.at<float>(y, x);
      const bool same = (std::isnan(u) && std::isnan(v)) || u == v;
      if (!same) {
        if (n == 0 && first) {
          std::ostringstream os;
          os.precision(9);
          os << "(" << x << "," << y << "): got " << u << ", expected " << v;
          *first = os.str();
        }
        ++n;
      }
    }
  return n;
}

// Reads a 2-D '<f4' .npy file into a CV_32FC1 matrix (own parser, independent of the library's).
inline cv::Mat read_npy(const fs::path& p, std::string* err) {
  const std::vector<uint8_t> b = read_bytes(p);
  if (b.size() < 10 || b[0] != 0x93 || std::memcmp(&b[1], "NUMPY", 5) != 0) {
    *err = "not a .npy file";
    return {};
  }
  const size_t hlen = static_cast<size_t>(b[8]) | (static_cast<size_t>(b[9]) << 8);
  if (b.size() < 10 + hlen) {
    *err = "truncated header";
    return {};
  }
  const std::string h(b.begin() + 10, b.begin() + 10 + static_cast<std::ptrdiff_t>(hlen));
  std::smatch m;
  if (h.find("'descr': '<f4'") == std::string::npos || h.find("'fortran_order': False") == std::string::npos ||
      !std::regex_search(h, m, std::regex(R"('shape': \((\d+), (\d+)\))"))) {
    *err = "unexpected header " + h;
    return {};
  }
  const int rows = std::stoi(m[1].str()), cols = std::stoi(m[2].str());
  const size_t need = 10 + hlen + static_cast<size_t>(rows) * static_cast<size_t>(cols) * 4;
  if (b.size() != need) {
    *err = std::to_string(b.size()) + " bytes, expected " + std::to_string(need);
    return {};
  }
  cv::Mat out(rows, cols, CV_32FC1);
  std::memcpy(out.data, b.data() + 10 + hlen, static_cast<size_t>(rows) * static_cast<size_t>(cols) * 4);
  return out;
}

// The value of `section.key` in what --print-config prints (block YAML, two-space indent).
inline std::optional<std::string> printed_value(const std::string& yaml, const std::string& section,
                                                const std::string& key) {
  std::istringstream in(yaml);
  std::string line;
  bool in_section = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#') {
      in_section = line == section + ":";
      continue;
    }
    const std::string prefix = "  " + key + ":";
    if (in_section && line.compare(0, prefix.size(), prefix) == 0) {
      std::string v = line.substr(prefix.size());
      while (!v.empty() && v.front() == ' ') v.erase(v.begin());
      return v;
    }
  }
  return std::nullopt;
}

// Parses "N ok, N failed, N skipped" from a run summary.
struct Counts {
  int total = -1, ok = -1, failed = -1, skipped = -1;
};
inline Counts summary_counts(const std::string& out) {
  Counts c;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"((\d+) frame\(s\): (\d+) ok, (\d+) failed, (\d+) skipped)"))) {
    c.total = std::stoi(m[1].str());
    c.ok = std::stoi(m[2].str());
    c.failed = std::stoi(m[3].str());
    c.skipped = std::stoi(m[4].str());
  }
  return c;
}

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// Path comparison that tolerates symlinked temp folders and trailing separators.
inline fs::path canon(const fs::path& p) {
  fs::path c = fs::weakly_canonical(p);
  std::string s = c.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return fs::path(s);
}

}  // namespace dmcli
