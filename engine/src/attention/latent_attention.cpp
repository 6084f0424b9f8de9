// latent_attention.cpp — MLA's fast path in both forms (latent_attention.h): the weights packed once per
// call for the projections, the fused per-head kernel (attention_kernel.h), heads in parallel; the shapes,
// the seeded weights and the rotary part.
//
// Legend: T tokens, C d_model, H heads, d_N = d_v = C/H, d_R rotary part, r_kv / r_q the latents.
//   1. query path   c_Q = RMSNorm(X·W_DQᵀ) [T, r_q];  q_N = c_Q·W_UQᵀ [T, H·d_N];  q_R = RoPE(c_Q·W_QRᵀ) [T, H·d_R]
//   2. K/V path     c_KV = RMSNorm(X·W_DKVᵀ) [T, r_kv];  k_R = RoPE(X·W_KRᵀ) [T, d_R]
//   3. naive        k_N = c_KV·W_UKᵀ, v = c_KV·W_UVᵀ [T, H·d_N];  per head S, mask, softmax, P·v;  out = concat·W_Oᵀ
//   3'. absorbed    q̃_h = [q_N,h·W_UK,h ; q_R,h];  per head S = q̃_h·[c_KV ; k_R]ᵀ, P·c_KV;  out = Σ_h õ_h·(W_O,h·W_UV,h)ᵀ
#include "attnscope/attention/latent_attention.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "attend_head.h"
#include "attention_kernel.h"
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

void rotate_heads(Mat& x, int heads, int d, const LatentRope& rope, int first_position);

// Steps 1 and 2, shared by both forms, for the token rows [r0, r1) — every step is row by row (RoPE turns
// row t by its position t), so blocks of rows are independent tasks.
struct LatentParts {
  Mat c_q, q_nope, q_rope, c_kv, k_rope;  // [T, r_q], [T, H·d_N], [T, H·d_R] (rotated), [T, r_kv], [T, d_R] (rotated)
  LatentParts(const LatentShape& s, int T)
      : c_q(s.q_rank > 0 ? T : 0, s.q_rank), q_nope(T, s.heads * s.head_dim()), q_rope(T, s.heads * s.rope_dim),
        c_kv(T, s.kv_rank), k_rope(T, s.rope_dim) {}
};

// a [rows, in] (row stride lda) · Wᵀ → [rows, out], by the packed product (attention_kernel.h).
Mat times_transposed(const float* a, Eigen::Index lda, int rows, const detail::PackedWeights& w) {
  Mat out(rows, Eigen::Index(w.count()) * detail::key_panel_width());
  detail::project_rows(a, lda, rows, w, 0, w.count(), out.data(), out.cols());
  if (out.cols() == w.out) return out;
  return out.leftCols(w.out);
}
// The same product written into rows [r0, r0 + rows) of `out` [·, w.out] (in place when w.out is a whole
// number of panels).
void times_transposed_into(const float* a, Eigen::Index lda, int rows, const detail::PackedWeights& w, Mat& out, int r0) {
  if (w.out % detail::key_panel_width() == 0)
    detail::project_rows(a, lda, rows, w, 0, w.count(), out.row(r0).data(), out.cols());
  else
    out.middleRows(r0, rows) = times_transposed(a, lda, rows, w);
}

// The weights of one call packed for x·Wᵀ (attention_kernel.h); `wuk`, `wuv` and `wo` only for the naive form.
struct LatentPacked {
  detail::PackedWeights wdq, wuq, wqr, wdkv, wkr, wuk, wuv, wo;
  std::vector<std::pair<detail::PackedWeights*, const Mat*>> all;
  std::vector<int> panels_before;  // panels of all[0 .. i)
  LatentPacked(const LatentWeights& w, bool naive) {
    all = {{&wuq, &w.wuq}, {&wqr, &w.wqr}, {&wdkv, &w.wdkv}, {&wkr, &w.wkr}};
    if (w.wdq.size()) all.push_back({&wdq, &w.wdq});
    if (naive) all.insert(all.end(), {{&wuk, &w.wuk}, {&wuv, &w.wuv}, {&wo, &w.wo}});
    panels_before = {0};
    for (auto& [packed, m] : all) {
      packed->resize(*m);
      panels_before.push_back(panels_before.back() + packed->count());
    }
  }
  int panels() const { return panels_before.back(); }
  void pack_panel(int p) {  // p in [0, panels())
    const size_t i = size_t(std::upper_bound(panels_before.begin(), panels_before.end(), p) - panels_before.begin()) - 1;
    all[i].first->pack(*all[i].second, p - panels_before[i], p - panels_before[i] + 1);
  }
};

void latent_parts_rows(const Mat& x, const LatentWeights& w, const LatentPacked& pw, const LatentShape& s,
                       const LatentRope& rope, int r0, int r1, LatentParts& p) {
  const int H = s.heads, dR = s.rope_dim, n = r1 - r0;
  const float* xb = x.row(r0).data();
  // 1. query path
  Mat cq;
  if (s.q_rank > 0) {
    cq = times_transposed(xb, x.cols(), n, pw.wdq);
    detail::rms_norm_rows(cq, w.q_norm, latent_norm_eps);
    p.c_q.middleRows(r0, n) = cq;
  }
  const float* qin = s.q_rank > 0 ? cq.data() : xb;
  const Eigen::Index ldq = s.q_rank > 0 ? cq.cols() : x.cols();
  times_transposed_into(qin, ldq, n, pw.wuq, p.q_nope, r0);
  Mat qr = times_transposed(qin, ldq, n, pw.wqr);
  if (dR > 0) rotate_heads(qr, H, dR, rope, r0);
  p.q_rope.middleRows(r0, n) = qr;
  // 2. K/V path
  Mat ckv = times_transposed(xb, x.cols(), n, pw.wdkv), kr = times_transposed(xb, x.cols(), n, pw.wkr);
  detail::rms_norm_rows(ckv, w.kv_norm, latent_norm_eps);
  if (dR > 0) rotate_positions(kr, rope, r0);
  p.c_kv.middleRows(r0, n) = ckv;
  p.k_rope.middleRows(r0, n) = kr;
}

// Whether rows [r0, r1) of the parts are finite (checked by the task that made them, while they are in cache).
bool parts_finite(const LatentParts& p, int r0, int r1) {
  const int n = r1 - r0;
  return all_finite(p.q_nope.middleRows(r0, n)) && all_finite(p.q_rope.middleRows(r0, n)) &&
         all_finite(p.c_kv.middleRows(r0, n)) && all_finite(p.k_rope.middleRows(r0, n));
}

[[noreturn]] void overflow(const Mat& x) {
  throw InputError("the projections overflow float32: the input values (largest |x| = " +
                   std::to_string(x.cwiseAbs().maxCoeff()) + ") are too large for these weights");
}

float score_scale(const LatentShape& s, const AttentionOptions& o) {
  return o.scale_scores ? float(1.0 / std::sqrt(double(s.qk_dim()))) : 1.0f;
}

// n matrices [rows, cols], left unset: every entry is written by the tasks (assigning copies of one prototype
// would copy H·T² floats of nothing for the scores and the probabilities alone).
void sized(Tensor3& t, int n, int rows, int cols) {
  t.resize(size_t(n));
  for (Mat& m : t) m.resize(rows, cols);
}

// The tasks of one call: blocks of attention_row_block query rows — half as many below 4 such blocks, so
// that the steps done per block of rows (the projections, the output) still have 4 or more tasks for the
// cores to share at T = 256 (with 2 tasks, a core the scheduler hands away holds the other at the
// barrier), and 4 equal ones there (blocks of 72, a whole number of the kernel's tiles, left 144 rows to
// one core and 112 to the other).
struct Blocks {
  int T, rows, count;
  explicit Blocks(int tokens)
      : T(tokens), rows(tokens < 4 * attention_row_block ? attention_row_block / 2 : attention_row_block),
        count((tokens + rows - 1) / rows) {}
  int begin(int b) const { return b * rows; }
  int end(int b) const { return std::min(T, (b + 1) * rows); }
};

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

RopeParams LatentRope::params() const {
  RopeParams p;
  p.base = base;
  p.layout = interleaved ? RopeLayout::interleaved : RopeLayout::half;
  p.scaling = scaling;
  p.factor = factor;
  p.original_context = original_context;
  return p;
}

namespace {

// rotate_positions on each of `heads` slices of width d of x's rows (head h: columns h·d … h·d + d − 1), the
// angle's cos and sin computed once for all of them.
void rotate_heads(Mat& x, int heads, int d, const LatentRope& rope, int first_position) {
  const int half = d / 2;
  if (half == 0) return;
  // θ_i = base^(−2i/d), scaled (positions.h); YaRN's attention factor multiplies cos and sin.
  const std::vector<double> inv = rope_scaled_inv_freq(rope.params(), d);
  const double factor = rope_attention_factor(rope.params());
  for (int i = 0; i < half; ++i) {
    const double inv_freq = inv[size_t(i)];
    const int a = rope.interleaved ? 2 * i : i, b = rope.interleaved ? 2 * i + 1 : i + half;
    for (Eigen::Index t = 0; t < x.rows(); ++t) {
      const double angle = double(first_position + t) * inv_freq, c = factor * std::cos(angle), sn = factor * std::sin(angle);
      for (int h = 0; h < heads; ++h) {
        float* row = x.row(t).data() + Eigen::Index(h) * d;
        const double xa = row[a], xb = row[b];
        row[a] = float(xa * c - xb * sn);
        row[b] = float(xb * c + xa * sn);
      }
    }
  }
}

}  // namespace

void rotate_positions(Mat& x, const LatentRope& rope, int first_position) {
  rotate_heads(x, 1, int(x.cols()), rope, first_position);
}

// Both forms run in one parallel region of three task loops (as grouped_attention.cpp, so that a core the
// scheduler hands away holds the other at two barriers, not at one per product):
//   rows   per block of rows: steps 1–2 and the per-head q, k, v rows (absorbed: also W_O,h·W_UV,h per head)
//   heads  per head × block of query rows: scores, mask, softmax, weighted sum
//   output per block of rows: concat·W_Oᵀ
AttentionResult latent_attention(const Mat& x, const LatentWeights& w, const LatentShape& s, const LatentRope& rope,
                                 const AttentionOptions& options) {
  validate_latent_weights(w, s);
  check_input(x, s);
  const int T = int(x.rows()), H = s.heads, dN = s.head_dim(), dR = s.rope_dim, C = s.d_model;
  const long long work = 1ll * T * C * (H * (dN + dR) + s.kv_rank + dR) + 2ll * T * s.kv_rank * H * dN +
                         2ll * H * T * T * (dN + dR) + 1ll * T * H * dN * C;
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);
  LatentParts p(s, T);
  AttentionResult r;
  sized(r.q, H, T, dN + dR), sized(r.k, H, T, dN + dR), sized(r.v, H, T, dN);
  sized(r.scores, H, T, T), sized(r.probs, H, T, T), sized(r.head_out, H, T, dN);
  r.concat.resize(T, Eigen::Index(H) * dN);
  r.output.resize(T, C);
  const float scale = score_scale(s, options);
  const Blocks blocks(T);
  // Every head's keys and values as the fused kernel reads them (attention_kernel.h).
  std::vector<detail::KeysT> keys_t(static_cast<size_t>(H));
  std::vector<detail::PaddedValues> values(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) {
    keys_t[size_t(h)].resize(T, dN + dR);
    values[size_t(h)].resize(T, dN);
    if (detail::PaddedValues::direct_ok(dN)) values[size_t(h)].view = {r.v[h].data(), r.v[h].cols(), dN};
  }
  std::atomic<bool> cancelled{false}, parts_overflow{false};
  auto stop = [&] {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) cancelled = true;
    return cancelled.load(std::memory_order_relaxed);
  };
  LatentPacked packed(w, true);
#pragma omp parallel
  {
#pragma omp for schedule(dynamic)
    for (int task = 0; task < packed.panels(); ++task) packed.pack_panel(task);
#pragma omp for schedule(dynamic)
    for (int b = 0; b < blocks.count; ++b) {
      if (stop()) continue;
      const int r0 = blocks.begin(b), n = blocks.end(b) - r0;
      latent_parts_rows(x, w, packed, s, rope, r0, r0 + n, p);
      if (!parts_finite(p, r0, r0 + n)) parts_overflow = true;
      // 3. naive: expand every head's keys and values from the latent rows.
      const float* ckv = p.c_kv.row(r0).data();
      const Mat k_nope = times_transposed(ckv, p.c_kv.cols(), n, packed.wuk);
      const Mat v_all = times_transposed(ckv, p.c_kv.cols(), n, packed.wuv);
      for (int h = 0; h < H; ++h) {
        r.q[h].block(r0, 0, n, dN) = p.q_nope.block(r0, Eigen::Index(h) * dN, n, dN);
        r.q[h].block(r0, dN, n, dR) = p.q_rope.block(r0, Eigen::Index(h) * dR, n, dR);
        r.k[h].block(r0, 0, n, dN) = k_nope.middleCols(Eigen::Index(h) * dN, dN);
        r.k[h].block(r0, dN, n, dR) = p.k_rope.middleRows(r0, n);
        r.v[h].middleRows(r0, n) = v_all.middleCols(Eigen::Index(h) * dN, dN);
        keys_t[size_t(h)].set_rows(r.k[h].row(r0).data(), r.k[h].cols(), r0, n);
        values[size_t(h)].set_rows(r.v[h].row(r0).data(), r.v[h].cols(), r0, n);
      }
    }
#pragma omp for schedule(dynamic)
    for (int task = 0; task < H * blocks.count; ++task) {
      if (stop()) continue;
      const int h = task / blocks.count, b = task % blocks.count;
      detail::attend_block_fused(r.q[h].data(), r.q[h].cols(), dN + dR, keys_t[size_t(h)], values[size_t(h)].view,
                                 blocks.begin(b), blocks.end(b), scale, options, {}, r.scores[h], r.probs[h],
                                 r.head_out[h].data(), r.head_out[h].cols());
      r.concat.block(blocks.begin(b), Eigen::Index(h) * dN, blocks.end(b) - blocks.begin(b), dN) =
          r.head_out[h].middleRows(blocks.begin(b), blocks.end(b) - blocks.begin(b));
    }
#pragma omp for schedule(dynamic)
    for (int b = 0; b < blocks.count; ++b) {
      if (stop()) continue;
      const int r0 = blocks.begin(b), n = blocks.end(b) - r0;
      times_transposed_into(r.concat.row(r0).data(), r.concat.cols(), n, packed.wo, r.output, r0);
    }
  }
  if (cancelled) throw Cancelled();
  if (parts_overflow) overflow(x);
  r.c_q = std::move(p.c_q), r.c_kv = std::move(p.c_kv), r.k_rope = std::move(p.k_rope);
  return r;
}

AttentionResult latent_attention_absorbed(const Mat& x, const LatentWeights& w, const LatentShape& s,
                                          const LatentRope& rope, const AttentionOptions& options) {
  validate_latent_weights(w, s);
  check_input(x, s);
  const int T = int(x.rows()), H = s.heads, dN = s.head_dim(), dR = s.rope_dim, C = s.d_model, rk = s.kv_rank;
  const long long work = 1ll * T * C * (H * (dN + dR) + rk + dR) + 1ll * T * H * dN * rk + 2ll * H * T * T * (rk + dR) +
                         1ll * C * dN * rk * H + 1ll * T * H * rk * C;
  const detail::SingleThreadScope serial(work < detail::serial_work_limit);
  LatentParts p(s, T);
  AttentionResult r;
  // The one cached key every head reads, [c_KV, k_R], and the latent as the value.
  sized(r.k, 1, T, rk + dR), sized(r.v, 1, T, rk), sized(r.q, H, T, rk + dR);
  sized(r.scores, H, T, T), sized(r.probs, H, T, T), sized(r.head_out, H, T, rk);
  r.concat.resize(T, Eigen::Index(H) * rk);
  r.output.resize(T, C);
  Mat wo_absorbed(C, Eigen::Index(H) * rk);  // [C, H·r_kv]: block h = W_O,h·W_UV,h
  detail::PackedWeights wo_packed;
  wo_packed.resize(wo_absorbed);
  const int wo_panels = wo_packed.count();
  const float scale = score_scale(s, options);
  const Blocks blocks(T);
  // The shared key [c_KV, k_R] and value c_KV as the fused kernel reads them (attention_kernel.h).
  detail::KeysT keys_t;
  keys_t.resize(T, rk + dR);
  detail::PaddedValues values;
  values.resize(T, rk);
  if (detail::PaddedValues::direct_ok(rk)) values.view = {r.v[0].data(), r.v[0].cols(), rk};
  std::atomic<bool> cancelled{false}, parts_overflow{false};
  auto stop = [&] {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed)) cancelled = true;
    return cancelled.load(std::memory_order_relaxed);
  };
  LatentPacked packed(w, false);
#pragma omp parallel
  {
#pragma omp for schedule(dynamic)
    for (int task = 0; task < packed.panels(); ++task) packed.pack_panel(task);
#pragma omp for schedule(dynamic)
    for (int task = 0; task < blocks.count + H; ++task) {
      if (stop()) continue;
      if (task >= blocks.count) {  // W_UV folded into the output, one head per task
        const int h = task - blocks.count;
        wo_absorbed.middleCols(Eigen::Index(h) * rk, rk).noalias() =
            w.wo.middleCols(Eigen::Index(h) * dN, dN) * w.wuv.middleRows(Eigen::Index(h) * dN, dN);
        continue;
      }
      const int r0 = blocks.begin(task), n = blocks.end(task) - r0;
      latent_parts_rows(x, w, packed, s, rope, r0, r0 + n, p);
      if (!parts_finite(p, r0, r0 + n)) parts_overflow = true;
      r.k[0].block(r0, 0, n, rk) = p.c_kv.middleRows(r0, n);
      r.k[0].block(r0, rk, n, dR) = p.k_rope.middleRows(r0, n);
      r.v[0].middleRows(r0, n) = p.c_kv.middleRows(r0, n);
      keys_t.set_rows(r.k[0].row(r0).data(), r.k[0].cols(), r0, n);
      values.set_rows(r.v[0].row(r0).data(), r.v[0].cols(), r0, n);
      // W_UK folded into the query: q_N,h·W_UK,h [n, r_kv], then the rotary part as it was.
      for (int h = 0; h < H; ++h) {
        r.q[h].block(r0, 0, n, rk).noalias() =
            p.q_nope.block(r0, Eigen::Index(h) * dN, n, dN) * w.wuk.middleRows(Eigen::Index(h) * dN, dN);
        r.q[h].block(r0, rk, n, dR) = p.q_rope.block(r0, Eigen::Index(h) * dR, n, dR);
      }
    }
#pragma omp for schedule(dynamic)
    for (int task = 0; task < wo_panels + H * blocks.count; ++task) {
      if (stop()) continue;
      if (task < wo_panels) {  // W_O·W_UV packed for the output, one panel per task
        wo_packed.pack(wo_absorbed, task, task + 1);
        continue;
      }
      const int h = (task - wo_panels) / blocks.count, b = (task - wo_panels) % blocks.count;
      detail::attend_block_fused(r.q[h].data(), r.q[h].cols(), rk + dR, keys_t, values.view, blocks.begin(b),
                                 blocks.end(b), scale, options, {}, r.scores[h], r.probs[h], r.head_out[h].data(),
                                 r.head_out[h].cols());
      r.concat.block(blocks.begin(b), Eigen::Index(h) * rk, blocks.end(b) - blocks.begin(b), rk) =
          r.head_out[h].middleRows(blocks.begin(b), blocks.end(b) - blocks.begin(b));
    }
#pragma omp for schedule(dynamic)
    for (int b = 0; b < blocks.count; ++b) {
      if (stop()) continue;
      const int r0 = blocks.begin(b), n = blocks.end(b) - r0;
      times_transposed_into(r.concat.row(r0).data(), r.concat.cols(), n, wo_packed, r.output, r0);
    }
  }
  if (cancelled) throw Cancelled();
  if (parts_overflow) overflow(x);
  r.c_q = std::move(p.c_q), r.c_kv = std::move(p.c_kv), r.k_rope = std::move(p.k_rope);
  return r;
}

}  // namespace attnscope
