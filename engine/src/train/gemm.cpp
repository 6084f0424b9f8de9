// gemm.cpp — packed AVX-512 matrix product for training's linear layers (see gemm.h), a SIMD128 one for the
// browser build, Eigen's elsewhere.
#include "train/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#else
#include <Eigen/Core>
#endif

namespace attnscope::train {

#if defined(__AVX512F__) || defined(__wasm_simd128__)
namespace {
// The products the packed kernels never see: nothing to write (M or N is 0), or K = 0, where C = 0 (or,
// accumulating, stays as it is). Returns whether it handled the call.
bool empty_product(int M, int N, int K, float* c, int64_t ldc, bool accumulate) {
  if (M <= 0 || N <= 0) return true;
  if (K > 0) return false;
  if (!accumulate)
    for (int i = 0; i < M; ++i) std::fill(c + i * ldc, c + i * ldc + N, 0.0f);
  return true;
}
}  // namespace
#endif

#ifdef __AVX512F__

namespace {

constexpr int MR = 12;   // rows of the register kernel
constexpr int NR = 32;   // columns: two vectors of 16
constexpr int KC = 256;  // depth of one packed block (A panel 12 KB, B panel 32 KB: the B panel stays in L1)
constexpr int MC = 192;  // rows of A packed at once (192 KB: in L2 while every B panel passes over it)

// A 64-byte-aligned scratch buffer of this thread, grown as needed and kept between calls.
struct Scratch {
  float* data = nullptr;
  size_t size = 0;
  float* get(size_t n) {
    if (n > size) {
      std::free(data);
      size = n;
      data = static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64));
    }
    return data;
  }
  ~Scratch() { std::free(data); }
};

// A(i0.., k0..) rows × kc into 12-row panels of MR·KC floats each, in one of two layouts so that both
// packs are vector copies:
//   rows of A contiguous (a_col = 1: activations, dout in dx):   panel[r·KC + k]  (row-major)
//   columns of A contiguous (a_row = 1: doutᵀ in dweight):       panel[k·MR + r]  (k-major)
// Rows past the end are zero. Returns whether the layout is k-major.
bool pack_a(float* out, const float* a, int64_t a_row, int64_t a_col, int rows, int kc) {
  const bool k_major = a_col != 1;
  for (int p = 0; p < rows; p += MR) {
    const int n = std::min(MR, rows - p);
    float* dst = out + int64_t(p / MR) * MR * KC;
    if (!k_major) {
      for (int r = 0; r < MR; ++r) {
        float* d = dst + r * KC;
        if (r < n) std::copy(a + int64_t(p + r) * a_row, a + int64_t(p + r) * a_row + kc, d);
        else std::fill(d, d + kc, 0.0f);
      }
    } else if (a_row == 1) {
      const __mmask16 valid = __mmask16((1u << n) - 1);
      for (int k = 0; k < kc; ++k)
        _mm512_mask_storeu_ps(dst + k * MR, __mmask16(0x0FFF), _mm512_maskz_loadu_ps(valid, a + p + k * a_col));
    } else {  // neither contiguous (not used by training): element by element
      for (int k = 0; k < kc; ++k)
        for (int r = 0; r < MR; ++r) dst[k * MR + r] = r < n ? a[int64_t(p + r) * a_row + k * a_col] : 0.0f;
    }
  }
  return k_major;
}

// B(k0.., j0..) kc × cols (cols ≤ 32) into one panel: for each k, 32 columns (zero past cols).
void pack_b(float* out, const float* b, int64_t b_row, int64_t b_col, int kc, int cols) {
  if (b_col == 1) {  // rows of B contiguous
    for (int k = 0; k < kc; ++k) {
      const float* src = b + k * b_row;
      float* dst = out + k * NR;
      if (cols == NR) {
        _mm512_store_ps(dst, _mm512_loadu_ps(src));
        _mm512_store_ps(dst + 16, _mm512_loadu_ps(src + 16));
      } else {
        for (int j = 0; j < cols; ++j) dst[j] = src[j];
        for (int j = cols; j < NR; ++j) dst[j] = 0.0f;
      }
    }
  } else {  // columns of B contiguous (Wᵀ of a row-major weight): transpose
    int k_done = 0;
    if (b_row == 1 && cols == NR) {
      // 16 × 16 blocks in registers: 16 columns of B (rows of W), 16 deep each, transposed by four rounds
      // of swapping the off-diagonal sub-blocks (8, 4, 2, 1 wide) with two-source permutes.
      alignas(64) int lo_index[4][16], hi_index[4][16];
      for (int s = 0, w = 8; s < 4; ++s, w /= 2)
        for (int l = 0; l < 16; ++l) {
          lo_index[s][l] = (l & w) ? 16 + l - w : l;
          hi_index[s][l] = (l & w) ? 16 + l : l + w;
        }
      for (; k_done + 16 <= kc; k_done += 16)
        for (int half = 0; half < 2; ++half) {
          __m512 r[16];
          for (int j = 0; j < 16; ++j) r[j] = _mm512_loadu_ps(b + int64_t(half * 16 + j) * b_col + k_done);
          for (int s = 0, w = 8; s < 4; ++s, w /= 2) {
            const __m512i lo = _mm512_load_si512(lo_index[s]), hi = _mm512_load_si512(hi_index[s]);
            for (int i = 0; i < 16; ++i)
              if (!(i & w)) {
                const __m512 x = r[i], y = r[i + w];
                r[i] = _mm512_permutex2var_ps(x, lo, y);
                r[i + w] = _mm512_permutex2var_ps(x, hi, y);
              }
          }
          for (int kk = 0; kk < 16; ++kk) _mm512_store_ps(out + (k_done + kk) * NR + half * 16, r[kk]);
        }
    }
    for (int j = 0; j < NR; ++j) {
      if (j < cols) {
        const float* src = b + j * b_col;
        for (int k = k_done; k < kc; ++k) out[k * NR + j] = src[k * b_row];
      } else {
        for (int k = k_done; k < kc; ++k) out[k * NR + j] = 0.0f;
      }
    }
  }
}

// C (rows ≤ 12, cols ≤ 32) (+)= the product of one A panel (either layout of pack_a) and one B panel over kc.
template <bool k_major>
inline void kernel(int kc, const float* __restrict a, const float* __restrict b, float* c, int64_t ldc, int rows,
                   int cols, bool add) {
  __m512 acc[MR][2];
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) acc[r][0] = _mm512_setzero_ps(), acc[r][1] = _mm512_setzero_ps();
  for (int k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(b + k * NR), b1 = _mm512_load_ps(b + k * NR + 16);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      const __m512 ar = _mm512_set1_ps(k_major ? a[k * MR + r] : a[r * KC + k]);
      acc[r][0] = _mm512_fmadd_ps(ar, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(ar, b1, acc[r][1]);
    }
  }
  const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << cols) - 1);
  const __mmask16 m1 = cols >= 32 ? __mmask16(0xFFFF) : cols > 16 ? __mmask16((1u << (cols - 16)) - 1) : __mmask16(0);
#pragma GCC unroll 12
  for (int r = 0; r < MR; ++r) {
    if (r >= rows) break;
    float* cr = c + r * ldc;
    __m512 v0 = acc[r][0], v1 = acc[r][1];
    if (add) {
      v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, cr), v0);
      v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, cr + 16), v1);
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

}  // namespace

void gemm(int M, int N, int K, const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t b_row,
          int64_t b_col, float* c, int64_t ldc, bool accumulate) {
  if (empty_product(M, N, K, c, ldc, accumulate)) return;
  thread_local Scratch a_buf, b_buf;
  const int n_panels = (N + NR - 1) / NR;
  float* ap = a_buf.get(size_t(MC) * KC);  // MC is a multiple of MR: MC / MR panels of MR·KC
  float* bp = b_buf.get(size_t(n_panels) * KC * NR);
  for (int k0 = 0; k0 < K; k0 += KC) {
    const int kc = std::min(KC, K - k0);
    const bool add = accumulate || k0 > 0;
    // every panel of B for this depth block, once (at most 2 MB: the whole of it stays in L2/L3)
    for (int p = 0; p < n_panels; ++p)
      pack_b(bp + size_t(p) * kc * NR, b + k0 * b_row + int64_t(p) * NR * b_col, b_row, b_col, kc,
             std::min(NR, N - p * NR));
    for (int i1 = 0; i1 < M; i1 += MC) {
      const int mc = std::min(MC, M - i1);
      // this block of A stays in L2
      const bool k_major = pack_a(ap, a + k0 * a_col + i1 * a_row, a_row, a_col, mc, kc);
      for (int p = 0; p < n_panels; ++p) {
        const int j0 = p * NR, cols = std::min(NR, N - j0);
        const float* bpanel = bp + size_t(p) * kc * NR;
        for (int i0 = 0; i0 < mc; i0 += MR) {
          const float* apanel = ap + int64_t(i0) * KC;  // panel i0 / MR of MR·KC floats
          float* cblock = c + (i1 + i0) * ldc + j0;
          if (k_major) kernel<true>(kc, apanel, bpanel, cblock, ldc, std::min(MR, mc - i0), cols, add);
          else kernel<false>(kc, apanel, bpanel, cblock, ldc, std::min(MR, mc - i0), cols, add);
        }
      }
    }
  }
}

#elif defined(__wasm_simd128__)  // the browser build (-msimd128): Eigen 3.4 has no SIMD128 packets

namespace {

constexpr int MR = 4;    // rows of the register kernel
constexpr int NR = 8;    // columns: two vectors of 4 (8 accumulators, the pair of B and A's broadcast: 11 of 16 registers)
constexpr int KC = 256;  // depth of one block, as the AVX-512 path's

// B(k0.., j0..) kc × cols (cols ≤ 8) into one panel: for each k, 8 columns (zero past cols).
void pack_b(float* out, const float* b, int64_t b_row, int64_t b_col, int kc, int cols) {
  for (int k = 0; k < kc; ++k) {
    const float* src = b + k * b_row;
    float* dst = out + k * NR;
    for (int j = 0; j < NR; ++j) dst[j] = j < cols ? src[j * b_col] : 0.0f;
  }
}

// C (rows ≤ 4, cols ≤ 8) (+)= A's rows (read in place by their strides) · one B panel over kc. Each entry is
// a multiply then an add per k, in k's order (SIMD128 has no fused multiply–add).
inline void kernel(int kc, const float* a, int64_t a_row, int64_t a_col, const float* __restrict b, float* c, int64_t ldc,
                   int rows, int cols, bool add) {
  const float* ar[MR];
  for (int r = 0; r < MR; ++r) ar[r] = a + std::min(r, rows - 1) * a_row;  // past the end: the last row again, not stored
  v128_t acc[MR][2];
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = wasm_f32x4_splat(0.0f);
  for (int k = 0; k < kc; ++k) {
    const v128_t b0 = wasm_v128_load(b + k * NR), b1 = wasm_v128_load(b + k * NR + 4);
    for (int r = 0; r < MR; ++r) {
      const v128_t av = wasm_f32x4_splat(ar[r][k * a_col]);
      acc[r][0] = wasm_f32x4_add(acc[r][0], wasm_f32x4_mul(av, b0));
      acc[r][1] = wasm_f32x4_add(acc[r][1], wasm_f32x4_mul(av, b1));
    }
  }
  for (int r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    alignas(16) float v[NR];
    wasm_v128_store(v, acc[r][0]);
    wasm_v128_store(v + 4, acc[r][1]);
    for (int j = 0; j < cols; ++j) cr[j] = add ? cr[j] + v[j] : v[j];
  }
}

}  // namespace

void gemm(int M, int N, int K, const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t b_row,
          int64_t b_col, float* c, int64_t ldc, bool accumulate) {
  if (empty_product(M, N, K, c, ldc, accumulate)) return;
  thread_local std::vector<float> b_buf;
  const int n_panels = (N + NR - 1) / NR;
  b_buf.resize(size_t(n_panels) * KC * NR);
  float* bp = b_buf.data();
  for (int k0 = 0; k0 < K; k0 += KC) {
    const int kc = std::min(KC, K - k0);
    const bool add = accumulate || k0 > 0;
    for (int p = 0; p < n_panels; ++p)
      pack_b(bp + size_t(p) * kc * NR, b + k0 * b_row + int64_t(p) * NR * b_col, b_row, b_col, kc,
             std::min(NR, N - p * NR));
    for (int i0 = 0; i0 < M; i0 += MR)  // four rows of A (4 KB at most) stay in L1 while every panel passes
      for (int p = 0; p < n_panels; ++p) {
        const int j0 = p * NR;
        kernel(kc, a + i0 * a_row + k0 * a_col, a_row, a_col, bp + size_t(p) * kc * NR, c + i0 * ldc + j0, ldc,
               std::min(MR, M - i0), std::min(NR, N - j0), add);
      }
  }
}

#else  // without AVX-512 or SIMD128: Eigen, the same contract

void gemm(int M, int N, int K, const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t b_row,
          int64_t b_col, float* c, int64_t ldc, bool accumulate) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;
  const Eigen::Map<const Mat, 0, Stride> A(a, M, K, Stride(a_row, a_col)), B(b, K, N, Stride(b_row, b_col));
  Eigen::Map<Mat, 0, Eigen::OuterStride<>> C(c, M, N, Eigen::OuterStride<>(ldc));
  if (accumulate) C.noalias() += A * B;
  else C.noalias() = A * B;
}

#endif

void linear_forward(float* out, const float* x, const float* weight, const float* bias, int BT, int IC, int OC) {
  // out = x · weightᵀ: B(k, j) = weight[j, k]
  gemm(BT, OC, IC, x, IC, 1, weight, 1, IC, out, OC, false);
  if (bias)
    for (int i = 0; i < BT; ++i)
      for (int j = 0; j < OC; ++j) out[int64_t(i) * OC + j] += bias[j];
}

void linear_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x, const float* weight,
                     int BT, int IC, int OC) {
  if (dx) gemm(BT, IC, OC, dout, OC, 1, weight, IC, 1, dx, IC, true);           // dx += dout · weight
  gemm(OC, IC, BT, dout, 1, OC, x, IC, 1, dweight, IC, true);                    // dweight += doutᵀ · x
  if (dbias)
    for (int i = 0; i < BT; ++i)
      for (int j = 0; j < OC; ++j) dbias[j] += dout[int64_t(i) * OC + j];
}

}  // namespace attnscope::train
