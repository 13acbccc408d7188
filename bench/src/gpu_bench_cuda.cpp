// The bench's GPU part (CUDA builds): bandwidth ceilings and the masking kernel alone on
// device-resident data, timed with CUDA events. Working sets are at least 4x the L2 cache (rotating
// among frames) so the numbers are DRAM numbers, not cache numbers.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <thread>

#include "depthmask/backend.h"
#include "depthmask/detail/cuda_stream.h"
#include "depthmask/kernels/mask_variants.h"
#include "gpu_bench.h"

namespace depthmask::bench::detail {

namespace {

using depthmask::detail::CudaStream;
using depthmask::detail::use_device;

constexpr size_t kMiB = size_t{1} << 20;
// No working set beyond this, whatever the L2 (the brief: never more than a few GB of GPU memory).
constexpr size_t kMaxWorkingSet = size_t{1} << 30;

class CudaEvent {
 public:
  CudaEvent() { DM_CUDA(cudaEventCreate(&e_)); }
  ~CudaEvent() { DM_CUDA_NOTHROW(cudaEventDestroy(e_)); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

struct DeviceFree {
  void operator()(void* p) const noexcept { DM_CUDA_NOTHROW(cudaFree(p)); }
};
struct PinnedFree {
  void operator()(void* p) const noexcept { DM_CUDA_NOTHROW(cudaFreeHost(p)); }
};
using DeviceMem = std::unique_ptr<void, DeviceFree>;
using PinnedMem = std::unique_ptr<void, PinnedFree>;

DeviceMem device_alloc(size_t bytes) {
  void* p = nullptr;
  DM_CUDA(cudaMalloc(&p, bytes));
  return DeviceMem(p);
}
PinnedMem pinned_alloc(size_t bytes) {
  void* p = nullptr;
  DM_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
  return PinnedMem(p);
}

// Runs `enqueue` and waits for `s`; waits also when enqueue throws, so nothing queued outlives the
// buffers it uses.
void run_and_wait_on(cudaStream_t s, const std::function<void()>& enqueue) {
  try {
    enqueue();
  } catch (...) {
    DM_CUDA_NOTHROW(cudaStreamSynchronize(s));
    throw;
  }
  DM_CUDA(cudaStreamSynchronize(s));
}

using RunAndWait = std::function<void(const std::function<void()>&)>;

// Seconds between CUDA events recorded on `s` around `enqueue`.
double event_seconds(cudaStream_t s, const RunAndWait& run_and_wait, const std::function<void()>& enqueue) {
  CudaEvent start, stop;
  run_and_wait([&] {
    DM_CUDA(cudaEventRecord(start.get(), s));
    enqueue();
    DM_CUDA(cudaEventRecord(stop.get(), s));
  });
  float ms = 0;
  DM_CUDA(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

struct Timing {
  double seconds = 0;   // best repetition
  long long units = 0;  // units of work in one repetition
};

// `run_units(n)` does n units of work and returns the seconds they took. One call warms up and
// calibrates; then n is chosen so a repetition lasts about `target_s`, and the best of three counts
// (ceilings are best cases; noise only ever adds time).
Timing time_units(double target_s, const std::function<double(long long)>& run_units) {
  const double one = std::max(run_units(1), 1e-7);
  const long long n = std::clamp<long long>(static_cast<long long>(std::ceil(target_s / one)), 1, 1000000);
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < 3; ++r) best = std::min(best, run_units(n));
  return {best, n};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Ctx {
  const BenchOptions& o;
  const PlatformInfo& platform;
  const DeviceInfo& dev;
  const MaskParams& params;
  const ProgressFn& progress;
  size_t l2 = 0;
  double target_s = 0.1;
  void say(const std::string& s) const {
    if (progress) progress(s);
  }
};

// ---- ceilings ----

Ceiling measure_d2d(const Ctx& c, CudaStream& stream) {
  // Source and destination of 2x L2 each: one copy touches 4x L2, so L2 cannot hold it.
  const size_t bytes = c.o.quick ? 8 * kMiB : std::max(2 * c.l2, 64 * kMiB);
  DeviceMem src = device_alloc(bytes), dst = device_alloc(bytes);
  const cudaStream_t s = stream.get();
  run_and_wait_on(s, [&] {
    DM_CUDA(cudaMemsetAsync(src.get(), 0x5a, bytes, s));
    DM_CUDA(cudaMemsetAsync(dst.get(), 0, bytes, s));
  });
  const RunAndWait wait = [&](const std::function<void()>& f) { run_and_wait_on(s, f); };
  const Timing t = time_units(c.target_s, [&](long long n) {
    return event_seconds(s, wait, [&] {
      for (long long i = 0; i < n; ++i)
        DM_CUDA(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
    });
  });
  Ceiling r;
  r.name = "d2d";
  r.buffer_bytes = bytes;
  r.bytes_per_rep = 2 * bytes;
  r.reps = static_cast<int>(t.units);
  r.gb_per_s = static_cast<double>(r.bytes_per_rep) * static_cast<double>(t.units) / t.seconds / 1e9;
  r.note = "cudaMemcpyAsync device to device, " + std::to_string(bytes / kMiB) +
           " MiB each way (src + dst >= 4x L2); bytes counted read + write = 2x the size";
  return r;
}

// H2D, D2H and both at once between device memory and `host_a`/`host_b` (pinned or pageable).
// Pinned copies are asynchronous: one thread, two streams. Pageable copies block the calling
// thread, so both directions at once need two threads. Wall-clock timed (bulk copies of many MiB).
void measure_transfers(const Ctx& c, bool pinned, void* host_a, void* host_b, size_t bytes, std::vector<Ceiling>& out) {
  DeviceMem dev_a = device_alloc(bytes), dev_b = device_alloc(bytes);
  CudaStream s1(c.dev.index), s2(c.dev.index);
  run_and_wait_on(s1.get(), [&] {
    DM_CUDA(cudaMemsetAsync(dev_a.get(), 0, bytes, s1.get()));
    DM_CUDA(cudaMemsetAsync(dev_b.get(), 0, bytes, s1.get()));
  });
  auto copies = [&](cudaStream_t s, void* dst, const void* src, cudaMemcpyKind kind, long long n) {
    run_and_wait_on(s, [&] {
      for (long long i = 0; i < n; ++i) DM_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, s));
    });
  };
  auto h2d = [&](long long n) { copies(s1.get(), dev_a.get(), host_a, cudaMemcpyHostToDevice, n); };
  auto d2h = [&](long long n) { copies(s2.get(), host_b, dev_b.get(), cudaMemcpyDeviceToHost, n); };
  auto wall = [](const std::function<void()>& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return seconds_since(t0);
  };
  const std::string kind = pinned ? "pinned" : "pageable";
  const std::string what = pinned ? "cudaHostAlloc" : "malloc'd (pageable)";
  auto add = [&](const std::string& dir, int directions, const std::function<void(long long)>& run,
                 const std::string& note) {
    const Timing t = time_units(c.target_s, [&](long long n) { return wall([&] { run(n); }); });
    Ceiling r;
    r.name = dir + "_" + kind;
    r.buffer_bytes = bytes;
    r.bytes_per_rep = static_cast<size_t>(directions) * bytes;
    r.reps = static_cast<int>(t.units);
    r.gb_per_s = static_cast<double>(r.bytes_per_rep) * static_cast<double>(t.units) / t.seconds / 1e9;
    r.note = note;
    out.push_back(r);
  };
  const std::string sz = std::to_string(bytes / kMiB) + " MiB " + what + " host memory";
  c.say("ceiling h2d/d2h/bidir " + kind);
  add("h2d", 1, h2d, "host to device, " + sz);
  add("d2h", 1, d2h, "device to host, " + sz);
  add(
      "bidir", 2,
      [&](long long n) {
        if (pinned) {
          // Both enqueued from this thread on two streams, then both waited for.
          run_and_wait_on(s1.get(), [&] {
            run_and_wait_on(s2.get(), [&] {
              for (long long i = 0; i < n; ++i) {
                DM_CUDA(cudaMemcpyAsync(dev_a.get(), host_a, bytes, cudaMemcpyHostToDevice, s1.get()));
                DM_CUDA(cudaMemcpyAsync(host_b, dev_b.get(), bytes, cudaMemcpyDeviceToHost, s2.get()));
              }
            });
          });
        } else {
          std::exception_ptr err;
          std::thread other([&] {
            try {
              use_device(c.dev.index);
              d2h(n);
            } catch (...) {
              err = std::current_exception();
            }
          });
          try {
            h2d(n);
          } catch (...) {
            other.join();
            throw;
          }
          other.join();
          if (err) std::rethrow_exception(err);
        }
      },
      "host to device and device to host at once (two streams" + std::string(pinned ? "" : ", two threads") +
          "), bytes of both directions counted, " + sz);
}

// ---- kernel only ----

using Launcher = std::function<void(const MaskJob* jobs, int count, cudaStream_t s)>;

// One backend's kernel-only working set for one size and depth type: `frames` copies of the frame in
// the backend's buffers, made fresh on the device by Buffer::to_device (a copy for copy, a prefetch
// for managed, nothing for zero_copy). Every launch configuration measured on it rotates over all of
// its frames.
struct WorkingSet {
  const SizeImages* im = nullptr;
  bool f32 = true;
  KernelRotation rot;
  size_t frame_bytes = 0, out_bytes = 0;
  Buffer depth, mask, out;
  std::vector<MaskJob> jobs;
  cv::Mat reference;  // mask_cpu's output for the frame
};

WorkingSet make_working_set(const Ctx& c, MemoryBackend& be, const SizeImages& im, bool f32) {
  WorkingSet w;
  w.im = &im;
  w.f32 = f32;
  const cv::Mat depth = im.depth(f32).isContinuous() ? im.depth(f32) : im.depth(f32).clone();
  const cv::Mat mask = im.mask.isContinuous() ? im.mask : im.mask.clone();
  const size_t px = im.size.pixels();
  const size_t depth_bytes = px * depth.elemSize(), mask_bytes = px;
  w.out_bytes = px * sizeof(float);
  w.frame_bytes = depth_bytes + mask_bytes + w.out_bytes;
  w.rot = kernel_rotation(w.frame_bytes, c.l2, c.o.quick ? 1.0 : 4.0, kMaxWorkingSet, kMaxBatchedJobs);
  const size_t n = w.rot.frames;

  be.make_current();
  w.depth = be.allocate(n * depth_bytes);
  w.mask = be.allocate(n * mask_bytes);
  w.out = be.allocate(n * w.out_bytes);
  auto* dh = static_cast<unsigned char*>(w.depth.host());
  auto* mh = static_cast<unsigned char*>(w.mask.host());
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(dh + i * depth_bytes, depth.data, depth_bytes);
    std::memcpy(mh + i * mask_bytes, mask.data, mask_bytes);
  }
  w.depth.host_written();
  w.mask.host_written();
  be.run_and_wait([&] {
    w.depth.to_device();
    w.mask.to_device();
  });

  w.jobs.resize(n);
  for (size_t i = 0; i < n; ++i) {
    MaskJob& j = w.jobs[i];
    j.depth = {static_cast<const unsigned char*>(w.depth.device()) + i * depth_bytes,
               static_cast<size_t>(im.size.width) * depth.elemSize()};
    j.depth_type = f32 ? DepthType::F32 : DepthType::U16;
    j.mask = {static_cast<const unsigned char*>(w.mask.device()) + i * mask_bytes, static_cast<size_t>(im.size.width)};
    j.mask_type = MaskType::U8;
    j.out = {reinterpret_cast<float*>(static_cast<unsigned char*>(w.out.device()) + i * w.out_bytes),
             static_cast<size_t>(im.size.width) * sizeof(float)};
    j.rows = im.size.height;
    j.cols = im.size.width;
  }
  w.reference = reference_output(im.depth(f32), im.mask, c.params);
  return w;
}

// Many launches of `launch` between two events, `per_launch` frames each (1: one frame per launch),
// rotating over the working set. The first frame's output is poisoned first, so "equals CPU" speaks
// of this launch configuration, not of one measured before it on the same buffers.
KernelRow measure_kernel(const Ctx& c, MemoryBackend& be, WorkingSet& w, const std::string& backend,
                         const std::string& variant, int per_launch, const Launcher& launch, const std::string& note) {
  const size_t n = w.rot.frames;
  c.say("kernel " + w.im->size.label() + " " + (w.f32 ? "f32" : "u16") + " " + backend + " " + variant + ", " +
        std::to_string(per_launch) + " frame(s) per launch (" + std::to_string(n) + " frames, " +
        std::to_string(n * w.frame_bytes / kMiB) + " MiB)");
  std::memset(w.out.host(), 0xff, w.out_bytes);  // NaN bits: mask_cpu never writes them
  w.out.host_written();
  be.run_and_wait([&] { w.out.to_device(w.out_bytes); });

  const cudaStream_t s = be.stream();
  const RunAndWait wait = [&](const std::function<void()>& f) { be.run_and_wait(f); };
  const size_t step = static_cast<size_t>(per_launch);
  const Timing t = time_units(c.target_s, [&](long long rotations) {
    return event_seconds(s, wait, [&] {
      for (long long r = 0; r < rotations; ++r)
        for (size_t i = 0; i + step <= n; i += step) launch(&w.jobs[i], per_launch, s);
    });
  });
  w.out.device_written();
  be.run_and_wait([&] { w.out.to_host(w.out_bytes); });

  KernelRow row;
  row.size = w.im->size;
  row.depth = w.f32 ? "f32" : "u16";
  row.backend = backend;
  row.variant = variant;
  row.batch = per_launch;
  row.frames_rotated = n;
  row.working_set_bytes = n * w.frame_bytes;
  row.launches = t.units * static_cast<long long>(n / step * step);
  row.us_per_frame = t.seconds * 1e6 / static_cast<double>(row.launches);
  row.gb_per_s = static_cast<double>(w.frame_bytes) * static_cast<double>(row.launches) / t.seconds / 1e9;
  row.matches_cpu = w.reference.isContinuous() && std::memcmp(w.out.host(), w.reference.data, w.out_bytes) == 0;
  row.note = note;
  return row;
}

// % of each ceiling the row is measured against: D2D for device memory; the pinned transfers for
// mapped memory, which the kernel reads and writes over the bus.
void set_percentages(KernelRow& k, const std::vector<Ceiling>& ceilings) {
  auto gbps = [&](const char* name) {
    for (const Ceiling& x : ceilings)
      if (x.name == name) return x.gb_per_s;
    return 0.0;
  };
  auto pct = [&](double ceiling) { return ceiling > 0 ? 100.0 * k.gb_per_s / ceiling : 0.0; };
  if (k.bus_bound) {
    k.pct_of_bidir_pinned = pct(gbps("bidir_pinned"));
    const double h2d = gbps("h2d_pinned"), d2h = gbps("d2h_pinned");
    k.pct_of_h2d_plus_d2h_pinned = h2d > 0 && d2h > 0 ? pct(h2d + d2h) : 0.0;
  } else {
    k.pct_of_d2d = pct(gbps("d2d"));
  }
}

}  // namespace

GpuResults measure_gpu(const BenchOptions& o, const PlatformInfo& platform, const std::vector<SizeImages>& images,
                       const MaskParams& params, const ProgressFn& progress) {
  GpuResults res;
  if (!have_cuda_kernels()) {
    res.skipped = "this build has no CUDA kernels";
    return res;
  }
  if (platform.devices.empty()) {
    res.skipped = platform.problem.empty() ? std::string("no CUDA device found") : platform.problem;
    return res;
  }
  if (o.device < 0 || static_cast<size_t>(o.device) >= platform.devices.size()) {
    res.skipped = "CUDA device " + std::to_string(o.device) + " does not exist";
    return res;
  }
  const bool any_gpu_backend = std::any_of(o.backends.begin(), o.backends.end(), [](BackendKind k) {
    return k == BackendKind::Copy || k == BackendKind::Managed || k == BackendKind::ZeroCopy;
  });
  if (!any_gpu_backend) {
    res.skipped = "no GPU backend among --backends";
    return res;
  }
  Ctx c{o, platform, platform.devices[static_cast<size_t>(o.device)], params, progress};
  c.target_s = o.quick ? 0.005 : 0.1;
  use_device(c.dev.index);
  int l2 = 0;
  DM_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, c.dev.index));
  c.l2 = static_cast<size_t>(std::max(l2, 0));
  res.l2_bytes = c.l2;

  // Ceilings.
  try {
    c.say("ceiling d2d");
    CudaStream stream(c.dev.index);
    res.ceilings.push_back(measure_d2d(c, stream));
  } catch (const Error& e) {
    res.failures.emplace_back("ceiling d2d", e.what());
  }
  const size_t tbytes = o.quick ? 8 * kMiB : 256 * kMiB;
  try {
    PinnedMem a = pinned_alloc(tbytes), b = pinned_alloc(tbytes);
    std::memset(a.get(), 1, tbytes);
    std::memset(b.get(), 0, tbytes);
    measure_transfers(c, true, a.get(), b.get(), tbytes, res.ceilings);
  } catch (const Error& e) {
    res.failures.emplace_back("ceiling pinned", e.what());
  }
  try {
    std::vector<unsigned char> a(tbytes, 1), b(tbytes, 0);  // touched: no page faults in the timing
    measure_transfers(c, false, a.data(), b.data(), tbytes, res.ceilings);
  } catch (const Error& e) {
    res.failures.emplace_back("ceiling pageable", e.what());
  }
  // Kernel only, per GPU backend. copy and zero_copy: every kernel variant, one frame per launch and
  // batched (launch_mask_batch of KernelRotation::per_launch frames); managed: launch_mask.
  for (BackendKind kind : o.backends) {
    if (kind == BackendKind::Cpu || kind == BackendKind::Auto) continue;
    const std::string name(to_string(kind));
    try {
      const BackendChoice choice = choose_backend(BackendConfig{kind, o.device}, platform);
      std::unique_ptr<MemoryBackend> be = make_backend(choice, platform);
      const bool mapped = kind == BackendKind::ZeroCopy;
      for (const SizeImages& im : images) {
        for (bool f32 : {true, false}) {
          WorkingSet w = make_working_set(c, *be, im, f32);
          auto add = [&](KernelRow row) {
            row.bus_bound = mapped;
            set_percentages(row, res.ceilings);
            res.kernel.push_back(std::move(row));
          };
          if (kind == BackendKind::Managed) {
            const Launcher plain = [&params](const MaskJob* j, int, cudaStream_t s) { launch_mask(*j, params, s); };
            add(measure_kernel(c, *be, w, name, "launch_mask", 1, plain,
                               "managed memory made fresh on the device by Buffer::to_device (prefetch)"));
            continue;
          }
          const std::string memory = mapped ? "mapped host memory: the kernel reads and writes over the bus (bus-bound)"
                                            : "device memory (cudaMalloc)";
          for (const MaskKernelVariant& v : mapped ? mapped_mask_kernel_variants() : mask_kernel_variants()) {
            const Launcher one = [&params, v](const MaskJob* j, int, cudaStream_t s) {
              launch_mask_variant(*j, params, v, s);
            };
            const Launcher batched = [&params, v](const MaskJob* j, int count, cudaStream_t s) {
              launch_mask_batch(j, count, params, s, v);
            };
            const std::string reads = v.kept_only ? ", depth read only where the mask keeps a pixel (GB/s counts "
                                                    "every byte of the frame, as for the others)"
                                                  : "";
            add(measure_kernel(c, *be, w, name, to_string(v), 1, one, memory + ", launch_mask_variant" + reads));
            if (w.rot.per_launch > 1)  // 1: a frame too big to rotate more than one of; the row above
              add(measure_kernel(c, *be, w, name, to_string(v), w.rot.per_launch, batched,
                                 memory + ", launch_mask_batch" + reads));
          }
        }
      }
    } catch (const Error& e) {
      res.failures.emplace_back("kernel " + name, e.what());
    }
  }
  return res;
}

}  // namespace depthmask::bench::detail
