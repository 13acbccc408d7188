// replay://DIR?fps=30&loop=0: any folder `run` reads (resolve_input: pattern, apc, 7scenes, bop, tum,
// ycbineoat, a rosbag2 bag: its messages decoded by detail::decode_bag_image), decoded as the files are: depth and mask
// with IMREAD_UNCHANGED (raw units; APC's rotated depth stays rotated, the mask step decodes it per depth.encoding),
// color as 8-bit BGR like `run`, through the batch loader's ImageReader (its limits, decoders, palette masks). BOP
// frames with per-instance masks get one CV_8UC1 mask of mask-test results, 255 where any instance mask passes the
// configured mask test, 0 elsewhere, as `run` unites them (CapturedFrame::mask_tests; mask.per_instance
// is not applied live). Paced at the recorded timestamps when every frame
// has one (TUM, a bag's header stamps) and the URI names no fps, at fps otherwise.
//
// TUM: depth.txt, rgb.txt and (when present) mask.txt are separate streams with their own
// timestamps, replayed as a camera would deliver them: merged in time order and paired by a
// StreamPairer within live.sync.tolerance_ms (not `run`'s offline association): a depth frame takes
// the closest rgb (and mask) frame within the tolerance; one without is dropped, as is an rgb or mask
// frame no depth frame takes, and counted (unpaired()) when playback passes its place. Masks without
// mask.txt follow `run`: named like the paired rgb file in mask/, or input.mask with the depth's id.
//
// Decode ahead: PNG decoding is single-threaded and took ~14 ms per 640x480 frame (depth, mask,
// color) on the H200 host, capping replay at ~72 fps. Frames are decoded by a few threads of the
// source's own into a ring of decoded slots ahead of the pacing; read() takes them in order, sleeps until the frame is
// due and stamps `captured` as it returns, so pacing and latency are what they were. Decoding starts at the first
// read() (not at open()), a few frames ahead of it. The slots' images and file buffers are reused frame after frame: a
// run of same-sized frames allocates no image memory after the first pass through the ring (the codec's own small
// allocations aside). A slot whose images are still held by a caller (a CapturedFrame kept past the next read()) gets
// new ones instead of being overwritten.
#include <tbb/info.h>

#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "depthmask/bag.h"
#include "depthmask/detail/bag_frame.h"
#include "depthmask/detail/bag_masks.h"
#include "depthmask/detail/layout_readers.h"
#include "depthmask/detail/log.h"
#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/layouts.h"
#include "depthmask/stream_pairer.h"
#include "pacing.h"
#include "uri.h"

namespace depthmask::detail {
namespace {

namespace fs = std::filesystem;

// Decoding threads: the machine's, up to 8 (PNG decode of a 640x480 frame takes ~14 ms on one core,
// so 90 fps needs 2 and 8 leave room); at least 2 so decoding overlaps the pipeline on small machines.
// Threads of the source's own, not oneTBB tasks: a thread waiting in a parallel_for of the same arena
// (the cpu backend's mask loop) would pick up a 14 ms decode and stall the mask stage; a separate arena
// blocks the caller of execute() while its slots are busy and gets no worker at all where oneTBB has
// none (one core).
int decode_concurrency() { return std::clamp(tbb::info::default_concurrency(), 2, 8); }
// Frames decoded ahead of read(): one per decoding thread and two to spare.
int ahead_slots() { return decode_concurrency() + 2; }

// One frame's decoded images and the reused memory they are decoded from.
struct Decoded {
  cv::Mat depth, mask, color;
  bool mask_tests = false;           // mask holds the union of instance mask tests (CapturedFrame::mask_tests)
  bool three_channel_depth = false;  // the depth file stored three equal channels (read as the one)
  // The batch loader's reader (image_reader.h): its bounds, decoders, palettes and instance unions.
  std::unique_ptr<ImageReader> reader = std::make_unique<ImageReader>();
  std::exception_ptr error;  // what decoding threw; read() rethrows it in its turn
  bool ready = false;
};

// A rosbag2 frame's messages decoded as `run` decodes them (detail::decode_bag_image; several mask
// topics unite into mask tests, as instance masks do).
void decode_bag_frame(const BagFrame& b, const InputLimits& limits, const MaskParams& params, Decoded& d) {
  d.depth = decode_bag_image(b, b.depth, ros::PixelRole::Depth, limits.max_image_pixels).pixels;
  d.three_channel_depth = false;
  d.mask_tests = b.masks.size() > 1;
  if (!d.mask_tests) {
    d.mask = decode_bag_image(b, b.masks.front(), ros::PixelRole::Mask, limits.max_image_pixels).pixels;
  } else {
    d.mask = unite_bag_masks(b, params, limits.max_image_pixels);
  }
  if (b.color)
    d.color = decode_bag_image(b, *b.color, ros::PixelRole::Color, limits.max_image_pixels).pixels;
  else
    d.color.release();
}

// Decodes one frame as `run` reads it (ImageReader: the same limits, decoders and checks); errors
// name the source. A slot's images are reused unless a caller still holds them.
void decode_frame(const FrameEntry& f, const std::string& uri, const InputLimits& limits, const MaskParams& params,
                  Decoded& d) {
  ImageReader& r = *d.reader;
  r.set_limits(limits);
  try {
    if (f.bag) return decode_bag_frame(*f.bag, limits, params, d);
    r.read(f.depth, ImageRole::Depth, d.depth);
    d.three_channel_depth = r.last_stored_channels() == 3;
    d.mask_tests = !f.instances.empty();
    if (d.mask_tests) {
      r.read_instance_union(f.instances, params, d.mask);
      DM_EXPECT(d.mask.size() == d.depth.size(), InputError,
                "mask file '" << f.instances.front().second.string() << "' is " << d.mask.cols << "x" << d.mask.rows
                              << " but depth file '" << f.depth.string() << "' is " << d.depth.cols << "x"
                              << d.depth.rows << "; expected the same size");
    } else {
      r.read(f.mask, ImageRole::Mask, d.mask);
    }
    if (f.color.empty())
      d.color.release();
    else
      r.read(f.color, ImageRole::Color, d.color);
  } catch (const InputError& e) {
    throw InputError("replay source '" + uri + "': " + e.what());
  }
}

// A TUM sequence's frames as its streams pair live. unpaired_before[i]: frames dropped since the
// previous frame (counted when frame i is played); unpaired_after: those after the last frame.
struct PairedTum {
  std::vector<FrameEntry> frames;
  std::vector<uint64_t> unpaired_before;
  uint64_t unpaired_after = 0;
  std::string summary;  // for the log
};

PairedTum pair_tum(const Config& c, double tolerance_s) {
  using detail::TumEntry;
  const fs::path root = c.input.root.lexically_normal();
  std::error_code ec;
  const bool mask_pattern = c.is_set_by_user("input.mask");
  const bool mask_list = !mask_pattern && fs::is_regular_file(root / "mask.txt", ec);
  std::vector<std::vector<TumEntry>> streams{
      detail::read_tum_list(root / "depth.txt", c.input.allow_paths_outside_root),
      detail::read_tum_list(root / "rgb.txt", c.input.allow_paths_outside_root)};
  if (mask_list) streams.push_back(detail::read_tum_list(root / "mask.txt", c.input.allow_paths_outside_root));
  // Every stream's frames in one time order (a tie: depth first), as they would arrive.
  struct Event {
    double t;
    int stream;
    size_t index;
  };
  std::vector<Event> events;
  for (size_t k = 0; k < streams.size(); ++k)
    for (size_t i = 0; i < streams[k].size(); ++i) events.push_back({streams[k][i].t, static_cast<int>(k), i});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });

  StreamPairer pairer(static_cast<int>(streams.size()), tolerance_s, 1024);
  PairedTum out;
  uint64_t counted = 0;
  StreamPairer::Set set;
  auto take = [&] {
    while (pairer.pop(set)) {
      const TumEntry& d = streams[0][set.item[0]];
      const TumEntry& rgb = streams[1][set.item[1]];
      FrameEntry f;
      f.index = out.frames.size();
      f.id = fs::path(d.file).stem().string();
      f.depth = (root / d.file).lexically_normal();
      detail::set_tum_color_and_mask(f, c, root, rgb, mask_list ? &streams[2][set.item[2]] : nullptr);
      f.timestamp = d.t;
      out.unpaired_before.push_back(pairer.unpaired() - counted);
      counted = pairer.unpaired();
      out.frames.push_back(std::move(f));
    }
  };
  for (const Event& e : events) {
    pairer.push(e.stream, e.t, e.index);
    take();
  }
  pairer.finish();
  take();
  out.unpaired_after = pairer.unpaired() - counted;
  std::ostringstream os;
  os << "depth.txt, rgb.txt" << (mask_list ? ", mask.txt" : "") << " paired within " << tolerance_s * 1000
     << " ms: " << out.frames.size() << " frames, unpaired: " << pairer.unpaired(0) << " depth, " << pairer.unpaired(1)
     << " rgb";
  if (mask_list) os << ", " << pairer.unpaired(2) << " mask";
  out.summary = os.str();
  DM_EXPECT(!out.frames.empty(), InputError,
            "replay of TUM sequence '" << root.string() << "': no depth frame has an rgb"
                                       << (mask_list ? " and a mask" : "") << " frame within live.sync.tolerance_ms ("
                                       << tolerance_s * 1000 << " ms)");
  return out;
}

class ReplaySource final : public LiveSource {
 public:
  ReplaySource(const SourceUri& uri, const Config& config)
      : uri_(uri),
        config_(config),
        fps_(query_fps(uri, 30.0)),
        loop_(query_flag(uri, "loop", false)),
        pacer_(fps_),
        ring_(static_cast<size_t>(ahead_slots())) {
    config_.input.root = fs::path(uri.path);
    // The folder decides its layout unless the configuration names one.
    if (!config_.is_set_by_user("input.layout")) config_.input.layout = InputLayout::Auto;
  }

  ~ReplaySource() override {
    wait_decodes();
    {
      std::lock_guard<std::mutex> lock(m_);
      quit_ = true;
      cv_.notify_all();
    }
    for (auto& t : workers_) t.join();
  }

  void open() override {
    // Decodes in flight use frames_ and the ring: let them finish before either changes.
    wait_decodes();
    std::error_code ec;
    if (!fs::is_directory(config_.input.root, ec) && !bag::Reader::is_bag(config_.input.root))
      throw InputError("replay source '" + uri_.text + "': folder '" + config_.input.root.string() +
                       "' does not exist or is not a folder (nor an .mcap bag file)");
    ResolvedInput r = resolve_input(config_);
    layout_reason_ = r.reason;
    unpaired_before_.clear();
    unpaired_after_ = 0;
    if (r.layout == InputLayout::Tum) {
      PairedTum p = pair_tum(r.config, config_.live.sync.tolerance_ms / 1000.0);
      frames_ = std::move(p.frames);
      unpaired_before_ = std::move(p.unpaired_before);
      unpaired_after_ = p.unpaired_after;
      layout_reason_ += "; " + p.summary;
    } else {
      frames_ = std::move(r.listing.frames);
    }
    // Recorded timestamps pace the frames unless the URI names a rate (fps=N; fps=0: as fast as possible).
    timed_ = !frames_.empty() && query_fps(uri_, -1.0) < 0;
    for (const auto& f : frames_) timed_ = timed_ && f.timestamp >= 0;
    detail::log().info("replay source '{}': {} frames; {}; paced {}; decoding up to {} frames ahead", uri_.text,
                       frames_.size(), layout_reason_, pacing(), ring_.size());
    {
      std::lock_guard<std::mutex> lock(m_);
      for (Decoded& d : ring_) {
        d.ready = false;
        d.error = nullptr;
      }
      scheduled_ = started_decodes_ = taken_ = 0;
    }
    pass_end_counted_ = false;
    sequence_ = 0;
    pacer_.restart();
    started_ = false;
  }

  bool read(CapturedFrame& frame) override {
    // Play order n is frames_[n % size]; without loop the stream ends after one pass.
    if (frames_.empty()) return false;
    if (!loop_ && taken_ >= frames_.size()) {
      if (!pass_end_counted_) unpaired_ += unpaired_after_;
      pass_end_counted_ = true;
      return false;
    }
    const size_t pos = static_cast<size_t>(taken_ % frames_.size());
    if (pos == 0 && taken_ > 0) {
      unpaired_ += unpaired_after_;
      // At a fixed rate the schedule runs on across the wrap (restarting it would make the first
      // frame of every pass due at once); recorded timestamps start a new pass from now.
      started_ = false;
    }
    schedule();
    Decoded& d = ring_[static_cast<size_t>(taken_ % ring_.size())];
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return d.ready; });
    }
    if (d.error) {
      // Again at every read() until open(): the runner reopens, which restarts the pass.
      std::rethrow_exception(d.error);
    }
    const FrameEntry& f = frames_[pos];
    wait_for(f);
    // The previous frame's slot is reused only once `frame` no longer holds its images.
    frame.depth = d.depth;
    frame.mask = d.mask;
    frame.color = d.color;
    frame.mask_tests = d.mask_tests;
    frame.three_channel_depth = d.three_channel_depth ? f.depth : fs::path();
    frame.sequence = sequence_++;
    frame.id = f.id;
    if (!unpaired_before_.empty()) unpaired_ += unpaired_before_[pos];
    {
      std::lock_guard<std::mutex> lock(m_);
      d.ready = false;
    }
    ++taken_;
    schedule();
    frame.captured = Clock::now();
    return true;
  }

  uint64_t unpaired() const override { return unpaired_; }

  // Unpaced (fps=0, no recorded timestamps followed): the frames are files, nothing is lost by waiting.
  bool can_wait() const override { return !timed_ && fps_ <= 0; }

  std::string describe() const override {
    std::ostringstream os;
    os << "replay of '" << config_.input.root.string() << "'" << (loop_ ? " looped" : "") << ", " << pacing();
    if (!layout_reason_.empty()) os << " (" << layout_reason_ << ")";
    return os.str();
  }

 private:
  std::string pacing() const {
    if (timed_) return "at the recorded timestamps";
    if (fps_ <= 0) return "as fast as possible";
    std::ostringstream os;
    os << "at " << fps_ << " fps";
    return os.str();
  }

  // Starts decoding the frames after the one read() hands out next, as far as the ring has slots: the
  // slot of frame n is n % ring size, free once frame n - ring size was handed out and let go.
  void schedule() {
    const uint64_t end = loop_ ? UINT64_MAX : frames_.size();
    // One slot stays with the frame read() handed out last (its images are in the caller's hands).
    const uint64_t limit = std::min<uint64_t>(end, taken_ + ring_.size() - 1);
    if (scheduled_ >= limit) return;
    if (workers_.empty())
      for (int i = 0; i < decode_concurrency(); ++i) workers_.emplace_back([this] { decode_loop(); });
    std::lock_guard<std::mutex> lock(m_);
    scheduled_ = limit;
    cv_.notify_all();
  }

  // A decoding thread: takes the next frame scheduled and not yet started, decodes it into its slot.
  void decode_loop() {
    std::unique_lock<std::mutex> lock(m_);
    for (;;) {
      cv_.wait(lock, [this] { return quit_ || started_decodes_ < scheduled_; });
      if (quit_) return;
      const uint64_t n = started_decodes_++;
      ++in_flight_;
      Decoded& d = ring_[static_cast<size_t>(n % ring_.size())];
      const FrameEntry& f = frames_[static_cast<size_t>(n % frames_.size())];
      lock.unlock();
      try {
        decode_frame(f, uri_.text, limits_, params_, d);
      } catch (...) {
        d.error = std::current_exception();
      }
      lock.lock();
      d.ready = true;
      --in_flight_;
      cv_.notify_all();
    }
  }

  // Drops the decodes not started yet and waits for those running (frames_ and the ring may change).
  void wait_decodes() {
    std::unique_lock<std::mutex> lock(m_);
    scheduled_ = started_decodes_;
    cv_.wait(lock, [this] { return in_flight_ == 0; });
  }

  void wait_for(const FrameEntry& f) {
    if (!timed_) {
      pacer_.wait();
      return;
    }
    // Recorded time since the pass's first frame, on the steady clock from when that frame was read.
    if (!started_) {
      started_ = true;
      start_ = Clock::now();
      t0_ = f.timestamp;
      return;
    }
    const auto due =
        start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f.timestamp - t0_));
    std::this_thread::sleep_until(due);
  }

  SourceUri uri_;
  Config config_;
  InputLimits limits_ = input_limits(config_);  // input.max_file_bytes, input.max_image_pixels
  MaskParams params_ = mask_params(config_);    // the mask test instance masks are united by
  double fps_;
  bool loop_;
  Pacer pacer_;
  std::vector<FrameEntry> frames_;
  std::string layout_reason_;
  // TUM: the unpaired frames before each frame and after the last (pair_tum); empty otherwise.
  std::vector<uint64_t> unpaired_before_;
  uint64_t unpaired_after_ = 0;
  bool pass_end_counted_ = false;
  uint64_t unpaired_ = 0;  // counted as playback passes them, over every pass and reopen
  bool timed_ = false;
  uint64_t sequence_ = 0;
  bool started_ = false;
  Clock::time_point start_{};
  double t0_ = 0;

  // Decode ahead: frame n of the play order goes to ring_[n % size]. Frames below scheduled_ may be
  // decoded, below started_decodes_ a thread took them, below taken_ read() handed them out.
  std::vector<Decoded> ring_;
  uint64_t scheduled_ = 0, started_decodes_ = 0, taken_ = 0;
  int in_flight_ = 0;  // decodes running
  bool quit_ = false;
  std::mutex m_;  // guards the counters above but taken_, and Decoded::ready
  std::condition_variable cv_;
  std::vector<std::thread> workers_;  // started at the first read()
};

}  // namespace

std::unique_ptr<LiveSource> make_replay_source(const SourceUri& uri, const Config& config) {
  return std::make_unique<ReplaySource>(uri, config);
}

}  // namespace depthmask::detail
