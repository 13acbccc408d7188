#include "compression.h"

#include <algorithm>
#include <stdexcept>

#if defined(DEPTHMASK_WITH_ROSBAG) && DEPTHMASK_WITH_ROSBAG
#include <lz4frame.h>
#include <zstd.h>

#include <memory>
#endif

namespace depthmask::detail {

#if defined(DEPTHMASK_WITH_ROSBAG) && DEPTHMASK_WITH_ROSBAG

bool rosbag_built() { return true; }

std::string zstd_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t dst_size) {
  const size_t got = ZSTD_decompress(dst, dst_size, src, size);
  if (ZSTD_isError(got)) return std::string("zstd: ") + ZSTD_getErrorName(got);
  if (got != dst_size) {
    return "zstd gave " + std::to_string(got) + " bytes where " + std::to_string(dst_size) + " were declared";
  }
  return "";
}

std::string zstd_decompress_bounded(const uint8_t* src, size_t size, size_t cap, std::vector<uint8_t>& out) {
  out.clear();
  const unsigned long long declared = ZSTD_getFrameContentSize(src, size);
  if (declared == ZSTD_CONTENTSIZE_ERROR) return "it is not a zstd frame";
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN) {
    if (declared > cap) return "its zstd frame declares " + std::to_string(declared) + " bytes, over the bound";
    out.resize(static_cast<size_t>(declared));
    return zstd_decompress(src, size, out.data(), out.size());
  }
  // No declared size: stream, growing the output up to the bound.
  std::unique_ptr<ZSTD_DStream, size_t (*)(ZSTD_DStream*)> ds(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!ds) throw std::bad_alloc();
  ZSTD_inBuffer in{src, size, 0};
  size_t ret = 1;
  while (ret != 0) {
    if (out.size() >= cap) return "it decompresses to more than the bound";
    const size_t old = out.size();
    out.resize(std::min(cap, std::max<size_t>(old * 2, 1 << 16)));
    ZSTD_outBuffer ob{out.data() + old, out.size() - old, 0};
    ret = ZSTD_decompressStream(ds.get(), &ob, &in);
    out.resize(old + ob.pos);
    if (ZSTD_isError(ret)) return std::string("zstd: ") + ZSTD_getErrorName(ret);
    if (ret != 0 && in.pos == in.size && ob.pos < ob.size) return "its zstd frame is cut short";
  }
  return "";
}

std::string lz4f_decompress(const uint8_t* src, size_t size, uint8_t* dst, size_t dst_size) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) throw std::bad_alloc();
  std::unique_ptr<LZ4F_dctx, LZ4F_errorCode_t (*)(LZ4F_dctx*)> dctx(raw, LZ4F_freeDecompressionContext);
  size_t in_pos = 0;
  size_t out_pos = 0;
  while (in_pos < size) {
    size_t in_n = size - in_pos;
    size_t out_n = dst_size - out_pos;
    const size_t hint = LZ4F_decompress(dctx.get(), dst + out_pos, &out_n, src + in_pos, &in_n, nullptr);
    if (LZ4F_isError(hint)) return std::string("lz4: ") + LZ4F_getErrorName(hint);
    in_pos += in_n;
    out_pos += out_n;
    if (in_n == 0 && out_n == 0) {
      return "lz4 gives more than the " + std::to_string(dst_size) + " bytes declared";
    }
    if (hint == 0 && in_pos < size) LZ4F_resetDecompressionContext(dctx.get());  // the next frame
    if (hint != 0 && in_pos == size) return "its lz4 frame is cut short";
  }
  if (out_pos != dst_size) {
    return "lz4 gave " + std::to_string(out_pos) + " bytes where " + std::to_string(dst_size) + " were declared";
  }
  return "";
}

std::vector<uint8_t> zstd_compress(const uint8_t* src, size_t size, int level) {
  std::vector<uint8_t> out(ZSTD_compressBound(size));
  const size_t n = ZSTD_compress(out.data(), out.size(), src, size, level);
  if (ZSTD_isError(n)) throw std::runtime_error(std::string("zstd: ") + ZSTD_getErrorName(n));
  out.resize(n);
  return out;
}

std::vector<uint8_t> lz4f_compress(const uint8_t* src, size_t size) {
  LZ4F_preferences_t prefs{};
  prefs.frameInfo.contentSize = size;
  std::vector<uint8_t> out(LZ4F_compressFrameBound(size, &prefs));
  const size_t n = LZ4F_compressFrame(out.data(), out.size(), src, size, &prefs);
  if (LZ4F_isError(n)) throw std::runtime_error(std::string("lz4: ") + LZ4F_getErrorName(n));
  out.resize(n);
  return out;
}

#else  // built without the bag libraries: the readers and writers refuse before they get here

bool rosbag_built() { return false; }
std::string zstd_decompress(const uint8_t*, size_t, uint8_t*, size_t) { return kNoRosbag; }
std::string zstd_decompress_bounded(const uint8_t*, size_t, size_t, std::vector<uint8_t>&) { return kNoRosbag; }
std::string lz4f_decompress(const uint8_t*, size_t, uint8_t*, size_t) { return kNoRosbag; }
std::vector<uint8_t> zstd_compress(const uint8_t*, size_t, int) { throw std::logic_error(kNoRosbag); }
std::vector<uint8_t> lz4f_compress(const uint8_t*, size_t) { throw std::logic_error(kNoRosbag); }

#endif

}  // namespace depthmask::detail
