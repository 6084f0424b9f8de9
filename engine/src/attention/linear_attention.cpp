// linear_attention.cpp — attention without a softmax (linear_attention.h): the explicit matrix of each kind
// in double, rounded to float once at the end; the recurrence with a float32 state and the chunked form in
// float32 blocked matrix products (Eigen), as a model runs them.
#include "attnscope/attention/linear_attention.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <utility>

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

// The recurrence's block of state columns: 16 columns of d_k = 128 floats are 8 KB, in L1 with q_t, k_t.
constexpr Eigen::Index kRecurrentColumns = 16;

// m [T, d] in double, row-major (token t's row contiguous), φ applied for linear attention.
// φ(m) in float32 with Eigen's vectorised exp (a scalar std::exp per entry was a quarter of linear attention's
// time; select() would call it per entry, hence the plain loop).
Mat phi_of(const Mat& m) {
  Mat r = m;
  const Eigen::ArrayXf e = Eigen::Map<const Eigen::ArrayXf>(m.data(), m.size()).min(0.0f).exp();
  float* p = r.data();
  for (Eigen::Index i = 0; i < r.size(); ++i) p[i] = p[i] > 0.0f ? p[i] + 1.0f : e[i];
  return r;
}

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

bool finite_vector(const std::vector<float>& v) {
  for (const float x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// One token through four state columns s0…s3 (d_k each; see linear_head_recurrent): the delta rules first
// recall r_g = s_g·k and write c_g = w·(v_g − a·r_g), the others c_g = w·v_g; then s_g ← a·s_g + c_g·k and
// o_g = s_g·q. Four columns at once share the loads of k and q and give four independent sums, so the adds
// do not wait on each other (one column alone was bound by its single sum's latency).
template <class R>
void step4(R* s0, R* s1, R* s2, R* s3, const R* k, const R* q, Eigen::Index dk,
           R a, R w, const R v[4], bool delta, R o[4]) {
  R c0 = w * v[0], c1 = w * v[1], c2 = w * v[2], c3 = w * v[3];
  if (delta) {
    R r0 = 0, r1 = 0, r2 = 0, r3 = 0;
#pragma omp simd reduction(+ : r0, r1, r2, r3)
    for (Eigen::Index i = 0; i < dk; ++i) {
      r0 += s0[i] * k[i], r1 += s1[i] * k[i];
      r2 += s2[i] * k[i], r3 += s3[i] * k[i];
    }
    c0 = w * (v[0] - a * r0), c1 = w * (v[1] - a * r1), c2 = w * (v[2] - a * r2), c3 = w * (v[3] - a * r3);
  }
  R o0 = 0, o1 = 0, o2 = 0, o3 = 0;
#pragma omp simd reduction(+ : o0, o1, o2, o3)
  for (Eigen::Index i = 0; i < dk; ++i) {
    const R x0 = a * s0[i] + c0 * k[i], x1 = a * s1[i] + c1 * k[i];
    const R x2 = a * s2[i] + c2 * k[i], x3 = a * s3[i] + c3 * k[i];
    s0[i] = x0, s1[i] = x1, s2[i] = x2, s3[i] = x3;
    o0 += x0 * q[i], o1 += x1 * q[i], o2 += x2 * q[i], o3 += x3 * q[i];
  }
  o[0] = o0, o[1] = o1, o[2] = o2, o[3] = o3;
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

namespace {

// The recurrence and the chunked form on input already validated.
LinearHeadResult recurrent_of(LinearKind kind, const LinearHeadInput& in) {
  // The state in float32, as a model keeps it: half the bytes of double per token, 1.5× as fast, and within
  // 1.1e-6 (relative) of a double recurrence at T = 4096 (the tests check 1e-5). The decays and the
  // normaliser are computed in double and rounded once.
  using R = float;
  using MatR = Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic>;
  const int T = int(in.q.rows());
  const Eigen::Index dk = in.q.cols(), dv = in.v.cols();
  const bool delta = is_delta(kind);
  Mat phi_q, phi_k;  // linear attention reads φ(q), φ(k)
  if (uses_phi(kind)) phi_q = phi_of(in.q), phi_k = phi_of(in.k);
  const Mat& Q = uses_phi(kind) ? phi_q : in.q;  // row-major: token t's row contiguous
  const Mat& K = uses_phi(kind) ? phi_k : in.k;
  // Per token: the state's factor a_t (α_t for the delta rules), the write weight w_t (β_t for the delta
  // rules, Δ_t for Mamba-2) and the divisor of the output (linear_norm's z_t·φ(q_t), else 1).
  std::vector<double> a(static_cast<size_t>(T)), w(static_cast<size_t>(T)), den(static_cast<size_t>(T), 1.0);
  for (int t = 0; t < T; ++t) {
    a[size_t(t)] = delta ? alpha(kind, in, t) : std::exp(log_a(kind, in, t));
    w[size_t(t)] = delta ? double(in.beta[size_t(t)]) : w_of(kind, in, t);
  }
  if (kind == LinearKind::linear_norm) {
    VecX z = VecX::Zero(dk);  // Σ_{s≤t} φ(k_s)
    for (int t = 0; t < T; ++t) {
      z += K.row(t).transpose().cast<double>();
      den[size_t(t)] = z.dot(Q.row(t).transpose().cast<double>());
    }
  }
  // Column j of S sees only v_t[j]: S_t[:, j] = a_t·S_{t−1}[:, j] + c_tj·k_t with c_tj = w_t·v_tj (delta rules:
  // β_t·(v_tj − α_t·S_{t−1}[:, j]·k_t)), and o_t[j] = S_t[:, j]·q_t. So a block of columns runs through all
  // the tokens while it stays in the L1 cache, and each token's q_t and k_t are read once per block.
  MatR S = MatR::Zero(dk, dv);
  MatX out(T, dv);
  for (Eigen::Index j0 = 0; j0 < dv; j0 += kRecurrentColumns) {
    const Eigen::Index nb = std::min<Eigen::Index>(kRecurrentColumns, dv - j0);
    for (int t = 0; t < T; ++t) {
      const R* k = K.data() + Eigen::Index(t) * dk;
      const R* q = Q.data() + Eigen::Index(t) * dk;
      const R at = R(a[size_t(t)]), wt = R(w[size_t(t)]);
      Eigen::Index j = j0;
      for (; j + 4 <= j0 + nb; j += 4) {
        const R v4[4] = {R(in.v(t, j)), R(in.v(t, j + 1)), R(in.v(t, j + 2)), R(in.v(t, j + 3))};
        R o4[4];
        step4(&S(0, j), &S(0, j + 1), &S(0, j + 2), &S(0, j + 3), k, q, dk, at, wt, v4, delta, o4);
        for (int g = 0; g < 4; ++g) out(t, j + g) = double(o4[g]) / den[size_t(t)];
      }
      for (; j < j0 + nb; ++j) {
        R* s = S.col(j).data();
        const R vj = R(in.v(t, j));
        R c = wt * vj;
        if (delta) {
          R recalled = 0;  // S_{t−1}[:, j]·k_t
#pragma omp simd reduction(+ : recalled)
          for (Eigen::Index i = 0; i < dk; ++i) recalled += s[i] * k[i];
          c = wt * (vj - at * recalled);
        }
        R o = 0;
#pragma omp simd reduction(+ : o)
        for (Eigen::Index i = 0; i < dk; ++i) {
          const R x = at * s[i] + c * k[i];
          s[i] = x;
          o += x * q[i];
        }
        out(t, j) = double(o) / den[size_t(t)];
      }
    }
  }
  add_skip(kind, in, out);
  return {out.cast<float>(), S.template cast<float>()};
}

LinearHeadResult chunked_of(LinearKind kind, const LinearHeadInput& in, int chunk) {
  const int T = int(in.q.rows());
  const Eigen::Index dk = in.q.cols(), dv = in.v.cols();
  const bool delta = is_delta(kind);
  Mat phi_q, phi_k;  // linear attention reads φ(q), φ(k)
  if (uses_phi(kind)) phi_q = phi_of(in.q), phi_k = phi_of(in.k);
  const Mat& Q = uses_phi(kind) ? phi_q : in.q;
  const Mat& K = uses_phi(kind) ? phi_k : in.k;
  const Mat& V = in.v;
  Mat S = Mat::Zero(dk, dv), out(T, dv);
  Vec z = Vec::Zero(dk);  // linear_norm: Σ φ(k_s) over the chunks before
  Mat blk, QS, Kd, rhs;   // scratch: the chunk's block of M, Q·S, the decayed keys, the delta rules' right side
  Eigen::ArrayXXf decay;  // e^{L_i − L_j} on and below the diagonal
  Eigen::ArrayXd L, wv;   // cumulative log decay in the chunk, and each token's write weight
  for (int c0 = 0; c0 < T; c0 += chunk) {
    const int n = std::min(chunk, T - c0);
    const auto Qc = Q.middleRows(c0, n);
    const auto Kc = K.middleRows(c0, n);
    const auto Vc = V.middleRows(c0, n);
    auto Oc = out.middleRows(c0, n);
    // L_i = Σ_{r ≤ i in the chunk} log a_r (the delta rules: g, cumulative), in double; w_i the write weight.
    L.resize(n), wv.resize(n);
    double acc = 0;
    for (int i = 0; i < n; ++i) {
      const int t = c0 + i;
      acc += delta ? (kind == LinearKind::gated_delta ? double(in.log_decay[size_t(t)]) : 0.0) : log_a(kind, in, t);
      L[i] = acc;
      wv[i] = delta ? double(in.beta[size_t(t)]) : w_of(kind, in, t);
    }
    const bool decays = kind == LinearKind::decayed || kind == LinearKind::mamba2 || kind == LinearKind::gated_delta;
    decay.resize(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) decay(i, j) = float(std::min(L[i] - L[j], 0.0));
    decay = decay.exp();  // vectorised; the part above the diagonal is never read
    Eigen::ArrayXf eL(n), to_end(n);  // e^{L_i}: the state's share; e^{L_last − L_j}: a key's weight at the end
    for (int i = 0; i < n; ++i) eL[i] = float(std::exp(L[i])), to_end[i] = float(std::exp(L[n - 1] - L[i]));
    const float last = float(std::exp(L[n - 1]));
    blk.resize(n, n);
    blk.noalias() = Qc * Kc.transpose();
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        blk(i, j) = j > i ? 0.0f : decays ? float(double(blk(i, j)) * decay(i, j)) : blk(i, j);
    QS.resize(n, dv);
    if (!delta) {
      // o_i = Σ_{j ≤ i} e^{L_i − L_j}·w_j·(q_i·k_j)·v_j + e^{L_i}·S_prevᵀ·q_i; then the state after the chunk.
      if (kind == LinearKind::mamba2)
        for (int j = 0; j < n; ++j) blk.col(j) *= float(wv[j]);
      QS.noalias() = Qc * S;
      Oc.noalias() = blk * Vc;
      Oc += eL.matrix().asDiagonal() * QS;
      if (kind == LinearKind::linear_norm) {
        // The normaliser: z_prev·q_i plus the block's row sums (no decay in linear attention).
        const Vec zq = Qc * z;
        for (int i = 0; i < n; ++i) Oc.row(i) /= zq[i] + blk.row(i).sum();
        z += Kc.colwise().sum().transpose();
      }
      Kd = (to_end * wv.cast<float>()).matrix().asDiagonal() * Kc;
      S *= last;
      S.noalias() += Kd.transpose() * Vc;
    } else {
      // The WY form of the (gated) delta rule, as transformers' torch_chunk_gated_delta_rule computes it:
      // (I + Λ)·[U | W] = [β ⊙ V | β·e^{g} ⊙ K] with Λ = strictly lower(β_i·k_i·k_j·e^{g_i − g_j}), solved by
      // forward substitution (Eigen's blocked triangular solve; transformers inverts I + Λ row by row);
      // then v_new = U − W·S, o = (e^{g} ⊙ Q)·S + (QKᵀ ⊙ D)·v_new with D_ij = e^{g_i − g_j} (j ≤ i), and
      // S ← e^{g_last}·S + (e^{g_last − g} ⊙ K)ᵀ·v_new.
      Mat lam(n, n);
      lam.noalias() = Kc * Kc.transpose();
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < i; ++j) lam(i, j) = float(wv[i] * double(lam(i, j)) * decay(i, j));
      rhs.resize(n, dv + dk);
      rhs.leftCols(dv) = wv.cast<float>().matrix().asDiagonal() * Vc;
      rhs.rightCols(dk) = (wv.cast<float>() * eL).matrix().asDiagonal() * Kc;
      lam.triangularView<Eigen::UnitLower>().solveInPlace(rhs);
      auto v_new = rhs.leftCols(dv);
      v_new.noalias() -= rhs.rightCols(dk) * S;
      QS.noalias() = Qc * S;
      Oc.noalias() = blk * v_new;
      Oc += eL.matrix().asDiagonal() * QS;
      Kd = to_end.matrix().asDiagonal() * Kc;
      S *= last;
      S.noalias() += Kd.transpose() * v_new;
    }
  }
  if (kind == LinearKind::mamba2) out += in.d_skip * V;
  return {std::move(out), std::move(S)};
}

// Runs `one` for every head, the heads spread over the cores; the first error (in head order) is rethrown
// after the loop, naming its head.
template <class F>
std::vector<LinearHeadResult> each_head(LinearKind kind, const std::vector<LinearHeadInput>& heads, F one) {
  for (size_t h = 0; h < heads.size(); ++h) {
    try {
      validate_linear_head(kind, heads[h]);
    } catch (const InputError& e) {
      throw InputError("head " + std::to_string(h) + ": " + e.what());
    }
  }
  std::vector<LinearHeadResult> results(heads.size());  // `one` runs on validated input
  std::vector<std::exception_ptr> errors(heads.size());
  const int H = int(heads.size());
#pragma omp parallel for schedule(dynamic, 1) if (H > 1)
  for (int h = 0; h < H; ++h) {
    try {
      results[size_t(h)] = one(heads[size_t(h)]);
    } catch (...) {
      errors[size_t(h)] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

}  // namespace

LinearHeadResult linear_head_recurrent(LinearKind kind, const LinearHeadInput& in) {
  validate_linear_head(kind, in);
  return recurrent_of(kind, in);
}

LinearHeadResult linear_head_chunked(LinearKind kind, const LinearHeadInput& in, int chunk) {
  validate_linear_head(kind, in);
  if (chunk < 1) throw InputError("chunk = " + std::to_string(chunk) + ": a chunk holds at least 1 token");
  return chunked_of(kind, in, chunk);
}

std::vector<LinearHeadResult> linear_heads_recurrent(LinearKind kind, const std::vector<LinearHeadInput>& heads) {
  return each_head(kind, heads, [kind](const LinearHeadInput& in) { return recurrent_of(kind, in); });
}

std::vector<LinearHeadResult> linear_heads_chunked(LinearKind kind, const std::vector<LinearHeadInput>& heads,
                                                   int chunk) {
  if (chunk < 1) throw InputError("chunk = " + std::to_string(chunk) + ": a chunk holds at least 1 token");
  return each_head(kind, heads,
                   [kind, chunk](const LinearHeadInput& in) { return chunked_of(kind, in, chunk); });
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
