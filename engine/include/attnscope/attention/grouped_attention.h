// grouped_attention.h — one routine for single-head, MHA, MQA and GQA (SPEC "Grouped attention").
//
//   X            [T, C]
//   Q = X·W_Qᵀ   [T, H·d_k] → [H, T, d_k]        K, V = X·W_Kᵀ, X·W_Vᵀ → [G, T, d_k]
//   (RoPE: Q, K rotated per token first; positions.h)
//   S_h = Q_h·K_{g(h)}ᵀ / √d_k (+ ALiBi or relpos bias) (+ causal / window mask)   [H, T, T]
//   P_h = row softmax(S_h)  (+ the sink logit s_h in each row's denominator)      [H, T, T]
//   O_h = P_h·V_{g(h)}                           [H, T, d_k]
//   out = concat_h(O_h)·W_Oᵀ + b_O               [T, C]
#pragma once
#include <atomic>
#include "attnscope/core/types.h"
#include "attnscope/attention/positions.h"
#include "attnscope/attention/weights.h"

namespace attnscope {

struct AttentionOptions {
  bool causal = false;       // key j > query i gets −inf before the softmax
  bool scale_scores = true;  // divide by √d_k (a lesson turns it off to show saturation)
  // When set during the call, grouped_attention throws Cancelled (error.h) after the tasks it is on
  // (the window's worker: a newer scene need not wait for all heads of T = 2048).
  const std::atomic<bool>* cancel = nullptr;
  // Sliding window W > 0: query i sees keys i − W < j ≤ i (and implies the causal mask); sinks > 0
  // (StreamingLLM, with a window): keys j < sinks stay visible to every query i ≥ j too.
  int window = 0;
  int sinks = 0;
  std::vector<double> sink_logits;  // [H] gpt-oss: s_h joins row i's denominator; empty = none
  PositionEncoding positions;       // NoPE by default (positions.h)
};

// The members' shapes are those of grouped attention; the variants after GQA (SPEC "Variants after GQA")
// differ where noted, and fill the members below `output` (empty otherwise).
//   MLA (latent_attention.h), G = H, d_N = d_v = C/H, d_R the rotary part:
//     q, k [H, T, d_N + d_R] (k's last d_R columns are the shared rotary key), v [H, T, d_v];
//     its absorbed form: q [H, T, r_kv + d_R], k [1, T, r_kv + d_R] = [c_KV, k_rope], v [1, T, r_kv] = c_KV,
//     head_out [H, T, r_kv], concat [T, H·r_kv] (the latent outputs; W_UV is folded into W_O).
//   differential (differential_attention.h), d = C/(2H): q [2H, T, d] (head h's Q₁ = q[2h], Q₂ = q[2h+1]),
//     k [2G, T, d], v [G, T, 2d], scores [2H, T, T] (Q₁K₁ᵀ/√d, Q₂K₂ᵀ/√d of head h at 2h, 2h+1),
//     probs [H, T, T] the signed map A = probs_1 − λ·probs_2 (rows sum to 1 − λ), head_out [H, T, 2d]
//     after the per-head RMSNorm and the factor (1 − λ_init).
// The seeded sink logits of a scene model: s_h uniform in [−1, 3) from Rng(seed ^ 0x5117C0DE) (so that
// some heads park little and some much of their mass on the sink).
std::vector<double> seeded_sink_logits(int heads, uint64_t seed);

// Whether key j is visible to query i under options' causal mask, window and sinks.
inline bool key_visible(int i, int j, const AttentionOptions& o) {
  if ((o.causal || o.window > 0) && j > i) return false;
  return o.window <= 0 || j > i - o.window || j < o.sinks;
}

struct AttentionResult {
  Tensor3 q;         // [H, T, d_k]  (after RoPE when positions are rotary)
  Tensor3 k;         // [G, T, d_k]  (after RoPE when positions are rotary)
  Tensor3 v;         // [G, T, d_k]
  Tensor3 scores;    // [H, T, T]  masked entries are −inf
  Tensor3 probs;     // [H, T, T]  rows sum to 1 (to 1 − sink_share with sink logits)
  Tensor3 head_out;  // [H, T, d_k]
  Mat concat;        // [T, H·d_k]
  Mat output;        // [T, C]
  // MLA: what the cache holds and what the queries come from.
  Mat c_q;           // [T, r_q]   RMSNorm(X·W_DQᵀ); empty when r_q = 0 (q = X·W_Qᵀ)
  Mat c_kv;          // [T, r_kv]  RMSNorm(X·W_DKVᵀ), the cached latent
  Mat k_rope;        // [T, d_R]   RoPE(X·W_KRᵀ), the cached rotary key shared by every head
  // Differential attention: the two softmax maps and the layer's λ.
  Tensor3 probs_1, probs_2;  // [H, T, T]  softmax(Q₁K₁ᵀ/√d), softmax(Q₂K₂ᵀ/√d); rows sum to 1
  double lambda = 0;         // λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init
  Mat sink_share;    // [H, T]  with sink logits: 1 − Σ_j P_h[i, j], the mass the sink takes; else empty
  std::vector<double> alibi_slopes;  // [H]  m_h with ALiBi positions; else empty
};

// Query rows per task of the fast path: it works in blocks of this many rows (projections, each
// head's scores, softmax and P·V, output), which the cores take as they come free. A block's scores
// and probabilities, 2 × 128 × T floats, stay in a core's L2 cache up to T ≈ 2048. Public so that
// the tests can pick sizes that are not a multiple of it.
inline constexpr int attention_row_block = 128;

// Fast path: Eigen matrix products in tasks over blocks of query rows. Throws InputError on bad shapes.
AttentionResult grouped_attention(const Mat& x, const AttentionWeights& w, const AttentionShape& shape,
                                  const AttentionOptions& options);

// Plain-loop reference (the oracle the fast path is tested against). Same contract.
AttentionResult grouped_attention_reference(const Mat& x, const AttentionWeights& w,
                                            const AttentionShape& shape, const AttentionOptions& options);

// Row-wise softmax in place, max-subtracted. −inf entries get exactly 0. A row whose maximum is
// +inf shares its mass equally among its +inf entries; a row with no finite or +inf entry becomes
// uniform; NaN entries are treated as −inf. Never produces NaN.
void softmax_rows(Mat& scores_to_probs);

}  // namespace attnscope
