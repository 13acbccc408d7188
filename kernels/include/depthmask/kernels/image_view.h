// The kernels' two image handles, shared by every job (mask, colour key, registration, backprojection)
// and by the CUDA kernels and CPU loops that walk them:
//   Plane<T>     — a pointer and a row step in bytes (OpenCV's PtrStep): one image plane of a job,
//                  whose rows x cols the job states once for all its planes.
//   ImageView<T> — the same with rows and cols: what a loop or a kernel walks.
// Both are non-owning and trivially copyable (kernels take them by value); they work for host,
// mapped and device memory alike, and for ROIs of larger (pitched) images. T may be const and may be
// void (a type-erased plane whose pixel type the job names: view<U>() gives the typed view).
//
// check_plane() is the one check of a job's plane (null, alignment, a step shorter than a row) that
// every job's validate() calls, so all four say the same things the same way.
//
// Safe to include from plain C++ (no CUDA headers needed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define DM_HD __host__ __device__
#else
#define DM_HD
#endif

namespace depthmask {

namespace detail {
// Byte pointer arithmetic that keeps T's constness.
template <class T>
using ByteOf = std::conditional_t<std::is_const_v<T>, const unsigned char, unsigned char>;
template <class To, class From>
DM_HD inline To* offset_bytes(From* p, size_t bytes) {
  return reinterpret_cast<To*>(reinterpret_cast<ByteOf<From>*>(p) + bytes);
}
}  // namespace detail

template <class T>
struct ImageView {
  T* data = nullptr;
  size_t step = 0;  // bytes between the starts of consecutive rows
  int rows = 0;
  int cols = 0;

  DM_HD T* row(int y) const { return detail::offset_bytes<T>(data, static_cast<size_t>(y) * step); }
  DM_HD bool empty() const { return data == nullptr || rows <= 0 || cols <= 0; }
};

template <class T>
struct Plane {
  T* data = nullptr;
  size_t step = 0;  // bytes between the starts of consecutive rows

  // Row y's first pixel.
  DM_HD T* row(int y) const { return detail::offset_bytes<T>(data, static_cast<size_t>(y) * step); }
  // The plane from row y on (a band of rows of the same image).
  DM_HD Plane from_row(int y) const { return Plane{row(y), step}; }
  // The typed view of rows x cols pixels of type U (T's pixel type, or the job's for a void plane).
  template <class U = T>
  DM_HD ImageView<U> view(int rows, int cols) const {
    static_assert(std::is_const_v<U> || !std::is_const_v<T>, "a const plane gives const views");
    return ImageView<U>{static_cast<U*>(const_cast<std::remove_cv_t<T>*>(data)), step, rows, cols};
  }
  // A mutable plane reads as a const one, a typed plane as a type-erased one (and both).
  template <class U, class = std::enable_if_t<std::is_convertible_v<T*, U*> && !std::is_same_v<T, U>>>
  DM_HD operator Plane<U>() const {
    return Plane<U>{data, step};
  }
};

// Throws std::invalid_argument "<job>: <name> ..." for the first problem of a non-empty job's plane:
// a null pointer, a pointer or step not a multiple of `align` bytes (misaligned element access is
// undefined on the CPU and a sticky error on the GPU, atomics included), or a step shorter than `cols`
// pixels of `pixel_bytes` bytes.
void check_plane(const char* job, const char* name, Plane<const void> plane, size_t pixel_bytes, size_t align,
                 int cols);

}  // namespace depthmask
