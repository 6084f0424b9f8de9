// ops_reference.cpp — plain-loop references of every op in ops.h (the oracle of the fast path).
//
// Written for reading, not speed: the formula of each op as nested loops, sums in double, no Eigen,
// no threads. Tests hold ops::X == ops::reference::X to float rounding, and check these against
// finite differences and PyTorch autograd fixtures.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <vector>

#include "attnscope/model/ops.h"

namespace attnscope::ops::reference {

void embedding_forward(float* out, const int32_t* ids, const float* table, int BT, int C) {
  for (int i = 0; i < BT; ++i)
    for (int c = 0; c < C; ++c) out[int64_t(i) * C + c] = table[int64_t(ids[i]) * C + c];
}

void embedding_backward(float* dtable, const float* dout, const int32_t* ids, int BT, int C) {
  for (int i = 0; i < BT; ++i)
    for (int c = 0; c < C; ++c) dtable[int64_t(ids[i]) * C + c] += dout[int64_t(i) * C + c];
}

void rmsnorm_forward(float* out, float* rstd, const float* x, const float* weight, int BT, int C, float eps) {
  for (int i = 0; i < BT; ++i) {
    double ms = 0;
    for (int c = 0; c < C; ++c) ms += double(x[int64_t(i) * C + c]) * x[int64_t(i) * C + c];
    const double r = 1.0 / std::sqrt(ms / C + eps);
    for (int c = 0; c < C; ++c) out[int64_t(i) * C + c] = float(x[int64_t(i) * C + c] * r * weight[c]);
    if (rstd) rstd[i] = float(r);
  }
}

void rmsnorm_backward(float* dx, float* dweight, const float* dout, const float* x, const float* weight,
                      const float* rstd, int BT, int C) {
  for (int i = 0; i < BT; ++i) {
    const double r = rstd[i];
    double dot = 0;
    for (int c = 0; c < C; ++c) dot += double(weight[c]) * dout[int64_t(i) * C + c] * x[int64_t(i) * C + c];
    for (int c = 0; c < C; ++c) {
      const int64_t at = int64_t(i) * C + c;
      dx[at] += float(r * weight[c] * dout[at] - r * r * r / C * dot * x[at]);
      dweight[c] += float(double(dout[at]) * x[at] * r);
    }
  }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* weight,
                       const float* bias, int BT, int C, float eps) {
  for (int i = 0; i < BT; ++i) {
    double m = 0, v = 0;
    for (int c = 0; c < C; ++c) m += x[int64_t(i) * C + c];
    m /= C;
    for (int c = 0; c < C; ++c) v += (x[int64_t(i) * C + c] - m) * (x[int64_t(i) * C + c] - m);
    v /= C;
    const double r = 1.0 / std::sqrt(v + eps);
    for (int c = 0; c < C; ++c)
      out[int64_t(i) * C + c] = float((x[int64_t(i) * C + c] - m) * r * weight[c] + (bias ? bias[c] : 0.0));
    if (mean) mean[i] = float(m);
    if (rstd) rstd[i] = float(r);
  }
}

void layernorm_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                        const float* weight, const float* mean, const float* rstd, int BT, int C) {
  for (int i = 0; i < BT; ++i) {
    const double m = mean[i], r = rstd[i];
    double mean_wdy = 0, mean_wdy_n = 0;
    for (int c = 0; c < C; ++c) {
      const int64_t at = int64_t(i) * C + c;
      mean_wdy += double(weight[c]) * dout[at] / C;
      mean_wdy_n += double(weight[c]) * dout[at] * (x[at] - m) * r / C;
    }
    for (int c = 0; c < C; ++c) {
      const int64_t at = int64_t(i) * C + c;
      const double n = (x[at] - m) * r;
      dx[at] += float(r * (weight[c] * dout[at] - mean_wdy - n * mean_wdy_n));
      dweight[c] += float(dout[at] * n);
      if (dbias) dbias[c] += dout[at];
    }
  }
}

void linear_forward(float* out, const float* x, const float* weight, const float* bias, int BT, int IC, int OC) {
  for (int i = 0; i < BT; ++i)
    for (int o = 0; o < OC; ++o) {
      double sum = bias ? bias[o] : 0.0;
      for (int c = 0; c < IC; ++c) sum += double(x[int64_t(i) * IC + c]) * weight[int64_t(o) * IC + c];
      out[int64_t(i) * OC + o] = float(sum);
    }
}

void linear_backward(float* dx, float* dweight, float* dbias, const float* dout, const float* x,
                     const float* weight, int BT, int IC, int OC) {
  if (dx)
    for (int i = 0; i < BT; ++i)
      for (int c = 0; c < IC; ++c) {
        double sum = 0;
        for (int o = 0; o < OC; ++o) sum += double(dout[int64_t(i) * OC + o]) * weight[int64_t(o) * IC + c];
        dx[int64_t(i) * IC + c] += float(sum);
      }
  for (int o = 0; o < OC; ++o) {
    for (int c = 0; c < IC; ++c) {
      double sum = 0;
      for (int i = 0; i < BT; ++i) sum += double(dout[int64_t(i) * OC + o]) * x[int64_t(i) * IC + c];
      dweight[int64_t(o) * IC + c] += float(sum);
    }
    if (dbias) {
      double sum = 0;
      for (int i = 0; i < BT; ++i) sum += dout[int64_t(i) * OC + o];
      dbias[o] += float(sum);
    }
  }
}

namespace {
// Rotation by sign·angle of every (i, i + D/2) pair, angles from rope_tables (Hugging Face's floats).
void rope_rotate(float* x, int B, int T, int NH, int D, float theta, int pos0, double sign) {
  const int half = D / 2;
  std::vector<float> cos(size_t(T) * half), sin(size_t(T) * half);
  ops::rope_tables(cos.data(), sin.data(), T, D, theta, pos0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < NH; ++h)
        for (int i = 0; i < half; ++i) {
          float* head = x + ((int64_t(b) * T + t) * NH + h) * D;
          const double c = cos[int64_t(t) * half + i], s = sign * sin[int64_t(t) * half + i];
          const double x1 = head[i], x2 = head[i + half];
          head[i] = float(x1 * c - x2 * s);
          head[i + half] = float(x2 * c + x1 * s);
        }
}
}  // namespace

void rope_forward(float* x, int B, int T, int NH, int D, float theta, int pos0) {
  rope_rotate(x, B, T, NH, D, theta, pos0, +1.0);
}

void rope_backward(float* dx, int B, int T, int NH, int D, float theta, int pos0) {
  rope_rotate(dx, B, T, NH, D, theta, pos0, -1.0);
}

void attention_forward(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D) {
  reference::attention_forward_with(out, probs, q, k, v, B, T, H, G, D, AttentionOptions{});
}

void attention_forward_with(float* out, float* probs, const float* q, const float* k, const float* v, int B, int T,
                       int H, int G, int D, const AttentionOptions& options) {
  reference::attention_forward_general(out, probs, q, k, v, B, T, H, G, D, D, options);
}

void attention_forward_general(float* out, float* probs, const float* q, const float* k, const float* v, int B,
                               int T, int H, int G, int Dk, int Dv, const AttentionOptions& options) {
  const double scale = options.scale > 0 ? double(options.scale) : 1.0 / std::sqrt(double(Dk));
  const double cap = options.softcap;
  std::vector<double> s(T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int g = h / (H / G);
      for (int i = 0; i < T; ++i) {
        const float* qi = q + (int64_t(b) * T + i) * H * Dk + int64_t(h) * Dk;
        // key j is seen iff lo ≤ j ≤ i, lo = i − window + 1 for a sliding-window layer
        const int lo = options.window > 0 ? std::max(0, i - options.window + 1) : 0;
        double max = -INFINITY;
        for (int j = lo; j <= i; ++j) {
          const float* kj = k + (int64_t(b) * T + j) * G * Dk + int64_t(g) * Dk;
          double dot = 0;
          for (int d = 0; d < Dk; ++d) dot += double(qi[d]) * kj[d];
          s[j] = dot * scale;
          if (cap > 0) s[j] = std::tanh(s[j] / cap) * cap;
          max = std::max(max, s[j]);
        }
        double sum = 0;
        for (int j = lo; j <= i; ++j) sum += (s[j] = std::exp(s[j] - max));
        float* p = probs + ((int64_t(b) * H + h) * T + i) * T;
        for (int j = 0; j < T; ++j) p[j] = j >= lo && j <= i ? float(s[j] / sum) : 0.0f;
        float* o = out + (int64_t(b) * T + i) * H * Dv + int64_t(h) * Dv;
        for (int d = 0; d < Dv; ++d) {
          double acc = 0;
          for (int j = lo; j <= i; ++j) acc += s[j] / sum * v[(int64_t(b) * T + j) * G * Dv + int64_t(g) * Dv + d];
          o[d] = float(acc);
        }
      }
    }
}

void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* probs, const float* q,
                        const float* k, const float* v, int B, int T, int H, int G, int D) {
  reference::attention_backward_general(dq, dk, dv, dout, probs, q, k, v, B, T, H, G, D, D, AttentionOptions{});
}

void attention_backward_general(float* dq, float* dk, float* dv, const float* dout, const float* probs,
                                const float* q, const float* k, const float* v, int B, int T, int H, int G, int Dk,
                                int Dv, const AttentionOptions& options) {
  assert(options.softcap == 0);
  const double scale = options.scale > 0 ? double(options.scale) : 1.0 / std::sqrt(double(Dk));
  std::vector<double> dp(T);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const int g = h / (H / G);
      for (int i = 0; i < T; ++i) {
        const float* p = probs + ((int64_t(b) * H + h) * T + i) * T;
        const float* doi = dout + (int64_t(b) * T + i) * H * Dv + int64_t(h) * Dv;
        // dP[i, j] = dO_i · V_j ; dV_j += P[i, j]·dO_i  (masked keys: P = 0)
        double rowdot = 0;
        for (int j = 0; j <= i; ++j) {
          const int64_t vj = (int64_t(b) * T + j) * G * Dv + int64_t(g) * Dv;
          double acc = 0;
          for (int d = 0; d < Dv; ++d) {
            acc += double(doi[d]) * v[vj + d];
            dv[vj + d] += float(double(p[j]) * doi[d]);
          }
          dp[j] = acc;
          rowdot += p[j] * acc;
        }
        // dS[i, j] = P[i, j]·(dP[i, j] − Σ_k P[i, k]·dP[i, k]); S = Q·Kᵀ·scale
        const int64_t qi = (int64_t(b) * T + i) * H * Dk + int64_t(h) * Dk;
        for (int j = 0; j <= i; ++j) {
          const double ds = p[j] * (dp[j] - rowdot) * scale;
          const int64_t kj = (int64_t(b) * T + j) * G * Dk + int64_t(g) * Dk;
          for (int d = 0; d < Dk; ++d) {
            dq[qi + d] += float(ds * k[kj + d]);
            dk[kj + d] += float(ds * q[qi + d]);
          }
        }
      }
    }
}

namespace {
// Rotation by sign·angle of the interleaved pairs (offset + 2i, offset + 2i + 1) of every head.
void rope_interleaved_rotate(float* x, int B, int T, int NH, int S, int offset, int R, float theta, int pos0,
                             double sign) {
  const int half = R / 2;
  std::vector<float> cos(size_t(T) * half), sin(size_t(T) * half);
  ops::rope_tables(cos.data(), sin.data(), T, R, theta, pos0);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < NH; ++h)
        for (int i = 0; i < half; ++i) {
          float* pair = x + ((int64_t(b) * T + t) * NH + h) * S + offset + 2 * i;
          const double c = cos[int64_t(t) * half + i], s = sign * sin[int64_t(t) * half + i];
          const double x1 = pair[0], x2 = pair[1];
          pair[0] = float(x1 * c - x2 * s);
          pair[1] = float(x2 * c + x1 * s);
        }
}
}  // namespace

void rope_interleaved_forward(float* x, int B, int T, int NH, int S, int offset, int R, float theta, int pos0) {
  rope_interleaved_rotate(x, B, T, NH, S, offset, R, theta, pos0, +1.0);
}

void rope_interleaved_backward(float* dx, int B, int T, int NH, int S, int offset, int R, float theta, int pos0) {
  rope_interleaved_rotate(dx, B, T, NH, S, offset, R, theta, pos0, -1.0);
}

void mla_kv_forward(float* k, float* v, const float* kv, const float* kpe, int BT, int H, int N, int R, int Dv) {
  for (int t = 0; t < BT; ++t)
    for (int h = 0; h < H; ++h) {
      for (int i = 0; i < N; ++i) k[(int64_t(t) * H + h) * (N + R) + i] = kv[(int64_t(t) * H + h) * (N + Dv) + i];
      for (int i = 0; i < R; ++i) k[(int64_t(t) * H + h) * (N + R) + N + i] = kpe[int64_t(t) * R + i];
      for (int i = 0; i < Dv; ++i) v[(int64_t(t) * H + h) * Dv + i] = kv[(int64_t(t) * H + h) * (N + Dv) + N + i];
    }
}

void mla_kv_backward(float* dkv, float* dkpe, const float* dk, const float* dv, int BT, int H, int N, int R, int Dv) {
  for (int t = 0; t < BT; ++t) {
    for (int i = 0; i < R; ++i) {
      double sum = 0;
      for (int h = 0; h < H; ++h) sum += dk[(int64_t(t) * H + h) * (N + R) + N + i];
      dkpe[int64_t(t) * R + i] += float(sum);
    }
    for (int h = 0; h < H; ++h) {
      for (int i = 0; i < N; ++i) dkv[(int64_t(t) * H + h) * (N + Dv) + i] += dk[(int64_t(t) * H + h) * (N + R) + i];
      for (int i = 0; i < Dv; ++i) dkv[(int64_t(t) * H + h) * (N + Dv) + N + i] += dv[(int64_t(t) * H + h) * Dv + i];
    }
  }
}

void swiglu_forward(float* out, const float* gate, const float* up, int BT, int F) {
  for (int64_t i = 0; i < int64_t(BT) * F; ++i) {
    const double g = gate[i];
    out[i] = float(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate, const float* up, int BT,
                     int F) {
  for (int64_t i = 0; i < int64_t(BT) * F; ++i) {
    const double g = gate[i], s = 1.0 / (1.0 + std::exp(-g));
    dgate[i] += float(double(dout[i]) * up[i] * (s + g * s * (1.0 - s)));
    dup[i] += float(double(dout[i]) * g * s);
  }
}

void gelu_new_forward(float* out, const float* x, int N) {
  const double k = std::sqrt(2.0 / M_PI);
  for (int i = 0; i < N; ++i) {
    const double xi = x[i];
    out[i] = float(0.5 * xi * (1.0 + std::tanh(k * (xi + 0.044715 * xi * xi * xi))));
  }
}

void gelu_new_backward(float* dx, const float* dout, const float* x, int N) {
  const double k = std::sqrt(2.0 / M_PI);
  for (int i = 0; i < N; ++i) {
    const double xi = x[i], th = std::tanh(k * (xi + 0.044715 * xi * xi * xi));
    dx[i] += float(dout[i] * (0.5 * (1 + th) + 0.5 * xi * (1 - th * th) * k * (1 + 3 * 0.044715 * xi * xi)));
  }
}

void residual_forward(float* out, const float* a, const float* b, int N) {
  for (int i = 0; i < N; ++i) out[i] = a[i] + b[i];
}

void residual_backward(float* da, float* db, const float* dout, int N) {
  for (int i = 0; i < N; ++i) da[i] += dout[i], db[i] += dout[i];
}

float crossentropy_forward(float* probs, const float* logits, const int32_t* targets, int BT, int V) {
  double loss = 0;
  int scored = 0;
  for (int i = 0; i < BT; ++i) {
    const float* l = logits + int64_t(i) * V;
    double max = -INFINITY, sum = 0;
    for (int j = 0; j < V; ++j) max = std::max(max, double(l[j]));
    for (int j = 0; j < V; ++j) sum += std::exp(l[j] - max);
    for (int j = 0; j < V; ++j) probs[int64_t(i) * V + j] = float(std::exp(l[j] - max) / sum);
    if (targets[i] >= 0) {
      loss += std::log(sum) - (l[targets[i]] - max);
      ++scored;
    }
  }
  return scored ? float(loss / scored) : 0.0f;
}

void crossentropy_backward(float* dlogits, const float* probs, const int32_t* targets, int BT, int V) {
  int scored = 0;
  for (int i = 0; i < BT; ++i) scored += targets[i] >= 0;
  for (int i = 0; i < BT; ++i) {
    if (targets[i] < 0) continue;
    for (int j = 0; j < V; ++j)
      dlogits[int64_t(i) * V + j] += float((double(probs[int64_t(i) * V + j]) - (j == targets[i])) / scored);
  }
}

}  // namespace attnscope::ops::reference
