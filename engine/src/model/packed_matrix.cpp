// packed_matrix.cpp — packing, and the register-blocked product over 32-row panels.
//
// Micro-kernel: R rows of x × one panel (32 outputs). For each k, the panel's 32 weights are loaded
// once (two 512-bit or four 256-bit registers) and multiplied into R×32 accumulators by broadcasting
// x[r, k]; after the k loop the accumulators are stored (plus the bias). R = 8 with AVX-512 (16
// accumulators of 32 registers), 3 with AVX2 (12 of 16), 1 in the portable loop. The same kernel
// reads an in-place Wᵀ with the panel's k stride ld instead of 32.
//
// In-place W [rows, cols] (nn.Linear layout, F32/BF16/F16): R = 6 rows of x × 4 rows of W, 16 values
// of k at a time (24 accumulators); W's values are widened to float32 in registers (exact for BF16
// and F16) and each accumulator's 16 lanes are summed once at the end.
#include "attnscope/model/packed_matrix.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "attnscope/io/safetensors.h"
#include "core/parallel.h"

namespace attnscope::model {

namespace {
constexpr int64_t P = PackedMatrix::panel;

float widen(const void* base, WeightStorage s, int64_t i) {
  if (s == WeightStorage::f32) {
    float f;
    std::memcpy(&f, static_cast<const char*>(base) + i * 4, 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, static_cast<const char*>(base) + i * 2, 2);
  return s == WeightStorage::f16 ? half_to_float(bits) : bfloat16_to_float(bits);
}
}  // namespace

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
const bool PackedMatrix::fast_in_place = true;
#else
const bool PackedMatrix::fast_in_place = false;
#endif

PackedMatrix::PackedMatrix(int64_t rows, int64_t cols)
    : rows_(rows), cols_(cols), data_(new float[size_t((rows + P - 1) / P * cols * P)]) {
  // Left uninitialised (every row is packed before use: a fresh page is written once, not twice),
  // except the last panel's padding rows, which the product reads.
  const int64_t panels = (rows + P - 1) / P;
  if (rows % P != 0)
    for (int64_t c = 0; c < cols; ++c)
      std::fill(data_.get() + ((panels - 1) * cols + c) * P + rows % P, data_.get() + ((panels - 1) * cols + c + 1) * P, 0.0f);
}

PackedMatrix::PackedMatrix(const PackedMatrix& other)
    : rows_(other.rows_), cols_(other.cols_), layout_(other.layout_), storage_(other.storage_),
      source_(other.source_), ld_(other.ld_), tail_(other.tail_), keep_(other.keep_), lazy_(other.lazy_) {
  if (layout_ == Layout::packed && other.data_) {  // in place: the copy shares the source
    data_.reset(new float[size_t(storage_size())]);
    std::copy(other.data_.get(), other.data_.get() + other.storage_size(), data_.get());
  }
}

PackedMatrix PackedMatrix::in_place_transposed(const float* t, int64_t rows, int64_t cols, int64_t ld,
                                               std::shared_ptr<const void> keep) {
  PackedMatrix m;
  m.rows_ = rows, m.cols_ = cols, m.layout_ = Layout::transposed, m.source_ = t, m.ld_ = ld, m.keep_ = std::move(keep);
  if (rows % P != 0) {  // the last panel's columns of Wᵀ run into whatever follows: copy it, zero-padded
    const int64_t first = rows / P * P, width = rows - first;
    std::shared_ptr<float[]> tail(new float[size_t(cols * P)]());
    for (int64_t k = 0; k < cols; ++k) std::memcpy(tail.get() + k * P, t + k * ld + first, size_t(width) * 4);
    m.tail_ = std::move(tail);
  }
  return m;
}

PackedMatrix PackedMatrix::in_place_rows(const void* w, WeightStorage storage, int64_t rows, int64_t cols, int64_t ld,
                                         std::shared_ptr<const void> keep) {
  PackedMatrix m;
  m.rows_ = rows, m.cols_ = cols, m.layout_ = Layout::rows, m.storage_ = storage, m.source_ = w, m.ld_ = ld;
  m.keep_ = std::move(keep);
  return m;
}

void PackedMatrix::pack_lazily(std::shared_ptr<PackingState> state) {
  if (layout_ == Layout::packed || !state) {
    lazy_.reset();
    return;
  }
  lazy_ = std::make_shared<Lazy>();
  lazy_->state = std::move(state);
}

const float* PackedMatrix::panels_for_product() const {
  if (layout_ == Layout::packed) return data_.get();
  Lazy* lazy = lazy_.get();
  if (!lazy || !lazy->state->enabled.load(std::memory_order_relaxed)) return nullptr;
  if (const float* p = lazy->panels.load(std::memory_order_acquire)) return p;
  // Once per matrix: a second caller arriving meanwhile waits here for the copy, then reads it.
  std::call_once(lazy->once, [&] { pack_copy(*lazy); });
  return lazy->panels.load(std::memory_order_acquire);
}

namespace {
// W's row [n values from element `at` of base] widened to float32 (exact for BF16 and F16).
void widen_run(const void* base, WeightStorage s, int64_t at, int64_t n, float* dst) {
  if (s == WeightStorage::f32) {
    std::memcpy(dst, static_cast<const float*>(base) + at, size_t(n) * sizeof(float));
    return;
  }
  const auto* h = static_cast<const uint16_t*>(base) + at;
  if (s == WeightStorage::bf16) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t bits = uint32_t(h[i]) << 16;
      std::memcpy(dst + i, &bits, 4);
    }
    return;
  }
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(h + i))));
#endif
  for (; i < n; ++i) dst[i] = half_to_float(h[i]);
}
}  // namespace

// The lazy copy: W's panels as a packed matrix holds them, [panels][cols][32], the last zero-padded.
// Each panel is one thread's, read from the mapped file once. Without memory for it, the matrix stays
// read in place (counted in PackingState::failed).
void PackedMatrix::pack_copy(Lazy& lazy) const {
  std::unique_ptr<float[]> copy(new (std::nothrow) float[size_t(storage_size())]);
  if (!copy) {
    lazy.state->failed.fetch_add(1);
    return;
  }
  float* dst = copy.get();
  const int64_t panels = (rows_ + P - 1) / P, K = cols_;
  const bool transposed = layout_ == Layout::transposed;
#pragma omp parallel for schedule(static) if (rows_ * cols_ >= (int64_t(1) << 18))
  for (int64_t p = 0; p < panels; ++p) {
    float* panel = dst + p * K * P;
    const int64_t width = std::min(P, rows_ - p * P);
    if (transposed) {  // Wᵀ's row k holds the panel's [k][0..32) contiguously
      const auto* t = static_cast<const float*>(source_);
      for (int64_t k = 0; k < K; ++k) {
        std::memcpy(panel + k * P, t + k * ld_ + p * P, size_t(width) * sizeof(float));
        std::fill(panel + k * P + width, panel + (k + 1) * P, 0.0f);
      }
      continue;
    }
    // W's 32 rows in blocks of 64 values of k: each block widened into an L1-resident [32][64] buffer, then
    // written out as 64 whole panel rows [k][0..32) (each written once, in order, not 32 times a line).
    constexpr int64_t kb = 64;
    alignas(64) float block[P][kb];
    for (int64_t k0 = 0; k0 < K; k0 += kb) {
      const int64_t n = std::min(kb, K - k0);
      for (int64_t j = 0; j < P; ++j) {
        if (j < width) widen_run(source_, storage_, (p * P + j) * ld_ + k0, n, block[j]);
        else std::fill(block[j], block[j] + n, 0.0f);
      }
      for (int64_t k = 0; k < n; ++k)
        for (int64_t j = 0; j < P; ++j) panel[(k0 + k) * P + j] = block[j][k];
    }
  }
  lazy.data = std::move(copy);
  lazy.panels.store(lazy.data.get(), std::memory_order_release);
  lazy.state->matrices.fetch_add(1);
  lazy.state->bytes.fetch_add(packed_bytes());
}

float PackedMatrix::operator()(int64_t r, int64_t c) const {
  switch (layout_) {
    case Layout::packed: return data_[size_t(((r / P) * cols_ + c) * P + r % P)];
    case Layout::transposed: return widen(source_, WeightStorage::f32, c * ld_ + r);
    case Layout::rows: break;
  }
  return widen(source_, storage_, r * ld_ + c);
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
  if (layout_ != Layout::packed) {
    if (layout_ == Layout::rows && storage_ == WeightStorage::f32) {
      std::memcpy(dst, static_cast<const float*>(source_) + r * ld_, size_t(cols_) * 4);
      return;
    }
    for (int64_t c = 0; c < cols_; ++c) dst[c] = (*this)(r, c);
    return;
  }
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
void kernel(const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t K, float* out, int64_t ldo,
            int64_t width, const float* bias) {
  __m512 acc[R][2];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    // An in-place Wᵀ puts each k on its own page, where the hardware does not fetch ahead.
    if (ldp != P) {
      _mm_prefetch(reinterpret_cast<const char*>(panel + (k + 6) * ldp), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(panel + (k + 6) * ldp + 16), _MM_HINT_T0);
    }
    const __m512 w0 = _mm512_loadu_ps(panel + k * ldp), w1 = _mm512_loadu_ps(panel + k * ldp + 16);
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
void kernel(const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t K, float* out, int64_t ldo,
            int64_t width, const float* bias) {
  __m256 acc[R][4];
  for (int r = 0; r < R; ++r)
    for (int q = 0; q < 4; ++q) acc[r][q] = _mm256_setzero_ps();
  for (int64_t k = 0; k < K; ++k) {
    __m256 w[4];
    for (int q = 0; q < 4; ++q) w[q] = _mm256_loadu_ps(panel + k * ldp + 8 * q);
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
void kernel(const float* x, int64_t ldx, const float* panel, int64_t ldp, int64_t K, float* out, int64_t ldo,
            int64_t width, const float* bias) {
  float acc[R * P] = {};
  for (int64_t k = 0; k < K; ++k)
    for (int r = 0; r < R; ++r) {
      const float xv = x[r * ldx + k];
      for (int64_t j = 0; j < P; ++j) acc[r * P + j] += xv * panel[k * ldp + j];
    }
  store_block(acc, R, out, ldo, width, bias);
}
#endif

// Rows [m0, m1) of x against one panel, in blocks of rows_per_block and a remainder block.
template <int R = rows_per_block>
void rows_against_panel(const float* x, int64_t K, int64_t m0, int64_t m1, const float* panel, int64_t ldp,
                        float* out, int64_t ldo, int64_t width, const float* bias) {
  int64_t m = m0;
  for (; m + R <= m1; m += R) kernel<R>(x + m * K, K, panel, ldp, K, out + m * ldo, ldo, width, bias);
  if constexpr (R > 1)
    if (m < m1) rows_against_panel<R - 1>(x, K, m, m1, panel, ldp, out, ldo, width, bias);
}

// ---- in-place W [rows, cols] ------------------------------------------------------------------------
constexpr int dot_cols = 4;  // rows of W per kernel call
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
constexpr int dot_rows = 6;  // rows of x per kernel call: 6 × 4 accumulators + 4 weights + 1 input
template <WeightStorage S>
inline __m512 load16(const void* base, int64_t i) {
  if constexpr (S == WeightStorage::f32) return _mm512_loadu_ps(static_cast<const float*>(base) + i);
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(base) + i));
  if constexpr (S == WeightStorage::f16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
template <WeightStorage S>
inline __m512 load16(const void* base, int64_t i, __mmask16 m) {
  if constexpr (S == WeightStorage::f32) return _mm512_maskz_loadu_ps(m, static_cast<const float*>(base) + i);
  const __m256i h = _mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(base) + i);
  if constexpr (S == WeightStorage::f16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// GCC 12's unmasked unpack and 512→256 cast intrinsics start from an "undefined" register and warn
// that it is uninitialised (GCC bug 105593): the all-lanes masked forms are the same instructions.
inline __m512 unpacklo(__m512 a, __m512 b) { return _mm512_maskz_unpacklo_ps(__mmask16(0xFFFF), a, b); }
inline __m512 unpackhi(__m512 a, __m512 b) { return _mm512_maskz_unpackhi_ps(__mmask16(0xFFFF), a, b); }

template <int R, int CN, WeightStorage S>
void dot_kernel(const float* x, int64_t K, const void* w, int64_t ldw, float* out, int64_t ldo, const float* bias) {
  __m512 acc[R][CN];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < CN; ++c) acc[r][c] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 16 <= K; k += 16) {
    __m512 wv[CN];
    for (int c = 0; c < CN; ++c) wv[c] = load16<S>(w, c * ldw + k);
    for (int r = 0; r < R; ++r) {
      __m512 xv = _mm512_loadu_ps(x + r * K + k);
      // Loaded once into a register: left alone, GCC folds the load into each of the CN products,
      // and the loads, not the multiplies, then set the pace (half the speed).
      asm("" : "+v"(xv));
      for (int c = 0; c < CN; ++c) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  if (k < K) {
    const __mmask16 m = __mmask16((1u << (K - k)) - 1);
    __m512 wv[CN];
    for (int c = 0; c < CN; ++c) wv[c] = load16<S>(w, c * ldw + k, m);
    for (int r = 0; r < R; ++r) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + r * K + k);
      for (int c = 0; c < CN; ++c) acc[r][c] = _mm512_fmadd_ps(xv, wv[c], acc[r][c]);
    }
  }
  if constexpr (CN == 4) {
    // The four sums of a row of x at once: lanes interleaved and added in three steps, then the four
    // 128-bit quarters added.
    const __m128 b = bias ? _mm_loadu_ps(bias) : _mm_setzero_ps();
    for (int r = 0; r < R; ++r) {
      const __m512 ab = _mm512_add_ps(unpacklo(acc[r][0], acc[r][1]), unpackhi(acc[r][0], acc[r][1]));
      const __m512 cd = _mm512_add_ps(unpacklo(acc[r][2], acc[r][3]), unpackhi(acc[r][2], acc[r][3]));
      const __m512 s = _mm512_add_ps(_mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(1, 0, 1, 0)),
                                     _mm512_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 2, 3, 2)));
      const __m256 h = _mm256_add_ps(_mm512_extractf32x8_ps(s, 0), _mm512_extractf32x8_ps(s, 1));
      const __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
      _mm_storeu_ps(out + r * ldo, _mm_add_ps(q, b));
    }
  } else {
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < CN; ++c) {
        // the 16 lanes added as halves, quarters, pairs
        const __m512 a = acc[r][c];
        const __m256 h = _mm256_add_ps(_mm512_extractf32x8_ps(a, 0), _mm512_extractf32x8_ps(a, 1));
        __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
        q = _mm_add_ps(q, _mm_movehl_ps(q, q));
        q = _mm_add_ss(q, _mm_movehdup_ps(q));
        out[r * ldo + c] = _mm_cvtss_f32(q) + (bias ? bias[c] : 0.0f);
      }
  }
}
#else
constexpr int dot_rows = 1;
template <int R, int CN, WeightStorage S>
void dot_kernel(const float* x, int64_t K, const void* w, int64_t ldw, float* out, int64_t ldo, const float* bias) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < CN; ++c) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += x[r * K + k] * widen(w, S, c * ldw + k);
      out[r * ldo + c] = s + (bias ? bias[c] : 0.0f);
    }
}
#endif

// Rows [m0, m0 + R) of x against rows [n0, n1) of W.
template <int R, WeightStorage S>
void block_against_rows(const float* x, int64_t K, int64_t m0, const void* w, int64_t ldw, int64_t n0, int64_t n1,
                        float* out, int64_t ldo, const float* bias) {
  const int elem = S == WeightStorage::f32 ? 4 : 2;
  const auto* base = static_cast<const char*>(w);
  auto call = [&](auto cn, int64_t n) {
    dot_kernel<R, decltype(cn)::value, S>(x + m0 * K, K, base + n * ldw * elem, ldw, out + m0 * ldo + n, ldo,
                                          bias ? bias + n : nullptr);
  };
  int64_t n = n0;
  for (; n + dot_cols <= n1; n += dot_cols) call(std::integral_constant<int, dot_cols>{}, n);
  switch (n1 - n) {
    case 3: call(std::integral_constant<int, 3>{}, n); break;
    case 2: call(std::integral_constant<int, 2>{}, n); break;
    case 1: call(std::integral_constant<int, 1>{}, n); break;
    default: break;
  }
}

template <int R, WeightStorage S>
void rows_against_rows(const float* x, int64_t K, int64_t m0, int64_t m1, const void* w, int64_t ldw, int64_t n0,
                       int64_t n1, float* out, int64_t ldo, const float* bias) {
  int64_t m = m0;
  for (; m + R <= m1; m += R) block_against_rows<R, S>(x, K, m, w, ldw, n0, n1, out, ldo, bias);
  if constexpr (R > 1)
    if (m < m1) rows_against_rows<R - 1, S>(x, K, m, m1, w, ldw, n0, n1, out, ldo, bias);
}

template <WeightStorage S>
void linear_forward_rows(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT, bool serial) {
  const int64_t K = w.cols(), N = w.rows();
  constexpr int64_t chunk = 32;  // rows of W per task: its values stay in cache while x's rows pass
  const int64_t tasks = (N + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (!serial)
  for (int64_t t = 0; t < tasks; ++t)
    rows_against_rows<dot_rows, S>(x, K, 0, BT, w.source(), w.ld(), t * chunk, std::min(N, (t + 1) * chunk), out, N,
                                   bias);
}

}  // namespace

void linear_forward_packed(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT) {
  const int64_t K = w.cols(), N = w.rows(), panels = (N + P - 1) / P;
  const bool serial = int64_t(BT) * K * N < detail::serial_work_limit;
  if (N == 0 || BT == 0) return;
  // A packed matrix's panels, or an in-place matrix's lazy copy (made on the use that calls for it).
  const float* packed = w.panels_for_product();
  if (!packed && w.layout() == PackedMatrix::Layout::rows) {
    switch (w.storage()) {
      case WeightStorage::f32: return linear_forward_rows<WeightStorage::f32>(out, x, w, bias, BT, serial);
      case WeightStorage::bf16: return linear_forward_rows<WeightStorage::bf16>(out, x, w, bias, BT, serial);
      case WeightStorage::f16: return linear_forward_rows<WeightStorage::f16>(out, x, w, bias, BT, serial);
    }
  }
  // Panel p starts at data + p·K·32 (packed) or at Wᵀ + 32p with a k stride of ld (in place; a partial
  // last panel from its zero-padded copy).
  const bool transposed = !packed;
  auto panel_at = [&](int64_t p, int64_t& ldp) -> const float* {
    if (!transposed) return ldp = P, packed + p * K * P;
    if (w.tail_panel() && p == panels - 1) return ldp = P, w.tail_panel();
    return ldp = w.ld(), static_cast<const float*>(w.source()) + p * P;
  };
  // Rows in chunks, so that a long input's rows stay in cache while every panel passes by.
  constexpr int64_t chunk = 256;
  for (int64_t m0 = 0; m0 < BT; m0 += chunk) {
    const int64_t m1 = std::min<int64_t>(BT, m0 + chunk);
#pragma omp parallel for schedule(static) if (!serial)
    for (int64_t p = 0; p < panels; ++p) {
      int64_t ldp;
      const float* panel = panel_at(p, ldp);
      // An in-place Wᵀ panel has each k on its own page: walked once per block of x's rows, its
      // address translations, not its multiplies, would set the pace. For more than two blocks it is
      // copied once into this thread's contiguous buffer (K·32 floats, cache-resident, reused).
      thread_local std::vector<float> copy;
      if (ldp != P && m1 - m0 > 2 * rows_per_block) {
        copy.resize(size_t(K * P));
        for (int64_t k = 0; k < K; ++k) {
#if defined(__SSE__)
          if (k + 48 < K) {  // each k on its own page: no hardware prefetch, so ask 48 ahead (DRAM latency)
            _mm_prefetch(reinterpret_cast<const char*>(panel + (k + 48) * ldp), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(panel + (k + 48) * ldp + 16), _MM_HINT_T0);
          }
#endif
          std::memcpy(copy.data() + k * P, panel + k * ldp, P * sizeof(float));
        }
        panel = copy.data(), ldp = P;
      }
      rows_against_panel(x, K, m0, m1, panel, ldp, out + p * P, N, std::min(P, N - p * P),
                         bias ? bias + p * P : nullptr);
    }
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
