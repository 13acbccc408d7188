/// \file
/// depthmask::Masker — the library's front door: masks frames a program holds in memory, on the
/// backend a configuration chooses, and runs the batch job over a folder.
///
///   depthmask::Masker masker(depthmask::load_config("depthmask.yaml", {}));
///   cv::Mat metres = masker.mask(depth, mask);          // CV_32FC1, the CLI's per-pixel rule
///   depthmask::RunSummary s = masker.run({"data/in", "data/out"});
///
/// One Masker may be used from several threads at once; each call's result equals the serial one.
#pragma once

#include <opencv2/core.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "depthmask/config.h"
#include "depthmask/run_summary.h"

struct CUstream_st;

namespace depthmask {

class FrameSlot;
struct OpenedBackend;

/// Where an image's memory lives, as seen by the masking pass.
enum class MemoryKind {
  Host,    ///< ordinary (pageable or pinned) host memory
  Device,  ///< CUDA device memory of `ImageRef::device`
  Mapped,  ///< host memory the device reads through a device pointer (mapped pinned or managed memory);
           ///< `data` is that device pointer
};

/// An image's pixel type. Bool is one byte per pixel, 0 or 1 (NumPy's bool), read as an 8-bit mask.
enum class PixelType { U8, U16, F32, Bool };

/// Bytes per pixel of a type.
size_t pixel_bytes(PixelType t) noexcept;
/// The type's name, as the C ABI's and the bindings' messages say it.
std::string_view to_string(PixelType t) noexcept;
/// The memory kind's name, as messages say it.
std::string_view to_string(MemoryKind m) noexcept;

/// A non-owning view of one image or a stack of images: the C ABI's dm_image in C++ terms.
/// Strides are in bytes; pixels of a row must be contiguous (the column stride is the pixel size),
/// rows may be padded and frames may be anywhere (frame_stride 0 repeats one image for every frame:
/// one mask for a whole depth stack).
struct ImageRef {
  void* data = nullptr;                  ///< the first pixel of the first frame
  MemoryKind memory = MemoryKind::Host;  ///< where `data` lies
  int device = -1;                       ///< the CUDA device of Device/Mapped memory (-1: Host)
  PixelType type = PixelType::U8;        ///< the pixels' type
  int64_t frames = 1;                    ///< 1 for a single image
  int64_t rows = 0;                      ///< rows of each image
  int64_t cols = 0;                      ///< columns of each image
  int64_t frame_stride = 0;              ///< bytes between frames (ignored when frames == 1)
  int64_t row_stride = 0;                ///< bytes between rows
  int64_t col_stride = 0;                ///< bytes between pixels of a row: must equal channels x pixel_bytes(type)
  int channels = 1;                      ///< 3 for a BGR colour image (channel stride pixel_bytes(type)), else 1
  bool read_only =
      false;  ///< set by bindings that know it (NumPy's writeable flag): an out that is read-only is refused

  /// A header over a cv::Mat's host memory (CV_8UC1, CV_16UC1, CV_32FC1 or CV_8UC3).
  static ImageRef of(const cv::Mat& m);
};

/// What Masker::run does: the CLI's `depthmask run` over a folder, in process.
struct RunRequest {
  std::filesystem::path input;         ///< input.root (empty: the configuration's)
  std::filesystem::path output;        ///< output.dir (empty: the configuration's)
  std::vector<std::string> overrides;  ///< `key=value`, as the CLI's --set, applied last
  /// Called after each frame is committed, in listing order, from one of the run's threads (one call
  /// at a time). An exception it throws cancels the run (frames in flight finish) and is rethrown by
  /// run() once the run has wound down.
  std::function<void(size_t done, size_t total)> progress;
};

/// Masks frames in memory and runs the batch job, with one configuration and one backend (the
/// header's comment has an example; docs/CPP.md the calls). Move-only; one Masker may be used from
/// several threads at once.
class Masker {
 public:
  /// Opens the backend `config` asks for (open_backend: `auto` chooses by the platform) and
  /// prepares the per-pixel rule. Values a caller set with Config::set() are the caller's: a
  /// detected layout's defaults never replace them in run().
  /// @throws ConfigError for a configuration the mask rule cannot use (an erode radius beyond
  ///         kMaxErode ...), PlatformError when the backend cannot be started.
  explicit Masker(Config config);
  /// From a YAML file, then `overrides` (`key=value`, the CLI's --set).
  static Masker from_file(const std::filesystem::path& yaml_file, const std::vector<std::string>& overrides = {});
  /// From YAML text (relative paths in it resolve against the working directory), then `overrides`.
  static Masker from_yaml(const std::string& yaml, const std::vector<std::string>& overrides = {});

  /// Takes over `other`'s backend and state; `other` may only be destroyed or assigned to.
  Masker(Masker&&) noexcept;
  /// The same by assignment; this Masker's own backend is closed.
  Masker& operator=(Masker&&) noexcept;
  /// Closes the backend; no call may be in progress.
  ~Masker();

  /// The configuration in effect.
  const Config& config() const;
  /// The backend that runs the masking pass, and why (`auto`'s reason). With backend.kind auto on a
  /// discrete GPU (copy), host-resident frames without registration or colour key are masked by the
  /// CPU loop in place (faster than a round trip to the GPU; the reason says so), device arrays on the GPU.
  BackendKind backend() const;
  /// Why that backend (auto's reason, or that the configuration named it).
  const std::string& reason() const;
  /// The CUDA device of a GPU backend, -1 for cpu.
  int device() const;

  /// Masks one frame held in host memory: depth CV_16UC1 (raw units, depth.scale) or CV_32FC1
  /// (metres), mask CV_8UC1 or CV_16UC1 of the same size, color (CV_8UC3 BGR, optional) for a
  /// colour key. Registration, colour key and erode as configured. Returns CV_32FC1 metres.
  /// @throws InputError naming what is wrong with an image (type, size).
  cv::Mat mask(const cv::Mat& depth, const cv::Mat& mask, const cv::Mat& color = cv::Mat());
  /// The same into the caller's buffer: `out` is (re)allocated by OpenCV's rules (create()) unless it
  /// already is CV_32FC1 of the output's size, in which case its memory is written in place.
  void mask_into(const cv::Mat& depth, const cv::Mat& mask, cv::Mat& out, const cv::Mat& color = cv::Mat());

  /// The general form, over views of any memory the backend can reach: one frame or a stack (depth
  /// `frames` x rows x cols, mask the same or one image for all, out float32 of depth's shape).
  /// Host memory is masked on the backend as mask() does. Device and mapped memory need a GPU
  /// backend on the same device: the pass is enqueued on `stream` (null: the CUDA default stream)
  /// and the call returns without waiting, as CUDA libraries do; a stack is one launch.
  /// @throws InputError for a bad view (type, shape, strides, alignment, read-only out, another
  ///         device), ConfigError for device memory on the cpu backend or with registration or a
  ///         colour key (which need host frames).
  void mask(const ImageRef& depth, const ImageRef& mask, const ImageRef& out, const ImageRef* color = nullptr,
            CUstream_st* stream = nullptr);

  /// The batch job over a folder, with the CLI's layouts, outputs, resume manifest and summary.
  /// @throws InputError when no frame can be listed, OutputError when the output folder cannot be
  ///         written, what the progress callback threw; a frame's failure is in the summary.
  RunSummary run(const RunRequest& request);
  /// Stops the run in progress (frames in flight finish, the summary says interrupted), or the next
  /// run when none is in progress. Thread-safe; may be called from a signal handler's thread.
  void cancel() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace depthmask
