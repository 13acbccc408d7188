// backend.memory_limit_mb (issue 7, "device memory exhausted"): the backend refuses an allocation that
// would take its live buffers past the limit, with ResourceError naming the size and the limit, and
// changes nothing when it refuses; a frame slot that failed for memory gives its buffers back.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <string>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/platform.h"

namespace {

namespace dm = depthmask;

std::unique_ptr<dm::MemoryBackend> cpu_backend() {
  return dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false}, dm::PlatformInfo{});
}

TEST(MemoryLimit, RefusesWhatWouldPassTheLimitAndNamesSizeAndLimit) {
  auto b = cpu_backend();
  EXPECT_EQ(b->memory_limit(), 0u) << "no limit by default";
  b->set_memory_limit(1000);
  dm::Buffer a = b->allocate(600);
  dm::Buffer c = b->allocate(400);  // exactly at the limit: allowed
  EXPECT_EQ(b->stats().live_bytes, 1000u);
  try {
    (void)b->allocate(1);
    FAIL() << "an allocation past the limit succeeded";
  } catch (const dm::ResourceError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot allocate 1 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("1000 of the 1000 bytes of backend.memory_limit_mb"), std::string::npos) << m;
    EXPECT_NE(m.find("out of memory"), std::string::npos) << m;
  }
  const dm::AllocationStats s = b->stats();
  EXPECT_EQ(s.live_bytes, 1000u) << "a refused allocation changes nothing";
  EXPECT_EQ(s.allocations, 2u);
  a = dm::Buffer();
  dm::Buffer d = b->allocate(600);  // room again once a buffer went back
  EXPECT_EQ(b->stats().live_bytes, 1000u);
  EXPECT_THROW((void)b->allocate(2000), dm::ResourceError) << "larger than the whole limit";
  b->set_memory_limit(0);
  dm::Buffer e = b->allocate(5000);  // limit lifted
  EXPECT_EQ(e.size(), 5000u);
}

TEST(MemoryLimit, HugeRequestDoesNotWrapAround) {
  auto b = cpu_backend();
  b->set_memory_limit(1 << 20);
  dm::Buffer a = b->allocate(100);
  EXPECT_THROW((void)b->allocate(~size_t{0} - 50), dm::ResourceError);
  EXPECT_EQ(b->stats().live_bytes, 100u);
}

TEST(MemoryLimit, SlotThatRanOutGivesItsBuffersBack) {
  auto b = cpu_backend();
  dm::FrameSlot slot(*b);
  cv::Mat depth(48, 64, CV_16UC1, cv::Scalar(1000)), mask(48, 64, CV_8UC1, cv::Scalar(1));
  slot.set(depth, mask);
  const size_t loaded = b->stats().live_bytes;
  EXPECT_EQ(loaded, depth.total() * 2 + mask.total());
  // The output buffer (64 x 48 floats) does not fit beside the inputs.
  b->set_memory_limit(loaded + 100);
  dm::MaskParams p;
  p.scale = 0.001f, p.max_m = 10.0f;
  EXPECT_THROW(slot.run_mask(p), dm::ResourceError);
  EXPECT_EQ(b->stats().live_bytes, loaded);
  slot.release_buffers();
  EXPECT_EQ(b->stats().live_bytes, 0u) << "the failed frame's buffers went back";
  // The slot works again afterwards, from nothing, within a limit that holds one frame.
  b->set_memory_limit(depth.total() * (2 + 1 + 4));
  slot.set(depth, mask);
  slot.run_mask(p);
  EXPECT_FLOAT_EQ(slot.out().at<float>(0, 0), 1.0f);
}

}  // namespace
