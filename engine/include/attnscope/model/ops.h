// ops.h — the operations of a decoder-only transformer, forward and backward (llm.c's train_gpt2.c).
//
// The op contract shared by the forward pass of real checkpoints (model/) and by training (train/):
// one plain function per operation, its backward right after it in ops.cpp, a shape legend on each.
// Row-major float32. Letters: B batch, T tokens, C width, H query heads, G kv heads (G divides H),
// D head width, F MLP hidden width, V vocabulary, BT = B·T rows, NH heads of a rotated tensor.
//
//   * Backward functions ACCUMULATE (+=) into every gradient buffer, as llm.c's do: callers zero them.
//   * Matrix products go through Eigen (Map over the raw pointers), so they are fast and use OpenMP.
//   * Deterministic: the same inputs and thread count give the same bits. No reduction is split across
//     threads in an order that depends on scheduling (parallel loops write disjoint outputs; shared
//     gradients are summed per head into scratch and then in a fixed order).
//   * Each op has a plain-loop reference with the same signature in ops::reference
//     (ops_reference.cpp), accumulating in double; tests hold fast == reference.
//   * Sizes are the caller's to check (a programmer mistake here is an assert, not an InputError).
//
// Sections: embedding · normalisation · linear · rotary positions · grouped causal attention ·
//           multi-head latent attention · MLP activations · residual · softmax cross-entropy
#pragma once
#include <cstdint>

namespace attnscope::ops {

// ---- embedding --------------------------------------------------------------------------------
// out[i] = table[ids[i]]                     out [BT, C], ids [BT] in [0, V), table [V, C]
void embedding_forward(float* out, const int32_t* ids, const float* table, int BT, int C);
// dtable[ids[i]] += dout[i]                  dtable [V, C], dout [BT, C]
void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int BT, int C);

// ---- normalisation ----------------------------------------------------------------------------
// RMSNorm (Llama): out = x / sqrt(mean(x²) + eps) · weight
//   out [BT, C], rstd [BT] (1/sqrt(mean(x²) + eps), kept for the backward; may be null), x [BT, C],
//   weight [C]
void rmsnorm_forward(float* out, float* rstd, const float* x, const float* weight, int BT, int C, float eps);
// dx [BT, C], dweight [C], dout [BT, C], x [BT, C], weight [C], rstd [BT] from the forward
void rmsnorm_backward(float* dx, float* dweight, const float* dout, const float* x, const float* weight,
                      const float* rstd, int BT, int C);
// LayerNorm (GPT-2): out = (x − mean) / sqrt(var + eps) · weight + bias, var the biased variance.
//   out [BT, C], mean and rstd [BT] or null, x [BT, C], weight and bias [C] (bias may be null)
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                       const float* bias, int BT, int C, float eps);
// Beyond the contract (llm.c has it; no training path uses LayerNorm yet): dbias may be null.
void layernorm_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                        const float* weight, const float* mean, const float* rstd, int BT, int C);

// ---- linear -----------------------------------------------------------------------------------
// out = x·weightᵀ + bias                     out [BT, OC], x [BT, IC], weight [OC, IC] (nn.Linear),
//                                            bias [OC] or null
void linear_forward(float* out, const float* x, const float* weight, const float* bias, int BT, int IC, int OC);
// dx += dout·weight [BT, IC]; dweight += doutᵀ·x [OC, IC]; dbias += Σ_rows dout [OC] (dx, dbias may be null)
void linear_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                     const float* weight, int BT, int IC, int OC);

// ---- rotary positions (rotate-half RoPE, Hugging Face Llama) ------------------------------------
// Within each head, dim i pairs with i + D/2; inv_freq_i = theta^(−2i/D); angle = (pos0 + t)·inv_freq_i;
// x' = x·cos + rotate_half(x)·sin, rotate_half(x) = [−x[D/2:], x[:D/2]].   x [B, T, NH, D] in place, D even
void rope_forward(float* x, int B, int T, int NH, int D, float theta, int pos0);
// The transpose rotation (by −angle) applied to the gradient in place.   dx [B, T, NH, D]
void rope_backward(float* dx, int B, int T, int NH, int D, float theta, int pos0);

// ---- grouped causal attention ------------------------------------------------------------------
// Scale 1/sqrt(D); query head h reads kv head g(h) = h / (H/G).
//   q [B, T, H·D] (head h = columns h·D … h·D + D − 1), k and v [B, T, G·D]
//   1. scores  S = Q_h·K_gᵀ / sqrt(D)           [T, T]
//   2. mask    key j > query i is left out (its probability is exactly 0)
//   3. softmax P = softmax_rows(S)              probs [B, H, T, T], kept for every head
//   4. weigh   O_h = P·V_g                      out [B, T, H·D]
void attention_forward(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D);
// The forward pass of checkpoints adds three per-layer choices (forward only: training uses the above):
//   scale    S = Q_h·K_gᵀ·scale (Gemma: query_pre_attn_scalar^(−1/2))
//   softcap  > 0: S → tanh(S/softcap)·softcap before the mask (Gemma 2)
//   window   > 0: query i sees keys i − window < j ≤ i only (sliding-window layers); 0: keys 0…i
struct AttentionOptions {
  float scale = 0;    // 0: 1/sqrt(D), computed as the plain attention_forward does
  float softcap = 0;
  int window = 0;
};
void attention_forward_with(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D, const AttentionOptions& options);
// One head's probabilities [T, T] as attention_forward_with/general make them (the same code, so the same
// bits): q rows [T, Dk] q_stride floats apart, k rows k_stride apart. What forward()'s on-demand mode
// (forward.h HeadMaps) recomputes a head from.
void attention_head_probs(float* probs, const float* q, int q_stride, const float* k, int k_stride, int T, int Dk,
                          const AttentionOptions& options);
// dq [B, T, H·D], dk and dv [B, T, G·D], dout [B, T, H·D], probs from the forward
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* probs, const float* q,
                        const float* k, const float* v, int B, int T, int H, int G, int D);
// The same attention with the query/key width Dk and the value width Dv apart (MLA: Dk = d_nope + d_rope,
// Dv = d_v), options.scale (0: 1/sqrt(Dk)) and options.window (0: keys 0…i); the training path of MLA
// and of sliding-window layers. Its backward needs options.softcap = 0.
//   q [B, T, H·Dk], k [B, T, G·Dk], v [B, T, G·Dv] → out [B, T, H·Dv], probs [B, H, T, T]
void attention_forward_general(float* out, float* probs, const float* q, const float* k, const float* v, int B,
                               int T, int H, int G, int Dk, int Dv, const AttentionOptions& options);
// dq [B, T, H·Dk], dk [B, T, G·Dk], dv [B, T, G·Dv], dout [B, T, H·Dv], probs from the forward (a
// masked key, outside the window or in the future, has probability 0 and so gets no gradient)
void attention_backward_general(float* dq, float* dk, float* dv, const float* dout, const float* probs,
                                const float* q, const float* k, const float* v, int B, int T, int H, int G, int Dk,
                                int Dv, const AttentionOptions& options);

// ---- multi-head latent attention (DeepSeek-V2): interleaved rotary part, keys and values -------
// Rotary positions on interleaved pairs, DeepSeek's layout (Hugging Face rope_interleave): in each of
// NH heads of width S, the pair (offset + 2i, offset + 2i + 1), i < R/2, rotates by the angle
// (pos0 + t)·inv_freq_i, inv_freq_i = theta^(−2i/R) (rope_tables with D = R):
//   x'_a = x_a·cos − x_b·sin,  x'_b = x_b·cos + x_a·sin.        x [B, T, NH·S] in place, R even
void rope_interleaved_forward(float* x, int B, int T, int NH, int S, int offset, int R, float theta, int pos0);
// The inverse rotation applied to the gradient in place.        dx [B, T, NH·S]
void rope_interleaved_backward(float* dx, int B, int T, int NH, int S, int offset, int R, float theta, int pos0);
// Keys and values of every head from kv_b_proj's output and the shared rotary key:
//   kv [BT, H·(N + Dv)] (head h: its key part N, then its value part Dv), kpe [BT, R] (rotated)
//   k [BT, H·(N + R)], k[t, h] = [kv[t, h, :N] ; kpe[t]];   v [BT, H·Dv], v[t, h] = kv[t, h, N:]
void mla_kv_forward(float* k, float* v, const float* kv, const float* kpe, int BT, int H, int N, int R, int Dv);
// dkv [BT, H·(N + Dv)] += the key and value parts of dk, dv; dkpe [BT, R] += Σ_h dk[t, h, N:] (heads in
// order)
void mla_kv_backward(float* dkv, float* dkpe, const float* dk, const float* dv, int BT, int H, int N, int R, int Dv);

// ---- MLP activations ---------------------------------------------------------------------------
// SwiGLU: out = silu(gate)·up, silu(g) = g·sigmoid(g).    out, gate, up [BT, F]
void swiglu_forward(float* out, const float* gate, const float* up, int BT, int F);
// dgate, dup [BT, F], dout [BT, F]
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int BT, int F);
// GPT-2's gelu_new: 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))).   out, x [N] (out may be x)
void gelu_new_forward(float* out, const float* x, int N);
// Beyond the contract: dx += dout·gelu_new'(x).   dx, dout, x [N]
void gelu_new_backward(float* dx, const float* dout, const float* x, int N);

// ---- residual ----------------------------------------------------------------------------------
// out = a + b [N] (out may alias a or b)
void residual_forward(float* out, const float* a, const float* b, int N);
// da += dout; db += dout [N]
void residual_backward(float* da, float* db, const float* dout, int N);

// ---- softmax cross-entropy ---------------------------------------------------------------------
// probs = softmax over V of each row of logits; returns the mean of −log probs[i, targets[i]] over
// the scored rows (targets[i] < 0: row i is not scored; no scored row gives 0).
//   probs [BT, V], logits [BT, V], targets [BT]
float crossentropy_forward(float* probs, const float* logits, const int32_t* targets, int BT, int V);
// The gradient of that mean: dlogits[i] += (probs[i] − onehot(targets[i])) / scored rows, for scored rows.
//   dlogits [BT, V]
void crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets, int BT, int V);

// ---- plain-loop references (ops_reference.cpp): the same contract, loops accumulating in double --
namespace reference {
void embedding_forward(float* out, const int32_t* ids, const float* table, int BT, int C);
void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int BT, int C);
void rmsnorm_forward(float* out, float* rstd, const float* x, const float* weight, int BT, int C, float eps);
void rmsnorm_backward(float* dx, float* dweight, const float* dout, const float* x, const float* weight,
                      const float* rstd, int BT, int C);
void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                       const float* bias, int BT, int C, float eps);
void layernorm_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                        const float* weight, const float* mean, const float* rstd, int BT, int C);
void linear_forward(float* out, const float* x, const float* weight, const float* bias, int BT, int IC, int OC);
void linear_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                     const float* weight, int BT, int IC, int OC);
void rope_forward(float* x, int B, int T, int NH, int D, float theta, int pos0);
void rope_backward(float* dx, int B, int T, int NH, int D, float theta, int pos0);
void attention_forward(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D);
void attention_forward_with(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D, const AttentionOptions& options);
void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* probs, const float* q,
                        const float* k, const float* v, int B, int T, int H, int G, int D);
void attention_forward_general(float* out, float* probs, const float* q, const float* k, const float* v, int B,
                               int T, int H, int G, int Dk, int Dv, const AttentionOptions& options);
void attention_backward_general(float* dq, float* dk, float* dv, const float* dout, const float* probs,
                                const float* q, const float* k, const float* v, int B, int T, int H, int G, int Dk,
                                int Dv, const AttentionOptions& options);
void rope_interleaved_forward(float* x, int B, int T, int NH, int S, int offset, int R, float theta, int pos0);
void rope_interleaved_backward(float* dx, int B, int T, int NH, int S, int offset, int R, float theta, int pos0);
void mla_kv_forward(float* k, float* v, const float* kv, const float* kpe, int BT, int H, int N, int R, int Dv);
void mla_kv_backward(float* dkv, float* dkpe, const float* dk, const float* dv, int BT, int H, int N, int R, int Dv);
void swiglu_forward(float* out, const float* gate, const float* up, int BT, int F);
void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int BT, int F);
void gelu_new_forward(float* out, const float* x, int N);
void gelu_new_backward(float* dx, const float* dout, const float* x, int N);
void residual_forward(float* out, const float* a, const float* b, int N);
void residual_backward(float* da, float* db, const float* dout, int N);
float crossentropy_forward(float* probs, const float* logits, const int32_t* targets, int BT, int V);
void crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets, int BT, int V);
}  // namespace reference

// The cos and sin of the rotary angles, as Hugging Face computes them in float32:
// inv_freq_i = 1 / theta^(2i/D), angle = float(pos0 + t)·inv_freq_i.   cos, sin [T, D/2]
void rope_tables(float* cos, float* sin, int T, int D, float theta, int pos0);

}  // namespace attnscope::ops
