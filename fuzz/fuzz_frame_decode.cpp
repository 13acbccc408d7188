// Frame decoding through the loader (FrameSlot::load): the file-size and image-header checks before
// decoding, OpenCV's decoders (PNG, TIFF, EXR, JPEG ... in Debian's libraries), the palette-PNG path,
// the type and size checks after it, and the masking pass on what loaded. The first byte picks the
// role of the fuzzed file (depth, mask or color); the other two are small valid images. The loader
// reads files, so each input is written to a temporary folder first.
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "depthmask/backend.h"
#include "depthmask/config.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"

namespace fs = std::filesystem;
namespace dm = depthmask;

namespace {

struct Fixture {
  fs::path dir;
  std::unique_ptr<dm::MemoryBackend> backend;
  std::unique_ptr<dm::FrameSlot> slot;
  dm::MaskParams params;

  Fixture() {
    const fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    dir = base / ("depthmask-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    cv::imwrite((dir / "depth.png").string(), cv::Mat(6, 8, CV_16UC1, cv::Scalar(1500)));
    cv::imwrite((dir / "mask.png").string(), cv::Mat(6, 8, CV_8UC1, cv::Scalar(255)));
    cv::imwrite((dir / "color.png").string(), cv::Mat(6, 8, CV_8UC3, cv::Scalar(10, 20, 30)));
    backend = dm::make_backend(dm::BackendChoice{dm::BackendKind::Cpu, 0, "fuzz", false}, dm::PlatformInfo{});
    slot = std::make_unique<dm::FrameSlot>(*backend);
    // Bounds small enough that a header the checks let through cannot exhaust libFuzzer's memory limit.
    slot->set_limits(dm::InputLimits{uint64_t{1} << 24, uint64_t{1} << 22});
    params = dm::mask_params(dm::Config{});
  }
  ~Fixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture fx;
  if (size == 0) return 0;
  const fs::path input = fx.dir / "input.bin";
  {
    std::ofstream out(input, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  dm::FrameEntry f;
  f.id = "fuzz";
  f.depth = fx.dir / "depth.png";
  f.mask = fx.dir / "mask.png";
  f.color = fx.dir / "color.png";
  switch (data[0] % 3) {
    case 0:
      f.depth = input;
      break;
    case 1:
      f.mask = input;
      break;
    default:
      f.color = input;
      break;
  }
  try {
    fx.slot->load(f, true);
    fx.slot->run_mask(fx.params);
  } catch (const dm::Error&) {
  }
  return 0;
}
