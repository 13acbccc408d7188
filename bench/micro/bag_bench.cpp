// depthmask_bag_bench: what reading a ROS 2 bag costs per frame, without the masking (docs/ROSBAG.md,
// docs/PERFORMANCE.md). Each size's bag is `depthmask synth --format mcap`'s (zstd chunks of 4 MiB):
//   BagFrame/W/H    a frame's depth and mask messages read back (the chunk decompressed when the
//                   reader's cache of 4 chunks misses, as a run's frames in order do), CDR-decoded
//                   and turned into pixels: what the rosbag2 layout does per frame before masking;
//   CdrImage/W/H    the depth message's CDR decode and pixels alone, from memory;
//   PngDepth/W/H    the same depth as a 16-bit PNG decoded by OpenCV: what a folder frame costs.
#include <benchmark/benchmark.h>

#include <opencv2/imgcodecs.hpp>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "depthmask/bag.h"
#include "depthmask/ros_image.h"
#include "depthmask/ros_msgs.h"
#include "depthmask/synth.h"

namespace {

namespace fs = std::filesystem;
namespace dm = depthmask;
constexpr int kFrames = 24;

struct Bag {
  std::unique_ptr<dm::bag::Reader> reader;
  std::vector<dm::bag::MessageRef> depth, mask;
};

// One synthetic bag per size, made once in the temporary folder.
Bag& bag_of(int w, int h) {
  static std::map<std::pair<int, int>, Bag> bags;
  Bag& b = bags[{w, h}];
  if (b.reader) return b;
  const fs::path dir =
      fs::temp_directory_path() / ("depthmask-bag-bench-" + std::to_string(w) + "x" + std::to_string(h));
  fs::remove_all(dir);
  dm::write_synthetic_bag(dir, kFrames, w, h);
  b.reader = std::make_unique<dm::bag::Reader>(dir);
  b.reader->scan([&](const dm::bag::MessageInfo& m, const uint8_t*, size_t) {
    const std::string& t = b.reader->topics()[m.topic].name;
    if (t == "/camera/depth/image_rect_raw") b.depth.push_back(m.ref);
    if (t == "/seg/mask") b.mask.push_back(m.ref);
    return true;
  });
  return b;
}

cv::Mat to_pixels(const std::vector<uint8_t>& payload, dm::ros::PixelRole role) {
  return dm::ros::image_to_pixels(dm::ros::decode_image(payload.data(), payload.size(), "bench"), role, size_t{1} << 28,
                                  "bench")
      .pixels;
}

void BagFrame(benchmark::State& st) {
  Bag& b = bag_of(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)));
  size_t i = 0;
  for (auto _ : st) {
    const size_t f = i++ % b.depth.size();
    benchmark::DoNotOptimize(to_pixels(b.reader->read(b.depth[f]), dm::ros::PixelRole::Depth).data);
    benchmark::DoNotOptimize(to_pixels(b.reader->read(b.mask[f]), dm::ros::PixelRole::Mask).data);
  }
  st.SetItemsProcessed(st.iterations());
}

void CdrImage(benchmark::State& st) {
  Bag& b = bag_of(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)));
  const std::vector<uint8_t> payload = b.reader->read(b.depth.front());
  for (auto _ : st) benchmark::DoNotOptimize(to_pixels(payload, dm::ros::PixelRole::Depth).data);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * payload.size()));
}

void PngDepth(benchmark::State& st) {
  Bag& b = bag_of(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)));
  std::vector<uint8_t> png;
  cv::imencode(".png", to_pixels(b.reader->read(b.depth.front()), dm::ros::PixelRole::Depth), png);
  for (auto _ : st) benchmark::DoNotOptimize(cv::imdecode(png, cv::IMREAD_UNCHANGED).data);
}

#define DM_SIZES ->Args({640, 480})->Args({1920, 1080})->Unit(benchmark::kMicrosecond)
BENCHMARK(BagFrame) DM_SIZES;
BENCHMARK(CdrImage) DM_SIZES;
BENCHMARK(PngDepth) DM_SIZES;

}  // namespace
