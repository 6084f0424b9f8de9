// grouped_attention.cpp — the fast path: tasks over blocks of query rows, on all cores; the weights packed
// once per call for the projections, steps 2–5 fused per head and block (attention_kernel.h).
//
// Legend: T tokens, C d_model, H query heads, G kv groups, d_k = C / H.
//   1. project   Q = X·W_Qᵀ + b_Q [T, H·d_k];  K, V = X·W_{K,V}ᵀ + b [T, G·d_k]  (RoPE: Q, K rotated per token)
//   2. scores    S_h = Q_h·K_{g(h)}ᵀ · scale (+ ALiBi −m_h|i − j| or relpos λ·positional)   [T, T] per head
//   3. mask      S_h[i, j] = −inf for j > i (causal), and j ≤ i − W unless j < sinks (window W)
//   4. softmax   P_h = softmax_rows(S_h), with the sink logit s_h in the denominator   [T, T]
//   5. weigh     O_h = P_h·V_{g(h)}                          [T, d_k] → concat [T, H·d_k]
//   6. output    out = concat·W_Oᵀ + b_O                     [T, C]
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/core/limits.h"
#include "attnscope/core/rng.h"
#include "attention_kernel.h"
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

std::vector<double> seeded_sink_logits(int heads, uint64_t seed) {
  Rng rng(seed ^ 0x5117C0DEull);
  std::vector<double> logits(size_t(std::max(heads, 0)));
  for (double& s : logits) s = rng.uniform(-1.0f, 3.0f);
  return logits;
}

namespace {

// What one head adds to its scores and softmax beyond Q·Kᵀ·scale: the position bias of (i, j) and the
// sink logit. The relpos bias holds rows [r0, r0 + rows) of the head's positional scores × λ.
struct HeadExtras {
  PositionScheme scheme = PositionScheme::nope;
  double alibi_slope = 0;
  MatD relpos_bias;  // [rows, T]
  int r0 = 0;
  bool sink = false;
  double sink_logit = 0;
  double bias(int i, int j) const {
    if (scheme == PositionScheme::alibi) return -alibi_slope * std::abs(i - j);
    if (scheme == PositionScheme::relpos) return relpos_bias(i - r0, j);
    return 0;
  }
};

// Row i of S = Q·Kᵀ·scale (+ bias, masked) and of P = softmax(S), computed in double precision.
// q [T, d_k], k [T, d_k]; writes scores row (cast to float, so ±inf where it overflows), probs row and
// the sink's share.
void rescore_row_in_double(const Mat& q, const Mat& k, int i, double scale, const AttentionOptions& o,
                           const HeadExtras& x, Mat& scores, Mat& probs, float* sink_share) {
  const Eigen::Index T = k.rows();
  Eigen::VectorXd s(T);
  for (Eigen::Index j = 0; j < T; ++j)
    s[j] = !key_visible(i, int(j), o) ? -std::numeric_limits<double>::infinity()
                                      : q.row(i).cast<double>().dot(k.row(j).cast<double>()) * scale + x.bias(i, int(j));
  const double max = x.sink ? std::max(s.maxCoeff(), x.sink_logit) : s.maxCoeff();
  Eigen::VectorXd e = (s.array() - max).exp();
  const double sink = x.sink ? std::exp(x.sink_logit - max) : 0.0, denominator = e.sum() + sink;
  e /= denominator;
  for (Eigen::Index j = 0; j < T; ++j) {
    scores(i, j) = float(s[j]);
    probs(i, j) = float(e[j]);
  }
  if (sink_share) *sink_share = float(sink / denominator);
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

// Rows [r0, r1) of one head: S = Q·Kᵀ·scale (+ bias, masked), P = softmax(S) (+ sink), O = P·V, by the fused
// kernel (attention_kernel.h). q [T, d_k]; keys: Kᵀ of the head's group; values: V of the group; scores,
// probs [T, T] and out [T, d_k] are written in rows [r0, r1) only, sink_share [T] (when the head has a sink) too.
// Rows whose float32 scores overflow (inputs near 1e20) are redone in double, so that their probabilities
// stay exact instead of merely finite.
void attend_block(const Mat& q, const Mat& k, const detail::KeysT& keys, const detail::ValuesView& values, int r0, int r1,
                  float scale, const AttentionOptions& o, const HeadExtras& x, Mat& scores, Mat& probs, Mat& out,
                  float* sink_share) {
  detail::RowHooks hooks;
  if (x.scheme == PositionScheme::alibi || x.scheme == PositionScheme::relpos)
    hooks.bias = [&](int i, float* row, int n) {
      for (int j = 0; j < n; ++j) row[j] = float(double(row[j]) + x.bias(i, j));
    };
  hooks.nonfinite = [&](int i) {
    rescore_row_in_double(q, k, i, scale, o, x, scores, probs, sink_share ? sink_share + i : nullptr);
  };
  hooks.sink = x.sink;
  hooks.sink_logit = float(x.sink_logit);
  hooks.sink_share = sink_share;
  detail::attend_block_fused(q.data(), q.cols(), int(q.cols()), keys, values, r0, r1, scale, o, hooks, scores, probs,
                             out.data(), out.cols());
}

// Throws InputError unless the options fit H heads of width d_k and T tokens.
void validate_options(const AttentionOptions& o, int T, int H, int dk) {
  require(o.window >= 0, "the sliding window must be at least 1 token (0 = none), got " + std::to_string(o.window));
  require(o.sinks >= 0, "the number of sink tokens must be 0 or more, got " + std::to_string(o.sinks));
  require(o.sinks == 0 || o.window > 0, "sink tokens stay visible beside a sliding window: set a window too");
  require(o.sinks <= T, "there are " + std::to_string(o.sinks) + " sink tokens but only " + std::to_string(T) +
                            " tokens: the sinks are among the first tokens (0 to " + std::to_string(T) + ")");
  require(o.sink_logits.empty() || int(o.sink_logits.size()) == H,
          "sink logits: one per head (" + std::to_string(H) + "), got " + std::to_string(o.sink_logits.size()));
  for (double s : o.sink_logits) require(std::isfinite(s), "the sink logits must be finite");
  const PositionEncoding& p = o.positions;
  if (p.scheme == PositionScheme::rope) {
    require(dk % 2 == 0, "rotary positions turn pairs of dimensions, so the head width d_k must be even, got " +
                             std::to_string(dk) + " (choose d_model and heads so that d_model / heads is even)");
    require(int(p.rope_inv_freq.size()) == dk / 2, "RoPE needs d_k / 2 = " + std::to_string(dk / 2) + " frequencies, got " +
                                                      std::to_string(p.rope_inv_freq.size()));
  }
  if (p.scheme == PositionScheme::alibi)
    require(int(p.alibi_slopes.size()) == H, "ALiBi needs one slope per head (" + std::to_string(H) + "), got " +
                                                 std::to_string(p.alibi_slopes.size()));
  if (p.scheme == PositionScheme::relpos)
    require(int(p.relpos_alphas.size()) == H && int(p.relpos_deltas.size()) == H,
            "relative positions need one relative-position head (α, Δ) per attention head (" + std::to_string(H) +
                "), got " + std::to_string(p.relpos_alphas.size()));
}

}  // namespace

AttentionResult grouped_attention(const Mat& x, const AttentionWeights& w, const AttentionShape& shape,
                                  const AttentionOptions& options) {
  validate_inputs(x, w, shape);
  const int T = int(x.rows()), H = shape.heads, G = shape.groups, dk = shape.head_dim();
  validate_options(options, T, H, dk);
  const PositionEncoding& positions = options.positions;
  const bool rotary = positions.scheme == PositionScheme::rope;
  const RopeTables rope = rotary ? rope_tables(positions.rope_inv_freq, positions.rope_attention_factor, T, positions.rope_layout)
                                 : RopeTables{};
  const float scale = options.scale_scores ? 1.0f / std::sqrt(float(dk)) : 1.0f;
  // Projections, scores and P·V in multiply–adds; small inputs stay on this thread (parallel.h).
  const long long C = shape.d_model;
  const long long work = T * C * (H + 2 * G) * dk + 2ll * H * T * T * dk + T * H * dk * C;
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);

  AttentionResult r;
  r.q.resize(H), r.k.resize(G), r.v.resize(G), r.scores.resize(H), r.probs.resize(H), r.head_out.resize(H);
  for (int h = 0; h < H; ++h) r.q[h].resize(T, dk), r.scores[h].resize(T, T), r.probs[h].resize(T, T), r.head_out[h].resize(T, dk);
  for (int g = 0; g < G; ++g) r.k[g].resize(T, dk), r.v[g].resize(T, dk);
  r.concat.resize(T, Eigen::Index(H) * dk);
  r.output.resize(T, C);
  if (!options.sink_logits.empty()) r.sink_share.resize(H, T);
  r.alibi_slopes = positions.alibi_slopes;
  // Each group's keys as Kᵀ and its values as the fused kernel reads them (attention_kernel.h).
  std::vector<detail::KeysT> keys_t(static_cast<size_t>(G));
  std::vector<detail::PaddedValues> values(static_cast<size_t>(G));
  for (int g = 0; g < G; ++g) {
    keys_t[size_t(g)].resize(T, dk);
    values[size_t(g)].resize(T, dk);
    if (detail::PaddedValues::direct_ok(dk)) values[size_t(g)].view = {r.v[g].data(), r.v[g].cols(), dk};
  }

  // Every step is cut into tasks over blocks of query rows that write disjoint rows of the results,
  // so no task waits for another inside a step and the cores take tasks as they come free: on two
  // cores shared with other programs, a core the scheduler hands away for a time slice does not hold
  // the other at a barrier inside every product (Eigen's threaded products spin on each other).
  // Each task runs its products on one thread (Eigen does so inside a parallel region).
  const int blocks = (T + attention_row_block - 1) / attention_row_block;
  auto block_end = [&](int r0) { return std::min(T, r0 + attention_row_block); };  // rows [r0, end)
  std::atomic<bool> overflow{false}, cancelled{false};
  auto stop = [&] {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) cancelled = true;
    return cancelled.load(std::memory_order_relaxed) || overflow.load(std::memory_order_relaxed);
  };
  // Short inputs have few row blocks: the projections are then also cut by columns (whole heads or
  // groups, or slices of C for the output) so that each step has at least `min_tasks` tasks and
  // both cores get about the same share.
  constexpr int min_tasks = 8;
  const int qkv_parts = std::clamp((min_tasks + 3 * blocks - 1) / (3 * blocks), 1, H);
  const int out_parts = std::clamp((min_tasks + blocks - 1) / blocks, 1, (int(C) + detail::key_panel_width() - 1) / detail::key_panel_width());
  // The four weight matrices packed for the projections (attention_kernel.h): W_Q, W_K, W_V, W_O.
  const Mat* weights[4] = {&w.wq, &w.wk, &w.wv, &w.wo};
  detail::PackedWeights packed[4];
  int panels_before[5] = {0};
  for (int m = 0; m < 4; ++m) {
    packed[m].resize(*weights[m]);
    panels_before[m + 1] = panels_before[m] + packed[m].count();
  }
  const int width = detail::key_panel_width();
  // With one block of rows, every panel is read by one task only (when heads are whole panels): that task
  // packs it, and step 0 (and its barrier) is skipped.
  const bool pack_in_task = blocks == 1 && dk % width == 0;
#pragma omp parallel
  {
    // 0. pack the weights, a few panels per task
    constexpr int panels_per_task = 4;
#pragma omp for schedule(dynamic)
    for (int task = 0; task < (pack_in_task ? 0 : (panels_before[4] + panels_per_task - 1) / panels_per_task); ++task)
      for (int p = task * panels_per_task; p < std::min(panels_before[4], (task + 1) * panels_per_task); ++p) {
        const int m = int(std::upper_bound(panels_before, panels_before + 5, p) - panels_before) - 1;
        packed[m].pack(*weights[m], p - panels_before[m], p - panels_before[m] + 1);
      }
    // 1. project: rows [r0, r1) of Q, K or V = X·Wᵀ + b for heads (or groups) [u0, u1), split into
    // their [T, d_k]. The product covers whole panels; the slice's columns start at `off`.
    Mat proj;
#pragma omp for schedule(dynamic)
    for (int task = 0; task < 3 * blocks * qkv_parts; ++task) {
      if (stop()) continue;
      const int which = task / (blocks * qkv_parts);  // 0 Q, 1 K, 2 V
      const int part = task / blocks % qkv_parts;
      const int r0 = (task % blocks) * attention_row_block, r1 = block_end(r0);
      const Vec& b = which == 0 ? w.bq : which == 1 ? w.bk : w.bv;
      Tensor3& dst = which == 0 ? r.q : which == 1 ? r.k : r.v;
      const int units = int(dst.size()), u0 = part * units / qkv_parts, u1 = (part + 1) * units / qkv_parts;
      if (u0 == u1) continue;  // fewer groups than parts
      const int c0 = u0 * dk, cols = (u1 - u0) * dk, p0 = c0 / width, p1 = (c0 + cols + width - 1) / width;
      proj.resize(r1 - r0, Eigen::Index(p1 - p0) * width);
      if (pack_in_task) packed[which].pack(*weights[which], p0, p1);
      detail::project_rows(x.row(r0).data(), x.cols(), r1 - r0, packed[which], p0, p1, proj.data(), proj.cols());
      auto slice = proj.middleCols(c0 - p0 * width, cols);  // [r1 − r0, cols]
      if (b.size()) slice.rowwise() += b.segment(c0, cols).transpose();
      if (!all_finite(slice)) overflow = true;
      if (rotary && which < 2) rope_rotate(slice, rope, r0, u1 - u0);  // token r0 + row, every head of the slice
      for (int j = u0; j < u1; ++j) {
        dst[j].middleRows(r0, r1 - r0) = slice.middleCols(Eigen::Index(j - u0) * dk, dk);
        const float* rows = slice.data() + Eigen::Index(j - u0) * dk;
        if (which == 1) keys_t[size_t(j)].set_rows(rows, proj.cols(), r0, r1 - r0);
        if (which == 2) values[size_t(j)].set_rows(rows, proj.cols(), r0, r1 - r0);
      }
    }
    // 2–5 per head × block of query rows (attend_block): S, mask, softmax, P·V, concat.
#pragma omp for schedule(dynamic)
    for (int task = 0; task < H * blocks; ++task) {
      if (stop()) continue;
      const int h = task / blocks, g = kv_group_of_head(h, H, G);
      const int r0 = (task % blocks) * attention_row_block, r1 = block_end(r0);
      HeadExtras extras;
      extras.scheme = positions.scheme;
      extras.r0 = r0;
      if (positions.scheme == PositionScheme::alibi) extras.alibi_slope = positions.alibi_slopes[size_t(h)];
      if (positions.scheme == PositionScheme::relpos)
        extras.relpos_bias =
            positions.relpos_lambda * relative_position_scores_1d(positions.relpos_alphas[size_t(h)],
                                                                  positions.relpos_deltas[size_t(h)], T, r0, r1 - r0);
      extras.sink = !options.sink_logits.empty();
      if (extras.sink) extras.sink_logit = options.sink_logits[size_t(h)];
      attend_block(r.q[h], r.k[g], keys_t[size_t(g)], values[size_t(g)].view, r0, r1, scale, options, extras, r.scores[h], r.probs[h], r.head_out[h],
                   extras.sink ? r.sink_share.row(h).data() : nullptr);
      r.concat.block(r0, Eigen::Index(h) * dk, r1 - r0, dk) = r.head_out[h].middleRows(r0, r1 - r0);
    }
    // 6. output: rows [r0, r1), columns [c0, c1) of concat·W_Oᵀ + b_O.
#pragma omp for schedule(dynamic)
    for (int task = 0; task < blocks * out_parts; ++task) {
      if (stop()) continue;
      const int part = task / blocks;
      const int r0 = (task % blocks) * attention_row_block, r1 = block_end(r0);
      const int p0 = part * packed[3].count() / out_parts, p1 = (part + 1) * packed[3].count() / out_parts;
      if (p0 == p1) continue;
      const Eigen::Index c0 = Eigen::Index(p0) * width, cols = std::min<Eigen::Index>(C, Eigen::Index(p1) * width) - c0;
      proj.resize(r1 - r0, Eigen::Index(p1 - p0) * width);
      if (pack_in_task) packed[3].pack(w.wo, p0, p1);
      detail::project_rows(r.concat.row(r0).data(), r.concat.cols(), r1 - r0, packed[3], p0, p1, proj.data(), proj.cols());
      auto out = r.output.block(r0, c0, r1 - r0, cols);
      out = proj.leftCols(cols);  // [r1 − r0, cols]
      if (w.bo.size()) out.rowwise() += w.bo.segment(c0, cols).transpose();
    }
  }
  if (overflow)
    throw InputError("the projections Q, K, V overflow float32: the input values (largest |x| = " +
                     std::to_string(x.cwiseAbs().maxCoeff()) + ") are too large for these weights");
  if (cancelled) throw Cancelled();
  return r;
}

}  // namespace attnscope
