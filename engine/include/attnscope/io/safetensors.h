// safetensors.h — reading (and writing) the safetensors format of Hugging Face checkpoints.
//
// Layout of a file:
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  a JSON object: tensor name → {"dtype": "BF16", "shape": [rows, cols], "data_offsets":
//              [begin, end]}, plus an optional "__metadata__" object of string → string; it may end in
//              spaces (padding)
//   [rest]     the data area; each tensor's bytes are [begin, end) counted from the data area's start,
//              little-endian, C order
// Everything is checked before any tensor is read: N against the file size, the JSON, each entry's
// keys and types, the dtype, shape × element size == end − begin, and the offsets, which must tile the
// data area exactly (sorted, no overlap, no gap, nothing past the end, no bytes after the last tensor).
// Tensors of any safetensors dtype pass the header check (a GPT-2 file may hold U8/BOOL mask buffers);
// only F32, F16 and BF16 convert to float32 — asking for another one names it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/io/mapped_file.h"

namespace attnscope {

enum class TensorDtype { f32, f16, bf16, f64, i64, i32, i16, i8, u64, u32, u16, u8, boolean, f8_e4m3, f8_e5m2 };

const char* to_string(TensorDtype dtype);  // the file's spelling: "F32", "BF16", "BOOL", …
int element_bytes(TensorDtype dtype);
bool converts_to_float32(TensorDtype dtype);  // F32, F16, BF16

struct SafetensorsTensor {
  std::string name;
  TensorDtype dtype = TensorDtype::f32;
  std::vector<int64_t> shape;  // [] is a scalar
  uint64_t begin = 0, end = 0; // byte range in the data area
  int64_t count() const;       // number of elements (product of the shape)
};

struct SafetensorsHeader {
  uint64_t data_start = 0;                    // 8 + N: where the data area begins in the file
  std::vector<SafetensorsTensor> tensors;     // sorted by begin
  std::map<std::string, std::string> metadata;
  const SafetensorsTensor* find(std::string_view name) const;  // null when absent
};

// The largest header accepted (the reference implementation's limit).
inline constexpr uint64_t max_safetensors_header_bytes = uint64_t(100) << 20;

// Parses and validates the header at the start of `file` (the whole file's bytes, or at least its
// first 8 + N bytes when file_size says how long the whole file is). `name` goes into messages.
// Throws InputError naming the file, the tensor and the problem.
SafetensorsHeader parse_safetensors_header(std::string_view file, uint64_t file_size, const std::string& name);

// count elements of `dtype` (F32, F16 or BF16) from `src` (any alignment) to float32 `dst`.
void convert_to_float32(const void* src, TensorDtype dtype, int64_t count, float* dst);
// IEEE half and bfloat16 bit patterns to float (exact: every value of both is a float32).
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

// One memory-mapped safetensors file with its validated header.
class SafetensorsFile {
 public:
  // Throws InputError naming the path (not a regular file, malformed header, …).
  explicit SafetensorsFile(const std::filesystem::path& path);
  const SafetensorsHeader& header() const { return header_; }
  const std::filesystem::path& path() const { return file_.path(); }
  // Converts one tensor of this file to float32 into dst [count()] and refuses NaN or ±inf, naming
  // the tensor and the first bad index. release_pages drops the file's pages from this process once
  // copied (a checkpoint is read once).
  void read_float32(const SafetensorsTensor& tensor, float* dst, bool release_pages = true) const;
  // Elements [first, first + count) of the tensor (flat, C order) into dst [count]; same checks.
  void read_float32(const SafetensorsTensor& tensor, float* dst, int64_t first, int64_t count,
                    bool release_pages = true) const;
  // The raw bytes of a tensor (for tests, tools, and weights read in place from the mapping).
  std::string_view raw(const SafetensorsTensor& tensor) const;
  // Refuses a tensor (F32, F16, BF16) holding NaN or ±inf with read_float32's message, from its bytes
  // in place (vectorised, on every core): the check of a weight used without a copy.
  void check_finite(const SafetensorsTensor& tensor) const;

 private:
  MappedFile file_;
  SafetensorsHeader header_;
};

// A float32 tensor to write.
struct SafetensorsOutput {
  std::string name;
  std::vector<int64_t> shape;
  const float* data = nullptr;  // product(shape) values
};
// The bytes of a safetensors file holding `tensors` as F32 in the given order, header padded with
// spaces to a multiple of 8 bytes (so every tensor starts 8-byte aligned).
std::string serialize_safetensors(const std::vector<SafetensorsOutput>& tensors,
                                  const std::map<std::string, std::string>& metadata = {});

}  // namespace attnscope
