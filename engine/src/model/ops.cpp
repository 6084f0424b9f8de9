// ops.cpp — the fast path of every transformer operation, forward and backward side by side.
//
// Layout follows llm.c's train_gpt2.c: each forward is followed by its backward; shape legends in
// ops.h. Matrix products are Eigen GEMMs over Map views of the raw row-major buffers; elementwise
// loops are plain and split over rows with OpenMP when they are large enough to pay on two cores.
//
// Determinism (same inputs, same thread count → same bits):
//   * a parallel loop writes only its own rows; sums that cross rows (dweight, dbias, dtable) run
//     serially in row order;
//   * grouped attention's dK/dV, where several query heads add into one kv head, go through per-head
//     scratch that is summed head by head in order;
//   * Eigen's vectorised exp and sums run only on buffers Eigen allocated (aligned), never on Maps
//     of caller memory, whose alignment would decide which elements take the scalar path.
//
// Sections: helpers · embedding · RMSNorm · LayerNorm · linear · rotary · attention · multi-head latent
//           attention · SwiGLU · gelu_new · residual · cross-entropy
#include "attnscope/model/ops.h"

#include <Eigen/Core>
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "attnscope/attention/positions.h"
#include "core/parallel.h"

namespace attnscope::ops {

namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapMat = Eigen::Map<RowMat>;
using MapConstMat = Eigen::Map<const RowMat>;
using Strided = Eigen::OuterStride<>;
using MapStrided = Eigen::Map<RowMat, 0, Strided>;
using MapConstStrided = Eigen::Map<const RowMat, 0, Strided>;

// Elementwise loops shorter than this run on the calling thread: an OpenMP fork/join costs
// microseconds, and on two shared cores the second thread may wait for a time slice.
constexpr long long parallel_min_elements = 1 << 17;
// Matrix products below this many multiply-adds run single-threaded (see core/parallel.h).
constexpr long long parallel_min_macs = 1 << 20;

}  // namespace

// ================================ embedding ======================================================

void embedding_forward(float* out, const int32_t* ids, const float* table, int BT, int C) {
  // out [BT, C]  ←  table [V, C] rows ids [BT]
  for (int i = 0; i < BT; ++i) {
    assert(ids[i] >= 0);
    const float* row = table + int64_t(ids[i]) * C;
    std::copy(row, row + C, out + int64_t(i) * C);
  }
}

void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int BT, int C) {
  // dtable [V, C] += dout [BT, C] scattered by ids; serial in row order (a token may repeat).
  for (int i = 0; i < BT; ++i) {
    float* drow = dtable + int64_t(ids[i]) * C;
    const float* d = dout + int64_t(i) * C;
    for (int c = 0; c < C; ++c) drow[c] += d[c];
  }
}

// ================================ RMSNorm ========================================================

void rmsnorm_forward(float* out, float* rstd, const float* x, const float* weight, int BT, int C, float eps) {
  // per row: r = 1/sqrt(mean(x²) + eps); out = x·r·weight        x, out [BT, C], weight [C], rstd [BT]
#pragma omp parallel for schedule(static) if (int64_t(BT) * C >= parallel_min_elements)
  for (int i = 0; i < BT; ++i) {
    const float* xi = x + int64_t(i) * C;
    double sum_sq = 0;
    for (int c = 0; c < C; ++c) sum_sq += double(xi[c]) * xi[c];
    const float r = float(1.0 / std::sqrt(sum_sq / C + double(eps)));
    float* oi = out + int64_t(i) * C;
    for (int c = 0; c < C; ++c) oi[c] = xi[c] * r * weight[c];
    if (rstd) rstd[i] = r;
  }
}

void rmsnorm_backward(float* dx, float* dweight, const float* dout, const float* x, const float* weight,
                      const float* rstd, int BT, int C) {
  // y = w ⊙ x ⊙ r, r = (mean(x²) + eps)^(−1/2):
  //   dx = r·(w ⊙ dy) − r³/C · x · Σ_c (w ⊙ dy ⊙ x)        dweight = Σ_rows dy ⊙ x·r
#pragma omp parallel for schedule(static) if (int64_t(BT) * C >= parallel_min_elements)
  for (int i = 0; i < BT; ++i) {
    const float* xi = x + int64_t(i) * C;
    const float* di = dout + int64_t(i) * C;
    const float r = rstd[i];
    double dot = 0;  // Σ_c w·dy·x
    for (int c = 0; c < C; ++c) dot += double(weight[c]) * di[c] * xi[c];
    const float k = float(dot) * r * r * r / float(C);
    float* dxi = dx + int64_t(i) * C;
    for (int c = 0; c < C; ++c) dxi[c] += r * weight[c] * di[c] - k * xi[c];
  }
  for (int i = 0; i < BT; ++i) {  // serial: every row adds into the same dweight
    const float* xi = x + int64_t(i) * C;
    const float* di = dout + int64_t(i) * C;
    const float r = rstd[i];
    for (int c = 0; c < C; ++c) dweight[c] += di[c] * xi[c] * r;
  }
}

// ================================ LayerNorm ======================================================

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                       const float* bias, int BT, int C, float eps) {
  // per row: m = mean(x), v = mean((x − m)²), out = (x − m)/sqrt(v + eps)·weight + bias
#pragma omp parallel for schedule(static) if (int64_t(BT) * C >= parallel_min_elements)
  for (int i = 0; i < BT; ++i) {
    const float* xi = x + int64_t(i) * C;
    double sum = 0;
    for (int c = 0; c < C; ++c) sum += xi[c];
    const double m = sum / C;
    double var = 0;
    for (int c = 0; c < C; ++c) var += (xi[c] - m) * (xi[c] - m);
    const float r = float(1.0 / std::sqrt(var / C + double(eps)));
    const float mf = float(m);
    float* oi = out + int64_t(i) * C;
    for (int c = 0; c < C; ++c) oi[c] = (xi[c] - mf) * r * weight[c] + (bias ? bias[c] : 0.0f);
    if (mean) mean[i] = mf;
    if (rstd) rstd[i] = r;
  }
}

void layernorm_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                        const float* weight, const float* mean, const float* rstd, int BT, int C) {
  // n = (x − m)·r, y = n·w + b:  dx = r·(w·dy − mean(w·dy) − n·mean(w·dy·n))
#pragma omp parallel for schedule(static) if (int64_t(BT) * C >= parallel_min_elements)
  for (int i = 0; i < BT; ++i) {
    const float* xi = x + int64_t(i) * C;
    const float* di = dout + int64_t(i) * C;
    const float m = mean[i], r = rstd[i];
    double sum_wdy = 0, sum_wdy_n = 0;
    for (int c = 0; c < C; ++c) {
      const float n = (xi[c] - m) * r;
      sum_wdy += double(weight[c]) * di[c];
      sum_wdy_n += double(weight[c]) * di[c] * n;
    }
    const float a = float(sum_wdy / C), b = float(sum_wdy_n / C);
    float* dxi = dx + int64_t(i) * C;
    for (int c = 0; c < C; ++c) dxi[c] += r * (weight[c] * di[c] - a - (xi[c] - m) * r * b);
  }
  for (int i = 0; i < BT; ++i) {
    const float* xi = x + int64_t(i) * C;
    const float* di = dout + int64_t(i) * C;
    for (int c = 0; c < C; ++c) {
      dweight[c] += di[c] * (xi[c] - mean[i]) * rstd[i];
      if (dbias) dbias[c] += di[c];
    }
  }
}

// ================================ linear =========================================================

void linear_forward(float* out, const float* x, const float* weight, const float* bias, int BT, int IC, int OC) {
  // out [BT, OC] = x [BT, IC] · weight [OC, IC]ᵀ + bias [OC]
  const detail::SingleThreadScope serial(int64_t(BT) * IC * OC < parallel_min_macs);
  MapMat o(out, BT, OC);
  o.noalias() = MapConstMat(x, BT, IC) * MapConstMat(weight, OC, IC).transpose();
  if (bias)
    for (int i = 0; i < BT; ++i)
      for (int j = 0; j < OC; ++j) out[int64_t(i) * OC + j] += bias[j];
}

void linear_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                     const float* weight, int BT, int IC, int OC) {
  // dx [BT, IC] += dout [BT, OC] · weight [OC, IC];  dweight [OC, IC] += doutᵀ · x;  dbias [OC] += Σ_rows dout
  const detail::SingleThreadScope serial(int64_t(BT) * IC * OC < parallel_min_macs);
  const MapConstMat d(dout, BT, OC);
  if (dx) MapMat(dx, BT, IC).noalias() += d * MapConstMat(weight, OC, IC);
  MapMat(dweight, OC, IC).noalias() += d.transpose() * MapConstMat(x, BT, IC);
  if (dbias)
    for (int i = 0; i < BT; ++i)
      for (int j = 0; j < OC; ++j) dbias[j] += dout[int64_t(i) * OC + j];
}

// ================================ rotary positions ===============================================

void rope_tables(float* cos, float* sin, int T, int D, float theta, int pos0) {
  // Hugging Face: inv_freq = 1.0 / (theta ** (arange(0, D, 2).float() / D)) in float32 (attention/positions.h),
  // then angle = position · inv_freq in float32, cos/sin of that float angle.
  const int half = D / 2;
  const std::vector<float> inv_freq = rope_inv_freq_float32(double(theta), D);
  for (int i = 0; i < half; ++i) {
    for (int t = 0; t < T; ++t) {
      const float angle = float(pos0 + t) * inv_freq[size_t(i)];
      cos[int64_t(t) * half + i] = float(std::cos(double(angle)));
      sin[int64_t(t) * half + i] = float(std::sin(double(angle)));
    }
  }
}

namespace {

// Rotates each (i, i + D/2) pair of every head by +angle (sign = +1) or −angle (sign = −1).
//   x [B, T, NH, D] in place
void rope_rotate(float* x, int B, int T, int NH, int D, float theta, int pos0, float sign) {
  assert(D % 2 == 0);
  const int half = D / 2;
  std::vector<float> cos(size_t(T) * half), sin(size_t(T) * half);
  rope_tables(cos.data(), sin.data(), T, D, theta, pos0);
#pragma omp parallel for schedule(static) if (int64_t(B) * T * NH * D >= parallel_min_elements)
  for (int bt = 0; bt < B * T; ++bt) {
    const int t = bt % T;
    const float* c = cos.data() + int64_t(t) * half;
    const float* s = sin.data() + int64_t(t) * half;
    for (int h = 0; h < NH; ++h) {
      float* xh = x + (int64_t(bt) * NH + h) * D;
      for (int i = 0; i < half; ++i) {
        const float x1 = xh[i], x2 = xh[i + half], si = sign * s[i];
        xh[i] = x1 * c[i] - x2 * si;         // x·cos + (−x2)·sin
        xh[i + half] = x2 * c[i] + x1 * si;  // x·cos + x1·sin
      }
    }
  }
}

}  // namespace

void rope_forward(float* x, int B, int T, int NH, int D, float theta, int pos0) {
  rope_rotate(x, B, T, NH, D, theta, pos0, +1.0f);
}

void rope_backward(float* dx, int B, int T, int NH, int D, float theta, int pos0) {
  // The rotation is orthogonal: its gradient is the inverse rotation of the upstream gradient.
  rope_rotate(dx, B, T, NH, D, theta, pos0, -1.0f);
}

// ================================ grouped causal attention =======================================

void attention_forward(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D) {
  attention_forward_with(out, probs, q, k, v, B, T, H, G, D, AttentionOptions{});
}

void attention_forward_with(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D, const AttentionOptions& options) {
  attention_forward_general(out, probs, q, k, v, B, T, H, G, D, D, options);
}

namespace {
// One head's probabilities P [T, T] (steps 1–3 of attention_forward_general): e is the caller's
// Eigen-allocated row buffer [T], so the vectorised exp splits the row the same way every time.
void head_probs(MapMat& P, const MapConstStrided& Q, const MapConstStrided& K, int T, float scale, float cap, int window,
                Eigen::ArrayXf& e) {
  // 1. scores (the whole square; the masked part is overwritten below)
  P.noalias() = Q * K.transpose();
  for (int i = 0; i < T; ++i) {
    float* row = P.data() + int64_t(i) * T;
    // 2. mask: keys lo…i only (lo = 0 without a window).  3. softmax with the row maximum subtracted.
    const int lo = window > 0 ? std::max(0, i - window + 1) : 0, n = i - lo + 1;
    auto s = e.head(n);
    s = Eigen::Map<const Eigen::ArrayXf>(row + lo, n) * scale;
    if (cap > 0) s = (s / cap).tanh() * cap;
    const float max = s.maxCoeff();
    s = (s - max).exp();
    const float inv_sum = 1.0f / s.sum();
    for (int j = 0; j < lo; ++j) row[j] = 0.0f;
    for (int j = lo; j <= i; ++j) row[j] = e[j - lo] * inv_sum;
    for (int j = i + 1; j < T; ++j) row[j] = 0.0f;
  }
}
}  // namespace

void attention_head_probs(float* probs, const float* q, int q_stride, const float* k, int k_stride, int T, int Dk,
                          const AttentionOptions& options) {
  const detail::SingleThreadScope serial_products(true);  // as inside attention_forward_general's heads
  const float scale = options.scale > 0 ? options.scale : 1.0f / std::sqrt(float(Dk));
  Eigen::ArrayXf e(T);
  const MapConstStrided Q(q, T, Dk, Strided(q_stride));
  const MapConstStrided K(k, T, Dk, Strided(k_stride));
  MapMat P(probs, T, T);
  head_probs(P, Q, K, T, scale, options.softcap, options.window, e);
}

void attention_forward_general(float* out, float* probs, const float* q, const float* k, const float* v, int B,
                               int T, int H, int G, int Dk, int Dv, const AttentionOptions& options) {
  // q [B, T, H·Dk], k [B, T, G·Dk], v [B, T, G·Dv] → probs [B, H, T, T], out [B, T, H·Dv]; one (b, h) per
  // iteration.
  assert(G >= 1 && H % G == 0);
  const int heads_per_group = H / G;
  const float scale = options.scale > 0 ? options.scale : 1.0f / std::sqrt(float(Dk));
  const float cap = options.softcap;
  const int64_t work = int64_t(B) * H * T * T * (Dk + Dv);
#pragma omp parallel if (work >= parallel_min_macs)
  {
    const detail::SingleThreadScope serial_products(true);  // the heads are the parallel dimension
    Eigen::ArrayXf e(T);  // Eigen-allocated, so the vectorised exp splits the row the same way every time
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * H; ++bh) {
      const int b = bh / H, h = bh % H, g = h / heads_per_group;
      const MapConstStrided Q(q + int64_t(b) * T * H * Dk + int64_t(h) * Dk, T, Dk, Strided(H * Dk));
      const MapConstStrided K(k + int64_t(b) * T * G * Dk + int64_t(g) * Dk, T, Dk, Strided(G * Dk));
      const MapConstStrided V(v + int64_t(b) * T * G * Dv + int64_t(g) * Dv, T, Dv, Strided(G * Dv));
      MapMat P(probs + int64_t(bh) * T * T, T, T);
      head_probs(P, Q, K, T, scale, cap, options.window, e);  // 1–3: scores, mask, softmax
      // 4. weigh the values
      MapStrided O(out + int64_t(b) * T * H * Dv + int64_t(h) * Dv, T, Dv, Strided(H * Dv));
      O.noalias() = P * V;
    }
  }
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* probs, const float* q,
                        const float* k, const float* v, int B, int T, int H, int G, int D) {
  attention_backward_general(dq, dk, dv, dout, probs, q, k, v, B, T, H, G, D, D, AttentionOptions{});
}

void attention_backward_general(float* dq, float* dk, float* dv, const float* dout, const float* probs,
                                const float* q, const float* k, const float* v, int B, int T, int H, int G, int Dk,
                                int Dv, const AttentionOptions& options) {
  // Per (b, h), with S = Q·Kᵀ·scale, P = softmax(S), O = P·V:
  //   dP = dO·Vᵀ        dV_g += Pᵀ·dO        dS = P ⊙ (dP − rowsum(P ⊙ dP))
  //   dQ_h += dS·K_g·scale                   dK_g += dSᵀ·Q_h·scale
  // Masked keys (future, or outside the window) have P = 0, so their dS is 0 too.
  // dQ of one head is its own; dK, dV of a kv group collect several heads, so those go to per-head
  // scratch [B, H, T, Dk|Dv] that is added into dk, dv head by head in order (deterministic).
  assert(G >= 1 && H % G == 0);
  assert(options.softcap == 0);
  const int heads_per_group = H / G;
  const float scale = options.scale > 0 ? options.scale : 1.0f / std::sqrt(float(Dk));
  std::vector<float> dk_heads(size_t(B) * H * T * Dk), dv_heads(size_t(B) * H * T * Dv);
  const int64_t work = int64_t(B) * H * T * T * (Dk + Dv) * 2;
#pragma omp parallel if (work >= parallel_min_macs)
  {
    const detail::SingleThreadScope serial_products(true);  // the heads are the parallel dimension
    RowMat dP(T, T);
#pragma omp for schedule(static)
    for (int bh = 0; bh < B * H; ++bh) {
      const int b = bh / H, h = bh % H, g = h / heads_per_group;
      const MapConstStrided Q(q + int64_t(b) * T * H * Dk + int64_t(h) * Dk, T, Dk, Strided(H * Dk));
      const MapConstStrided K(k + int64_t(b) * T * G * Dk + int64_t(g) * Dk, T, Dk, Strided(G * Dk));
      const MapConstStrided V(v + int64_t(b) * T * G * Dv + int64_t(g) * Dv, T, Dv, Strided(G * Dv));
      const MapConstStrided dO(dout + int64_t(b) * T * H * Dv + int64_t(h) * Dv, T, Dv, Strided(H * Dv));
      const MapConstMat P(probs + int64_t(bh) * T * T, T, T);
      MapMat dV_h(dv_heads.data() + int64_t(bh) * T * Dv, T, Dv);
      MapMat dK_h(dk_heads.data() + int64_t(bh) * T * Dk, T, Dk);
      dV_h.noalias() = P.transpose() * dO;
      dP.noalias() = dO * V.transpose();
      // dP becomes dS·scale in place; entries above the diagonal had P = 0 and stay 0.
      for (int i = 0; i < T; ++i) {
        const float* p = P.data() + int64_t(i) * T;
        float* d = dP.data() + int64_t(i) * T;
        double dot = 0;
        for (int j = 0; j <= i; ++j) dot += double(p[j]) * d[j];
        const float rowdot = float(dot);
        for (int j = 0; j <= i; ++j) d[j] = p[j] * (d[j] - rowdot) * scale;
        for (int j = i + 1; j < T; ++j) d[j] = 0.0f;
      }
      MapStrided dQ(dq + int64_t(b) * T * H * Dk + int64_t(h) * Dk, T, Dk, Strided(H * Dk));
      dQ.noalias() += dP * K;
      dK_h.noalias() = dP.transpose() * Q;
    }
    // Sum the heads of each kv group in head order; (b, g) pairs write disjoint columns.
#pragma omp for schedule(static)
    for (int bg = 0; bg < B * G; ++bg) {
      const int b = bg / G, g = bg % G;
      for (int h = g * heads_per_group; h < (g + 1) * heads_per_group; ++h) {
        const int64_t bh = int64_t(b) * H + h;
        for (int t = 0; t < T; ++t) {
          float* dkt = dk + (int64_t(b) * T + t) * G * Dk + int64_t(g) * Dk;
          float* dvt = dv + (int64_t(b) * T + t) * G * Dv + int64_t(g) * Dv;
          const float* sk = dk_heads.data() + (bh * T + t) * Dk;
          const float* sv = dv_heads.data() + (bh * T + t) * Dv;
          for (int i = 0; i < Dk; ++i) dkt[i] += sk[i];
          for (int i = 0; i < Dv; ++i) dvt[i] += sv[i];
        }
      }
    }
  }
}

// ================================ multi-head latent attention ====================================

namespace {

// Rotates the interleaved pairs of the rotary part of every head by +angle (sign = +1) or −angle (−1).
//   x [B, T, NH·S] in place; columns offset … offset + R − 1 of each head
void rope_interleaved_rotate(float* x, int B, int T, int NH, int S, int offset, int R, float theta, int pos0,
                             float sign) {
  assert(R % 2 == 0 && offset + R <= S);
  const int half = R / 2;
  std::vector<float> cos(size_t(T) * half), sin(size_t(T) * half);
  rope_tables(cos.data(), sin.data(), T, R, theta, pos0);
#pragma omp parallel for schedule(static) if (int64_t(B) * T * NH * R >= parallel_min_elements)
  for (int bt = 0; bt < B * T; ++bt) {
    const int t = bt % T;
    const float* c = cos.data() + int64_t(t) * half;
    const float* s = sin.data() + int64_t(t) * half;
    for (int h = 0; h < NH; ++h) {
      float* p = x + (int64_t(bt) * NH + h) * S + offset;
      for (int i = 0; i < half; ++i) {
        const float a = p[2 * i], b = p[2 * i + 1], si = sign * s[i];
        p[2 * i] = a * c[i] - b * si;
        p[2 * i + 1] = b * c[i] + a * si;
      }
    }
  }
}

}  // namespace

void rope_interleaved_forward(float* x, int B, int T, int NH, int S, int offset, int R, float theta, int pos0) {
  rope_interleaved_rotate(x, B, T, NH, S, offset, R, theta, pos0, +1.0f);
}

void rope_interleaved_backward(float* dx, int B, int T, int NH, int S, int offset, int R, float theta, int pos0) {
  // Orthogonal, as rope_backward: the gradient rotates back by −angle.
  rope_interleaved_rotate(dx, B, T, NH, S, offset, R, theta, pos0, -1.0f);
}

void mla_kv_forward(float* k, float* v, const float* kv, const float* kpe, int BT, int H, int N, int R, int Dv) {
  // k [BT, H·(N + R)] = per head [kv key part ; kpe], v [BT, H·Dv] = per head kv value part
  const int Dk = N + R, W = N + Dv;
  for (int t = 0; t < BT; ++t)
    for (int h = 0; h < H; ++h) {
      const float* src = kv + (int64_t(t) * H + h) * W;
      float* kd = k + (int64_t(t) * H + h) * Dk;
      std::copy(src, src + N, kd);
      std::copy(kpe + int64_t(t) * R, kpe + int64_t(t) * R + R, kd + N);
      std::copy(src + N, src + W, v + (int64_t(t) * H + h) * Dv);
    }
}

void mla_kv_backward(float* dkv, float* dkpe, const float* dk, const float* dv, int BT, int H, int N, int R, int Dv) {
  // dkv gets each head's pieces back; dkpe sums the rotary parts of every head, heads in order
  const int Dk = N + R, W = N + Dv;
  for (int t = 0; t < BT; ++t)
    for (int h = 0; h < H; ++h) {
      float* dst = dkv + (int64_t(t) * H + h) * W;
      const float* dkh = dk + (int64_t(t) * H + h) * Dk;
      const float* dvh = dv + (int64_t(t) * H + h) * Dv;
      for (int i = 0; i < N; ++i) dst[i] += dkh[i];
      for (int i = 0; i < Dv; ++i) dst[N + i] += dvh[i];
      float* dp = dkpe + int64_t(t) * R;
      for (int i = 0; i < R; ++i) dp[i] += dkh[N + i];
    }
}

// ================================ SwiGLU =========================================================

namespace {
// SwiGLU works in blocks of this many elements: exp(−gate) of a block is computed vectorised into an
// Eigen-allocated buffer, so the block boundaries (and with them the bits) do not depend on threads.
constexpr int64_t swiglu_block = 4096;
}  // namespace

void swiglu_forward(float* out, const float* gate, const float* up, int BT, int F) {
  // out = silu(gate)·up = gate·sigmoid(gate)·up        out, gate, up [BT, F]
  const int64_t N = int64_t(BT) * F, blocks = (N + swiglu_block - 1) / swiglu_block;
#pragma omp parallel if (N >= parallel_min_elements)
  {
    Eigen::ArrayXf e(swiglu_block);
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t begin = blk * swiglu_block, n = std::min(swiglu_block, N - begin);
      e.head(n) = (-Eigen::Map<const Eigen::ArrayXf>(gate + begin, n)).exp();
      for (int64_t i = 0; i < n; ++i) out[begin + i] = gate[begin + i] / (1.0f + e[i]) * up[begin + i];
    }
  }
}

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int BT,
                     int F) {
  // s = sigmoid(g): d silu(g)/dg = s·(1 + g·(1 − s));  dgate += dout·up·silu'(g);  dup += dout·silu(g)
  const int64_t N = int64_t(BT) * F, blocks = (N + swiglu_block - 1) / swiglu_block;
#pragma omp parallel if (N >= parallel_min_elements)
  {
    Eigen::ArrayXf e(swiglu_block);
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t begin = blk * swiglu_block, n = std::min(swiglu_block, N - begin);
      e.head(n) = (-Eigen::Map<const Eigen::ArrayXf>(gate + begin, n)).exp();
      for (int64_t j = 0; j < n; ++j) {
        const int64_t i = begin + j;
        const float g = gate[i], s = 1.0f / (1.0f + e[j]);
        dgate[i] += dout[i] * up[i] * s * (1.0f + g * (1.0f - s));
        dup[i] += dout[i] * g * s;
      }
    }
  }
}

// ================================ gelu_new =======================================================

namespace {
constexpr float gelu_k = 0.7978845608028654f;  // sqrt(2/π)
}

void gelu_new_forward(float* out, const float* x, int N) {
  // out = 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))        out, x [N]
#pragma omp parallel for schedule(static) if (N >= parallel_min_elements)
  for (int i = 0; i < N; ++i) {
    const float xi = x[i];
    out[i] = 0.5f * xi * (1.0f + std::tanh(gelu_k * (xi + 0.044715f * xi * xi * xi)));
  }
}

void gelu_new_backward(float* dx, const float* dout, const float* x, int N) {
  // u = k·(x + 0.044715x³): d/dx = 0.5(1 + tanh u) + 0.5x·(1 − tanh² u)·k·(1 + 3·0.044715x²)
#pragma omp parallel for schedule(static) if (N >= parallel_min_elements)
  for (int i = 0; i < N; ++i) {
    const float xi = x[i];
    const float th = std::tanh(gelu_k * (xi + 0.044715f * xi * xi * xi));
    const float local = 0.5f * (1.0f + th) + 0.5f * xi * (1.0f - th * th) * gelu_k * (1.0f + 3.0f * 0.044715f * xi * xi);
    dx[i] += dout[i] * local;
  }
}

// ================================ residual =======================================================

void residual_forward(float* out, const float* a, const float* b, int N) {
  for (int i = 0; i < N; ++i) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, int N) {
  for (int i = 0; i < N; ++i) {
    da[i] += dout[i];
    db[i] += dout[i];
  }
}

// ================================ softmax cross-entropy ==========================================

float crossentropy_forward(float* probs, const float* logits, const int32_t* targets, int BT, int V) {
  // probs [BT, V] = softmax_rows(logits [BT, V]); loss = mean over scored rows of −log probs[target]
#pragma omp parallel if (int64_t(BT) * V >= parallel_min_elements)
  {
    Eigen::ArrayXf e(V);  // Eigen-allocated: see the note on determinism at the top
#pragma omp for schedule(static)
    for (int i = 0; i < BT; ++i) {
      const float* row = logits + int64_t(i) * V;
      float max = -INFINITY;
      for (int j = 0; j < V; ++j) max = std::max(max, row[j]);
      e = (Eigen::Map<const Eigen::ArrayXf>(row, V) - max).exp();
      const float inv_sum = 1.0f / e.sum();
      float* p = probs + int64_t(i) * V;
      for (int j = 0; j < V; ++j) p[j] = e[j] * inv_sum;
    }
  }
  double loss = 0;
  int scored = 0;
  for (int i = 0; i < BT; ++i) {
    if (targets[i] < 0) continue;
    assert(targets[i] < V);
    // log of the normalised probability; a probability that underflowed to 0 would give inf, so
    // take it from the logits instead: −log p = log Σ exp(l − max) − (l_t − max).
    const float* row = logits + int64_t(i) * V;
    const float p = probs[int64_t(i) * V + targets[i]];
    if (p > 1e-30f) {
      loss -= std::log(double(p));
    } else {
      double max = -INFINITY, sum = 0;
      for (int j = 0; j < V; ++j) max = std::max(max, double(row[j]));
      for (int j = 0; j < V; ++j) sum += std::exp(double(row[j]) - max);
      loss += std::log(sum) - (double(row[targets[i]]) - max);
    }
    ++scored;
  }
  return scored ? float(loss / scored) : 0.0f;
}

void crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets, int BT, int V) {
  // dlogits [BT, V] += (probs − onehot(target)) / scored rows, for scored rows
  int scored = 0;
  for (int i = 0; i < BT; ++i) scored += targets[i] >= 0;
  if (scored == 0) return;
  const float inv = 1.0f / float(scored);
#pragma omp parallel for schedule(static) if (int64_t(BT) * V >= parallel_min_elements)
  for (int i = 0; i < BT; ++i) {
    if (targets[i] < 0) continue;
    const float* p = probs + int64_t(i) * V;
    float* d = dlogits + int64_t(i) * V;
    for (int j = 0; j < V; ++j) d[j] += (p[j] - (j == targets[i] ? 1.0f : 0.0f)) * inv;
  }
}

}  // namespace attnscope::ops
