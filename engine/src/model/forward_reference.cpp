// forward_reference.cpp — the plain-loop oracle of forward.cpp: SPEC "Real checkpoints" written as
// loops over indices, in double accumulators, with no Eigen product and no shared op, so that the fast
// pass and this one can only agree by both following the formulas.
//
// Sections: checks shared with the fast pass · small formulas · the pass
#include <algorithm>
#include <cmath>
#include <functional>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/model/forward.h"

namespace attnscope::model {

// ---- checks shared with the fast pass -------------------------------------------------------------
namespace {
// A linear/mixer layer's kind, as the on-demand mode's refusal names it.
std::string mixer_kind(const ModelConfig& c) {
  if (c.trained.active) return "an attnscope-trained linear";
  return c.mamba.active() ? "a Mamba-2" : "a Gated DeltaNet";
}
// Why `tokens` tokens' whole attention stack does not fit ("" when it does).
std::string stack_limit_problem(const ModelConfig& c, int tokens) {
  const int64_t T = tokens;
  if (T > limits::max_tokens)
    return "the input has " + std::to_string(T) + " tokens; attnscope's limit is " + std::to_string(limits::max_tokens) +
           " (docs/math.md, \"Limits\")";
  int64_t cells = int64_t(c.layers) * c.heads * T * T;
  for (int l = 0; l < c.layers; ++l)  // a linear layer's matrices beside its zero slot (Qwen3-Next)
    if (c.is_linear_layer(l)) cells += int64_t(c.mamba.active() ? c.mamba.heads : c.linear.value_heads) * T * T;
  const int widest = std::max({c.heads, c.linear.active() ? c.linear.value_heads : 0, c.mamba.heads});
  if (int64_t(widest) * T * T <= limits::max_attention_cells && cells <= max_model_attention_cells) return "";
  return "the attentions of " + std::to_string(T) + " tokens (" + std::to_string(c.layers) + " layers × " +
         std::to_string(widest) + " heads × T²) exceed attnscope's limit of " +
         std::to_string(max_model_attention_cells) + " values; use fewer tokens";
}
}  // namespace

bool stack_fits(const ModelConfig& c, int tokens) { return stack_limit_problem(c, tokens).empty(); }

void check_forward_input(const ModelConfig& c, std::span<const int32_t> ids, AttentionKeep keep) {
  const int64_t T = int64_t(ids.size());
  require(T >= 1, "the input has no tokens");
  if (keep == AttentionKeep::on_demand) {
    for (int l = 0; l < c.layers; ++l)
      require(!c.is_linear_layer(l), "long inputs (attention computed per head on demand) need softmax layers; layer " +
                                         std::to_string(l) + " is " + mixer_kind(c) +
                                         " layer, whose maps need the whole stack: use at most " +
                                         std::to_string(limits::max_tokens) + " tokens with this model");
    require(T <= max_on_demand_tokens, "the input has " + std::to_string(T) + " tokens; attnscope's limit for long inputs is " +
                                           std::to_string(max_on_demand_tokens) + " (docs/math.md, \"Limits\")");
    const int64_t kept = on_demand_kept_bytes(c, int(T));
    require(kept <= max_on_demand_bytes, "the queries and keys kept for " + std::to_string(T) + " tokens (" +
                                             std::to_string(c.layers) + " layers) take " + byte_size_text(kept) +
                                             ", above attnscope's limit of " + byte_size_text(max_on_demand_bytes) +
                                             " for long inputs; use fewer tokens");
  } else {
    const std::string problem = stack_limit_problem(c, int(T));
    require(problem.empty(), problem);
  }
  // Dynamic NTK scaling exists for inputs beyond max_position_embeddings (its base grows with T).
  require(T <= c.max_positions || (c.positions == PositionKind::rotary && c.rope_scaling.type == RopeType::dynamic),
          "the input has " + std::to_string(T) + " tokens, more than this model's " + std::to_string(c.max_positions) +
              " positions (max_position_embeddings)");
  for (size_t i = 0; i < ids.size(); ++i)
    require(ids[i] >= 0 && ids[i] < c.vocab, "token id " + std::to_string(ids[i]) + " at position " +
                                                 std::to_string(i) + " is outside the vocabulary (0 to " +
                                                 std::to_string(c.vocab - 1) + ")");
}

// ---- small formulas ---------------------------------------------------------------------------------
namespace {

using Rows = std::vector<std::vector<double>>;  // [rows][cols]

// y = x·Wᵀ + b     x [T, in], W [out, in], b [out] or empty → [T, out]
Rows linear(const Rows& x, const PackedMatrix& packed, const Vec& b) {
  const Mat w = packed.to_mat();
  Rows y(x.size(), std::vector<double>(size_t(w.rows())));
  for (size_t t = 0; t < x.size(); ++t)
    for (Eigen::Index o = 0; o < w.rows(); ++o) {
      double s = b.size() ? double(b[o]) : 0.0;
      for (Eigen::Index i = 0; i < w.cols(); ++i) s += x[t][size_t(i)] * double(w(o, i));
      y[t][size_t(o)] = s;
    }
  return y;
}

// LayerNorm (weight and bias) or RMSNorm (weight only) of each row.
Rows norm(const Rows& x, const Vec& weight, const Vec& bias, NormKind kind, double eps) {
  Rows y = x;
  if (weight.size() == 0) return y;  // OLMo 2: no norm before attention or the MLP
  for (auto& row : y) {
    const double n = double(row.size());
    double mean = 0;
    if (kind == NormKind::layernorm) {
      for (double v : row) mean += v;
      mean /= n;
    }
    double var = 0;
    for (double v : row) var += (v - mean) * (v - mean);
    var /= n;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (size_t i = 0; i < row.size(); ++i)
      row[i] = (row[i] - mean) * inv * double(weight[Eigen::Index(i)]) + (bias.size() ? double(bias[Eigen::Index(i)]) : 0.0);
  }
  return y;
}

// Rotate-half RoPE on each head of x [T, heads·D] in place: dimension i < R/2 pairs with i + R/2 of the
// rotated part R = 2·|f.inv_freq| (the rest unrotated), angle = t·θ'_i (float32, as Hugging Face), cos and
// sin × the attention factor; x' = x·cos + rotate_half(x)·sin in double.
void rope(Rows& x, int heads, int D, const RopeFrequencies& f) {
  const int half = int(f.inv_freq.size());
  for (size_t t = 0; t < x.size(); ++t)
    for (int h = 0; h < heads; ++h)
      for (int i = 0; i < half; ++i) {
        const float angle = float(t) * f.inv_freq[size_t(i)];
        const double c = std::cos(double(angle)) * f.attention_factor, s = std::sin(double(angle)) * f.attention_factor;
        double& a = x[t][size_t(h * D + i)];
        double& b = x[t][size_t(h * D + i + half)];
        const double a0 = a, b0 = b;
        a = a0 * c - b0 * s;
        b = b0 * c + a0 * s;
      }
}

// RMSNorm of each D-wide head of x [T, heads·D] in place (the q/k norms), weight [D].
void head_norm(Rows& x, int heads, int D, const Vec& weight, double eps) {
  for (auto& row : x)
    for (int h = 0; h < heads; ++h) {
      double ms = 0;
      for (int d = 0; d < D; ++d) ms += row[size_t(h * D + d)] * row[size_t(h * D + d)];
      const double inv = 1.0 / std::sqrt(ms / D + eps);
      for (int d = 0; d < D; ++d) row[size_t(h * D + d)] *= inv * double(weight[d]);
    }
}

double gelu_new(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }  // GPT-NeoX's "gelu"


Mat to_mat(const Rows& r) {
  Mat m(Eigen::Index(r.size()), r.empty() ? 0 : Eigen::Index(r[0].size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i)
    for (Eigen::Index j = 0; j < m.cols(); ++j) m(i, j) = float(r[size_t(i)][size_t(j)]);
  return m;
}

// Head h's columns of x [T, heads·D] → [T, D].
Mat head_of(const Rows& x, int h, int D) {
  Mat m(Eigen::Index(x.size()), D);
  for (size_t t = 0; t < x.size(); ++t)
    for (int d = 0; d < D; ++d) m(Eigen::Index(t), d) = float(x[t][size_t(h * D + d)]);
  return m;
}

// ---- DeepSeek: MLA and the mixture of experts, as loops ---------------------------------------------
// Columns [from, from + n) of each row.
Rows columns(const Rows& x, size_t from, size_t n) {
  Rows y(x.size());
  for (size_t t = 0; t < x.size(); ++t) y[t].assign(x[t].begin() + long(from), x[t].begin() + long(from + n));
  return y;
}

// The MLA block's output [T, C] (before the residual add); probabilities into r.attentions, the detail
// when asked. Interleaved RoPE: pair (2i, 2i+1) of the rope part, times YaRN's attention factor.
Rows mla_reference(const ModelConfig& c, const LayerWeights& lw, const Rows& h, int l, ForwardResult& r,
                   LayerDetail* detail) {
  const MlaConfig& m = c.mla;
  const int T = int(h.size()), H = c.heads, N = m.nope_dim, R = m.rope_dim, Dv = m.v_dim, Dqk = N + R;
  const size_t rank = size_t(m.kv_lora_rank);
  Rows q;
  if (m.q_lora_rank) q = linear(norm(linear(h, lw.mla.q_a, Vec()), lw.mla.q_a_norm, Vec(), NormKind::rmsnorm, MlaConfig::latent_norm_eps), lw.mla.q_b, Vec());
  else q = linear(h, lw.wq, Vec());
  const Rows ckv = linear(h, lw.mla.kv_a, Vec());
  const Rows latent = norm(columns(ckv, 0, rank), lw.mla.kv_a_norm, Vec(), NormKind::rmsnorm, MlaConfig::latent_norm_eps);
  const Rows kv = linear(latent, lw.mla.kv_b, Vec());
  Rows kpe = columns(ckv, rank, size_t(R));
  const std::vector<float> inv_freq = m.inv_freq(c.rope_theta);
  auto rotate = [&](std::vector<double>& row, size_t at, int t) {
    for (int i = 0; i < R / 2; ++i) {
      const float angle = float(t) * inv_freq[size_t(i)];
      const double cs = std::cos(double(angle)) * m.attention_factor, sn = std::sin(double(angle)) * m.attention_factor;
      const double a = row[at + size_t(2 * i)], b = row[at + size_t(2 * i + 1)];
      row[at + size_t(2 * i)] = a * cs - b * sn;
      row[at + size_t(2 * i + 1)] = b * cs + a * sn;
    }
  };
  for (int t = 0; t < T; ++t) {
    for (int head = 0; head < H; ++head) rotate(q[size_t(t)], size_t(head * Dqk + N), t);
    rotate(kpe[size_t(t)], 0, t);
  }
  // k_h = [kv's key part of head h ; kpe], v_h = kv's value part of head h
  auto key = [&](int t, int head, int d) {
    return d < N ? kv[size_t(t)][size_t(head * (N + Dv) + d)] : kpe[size_t(t)][size_t(d - N)];
  };
  auto value = [&](int t, int head, int d) { return kv[size_t(t)][size_t(head * (N + Dv) + N + d)]; };
  Rows concat(size_t(T), std::vector<double>(size_t(H * Dv), 0.0));
  for (int head = 0; head < H; ++head) {
    Mat scores(T, T), probs(T, T), qh(T, Dqk), kh(T, Dqk), vh(T, Dv);
    for (int i = 0; i < T; ++i) {
      for (int d = 0; d < Dqk; ++d) qh(i, d) = float(q[size_t(i)][size_t(head * Dqk + d)]), kh(i, d) = float(key(i, head, d));
      for (int d = 0; d < Dv; ++d) vh(i, d) = float(value(i, head, d));
      std::vector<double> s(size_t(T), -INFINITY);
      double max = -INFINITY;
      for (int j = 0; j <= i; ++j) {
        double dot = 0;
        for (int d = 0; d < Dqk; ++d) dot += q[size_t(i)][size_t(head * Dqk + d)] * key(j, head, d);
        s[size_t(j)] = dot * m.softmax_scale;
        max = std::max(max, s[size_t(j)]);
      }
      double sum = 0;
      for (int j = 0; j <= i; ++j) sum += std::exp(s[size_t(j)] - max);
      for (int j = 0; j < T; ++j) {
        const double p = j <= i ? std::exp(s[size_t(j)] - max) / sum : 0.0;
        scores(i, j) = float(s[size_t(j)]);
        probs(i, j) = float(p);
        r.attentions[size_t(((int64_t(l) * H + head) * T + i) * T + j)] = float(p);
        if (j <= i)
          for (int d = 0; d < Dv; ++d) concat[size_t(i)][size_t(head * Dv + d)] += p * value(j, head, d);
      }
    }
    if (detail) {
      detail->scores.push_back(scores);
      detail->probs.push_back(probs);
      detail->q.push_back(qh);
      detail->k.push_back(kh);
      detail->v.push_back(vh);
      detail->head_out.push_back(head_of(concat, head, Dv));
    }
  }
  const Rows attn = linear(concat, lw.wo, Vec());
  if (detail) {
    detail->layer = l;
    detail->input = to_mat(h);
    detail->concat = to_mat(concat);
    detail->output = to_mat(attn);
    detail->latent = to_mat(latent);
    detail->rope_key = to_mat(kpe);  // rotated above
  }
  return attn;
}

Rows swiglu_reference(const Rows& x, const SwigluWeights& m) {
  Rows hidden = linear(x, m.up, Vec());
  const Rows gate = linear(x, m.gate, Vec());
  for (size_t t = 0; t < hidden.size(); ++t)
    for (size_t f = 0; f < hidden[t].size(); ++f) hidden[t][f] *= silu(gate[t][f]);
  return linear(hidden, m.down, Vec());
}

// The MoE MLP's output [T, C] for h2 = norm2(x): every expert computed for every token, the routing
// weights zero except for the chosen ones (the same sum as the routed computation).
Rows moe_reference(const ModelConfig& c, const LayerWeights& lw, const Rows& h2) {
  const MoeConfig& e = c.moe;
  const int E = e.experts, per = E / e.groups;
  const Rows logits = linear(h2, lw.moe.router, Vec());
  Rows out = e.shared > 0 ? swiglu_reference(h2, lw.moe.shared) : Rows(h2.size(), std::vector<double>(h2[0].size(), 0.0));
  if (e.shared_gate) {  // Qwen3-Next: σ(h·w_gate) × shared_expert(h)
    const Rows shared = swiglu_reference(h2, lw.moe.shared), gate = linear(h2, lw.moe.shared_gate, Vec());
    for (size_t t = 0; t < h2.size(); ++t)
      for (size_t i = 0; i < out[t].size(); ++i) out[t][i] = shared[t][i] / (1.0 + std::exp(-gate[t][0]));
  }
  std::vector<Rows> expert_out;
  for (int x = 0; x < E; ++x) expert_out.push_back(swiglu_reference(h2, lw.moe.experts[size_t(x)]));
  for (size_t t = 0; t < h2.size(); ++t) {
    if (e.softmax_over_topk) {  // GraniteMoe: the k largest logits (lower index first on a tie), softmax over them
      std::vector<int> chosen;
      for (int k = 0; k < e.top_k; ++k) {
        int b = -1;
        for (int x = 0; x < E; ++x)
          if (std::find(chosen.begin(), chosen.end(), x) == chosen.end() && (b < 0 || logits[t][size_t(x)] > logits[t][size_t(b)]))
            b = x;
        chosen.push_back(b);
      }
      double sum = 0;
      for (int x : chosen) sum += std::exp(logits[t][size_t(x)] - logits[t][size_t(chosen[0])]);
      for (int x : chosen) {
        const double weight = std::exp(logits[t][size_t(x)] - logits[t][size_t(chosen[0])]) / sum;
        for (size_t i = 0; i < out[t].size(); ++i) out[t][i] += weight * expert_out[size_t(x)][t][i];
      }
      continue;
    }
    std::vector<double> score(static_cast<size_t>(E)), choice(static_cast<size_t>(E));
    double max = -INFINITY, sum = 0;
    for (int x = 0; x < E; ++x) max = std::max(max, logits[t][size_t(x)]);
    for (int x = 0; x < E; ++x) {
      score[size_t(x)] = e.sigmoid ? 1.0 / (1.0 + std::exp(-logits[t][size_t(x)])) : std::exp(logits[t][size_t(x)] - max);
      sum += score[size_t(x)];
    }
    for (int x = 0; x < E; ++x) {
      if (!e.sigmoid) score[size_t(x)] /= sum;
      choice[size_t(x)] = score[size_t(x)] + (e.correction_bias ? double(lw.moe.correction_bias[x]) : 0.0);
    }
    // the index of the largest value not yet taken (the lower index on a tie)
    auto best = [](const std::vector<double>& v, const std::vector<bool>& taken) {
      int b = -1;
      for (size_t i = 0; i < v.size(); ++i)
        if (!taken[i] && (b < 0 || v[i] > v[size_t(b)])) b = int(i);
      return b;
    };
    if (e.method != TopkMethod::greedy) {
      std::vector<double> group(size_t(e.groups));
      for (int g = 0; g < e.groups; ++g) {
        double first = -INFINITY, second = -INFINITY;
        for (int x = g * per; x < (g + 1) * per; ++x) {
          if (choice[size_t(x)] > first) second = first, first = choice[size_t(x)];
          else if (choice[size_t(x)] > second) second = choice[size_t(x)];
        }
        group[size_t(g)] = e.method == TopkMethod::noaux_tc ? first + second : first;
      }
      std::vector<bool> taken(size_t(e.groups), false);
      for (int k = 0; k < e.topk_groups; ++k) taken[size_t(best(group, taken))] = true;
      for (int x = 0; x < E; ++x)
        if (!taken[size_t(x / per)]) choice[size_t(x)] = 0.0;
    }
    std::vector<bool> taken(size_t(E), false);
    std::vector<int> chosen;
    double chosen_sum = 0;
    for (int k = 0; k < e.top_k; ++k) {
      const int x = best(choice, taken);
      taken[size_t(x)] = true;
      chosen.push_back(x);
      chosen_sum += score[size_t(x)];
    }
    for (int x : chosen) {
      const double weight = (e.norm_topk ? score[size_t(x)] / (chosen_sum + 1e-20) : score[size_t(x)]) * e.routed_scale;
      for (size_t i = 0; i < out[t].size(); ++i) out[t][i] += weight * expert_out[size_t(x)][t][i];
    }
  }
  return out;
}

// Qwen3-Next's Gated DeltaNet block [T, C] on h = norm1(x) (modeling_qwen3_next.py Qwen3NextGatedDeltaNet,
// torch_recurrent_gated_delta_rule), as loops in double: the conv over [q | k | v], SiLU, β = σ(b),
// g = −exp(A_log)·softplus(a + dt_bias), q and k L2-normalised (q × 1/√dk), per value head the state
// S [dk, dv]: S ← e^g·S; S ← S + k·(β·(v − Sᵀk))ᵀ; o = Sᵀq. Each head's matrix M is the same recurrence run
// on the identity as values (the rule is linear in v: column s of M is the output for v = e_s), not
// linear_attention.h's construction. maps [Hv, T, T] receives M.
Rows deltanet_reference(const ModelConfig& c, const LayerWeights& lw, const Rows& h, float* maps, LayerDetail* detail) {
  const LinearAttentionConfig& la = c.linear;
  const GatedDeltaNetWeights& w = lw.deltanet;
  const int T = int(h.size()), Hk = la.key_heads, Hv = la.value_heads, dk = la.key_dim, dv = la.value_dim;
  const int r = Hv / Hk, Kd = Hk * dk, K = la.conv_kernel;
  const Rows pq = linear(h, w.wq, Vec()), pk = linear(h, w.wk, Vec()), pv = linear(h, w.wv, Vec());
  const Rows z = linear(h, w.wz, Vec()), b = linear(h, w.wb, Vec()), a = linear(h, w.wa, Vec());
  // channel ch of token t before the convolution: q (Kd), k (Kd), then v
  auto channel = [&](int t, int ch) {
    return ch < Kd ? pq[size_t(t)][size_t(ch)] : ch < 2 * Kd ? pk[size_t(t)][size_t(ch - Kd)] : pv[size_t(t)][size_t(ch - 2 * Kd)];
  };
  Rows conv(size_t(T), std::vector<double>(size_t(la.conv_dim()), 0.0));
  for (int t = 0; t < T; ++t)
    for (int ch = 0; ch < la.conv_dim(); ++ch) {
      double s = 0;
      for (int j = 0; j < K; ++j)
        if (t + j - (K - 1) >= 0) s += double(w.conv(ch, j)) * channel(t + j - (K - 1), ch);
      conv[size_t(t)][size_t(ch)] = silu(s);
    }
  Rows core(size_t(T), std::vector<double>(size_t(Hv * dv), 0.0));
  if (detail) {
    detail->linear = true;
    detail->beta.resize(Hv, T), detail->decay.resize(Hv, T);
  }
  for (int j = 0; j < Hv; ++j) {
    const int kh = j / r;
    Rows q(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(dk), 0.0)), k = q;
    std::vector<double> beta(static_cast<size_t>(T), 0.0), g(static_cast<size_t>(T), 0.0);
    for (int t = 0; t < T; ++t) {
      double sq = 0, sk = 0;
      for (int i = 0; i < dk; ++i) {
        sq += conv[size_t(t)][size_t(kh * dk + i)] * conv[size_t(t)][size_t(kh * dk + i)];
        sk += conv[size_t(t)][size_t(Kd + kh * dk + i)] * conv[size_t(t)][size_t(Kd + kh * dk + i)];
      }
      for (int i = 0; i < dk; ++i) {
        q[size_t(t)][size_t(i)] = conv[size_t(t)][size_t(kh * dk + i)] / std::sqrt(sq + 1e-6) / std::sqrt(double(dk));
        k[size_t(t)][size_t(i)] = conv[size_t(t)][size_t(Kd + kh * dk + i)] / std::sqrt(sk + 1e-6);
      }
      beta[size_t(t)] = 1.0 / (1.0 + std::exp(-b[size_t(t)][size_t(j)]));
      const double x = a[size_t(t)][size_t(j)] + double(w.dt_bias[j]);
      g[size_t(t)] = -std::exp(double(w.a_log[j])) * (x > 20 ? x : std::log1p(std::exp(x)));
    }
    // the recurrence with values of width n, value(t, e): outputs [T, n]
    auto run = [&](int n, const std::function<double(int, int)>& value) {
      std::vector<double> S(size_t(dk * n), 0.0);
      Rows out(size_t(T), std::vector<double>(size_t(n), 0.0));
      for (int t = 0; t < T; ++t) {
        const double alpha = std::exp(g[size_t(t)]);
        for (double& e : S) e *= alpha;
        for (int e = 0; e < n; ++e) {
          double mem = 0;
          for (int i = 0; i < dk; ++i) mem += S[size_t(i * n + e)] * k[size_t(t)][size_t(i)];
          const double delta = (value(t, e) - mem) * beta[size_t(t)];
          for (int i = 0; i < dk; ++i) S[size_t(i * n + e)] += k[size_t(t)][size_t(i)] * delta;
          for (int i = 0; i < dk; ++i) out[size_t(t)][size_t(e)] += S[size_t(i * n + e)] * q[size_t(t)][size_t(i)];
        }
      }
      return out;
    };
    const Rows o = run(dv, [&](int t, int e) { return conv[size_t(t)][size_t(2 * Kd + j * dv + e)]; });
    const Rows M = run(T, [](int t, int e) { return t == e ? 1.0 : 0.0; });
    for (int t = 0; t < T; ++t) {
      for (int s = 0; s < T; ++s) maps[(int64_t(j) * T + t) * T + s] = float(M[size_t(t)][size_t(s)]);
      for (int e = 0; e < dv; ++e) core[size_t(t)][size_t(j * dv + e)] = o[size_t(t)][size_t(e)];
    }
    if (detail) {
      detail->q.push_back(to_mat(q)), detail->k.push_back(to_mat(k));
      detail->v.push_back(head_of(columns(conv, size_t(2 * Kd), size_t(Hv * dv)), j, dv));
      detail->probs.push_back(to_mat(M)), detail->head_out.push_back(head_of(core, j, dv));
      for (int t = 0; t < T; ++t) detail->beta(j, t) = float(beta[size_t(t)]), detail->decay(j, t) = float(g[size_t(t)]);
    }
  }
  // Qwen3NextRMSNormGated over each head's dv values, then out_proj
  for (auto& row : core)
    for (int j = 0; j < Hv; ++j) {
      double ms = 0;
      for (int e = 0; e < dv; ++e) ms += row[size_t(j * dv + e)] * row[size_t(j * dv + e)];
      const double inv = 1.0 / std::sqrt(ms / dv + c.norm_eps);
      for (int e = 0; e < dv; ++e) row[size_t(j * dv + e)] *= inv * double(w.norm[e]);
    }
  for (size_t t = 0; t < core.size(); ++t)
    for (int e = 0; e < Hv * dv; ++e) core[t][size_t(e)] *= silu(z[t][size_t(e)]);
  const Rows out = linear(core, w.out, Vec());
  if (detail) {
    detail->input = to_mat(h);
    detail->concat = to_mat(core);
    detail->output = to_mat(out);
  }
  return out;
}

// gpt-oss's MLP [T, C] for h2 = norm2(x) (modeling_gpt_oss.py GptOssTopKRouter and GptOssExperts, their
// inference branch): every expert on every token, the routing weights zero but for the top_k chosen
// (softmax over their router logits); each expert's values by ExpertMatrix's plain operator() (MXFP4:
// std::ldexp of the FP4 value), the clamped SwiGLU in double.
Rows gpt_oss_reference(const ModelConfig& c, const LayerWeights& lw, const Rows& h2) {
  const GptOssMoeWeights& m = lw.oss;
  const int E = c.oss.experts, F = c.ffn_dim;
  const Rows logits = linear(h2, m.router, m.router_bias);
  Rows out(h2.size(), std::vector<double>(h2[0].size(), 0.0));
  auto product = [](const std::vector<double>& in, const ExpertMatrix& w, const float* bias) {
    std::vector<double> y(size_t(w.rows()));
    for (int64_t o = 0; o < w.rows(); ++o) {
      double s = double(bias[o]);
      for (int64_t i = 0; i < w.cols(); ++i) s += in[size_t(i)] * double(w(o, i));
      y[size_t(o)] = s;
    }
    return y;
  };
  for (size_t t = 0; t < h2.size(); ++t) {
    std::vector<bool> taken(size_t(E), false);
    std::vector<int> chosen;
    for (int k = 0; k < c.oss.top_k; ++k) {
      int best = -1;
      for (int x = 0; x < E; ++x)
        if (!taken[size_t(x)] && (best < 0 || logits[t][size_t(x)] > logits[t][size_t(best)])) best = x;
      taken[size_t(best)] = true;
      chosen.push_back(best);
    }
    double max = -INFINITY, sum = 0;
    for (int x : chosen) max = std::max(max, logits[t][size_t(x)]);
    for (int x : chosen) sum += std::exp(logits[t][size_t(x)] - max);
    for (int x : chosen) {
      const double weight = std::exp(logits[t][size_t(x)] - max) / sum;
      const std::vector<double> gate_up = product(h2[t], m.gate_up[size_t(x)], m.gate_up_bias.row(x).data());
      std::vector<double> hidden(static_cast<size_t>(F), 0.0);
      for (int f = 0; f < F; ++f) {
        const double g = std::min(gate_up[size_t(2 * f)], c.oss.limit);
        const double u = std::clamp(gate_up[size_t(2 * f + 1)], -c.oss.limit, c.oss.limit);
        hidden[size_t(f)] = (u + 1) * g / (1 + std::exp(-g * c.oss.alpha));
      }
      const std::vector<double> y = product(hidden, m.down[size_t(x)], m.down_bias.row(x).data());
      for (size_t i = 0; i < y.size(); ++i) out[t][i] += weight * y[i];
    }
  }
  return out;
}

// x += scale·y, row by row: a residual add.
void add_residual(Rows& x, const Rows& y, double scale = 1.0) {
  for (size_t t = 0; t < x.size(); ++t)
    for (size_t i = 0; i < x[t].size(); ++i) x[t][i] += y[t][i] * scale;
}

// What follows a Gated DeltaNet or MLA mixer: its output's residual add, then norm2 and the dense SwiGLU
// or MoE MLP with its residual add.
// Granite 4.0-H's Mamba-2 block [T, C] on h = norm1(x) (modeling_granitemoehybrid.py GraniteMoeHybridMambaLayer,
// its cached step token by token), as loops in double: in_proj's z, xBC, dt; the conv over xBC with its bias,
// SiLU; Δ = softplus(dt + dt_bias), a = exp(Δ·A), A = −exp(A_log); per head j (B, C of group j / (Hm / groups))
// the state S [P, N]: S ← a·S + Δ·x·Bᵀ, y = S·C + D·x; then y·silu(z), RMSNorm over all I values ·w, out_proj.
// Each head's matrix M is the same recurrence run on the identity as values with D = 0 (the SSD is linear in x),
// not linear_attention.h's construction. maps [Hm, T, T] receives M.
Rows mamba2_reference(const ModelConfig& c, const LayerWeights& lw, const Rows& h, float* maps, LayerDetail* detail) {
  const Mamba2Config& mc = c.mamba;
  const Mamba2Weights& w = lw.mamba;
  const int T = int(h.size()), Hm = mc.heads, P = mc.head_dim, N = mc.state, I = mc.inner(), CD = mc.conv_dim();
  const int K = mc.conv_kernel, per_group = Hm / mc.groups;
  const Rows z = linear(h, w.wz, Vec()), xbc = linear(h, w.wxbc, Vec()), dt = linear(h, w.wdt, Vec());
  Rows conv(size_t(T), std::vector<double>(size_t(CD), 0.0));
  for (int t = 0; t < T; ++t)
    for (int ch = 0; ch < CD; ++ch) {
      double s = w.conv_bias.size() > 0 ? double(w.conv_bias[ch]) : 0.0;
      for (int j = 0; j < K; ++j)
        if (t + j - (K - 1) >= 0) s += double(w.conv(ch, j)) * xbc[size_t(t + j - (K - 1))][size_t(ch)];
      conv[size_t(t)][size_t(ch)] = silu(s);
    }
  Rows y(size_t(T), std::vector<double>(size_t(I), 0.0));
  if (detail) {
    detail->linear = true;
    detail->step.resize(Hm, T), detail->decay.resize(Hm, T);
  }
  for (int j = 0; j < Hm; ++j) {
    const int g = j / per_group;
    const double A = -std::exp(double(w.a_log[j]));
    std::vector<double> delta(size_t(T), 0.0);
    for (int t = 0; t < T; ++t) {
      const double x = dt[size_t(t)][size_t(j)] + double(w.dt_bias[j]);
      delta[size_t(t)] = x > 20 ? x : std::log1p(std::exp(x));
    }
    auto B = [&](int t, int n) { return conv[size_t(t)][size_t(I + g * N + n)]; };
    auto Cq = [&](int t, int n) { return conv[size_t(t)][size_t(I + mc.groups * N + g * N + n)]; };
    // the scan with values of width n, value(t, e) and skip d: outputs [T, n]
    auto run = [&](int n, const std::function<double(int, int)>& value, double d) {
      std::vector<double> S(size_t(n) * N, 0.0);
      Rows out(size_t(T), std::vector<double>(size_t(n), 0.0));
      for (int t = 0; t < T; ++t) {
        const double a = std::exp(delta[size_t(t)] * A);
        for (int e = 0; e < n; ++e) {
          const double v = value(t, e);
          double o = 0;
          for (int i = 0; i < N; ++i) {
            double& s = S[size_t(e) * N + size_t(i)];
            s = a * s + delta[size_t(t)] * v * B(t, i);
            o += s * Cq(t, i);
          }
          out[size_t(t)][size_t(e)] = o + d * v;
        }
      }
      return out;
    };
    const Rows o = run(P, [&](int t, int e) { return conv[size_t(t)][size_t(j * P + e)]; }, double(w.d_skip[j]));
    const Rows M = run(T, [](int t, int e) { return t == e ? 1.0 : 0.0; }, 0.0);
    for (int t = 0; t < T; ++t) {
      for (int s = 0; s < T; ++s) maps[(int64_t(j) * T + t) * T + s] = float(M[size_t(t)][size_t(s)]);
      for (int e = 0; e < P; ++e) y[size_t(t)][size_t(j * P + e)] = o[size_t(t)][size_t(e)];
    }
    if (detail) {
      Rows q(size_t(T), std::vector<double>(size_t(N), 0.0)), k = q;
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < N; ++i) q[size_t(t)][size_t(i)] = Cq(t, i), k[size_t(t)][size_t(i)] = B(t, i);
      detail->q.push_back(to_mat(q)), detail->k.push_back(to_mat(k));
      detail->v.push_back(head_of(columns(conv, 0, size_t(I)), j, P));
      detail->probs.push_back(to_mat(M)), detail->head_out.push_back(head_of(y, j, P));
      for (int t = 0; t < T; ++t)
        detail->step(j, t) = float(delta[size_t(t)]), detail->decay(j, t) = float(delta[size_t(t)] * A);
    }
  }
  // GraniteMoeHybridRMSNormGated: y·silu(z), then the RMS over all I values ·w
  for (int t = 0; t < T; ++t) {
    std::vector<double>& row = y[size_t(t)];
    double ms = 0;
    for (int e = 0; e < I; ++e) {
      row[size_t(e)] *= silu(z[size_t(t)][size_t(e)]);
      ms += row[size_t(e)] * row[size_t(e)];
    }
    const double inv = 1.0 / std::sqrt(ms / I + c.norm_eps);
    for (int e = 0; e < I; ++e) row[size_t(e)] *= inv * double(w.norm[e]);
  }
  const Rows out = linear(y, w.out, Vec());
  if (detail) {
    detail->input = to_mat(h);
    detail->concat = to_mat(y);
    detail->output = to_mat(out);
  }
  return out;
}

void add_mixer_and_swiglu_mlp(const ModelConfig& c, const LayerWeights& lw, int l, const Rows& mixer, Rows& x) {
  add_residual(x, mixer, c.residual_scale);
  const Rows h2 = norm(x, lw.norm2_weight, lw.norm2_bias, c.norm, c.norm_eps);
  add_residual(x,
               c.moe.is_moe_layer(l) ? moe_reference(c, lw, h2)
                                     : swiglu_reference(h2, SwigluWeights{lw.w_gate, lw.w_up, lw.w_down}),
               c.residual_scale);
}

}  // namespace

// ---- the pass ----------------------------------------------------------------------------------------
ForwardResult forward_reference(const Model& model, std::span<const int32_t> ids, const ForwardOptions& options) {
  // A model attnscope trained without a softmax has its reference in the trainer (train::Model::forward, checked
  // against PyTorch autograd), not here.
  require(!model.config.trained.active,
          "the plain-loop reference has no layers of attnscope_linear; its reference is the trainer's forward");
  const ModelConfig& c = model.config;
  check_forward_input(c, ids);
  const ModelWeights& w = *model.weights;
  const int T = int(ids.size()), C = c.d_model, H = c.heads, G = c.kv_heads, D = c.head_dim, L = c.layers;
  ForwardResult r;
  r.layers = L, r.heads = H, r.kv_heads = G, r.tokens = T, r.vocab = c.vocab;
  r.attentions.assign(size_t(int64_t(L) * H * T * T), 0.0f);
  r.layer_maps.assign(size_t(L), LayerMaps{false, "", H});
  r.linear_maps.resize(size_t(L));

  // x₀ = E[ids] (+ wpe[t])
  Rows x(size_t(T), std::vector<double>(size_t(C), 0.0));
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < C; ++i)
      x[size_t(t)][size_t(i)] = double(w.token_embedding(ids[size_t(t)], i)) * c.embedding_scale +
                                (c.positions == PositionKind::learned ? double(w.position_embedding(t, i)) : 0.0);

  for (int l = 0; l < L; ++l) {
    check_cancel(options.cancel);
    const LayerWeights& lw = w.layers[size_t(l)];
    if (c.is_linear_layer(l)) {  // Granite 4.0-H's Mamba-2 (then its MoE + shared or shared MLP) or Qwen3-Next's
                                 // Gated DeltaNet (then its dense or MoE MLP)
      const bool mamba = c.mamba.active();
      const int heads = mamba ? c.mamba.heads : c.linear.value_heads;
      r.layer_maps[size_t(l)] = {true, mamba ? "Mamba-2" : "Gated DeltaNet", heads};
      r.linear_maps[size_t(l)].assign(size_t(int64_t(heads) * T * T), 0.0f);
      LayerDetail detail;
      detail.layer = l;
      const Rows out = (mamba ? mamba2_reference : deltanet_reference)(
          c, lw, norm(x, lw.norm1_weight, lw.norm1_bias, c.norm, c.norm_eps), r.linear_maps[size_t(l)].data(),
          options.detail_layer == l ? &detail : nullptr);
      if (options.detail_layer == l) r.detail = std::move(detail);
      add_mixer_and_swiglu_mlp(c, lw, l, out, x);
      continue;
    }
    if (c.is_mla()) {  // DeepSeek: MLA, then the dense or MoE MLP
      LayerDetail detail;
      const Rows attn = mla_reference(c, lw, norm(x, lw.norm1_weight, lw.norm1_bias, c.norm, c.norm_eps), l, r,
                                      options.detail_layer == l ? &detail : nullptr);
      if (options.detail_layer == l) r.detail = std::move(detail);
      add_mixer_and_swiglu_mlp(c, lw, l, attn, x);
      continue;
    }
    const KvWeights& kv = model.kv(l);
    // 1. projections (then Qwen3's per-head q/k norm, then RoPE)
    const Rows h = norm(x, lw.norm1_weight, lw.norm1_bias, c.norm, c.norm_eps);
    Rows q = linear(h, lw.wq, lw.bq), k = linear(h, kv.wk, kv.bk);
    const Rows v = linear(h, kv.wv, kv.bv);
    if (c.qk_norm_whole) {  // OLMo 2, OLMoE: one RMSNorm over all of q, one over all of k
      head_norm(q, 1, H * D, lw.q_norm, c.norm_eps);
      head_norm(k, 1, G * D, lw.k_norm, c.norm_eps);
    } else if (c.qk_norm) {  // Qwen3: per head
      head_norm(q, H, D, lw.q_norm, c.norm_eps);
      head_norm(k, G, D, lw.k_norm, c.norm_eps);
    }
    if (c.positions == PositionKind::rotary && !c.nope_layer(l)) {
      const RopeFrequencies f = c.layer_rope(l, T);
      rope(q, H, D, f);
      rope(k, G, D, f);
    }
    if (c.query_scale_beta > 0)  // Ministral 3: 1 + β·ln(1 + ⌊t / L⌋)
      for (int t = 0; t < T; ++t) {
        const double scale = 1.0 + c.query_scale_beta * std::log(1.0 + std::floor(double(t) / c.query_scale_length));
        for (double& v : q[size_t(t)]) v *= scale;
      }
    // 2. scores (scale, soft-cap) → causal mask, sliding window → softmax → weighted sum, head by head
    const int window = c.layer_window[size_t(l)];
    Rows concat(size_t(T), std::vector<double>(size_t(H * D), 0.0));
    const bool keep = options.detail_layer == l;
    LayerDetail detail;
    Mat sink_share = c.attention_sinks && keep ? Mat(Mat::Zero(H, T)) : Mat();
    for (int head = 0; head < H; ++head) {
      const int g = head / (H / G);
      Mat scores(T, T), probs(T, T);
      for (int i = 0; i < T; ++i) {
        std::vector<double> s(size_t(T), -INFINITY);
        double max = -INFINITY;
        const int lo = window > 0 ? std::max(0, i - window + 1) : 0;  // keys lo…i are seen
        for (int j = lo; j <= i; ++j) {
          double dot = 0;
          for (int d = 0; d < D; ++d) dot += q[size_t(i)][size_t(head * D + d)] * k[size_t(j)][size_t(g * D + d)];
          s[size_t(j)] = dot * c.attn_scale;
          if (c.attn_softcap > 0) s[size_t(j)] = std::tanh(s[size_t(j)] / c.attn_softcap) * c.attn_softcap;
          max = std::max(max, s[size_t(j)]);
        }
        // gpt-oss: the head's sink logit joins the row's softmax and is dropped after it
        const bool sink = c.attention_sinks;
        const double sink_logit = sink ? double(lw.sinks[head]) : 0.0;
        if (sink) max = std::max(max, sink_logit);
        double sum = sink ? std::exp(sink_logit - max) : 0.0;
        for (int j = lo; j <= i; ++j) sum += std::exp(s[size_t(j)] - max);
        if (sink && keep) sink_share(head, i) = float(std::exp(sink_logit - max) / sum);
        for (int j = 0; j < T; ++j) {
          const bool seen = j >= lo && j <= i;
          const double p = seen ? std::exp(s[size_t(j)] - max) / sum : 0.0;
          scores(i, j) = float(s[size_t(j)]);
          probs(i, j) = float(p);
          r.attentions[size_t(((int64_t(l) * H + head) * T + i) * T + j)] = float(p);
          if (seen)
            for (int d = 0; d < D; ++d) concat[size_t(i)][size_t(head * D + d)] += p * v[size_t(j)][size_t(g * D + d)];
        }
      }
      if (keep) {
        detail.scores.push_back(scores);
        detail.probs.push_back(probs);
        detail.q.push_back(head_of(q, head, D));
        detail.head_out.push_back(head_of(concat, head, D));
      }
    }
    // 3. output projection (Qwen3-Next: of concat·σ(gate)) and residual, then the MLP and its residual
    Rows gated = concat;
    if (c.attn_output_gate) {
      const Rows gate = linear(h, lw.attn_gate, Vec());
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < H * D; ++i) gated[size_t(t)][size_t(i)] /= 1.0 + std::exp(-gate[size_t(t)][size_t(i)]);
    }
    Rows attn = linear(gated, lw.wo, lw.bo);
    if (c.sandwich_norms) attn = norm(attn, lw.post_attn_norm, Vec(), NormKind::rmsnorm, c.norm_eps);
    if (keep) {
      detail.layer = l;
      detail.input = to_mat(h);
      for (int g = 0; g < G; ++g) {
        detail.k.push_back(head_of(k, g, D));
        detail.v.push_back(head_of(v, g, D));
      }
      detail.concat = to_mat(concat);
      detail.output = to_mat(attn);
      detail.sink_share = sink_share;
      r.detail = std::move(detail);
    }
    const Rows x_in = x;  // GPT-NeoX's parallel residual: the MLP reads the layer's input
    add_residual(x, attn, c.residual_scale);
    const Rows h2 = norm(c.parallel_residual ? x_in : x, lw.norm2_weight, lw.norm2_bias, c.norm, c.norm_eps);
    if (c.oss.active() || c.moe.is_moe_layer(l)) {  // gpt-oss's experts; Qwen3-MoE, OLMoE, GraniteMoE
      const Rows mlp = c.oss.active() ? gpt_oss_reference(c, lw, h2) : moe_reference(c, lw, h2);
      add_residual(x, mlp, c.residual_scale);
      continue;
    }
    Rows hidden = linear(h2, lw.w_up, lw.b_up);
    if (c.mlp == MlpKind::gelu_new || c.mlp == MlpKind::gelu) {
      for (auto& row : hidden)
        for (double& e : row) e = c.mlp == MlpKind::gelu ? gelu_erf(e) : gelu_new(e);
    } else {  // SwiGLU silu(gate)·up, GeGLU gelu_tanh(gate)·up
      const Rows gate = linear(h2, lw.w_gate, Vec());
      const bool geglu = c.mlp == MlpKind::geglu;
      for (size_t t = 0; t < hidden.size(); ++t)
        for (size_t f = 0; f < hidden[t].size(); ++f) hidden[t][f] *= geglu ? gelu_new(gate[t][f]) : silu(gate[t][f]);
    }
    Rows mlp = linear(hidden, lw.w_down, lw.b_down);
    if (c.sandwich_norms) mlp = norm(mlp, lw.post_mlp_norm, Vec(), NormKind::rmsnorm, c.norm_eps);
    add_residual(x, mlp, c.residual_scale);
  }
  check_cancel(options.cancel);
  Rows logits = linear(norm(x, w.final_norm_weight, w.final_norm_bias, c.norm, c.norm_eps), w.output_embedding(), Vec());
  if (c.logits_divisor != 1.0)  // Granite
    for (auto& row : logits)
      for (double& z : row) z /= c.logits_divisor;
  if (c.final_softcap > 0)
    for (auto& row : logits)
      for (double& z : row) z = std::tanh(z / c.final_softcap) * c.final_softcap;
  r.logits = to_mat(logits);
  r.top = top_next_tokens(r.logits, options.top_k);
  return r;
}

}  // namespace attnscope::model
