// The C ABI (depthmask_c.h) over the C++ facade: every entry point catches everything, keeps the
// message for dm_last_error() on the calling thread and returns the failure class's status.
#include "depthmask/depthmask_c.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <string>
#include <vector>

#include "depthmask/detail/summary_json.h"
#include "depthmask/doctor.h"
#include "depthmask/errors.h"
#include "depthmask/logging.h"
#include "depthmask/masker.h"
#include "depthmask/version.h"
#include "image_kinds.h"

struct dm_masker {
  explicit dm_masker(depthmask::Masker m)
      : masker(std::move(m)), backend(depthmask::to_string(masker.backend())), reason(masker.reason()) {}
  depthmask::Masker masker;
  std::string backend;
  std::string reason;
};

namespace {

using namespace depthmask;

// dm_status is the exit codes' list in C (depthmask_c.h cannot include C++).
static_assert(DM_OK == exit_codes::kOk && DM_ERROR_INPUT == exit_codes::kInput &&
              DM_ERROR_CONFIG == exit_codes::kConfig && DM_ERROR_PLATFORM == exit_codes::kPlatform &&
              DM_ERROR_RESOURCE == exit_codes::kResource && DM_ERROR_BUSY == exit_codes::kBusy &&
              DM_ERROR_INTERNAL == exit_codes::kInternal && DM_ERROR_INTERRUPTED == exit_codes::kInterrupted);

thread_local std::string t_error;

// Runs `f`, turning any exception into its status and this thread's message.
template <class F>
int guarded(F&& f) noexcept {
  try {
    f();
    t_error.clear();
    return DM_OK;
  } catch (const std::exception& e) {
    try {
      t_error = e.what();
    } catch (...) {
      t_error.clear();
    }
    return exit_code(failure_of(e));
  } catch (...) {
    t_error = "an exception that is not a std::exception";
    return DM_ERROR_INTERNAL;
  }
}

char* copy_string(const std::string& s) {
  char* p = new char[s.size() + 1];
  std::memcpy(p, s.c_str(), s.size() + 1);
  return p;
}

std::vector<std::string> strings(const char* const* items, size_t n, const char* what) {
  std::vector<std::string> v;
  if (n == 0) return v;
  DM_EXPECT(items != nullptr, ConfigError, what << ": " << n << " overrides but a null array");
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    DM_EXPECT(items[i] != nullptr, ConfigError, what << ": override " << i << " is a null string");
    v.emplace_back(items[i]);
  }
  return v;
}

// A dm_image as the facade's view; `role` names it in messages. Colour images are rows x cols x 3.
ImageRef view_of(const dm_image* im, const char* role, bool color) {
  DM_EXPECT(im != nullptr, InputError, role << " is a null dm_image");
  ImageRef r;
  r.data = im->data;
  const detail::MemoryKindRow* memory =
      detail::find_row(detail::kMemoryKinds, &detail::MemoryKindRow::memory, im->memory);
  if (memory == nullptr)
    throw InputError(std::string(role) + ": memory " + std::to_string(im->memory) +
                     " is none of DM_MEMORY_HOST, DM_MEMORY_CUDA, DM_MEMORY_MAPPED");
  r.memory = memory->value;
  r.device = im->device;
  const detail::PixelKind* type = detail::find_row(detail::kPixelKinds, &detail::PixelKind::dtype, im->dtype);
  if (type == nullptr)
    throw InputError(std::string(role) + ": dtype " + std::to_string(im->dtype) + " is not a dm_dtype");
  r.type = type->value;
  r.read_only = im->read_only != 0;
  if (color) {
    DM_EXPECT(im->ndim == 3 && im->shape[2] == 3, InputError,
              role << " has " << im->ndim << " dimensions: expected rows x cols x 3 (BGR)");
    DM_EXPECT(im->strides[2] == static_cast<int64_t>(pixel_bytes(r.type)), InputError,
              role << "'s channels are " << im->strides[2] << " bytes apart: expected them interleaved (BGRBGR...)");
    r.channels = 3;
    r.rows = im->shape[0];
    r.cols = im->shape[1];
    r.row_stride = im->strides[0];
    r.col_stride = im->strides[1];
    return r;
  }
  DM_EXPECT(im->ndim == 2 || im->ndim == 3, InputError,
            role << " has " << im->ndim << " dimensions: expected 2 (rows x cols) or 3 (frames x rows x cols)");
  const int o = im->ndim - 2;
  if (im->ndim == 3) {
    r.frames = im->shape[0];
    r.frame_stride = im->strides[0];
  }
  r.rows = im->shape[o];
  r.cols = im->shape[o + 1];
  r.row_stride = im->strides[o];
  r.col_stride = im->strides[o + 1];
  return r;
}

using depthmask::detail::summary_json;

}  // namespace

extern "C" {

const char* dm_version(void) { return DEPTHMASK_VERSION; }
int dm_abi_version(void) { return DM_ABI_VERSION; }
int dm_cuda_built(void) { return DEPTHMASK_HAVE_CUDA ? 1 : 0; }
const char* dm_last_error(void) { return t_error.c_str(); }

void dm_set_log_callback(dm_log_fn fn, void* user, int min_level) {
  (void)guarded([&] {
    if (fn == nullptr) {
      set_log_callback(nullptr, min_level);
      return;
    }
    // The line is NUL-terminated (logging.h), so it goes to C as it is.
    set_log_callback([fn, user](int level, std::string_view line) { fn(user, level, line.data()); }, min_level);
  });
}

int dm_masker_open(const char* config_path, const char* config_yaml, const char* const* overrides, size_t n_overrides,
                   dm_masker** out) {
  return guarded([&] {
    DM_EXPECT(out != nullptr, ConfigError, "dm_masker_open: out is null");
    *out = nullptr;
    DM_EXPECT(config_path == nullptr || config_yaml == nullptr, ConfigError,
              "dm_masker_open: give config_path or config_yaml, not both");
    const std::vector<std::string> ov = strings(overrides, n_overrides, "dm_masker_open");
    Masker m = config_path   ? Masker::from_file(config_path, ov)
               : config_yaml ? Masker::from_yaml(config_yaml, ov)
                             : Masker::from_yaml("", ov);
    *out = new dm_masker(std::move(m));
  });
}

void dm_masker_close(dm_masker* masker) { delete masker; }

const char* dm_masker_backend(const dm_masker* masker) { return masker ? masker->backend.c_str() : ""; }
const char* dm_masker_reason(const dm_masker* masker) { return masker ? masker->reason.c_str() : ""; }
int dm_masker_device(const dm_masker* masker) { return masker ? masker->masker.device() : -1; }

int dm_masker_config_yaml(const dm_masker* masker, char** yaml) {
  return guarded([&] {
    DM_EXPECT(masker != nullptr && yaml != nullptr, ConfigError, "dm_masker_config_yaml: a null argument");
    *yaml = copy_string(to_yaml(masker->masker.config()));
  });
}

int dm_masker_mask(dm_masker* masker, const dm_image* depth, const dm_image* mask, const dm_image* color,
                   const dm_image* out, void* cuda_stream) {
  return guarded([&] {
    DM_EXPECT(masker != nullptr, ConfigError, "dm_masker_mask: the masker is null");
    const ImageRef d = view_of(depth, "depth", false), m = view_of(mask, "mask", false), o = view_of(out, "out", false);
    ImageRef c;
    if (color) c = view_of(color, "color", true);
    masker->masker.mask(d, m, o, color ? &c : nullptr, static_cast<CUstream_st*>(cuda_stream));
  });
}

int dm_masker_run(dm_masker* masker, const char* input, const char* output, const char* const* overrides,
                  size_t n_overrides, dm_progress_fn progress, void* user, char** summary_json_out) {
  int status = DM_OK;
  std::string message;
  const int rc = guarded([&] {
    DM_EXPECT(masker != nullptr, ConfigError, "dm_masker_run: the masker is null");
    if (summary_json_out) *summary_json_out = nullptr;
    RunRequest r;
    if (input) r.input = input;
    if (output) r.output = output;
    r.overrides = strings(overrides, n_overrides, "dm_masker_run");
    if (progress) r.progress = [progress, user](size_t done, size_t total) { progress(user, done, total); };
    const RunSummary s = masker->masker.run(r);
    if (summary_json_out) *summary_json_out = copy_string(summary_json(s).dump());
    status = exit_code(s);
    if (status != DM_OK) {
      // The summary has the details; the message says what the CLI's summary would.
      message = std::to_string(s.failed) + " of " + std::to_string(s.total) + " frame(s) failed" +
                (s.interrupted ? ", interrupted" : "") +
                (s.failures.empty() ? std::string() : ": " + s.failures.front().message);
      if (!s.manifest_error.empty()) message += "; manifest not saved: " + s.manifest_error;
    }
  });
  if (rc != DM_OK) return rc;
  t_error = message;
  return status;
}

void dm_masker_cancel(dm_masker* masker) {
  if (masker) masker->masker.cancel();
}

int dm_doctor(const char* config_path, const char* config_yaml, const char* input, const char* const* overrides,
              size_t n_overrides, size_t sample, char** report_json) {
  return guarded([&] {
    DM_EXPECT(report_json != nullptr, ConfigError, "dm_doctor: report_json is null");
    *report_json = nullptr;
    DM_EXPECT(config_path == nullptr || config_yaml == nullptr, ConfigError,
              "dm_doctor: give config_path or config_yaml, not both");
    std::vector<Override> ov;
    for (const std::string& s : strings(overrides, n_overrides, "dm_doctor")) ov.push_back(parse_override(s));
    if (input) ov.push_back({"input.root", input, "input", true});
    const std::filesystem::path cwd = std::filesystem::current_path();
    const Config c = config_path
                         ? load_config(std::filesystem::path(config_path), ov)
                         : load_config_text(config_yaml ? config_yaml : "", "the configuration text", cwd, ov, cwd);
    DoctorOptions o;
    o.sample = sample;
    *report_json = copy_string(diagnose(c, o).to_json());
  });
}

void dm_string_free(char* s) { delete[] s; }

}  // extern "C"
