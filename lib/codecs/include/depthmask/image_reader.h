// The one way depthmask turns an image file into pixels: `run`'s frame slots, `live` (replay:// and
// live.mask.static) and the bench's own runs all read through an ImageReader. It reads the file within
// the input limits, checks the size its header claims before any decoder runs, decodes into the
// caller's memory (a backend buffer, so pixels land in pinned or mapped memory, or a cv::Mat), keeps
// indexed-colour PNG masks as palette indices, unions per-instance masks by the mask test, and checks
// the pixel type for the image's role. Errors are InputError naming the role, the file and what was
// expected.
//
// Depth stored as three identical channels (a depth EXR or a 16-bit PNG written as RGB, as some capture
// tools and datasets do) is read as its one channel; three channels that differ anywhere are an
// InputError naming the file and the first pixel that differs. last_stored_channels() tells the caller
// (the run's once-per-run log line, the doctor).
//
// Decoders: 8- and 16-bit greyscale PNGs (every depth and mask PNG seen so far) take a reader of our
// own on libdeflate (detail/png_codec.h) when it accepts the file; everything it does not fully accept
// goes to OpenCV (libpng for PNG), so the pixels are libpng's by construction. Indexed-colour masks go
// to libpng directly; other formats (TIFF, EXR, JPEG ...) to OpenCV.
#pragma once

#include <opencv2/core.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "depthmask/backend.h"

namespace depthmask {

struct MaskParams;
namespace detail {
class PngFastReader;  // detail/png_codec.h
}

// Bounds on an input file, checked before it is read and before it is decoded (the size its image
// header claims): input.max_file_bytes and input.max_image_pixels.
struct InputLimits {
  uint64_t max_file_bytes = uint64_t{1} << 30;
  uint64_t max_image_pixels = uint64_t{1} << 28;
};

// What an image is read for; decides the decoding flags, the accepted pixel types and the messages.
enum class ImageRole {
  Depth,  // CV_16UC1 raw units or CV_32FC1 metres, decoded unchanged
  Mask,   // CV_8UC1 or CV_16UC1, decoded unchanged; an indexed-colour PNG gives its palette indices
  Color,  // CV_8UC3 BGR (any colour image, converted as cv::IMREAD_COLOR does)
};
const char* to_string(ImageRole role);  // "depth", "mask", "color"

// Which decoder produced an image (ImageReader::last_decoder): for tests and the bench.
enum class Decoder { None, FastPng, PalettePng, OpenCV };
const char* to_string(Decoder d);  // "none", "fast-png", "palette-png", "opencv"

// One frame slot's or decoding thread's reader: it owns the reused file buffer and the fast PNG
// reader's scratch, so a run of same-sized frames allocates nothing after the first. Not thread-safe:
// one per thread.
class ImageReader {
 public:
  explicit ImageReader(const InputLimits& limits = InputLimits{});
  ~ImageReader();
  ImageReader(const ImageReader&) = delete;
  ImageReader& operator=(const ImageReader&) = delete;

  void set_limits(const InputLimits& limits) { limits_ = limits; }
  const InputLimits& limits() const { return limits_; }

  // Decodes `file` into `buf` (grown through `backend` when it is smaller than the image; it only
  // grows) and returns a continuous header on buf.host(), marked host-written. Throws InputError.
  cv::Mat read(const std::filesystem::path& file, ImageRole role, MemoryBackend& backend, Buffer& buf);
  // The same into `dst`: its memory is reused when dst is the only owner and the size and type match
  // (cv::Mat::create), replaced otherwise. Returns dst.
  cv::Mat read(const std::filesystem::path& file, ImageRole role, cv::Mat& dst);

  // Per-instance masks (FrameEntry::instances) as one 8-bit mask of mask-test results: 255 where any
  // instance mask passes `params`' mask test, 0 elsewhere (mask it with union_mask_params(params)).
  // Every instance mask must have the first one's size (InputError naming both files otherwise).
  using Instances = std::vector<std::pair<std::string, std::filesystem::path>>;
  cv::Mat read_instance_union(const Instances& instances, const MaskParams& params, MemoryBackend& backend,
                              Buffer& buf);
  cv::Mat read_instance_union(const Instances& instances, const MaskParams& params, cv::Mat& dst);

  // The decoder of the last successful read (Decoder::None before the first).
  Decoder last_decoder() const { return last_decoder_; }
  // The channels of the last successfully read file as stored: 1 for single-channel depth and masks,
  // 3 for a depth file read as its one channel out of three equal ones (and for colour images); 0
  // before the first read and after a failed one.
  int last_stored_channels() const { return last_stored_channels_; }

  // Where a decoded image goes: memory of the given shape and type, continuous (defined in the .cpp).
  class Target;

 private:
  cv::Mat decode(const std::filesystem::path& file, ImageRole role, Target& target);
  cv::Mat unite(const Instances& instances, const MaskParams& params, Target& target);

  InputLimits limits_;
  std::vector<uint8_t> bytes_;  // the file being decoded; only grows
  cv::Mat instance_;            // read_instance_union: one instance mask, reused
  cv::Mat channels_;            // 3-channel depth as decoded, before it becomes one channel; reused
  Decoder last_decoder_ = Decoder::None;
  int last_stored_channels_ = 0;
  std::unique_ptr<detail::PngFastReader> png_;  // the fast PNG reader and its scratch
};

// Reads an image file's bytes within `limits`: its size before reading (input.max_file_bytes), the
// pixel count its header claims before any decoder runs (input.max_image_pixels). Throws InputError
// "<what> file '<file>' ..." naming what is wrong.
void read_image_file(const std::filesystem::path& file, const std::string& what, std::vector<uint8_t>& bytes,
                     const InputLimits& limits);

// The once-per-run log line (run, live's replay://) for the first depth file that was read as its one
// channel out of three equal ones (ImageReader::last_stored_channels() == 3).
std::string three_channel_depth_note(const std::filesystem::path& file);

// Checks an image's pixel type for its role; throws InputError naming the file and the expected types.
void check_depth_type(const cv::Mat& m, const std::string& file);
void check_mask_type(const cv::Mat& m, const std::string& file);
// ORs one instance mask's per-pixel mask test into `acc` (CV_8UC1 of acc's size: 255 where `mask`
// (CV_8UC1 or CV_16UC1) passes `params`' test): read_instance_union's step, for masks already in
// memory (a bag's mask topics).
void or_mask_tests(const cv::Mat& mask, const MaskParams& params, cv::Mat& acc);

}  // namespace depthmask
