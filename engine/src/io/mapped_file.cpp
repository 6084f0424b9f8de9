// mapped_file.cpp — mmap with the file-type checks done on the open descriptor (no race between
// checking a path and opening it).
#include "attnscope/io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "attnscope/core/error.h"

namespace attnscope {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::MappedFile(const std::filesystem::path& path, int64_t max_bytes) : path_(path) {
  const std::string where = "'" + path.string() + "'";
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before fstat could
  // tell us what it is.
  Descriptor d;
  d.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (d.fd < 0) {
    const int err = errno;
    require(err != ENOENT, "cannot read " + where + ": no such file");
    throw InputError("cannot read " + where + ": " + std::strerror(err));
  }
  struct stat st {};
  require(::fstat(d.fd, &st) == 0, "cannot read " + where + ": " + std::strerror(errno));
  require(S_ISREG(st.st_mode), "cannot read " + where + ": it is " + file_kind(st.st_mode) +
                                   ", not a regular file");
  require(st.st_size <= max_bytes, where + " is larger than the limit of " + std::to_string(max_bytes) + " bytes");
  // A 32-bit address space (the browser build's WebAssembly memory) cannot map more than it addresses.
  require(uint64_t(st.st_size) < uint64_t(std::numeric_limits<size_t>::max()),
          where + " is larger than this build's address space (" + std::to_string(std::numeric_limits<size_t>::max()) +
              " bytes)");
  size_ = uint64_t(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, d.fd, 0);
  require(p != MAP_FAILED, "cannot map " + where + " into memory: " + std::strerror(errno));
  data_ = p;
}

MappedFile::~MappedFile() { unmap(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() noexcept {
  if (data_) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

namespace {

// The whole pages inside [offset, offset + length) of a mapping starting at `base` (page-aligned).
bool page_range(uint64_t size, uint64_t offset, uint64_t length, bool inner, uint64_t& begin, uint64_t& end) {
  if (offset >= size || length == 0) return false;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t last = std::min(size, offset + length);
  begin = inner ? (offset + page - 1) / page * page : offset / page * page;
  end = inner ? last / page * page : std::min(size, (last + page - 1) / page * page);
  return end > begin;
}

}  // namespace

void MappedFile::prefetch(uint64_t offset, uint64_t length) const {
  uint64_t b, e;
  if (data_ && page_range(size_, offset, length, false, b, e))
    ::madvise(static_cast<char*>(data_) + b, e - b, MADV_WILLNEED);
}

void MappedFile::release(uint64_t offset, uint64_t length) const {
  // Only whole pages inside the range: a page shared with a neighbouring tensor stays mapped.
  uint64_t b, e;
  if (data_ && page_range(size_, offset, length, true, b, e))
    ::madvise(static_cast<char*>(data_) + b, e - b, MADV_DONTNEED);
}

}  // namespace attnscope
