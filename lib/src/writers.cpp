#include "depthmask/writers.h"

#include <fcntl.h>
#include <unistd.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <random>

#include "depthmask/errors.h"

namespace fs = std::filesystem;

namespace depthmask {

namespace {

std::string sys_error(int e) { return std::strerror(e); }

// Unique per process and call, so parallel writers never share a temporary name.
std::string temp_name(const fs::path& path) {
  static std::atomic<uint64_t> counter{0};
  return "." + path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

void write_file_atomic(const fs::path& path, const void* data, size_t bytes, bool do_fsync) {
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  const fs::path tmp = dir / temp_name(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  DM_EXPECT(fd >= 0, OutputError, "cannot write '" << path.string() << "': " << sys_error(errno));
  auto fail = [&](const char* step) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw OutputError("cannot write '" + path.string() + "' (" + step + "): " + sys_error(e));
  };
  const auto* p = static_cast<const uint8_t*>(data);
  size_t left = bytes;
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (do_fsync && ::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw OutputError("cannot write '" + path.string() + "' (close): " + sys_error(e));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw OutputError("cannot write '" + path.string() + "' (rename): " + sys_error(e));
  }
  if (do_fsync) {
    // Make the rename itself durable.
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      (void)::fsync(dfd);
      ::close(dfd);
    }
  }
}

std::vector<uint8_t> encode_npy(const cv::Mat& m) {
  DM_EXPECT(m.type() == CV_32FC1, std::invalid_argument, "encode_npy: expected CV_32FC1");
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(m.rows) + ", " +
                       std::to_string(m.cols) + "), }";
  // magic(6) + version(2) + header length(2) + header + '\n', padded with spaces to a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out;
  out.reserve(10 + header.size() + m.total() * 4);
  const uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.insert(out.end(), magic, magic + 8);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  for (int y = 0; y < m.rows; ++y) {
    const auto* row = m.ptr<uint8_t>(y);
    out.insert(out.end(), row, row + static_cast<size_t>(m.cols) * 4);  // x86-64 and aarch64 are little-endian
  }
  return out;
}

cv::Mat decode_npy(const std::vector<uint8_t>& b, const std::string& name) {
  DM_EXPECT(b.size() >= 10 && b[0] == 0x93 && std::memcmp(&b[1], "NUMPY", 5) == 0, InputError,
            "'" << name << "' is not a .npy file");
  DM_EXPECT(b[6] == 1, InputError, "'" << name << "': only .npy format 1.x is read");
  const size_t hlen = b[8] | (static_cast<size_t>(b[9]) << 8);
  DM_EXPECT(b.size() >= 10 + hlen, InputError, "'" << name << "': truncated .npy header");
  const std::string h(b.begin() + 10, b.begin() + 10 + static_cast<long>(hlen));
  DM_EXPECT(h.find("'descr': '<f4'") != std::string::npos && h.find("'fortran_order': False") != std::string::npos,
            InputError, "'" << name << "': expected little-endian float32 in C order, header " << h);
  int rows = 0, cols = 0;
  const auto s = h.find("'shape': (");
  DM_EXPECT(s != std::string::npos && std::sscanf(h.c_str() + s + 10, "%d, %d", &rows, &cols) == 2 && rows > 0 && cols > 0,
            InputError, "'" << name << "': expected a 2-D shape, header " << h);
  const size_t need = 10 + hlen + static_cast<size_t>(rows) * cols * 4;
  DM_EXPECT(b.size() == need, InputError, "'" << name << "': " << b.size() << " bytes, expected " << need);
  cv::Mat m(rows, cols, CV_32FC1);
  std::memcpy(m.data, b.data() + 10 + hlen, static_cast<size_t>(rows) * cols * 4);
  return m;
}

std::vector<uint8_t> encode_tiff(const cv::Mat& m) {
  DM_EXPECT(m.type() == CV_32FC1, std::invalid_argument, "encode_tiff: expected CV_32FC1");
  std::vector<uint8_t> out;
  DM_EXPECT(cv::imencode(".tiff", m, out), OutputError, "OpenCV could not encode a float32 TIFF");
  return out;
}

cv::Mat make_preview(const cv::Mat& color, const cv::Mat& mask, const cv::Mat& depth, float invalid) {
  const cv::Size sz = depth.size();
  cv::Mat left;
  if (!color.empty() && color.size() == sz && color.type() == CV_8UC3) left = color.clone();
  else left = cv::Mat(sz, CV_8UC3, cv::Scalar(96, 96, 96));

  // Mask: non-zero white, zero black (labels and probabilities alike).
  cv::Mat m8;
  cv::compare(mask, 0, m8, cv::CMP_NE);
  cv::Mat middle;
  cv::cvtColor(m8, middle, cv::COLOR_GRAY2BGR);

  // Masked depth: valid pixels scaled over their own range through TURBO; invalid ones black.
  cv::Mat valid = (depth == depth);  // NaN fails
  if (!std::isnan(invalid)) valid &= (depth != invalid);
  double lo = 0, hi = 0;
  cv::Mat right(sz, CV_8UC3, cv::Scalar(0, 0, 0));
  if (cv::countNonZero(valid) > 0) {
    cv::minMaxLoc(depth, &lo, &hi, nullptr, nullptr, valid);
    cv::Mat d8;
    const double span = hi > lo ? hi - lo : 1.0;
    depth.convertTo(d8, CV_8UC1, 255.0 / span, -lo * 255.0 / span);
    cv::Mat colored;
    cv::applyColorMap(d8, colored, cv::COLORMAP_TURBO);
    colored.copyTo(right, valid);
  }
  cv::Mat out;
  cv::hconcat(std::vector<cv::Mat>{left, middle, right}, out);
  return out;
}

fs::path output_path(const fs::path& dir, const std::string& id, const std::string& kind_ext) {
  return dir / (id + "." + kind_ext);
}

void ensure_output_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  DM_EXPECT(!ec, OutputError, "cannot create output folder '" << dir.string() << "': " << ec.message());
  DM_EXPECT(fs::is_directory(dir, ec), OutputError, "output path '" << dir.string() << "' is not a folder");
  const fs::path probe = dir / (".depthmask-write-test-" + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  DM_EXPECT(fd >= 0, OutputError, "output folder '" << dir.string() << "' is not writable: " << sys_error(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace depthmask
