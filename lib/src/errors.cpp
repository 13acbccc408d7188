#include "depthmask/errors.h"

#include <opencv2/core.hpp>

#include <cerrno>
#include <filesystem>
#include <new>
#include <system_error>

namespace depthmask {

Failure failure_of(const std::exception& e) noexcept {
  if (const auto* de = dynamic_cast<const Error*>(&e)) return de->failure();
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return Failure::Resource;
  if (const auto* ce = dynamic_cast<const cv::Exception*>(&e))
    return ce->code == cv::Error::StsNoMem ? Failure::Resource : Failure::Input;
  if (const auto* fe = dynamic_cast<const std::filesystem::filesystem_error*>(&e)) {
    const std::error_code c = fe->code();
    if (c == std::errc::no_space_on_device || c == std::errc::not_enough_memory ||
        c == std::errc::no_such_file_or_directory || c.value() == EDQUOT)
      return Failure::Resource;
    return Failure::Input;
  }
  return Failure::Internal;
}

Failure failure_of(const std::exception_ptr& e) noexcept {
  if (!e) return Failure::Internal;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return failure_of(ex);
  } catch (...) {
    return Failure::Internal;
  }
}

int exit_code(Failure f) noexcept {
  switch (f) {
    case Failure::Input:
      return 1;
    case Failure::Config:
      return 2;
    case Failure::Platform:
      return 3;
    case Failure::Resource:
      return 4;
    case Failure::Interrupted:
      return 130;
    case Failure::Internal:
      return 70;
  }
  return 70;
}

}  // namespace depthmask
