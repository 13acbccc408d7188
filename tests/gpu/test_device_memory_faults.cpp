// Device memory exhausted for real (issue 7): a cudaMalloc that cannot be met is a ResourceError for
// that frame, naming the size, and not a sticky error: the device, the backend and the batch go on.
// Never with managed memory (over-subscribing it can stall the whole GPU). Skips without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#if DEPTHMASK_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/pipeline.h"
#include "depthmask/synth.h"
#include "test_support.h"

namespace dm = depthmask;
namespace fs = std::filesystem;

namespace {

#if DEPTHMASK_HAVE_CUDA

std::unique_ptr<dm::MemoryBackend> copy_backend() {
  const auto choice = dm::choose_backend(dm::BackendConfig{dm::BackendKind::Copy, 0}, dmtest::platform());
  return dm::make_backend(choice, dmtest::platform());
}

// Device memory taken with plain cudaMalloc (no pinned host twin) until about `leave` bytes are free.
class DeviceHog {
 public:
  explicit DeviceHog(size_t leave) {
    size_t free_b = 0, total_b = 0;
    EXPECT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    size_t chunk = size_t{1} << 30;
    while (chunk >= (size_t{1} << 20)) {
      EXPECT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
      if (free_b <= leave + chunk) {
        chunk /= 2;
        continue;
      }
      void* p = nullptr;
      if (cudaMalloc(&p, chunk) == cudaSuccess)
        blocks_.push_back(p);
      else {
        (void)cudaGetLastError();
        chunk /= 2;
      }
    }
  }
  ~DeviceHog() {
    for (void* p : blocks_) (void)cudaFree(p);
  }
  DeviceHog(const DeviceHog&) = delete;
  DeviceHog& operator=(const DeviceHog&) = delete;

 private:
  std::vector<void*> blocks_;
};

#endif

TEST(DeviceMemoryFaults, CudaMallocBeyondFreeIsAResourceErrorAndTheDeviceGoesOn) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  auto b = copy_backend();
  {
    // About 256 MiB left free; ask for 256 MiB more than that (the pinned host twin, allocated first,
    // stays small enough for any host).
    DeviceHog hog(256 << 20);
    size_t free_b = 0, total_b = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_b, &total_b), cudaSuccess);
    const size_t ask = free_b + (256 << 20);
    try {
      (void)b->allocate(ask);
      FAIL() << "allocating " << ask << " bytes with " << free_b << " free succeeded";
    } catch (const dm::ResourceError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("out of memory"), std::string::npos) << m;
      EXPECT_NE(m.find(std::to_string(ask)), std::string::npos) << "names the size asked for: " << m;
    }
    EXPECT_EQ(b->stats().live_bytes, 0u);
    EXPECT_EQ(b->health(), "") << "out of memory is not sticky";
  }
  // The next frame masks normally: no stale error is picked up by the kernel launch check.
  dm::FrameSlot slot(*b);
  cv::Mat depth(48, 64, CV_16UC1, cv::Scalar(1000)), mask(48, 64, CV_8UC1, cv::Scalar(1));
  slot.set(depth, mask);
  slot.run_mask(dm::MaskParams{});
  EXPECT_FLOAT_EQ(slot.out().at<float>(0, 0), 1.0f);
#endif
}

TEST(DeviceMemoryFaults, BatchWithTheDeviceFullFailsFramesThenRecovers) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  dmtest::TempDir tmp;
  // 2048x1536 frames: 6 + 3 + 12 MiB of device buffers each, more than the ~8 MiB left free below.
  dm::write_synthetic_dataset(tmp / "data", 3, 2048, 1536);
  std::vector<dm::Override> ov = {dm::parse_override("run.frames_in_flight=1"),
                                  dm::parse_override("output.preview=false")};
  ov.push_back({"output.dir", (tmp / "out").string(), "test", true});
  const dm::Config c = dm::load_config(tmp / "data" / "depthmask.yaml", ov);
  const dm::BackendChoice choice{dm::BackendKind::Copy, 0, "test", false};
  auto b = copy_backend();
  dm::RunSummary s;
  {
    DeviceHog hog(8 << 20);
    s = dm::run_batch(c, *b, choice);  // no throw: not a batch-stopping (sticky) error
  }
  EXPECT_EQ(s.ok, 0u);
  EXPECT_EQ(s.failed, 3u);
  for (const auto& f : s.failures) EXPECT_NE(f.message.find("out of memory"), std::string::npos) << f.message;
  const dm::RunSummary again = dm::run_batch(c, *b, choice);
  EXPECT_EQ(again.ok, 3u) << "with the memory back, the same backend masks every frame";
  EXPECT_EQ(again.failed, 0u);
#endif
}

// backend.memory_limit_mb on a GPU backend: the same per-frame failure, before cudaMalloc is asked.
TEST(DeviceMemoryFaults, MemoryLimitOnTheCopyBackendFailsTheFrameBeforeCudaMalloc) {
  DM_REQUIRE_GPU();
#if DEPTHMASK_HAVE_CUDA
  auto b = copy_backend();
  b->set_memory_limit(1 << 20);
  EXPECT_THROW((void)b->allocate(2 << 20), dm::ResourceError);
  EXPECT_EQ(b->stats().allocations, 0u) << "refused before the platform allocator";
  dm::Buffer ok = b->allocate(512 << 10);
  EXPECT_NE(ok.device(), nullptr);
#endif
}

}  // namespace
