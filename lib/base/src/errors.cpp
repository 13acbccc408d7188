#include "depthmask/errors.h"

#include <opencv2/core.hpp>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <new>
#include <system_error>

namespace depthmask {

namespace {
// Out of disk, quota or memory.
bool out_of_room(const std::error_code& c) {
  return c == std::errc::no_space_on_device || c == std::errc::not_enough_memory ||
         ((c.category() == std::generic_category() || c.category() == std::system_category()) && c.value() == EDQUOT);
}

// The order of most_severe().
int severity(Failure f) noexcept {
  switch (f) {
    case Failure::Input:
      return 0;
    case Failure::Config:
      return 1;
    case Failure::Resource:
      return 2;
    case Failure::Platform:
      return 3;
    case Failure::Internal:
      return 4;
    case Failure::Busy:
      return 5;
    case Failure::Interrupted:
      return 6;
  }
  return 4;
}
}  // namespace

Failure failure_of(const std::exception& e) noexcept {
  if (const auto* de = dynamic_cast<const Error*>(&e)) return de->failure();
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return Failure::Resource;
  if (const auto* ce = dynamic_cast<const cv::Exception*>(&e))
    return ce->code == cv::Error::StsNoMem ? Failure::Resource : Failure::Input;
  if (const auto* fe = dynamic_cast<const std::filesystem::filesystem_error*>(&e)) {
    const std::error_code c = fe->code();
    if (out_of_room(c) || c == std::errc::no_such_file_or_directory) return Failure::Resource;
    return Failure::Input;
  }
  // Other system errors (a thread that cannot be started, a descriptor table full): resource when
  // the system ran out of something, else a bug nobody expected.
  if (const auto* se = dynamic_cast<const std::system_error*>(&e)) {
    const std::error_code c = se->code();
    if (out_of_room(c) || c == std::errc::resource_unavailable_try_again || c == std::errc::too_many_files_open ||
        c == std::errc::too_many_files_open_in_system)
      return Failure::Resource;
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

Failure most_severe(Failure a, Failure b) noexcept { return severity(b) > severity(a) ? b : a; }

static_assert(exit_codes::kInterrupted == exit_codes::of_signal(SIGINT), "130 is what a shell reports for SIGINT");

int exit_code(Failure f) noexcept {
  switch (f) {
    case Failure::Input:
      return exit_codes::kInput;
    case Failure::Config:
      return exit_codes::kConfig;
    case Failure::Platform:
      return exit_codes::kPlatform;
    case Failure::Resource:
      return exit_codes::kResource;
    case Failure::Busy:
      return exit_codes::kBusy;
    case Failure::Interrupted:
      return exit_codes::kInterrupted;
    case Failure::Internal:
      return exit_codes::kInternal;
  }
  return exit_codes::kInternal;
}

}  // namespace depthmask
