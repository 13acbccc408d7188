// Memory backends: where frame buffers live and how their bytes reach the kernel.
//
// One interface (rmm style: public non-virtual entry points, private virtual hooks) and one small
// class per strategy — copy, zero_copy, managed, cpu — chosen by make_backend(). The pipeline never
// asks which concrete backend it has: it asks the properties below (whether passes run on the device,
// whether kernels read host memory), offers a frame to the backend's own masking schedule when it
// has one, and tells buffers which side needs fresh data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "depthmask/backend_kind.h"
#include "depthmask/platform.h"

struct CUstream_st;

namespace depthmask {

class MemoryBackend;
class Buffer;
struct MaskJob;     // depthmask/kernels/mask_kernel.h
struct MaskParams;  // depthmask/kernels/mask_rule.h

// Where the fresh copy of a buffer's bytes is (the idea of Caffe's SyncedMemory heads).
enum class Head { Uninitialized, AtHost, AtDevice, Synced };
std::string_view to_string(Head h);

// A stream of the backend's device, destroyed with the last handle; null for the cpu backend. Each
// frame slot of the overlapped batch owns one, so frames in flight overlap copies and kernels.
using StreamHandle = std::shared_ptr<CUstream_st>;

// How a CPU thread waits for the device: spinning (the lowest latency for one frame; what CUDA does
// by default when it has cores to spare) or blocked in the kernel (the thread's core goes to other
// work: the batch's decoders and encoders, while many frames wait at once).
enum class Wait { Spin, Block };

// What a backend hands out: a host view and a device view of `bytes` bytes. They are the same
// memory for zero_copy/managed (mapped or unified), distinct for copy, and device is null for cpu.
struct Block {
  void* host = nullptr;
  void* device = nullptr;
  size_t bytes = 0;
  bool host_registered = false;  // the backend's own note of how it page-locked `host`
};

// A move-only buffer owned through its backend (which must outlive it). Knows where its fresh copy
// is and transfers only when the other side needs it, asynchronously on the backend's stream.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  void* host() const { return block_.host; }
  void* device() const { return block_.device; }
  size_t size() const { return block_.bytes; }
  Head head() const { return head_; }

  // The CPU (resp. the device) has written new contents.
  void host_written();
  void device_written();
  // Makes the device (resp. host) copy of the first `bytes` bytes (all by default) fresh: enqueues a
  // copy on `stream` (the backend's own stream when null) when needed. The host copy may be read only
  // after that stream is synchronised.
  void to_device(size_t bytes = kAll, CUstream_st* stream = nullptr);
  void to_host(size_t bytes = kAll, CUstream_st* stream = nullptr);
  static constexpr size_t kAll = ~size_t{0};

  // Copies bytes [offset, offset + bytes) of one view to the other on `stream`, unconditionally
  // (no-op when the views are one memory): for callers that split a transfer into chunks to overlap
  // it with kernels. Say what is fresh afterwards with host_written()/device_written().
  void copy_range_to_device(size_t offset, size_t bytes, CUstream_st* stream);
  void copy_range_to_host(size_t offset, size_t bytes, CUstream_st* stream);
  // Both views hold the same bytes (after copy_range_* over everything in use).
  void mark_synced() {
    if (block_.bytes > 0) head_ = Head::Synced;
  }

 private:
  friend class MemoryBackend;
  Buffer(MemoryBackend* owner, Block b) : owner_(owner), block_(b) {}
  void release() noexcept;

  MemoryBackend* owner_ = nullptr;
  Block block_;
  Head head_ = Head::Uninitialized;
};

// A backend's own schedule for one frame's masking pass (the copy backend's row bands: the uploads,
// kernels and downloads of a frame's bands overlap). Made by MemoryBackend::make_mask_schedule(), one
// per frame slot (it holds the slot's extra stream and events); used from that slot's thread only.
class MaskSchedule {
 public:
  virtual ~MaskSchedule() = default;
  // Enqueues the whole masking pass of `job` — the uploads of depth and mask, the kernel, the download
  // of out — on `stream` (and makes `stream` wait for anything it puts elsewhere), leaves the three
  // buffers synced and returns true; or enqueues nothing and returns false when the frame does not
  // suit the schedule (the caller then runs the plain pass). `job` holds the buffers' device planes.
  // `bands`: what the caller asked for (FrameSlot::set_copy_bands: 0 = by size, 1 = never split,
  // n = n row bands). Call inside run_and_wait().
  virtual bool enqueue(const MaskJob& job, const MaskParams& params, Buffer& depth, Buffer& mask, Buffer& out,
                       int bands, CUstream_st* stream) = 0;
};

struct AllocationStats {
  uint64_t allocations = 0;  // allocate() calls that reached the platform allocator
  uint64_t deallocations = 0;
  size_t live_bytes = 0;
  size_t peak_bytes = 0;
};

class MemoryBackend {
 public:
  virtual ~MemoryBackend() = default;
  MemoryBackend(const MemoryBackend&) = delete;
  MemoryBackend& operator=(const MemoryBackend&) = delete;

  BackendKind kind() const { return kind_; }
  // Allocates `bytes` (0 gives an empty buffer and no allocation). Throws ResourceError, the one
  // face of out of memory, when the memory limit, the device's or the host's memory cannot hold it
  // (a backend's std::bad_alloc is rethrown as ResourceError); CudaError / PlatformError otherwise;
  // each with the size asked for. Thread-safe, like deallocation (frames in flight allocate from
  // several threads).
  Buffer allocate(size_t bytes);
  AllocationStats stats() const;
  // A cap on the bytes of all live buffers (backend.memory_limit_mb; 0 = none): what a GPU smaller
  // than this one would hold, so running out of device memory can be exercised anywhere.
  void set_memory_limit(size_t bytes);
  size_t memory_limit() const;

  // True when masking runs on the GPU (Block::device is valid), false for the CPU loop.
  virtual bool device_executes() const = 0;
  // True when host and device views are one memory (no copies needed).
  virtual bool shares_memory() const = 0;
  // True when kernels read and write the buffers where they live in host memory, across the bus
  // (zero_copy's mapped pinned memory): every byte a kernel touches crosses the interconnect, so a
  // kernel walk that reads less wins there (mask_variants.h: mapped_mask_kernel_variant()). False
  // where kernels work on device memory (copy; managed, whose pages migrate) and for cpu.
  virtual bool kernels_read_host_memory() const { return false; }
  // The backend's own schedule for a frame's masking pass (MaskSchedule), one per frame slot; null
  // (the default) when it has none and every frame takes the plain pass. The copy backend's row bands.
  virtual std::unique_ptr<MaskSchedule> make_mask_schedule() { return nullptr; }
  // False when the CPU must not touch this backend's memory while any kernel runs (unified memory
  // without concurrent managed access: pre-Pascal GPUs, Tegra before Thor): frames then go one at a time.
  virtual bool host_access_during_kernels() const { return true; }
  // The backend's own stream, used when a caller passes none (null for cpu).
  virtual CUstream_st* stream() const { return nullptr; }
  // A new stream of the backend's device, for one frame slot (null for cpu).
  virtual StreamHandle create_stream() { return nullptr; }
  // Waits for the work enqueued on `s` (stream() when null); host copies are safe to read afterwards.
  virtual void synchronize(CUstream_st* /*s*/ = nullptr) {}
  // The same, with the calling thread blocked rather than spinning.
  virtual void synchronize_blocking(CUstream_st* s = nullptr) { synchronize(s); }
  // Makes the backend's device current for the calling thread (before launches from a new thread).
  virtual void make_current() {}
  // Makes the device current, calls `enqueue` (copies and launches on `s`, stream() when null) and
  // waits for that stream. When anything throws it still waits before rethrowing, so buffers are never
  // handed back to the CPU while queued copies or kernels may still use them.
  void run_and_wait(const std::function<void()>& enqueue, CUstream_st* s = nullptr, Wait wait = Wait::Spin);
  // Empty while the device is usable; otherwise why not (a sticky CUDA error: every later call
  // would fail too, so a batch must stop rather than fail frame after frame).
  virtual std::string health() { return {}; }
  // One line: what the backend is, for logs.
  virtual std::string describe() const = 0;

 protected:
  explicit MemoryBackend(BackendKind k) : kind_(k) {}

 private:
  friend class Buffer;
  void deallocate(Block b) noexcept;
  virtual Block do_allocate(size_t bytes) = 0;
  virtual void do_deallocate(Block b) noexcept = 0;
  // Copies bytes [offset, offset + bytes) between the two views of a block on `s` (never null);
  // only called when !shares_memory().
  virtual void do_to_device(const Block&, size_t /*offset*/, size_t /*bytes*/, CUstream_st* /*s*/) {}
  virtual void do_to_host(const Block&, size_t /*offset*/, size_t /*bytes*/, CUstream_st* /*s*/) {}
  // Hints for unified memory (prefetch); called when shares_memory().
  virtual void do_prefetch_device(const Block&, size_t /*bytes*/, CUstream_st* /*s*/) {}
  virtual void do_prefetch_host(const Block&, size_t /*bytes*/, CUstream_st* /*s*/) {}

  BackendKind kind_;
  mutable std::mutex stats_mutex_;  // guards stats_ and the allocator hooks
  AllocationStats stats_;
  size_t limit_ = 0;  // guarded by stats_mutex_
};

// Builds the chosen backend (from choose_backend) on its device. Throws PlatformError when the
// build has no CUDA or the device cannot do it.
std::unique_ptr<MemoryBackend> make_backend(const BackendChoice& choice, const PlatformInfo& platform);

}  // namespace depthmask
