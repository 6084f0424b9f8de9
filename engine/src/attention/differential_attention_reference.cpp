// differential_attention_reference.cpp — the plain-loop oracle for differential attention (llm.c style).
// Every product is an explicit loop in double precision; nothing here is meant to be fast.
//
// Legend: T tokens, C d_model, H heads, G kv groups, d = C/(2H), g(h) = ⌊h / (H/G)⌋.
//   1. project  2. two score maps /√d  3. mask (causal, window, sinks)  4. two softmaxes  5. A = P₁ − λ·P₂
//   6. A·V  7. RMSNorm over 2d · (1 − λ_init)  8. output projection
#include <cmath>
#include <limits>
#include <vector>

#include "attnscope/attention/differential_attention.h"
#include "attnscope/core/error.h"

namespace attnscope {
namespace {

// y[t, o] = Σ_i x[t, i]·W[o, i] + b[o]
MatD linear(const MatD& x, const Mat& w, const Vec& b) {
  MatD y(x.rows(), w.rows());
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    for (Eigen::Index o = 0; o < w.rows(); ++o) {
      double acc = b.size() ? b[o] : 0.0;
      for (Eigen::Index i = 0; i < x.cols(); ++i) acc += x(t, i) * double(w(o, i));
      y(t, o) = acc;
    }
  return y;
}

// Row i of softmax(q_i·K_jᵀ·scale) over keys j, q rows and k rows from columns [qc, qc + d) and [kc, kc + d).
std::vector<double> softmax_row(const MatD& q, int qc, const MatD& k, int kc, int d, int i, double scale, const AttentionOptions& o,
                                Mat& scores_out) {
  const int T = int(k.rows());
  std::vector<double> row(static_cast<size_t>(T));
  for (int j = 0; j < T; ++j) {
    double dot = 0;
    for (int c = 0; c < d; ++c) dot += q(i, qc + c) * k(j, kc + c);
    row[size_t(j)] = !key_visible(i, j, o) ? -std::numeric_limits<double>::infinity() : dot * scale;
    scores_out(i, j) = float(row[size_t(j)]);
  }
  double max = -std::numeric_limits<double>::infinity(), sum = 0;
  for (double e : row) max = std::max(max, e);
  for (double& e : row) sum += (e = std::exp(e - max));
  for (double& e : row) e /= sum;
  return row;
}

}  // namespace

AttentionResult differential_attention_reference(const Mat& x, const AttentionWeights& w, const DifferentialParams& p,
                                                 const AttentionShape& s, const AttentionOptions& options) {
  validate_differential_shape(s);
  validate_weights(w, s);
  require(x.cols() == s.d_model, "the input width does not match d_model");
  const int T = int(x.rows()), H = s.heads, G = s.groups, d = s.head_dim() / 2;
  const double scale = options.scale_scores ? 1.0 / std::sqrt(double(d)) : 1.0;
  // λ from its re-parameterisation, in double
  double dot1 = 0, dot2 = 0;
  for (int i = 0; i < d; ++i) dot1 += double(p.lambda_q1[i]) * p.lambda_k1[i], dot2 += double(p.lambda_q2[i]) * p.lambda_k2[i];
  const double lambda_init = 0.8 - 0.6 * std::exp(-0.3 * p.layer);
  const double lambda = std::exp(dot1) - std::exp(dot2) + lambda_init;

  // 1. project
  const MatD xd = x.cast<double>();
  const MatD q = linear(xd, w.wq, w.bq), k = linear(xd, w.wk, w.bk), v = linear(xd, w.wv, w.bv);
  AttentionResult r;
  r.lambda = lambda;
  r.q.assign(2 * H, Mat(T, d)), r.k.assign(2 * G, Mat(T, d)), r.v.assign(G, Mat(T, 2 * d));
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < 2 * H; ++i)
      for (int c = 0; c < d; ++c) r.q[i](t, c) = float(q(t, i * d + c));
    for (int i = 0; i < 2 * G; ++i)
      for (int c = 0; c < d; ++c) r.k[i](t, c) = float(k(t, i * d + c));
    for (int j = 0; j < G; ++j)
      for (int c = 0; c < 2 * d; ++c) r.v[j](t, c) = float(v(t, j * 2 * d + c));
  }
  r.scores.assign(2 * H, Mat(T, T)), r.probs.assign(H, Mat(T, T)), r.probs_1.assign(H, Mat(T, T)), r.probs_2.assign(H, Mat(T, T));
  r.head_out.assign(H, Mat(T, 2 * d));
  MatD concat(T, H * 2 * d);
  for (int h = 0; h < H; ++h) {
    const int g = h / (H / G);  // SPEC: g(h) = floor(h / (H/G))
    for (int i = 0; i < T; ++i) {
      // 2–4. the two maps (Q₁ = Q[2h] against K₁ = K[2g], Q₂ = Q[2h+1] against K₂ = K[2g+1])
      const auto p1 = softmax_row(q, 2 * h * d, k, 2 * g * d, d, i, scale, options, r.scores[2 * h]);
      const auto p2 = softmax_row(q, (2 * h + 1) * d, k, (2 * g + 1) * d, d, i, scale, options, r.scores[2 * h + 1]);
      // 5. A = P₁ − λ·P₂
      std::vector<double> a(static_cast<size_t>(T));
      for (int j = 0; j < T; ++j) {
        a[size_t(j)] = p1[size_t(j)] - lambda * p2[size_t(j)];
        r.probs_1[h](i, j) = float(p1[size_t(j)]), r.probs_2[h](i, j) = float(p2[size_t(j)]), r.probs[h](i, j) = float(a[size_t(j)]);
      }
      // 6. A·V of the group's value, 7. RMSNorm over 2d, times (1 − λ_init)
      std::vector<double> o(static_cast<size_t>(2 * d), 0.0);
      double ms = 0;
      for (int c = 0; c < 2 * d; ++c) {
        for (int j = 0; j < T; ++j) o[size_t(c)] += a[size_t(j)] * v(j, g * 2 * d + c);
        ms += o[size_t(c)] * o[size_t(c)];
      }
      const double inv = 1.0 / std::sqrt(ms / (2 * d) + differential_norm_eps);
      for (int c = 0; c < 2 * d; ++c) {
        const double out = o[size_t(c)] * inv * double(p.norm[c]) * (1.0 - lambda_init);
        r.head_out[h](i, c) = float(out);
        concat(i, h * 2 * d + c) = out;
      }
    }
  }
  r.concat = concat.cast<float>();
  // 8. output projection
  r.output = linear(concat, w.wo, w.bo).cast<float>();
  return r;
}

}  // namespace attnscope
