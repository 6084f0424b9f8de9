// mapped_file.h — a whole regular file mapped read-only into memory (checkpoints of gigabytes).
//
// Opening refuses what is not a regular file (a folder, a FIFO, a device, a socket) before reading
// anything, so a named pipe can never block the caller. The mapping is private and read-only: the
// bytes are the file's, served from the page cache. release() hands a range's pages back to the
// kernel once they were copied out, so converting a checkpoint to float32 does not keep both the
// file and the float32 copy resident.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string_view>

namespace attnscope {

class MappedFile {
 public:
  MappedFile() = default;
  // Throws InputError naming the path: missing, not a regular file, unreadable, or larger than
  // max_bytes. An empty file maps to an empty view.
  MappedFile(const std::filesystem::path& path, int64_t max_bytes);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {static_cast<const char*>(data_), size_t(size_)}; }  // size_ fits: mapped
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

  // Asks the kernel to read [offset, offset + length) ahead, and to drop it from this process once
  // read (release). Both are hints: the bytes stay valid and readable either way.
  void prefetch(uint64_t offset, uint64_t length) const;
  void release(uint64_t offset, uint64_t length) const;

 private:
  void unmap() noexcept;
  std::filesystem::path path_;
  void* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace attnscope
