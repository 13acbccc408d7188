// Helpers shared by the test executables: where things are, temporary folders, running the CLI,
// and whether a usable GPU is present.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <opencv2/core.hpp>
#include <random>
#include <string>
#include <vector>

#include "depthmask/backend.h"
#include "depthmask/bench/scratch_dir.h"
#include "depthmask/platform.h"

namespace dmtest {

namespace fs = std::filesystem;

inline std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

// For tests that read or write EXR with OpenCV themselves: the library switches OpenCV's EXR codec on
// (OPENCV_IO_ENABLE_OPENEXR) only for the EXR files it decodes or encodes. Keeps a value already set.
inline void enable_opencv_exr() { ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0); }

// The repository checkout (for data/sample and config/).
inline fs::path source_dir() { return env_or("DEPTHMASK_SOURCE_DIR", DEPTHMASK_SOURCE_DIR); }
// The committed synthetic sample.
inline fs::path sample_dir() { return env_or("DEPTHMASK_SAMPLE", (source_dir() / "data" / "sample").string()); }
// The real captures of ../shared/data (see its README); DEPTHMASK_TEST_DATA points elsewhere.
inline fs::path shared_data_dir() {
  return fs::path(env_or("DEPTHMASK_TEST_DATA", DEPTHMASK_DEFAULT_SHARED_DATA)).lexically_normal();
}
// The command that runs the CLI: a path, or a prefix such as "/bundle/run.sh depthmask".
inline std::string depthmask_cmd() { return env_or("DEPTHMASK_BIN", DEPTHMASK_DEFAULT_BIN); }

// A fresh temporary folder, removed at scope exit (`tmp / "name"` is a path inside).
using TempDir = depthmask::ScratchDir;

struct CmdResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs `cmd` through the shell, capturing stdout and stderr together and the exit code.
inline CmdResult run_shell(const std::string& cmd) {
  CmdResult r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `depthmask <args>`.
inline CmdResult run_depthmask(const std::string& args) { return run_shell(depthmask_cmd() + " " + args); }

inline std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_bytes(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Writes `text` to `p`, creating its folder.
inline void write_text(const fs::path& p, const std::string& text) {
  if (!p.parent_path().empty()) fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// The message of the E that f() throws; another exception type propagates (and fails the test).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no exception thrown>";
}

// Bitwise equality of two images (NaN payloads included), row by row, so ROIs compare too.
inline ::testing::AssertionResult SameBits(const cv::Mat& a, const cv::Mat& b) {
  if (a.type() != b.type() || a.size() != b.size())
    return ::testing::AssertionFailure() << "type/size differ: " << a.type() << " " << a.size() << " vs " << b.type()
                                         << " " << b.size();
  for (int y = 0; y < a.rows; ++y)
    if (std::memcmp(a.ptr(y), b.ptr(y), static_cast<size_t>(a.cols) * a.elemSize()) != 0)
      return ::testing::AssertionFailure() << "row " << y << " differs";
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << part << "' not found in: " << text;
}

// Single-quotes a path for the shell.
inline std::string q(const fs::path& p) {
  std::string s = "'";
  for (char c : p.string()) s += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return s + "'";
}

// The probe, once per process.
inline const depthmask::PlatformInfo& platform() {
  static const depthmask::PlatformInfo p = depthmask::probe_platform();
  return p;
}

// The cpu backend the parity tests take as the gold, and the backend of `kind` as `auto`'s choice
// machinery would make it (the GPU tests' side).
inline std::unique_ptr<depthmask::MemoryBackend> cpu_gold_backend() {
  return depthmask::make_backend(depthmask::BackendChoice{depthmask::BackendKind::Cpu, 0, "gold", false}, platform());
}
inline std::unique_ptr<depthmask::MemoryBackend> backend_of(depthmask::BackendKind kind) {
  return depthmask::make_backend(depthmask::choose_backend(depthmask::BackendConfig{kind, 0}, platform()), platform());
}

// Why GPU tests cannot run here, or empty when they can.
inline std::string gpu_unavailable_reason() {
  const auto& p = platform();
  if (!p.cuda_built) return "this build has no CUDA";
  if (p.devices.empty()) return p.problem.empty() ? "no CUDA device" : p.problem;
  return "";
}

}  // namespace dmtest

// Skips the current test, printing why, when no usable GPU is present.
#define DM_REQUIRE_GPU()                                                         \
  do {                                                                           \
    const std::string dm_reason_ = ::dmtest::gpu_unavailable_reason();           \
    if (!dm_reason_.empty()) GTEST_SKIP() << "GPU test skipped: " << dm_reason_; \
  } while (0)
