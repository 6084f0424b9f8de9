// packed_matrix.cpp — packing, and the register-blocked product over 32-row panels.
//
// Micro-kernel: R rows of x × one panel (32 outputs). For each k, the panel's 32 weights are loaded
// once (two 512-bit or four 256-bit registers) and multiplied into R×32 accumulators by broadcasting
// x[r, k]; after the k loop the accumulators are stored (plus the bias). R = 8 with AVX-512 (16
// accumulators of 32 registers), 3 with AVX2 (12 of 16), 1 in the portable loop.
#include "attnscope/model/packed_matrix.h"

#include <algorithm>
#include <cstring>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/parallel.h"

namespace attnscope::model {

namespace {
constexpr int64_t P = PackedMatrix::panel;
}

PackedMatrix::PackedMatrix(int64_t rows, int64_t cols)
    : rows_(rows), cols_(cols), data_(new float[size_t((rows + P - 1) / P * cols * P)]) {
  // Left uninitialised (every row is packed before use: a fresh page is written once, not twice),
  // except the last panel's padding rows, which the product reads.
  const int64_t panels = (rows + P - 1) / P;
  if (rows % P != 0)
    for (int64_t c = 0; c < cols; ++c)
      std::fill(data_.get() + ((panels - 1) * cols + c) * P + rows % P, data_.get() + ((panels - 1) * cols + c + 1) * P, 0.0f);
}

PackedMatrix::PackedMatrix(const PackedMatrix& other) : PackedMatrix(other.rows_, other.cols_) {
  std::copy(other.data_.get(), other.data_.get() + other.storage_size(), data_.get());
}

PackedMatrix& PackedMatrix::operator=(const PackedMatrix& other) {
  if (this != &other) *this = PackedMatrix(other);
  return *this;
}

PackedMatrix PackedMatrix::from(const Mat& w) {
  PackedMatrix p(w.rows(), w.cols());
  p.set_rows(0, w.rows(), w.data());
  return p;
}

void PackedMatrix::set_rows(int64_t first_row, int64_t n, const float* rows) {
  // One panel per iteration, so threads write disjoint memory.
  const int64_t p0 = first_row / P, p1 = (first_row + n - 1) / P;
#pragma omp parallel for schedule(static) if (n * cols_ >= (int64_t(1) << 18))
  for (int64_t p = p0; p <= p1; ++p) {
    const int64_t r0 = std::max(first_row, p * P), r1 = std::min(first_row + n, (p + 1) * P);
    for (int64_t r = r0; r < r1; ++r) {
      float* dst = data_.get() + p * cols_ * P + r % P;
      const float* src = rows + (r - first_row) * cols_;
      for (int64_t c = 0; c < cols_; ++c) dst[c * P] = src[c];
    }
  }
}

void PackedMatrix::set_from_transposed(const float* t) {
  // Wᵀ [cols, rows]: row k of Wᵀ holds W[·, k], so each panel's [k][0..32) is a contiguous run.
  for (int64_t p = 0; p * P < rows_; ++p) {
    const int64_t width = std::min(P, rows_ - p * P);
    for (int64_t k = 0; k < cols_; ++k)
      std::memcpy(data_.get() + (p * cols_ + k) * P, t + k * rows_ + p * P, size_t(width) * sizeof(float));
  }
}

void PackedMatrix::row(int64_t r, float* dst) const {
  const float* src = data_.get() + (r / P) * cols_ * P + r % P;
  for (int64_t c = 0; c < cols_; ++c) dst[c] = src[c * P];
}

Mat PackedMatrix::to_mat() const {
  Mat m(rows_, cols_);
  for (int64_t r = 0; r < rows_; ++r) row(r, m.data() + r * cols_);
  return m;
}

// ---- the product ---------------------------------------------------------------------------------------
namespace {

// Stores R×32 results (only `width` valid columns at the matrix's right edge), adding the bias.
inline void store_block(const float* acc, int R, float* out, int64_t ldo, int64_t width, const float* bias) {
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < width; ++j) out[r * ldo + j] = acc[r * P + j] + (bias ? bias[j] : 0.0f);
}

#if defined(__AVX512F__)
constexpr int rows_per_block = 8;
template <int R>
void kernel(const float* x, int64_t ldx, const float* panel, int64_t K, float* out, int64_t ldo, int64_t width,
            const float* bias) {
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    const __m512 w0 = _mm512_loadu_ps(panel + k * P), w1 = _mm512_loadu_ps(panel + k * P + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_set1_ps(x[r * ldx + k]);
      acc[r][0] = _mm512_fmadd_ps(xv, w0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(xv, w1, acc[r][1]);
    }
  }
  alignas(64) float tmp[R * P];
  for (int r = 0; r < R; ++r) {
    _mm512_store_ps(tmp + r * P, acc[r][0]);
    _mm512_store_ps(tmp + r * P + 16, acc[r][1]);
  }
  store_block(tmp, R, out, ldo, width, bias);
}
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int rows_per_block = 3;
template <int R>
void kernel(const float* x, int64_t ldx, const float* panel, int64_t K, float* out, int64_t ldo, int64_t width,
            const float* bias) {
  __m256 acc[R][4];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < 4; ++q) acc[r][q] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    __m256 w[4];
    for (int q = 0; q < 4; ++q) w[q] = _mm256_loadu_ps(panel + k * P + 8 * q);
    for (int r = 0; r < R; ++r) {
      const __m256 xv = _mm256_broadcast_ss(x + r * ldx + k);
      for (int q = 0; q < 4; ++q) acc[r][q] = _mm256_fmadd_ps(xv, w[q], acc[r][q]);
    }
  }
  alignas(32) float tmp[R * P];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < 4; ++q) _mm256_store_ps(tmp + r * P + 8 * q, acc[r][q]);
  store_block(tmp, R, out, ldo, width, bias);
}
#else
constexpr int rows_per_block = 1;
template <int R>
void kernel(const float* x, int64_t ldx, const float* panel, int64_t K, float* out, int64_t ldo, int64_t width,
            const float* bias) {
  float acc[R * P] = {};
  for (int64_t k = 0; k < K; ++k)
    for (int r = 0; r < R; ++r) {
      const float xv = x[r * ldx + k];
      for (int64_t j = 0; j < P; ++j) acc[r * P + j] += xv * panel[k * P + j];
    }
  store_block(acc, R, out, ldo, width, bias);
}
#endif

// Rows [m0, m1) of x against one panel, in blocks of rows_per_block and a remainder block.
template <int R = rows_per_block>
void rows_against_panel(const float* x, int64_t K, int64_t m0, int64_t m1, const float* panel, float* out,
                        int64_t ldo, int64_t width, const float* bias) {
  int64_t m = m0;
  for (; m + R <= m1; m += R) kernel<R>(x + m * K, K, panel, K, out + m * ldo, ldo, width, bias);
  if constexpr (R > 1)
    if (m < m1) rows_against_panel<R - 1>(x, K, m, m1, panel, out, ldo, width, bias);
}

}  // namespace

void linear_forward_packed(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT) {
  const int64_t K = w.cols(), N = w.rows(), panels = (N + P - 1) / P;
  const bool serial = int64_t(BT) * K * N < detail::serial_work_limit;
  // Rows in chunks, so that a long input's rows stay in cache while every panel passes by.
  constexpr int64_t chunk = 256;
  for (int64_t m0 = 0; m0 < BT; m0 += chunk) {
    const int64_t m1 = std::min<int64_t>(BT, m0 + chunk);
#pragma omp parallel for schedule(static) if (!serial)
    for (int64_t p = 0; p < panels; ++p)
      rows_against_panel(x, K, m0, m1, w.data() + p * K * P, out + p * P, N, std::min(P, N - p * P),
                         bias ? bias + p * P : nullptr);
  }
}

void linear_forward_packed_reference(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT) {
  for (int64_t t = 0; t < BT; ++t)
    for (int64_t o = 0; o < w.rows(); ++o) {
      double s = bias ? double(bias[o]) : 0.0;
      for (int64_t i = 0; i < w.cols(); ++i) s += double(x[t * w.cols() + i]) * double(w(o, i));
      out[t * w.rows() + o] = float(s);
    }
}

}  // namespace attnscope::model
