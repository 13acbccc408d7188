// APC's cam.info.txt reader: the real file when present, and malformed files.
#include <gtest/gtest.h>

#include "depthmask/errors.h"
#include "depthmask/geometry.h"
#include "test_support.h"

namespace dm = depthmask;
using dmtest::Contains;
using dmtest::message_of;

TEST(ApcCamInfo, RealFileGivesColorDepthAndExtrinsic) {
  const auto file = dmtest::shared_data_dir() / "apc-vision-toolbox" / "scene-0000" / "cam.info.txt";
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "real data not present: " << file;
  const dm::CameraGeometry g = dm::read_apc_cam_info(file);
  EXPECT_DOUBLE_EQ(g.color.fx, 615.195190);
  EXPECT_DOUBLE_EQ(g.color.cy, 247.519196);
  EXPECT_DOUBLE_EQ(g.depth.fx, 477.584259);
  EXPECT_DOUBLE_EQ(g.depth.cx, 314.188080);
  EXPECT_DOUBLE_EQ(g.depth_to_color[3], 2.57000010e-02);  // x translation, metres
  EXPECT_DOUBLE_EQ(g.depth_to_color[15], 1.0);
}

TEST(ApcCamInfo, MalformedFilesNameFileAndLine) {
  dmtest::TempDir dir;
  const auto f = dir / "cam.info.txt";
  dmtest::write_text(f, "# Color camera intrinsic matrix\n 1 0 2\n 0 1 x\n 0 0 1\n");
  auto msg = message_of<dm::InputError>([&] { dm::read_apc_cam_info(f); });
  EXPECT_TRUE(Contains(msg, "line 3"));
  EXPECT_TRUE(Contains(msg, "'x' is not a number"));
  dmtest::write_text(f, "# Color camera intrinsic matrix\n 1 0 2\n 0 1 3\n 0 0 1\n");
  msg = message_of<dm::InputError>([&] { dm::read_apc_cam_info(f); });
  EXPECT_TRUE(Contains(msg, "Depth camera intrinsic"));
  dmtest::write_text(
      f,
      "# Color camera intrinsic matrix\n1 0 2\n0 1 3\n0 0 1\n# Depth camera intrinsic matrix\n1 0 2 0 1 3\n"
      "# Depth-to-color camera extrinsic matrix\n1 0 0 0\n");
  msg = message_of<dm::InputError>([&] { dm::read_apc_cam_info(f); });
  EXPECT_TRUE(Contains(msg, "expected a 3x3 matrix"));
  EXPECT_TRUE(Contains(message_of<dm::InputError>([&] { dm::read_apc_cam_info(dir / "missing.txt"); }), "missing.txt"));
}
