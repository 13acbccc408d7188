// One contract for every memory backend (rmm's mr_ref_test idea), instantiated per backend. The cpu
// instance runs everywhere; GPU instances skip with a reason when no device is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <opencv2/core.hpp>
#include <thread>
#include <vector>

#if DEPTHMASK_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "depthmask/backend.h"
#include "depthmask/frame.h"
#include "test_support.h"

namespace dm = depthmask;

namespace {

class BackendContract : public ::testing::TestWithParam<dm::BackendKind> {
 protected:
  void SetUp() override {
    if (GetParam() != dm::BackendKind::Cpu) DM_REQUIRE_GPU();
    dm::BackendConfig req{GetParam(), 0};
    const auto choice = dm::choose_backend(req, dmtest::platform());
    backend_ = dm::make_backend(choice, dmtest::platform());
  }
  bool gpu() const { return GetParam() != dm::BackendKind::Cpu; }

  // Reads the device view into host memory with a plain synchronous copy (independent of the backend).
  std::vector<uint8_t> read_device(const dm::Buffer& b) {
    std::vector<uint8_t> v(b.size());
#if DEPTHMASK_HAVE_CUDA
    EXPECT_EQ(cudaMemcpy(v.data(), b.device(), b.size(), cudaMemcpyDeviceToHost), cudaSuccess);
#endif
    return v;
  }

  void check_pointer_kinds(size_t bytes);
  void check_round_trip(size_t bytes);

  std::unique_ptr<dm::MemoryBackend> backend_;
};

std::string name_of(const ::testing::TestParamInfo<dm::BackendKind>& i) { return std::string(dm::to_string(i.param)); }

}  // namespace

TEST_P(BackendContract, ZeroBytesGivesAnEmptyBufferAndNoAllocation) {
  const auto before = backend_->stats().allocations;
  dm::Buffer b = backend_->allocate(0);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.host(), nullptr);
  EXPECT_EQ(backend_->stats().allocations, before);
  b.to_device();  // no-ops, no crash
  b.to_host();
}

TEST_P(BackendContract, LargeAllocationIsUsableAtBothEnds) {
  const size_t bytes = size_t{256} << 20;
  dm::Buffer b = backend_->allocate(bytes);
  ASSERT_EQ(b.size(), bytes);
  ASSERT_NE(b.host(), nullptr);
  auto* p = static_cast<uint8_t*>(b.host());
  p[0] = 0x11;
  p[bytes - 1] = 0x22;
  EXPECT_EQ(p[0], 0x11);
  EXPECT_EQ(p[bytes - 1], 0x22);
  EXPECT_EQ(backend_->stats().live_bytes, bytes);
  b = dm::Buffer();
  EXPECT_EQ(backend_->stats().live_bytes, 0u);
  EXPECT_EQ(backend_->stats().deallocations, 1u);
}

// Tiny blocks come from cudaHostAlloc, blocks of 64 KiB and more from the heap + cudaHostRegister
// (touched by the allocating thread below 4 MiB, by several threads from 4 MiB on, in 2 MB pages;
// detail/pinned_host.h): sizes on both sides of each threshold, whole pages or not, are checked.
constexpr size_t kPinnedSizes[] = {4096, (64 << 10) - 1, 64 << 10, (1 << 20) + 3, (4 << 20) - 1, 4 << 20, 16 << 20};

TEST_P(BackendContract, PointerKindsMatchTheStrategy) {
  for (const size_t bytes : kPinnedSizes) {
    SCOPED_TRACE(bytes);
    check_pointer_kinds(bytes);
  }
}

void BackendContract::check_pointer_kinds(size_t bytes) {
  dm::Buffer b = backend_->allocate(bytes);
  if (!gpu()) {
    EXPECT_EQ(b.device(), nullptr);
    EXPECT_FALSE(backend_->device_executes());
    return;
  }
#if DEPTHMASK_HAVE_CUDA
  ASSERT_NE(b.device(), nullptr);
  cudaPointerAttributes ha{}, da{};
  ASSERT_EQ(cudaPointerGetAttributes(&ha, b.host()), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&da, b.device()), cudaSuccess);
  switch (GetParam()) {
    case dm::BackendKind::Copy:
      EXPECT_EQ(ha.type, cudaMemoryTypeHost);  // pinned staging
      EXPECT_EQ(da.type, cudaMemoryTypeDevice);
      EXPECT_NE(b.host(), b.device());
      EXPECT_FALSE(backend_->shares_memory());
      break;
    case dm::BackendKind::ZeroCopy:
      EXPECT_EQ(ha.type, cudaMemoryTypeHost);  // mapped pinned memory, device view of the same pages
      EXPECT_EQ(ha.devicePointer, b.device());
      EXPECT_TRUE(backend_->shares_memory());
      break;
    case dm::BackendKind::Managed:
      EXPECT_EQ(ha.type, cudaMemoryTypeManaged);
      EXPECT_EQ(b.host(), b.device());
      break;
    default:
      break;
  }
#endif
}

// What the frame's passes ask of a backend instead of its kind: whether kernels read host memory
// across the bus (zero_copy: the mapped walk), and whether it has its own masking schedule (copy: row
// bands, one per frame slot).
TEST_P(BackendContract, StatesThePropertiesThePassesChooseBy) {
  EXPECT_EQ(backend_->device_executes(), gpu());
  EXPECT_EQ(backend_->kernels_read_host_memory(), GetParam() == dm::BackendKind::ZeroCopy);
  const std::unique_ptr<dm::MaskSchedule> schedule = backend_->make_mask_schedule();
  EXPECT_EQ(schedule != nullptr, GetParam() == dm::BackendKind::Copy);
}

TEST_P(BackendContract, RoundTripHostDeviceHost) {
  for (const size_t bytes : {size_t{1} << 20, (size_t{1} << 20) + 3, size_t{24} << 20}) {
    SCOPED_TRACE(bytes);
    check_round_trip(bytes);
  }
}

void BackendContract::check_round_trip(size_t n) {
  dm::Buffer b = backend_->allocate(n);
  auto* h = static_cast<uint8_t*>(b.host());
  for (size_t i = 0; i < n; ++i) h[i] = static_cast<uint8_t>(i * 7 + 3);
  EXPECT_EQ(b.head(), dm::Head::Uninitialized);
  b.host_written();
  EXPECT_EQ(b.head(), backend_->shares_memory() ? dm::Head::Synced : dm::Head::AtHost);
  b.to_device();
  backend_->synchronize();
  if (!gpu()) return;
  EXPECT_EQ(b.head(), dm::Head::Synced);
  const auto seen = read_device(b);
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(seen[i], static_cast<uint8_t>(i * 7 + 3)) << "byte " << i;
#if DEPTHMASK_HAVE_CUDA
  // The device writes; the host copy becomes fresh only after to_host + synchronize.
  ASSERT_EQ(cudaMemset(b.device(), 0xAB, n), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  b.device_written();
  EXPECT_EQ(b.head(), backend_->shares_memory() ? dm::Head::Synced : dm::Head::AtDevice);
  b.to_host();
  backend_->synchronize();
  EXPECT_EQ(b.head(), dm::Head::Synced);
  for (size_t i = 0; i < n; i += 4099) ASSERT_EQ(h[i], 0xAB) << "byte " << i;
#endif
}

TEST_P(BackendContract, MovedBufferOwnsTheMemoryOnce) {
  dm::Buffer a = backend_->allocate(1024);
  void* p = a.host();
  dm::Buffer b = std::move(a);
  EXPECT_EQ(a.host(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  EXPECT_EQ(b.host(), p);
  dm::Buffer c;
  c = std::move(b);
  EXPECT_EQ(c.host(), p);
  EXPECT_EQ(backend_->stats().allocations, 1u);
  c = dm::Buffer();
  EXPECT_EQ(backend_->stats().deallocations, 1u);
}

TEST_P(BackendContract, NoAllocationPerFrameInSteadyState) {
  dm::FrameSlot slot(*backend_);
  cv::Mat depth(480, 640, CV_16UC1), mask(480, 640, CV_8UC1);
  cv::randu(depth, 0, 3000);
  cv::randu(mask, 0, 3);
  dm::MaskParams p;
  slot.set(depth, mask);
  slot.run_mask(p);
  const auto after_first = backend_->stats().allocations;
  EXPECT_EQ(after_first, 3u);  // depth, mask, out
  for (int i = 0; i < 20; ++i) {
    cv::randu(depth, 0, 3000);
    slot.set(depth, mask);
    slot.run_mask(p);
  }
  EXPECT_EQ(backend_->stats().allocations, after_first);
  // A smaller frame fits the buffers; a larger one grows them once.
  slot.set(depth(cv::Rect(0, 0, 320, 240)).clone(), mask(cv::Rect(0, 0, 320, 240)).clone());
  slot.run_mask(p);
  EXPECT_EQ(backend_->stats().allocations, after_first);
  cv::Mat big_d(600, 800, CV_16UC1, cv::Scalar(1000)), big_m(600, 800, CV_8UC1, cv::Scalar(1));
  slot.set(big_d, big_m);
  slot.run_mask(p);
  EXPECT_EQ(backend_->stats().allocations, after_first + 3);
  slot.set(big_d, big_m);
  slot.run_mask(p);
  EXPECT_EQ(backend_->stats().allocations, after_first + 3);
  EXPECT_EQ(slot.out().at<float>(599, 799), 1.0f);
}

// A run's frame slots allocate from every thread at once (their pages are faulted in in parallel):
// 16 threads, each a frame's three blocks of different sizes, twice over; every block is its own
// memory (no page registered twice), pinned, and carries its bytes to the device and back.
TEST_P(BackendContract, ThreadsAllocatingAtOnceGetSeparateUsableBlocks) {
  constexpr int kThreads = 16;
  const size_t sizes[] = {640 * 480 * 2, 640 * 480, (640 * 480 * 4) + 3};
  std::vector<std::vector<dm::Buffer>> held(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2; ++round)
        for (const size_t n : sizes) {
          dm::Buffer b = backend_->allocate(n);
          std::memset(b.host(), t * 3 + static_cast<int>(held[static_cast<size_t>(t)].size()), n);
          held[static_cast<size_t>(t)].push_back(std::move(b));
        }
    });
  for (auto& th : threads) th.join();
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (int t = 0; t < kThreads; ++t)
    for (size_t i = 0; i < held[static_cast<size_t>(t)].size(); ++i) {
      dm::Buffer& b = held[static_cast<size_t>(t)][i];
      const auto value = static_cast<uint8_t>(t * 3 + static_cast<int>(i));
      const auto* h = static_cast<const uint8_t*>(b.host());
      ASSERT_EQ(h[0], value);
      ASSERT_EQ(h[b.size() - 1], value);
      ranges.emplace_back(reinterpret_cast<uintptr_t>(b.host()), reinterpret_cast<uintptr_t>(b.host()) + b.size());
      if (!gpu()) continue;
      b.host_written();
      b.to_device();
      backend_->synchronize();
      const auto seen = read_device(b);
      ASSERT_EQ(seen.front(), value);
      ASSERT_EQ(seen.back(), value);
    }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first) << "blocks overlap";
  EXPECT_EQ(backend_->stats().allocations, static_cast<uint64_t>(kThreads) * 6);
}

INSTANTIATE_TEST_SUITE_P(AllBackends, BackendContract,
                         ::testing::Values(dm::BackendKind::Cpu, dm::BackendKind::Copy, dm::BackendKind::ZeroCopy,
                                           dm::BackendKind::Managed),
                         name_of);
