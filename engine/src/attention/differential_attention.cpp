// differential_attention.cpp — differential attention's fast path (differential_attention.h): Eigen
// products, heads in parallel; λ, its seeded vectors and the shape rule.
//
// Legend: T tokens, C d_model, H heads, G kv groups, d = C/(2H), g(h) = ⌊h / (H/G)⌋.
//   1. project   Q [T, 2H·d] → [2H, T, d];  K [T, 2G·d] → [2G, T, d];  V [T, G·2d] → [G, T, 2d]
//   2. maps      P₁,h = softmax(Q[2h]·K[2g]ᵀ/√d),  P₂,h = softmax(Q[2h+1]·K[2g+1]ᵀ/√d)   (+ causal mask)
//   3. combine   A_h = P₁,h − λ·P₂,h;  O_h = RMSNorm(A_h·V_g) · (1 − λ_init)   [T, 2d]
//   4. output    out = concat_h(O_h)·W_Oᵀ + b_O                              [T, C]
#include "attnscope/attention/differential_attention.h"

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

AttentionResult differential_attention(const Mat& x, const AttentionWeights& w, const DifferentialParams& params,
                                       const AttentionShape& s, const AttentionOptions& options) {
  check_inputs(x, w, params, s);
  const int T = int(x.rows()), H = s.heads, G = s.groups, C = s.d_model, d = s.head_dim() / 2;
  const long long work = 3ll * T * C * C + 4ll * H * T * T * d;
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);
  // 1. project
  Mat q = x * w.wq.transpose(), k = x * w.wk.transpose(), v = x * w.wv.transpose();
  if (w.bq.size()) q.rowwise() += w.bq.transpose();
  if (w.bk.size()) k.rowwise() += w.bk.transpose();
  if (w.bv.size()) v.rowwise() += w.bv.transpose();
  require(all_finite(q) && all_finite(k) && all_finite(v),
          "the projections Q, K, V overflow float32: the input values (largest |x| = " +
              std::to_string(x.cwiseAbs().maxCoeff()) + ") are too large for these weights");
  AttentionResult r;
  r.q.resize(2 * H), r.k.resize(2 * G), r.v.resize(G);
  for (int i = 0; i < 2 * H; ++i) r.q[i] = q.middleCols(Eigen::Index(i) * d, d);
  for (int i = 0; i < 2 * G; ++i) r.k[i] = k.middleCols(Eigen::Index(i) * d, d);
  for (int j = 0; j < G; ++j) r.v[j] = v.middleCols(Eigen::Index(j) * 2 * d, 2 * d);
  r.lambda = differential_lambda(params);
  const double lambda_init = differential_lambda_init(params.layer);
  r.scores.resize(2 * H), r.probs.resize(H), r.probs_1.resize(H), r.probs_2.resize(H), r.head_out.resize(H);
  r.concat.resize(T, Eigen::Index(H) * 2 * d);
  const float scale = options.scale_scores ? float(1.0 / std::sqrt(double(d))) : 1.0f;
  std::atomic<bool> cancelled{false};
#pragma omp parallel for schedule(dynamic)
  for (int h = 0; h < H; ++h) {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) {
      cancelled = true;
      continue;
    }
    const int g = kv_group_of_head(h, H, G);
    // 2. the two maps
    detail::attend_head(r.q[2 * h], r.k[2 * g], Mat(), scale, options.causal, r.scores[2 * h], r.probs_1[h], nullptr);
    detail::attend_head(r.q[2 * h + 1], r.k[2 * g + 1], Mat(), scale, options.causal, r.scores[2 * h + 1], r.probs_2[h], nullptr);
    // 3. combine, weigh, normalise
    r.probs[h] = r.probs_1[h] - float(r.lambda) * r.probs_2[h];
    r.head_out[h].noalias() = r.probs[h] * r.v[g];
    detail::rms_norm_rows(r.head_out[h], params.norm, differential_norm_eps);
    r.head_out[h] *= float(1.0 - lambda_init);
    r.concat.middleCols(Eigen::Index(h) * 2 * d, 2 * d) = r.head_out[h];
  }
  if (cancelled) throw Cancelled();
  // 4. output
  r.output.noalias() = r.concat * w.wo.transpose();
  if (w.bo.size()) r.output.rowwise() += w.bo.transpose();
  return r;
}

}  // namespace attnscope
