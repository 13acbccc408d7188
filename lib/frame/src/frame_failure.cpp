#include "depthmask/detail/frame_failure.h"

#include <opencv2/core.hpp>

#include <new>

namespace depthmask::detail {

ClassifiedFailure classify_frame_failure(const std::exception_ptr& e, MemoryBackend& backend, const std::string& at) {
  ClassifiedFailure v;
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    v.failure = Failure::Resource;
    v.message = "out of host memory (std::bad_alloc)";
    v.out_of_memory = true;
  } catch (const cv::Exception& ex) {
    v.failure = failure_of(ex);
    v.message = std::string("OpenCV: ") + ex.what();
    v.out_of_memory = ex.code == cv::Error::StsNoMem;
  } catch (const std::exception& ex) {
    v.failure = failure_of(ex);
    v.message = ex.what();
    // ResourceError is the one face of out of memory; OutputError (disk full, folder gone) is of the
    // same class but frees no memory by releasing buffers.
    v.out_of_memory = dynamic_cast<const ResourceError*>(&ex) != nullptr;
  } catch (...) {
    v.failure = Failure::Internal;
    v.message = "an exception that is not a std::exception";
  }
  if (v.failure == Failure::Platform) {
    // Asked only here: health() waits for the whole device, and only a CUDA error can be sticky.
    const std::string why = backend.health();
    if (!why.empty()) v.fatal = std::make_exception_ptr(PlatformError(why + " (at " + at + ": " + v.message + ")"));
  }
  return v;
}

}  // namespace depthmask::detail
