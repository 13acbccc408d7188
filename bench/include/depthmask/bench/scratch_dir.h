// A scratch folder: a fresh, uniquely named folder under the system's temporary folder, removed with
// everything in it when the object goes. `depthmask bench` generates its datasets in one; the tests
// (dmtest::TempDir) write theirs in one. Header-only.
#pragma once

#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <system_error>

namespace depthmask {

class ScratchDir {
 public:
  // `<temp>/<prefix><random digits>`; a name already taken is drawn again, so two scratch folders
  // never share a folder.
  explicit ScratchDir(std::string_view prefix = "depthmask-") {
    std::random_device rd;
    const std::filesystem::path temp = std::filesystem::temp_directory_path();
    do {
      path_ = temp / (std::string(prefix) + std::to_string(rd()) + std::to_string(rd()));
    } while (!std::filesystem::create_directory(path_));
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // path() / p: a file or folder inside.
  std::filesystem::path operator/(const std::filesystem::path& p) const { return path_ / p; }

 private:
  std::filesystem::path path_;
};

}  // namespace depthmask
