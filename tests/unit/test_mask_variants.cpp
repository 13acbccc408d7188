// The kernel variants this build lists: all five, distinct, the default first and equal to
// default_mask_kernel_variant(); none without CUDA. Runs without a device.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"

namespace dm = depthmask;

TEST(MaskVariants, ListsEveryVariantOnceWithTheDefaultFirst) {
  const auto all = dm::mask_kernel_variants();
  if (!dm::have_cuda_kernels()) {
    EXPECT_TRUE(all.empty());
    return;
  }
  ASSERT_EQ(all.size(), 6u);
  std::set<std::string> names;
  for (const auto& v : all) names.insert(dm::to_string(v));
  EXPECT_EQ(names, (std::set<std::string>{"32x8 vec", "32x8 scalar", "32x32 vec", "32x32 scalar", "row256 vec",
                                                      "row256x2 vec"}));
  // The mapped-memory variant is one of them.
  EXPECT_EQ(names.count(dm::to_string(dm::mapped_mask_kernel_variant())), 1u);
  const dm::MaskKernelVariant def = dm::default_mask_kernel_variant();
  EXPECT_EQ(dm::to_string(all.front()), dm::to_string(def));
}
