// safetensors.cpp — header validation, dtype conversion, the mapped file, and a writer.
//
// Sections: dtypes · header parsing · conversion to float32 · SafetensorsFile · writing
#include "attnscope/io/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"

namespace attnscope {

// ---- dtypes --------------------------------------------------------------------------------------
namespace {

struct DtypeInfo {
  TensorDtype dtype;
  const char* name;
  int bytes;
};

// Every dtype of the safetensors format with whole-byte elements.
constexpr DtypeInfo dtype_table[] = {
    {TensorDtype::f32, "F32", 4},     {TensorDtype::f16, "F16", 2},        {TensorDtype::bf16, "BF16", 2},
    {TensorDtype::f64, "F64", 8},     {TensorDtype::i64, "I64", 8},        {TensorDtype::i32, "I32", 4},
    {TensorDtype::i16, "I16", 2},     {TensorDtype::i8, "I8", 1},          {TensorDtype::u64, "U64", 8},
    {TensorDtype::u32, "U32", 4},     {TensorDtype::u16, "U16", 2},        {TensorDtype::u8, "U8", 1},
    {TensorDtype::boolean, "BOOL", 1}, {TensorDtype::f8_e4m3, "F8_E4M3", 1}, {TensorDtype::f8_e5m2, "F8_E5M2", 1},
};

const DtypeInfo& info(TensorDtype d) {
  for (const DtypeInfo& i : dtype_table)
    if (i.dtype == d) return i;
  return dtype_table[0];
}

}  // namespace

const char* to_string(TensorDtype dtype) { return info(dtype).name; }
int element_bytes(TensorDtype dtype) { return info(dtype).bytes; }
bool converts_to_float32(TensorDtype d) { return d == TensorDtype::f32 || d == TensorDtype::f16 || d == TensorDtype::bf16; }

int64_t SafetensorsTensor::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const SafetensorsTensor* SafetensorsHeader::find(std::string_view name) const {
  for (const SafetensorsTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

// ---- header parsing ------------------------------------------------------------------------------
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw InputError("'" + name + "' is not a valid safetensors file: " + what);
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A JSON unsigned integer (nlohmann keeps non-negative integers as number_unsigned).
bool as_unsigned(const nlohmann::json& j, uint64_t& out) {
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    out = uint64_t(j.get<int64_t>());
    return true;
  }
  return false;
}

std::string valid_dtypes() {
  std::string s;
  for (const DtypeInfo& i : dtype_table) s += (s.empty() ? "" : ", ") + std::string(i.name);
  return s;
}

SafetensorsTensor parse_entry(const std::string& key, const nlohmann::json& v, const std::string& name) {
  const std::string t = "tensor '" + key + "'";
  if (!v.is_object()) fail(name, t + " is not described by a JSON object");
  for (auto it = v.begin(); it != v.end(); ++it)
    if (it.key() != "dtype" && it.key() != "shape" && it.key() != "data_offsets")
      fail(name, t + " has an unknown field '" + it.key() + "' (valid: dtype, shape, data_offsets)");
  if (!v.contains("dtype") || !v["dtype"].is_string()) fail(name, t + " has no \"dtype\" string");
  if (!v.contains("shape") || !v["shape"].is_array()) fail(name, t + " has no \"shape\" list");
  if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
    fail(name, t + " has no \"data_offsets\" pair [begin, end]");
  SafetensorsTensor out;
  out.name = key;
  const std::string dtype = v["dtype"].get<std::string>();
  const DtypeInfo* found = nullptr;
  for (const DtypeInfo& i : dtype_table)
    if (dtype == i.name) found = &i;
  if (!found) fail(name, t + " has an unknown dtype '" + dtype + "' (valid: " + valid_dtypes() + ")");
  out.dtype = found->dtype;
  if (v["shape"].size() > 8) fail(name, t + " has " + std::to_string(v["shape"].size()) + " dimensions (at most 8)");
  // Elements × element size must fit comfortably in 64 bits: no file is larger than 2^62 bytes.
  const uint64_t max_elements = (uint64_t(1) << 62) / uint64_t(found->bytes);
  uint64_t count = 1;
  for (const auto& d : v["shape"]) {
    uint64_t n = 0;
    if (!as_unsigned(d, n)) fail(name, t + " has a shape entry that is not a whole number >= 0: " + d.dump());
    if (n > max_elements || (n > 0 && count > max_elements / n)) fail(name, t + " has an absurdly large shape");
    count *= n;
    out.shape.push_back(int64_t(n));
  }
  if (!as_unsigned(v["data_offsets"][0], out.begin) || !as_unsigned(v["data_offsets"][1], out.end))
    fail(name, t + " has data_offsets that are not whole numbers >= 0: " + v["data_offsets"].dump());
  if (out.end < out.begin)
    fail(name, t + " has data_offsets [" + std::to_string(out.begin) + ", " + std::to_string(out.end) +
                   "] that end before they begin");
  const uint64_t need = count * uint64_t(found->bytes);
  if (out.end - out.begin != need)
    fail(name, t + " has shape " + shape_text(out.shape) + " of " + dtype + ", which needs " + std::to_string(need) +
                   " bytes, but its data_offsets [" + std::to_string(out.begin) + ", " + std::to_string(out.end) +
                   "] hold " + std::to_string(out.end - out.begin));
  return out;
}

}  // namespace

SafetensorsHeader parse_safetensors_header(std::string_view file, uint64_t file_size, const std::string& name) {
  if (file_size < 8 || file.size() < 8)
    fail(name, "it is truncated: " + std::to_string(file_size) + " bytes, fewer than the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(file[size_t(i)]);
  if (n > file_size - 8)
    fail(name, "the header length " + std::to_string(n) + " runs past the end of the file (" +
                   std::to_string(file_size) + " bytes); the file is truncated or not safetensors");
  if (n > max_safetensors_header_bytes)
    fail(name, "the header length " + std::to_string(n) + " is above the limit of " +
                   std::to_string(max_safetensors_header_bytes) + " bytes");
  if (file.size() < 8 + n) fail(name, "only " + std::to_string(file.size()) + " bytes of the header were given");
  const std::string_view text = file.substr(8, size_t(n));
  if (text.empty() || text.front() != '{') fail(name, "the header does not start with '{' (it is not a JSON object)");

  // Parse, noting any tensor named twice (nlohmann would silently keep the last one).
  std::set<std::string> seen;
  std::string duplicate;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
      if (event == nlohmann::json::parse_event_t::key && depth == 1 && parsed.is_string() &&
          !seen.insert(parsed.get<std::string>()).second && duplicate.empty())
        duplicate = parsed.get<std::string>();
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    fail(name, std::string("the header is not valid JSON: ") + e.what());
  }
  if (!header.is_object()) fail(name, "the header is not a JSON object");
  if (!duplicate.empty()) fail(name, "the header names tensor '" + duplicate + "' twice");

  SafetensorsHeader out;
  out.data_start = 8 + n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object()) fail(name, "\"__metadata__\" is not a JSON object");
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        if (!m.value().is_string()) fail(name, "\"__metadata__\" entry '" + m.key() + "' is not a string");
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    out.tensors.push_back(parse_entry(it.key(), it.value(), name));
  }

  // The tensors must tile the data area exactly: sorted by offset, each starting where the previous
  // one ended, the last one ending at the end of the file.
  std::stable_sort(out.tensors.begin(), out.tensors.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const uint64_t data_bytes = file_size - out.data_start;
  uint64_t expected = 0;
  const SafetensorsTensor* previous = nullptr;
  for (const SafetensorsTensor& t : out.tensors) {
    const std::string range = std::string("[") + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
    if (t.end > data_bytes)
      fail(name, "tensor '" + t.name + "' has data_offsets " + range + " past the end of the data area (" +
                     std::to_string(data_bytes) + " bytes); the file is truncated or the offsets are wrong");
    if (t.begin < expected)
      fail(name, "tensor '" + t.name + "' at " + range + " overlaps tensor '" + previous->name + "' (which ends at " +
                     std::to_string(expected) + ")");
    if (t.begin > expected)
      fail(name, "there is a gap of " + std::to_string(t.begin - expected) + " bytes before tensor '" + t.name +
                     "' at " + range + (previous ? " (after tensor '" + previous->name + "')" : std::string()));
    expected = t.end;
    previous = &t;
  }
  if (expected != data_bytes)
    fail(name, std::to_string(data_bytes - expected) + " bytes after the last tensor are not described by the header");
  return out;
}

// ---- conversion to float32 -----------------------------------------------------------------------
float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  uint32_t mantissa = h & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // inf / NaN
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // 127 − 15 = 112
  } else if (mantissa == 0) {
    bits = sign;  // ±0
  } else {
    // Subnormal half: normalise the mantissa into a float32 normal number.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | uint32_t(112 - e) << 23 | ((mantissa & 0x3FFu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void convert_to_float32(const void* src, TensorDtype dtype, int64_t count, float* dst) {
  const auto* bytes = static_cast<const unsigned char*>(src);
  switch (dtype) {
    case TensorDtype::f32: std::memcpy(dst, bytes, size_t(count) * 4); return;
    case TensorDtype::bf16:
      for (int64_t i = 0; i < count; ++i) {
        uint16_t b;
        std::memcpy(&b, bytes + 2 * i, 2);
        dst[i] = bfloat16_to_float(b);
      }
      return;
    case TensorDtype::f16:
      for (int64_t i = 0; i < count; ++i) {
        uint16_t h;
        std::memcpy(&h, bytes + 2 * i, 2);
        dst[i] = half_to_float(h);
      }
      return;
    default: throw InputError(std::string("cannot convert dtype ") + to_string(dtype) + " to float32 (valid: F32, F16, BF16)");
  }
}

// ---- SafetensorsFile -----------------------------------------------------------------------------
SafetensorsFile::SafetensorsFile(const std::filesystem::path& path)
    : file_(path, int64_t(1) << 62), header_(parse_safetensors_header(file_.bytes(), file_.size(), path.string())) {}

std::string_view SafetensorsFile::raw(const SafetensorsTensor& t) const {
  return file_.bytes().substr(size_t(header_.data_start + t.begin), size_t(t.end - t.begin));
}

void SafetensorsFile::read_float32(const SafetensorsTensor& t, float* dst, bool release_pages) const {
  read_float32(t, dst, 0, t.count(), release_pages);
}

namespace {
// Weights are read as float32: only the dtypes that convert exactly.
void require_weight_dtype(const std::filesystem::path& file, const SafetensorsTensor& t) {
  require(converts_to_float32(t.dtype), "'" + file.string() + "': tensor '" + t.name + "' has dtype " +
                                            to_string(t.dtype) +
                                            ", which attnscope cannot read as weights (valid: F32, F16, BF16)");
}
}  // namespace

void SafetensorsFile::read_float32(const SafetensorsTensor& t, float* dst, int64_t first, int64_t count,
                                   bool release_pages) const {
  require_weight_dtype(path(), t);
  require(first >= 0 && count >= 0 && first + count <= t.count(), "read outside tensor '" + t.name + "'");
  const int size = element_bytes(t.dtype);
  const char* src = raw(t).data() + first * size;
  const uint64_t file_at = header_.data_start + t.begin + uint64_t(first * size);
  // Chunks of 64K values, converted and checked for NaN/inf while they are still in cache; large
  // ranges use every core (the page faults of the fresh float32 memory are most of the cost).
  constexpr int64_t chunk = 1 << 16;
  const int64_t chunks = (count + chunk - 1) / chunk;
  int64_t first_bad = count;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (chunks >= 16)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t at = c * chunk, n = std::min(chunk, count - at);
    convert_to_float32(src + at * size, t.dtype, n, dst + at);
    float probe = 0;
    for (int64_t i = 0; i < n; ++i) probe += dst[at + i] * 0.0f;  // NaN exactly when a value is not finite
    if (probe != 0.0f || std::isnan(probe))
      for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(dst[at + i])) {
          first_bad = std::min(first_bad, at + i);
          break;
        }
    // Hand the chunk's source pages back at once, so a large tensor (a 150K-token embedding) never
    // has its file bytes and its float32 copy resident together.
    if (release_pages) file_.release(file_at + uint64_t(at * size), uint64_t(n * size));
  }
  if (first_bad < count)
    throw InputError(std::string("'") + path().string() + "': tensor '" + t.name + "' holds " +
                     (std::isnan(dst[first_bad]) ? "NaN" : "infinity") + " at flat index " +
                     std::to_string(first + first_bad) + " (weights must be finite numbers)");
  if (release_pages) file_.release(file_at, uint64_t(count * size));
}

namespace {

// The index of the first value in [0, n) whose exponent bits are all ones (NaN or ±inf), or n: one
// AND and compare per value on the raw bits, 64 bytes at a time where the build has AVX-512.
int64_t first_non_finite(const char* src, int size, uint32_t exponent, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
  const int64_t per = 64 / size;
  if (size == 4) {
    const __m512i e = _mm512_set1_epi32(int(exponent));
    for (; i + per <= n; i += per)
      if (_mm512_cmpeq_epi32_mask(_mm512_and_si512(_mm512_loadu_si512(src + i * 4), e), e)) break;
  } else {
    const __m512i e = _mm512_set1_epi16(short(exponent));
    for (; i + per <= n; i += per)
      if (_mm512_cmpeq_epi16_mask(_mm512_and_si512(_mm512_loadu_si512(src + i * 2), e), e)) break;
  }
#endif
  for (; i < n; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, src + i * size, size_t(size));
    if ((bits & exponent) == exponent) return i;
  }
  return n;
}

}  // namespace

void SafetensorsFile::check_finite(const SafetensorsTensor& t) const {
  require_weight_dtype(path(), t);
  const int size = element_bytes(t.dtype);
  const uint32_t exponent = t.dtype == TensorDtype::f32 ? 0x7F800000u : t.dtype == TensorDtype::f16 ? 0x7C00u : 0x7F80u;
  const char* src = raw(t).data();
  const int64_t count = t.count();
  constexpr int64_t chunk = 1 << 18;
  const int64_t chunks = (count + chunk - 1) / chunk;
  int64_t first_bad = count;
#pragma omp parallel for schedule(static) reduction(min : first_bad) if (chunks >= 4)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t at = c * chunk, n = std::min(chunk, count - at);
    const int64_t bad = first_non_finite(src + at * size, size, exponent, n);
    if (bad < n) first_bad = std::min(first_bad, at + bad);
  }
  if (first_bad < count) {
    float value = 0;
    convert_to_float32(src + first_bad * size, t.dtype, 1, &value);
    throw InputError(std::string("'") + path().string() + "': tensor '" + t.name + "' holds " +
                     (std::isnan(value) ? "NaN" : "infinity") + " at flat index " + std::to_string(first_bad) +
                     " (weights must be finite numbers)");
  }
}

// ---- writing -------------------------------------------------------------------------------------
std::string serialize_safetensors(const std::vector<SafetensorsOutput>& tensors,
                                  const std::map<std::string, std::string>& metadata) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const SafetensorsOutput& t : tensors) {
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    const uint64_t bytes = uint64_t(count) * 4;
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(text.size()) >> (8 * i)) & 0xFF);
  out += text;
  out.reserve(out.size() + offset);
  for (const SafetensorsOutput& t : tensors) {
    int64_t count = 1;
    for (int64_t d : t.shape) count *= d;
    out.append(reinterpret_cast<const char*>(t.data), size_t(count) * 4);
  }
  return out;
}

}  // namespace attnscope
