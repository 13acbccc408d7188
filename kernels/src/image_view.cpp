// The one check of a job's plane (image_view.h), shared by the four jobs' validate().
#include "depthmask/kernels/image_view.h"

#include <stdexcept>
#include <string>

namespace depthmask {

void check_plane(const char* job, const char* name, Plane<const void> plane, size_t pixel_bytes, size_t align,
                 int cols) {
  const std::string what = std::string(job) + ": " + name;
  if (plane.data == nullptr) throw std::invalid_argument(what + " pointer is null");
  if (reinterpret_cast<uintptr_t>(plane.data) % align != 0 || plane.step % align != 0)
    throw std::invalid_argument(what + " pointer or row step is not aligned to " + std::to_string(align) + " bytes");
  if (plane.step < pixel_bytes * static_cast<size_t>(cols))
    throw std::invalid_argument(what + " row step " + std::to_string(plane.step) + " bytes is shorter than a row of " +
                                std::to_string(cols) + " pixels");
}

}  // namespace depthmask
