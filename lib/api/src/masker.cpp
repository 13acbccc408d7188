// depthmask::Masker (masker.h): the backend, a pool of frame slots for host frames, and the masking
// pass over the caller's views. Host frames take the batch's path (FrameSlot: backend buffers, the
// registration and colour-key passes) except on the cpu backend without those, where the CPU loop
// reads and writes the caller's memory directly. Device frames go straight to the kernel on the
// caller's stream.
#include "depthmask/masker.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <optional>
#include <sstream>

#if DEPTHMASK_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "depthmask/detail/cuda_check.h"
#endif

#include "depthmask/errors.h"
#include "depthmask/frame.h"
#include "depthmask/kernels/mask_kernel.h"
#include "depthmask/kernels/mask_variants.h"
#include "depthmask/open_backend.h"
#include "depthmask/pipeline.h"
#include "depthmask/registration.h"
#include "image_kinds.h"

namespace depthmask {

size_t pixel_bytes(PixelType t) noexcept {
  const detail::PixelKind* k = detail::row_of(detail::kPixelKinds, t);
  return k ? k->bytes : 1;
}

std::string_view to_string(PixelType t) noexcept { return detail::name_of(detail::kPixelKinds, t, "bool"); }

std::string_view to_string(MemoryKind m) noexcept {
  return detail::name_of(detail::kMemoryKinds, m, "mapped host memory");
}

ImageRef ImageRef::of(const cv::Mat& m) {
  ImageRef r;
  r.data = m.data;
  const detail::PixelKind* k = detail::find_row(detail::kPixelKinds, &detail::PixelKind::cv_depth, m.depth());
  if (k == nullptr)
    throw InputError("a cv::Mat of OpenCV type " + std::to_string(m.type()) +
                     " cannot be masked: expected CV_8UC1, CV_16UC1, CV_32FC1 or CV_8UC3");
  r.type = k->value;
  DM_EXPECT(m.dims == 2, InputError, "a cv::Mat of " << m.dims << " dimensions cannot be masked: expected an image");
  r.channels = m.channels();
  r.rows = m.rows;
  r.cols = m.cols;
  r.row_stride = static_cast<int64_t>(m.step[0]);
  r.col_stride = static_cast<int64_t>(m.elemSize());
  return r;
}

namespace {

bool is_one_of(PixelType t, std::initializer_list<PixelType> types) {
  return std::find(types.begin(), types.end(), t) != types.end();
}

std::string type_list(std::initializer_list<PixelType> types) {
  std::string s;
  size_t i = 0;
  for (const PixelType t : types) {
    if (i > 0) s += (i + 1 == types.size()) ? " or " : ", ";
    s += to_string(t);
    ++i;
  }
  return s;
}

// The checks of one view for its role; throws InputError "<role> ...: expected ...".
void check_view(const char* role, const ImageRef& v, std::initializer_list<PixelType> types, int channels,
                bool written) {
  DM_EXPECT(is_one_of(v.type, types), InputError,
            role << " is " << to_string(v.type) << ": expected " << type_list(types));
  DM_EXPECT(v.channels == channels, InputError, role << " has " << v.channels << " channel(s): expected " << channels);
  DM_EXPECT(v.frames >= 1 && v.rows >= 0 && v.cols >= 0, InputError,
            role << " has shape " << v.frames << " x " << v.rows << " x " << v.cols << ": expected sizes of 0 or more");
  DM_EXPECT(v.rows <= INT_MAX && v.cols <= INT_MAX && v.frames <= INT_MAX, InputError,
            role << " is " << v.rows << " x " << v.cols << ": at most " << INT_MAX << " rows and columns");
  DM_EXPECT(!(written && v.read_only), InputError, role << " is read-only: pass a writable array");
  if (v.rows == 0 || v.cols == 0) return;
  const auto px = static_cast<int64_t>(pixel_bytes(v.type));
  DM_EXPECT(v.data != nullptr, InputError, role << " has no data (a null pointer)");
  DM_EXPECT(reinterpret_cast<uintptr_t>(v.data) % static_cast<uintptr_t>(px) == 0, InputError,
            role << " starts at an address that is not a multiple of its " << px
                 << "-byte pixels: pass an aligned array (a copy, e.g. numpy.ascontiguousarray)");
  DM_EXPECT(v.row_stride >= 0 && v.col_stride >= 0 && v.frame_stride >= 0, InputError,
            role << " has a negative stride (" << v.frame_stride << ", " << v.row_stride << ", " << v.col_stride
                 << " bytes): pass a copy with positive strides (numpy.ascontiguousarray)");
  DM_EXPECT(v.col_stride == px * channels, InputError,
            role << "'s pixels are " << v.col_stride << " bytes apart: expected " << px * channels
                 << " (the pixels of a row contiguous; pass numpy.ascontiguousarray(...))");
  DM_EXPECT(v.row_stride % px == 0 && (v.frames == 1 || v.frame_stride % px == 0), InputError,
            role << "'s strides (" << v.frame_stride << ", " << v.row_stride << " bytes) are not multiples of its "
                 << px << "-byte pixels");
  DM_EXPECT(v.rows == 1 || v.row_stride >= v.cols * v.col_stride, InputError,
            role << "'s rows are " << v.row_stride << " bytes apart, fewer than a row's " << v.cols * v.col_stride
                 << " bytes");
  if (written && v.frames > 1)
    DM_EXPECT(v.frame_stride >= v.rows * v.row_stride, InputError,
              role << "'s frames are " << v.frame_stride << " bytes apart and overlap (a frame is "
                   << v.rows * v.row_stride << " bytes)");
}

bool device_side(MemoryKind m) { return m != MemoryKind::Host; }

DepthType depth_type(PixelType t) { return t == PixelType::U16 ? DepthType::U16 : DepthType::F32; }
MaskType mask_type(PixelType t) { return t == PixelType::U16 ? MaskType::U16 : MaskType::U8; }
int cv_type(const ImageRef& v) {
  const detail::PixelKind* k = detail::row_of(detail::kPixelKinds, v.type);
  return CV_MAKETYPE(k ? k->cv_depth : CV_8U, v.channels);
}

// Frame i of a view (a single image, or frame 0, repeated for every frame when frame_stride is 0).
void* frame_ptr(const ImageRef& v, int64_t i) {
  if (v.frames == 1) return v.data;
  return static_cast<unsigned char*>(v.data) + i * v.frame_stride;
}
cv::Mat frame_mat(const ImageRef& v, int64_t i) {
  return cv::Mat(static_cast<int>(v.rows), static_cast<int>(v.cols), cv_type(v), frame_ptr(v, i),
                 static_cast<size_t>(v.row_stride));
}
MaskJob job_of(const ImageRef& depth, const ImageRef& mask, const ImageRef& out, int64_t i) {
  MaskJob job;
  job.depth = Plane<const void>{frame_ptr(depth, i), static_cast<size_t>(depth.row_stride)};
  job.depth_type = depth_type(depth.type);
  job.mask = Plane<const void>{frame_ptr(mask, mask.frames == 1 ? 0 : i), static_cast<size_t>(mask.row_stride)};
  job.mask_type = mask_type(mask.type);
  job.out = Plane<float>{static_cast<float*>(frame_ptr(out, i)), static_cast<size_t>(out.row_stride)};
  job.rows = static_cast<int>(out.rows);
  job.cols = static_cast<int>(out.cols);
  return job;
}

// Makes `device` current on the calling thread for the launches of one call, and gives the thread
// its previous device back on the way out, so a host program's choice stays as it was. Nothing is
// set when the device already is current (the usual case: one cudaGetDevice per call).
class UseDevice {
 public:
  explicit UseDevice(int device) {
#if DEPTHMASK_HAVE_CUDA
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != device) {
      DM_CUDA(cudaSetDevice(device));
      restore_ = previous_ >= 0;
    }
#else
    (void)device;
#endif
  }
  ~UseDevice() {
#if DEPTHMASK_HAVE_CUDA
    if (restore_) (void)cudaSetDevice(previous_);
#endif
  }
  UseDevice(const UseDevice&) = delete;
  UseDevice& operator=(const UseDevice&) = delete;

 private:
  int previous_ = -1;
  bool restore_ = false;
};

std::string shape_of(const ImageRef& v) {
  std::ostringstream s;
  if (v.frames > 1) s << v.frames << " x ";
  s << v.rows << " x " << v.cols;
  return s.str();
}

}  // namespace

struct Masker::Impl {
  Config config;
  OpenedBackend opened;
  MaskParams params;
  std::optional<ColorKey> color_key;
  // auto on a discrete GPU (the copy backend): host frames take the CPU loop in place, since a round
  // trip over PCIe moves every byte twice (docs/PERFORMANCE.md: 42 us against 318 us at 640x480 on the
  // H200 machine); device frames take the GPU. An explicitly configured backend is always used.
  bool host_frames_on_cpu = false;
  std::string reason;

  // Frame slots for host frames, one per concurrent call (each has its own stream and buffers).
  std::mutex slots_mutex;
  std::vector<std::unique_ptr<FrameSlot>> free_slots;

  // The stop flags of the runs in progress; a cancel with none in progress stops the next run.
  std::mutex runs_mutex;
  std::vector<std::atomic<bool>*> runs;
  bool cancel_next = false;

  std::unique_ptr<FrameSlot> take_slot() {
    {
      const std::lock_guard<std::mutex> lock(slots_mutex);
      if (!free_slots.empty()) {
        std::unique_ptr<FrameSlot> s = std::move(free_slots.back());
        free_slots.pop_back();
        return s;
      }
    }
    auto slot = std::make_unique<FrameSlot>(*opened.backend);
    slot->set_registration(config.registration.mode);
    slot->set_color_key(color_key);
    slot->set_limits(input_limits(config));
    return slot;
  }
  void give_slot(std::unique_ptr<FrameSlot> slot) {
    const std::lock_guard<std::mutex> lock(slots_mutex);
    free_slots.push_back(std::move(slot));
  }

  bool registers(const ImageRef& depth, const ImageRef& mask) const {
    const cv::Size d(static_cast<int>(depth.cols), static_cast<int>(depth.rows));
    const cv::Size m(static_cast<int>(mask.cols), static_cast<int>(mask.rows));
    return plan_registration(config.registration.mode, std::nullopt, d, m).mode != RegistrationMode::None;
  }

  void mask_host(const ImageRef& depth, const ImageRef& mask, const ImageRef& out, const ImageRef* color);
  void mask_device(const ImageRef& depth, const ImageRef& mask, const ImageRef& out, CUstream_st* stream);
};

void Masker::Impl::mask_host(const ImageRef& depth, const ImageRef& mask, const ImageRef& out, const ImageRef* color) {
  if ((!opened.backend->device_executes() || host_frames_on_cpu) && !color_key && !registers(depth, mask)) {
    // The cpu backend's pass needs no buffers of its own: the CPU loop over the caller's memory.
    for (int64_t i = 0; i < depth.frames; ++i) mask_cpu(job_of(depth, mask, out, i), params);
    return;
  }
  std::unique_ptr<FrameSlot> slot = take_slot();
  try {
    for (int64_t i = 0; i < depth.frames; ++i) {
      slot->set(frame_mat(depth, i), frame_mat(mask, mask.frames == 1 ? 0 : i),
                color ? frame_mat(*color, 0) : cv::Mat());
      slot->run_mask(params);
      cv::Mat dst = frame_mat(out, i);
      slot->out().copyTo(dst);
    }
  } catch (const std::exception& e) {
    if (failure_of(e) == Failure::Resource) slot->release_buffers();
    give_slot(std::move(slot));
    throw;
  }
  give_slot(std::move(slot));
}

void Masker::Impl::mask_device(const ImageRef& depth, const ImageRef& mask, const ImageRef& out, CUstream_st* stream) {
  MemoryBackend& backend = *opened.backend;
  DM_EXPECT(backend.device_executes(), ConfigError,
            "the arrays are in " << to_string(depth.memory)
                                 << " but this Masker's backend is cpu: open it with backend.kind copy, zero_copy or "
                                    "managed (auto picks one on a machine with a GPU), or pass host arrays");
  for (const ImageRef* v : {&depth, &mask, &out})
    DM_EXPECT(v->device == opened.choice.device, InputError,
              (v == &depth  ? "depth"
               : v == &mask ? "mask"
                            : "out")
                  << " is on CUDA device " << v->device << " but this Masker's backend runs on device "
                  << opened.choice.device << ": open it with backend.device: " << v->device << " or move the array");
  DM_EXPECT(!color_key, ConfigError,
            "live.mask.color_key needs the colour image on the host: pass host arrays to a Masker with a colour key");
  DM_EXPECT(!registers(depth, mask), ConfigError,
            "registration (registration.mode, depth " << shape_of(depth) << " onto mask " << shape_of(mask)
                                                      << ") runs on host frames only: pass host arrays");
  if (out.rows == 0 || out.cols == 0) return;
  const UseDevice use(opened.choice.device);
  if (depth.frames == 1) {
    launch_mask(job_of(depth, mask, out, 0), params, stream);
    return;
  }
  // A stack: frames of one size, kMaxBatchedJobs per launch.
  std::vector<MaskJob> jobs;
  jobs.reserve(static_cast<size_t>(depth.frames));
  for (int64_t i = 0; i < depth.frames; ++i) jobs.push_back(job_of(depth, mask, out, i));
  for (size_t first = 0; first < jobs.size(); first += kMaxBatchedJobs) {
    const int n = static_cast<int>(std::min<size_t>(kMaxBatchedJobs, jobs.size() - first));
    launch_mask_batch(jobs.data() + first, n, params, stream);
  }
}

Masker::Masker(Config config) : impl_(std::make_unique<Impl>()) {
  impl_->config = std::move(config);
  impl_->params = mask_params(impl_->config);
  impl_->color_key = color_key_of(impl_->config);
  impl_->opened = open_backend(impl_->config);
  impl_->reason = impl_->opened.choice.reason;
  if (impl_->config.backend.kind == BackendKind::Auto && impl_->opened.backend->kind() == BackendKind::Copy) {
    impl_->host_frames_on_cpu = true;
    impl_->reason +=
        "; host-resident frames are masked by the CPU loop in place, which measured faster than a round trip to "
        "the GPU (device arrays run on the GPU)";
  }
}

namespace {
std::vector<Override> parse_overrides(const std::vector<std::string>& overrides) {
  std::vector<Override> ov;
  ov.reserve(overrides.size());
  for (const std::string& s : overrides) ov.push_back(parse_override(s, "override"));
  return ov;
}
}  // namespace

Masker Masker::from_file(const std::filesystem::path& yaml_file, const std::vector<std::string>& overrides) {
  return Masker(load_config(yaml_file, parse_overrides(overrides)));
}

Masker Masker::from_yaml(const std::string& yaml, const std::vector<std::string>& overrides) {
  const std::filesystem::path cwd = std::filesystem::current_path();
  return Masker(load_config_text(yaml, "the configuration text", cwd, parse_overrides(overrides), cwd));
}

Masker::Masker(Masker&&) noexcept = default;
Masker& Masker::operator=(Masker&&) noexcept = default;
Masker::~Masker() = default;

const Config& Masker::config() const { return impl_->config; }
BackendKind Masker::backend() const { return impl_->opened.backend->kind(); }
const std::string& Masker::reason() const { return impl_->reason; }
int Masker::device() const { return impl_->opened.backend->device_executes() ? impl_->opened.choice.device : -1; }

cv::Mat Masker::mask(const cv::Mat& depth, const cv::Mat& mask, const cv::Mat& color) {
  cv::Mat out;
  mask_into(depth, mask, out, color);
  return out;
}

void Masker::mask_into(const cv::Mat& depth, const cv::Mat& mask, cv::Mat& out, const cv::Mat& color) {
  const ImageRef d = ImageRef::of(depth), m = ImageRef::of(mask);
  out.create(mask.size(), CV_32FC1);
  const ImageRef c = color.empty() ? ImageRef{} : ImageRef::of(color);
  this->mask(d, m, ImageRef::of(out), color.empty() ? nullptr : &c, nullptr);
}

void Masker::mask(const ImageRef& depth, const ImageRef& mask, const ImageRef& out, const ImageRef* color,
                  CUstream_st* stream) {
  check_view("depth", depth, {PixelType::U16, PixelType::F32}, 1, false);
  check_view("mask", mask, {PixelType::U8, PixelType::U16, PixelType::Bool}, 1, false);
  check_view("out", out, {PixelType::F32}, 1, true);
  DM_EXPECT(mask.frames == 1 || mask.frames == depth.frames, InputError,
            "mask is " << shape_of(mask) << " for depth " << shape_of(depth)
                       << ": expected one mask per depth frame, or one mask for all");
  DM_EXPECT(out.frames == depth.frames && out.rows == mask.rows && out.cols == mask.cols, InputError,
            "out is " << shape_of(out) << ": expected "
                      << (depth.frames > 1 ? std::to_string(depth.frames) + " x " : "") << mask.rows << " x "
                      << mask.cols << " (depth's frames on the mask's grid)");
  DM_EXPECT((depth.rows == mask.rows && depth.cols == mask.cols) || impl_->registers(depth, mask), InputError,
            "depth is " << shape_of(depth) << " but mask is " << shape_of(mask)
                        << ": expected the same size (or set registration.mode to register depth onto the mask)");
  const bool on_device = device_side(depth.memory);
  DM_EXPECT(device_side(mask.memory) == on_device && device_side(out.memory) == on_device, InputError,
            "depth is in " << to_string(depth.memory) << ", mask in " << to_string(mask.memory) << " and out in "
                           << to_string(out.memory) << ": expected all three on the host or all on the device");
  if (color) {
    check_view("color", *color, {PixelType::U8}, 3, false);
    DM_EXPECT(color->memory == MemoryKind::Host && color->frames == 1 && depth.frames == 1, InputError,
              "color must be one host image (a colour key runs on single host frames)");
  }
  // The slot path's passes make the backend's device current (run_and_wait); the thread gets its own back.
  std::optional<UseDevice> use;
  if (impl_->opened.backend->device_executes() && !on_device) use.emplace(impl_->opened.choice.device);
  if (on_device)
    impl_->mask_device(depth, mask, out, stream);
  else
    impl_->mask_host(depth, mask, out, color);
}

namespace {
// The run's progress callback, from the batch's commit stage; what it throws stops the run.
class ProgressObserver : public RunObserver {
 public:
  ProgressObserver(const std::function<void(size_t, size_t)>& progress, std::atomic<bool>& stop)
      : progress_(progress), stop_(stop) {}
  void on_frame(const FrameEntry& /*frame*/, size_t done, size_t total, const FrameFailure* /*failure*/) override {
    if (!progress_ || error_) return;
    try {
      progress_(done, total);
    } catch (...) {
      error_ = std::current_exception();
      stop_ = true;
    }
  }
  std::exception_ptr error() const { return error_; }

 private:
  const std::function<void(size_t, size_t)>& progress_;
  std::atomic<bool>& stop_;
  std::exception_ptr error_;
};
}  // namespace

RunSummary Masker::run(const RunRequest& request) {
  Config c = impl_->config;
  std::vector<Override> ov;
  if (!request.input.empty()) ov.push_back({"input.root", request.input.string(), "run() input", true});
  if (!request.output.empty()) ov.push_back({"output.dir", request.output.string(), "run() output", true});
  for (Override& o : parse_overrides(request.overrides)) ov.push_back(std::move(o));
  if (!ov.empty()) apply_overrides(c, ov);

  std::atomic<bool> stop{false};
  {
    const std::lock_guard<std::mutex> lock(impl_->runs_mutex);
    if (impl_->cancel_next) stop = true;
    impl_->cancel_next = false;
    impl_->runs.push_back(&stop);
  }
  struct Unregister {
    Impl& impl;
    std::atomic<bool>* flag;
    ~Unregister() {
      const std::lock_guard<std::mutex> lock(impl.runs_mutex);
      impl.runs.erase(std::remove(impl.runs.begin(), impl.runs.end(), flag), impl.runs.end());
    }
  } unregister{*impl_, &stop};
  ProgressObserver observer(request.progress, stop);
  RunSummary s = run_batch(c, *impl_->opened.backend, impl_->opened.choice, &observer, &stop);
  if (observer.error()) std::rethrow_exception(observer.error());
  return s;
}

void Masker::cancel() noexcept {
  const std::lock_guard<std::mutex> lock(impl_->runs_mutex);
  if (impl_->runs.empty()) impl_->cancel_next = true;
  for (std::atomic<bool>* r : impl_->runs) *r = true;
}

}  // namespace depthmask
