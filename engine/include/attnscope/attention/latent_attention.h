// latent_attention.h — multi-head latent attention, MLA (DeepSeek-V2, arXiv 2405.04434 §2.1; SPEC
// "Variants after GQA"), in its two forms: naive (K and V expanded per head) and absorbed (W_UK folded
// into the query, W_UV into the output: MQA over the cached latent).
//
// Legend: T tokens, C d_model, H heads, d_N = d_v = C/H the per-head "nope" and value widths, d_R the
// decoupled rotary part, r_kv the K/V latent, r_q the query latent (0 = none), d_qk = d_N + d_R.
//   c_Q    = RMSNorm(X·W_DQᵀ)                     [T, r_q]    (r_q = 0: the query reads X itself)
//   q_N,h  = c_Q·W_UQ,hᵀ                          [T, d_N]    q_R,h = RoPE(c_Q·W_QR,hᵀ)  [T, d_R]
//   c_KV   = RMSNorm(X·W_DKVᵀ)                    [T, r_kv]   cached
//   k_R    = RoPE(X·W_KRᵀ)                        [T, d_R]    cached, shared by every head
//   naive:    k_h = [c_KV·W_UK,hᵀ ; k_R]  [T, d_qk]   v_h = c_KV·W_UV,hᵀ  [T, d_v]
//             S_h = [q_N,h ; q_R,h]·k_hᵀ / √d_qk,  P_h = softmax(S_h),  O_h = P_h·v_h
//             out = concat_h(O_h)·W_Oᵀ                              [T, C]
//   absorbed: q̃_h = [q_N,h·W_UK,h ; q_R,h]  [T, r_kv + d_R]     k̃ = [c_KV ; k_R]  [T, r_kv + d_R]
//             S_h = q̃_h·k̃ᵀ / √d_qk (the same numbers),  õ_h = P_h·c_KV  [T, r_kv]
//             out = Σ_h õ_h·(W_O,h·W_UV,h)ᵀ                        [T, C]
// RMSNorm(x) = x / √(mean(x²) + 1e-6) · w. RoPE turns pairs of the d_R part by position t·base^(−2i/d_R),
// pairs (i, i + d_R/2) (rotate-half, Llama) or (2i, 2i + 1) (interleaved, DeepSeek's own).
#pragma once
#include <cstdint>

#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/positions.h"

namespace attnscope {

struct LatentShape {
  int d_model = 64;   // C
  int heads = 8;      // H; d_N = d_v = C/H
  int kv_rank = 16;   // r_kv
  int q_rank = 0;     // r_q, 0 = no query compression
  int rope_dim = 8;   // d_R, even, ≤ C/H
  int head_dim() const { return d_model / heads; }               // d_N = d_v
  int qk_dim() const { return head_dim() + rope_dim; }           // d_qk
  int query_in() const { return q_rank > 0 ? q_rank : d_model; }  // what W_UQ and W_QR read
};

// The decoupled rotary part's positions (the scene's rope settings; SPEC "RoPE"; positions.h's formulas).
struct LatentRope {
  double base = 10000;
  bool interleaved = false;  // pairs (2i, 2i+1) as DeepSeek; false: (i, i + d_R/2) as Llama
  RopeScaling scaling = RopeScaling::none;  // linear, NTK-aware or YaRN (cos and sin × its attention factor)
  double factor = 1;
  double original_context = 32;
  RopeParams params() const;  // as positions.h takes them
};

// Weights in the PyTorch nn.Linear layout [out, in]; no biases (as DeepSeek).
struct LatentWeights {
  Mat wdq;      // [r_q, C]           W_DQ (empty when r_q = 0)
  Vec q_norm;   // [r_q]              the RMSNorm weight after W_DQ (empty when r_q = 0)
  Mat wuq;      // [H·d_N, r_q or C]  W_UQ, head h = rows h·d_N …
  Mat wqr;      // [H·d_R, r_q or C]  W_QR, head h = rows h·d_R …
  Mat wdkv;     // [r_kv, C]          W_DKV
  Vec kv_norm;  // [r_kv]             the RMSNorm weight after W_DKV
  Mat wkr;      // [d_R, C]           W_KR
  Mat wuk;      // [H·d_N, r_kv]      W_UK
  Mat wuv;      // [H·d_v, r_kv]      W_UV
  Mat wo;       // [C, H·d_v]         W_O
};

inline constexpr double latent_norm_eps = 1e-6;  // the RMSNorm after each down-projection (DeepSeek's)

// Throws InputError (what is valid) unless the grouped rules hold for (C, H) and 1 ≤ r_kv ≤ C,
// r_q = 0 or 1 ≤ r_q ≤ C, d_R even with 0 ≤ d_R ≤ C/H.
void validate_latent_shape(const LatentShape& shape);
// Throws InputError naming the first weight whose shape does not match.
void validate_latent_weights(const LatentWeights& w, const LatentShape& shape);

// Seeded weights: Xavier/Glorot uniform as random_weights (one stream per matrix, so a rank change
// leaves the others alone), RMSNorm weights 1 (their initial value in DeepSeek's code).
LatentWeights random_latent_weights(const LatentShape& shape, uint64_t seed);

// Naive form. Result (grouped_attention.h's MLA notes): q, k [H, T, d_qk], v [H, T, d_v], scores/probs
// [H, T, T], head_out [H, T, d_v], concat [T, H·d_v], output [T, C], c_q, c_kv, k_rope. Scale
// 1/√d_qk (1 with options.scale_scores off); options.causal masks j > i.
AttentionResult latent_attention(const Mat& x, const LatentWeights& w, const LatentShape& shape,
                                 const LatentRope& rope, const AttentionOptions& options);
// Absorbed form: the same scores, probabilities and output; q [H, T, r_kv + d_R] the absorbed queries,
// k [1, T, r_kv + d_R] = [c_KV, k_R], v [1, T, r_kv] = c_KV, head_out [H, T, r_kv], concat [T, H·r_kv].
AttentionResult latent_attention_absorbed(const Mat& x, const LatentWeights& w, const LatentShape& shape,
                                          const LatentRope& rope, const AttentionOptions& options);
// Plain-loop reference of the naive form, in double (latent_attention_reference.cpp).
AttentionResult latent_attention_reference(const Mat& x, const LatentWeights& w, const LatentShape& shape,
                                           const LatentRope& rope, const AttentionOptions& options);

// RoPE on the columns of x [n, d_R] in place, row t at position first_position + t (d_R even).
void rotate_positions(Mat& x, const LatentRope& rope, int first_position = 0);

}  // namespace attnscope
