// A deterministic synthetic RGB-D dataset: objects on a table in front of a wall, rendered by ray
// casting through a pinhole camera. Used for the committed sample, demos and tests.
#pragma once

#include <opencv2/core.hpp>

#include <filesystem>
#include <string>

#include "depthmask/intrinsics.h"

namespace depthmask {

struct SyntheticFrame {
  cv::Mat depth_mm;  // CV_16UC1, millimetres, 0 where the "sensor" has no measurement
  cv::Mat color;     // CV_8UC3 BGR
  cv::Mat mask;      // CV_8UC1 labels: 0 background, 1..4 objects
};

// The camera the synthetic frames are rendered with (about a 65 degree horizontal field of view).
Intrinsics synthetic_intrinsics(int width, int height);

// Frame `index` of the synthetic sequence; the same inputs give the same bytes on every machine.
SyntheticFrame render_synthetic_frame(int index, int width, int height);

// Writes depth/{id}.png, color/{id}.png, mask/{id}.png, intrinsics.yaml and depthmask.yaml (a config
// that runs on the folder as it stands) for ids 000000 .. frames-1. Throws OutputError.
// `color` false: no color/ folder (depth and masks only).
void write_synthetic_dataset(const std::filesystem::path& dir, int frames, int width, int height, bool color = true);

// The same frames as a ROS 2 bag (synth_bag.cpp): dir/synthetic_0.mcap and its metadata.yaml, topics
// /camera/depth/image_rect_raw (16UC1 mm), /camera/color/image_raw (bgr8), /seg/mask (mono8),
// /camera/depth/camera_info; 30 fps; 4 MiB chunks compressed by `compression` ("zstd", level 1; "lz4",
// LZ4 frames; "none"). `color` false: no colour topic. Throws OutputError, ConfigError for another
// compression, or InputError when the build has no bag support.
void write_synthetic_bag(const std::filesystem::path& dir, int frames, int width, int height, bool color = true,
                         const std::string& compression = "zstd");

}  // namespace depthmask
