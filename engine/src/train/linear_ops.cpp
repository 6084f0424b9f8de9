// linear_ops.cpp — attention without a softmax for the training model (legend in linear_ops.h).
//
// Sections: feature map and norm · linear · retention · Mamba-2 · delta rules · the layer
#include "train/linear_ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "attnscope/attention/linear_layer.h"

namespace attnscope::train::linear_ops {
namespace {

double dot(const double* a, const double* b, int d) {
  double s = 0;
  for (int i = 0; i < d; ++i) s += a[i] * b[i];
  return s;
}
// y += a·x
void axpy(double* y, double a, const double* x, int d) {
  for (int i = 0; i < d; ++i) y[i] += a * x[i];
}
// softplus with PyTorch's threshold (x > 20: x), as the engine's linear_layer.cpp
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

// ================================ feature map and norm ===========================================

void elu1_forward(double* y, const double* x, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] + 1.0 : std::exp(x[i]);
}

void elu1_backward(double* dx, const double* dy, const double* x, size_t n) {
  for (size_t i = 0; i < n; ++i) dx[i] += dy[i] * (x[i] > 0 ? 1.0 : std::exp(x[i]));
}

void l2norm_forward(double* y, double* norm, const double* x, int T, int d) {
  for (int t = 0; t < T; ++t) {
    const double n = std::sqrt(dot(x + size_t(t) * d, x + size_t(t) * d, d));
    norm[t] = n;
    for (int i = 0; i < d; ++i) y[size_t(t) * d + i] = n > 0 ? x[size_t(t) * d + i] / n : x[size_t(t) * d + i];
  }
}

void l2norm_backward(double* dx, const double* dy, const double* y, const double* norm, int T, int d) {
  for (int t = 0; t < T; ++t) {
    const double* yt = y + size_t(t) * d;
    const double* dyt = dy + size_t(t) * d;
    if (norm[t] == 0) continue;  // the zero row: no direction to move
    const double yd = dot(yt, dyt, d);
    for (int i = 0; i < d; ++i) dx[size_t(t) * d + i] += (dyt[i] - yt[i] * yd) / norm[t];
  }
}

// ================================ linear (with the normaliser) ===================================

void linear_norm_forward(double* out, double* M, const double* fq, const double* fk, const double* v, int T, int d) {
  std::fill(M, M + size_t(T) * T, 0.0);
  for (int t = 0; t < T; ++t) {
    double den = 0;
    for (int s = 0; s <= t; ++s) den += M[size_t(t) * T + s] = dot(fq + size_t(t) * d, fk + size_t(s) * d, d);
    double* o = out + size_t(t) * d;
    std::fill(o, o + d, 0.0);
    for (int s = 0; s <= t; ++s) {
      M[size_t(t) * T + s] /= den;
      axpy(o, M[size_t(t) * T + s], v + size_t(s) * d, d);
    }
  }
}

void linear_norm_backward(double* dfq, double* dfk, double* dv, const double* dout, const double* out,
                          const double* M, const double* fq, const double* fk, const double* v, int T, int d) {
  for (int t = 0; t < T; ++t) {
    const double* go = dout + size_t(t) * d;
    // M_ts = A_ts / den_t, o_t = Σ_s M_ts v_s:  dA_ts = (go·v_s − go·o_t) / den_t
    double den = 0;
    for (int s = 0; s <= t; ++s) den += dot(fq + size_t(t) * d, fk + size_t(s) * d, d);
    const double go_o = dot(go, out + size_t(t) * d, d);
    for (int s = 0; s <= t; ++s) {
      axpy(dv + size_t(s) * d, M[size_t(t) * T + s], go, d);
      const double dA = (dot(go, v + size_t(s) * d, d) - go_o) / den;
      axpy(dfq + size_t(t) * d, dA, fk + size_t(s) * d, d);
      axpy(dfk + size_t(s) * d, dA, fq + size_t(t) * d, d);
    }
  }
}

// ================================ retention (decayed) ============================================

void decayed_forward(double* out, double* M, const double* q, const double* k, const double* v, double gamma, int T,
                     int d) {
  std::fill(M, M + size_t(T) * T, 0.0);
  for (int t = 0; t < T; ++t) {
    double* o = out + size_t(t) * d;
    std::fill(o, o + d, 0.0);
    for (int s = 0; s <= t; ++s) {
      const double m = std::pow(gamma, t - s) * dot(q + size_t(t) * d, k + size_t(s) * d, d);
      M[size_t(t) * T + s] = m;
      axpy(o, m, v + size_t(s) * d, d);
    }
  }
}

void decayed_backward(double* dq, double* dk, double* dv, const double* dout, const double* q, const double* k,
                      const double* v, double gamma, int T, int d) {
  for (int t = 0; t < T; ++t) {
    const double* go = dout + size_t(t) * d;
    for (int s = 0; s <= t; ++s) {
      const double decay = std::pow(gamma, t - s);
      axpy(dv + size_t(s) * d, decay * dot(q + size_t(t) * d, k + size_t(s) * d, d), go, d);
      const double dm = dot(go, v + size_t(s) * d, d) * decay;
      axpy(dq + size_t(t) * d, dm, k + size_t(s) * d, d);
      axpy(dk + size_t(s) * d, dm, q + size_t(t) * d, d);
    }
  }
}

// ================================ Mamba-2 (SSD, scalar A) ========================================

void ssd_forward(double* y, double* M, const double* C, const double* B, const double* x, const double* dt, double A,
                 double D, int T, int d) {
  std::vector<double> cum(static_cast<size_t>(T));  // cum_t = A·Σ_{r≤t} Δ_r
  double run = 0;
  for (int t = 0; t < T; ++t) cum[size_t(t)] = A * (run += dt[t]);
  std::fill(M, M + size_t(T) * T, 0.0);
  for (int t = 0; t < T; ++t) {
    double* o = y + size_t(t) * d;
    for (int i = 0; i < d; ++i) o[i] = D * x[size_t(t) * d + i];
    for (int s = 0; s <= t; ++s) {
      const double m = dot(C + size_t(t) * d, B + size_t(s) * d, d) * dt[s] * std::exp(cum[size_t(t)] - cum[size_t(s)]);
      M[size_t(t) * T + s] = m;
      axpy(o, m, x + size_t(s) * d, d);
    }
  }
}

void ssd_backward(double* dC, double* dB, double* dx, double* ddt, double* dA, double* dD, const double* dy,
                  const double* M, const double* C, const double* B, const double* x, const double* dt, double A,
                  double D, int T, int d) {
  std::vector<double> P(static_cast<size_t>(T)), dcum(static_cast<size_t>(T), 0.0);  // P_t = Σ_{r≤t} Δ_r, cum_t = A·P_t
  double run = 0;
  for (int t = 0; t < T; ++t) P[size_t(t)] = run += dt[t];
  for (int t = 0; t < T; ++t) {
    const double* g = dy + size_t(t) * d;
    *dD += dot(g, x + size_t(t) * d, d);
    axpy(dx + size_t(t) * d, D, g, d);
    for (int s = 0; s <= t; ++s) {
      const double m = M[size_t(t) * T + s];
      axpy(dx + size_t(s) * d, m, g, d);
      const double dm = dot(g, x + size_t(s) * d, d);
      // M_ts = G_ts·Δ_s·E_ts with G_ts = C_t·B_s, E_ts = exp(cum_t − cum_s)
      const double E = std::exp(A * (P[size_t(t)] - P[size_t(s)]));
      const double dG = dm * dt[s] * E;
      axpy(dC + size_t(t) * d, dG, B + size_t(s) * d, d);
      axpy(dB + size_t(s) * d, dG, C + size_t(t) * d, d);
      ddt[s] += dm * dot(C + size_t(t) * d, B + size_t(s) * d, d) * E;
      dcum[size_t(t)] += dm * m, dcum[size_t(s)] -= dm * m;  // d log E_ts
    }
  }
  double from_later = 0;  // Σ_{t≥r} A·dcum_t
  for (int t = T - 1; t >= 0; --t) {
    *dA += dcum[size_t(t)] * P[size_t(t)];
    from_later += A * dcum[size_t(t)];
    ddt[t] += from_later;
  }
}

// ================================ delta rules ====================================================

void gated_delta_forward(double* out, double* states, double* M, const double* q, const double* k, const double* v,
                         const double* beta, const double* alpha, int T, int d, bool keep_states) {
  const size_t dd = size_t(d) * d;
  std::fill(states, states + dd, 0.0);
  std::vector<double> r(static_cast<size_t>(d));
  // every state kept for the backward, or two slots used in turn
  auto slot = [&](int t) { return states + size_t(keep_states ? t : t % 2) * dd; };
  for (int t = 0; t < T; ++t) {
    const double* prev = slot(t);
    double* S = slot(t + 1);
    const double* kt = k + size_t(t) * d;
    for (size_t i = 0; i < dd; ++i) S[i] = alpha[t] * prev[i];  // S' = α_t·S_{t−1}
    std::fill(r.begin(), r.end(), 0.0);                          // r = S'ᵀ·k_t
    for (int i = 0; i < d; ++i) axpy(r.data(), kt[i], S + size_t(i) * d, d);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < d; ++j) S[size_t(i) * d + j] += kt[i] * beta[t] * (v[size_t(t) * d + j] - r[size_t(j)]);
    double* o = out + size_t(t) * d;  // o_t = S_tᵀ·q_t
    std::fill(o, o + d, 0.0);
    for (int i = 0; i < d; ++i) axpy(o, q[size_t(t) * d + i], S + size_t(i) * d, d);
  }
  // M_ts = q_tᵀ·A_t⋯A_{s+1}·(β_s k_s), A_r = α_r(I − β_r k_r k_rᵀ): carry u forward (the engine's
  // linear_head_matrix does the same)
  std::fill(M, M + size_t(T) * T, 0.0);
  std::vector<double> u(static_cast<size_t>(d));
  for (int s = 0; s < T; ++s) {
    for (int i = 0; i < d; ++i) u[size_t(i)] = beta[s] * k[size_t(s) * d + i];
    for (int t = s; t < T; ++t) {
      if (t > s) {
        const double ku = dot(k + size_t(t) * d, u.data(), d);
        for (int i = 0; i < d; ++i) u[size_t(i)] = alpha[t] * (u[size_t(i)] - beta[t] * k[size_t(t) * d + i] * ku);
      }
      M[size_t(t) * T + s] = dot(q + size_t(t) * d, u.data(), d);
    }
  }
}

void gated_delta_backward(double* dq, double* dk, double* dv, double* dbeta, double* dalpha, const double* dout,
                          const double* states, const double* q, const double* k, const double* v,
                          const double* beta, const double* alpha, int T, int d) {
  const size_t dd = size_t(d) * d;
  std::vector<double> dS(dd, 0.0), Sp(dd), r(static_cast<size_t>(d)), u(static_cast<size_t>(d)), du(static_cast<size_t>(d)), dr(static_cast<size_t>(d));
  for (int t = T - 1; t >= 0; --t) {
    const double* prev = states + size_t(t) * dd;
    const double* S = states + size_t(t + 1) * dd;
    const double *kt = k + size_t(t) * d, *qt = q + size_t(t) * d, *go = dout + size_t(t) * d;
    for (size_t i = 0; i < dd; ++i) Sp[i] = alpha[t] * prev[i];
    std::fill(r.begin(), r.end(), 0.0);
    for (int i = 0; i < d; ++i) axpy(r.data(), kt[i], Sp.data() + size_t(i) * d, d);
    for (int j = 0; j < d; ++j) u[size_t(j)] = beta[t] * (v[size_t(t) * d + j] - r[size_t(j)]);
    // o_t = S_tᵀ·q_t
    for (int i = 0; i < d; ++i) {
      dq[size_t(t) * d + i] += dot(S + size_t(i) * d, go, d);
      axpy(dS.data() + size_t(i) * d, qt[i], go, d);
    }
    // S_t = S' + k_t·uᵀ
    std::fill(du.begin(), du.end(), 0.0);
    for (int i = 0; i < d; ++i) {
      dk[size_t(t) * d + i] += dot(dS.data() + size_t(i) * d, u.data(), d);
      axpy(du.data(), kt[i], dS.data() + size_t(i) * d, d);
    }
    // u = β_t·(v_t − S'ᵀk_t)
    double db = 0;
    for (int j = 0; j < d; ++j) {
      db += du[size_t(j)] * (v[size_t(t) * d + j] - r[size_t(j)]);
      dv[size_t(t) * d + j] += beta[t] * du[size_t(j)];
      dr[size_t(j)] = -beta[t] * du[size_t(j)];
    }
    dbeta[t] += db;
    for (int i = 0; i < d; ++i) {
      dk[size_t(t) * d + i] += dot(Sp.data() + size_t(i) * d, dr.data(), d);
      axpy(dS.data() + size_t(i) * d, kt[i], dr.data(), d);  // dS' (= dS from here on)
    }
    // S' = α_t·S_{t−1}
    double da = 0;
    for (size_t i = 0; i < dd; ++i) da += dS[i] * prev[i];
    dalpha[t] += da;
    for (size_t i = 0; i < dd; ++i) dS[i] *= alpha[t];
  }
}

// ================================ the layer ======================================================

namespace {

// One head of one sequence, gathered in double with what its kind reads (legend of linear_ops.h).
struct Head {
  int T = 0, d = 0;
  std::vector<double> q, k, v;           // as projected [T, d]
  std::vector<double> qa, ka;            // as the kind reads them: φ(q), φ(k); q/√d; L2-normalised (q/√d)
  std::vector<double> qnorm, knorm;      // delta rules: the rows' norms
  std::vector<double> beta, step, alpha; // [T] β_t; softplus(gate_s + dt_bias) (Mamba-2's Δ); α_t
  double A = 0, D = 0, gamma = 0, exp_a_log = 0;
};

Head gather(AttentionKind kind, const float* q, const float* k, const float* v, const float* gate_b,
            const float* gate_s, const LayerGates& gates, int b, int h, int T, int H, int d) {
  Head x;
  x.T = T, x.d = d;
  const size_t n = size_t(T) * d, HD = size_t(H) * d;
  x.q.resize(n), x.k.resize(n), x.v.resize(n);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i) {
      const size_t at = (size_t(b) * T + t) * HD + size_t(h) * d + i;
      x.q[size_t(t) * d + i] = q[at], x.k[size_t(t) * d + i] = k[at], x.v[size_t(t) * d + i] = v[at];
    }
  auto gate = [&](const float* g, int t) { return double(g[(size_t(b) * T + t) * H + h]); };
  const double inv_sqrt_d = 1.0 / std::sqrt(double(d));
  x.qa.resize(n), x.ka.resize(n);
  switch (kind) {
    case AttentionKind::linear:
      elu1_forward(x.qa.data(), x.q.data(), n), elu1_forward(x.ka.data(), x.k.data(), n);
      break;
    case AttentionKind::retention:
      for (size_t i = 0; i < n; ++i) x.qa[i] = x.q[i] * inv_sqrt_d;
      x.ka = x.k;
      x.gamma = linear_decay_schedule(h, H);
      break;
    case AttentionKind::mamba2:
      x.qa = x.q, x.ka = x.k;
      x.A = -std::exp(double(gates.a_log[h])), x.D = gates.d_skip[h];
      for (int t = 0; t < T; ++t) x.step.push_back(softplus(gate(gate_s, t) + double(gates.dt_bias[h])));
      break;
    case AttentionKind::deltanet:
    case AttentionKind::gated_deltanet:
      x.qnorm.resize(size_t(T)), x.knorm.resize(size_t(T));
      l2norm_forward(x.qa.data(), x.qnorm.data(), x.q.data(), T, d);
      l2norm_forward(x.ka.data(), x.knorm.data(), x.k.data(), T, d);
      for (size_t i = 0; i < n; ++i) x.qa[i] *= inv_sqrt_d;
      for (int t = 0; t < T; ++t) x.beta.push_back(sigmoid(gate(gate_b, t)));
      if (kind == AttentionKind::gated_deltanet) {
        x.exp_a_log = std::exp(double(gates.a_log[h]));
        for (int t = 0; t < T; ++t) {
          x.step.push_back(softplus(gate(gate_s, t) + double(gates.dt_bias[h])));
          x.alpha.push_back(std::exp(-x.exp_a_log * x.step.back()));
        }
      } else {
        x.alpha.assign(size_t(T), 1.0);
      }
      break;
    case AttentionKind::grouped:
    case AttentionKind::mla: break;
  }
  return x;
}

// out and M of one head; `states` for the delta rules.
void run_head(AttentionKind kind, const Head& x, std::vector<double>& out, std::vector<double>& M,
              std::vector<double>& states, bool keep_states) {
  const int T = x.T, d = x.d;
  out.assign(size_t(T) * d, 0.0), M.assign(size_t(T) * T, 0.0);
  switch (kind) {
    case AttentionKind::linear:
      linear_norm_forward(out.data(), M.data(), x.qa.data(), x.ka.data(), x.v.data(), T, d);
      break;
    case AttentionKind::retention:
      decayed_forward(out.data(), M.data(), x.qa.data(), x.ka.data(), x.v.data(), x.gamma, T, d);
      break;
    case AttentionKind::mamba2:
      ssd_forward(out.data(), M.data(), x.qa.data(), x.ka.data(), x.v.data(), x.step.data(), x.A, x.D, T, d);
      break;
    case AttentionKind::deltanet:
    case AttentionKind::gated_deltanet:
      states.assign(size_t(keep_states ? T + 1 : 2) * d * d, 0.0);
      gated_delta_forward(out.data(), states.data(), M.data(), x.qa.data(), x.ka.data(), x.v.data(), x.beta.data(),
                          x.alpha.data(), T, d, keep_states);
      break;
    case AttentionKind::grouped:
    case AttentionKind::mla: break;
  }
}

}  // namespace

void layer_forward(AttentionKind kind, float* out, float* probs, const float* q, const float* k, const float* v,
                   const float* gate_b, const float* gate_s, const LayerGates& gates, int B, int T, int H, int d) {
  std::vector<double> o, M, states;
  const size_t HD = size_t(H) * d;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const Head x = gather(kind, q, k, v, gate_b, gate_s, gates, b, h, T, H, d);
      run_head(kind, x, o, M, states, false);
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < d; ++i) out[(size_t(b) * T + t) * HD + size_t(h) * d + i] = float(o[size_t(t) * d + i]);
      float* P = probs + (size_t(b) * H + h) * T * T;
      for (size_t i = 0; i < size_t(T) * T; ++i) P[i] = float(M[i]);
    }
}

void layer_backward(AttentionKind kind, float* dq, float* dk, float* dv, float* dgate_b, float* dgate_s,
                    const LayerGateGrads& dgates, const float* dout, const float* q, const float* k, const float* v,
                    const float* gate_b, const float* gate_s, const LayerGates& gates, int B, int T, int H, int d) {
  const size_t n = size_t(T) * d, HD = size_t(H) * d;
  const double inv_sqrt_d = 1.0 / std::sqrt(double(d));
  std::vector<double> o, M, states, go(n), dqa, dka, dvv, dq_raw, dk_raw, dbeta, dalpha, dstep;
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const Head x = gather(kind, q, k, v, gate_b, gate_s, gates, b, h, T, H, d);
      run_head(kind, x, o, M, states, true);
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < d; ++i) go[size_t(t) * d + i] = dout[(size_t(b) * T + t) * HD + size_t(h) * d + i];
      dqa.assign(n, 0.0), dka.assign(n, 0.0), dvv.assign(n, 0.0), dq_raw.assign(n, 0.0), dk_raw.assign(n, 0.0);
      dbeta.assign(size_t(T), 0.0), dalpha.assign(size_t(T), 0.0), dstep.assign(size_t(T), 0.0);
      double dA = 0, dD = 0;
      auto gate_at = [&](int t) { return (size_t(b) * T + t) * H + h; };
      switch (kind) {
        case AttentionKind::linear:
          linear_norm_backward(dqa.data(), dka.data(), dvv.data(), go.data(), o.data(), M.data(), x.qa.data(),
                               x.ka.data(), x.v.data(), T, d);
          elu1_backward(dq_raw.data(), dqa.data(), x.q.data(), n);
          elu1_backward(dk_raw.data(), dka.data(), x.k.data(), n);
          break;
        case AttentionKind::retention:
          decayed_backward(dqa.data(), dk_raw.data(), dvv.data(), go.data(), x.qa.data(), x.ka.data(), x.v.data(),
                           x.gamma, T, d);
          for (size_t i = 0; i < n; ++i) dq_raw[i] = dqa[i] * inv_sqrt_d;
          break;
        case AttentionKind::mamba2: {
          ssd_backward(dq_raw.data(), dk_raw.data(), dvv.data(), dstep.data(), &dA, &dD, go.data(), M.data(),
                       x.qa.data(), x.ka.data(), x.v.data(), x.step.data(), x.A, x.D, T, d);
          dgates.a_log[h] += float(dA * x.A);  // A = −exp(A_log)
          dgates.d_skip[h] += float(dD);
          double dbias = 0;
          for (int t = 0; t < T; ++t) {  // Δ = softplus(u), u = gate_s + dt_bias
            const double du = dstep[size_t(t)] * sigmoid(double(gate_s[gate_at(t)]) + double(gates.dt_bias[h]));
            dgate_s[gate_at(t)] = float(du);
            dbias += du;
          }
          dgates.dt_bias[h] += float(dbias);
          break;
        }
        case AttentionKind::deltanet:
        case AttentionKind::gated_deltanet: {
          gated_delta_backward(dqa.data(), dka.data(), dvv.data(), dbeta.data(), dalpha.data(), go.data(),
                               states.data(), x.qa.data(), x.ka.data(), x.v.data(), x.beta.data(), x.alpha.data(), T,
                               d);
          for (size_t i = 0; i < n; ++i) dqa[i] *= inv_sqrt_d;
          std::vector<double> qhat(x.qa);
          for (double& e : qhat) e /= inv_sqrt_d;  // the L2-normalised q before the scale
          l2norm_backward(dq_raw.data(), dqa.data(), qhat.data(), x.qnorm.data(), T, d);
          l2norm_backward(dk_raw.data(), dka.data(), x.ka.data(), x.knorm.data(), T, d);
          for (int t = 0; t < T; ++t) {  // β = sigmoid(gate_b)
            const double be = x.beta[size_t(t)];
            dgate_b[gate_at(t)] = float(dbeta[size_t(t)] * be * (1 - be));
          }
          if (kind == AttentionKind::gated_deltanet) {
            double dlog = 0, dbias = 0;
            for (int t = 0; t < T; ++t) {  // α = exp(g), g = −exp(A_log)·softplus(u)
              const double dg = dalpha[size_t(t)] * x.alpha[size_t(t)];
              const double g = -x.exp_a_log * x.step[size_t(t)];
              dlog += dg * g;
              const double du = dg * -x.exp_a_log * sigmoid(double(gate_s[gate_at(t)]) + double(gates.dt_bias[h]));
              dgate_s[gate_at(t)] = float(du);
              dbias += du;
            }
            dgates.a_log[h] += float(dlog);
            dgates.dt_bias[h] += float(dbias);
          }
          break;
        }
        case AttentionKind::grouped:
        case AttentionKind::mla: break;
      }
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < d; ++i) {
          const size_t at = (size_t(b) * T + t) * HD + size_t(h) * d + i, j = size_t(t) * d + i;
          dq[at] = float(dq_raw[j]), dk[at] = float(dk_raw[j]), dv[at] = float(dvv[j]);
        }
    }
}

}  // namespace attnscope::train::linear_ops
