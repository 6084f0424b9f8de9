// differential_attention.h — differential attention (Ye et al., ICLR 2025; SPEC "Variants after GQA"),
// as the authors' code computes it, with MHA/GQA/MQA sharing of K and V.
//
// Legend: T tokens, C d_model, H heads, G kv groups, d = C/(2H) the width of a query/key half, 2d the
// value width, g(h) = ⌊h / (H/G)⌋, l the layer (numbered from 0; here always 0).
//   Q = X·W_Qᵀ  [T, 2H·d] → [2H, T, d]: head h's Q₁ = Q[2h], Q₂ = Q[2h+1]
//   K = X·W_Kᵀ  [T, 2G·d] → [2G, T, d]: group j's K₁ = K[2j], K₂ = K[2j+1]
//   V = X·W_Vᵀ  [T, G·2d] → [G, T, 2d]
//   P₁,h = softmax(Q₁,h·K₁,g(h)ᵀ/√d)   P₂,h = softmax(Q₂,h·K₂,g(h)ᵀ/√d)      [H, T, T]
//   λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init,  λ_init = 0.8 − 0.6·exp(−0.3·l)   one per layer
//   A_h = P₁,h − λ·P₂,h                                                        [H, T, T] signed
//   O_h = RMSNorm(A_h·V_g(h)) · (1 − λ_init)   RMSNorm over 2d, eps 1e-5, one weight w [2d] for all heads
//   out = concat_h(O_h)·W_Oᵀ + b_O                                             [T, C]
// W_Q, W_K, W_V, W_O have the grouped shapes (d_k = C/H = 2d), so AttentionWeights carries them.
#pragma once
#include <cstdint>

#include "attnscope/attention/grouped_attention.h"

namespace attnscope {

struct DifferentialParams {
  Vec lambda_q1, lambda_k1, lambda_q2, lambda_k2;  // [d] each
  Vec norm;                                        // [2d] the per-head RMSNorm's weight (subln)
  int layer = 0;                                   // l, for λ_init
};

inline constexpr double differential_norm_eps = 1e-5;

// λ_init = 0.8 − 0.6·exp(−0.3·l), l from 0.
double differential_lambda_init(int layer);
// λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init (dot products in double).
double differential_lambda(const DifferentialParams& params);

// Throws InputError unless the grouped rules hold and 2H divides C (each head splits into two halves).
void validate_differential_shape(const AttentionShape& shape);

// Seeded λ vectors ~ N(0, 0.1²) (the authors' initialisation; Box–Muller on the engine's Rng), norm
// weight 1, layer 0.
DifferentialParams random_differential_params(const AttentionShape& shape, uint64_t seed);

// Fast path (Eigen products, heads in parallel). Result per grouped_attention.h's differential notes:
// probs = A (signed), probs_1, probs_2, lambda. options.scale_scores off: no 1/√d.
AttentionResult differential_attention(const Mat& x, const AttentionWeights& w, const DifferentialParams& params,
                                       const AttentionShape& shape, const AttentionOptions& options);
// Plain-loop reference in double (differential_attention_reference.cpp). Same contract.
AttentionResult differential_attention_reference(const Mat& x, const AttentionWeights& w,
                                                 const DifferentialParams& params, const AttentionShape& shape,
                                                 const AttentionOptions& options);

}  // namespace attnscope
