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

// The recurrence's block of state columns: two AVX-512 registers of float across each row of the state.
constexpr int kRecurrentColumns = 32;

// φ(m) in float32 with Eigen's vectorised exp (a scalar std::exp per entry was a quarter of linear attention's
// time; select() would call it per entry, hence the plain loop).
Mat phi_of(const Mat& m) {
  Mat r(m.rows(), m.cols());
  Eigen::Map<Eigen::ArrayXf> e(r.data(), r.size());
  e = Eigen::Map<const Eigen::ArrayXf>(m.data(), m.size()).min(0.0f).exp();
  const float* x = m.data();
  for (Eigen::Index i = 0; i < r.size(); ++i) e[i] = x[i] > 0.0f ? x[i] + 1.0f : e[i];
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

namespace {

// The recurrence and the chunked form on input already validated.
LinearHeadResult recurrent_of(LinearKind kind, const LinearHeadInput& in) {
  // The state in float32, as a model keeps it: twice the values per vector register of double, and within
  // 1.3e-6 (relative) of a double recurrence at T = 4096 (the tests check 1e-5). The decays and the
  // normaliser are computed in double and rounded once.
  using R = float;
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
  // β_t·(v_tj − α_t·S_{t−1}[:, j]·k_t)), and o_t[j] = S_t[:, j]·q_t. So a block of 32 columns runs through all
  // the tokens while it stays in the L1 cache (d_k rows of 32 floats: 16 KB at d_k = 128), each row one
  // pair of vector registers: the update, the read and the recall are row operations across the 32
  // columns, summed over i in four independent partial sums (no horizontal sums, no waiting on one add).
  using Row = Eigen::Array<R, kRecurrentColumns, 1>;
  std::vector<Row, Eigen::aligned_allocator<Row>> block(static_cast<size_t>(dk));
  Mat S(dk, dv), out(T, dv);  // row-major: token t's outputs contiguous
  for (Eigen::Index j0 = 0; j0 < dv; j0 += kRecurrentColumns) {
    const Eigen::Index nb = std::min<Eigen::Index>(kRecurrentColumns, dv - j0);  // the rest of c stays 0
    for (Row& r : block) r.setZero();
    Row c = Row::Zero();
    for (int t = 0; t < T; ++t) {
      const R* k = K.data() + Eigen::Index(t) * dk;
      const R* q = Q.data() + Eigen::Index(t) * dk;
      const R at = R(a[size_t(t)]), wt = R(w[size_t(t)]);
      for (Eigen::Index j = 0; j < nb; ++j) c[j] = in.v(t, j0 + j);
      // Four named partial sums, i unrolled by four: the compiler keeps them in registers.
      Eigen::Index i = 0;
      if (delta) {
        Row r0 = Row::Zero(), r1 = Row::Zero(), r2 = Row::Zero(), r3 = Row::Zero();  // S_{t−1}ᵀ·k_t
        for (; i + 4 <= dk; i += 4) {
          r0 += block[size_t(i)] * k[i], r1 += block[size_t(i + 1)] * k[i + 1];
          r2 += block[size_t(i + 2)] * k[i + 2], r3 += block[size_t(i + 3)] * k[i + 3];
        }
        for (; i < dk; ++i) r0 += block[size_t(i)] * k[i];
        c = wt * (c - at * ((r0 + r1) + (r2 + r3)));
      } else {
        c *= wt;
      }
      auto update = [&](Eigen::Index r, Row& acc) {  // row r ← a·row + k_r·c;  acc += q_r·row
        Row& row = block[size_t(r)];
        row = at * row + k[r] * c;
        acc += q[r] * row;
      };
      Row o0 = Row::Zero(), o1 = Row::Zero(), o2 = Row::Zero(), o3 = Row::Zero();
      for (i = 0; i + 4 <= dk; i += 4) update(i, o0), update(i + 1, o1), update(i + 2, o2), update(i + 3, o3);
      for (; i < dk; ++i) update(i, o0);
      const Row sum = (o0 + o1) + (o2 + o3);
      const R scale = R(1.0 / den[size_t(t)]);
      for (Eigen::Index j = 0; j < nb; ++j) out(t, j0 + j) = sum[j] * scale;
      c.setZero();
    }
    for (Eigen::Index i = 0; i < dk; ++i) S.row(i).segment(j0, nb) = block[size_t(i)].head(nb).transpose().matrix();
  }
  if (kind == LinearKind::mamba2) out += in.d_skip * in.v;
  return {std::move(out), std::move(S)};
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
