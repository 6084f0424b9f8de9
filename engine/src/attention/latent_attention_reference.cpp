// latent_attention_reference.cpp — the plain-loop oracle for MLA's naive form (llm.c style). Every
// product is an explicit loop in double precision; nothing here is meant to be fast.
//
// Legend: T tokens, C d_model, H heads, d_N = d_v = C/H, d_R rotary part, r_kv / r_q the latents.
//   1. c_Q = RMSNorm(X·W_DQᵀ), q_h = [c_Q·W_UQ,hᵀ ; RoPE(c_Q·W_QR,hᵀ)]      (r_q = 0: X in place of c_Q)
//   2. c_KV = RMSNorm(X·W_DKVᵀ), k_R = RoPE(X·W_KRᵀ), k_h = [c_KV·W_UK,hᵀ ; k_R], v_h = c_KV·W_UV,hᵀ
//   3. scores /√(d_N + d_R)  4. mask (causal, window, sinks)  5. softmax  6. weighted sum  7. output projection
#include <cmath>
#include <limits>
#include <vector>

#include "attnscope/attention/latent_attention.h"
#include "attnscope/core/error.h"

namespace attnscope {
namespace {

using Rows = std::vector<std::vector<double>>;  // [rows][cols]

// y[t, o] = Σ_i x[t, i]·W[o, i]
Rows linear(const Rows& x, const Mat& w) {
  Rows y(x.size(), std::vector<double>(size_t(w.rows())));
  for (size_t t = 0; t < x.size(); ++t)
    for (Eigen::Index o = 0; o < w.rows(); ++o) {
      double acc = 0;
      for (Eigen::Index i = 0; i < w.cols(); ++i) acc += x[t][size_t(i)] * double(w(o, i));
      y[t][size_t(o)] = acc;
    }
  return y;
}

void rms_norm(Rows& x, const Vec& w) {
  for (auto& row : x) {
    double ms = 0;
    for (double v : row) ms += v * v;
    const double inv = 1.0 / std::sqrt(ms / double(row.size()) + latent_norm_eps);
    for (size_t i = 0; i < row.size(); ++i) row[i] = row[i] * inv * double(w[Eigen::Index(i)]);
  }
}

// RoPE on columns [c0, c0 + d) of every row, row t at position t.
void rope(Rows& x, size_t c0, int d, const LatentRope& r) {
  if (d < 2) return;
  const std::vector<double> inv = rope_scaled_inv_freq(r.params(), d);
  const double factor = rope_attention_factor(r.params());
  for (size_t t = 0; t < x.size(); ++t)
    for (int i = 0; i < d / 2; ++i) {
      const double angle = double(t) * inv[size_t(i)];
      const size_t a = c0 + size_t(r.interleaved ? 2 * i : i), b = c0 + size_t(r.interleaved ? 2 * i + 1 : i + d / 2);
      const double xa = x[t][a], xb = x[t][b];
      x[t][a] = factor * (xa * std::cos(angle) - xb * std::sin(angle));
      x[t][b] = factor * (xb * std::cos(angle) + xa * std::sin(angle));
    }
}

Mat to_mat(const Rows& x, size_t c0, size_t cols) {
  Mat m(Eigen::Index(x.size()), Eigen::Index(cols));
  for (size_t t = 0; t < x.size(); ++t)
    for (size_t c = 0; c < cols; ++c) m(Eigen::Index(t), Eigen::Index(c)) = float(x[t][c0 + c]);
  return m;
}

}  // namespace

AttentionResult latent_attention_reference(const Mat& x, const LatentWeights& w, const LatentShape& s,
                                           const LatentRope& rp, const AttentionOptions& options) {
  validate_latent_weights(w, s);
  require(x.rows() >= 1 && x.cols() == s.d_model, "the input width does not match d_model");
  const int T = int(x.rows()), H = s.heads, dN = s.head_dim(), dR = s.rope_dim, dqk = dN + dR;
  const double scale = options.scale_scores ? 1.0 / std::sqrt(double(dqk)) : 1.0;
  Rows xr(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(s.d_model)));
  for (int t = 0; t < T; ++t)
    for (int c = 0; c < s.d_model; ++c) xr[size_t(t)][size_t(c)] = x(t, c);

  AttentionResult r;
  // 1. query path
  Rows cq;
  if (s.q_rank > 0) {
    cq = linear(xr, w.wdq);
    rms_norm(cq, w.q_norm);
    r.c_q = to_mat(cq, 0, size_t(s.q_rank));
  }
  const Rows& qin = s.q_rank > 0 ? cq : xr;
  const Rows qn = linear(qin, w.wuq);
  Rows qr = linear(qin, w.wqr);
  for (int h = 0; h < H; ++h) rope(qr, size_t(h * dR), dR, rp);
  // 2. K/V path
  Rows ckv = linear(xr, w.wdkv);
  rms_norm(ckv, w.kv_norm);
  Rows kr = linear(xr, w.wkr);
  rope(kr, 0, dR, rp);
  const Rows kn = linear(ckv, w.wuk), v = linear(ckv, w.wuv);
  r.c_kv = to_mat(ckv, 0, size_t(s.kv_rank));
  r.k_rope = to_mat(kr, 0, size_t(dR));

  r.q.assign(H, Mat(T, dqk)), r.k.assign(H, Mat(T, dqk)), r.v.assign(H, Mat(T, dN));
  r.scores.assign(H, Mat(T, T)), r.probs.assign(H, Mat(T, T)), r.head_out.assign(H, Mat(T, dN));
  r.concat.resize(T, Eigen::Index(H) * dN);
  Rows concat(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(H * dN)));
  for (int h = 0; h < H; ++h) {
    // q_h, k_h as doubles: [nope ; rope]
    Rows qh(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(dqk)));
    Rows kh = qh;
    for (int t = 0; t < T; ++t) {
      for (int c = 0; c < dN; ++c) qh[size_t(t)][size_t(c)] = qn[size_t(t)][size_t(h * dN + c)], kh[size_t(t)][size_t(c)] = kn[size_t(t)][size_t(h * dN + c)];
      for (int c = 0; c < dR; ++c) qh[size_t(t)][size_t(dN + c)] = qr[size_t(t)][size_t(h * dR + c)], kh[size_t(t)][size_t(dN + c)] = kr[size_t(t)][size_t(c)];
    }
    r.q[h] = to_mat(qh, 0, size_t(dqk)), r.k[h] = to_mat(kh, 0, size_t(dqk)), r.v[h] = to_mat(v, size_t(h * dN), size_t(dN));
    for (int i = 0; i < T; ++i) {
      // 3. scores and 4. mask
      std::vector<double> row(static_cast<size_t>(T));
      for (int j = 0; j < T; ++j) {
        double dot = 0;
        for (int c = 0; c < dqk; ++c) dot += qh[size_t(i)][size_t(c)] * kh[size_t(j)][size_t(c)];
        row[size_t(j)] = !key_visible(i, j, options) ? -std::numeric_limits<double>::infinity() : dot * scale;
        r.scores[h](i, j) = float(row[size_t(j)]);
      }
      // 5. softmax
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      for (double e : row) max = std::max(max, e);
      for (double& e : row) sum += (e = std::exp(e - max));
      for (int j = 0; j < T; ++j) r.probs[h](i, j) = float(row[size_t(j)] / sum);
      // 6. weighted sum
      for (int c = 0; c < dN; ++c) {
        double acc = 0;
        for (int j = 0; j < T; ++j) acc += row[size_t(j)] / sum * v[size_t(j)][size_t(h * dN + c)];
        r.head_out[h](i, c) = float(acc);
        concat[size_t(i)][size_t(h * dN + c)] = acc;
      }
    }
  }
  r.concat = to_mat(concat, 0, size_t(H * dN));
  // 7. output
  r.output = to_mat(linear(concat, w.wo), 0, size_t(s.d_model));
  return r;
}

}  // namespace attnscope
