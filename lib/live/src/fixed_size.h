// The live runner's fixed-size parts (runner.cpp): the latency histogram and the queues of frame
// slots. Neither allocates per frame.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "depthmask/errors.h"
#include "depthmask/live_runner.h"

namespace depthmask::detail {

// Latencies in a fixed histogram (no allocation per frame, any run length): exact below 128 µs, then
// 64 buckets per power of two (under 1.6 % error), up to 2^40 µs.
class LatencyHistogram {
 public:
  void add(uint64_t us) {
    ++counts_[bucket(us)];
    ++n_;
    max_ = std::max(max_, us);
  }
  void clear() {
    counts_.fill(0);
    n_ = 0;
    max_ = 0;
  }
  uint64_t count() const { return n_; }
  LatencyStats stats() const {
    LatencyStats s;
    if (n_ == 0) return s;
    s.p50_us = std::min(quantile(0.50), max_);
    s.p99_us = std::min(quantile(0.99), max_);
    s.max_us = max_;
    return s;
  }

 private:
  static constexpr int kExact = 128, kSub = 64, kOctaves = 34;  // octaves 7..40
  static size_t bucket(uint64_t v) {
    if (v < kExact) return static_cast<size_t>(v);
    int e = 63 - __builtin_clzll(v);  // floor(log2 v) >= 7
    if (e > 40) return kExact + kOctaves * kSub - 1;
    const uint64_t sub = (v >> (e - 6)) & (kSub - 1);
    return size_t{kExact} + static_cast<size_t>(e - 7) * size_t{kSub} + static_cast<size_t>(sub);
  }
  // The upper bound of bucket b (a quantile never reads low).
  static uint64_t upper(size_t b) {
    if (b < kExact) return b;
    const int e = static_cast<int>((b - kExact) / kSub) + 7;
    const uint64_t sub = (b - kExact) % kSub;
    return ((uint64_t{kSub} + sub + 1) << (e - 6)) - 1;
  }
  uint64_t quantile(double q) const {
    const auto rank = static_cast<uint64_t>(q * static_cast<double>(n_ - 1)) + 1;  // 1-based
    uint64_t seen = 0;
    for (size_t b = 0; b < counts_.size(); ++b) {
      seen += counts_[b];
      if (seen >= rank) return upper(b);
    }
    return max_;
  }
  std::array<uint64_t, kExact + kOctaves * kSub> counts_{};
  uint64_t n_ = 0, max_ = 0;
};

// A fixed-capacity FIFO of T* (the pool's size), so queueing allocates nothing.
template <class T>
class Ring {
 public:
  explicit Ring(size_t capacity) : items_(capacity) {}
  bool empty() const { return size_ == 0; }
  void push(T* it) {
    DM_EXPECT(size_ < items_.size(), std::logic_error, "live queue overflow");
    items_[(head_ + size_) % items_.size()] = it;
    ++size_;
  }
  T* pop() {
    T* it = items_[head_];
    head_ = (head_ + 1) % items_.size();
    --size_;
    return it;
  }

 private:
  std::vector<T*> items_;
  size_t head_ = 0, size_ = 0;
};

}  // namespace depthmask::detail
