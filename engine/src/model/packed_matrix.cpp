// packed_matrix.cpp — packing, and the register-blocked product over 32-row panels.
//
// Micro-kernel: R rows of x × one panel (32 outputs). For each k, the panel's 32 weights are loaded
// once (two 512-bit or four 256-bit registers) and multiplied into R×32 accumulators by broadcasting
// x[r, k]; after the k loop the accumulators are stored (plus the bias). R = 8 with AVX-512 (16
// accumulators of 32 registers), 3 with AVX2 (12 of 16), 1 in the portable loop. The same kernel
// reads an in-place Wᵀ with the panel's k stride ld instead of 32.
//
// In-place W [rows, cols] (nn.Linear layout, F32/BF16/F16): each panel of 32 rows is widened to float32
// (exact for BF16 and F16) and transposed, 16×16 values at a time in registers, into this thread's
// cache-resident buffer [cols][32] — exactly the panel its lazy packed copy holds — and the same panel
// kernel runs on it: every output is summed along k in the same order whether W is read in place or from
// its packed copy, so the two give bitwise the same product (the window, which packs, and the command
// line, which runs one forward and does not, agree exactly).
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
  // The first product reads in place: a one-shot forward (`attnscope compute`) uses each matrix once and
  // would pay for a copy it never reads again. Bitwise the same product either way (the top of this file).
  if (lazy->uses.fetch_add(1, std::memory_order_relaxed) == 0) return nullptr;
  // From the second on, once per matrix: a second caller arriving meanwhile waits here for the copy, then reads it.
  std::call_once(lazy->once, [&] { pack_copy(*lazy); });
  return lazy->panels.load(std::memory_order_acquire);
}

namespace {
// Panel p of an in-place W [rows, cols] (Layout::rows) widened to float32 into dst [cols][32], the rows past
// W's end zero: the panel a packed matrix holds (defined with the product below).
void widen_panel(const PackedMatrix& w, int64_t p, float* dst);

// W's row [n values from element `at` of base] widened to float32 (exact for BF16 and F16).
[[maybe_unused]] void widen_run(const void* base, WeightStorage s, int64_t at, int64_t n, float* dst) {  // without AVX-512
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
    widen_panel(*this, p, panel);  // the panel the in-place product widens for itself
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
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
// 16 values of W from element i of base (those of mask m; the others 0), widened to float32.
template <WeightStorage S>
inline __m512 load16(const void* base, int64_t i, __mmask16 m) {
  if constexpr (S == WeightStorage::f32) return _mm512_maskz_loadu_ps(m, static_cast<const float*>(base) + i);
  const __m256i h = _mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(base) + i);
  if constexpr (S == WeightStorage::f16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// GCC 12's unmasked unpack, shuffle and 512→256 cast intrinsics start from an "undefined" register and
// warn that it is uninitialised (GCC bug 105593): the all-lanes masked forms are the same instructions.
constexpr __mmask16 all = 0xFFFF;
inline __m512 unpacklo(__m512 a, __m512 b) { return _mm512_maskz_unpacklo_ps(all, a, b); }
inline __m512 unpackhi(__m512 a, __m512 b) { return _mm512_maskz_unpackhi_ps(all, a, b); }
template <int imm>
inline __m512 shuffle(__m512 a, __m512 b) { return _mm512_maskz_shuffle_ps(all, a, b, imm); }
template <int imm>
inline __m512 shuffle128(__m512 a, __m512 b) { return _mm512_maskz_shuffle_f32x4(all, a, b, imm); }

// r[j] holds 16 values of row j; afterwards r[i] holds column i (r[i][j] = old r[j][i]).
inline void transpose16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) t[i] = unpacklo(r[i], r[i + 1]), t[i + 1] = unpackhi(r[i], r[i + 1]);
  for (int i = 0; i < 16; i += 4) {
    r[i] = shuffle<0x44>(t[i], t[i + 2]);
    r[i + 1] = shuffle<0xEE>(t[i], t[i + 2]);
    r[i + 2] = shuffle<0x44>(t[i + 1], t[i + 3]);
    r[i + 3] = shuffle<0xEE>(t[i + 1], t[i + 3]);
  }
  for (int h = 0; h < 16; h += 8)
    for (int i = 0; i < 4; ++i) {
      t[h + i] = shuffle128<0x88>(r[h + i], r[h + i + 4]);
      t[h + i + 4] = shuffle128<0xDD>(r[h + i], r[h + i + 4]);
    }
  for (int i = 0; i < 8; ++i) {
    r[i] = shuffle128<0x88>(t[i], t[i + 8]);
    r[i + 8] = shuffle128<0xDD>(t[i], t[i + 8]);
  }
}

template <WeightStorage S>
void widen_panel_rows(const void* w, int64_t ld, int64_t width, int64_t K, float* dst) {
  for (int64_t k = 0; k < K; k += 16) {
    const int64_t n = std::min<int64_t>(16, K - k);
    const __mmask16 m = n == 16 ? all : __mmask16((1u << n) - 1);
    for (int64_t half = 0; half < P; half += 16) {
      __m512 r[16];
      for (int64_t j = 0; j < 16; ++j)
        r[j] = half + j < width ? load16<S>(w, (half + j) * ld + k, m) : _mm512_setzero_ps();
      transpose16(r);
      for (int64_t i = 0; i < n; ++i) _mm512_storeu_ps(dst + (k + i) * P + half, r[i]);
    }
  }
}
#else
template <WeightStorage S>
void widen_panel_rows(const void* w, int64_t ld, int64_t width, int64_t K, float* dst) {
  // W's 32 rows in blocks of 64 values of k: each block widened into an L1-resident [32][64] buffer, then
  // written out as 64 whole panel rows [k][0..32).
  constexpr int64_t kb = 64;
  alignas(64) float block[P][kb];
  for (int64_t k0 = 0; k0 < K; k0 += kb) {
    const int64_t n = std::min(kb, K - k0);
    for (int64_t j = 0; j < P; ++j) {
      if (j < width) widen_run(w, S, j * ld + k0, n, block[j]);
      else std::fill(block[j], block[j] + n, 0.0f);
    }
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < P; ++j) dst[(k0 + k) * P + j] = block[j][k];
  }
}
#endif

void widen_panel(const PackedMatrix& w, int64_t p, float* dst) {
  const int64_t width = std::min(P, w.rows() - p * P), ld = w.ld();
  const int elem = w.storage() == WeightStorage::f32 ? 4 : 2;
  const void* first = static_cast<const char*>(w.source()) + p * P * ld * elem;
  switch (w.storage()) {
    case WeightStorage::f32: return widen_panel_rows<WeightStorage::f32>(first, ld, width, w.cols(), dst);
    case WeightStorage::bf16: return widen_panel_rows<WeightStorage::bf16>(first, ld, width, w.cols(), dst);
    case WeightStorage::f16: return widen_panel_rows<WeightStorage::f16>(first, ld, width, w.cols(), dst);
  }
}

// In-place W [rows, cols]: each panel widened into this thread's buffer, then the panel kernel over every row
// of x (see the top of this file).
void linear_forward_rows(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT, bool serial) {
  const int64_t K = w.cols(), N = w.rows(), panels = (N + P - 1) / P;
#pragma omp parallel for schedule(static) if (!serial)
  for (int64_t p = 0; p < panels; ++p) {
    thread_local std::vector<float> buffer;
    buffer.resize(size_t(K * P));
    widen_panel(w, p, buffer.data());
    rows_against_panel(x, K, 0, BT, buffer.data(), P, out + p * P, N, std::min(P, N - p * P),
                       bias ? bias + p * P : nullptr);
  }
}

}  // namespace

void linear_forward_packed(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT) {
  const int64_t K = w.cols(), N = w.rows(), panels = (N + P - 1) / P;
  const bool serial = int64_t(BT) * K * N < detail::serial_work_limit;
  if (N == 0 || BT == 0) return;
  // A packed matrix's panels, or an in-place matrix's lazy copy (made on the use that calls for it).
  const float* packed = w.panels_for_product();
  if (!packed && w.layout() == PackedMatrix::Layout::rows) return linear_forward_rows(out, x, w, bias, BT, serial);
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
