// linear_attention.cpp — attention without a softmax (linear_attention.h): the recurrence, the chunked
// form and the explicit matrix of each kind, in double, rounded to float once at the end.
#include "attnscope/attention/linear_attention.h"

#include <cmath>
#include <string>

#include "attnscope/core/error.h"

namespace attnscope {
namespace {

using MatX = Eigen::MatrixXd;  // column-major double: the state and the chunk blocks
using VecX = Eigen::VectorXd;

struct Named {
  LinearKind kind;
  const char* name;
};
constexpr Named kinds[] = {{LinearKind::linear, "linear"},           {LinearKind::linear_norm, "linear_norm"},
                           {LinearKind::decayed, "decayed"},         {LinearKind::mamba2, "mamba2"},
                           {LinearKind::delta, "delta"},             {LinearKind::gated_delta, "gated_delta"}};

bool uses_phi(LinearKind k) { return k == LinearKind::linear || k == LinearKind::linear_norm; }
bool is_delta(LinearKind k) { return k == LinearKind::delta || k == LinearKind::gated_delta; }

double phi(double x) { return x > 0 ? x + 1.0 : std::exp(x); }  // elu(x) + 1

// Row t of q or k as the kind reads it (φ applied for linear attention), in double.
VecX row(const Mat& m, int t, bool feature_map) {
  VecX r = m.row(t).cast<double>().transpose();
  if (feature_map)
    for (Eigen::Index i = 0; i < r.size(); ++i) r[i] = phi(r[i]);
  return r;
}

// The scalar forms: S_t = a_t·S_{t−1} + w_t·k_t·v_tᵀ. log a_t and w_t of token t.
double log_a(LinearKind kind, const LinearHeadInput& in, int t) {
  switch (kind) {
    case LinearKind::decayed: return double(in.log_decay[size_t(t)]);
    case LinearKind::mamba2: return double(in.dt[size_t(t)]) * double(in.log_decay[size_t(t)]);  // Δ_t·A
    default: return 0.0;
  }
}
double w_of(LinearKind kind, const LinearHeadInput& in, int t) {
  return kind == LinearKind::mamba2 ? double(in.dt[size_t(t)]) : 1.0;
}
// α_t of the delta rules (1 for the plain delta rule).
double alpha(LinearKind kind, const LinearHeadInput& in, int t) {
  return kind == LinearKind::gated_delta ? std::exp(double(in.log_decay[size_t(t)])) : 1.0;
}

void add_skip(LinearKind kind, const LinearHeadInput& in, MatX& out) {
  if (kind == LinearKind::mamba2) out += double(in.d_skip) * in.v.cast<double>();
}

LinearHeadResult rounded(const MatX& out, const MatX& state) {
  return {out.cast<float>(), state.cast<float>()};
}

bool finite_vector(const std::vector<float>& v) {
  for (const float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

LinearKind parse_linear_kind(const std::string& name) {
  for (const Named& n : kinds)
    if (name == n.name) return n.kind;
  throw InputError("unknown attention without a softmax \"" + name +
                   "\" (valid: linear, linear_norm, decayed, mamba2, delta, gated_delta)");
}

const char* linear_kind_name(LinearKind kind) {
  for (const Named& n : kinds)
    if (n.kind == kind) return n.name;
  return "?";
}

void validate_linear_head(LinearKind kind, const LinearHeadInput& in) {
  const std::string what = std::string(linear_kind_name(kind)) + ": ";
  const Eigen::Index T = in.q.rows();
  if (T < 1) throw InputError(what + "no tokens (T must be at least 1)");
  if (in.k.rows() != T || in.v.rows() != T)
    throw InputError(what + "q, k and v have " + std::to_string(T) + ", " + std::to_string(in.k.rows()) + " and " +
                     std::to_string(in.v.rows()) + " rows; they must have one row per token each");
  if (in.q.cols() != in.k.cols() || in.q.cols() < 1 || in.v.cols() < 1)
    throw InputError(what + "q is [T, " + std::to_string(in.q.cols()) + "] and k [T, " + std::to_string(in.k.cols()) +
                     "]: they must share their width d_k ≥ 1, and v needs d_v ≥ 1 columns");
  if (!all_finite(in.q) || !all_finite(in.k) || !all_finite(in.v) || !finite_vector(in.beta) ||
      !finite_vector(in.log_decay) || !finite_vector(in.dt) || !std::isfinite(in.d_skip))
    throw InputError(what + "a value is NaN or infinite (every input must be finite)");
  auto per_token = [&](const std::vector<float>& v, const char* name) {
    if (Eigen::Index(v.size()) != T)
      throw InputError(what + name + " has " + std::to_string(v.size()) + " values; it needs one per token (" +
                       std::to_string(T) + ")");
  };
  if (is_delta(kind)) per_token(in.beta, "beta");
  if (kind == LinearKind::decayed || kind == LinearKind::gated_delta || kind == LinearKind::mamba2)
    per_token(in.log_decay, kind == LinearKind::mamba2 ? "A" : "the log decay");
  if (kind == LinearKind::mamba2) {
    per_token(in.dt, "dt");
    for (const float x : in.dt)
      if (!(x > 0)) throw InputError(what + "dt = " + std::to_string(x) + ": the step Δ must be > 0 (softplus output)");
    for (const float a : in.log_decay)
      if (!(a < 0)) throw InputError(what + "A = " + std::to_string(a) + ": A must be < 0 (A = −exp(A_log))");
  }
  if (kind == LinearKind::decayed || kind == LinearKind::gated_delta)
    for (const float g : in.log_decay)
      if (g > 0) throw InputError(what + "log decay " + std::to_string(g) + " > 0: the decay must be at most 1");
}

LinearHeadResult linear_head_recurrent(LinearKind kind, const LinearHeadInput& in) {
  validate_linear_head(kind, in);
  const int T = int(in.q.rows());
  const Eigen::Index dk = in.q.cols(), dv = in.v.cols();
  const bool fm = uses_phi(kind);
  MatX S = MatX::Zero(dk, dv), out(T, dv);
  VecX z = VecX::Zero(dk);  // linear_norm's normaliser Σ φ(k_s)
  for (int t = 0; t < T; ++t) {
    const VecX q = row(in.q, t, fm), k = row(in.k, t, fm), v = in.v.row(t).cast<double>().transpose();
    if (is_delta(kind)) {
      S *= alpha(kind, in, t);                                    // decay before the read (gated)
      const VecX predicted = S.transpose() * k;                   // what the state recalls for k_t
      const VecX delta = double(in.beta[size_t(t)]) * (v - predicted);
      S += k * delta.transpose();
    } else {
      S = std::exp(log_a(kind, in, t)) * S + w_of(kind, in, t) * k * v.transpose();
    }
    VecX o = S.transpose() * q;
    if (kind == LinearKind::linear_norm) {
      z += k;
      o /= z.dot(q);
    }
    out.row(t) = o.transpose();
  }
  add_skip(kind, in, out);
  return rounded(out, S);
}

LinearHeadResult linear_head_chunked(LinearKind kind, const LinearHeadInput& in, int chunk) {
  validate_linear_head(kind, in);
  if (chunk < 1) throw InputError("chunk = " + std::to_string(chunk) + ": a chunk holds at least 1 token");
  const int T = int(in.q.rows());
  const Eigen::Index dk = in.q.cols(), dv = in.v.cols();
  const bool fm = uses_phi(kind);
  MatX S = MatX::Zero(dk, dv), out(T, dv);
  VecX z = VecX::Zero(dk);
  for (int c0 = 0; c0 < T; c0 += chunk) {
    const int n = std::min(chunk, T - c0);
    MatX Q(n, dk), K(n, dk), V(n, dv);
    for (int i = 0; i < n; ++i) {
      Q.row(i) = row(in.q, c0 + i, fm).transpose();
      K.row(i) = row(in.k, c0 + i, fm).transpose();
      V.row(i) = in.v.row(c0 + i).cast<double>();
    }
    if (!is_delta(kind)) {
      // Cumulative log decay L_i within the chunk; the block's M_ij = exp(L_i − L_j)·w_j·q_i·k_j (j ≤ i),
      // the state's share exp(L_i)·S_prevᵀ·q_i, and the state after the chunk.
      VecX L(n), w(n);
      double acc = 0;
      for (int i = 0; i < n; ++i) {
        acc += log_a(kind, in, c0 + i);
        L[i] = acc;
        w[i] = w_of(kind, in, c0 + i);
      }
      MatX block = Q * K.transpose();
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) block(i, j) = j <= i ? block(i, j) * std::exp(L[i] - L[j]) * w[j] : 0.0;
      MatX o = block * V;
      for (int i = 0; i < n; ++i) o.row(i) += std::exp(L[i]) * (S.transpose() * Q.row(i).transpose()).transpose();
      if (kind == LinearKind::linear_norm) {
        // The normaliser: z_prev·q_i plus the block's row sums (no decay in linear attention).
        for (int i = 0; i < n; ++i) o.row(i) /= z.dot(Q.row(i).transpose()) + block.row(i).sum();
        z += K.colwise().sum().transpose();
      }
      out.middleRows(c0, n) = o;
      MatX decayed_k = K;
      for (int j = 0; j < n; ++j) decayed_k.row(j) *= std::exp(L[n - 1] - L[j]) * w[j];
      S = std::exp(L[n - 1]) * S + decayed_k.transpose() * V;
    } else {
      // The WY form of the (gated) delta rule, as transformers' torch_chunk_gated_delta_rule computes it:
      // g cumulative in the chunk, A = (I + strictly-lower(β_i·k_i·k_j·e^{g_i−g_j}))⁻¹ by forward substitution,
      // U = A·(β ⊙ V), W = A·(β·e^{g} ⊙ K); then per chunk v_new = U − W·S, o = (e^{g} ⊙ Q)·S + (QKᵀ ⊙ D)·v_new
      // with D_ij = e^{g_i−g_j} (j ≤ i), and S ← e^{g_last}·S + (e^{g_last − g} ⊙ K)ᵀ·v_new.
      VecX g(n), beta(n);
      double acc = 0;
      for (int i = 0; i < n; ++i) {
        acc += kind == LinearKind::gated_delta ? double(in.log_decay[size_t(c0 + i)]) : 0.0;
        g[i] = acc;
        beta[i] = double(in.beta[size_t(c0 + i)]);
      }
      MatX A = MatX::Zero(n, n);  // −strictly lower (β_i k_i·k_j e^{g_i − g_j})
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < i; ++j) A(i, j) = -beta[i] * K.row(i).dot(K.row(j)) * std::exp(g[i] - g[j]);
      // (I − A)⁻¹ row by row: T_i = A_i + Σ_{m<i} A_im·T_m (transformers' loop), then + I.
      MatX Tm = A;
      for (int i = 1; i < n; ++i)
        for (int j = 0; j < i; ++j) {
          double s = 0;
          for (int m = j + 1; m < i; ++m) s += A(i, m) * Tm(m, j);
          Tm(i, j) = A(i, j) + s;
        }
      Tm += MatX::Identity(n, n);
      MatX Vb = V, Kb = K;
      for (int i = 0; i < n; ++i) {
        Vb.row(i) *= beta[i];
        Kb.row(i) *= beta[i] * std::exp(g[i]);
      }
      const MatX U = Tm * Vb, W = Tm * Kb;
      const MatX v_new = U - W * S;
      MatX qk = Q * K.transpose();
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) qk(i, j) = j <= i ? qk(i, j) * std::exp(g[i] - g[j]) : 0.0;
      MatX Qg = Q;
      for (int i = 0; i < n; ++i) Qg.row(i) *= std::exp(g[i]);
      out.middleRows(c0, n) = Qg * S + qk * v_new;
      MatX Kd = K;
      for (int j = 0; j < n; ++j) Kd.row(j) *= std::exp(g[n - 1] - g[j]);
      S = std::exp(g[n - 1]) * S + Kd.transpose() * v_new;
    }
  }
  add_skip(kind, in, out);
  return rounded(out, S);
}

Mat linear_head_matrix(LinearKind kind, const LinearHeadInput& in) {
  validate_linear_head(kind, in);
  const int T = int(in.q.rows());
  const bool fm = uses_phi(kind);
  MatX M = MatX::Zero(T, T);
  std::vector<VecX> q(static_cast<size_t>(T)), k(static_cast<size_t>(T));
  for (int t = 0; t < T; ++t) q[size_t(t)] = row(in.q, t, fm), k[size_t(t)] = row(in.k, t, fm);
  if (is_delta(kind)) {
    // M_ts = β_s·q_tᵀ·A_t⋯A_{s+1}·k_s with A_r = α_r(I − β_r k_r k_rᵀ), and the write of token s is
    // itself applied after α_s: the state's k_s column enters as β_s k_s. Carry u = A_r⋯A_{s+1}·k_s.
    for (int s = 0; s < T; ++s) {
      VecX u = double(in.beta[size_t(s)]) * k[size_t(s)];
      for (int t = s; t < T; ++t) {
        if (t > s) u = alpha(kind, in, t) * (u - double(in.beta[size_t(t)]) * k[size_t(t)] * k[size_t(t)].dot(u));
        M(t, s) = q[size_t(t)].dot(u);
      }
    }
  } else {
    for (int s = 0; s < T; ++s) {
      double decay = w_of(kind, in, s);  // w_s·Π_{r=s+1..t} a_r
      for (int t = s; t < T; ++t) {
        if (t > s) decay *= std::exp(log_a(kind, in, t));
        M(t, s) = decay * q[size_t(t)].dot(k[size_t(s)]);
      }
    }
    if (kind == LinearKind::linear_norm)
      for (int t = 0; t < T; ++t) M.row(t) /= M.row(t).sum();
  }
  return M.cast<float>();
}

}  // namespace attnscope
