// gemm.h — (private) the float32 matrix product of training's linear layers, blocked for AVX-512.
//
// Eigen's product reaches about half the rate of the machine's sgemm on one core at training's
// shapes (B·T = 256–512 rows, widths 256–2048): measured on this EPYC, 75–80 GFLOP/s single-threaded
// against OpenBLAS's 150–175 in the same minute. This one follows the GotoBLAS layout: a block of A
// (every row, 256 of the K columns) packed into 12-row panels, B packed 32 columns at a time, and a
// 12×32 register kernel (24 accumulators of 16 lanes) that reads both panels from the cache.
//
//   C [M, N] (+)= A [M, K] · B [K, N], A and B given by strides: A(i, k) = a[i·a_row + k·a_col],
//   B(k, j) = b[k·b_row + j·b_col] (so a transpose is a swap of strides); C row-major with row stride ldc.
//
// Single-threaded (training's worker threads each run their own products); the packing buffers are
// per thread and kept between calls. Deterministic: each C entry sums k in order, in blocks of 256.
// In the browser build (WebAssembly SIMD128, where Eigen 3.4 runs one float at a time) a 4×8 kernel on
// B packed 8 columns at a time; elsewhere without AVX-512 it falls back to Eigen with the same contract.
#pragma once
#include <cstdint>

namespace attnscope::train {

void gemm(int M, int N, int K, const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t b_row,
          int64_t b_col, float* c, int64_t ldc, bool accumulate);

// The linear layer of ops.h on gemm (same contract, same shapes; training's model calls these):
//   out [BT, OC] = x [BT, IC] · weight [OC, IC]ᵀ + bias [OC] (bias may be null)
void linear_forward(float* out, const float* x, const float* weight, const float* bias, int BT, int IC, int OC);
//   dx [BT, IC] += dout · weight (dx may be null); dweight [OC, IC] += doutᵀ · x; dbias [OC] += Σ_rows dout
void linear_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x, const float* weight,
                     int BT, int IC, int OC);

}  // namespace attnscope::train
