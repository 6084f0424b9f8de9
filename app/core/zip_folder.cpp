#include "core/zip_folder.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"

namespace attnscope::gui {
namespace {

// CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as ZIP and PNG use it.
uint32_t crc32(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t n = 0; n < 256; ++n) {
      uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (const char ch : bytes) c = table[(c ^ uint8_t(ch)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

void put16(std::string& out, uint32_t v) {
  out += char(v & 0xFF);
  out += char((v >> 8) & 0xFF);
}
void put32(std::string& out, uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

constexpr uint32_t dos_date_1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01: a zip's earliest date, reproducible

// The fields a local header and its central directory entry share (APPNOTE 4.3.7, 4.3.12).
void put_common(std::string& out, uint32_t crc, uint32_t size, size_t name_size) {
  put16(out, 20);             // version needed to extract: 2.0
  put16(out, 0x0800);         // flags: the name is UTF-8
  put16(out, 0);              // method: stored
  put16(out, 0);              // time
  put16(out, dos_date_1980);  // date
  put32(out, crc);
  put32(out, size);  // compressed size
  put32(out, size);  // uncompressed size
  put16(out, uint32_t(name_size));
  put16(out, 0);  // extra field length
}

}  // namespace

void zip_folder(const std::filesystem::path& folder, const std::filesystem::path& zip) {
  constexpr uint64_t zip32_max = std::numeric_limits<uint32_t>::max();
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error))
    if (it->is_regular_file()) files.push_back(it->path());
  require(!error, "cannot read the folder '" + folder.string() + "': " + error.message());
  std::sort(files.begin(), files.end());
  const std::string prefix = folder.filename().empty() ? folder.parent_path().filename().string() : folder.filename().string();
  std::string body, directory;
  for (const std::filesystem::path& file : files) {
    const std::string bytes = read_file(file, int64_t(zip32_max) - 1);
    const std::string name = prefix + "/" + file.filename().string();
    const uint32_t crc = crc32(bytes);
    require(body.size() + bytes.size() + name.size() + 30 < zip32_max,
            "'" + folder.string() + "' is 4 GiB or more: too large for a zip without ZIP64");
    const uint32_t offset = uint32_t(body.size());
    put32(body, 0x04034b50);  // local file header
    put_common(body, crc, uint32_t(bytes.size()), name.size());
    body += name;
    body += bytes;
    put32(directory, 0x02014b50);  // central directory file header
    put16(directory, 20);          // made by: 2.0, MS-DOS attributes
    put_common(directory, crc, uint32_t(bytes.size()), name.size());
    put16(directory, 0);  // comment length
    put16(directory, 0);  // disk number
    put16(directory, 0);  // internal attributes
    put32(directory, 0);  // external attributes
    put32(directory, offset);
    directory += name;
  }
  require(files.size() < 0xFFFF && body.size() + directory.size() < zip32_max,
          "'" + folder.string() + "' is too large for a zip without ZIP64");
  std::string end;
  put32(end, 0x06054b50);  // end of central directory record
  put16(end, 0);           // this disk
  put16(end, 0);           // the disk the directory starts on
  put16(end, uint32_t(files.size()));
  put16(end, uint32_t(files.size()));
  put32(end, uint32_t(directory.size()));
  put32(end, uint32_t(body.size()));
  put16(end, 0);  // comment length
  write_file_atomic(zip, body + directory + end);
}

}  // namespace attnscope::gui
