// mxfp4.cpp — MXFP4 experts in place: the checks, the widening, the product (mxfp4.h).
#include "attnscope/model/mxfp4.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "attnscope/core/error.h"
#include "attnscope/core/types.h"
#include "attnscope/model/packed_matrix.h"

namespace attnscope::model {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Byte → (low nibble's value, high nibble's value).
const std::array<std::array<float, 2>, 256>& byte_values() {
  static const auto table = [] {
    std::array<std::array<float, 2>, 256> t{};
    for (int b = 0; b < 256; ++b) t[size_t(b)] = {fp4_e2m1_values[b & 0xF], fp4_e2m1_values[b >> 4]};
    return t;
  }();
  return table;
}

// 2^(s − 127) from its bits: the exponent field s for s ≥ 1, the subnormal 2^−127 for s = 0.
inline float power_of_two(uint8_t s) {
  const uint32_t bits = s == 0 ? 0x00400000u : uint32_t(s) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

Mxfp4Matrix::Mxfp4Matrix(const uint8_t* blocks, const uint8_t* scales, int64_t rows, int64_t cols,
                         std::shared_ptr<const void> keep)
    : blocks_(blocks), scales_(scales), rows_(rows), cols_(cols), keep_(std::move(keep)) {}

float Mxfp4Matrix::operator()(int64_t r, int64_t c) const {
  const uint8_t byte = blocks_[(r * cols_ + c) / 2];
  const int code = c % 2 == 0 ? byte & 0xF : byte >> 4;
  const int scale = scales_[r * (cols_ / mxfp4_block) + c / mxfp4_block];
  return std::ldexp(fp4_e2m1_values[code], scale - 127);
}

void Mxfp4Matrix::widen_rows(int64_t first, int64_t n, float* dst) const {
  const auto& table = byte_values();
  const int64_t groups = cols_ / mxfp4_block;
#if defined(__AVX512F__)
  // A block's 16 bytes → 16 low and 16 high codes → the table's values (a 16-entry permute) × 2^(s − 127),
  // interleaved low, high, low, high, … into the block's 32 floats.
  const __m512 lut = _mm512_loadu_ps(fp4_e2m1_values);
  const __m512i nibble = _mm512_set1_epi32(0xF);
  const __m512i first_half = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second_half = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  for (int64_t r = first; r < first + n; ++r) {
    const uint8_t* block = blocks_ + r * cols_ / 2;
    const uint8_t* scale = scales_ + r * groups;
    float* out = dst + (r - first) * cols_;
    for (int64_t g = 0; g < groups; ++g) {
      const __m512i bytes = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + g * 16)));
      const __m512 f = _mm512_set1_ps(power_of_two(scale[g]));
      const __m512 lo = _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_and_si512(bytes, nibble), lut), f);
      const __m512 hi = _mm512_mul_ps(_mm512_permutexvar_ps(_mm512_srli_epi32(bytes, 4), lut), f);
      _mm512_storeu_ps(out + g * mxfp4_block, _mm512_permutex2var_ps(lo, first_half, hi));
      _mm512_storeu_ps(out + g * mxfp4_block + 16, _mm512_permutex2var_ps(lo, second_half, hi));
    }
  }
  (void)table;
#else
  for (int64_t r = first; r < first + n; ++r) {
    const uint8_t* block = blocks_ + r * cols_ / 2;
    const uint8_t* scale = scales_ + r * groups;
    float* out = dst + (r - first) * cols_;
    for (int64_t g = 0; g < groups; ++g) {
      const float f = power_of_two(scale[g]);
      for (int b = 0; b < mxfp4_block / 2; ++b) {
        const auto& v = table[block[g * 16 + b]];
        out[g * mxfp4_block + 2 * b] = v[0] * f;
        out[g * mxfp4_block + 2 * b + 1] = v[1] * f;
      }
    }
  }
#endif
}

void mxfp4_linear(float* out, const float* x, const Mxfp4Matrix& w, const float* bias, int n) {
  const int64_t rows = w.rows(), cols = w.cols();
  if (rows == 0 || n == 0) return;
  constexpr int64_t chunk = 64;
  const int64_t chunks = (rows + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (int64_t(n + 4) * rows * cols >= (int64_t(1) << 21))
  for (int64_t p = 0; p < chunks; ++p) {
    const int64_t r0 = p * chunk, m = std::min(chunk, rows - r0);
    thread_local std::vector<float> buffer, y;
    buffer.resize(size_t(m * cols));
    y.resize(size_t(int64_t(n) * m));
    w.widen_rows(r0, m, buffer.data());
    // The widened rows through the in-place row kernel of packed_matrix.h (this thread's share only:
    // nested inside this loop, its own parallel loop runs on one thread).
    const PackedMatrix W = PackedMatrix::in_place_rows(buffer.data(), WeightStorage::f32, m, cols, cols, nullptr);
    linear_forward_packed(y.data(), x, W, bias ? bias + r0 : nullptr, n);
    for (int i = 0; i < n; ++i) std::copy_n(y.data() + int64_t(i) * m, m, out + int64_t(i) * rows + r0);
  }
}

std::vector<Mxfp4Matrix> mxfp4_experts(const std::string& where, const std::string& prefix,
                                       const SafetensorsTensor& blocks, const void* blocks_data,
                                       const SafetensorsTensor& scales, const void* scales_data, int64_t experts,
                                       int64_t rows, int64_t cols, const std::shared_ptr<const void>& keep) {
  require(cols % mxfp4_block == 0, where + ": '" + prefix + "_blocks' holds MXFP4 values in blocks of 32, but its rows are " +
                                       std::to_string(cols) + " values long (config.json), not a multiple of 32");
  const std::vector<int64_t> want_blocks{experts, rows, cols / mxfp4_block, mxfp4_block / 2};
  const std::vector<int64_t> want_scales{experts, rows, cols / mxfp4_block};
  for (const auto* t : {&blocks, &scales}) {
    const bool is_blocks = t == &blocks;
    const std::string name = prefix + (is_blocks ? "_blocks" : "_scales");
    require(t->dtype == TensorDtype::u8, where + ": tensor '" + name + "' has dtype " + to_string(t->dtype) +
                                             ", but MXFP4 " + (is_blocks ? "blocks" : "scales") + " are U8 (" +
                                             (is_blocks ? "two FP4 values a byte" : "one e8m0 exponent a block") + ")");
    const std::vector<int64_t>& want = is_blocks ? want_blocks : want_scales;
    require(t->shape == want,
            where + ": tensor '" + name + "' has shape " + shape_text(t->shape) + ", but config.json implies " +
                shape_text(want) + (is_blocks ? " (experts, rows, blocks of 32 values, 16 bytes of two FP4 values)"
                                              : " (experts, rows, one exponent per block of 32 values)"));
  }
  const auto* s = static_cast<const uint8_t*>(scales_data);
  const int64_t count = scales.count();
  for (int64_t i = 0; i < count; ++i)
    if (s[i] > mxfp4_max_scale) {
      const int64_t per_expert = rows * (cols / mxfp4_block);
      throw InputError(where + ": tensor '" + prefix + "_scales' has the exponent " + std::to_string(int(s[i])) +
                       " at expert " + std::to_string(i / per_expert) + ", row " +
                       std::to_string(i % per_expert / (cols / mxfp4_block)) + ", block " +
                       std::to_string(i % (cols / mxfp4_block)) + "; valid exponents are 0 to " +
                       std::to_string(mxfp4_max_scale) + " (above, its values overflow float32; 255 is e8m0's NaN)");
    }
  std::vector<Mxfp4Matrix> out;
  const auto* b = static_cast<const uint8_t*>(blocks_data);
  for (int64_t e = 0; e < experts; ++e)
    out.emplace_back(b + e * rows * cols / 2, s + e * rows * (cols / mxfp4_block), rows, cols, keep);
  return out;
}

}  // namespace attnscope::model
