// Memory backends: where frame buffers live and how their bytes reach the kernel.
//
// One interface (rmm style: public non-virtual entry points, private virtual hooks) and one small
// class per strategy — copy, zero_copy, managed, cpu — chosen by make_backend(). The pipeline never
// asks which concrete backend it has: it asks whether masking runs on the device and tells buffers
// which side needs fresh data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "depthmask/config.h"
#include "depthmask/platform.h"

struct CUstream_st;

namespace depthmask {

class MemoryBackend;

// Where the fresh copy of a buffer's bytes is (the idea of Caffe's SyncedMemory heads).
enum class Head { Uninitialized, AtHost, AtDevice, Synced };
std::string_view to_string(Head h);

// What a backend hands out: a host view and a device view of `bytes` bytes. They are the same
// memory for zero_copy/managed (mapped or unified), distinct for copy, and device is null for cpu.
struct Block {
  void* host = nullptr;
  void* device = nullptr;
  size_t bytes = 0;
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
  // copy on the backend's stream when needed. The host copy may be read only after synchronize().
  void to_device(size_t bytes = kAll);
  void to_host(size_t bytes = kAll);
  static constexpr size_t kAll = ~size_t{0};

 private:
  friend class MemoryBackend;
  Buffer(MemoryBackend* owner, Block b) : owner_(owner), block_(b) {}
  void release() noexcept;

  MemoryBackend* owner_ = nullptr;
  Block block_;
  Head head_ = Head::Uninitialized;
};

struct AllocationStats {
  uint64_t allocations = 0;    // allocate() calls that reached the platform allocator
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
  // Allocates `bytes` (0 gives an empty buffer and no allocation). Throws CudaError / PlatformError /
  // std::bad_alloc with the size asked for.
  Buffer allocate(size_t bytes);
  const AllocationStats& stats() const { return stats_; }

  // True when masking runs on the GPU (Block::device is valid), false for the CPU loop.
  virtual bool device_executes() const = 0;
  // True when host and device views are one memory (no copies needed).
  virtual bool shares_memory() const = 0;
  // The stream device work is enqueued on (null for cpu).
  virtual CUstream_st* stream() const { return nullptr; }
  // Waits for the work enqueued on stream(); host copies are safe to read afterwards.
  virtual void synchronize() {}
  // Makes the backend's device current for the calling thread (before launches from a new thread).
  virtual void make_current() {}
  // Makes the device current, calls `enqueue` (copies and launches on stream()) and waits for the
  // stream. When anything throws it still waits before rethrowing, so buffers are never handed back
  // to the CPU while queued copies or kernels may still use them.
  void run_and_wait(const std::function<void()>& enqueue);
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
  // Copies between the two views of a block; only called when !shares_memory().
  virtual void do_to_device(const Block&, size_t /*bytes*/) {}
  virtual void do_to_host(const Block&, size_t /*bytes*/) {}
  // Hints for unified memory (prefetch); called when shares_memory().
  virtual void do_prefetch_device(const Block&, size_t /*bytes*/) {}
  virtual void do_prefetch_host(const Block&, size_t /*bytes*/) {}

  BackendKind kind_;
  AllocationStats stats_;
};

// Builds the chosen backend (from choose_backend) on its device. Throws PlatformError when the
// build has no CUDA or the device cannot do it.
std::unique_ptr<MemoryBackend> make_backend(const BackendChoice& choice, const PlatformInfo& platform);

}  // namespace depthmask
