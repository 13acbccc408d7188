// The kernel variants this build lists: all six, distinct, the default first and equal to
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
    EXPECT_TRUE(dm::mapped_mask_kernel_variants().empty());
    return;
  }
  ASSERT_EQ(all.size(), 6u);
  std::set<std::string> names;
  for (const auto& v : all) names.insert(dm::to_string(v));
  EXPECT_EQ(names, (std::set<std::string>{"32x8 vec", "32x8 scalar", "32x32 vec", "32x32 scalar", "row256 vec",
                                          "row256x2 vec"}));
  // The mapped-memory list: those six, then the two kept-only 32x8 walks; the mapped choice is the
  // vectorised one.
  const auto mapped = dm::mapped_mask_kernel_variants();
  ASSERT_EQ(mapped.size(), 8u);
  std::set<std::string> mapped_names;
  for (const auto& v : mapped) mapped_names.insert(dm::to_string(v));
  EXPECT_EQ(mapped_names.size(), 8u);
  EXPECT_EQ(mapped_names.count("32x8 vec kept-only"), 1u);
  EXPECT_EQ(mapped_names.count("32x8 scalar kept-only"), 1u);
  EXPECT_EQ(dm::to_string(dm::mapped_mask_kernel_variant()), "32x8 vec kept-only");
  const dm::MaskKernelVariant def = dm::default_mask_kernel_variant();
  EXPECT_EQ(dm::to_string(all.front()), dm::to_string(def));
}
