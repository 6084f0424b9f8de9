// differential_attention.cpp — differential attention's fast path (differential_attention.h): Eigen
// products, heads in parallel; λ, its seeded vectors and the shape rule.
//
// Legend: T tokens, C d_model, H heads, G kv groups, d = C/(2H), g(h) = ⌊h / (H/G)⌋.
//   1. project   Q [T, 2H·d] → [2H, T, d];  K [T, 2G·d] → [2G, T, d];  V [T, G·2d] → [G, T, 2d]
//   2. maps      P₁,h = softmax(Q[2h]·K[2g]ᵀ/√d),  P₂,h = softmax(Q[2h+1]·K[2g+1]ᵀ/√d)   (+ the mask)
//   3. combine   A_h = P₁,h − λ·P₂,h;  O_h = RMSNorm(A_h·V_g) · (1 − λ_init)   [T, 2d]
//   4. output    out = concat_h(O_h)·W_Oᵀ + b_O                              [T, C]
#include "attnscope/attention/differential_attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "attend_head.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/rng.h"
#include "core/parallel.h"

namespace attnscope {

double differential_lambda_init(int layer) { return 0.8 - 0.6 * std::exp(-0.3 * double(layer)); }

double differential_lambda(const DifferentialParams& p) {
  const double a = p.lambda_q1.cast<double>().dot(p.lambda_k1.cast<double>());
  const double b = p.lambda_q2.cast<double>().dot(p.lambda_k2.cast<double>());
  return std::exp(a) - std::exp(b) + differential_lambda_init(p.layer);
}

void validate_differential_shape(const AttentionShape& s) {
  validate_shape(s);
  require(s.head_dim() % 2 == 0,
          "differential attention splits each head's query and key in two halves, so d_model / heads must be even: " +
              std::to_string(s.d_model) + " / " + std::to_string(s.heads) + " = " + std::to_string(s.head_dim()) +
              " (choose d_model a multiple of 2 x heads)");
}

DifferentialParams random_differential_params(const AttentionShape& shape, uint64_t seed) {
  validate_differential_shape(shape);
  const int d = shape.head_dim() / 2;
  Rng rng(seed * 0x9E3779B97F4A7C15ull ^ fnv1a64("differential.lambda"));
  // N(0, 0.1²) by Box–Muller: the authors' normal_(mean=0, std=0.1).
  auto normal = [&] {
    const double u1 = 1.0 - double(rng.uniform01()), u2 = double(rng.uniform01());
    return float(0.1 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
  };
  DifferentialParams p;
  for (Vec* v : {&p.lambda_q1, &p.lambda_k1, &p.lambda_q2, &p.lambda_k2}) {
    v->resize(d);
    for (int i = 0; i < d; ++i) (*v)[i] = normal();
  }
  p.norm = Vec::Ones(2 * d);
  return p;
}

namespace {

void check_inputs(const Mat& x, const AttentionWeights& w, const DifferentialParams& p, const AttentionShape& s) {
  validate_differential_shape(s);
  validate_weights(w, s);
  const int d = s.head_dim() / 2;
  for (const Vec* v : {&p.lambda_q1, &p.lambda_k1, &p.lambda_q2, &p.lambda_k2})
    require(v->size() == d && all_finite(*v), "the λ vectors need d = d_model / (2·heads) = " + std::to_string(d) +
                                                  " finite values each, got " + std::to_string(v->size()));
  require(p.norm.size() == 2 * d && all_finite(p.norm),
          "the per-head norm weight needs 2d = " + std::to_string(2 * d) + " finite values, got " + std::to_string(p.norm.size()));
  require(p.layer >= 0, "the layer number for λ_init starts at 0");
  require(x.rows() >= 1, "the input has no tokens");
  require(x.rows() <= limits::max_tokens,
          "the input has " + std::to_string(x.rows()) + " tokens; the limit is " + std::to_string(limits::max_tokens));
  require(x.cols() == s.d_model, "the input vectors have width " + std::to_string(x.cols()) + " but d_model is " +
                                     std::to_string(s.d_model));
  require(2 * int64_t(s.heads) * x.rows() * x.rows() <= limits::max_attention_cells,
          "2 × heads × tokens² = " + std::to_string(2 * int64_t(s.heads) * x.rows() * x.rows()) +
              " attention cells exceeds the limit of " + std::to_string(limits::max_attention_cells));
}

}  // namespace

// One parallel region of three task loops (as grouped_attention.cpp): projections per block of rows, the
// two maps and the combination per head × block of query rows, the output per block of rows.
AttentionResult differential_attention(const Mat& x, const AttentionWeights& w, const DifferentialParams& params,
                                       const AttentionShape& s, const AttentionOptions& options) {
  check_inputs(x, w, params, s);
  const int T = int(x.rows()), H = s.heads, G = s.groups, C = s.d_model, d = s.head_dim() / 2;
  const long long work = 1ll * T * C * (2 * H * d + 4 * G * d) + 4ll * H * T * T * d + 2ll * H * T * T * d + 1ll * T * C * C;
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);
  AttentionResult r;
  r.q.assign(2 * H, Mat(T, d)), r.k.assign(2 * G, Mat(T, d)), r.v.assign(G, Mat(T, 2 * d));
  r.scores.assign(2 * H, Mat(T, T)), r.probs_1.assign(H, Mat(T, T)), r.probs_2.assign(H, Mat(T, T));
  r.probs.assign(H, Mat(T, T)), r.head_out.assign(H, Mat(T, 2 * d));
  r.concat.resize(T, Eigen::Index(H) * 2 * d);
  r.output.resize(T, C);
  r.lambda = differential_lambda(params);
  const float lambda = float(r.lambda), out_factor = float(1.0 - differential_lambda_init(params.layer));
  const float scale = options.scale_scores ? float(1.0 / std::sqrt(double(d))) : 1.0f;
  const int blocks = (T + attention_row_block - 1) / attention_row_block;
  auto block_end = [&](int r0) { return std::min(T, r0 + attention_row_block); };
  std::atomic<bool> cancelled{false}, overflow{false};
  auto stop = [&] {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) cancelled = true;
    return cancelled.load(std::memory_order_relaxed) || overflow.load(std::memory_order_relaxed);
  };
#pragma omp parallel
  {
    // 1. project rows [r0, r1) and split them into the halves (Q, K) and the values
#pragma omp for schedule(dynamic)
    for (int b = 0; b < blocks; ++b) {
      if (stop()) continue;
      const int r0 = b * attention_row_block, n = block_end(r0) - r0;
      const auto xb = x.middleRows(r0, n);
      Mat q = xb * w.wq.transpose(), k = xb * w.wk.transpose(), v = xb * w.wv.transpose();
      if (w.bq.size()) q.rowwise() += w.bq.transpose();
      if (w.bk.size()) k.rowwise() += w.bk.transpose();
      if (w.bv.size()) v.rowwise() += w.bv.transpose();
      if (!all_finite(q) || !all_finite(k) || !all_finite(v)) overflow = true;
      for (int i = 0; i < 2 * H; ++i) r.q[i].middleRows(r0, n) = q.middleCols(Eigen::Index(i) * d, d);
      for (int i = 0; i < 2 * G; ++i) r.k[i].middleRows(r0, n) = k.middleCols(Eigen::Index(i) * d, d);
      for (int j = 0; j < G; ++j) r.v[j].middleRows(r0, n) = v.middleCols(Eigen::Index(j) * 2 * d, 2 * d);
    }
    // 2–3. the two maps, A = P₁ − λ·P₂, A·V, the per-head RMSNorm times (1 − λ_init)
#pragma omp for schedule(dynamic)
    for (int task = 0; task < H * blocks; ++task) {
      if (stop()) continue;
      const int h = task / blocks, g = kv_group_of_head(h, H, G);
      const int r0 = (task % blocks) * attention_row_block, r1 = block_end(r0), n = r1 - r0;
      detail::attend_rows(r.q[2 * h], r.k[2 * g], Mat(), r0, r1, scale, options, r.scores[2 * h], r.probs_1[h], nullptr);
      detail::attend_rows(r.q[2 * h + 1], r.k[2 * g + 1], Mat(), r0, r1, scale, options, r.scores[2 * h + 1],
                          r.probs_2[h], nullptr);
      r.probs[h].middleRows(r0, n) = r.probs_1[h].middleRows(r0, n) - lambda * r.probs_2[h].middleRows(r0, n);
      Mat o = r.probs[h].middleRows(r0, n) * r.v[g];  // [n, 2d]
      detail::rms_norm_rows(o, params.norm, differential_norm_eps);
      o *= out_factor;
      r.head_out[h].middleRows(r0, n) = o;
      r.concat.block(r0, Eigen::Index(h) * 2 * d, n, 2 * d) = o;
    }
    // 4. output
#pragma omp for schedule(dynamic)
    for (int b = 0; b < blocks; ++b) {
      if (stop()) continue;
      const int r0 = b * attention_row_block, n = block_end(r0) - r0;
      auto out = r.output.middleRows(r0, n);
      out.noalias() = r.concat.middleRows(r0, n) * w.wo.transpose();
      if (w.bo.size()) out.rowwise() += w.bo.transpose();
    }
  }
  if (overflow)
    throw InputError("the projections Q, K, V overflow float32: the input values (largest |x| = " +
                     std::to_string(x.cwiseAbs().maxCoeff()) + ") are too large for these weights");
  if (cancelled) throw Cancelled();
  return r;
}

}  // namespace attnscope
