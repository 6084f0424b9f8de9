// file_io.h — reading whole files with a size limit, and writing atomically.
//
// Every file attnscope writes goes to a temporary name beside the target and is renamed into place
// when complete, so a failure never leaves half a file. Failures raise InputError saying which path
// and why (permission denied, no such folder, disk full, is a directory).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace attnscope {

std::string read_file(const std::filesystem::path& path, int64_t max_bytes);
// read_file's checks alone: throws InputError unless `path` names an existing regular file (not a
// folder, a FIFO, a device or a socket), in read_file's words.
void require_regular_file(const std::filesystem::path& path);
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

// Creates `dir` (and parents) if missing; throws InputError if it cannot or if it is a file.
void ensure_directory(const std::filesystem::path& dir);

}  // namespace attnscope
