// trace.cpp — the shape trace of grouped attention, with the live numbers.
#include "attnscope/attention/trace.h"

#include <cstdio>

namespace attnscope {

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string TraceStep::text() const {
  std::string symbolic = "[";
  for (size_t i = 0; i < dims.size(); ++i) symbolic += (i ? ", " : "") + dims[i];
  symbolic += "]";
  return name + ": " + symbolic + " = " + format_shape(shape);
}

namespace {

// A trace being written: step(...) appends one step.
struct TraceWriter {
  Trace t;
  explicit TraceWriter(const TraceShape& s) { t.shape = s; }
  void operator()(std::string key, std::string name, std::string formula, std::vector<std::string> dims,
                  std::vector<int64_t> shape) {
    t.steps.push_back({std::move(key), std::move(name), std::move(formula), std::move(dims), std::move(shape)});
  }
};

// Both MLA traces from the scores on: `scale` names the scaling, then the mask, softmax, P·V over d_v,
// the heads side by side and the output projection.
void latent_tail(TraceWriter& step, int64_t T, int64_t C, int64_t H, int64_t Dv, bool causal, const char* scale) {
  step("scores", "scores", scale, {"H", "T", "T"}, {H, T, T});
  if (causal) step("causal_mask", "causal mask", "S[i, j] = −∞ for j > i", {"H", "T", "T"}, {H, T, T});
  step("softmax", "softmax", "P = softmax(S) over keys", {"H", "T", "T"}, {H, T, T});
  step("weighted_sum", "weighted sum", "O = P·V", {"H", "T", "d_v"}, {H, T, Dv});
  step("concat_heads", "concat heads", "O.transpose(0, 1).reshape(T, H·d_v)", {"T", "H·d_v"}, {T, H * Dv});
  step("output", "output", "concat·W_Oᵀ", {"T", "C"}, {T, C});
}

// MLA's weights grouped as a checkpoint has them (DeepSeek's fused kv_a = [W_DKV; W_KR], kv_b = [W_UK; W_UV]),
// and its cache: the latent and the one rotary key per token.
void latent_params(Trace& t, int64_t C, int64_t H, int64_t dk, int64_t N, int64_t Dv, int64_t r, int64_t rq, int64_t R) {
  t.params.wq = rq > 0 ? C * rq + rq + rq * H * dk : C * H * dk;  // W_DQ, its norm, W_UQ (and W_QR), or from X
  t.params.wk = C * (r + R) + r;                                  // W_DKV, W_KR and the latent's norm
  t.params.wv = r * H * (N + Dv);                                 // W_UK and W_UV
  t.params.wo = H * Dv * C;
  t.kv_bytes_per_token_fp32 = (r + R) * 4;
  t.kv_bytes_per_token_fp16 = (r + R) * 2;
}

}  // namespace

Trace shape_trace(const AttentionShape& s, int tokens, bool causal, bool has_bias) {
  return shape_trace(TraceShape{tokens, s.d_model, s.heads, s.groups, s.head_dim(), has_bias, has_bias, false, causal});
}

Trace shape_trace(const TraceShape& s) {
  const int64_t T = s.tokens, C = s.d_model, H = s.heads, G = s.groups, dk = s.head_dim;
  TraceWriter step(s);
  Trace& t = step.t;
  const std::string qkv_bias = s.qkv_bias ? " + b" : "", o_bias = s.o_bias ? " + b" : "";
  step("input", "input", "X", {"T", "C"}, {T, C});
  step("project_q", "project Q", "X·W_Qᵀ" + qkv_bias, {"T", "H·d_k"}, {T, H * dk});
  step("project_k", "project K", "X·W_Kᵀ" + qkv_bias, {"T", "G·d_k"}, {T, G * dk});
  step("project_v", "project V", "X·W_Vᵀ" + qkv_bias, {"T", "G·d_k"}, {T, G * dk});
  if (s.qk_norm_whole)
    step("qk_norm_whole", "normalise Q, K (all heads)",
         "RMSNorm over all H·d_k values of Q (G·d_k of K), times w_q or w_k", {"T", "H·d_k"}, {T, H * dk});
  step("split_heads", "split heads", "Q.view(T, H, d_k)", {"T", "H", "d_k"}, {T, H, dk});
  step("heads_first", "heads first", "Q.transpose(0, 1)", {"H", "T", "d_k"}, {H, T, dk});
  step("split_kv_heads", "split kv heads", "K, V.view(T, G, d_k).transpose(0, 1)", {"G", "T", "d_k"}, {G, T, dk});
  if (s.qk_norm && !s.qk_norm_whole)
    step("qk_norm", "normalise Q, K per head", "RMSNorm over each head's d_k values, times w_q or w_k",
         {"H", "T", "d_k"}, {H, T, dk});
  if (s.rope_angles)
    step("rope_angles", "RoPE angles", "cos, sin of t·θ_k, θ_k = base^(−2k/d_k)", {"T", "d_k/2"}, {T, dk / 2});
  if (s.rotary) step("rope", "rotate Q, K (RoPE)", "Q, K turned by position (RoPE)", {"H", "T", "d_k"}, {H, T, dk});
  if (G != H)
    step("share_kv", "share kv", "head h reads K, V of group g(h) = ⌊h / (H/G)⌋", {"H", "T", "d_k"}, {H, T, dk});
  // A checkpoint whose config sets another score scale (Gemma's query_pre_attn_scalar, Granite's
  // attention_multiplier) shows its factor.
  char scores[64] = "S = Q·Kᵀ / √d_k";
  if (s.softmax_scale > 0) std::snprintf(scores, sizeof scores, "S = Q·Kᵀ · %.4g", s.softmax_scale);
  step("scores", "scores", scores, {"H", "T", "T"}, {H, T, T});
  if (s.alibi) step("alibi_bias", "ALiBi bias", "S_h += −m_h·|i − j|", {"H", "T", "T"}, {H, T, T});
  if (s.relpos)
    step("relpos_bias", "relative-position scores", "S_h += λ·(−α_h(j − i − Δ_h)²)", {"H", "T", "T"}, {H, T, T});
  if (s.window > 0 && s.sinks > 0)
    step("sink_window_mask", "window and sink mask", "S[i, j] = −∞ unless i − W < j ≤ i or j < n_sink ≤ i", {"T", "T"},
         {T, T});
  else if (s.window > 0)
    step("window_mask", "sliding-window mask", "S[i, j] = −∞ unless i − W < j ≤ i", {"T", "T"}, {T, T});
  else if (s.causal)
    step("causal_mask", "causal mask", "S[i, j] = −∞ for j > i", {"H", "T", "T"}, {H, T, T});
  if (s.sink_logits) {
    step("sink_logits", "sink logits", "one logit s_h per head", {"H"}, {H});
    step("softmax_sink", "softmax with a sink", "P[i, j] = e^S[i, j] / (e^s_h + Σ_j' e^S[i, j'])", {"H", "T", "T"},
         {H, T, T});
    step("sink_share", "sink's share", "1 − Σ_j P[i, j]", {"H", "T"}, {H, T});
  } else {
    step("softmax", "softmax", "P = softmax(S) over keys", {"H", "T", "T"}, {H, T, T});
  }
  step("weighted_sum", "weighted sum", "O = P·V", {"H", "T", "d_k"}, {H, T, dk});
  step("concat_heads", "concat heads", "O.transpose(0, 1).reshape(T, H·d_k)", {"T", "H·d_k"}, {T, H * dk});
  step("output", "output", "concat·W_Oᵀ" + o_bias, {"T", "C"}, {T, C});

  t.params.wq = C * H * dk;
  t.params.wk = C * G * dk;
  t.params.wv = C * G * dk;
  t.params.wo = C * H * dk;
  t.params.biases = (s.qkv_bias ? H * dk + 2 * G * dk : 0) + (s.o_bias ? C : 0);
  t.kv_bytes_per_token_fp32 = kv_cache_bytes_per_token(int(G), int(dk), 4);
  t.kv_bytes_per_token_fp16 = kv_cache_bytes_per_token(int(G), int(dk), 2);
  return t;
}

Trace mla_shape_trace(const TraceShape& s) {
  const int64_t T = s.tokens, C = s.d_model, H = s.heads, dk = s.head_dim, R = s.rope_dim, N = dk - R, Dv = s.v_dim;
  const int64_t r = s.kv_latent, rq = s.q_latent;
  TraceWriter step(s);
  Trace& t = step.t;
  step("input", "input", "X", {"T", "C"}, {T, C});
  if (rq > 0) {
    step("compress_q", "compress Q", "c_Q = RMSNorm(X·W_DQᵀ)", {"T", "r_q"}, {T, rq});
    step("project_q", "project Q", "c_Q·W_UQᵀ", {"T", "H·d_k"}, {T, H * dk});
  } else {
    step("project_q", "project Q", "X·W_Qᵀ", {"T", "H·d_k"}, {T, H * dk});
  }
  step("compress_kv", "compress K, V (cached)", "[c_KV, k_R] = X·W_DKVᵀ", {"T", "r + d_R"}, {T, r + R});
  step("expand_kv", "expand K, V per head", "RMSNorm(c_KV)·W_UKVᵀ", {"T", "H·(d_N + d_v)"}, {T, H * (N + Dv)});
  step("split_heads", "split heads", "Q.view(T, H, d_k).transpose(0, 1)", {"H", "T", "d_k"}, {H, T, dk});
  step("split_kv_heads", "split kv heads", "K_N, V per head", {"H", "T", "d_N + d_v"}, {H, T, N + Dv});
  step("rope_mla", "rotate Q, k_R (RoPE)", "the d_R rotary part, pairs (2i, 2i+1)", {"H", "T", "d_R"}, {H, T, R});
  step("share_rope_key", "append the shared rotary key", "K_h = [K_N,h ; k_R], one k_R for every head", {"H", "T", "d_k"},
       {H, T, dk});
  char scale[64];
  std::snprintf(scale, sizeof scale, "S = Q·Kᵀ · %.4g", s.softmax_scale);
  latent_tail(step, T, C, H, Dv, s.causal, scale);
  latent_params(t, C, H, dk, N, Dv, r, rq, R);
  return t;
}

Trace latent_attention_trace(const TraceShape& s) {
  const int64_t T = s.tokens, C = s.d_model, H = s.heads, dk = s.head_dim, R = s.rope_dim, N = dk - R, Dv = s.v_dim;
  const int64_t r = s.kv_latent, rq = s.q_latent;
  TraceWriter step(s);
  Trace& t = step.t;
  step("input", "input", "X", {"T", "C"}, {T, C});
  if (rq > 0) {
    step("latent_compress_q", "compress Q to its latent", "c_Q = RMSNorm(X·W_DQᵀ)", {"T", "r_q"}, {T, rq});
    step("latent_project_q", "expand Q per head", "q_N = c_Q·W_UQᵀ", {"T", "H·d_N"}, {T, H * N});
    step("latent_project_q_rope", "rotary part of Q", "q_R = RoPE(c_Q·W_QRᵀ)", {"T", "H·d_R"}, {T, H * R});
  } else {
    step("latent_project_q", "project Q", "q_N = X·W_UQᵀ", {"T", "H·d_N"}, {T, H * N});
    step("latent_project_q_rope", "rotary part of Q", "q_R = RoPE(X·W_QRᵀ)", {"T", "H·d_R"}, {T, H * R});
  }
  step("latent_compress_kv", "compress K, V to the latent (cached)", "c_KV = RMSNorm(X·W_DKVᵀ)", {"T", "r_kv"}, {T, r});
  step("latent_rope_key", "shared rotary key (cached)", "k_R = RoPE(X·W_KRᵀ)", {"T", "d_R"}, {T, R});
  step("latent_expand_k", "expand K per head", "k_N = c_KV·W_UKᵀ", {"T", "H·d_N"}, {T, H * N});
  step("latent_expand_v", "expand V per head", "V = c_KV·W_UVᵀ", {"T", "H·d_v"}, {T, H * Dv});
  step("latent_heads_q", "queries per head", "q_h = [q_N,h ; q_R,h]", {"H", "T", "d_N + d_R"}, {H, T, dk});
  step("latent_heads_k", "keys per head", "k_h = [k_N,h ; k_R], one k_R for every head", {"H", "T", "d_N + d_R"}, {H, T, dk});
  char scale[64];
  std::snprintf(scale, sizeof scale, "S = Q·Kᵀ · %.4g (1/√(d_N + d_R))", s.softmax_scale);
  latent_tail(step, T, C, H, Dv, s.causal, scale);
  // The absorbed form: the same scores from the cache alone, without expanding K and V.
  step("absorb_query", "absorbed query (W_UK folded in)", "q̃_h = [q_N,h·W_UK,h ; q_R,h]", {"H", "T", "r_kv + d_R"},
       {H, T, r + R});
  step("absorb_key", "the one cached key", "k̃ = [c_KV ; k_R], read by every head", {"T", "r_kv + d_R"}, {T, r + R});
  step("absorb_weighted_sum", "weighted sum of the latent", "õ_h = P_h·c_KV", {"H", "T", "r_kv"}, {H, T, r});
  step("absorb_output", "output (W_UV folded into W_O)", "Σ_h õ_h·(W_O,h·W_UV,h)ᵀ", {"T", "C"}, {T, C});
  // Grouped as mla_shape_trace counts a checkpoint, so the Shapes view's formulas hold for both.
  latent_params(t, C, H, dk, N, Dv, r, rq, R);
  return t;
}

Trace differential_trace(const TraceShape& s) {
  const int64_t T = s.tokens, C = s.d_model, H = s.heads, G = s.groups, dk = s.head_dim, d = dk / 2;
  TraceWriter step(s);
  Trace& t = step.t;
  const std::string qkv_bias = s.qkv_bias ? " + b" : "", o_bias = s.o_bias ? " + b" : "";
  step("input", "input", "X", {"T", "C"}, {T, C});
  step("project_q", "project Q", "X·W_Qᵀ" + qkv_bias, {"T", "2H·d"}, {T, 2 * H * d});
  step("project_k", "project K", "X·W_Kᵀ" + qkv_bias, {"T", "2G·d"}, {T, 2 * G * d});
  step("project_v", "project V", "X·W_Vᵀ" + qkv_bias, {"T", "G·2d"}, {T, G * 2 * d});
  step("diff_split_q", "split Q in halves", "head h: Q₁ = Q[2h], Q₂ = Q[2h+1]", {"2H", "T", "d"}, {2 * H, T, d});
  step("diff_split_k", "split K in halves", "group j: K₁ = K[2j], K₂ = K[2j+1]", {"2G", "T", "d"}, {2 * G, T, d});
  step("diff_split_v", "split V heads", "V.view(T, G, 2d).transpose(0, 1)", {"G", "T", "2d"}, {G, T, 2 * d});
  if (G != H)
    step("share_kv", "share kv", "head h reads K, V of group g(h) = ⌊h / (H/G)⌋", {"H", "T", "d"}, {H, T, d});
  step("diff_scores", "two score maps", "S₁ = Q₁·K₁ᵀ/√d, S₂ = Q₂·K₂ᵀ/√d", {"2H", "T", "T"}, {2 * H, T, T});
  if (s.causal) step("causal_mask", "causal mask", "S[i, j] = −∞ for j > i", {"2H", "T", "T"}, {2 * H, T, T});
  step("diff_softmax", "two softmaxes", "P₁ = softmax(S₁), P₂ = softmax(S₂)", {"2H", "T", "T"}, {2 * H, T, T});
  char lambda[160];
  std::snprintf(lambda, sizeof lambda, "λ = exp(λ_q1·λ_k1) − exp(λ_q2·λ_k2) + λ_init = %.4g (λ_init = %.4g)", s.lambda,
                s.lambda_init);
  step("diff_lambda", "λ of the layer", lambda, {"1"}, {1});
  step("diff_map", "differential map (signed)", "A = P₁ − λ·P₂", {"H", "T", "T"}, {H, T, T});
  step("weighted_sum", "weighted sum", "O = A·V", {"H", "T", "2d"}, {H, T, 2 * d});
  step("diff_norm", "normalise each head", "RMSNorm(O) over 2d · (1 − λ_init)", {"H", "T", "2d"}, {H, T, 2 * d});
  step("concat_heads", "concat heads", "O.transpose(0, 1).reshape(T, H·2d)", {"T", "H·2d"}, {T, H * 2 * d});
  step("output", "output", "concat·W_Oᵀ" + o_bias, {"T", "C"}, {T, C});
  t.params.wq = C * H * dk;
  t.params.wk = C * G * dk;
  t.params.wv = C * G * dk;
  t.params.wo = C * H * dk;
  t.params.biases = (s.qkv_bias ? H * dk + 2 * G * dk : 0) + (s.o_bias ? C : 0);
  t.params.other = 4 * d + 2 * d;
  t.kv_bytes_per_token_fp32 = kv_cache_bytes_per_token(int(G), int(dk), 4);
  t.kv_bytes_per_token_fp16 = kv_cache_bytes_per_token(int(G), int(dk), 2);
  return t;
}

Trace probabilities_trace(int heads, int groups, int tokens, bool causal) {
  Trace t;
  t.shape = TraceShape{tokens, 0, heads, groups, 0, false, false, false, causal};
  t.projections_known = false;
  const int64_t T = tokens, H = heads;
  if (causal) t.steps.push_back({"causal_mask", "causal mask", "S[i, j] = −∞ for j > i", {"H", "T", "T"}, {H, T, T}});
  t.steps.push_back({"softmax", "softmax", "P = softmax(S) over keys", {"H", "T", "T"}, {H, T, T}});
  return t;
}

}  // namespace attnscope

namespace attnscope {

Trace linear_layer_trace(const TraceShape& s) {
  const int64_t T = s.tokens, C = s.d_model, H = s.heads, d = s.head_dim;
  TraceWriter step(s);
  Trace& t = step.t;
  const std::string& kind = s.linear;
  const bool delta = kind == "deltanet" || kind == "gated-deltanet", mamba = kind == "mamba2";
  const std::string qkv_bias = s.qkv_bias ? " + b" : "", o_bias = s.o_bias ? " + b" : "";
  step("input", "input", "X", {"T", "C"}, {T, C});
  step("project_q", "project Q", "X·W_Qᵀ" + qkv_bias, {"T", "H·d_k"}, {T, H * d});
  step("project_k", "project K", "X·W_Kᵀ" + qkv_bias, {"T", "H·d_k"}, {T, H * d});
  step("project_v", "project V", "X·W_Vᵀ" + qkv_bias, {"T", "H·d_k"}, {T, H * d});
  step("split_heads", "split heads", "Q, K, V.view(T, H, d_k).transpose(0, 1)", {"H", "T", "d_k"}, {H, T, d});
  if (kind == "linear")
    step("feature_map", "feature map", "φ(Q), φ(K) with φ = elu + 1 (> 0)", {"H", "T", "d_k"}, {H, T, d});
  if (delta) step("l2_norm_qk", "normalise q, k (L2)", "q_t / ‖q_t‖, k_t / ‖k_t‖", {"H", "T", "d_k"}, {H, T, d});
  if (delta) step("write_strength", "write strength β", "β_t = sigmoid(x_t·w_β)", {"H", "T"}, {H, T});
  if (kind == "retention") step("decay", "decay γ", "one γ_h per head", {"H"}, {H});
  if (mamba) {
    step("ssm_step", "step Δ", "Δ_t = softplus(x_t·w_Δ + b_Δ)", {"H", "T"}, {H, T});
    step("ssm_decay", "decay a", "a_t = exp(Δ_t·A_h), A_h < 0", {"H", "T"}, {H, T});
  }
  if (kind == "gated-deltanet")
    step("gate_alpha", "gate α", "α_t = exp(g_t), g_t = −exp(A_log)·softplus(x_t·w_a + b_a)", {"H", "T"}, {H, T});
  const char* state = kind == "linear"          ? "S_t = S_{t−1} + φ(k_t)·v_tᵀ"
                      : kind == "retention"     ? "S_t = γ·S_{t−1} + k_t·v_tᵀ"
                      : mamba                   ? "S_t = a_t·S_{t−1} + Δ_t·B_t·x_tᵀ"
                      : kind == "deltanet"      ? "S_t = (I − β_t·k_t·k_tᵀ)·S_{t−1} + β_t·k_t·v_tᵀ"
                                                : "S_t = α_t·(I − β_t·k_t·k_tᵀ)·S_{t−1} + β_t·k_t·v_tᵀ";
  step("state", "state (fixed size)", state, {"H", "d_k", "d_v"}, {H, d, d});
  const char* matrix = kind == "linear"      ? (s.linear_normalize ? "M[t, s] = φ(q_t)·φ(k_s) / Σ_s' φ(q_t)·φ(k_s')"
                                                                   : "M[t, s] = φ(q_t)·φ(k_s), s ≤ t")
                       : kind == "retention" ? "M[t, s] = γ^(t−s)·q_t·k_s, s ≤ t"
                       : mamba               ? "M[t, s] = (C_t·B_s)·Δ_s·a_{s+1}⋯a_t, s ≤ t"
                                             : "M[t, s] = q_tᵀ·(the state's k_s column at t), s ≤ t";
  step("implicit_matrix", "matrix M (signed)", matrix, {"H", "T", "T"}, {H, T, T});
  step("weighted_sum_linear", "weighted sum", mamba ? "O = M·V + D·V" : "O = M·V = S_tᵀ·q_t", {"H", "T", "d_v"},
       {H, T, d});
  step("concat_heads", "concat heads", "O.transpose(0, 1).reshape(T, H·d_k)", {"T", "H·d_k"}, {T, H * d});
  step("output", "output", "concat·W_Oᵀ" + o_bias, {"T", "C"}, {T, C});
  t.params.wq = t.params.wk = t.params.wv = t.params.wo = C * H * d;
  t.params.biases = (s.qkv_bias ? 3 * H * d : 0) + (s.o_bias ? C : 0);
  t.params.other = (delta ? H * C : 0) + (mamba || kind == "gated-deltanet" ? H * C + H : 0) + (mamba ? H : 0) +
                   (s.trained_a_log && (mamba || kind == "gated-deltanet") ? H : 0);
  t.state_bytes_fp32 = H * d * d * 4;
  t.state_bytes_fp16 = H * d * d * 2;
  return t;
}

// Qwen3-Next's Gated DeltaNet as transformers 5.x runs it (modeling_qwen3_next.py Qwen3NextGatedDeltaNet,
// torch_recurrent_gated_delta_rule; the engine's forward_reference.cpp deltanet_reference).
Trace gated_deltanet_layer_trace(const TraceShape& s) {
  const int64_t T = s.tokens, C = s.d_model, Hv = s.heads, Hk = s.groups, dk = s.head_dim, dv = s.v_dim, K = s.conv_kernel;
  const int64_t conv = 2 * Hk * dk + Hv * dv;  // the convolution's channels: [q | k | v]
  TraceWriter step(s);
  Trace& t = step.t;
  step("input", "input", "X", {"T", "C"}, {T, C});
  // D_conv = 2·Hk·d_k + Hv·d_v: a short symbol keeps the Shapes table's fixed shape column narrow
  step("project_qkv_conv", "project Q, K, V", "[X·W_Qᵀ | X·W_Kᵀ | X·W_Vᵀ], D_conv = 2·Hk·d_k + Hv·d_v", {"T", "D_conv"},
       {T, conv});
  step("project_z", "project the gate z", "z = X·W_zᵀ", {"T", "Hv·d_v"}, {T, Hv * dv});
  step("project_ba", "project b, a", "b = X·W_bᵀ, a = X·W_aᵀ (one each per value head)", {"T", "2·Hv"}, {T, 2 * Hv});
  step("short_conv", "short convolution", "each channel over its last K tokens (causal), then SiLU", {"T", "D_conv"}, {T, conv});
  step("split_heads_qk", "split Q, K into key heads", "Q, K.view(T, Hk, d_k).transpose(0, 1)", {"Hk", "T", "d_k"}, {Hk, T, dk});
  step("split_heads_v", "split V into value heads", "V.view(T, Hv, d_v).transpose(0, 1)", {"Hv", "T", "d_v"}, {Hv, T, dv});
  step("l2_norm_qk", "normalise q, k (L2)", "q_t / (‖q_t‖·√d_k), k_t / ‖k_t‖", {"Hk", "T", "d_k"}, {Hk, T, dk});
  step("write_strength", "write strength β", "β_t = sigmoid(b_t)", {"Hv", "T"}, {Hv, T});
  step("gate_alpha", "gate α", "α_t = exp(g_t), g_t = −exp(A_log)·softplus(a_t + dt_bias)", {"Hv", "T"}, {Hv, T});
  step("state", "state (fixed size)", "S_t = α_t·(I − β_t·k_t·k_tᵀ)·S_{t−1} + β_t·k_t·v_tᵀ", {"Hv", "d_k", "d_v"}, {Hv, dk, dv});
  step("implicit_matrix", "matrix M (signed)", "M[t, s] = q_tᵀ·(the state's k_s column at t), s ≤ t", {"Hv", "T", "T"}, {Hv, T, T});
  step("weighted_sum_linear", "weighted sum", "O = M·V = S_tᵀ·q_t", {"Hv", "T", "d_v"}, {Hv, T, dv});
  step("gated_norm", "gated norm", "RMSNorm(O) over d_v · w · SiLU(z)", {"Hv", "T", "d_v"}, {Hv, T, dv});
  step("concat_heads", "concat heads", "O.transpose(0, 1).reshape(T, Hv·d_v)", {"T", "Hv·d_v"}, {T, Hv * dv});
  step("output", "output", "concat·W_Oᵀ", {"T", "C"}, {T, C});
  t.params.wq = C * Hk * dk;
  t.params.wk = C * Hk * dk;
  t.params.wv = C * Hv * dv;
  t.params.wo = Hv * dv * C;
  // W_z, W_b, W_a, A_log, dt_bias, the convolution's weights and the gated norm's
  t.params.other = C * Hv * dv + 2 * C * Hv + 2 * Hv + conv * K + dv;
  // S, and the convolution's last K − 1 inputs
  const int64_t numbers = Hv * dk * dv + (K - 1) * conv;
  t.state_bytes_fp32 = numbers * 4;
  t.state_bytes_fp16 = numbers * 2;
  return t;
}

// Granite 4.0-H's Mamba-2 layer as transformers 5.x runs it (modeling_granitemoehybrid.py
// GraniteMoeHybridMambaLayer.torch_forward; the engine's forward_reference.cpp mamba2_reference): heads = H,
// groups = G (B and C per group), head_dim = the state N, v_dim = each head's width P, conv_kernel K, I = H·P.
Trace granite_mamba2_layer_trace(const TraceShape& s, bool conv_bias) {
  const int64_t T = s.tokens, C = s.d_model, H = s.heads, G = s.groups, N = s.head_dim, P = s.v_dim, K = s.conv_kernel;
  const int64_t I = H * P, conv = I + 2 * G * N;  // the convolution's channels: [x | B | C]
  TraceWriter step(s);
  Trace& t = step.t;
  step("input", "input", "X", {"T", "C"}, {T, C});
  // D_in names in_proj's width, so the fixed shape column stays narrow enough for the step names beside it
  step("project_z_xbc_dt", "project z, xBC, dt", "X·W_inᵀ = [z | xBC | dt], D_in = H·P + D_conv + H, D_conv = H·P + 2·G·N",
       {"T", "D_in"},
       {T, I + conv + H});
  step("short_conv", "short convolution", "each channel over its last K tokens (causal), then SiLU", {"T", "D_conv"},
       {T, conv});
  step("split_heads_x", "split x into heads", "x.view(T, H, P).transpose(0, 1)", {"H", "T", "P"}, {H, T, P});
  step("split_groups_bc", "B and C per group", "B, C.view(T, G, N): each group serves H/G heads", {"G", "T", "N"},
       {G, T, N});
  step("ssm_step", "step Δ", "Δ_t = softplus(dt_t + dt_bias)", {"H", "T"}, {H, T});
  step("ssm_decay", "decay a", "a_t = exp(Δ_t·A), A = −exp(A_log) < 0", {"H", "T"}, {H, T});
  step("state", "state (fixed size)", "S_t = a_t·S_{t−1} + Δ_t·x_t·B_tᵀ", {"H", "P", "N"}, {H, P, N});
  step("implicit_matrix", "matrix M (signed)", "M[t, s] = (C_t·B_s)·Δ_s·a_{s+1}⋯a_t, s ≤ t", {"H", "T", "T"}, {H, T, T});
  step("weighted_sum_linear", "weighted sum", "Y = M·x + D·x", {"H", "T", "P"}, {H, T, P});
  step("concat_heads", "concat heads", "Y.transpose(0, 1).reshape(T, H·P)", {"T", "H·P"}, {T, I});
  step("gated_norm", "gated norm", "RMSNorm(Y·SiLU(z)) over H·P · w", {"T", "H·P"}, {T, I});
  step("output", "output", "Y·W_outᵀ", {"T", "C"}, {T, C});
  t.params.wq = C * G * N;  // C's rows of in_proj
  t.params.wk = C * G * N;  // B's rows
  t.params.wv = C * I;      // x's rows
  t.params.wo = I * C;
  // z's and dt's rows, the convolution (and its bias), dt_bias, A_log, D and the gated norm's weight
  t.params.other = C * I + C * H + conv * K + (conv_bias ? conv : 0) + 3 * H + I;
  // S, and the convolution's last K − 1 inputs
  const int64_t numbers = H * P * N + (K - 1) * conv;
  t.state_bytes_fp32 = numbers * 4;
  t.state_bytes_fp16 = numbers * 2;
  return t;
}

}  // namespace attnscope
