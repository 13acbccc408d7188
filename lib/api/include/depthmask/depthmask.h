/// \file
/// The umbrella header of the depthmask C++ library: everything a program that masks frames in memory
/// or runs the batch job needs. Link depthmask::depthmask (CMake) or `pkg-config --libs depthmask`.
///
/// \code
///   #include <depthmask/depthmask.h>
///   depthmask::Masker masker = depthmask::Masker::from_yaml("depth: {scale: 0.001}");
///   cv::Mat metres = masker.mask(depth, mask);
/// \endcode
///
/// The C ABI is depthmask/depthmask_c.h (plain C, for bindings); docs/CPP.md has the API.
#pragma once

#include "depthmask/config.h"       // Config, load_config, Override
#include "depthmask/errors.h"       // Error and one class per failure class; failure_of, exit_code
#include "depthmask/logging.h"      // where the library's log lines go
#include "depthmask/masker.h"       // Masker, ImageRef, RunRequest
#include "depthmask/run_summary.h"  // RunSummary
#include "depthmask/version.h"      // DEPTHMASK_VERSION
