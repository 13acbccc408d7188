// The CPU loop: the per-pixel rule from mask_rule.h over rows, in parallel with oneTBB.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "depthmask/kernels/mask_kernel.h"

namespace depthmask {

namespace {

// x86-64 builds target the baseline ISA (SSE2); the band loop below also gets an AVX2 copy, picked
// once at load time by the CPU (an ifunc), as OpenCV dispatches its own kernels. AVX2 only, no FMA
// (-ffp-contract=off besides): the rule only compares, converts and multiplies, which round the same
// in SSE and AVX lanes (`depthmask_microbench --benchmark_filter='^(CpuMask|CopyTo)/.*/threads:1$'`:
// 2-3x faster, docs/PERFORMANCE.md#code-notes). aarch64 keeps the plain loop.
// clang (the sanitizer and fuzz builds) does not clone function templates: the plain loop there.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DM_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DM_CPU_CLONES
#endif

template <class DepthT, class MaskT>
struct Views {
  ImageView<const DepthT> depth;
  ImageView<const MaskT> mask;
  ImageView<float> out;
  explicit Views(const MaskJob& job)
      : depth{job.depth.view<const DepthT>(job.rows, job.cols)},
        mask{job.mask.view<const MaskT>(job.rows, job.cols)},
        out{job.out.view(job.rows, job.cols)} {}
};

// One row of the plain pass: mask_pixel per pixel. `q` is the caller's local copy of the parameters:
// nothing in the row can alias it, so the compiler keeps its fields in registers and hoists the
// rule's per-frame choices out of the loop.
template <class DepthT, class MaskT>
inline void mask_row(const DepthT* d, const MaskT* m, float* o, int cols, const MaskParams& q) {
  for (int x = 0; x < cols; ++x) o[x] = mask_pixel(d[x], m[x], q);
}

// The rows of band r. The common rule (a threshold test, no label list, no extra invalid depth
// markers, plain 16-bit encoding) gets its own copy of the row loop with those settings as
// constants: mask_pixel's label and marker loops and the APC branch then vanish after inlining and
// the row is straight-line compares and selects, which the compiler vectorises (mixed u8/u16/float
// lanes). Same rule, same bits; the other rules take the general loop.
template <class DepthT, class MaskT>
DM_CPU_CLONES void mask_rows(const Views<DepthT, MaskT>& v, const tbb::blocked_range<int>& r, const MaskParams& p) {
  if (is_common_case(p)) {
    const MaskParams q = common_params(p);
    for (int y = r.begin(); y != r.end(); ++y) mask_row(v.depth.row(y), v.mask.row(y), v.out.row(y), v.out.cols, q);
  } else {
    for (int y = r.begin(); y != r.end(); ++y) mask_row(v.depth.row(y), v.mask.row(y), v.out.row(y), v.out.cols, p);
  }
}

template <class DepthT, class MaskT>
void run_rows(const MaskJob& job, const MaskParams& p, int tasks) {
  const Views<DepthT, MaskT> v(job);
  if (tasks > 0) {  // exactly `tasks` bands
    const int grain = (job.rows + std::min(tasks, job.rows) - 1) / std::min(tasks, job.rows);
    tbb::parallel_for(
        tbb::blocked_range<int>(0, job.rows, grain), [&](const tbb::blocked_range<int>& r) { mask_rows(v, r, p); },
        tbb::simple_partitioner());
    return;
  }
  // Grain of 16 rows: a 640-wide row is ~3 KB of traffic, too little to be worth a task on its own.
  // (Tasks of at least 32K pixels measured no better on the H200 host: docs/PERFORMANCE.md.)
  tbb::parallel_for(tbb::blocked_range<int>(0, job.rows, 16),
                    [&](const tbb::blocked_range<int>& r) { mask_rows(v, r, p); });
}

// Erode: per band of output rows, the mask tests of the band plus an n-pixel border (1 outside the
// image), then the two separable passes of erode_run — the same helper as the GPU tile. Scratch
// rows are per thread and only grow, so steady state allocates nothing.
template <class DepthT, class MaskT>
void run_rows_eroded(const MaskJob& job, const MaskParams& p) {
  const Views<DepthT, MaskT> v(job);
  const int n = p.erode;
  const int w = job.cols + 2 * n;  // plane width: columns -n .. cols+n-1
  tbb::parallel_for(tbb::blocked_range<int>(0, job.rows, 32), [&](const tbb::blocked_range<int>& r) {
    thread_local std::vector<uint8_t> tests, hrun;
    const int y0 = r.begin() - n;                 // image row of the first plane row (may be negative)
    const int h = (r.end() - r.begin()) + 2 * n;  // plane rows
    const size_t cols = static_cast<size_t>(job.cols);
    if (tests.size() < static_cast<size_t>(w)) tests.resize(static_cast<size_t>(w));
    if (hrun.size() < static_cast<size_t>(h) * cols) hrun.resize(static_cast<size_t>(h) * cols);
    uint8_t* t = tests.data();
    for (int c = 0; c < n; ++c) t[c] = 1, t[w - 1 - c] = 1;
    for (int i = 0; i < h; ++i) {
      const int y = y0 + i;
      uint8_t* hr = hrun.data() + static_cast<size_t>(i) * cols;
      if (y < 0 || y >= job.rows) {  // outside the image: every test passes
        for (size_t x = 0; x < cols; ++x) hr[x] = 1;
        continue;
      }
      // One row of tests (plane columns 0..w-1 are image columns -n..cols+n-1), then the horizontal
      // pass: hr[x] covers plane columns x..x+2n, i.e. image columns x-n..x+n.
      const MaskT* m = v.mask.row(y);
      for (int x = 0; x < job.cols; ++x) t[n + x] = mask_keeps(m[x], p) ? 1 : 0;
      for (int x = 0; x < job.cols; ++x) hr[x] = erode_run(t + x, n, 1);
    }
    for (int y = r.begin(); y != r.end(); ++y) {
      const DepthT* d = v.depth.row(y);
      float* o = v.out.row(y);
      // Vertical pass: plane rows (y - n) - y0 .. +2n, i.e. image rows y-n .. y+n.
      const uint8_t* col0 = hrun.data() + static_cast<size_t>(y - n - y0) * cols;
      for (int x = 0; x < job.cols; ++x) o[x] = depth_pixel(d[x], erode_run(col0 + x, n, job.cols) != 0, p);
    }
  });
}

template <class DepthT, class MaskT>
void run_typed(const MaskJob& job, const MaskParams& p, int tasks) {
  if (p.erode > 0)
    run_rows_eroded<DepthT, MaskT>(job, p);
  else
    run_rows<DepthT, MaskT>(job, p, tasks);
}

}  // namespace

void mask_cpu(const MaskJob& job, const MaskParams& params, int tasks) {
  validate(job);
  validate(params);
  if (tasks < 0)
    throw std::invalid_argument("mask_cpu: tasks must be 0 (automatic) or positive, got " + std::to_string(tasks));
  if (job.rows == 0 || job.cols == 0) return;
  const bool d16 = job.depth_type == DepthType::U16;
  const bool m8 = job.mask_type == MaskType::U8;
  if (d16 && m8)
    run_typed<uint16_t, uint8_t>(job, params, tasks);
  else if (d16)
    run_typed<uint16_t, uint16_t>(job, params, tasks);
  else if (m8)
    run_typed<float, uint8_t>(job, params, tasks);
  else
    run_typed<float, uint16_t>(job, params, tasks);
}

}  // namespace depthmask
