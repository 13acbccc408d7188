// probe_platform for builds without CUDA: nothing to probe.
#include "depthmask/platform.h"

namespace depthmask {

PlatformInfo probe_platform(int) {
  PlatformInfo p;
  p.cuda_built = false;
  p.problem = "this depthmask was built without CUDA (no nvcc at build time)";
  return p;
}

}  // namespace depthmask
