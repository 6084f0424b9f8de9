// npy.cpp — .npy parsing with a message for every way a file can be wrong.
//
// Layout: "\x93NUMPY" major minor, header length (uint16 for v1, uint32 for v2/v3), then a Python
// dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces and a
// newline, then the raw data.
#include "attnscope/io/npy.h"

#include <cstring>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/mapped_file.h"
#include "attnscope/core/limits.h"

namespace attnscope {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw InputError("'" + name + "' is not a valid .npy file: " + what);
}

size_t skip_spaces(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return i;
}

// Returns the text of the value that follows 'key': in the header dict.
std::string_view dict_value(std::string_view header, std::string_view key, const std::string& name) {
  const std::string quoted1 = "'" + std::string(key) + "'";
  const std::string quoted2 = "\"" + std::string(key) + "\"";
  size_t at = header.find(quoted1);
  size_t len = quoted1.size();
  if (at == std::string_view::npos) at = header.find(quoted2), len = quoted2.size();
  if (at == std::string_view::npos) fail(name, "header has no '" + std::string(key) + "' entry");
  size_t i = skip_spaces(header, at + len);
  if (i >= header.size() || header[i] != ':') fail(name, "header entry '" + std::string(key) + "' has no value");
  i = skip_spaces(header, i + 1);
  size_t end = i;
  if (end < header.size() && header[end] == '(') {
    end = header.find(')', end);
    if (end == std::string_view::npos) fail(name, "header 'shape' tuple is not closed");
    ++end;
  } else if (end < header.size() && (header[end] == '\'' || header[end] == '"')) {
    end = header.find(header[i], i + 1);
    if (end == std::string_view::npos) fail(name, "header entry '" + std::string(key) + "' has an unclosed string");
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  return header.substr(i, end - i);
}

std::vector<int64_t> parse_shape(std::string_view tuple, const std::string& name) {
  if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')') fail(name, "header 'shape' is not a tuple");
  std::vector<int64_t> shape;
  std::string_view inner = tuple.substr(1, tuple.size() - 2);
  size_t i = 0;
  while (true) {
    i = skip_spaces(inner, i);
    if (i >= inner.size()) break;
    size_t j = i;
    int64_t v = 0;
    while (j < inner.size() && inner[j] >= '0' && inner[j] <= '9') {
      if (v > (int64_t(1) << 40)) fail(name, "a dimension in 'shape' is absurdly large");
      v = v * 10 + (inner[j] - '0');
      ++j;
    }
    if (j == i) fail(name, "header 'shape' holds something other than non-negative integers");
    shape.push_back(v);
    j = skip_spaces(inner, j);
    if (j < inner.size() && inner[j] == 'L') j = skip_spaces(inner, j + 1);  // Python 2 longs
    if (j >= inner.size()) break;
    if (inner[j] != ',') fail(name, "header 'shape' is malformed");
    i = j + 1;
  }
  return shape;
}

}  // namespace

NpyArray parse_npy(std::string_view bytes, const std::string& name, int max_dims) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    fail(name, "it does not start with the \\x93NUMPY magic (is it a .npy file?)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = size_t(static_cast<unsigned char>(bytes[8])) | size_t(static_cast<unsigned char>(bytes[9])) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(name, "the file ends inside its header");
    header_len = 0;
    for (int k = 0; k < 4; ++k) header_len |= size_t(static_cast<unsigned char>(bytes[8 + k])) << (8 * k);
    header_start = 12;
  } else {
    fail(name, "format version " + std::to_string(major) + " is not supported (valid: 1, 2, 3)");
  }
  if (header_len > bytes.size() - header_start) fail(name, "the file ends inside its header (truncated?)");
  const std::string_view header = bytes.substr(header_start, header_len);
  if (header.find('{') == std::string_view::npos || header.find('}') == std::string_view::npos)
    fail(name, "the header is not a dict");

  std::string_view descr = dict_value(header, "descr", name);
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);
  int element_bytes;
  bool is_double;
  if (descr == "<f4" || descr == "f4" || descr == "=f4") {
    element_bytes = 4, is_double = false;
  } else if (descr == "<f8" || descr == "f8" || descr == "=f8") {
    element_bytes = 8, is_double = true;
  } else {
    fail(name, "dtype '" + std::string(descr) +
                   "' is not supported (valid: little-endian float32 '<f4' or float64 '<f8')");
  }
  const std::string_view order = dict_value(header, "fortran_order", name);
  bool fortran;
  if (order == "False") fortran = false;
  else if (order == "True") fortran = true;
  else fail(name, "header 'fortran_order' must be True or False");

  NpyArray a;
  a.shape = parse_shape(dict_value(header, "shape", name), name);
  if (a.shape.empty() || int(a.shape.size()) > max_dims)
    fail(name, "it has " + std::to_string(a.shape.size()) + " dimensions (valid: 1 to " + std::to_string(max_dims) + ")");
  int64_t count = 1;
  for (int64_t d : a.shape) {
    if (d == 0) fail(name, "it has a zero-length dimension (empty array)");
    if (count > limits::max_file_bytes / d) fail(name, "its shape is too large");
    count *= d;
  }
  const size_t data_start = header_start + header_len;
  const size_t need = size_t(count) * size_t(element_bytes);
  if (bytes.size() - data_start < need)
    fail(name, "truncated: the shape " + std::to_string(count) + " values needs " + std::to_string(need) +
                   " data bytes but the file has " + std::to_string(bytes.size() - data_start));
  if (bytes.size() - data_start > need)
    fail(name, "it has " + std::to_string(bytes.size() - data_start - need) +
                   " extra bytes after the data (the header's shape does not match the data)");

  std::vector<float> raw(static_cast<size_t>(count));
  const char* p = bytes.data() + data_start;
  if (is_double) {
    for (int64_t i = 0; i < count; ++i) {
      double v;
      std::memcpy(&v, p + 8 * i, 8);
      raw[size_t(i)] = float(v);
    }
  } else {
    std::memcpy(raw.data(), p, need);
  }
  if (!fortran || a.shape.size() == 1) {
    a.data = std::move(raw);
    return a;
  }
  // Fortran order: the first index varies fastest. Re-lay in C order, walking the C-order index as
  // an odometer (last dimension fastest) and tracking the matching Fortran offset.
  a.data.resize(raw.size());
  const auto& s = a.shape;
  const size_t n = s.size();
  std::vector<int64_t> index(n, 0), fortran_stride(n, 1);
  for (size_t d = 1; d < n; ++d) fortran_stride[d] = fortran_stride[d - 1] * s[d - 1];
  int64_t from = 0;
  for (size_t to = 0; to < raw.size(); ++to) {
    a.data[to] = raw[size_t(from)];
    for (size_t d = n; d-- > 0;) {
      if (++index[d] < s[d]) {
        from += fortran_stride[d];
        break;
      }
      from -= (s[d] - 1) * fortran_stride[d];
      index[d] = 0;
    }
  }
  return a;
}

NpyArray read_npy(const std::filesystem::path& path, int max_dims) {
  // Mapped, not read into a string: a 1 GiB attention stack then needs its float copy only, not twice
  // its size.
  require_regular_file(path);
  const MappedFile file(path, limits::max_file_bytes);
  return parse_npy(file.bytes(), path.string(), max_dims);
}

std::string serialize_npy(const float* data, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  int64_t count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    dict += (shape.size() == 1 || i + 1 < shape.size()) ? ", " : "";
    count *= shape[i];
  }
  if (!dict.empty() && dict.back() == ' ') dict.pop_back();  // "(3, 4)" and "(3,)"
  dict += "), }";
  // Pad so that the data starts on a 64-byte boundary; the header ends with '\n'.
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(dict.size() & 0xFF);
  out += char((dict.size() >> 8) & 0xFF);
  out += dict;
  out.append(reinterpret_cast<const char*>(data), size_t(count) * sizeof(float));
  return out;
}

void write_npy(const std::filesystem::path& path, const float* data, const std::vector<int64_t>& shape) {
  write_file_atomic(path, serialize_npy(data, shape));
}

void write_npy(const std::filesystem::path& path, const Mat& m) {
  write_npy(path, m.data(), {int64_t(m.rows()), int64_t(m.cols())});
}

void write_npy(const std::filesystem::path& path, const Tensor3& t) {
  require(!t.empty(), "cannot write an empty tensor to '" + path.string() + "'");
  const int64_t rows = t[0].rows(), cols = t[0].cols();
  std::vector<float> flat;
  flat.reserve(size_t(t.size() * rows * cols));
  for (const Mat& m : t) flat.insert(flat.end(), m.data(), m.data() + m.size());
  write_npy(path, flat.data(), {int64_t(t.size()), rows, cols});
}

Mat read_npy_matrix(const std::filesystem::path& path, int64_t expected_rows, int64_t expected_cols) {
  const NpyArray a = read_npy(path);
  auto expected = [&] {
    return "[" + (expected_rows < 0 ? std::string("any") : std::to_string(expected_rows)) + ", " +
           (expected_cols < 0 ? std::string("any") : std::to_string(expected_cols)) + "]";
  };
  std::string got = "[";
  for (size_t i = 0; i < a.shape.size(); ++i) got += (i ? ", " : "") + std::to_string(a.shape[i]);
  got += "]";
  require(a.shape.size() == 2, "'" + path.string() + "' has shape " + got + " but a 2D array " + expected() +
                                   " is needed");
  require((expected_rows < 0 || a.shape[0] == expected_rows) && (expected_cols < 0 || a.shape[1] == expected_cols),
          "'" + path.string() + "' has shape " + got + " but " + expected() + " is needed");
  Mat m(a.shape[0], a.shape[1]);
  std::memcpy(m.data(), a.data.data(), a.data.size() * sizeof(float));
  return m;
}

Vec read_npy_vector(const std::filesystem::path& path, int64_t expected_size) {
  const NpyArray a = read_npy(path);
  require(a.shape.size() == 1 && (expected_size < 0 || a.shape[0] == expected_size),
          "'" + path.string() + "' must be a 1D array of " +
              (expected_size < 0 ? std::string("any length") : std::to_string(expected_size) + " values"));
  Vec v(a.shape[0]);
  std::memcpy(v.data(), a.data.data(), a.data.size() * sizeof(float));
  return v;
}

}  // namespace attnscope
