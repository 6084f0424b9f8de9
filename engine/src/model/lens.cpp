// lens.cpp — the logit lens, direct logit attribution and head ablation of lens.h, over a forward pass's trace.
//
// Sections: the final norm · logit lens · attribution · ablation
#include "attnscope/model/lens.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/model/ops.h"

namespace attnscope::model {

namespace {

// ---- the final norm --------------------------------------------------------------------------------
// norm_f(x) exactly as the forward pass applies it (no weight: OLMo 2's missing norms never reach here, but
// the copy keeps the contract).
Mat final_norm(const Model& model, const Mat& x) {
  const ModelConfig& c = model.config;
  const ModelWeights& w = *model.weights;
  const int T = int(x.rows()), C = c.d_model;
  Mat out(T, C);
  if (w.final_norm_weight.size() == 0) return x;
  if (c.norm == NormKind::layernorm)
    ops::layernorm_forward(out.data(), nullptr, nullptr, x.data(), w.final_norm_weight.data(),
                           w.final_norm_bias.size() ? w.final_norm_bias.data() : nullptr, T, C, float(c.norm_eps));
  else
    ops::rmsnorm_forward(out.data(), nullptr, x.data(), w.final_norm_weight.data(), T, C, float(c.norm_eps));
  return out;
}

// Row t's log-softmax in double.
std::vector<double> log_softmax(const float* row, int V) {
  const double max = double(*std::max_element(row, row + V));
  double sum = 0;
  for (int j = 0; j < V; ++j) sum += std::exp(double(row[j]) - max);
  const double log_z = max + std::log(sum);
  std::vector<double> out(size_t(V), 0.0);
  for (int j = 0; j < V; ++j) out[size_t(j)] = double(row[j]) - log_z;
  return out;
}

void require_trace(const ForwardResult& r, bool parts) {
  require(int(r.trace.residual.size()) == r.layers,
          "the logit lens needs the forward pass's residual streams (ForwardTaps::residual)");
  if (parts)
    require(int(r.trace.block.size()) == r.layers && r.trace.embedding.rows() == r.tokens,
            "the direct logit attribution needs the forward pass's parts (ForwardTaps::parts)");
}

double kl_divergence(const std::vector<double>& log_p, const std::vector<double>& log_q) {
  double kl = 0;
  for (size_t j = 0; j < log_p.size(); ++j)
    if (std::isfinite(log_p[j])) kl += std::exp(log_p[j]) * (log_p[j] - log_q[j]);
  return std::max(kl, 0.0);
}

}  // namespace

ForwardOptions lens_forward_options(ForwardOptions options) {
  options.taps.residual = true;
  options.taps.parts = true;
  return options;
}

Mat lens_logits(const Model& model, const Mat& x, bool softcap) {
  const ModelConfig& c = model.config;
  require(x.cols() == c.d_model, "a residual stream of width " + std::to_string(x.cols()) + " for a model of width " +
                                     std::to_string(c.d_model));
  const Mat h = final_norm(model, x);
  Mat logits(h.rows(), c.vocab);
  linear_forward_packed(logits.data(), h.data(), model.weights->output_embedding(), nullptr, int(h.rows()));
  if (c.logits_divisor != 1.0) logits.array() /= float(c.logits_divisor);
  if (softcap && c.final_softcap > 0) {
    const float cap = float(c.final_softcap);
    logits.array() = (logits.array() / cap).tanh() * cap;
  }
  return logits;
}

// ---- logit lens ------------------------------------------------------------------------------------
LogitLens logit_lens(const Model& model, const ForwardResult& r, int top_k, const std::atomic<bool>* cancel) {
  require_trace(r, false);
  const int L = r.layers, T = r.tokens, V = r.vocab;
  LogitLens lens;
  lens.layers = L, lens.tokens = T, lens.top_k = std::clamp(top_k, 0, V);
  lens.kl = Mat::Zero(L, T);
  lens.rank.assign(size_t(int64_t(L) * T), 1);
  lens.final_top.resize(size_t(T));
  std::vector<std::vector<double>> final_log(static_cast<size_t>(T));
  for (int t = 0; t < T; ++t) {
    const float* row = r.logits.data() + int64_t(t) * V;
    int32_t best = 0;
    for (int32_t j = 1; j < V; ++j)
      if (row[j] > row[best]) best = j;
    lens.final_top[size_t(t)] = best;
    final_log[size_t(t)] = log_softmax(row, V);
  }
  for (int l = 0; l < L; ++l) {
    check_cancel(cancel);
    const Mat logits = lens_logits(model, r.trace.residual[size_t(l)]);
    lens.top.push_back(top_next_tokens(logits, lens.top_k));
#pragma omp parallel for schedule(static) if (int64_t(T) * V >= (1 << 18))
    for (int t = 0; t < T; ++t) {
      const float* row = logits.data() + int64_t(t) * V;
      lens.kl(l, t) = float(kl_divergence(final_log[size_t(t)], log_softmax(row, V)));
      const int32_t v = lens.final_top[size_t(t)];
      int above = 0;  // the ids ranked before v: a larger logit, or an equal one with a lower id
      for (int32_t j = 0; j < V; ++j) above += row[j] > row[v] || (row[j] == row[v] && j < v);
      lens.rank[size_t(int64_t(l) * T + t)] = above + 1;
    }
  }
  return lens;
}

// ---- attribution -----------------------------------------------------------------------------------
std::string part_label(const LogitPart& p) {
  const std::string layer = "L" + std::to_string(p.layer);
  switch (p.kind) {
    case PartKind::embedding: return "embedding";
    case PartKind::positions: return "positions";
    case PartKind::head: return layer + "H" + std::to_string(p.head);
    case PartKind::attention_bias: return layer + " attention bias";
    case PartKind::mixer: return layer + " mixer";
    case PartKind::mlp: return layer + " MLP";
    case PartKind::final_norm_bias: return "final norm bias";
  }
  return "?";
}

int LogitAttribution::head_part(int layer, int head) const {
  for (size_t p = 0; p < parts.size(); ++p)
    if (parts[p].kind == PartKind::head && parts[p].layer == layer && parts[p].head == head) return int(p);
  return -1;
}

LogitAttribution direct_logit_attribution(const Model& model, const ForwardResult& r, std::span<const int32_t> targets) {
  require_trace(r, true);
  const ModelConfig& c = model.config;
  const ModelWeights& w = *model.weights;
  const ForwardTrace& tr = r.trace;
  const int L = r.layers, T = r.tokens, V = r.vocab, C = c.d_model, H = c.heads;
  require(targets.empty() || int(targets.size()) == T,
          "the attribution's target tokens are " + std::to_string(targets.size()) + " for an input of " +
              std::to_string(T) + " tokens; give one per position, or none for the model's top-1");
  LogitAttribution out;
  out.before_softcap = c.final_softcap > 0;
  for (int t = 0; t < T; ++t) {
    int32_t v = 0;
    if (targets.empty()) {
      const float* row = r.logits.data() + int64_t(t) * V;
      for (int32_t j = 1; j < V; ++j)
        if (row[j] > row[v]) v = j;
    } else {
      v = targets[size_t(t)];
      require(v >= 0 && v < V, "target token id " + std::to_string(v) + " at position " + std::to_string(t) +
                                   " is outside the vocabulary (0 to " + std::to_string(V - 1) + ")");
    }
    out.target.push_back(v);
  }
  // a_t = w_f ⊙ E_v / (σ_t·s): the frozen final norm and the unembedding of the target, per position
  // (LayerNorm: centred, which gives its mean term to the parts); bias_t = b_f·E_v / s.
  const Mat& x = tr.residual.back();
  const Mat normed = final_norm(model, x);
  const PackedMatrix& E = w.output_embedding();
  const double divisor = c.logits_divisor;
  const bool layernorm = c.norm == NormKind::layernorm && w.final_norm_weight.size() > 0;
  Mat a(T, C);
  std::vector<double> norm_bias(size_t(T), 0.0);
  std::vector<float> e(static_cast<size_t>(C));
  for (int t = 0; t < T; ++t) {
    E.row(out.target[size_t(t)], e.data());
    const auto xt = x.row(t).cast<double>();
    double inv = 1.0;
    if (w.final_norm_weight.size() > 0) {
      const double mean = layernorm ? xt.mean() : 0.0;
      const double var = (xt.array() - mean).square().mean();
      inv = 1.0 / std::sqrt(var + c.norm_eps);
    }
    double logit = 0;
    for (int i = 0; i < C; ++i) {
      const double wi = w.final_norm_weight.size() ? double(w.final_norm_weight[i]) : 1.0;
      a(t, i) = float(wi * e[size_t(i)] * inv / divisor);
      logit += double(normed(t, i)) * e[size_t(i)];
      if (layernorm && w.final_norm_bias.size()) norm_bias[size_t(t)] += double(w.final_norm_bias[i]) * e[size_t(i)] / divisor;
    }
    if (layernorm) a.row(t).array() -= a.row(t).mean();
    out.logit.push_back(float(logit / divisor));
  }
  std::vector<std::vector<double>> rows;  // [P][T]
  const auto add = [&](LogitPart p, std::vector<double> values) {
    out.parts.push_back(p);
    rows.push_back(std::move(values));
  };
  const auto through = [&](const Mat& branch) {  // a branch [T, C] dotted with a_t, row by row
    std::vector<double> v(static_cast<size_t>(T));
    for (int t = 0; t < T; ++t) v[size_t(t)] = branch.row(t).cast<double>().dot(a.row(t).cast<double>());
    return v;
  };
  add({PartKind::embedding, -1, -1}, through(tr.embedding));
  if (tr.positions.size()) add({PartKind::positions, -1, -1}, through(tr.positions));
  for (int l = 0; l < L; ++l) {
    const LayerWeights& lw = w.layers[size_t(l)];
    const Mat& z = tr.head_input[size_t(l)];
    if (z.size() == 0) {
      add({PartKind::mixer, l, -1}, through(tr.block[size_t(l)]));
    } else {
      // d_t = a_t (⊙ w_post/rms(raw_t) for Gemma's post-attention norm) × the residual multiplier; U = D·W_O.
      const Mat wo = lw.wo.to_mat();  // [C, W]
      const int W = int(wo.cols()), Dh = W / H;
      Mat d = a * float(c.residual_scale);
      if (c.sandwich_norms) {
        Mat raw = z * wo.transpose();
        if (lw.bo.size()) raw.rowwise() += lw.bo.transpose();
        for (int t = 0; t < T; ++t) {
          const double inv = 1.0 / std::sqrt(raw.row(t).cast<double>().squaredNorm() / C + c.norm_eps);
          d.row(t) = (d.row(t).array() * lw.post_attn_norm.transpose().array() * float(inv)).matrix();
        }
      }
      const Mat U = d * wo;  // [T, W]
      for (int h = 0; h < H; ++h) {
        std::vector<double> v(static_cast<size_t>(T));
        for (int t = 0; t < T; ++t)
          v[size_t(t)] = z.row(t).segment(int64_t(h) * Dh, Dh).cast<double>().dot(U.row(t).segment(int64_t(h) * Dh, Dh).cast<double>());
        add({PartKind::head, l, h}, std::move(v));
      }
      if (lw.bo.size()) {
        std::vector<double> v(static_cast<size_t>(T));
        for (int t = 0; t < T; ++t) v[size_t(t)] = lw.bo.cast<double>().dot(d.row(t).transpose().cast<double>());
        add({PartKind::attention_bias, l, -1}, std::move(v));
      }
    }
    add({PartKind::mlp, l, -1}, through(tr.mlp[size_t(l)]));
  }
  if (layernorm && w.final_norm_bias.size()) add({PartKind::final_norm_bias, -1, -1}, norm_bias);
  out.values.resize(int64_t(rows.size()), T);
  for (size_t p = 0; p < rows.size(); ++p)
    for (int t = 0; t < T; ++t) out.values(int64_t(p), t) = float(rows[p][size_t(t)]);
  return out;
}

// ---- ablation --------------------------------------------------------------------------------------
InputLoss input_loss(const Mat& logits, std::span<const int32_t> ids) {
  const int T = int(ids.size()), V = int(logits.cols());
  require(logits.rows() == T, "logits for " + std::to_string(logits.rows()) + " positions and " + std::to_string(T) +
                                  " tokens");
  InputLoss loss;
  double sum = 0;
  for (int t = 0; t + 1 < T; ++t) {
    const std::vector<double> lp = log_softmax(logits.data() + int64_t(t) * V, V);
    const int32_t next = ids[size_t(t) + 1];
    require(next >= 0 && next < V, "token id " + std::to_string(next) + " is outside the vocabulary");
    loss.per_token.push_back(float(-lp[size_t(next)]));
    sum += -lp[size_t(next)];
  }
  if (!loss.per_token.empty()) loss.mean = sum / double(loss.per_token.size());
  return loss;
}

AblationEffect ablate_heads(const Model& model, std::span<const int32_t> ids, const ForwardResult& baseline,
                            const HeadAblation& ablation, ForwardOptions options) {
  check_head_ablation(model.config, ablation);
  require(baseline.tokens == int(ids.size()) && baseline.logits.rows() == int(ids.size()),
          "the baseline forward pass is of another input");
  options.ablation = &ablation;
  AblationEffect effect;
  effect.ablated = forward(model, ids, options);
  const ForwardResult& after = effect.ablated;
  effect.loss_before = input_loss(baseline.logits, ids);
  effect.loss_after = input_loss(after.logits, ids);
  const int T = after.tokens, V = after.vocab, L = after.layers;
  effect.next_token_kl.resize(size_t(T));
  for (int t = 0; t < T; ++t)
    effect.next_token_kl[size_t(t)] = float(kl_divergence(log_softmax(baseline.logits.data() + int64_t(t) * V, V),
                                                          log_softmax(after.logits.data() + int64_t(t) * V, V)));
  effect.first_changed_layer = L;
  for (const HeadRef& h : ablation.heads) effect.first_changed_layer = std::min(effect.first_changed_layer, h.layer);
  if (ablation.heads.empty()) effect.first_changed_layer = -1;
  effect.attention_change.assign(size_t(L), 0.0f);
  const int64_t block = int64_t(after.heads) * T * T;
  for (int l = 0; l < L; ++l) {
    float change = 0;
    const bool linear = !after.linear_maps[size_t(l)].empty();
    const float* p = linear ? after.linear_maps[size_t(l)].data() : after.attentions.data() + l * block;
    const float* q = linear ? baseline.linear_maps[size_t(l)].data() : baseline.attentions.data() + l * block;
    const int64_t n = linear ? int64_t(after.linear_maps[size_t(l)].size()) : block;
    for (int64_t i = 0; i < n; ++i) change = std::max(change, std::abs(p[i] - q[i]));
    effect.attention_change[size_t(l)] = change;
  }
  return effect;
}

}  // namespace attnscope::model
