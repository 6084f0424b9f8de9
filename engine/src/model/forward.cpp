// forward.cpp — the fast forward pass: the ops of model/ops.h (shared with training) in the order of
// SPEC "Real checkpoints", one code path for both families; the family only picks the norm, the
// positions and the MLP (config.h). Cancellable between layers. The linear layers run on packed
// weights (packed_matrix.h), the inference-only product beside ops::linear_forward.
//
// Sections: buffers · one layer · the pass · top-k
#include <algorithm>
#include <cmath>
#include <functional>

#include "attnscope/attention/linear_attention.h"
#include "attnscope/core/error.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/ops.h"
#include "core/parallel.h"

namespace attnscope::model {

namespace {

// ---- buffers ---------------------------------------------------------------------------------------
// The activations of one pass, sized once. Legend as in forward.h; Q = H·D, KV = G·D.
struct Activations {
  std::vector<float> x;       // [T, C] the residual stream
  std::vector<float> h;       // [T, C] norm(x)
  std::vector<float> q;       // [T, Q]
  std::vector<float> k, v;    // [T, KV]
  std::vector<float> att;     // [T, Q] P·v, heads side by side
  std::vector<float> proj;    // [T, C] an attention or MLP block's output
  std::vector<float> gate;    // [T, F]
  std::vector<float> up;      // [T, F]
  std::vector<float> sink_share;  // [H, T] gpt-oss: each row's share of its head's sink (else empty)
  const HeadAblation* ablation = nullptr;  // the heads switched off (ForwardOptions::ablation)
  bool keep_heads = false;                 // ForwardTaps::parts: keep what W_O reads in heads_in
  std::vector<float> heads_in;             // [T, H·Dh] the last softmax layer's W_O input
  Activations(int T, int C, int Q, int KV, int F)
      : x(size_t(T) * C), h(x.size()), q(size_t(T) * Q), k(size_t(T) * KV), v(k.size()), att(q.size()),
        proj(x.size()), gate(size_t(T) * F), up(gate.size()) {}
};

const float* data_or_null(const Vec& v) { return v.size() ? v.data() : nullptr; }

// gelu_new in place over x [N] with Eigen's vectorised tanh (ops::gelu_new_forward calls std::tanh per
// value, which was an eighth of a GPT-2 forward pass). Same formula; the two agree to float rounding.
void gelu_new_inplace(float* x, int64_t N) {
  constexpr int64_t block = 1 << 14;
#pragma omp parallel for schedule(static) if (N >= 4 * block)
  for (int64_t b = 0; b < N; b += block) {
    Eigen::Map<Eigen::ArrayXf> v(x + b, std::min(block, N - b));
    const float k = 0.7978845608028654f;  // sqrt(2/π)
    v = 0.5f * v * (1.0f + (k * (v + 0.044715f * v.cube())).tanh());
  }
}

// GPT-NeoX's "gelu": the exact erf GELU in place, x·½·(1 + erf(x/√2)) in float32 as torch's gelu.
void gelu_erf_inplace(float* x, int64_t N) {
#pragma omp parallel for schedule(static) if (N >= (1 << 16))
  for (int64_t i = 0; i < N; ++i) x[i] = x[i] * 0.5f * (1.0f + std::erf(x[i] * 0.70710678118654752f));
}

// Ministral 3's query scale after RoPE (transformers 5.x models/ministral3/modeling_ministral3.py,
// _get_llama_4_attn_scale): q_t × 1 + β·ln(1 + ⌊t / L⌋) in float32; 1 for t < L.
float query_scale(const ModelConfig& c, int t) {
  const float steps = std::floor(float(t) / float(c.query_scale_length));
  return 1.0f + float(c.query_scale_beta) * std::log(1.0f + steps);
}

void apply_norm(const ModelConfig& c, float* out, const float* x, const Vec& weight, const Vec& bias, int T) {
  if (weight.size() == 0) {  // OLMo 2: no norm before attention or the MLP
    std::copy_n(x, int64_t(T) * c.d_model, out);
    return;
  }
  if (c.norm == NormKind::layernorm)
    ops::layernorm_forward(out, nullptr, nullptr, x, weight.data(), data_or_null(bias), T, c.d_model, float(c.norm_eps));
  else
    ops::rmsnorm_forward(out, nullptr, x, weight.data(), T, c.d_model, float(c.norm_eps));
}

// buf [T, H·Dh], what layer `layer`'s W_O reads: the ablated heads' slices replaced (zeros, or each
// column's mean over the T positions), then kept in a.heads_in when the trace asks for the parts.
void heads_before_output(Activations& a, float* buf, int T, int H, int Dh, int layer) {
  if (a.ablation)
    for (const HeadRef& r : a.ablation->heads) {
      if (r.layer != layer) continue;
      std::vector<double> mean(size_t(Dh), 0.0);
      if (a.ablation->mode == AblationMode::mean)
        for (int t = 0; t < T; ++t)
          for (int e = 0; e < Dh; ++e) mean[size_t(e)] += buf[(int64_t(t) * H + r.head) * Dh + e];
      for (int t = 0; t < T; ++t)
        for (int e = 0; e < Dh; ++e) buf[(int64_t(t) * H + r.head) * Dh + e] = float(mean[size_t(e)] / T);
    }
  if (a.keep_heads) a.heads_in.assign(buf, buf + int64_t(T) * H * Dh);
}

// Head `head` of a [T, heads·D] buffer as [T, D].
Mat head_columns(const std::vector<float>& buffer, int T, int heads, int D, int head) {
  return Eigen::Map<const Mat>(buffer.data(), T, int64_t(heads) * D).middleCols(int64_t(head) * D, D);
}

// The attention op's choices for layer `layer`: the score scale, Gemma 2's soft-cap, the window.
ops::AttentionOptions attention_options(const ModelConfig& c, int layer) {
  ops::AttentionOptions o;
  o.scale = float(c.attn_scale);
  o.softcap = float(c.attn_softcap);
  o.window = c.layer_window[size_t(layer)];
  return o;
}

// LayerDetail from the layer's buffers (q, k after RoPE): the scores are recomputed here, as the
// attention op keeps only the probabilities, with the op's scale, soft-cap and mask (−∞ where a key
// is not seen: later than the query, or outside a sliding window).
LayerDetail make_detail(const ModelConfig& c, const Activations& a, const float* probs, int layer, int T) {
  const int H = c.heads, G = c.kv_heads, D = c.head_dim;
  LayerDetail d;
  d.layer = layer;
  d.input = Eigen::Map<const Mat>(a.h.data(), T, c.d_model);
  const ops::AttentionOptions o = attention_options(c, layer);
  const float scale = o.scale;
  for (int g = 0; g < G; ++g) {
    d.k.push_back(head_columns(a.k, T, G, D, g));
    d.v.push_back(head_columns(a.v, T, G, D, g));
  }
  for (int h = 0; h < H; ++h) {
    d.q.push_back(head_columns(a.q, T, H, D, h));
    Mat s = (d.q.back() * d.k[size_t(h / (H / G))].transpose()) * scale;
    if (o.softcap > 0) s = ((s.array() / o.softcap).tanh() * o.softcap).matrix();
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        if (j > i || (o.window > 0 && j <= i - o.window)) s(i, j) = -INFINITY;
    d.scores.push_back(std::move(s));
    d.probs.push_back(Eigen::Map<const Mat>(probs + int64_t(h) * T * T, T, T));
    d.head_out.push_back(head_columns(a.att, T, H, D, h));
  }
  d.concat = Eigen::Map<const Mat>(a.att.data(), T, int64_t(H) * D);
  d.output = Eigen::Map<const Mat>(a.proj.data(), T, c.d_model);
  if (!a.sink_share.empty()) d.sink_share = Eigen::Map<const Mat>(a.sink_share.data(), H, T);
  return d;
}

// gpt-oss's attention (modeling_gpt_oss.py eager_attention_forward): per head, S = Q_h·K_gᵀ·scale on the
// keys a query sees (causal, and the window of a sliding layer), the head's sink logit s_h appended to
// every row, m the row's largest of both, P[i, j] = e^(S_ij − m) / (Σ_j' e^(S_ij' − m) + e^(s_h − m)) — the
// sink's column dropped after the softmax — and O_h = P·V_g. share [H, T] receives each row's sink share.
// One head of it: Q [T, D] and K [T, D] of the head (copied rows) → P [T, T] (share [T] each row's sink share,
// or null). HeadMaps::head_into runs the same code.
void sink_head_probs(float* probs, float* share, const Mat& Q, const Mat& K, int T, float scale, int window, float sink) {
  const Mat S = (Q * K.transpose()) * scale;
  Eigen::Map<Mat> P(probs, T, T);
  P.setZero();
  for (int i = 0; i < T; ++i) {
    const int lo = window > 0 ? std::max(0, i - window + 1) : 0;
    float m = sink;
    for (int j = lo; j <= i; ++j) m = std::max(m, S(i, j));
    const double sink_e = std::exp(double(sink - m));
    double sum = sink_e;
    for (int j = lo; j <= i; ++j) sum += double(P(i, j) = std::exp(S(i, j) - m));
    for (int j = lo; j <= i; ++j) P(i, j) = float(double(P(i, j)) / sum);
    if (share) share[i] = float(sink_e / sum);
  }
}

// probs [H, T, T], or null (on-demand mode: each head's map in a scratch, dropped after P·V).
void sink_attention(float* out, float* probs, float* share, const float* q, const float* k, const float* v, int T,
                    int H, int G, int D, float scale, int window, const Vec& sinks) {
#pragma omp parallel for schedule(static) if (int64_t(H) * T * T * D >= (1 << 18))
  for (int h = 0; h < H; ++h) {
    const int g = h / (H / G);
    Mat Q(T, D), K(T, D), V(T, D);
    for (int t = 0; t < T; ++t) {
      std::copy_n(q + (int64_t(t) * H + h) * D, D, Q.row(t).data());
      std::copy_n(k + (int64_t(t) * G + g) * D, D, K.row(t).data());
      std::copy_n(v + (int64_t(t) * G + g) * D, D, V.row(t).data());
    }
    Mat scratch;
    if (!probs) scratch.resize(T, T);
    Eigen::Map<Mat> P(probs ? probs + int64_t(h) * T * T : scratch.data(), T, T);
    sink_head_probs(P.data(), share + int64_t(h) * T, Q, K, T, scale, window, sinks[h]);
    const Mat O = P * V;
    for (int t = 0; t < T; ++t) std::copy_n(O.row(t).data(), D, out + (int64_t(t) * H + h) * D);
  }
}

// The grouped attention one head at a time (on-demand mode, no [H, T, T]): each head's P in a per-thread
// scratch [T, T] from ops::attention_head_probs (the stack's own code, so the same bits), then O_h = P·V_g.
void attention_by_head(float* out, const float* q, const float* k, const float* v, int T, int H, int G, int D,
                       const ops::AttentionOptions& o) {
  using Strided = Eigen::OuterStride<>;
#pragma omp parallel if (int64_t(H) * T * T * D >= (1 << 20))
  {
    const detail::SingleThreadScope serial_products(true);  // the heads are the parallel dimension
    Mat P(T, T);
#pragma omp for schedule(static)
    for (int h = 0; h < H; ++h) {
      const int g = h / (H / G);
      ops::attention_head_probs(P.data(), q + int64_t(h) * D, H * D, k + int64_t(g) * D, G * D, T, D, o);
      const Eigen::Map<const Mat, 0, Strided> V(v + int64_t(g) * D, T, D, Strided(int64_t(G) * D));
      Eigen::Map<Mat, 0, Strided> O(out + int64_t(h) * D, T, D, Strided(int64_t(H) * D));
      O.noalias() = P * V;
    }
  }
}

// ---- one layer -------------------------------------------------------------------------------------
// Rotate-half RoPE on the leading 2·|f.inv_freq| values of each of `heads` heads of x [T, heads·D], in
// place (the rest pass unrotated: partial_rotary_factor): pair (i, i + R/2) of the rotated part R
// turns by t·θ'_i, cos and sin × the attention factor, all in float32 as transformers' eager pass:
// x' = x·cos + rotate_half(x)·sin.
void rope_half(float* x, int T, int heads, int D, const RopeFrequencies& f) {
  const int half = int(f.inv_freq.size());
  std::vector<float> cs(static_cast<size_t>(half)), sn(static_cast<size_t>(half));
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < half; ++i) {
      const float angle = float(t) * f.inv_freq[size_t(i)];
      cs[size_t(i)] = float(std::cos(double(angle))) * f.attention_factor;
      sn[size_t(i)] = float(std::sin(double(angle))) * f.attention_factor;
    }
    for (int h = 0; h < heads; ++h) {
      float* xh = x + (int64_t(t) * heads + h) * D;
      for (int i = 0; i < half; ++i) {
        const float x1 = xh[i], x2 = xh[i + half];
        xh[i] = x1 * cs[size_t(i)] - x2 * sn[size_t(i)];
        xh[i + half] = x2 * cs[size_t(i)] + x1 * sn[size_t(i)];
      }
    }
  }
}

// x ← x + proj, or x + proj·residual_multiplier (Granite: the branch times the multiplier in float32,
// then the sum, as `residual + hidden_states * self.residual_multiplier`).
// a.proj stays the branch's own output (LayerDetail::output).
void add_residual(const ModelConfig& c, Activations& a, int T) {
  const int64_t n = int64_t(T) * c.d_model;
  if (c.residual_scale == 1.0) {
    ops::residual_forward(a.x.data(), a.x.data(), a.proj.data(), int(n));
    return;
  }
  Eigen::Map<Eigen::ArrayXf>(a.x.data(), n) += Eigen::Map<const Eigen::ArrayXf>(a.proj.data(), n) * float(c.residual_scale);
}

// x ← x + attn(norm1(x)) (Gemma: x + post_attn_norm(attn(norm1(x)))).  probs [H, T, T] receives this
// layer's attention.
void layer_forward(const ModelConfig& c, const LayerWeights& w, const KvWeights& kv, Activations& a, float* probs,
                   int T, int layer) {
  const int C = c.d_model, H = c.heads, G = c.kv_heads, D = c.head_dim;
  // 1. attention: norm → q, k, v (→ q/k norms) → RoPE (unless NoPE) → grouped causal attention (scale,
  // soft-cap, window) → output projection (→ Gemma's post-attention norm) → residual
  apply_norm(c, a.h.data(), a.x.data(), w.norm1_weight, w.norm1_bias, T);
  linear_forward_packed(a.q.data(), a.h.data(), w.wq, data_or_null(w.bq), T);
  linear_forward_packed(a.k.data(), a.h.data(), kv.wk, data_or_null(kv.bk), T);
  linear_forward_packed(a.v.data(), a.h.data(), kv.wv, data_or_null(kv.bv), T);
  if (c.qk_norm_whole) {  // OLMo 2, OLMoE: over each token's whole q [H·D] and k [G·D]
    ops::rmsnorm_forward(a.q.data(), nullptr, a.q.data(), w.q_norm.data(), T, H * D, float(c.norm_eps));
    ops::rmsnorm_forward(a.k.data(), nullptr, a.k.data(), w.k_norm.data(), T, G * D, float(c.norm_eps));
  } else if (c.qk_norm) {  // Qwen3: over each head's D values
    ops::rmsnorm_forward(a.q.data(), nullptr, a.q.data(), w.q_norm.data(), T * H, D, float(c.norm_eps));
    ops::rmsnorm_forward(a.k.data(), nullptr, a.k.data(), w.k_norm.data(), T * G, D, float(c.norm_eps));
  }
  if (c.positions == PositionKind::rotary && !c.nope_layer(layer)) {
    const RopeFrequencies f = c.layer_rope(layer, T);
    rope_half(a.q.data(), T, H, D, f);
    rope_half(a.k.data(), T, G, D, f);
  }
  if (c.query_scale_beta > 0)
    for (int t = c.query_scale_length; t < T; ++t)
      Eigen::Map<Eigen::ArrayXf>(a.q.data() + int64_t(t) * H * D, int64_t(H) * D) *= query_scale(c, t);
  if (c.attention_sinks) {
    a.sink_share.resize(size_t(H) * T);
    sink_attention(a.att.data(), probs, a.sink_share.data(), a.q.data(), a.k.data(), a.v.data(), T, H, G, D,
                   float(c.attn_scale), c.layer_window[size_t(layer)], w.sinks);
  } else if (probs) {
    ops::attention_forward_with(a.att.data(), probs, a.q.data(), a.k.data(), a.v.data(), 1, T, H, G, D,
                                attention_options(c, layer));
  } else {
    attention_by_head(a.att.data(), a.q.data(), a.k.data(), a.v.data(), T, H, G, D, attention_options(c, layer));
  }
  if (c.attn_output_gate) {
    // Qwen3NextAttention: attn_output · σ(gate), gate = h·W_gateᵀ (q_proj's gate rows); a.att keeps P·v.
    std::vector<float> gated(size_t(T) * H * D);
    linear_forward_packed(gated.data(), a.h.data(), w.attn_gate, nullptr, T);
    for (size_t i = 0; i < gated.size(); ++i) gated[i] = a.att[i] * (1.0f / (1.0f + std::exp(-gated[i])));
    heads_before_output(a, gated.data(), T, H, D, layer);
    linear_forward_packed(a.proj.data(), gated.data(), w.wo, data_or_null(w.bo), T);
  } else {
    heads_before_output(a, a.att.data(), T, H, D, layer);
    linear_forward_packed(a.proj.data(), a.att.data(), w.wo, data_or_null(w.bo), T);
  }
  if (c.sandwich_norms) ops::rmsnorm_forward(a.proj.data(), nullptr, a.proj.data(), w.post_attn_norm.data(), T, C, float(c.norm_eps));
  add_residual(c, a, T);
}

// ---- Qwen3-Next: the Gated DeltaNet layer ----------------------------------------------------------
// transformers 5.x models/qwen3_next/modeling_qwen3_next.py, Qwen3NextGatedDeltaNet.forward without a cache,
// in float32: x ← x + out_proj(gated_norm(gated_delta(conv(h)), z)), h = norm1(x). The recurrence and each
// value head's explicit matrix M come from attention/linear_attention.h (gated_delta: state [dk, dv], decay
// before the read, q and k L2-normalised and q × 1/√dk here, as the caller). maps [Hv, T, T] receives M.
void deltanet_layer_forward(const ModelConfig& c, const LayerWeights& lw, Activations& a, float* maps, int T,
                            std::optional<LayerDetail>* detail, int layer) {
  const LinearAttentionConfig& la = c.linear;
  const GatedDeltaNetWeights& w = lw.deltanet;
  const int C = c.d_model, Hk = la.key_heads, Hv = la.value_heads, dk = la.key_dim, dv = la.value_dim;
  const int r = Hv / Hk, Kd = Hk * dk, Vd = Hv * dv, CD = la.conv_dim(), K = la.conv_kernel;
  apply_norm(c, a.h.data(), a.x.data(), lw.norm1_weight, lw.norm1_bias, T);
  // in_proj_qkvz and in_proj_ba (split per head at load): mixed = [q | k | v] [T, CD], z [T, Vd], b, a [T, Hv]
  std::vector<float> pq(size_t(T) * Kd), pk(pq.size()), pv(size_t(T) * Vd), z(pv.size()), b(size_t(T) * Hv),
      araw(b.size());
  linear_forward_packed(pq.data(), a.h.data(), w.wq, nullptr, T);
  linear_forward_packed(pk.data(), a.h.data(), w.wk, nullptr, T);
  linear_forward_packed(pv.data(), a.h.data(), w.wv, nullptr, T);
  linear_forward_packed(z.data(), a.h.data(), w.wz, nullptr, T);
  linear_forward_packed(b.data(), a.h.data(), w.wb, nullptr, T);
  linear_forward_packed(araw.data(), a.h.data(), w.wa, nullptr, T);
  std::vector<float> mixed(size_t(T) * CD), conv(mixed.size());
  for (int t = 0; t < T; ++t) {
    float* row = mixed.data() + int64_t(t) * CD;
    std::copy_n(pq.data() + int64_t(t) * Kd, Kd, row);
    std::copy_n(pk.data() + int64_t(t) * Kd, Kd, row + Kd);
    std::copy_n(pv.data() + int64_t(t) * Vd, Vd, row + 2 * Kd);
  }
  // The causal depthwise conv1d (padding K − 1, the first T outputs), then SiLU:
  // conv[t, ch] = silu(Σ_j W[ch, j]·mixed[t + j − (K − 1), ch]), zeros before the first token.
#pragma omp parallel for schedule(static) if (int64_t(T) * CD * K >= (1 << 18))
  for (int t = 0; t < T; ++t)
    for (int ch = 0; ch < CD; ++ch) {
      float s = 0;
      for (int j = 0; j < K; ++j) {
        const int src = t + j - (K - 1);
        if (src >= 0) s += w.conv(ch, j) * mixed[size_t(int64_t(src) * CD + ch)];
      }
      conv[size_t(int64_t(t) * CD + ch)] = s / (1.0f + std::exp(-s));
    }
  std::vector<float> core(size_t(T) * Vd);
  if (detail) {
    LayerDetail d;
    d.layer = layer;
    d.linear = true;
    d.input = Eigen::Map<const Mat>(a.h.data(), T, C);
    d.q.resize(size_t(Hv)), d.k.resize(size_t(Hv)), d.v.resize(size_t(Hv)), d.probs.resize(size_t(Hv)),
        d.head_out.resize(size_t(Hv));
    d.beta.resize(Hv, T), d.decay.resize(Hv, T);
    *detail = std::move(d);
  }
  // Per value head j (its key head j / r, repeat_interleave): β = σ(b), g = −exp(A_log)·softplus(a + dt_bias).
#pragma omp parallel for schedule(dynamic) if (int64_t(Hv) * T * T * dk >= (1 << 16))
  for (int j = 0; j < Hv; ++j) {
    const int kh = j / r;
    LinearHeadInput in;
    in.q.resize(T, dk), in.k.resize(T, dk), in.v.resize(T, dv);
    in.beta.resize(size_t(T)), in.log_decay.resize(size_t(T));
    const float A = -std::exp(w.a_log[j]), scale = 1.0f / std::sqrt(float(dk));
    for (int t = 0; t < T; ++t) {
      const float* row = conv.data() + int64_t(t) * CD;
      for (int which = 0; which < 2; ++which) {  // l2norm(x) = x·rsqrt(Σx² + 1e−6) (the FLA library's)
        const float* x = row + which * Kd + kh * dk;
        float ss = 0;
        for (int i = 0; i < dk; ++i) ss += x[i] * x[i];
        const float inv = 1.0f / std::sqrt(ss + 1e-6f);
        auto dst = which == 0 ? in.q.row(t) : in.k.row(t);
        for (int i = 0; i < dk; ++i) dst[i] = x[i] * inv * (which == 0 ? scale : 1.0f);
      }
      std::copy_n(row + 2 * Kd + j * dv, dv, in.v.row(t).data());
      const float bt = b[size_t(int64_t(t) * Hv + j)];
      in.beta[size_t(t)] = 1.0f / (1.0f + std::exp(-bt));
      const float x = araw[size_t(int64_t(t) * Hv + j)] + w.dt_bias[j];
      const float softplus = x > 20.0f ? x : std::log1p(std::exp(x));  // torch's softplus (threshold 20)
      in.log_decay[size_t(t)] = A * softplus;
    }
    const LinearHeadResult res = linear_head_recurrent(LinearKind::gated_delta, in);
    const Mat M = linear_head_matrix(LinearKind::gated_delta, in);
    std::copy_n(M.data(), int64_t(T) * T, maps + int64_t(j) * T * T);
    for (int t = 0; t < T; ++t) std::copy_n(res.output.row(t).data(), dv, core.data() + int64_t(t) * Vd + int64_t(j) * dv);
    if (detail) {
      LayerDetail& d = **detail;
      d.q[size_t(j)] = in.q, d.k[size_t(j)] = in.k, d.v[size_t(j)] = in.v, d.probs[size_t(j)] = M;
      d.head_out[size_t(j)] = res.output;
      for (int t = 0; t < T; ++t) d.beta(j, t) = in.beta[size_t(t)], d.decay(j, t) = in.log_decay[size_t(t)];
    }
  }
  // Qwen3NextRMSNormGated over each head's dv values: x·rsqrt(mean(x²) + eps)·w·silu(z).
  const float eps = float(c.norm_eps);
  for (int64_t i = 0; i < int64_t(T) * Hv; ++i) {
    float* x = core.data() + i * dv;
    const float* zi = z.data() + i * dv;
    float ss = 0;
    for (int e = 0; e < dv; ++e) ss += x[e] * x[e];
    const float inv = 1.0f / std::sqrt(ss / float(dv) + eps);
    for (int e = 0; e < dv; ++e) x[e] = w.norm[e] * (x[e] * inv) * (zi[e] / (1.0f + std::exp(-zi[e])));
  }
  linear_forward_packed(a.proj.data(), core.data(), w.out, nullptr, T);
  if (detail) {
    (*detail)->concat = Eigen::Map<const Mat>(core.data(), T, Vd);
    (*detail)->output = Eigen::Map<const Mat>(a.proj.data(), T, C);
  }
  add_residual(c, a, T);
}

// A trained layer's kind as the Model view names a layer type (as "Gated DeltaNet", "Mamba-2").
const char* trained_kind_title(LinearLayerKind kind) {
  switch (kind) {
    case LinearLayerKind::linear: return "linear attention";
    case LinearLayerKind::retention: return "retention";
    case LinearLayerKind::mamba2: return "Mamba-2";
    case LinearLayerKind::deltanet: return "DeltaNet";
    case LinearLayerKind::gated_deltanet: return "Gated DeltaNet";
  }
  return "?";
}

// ---- a layer attnscope trained without a softmax (attnscope_linear) -----------------------------------
// x ← x + W_o·heads(h·W_qᵀ, h·W_kᵀ, h·W_vᵀ, the gates), h = norm1(x): the heads are the seeded layer's
// (attention/linear_layer.h linear_layer_heads, which the trainer's linear_ops.h mirrors) with the file's gates
// and its A_log. maps [H, T, T] receives each head's explicit matrix M.
void trained_linear_layer_forward(const ModelConfig& c, const LayerWeights& lw, Activations& a, float* maps, int T,
                                  std::optional<LayerDetail>* detail, int layer, const std::atomic<bool>* cancel) {
  const int C = c.d_model, H = c.heads, D = c.head_dim;
  const TrainedLinearWeights& g = lw.trained;
  apply_norm(c, a.h.data(), a.x.data(), lw.norm1_weight, lw.norm1_bias, T);
  linear_forward_packed(a.q.data(), a.h.data(), lw.wq, nullptr, T);
  linear_forward_packed(a.k.data(), a.h.data(), lw.kv.wk, nullptr, T);
  linear_forward_packed(a.v.data(), a.h.data(), lw.kv.wv, nullptr, T);
  const Eigen::Map<const Mat> h(a.h.data(), T, C), Q(a.q.data(), T, int64_t(H) * D), K(a.k.data(), T, int64_t(H) * D),
      V(a.v.data(), T, int64_t(H) * D);
  const Mat beta_in = g.b_proj.size() ? Mat(h * g.b_proj.transpose()) : Mat(Mat::Zero(T, H));
  const Mat step_in = g.step_proj.size() ? Mat(h * g.step_proj.transpose()) : Mat(Mat::Zero(T, H));
  LinearGates gates;
  gates.step_bias = g.dt_bias.size() ? g.dt_bias : Vec(Vec::Zero(H));
  gates.d_skip = g.d_skip.size() ? g.d_skip : Vec(Vec::Ones(H));
  gates.a_log = g.a_log;
  LinearLayerSpec spec;
  spec.kind = c.trained.kind_of(layer);
  spec.normalize = c.trained.normalize;
  LinearLayerResult r = linear_layer_heads(Q, K, V, beta_in, step_in, gates, spec, H, cancel);
  AttentionResult& att = r.attention;
  for (int j = 0; j < H; ++j) std::copy_n(att.probs[size_t(j)].data(), int64_t(T) * T, maps + int64_t(j) * T * T);
  linear_forward_packed(a.proj.data(), att.concat.data(), lw.wo, nullptr, T);
  if (detail) {
    LayerDetail d;
    d.layer = layer;
    d.linear = true;
    d.input = h;
    d.q = std::move(att.q), d.k = std::move(att.k), d.v = std::move(att.v), d.probs = std::move(att.probs);
    d.head_out = std::move(att.head_out);
    d.concat = att.concat;
    d.output = Eigen::Map<const Mat>(a.proj.data(), T, C);
    d.beta = std::move(r.beta), d.step = std::move(r.step);
    // decay as the other linear layers give it: the log of the factor the state is multiplied by
    if (r.decay.size()) d.decay = r.decay.array().log().matrix();
    *detail = std::move(d);
  }
  add_residual(c, a, T);
}

// ---- Granite 4.0-H: the Mamba-2 layer ----------------------------------------------------------------
// transformers 5.x models/granitemoehybrid/modeling_granitemoehybrid.py, GraniteMoeHybridMambaLayer.torch_forward
// without a cache, in float32: x ← x + residual_multiplier·out_proj(gated_norm(ssd(conv(h)), z)), h = norm1(x).
// Each head's SSD (recurrence and explicit matrix M) comes from attention/linear_attention.h (mamba2: q = C,
// k = B, v = x, Δ, A and the D skip; y = M·x + D·x). maps [heads, T, T] receives M.
void mamba2_layer_forward(const ModelConfig& c, const LayerWeights& lw, Activations& a, float* maps, int T,
                          std::optional<LayerDetail>* detail, int layer) {
  const Mamba2Config& mc = c.mamba;
  const Mamba2Weights& w = lw.mamba;
  const int C = c.d_model, Hm = mc.heads, P = mc.head_dim, N = mc.state, I = mc.inner(), CD = mc.conv_dim();
  const int K = mc.conv_kernel, per_group = Hm / mc.groups;
  apply_norm(c, a.h.data(), a.x.data(), lw.norm1_weight, lw.norm1_bias, T);
  // in_proj (split at load): z [T, I], xBC [T, CD], dt [T, Hm]
  std::vector<float> z(size_t(T) * I), xbc(size_t(T) * CD), dt(size_t(T) * Hm), conv(xbc.size());
  linear_forward_packed(z.data(), a.h.data(), w.wz, nullptr, T);
  linear_forward_packed(xbc.data(), a.h.data(), w.wxbc, nullptr, T);
  linear_forward_packed(dt.data(), a.h.data(), w.wdt, nullptr, T);
  // The causal depthwise conv1d (padding K − 1, the first T outputs) with its bias, then SiLU.
#pragma omp parallel for schedule(static) if (int64_t(T) * CD * K >= (1 << 18))
  for (int t = 0; t < T; ++t)
    for (int ch = 0; ch < CD; ++ch) {
      float s = w.conv_bias.size() > 0 ? w.conv_bias[ch] : 0.0f;
      for (int j = 0; j < K; ++j) {
        const int src = t + j - (K - 1);
        if (src >= 0) s += w.conv(ch, j) * xbc[size_t(int64_t(src) * CD + ch)];
      }
      conv[size_t(int64_t(t) * CD + ch)] = s / (1.0f + std::exp(-s));
    }
  std::vector<float> y(size_t(T) * I);
  if (detail) {
    LayerDetail d;
    d.layer = layer;
    d.linear = true;
    d.input = Eigen::Map<const Mat>(a.h.data(), T, C);
    d.q.resize(size_t(Hm)), d.k.resize(size_t(Hm)), d.v.resize(size_t(Hm)), d.probs.resize(size_t(Hm)),
        d.head_out.resize(size_t(Hm));
    d.step.resize(Hm, T), d.decay.resize(Hm, T);
    *detail = std::move(d);
  }
  // Head j: x its P values of the first I channels, B and C those of its group j / (Hm / groups);
  // Δ = softplus(dt + dt_bias) (torch's, threshold 20; time_step_limit (0, ∞) clamps nothing), A = −exp(A_log).
#pragma omp parallel for schedule(dynamic) if (int64_t(Hm) * T * T * N >= (1 << 16))
  for (int j = 0; j < Hm; ++j) {
    const int g = j / per_group;
    LinearHeadInput in;
    in.q.resize(T, N), in.k.resize(T, N), in.v.resize(T, P);
    in.dt.resize(size_t(T)), in.log_decay.assign(size_t(T), -std::exp(w.a_log[j]));
    in.d_skip = w.d_skip[j];
    for (int t = 0; t < T; ++t) {
      const float* row = conv.data() + int64_t(t) * CD;
      std::copy_n(row + int64_t(j) * P, P, in.v.row(t).data());
      std::copy_n(row + I + int64_t(g) * N, N, in.k.row(t).data());                    // B
      std::copy_n(row + I + int64_t(mc.groups) * N + int64_t(g) * N, N, in.q.row(t).data());  // C
      const float x = dt[size_t(int64_t(t) * Hm + j)] + w.dt_bias[j];
      in.dt[size_t(t)] = x > 20.0f ? x : std::log1p(std::exp(x));
    }
    const LinearHeadResult res = linear_head_recurrent(LinearKind::mamba2, in);
    const Mat M = linear_head_matrix(LinearKind::mamba2, in);
    std::copy_n(M.data(), int64_t(T) * T, maps + int64_t(j) * T * T);
    for (int t = 0; t < T; ++t) std::copy_n(res.output.row(t).data(), P, y.data() + int64_t(t) * I + int64_t(j) * P);
    if (detail) {
      LayerDetail& d = **detail;
      d.q[size_t(j)] = in.q, d.k[size_t(j)] = in.k, d.v[size_t(j)] = in.v, d.probs[size_t(j)] = M;
      d.head_out[size_t(j)] = res.output;
      // Δ_t, the step a token writes with (B_t·Δ_t·x_t), and the log decay Δ_t·A its state carries over
      for (int t = 0; t < T; ++t) d.step(j, t) = in.dt[size_t(t)], d.decay(j, t) = in.dt[size_t(t)] * in.log_decay[size_t(t)];
    }
  }
  // GraniteMoeHybridRMSNormGated: y·silu(z) first, then x·rsqrt(mean(x²) + eps)·w over all I values.
  const float eps = float(c.norm_eps);
  for (int t = 0; t < T; ++t) {
    float* x = y.data() + int64_t(t) * I;
    const float* zt = z.data() + int64_t(t) * I;
    float ss = 0;
    for (int e = 0; e < I; ++e) {
      x[e] *= zt[e] / (1.0f + std::exp(-zt[e]));
      ss += x[e] * x[e];
    }
    const float inv = 1.0f / std::sqrt(ss / float(I) + eps);
    for (int e = 0; e < I; ++e) x[e] = w.norm[e] * (x[e] * inv);
  }
  linear_forward_packed(a.proj.data(), y.data(), w.out, nullptr, T);
  if (detail) {
    (*detail)->concat = Eigen::Map<const Mat>(y.data(), T, I);
    (*detail)->output = Eigen::Map<const Mat>(a.proj.data(), T, C);
  }
  add_residual(c, a, T);
}

// `input` is the residual stream the MLP's norm reads: x after the attention block, or (GPT-NeoX's parallel
// residual) x before it.
void mlp_forward(const ModelConfig& c, const LayerWeights& w, Activations& a, int T, const float* input) {
  const int C = c.d_model, F = c.ffn_dim;
  // 2. MLP: norm → up (and gate) → gelu_new, SwiGLU, GeGLU or GELU → down (→ the post-MLP norm) → residual
  apply_norm(c, a.h.data(), input, w.norm2_weight, w.norm2_bias, T);
  linear_forward_packed(a.up.data(), a.h.data(), w.w_up, data_or_null(w.b_up), T);
  if (c.mlp == MlpKind::gelu_new) {
    gelu_new_inplace(a.up.data(), int64_t(T) * F);
  } else if (c.mlp == MlpKind::gelu) {
    gelu_erf_inplace(a.up.data(), int64_t(T) * F);
  } else if (c.mlp == MlpKind::swiglu) {
    linear_forward_packed(a.gate.data(), a.h.data(), w.w_gate, nullptr, T);
    ops::swiglu_forward(a.up.data(), a.gate.data(), a.up.data(), T, F);
  } else {  // GeGLU: gelu_pytorch_tanh is gelu_new's formula
    linear_forward_packed(a.gate.data(), a.h.data(), w.w_gate, nullptr, T);
    gelu_new_inplace(a.gate.data(), int64_t(T) * F);
    Eigen::Map<Eigen::ArrayXf>(a.up.data(), int64_t(T) * F) *= Eigen::Map<const Eigen::ArrayXf>(a.gate.data(), int64_t(T) * F);
  }
  linear_forward_packed(a.proj.data(), a.up.data(), w.w_down, data_or_null(w.b_down), T);
  if (c.sandwich_norms) ops::rmsnorm_forward(a.proj.data(), nullptr, a.proj.data(), w.post_mlp_norm.data(), T, C, float(c.norm_eps));
  add_residual(c, a, T);
}

// ---- DeepSeek: multi-head latent attention and the mixture of experts ------------------------------
// RoPE on pairs (2i, 2i+1) of the rope part of each of `heads` heads, in place: x [T, heads·stride],
// the pair starts at column offset within each head. (x0 + i·x1)·(cos + i·sin)·attention_factor,
// Hugging Face's complex product for DeepSeek (the interleaved layout).
void rope_interleaved(float* x, int T, int heads, int stride, int offset, const std::vector<float>& inv_freq,
                      double factor) {
  const int half = int(inv_freq.size());
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < half; ++i) {
      const float angle = float(t) * inv_freq[size_t(i)];
      const float c = float(std::cos(double(angle)) * factor), s = float(std::sin(double(angle)) * factor);
      for (int h = 0; h < heads; ++h) {
        float* p = x + (int64_t(t) * heads + h) * stride + offset + 2 * i;
        const float a = p[0], b = p[1];
        p[0] = a * c - b * s;
        p[1] = b * c + a * s;
      }
    }
}

// The MLA block: x ← x + o_proj(attention). Each head h: q_h = [q_nope ; RoPE(q_pe)],
// k_h = [kv_b's key rows of h · c_KV ; RoPE(k_pe)] (k_pe shared), v_h = kv_b's value rows of h · c_KV;
// P_h = softmax(q_h·k_hᵀ · softmax_scale + causal mask). probs [H, T, T]; detail kept when asked.
// One MLA head's probabilities: S = Q·Kᵀ·scale [T, T] (masked entries set to −∞ here, as LayerDetail keeps
// them) → P [T, T]. HeadMaps::head_into runs the same code.
void mla_head_probs(float* probs, Mat& S, const Mat& Q, const Mat& K, int T, float scale) {
  S = (Q * K.transpose()) * scale;
  Eigen::Map<Mat> P(probs, T, T);
  for (int i = 0; i < T; ++i) {
    const float max = S.row(i).head(i + 1).maxCoeff();
    double sum = 0;
    for (int j = 0; j <= i; ++j) sum += double(P(i, j) = std::exp(S(i, j) - max));
    for (int j = 0; j <= i; ++j) P(i, j) = float(double(P(i, j)) / sum);
    for (int j = i + 1; j < T; ++j) P(i, j) = 0, S(i, j) = -INFINITY;
  }
}

// probs null: on-demand mode (each head's map in a scratch; `kept` receives q and the heads' keys).
void mla_layer_forward(const ModelConfig& c, const LayerWeights& w, Activations& a, float* probs, int T,
                       std::optional<LayerDetail>* detail, int layer, KeptLayer* kept) {
  const MlaConfig& m = c.mla;
  const int C = c.d_model, H = c.heads, Dqk = c.head_dim, N = m.nope_dim, R = m.rope_dim, Dv = m.v_dim;
  const int r = m.kv_lora_rank;
  const float eps = float(MlaConfig::latent_norm_eps);
  apply_norm(c, a.h.data(), a.x.data(), w.norm1_weight, w.norm1_bias, T);
  std::vector<float> q(size_t(T) * H * Dqk);
  if (m.q_lora_rank) {
    std::vector<float> cq(size_t(T) * m.q_lora_rank);
    linear_forward_packed(cq.data(), a.h.data(), w.mla.q_a, nullptr, T);
    ops::rmsnorm_forward(cq.data(), nullptr, cq.data(), w.mla.q_a_norm.data(), T, m.q_lora_rank, eps);
    linear_forward_packed(q.data(), cq.data(), w.mla.q_b, nullptr, T);
  } else {
    linear_forward_packed(q.data(), a.h.data(), w.wq, nullptr, T);
  }
  std::vector<float> ckv(size_t(T) * (r + R)), latent(size_t(T) * r);
  linear_forward_packed(ckv.data(), a.h.data(), w.mla.kv_a, nullptr, T);
  for (int t = 0; t < T; ++t) std::copy_n(ckv.data() + int64_t(t) * (r + R), r, latent.data() + int64_t(t) * r);
  ops::rmsnorm_forward(latent.data(), nullptr, latent.data(), w.mla.kv_a_norm.data(), T, r, eps);
  std::vector<float> kv(size_t(T) * H * (N + Dv));
  linear_forward_packed(kv.data(), latent.data(), w.mla.kv_b, nullptr, T);
  const std::vector<float> inv_freq = m.inv_freq(c.rope_theta);
  rope_interleaved(q.data(), T, H, Dqk, N, inv_freq, m.attention_factor);
  std::vector<float> kpe(size_t(T) * R);
  for (int t = 0; t < T; ++t) std::copy_n(ckv.data() + int64_t(t) * (r + R) + r, R, kpe.data() + int64_t(t) * R);
  rope_interleaved(kpe.data(), T, 1, R, 0, inv_freq, m.attention_factor);
  // Per head: K_h [T, Dqk], V_h [T, Dv], then the causal softmax and P·V.
  std::vector<float> att(size_t(T) * H * Dv);
  const size_t heads = static_cast<size_t>(H);
  std::vector<Mat> keys(heads), values(heads), queries(heads), scores(heads);
  const float scale = float(m.softmax_scale);
  if (kept) {
    kept->kind = KeptLayer::Kind::latent;
    kept->heads = H, kept->kv_heads = H, kept->dim = Dqk;
    kept->scale = scale;
    kept->q = q;
    kept->k.assign(size_t(T) * H * Dqk, 0.0f);
  }
#pragma omp parallel for schedule(static) if (int64_t(H) * T * T * Dqk >= (1 << 18))
  for (int h = 0; h < H; ++h) {
    Mat Q(T, Dqk), K(T, Dqk), V(T, Dv);
    for (int t = 0; t < T; ++t) {
      const float* kvrow = kv.data() + (int64_t(t) * H + h) * (N + Dv);
      std::copy_n(q.data() + (int64_t(t) * H + h) * Dqk, Dqk, Q.row(t).data());
      std::copy_n(kvrow, N, K.row(t).data());
      std::copy_n(kpe.data() + int64_t(t) * R, R, K.row(t).data() + N);
      std::copy_n(kvrow + N, Dv, V.row(t).data());
    }
    Mat S, scratch;
    if (!probs) scratch.resize(T, T);
    Eigen::Map<Mat> P(probs ? probs + int64_t(h) * T * T : scratch.data(), T, T);
    mla_head_probs(P.data(), S, Q, K, T, scale);
    if (kept)
      for (int t = 0; t < T; ++t) std::copy_n(K.row(t).data(), Dqk, kept->k.data() + (int64_t(t) * H + h) * Dqk);
    const Mat O = P * V;
    for (int t = 0; t < T; ++t) std::copy_n(O.row(t).data(), Dv, att.data() + (int64_t(t) * H + h) * Dv);
    if (detail) queries[size_t(h)] = std::move(Q), keys[size_t(h)] = std::move(K), values[size_t(h)] = std::move(V),
                scores[size_t(h)] = std::move(S);
  }
  heads_before_output(a, att.data(), T, H, Dv, layer);
  linear_forward_packed(a.proj.data(), att.data(), w.wo, nullptr, T);
  if (detail) {
    LayerDetail d;
    d.layer = layer;
    d.input = Eigen::Map<const Mat>(a.h.data(), T, C);
    d.q = std::move(queries), d.k = std::move(keys), d.v = std::move(values), d.scores = std::move(scores);
    for (int h = 0; h < H; ++h) {
      d.probs.push_back(Eigen::Map<const Mat>(probs + int64_t(h) * T * T, T, T));
      d.head_out.push_back(head_columns(att, T, H, Dv, h));
    }
    d.concat = Eigen::Map<const Mat>(att.data(), T, int64_t(H) * Dv);
    d.output = Eigen::Map<const Mat>(a.proj.data(), T, C);
    d.latent = Eigen::Map<const Mat>(latent.data(), T, r);
    d.rope_key = Eigen::Map<const Mat>(kpe.data(), T, R);
    *detail = std::move(d);
  }
  ops::residual_forward(a.x.data(), a.x.data(), a.proj.data(), T * C);
}

// out [n, C] = down(silu(gate x) ⊙ up x) for x [n, C].
void swiglu_mlp(float* out, const float* x, const SwigluWeights& m, int n) {
  const int F = int(m.gate.rows());
  std::vector<float> gate(size_t(n) * F), up(gate.size());
  linear_forward_packed(gate.data(), x, m.gate, nullptr, n);
  linear_forward_packed(up.data(), x, m.up, nullptr, n);
  ops::swiglu_forward(up.data(), gate.data(), up.data(), n, F);
  linear_forward_packed(out, up.data(), m.down, nullptr, n);
}

// The experts each token is routed to and their weights (Hugging Face's DeepseekV2 MoEGate /
// DeepseekV3TopkRouter): scores = softmax or sigmoid of the router's logits; greedy top-k, the top-k
// of the topk_group best groups (V2: a group's best score; V3: its two best of score + correction
// bias, the choice ranking score + bias), weights the chosen scores (V3: normalised when norm_topk_prob)
// × routed_scaling_factor.
std::vector<std::pair<int, float>> route_token(const MoeConfig& e, const float* logits, const Vec& correction_bias) {
  const int E = e.experts;
  if (e.softmax_over_topk) {  // GraniteMoe (JetMoeTopKGating): top-k logits, softmax over those k
    std::vector<int> idx(static_cast<size_t>(E));
    for (int x = 0; x < E; ++x) idx[size_t(x)] = x;
    std::stable_sort(idx.begin(), idx.end(), [logits](int a, int b) { return logits[a] > logits[b]; });
    idx.resize(size_t(e.top_k));
    const float max = logits[idx[0]];
    double sum = 0;
    for (int x : idx) sum += std::exp(double(logits[x] - max));
    std::vector<std::pair<int, float>> chosen;
    for (int x : idx) chosen.push_back({x, float(std::exp(double(logits[x] - max)) / sum)});
    return chosen;
  }
  std::vector<float> score(static_cast<size_t>(E));
  if (e.sigmoid) {
    for (int x = 0; x < E; ++x) score[size_t(x)] = 1.0f / (1.0f + std::exp(-logits[x]));
  } else {
    const float max = *std::max_element(logits, logits + E);
    double sum = 0;
    for (int x = 0; x < E; ++x) sum += double(score[size_t(x)] = std::exp(logits[x] - max));
    for (int x = 0; x < E; ++x) score[size_t(x)] = float(double(score[size_t(x)]) / sum);
  }
  std::vector<float> choice = score;
  if (e.correction_bias)
    for (int x = 0; x < E; ++x) choice[size_t(x)] += correction_bias[x];
  auto top = [](const std::vector<float>& v, int k) {
    std::vector<int> idx(v.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = int(i);
    std::stable_sort(idx.begin(), idx.end(), [&v](int a, int b) { return v[size_t(a)] > v[size_t(b)]; });
    idx.resize(size_t(k));
    return idx;
  };
  if (e.method != TopkMethod::greedy) {
    const int per = E / e.groups;
    std::vector<float> group_score(size_t(e.groups));
    for (int g = 0; g < e.groups; ++g) {
      std::vector<float> part(choice.begin() + g * per, choice.begin() + (g + 1) * per);
      std::sort(part.begin(), part.end(), std::greater<float>());
      group_score[size_t(g)] = e.method == TopkMethod::noaux_tc ? part[0] + part[1] : part[0];
    }
    std::vector<bool> kept(size_t(e.groups), false);
    for (int g : top(group_score, e.topk_groups)) kept[size_t(g)] = true;
    for (int x = 0; x < E; ++x)
      if (!kept[size_t(x / per)]) choice[size_t(x)] = 0.0f;  // masked_fill(..., 0.0) as Hugging Face does
  }
  std::vector<std::pair<int, float>> chosen;
  double sum = 0;
  for (int x : top(choice, e.top_k)) {
    chosen.push_back({x, score[size_t(x)]});
    sum += score[size_t(x)];
  }
  for (auto& [x, weight] : chosen) {
    if (e.norm_topk) weight = float(double(weight) / (sum + 1e-20));
    weight = float(double(weight) * e.routed_scale);
  }
  return chosen;
}

// x ← x + moe(norm2(x)): each expert runs on the tokens routed to it; the shared experts on all.
void moe_mlp_forward(const ModelConfig& c, const LayerWeights& w, Activations& a, int T) {
  const MoeConfig& e = c.moe;
  const int C = c.d_model;
  apply_norm(c, a.h.data(), a.x.data(), w.norm2_weight, w.norm2_bias, T);
  std::vector<float> logits(size_t(T) * e.experts);
  linear_forward_packed(logits.data(), a.h.data(), w.moe.router, nullptr, T);
  std::vector<std::vector<std::pair<int, float>>> routed(size_t(e.experts));  // expert → (token, weight)
  for (int t = 0; t < T; ++t)
    for (auto [x, weight] : route_token(e, logits.data() + int64_t(t) * e.experts, w.moe.correction_bias))
      routed[size_t(x)].push_back({t, weight});
  std::fill(a.proj.begin(), a.proj.end(), 0.0f);
  if (e.shared > 0) swiglu_mlp(a.proj.data(), a.h.data(), w.moe.shared, T);
  if (e.shared_gate) {  // Qwen3NextSparseMoeBlock: σ(h·w_gate) × shared_expert(h)
    std::vector<float> gate(static_cast<size_t>(T));
    swiglu_mlp(a.proj.data(), a.h.data(), w.moe.shared, T);
    linear_forward_packed(gate.data(), a.h.data(), w.moe.shared_gate, nullptr, T);
    for (int t = 0; t < T; ++t)
      Eigen::Map<Eigen::ArrayXf>(a.proj.data() + int64_t(t) * C, C) *= 1.0f / (1.0f + std::exp(-gate[size_t(t)]));
  }
  std::vector<float> in, out;
  for (int x = 0; x < e.experts; ++x) {
    const auto& tokens = routed[size_t(x)];
    if (tokens.empty()) continue;
    const int n = int(tokens.size());
    in.resize(size_t(n) * C), out.resize(in.size());
    for (int i = 0; i < n; ++i) std::copy_n(a.h.data() + int64_t(tokens[size_t(i)].first) * C, C, in.data() + int64_t(i) * C);
    swiglu_mlp(out.data(), in.data(), w.moe.experts[size_t(x)], n);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < C; ++k) a.proj[size_t(int64_t(tokens[size_t(i)].first) * C + k)] += tokens[size_t(i)].second * out[size_t(int64_t(i) * C + k)];
  }
  add_residual(c, a, T);
}

// ---- gpt-oss: the router and the experts with the clamped SwiGLU -----------------------------------
// out [n, rows] = x [n, cols]·Wᵀ + bias: an MXFP4 expert widened as it is read, or a packed one.
void expert_product(float* out, const float* x, const ExpertMatrix& w, const float* bias, int n) {
  if (!w.mxfp4.empty()) mxfp4_linear(out, x, w.mxfp4, bias, n);
  else linear_forward_packed(out, x, w.dense, bias, n);
}

// GptOssTopKRouter: the top_k largest of logits [E] (the lower index first on a tie), weighted by the
// softmax over those k values.
std::vector<std::pair<int, float>> route_gpt_oss(const float* logits, int E, int K) {
  std::vector<int> idx(size_t(E), 0);
  for (int x = 0; x < E; ++x) idx[size_t(x)] = x;
  std::stable_sort(idx.begin(), idx.end(), [logits](int a, int b) { return logits[a] > logits[b]; });
  idx.resize(size_t(K));
  const float max = logits[idx[0]];
  double sum = 0;
  std::vector<std::pair<int, float>> chosen;
  for (int x : idx) {
    chosen.push_back({x, std::exp(logits[x] - max)});
    sum += double(chosen.back().second);
  }
  for (auto& [x, weight] : chosen) weight = float(double(weight) / sum);
  return chosen;
}

// x ← x + Σ_chosen weight_e · expert_e(norm2(x)), each expert run on the tokens routed to it only (an
// MXFP4 expert no token chose is never widened, its pages never read).
void gpt_oss_mlp_forward(const ModelConfig& c, const LayerWeights& w, Activations& a, int T) {
  const int C = c.d_model, F = c.ffn_dim, E = c.oss.experts;
  const float limit = float(c.oss.limit), alpha = float(c.oss.alpha);
  const GptOssMoeWeights& m = w.oss;
  apply_norm(c, a.h.data(), a.x.data(), w.norm2_weight, w.norm2_bias, T);
  std::vector<float> logits(size_t(T) * E);
  linear_forward_packed(logits.data(), a.h.data(), m.router, m.router_bias.data(), T);
  std::vector<std::vector<std::pair<int, float>>> routed{size_t(E)};  // expert → (token, weight)
  for (int t = 0; t < T; ++t)
    for (auto [x, weight] : route_gpt_oss(logits.data() + int64_t(t) * E, E, c.oss.top_k))
      routed[size_t(x)].push_back({t, weight});
  std::fill(a.proj.begin(), a.proj.end(), 0.0f);
  std::vector<float> in, gate_up, hidden, out;
  for (int x = 0; x < E; ++x) {
    const auto& tokens = routed[size_t(x)];
    if (tokens.empty()) continue;
    const int n = int(tokens.size());
    in.resize(size_t(n) * C), gate_up.resize(size_t(n) * 2 * F), hidden.resize(size_t(n) * F), out.resize(in.size());
    for (int i = 0; i < n; ++i) std::copy_n(a.h.data() + int64_t(tokens[size_t(i)].first) * C, C, in.data() + int64_t(i) * C);
    expert_product(gate_up.data(), in.data(), m.gate_up[size_t(x)], m.gate_up_bias.row(x).data(), n);
    for (int64_t i = 0; i < int64_t(n) * F; ++i) {
      const float g = std::min(gate_up[size_t(2 * i)], limit);
      const float u = std::clamp(gate_up[size_t(2 * i + 1)], -limit, limit);
      hidden[size_t(i)] = (u + 1.0f) * (g / (1.0f + std::exp(-g * alpha)));
    }
    expert_product(out.data(), hidden.data(), m.down[size_t(x)], m.down_bias.row(x).data(), n);
    for (int i = 0; i < n; ++i) {
      float* dst = a.proj.data() + int64_t(tokens[size_t(i)].first) * C;
      const float weight = tokens[size_t(i)].second;
      for (int k = 0; k < C; ++k) dst[k] += weight * out[size_t(int64_t(i) * C + k)];
    }
  }
  ops::residual_forward(a.x.data(), a.x.data(), a.proj.data(), T * C);
}

}  // namespace

// ---- the pass --------------------------------------------------------------------------------------
ForwardResult forward(const Model& model, std::span<const int32_t> ids, const ForwardOptions& options) {
  const ModelConfig& c = model.config;
  check_forward_input(c, ids, options.keep);
  const bool on_demand = options.keep == AttentionKeep::on_demand;
  require(!on_demand || options.detail_layer < 0,
          "long inputs (attention computed per head on demand) keep no layer's detail; ask for one head instead");
  const ModelWeights& w = *model.weights;
  const int T = int(ids.size()), C = c.d_model, H = c.heads, L = c.layers;
  ForwardResult r;
  r.layers = L, r.heads = H, r.kv_heads = c.kv_heads, r.tokens = T, r.vocab = c.vocab;
  std::shared_ptr<HeadMaps> maps;
  if (on_demand) {
    maps = std::make_shared<HeadMaps>();
    maps->tokens = T;
    maps->layers.resize(size_t(L));
  } else {
    r.attentions.resize(size_t(int64_t(L) * H * T * T));
  }
  r.layer_maps.assign(size_t(L), LayerMaps{false, "", H});
  r.linear_maps.resize(size_t(L));
  Activations a(T, C, H * c.head_dim, c.kv_heads * c.head_dim, c.ffn_dim);
  if (options.ablation) {
    check_head_ablation(c, *options.ablation);
    a.ablation = options.ablation;
  }
  a.keep_heads = options.taps.parts;
  ForwardTrace& trace = r.trace;
  // The trace's taps after each block: a.proj is the branch the block added (× the residual multiplier).
  const auto branch = [&] {
    Mat b = Eigen::Map<const Mat>(a.proj.data(), T, C);
    if (c.residual_scale != 1.0) b *= float(c.residual_scale);
    return b;
  };
  const auto after_mixer = [&](int l, bool softmax) {
    if (!options.taps.parts) return;
    trace.block[size_t(l)] = branch();
    if (softmax) trace.head_input[size_t(l)] = Eigen::Map<const Mat>(a.heads_in.data(), T, int64_t(a.heads_in.size()) / T);
  };
  const auto after_mlp = [&](int l) {
    if (options.taps.parts) trace.mlp[size_t(l)] = branch();
    if (options.taps.residual) trace.residual[size_t(l)] = Eigen::Map<const Mat>(a.x.data(), T, C);
  };
  if (options.taps.residual) trace.residual.resize(size_t(L));
  if (options.taps.parts) trace.block.resize(size_t(L)), trace.mlp.resize(size_t(L)), trace.head_input.resize(size_t(L));

  // x₀ = E[ids] (+ wpe[0..T))
  for (int t = 0; t < T; ++t) w.token_embedding.row(ids[size_t(t)], a.x.data() + int64_t(t) * C);
  if (c.embedding_scale != 1.0)  // Gemma: × √hidden_size (in the embedding's dtype), a float32 product
    Eigen::Map<Eigen::ArrayXf>(a.x.data(), int64_t(T) * C) *= float(c.embedding_scale);
  if (options.taps.parts) trace.embedding = Eigen::Map<const Mat>(a.x.data(), T, C);
  if (c.positions == PositionKind::learned) {
    ops::residual_forward(a.x.data(), a.x.data(), w.position_embedding.data(), T * C);
    if (options.taps.parts) trace.positions = w.position_embedding.topRows(T);
  }

  std::vector<float> x_in;  // the layer's input stream (parallel residual)
  for (int l = 0; l < L; ++l) {
    check_cancel(options.cancel);
    float* probs = on_demand ? nullptr : r.attentions.data() + int64_t(l) * H * T * T;
    KeptLayer* kept = on_demand ? &maps->layers[size_t(l)] : nullptr;
    if (c.trained.active && c.is_linear_layer(l)) {  // a layer attnscope trained without a softmax
      r.layer_maps[size_t(l)] = {true, trained_kind_title(c.trained.kind_of(l)), H};
      r.linear_maps[size_t(l)].assign(size_t(int64_t(H) * T * T), 0.0f);
      trained_linear_layer_forward(c, w.layers[size_t(l)], a, r.linear_maps[size_t(l)].data(), T,
                                   options.detail_layer == l ? &r.detail : nullptr, l, options.cancel);
      after_mixer(l, false);
      mlp_forward(c, w.layers[size_t(l)], a, T, a.x.data());
      after_mlp(l);
      continue;
    }
    if (c.is_linear_layer(l)) {  // Granite 4.0-H's Mamba-2 or Qwen3-Next's Gated DeltaNet, then the dense or MoE MLP
      const bool mamba = c.mamba.active();
      const int heads = mamba ? c.mamba.heads : c.linear.value_heads;
      r.layer_maps[size_t(l)] = {true, mamba ? "Mamba-2" : "Gated DeltaNet", heads};
      r.linear_maps[size_t(l)].assign(size_t(int64_t(heads) * T * T), 0.0f);
      (mamba ? mamba2_layer_forward : deltanet_layer_forward)(c, w.layers[size_t(l)], a, r.linear_maps[size_t(l)].data(), T,
                                                              options.detail_layer == l ? &r.detail : nullptr, l);
      after_mixer(l, false);
      if (c.moe.is_moe_layer(l)) moe_mlp_forward(c, w.layers[size_t(l)], a, T);
      else mlp_forward(c, w.layers[size_t(l)], a, T, a.x.data());
      after_mlp(l);
      continue;
    }
    if (c.is_mla()) {  // DeepSeek
      mla_layer_forward(c, w.layers[size_t(l)], a, probs, T, options.detail_layer == l ? &r.detail : nullptr, l, kept);
      after_mixer(l, true);
      if (c.moe.is_moe_layer(l)) moe_mlp_forward(c, w.layers[size_t(l)], a, T);
      else mlp_forward(c, w.layers[size_t(l)], a, T, a.x.data());
      after_mlp(l);
      continue;
    }
    if (c.parallel_residual) x_in = a.x;  // GPT-NeoX: x + attn(norm1(x)) + mlp(norm2(x))
    layer_forward(c, w.layers[size_t(l)], model.kv(l), a, probs, T, l);
    if (options.detail_layer == l) r.detail = make_detail(c, a, probs, l, T);
    if (kept) {  // q and k as the scores read them (after RoPE and the query scale)
      const ops::AttentionOptions o = attention_options(c, l);
      kept->kind = c.attention_sinks ? KeptLayer::Kind::sinks : KeptLayer::Kind::grouped;
      kept->heads = H, kept->kv_heads = c.kv_heads, kept->dim = c.head_dim;
      kept->scale = o.scale, kept->softcap = o.softcap, kept->window = o.window;
      kept->q = a.q;
      kept->k = a.k;
      if (c.attention_sinks) kept->sinks = w.layers[size_t(l)].sinks;
    }
    after_mixer(l, true);
    if (c.oss.active()) gpt_oss_mlp_forward(c, w.layers[size_t(l)], a, T);
    else if (c.moe.is_moe_layer(l)) moe_mlp_forward(c, w.layers[size_t(l)], a, T);  // Qwen3-MoE, OLMoE, GraniteMoE
    else mlp_forward(c, w.layers[size_t(l)], a, T, c.parallel_residual ? x_in.data() : a.x.data());
    after_mlp(l);
  }
  check_cancel(options.cancel);
  apply_norm(c, a.h.data(), a.x.data(), w.final_norm_weight, w.final_norm_bias, T);
  r.logits.resize(T, c.vocab);
  linear_forward_packed(r.logits.data(), a.h.data(), w.output_embedding(), nullptr, T);
  if (c.logits_divisor != 1.0) r.logits.array() /= float(c.logits_divisor);  // Granite: ÷ logits_scaling
  if (c.final_softcap > 0) {  // Gemma 2: logits → tanh(z/cap)·cap
    const float cap = float(c.final_softcap);
    r.logits.array() = (r.logits.array() / cap).tanh() * cap;
  }
  r.top = top_next_tokens(r.logits, options.top_k);
  r.head_maps = std::move(maps);
  return r;
}

// ---- on demand ---------------------------------------------------------------------------------------
void HeadMaps::head_into(int layer, int head, float* out) const {
  require(layer >= 0 && layer < layer_count(), "layer " + std::to_string(layer) + " is outside the model (layers 0 to " +
                                                   std::to_string(layer_count() - 1) + ")");
  const KeptLayer& k = layers[size_t(layer)];
  require(head >= 0 && head < k.heads, "head " + std::to_string(head) + " is outside layer " + std::to_string(layer) +
                                           " (heads 0 to " + std::to_string(k.heads - 1) + ")");
  const int T = tokens, D = k.dim, H = k.heads, G = k.kv_heads, g = head / (H / G);
  const detail::SingleThreadScope serial_products(true);  // as inside the pass's parallel heads
  if (k.kind == KeptLayer::Kind::grouped) {
    ops::AttentionOptions o;
    o.scale = k.scale, o.softcap = k.softcap, o.window = k.window;
    ops::attention_head_probs(out, k.q.data() + int64_t(head) * D, H * D, k.k.data() + int64_t(g) * D, G * D, T, D, o);
    return;
  }
  Mat Q(T, D), K(T, D);
  for (int t = 0; t < T; ++t) {
    std::copy_n(k.q.data() + (int64_t(t) * H + head) * D, D, Q.row(t).data());
    std::copy_n(k.k.data() + (int64_t(t) * G + g) * D, D, K.row(t).data());
  }
  if (k.kind == KeptLayer::Kind::sinks) {
    sink_head_probs(out, nullptr, Q, K, T, k.scale, k.window, k.sinks[head]);
  } else {
    Mat S;
    mla_head_probs(out, S, Q, K, T, k.scale);
  }
}

Mat HeadMaps::head(int layer, int head) const {
  Mat m(tokens, tokens);
  head_into(layer, head, m.data());
  return m;
}

// ---- top-k -----------------------------------------------------------------------------------------
std::vector<std::vector<NextToken>> top_next_tokens(const Mat& logits, int top_k) {
  const int T = int(logits.rows()), V = int(logits.cols());
  const int k = std::clamp(top_k, 0, V);
  std::vector<std::vector<NextToken>> top(static_cast<size_t>(T));
#pragma omp parallel for schedule(static) if (int64_t(T) * V >= (1 << 20))
  for (int t = 0; t < T; ++t) {
    const float* row = logits.data() + int64_t(t) * V;
    // The k largest by a running insertion (k is tiny), then the softmax denominator in double.
    std::vector<int32_t> best;
    auto better = [row](int32_t a, int32_t b) { return row[a] != row[b] ? row[a] > row[b] : a < b; };
    for (int32_t j = 0; j < V; ++j) {
      if (int(best.size()) == k && (k == 0 || !better(j, best.back()))) continue;
      if (int(best.size()) == k) best.pop_back();
      best.insert(std::upper_bound(best.begin(), best.end(), j, better), j);
    }
    const float max = k > 0 ? row[best.front()] : 0.0f;
    // The softmax denominator: vectorised float exponentials, summed in double.
    double sum = 0;
    constexpr int block = 4096;
    for (int j = 0; j < V; j += block) {
      const Eigen::Map<const Eigen::ArrayXf> part(row + j, std::min(block, V - j));
      sum += double((part - max).exp().sum());
    }
    for (int32_t id : best) top[size_t(t)].push_back({id, float(std::exp(double(row[id]) - double(max)) / sum)});
  }
  return top;
}

}  // namespace attnscope::model
