// backend.memory_limit_mb (issue 7, "device memory exhausted"): the backend refuses an allocation that
// would take its live buffers past the limit, with ResourceError naming the size and the limit, and
// changes nothing when it refuses; a frame slot that failed for memory gives its buffers back.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <new>
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

// ---------------------------------------------------------------------------------------------------
// Allocation from many pipeline tasks at once, with a platform allocator that runs parallel work of
// its own (as pinned_host_alloc's first touch does). allocate() used to hold its lock across the
// platform allocator: a thread waiting for the nested work took up another task that allocated and
// blocked on the lock it held itself — the batch hung (4K bench, 1080p soak, on the H200).

namespace {

class NestedParallelBackend final : public dm::MemoryBackend {
 public:
  NestedParallelBackend() : dm::MemoryBackend(dm::BackendKind::Cpu) {}
  bool device_executes() const override { return false; }
  bool shares_memory() const override { return true; }
  std::string describe() const override { return "test: allocation with nested parallel work"; }

 private:
  dm::Block do_allocate(size_t bytes) override {
    auto* p = static_cast<char*>(std::malloc(bytes));
    if (p == nullptr) throw std::bad_alloc();
    // Deliberately not isolated: the outer tasks may run inside this wait. Chunks of a few
    // microseconds each, so that threads wait for one another here.
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, bytes, 512),
        [&](const tbb::blocked_range<size_t>& r) {
          for (int round = 0; round < 20; ++round)
            for (size_t i = r.begin(); i < r.end(); ++i) static_cast<volatile char*>(p)[i] = static_cast<char>(i);
        },
        tbb::simple_partitioner());
    return dm::Block{p, nullptr, bytes};
  }
  void do_deallocate(dm::Block b) noexcept override { std::free(b.host); }
};

}  // namespace

TEST(BackendAllocate, ManyTasksAllocatingWithNestedParallelWorkDoNotDeadlock) {
  NestedParallelBackend backend;
  backend.set_memory_limit(size_t{1} << 30);  // the limit's bookkeeping is what the lock guards
  // 16 threads, as on the H200's host, whatever this machine has: the more threads, the likelier a
  // waiting thread takes up another allocating task.
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism, 16);
  auto work = std::async(std::launch::async, [&] {
    tbb::task_arena(16).execute([&] {
      tbb::parallel_for(0, 2000, [&](int i) {
        dm::Buffer b = backend.allocate(4096 + static_cast<size_t>(i % 7) * 4096);
        EXPECT_EQ(static_cast<char*>(b.host())[65], static_cast<char>(65));
      });
    });
  });
  if (work.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    std::fprintf(stderr, "BackendAllocate: 2000 allocations did not finish in 30 s: deadlocked\n");
    std::_Exit(1);  // the hung threads would keep the process from exiting
  }
  work.get();
  const dm::AllocationStats s = backend.stats();
  EXPECT_EQ(s.allocations, 2000u);
  EXPECT_EQ(s.deallocations, 2000u);
  EXPECT_EQ(s.live_bytes, 0u);
  EXPECT_LE(s.peak_bytes, size_t{1} << 30);
}

TEST(BackendAllocate, AFailedPlatformAllocationGivesItsReservationBack) {
  class Refusing final : public dm::MemoryBackend {
   public:
    Refusing() : dm::MemoryBackend(dm::BackendKind::Cpu) {}
    bool device_executes() const override { return false; }
    bool shares_memory() const override { return true; }
    std::string describe() const override { return "test: refuses"; }

   private:
    dm::Block do_allocate(size_t) override { throw std::bad_alloc(); }
    void do_deallocate(dm::Block) noexcept override {}
  } backend;
  backend.set_memory_limit(1000);
  // Out of memory has one face: the platform allocator's std::bad_alloc comes out as ResourceError.
  auto refusal = [&] {
    try {
      (void)backend.allocate(800);
    } catch (const dm::ResourceError& e) {
      return std::string(e.what());
    }
    return std::string("no ResourceError");
  };
  const std::string first = refusal();
  EXPECT_NE(first.find("cannot allocate 800 bytes"), std::string::npos) << first;
  EXPECT_NE(first.find("std::bad_alloc"), std::string::npos) << first;
  EXPECT_EQ(backend.stats().live_bytes, 0u);
  EXPECT_EQ(backend.stats().allocations, 0u);
  // The platform's refusal again, not the limit's: nothing stayed reserved.
  const std::string second = refusal();
  EXPECT_NE(second.find("std::bad_alloc"), std::string::npos) << second;
  EXPECT_EQ(second.find("memory_limit_mb"), std::string::npos) << second;
}
