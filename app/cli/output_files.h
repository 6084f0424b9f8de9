// output_files.h — a command's set of output files: all written, or none left behind.
//
// Each file is written atomically (temp + rename). If any write fails, the files this command
// already wrote are removed, and a folder it created is removed again when empty.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope::cli {

class OutputFiles {
 public:
  explicit OutputFiles(std::filesystem::path dir);
  ~OutputFiles();  // rolls back unless commit() was called
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;

  void npy(const std::string& name, const Mat& m);
  void npy(const std::string& name, const Tensor3& t);
  void npy(const std::string& name, const float* data, const std::vector<int64_t>& shape);
  void text(const std::string& name, std::string_view bytes);
  void commit() { committed_ = true; }
  const std::vector<std::filesystem::path>& written() const { return written_; }

 private:
  template <class Write>
  void guarded(const std::string& name, Write write);
  std::filesystem::path dir_;
  bool created_dir_ = false;
  bool committed_ = false;
  std::vector<std::filesystem::path> written_;
};

}  // namespace attnscope::cli
