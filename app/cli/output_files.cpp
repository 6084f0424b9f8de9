#include "cli/output_files.h"

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"

namespace attnscope::cli {
namespace fs = std::filesystem;

OutputFiles::OutputFiles(fs::path dir) : dir_(std::move(dir)) {
  require(!dir_.empty(), "--out needs a folder name");
  std::error_code ec;
  const bool existed = fs::exists(dir_, ec);
  ensure_directory(dir_);
  created_dir_ = !existed;
}

OutputFiles::~OutputFiles() {
  if (committed_) return;
  std::error_code ec;
  for (const auto& p : written_) fs::remove(p, ec);
  if (created_dir_) fs::remove(dir_, ec);  // only removes it when empty
}

template <class Write>
void OutputFiles::guarded(const std::string& name, Write write) {
  const fs::path path = dir_ / name;
  write(path);  // throws InputError on failure; the destructor then rolls back
  written_.push_back(path);
}

void OutputFiles::npy(const std::string& name, const Mat& m) {
  guarded(name, [&](const fs::path& p) { write_npy(p, m); });
}
void OutputFiles::npy(const std::string& name, const Tensor3& t) {
  guarded(name, [&](const fs::path& p) { write_npy(p, t); });
}
void OutputFiles::npy(const std::string& name, const float* data, const std::vector<int64_t>& shape) {
  guarded(name, [&](const fs::path& p) { write_npy(p, data, shape); });
}
void OutputFiles::text(const std::string& name, std::string_view bytes) {
  guarded(name, [&](const fs::path& p) { write_file_atomic(p, bytes); });
}

}  // namespace attnscope::cli
