// A client's outgoing messages: a bounded FIFO that, when full, drops its oldest message to take a
// new one (a slow viewer loses old frames, never slows the others or the pipeline) and counts it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

namespace depthmask::detail {

template <class T>
class DropOldestQueue {
 public:
  explicit DropOldestQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  // Appends `v`; true when the oldest message was dropped for it.
  bool push(T v) {
    bool dropped = false;
    if (items_.size() >= capacity_) {
      items_.pop_front();
      ++dropped_;
      dropped = true;
    }
    items_.push_back(std::move(v));
    return dropped;
  }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  size_t capacity() const { return capacity_; }
  // The oldest message, removed. Not on an empty queue.
  T pop() {
    T v = std::move(items_.front());
    items_.pop_front();
    return v;
  }
  void clear() { items_.clear(); }
  uint64_t dropped() const { return dropped_; }

 private:
  size_t capacity_;
  std::deque<T> items_;
  uint64_t dropped_ = 0;
};

}  // namespace depthmask::detail
