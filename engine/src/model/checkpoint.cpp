// checkpoint.cpp — finding a folder's safetensors files and reading named tensors from them.
#include "checkpoint.h"

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"

namespace attnscope::model::detail {

namespace fs = std::filesystem;

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// What a folder without safetensors holds, so the message can say what to do instead.
std::string other_weights_hint(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : {"pytorch_model.bin", "pytorch_model.bin.index.json", "model.pt", "tf_model.h5",
                           "flax_model.msgpack", "model.gguf"})
    if (fs::exists(dir / name, ec))
      return std::string(" (it has ") + name +
             ", which attnscope does not read: download the model's safetensors files, or convert with "
             "transformers: model.save_pretrained(DIR, safe_serialization=True))";
  return "";
}

// A shard name from the index: a plain file name in the checkpoint folder.
void check_shard_name(const std::string& shard, const std::string& index) {
  const bool plain = !shard.empty() && shard.find('/') == std::string::npos &&
                     shard.find('\\') == std::string::npos && shard != "." && shard != ".." &&
                     shard.find('\0') == std::string::npos;
  require(plain, "'" + index + "': shard file name '" + shard +
                     "' must be a plain file name in the checkpoint folder (no folder part)");
}

}  // namespace

Checkpoint::Checkpoint(const fs::path& dir) {
  std::error_code ec;
  require(fs::exists(dir, ec), "checkpoint folder '" + dir.string() + "' does not exist");
  require(fs::is_directory(dir, ec), "'" + dir.string() + "' is a file; give the checkpoint folder (the one "
                                                             "holding config.json and model.safetensors)");
  const fs::path single = dir / "model.safetensors";
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(single, ec)) {
    files_.push_back(std::make_unique<SafetensorsFile>(single));
    for (const SafetensorsTensor& t : files_.back()->header().tensors) where_[t.name] = {files_.back().get(), &t};
    description_ = "'" + single.string() + "'";
    return;
  }
  require(fs::exists(index, ec), "checkpoint folder '" + dir.string() +
                                     "' has neither model.safetensors nor model.safetensors.index.json" +
                                     other_weights_hint(dir));
  const std::string text = read_file(index, int64_t(64) << 20);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError("'" + index.string() + "' is not valid JSON: " + e.what());
  }
  require(j.is_object() && j.contains("weight_map") && j["weight_map"].is_object(),
          "'" + index.string() + "' has no \"weight_map\" object (tensor name → shard file)");
  std::map<std::string, SafetensorsFile*> shards;
  for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
    require(it.value().is_string(), "'" + index.string() + "': the weight_map entry of '" + it.key() +
                                        "' is not a file name string");
    const std::string shard = it.value().get<std::string>();
    check_shard_name(shard, index.string());
    auto found = shards.find(shard);
    if (found == shards.end()) {
      const fs::path path = dir / shard;
      require(fs::exists(path, ec), "'" + index.string() + "' lists shard '" + shard + "' (for tensor '" + it.key() +
                                        "'), but '" + path.string() + "' does not exist");
      files_.push_back(std::make_unique<SafetensorsFile>(path));
      found = shards.emplace(shard, files_.back().get()).first;
    }
    const SafetensorsTensor* t = found->second->header().find(it.key());
    require(t != nullptr, "'" + index.string() + "' places tensor '" + it.key() + "' in '" + shard +
                              "', but that file does not hold it");
    where_[it.key()] = {found->second, t};
  }
  description_ = "the " + std::to_string(files_.size()) + " shard" + (files_.size() == 1 ? "" : "s") + " listed in '" +
                 index.string() + "'";
}

const SafetensorsTensor& Checkpoint::tensor(const std::string& name) const {
  auto it = where_.find(name);
  require(it != where_.end(), "missing tensor '" + name + "' in " + description_ +
                                  " (the checkpoint does not match its config.json, or is incomplete)");
  return *it->second.tensor;
}

void Checkpoint::read(const std::string& name, const std::vector<int64_t>& shape, float* dst) const {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  read_range(name, shape, 0, count, dst);
}

void Checkpoint::read_rows(const std::string& name, const std::vector<int64_t>& shape, int64_t first_row,
                           int64_t rows, float* dst) const {
  read_range(name, shape, first_row * shape.back(), rows * shape.back(), dst);
}

void Checkpoint::read_range(const std::string& name, const std::vector<int64_t>& shape, int64_t first, int64_t count,
                            float* dst) const {
  const SafetensorsTensor& t = tensor(name);
  const Location& at = where_.at(name);
  require(t.shape == shape, "'" + at.file->path().string() + "': tensor '" + name + "' has shape " +
                                shape_text(t.shape) + ", but config.json implies " + shape_text(shape));
  at.file->read_float32(t, dst, first, count);
  dtypes_.insert(to_string(t.dtype));
}

Checkpoint::InPlace Checkpoint::in_place(const std::string& name, const std::vector<int64_t>& shape) const {
  const SafetensorsTensor& t = tensor(name);
  const Location& at = where_.at(name);
  require(t.shape == shape, "'" + at.file->path().string() + "': tensor '" + name + "' has shape " +
                                shape_text(t.shape) + ", but config.json implies " + shape_text(shape));
  at.file->check_finite(t);
  dtypes_.insert(to_string(t.dtype));
  return {at.file->raw(t).data(), t.dtype};
}

Checkpoint::Raw Checkpoint::raw(const std::string& name) const {
  const SafetensorsTensor& t = tensor(name);
  const Location& at = where_.at(name);
  dtypes_.insert(to_string(t.dtype));
  return {&t, at.file->raw(t).data(), "'" + at.file->path().string() + "'"};
}

std::string Checkpoint::dtypes_read() const {
  std::string s;
  for (const std::string& d : dtypes_) s += (s.empty() ? "" : ", ") + d;
  return s;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  for (const auto& entry : where_) out.push_back(entry.first);
  return out;
}

}  // namespace attnscope::model::detail
