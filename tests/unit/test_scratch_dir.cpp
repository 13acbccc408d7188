// depthmask::ScratchDir, the scratch folder of the bench and of the tests (dmtest::TempDir): a fresh
// folder under the temporary folder, its own for each object, gone with its contents at scope exit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <type_traits>

#include "depthmask/bench/scratch_dir.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using depthmask::ScratchDir;

static_assert(!std::is_copy_constructible_v<ScratchDir> && !std::is_copy_assignable_v<ScratchDir>);
static_assert(std::is_same_v<dmtest::TempDir, ScratchDir>);

TEST(ScratchDir, IsAFreshFolderUnderTheTempDirRemovedWithItsContents) {
  fs::path kept;
  {
    const ScratchDir d("depthmask-scratch-test-");
    kept = d.path();
    EXPECT_EQ(kept.parent_path(), fs::temp_directory_path());
    EXPECT_EQ(kept.filename().string().rfind("depthmask-scratch-test-", 0), 0u) << kept;
    ASSERT_TRUE(fs::is_directory(kept));
    EXPECT_TRUE(fs::is_empty(kept));
    fs::create_directories(d / "a" / "b");
    std::ofstream(d / "a" / "b" / "f.txt") << "x";
    EXPECT_EQ(d / "a", kept / "a");
    EXPECT_TRUE(fs::exists(kept / "a" / "b" / "f.txt"));
  }
  EXPECT_FALSE(fs::exists(kept));
}

TEST(ScratchDir, EachObjectHasItsOwnFolder) {
  const ScratchDir a, b;
  const dmtest::TempDir t;
  EXPECT_NE(a.path(), b.path());
  EXPECT_NE(a.path(), t.path());
  EXPECT_TRUE(fs::is_directory(a.path()) && fs::is_directory(b.path()) && fs::is_directory(t.path()));
}

}  // namespace
