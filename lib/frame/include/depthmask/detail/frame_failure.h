// How a frame's failure is handled: one rule for the batch (batch_frames.cpp) and the live runner
// (live/runner.cpp), so the two pipelines cannot drift apart.
#pragma once

#include <exception>
#include <string>

#include "depthmask/backend.h"
#include "depthmask/errors.h"

namespace depthmask::detail {

struct ClassifiedFailure {
  Failure failure = Failure::Internal;  // the class the frame's failure records (failure_of)
  std::string message;                  // what the frame's failure says
  // Out of memory (ResourceError, or a foreign std::bad_alloc / OpenCV StsNoMem): the frame fails
  // and its slot (and writer) give back what they grew, so the frames after it start from nothing.
  bool out_of_memory = false;
  // Not null: the run stops with this PlatformError — the device is in a sticky error state
  // (backend.health() is not empty) and every later frame would fail too.
  std::exception_ptr fatal;
};

// Classifies `e`, what one stage of a frame threw (not null). Input and output errors, out of memory
// and anything unexpected fail the frame alone; a platform-class error (CudaError, PlatformError)
// stops the run when backend.health() reports a sticky device error. `at` names the frame in that
// fatal message ("frame 000003", "live frame 17").
ClassifiedFailure classify_frame_failure(const std::exception_ptr& e, MemoryBackend& backend, const std::string& at);

}  // namespace depthmask::detail
