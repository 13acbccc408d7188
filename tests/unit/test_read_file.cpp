// The one bounded whole-file reader (depthmask/detail/read_file.h): a file within its bound reads
// whole, a longer one (or an endless device) is refused naming the file and the bound, a missing one
// names the file, and a configuration file that cannot be read stays a configuration error.
#include <gtest/gtest.h>

#include <string>

#include "depthmask/config.h"
#include "depthmask/detail/read_file.h"
#include "depthmask/errors.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;
using dmtest::message_of;

namespace {
bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST(ReadFileBounded, AFileWithinTheBoundReadsWhole) {
  dmtest::TempDir tmp;
  const fs::path f = tmp.path() / "cam.txt";
  std::string text(100000, 'x');  // more than one 64 KiB chunk
  text[0] = '\0';                 // bytes, not a C string
  dmtest::write_text(f, text);
  EXPECT_EQ(dm::detail::read_file_bounded(f, text.size(), "camera file"), text);
  dmtest::write_text(f, "");
  EXPECT_EQ(dm::detail::read_file_bounded(f, 0, "camera file"), "");
}

TEST(ReadFileBounded, ALongerFileIsRefusedNamingTheFileAndTheBound) {
  dmtest::TempDir tmp;
  const fs::path f = tmp.path() / "list.txt";
  dmtest::write_text(f, std::string(101, 'x'));
  const std::string msg = message_of<dm::InputError>([&] { (void)dm::detail::read_file_bounded(f, 100, "TUM list"); });
  EXPECT_TRUE(Contains(msg, "TUM list '" + f.string() + "' is larger than 100 bytes")) << msg;
  const std::string none = message_of<dm::InputError>([&] { (void)dm::detail::read_file_bounded(f, 0, "TUM list"); });
  EXPECT_TRUE(Contains(none, "is larger than 0 bytes")) << none;
}

TEST(ReadFileBounded, AnEndlessDeviceStopsAtTheBound) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  const std::string msg = message_of<dm::InputError>(
      [] { (void)dm::detail::read_file_bounded("/dev/zero", size_t{1} << 20, "camera file"); });
  EXPECT_TRUE(Contains(msg, "camera file '/dev/zero' is larger than 1 MiB")) << msg;
}

TEST(ReadFileBounded, AMissingFileIsNamed) {
  dmtest::TempDir tmp;
  const fs::path f = tmp.path() / "nope.txt";
  const std::string msg = message_of<dm::InputError>(
      [&] { (void)dm::detail::read_file_bounded(f, dm::detail::kMaxTextFileBytes, "intrinsics file"); });
  EXPECT_EQ(msg, "cannot read intrinsics file '" + f.string() + "': no such file or not readable");
}

TEST(ReadFileBounded, AnUnreadableConfigFileStaysAConfigError) {
  dmtest::TempDir tmp;
  const fs::path f = tmp.path() / "missing.yaml";
  const std::string msg = message_of<dm::ConfigError>([&] { (void)dm::load_config(f, {}, tmp.path()); });
  EXPECT_EQ(msg, "cannot read config file '" + f.string() + "': no such file or not readable");
}
