// npy.h — NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Reading accepts little-endian float32 ('<f4') and float64 ('<f8', converted to float32), C or
// Fortran order, of 1 to 3 dimensions (4 when asked). A malformed, truncated or unsupported file raises InputError
// naming the file and the problem. Writing produces version 1.0, '<f4', C order, through a
// temporary file renamed into place.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope {

struct NpyArray {
  std::vector<int64_t> shape;  // C-order dimensions
  std::vector<float> data;     // C-order values, product(shape) of them
};

// `name` is used in error messages (usually the path). max_dims: 4 for a model's [L, H, T, T]
// attention stack; every other file is at most 3D.
NpyArray parse_npy(std::string_view bytes, const std::string& name, int max_dims = 3);
NpyArray read_npy(const std::filesystem::path& path, int max_dims = 3);

std::string serialize_npy(const float* data, const std::vector<int64_t>& shape);
void write_npy(const std::filesystem::path& path, const float* data, const std::vector<int64_t>& shape);
void write_npy(const std::filesystem::path& path, const Mat& m);      // [rows, cols]
void write_npy(const std::filesystem::path& path, const Tensor3& t);  // [A, B, D]; A ≥ 1

// Reads a 2D array into a matrix; throws InputError when it is not [rows, cols] (a 1D file is a
// single row only if allow_1d). expected_rows/cols < 0 means "any".
Mat read_npy_matrix(const std::filesystem::path& path, int64_t expected_rows = -1, int64_t expected_cols = -1);
Vec read_npy_vector(const std::filesystem::path& path, int64_t expected_size = -1);

}  // namespace attnscope
