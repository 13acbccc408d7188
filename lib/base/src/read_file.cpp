#include "depthmask/detail/read_file.h"

#include <fstream>

#include "depthmask/errors.h"

namespace depthmask::detail {

namespace {

std::string size_text(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::string read_file_bounded(const std::filesystem::path& file, size_t max_bytes, const std::string& what) {
  std::ifstream in(file, std::ios::binary);
  DM_EXPECT(in, InputError, "cannot read " << what << " '" << file.string() << "': no such file or not readable");
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    DM_EXPECT(text.size() <= max_bytes, InputError,
              what << " '" << file.string() << "' is larger than " << size_text(max_bytes) << ", so it is not read");
  }
  DM_EXPECT(in.eof(), InputError, "cannot read " << what << " '" << file.string() << "': read error");
  return text;
}

}  // namespace depthmask::detail
