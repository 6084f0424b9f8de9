// packed_matrix.h — a weight matrix stored in the order the inference matrix product reads it.
//
// A linear layer's weight W [rows = out, cols = in] (nn.Linear layout) is kept as panels of 32 rows:
// panel p holds W[32p + j, k] at [p][k][j] (j < 32; the last panel is zero-padded). The product
// out = x·Wᵀ then streams each panel once, contiguously, while a block of x's rows stays in
// registers: 2–3× the speed of a general GEMM that re-packs W on every call, for the few-hundred-row
// x of a forward pass (bench_model, README "Real models").
//
// A matrix may instead read its values in place from memory it does not own (a checkpoint's mapped
// file, kept alive by `keep`), so opening a checkpoint copies nothing:
//   in_place_transposed  F32 Wᵀ [cols, rows] with row stride ld (GPT-2's Conv1D): panel p at k is the
//                        contiguous run Wᵀ[k, 32p .. 32p+32), read by the same panel kernel with a k
//                        stride of ld instead of 32 (a last, partial panel is copied, zero-padded);
//   in_place_rows        W [rows, cols] with row stride ld, stored F32, BF16 or F16 (nn.Linear): each
//                        product widens W panel by panel to float32 (a 16-bit shift for BF16, vcvtph2ps
//                        for F16: both exact) into a cache-resident panel, exactly as a packed matrix
//                        holds it, and runs the same panel kernel on it.
// Every output is therefore summed in the same order however W is held: in place, packed at load or
// packed lazily, the product is bitwise the same.
//
// Packed lazily: an in-place matrix may be given a PackingState (model::open does, when the packed
// copies fit the memory check, model.h). Its first product reads in place; its second packs it once
// (std::call_once: two forwards arriving at once pack it once, the other waits) into the float32 panels
// of a packed matrix, which that product and every later one read. So a one-shot forward (`attnscope
// compute`/`export`) makes no copy (no time faulting in fresh pages, no extra memory), and the window's
// repeated forwards (every slider change, every ablation) run at the packed kernel's speed from the
// second on (docs/speed.md "Checkpoint forward"), all giving bitwise the same result (the window and the
// command line agree exactly; an ablation's unchanged layers stay exactly unchanged). A matrix no forward
// uses twice (an expert tokens were routed to once) is never packed. A copy shares the packed copy.
// Legend: BT rows of x, OC = rows (outputs), IC = cols (inputs).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope::model {

// How an in-place W stores its numbers.
enum class WeightStorage { f32, bf16, f16 };

// The lazy packing of one opened model's in-place matrices, shared by all of them.
struct PackingState {
  std::atomic<bool> enabled{true};     // false: every product reads in place (packed copies kept, unused)
  std::atomic<int64_t> matrices{0};    // matrices packed so far (by their second product)
  std::atomic<int64_t> bytes{0};       // their float32 panels' bytes
  std::atomic<int64_t> failed{0};      // matrices whose copy could not be allocated (they stay in place)
};

class PackedMatrix {
 public:
  static constexpr int64_t panel = 32;
  // Whether this build's product reads in-place matrices at the packed matrices' speed (AVX-512);
  // elsewhere a loader packs instead (the in-place product is then correct but plain loops).
  static const bool fast_in_place;

  PackedMatrix() = default;
  PackedMatrix(int64_t rows, int64_t cols);  // values unset until set_rows/set_from_transposed
  PackedMatrix(const PackedMatrix& other);
  PackedMatrix& operator=(const PackedMatrix& other);
  PackedMatrix(PackedMatrix&&) noexcept = default;
  PackedMatrix& operator=(PackedMatrix&&) noexcept = default;
  static PackedMatrix from(const Mat& w);    // w [rows, cols]
  // W from its transpose Wᵀ [cols, rows] in place: W[r, c] = t[c·ld + r] (ld ≥ rows); `keep` owns t.
  static PackedMatrix in_place_transposed(const float* t, int64_t rows, int64_t cols, int64_t ld,
                                          std::shared_ptr<const void> keep);
  // W [rows, cols] in place: W[r, c] = w[r·ld + c] (ld ≥ cols, counted in elements of `storage`, any
  // alignment); `keep` owns w.
  static PackedMatrix in_place_rows(const void* w, WeightStorage storage, int64_t rows, int64_t cols, int64_t ld,
                                    std::shared_ptr<const void> keep);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t size() const { return rows_ * cols_; }
  bool empty() const { return rows_ == 0; }
  float operator()(int64_t r, int64_t c) const;
  int64_t storage_size() const { return (rows_ + panel - 1) / panel * cols_ * panel; }
  // The kinds of matrix (see the top of this file) and their addresses, for the product.
  enum class Layout { packed, transposed, rows };
  Layout layout() const { return layout_; }
  WeightStorage storage() const { return storage_; }
  const void* source() const { return source_; }  // in place: where W (or Wᵀ) starts
  int64_t ld() const { return ld_; }               // in place: the stride
  const float* tail_panel() const { return tail_.get(); }  // transposed: the partial last panel, or null

  // Packs n rows of W [n, cols] (row-major) starting at `first_row` (packed matrices only).
  void set_rows(int64_t first_row, int64_t n, const float* rows);
  // Packs W from its transpose Wᵀ [cols, rows] (row-major): GPT-2's Conv1D weights are stored so.
  void set_from_transposed(const float* transposed);
  void row(int64_t r, float* dst) const;  // W[r, :] → dst [cols] (an embedding lookup)
  Mat to_mat() const;                     // [rows, cols]
  const float* data() const { return data_.get(); }  // packed: the panels; in place: null

  // In place only: packs lazily under `state` (see the top of this file); a null state stops it.
  void pack_lazily(std::shared_ptr<PackingState> state);
  bool packs_lazily() const { return lazy_ != nullptr; }
  bool packed_copy_made() const { return lazy_ && lazy_->panels.load(std::memory_order_acquire) != nullptr; }
  // The panels the product reads: a packed matrix's own, an in-place one's lazy copy (made by the second
  // call while packing is on), else null (read in place: the first call, no PackingState, packing turned off,
  // or no memory for the copy).
  const float* panels_for_product() const;
  // The lazy copy's bytes when made (4 a value, the last panel zero-padded): storage_size()·4.
  int64_t packed_bytes() const { return storage_size() * int64_t(sizeof(float)); }

 private:
  struct Lazy {
    std::shared_ptr<PackingState> state;
    std::atomic<int64_t> uses{0};  // calls of panels_for_product while packing was on
    std::once_flag once;
    std::atomic<const float*> panels{nullptr};
    std::unique_ptr<float[]> data;
  };
  void pack_copy(Lazy& lazy) const;
  int64_t rows_ = 0, cols_ = 0;
  std::unique_ptr<float[]> data_;  // packed: [ceil(rows / 32)][cols][32]
  Layout layout_ = Layout::packed;
  WeightStorage storage_ = WeightStorage::f32;
  const void* source_ = nullptr;
  int64_t ld_ = 0;
  std::shared_ptr<const float[]> tail_;  // transposed with rows % 32 ≠ 0: [cols][32], zero-padded
  std::shared_ptr<const void> keep_;     // owns source_ (a copy shares it)
  std::shared_ptr<Lazy> lazy_;           // in place, packed lazily: the copy (a copy shares it)
};

// out [BT, OC] = x [BT, IC]·Wᵀ + bias [OC] (bias may be null). Vectorised (AVX-512 or AVX2 when the
// build targets them) and split over OpenMP threads by panels when the product is large.
void linear_forward_packed(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT);

// The same product as plain loops over the unpacked indices, accumulating in double (the oracle).
void linear_forward_packed_reference(float* out, const float* x, const PackedMatrix& w, const float* bias, int BT);

}  // namespace attnscope::model
