// forward.cpp — the fast forward pass: the ops of model/ops.h (shared with training) in the order of
// SPEC "Real checkpoints", one code path for both families; the family only picks the norm, the
// positions and the MLP (config.h). Cancellable between layers. The linear layers run on packed
// weights (packed_matrix.h), the inference-only product beside ops::linear_forward.
//
// Sections: buffers · one layer · the pass · top-k
#include <algorithm>
#include <cmath>

#include "attnscope/core/error.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/ops.h"

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

void apply_norm(const ModelConfig& c, float* out, const float* x, const Vec& weight, const Vec& bias, int T) {
  if (c.norm == NormKind::layernorm)
    ops::layernorm_forward(out, nullptr, nullptr, x, weight.data(), data_or_null(bias), T, c.d_model, float(c.norm_eps));
  else
    ops::rmsnorm_forward(out, nullptr, x, weight.data(), T, c.d_model, float(c.norm_eps));
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
  return d;
}

// ---- one layer -------------------------------------------------------------------------------------
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
  if (c.qk_norm) {
    ops::rmsnorm_forward(a.q.data(), nullptr, a.q.data(), w.q_norm.data(), T * H, D, float(c.norm_eps));
    ops::rmsnorm_forward(a.k.data(), nullptr, a.k.data(), w.k_norm.data(), T * G, D, float(c.norm_eps));
  }
  const double theta = c.layer_rope_theta[size_t(layer)];
  if (c.positions == PositionKind::rotary && theta > 0) {
    ops::rope_forward(a.q.data(), 1, T, H, D, float(theta), 0);
    ops::rope_forward(a.k.data(), 1, T, G, D, float(theta), 0);
  }
  ops::attention_forward_with(a.att.data(), probs, a.q.data(), a.k.data(), a.v.data(), 1, T, H, G, D,
                              attention_options(c, layer));
  linear_forward_packed(a.proj.data(), a.att.data(), w.wo, data_or_null(w.bo), T);
  if (c.sandwich_norms) ops::rmsnorm_forward(a.proj.data(), nullptr, a.proj.data(), w.post_attn_norm.data(), T, C, float(c.norm_eps));
  ops::residual_forward(a.x.data(), a.x.data(), a.proj.data(), T * C);
}

void mlp_forward(const ModelConfig& c, const LayerWeights& w, Activations& a, int T) {
  const int C = c.d_model, F = c.ffn_dim;
  // 2. MLP: norm → up (and gate) → gelu_new, SwiGLU or GeGLU → down (→ Gemma's post-MLP norm) → residual
  apply_norm(c, a.h.data(), a.x.data(), w.norm2_weight, w.norm2_bias, T);
  linear_forward_packed(a.up.data(), a.h.data(), w.w_up, data_or_null(w.b_up), T);
  if (c.mlp == MlpKind::gelu_new) {
    gelu_new_inplace(a.up.data(), int64_t(T) * F);
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
  ops::residual_forward(a.x.data(), a.x.data(), a.proj.data(), T * C);
}

}  // namespace

// ---- the pass --------------------------------------------------------------------------------------
ForwardResult forward(const Model& model, std::span<const int32_t> ids, const ForwardOptions& options) {
  const ModelConfig& c = model.config;
  check_forward_input(c, ids);
  const ModelWeights& w = *model.weights;
  const int T = int(ids.size()), C = c.d_model, H = c.heads, L = c.layers;
  ForwardResult r;
  r.layers = L, r.heads = H, r.kv_heads = c.kv_heads, r.tokens = T, r.vocab = c.vocab;
  r.attentions.resize(size_t(int64_t(L) * H * T * T));
  Activations a(T, C, H * c.head_dim, c.kv_heads * c.head_dim, c.ffn_dim);

  // x₀ = E[ids] (+ wpe[0..T))
  for (int t = 0; t < T; ++t) w.token_embedding.row(ids[size_t(t)], a.x.data() + int64_t(t) * C);
  if (c.embedding_scale != 1.0)  // Gemma: × √hidden_size (in the embedding's dtype), a float32 product
    Eigen::Map<Eigen::ArrayXf>(a.x.data(), int64_t(T) * C) *= float(c.embedding_scale);
  if (c.positions == PositionKind::learned)
    ops::residual_forward(a.x.data(), a.x.data(), w.position_embedding.data(), T * C);

  for (int l = 0; l < L; ++l) {
    check_cancel(options.cancel);
    float* probs = r.attentions.data() + int64_t(l) * H * T * T;
    layer_forward(c, w.layers[size_t(l)], model.kv(l), a, probs, T, l);
    if (options.detail_layer == l) r.detail = make_detail(c, a, probs, l, T);
    mlp_forward(c, w.layers[size_t(l)], a, T);
  }
  check_cancel(options.cancel);
  apply_norm(c, a.h.data(), a.x.data(), w.final_norm_weight, w.final_norm_bias, T);
  r.logits.resize(T, c.vocab);
  linear_forward_packed(r.logits.data(), a.h.data(), w.output_embedding(), nullptr, T);
  if (c.final_softcap > 0) {  // Gemma 2: logits → tanh(z/cap)·cap
    const float cap = float(c.final_softcap);
    r.logits.array() = (r.logits.array() / cap).tanh() * cap;
  }
  r.top = top_next_tokens(r.logits, options.top_k);
  return r;
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
