// mxfp4.h — MXFP4 weights (OCP Microscaling FP4) as the published gpt-oss files store its experts, read in
// place from the mapped file: kept at 4 bits in memory, widened to float32 only when an expert is used.
//
// The layout (transformers 5.x integrations/mxfp4.py: Mxfp4GptOssExperts, convert_moe_packed_tensors):
//   NAME_blocks  U8 [E, rows, cols/32, 16]   byte b of block g of row r holds two FP4 (e2m1) codes:
//                                           W[r, 32g + 2b] in its low nibble, W[r, 32g + 2b + 1] in its high
//   NAME_scales  U8 [E, rows, cols/32]       one e8m0 exponent per block of 32 values
//   W[r, c] = fp4(code) · 2^(scale − 127),  fp4 = ±{0, 0.5, 1, 1.5, 2, 3, 4, 6} (code bit 3 the sign)
// W is each expert's matrix in nn.Linear layout [out, in]: gate_up_proj [2F, C] (its rows gate and up
// interleaved), down_proj [C, F]. Every value is a float32 exactly (an FP4 value has two significant
// bits; 2^(s − 127) down to 2^−127 is a float32), so widening is exact. A scale above 252 would make
// ±4 and ±6 overflow float32 (255 is e8m0's NaN) and is refused, as NaN/inf weights are elsewhere.
// Legend: E experts, n rows of x.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/io/safetensors.h"

namespace attnscope::model {

// FP4 e2m1 codes 0–15 (transformers' FP4_VALUES).
inline constexpr float fp4_e2m1_values[16] = {+0.0f, +0.5f, +1.0f, +1.5f, +2.0f, +3.0f, +4.0f, +6.0f,
                                              -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};
inline constexpr int mxfp4_block = 32;       // values per scale
inline constexpr int mxfp4_max_scale = 252;  // the largest e8m0 exponent whose block stays finite

// One expert's W [rows, cols] in MXFP4, in place: blocks [rows, cols/32, 16] bytes, scales [rows, cols/32].
class Mxfp4Matrix {
 public:
  Mxfp4Matrix() = default;
  Mxfp4Matrix(const uint8_t* blocks, const uint8_t* scales, int64_t rows, int64_t cols, std::shared_ptr<const void> keep);
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  bool empty() const { return rows_ == 0; }
  int64_t bytes() const { return rows_ * cols_ / 2 + rows_ * cols_ / mxfp4_block; }  // what it holds: 4.25 bits a value
  // W[r, c] by the definition above (std::ldexp on the table value): the plain oracle.
  float operator()(int64_t r, int64_t c) const;
  // Rows [first, first + n) widened to float32 into dst [n, cols] (a table of byte → two values, times
  // the block's power of two built from its exponent bits): what the product uses.
  void widen_rows(int64_t first, int64_t n, float* dst) const;

 private:
  const uint8_t* blocks_ = nullptr;
  const uint8_t* scales_ = nullptr;
  int64_t rows_ = 0, cols_ = 0;
  std::shared_ptr<const void> keep_;  // owns the mapped bytes
};

// out [n, rows] = x [n, cols]·Wᵀ + bias [rows] (bias may be null): W widened 64 rows at a time into a
// thread's buffer, each chunk multiplied by all n rows of x while it is in cache.
void mxfp4_linear(float* out, const float* x, const Mxfp4Matrix& w, const float* bias, int n);

// The E experts' matrices of one MXFP4 weight read in place, after checking both tensors: dtype U8, blocks
// [E, rows, cols/32, 16] and scales [E, rows, cols/32] (cols a multiple of 32), and every scale at most
// mxfp4_max_scale. `prefix` is the weight's name without "_blocks"/"_scales"; `where` (the file) goes
// into messages. Throws InputError naming the file, the tensor, the shape found and the valid one.
// `keep` owns blocks_data and scales_data (the tensors' bytes).
std::vector<Mxfp4Matrix> mxfp4_experts(const std::string& where, const std::string& prefix,
                                       const SafetensorsTensor& blocks, const void* blocks_data,
                                       const SafetensorsTensor& scales, const void* scales_data, int64_t experts,
                                       int64_t rows, int64_t cols, const std::shared_ptr<const void>& keep);

}  // namespace attnscope::model
