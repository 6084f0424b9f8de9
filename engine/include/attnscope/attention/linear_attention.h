// linear_attention.h — attention without a softmax, one head at a time: linear attention
// (Katharopoulos et al. 2020), decayed linear attention (RetNet / Lightning Attention), Mamba-2's
// state-space duality (Dao & Gu 2024) and the delta rule with its gated form (Gated DeltaNet, Yang et
// al. 2025). Each is computed three ways that must agree: as it runs (the recurrence over a constant-size
// state), in chunks (where the papers give a chunked form), and as the explicit T×T matrix M that is
// drawn, with output = M·V (+ D·x for Mamba-2). docs/math.md "Attention without a softmax" gives the
// formulas; the names below follow it.
//
// Legend (one head): T tokens, d_k key width, d_v value width, S the state [d_k, d_v] (Mamba-2: N, P).
//   linear        φ(x) = elu(x) + 1;  S_t = S_{t−1} + φ(k_t)·v_tᵀ;  o_t = S_tᵀ·φ(q_t)
//                 M_ts = φ(q_t)·φ(k_s) for s ≤ t, else 0
//   linear_norm   the same divided by the normaliser z_t·φ(q_t), z_t = Σ_{s≤t} φ(k_s): rows sum to 1
//   decayed       S_t = γ·S_{t−1} + k_t·v_tᵀ;  o_t = S_tᵀ·q_t;  M_ts = γ^(t−s)·q_t·k_s   (γ = exp(log_decay))
//   mamba2        q = C [T, N], k = B [T, N], v = x [T, P], Δ_t = dt[t] > 0, a_t = exp(Δ_t·A) (A < 0):
//                 S_t = a_t·S_{t−1} + Δ_t·B_t·x_tᵀ;  y_t = S_tᵀ·C_t + D·x_t
//                 M_ts = (C_t·B_s)·Δ_s·Π_{r=s+1..t} a_r      (y = M·x + D·x)
//   delta         S_t = S_{t−1} + k_t·(β_t·(v_t − S_{t−1}ᵀ·k_t))ᵀ = (I − β_t k_t k_tᵀ)·S_{t−1} + β_t k_t v_tᵀ
//                 o_t = S_tᵀ·q_t
//   gated_delta   S_t = α_t·S_{t−1} first, then the delta step on it; α_t = exp(g_t), g_t = log_decay[t]
//                 (transformers' torch_recurrent_gated_delta_rule: state [d_k, d_v], decay before the
//                 read, q scaled by 1/√d_k and q, k L2-normalised by the caller, as Qwen3-Next does)
//   delta, gated: M_ts = β_s·q_tᵀ·(Π_{r=t..s+1} α_r(I − β_r k_r k_rᵀ))·k_s ·α_s… in the order the
//                 recurrence applies them (computed exactly by carrying k_s forward; see the .cpp).
// Rows of M are not probabilities: signed, and their sums are not 1 (but linear_norm's).
#pragma once
#include <string>
#include <vector>

#include "attnscope/core/types.h"

namespace attnscope {

enum class LinearKind { linear, linear_norm, decayed, mamba2, delta, gated_delta };

// "linear" → LinearKind::linear, … (the names above); throws InputError naming the valid ones.
LinearKind parse_linear_kind(const std::string& name);
const char* linear_kind_name(LinearKind kind);

struct LinearHeadInput {
  Mat q, k, v;                    // [T, d_k], [T, d_k], [T, d_v]   (Mamba-2: C, B, x)
  std::vector<float> beta;        // [T] delta, gated_delta: write strength β_t
  std::vector<float> log_decay;   // [T] decayed: log γ (every entry the same); gated_delta: g_t; mamba2: A (per
                                  //     head, every entry the same, < 0)
  std::vector<float> dt;          // [T] mamba2: Δ_t > 0
  float d_skip = 0;               // mamba2: D
};

struct LinearHeadResult {
  Mat output;  // [T, d_v]
  Mat state;   // [d_k, d_v] after the last token: what a decoder keeps (its size does not grow with T)
};

// Throws InputError (what is wrong, what is valid) for shapes that disagree, a missing per-token vector,
// a non-finite value, Δ ≤ 0, A ≥ 0 or a decay above 1.
void validate_linear_head(LinearKind kind, const LinearHeadInput& in);

// The recurrence over the state, token by token: the state in float32 as a model keeps it (the decays and
// linear_norm's normaliser in double); within 1.3e-6 relative of a double recurrence at T = 4096, d = 128.
LinearHeadResult linear_head_recurrent(LinearKind kind, const LinearHeadInput& in);
// The chunked form (chunk ≥ 1 tokens): within a chunk its T_c×T_c block of M, across chunks the state,
// in float32 blocked matrix products (Eigen). For linear/linear_norm/decayed/mamba2 the block is
// (QKᵀ ⊙ decay)·V; the delta rules use the WY form of transformers' torch_chunk_gated_delta_rule (a
// triangular solve per chunk). Agrees with the recurrence to float32 rounding (≤ 1e-5 relative, T 4096).
LinearHeadResult linear_head_chunked(LinearKind kind, const LinearHeadInput& in, int chunk);
// A layer's heads at once, spread over the cores (OpenMP); result h is head h's, the same as the
// single-head call. Bad input is refused before anything runs, naming the head ("head 2: …").
std::vector<LinearHeadResult> linear_heads_recurrent(LinearKind kind, const std::vector<LinearHeadInput>& heads);
std::vector<LinearHeadResult> linear_heads_chunked(LinearKind kind, const std::vector<LinearHeadInput>& heads,
                                                   int chunk);
// The explicit matrix M [T, T] (lower triangular); output = M·V (+ D·x for Mamba-2).
Mat linear_head_matrix(LinearKind kind, const LinearHeadInput& in);

}  // namespace attnscope
