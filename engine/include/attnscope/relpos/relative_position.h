// relative_position.h — Cordonnier, Loukas & Jaggi's quadratic relative-position attention
// (SPEC "Relative-position quadratic attention"), on sentences (1D) and on 2D grids.
//
// Legend: H heads, N positions (T tokens, or R·C grid cells indexed row-major i = r·C + c),
// ch channels of X, P_r / P_c padding keys on each side of the rows / columns (pad_keys).
//
//   δ = p_k − p_q                          key minus query (1D: a number, 2D: (δ_row, δ_col))
//   r_δ = (‖δ‖², δ)                        relative position encoding
//   v_h = −α_h·(1, −2Δ_h)                  the head's vector
//   score_h(q,k) = v_h·r_δ = −α_h‖δ − Δ_h‖² + α_h‖Δ_h‖²
//   P_h[q,·] = softmax over keys of −α_h‖δ − Δ_h‖²       [H, N, N]  (the constant cancels)
//   O_h[q]   = Σ_k P_h[q,k]·X[k]                          [H, N, ch]
//
// A sentence is handled as a grid with one row (dims = 1, rows = 1, cols = T, Δ in delta[1]).
//
// Fast path: exp(−α((δr−Δr)² + (δc−Δc)²)) = row factor × column factor, and because the keys form a
// rectangle the per-query normaliser factorises too. So P_h[q, k] = A_h[q_r, k_r]·B_h[q_c, k_c] with
// A_h, B_h two row-softmaxed 1D windows, and all outputs are O_h = A_h·X·B_hᵀ per channel:
// O(H·N·(R + C)·ch) instead of O(H·N²·ch). The plain-loop N² reference stays beside it
// (engine/src/relpos/relpos_reference.cpp) and the tests hold the two to 1e-5.
//
// Numerics: each softmax subtracts its row maximum (the smallest ‖δ − Δ‖²) before exp, in double,
// so any finite α ≥ 0 (1e6 and beyond) gives finite probabilities whose rows sum to 1.
//
// Sections: heads and presets · geometry · probabilities · outputs · the expansion for one (q, k)
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/scene/scene.h"
#include "attnscope/core/types.h"

namespace attnscope {

// ---- heads and presets --------------------------------------------------------------------------

// One relative-position head: window sharpness α ≥ 0 and centre Δ = (Δ_row, Δ_col).
// On a sentence only delta[1] is used and delta[0] is 0.
struct RelposHead {
  double alpha = 1.0;
  std::array<double, 2> delta{0.0, 0.0};
};

// |Δ| larger than this (in cells or tokens) is refused: it could only point off any allowed input.
inline constexpr double max_abs_delta = 4096.0;
// Padding keys reach ceil(max |Δ|) + this many cells beyond each edge, so the window of a head whose
// centre lies just outside the input still has whole cells around it (the mass lost past the padding
// is below exp(−9α) of the peak).
inline constexpr int relpos_pad_margin = 2;

// "conv3x3", "conv5x5", "line", "random".
const std::vector<std::string>& delta_preset_names();

// Δ per head for a preset (dims = 1 for a sentence, 2 for a grid):
//   conv3x3 / conv5x5  the K×K offsets {−⌊K/2⌋…⌊K/2⌋}² row-major (grid only; heads must be K²)
//   line               offsets −⌊H/2⌋, …, −⌊H/2⌋ + H − 1 (on a grid, along the row: Δ = (0, d))
//   random             uniform in [−3, 3] per coordinate, from Rng(seed)
// Throws InputError for an unknown name (listing the valid ones), a 2D preset on a sentence, or a
// head count that does not fit the preset.
std::vector<std::array<double, 2>> delta_preset(const std::string& name, int heads, int dims, uint64_t seed);

// The heads a RelposSettings asks for: H = settings.heads, Δ from settings.deltas (one per head) or
// the preset, α from settings.alphas (one per head) or settings.alpha. Throws InputError for H out of
// 1…limits::max_heads, counts that differ from H, α negative / NaN / infinite, Δ NaN / infinite or
// beyond max_abs_delta, or a bad preset.
std::vector<RelposHead> resolve_relpos_heads(const RelposSettings& settings, int dims);

// Throws InputError (naming the head) unless every α is finite and ≥ 0 and every Δ finite with
// |Δ| ≤ max_abs_delta (and delta[0] == 0 on a sentence).
void validate_relpos_heads(const std::vector<RelposHead>& heads, int dims);

// ---- geometry -----------------------------------------------------------------------------------

// Where the queries and keys are. Queries are the rows·cols real positions; keys are those plus
// pad_rows / pad_cols zero-valued padding positions beyond each edge (0 without pad_keys).
struct RelposGeometry {
  int dims = 2;      // 1: a sentence (rows == 1), 2: a grid
  int rows = 1;      // R (1 on a sentence)
  int cols = 1;      // C, or T on a sentence
  int pad_rows = 0;  // padding keys above and below (always 0 on a sentence)
  int pad_cols = 0;  // padding keys left and right
  int cells() const { return rows * cols; }
  int key_rows() const { return rows + 2 * pad_rows; }
  int key_cols() const { return cols + 2 * pad_cols; }
};

// Throws InputError when rows/cols are < 1 (or rows != 1 on a sentence). With pad_keys the padding is
// ceil(max_h |Δ_h|) + relpos_pad_margin per axis.
RelposGeometry relpos_geometry(int dims, int rows, int cols, const std::vector<RelposHead>& heads, bool pad_keys);

// ---- probabilities ------------------------------------------------------------------------------

// The factorised window of one axis (n query coordinates, keys at −pad … n − 1 + pad): row q is the
// softmax over key coordinates k of −α(k − q − Δ)², split into the real keys and the padding.
struct AxisWindow {
  MatD probs;                    // [n, n]  column k: key coordinate k (0 … n − 1)
  std::vector<double> pad_mass;  // [n]  what row q puts on the 2·pad padding coordinates
};
AxisWindow relpos_axis_window(int n, int pad, double alpha, double delta);

// probs  [H, N]  P_h[query, k] over the real keys (fast, factorised). With padding keys the rows
// sum to 1 − padding mass. Throws InputError if query is not in 0…N−1.
Mat relpos_probs_query(const std::vector<RelposHead>& heads, const RelposGeometry& geometry, int query);

// [H]  the probability each head puts on padding keys for `query` (all 0 without padding).
std::vector<double> relpos_padding_mass(const std::vector<RelposHead>& heads, const RelposGeometry& geometry,
                                        int query);

// scores  [H, N]  v_h·r_δ for `query` and every real key, the SPEC form with the constant α‖Δ‖².
Mat relpos_scores_query(const std::vector<RelposHead>& heads, const RelposGeometry& geometry, int query);

// probs  [H, N, N]  every query's row over the real keys (fast, factorised).
// Throws InputError when H·N² exceeds limits::max_attention_cells.
Tensor3 relpos_probs(const std::vector<RelposHead>& heads, const RelposGeometry& geometry,
                     const std::atomic<bool>* cancel = nullptr);

// Plain-loop oracle for relpos_probs: the SPEC formula per (q, k) over every key (padding included),
// max-subtracted softmax in double. O(H·N·keys).
Tensor3 relpos_probs_reference(const std::vector<RelposHead>& heads, const RelposGeometry& geometry);

// ---- outputs ------------------------------------------------------------------------------------

// outputs  [H, N, ch]  O_h[q] = Σ_k P_h[q,k]·X[k] for every query; X  [N, ch] (padding keys are 0).
// Fast path O_h = A_h·X·B_hᵀ. Checks *cancel between heads and throws Cancelled (analysis.h).
Tensor3 relpos_outputs(const std::vector<RelposHead>& heads, const RelposGeometry& geometry, const Mat& x,
                       const std::atomic<bool>* cancel = nullptr);

// One head's output  [N, ch]  (the fast path of relpos_outputs for heads[h] alone).
Mat relpos_head_output(const RelposHead& head, const RelposGeometry& geometry, const Mat& x);

// Plain-loop oracle for relpos_outputs: every (q, k) scored and softmaxed directly. O(H·N·keys·ch).
Tensor3 relpos_outputs_reference(const std::vector<RelposHead>& heads, const RelposGeometry& geometry,
                                 const Mat& x);

// ---- the expansion for one (query, key) ---------------------------------------------------------

// Every number of score_h(q,k) = v_h·r_δ = −α‖δ − Δ‖² + α‖Δ‖², for the UI to print.
struct RelposPairTerms {
  int dims = 2;
  std::array<double, 2> delta{0, 0};  // δ = p_k − p_q (row, col); on a sentence row is 0
  std::vector<double> r;              // r_δ: (δ², δ) in 1D, (‖δ‖², δ_row, δ_col) in 2D
  std::vector<double> v;              // v_h: −α(1, −2Δ) in 1D, −α(1, −2Δ_row, −2Δ_col) in 2D
  double score = 0;                   // v_h·r_δ
  double distance_term = 0;           // −α‖δ − Δ‖²
  double constant_term = 0;           // α‖Δ‖²   (distance_term + constant_term == score)
};

// δ given directly (1D: delta[0] must be 0).
RelposPairTerms relpos_pair_terms(const RelposHead& head, std::array<double, 2> delta, int dims);
// δ from a query and a key index of `geometry` (each in 0…N−1; InputError otherwise).
RelposPairTerms relpos_pair_terms(const RelposHead& head, const RelposGeometry& geometry, int query, int key);

}  // namespace attnscope
