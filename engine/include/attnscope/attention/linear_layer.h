// linear_layer.h — the scene's seeded layer when its heads have no softmax: H heads over the same
// Q/K/V/O projections as the scene's MHA (weights.h), each head one of linear_attention.h's kinds, with
// the gates (β, Δ, the decay) made from the input by seeded weights. docs/math.md "Attention without a
// softmax" gives the formulas.
//
// Legend: T tokens, C d_model, H heads, d = C/H (d_k = d_v = d; Mamba-2: N = P = d).
//   Q, K, V = X·W_Qᵀ, X·W_Kᵀ, X·W_Vᵀ (+ biases) → [H, T, d]
//   γ_h (the decay schedule): 1 − 2^(−1 − 4h/(H−1)), from 0.5 (head 0) to 0.97 (head H−1); one head: 0.5
//   linear          M_ts = φ(q_t)·φ(k_s), φ = elu + 1 (÷ Σ_s of the row with the normaliser)
//   retention       q·(1/√d) when scores are scaled; M_ts = γ^(t−s)·q_t·k_s with γ = γ_h, or the scene's decay
//   mamba2          C = Q_h, B = K_h, x = V_h (one B/C group per head, N = d);
//                   Δ_t = softplus(x_t·w_Δ,h + b_Δ,h), A_h = log γ_h (so a_t = exp(Δ_t·A_h) ≈ γ_h^Δ_t), D_h = 1
//   deltanet        q, k L2-normalised per head, q·(1/√d) when scores are scaled; β_t = sigmoid(x_t·w_β,h)
//   gated-deltanet  the same, and g_t = −exp(A_log,h)·softplus(x_t·w_a,h + b_a,h), A_log,h = log(−log γ_h)
//                   (Qwen3-Next's gate), α_t = exp(g_t)
//   M_h [T, T] the explicit matrix (linear_head_matrix); O_h = M_h·V_h (+ D_h·V_h for Mamba-2) [H, T, d],
//   computed as it runs (linear_head_recurrent) and equal to M_h·V_h
//   out = concat_h(O_h)·W_Oᵀ + b_O  [T, C]
//   S_h [d, d] each head's state after the last token: all a decoder keeps (its size does not grow with T)
#pragma once
#include <atomic>
#include <cstdint>

#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/linear_attention.h"
#include "attnscope/attention/weights.h"

namespace attnscope {

// The seeded layer's heads without a softmax (ModelSettings::kind).
enum class LinearLayerKind { linear, retention, mamba2, deltanet, gated_deltanet };

struct LinearLayerSpec {
  LinearLayerKind kind = LinearLayerKind::linear;
  bool normalize = true;   // linear: divide each row by its normaliser (rows then sum to 1)
  double decay = 0;        // retention: one γ for every head, 0 < γ ≤ 1; 0 = the schedule γ_h
  bool scale_q = true;     // retention, deltanet, gated-deltanet: q·(1/√d)
};

// The gates' seeded weights: the same for every kind, so that switching kinds keeps the numbers.
struct LinearGates {
  Mat w_beta;     // [H, C]  β_t,h = sigmoid(x_t·w_beta[h])
  Mat w_step;     // [H, C]  Mamba-2's Δ and Gated DeltaNet's a: x_t·w_step[h] + step_bias[h]
  Vec step_bias;  // [H]     softplus⁻¹(1): Δ ≈ 1 for an input the weights do not react to
  Vec d_skip;     // [H]     Mamba-2's D (ones)
  // [H] a trained model's A_log (A_h = −exp(A_log_h), Mamba-2's and Gated DeltaNet's decay); empty: the
  // schedule's log γ_h (the seeded layer)
  Vec a_log;
};

// Deterministic for (C, H, seed); w_beta and w_step are Xavier-uniform like the projections.
LinearGates random_linear_gates(int d_model, int heads, uint64_t seed);

// γ_h of the legend for head h of H.
double linear_decay_schedule(int head, int heads);

// The engine kind each head runs (LinearKind::linear_norm for linear with the normaliser).
LinearKind linear_kind_of(const LinearLayerSpec& spec);
// "linear" | "retention" | "mamba2" | "deltanet" | "gated-deltanet"
const char* to_string(LinearLayerKind kind);

struct LinearLayerResult {
  // q, k, v [H, T, d] as the heads read them (after the L2 norm and the 1/√d scale; before φ), probs the
  // explicit matrices M [H, T, T] (signed; rows do not sum to 1 except linear's with the normaliser),
  // scores empty, head_out [H, T, d], concat [T, H·d], output [T, C].
  AttentionResult attention;
  Mat beta;      // [H, T] deltanet, gated-deltanet; else empty
  Mat step;      // [H, T] Mamba-2's Δ_t; else empty
  Mat decay;     // [H, T] the factor the state is multiplied by at each token (γ, exp(Δ_t·A), α_t); else empty
  Tensor3 state; // [H, d, d] each head's state after the last token
  // [H] exactly what each head ran on (linear_attention.h), so that tests and the command line can run
  // the chunked form and the recurrence on the same numbers.
  std::vector<LinearHeadInput> inputs;
  LinearKind head_kind = LinearKind::linear;
};

// Throws InputError for bad shapes or a decay outside (0, 1], Cancelled when *cancel becomes true.
LinearLayerResult linear_layer(const Mat& x, const AttentionWeights& w, const LinearGates& gates,
                               const LinearLayerSpec& spec, const AttentionShape& shape,
                               const std::atomic<bool>* cancel = nullptr);

// The heads alone, from their projections: Q, K, V [T, H·d] (before the L2 norm and the scale), the gates'
// inputs beta_in = x·w_betaᵀ and step_in = x·w_stepᵀ [T, H]; the result's output is left empty (the caller
// projects attention.concat). A checkpoint's trained layer (model/forward.cpp) runs these with its own
// tensors. Throws InputError for shapes that do not agree.
LinearLayerResult linear_layer_heads(const Mat& Q, const Mat& K, const Mat& V, const Mat& beta_in, const Mat& step_in,
                                     const LinearGates& gates, const LinearLayerSpec& spec, int H,
                                     const std::atomic<bool>* cancel = nullptr);

}  // namespace attnscope
