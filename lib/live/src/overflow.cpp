// live.overflow auto resolved against the source (live_runner.h): one rule, for the runner's start
// line, its summary and the tests.
#include <string>

#include "depthmask/live_runner.h"

namespace depthmask {

OverflowChoice resolve_overflow(Overflow configured, const LiveSource& source) {
  OverflowChoice o;
  if (configured != Overflow::Auto) {
    o.policy = configured;
    o.reason = std::string(to_string(configured)) + " (live.overflow)";
  } else if (source.can_wait()) {
    o.policy = Overflow::Block;
    o.reason = "auto → block: an unpaced replay waits";
  } else {
    o.policy = Overflow::DropOldest;
    o.reason = "auto → drop_oldest: a camera or a paced source does not wait";
  }
  return o;
}

}  // namespace depthmask
