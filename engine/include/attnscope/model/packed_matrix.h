// packed_matrix.h — a weight matrix stored in the order the inference matrix product reads it.
//
// A linear layer's weight W [rows = out, cols = in] (nn.Linear layout) is kept as panels of 32 rows:
// panel p holds W[32p + j, k] at [p][k][j] (j < 32; the last panel is zero-padded). The product
// out = x·Wᵀ then streams each panel once, contiguously, while a block of x's rows stays in
// registers: 2–3× the speed of a general GEMM that re-packs W on every call, for the few-hundred-row
// x of a forward pass (bench_model, README "Real models"). Packing happens once, at load.
// Legend: BT rows of x, OC = rows (outputs), IC = cols (inputs).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope::model {

class PackedMatrix {
 public:
  static constexpr int64_t panel = 32;

  PackedMatrix() = default;
  PackedMatrix(int64_t rows, int64_t cols);  // values unset until set_rows/set_from_transposed
  PackedMatrix(const PackedMatrix& other);
  PackedMatrix& operator=(const PackedMatrix& other);
  PackedMatrix(PackedMatrix&&) noexcept = default;
  PackedMatrix& operator=(PackedMatrix&&) noexcept = default;
  static PackedMatrix from(const Mat& w);    // w [rows, cols]

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  bool empty() const { return rows_ == 0; }
  float operator()(int64_t r, int64_t c) const { return data_[size_t(((r / panel) * cols_ + c) * panel + r % panel)]; }
  int64_t storage_size() const { return (rows_ + panel - 1) / panel * cols_ * panel; }

  // Packs n rows of W [n, cols] (row-major) starting at `first_row`.
  void set_rows(int64_t first_row, int64_t n, const float* rows);
  // Packs W from its transpose Wᵀ [cols, rows] (row-major): GPT-2's Conv1D weights are stored so.
  void set_from_transposed(const float* transposed);
  void row(int64_t r, float* dst) const;  // W[r, :] → dst [cols] (an embedding lookup)
  Mat to_mat() const;                     // [rows, cols]
  const float* data() const { return data_.get(); }

 private:
  int64_t rows_ = 0, cols_ = 0;
  std::unique_ptr<float[]> data_;  // [ceil(rows / 32)][cols][32]
};

// out [BT, OC] = x [BT, IC]·Wᵀ + bias [OC] (bias may be null). Vectorised (AVX-512 or AVX2 when the
// build targets them) and split over OpenMP threads by panels when the product is large.
void linear_forward_packed(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT);

// The same product as plain loops over the unpacked indices, accumulating in double (the oracle).
void linear_forward_packed_reference(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT);

}  // namespace attnscope::model
