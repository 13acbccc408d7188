/** \file
 * depthmask's C ABI: plain C, opaque handles, int status codes, no C++ types or exceptions across it.
 * It is what the Python package binds to (ctypes), and what Rust, Julia or C# bindings would use.
 *
 *   dm_masker* m = NULL;
 *   if (dm_masker_open(NULL, "depth: {scale: 0.001}", NULL, 0, &m) != DM_OK) puts(dm_last_error());
 *   dm_image depth = {...}, mask = {...}, out = {...};
 *   int rc = dm_masker_mask(m, &depth, &mask, NULL, &out, NULL);
 *   dm_masker_close(m);
 *
 * Stability: functions are only ever added; dm_image's layout is fixed for DM_ABI_VERSION 1.
 * Thread safety: every function may be called from any thread; one dm_masker may mask from several
 * threads at once. Error messages are per thread (dm_last_error). */
#ifndef DEPTHMASK_DEPTHMASK_C_H
#define DEPTHMASK_DEPTHMASK_C_H

#include <stddef.h>
#include <stdint.h>

/** Marks the functions the library exports. */
#if defined(_WIN32)
#define DM_API __declspec(dllimport)
#elif defined(__GNUC__)
#define DM_API __attribute__((visibility("default")))
#else
#define DM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes (dm_abi_version() says the library's). */
#define DM_ABI_VERSION 1

/** Status codes: 0 success, else the failure class (the CLI's exit codes). */
enum dm_status {
  DM_OK = 0,
  DM_ERROR_INPUT = 1,        /**< a bad input: image, array, file (the message names it) */
  DM_ERROR_CONFIG = 2,       /**< a bad configuration key or value, or a call the configuration cannot serve */
  DM_ERROR_PLATFORM = 3,     /**< the backend cannot run here (no GPU, a CUDA error) */
  DM_ERROR_RESOURCE = 4,     /**< out of memory, disk full, an output folder gone */
  DM_ERROR_BUSY = 5,         /**< another process runs the same shard of the same output folder */
  DM_ERROR_INTERNAL = 70,    /**< a bug: please report the message */
  DM_ERROR_INTERRUPTED = 130 /**< cancelled (dm_masker_cancel) */
};

/** Where an image's memory lives. */
enum dm_memory {
  DM_MEMORY_HOST = 0,  /**< host memory (pageable or pinned) */
  DM_MEMORY_CUDA = 1,  /**< CUDA device memory of dm_image.device */
  DM_MEMORY_MAPPED = 2 /**< host memory the device reads (mapped pinned, managed): data is the device pointer */
};

/** Pixel types. */
enum dm_dtype {
  DM_DTYPE_UINT8 = 1,
  DM_DTYPE_UINT16 = 2,
  DM_DTYPE_FLOAT32 = 3,
  DM_DTYPE_BOOL = 4 /**< one byte per pixel, 0 or 1: an 8-bit mask */
};

/** One image (ndim 2: rows, cols) or a stack (ndim 3: frames, rows, cols), with strides in bytes.
 *  The column stride must equal the pixel size; strides must be positive multiples of it (a frame
 *  stride may be 0: one image for every frame). */
typedef struct dm_image {
  void* data;         /**< the first pixel of the first frame */
  int32_t memory;     /**< enum dm_memory */
  int32_t device;     /**< CUDA device of DM_MEMORY_CUDA / DM_MEMORY_MAPPED; -1 for host */
  int32_t dtype;      /**< enum dm_dtype */
  int32_t ndim;       /**< 2 or 3 */
  int64_t shape[3];   /**< the first `ndim` are used: (rows, cols) or (frames, rows, cols) */
  int64_t strides[3]; /**< bytes between neighbours along each of the `ndim` axes */
  int32_t read_only;  /**< nonzero: the memory must not be written (refused as an output) */
  int32_t reserved;   /**< 0 */
} dm_image;

/** A masker (opaque): dm_masker_open makes one, dm_masker_close ends it. */
typedef struct dm_masker dm_masker;

/** The library's version ("0.1.0"), and the ABI version it implements. */
DM_API const char* dm_version(void);
/** The ABI version this library implements (DM_ABI_VERSION of the header it was built with). */
DM_API int dm_abi_version(void);
/** Whether this build has CUDA (1) or is CPU-only (0). */
DM_API int dm_cuda_built(void);

/** The message of the last failed call on this thread (the CLI's message: file, frame, key, what
 *  was expected); "" after a success. Valid until the thread's next call. */
DM_API const char* dm_last_error(void);

/** Log lines: level 0 trace, 1 debug, 2 info, 3 warn, 4 error, 5 critical, 6 off. */
typedef void (*dm_log_fn)(void* user, int level, const char* message);
/** Routes the library's log lines at `min_level` and above to `fn` (from any of the library's threads,
 *  one line at a time) instead of stderr; NULL restores stderr. Process-wide: the library's own
 *  logger, never the host program's. `fn` must not call this function or cause the library to log
 *  (it would wait for itself); once this returns, the previous callback is no longer called. */
DM_API void dm_set_log_callback(dm_log_fn fn, void* user, int min_level);

/** Opens a masker: the configuration from `config_path` (a YAML file) or `config_yaml` (YAML text), at
 *  most one of them non-NULL, then `overrides` (`n_overrides` strings "key.path=value", the CLI's
 *  --set). Starts the backend. On success *out is the handle (close it with dm_masker_close). */
DM_API int dm_masker_open(const char* config_path, const char* config_yaml, const char* const* overrides,
                          size_t n_overrides, dm_masker** out);
/** Closes a masker (NULL is fine). Wait for its runs and masks to return first. */
DM_API void dm_masker_close(dm_masker* masker);

/** The backend in use ("cpu", "copy", "zero_copy", "managed") and why auto chose it; valid until close. */
DM_API const char* dm_masker_backend(const dm_masker* masker);
/** Why the backend was chosen (auto's reason, or that it was asked for); valid until close. */
DM_API const char* dm_masker_reason(const dm_masker* masker);
/** The CUDA device of a GPU backend, -1 for cpu. */
DM_API int dm_masker_device(const dm_masker* masker);
/** The configuration in effect as YAML; free it with dm_string_free. */
DM_API int dm_masker_config_yaml(const dm_masker* masker, char** yaml);

/** Masks depth (uint16 raw units or float32 metres) by mask (uint8, uint16 or bool; the depth's shape,
 *  or one rows x cols image for a whole depth stack) into out (float32 metres, depth's shape). color:
 *  NULL, or the BGR image a colour key reads (host uint8, ndim 3, shape rows x cols x 3, strides
 *  row, 3, 1; single frames). Host memory: returns when out is written. Device memory (a GPU backend
 *  on the same device): enqueued on `cuda_stream` (a cudaStream_t; NULL: the default stream), returns
 *  at once; a stack is one launch. */
DM_API int dm_masker_mask(dm_masker* masker, const dm_image* depth, const dm_image* mask, const dm_image* color,
                          const dm_image* out, void* cuda_stream);

/** Progress of a run: frames committed so far and frames listed. Called from the run's threads. */
typedef void (*dm_progress_fn)(void* user, uint64_t done, uint64_t total);
/** The batch job: input.root = input and output.dir = output (NULL: the configuration's), then
 *  overrides; resume, outputs and summary as the CLI's `depthmask run`. *summary_json (when not NULL)
 *  receives the summary as JSON (free it with dm_string_free), also when frames failed or the run was
 *  cancelled. Returns the CLI's exit status of the run (DM_OK, or the most severe failure class). */
DM_API int dm_masker_run(dm_masker* masker, const char* input, const char* output, const char* const* overrides,
                         size_t n_overrides, dm_progress_fn progress, void* user, char** summary_json);
/** Cancels the run in progress on this masker (or its next run when none is): frames in flight finish. */
DM_API void dm_masker_cancel(dm_masker* masker);

/** `depthmask doctor` (depthmask/doctor.h, docs/DOCTOR.md): checks a dataset as the CLI's doctor does.
 *  The configuration from `config_path` or `config_yaml` (at most one non-NULL), then `overrides`,
 *  then input.root = `input` (NULL: the configuration's); `sample`: frames to decode (the CLI's
 *  --sample). *report_json receives the report as JSON (its exit_code / exit_code_strict fields say
 *  what the CLI would exit with; free it with dm_string_free). Returns DM_OK when the report was
 *  made, whatever it found; a configuration error's status otherwise. */
DM_API int dm_doctor(const char* config_path, const char* config_yaml, const char* input, const char* const* overrides,
                     size_t n_overrides, size_t sample, char** report_json);

/** Frees a string the library returned. */
DM_API void dm_string_free(char* s);

#ifdef __cplusplus
}
#endif

#endif /* DEPTHMASK_DEPTHMASK_C_H */
