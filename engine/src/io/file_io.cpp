// file_io.cpp — bounded reads and atomic writes with messages that say which path and why.
#include "attnscope/io/file_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>
#include <unistd.h>

#include "attnscope/core/error.h"

namespace attnscope {
namespace fs = std::filesystem;

namespace {

std::string kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::fifo: return "named pipe (FIFO)";
    case fs::file_type::character: return "character device";
    case fs::file_type::block: return "block device";
    case fs::file_type::socket: return "socket";
    default: return "special file";
  }
}

}  // namespace

void require_regular_file(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  require(!ec && fs::exists(status), "cannot read '" + path.string() + "': no such file");
  require(!fs::is_directory(status), "cannot read '" + path.string() + "': it is a folder, not a file");
  // A FIFO would block the read until a writer comes (forever, from a command line); a device or a
  // socket is not a file either.
  require(fs::is_regular_file(status), "cannot read '" + path.string() + "': it is a " + kind_of(status) +
                                           ", not a regular file");
}

std::string read_file(const fs::path& path, int64_t max_bytes) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  require(bool(in), "cannot read '" + path.string() + "': " + std::strerror(errno));
  std::string bytes;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    bytes.append(buffer, size_t(in.gcount()));
    require(int64_t(bytes.size()) <= max_bytes, "'" + path.string() + "' is larger than the limit of " +
                                                    std::to_string(max_bytes) + " bytes");
  }
  require(in.eof(), "cannot read '" + path.string() + "': read error");
  return bytes;
}

void ensure_directory(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    require(fs::is_directory(dir, ec), "'" + dir.string() + "' exists and is a file, not a folder");
    return;
  }
  fs::create_directories(dir, ec);
  require(!ec, "cannot create folder '" + dir.string() + "': " + ec.message());
}

void write_file_atomic(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  require(!path.empty(), "no output path given");
  require(!fs::is_directory(path, ec), "cannot write '" + path.string() + "': it is a folder; give a file name");
  // A device, a FIFO or a socket where a file belongs: the rename below would put a regular file in its
  // place (as root even /dev/null), so it is refused, never replaced.
  const fs::file_status target = fs::status(path, ec);
  require(!fs::exists(target) || fs::is_regular_file(target),
          "cannot write '" + path.string() + "': it is a " + kind_of(target) + ", not a regular file; give a file name");
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  require(fs::is_directory(parent, ec), "cannot write '" + path.string() + "': folder '" + parent.string() +
                                            "' does not exist");
  // Temporary name beside the target, so the final rename stays on one file system.
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  const fs::path tmp = parent / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()) + "_" +
                                 std::to_string(gen() % 1000000007));
  FILE* f = std::fopen(tmp.c_str(), "wb");
  require(f != nullptr, "cannot write '" + path.string() + "': " + std::strerror(errno));
  const size_t written = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  const int write_errno = errno;
  const bool flushed = std::fflush(f) == 0;
  const bool closed = std::fclose(f) == 0;
  if (written != bytes.size() || !flushed || !closed) {
    fs::remove(tmp, ec);
    throw InputError("cannot write '" + path.string() + "': " + std::strerror(write_errno ? write_errno : EIO));
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw InputError("cannot write '" + path.string() + "': " + why);
  }
}

}  // namespace attnscope
