// depthmask_codec_bench: the PNG fast path (lib/src/png_codec.cpp) against OpenCV's libpng codec, on
// one thread. Decoding: cv::imdecode into a reused Mat vs PngFastReader::inspect + decode into one.
// Encoding (16-bit greyscale): cv::imencode(".png") with OpenCV's defaults vs encode_png_grey16. The
// preview ({id}.preview.png, make_preview: colour | mask | masked depth, of synthetic frames and of the
// APC captures where present): cv::imencode vs encode_png_bgr8, each file checked to decode alike.
// Prints one markdown table per input kind: best and median of N repeats per file, averaged per frame.
//   depthmask_codec_bench [--repeats N] [PNG files or folders ...]
// Without paths: the APC captures of ../shared/data/apc-vision-toolbox (DEPTHMASK_TEST_DATA overrides
// ../shared/data) and synthetic 640x480 and 1920x1080 frames (render_synthetic_frame, OpenCV-encoded).
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "depthmask/detail/png_codec.h"
#include "depthmask/encoders.h"
#include "depthmask/synth.h"

namespace fs = std::filesystem;
using depthmask::detail::PngFastInfo;
using depthmask::detail::PngFastReader;
using Bytes = std::vector<uint8_t>;

namespace {

struct Input {
  std::string kind;
  std::string name;
  Bytes png;
};

struct Stat {
  double best = 0, median = 0;  // milliseconds
};

template <class F>
Stat time_it(int repeats, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

Bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// "APC depth 16-bit", "APC mask 8-bit", ...: the folder's dataset, what the file holds, its sample depth.
std::string kind_of(const fs::path& p, const Bytes& png) {
  const std::string s = p.string();
  const std::string set = s.find("apc-vision") != std::string::npos  ? "APC "
                          : s.find("posecnn") != std::string::npos   ? "PoseCNN "
                          : s.find("arc-robot") != std::string::npos ? "ARC "
                                                                     : "";
  const std::string name = p.filename().string();
  const std::string what = name.find("depth") != std::string::npos   ? "depth"
                           : name.find("segm") != std::string::npos  ? "mask (labels)"
                           : name.find("mask") != std::string::npos  ? "mask (probabilities)"
                           : name.find("color") != std::string::npos ? "colour"
                                                                     : "image";
  const int bits = png.size() > 25 ? png[24] : 0, color_type = png.size() > 25 ? png[25] : -1;
  return set + what + " " + std::to_string(bits) + "-bit" + (color_type == 0 ? "" : " (not greyscale)");
}

void add_path(const fs::path& p, std::vector<Input>& inputs) {
  if (fs::is_directory(p)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(p))
      if (e.is_regular_file() && e.path().extension() == ".png") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) add_path(f, inputs);
    return;
  }
  Bytes png = read_file(p);
  if (png.empty()) {
    std::fprintf(stderr, "codec_bench: cannot read %s\n", p.c_str());
    std::exit(2);
  }
  inputs.push_back({kind_of(p, png), p.filename().string(), std::move(png)});
}

void add_synthetic(std::vector<Input>& inputs) {
  for (auto [w, h] : {std::pair<int, int>{640, 480}, {1920, 1080}})
    for (int i = 0; i < 3; ++i) {
      const depthmask::SyntheticFrame f = depthmask::render_synthetic_frame(i, w, h);
      const std::string size = std::to_string(w) + "x" + std::to_string(h);
      Bytes depth, mask;
      cv::imencode(".png", f.depth_mm, depth);
      cv::imencode(".png", f.mask, mask);
      inputs.push_back({"synthetic " + size + " depth 16-bit", "synth " + std::to_string(i), std::move(depth)});
      inputs.push_back({"synthetic " + size + " mask 8-bit", "synth " + std::to_string(i), std::move(mask)});
    }
}

struct Row {
  int files = 0, fast_files = 0;
  Stat cv_dec, fast_dec, cv_enc, fast_enc;
  double cv_bytes = 0, fast_bytes = 0;
  bool encoded = false;
};

void add(Stat& a, const Stat& b) {
  a.best += b.best;
  a.median += b.median;
}

// One preview's inputs: colour, mask and masked depth in metres.
struct PreviewInput {
  std::string label;
  cv::Mat color, mask, metres;
};

// Synthetic frames at two sizes and, where the real captures are, the APC scene's first frames (a
// real camera's colour; the mask keeps every pixel with depth).
std::vector<PreviewInput> preview_inputs(const fs::path& apc) {
  std::vector<PreviewInput> in;
  for (auto [w, h] : {std::pair<int, int>{640, 480}, {1280, 720}})
    for (int i = 0; i < 3; ++i) {
      const depthmask::SyntheticFrame f = depthmask::render_synthetic_frame(i, w, h);
      PreviewInput p{"synthetic " + std::to_string(w) + "x" + std::to_string(h), f.color, f.mask, {}};
      f.depth_mm.convertTo(p.metres, CV_32FC1, 0.001);
      p.metres.setTo(0.0f, f.mask == 0);
      in.push_back(p);
    }
  for (int i = 0; i < 3; ++i) {
    const std::string stem = (apc / "scene-0000" / ("frame-00000" + std::to_string(i))).string();
    const cv::Mat color = cv::imread(stem + ".color.png", cv::IMREAD_COLOR);
    const cv::Mat depth = cv::imread(stem + ".depth.png", cv::IMREAD_UNCHANGED);
    if (color.empty() || depth.empty() || color.size() != depth.size()) break;
    PreviewInput p{"APC scene-0000 640x480", color, depth != 0, cv::Mat(depth.size(), CV_32FC1)};
    // APC's words are rotated left by 3 bits (depth.encoding apc), in units of 0.1 mm.
    for (int y = 0; y < depth.rows; ++y)
      for (int x = 0; x < depth.cols; ++x) {
        const unsigned v = depth.at<uint16_t>(y, x);
        p.metres.at<float>(y, x) = static_cast<float>(((v >> 3) | (v << 13)) & 0xffffu) * 1e-4f;
      }
    in.push_back(p);
  }
  return in;
}

// The preview as `run` and `live` write it: cv::imencode (before) against encode_png_bgr8 (now), one
// thread. Returns false when the two decode to different pixels.
bool preview_table(int repeats, const fs::path& apc) {
  std::printf(
      "\n## Encode (preview, 8-bit BGR: colour | mask | masked depth)\n\n| input | frames | cv::imencode ms | bytes "
      "| encode_png_bgr8 ms | bytes | speed-up (best) | size ratio |\n|---|---|---|---|---|---|---|---|\n");
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  for (const PreviewInput& in : preview_inputs(apc)) {
    if (rows.find(in.label) == rows.end()) order.push_back(in.label);
    Row& r = rows[in.label];
    const cv::Mat preview = depthmask::make_preview(in.color, in.mask, in.metres, 0.0f);
    Bytes cv_png, fast_png;
    add(r.cv_enc, time_it(repeats, [&] { cv::imencode(".png", preview, cv_png); }));
    add(r.fast_enc, time_it(repeats, [&] {
          fast_png = depthmask::detail::encode_png_bgr8(preview.data, preview.rows, preview.cols, preview.step);
        }));
    const cv::Mat back = cv::imdecode(fast_png, cv::IMREAD_UNCHANGED);
    if (back.size() != preview.size() || back.type() != preview.type() || cv::norm(back, preview, cv::NORM_INF) != 0) {
      std::fprintf(stderr, "codec_bench: the preview PNG of %s decodes to other pixels\n", in.label.c_str());
      return false;
    }
    r.cv_bytes += static_cast<double>(cv_png.size());
    r.fast_bytes += static_cast<double>(fast_png.size());
    ++r.files;
  }
  for (const std::string& k : order) {
    const Row& r = rows[k];
    const double n = r.files;
    std::printf("| %s | %d | %.3f / %.3f | %.0f | %.3f / %.3f | %.0f | %.2fx | %.3f |\n", k.c_str(), r.files,
                r.cv_enc.best / n, r.cv_enc.median / n, r.cv_bytes / n, r.fast_enc.best / n, r.fast_enc.median / n,
                r.fast_bytes / n, r.cv_enc.best / r.fast_enc.best, r.fast_bytes / r.cv_bytes);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int repeats = 15;
    std::vector<fs::path> paths;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--repeats" && i + 1 < argc) {
        repeats = std::max(1, std::atoi(argv[++i]));
      } else if (a == "-h" || a == "--help") {
        std::printf("usage: depthmask_codec_bench [--repeats N] [PNG files or folders ...]\n");
        return 0;
      } else {
        paths.emplace_back(a);
      }
    }
    std::vector<Input> inputs;
    const char* env = std::getenv("DEPTHMASK_TEST_DATA");
    const fs::path data = env && *env ? fs::path(env) : fs::path(DEPTHMASK_DEFAULT_SHARED_DATA);
    const fs::path apc = data / "apc-vision-toolbox";
    if (paths.empty()) {
      if (fs::is_directory(apc))
        add_path(apc, inputs);
      else
        std::fprintf(stderr, "codec_bench: no real captures at %s: synthetic frames only\n", apc.c_str());
      add_synthetic(inputs);
    } else {
      for (const fs::path& p : paths) add_path(p, inputs);
    }

    std::map<std::string, Row> rows;
    std::vector<std::string> order;
    PngFastReader reader;
    cv::Mat cv_out, fast_out;
    for (const Input& in : inputs) {
      if (rows.find(in.kind) == rows.end()) order.push_back(in.kind);
      Row& r = rows[in.kind];
      ++r.files;
      const cv::_InputArray bytes(in.png.data(), static_cast<int>(in.png.size()));
      cv_out = cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
      add(r.cv_dec, time_it(repeats, [&] { cv::imdecode(bytes, cv::IMREAD_UNCHANGED, &cv_out); }));
      const std::optional<PngFastInfo> info = reader.inspect(in.png.data(), in.png.size());
      if (info) {
        fast_out.create(static_cast<int>(info->height), static_cast<int>(info->width),
                        info->bit_depth == 16 ? CV_16UC1 : CV_8UC1);
        bool ok = true;
        add(r.fast_dec, time_it(repeats, [&] {
              ok = reader.inspect(in.png.data(), in.png.size()) &&
                   reader.decode(in.png.data(), in.png.size(), *info, fast_out.data, fast_out.step) && ok;
            }));
        if (!ok || cv::norm(cv_out, fast_out, cv::NORM_INF) != 0) {
          std::fprintf(stderr, "codec_bench: %s: the fast path disagrees with cv::imdecode\n", in.name.c_str());
          return 1;
        }
        ++r.fast_files;
      }
      if (cv_out.type() == CV_16UC1) {
        r.encoded = true;
        Bytes cv_png, fast_png;
        add(r.cv_enc, time_it(repeats, [&] { cv::imencode(".png", cv_out, cv_png); }));
        add(r.fast_enc, time_it(repeats, [&] {
              fast_png =
                  depthmask::detail::encode_png_grey16(cv_out.ptr<uint16_t>(), cv_out.rows, cv_out.cols, cv_out.step);
            }));
        r.cv_bytes += static_cast<double>(cv_png.size());
        r.fast_bytes += static_cast<double>(fast_png.size());
      }
    }

    std::printf("# depthmask_codec_bench: one thread, %d repeats, ms per frame (best / median)\n\n", repeats);
    std::printf("## Decode\n\n| input | frames | fast path | cv::imdecode ms | fast ms | speed-up (best) |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (const std::string& k : order) {
      const Row& r = rows[k];
      const double n = r.files;
      if (r.fast_files == r.files)
        std::printf("| %s | %d | all | %.3f / %.3f | %.3f / %.3f | %.2fx |\n", k.c_str(), r.files, r.cv_dec.best / n,
                    r.cv_dec.median / n, r.fast_dec.best / n, r.fast_dec.median / n, r.cv_dec.best / r.fast_dec.best);
      else
        std::printf("| %s | %d | %d of %d | %.3f / %.3f | - | - |\n", k.c_str(), r.files, r.fast_files, r.files,
                    r.cv_dec.best / n, r.cv_dec.median / n);
    }
    std::printf(
        "\n## Encode (16-bit)\n\n| input | frames | cv::imencode ms | bytes | encode_png_grey16 ms | bytes | speed-up "
        "(best) | size ratio |\n|---|---|---|---|---|---|---|---|\n");
    for (const std::string& k : order) {
      const Row& r = rows[k];
      if (!r.encoded) continue;
      const double n = r.files;
      std::printf("| %s | %d | %.3f / %.3f | %.0f | %.3f / %.3f | %.0f | %.2fx | %.3f |\n", k.c_str(), r.files,
                  r.cv_enc.best / n, r.cv_enc.median / n, r.cv_bytes / n, r.fast_enc.best / n, r.fast_enc.median / n,
                  r.fast_bytes / n, r.cv_enc.best / r.fast_enc.best, r.fast_bytes / r.cv_bytes);
    }
    return preview_table(repeats, apc) ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "codec_bench: %s\n", e.what());
    return 1;
  }
}
