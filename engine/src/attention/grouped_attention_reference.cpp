// grouped_attention_reference.cpp — the plain-loop oracle for grouped_attention (llm.c style).
// Every product is an explicit loop in double precision; nothing here is meant to be fast.
//
// Legend: T tokens, C d_model, H query heads, G kv groups, d_k = C / H.
//   1. project (RoPE: rotate q and k)  2. scores (+ ALiBi / relpos bias)  3. causal / window / sink mask
//   4. softmax (+ sink logit)  5. weighted sum  6. output projection
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/attention/grouped_attention.h"

namespace attnscope {
namespace {

// y[t, o] = Σ_i x[t, i]·W[o, i] + b[o]   (nn.Linear)
Mat linear(const Mat& x, const Mat& w, const Vec& b) {
  Mat y(x.rows(), w.rows());
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    for (Eigen::Index o = 0; o < w.rows(); ++o) {
      double acc = b.size() ? b[o] : 0.0;
      for (Eigen::Index i = 0; i < x.cols(); ++i) acc += double(x(t, i)) * double(w(o, i));
      y(t, o) = float(acc);
    }
  return y;
}

}  // namespace

AttentionResult grouped_attention_reference(const Mat& x, const AttentionWeights& w, const AttentionShape& shape,
                                            const AttentionOptions& options) {
  validate_weights(w, shape);
  require(x.cols() == shape.d_model, "the input width does not match d_model");
  const int T = int(x.rows()), H = shape.heads, G = shape.groups, dk = shape.head_dim();
  const double scale = options.scale_scores ? 1.0 / std::sqrt(double(dk)) : 1.0;
  const PositionEncoding& pos = options.positions;
  const bool sinks = !options.sink_logits.empty();
  // The mask, written out: causal (a window implies it), then the window's gap before key i − W + 1
  // except the first `sinks` keys.
  auto masked = [&](int i, int j) {
    if ((options.causal || options.window > 0) && j > i) return true;
    return options.window > 0 && j <= i - options.window && j >= options.sinks;
  };
  // The bias of (i, j) for head h.
  auto bias = [&](int h, int i, int j) {
    if (pos.scheme == PositionScheme::alibi) return -pos.alibi_slopes[size_t(h)] * std::abs(double(i - j));
    if (pos.scheme != PositionScheme::relpos) return 0.0;
    // λ·(−α(δ − Δ)² + α·min over keys of (δ' − Δ)²), δ = j − i (the row's minimum searched key by key).
    const double alpha = pos.relpos_alphas[size_t(h)], delta = pos.relpos_deltas[size_t(h)];
    double nearest = std::numeric_limits<double>::infinity();
    for (int k = 0; k < T; ++k) nearest = std::min(nearest, (k - i - delta) * (k - i - delta));
    return pos.relpos_lambda * (-alpha * (j - i - delta) * (j - i - delta) + alpha * nearest);
  };

  // 1. project
  const Mat q = linear(x, w.wq, w.bq), k = linear(x, w.wk, w.bk), v = linear(x, w.wv, w.bv);

  AttentionResult r;
  r.q.assign(H, Mat(T, dk)), r.k.assign(G, Mat(T, dk)), r.v.assign(G, Mat(T, dk));
  r.scores.assign(H, Mat(T, T)), r.probs.assign(H, Mat(T, T)), r.head_out.assign(H, Mat(T, dk));
  r.concat.resize(T, Eigen::Index(H) * dk);
  for (int g = 0; g < G; ++g)
    for (int t = 0; t < T; ++t)
      for (int d = 0; d < dk; ++d) r.k[g](t, d) = k(t, g * dk + d), r.v[g](t, d) = v(t, g * dk + d);
  const bool rotary = pos.scheme == PositionScheme::rope;
  if (rotary)
    for (int g = 0; g < G; ++g) rope_rotate_reference(r.k[g], pos.rope_inv_freq, pos.rope_attention_factor, pos.rope_layout);
  if (sinks) r.sink_share.resize(H, T);
  r.alibi_slopes = pos.alibi_slopes;

  for (int h = 0; h < H; ++h) {
    const int g = h / (H / G);  // SPEC: g(h) = floor(h / (H/G))
    for (int t = 0; t < T; ++t)
      for (int d = 0; d < dk; ++d) r.q[h](t, d) = q(t, h * dk + d);
    if (rotary) rope_rotate_reference(r.q[h], pos.rope_inv_freq, pos.rope_attention_factor, pos.rope_layout);
    for (int i = 0; i < T; ++i) {
      // 2. scores and 3. mask, kept in double for the softmax (float scores may overflow)
      std::vector<double> row(static_cast<size_t>(T));
      for (int j = 0; j < T; ++j) {
        double dot = 0;
        for (int d = 0; d < dk; ++d) dot += double(r.q[h](i, d)) * double(r.k[g](j, d));
        row[size_t(j)] = masked(i, j) ? -std::numeric_limits<double>::infinity() : dot * scale + bias(h, i, j);
        r.scores[h](i, j) = float(row[size_t(j)]);
      }
      // 4. softmax, max-subtracted, in double
      double max = -std::numeric_limits<double>::infinity();
      for (int j = 0; j < T; ++j) max = std::max(max, row[size_t(j)]);
      if (sinks) max = std::max(max, options.sink_logits[size_t(h)]);
      double sum = sinks ? std::exp(options.sink_logits[size_t(h)] - max) : 0.0;
      for (int j = 0; j < T; ++j) sum += std::exp(row[size_t(j)] - max);
      double taken = 0;
      for (int j = 0; j < T; ++j) {
        r.probs[h](i, j) = float(std::exp(row[size_t(j)] - max) / sum);
        taken += std::exp(row[size_t(j)] - max) / sum;
      }
      if (sinks) r.sink_share(h, i) = float(1.0 - taken);  // SPEC: the sink's share 1 − Σ_j p_ij
      // 5. weighted sum of the group's values
      for (int d = 0; d < dk; ++d) {
        double acc = 0;
        for (int j = 0; j < T; ++j) acc += double(r.probs[h](i, j)) * double(r.v[g](j, d));
        r.head_out[h](i, d) = float(acc);
        r.concat(i, h * dk + d) = float(acc);
      }
    }
  }
  // 6. output projection
  r.output = linear(r.concat, w.wo, w.bo);
  return r;
}

}  // namespace attnscope
