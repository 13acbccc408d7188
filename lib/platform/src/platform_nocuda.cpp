// probe_platform for builds without CUDA: nothing to probe.
#include "depthmask/platform.h"

namespace depthmask {

PlatformInfo probe_platform(int) {
  detail::note_cuda_initialised();  // what a CUDA build's probe would do: the cpu path's tests hold here too
  PlatformInfo p;
  p.cuda_built = false;
  p.problem = "this depthmask was built without CUDA (no nvcc at build time)";
  p.cuda_visible_devices = detail::cuda_visible_devices_env();
  return p;
}

}  // namespace depthmask
