#include "depthmask/stream_pairer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "depthmask/errors.h"

namespace depthmask {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

StreamPairer::StreamPairer(int streams, double tolerance, size_t max_pending)
    : n_(streams), tol_(tolerance), max_pending_(max_pending) {
  DM_EXPECT(streams >= 1 && streams <= kMaxStreams, ConfigError,
            "stream pairer: " << streams << " streams; expected 1.." << kMaxStreams);
  DM_EXPECT(std::isfinite(tolerance) && tolerance >= 0, ConfigError,
            "stream pairer: tolerance " << tolerance << " s; expected a number of seconds >= 0");
  DM_EXPECT(max_pending >= 1, ConfigError, "stream pairer: max_pending must be at least 1");
  clock_.fill(-kInf);
}

void StreamPairer::push(int stream, double t, uint64_t handle) {
  DM_EXPECT(stream >= 0 && stream < n_, std::logic_error, "stream pairer: no stream " << stream);
  const auto k = static_cast<size_t>(stream);
  // Too late: a primary frame at or after it was decided already (a partner frame may still be
  // taken by a pending primary within the tolerance; drop_dead_partners decides).
  if (any_decided_ && (stream == 0 ? t <= decided_ : t + tol_ < decided_)) {
    drop(stream);
    return;
  }
  auto& q = pending_[k];
  auto pos = q.end();
  while (pos != q.begin() && std::prev(pos)->t > t) --pos;
  q.insert(pos, Item{t, handle});
  clock_[k] = std::max(clock_[k], t);
  if (q.size() > max_pending_) {
    q.pop_front();
    drop(stream);
  }
  process();
}

void StreamPairer::advance(double t) {
  for (int k = 0; k < n_; ++k) clock_[static_cast<size_t>(k)] = std::max(clock_[static_cast<size_t>(k)], t);
  process();
}

void StreamPairer::finish() { advance(kInf); }

bool StreamPairer::pop(Set& out) {
  if (ready_.empty()) return false;
  out = ready_.front();
  ready_.pop_front();
  return true;
}

uint64_t StreamPairer::unpaired(int stream) const {
  DM_EXPECT(stream >= 0 && stream < n_, std::logic_error, "stream pairer: no stream " << stream);
  return unpaired_[static_cast<size_t>(stream)];
}

uint64_t StreamPairer::unpaired() const {
  uint64_t n = 0;
  for (int k = 0; k < n_; ++k) n += unpaired_[static_cast<size_t>(k)];
  return n;
}

// Whether a primary frame at `t` can be decided: no partner frame still to come could be closer than
// what is pending (or within the tolerance at all).
bool StreamPairer::decidable(double t) const {
  for (int k = 1; k < n_; ++k) {
    const auto& q = pending_[static_cast<size_t>(k)];
    if (clock_[static_cast<size_t>(k)] >= t + tol_) continue;
    const bool later_within =
        std::any_of(q.begin(), q.end(), [&](const Item& i) { return i.t >= t && i.t <= t + tol_; });
    if (!later_within) return false;
  }
  return true;
}

// Partner frames older than `horizon` - tolerance: no pending or future primary frame can take them.
void StreamPairer::drop_dead_partners(double horizon) {
  for (int k = 1; k < n_; ++k) {
    auto& q = pending_[static_cast<size_t>(k)];
    while (!q.empty() && q.front().t + tol_ < horizon) {
      q.pop_front();
      drop(k);
    }
  }
}

void StreamPairer::process() {
  auto& primary = pending_[0];
  while (!primary.empty() && decidable(primary.front().t)) {
    const Item p = primary.front();
    primary.pop_front();
    Set s;
    s.t = p.t;
    s.item[0] = p.handle;
    // The closest partner within the tolerance on every stream, or none.
    std::array<std::deque<Item>::iterator, kMaxStreams> pick{};
    bool complete = true;
    for (int k = 1; k < n_ && complete; ++k) {
      auto& q = pending_[static_cast<size_t>(k)];
      auto best = q.end();
      for (auto it = q.begin(); it != q.end(); ++it)
        if (std::fabs(it->t - p.t) <= tol_ && (best == q.end() || std::fabs(it->t - p.t) < std::fabs(best->t - p.t)))
          best = it;
      pick[static_cast<size_t>(k)] = best;
      complete = best != q.end();
    }
    any_decided_ = true;
    decided_ = p.t;
    if (complete) {
      for (int k = 1; k < n_; ++k) {
        auto& q = pending_[static_cast<size_t>(k)];
        s.item[static_cast<size_t>(k)] = pick[static_cast<size_t>(k)]->handle;
        q.erase(pick[static_cast<size_t>(k)]);
      }
      ready_.push_back(s);
    } else {
      drop(0);
    }
    drop_dead_partners(p.t);
  }
  // Without a pending primary frame, the next one is no earlier than the primary stream's clock.
  drop_dead_partners(primary.empty() ? clock_[0] : primary.front().t);
}

}  // namespace depthmask
