#include "depthmask/backend.h"

#include <algorithm>
#include <new>
#include <string>
#include <utility>

#include "backends.h"
#include "depthmask/detail/enum_names.h"
#include "depthmask/errors.h"

namespace depthmask {

constexpr detail::EnumName<Head> kHeads[] = {{Head::Uninitialized, "uninitialized"},
                                             {Head::AtHost, "at_host"},
                                             {Head::AtDevice, "at_device"},
                                             {Head::Synced, "synced"}};

std::string_view to_string(Head h) { return detail::name_of(kHeads, h); }

Buffer::Buffer(Buffer&& o) noexcept
    : owner_(std::exchange(o.owner_, nullptr)),
      block_(std::exchange(o.block_, Block{})),
      head_(std::exchange(o.head_, Head::Uninitialized)) {}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    owner_ = std::exchange(o.owner_, nullptr);
    block_ = std::exchange(o.block_, Block{});
    head_ = std::exchange(o.head_, Head::Uninitialized);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::release() noexcept {
  if (owner_ != nullptr && block_.bytes > 0) owner_->deallocate(block_);
  owner_ = nullptr;
  block_ = Block{};
  head_ = Head::Uninitialized;
}

void Buffer::host_written() {
  if (block_.bytes == 0) return;
  head_ = owner_->shares_memory() ? Head::Synced : Head::AtHost;
}

void Buffer::device_written() {
  if (block_.bytes == 0) return;
  DM_EXPECT(owner_->device_executes(), std::logic_error, "device_written() on a buffer of a backend without a device");
  head_ = owner_->shares_memory() ? Head::Synced : Head::AtDevice;
}

// Transfers move only the bytes in use: a buffer grown by one large frame does not make every
// later, smaller frame pay for its full capacity.
void Buffer::to_device(size_t bytes, CUstream_st* stream) {
  if (block_.bytes == 0 || !owner_->device_executes()) return;
  bytes = std::min(bytes, block_.bytes);
  if (stream == nullptr) stream = owner_->stream();
  if (owner_->shares_memory()) {
    owner_->do_prefetch_device(block_, bytes, stream);
    head_ = Head::Synced;
  } else if (head_ == Head::AtHost) {
    owner_->do_to_device(block_, 0, bytes, stream);
    head_ = Head::Synced;
  }
}

void Buffer::to_host(size_t bytes, CUstream_st* stream) {
  if (block_.bytes == 0 || !owner_->device_executes()) return;
  bytes = std::min(bytes, block_.bytes);
  if (stream == nullptr) stream = owner_->stream();
  if (owner_->shares_memory()) {
    owner_->do_prefetch_host(block_, bytes, stream);
    head_ = Head::Synced;
  } else if (head_ == Head::AtDevice) {
    owner_->do_to_host(block_, 0, bytes, stream);
    head_ = Head::Synced;
  }
}

void Buffer::copy_range_to_device(size_t offset, size_t bytes, CUstream_st* stream) {
  if (bytes == 0 || !owner_->device_executes() || owner_->shares_memory()) return;
  DM_EXPECT(offset <= block_.bytes && bytes <= block_.bytes - offset, std::out_of_range,
            "copy_range_to_device: bytes [" << offset << ", " << offset + bytes << ") of a " << block_.bytes
                                            << "-byte buffer");
  owner_->do_to_device(block_, offset, bytes, stream != nullptr ? stream : owner_->stream());
}

void Buffer::copy_range_to_host(size_t offset, size_t bytes, CUstream_st* stream) {
  if (bytes == 0 || !owner_->device_executes() || owner_->shares_memory()) return;
  DM_EXPECT(
      offset <= block_.bytes && bytes <= block_.bytes - offset, std::out_of_range,
      "copy_range_to_host: bytes [" << offset << ", " << offset + bytes << ") of a " << block_.bytes << "-byte buffer");
  owner_->do_to_host(block_, offset, bytes, stream != nullptr ? stream : owner_->stream());
}

AllocationStats MemoryBackend::stats() const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  return stats_;
}

void MemoryBackend::set_memory_limit(size_t bytes) {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  limit_ = bytes;
}

size_t MemoryBackend::memory_limit() const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  return limit_;
}

Buffer MemoryBackend::allocate(size_t bytes) {
  if (bytes == 0) return Buffer(this, Block{});
  {
    // The bytes are reserved against the limit under the lock, and the platform allocator runs
    // outside it: it may run parallel work of its own (pinned_host_alloc's first touch), and a thread
    // waiting for that work can take up another frame's task that allocates too. Holding the lock
    // across it deadlocked the batch pipeline (a 4K bench run and a 1080p soak on the H200).
    const std::lock_guard<std::mutex> lock(stats_mutex_);
    // Checked before the platform allocator is asked, so a refused request changes nothing.
    DM_EXPECT(limit_ == 0 || (bytes <= limit_ && stats_.live_bytes <= limit_ - bytes), ResourceError,
              "backend '" << to_string(kind_) << "': out of memory: cannot allocate " << bytes
                          << " bytes for a frame buffer: " << stats_.live_bytes << " of the " << limit_
                          << " bytes of backend.memory_limit_mb (" << (limit_ >> 20)
                          << " MiB) are in use by the frames in flight");
    stats_.live_bytes += bytes;
    if (stats_.live_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.live_bytes;
  }
  Block b;
  const auto unreserve = [&] {
    const std::lock_guard<std::mutex> lock(stats_mutex_);
    stats_.live_bytes -= bytes;
  };
  try {
    b = do_allocate(bytes);
  } catch (const std::bad_alloc&) {
    // Out of memory has one face: a backend (or a test's) std::bad_alloc becomes a ResourceError.
    unreserve();
    throw ResourceError("backend '" + std::string(to_string(kind_)) + "': out of memory: cannot allocate " +
                        std::to_string(bytes) + " bytes for a frame buffer (std::bad_alloc)");
  } catch (...) {
    unreserve();
    throw;
  }
  b.bytes = bytes;
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  ++stats_.allocations;
  return Buffer(this, b);
}

void MemoryBackend::deallocate(Block b) noexcept {
  do_deallocate(b);
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  ++stats_.deallocations;
  stats_.live_bytes -= b.bytes;
}

void MemoryBackend::run_and_wait(const std::function<void()>& enqueue, CUstream_st* s, Wait wait) {
  make_current();
  try {
    enqueue();
    if (wait == Wait::Block)
      synchronize_blocking(s);
    else
      synchronize(s);
  } catch (...) {
    try {
      synchronize(s);
    } catch (...) {  // the first error is the one worth reporting
    }
    throw;
  }
}

std::unique_ptr<MemoryBackend> make_backend(const BackendChoice& choice, const PlatformInfo& platform) {
  if (choice.kind == BackendKind::Cpu) return detail::make_cpu_backend();
  DM_EXPECT(platform.cuda_built, PlatformError,
            "backend '" << to_string(choice.kind)
                        << "' needs CUDA, but this depthmask was built without it; use backend.kind: cpu");
  DM_EXPECT(choice.device >= 0 && static_cast<size_t>(choice.device) < platform.devices.size(), PlatformError,
            "backend '" << to_string(choice.kind) << "' asks for CUDA device " << choice.device << ", but "
                        << platform.devices.size() << " device(s) are usable"
                        << (platform.problem.empty() ? "" : " (" + platform.problem + ")"));
  const DeviceInfo& dev = platform.devices[static_cast<size_t>(choice.device)];
  switch (choice.kind) {
    case BackendKind::Copy:
      return detail::make_copy_backend(dev);
    case BackendKind::ZeroCopy:
      return detail::make_zero_copy_backend(dev);
    case BackendKind::Managed:
      return detail::make_managed_backend(dev);
    default:
      break;
  }
  throw PlatformError("backend kind '" + std::string(to_string(choice.kind)) +
                      "' is not a concrete backend; resolve it with choose_backend() first");
}

}  // namespace depthmask
