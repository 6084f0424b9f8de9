// checkpoint.h — (private) the safetensors files of a checkpoint folder behind one name → tensor table.
//
//   DIR/model.safetensors                       a single file (preferred when present, as transformers does)
//   DIR/model.safetensors.index.json + shards   {"weight_map": {"tensor name": "model-00001-of-00002.safetensors"}}
// Shard names must be plain file names inside DIR (no folder part), each shard is opened once, and a
// tensor the index places in a shard must be in that shard's header.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "attnscope/io/safetensors.h"

namespace attnscope::model::detail {

class Checkpoint {
 public:
  // Throws InputError: no folder, no safetensors file (naming what the folder holds instead), a
  // malformed index or shard.
  explicit Checkpoint(const std::filesystem::path& dir);

  bool has(const std::string& name) const { return where_.count(name) != 0; }
  // The tensor's header entry; throws InputError naming the files searched when it is absent.
  const SafetensorsTensor& tensor(const std::string& name) const;
  // Reads `name` into dst (product(shape) floats) after checking its shape; throws InputError
  // naming the file, the tensor, the shape found and the shape config.json implies.
  void read(const std::string& name, const std::vector<int64_t>& shape, float* dst) const;
  // Rows [first_row, first_row + rows) of a 2D tensor (or of a 3D one's E·rows rows) into dst [rows,
  // shape.back()], same checks.
  void read_rows(const std::string& name, const std::vector<int64_t>& shape, int64_t first_row, int64_t rows,
                 float* dst) const;
  // A tensor used in place from its mapped file (its bytes stay valid while this Checkpoint lives),
  // after the same shape check and the refusal of NaN/±inf (F32, F16, BF16 only).
  struct InPlace {
    const void* data;
    TensorDtype dtype;
  };
  InPlace in_place(const std::string& name, const std::vector<int64_t>& shape) const;
  // A tensor's bytes as stored, unchecked (MXFP4 blocks and scales: mxfp4.h checks them), and the file
  // that holds it (for messages).
  struct Raw {
    const SafetensorsTensor* tensor;
    const void* data;
    std::string file;
  };
  Raw raw(const std::string& name) const;
  // The description of where the tensors live ("'DIR/model.safetensors'" or "the 3 shards of 'DIR'").
  const std::string& description() const { return description_; }
  std::vector<std::string> names() const;  // every tensor of the files, sorted
  std::string dtypes_read() const;  // "BF16", "F32, F16", … of the tensors read so far
  // The bytes of the U8 tensors (MXFP4 experts: read in place, only the routed experts' pages touched).
  double u8_bytes() const {
    double bytes = 0;
    for (const auto& [name, at] : where_)
      if (at.tensor->dtype == TensorDtype::u8) bytes += double(at.tensor->end - at.tensor->begin);
    return bytes;
  }
  // The bytes the opened model holds: a matrix `in_place(dtype)` says is read from the mapped file
  // counts its file bytes (resident page cache), every other tensor 4 bytes an element (a float32 copy).
  // `read(name)` says whether the model reads the tensor at all (a container's vision tower is not read).
  template <class InPlaceDtype, class Read>
  double memory_needed(InPlaceDtype in_place, Read read) const {
    double bytes = 0;
    for (const auto& [name, at] : where_) {
      if (!read(name)) continue;
      const SafetensorsTensor& t = *at.tensor;
      // A 3D stack of experts' matrices (GraniteMoE's input_linear) is read in place like a matrix; U8 tensors
      // (MXFP4 blocks and scales) are only ever read in place, at their own width.
      const bool mapped = (t.shape.size() >= 2 && in_place(t.dtype)) || t.dtype == TensorDtype::u8;
      bytes += mapped ? double(t.end - t.begin) : double(t.count()) * 4;
    }
    return bytes;
  }

 private:
  void read_range(const std::string& name, const std::vector<int64_t>& shape, int64_t first, int64_t count,
                  float* dst) const;
  struct Location {
    const SafetensorsFile* file;
    const SafetensorsTensor* tensor;
  };
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, Location> where_;
  std::string description_;
  mutable std::set<std::string> dtypes_;
};

}  // namespace attnscope::model::detail
