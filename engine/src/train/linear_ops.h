// linear_ops.h — (private) the training model's attention without a softmax: one plain function per
// operation on one head, its backward beside it, then the layer over every sequence and head (issue 39).
// The formulas and names are the inference engine's (attention/linear_attention.h, linear_layer.h;
// docs/math.md "Attention without a softmax"), so a trained layer and the window agree.
//
// Legend (one head of one sequence): T tokens, d = D = C/H the head width, arrays row-major [T, d] in
// double; q, k, v the head's slice of q_proj, k_proj, v_proj's outputs; h the layer's normalised input.
//   linear          φ(x) = elu(x) + 1; A_ts = φ(q_t)·φ(k_s) (s ≤ t); M_ts = A_ts / Σ_s A_ts; o = M·v
//   retention       q ← q/√d; M_ts = γ_h^(t−s)·q_t·k_s, γ_h = linear_decay_schedule(h, H) (fixed); o = M·v
//   mamba2          C = q, B = k, x = v; Δ_t = softplus(h_t·dt_proj_h + dt_bias_h); A_h = −exp(A_log_h);
//                   M_ts = (C_t·B_s)·Δ_s·exp(A_h·Σ_{r=s+1..t} Δ_r);  y = M·x + D_h·x
//   deltanet        q, k L2-normalised, q ← q/√d; β_t = sigmoid(h_t·b_proj_h)
//                   S_t = S_{t−1} + k_t·(β_t·(v_t − S_{t−1}ᵀk_t))ᵀ;  o_t = S_tᵀ·q_t   (S [d_k, d_v], S_0 = 0)
//   gated-deltanet  the same with S_{t−1} first multiplied by α_t = exp(g_t),
//                   g_t = −exp(A_log_h)·softplus(h_t·a_proj_h + dt_bias_h) (Qwen3-Next's gate)
// Backward: linear, retention and mamba2 through the explicit T×T matrix (O(T²·d) per head); the delta
// rules through the recurrence, with the T + 1 states S_0 … S_T of the head kept for its backward (the
// forward is run again inside the backward, one head at a time: (T + 1)·d² doubles of scratch; the
// forward itself keeps two).
// Every function on one head accumulates (+=) into its gradient outputs.
#pragma once
#include <cstddef>

#include "attnscope/train/model.h"

namespace attnscope::train::linear_ops {

// φ(x) = elu(x) + 1 elementwise, and dx += dy·φ'(x).
void elu1_forward(double* y, const double* x, size_t n);
void elu1_backward(double* dx, const double* dy, const double* x, size_t n);

// Each row of x [T, d] divided by its L2 norm (a zero row stays zero); norm [T] kept for the backward.
void l2norm_forward(double* y, double* norm, const double* x, int T, int d);
void l2norm_backward(double* dx, const double* dy, const double* y, const double* norm, int T, int d);

// Linear attention with the normaliser: out [T, d], M [T, T] (rows sum to 1).
void linear_norm_forward(double* out, double* M, const double* fq, const double* fk, const double* v, int T, int d);
void linear_norm_backward(double* dfq, double* dfk, double* dv, const double* dout, const double* out,
                          const double* M, const double* fq, const double* fk, const double* v, int T, int d);

// Decayed linear attention (retention) with one γ.
void decayed_forward(double* out, double* M, const double* q, const double* k, const double* v, double gamma, int T,
                     int d);
void decayed_backward(double* dq, double* dk, double* dv, const double* dout, const double* q, const double* k,
                      const double* v, double gamma, int T, int d);

// Mamba-2's state-space duality with a scalar A: y [T, d], M [T, T] (without the D skip).
void ssd_forward(double* y, double* M, const double* C, const double* B, const double* x, const double* dt, double A,
                 double D, int T, int d);
void ssd_backward(double* dC, double* dB, double* dx, double* ddt, double* dA, double* dD, const double* dy,
                  const double* M, const double* C, const double* B, const double* x, const double* dt, double A,
                  double D, int T, int d);

// The (gated) delta rule (α_t = 1 for DeltaNet): out [T, d], M [T, T]; with keep_states, states
// [(T + 1)·d·d] holds S_0 … S_T for the backward, else states [2·d·d] is the two slots it alternates.
void gated_delta_forward(double* out, double* states, double* M, const double* q, const double* k, const double* v,
                         const double* beta, const double* alpha, int T, int d, bool keep_states);
void gated_delta_backward(double* dq, double* dk, double* dv, double* dbeta, double* dalpha, const double* dout,
                          const double* states, const double* q, const double* k, const double* v,
                          const double* beta, const double* alpha, int T, int d);

// The gates' vectors of one layer (null where the kind has none).
struct LayerGates {
  const float *dt_bias = nullptr, *a_log = nullptr, *d_skip = nullptr;
};
struct LayerGateGrads {
  float *dt_bias = nullptr, *a_log = nullptr, *d_skip = nullptr;
};

// The whole layer: q, k, v [B·T, H·d] as projected, gate_b, gate_s [B·T, H] (h·b_projᵀ, h·step_projᵀ; null
// where unused) → out [B·T, H·d] and probs [B, H, T, T] (each head's M).
void layer_forward(AttentionKind kind, float* out, float* probs, const float* q, const float* k, const float* v,
                   const float* gate_b, const float* gate_s, const LayerGates& gates, int B, int T, int H, int d);
// dq, dk, dv [B·T, H·d], dgate_b, dgate_s [B·T, H] are overwritten; the gates' vectors' gradients accumulate.
void layer_backward(AttentionKind kind, float* dq, float* dk, float* dv, float* dgate_b, float* dgate_s,
                    const LayerGateGrads& dgates, const float* dout, const float* q, const float* k, const float* v,
                    const float* gate_b, const float* gate_s, const LayerGates& gates, int B, int T, int H, int d);

}  // namespace attnscope::train::linear_ops
