// latent_attention.cpp — MLA's fast path in both forms (latent_attention.h): Eigen products, heads in
// parallel; the shapes, the seeded weights and the rotary part.
//
// Legend: T tokens, C d_model, H heads, d_N = d_v = C/H, d_R rotary part, r_kv / r_q the latents.
//   1. query path   c_Q = RMSNorm(X·W_DQᵀ) [T, r_q];  q_N = c_Q·W_UQᵀ [T, H·d_N];  q_R = RoPE(c_Q·W_QRᵀ) [T, H·d_R]
//   2. K/V path     c_KV = RMSNorm(X·W_DKVᵀ) [T, r_kv];  k_R = RoPE(X·W_KRᵀ) [T, d_R]
//   3. naive        k_N = c_KV·W_UKᵀ, v = c_KV·W_UVᵀ [T, H·d_N];  per head S, mask, softmax, P·v;  out = concat·W_Oᵀ
//   3'. absorbed    q̃_h = [q_N,h·W_UK,h ; q_R,h];  per head S = q̃_h·[c_KV ; k_R]ᵀ, P·c_KV;  out = Σ_h õ_h·(W_O,h·W_UV,h)ᵀ
#include "attnscope/attention/latent_attention.h"

#include <atomic>
#include <cmath>
#include <string>

#include "attend_head.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/rng.h"
#include "core/parallel.h"

namespace attnscope {

void validate_latent_shape(const LatentShape& s) {
  using std::to_string;
  validate_shape({s.d_model, s.heads, s.heads});
  const std::string width = "d_model = " + to_string(s.d_model);
  require(s.kv_rank >= 1 && s.kv_rank <= s.d_model,
          "the K/V latent rank (kv_rank) must be between 1 and the width " + width + ", got " + to_string(s.kv_rank) +
              ": the latent compresses each token's vector, so it cannot be wider");
  require(s.q_rank >= 0 && s.q_rank <= s.d_model,
          "the query latent rank (q_rank) must be 0 (no query compression) or between 1 and the width " + width +
              ", got " + to_string(s.q_rank));
  const int dk = s.head_dim();
  require(s.rope_dim >= 0 && s.rope_dim % 2 == 0 && s.rope_dim <= dk,
          "the rotary part (rope_dim) must be an even number from 0 to the head width d_model/heads = " + to_string(dk) +
              " (RoPE turns pairs of dimensions), got " + to_string(s.rope_dim));
}

void validate_latent_weights(const LatentWeights& w, const LatentShape& s) {
  validate_latent_shape(s);
  const int64_t C = s.d_model, H = s.heads, dN = s.head_dim(), dR = s.rope_dim, r = s.kv_rank, rq = s.q_rank;
  const int64_t qin = s.query_in();
  auto check = [](const char* name, const Mat& m, int64_t rows, int64_t cols) {
    require(m.rows() == rows && m.cols() == cols,
            std::string(name) + " has shape [" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "] but [" +
                std::to_string(rows) + ", " + std::to_string(cols) + "] is needed (PyTorch nn.Linear layout [out, in])");
    require(all_finite(m), std::string(name) + " contains NaN or infinite values");
  };
  auto check_vec = [](const char* name, const Vec& v, int64_t size) {
    require(v.size() == size, std::string(name) + " has " + std::to_string(v.size()) + " values but " +
                                  std::to_string(size) + " are needed");
    require(all_finite(v), std::string(name) + " contains NaN or infinite values");
  };
  if (rq > 0) {
    check("W_DQ", w.wdq, rq, C);
    check_vec("the c_Q norm weight", w.q_norm, rq);
  } else {
    require(w.wdq.size() == 0 && w.q_norm.size() == 0, "W_DQ is given but q_rank is 0 (no query compression)");
  }
  check("W_UQ", w.wuq, H * dN, qin);
  check("W_QR", w.wqr, H * dR, qin);
  check("W_DKV", w.wdkv, r, C);
  check_vec("the c_KV norm weight", w.kv_norm, r);
  check("W_KR", w.wkr, dR, C);
  check("W_UK", w.wuk, H * dN, r);
  check("W_UV", w.wuv, H * dN, r);
  check("W_O", w.wo, C, H * dN);
}

namespace {

// Xavier/Glorot uniform from a stream of its own (named), so one rank's change leaves the others alone.
Mat xavier(int out, int in, uint64_t seed, const char* name) {
  Rng rng(seed * 0x9E3779B97F4A7C15ull ^ fnv1a64(name));
  const float bound = float(std::sqrt(6.0 / double(in + out)));
  Mat w(out, in);
  for (int i = 0; i < out; ++i)
    for (int j = 0; j < in; ++j) w(i, j) = rng.uniform(-bound, bound);
  return w;
}

void check_input(const Mat& x, const LatentShape& s) {
  require(x.rows() >= 1, "the input has no tokens");
  require(x.rows() <= limits::max_tokens,
          "the input has " + std::to_string(x.rows()) + " tokens; the limit is " + std::to_string(limits::max_tokens));
  require(x.cols() == s.d_model, "the input vectors have width " + std::to_string(x.cols()) + " but d_model is " +
                                     std::to_string(s.d_model));
  require(int64_t(s.heads) * x.rows() * x.rows() <= limits::max_attention_cells,
          "heads × tokens² = " + std::to_string(int64_t(s.heads) * x.rows() * x.rows()) +
              " attention cells exceeds the limit of " + std::to_string(limits::max_attention_cells));
}

// Steps 1 and 2, shared by both forms.
struct LatentParts {
  Mat c_q, q_nope, q_rope, c_kv, k_rope;  // [T, r_q], [T, H·d_N], [T, H·d_R] (rotated), [T, r_kv], [T, d_R] (rotated)
};

LatentParts latent_parts(const Mat& x, const LatentWeights& w, const LatentShape& s, const LatentRope& rope) {
  validate_latent_weights(w, s);
  check_input(x, s);
  const int H = s.heads, dR = s.rope_dim;
  LatentParts p;
  // 1. query path
  if (s.q_rank > 0) {
    p.c_q.noalias() = x * w.wdq.transpose();
    detail::rms_norm_rows(p.c_q, w.q_norm, latent_norm_eps);
  }
  const Mat& qin = s.q_rank > 0 ? p.c_q : x;
  p.q_nope.noalias() = qin * w.wuq.transpose();
  p.q_rope.noalias() = qin * w.wqr.transpose();
  for (int h = 0; h < H && dR > 0; ++h) {
    Mat part = p.q_rope.middleCols(Eigen::Index(h) * dR, dR);
    rotate_positions(part, rope);
    p.q_rope.middleCols(Eigen::Index(h) * dR, dR) = part;
  }
  // 2. K/V path
  p.c_kv.noalias() = x * w.wdkv.transpose();
  detail::rms_norm_rows(p.c_kv, w.kv_norm, latent_norm_eps);
  p.k_rope.noalias() = x * w.wkr.transpose();
  if (dR > 0) rotate_positions(p.k_rope, rope);
  require(all_finite(p.q_nope) && all_finite(p.q_rope) && all_finite(p.c_kv) && all_finite(p.k_rope),
          "the projections overflow float32: the input values (largest |x| = " + std::to_string(x.cwiseAbs().maxCoeff()) +
              ") are too large for these weights");
  return p;
}

float score_scale(const LatentShape& s, const AttentionOptions& o) {
  return o.scale_scores ? float(1.0 / std::sqrt(double(s.qk_dim()))) : 1.0f;
}

}  // namespace

LatentWeights random_latent_weights(const LatentShape& s, uint64_t seed) {
  validate_latent_shape(s);
  const int C = s.d_model, H = s.heads, dN = s.head_dim(), dR = s.rope_dim, r = s.kv_rank, rq = s.q_rank;
  LatentWeights w;
  if (rq > 0) {
    w.wdq = xavier(rq, C, seed, "mla.W_DQ");
    w.q_norm = Vec::Ones(rq);
  }
  w.wuq = xavier(H * dN, s.query_in(), seed, "mla.W_UQ");
  w.wqr = xavier(H * dR, s.query_in(), seed, "mla.W_QR");
  w.wdkv = xavier(r, C, seed, "mla.W_DKV");
  w.kv_norm = Vec::Ones(r);
  w.wkr = xavier(dR, C, seed, "mla.W_KR");
  w.wuk = xavier(H * dN, r, seed, "mla.W_UK");
  w.wuv = xavier(H * dN, r, seed, "mla.W_UV");
  w.wo = xavier(C, H * dN, seed, "mla.W_O");
  return w;
}

void rotate_positions(Mat& x, const LatentRope& rope) {
  const int d = int(x.cols()), half = d / 2;
  for (int i = 0; i < half; ++i) {
    const double inv_freq = std::pow(rope.base, -2.0 * i / d);  // θ_i = base^(−2i/d)
    const int a = rope.interleaved ? 2 * i : i, b = rope.interleaved ? 2 * i + 1 : i + half;
    for (Eigen::Index t = 0; t < x.rows(); ++t) {
      const double angle = double(t) * inv_freq, c = std::cos(angle), sn = std::sin(angle);
      const double xa = x(t, a), xb = x(t, b);
      x(t, a) = float(xa * c - xb * sn);
      x(t, b) = float(xb * c + xa * sn);
    }
  }
}

AttentionResult latent_attention(const Mat& x, const LatentWeights& w, const LatentShape& s, const LatentRope& rope,
                                 const AttentionOptions& options) {
  LatentParts p = latent_parts(x, w, s, rope);
  const int T = int(x.rows()), H = s.heads, dN = s.head_dim(), dR = s.rope_dim, C = s.d_model;
  const long long work = 1ll * T * C * (2 * H * dN + s.kv_rank) + 2ll * H * T * T * (dN + dR);
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);
  // 3. naive: expand every head's keys and values from the latent.
  const Mat k_nope = p.c_kv * w.wuk.transpose(), v_all = p.c_kv * w.wuv.transpose();  // [T, H·d_N] each
  AttentionResult r;
  r.q.assign(H, Mat(T, dN + dR)), r.k.assign(H, Mat(T, dN + dR)), r.v.assign(H, Mat());
  r.scores.resize(H), r.probs.resize(H), r.head_out.resize(H);
  r.concat.resize(T, Eigen::Index(H) * dN);
  const float scale = score_scale(s, options);
  std::atomic<bool> cancelled{false};
#pragma omp parallel for schedule(dynamic)
  for (int h = 0; h < H; ++h) {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
      cancelled = true;
      continue;
    }
    r.q[h].leftCols(dN) = p.q_nope.middleCols(Eigen::Index(h) * dN, dN);
    r.q[h].rightCols(dR) = p.q_rope.middleCols(Eigen::Index(h) * dR, dR);
    r.k[h].leftCols(dN) = k_nope.middleCols(Eigen::Index(h) * dN, dN);
    r.k[h].rightCols(dR) = p.k_rope;
    r.v[h] = v_all.middleCols(Eigen::Index(h) * dN, dN);
    detail::attend_head(r.q[h], r.k[h], r.v[h], scale, options.causal, r.scores[h], r.probs[h], &r.head_out[h]);
    r.concat.middleCols(Eigen::Index(h) * dN, dN) = r.head_out[h];
  }
  if (cancelled) throw Cancelled();
  r.output.noalias() = r.concat * w.wo.transpose();
  r.c_q = std::move(p.c_q), r.c_kv = std::move(p.c_kv), r.k_rope = std::move(p.k_rope);
  return r;
}

AttentionResult latent_attention_absorbed(const Mat& x, const LatentWeights& w, const LatentShape& s,
                                          const LatentRope& rope, const AttentionOptions& options) {
  LatentParts p = latent_parts(x, w, s, rope);
  const int T = int(x.rows()), H = s.heads, dN = s.head_dim(), dR = s.rope_dim, C = s.d_model, rk = s.kv_rank;
  const long long work = 1ll * T * H * dN * rk + 2ll * H * T * T * (rk + dR) + 1ll * T * H * rk * C;
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);
  AttentionResult r;
  // The one cached key every head reads, [c_KV, k_R], and the latent as the value.
  r.k.assign(1, Mat(T, rk + dR));
  r.k[0].leftCols(rk) = p.c_kv;
  r.k[0].rightCols(dR) = p.k_rope;
  r.v.assign(1, p.c_kv);
  r.q.assign(H, Mat(T, rk + dR));
  r.scores.resize(H), r.probs.resize(H), r.head_out.resize(H);
  r.concat.resize(T, Eigen::Index(H) * rk);
  Mat wo_absorbed(C, Eigen::Index(H) * rk);  // [C, H·r_kv]: block h = W_O,h·W_UV,h
  const float scale = score_scale(s, options);
  std::atomic<bool> cancelled{false};
#pragma omp parallel for schedule(dynamic)
  for (int h = 0; h < H; ++h) {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
      cancelled = true;
      continue;
    }
    // W_UK folded into the query: q_N,h·W_UK,h [T, r_kv], then the rotary part as it was.
    r.q[h].leftCols(rk).noalias() = p.q_nope.middleCols(Eigen::Index(h) * dN, dN) * w.wuk.middleRows(Eigen::Index(h) * dN, dN);
    r.q[h].rightCols(dR) = p.q_rope.middleCols(Eigen::Index(h) * dR, dR);
    detail::attend_head(r.q[h], r.k[0], r.v[0], scale, options.causal, r.scores[h], r.probs[h], &r.head_out[h]);
    r.concat.middleCols(Eigen::Index(h) * rk, rk) = r.head_out[h];
    // W_UV folded into the output.
    wo_absorbed.middleCols(Eigen::Index(h) * rk, rk).noalias() =
        w.wo.middleCols(Eigen::Index(h) * dN, dN) * w.wuv.middleRows(Eigen::Index(h) * dN, dN);
  }
  if (cancelled) throw Cancelled();
  r.output.noalias() = r.concat * wo_absorbed.transpose();
  r.c_q = std::move(p.c_q), r.c_kv = std::move(p.c_kv), r.k_rope = std::move(p.k_rope);
  return r;
}

}  // namespace attnscope
