// The failure taxonomy (errors.h, issue 14): failure_of() on every exception type a run can meet,
// the exit-code table, the severity order, a batch's exit code (RunSummary::failure), and one
// classification of a frame's failure in both pipelines: a sticky device error stops the batch and
// the live runner alike, a CUDA error that is not sticky fails the frame as platform, a backend's
// std::bad_alloc is a ResourceError.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/live_runner.h"
#include "depthmask/pipeline.h"
#include "depthmask/platform.h"
#include "depthmask/synth.h"
#include "live_support.h"
#include "test_support.h"

namespace {

namespace dm = depthmask;
namespace fs = std::filesystem;
using dm::Failure;

dm::Failure of(const std::exception& e) { return dm::failure_of(e); }

fs::filesystem_error fs_error(int code) {
  return fs::filesystem_error("write", fs::path("/out/x.tiff"), std::error_code(code, std::generic_category()));
}

TEST(FailureOf, DepthmaskErrorsCarryTheirOwnClass) {
  EXPECT_EQ(of(dm::InputError("x")), Failure::Input);
  EXPECT_EQ(of(dm::ConfigError("x")), Failure::Config);
  EXPECT_EQ(of(dm::PlatformError("x")), Failure::Platform);
  EXPECT_EQ(of(dm::CudaError("x", 700)), Failure::Platform);
  EXPECT_EQ(of(dm::ResourceError("x")), Failure::Resource);
  EXPECT_EQ(of(dm::OutputError("x")), Failure::Resource) << "disk full, folder gone, manifest not saved";
  EXPECT_EQ(of(dm::InterruptedError("x")), Failure::Interrupted);
}

TEST(FailureOf, ForeignOutOfMemoryIsResource) {
  EXPECT_EQ(of(std::bad_alloc()), Failure::Resource);
  EXPECT_EQ(of(std::bad_array_new_length()), Failure::Resource);
  EXPECT_EQ(of(cv::Exception(cv::Error::StsNoMem, "no memory", "f", "file.cpp", 1)), Failure::Resource);
}

TEST(FailureOf, OtherOpenCvErrorsAreInput) {
  EXPECT_EQ(of(cv::Exception(cv::Error::StsBadArg, "bad", "f", "file.cpp", 1)), Failure::Input);
  EXPECT_EQ(of(cv::Exception(cv::Error::StsAssert, "assert", "f", "file.cpp", 1)), Failure::Input);
}

TEST(FailureOf, FilesystemErrorsAreResourceWhenOutOfRoomOrTheFolderIsGone) {
  EXPECT_EQ(of(fs_error(ENOSPC)), Failure::Resource);
  EXPECT_EQ(of(fs_error(EDQUOT)), Failure::Resource);
  EXPECT_EQ(of(fs_error(ENOMEM)), Failure::Resource);
  EXPECT_EQ(of(fs_error(ENOENT)), Failure::Resource);
  EXPECT_EQ(of(fs_error(EACCES)), Failure::Input);
  EXPECT_EQ(of(fs_error(ENOTDIR)), Failure::Input);
}

TEST(FailureOf, SystemErrorsAreResourceWhenTheSystemRanOutElseInternal) {
  const auto sys = [](int code) { return std::system_error(std::error_code(code, std::generic_category()), "op"); };
  EXPECT_EQ(of(sys(EAGAIN)), Failure::Resource) << "a thread that cannot be started";
  EXPECT_EQ(of(sys(EMFILE)), Failure::Resource);
  EXPECT_EQ(of(sys(ENFILE)), Failure::Resource);
  EXPECT_EQ(of(sys(ENOSPC)), Failure::Resource);
  EXPECT_EQ(of(sys(EDQUOT)), Failure::Resource);
  EXPECT_EQ(of(sys(EINVAL)), Failure::Internal);
  EXPECT_EQ(of(sys(EDEADLK)), Failure::Internal);
}

TEST(FailureOf, EverythingElseIsInternal) {
  EXPECT_EQ(of(std::logic_error("bug")), Failure::Internal);
  EXPECT_EQ(of(std::out_of_range("bug")), Failure::Internal);
  EXPECT_EQ(of(std::runtime_error("?")), Failure::Internal);
  EXPECT_EQ(of(std::exception()), Failure::Internal);
}

TEST(FailureOf, ExceptionPointers) {
  EXPECT_EQ(dm::failure_of(std::exception_ptr()), Failure::Internal) << "no exception at all";
  EXPECT_EQ(dm::failure_of(std::make_exception_ptr(42)), Failure::Internal) << "not a std::exception";
  EXPECT_EQ(dm::failure_of(std::make_exception_ptr(std::bad_alloc())), Failure::Resource);
  EXPECT_EQ(dm::failure_of(std::make_exception_ptr(dm::ConfigError("x"))), Failure::Config);
  EXPECT_EQ(dm::failure_of(std::make_exception_ptr(fs_error(ENOSPC))), Failure::Resource);
}

TEST(ExitCode, OneCodePerClass) {
  EXPECT_EQ(dm::exit_code(Failure::Input), 1);
  EXPECT_EQ(dm::exit_code(Failure::Config), 2);
  EXPECT_EQ(dm::exit_code(Failure::Platform), 3);
  EXPECT_EQ(dm::exit_code(Failure::Resource), 4);
  EXPECT_EQ(dm::exit_code(Failure::Interrupted), 130);
  EXPECT_EQ(dm::exit_code(Failure::Internal), 70);
  EXPECT_EQ(dm::to_string(Failure::Resource), "resource");
}

TEST(ExitCode, TheOneListHasTheDocumentedNumbers) {
  namespace ec = dm::exit_codes;
  EXPECT_EQ(ec::kOk, 0);
  EXPECT_EQ(dm::exit_code(Failure::Input), ec::kInput);
  EXPECT_EQ(dm::exit_code(Failure::Config), ec::kConfig);
  EXPECT_EQ(dm::exit_code(Failure::Platform), ec::kPlatform);
  EXPECT_EQ(dm::exit_code(Failure::Resource), ec::kResource);
  EXPECT_EQ(dm::exit_code(Failure::Busy), ec::kBusy);
  EXPECT_EQ(dm::exit_code(Failure::Internal), ec::kInternal);
  EXPECT_EQ(dm::exit_code(Failure::Interrupted), ec::kInterrupted);
  EXPECT_EQ(ec::of_signal(SIGINT), 130);
  EXPECT_EQ(ec::of_signal(SIGTERM), 143);
}

TEST(ExitCode, MostSevereOrder) {
  const Failure order[] = {Failure::Input,    Failure::Config,   Failure::Resource,
                           Failure::Platform, Failure::Internal, Failure::Interrupted};
  for (size_t i = 0; i < std::size(order); ++i)
    for (size_t j = 0; j < std::size(order); ++j) {
      EXPECT_EQ(dm::most_severe(order[i], order[j]), order[std::max(i, j)]) << i << " " << j;
    }
}

dm::FrameFailure failure(Failure f) { return dm::FrameFailure{"000000", "why", f}; }

TEST(ExitCode, BatchExitsWithTheMostSevereClassAmongItsFailures) {
  dm::RunSummary s;
  s.total = s.ok = 4;
  EXPECT_FALSE(s.failure().has_value());
  EXPECT_EQ(dm::exit_code(s), 0);

  s.failed = 1, s.ok = 3;
  s.failures = {failure(Failure::Input)};
  EXPECT_EQ(dm::exit_code(s), 1) << "frames failed for input";
  s.failed = 2, s.ok = 2;
  s.failures.push_back(failure(Failure::Resource));
  EXPECT_EQ(s.failure(), Failure::Resource);
  EXPECT_EQ(dm::exit_code(s), 4) << "input and out of memory: resource";
  s.failures.push_back(failure(Failure::Platform));
  EXPECT_EQ(dm::exit_code(s), 3) << "platform > resource > input";
  s.failures.push_back(failure(Failure::Internal));
  EXPECT_EQ(dm::exit_code(s), 70);
  s.interrupted = true;
  EXPECT_EQ(dm::exit_code(s), 130) << "interrupted wins";
}

TEST(ExitCode, ManifestNotSavedIsResource) {
  dm::RunSummary s;
  s.total = s.ok = 4;
  s.manifest_error = "cannot write 'out/depthmask-manifest.json': No space left on device";
  EXPECT_EQ(s.failure(), Failure::Resource);
  EXPECT_EQ(dm::exit_code(s), 4);
  s.failed = 1, s.ok = 3;
  s.failures = {failure(Failure::Input)};
  EXPECT_EQ(dm::exit_code(s), 4) << "resource > input";
}

// ---------------------------------------------------------------------------------------------------
// One classification, both pipelines. A cpu-like backend whose allocations throw what a GPU's would.

class FaultyBackend final : public dm::MemoryBackend {
 public:
  enum class Mode { Sticky, NotSticky, BadAlloc };
  explicit FaultyBackend(Mode m) : dm::MemoryBackend(dm::BackendKind::Cpu), mode_(m) {}
  bool device_executes() const override { return false; }
  bool shares_memory() const override { return true; }
  std::string describe() const override { return "test: faulty"; }
  std::string health() override { return mode_ == Mode::Sticky ? "the test device is gone" : ""; }

 private:
  dm::Block do_allocate(size_t) override {
    if (mode_ == Mode::BadAlloc) throw std::bad_alloc();
    throw dm::CudaError("cudaMalloc: cudaErrorIllegalAddress (injected)", 700);
  }
  void do_deallocate(dm::Block b) noexcept override { std::free(b.host); }
  Mode mode_;
};

struct BatchFixture {
  dmtest::TempDir tmp;
  dm::Config config;
  BatchFixture() {
    dm::write_synthetic_dataset(tmp / "data", 3, 32, 24);
    config.input.root = tmp / "data";
    config.input.depth = "depth/{id}.png";
    config.input.mask = "mask/{id}.png";
    config.output.dir = tmp / "out";
    config.output.preview = false;
    config.run.frames_in_flight = 1;
  }
  dm::RunSummary run(dm::MemoryBackend& b) {
    return dm::run_batch(config, b, dm::BackendChoice{dm::BackendKind::Cpu, 0, "test", false});
  }
};

TEST(FrameFailureClass, StickyDeviceErrorStopsTheBatchAsPlatformError) {
  BatchFixture f;
  FaultyBackend b(FaultyBackend::Mode::Sticky);
  try {
    (void)f.run(b);
    FAIL() << "the batch went on after a sticky device error";
  } catch (const dm::PlatformError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the test device is gone"), std::string::npos) << m;
    EXPECT_NE(m.find("at frame 000000"), std::string::npos) << m;
    EXPECT_EQ(dm::exit_code(dm::failure_of(e)), 3);
  }
}

TEST(FrameFailureClass, StickyDeviceErrorStopsTheLiveRunAsPlatformError) {
  FaultyBackend b(FaultyBackend::Mode::Sticky);
  dmtest::FakeSource src(16, 12, 5);
  dm::Config c;
  c.live.stats_interval = 0;
  try {
    (void)dm::run_live(c, b, src, {}, nullptr);
    FAIL() << "the live run went on after a sticky device error";
  } catch (const dm::PlatformError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("the test device is gone"), std::string::npos) << m;
    EXPECT_NE(m.find("at live frame f0"), std::string::npos) << m;
  }
}

TEST(FrameFailureClass, CudaErrorThatIsNotStickyFailsTheFrameAsPlatform) {
  BatchFixture f;
  FaultyBackend b(FaultyBackend::Mode::NotSticky);
  const dm::RunSummary s = f.run(b);
  EXPECT_EQ(s.failed, 3u) << "every frame fails, the batch goes on";
  for (const auto& ff : s.failures) EXPECT_EQ(ff.failure, Failure::Platform) << ff.message;
  EXPECT_EQ(dm::exit_code(s), 3);
}

TEST(FrameFailureClass, BackendBadAllocIsAResourceErrorAndFailsFramesAsResource) {
  FaultyBackend direct(FaultyBackend::Mode::BadAlloc);
  EXPECT_THROW((void)direct.allocate(100), dm::ResourceError) << "out of memory has one face";
  BatchFixture f;
  FaultyBackend b(FaultyBackend::Mode::BadAlloc);
  const dm::RunSummary s = f.run(b);
  ASSERT_EQ(s.failures.size(), 3u);
  for (const auto& ff : s.failures) {
    EXPECT_EQ(ff.failure, Failure::Resource) << ff.message;
    EXPECT_NE(ff.message.find("out of memory"), std::string::npos) << ff.message;
  }
  EXPECT_EQ(dm::exit_code(s), 4);
}

}  // namespace
