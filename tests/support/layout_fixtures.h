// Small dataset folders in the public layouts, written from the published format descriptions (BOP
// toolkit "datasets format", TUM RGB-D "file formats", tsdf-fusion's 7-Scenes frames, YCBInEOAT /
// FoundationPose) into a temporary folder. Used by the layout unit tests and the CLI tests.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "test_support.h"

namespace dmfix {

namespace fs = std::filesystem;

constexpr int kW = 8, kH = 6;  // every fixture image

inline void write_png(const fs::path& p, const cv::Mat& m) {
  fs::create_directories(p.parent_path());
  ASSERT_TRUE(cv::imwrite(p.string(), m)) << p;
}

// 16-bit depth: a different ramp per seed, with a few zeros (no measurement).
inline cv::Mat depth16(int seed) {
  cv::Mat d(kH, kW, CV_16UC1);
  for (int y = 0; y < kH; ++y)
    for (int x = 0; x < kW; ++x) d.at<uint16_t>(y, x) = static_cast<uint16_t>(500 + 97 * seed + 31 * (y * kW + x));
  d.at<uint16_t>(0, 0) = 0;
  d.at<uint16_t>(kH - 1, kW - 1) = 0;
  return d;
}

// 8-bit binary mask (0/255): a rectangle that moves with the seed.
inline cv::Mat mask8(int seed) {
  cv::Mat m(kH, kW, CV_8UC1, cv::Scalar(0));
  const int x0 = seed % 3;
  m(cv::Rect(x0, 1, 4, 4)).setTo(255);
  return m;
}

inline cv::Mat color8(int seed) { return cv::Mat(kH, kW, CV_8UC3, cv::Scalar(10 * seed, 100, 200)); }

inline std::string six(int v) {
  char b[16];
  std::snprintf(b, sizeof b, "%06d", v);
  return b;
}

// A BOP scene: images 0, 1, 2 with their own cam_K and depth_scale (1.0, 0.1, 1.0 mm per unit),
// rgb/ (.png, image 1 as .jpg), one visible-mask instance per image in mask_visib/ and mask/; with
// `extra_instance`, image 0 also has instance 000001. Plus scene_gt.json (not read).
inline const double kBopScale[3] = {1.0, 0.1, 1.0};
inline void write_bop(const fs::path& root, bool extra_instance = false) {
  dmtest::write_text(
      root / "scene_camera.json",
      "{\n"
      "  \"0\": {\"cam_K\": [572.4114, 0.0, 325.2611, 0.0, 573.57043, 242.04899, 0.0, 0.0, 1.0], \"depth_scale\": "
      "1.0},\n"
      "  \"1\": {\"cam_K\": [572.4114, 0.0, 325.2611, 0.0, 573.57043, 242.04899, 0.0, 0.0, 1.0], \"depth_scale\": "
      "0.1,\n"
      "        \"cam_R_w2c\": [1, 0, 0, 0, 1, 0, 0, 0, 1], \"cam_t_w2c\": [0, 0, 0]},\n"
      "  \"2\": {\"cam_K\": [600.0, 0.0, 300.5, 0.0, 601.0, 250.5, 0.0, 0.0, 1.0], \"depth_scale\": 1.0}\n"
      "}\n");
  dmtest::write_text(root / "scene_gt.json",
                     "{\"0\": [{\"obj_id\": 1}], \"1\": [{\"obj_id\": 1}], \"2\": [{\"obj_id\": 1}]}\n");
  for (int i = 0; i < 3; ++i) {
    write_png(root / "depth" / (six(i) + ".png"), depth16(i));
    write_png(root / "rgb" / (six(i) + (i == 1 ? ".jpg" : ".png")), color8(i));
    write_png(root / "mask_visib" / (six(i) + "_000000.png"), mask8(i));
    write_png(root / "mask" / (six(i) + "_000000.png"), mask8(i + 1));
  }
  if (extra_instance) write_png(root / "mask_visib" / "000000_000001.png", mask8(2));
}

// A TUM RGB-D sequence: depth at t, rgb at t + 5 ms, 33 ms apart (4 frames), plus a depth image and
// an rgb image with no partner within 20 ms. Masks in mask/ named like the rgb files.
struct TumFrame {
  std::string depth_ts, rgb_ts;
};
inline const std::vector<TumFrame> kTumFrames = {{"1305031102.100000", "1305031102.105000"},
                                                 {"1305031102.133000", "1305031102.138000"},
                                                 {"1305031102.166000", "1305031102.171000"},
                                                 {"1305031102.199000", "1305031102.204000"}};
inline void write_tum(const fs::path& root, bool masks = true) {
  std::string rgb = "# color images\n# file: 'rgbd_dataset_freiburg1_xyz.bag'\n# timestamp filename\n";
  std::string depth = "# depth maps\n# file: 'rgbd_dataset_freiburg1_xyz.bag'\n# timestamp filename\n";
  for (size_t i = 0; i < kTumFrames.size(); ++i) {
    const auto& f = kTumFrames[i];
    depth += f.depth_ts + " depth/" + f.depth_ts + ".png\n";
    rgb += f.rgb_ts + " rgb/" + f.rgb_ts + ".png\n";
    write_png(root / "depth" / (f.depth_ts + ".png"), depth16(static_cast<int>(i)));
    write_png(root / "rgb" / (f.rgb_ts + ".png"), color8(static_cast<int>(i)));
    if (masks) write_png(root / "mask" / (f.rgb_ts + ".png"), mask8(static_cast<int>(i)));
  }
  rgb += "1305031102.500000 rgb/1305031102.500000.png\n";
  depth += "1305031102.900000 depth/1305031102.900000.png\n";
  write_png(root / "rgb" / "1305031102.500000.png", color8(9));
  write_png(root / "depth" / "1305031102.900000.png", depth16(9));
  dmtest::write_text(root / "rgb.txt", rgb);
  dmtest::write_text(root / "depth.txt", depth);
}

// 7-Scenes as tsdf-fusion ships it: camera-intrinsics.txt and frame-XXXXXX.{color,depth}.png and
// .pose.txt in `frames` (the root or rgbd-frames/), depth in mm with 65535 = invalid; masks
// frame-XXXXXX.mask.png beside them (7-Scenes has none: a segmentation the user made).
inline void write_seven_scenes(const fs::path& root, const std::string& frames = "") {
  dmtest::write_text(root / "camera-intrinsics.txt", "585 0 320\n0 585 240\n0 0 1\n");
  for (int i = 0; i < 3; ++i) {
    const fs::path dir = root / frames;
    cv::Mat d = depth16(i);
    d.at<uint16_t>(2, 2) = 65535;  // inside every mask
    write_png(dir / ("frame-" + six(i) + ".depth.png"), d);
    write_png(dir / ("frame-" + six(i) + ".color.png"), color8(i));
    write_png(dir / ("frame-" + six(i) + ".mask.png"), mask8(i));
    dmtest::write_text(dir / ("frame-" + six(i) + ".pose.txt"), "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 1\n");
  }
}

// YCBInEOAT / FoundationPose: rgb/, depth/ (mm), masks/ named by capture time, cam_K.txt.
inline const std::vector<std::string> kYcbIds = {"1581120424100262102", "1581120424148532296", "1581120424213125141"};
inline void write_ycbineoat(const fs::path& root) {
  dmtest::write_text(root / "cam_K.txt",
                     "3.195820007324218750e+02 0.000000000000000000e+00 3.202149847676955687e+02\n"
                     "0.000000000000000000e+00 4.171186828613281250e+02 2.443486680871046701e+02\n"
                     "0.000000000000000000e+00 0.000000000000000000e+00 1.000000000000000000e+00\n");
  for (size_t i = 0; i < kYcbIds.size(); ++i) {
    const int s = static_cast<int>(i);
    write_png(root / "rgb" / (kYcbIds[i] + ".png"), color8(s));
    write_png(root / "depth" / (kYcbIds[i] + ".png"), depth16(s));
    write_png(root / "masks" / (kYcbIds[i] + ".png"), mask8(s));
  }
}

// An APC-like scene (the real one is in ../shared/data): cam.info.txt, 2 frames, segm/ labels,
// masks/ probability maps of object "duck" with duck.thresh.txt, raw/ depth.
inline void write_apc(const fs::path& root) {
  dmtest::write_text(root / "cam.info.txt",
                     "# Environment: shelf\n\n"
                     "# Color camera intrinsic matrix\n 6.15e+02 0 2.98e+02\n 0 6.16e+02 2.47e+02\n 0 0 1\n\n"
                     "# Depth camera intrinsic matrix\n 4.77e+02 0 3.14e+02\n 0 4.78e+02 2.45e+02\n 0 0 1\n\n"
                     "# Depth-to-color camera extrinsic matrix\n 1 0 0 0.0257\n 0 1 0 0\n 0 0 1 0\n 0 0 0 1\n");
  for (int i = 0; i < 2; ++i) {
    write_png(root / ("frame-" + six(i) + ".depth.png"), depth16(i));
    write_png(root / ("frame-" + six(i) + ".color.png"), color8(i));
    write_png(root / "raw" / ("frame-" + six(i) + ".depth.png"), depth16(i + 5));
    cv::Mat segm = mask8(i) / 255 * 48;
    write_png(root / "segm" / ("frame-" + six(i) + ".segm.png"), segm);
    cv::Mat prob;
    mask8(i).convertTo(prob, CV_16UC1, 257.0);
    write_png(root / "masks" / ("frame-" + six(i) + ".duck.mask.png"), prob);
    write_png(root / "masks" / ("frame-" + six(i) + ".book.mask.png"), prob);
  }
  dmtest::write_text(root / "masks" / "duck.thresh.txt", "0.30941\n");
  dmtest::write_text(root / "masks" / "book.thresh.txt", "0.5\n");
}

// The configuration the CLI builds for `--input root --set ...` (so explicit keys are tracked).
inline depthmask::Config config_for(const fs::path& root, const std::vector<std::string>& sets = {}) {
  std::vector<depthmask::Override> ov{{"input.root", root.string(), "--input", true}};
  for (const auto& s : sets) ov.push_back(depthmask::parse_override(s));
  return depthmask::load_config(std::nullopt, ov, root);
}

// The pattern layout (depth/{id}.png, mask/{id}.png) with n frames; `depth` and `mask` make frame
// i's images (the ramps and rectangles above by default).
inline void write_pattern(const fs::path& root, int n, const std::function<cv::Mat(int)>& depth = depth16,
                          const std::function<cv::Mat(int)>& mask = mask8) {
  for (int i = 0; i < n; ++i) {
    write_png(root / "depth" / (six(i) + ".png"), depth(i));
    write_png(root / "mask" / (six(i) + ".png"), mask(i));
  }
}

// 16-bit depth ten times too large for millimetres (0.1 mm units): 20 m and more at depth.scale mm.
inline cv::Mat depth16_tenth_mm(int seed) { return depth16(seed) * 40; }

}  // namespace dmfix
