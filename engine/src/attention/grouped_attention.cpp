// grouped_attention.cpp — the fast path: one GEMM per projection, heads in parallel.
//
// Legend: T tokens, C d_model, H query heads, G kv groups, d_k = C / H.
//   1. project   Q = X·W_Qᵀ + b_Q [T, H·d_k];  K, V = X·W_{K,V}ᵀ + b [T, G·d_k]
//   2. scores    S_h = Q_h·K_{g(h)}ᵀ · scale                 [T, T] per head
//   3. mask      S_h[i, j] = −inf for j > i (causal)
//   4. softmax   P_h = softmax_rows(S_h)                     [T, T]
//   5. weigh     O_h = P_h·V_{g(h)}                          [T, d_k] → concat [T, H·d_k]
//   6. output    out = concat·W_Oᵀ + b_O                     [T, C]
#include <cmath>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/core/limits.h"
#include "core/parallel.h"

namespace attnscope {

namespace {

// The careful path for rows holding NaN or +inf: see softmax_rows' contract in the header.
void softmax_row_careful(Eigen::Ref<Eigen::Matrix<float, 1, Eigen::Dynamic>> row) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  float max = -inf;
  for (Eigen::Index j = 0; j < row.size(); ++j) {
    if (std::isnan(row[j])) row[j] = -inf;  // an undefined score carries no weight
    max = std::max(max, row[j]);
  }
  if (max == inf) {  // overflowed scores: share the mass among the infinite ones
    float count = 0;
    for (Eigen::Index j = 0; j < row.size(); ++j) count += row[j] == inf;
    for (Eigen::Index j = 0; j < row.size(); ++j) row[j] = row[j] == inf ? 1.0f / count : 0.0f;
    return;
  }
  if (max == -inf) {  // nothing to attend to: uniform, never NaN
    row.setConstant(1.0f / float(row.size()));
    return;
  }
  float sum = 0;
  for (Eigen::Index j = 0; j < row.size(); ++j) {
    row[j] = row[j] == -inf ? 0.0f : std::exp(row[j] - max);
    sum += row[j];
  }
  row /= sum;  // sum ≥ 1: the maximum contributes exp(0)
}

}  // namespace

namespace {

// probs = softmax_rows(scores); `probs` may be `scores` itself.
// Fast path: vectorised exp over the row. A NaN or +inf anywhere makes the sum non-finite, and
// then the careful scalar path redoes the row from the original scores. Rows are spread over the
// cores for large matrices (inside an already parallel region this runs serially).
void softmax_rows_into(const Mat& scores, Mat& probs) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  probs.resize(scores.rows(), scores.cols());
#pragma omp parallel if (scores.size() >= (1 << 16))
  {
    Eigen::Array<float, 1, Eigen::Dynamic> e(scores.cols());
#pragma omp for schedule(static)
    for (Eigen::Index i = 0; i < scores.rows(); ++i) {
      const auto row = scores.row(i);
      const float max = row.maxCoeff();
      if (std::isfinite(max)) {
        e = (row.array() - max).exp();
        e = (row.array() == -inf).select(0.0f, e);  // masked keys get exactly 0
        const float sum = e.sum();
        if (std::isfinite(sum)) {
          probs.row(i) = e * (1.0f / sum);
          continue;
        }
      }
      probs.row(i) = row;
      softmax_row_careful(probs.row(i));
    }
  }
}

}  // namespace

void softmax_rows(Mat& s) { softmax_rows_into(s, s); }

namespace {

// Row i of S = Q·Kᵀ·scale and of P = softmax(S), computed in double precision.
// q [T, d_k], k [T, d_k]; writes scores row (cast to float, so ±inf where it overflows) and probs row.
void rescore_row_in_double(const Mat& q, const Mat& k, int i, double scale, bool causal, Mat& scores, Mat& probs) {
  const Eigen::Index T = k.rows();
  Eigen::VectorXd s(T);
  for (Eigen::Index j = 0; j < T; ++j)
    s[j] = (causal && j > i) ? -std::numeric_limits<double>::infinity()
                             : q.row(i).cast<double>().dot(k.row(j).cast<double>()) * scale;
  const double max = s.maxCoeff();
  Eigen::VectorXd e = (s.array() - max).exp();
  e /= e.sum();
  for (Eigen::Index j = 0; j < T; ++j) {
    scores(i, j) = float(s[j]);
    probs(i, j) = float(e[j]);
  }
}

void validate_inputs(const Mat& x, const AttentionWeights& w, const AttentionShape& shape) {
  validate_weights(w, shape);
  require(x.rows() >= 1, "the input has no tokens");
  require(x.rows() <= limits::max_tokens, "the input has " + std::to_string(x.rows()) + " tokens; the limit is " +
                                              std::to_string(limits::max_tokens));
  require(x.cols() == shape.d_model, "the input vectors have width " + std::to_string(x.cols()) +
                                         " but d_model is " + std::to_string(shape.d_model));
  require(int64_t(shape.heads) * x.rows() * x.rows() <= limits::max_attention_cells,
          "heads × tokens² = " + std::to_string(int64_t(shape.heads) * x.rows() * x.rows()) +
              " attention cells exceeds the limit of " + std::to_string(limits::max_attention_cells) +
              " (use fewer heads or a shorter input)");
}

}  // namespace

AttentionResult grouped_attention(const Mat& x, const AttentionWeights& w, const AttentionShape& shape,
                                  const AttentionOptions& options) {
  validate_inputs(x, w, shape);
  const int T = int(x.rows()), H = shape.heads, G = shape.groups, dk = shape.head_dim();
  const float scale = options.scale_scores ? 1.0f / std::sqrt(float(dk)) : 1.0f;
  constexpr float inf = std::numeric_limits<float>::infinity();
  // Projections, scores and P·V in multiply–adds; small inputs stay on this thread (parallel.h).
  const long long C = shape.d_model;
  const long long work = T * C * (H + 2 * G) * dk + 2ll * H * T * T * dk + T * H * dk * C;
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);

  // 1. project: three GEMMs; Eigen parallelises them over both cores.
  Mat q = x * w.wq.transpose();  // [T, H·d_k]
  Mat k = x * w.wk.transpose();  // [T, G·d_k]
  Mat v = x * w.wv.transpose();  // [T, G·d_k]
  if (w.bq.size()) q.rowwise() += w.bq.transpose();
  if (w.bk.size()) k.rowwise() += w.bk.transpose();
  if (w.bv.size()) v.rowwise() += w.bv.transpose();

  if (!all_finite(q) || !all_finite(k) || !all_finite(v))
    throw InputError("the projections Q, K, V overflow float32: the input values (largest |x| = " +
                     std::to_string(x.cwiseAbs().maxCoeff()) + ") are too large for these weights");

  AttentionResult r;
  r.q.resize(H), r.k.resize(G), r.v.resize(G);
  r.scores.resize(H), r.probs.resize(H), r.head_out.resize(H);
  for (int h = 0; h < H; ++h) r.scores[h].resize(T, T), r.head_out[h].resize(T, dk);
  for (int g = 0; g < G; ++g) {
    r.k[g] = k.middleCols(Eigen::Index(g) * dk, dk);  // [T, d_k]
    r.v[g] = v.middleCols(Eigen::Index(g) * dk, dk);
  }
  r.concat.resize(T, Eigen::Index(H) * dk);

  // 2–5 per head. Long inputs run the heads one after another so that every product and the
  // softmax use all cores; short inputs give each core whole heads, as their products are too
  // small to split.
  auto attend = [&](int h) {
    const int g = kv_group_of_head(h, H, G);
    r.q[h] = q.middleCols(Eigen::Index(h) * dk, dk);               // [T, d_k]
    Mat& scores = r.scores[h];
    scores.noalias() = (r.q[h] * scale) * r.k[g].transpose();     // [T, T]
    if (options.causal)
      for (int i = 0; i < T; ++i) scores.row(i).tail(T - 1 - i).setConstant(-inf);
    Mat& probs = r.probs[h];
    softmax_rows_into(scores, probs);
    // Scores beyond float range (inputs near 1e20) overflow to ±inf or NaN; those rows are redone
    // in double so the probabilities stay exact instead of merely finite.
    for (int i = 0; i < T; ++i)
      if (!all_finite(scores.row(i).head(options.causal ? i + 1 : T)))
        rescore_row_in_double(r.q[h], r.k[g], i, scale, options.causal, scores, probs);
    r.head_out[h].noalias() = probs * r.v[g];                      // [T, d_k]
    r.concat.middleCols(Eigen::Index(h) * dk, dk) = r.head_out[h];
  };
  if (T >= 192) {
    for (int h = 0; h < H; ++h) {
      check_cancel(options.cancel);
      attend(h);
    }
  } else {
#pragma omp parallel for schedule(dynamic) if (H > 1 && int64_t(T) * T * dk >= 4096)
    for (int h = 0; h < H; ++h) attend(h);
  }

  check_cancel(options.cancel);
  // 6. output projection.
  r.output = r.concat * w.wo.transpose();  // [T, C]
  if (w.bo.size()) r.output.rowwise() += w.bo.transpose();
  return r;
}

}  // namespace attnscope
