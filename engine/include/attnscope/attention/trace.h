// trace.h — the shape trace: every step of grouped attention with its formula and live shape,
// plus parameter counts and KV-cache bytes (SPEC "Parameter counts").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnscope/attention/weights.h"

namespace attnscope {

struct TraceStep {
  std::string key;              // "split_kv_heads": stable across versions and languages (translations, diffs)
  std::string name;             // "split heads"
  std::string formula;          // "Q.view(T, H, d_k)"
  std::vector<std::string> dims;   // symbolic dims  {"T", "H", "d_k"}
  std::vector<int64_t> shape;      // live numbers   {6, 8, 64}
  std::string text() const;     // "split heads: [T, H, d_k] = [6, 8, 64]"
};

struct ParameterCounts {
  int64_t wq = 0, wk = 0, wv = 0, wo = 0;  // weights only: C·H·d_k, C·G·d_k, C·G·d_k, C·H·d_k
  int64_t biases = 0;                      // H·d_k + 2·G·d_k + C when the layer has biases
  int64_t other = 0;                       // differential attention: the four λ vectors (4·d) and its norm (2d)
  int64_t total() const { return wq + wk + wv + wo + biases + other; }
};

// The numbers a trace is of. A real model's C need not be H·d_k (its config's head_dim), and its
// biases and position scheme are its own; the seeded layer has d_k = C/H and both biases or none.
struct TraceShape {
  int64_t tokens = 0, d_model = 0, heads = 0, groups = 0, head_dim = 0;  // T, C, H, G, d_k
  bool qkv_bias = false, o_bias = false;
  bool rotary = false;  // RoPE turns Q and K by their position after the split
  bool causal = false;
  bool qk_norm = false;  // RMSNorm over each head's d_k values of Q and K, before RoPE (Qwen3)
  bool qk_norm_whole = false;  // instead: one RMSNorm over all of Q's H·d_k and K's G·d_k values (OLMoE)
  // Multi-head latent attention (DeepSeek) when kv_latent > 0: d_k = nope + rope is the q·k width,
  // v_dim the value width, q_latent the query's latent (0: W_Q directly); softmax_scale the scores' factor
  // (grouped: a checkpoint's own factor when its config sets one other than 1/√d_k; 0 = 1/√d_k).
  int64_t kv_latent = 0, q_latent = 0, rope_dim = 0, v_dim = 0;
  double softmax_scale = 0;
  // Differential attention (differential_attention.h): each head two halves of d_k/2, λ the layer's.
  bool differential = false;
  double lambda = 0, lambda_init = 0;
  // Windows, sinks and positions (SPEC "Variants after GQA"): the scene model's RoPE also shows its
  // cos/sin tables [T, d_k/2] (rope_angles); ALiBi's or relpos's bias [H, T, T]; a window's mask [T, T]
  // (keeping `sinks` first keys); the sink logits [H] and the sink's share [H, T].
  bool rope_angles = false, alibi = false, relpos = false, sink_logits = false;
  int64_t window = 0, sinks = 0;
  // Heads without a softmax (linear_layer.h): the kind's name ("linear", "retention", "mamba2", "deltanet",
  // "gated-deltanet"; empty for softmax attention) and whether linear attention divides by its normaliser.
  std::string linear = {};
  bool linear_normalize = false;
  // A trained layer (a checkpoint of attnscope_linear): Mamba-2's and Gated DeltaNet's A_log [H] is a tensor
  // of the layer (the seeded layer takes it from the decay schedule), counted with the gates.
  bool trained_a_log = false;
  // A checkpoint's Mamba-2 layer (Granite 4.0-H) when linear is "mamba2" and conv_kernel > 0: granite_mamba2_layer_trace.
  // A checkpoint's Gated DeltaNet layer (Qwen3-Next) when linear is "gated-deltanet" and conv_kernel > 0: heads = the value heads Hv,
  // groups = the key heads Hk (each serving Hv/Hk value heads), head_dim = d_k, v_dim = d_v, and the short
  // convolution's kernel K over [q | k | v].
  int64_t conv_kernel = 0;
};

struct Trace {
  TraceShape shape;
  // False for attentions computed elsewhere: only the probabilities are known (no projections, no d_k or
  // C, so no parameter counts or KV-cache bytes).
  bool projections_known = true;
  std::vector<TraceStep> steps;
  ParameterCounts params;
  int64_t kv_bytes_per_token_fp32 = 0;  // 2·G·d_k·4 per layer
  int64_t kv_bytes_per_token_fp16 = 0;  // 2·G·d_k·2 per layer
  // Heads without a softmax keep a state instead of a cache: H·d_k·d_v values per layer, whatever T is
  // (then the bytes per token above are 0).
  int64_t state_bytes_fp32 = 0, state_bytes_fp16 = 0;
};

// tokens = T. has_bias says whether the layer carries biases.
Trace shape_trace(const AttentionShape& shape, int tokens, bool causal, bool has_bias);
// Any layer's trace, e.g. a checkpoint's (C, H, G, d_k, biases and RoPE from its config).
Trace shape_trace(const TraceShape& shape);

// MLA's steps (shape.kv_latent > 0): compress to the latent, expand per head, the shared rotary key;
// parameters of W_DQ/W_UQ (or W_Q), W_DKV, W_UKV, W_O; the cache is kv_latent + rope_dim per token.
Trace mla_shape_trace(const TraceShape& shape);
// The seeded layer's MLA (latent_attention.h; shape.kv_latent > 0, head_dim = d_N + d_R, v_dim = d_N):
// c_Q [T, r_q], q [H, T, d_qk], c_KV [T, r_kv], k_R [T, d_R], the expanded k and v, then the absorbed form's
// query q̃ [H, T, r_kv + d_R], its one key [c_KV, k_R] and the folded output. Cache r_kv + d_R per token.
Trace latent_attention_trace(const TraceShape& shape);
// The seeded layer's differential attention (differential_attention.h; shape.differential, head_dim = 2d):
// Q [2H, T, d], K [2G, T, d], V [G, T, 2d], the two maps, λ, A = P₁ − λ·P₂, A·V, the per-head RMSNorm.
Trace differential_trace(const TraceShape& shape);
// The seeded layer without a softmax (shape.linear set; linear_layer.h): Q, K, V [H, T, d], the kind's
// feature map, norm or gates, the state S [H, d, d], the explicit matrix M [H, T, T], O = M·V and the
// output. Its parameters add the gates' weights (ParameterCounts::other); the cache is the state.
Trace linear_layer_trace(const TraceShape& shape);
// A checkpoint's Gated DeltaNet layer (Qwen3-Next; shape.conv_kernel > 0, linear "gated-deltanet"): the
// projections of q, k, v, the gate z and b, a; the short causal convolution over [q | k | v] and SiLU; the
// heads (Hk key heads, Hv value heads); q, k L2-normalised; β, α; the state S [Hv, d_k, d_v]; M [Hv, T, T];
// O = M·V; the gated RMSNorm; the output projection. Its state: S and the convolution's last K − 1 inputs.
Trace gated_deltanet_layer_trace(const TraceShape& shape);
// A checkpoint's Mamba-2 layer (Granite 4.0-H; shape.linear "mamba2" with conv_kernel > 0): heads H, groups G of
// B and C, head_dim = the state N, v_dim = each head's width P; its in_proj, short convolution of width
// conv_kernel (with a bias when conv_bias), Δ, decay, state and gated norm.
Trace granite_mamba2_layer_trace(const TraceShape& shape, bool conv_bias);
// Attentions computed elsewhere: the probabilities P [H, T, T] and nothing before them.
Trace probabilities_trace(int heads, int groups, int tokens, bool causal);

// 2·G·d_k·bytes_per_element: KV cache per token per layer.
inline int64_t kv_cache_bytes_per_token(int groups, int head_dim, int bytes_per_element) {
  return 2ll * groups * head_dim * bytes_per_element;
}

std::string format_shape(const std::vector<int64_t>& shape);  // "[6, 8, 64]"

}  // namespace attnscope
