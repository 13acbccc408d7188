/* mask_frame_c: the C ABI alone (depthmask/depthmask_c.h), linked through pkg-config. C has no PNG
 * decoder, so it masks a synthetic 64x48 frame built in memory (rows padded, as a camera's buffers
 * may be), checks every output pixel against the rule, and checks that a bad call fails with a
 * message. Prints one line and exits 0 when everything matches, 1 otherwise. */
#include <depthmask/depthmask_c.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kRows = 48, kCols = 64, kDepthPitch = 72 /* pixels per depth row: 8 of padding */ };

static dm_image image2d(void* data, int32_t dtype, int64_t row_bytes, int64_t pixel_bytes) {
  dm_image im;
  memset(&im, 0, sizeof im);
  im.data = data;
  im.memory = DM_MEMORY_HOST;
  im.device = -1;
  im.dtype = dtype;
  im.ndim = 2;
  im.shape[0] = kRows;
  im.shape[1] = kCols;
  im.strides[0] = row_bytes;
  im.strides[1] = pixel_bytes;
  return im;
}

static int fail(const char* what) {
  fprintf(stderr, "mask_frame_c: %s: %s\n", what, dm_last_error());
  return 1;
}

int main(void) {
  static uint16_t depth[kRows][kDepthPitch];
  static uint8_t mask[kRows][kCols];
  static float out[kRows][kCols];
  dm_masker* m = NULL;
  if (dm_abi_version() != DM_ABI_VERSION) {
    fprintf(stderr, "mask_frame_c: library ABI %d, header ABI %d\n", dm_abi_version(), DM_ABI_VERSION);
    return 1;
  }
  /* Millimetres 0..2599 (0: no measurement, above 2000: beyond depth.max), labels 0..2 in 8x8 blocks. */
  for (int y = 0; y < kRows; ++y) {
    for (int x = 0; x < kDepthPitch; ++x) depth[y][x] = (uint16_t)((x * 97 + y * 53) % 2600);
    for (int x = 0; x < kCols; ++x) mask[y][x] = (uint8_t)((x / 8 + y / 8) % 3);
  }
  if (dm_masker_open(NULL, "depth: {scale: 0.001, max: 2}", NULL, 0, &m) != DM_OK) return fail("dm_masker_open");
  dm_image d = image2d(depth, DM_DTYPE_UINT16, sizeof depth[0], sizeof depth[0][0]);
  dm_image k = image2d(mask, DM_DTYPE_UINT8, sizeof mask[0], sizeof mask[0][0]);
  dm_image o = image2d(out, DM_DTYPE_FLOAT32, sizeof out[0], sizeof out[0][0]);
  if (dm_masker_mask(m, &d, &k, NULL, &o, NULL) != DM_OK) {
    dm_masker_close(m);
    return fail("dm_masker_mask");
  }
  int kept = 0, wrong = 0;
  for (int y = 0; y < kRows; ++y) {
    for (int x = 0; x < kCols; ++x) {
      const uint16_t raw = depth[y][x];
      const int keep = mask[y][x] > 0 && raw > 0 && raw <= 2000;
      const float want = keep ? (float)raw * 0.001f : 0.0f; /* the rule: raw * (float)scale, else invalid 0 */
      kept += keep;
      if (out[y][x] != want && wrong++ < 5)
        fprintf(stderr, "mask_frame_c: (%d, %d): %g, expected %g\n", x, y, out[y][x], want);
    }
  }
  /* A mask of another size is refused with a message. */
  k.shape[0] = kRows - 1;
  const int rc = dm_masker_mask(m, &d, &k, NULL, &o, NULL);
  const int refused = rc == DM_ERROR_INPUT && dm_last_error()[0] != '\0';
  if (!refused)
    fprintf(stderr, "mask_frame_c: a mask of the wrong size gave status %d, expected %d\n", rc, DM_ERROR_INPUT);
  printf("depthmask %s (C ABI %d), backend %s: kept %d of %d pixels, %d wrong\n", dm_version(), dm_abi_version(),
         dm_masker_backend(m), kept, kRows * kCols, wrong);
  dm_masker_close(m);
  return wrong == 0 && refused ? 0 : 1;
}
