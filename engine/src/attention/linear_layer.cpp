// linear_layer.cpp — the seeded layer without a softmax (linear_layer.h): project, make the gates, run
// every head as it runs (the recurrence) and as its explicit matrix, then the output projection.
#include "attnscope/attention/linear_layer.h"

#include <cmath>
#include <string>

#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"

namespace attnscope {
namespace {

double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// y = x·Wᵀ + b  [T, out]
Mat project(const Mat& x, const Mat& w, const Vec& b) {
  Mat y = x * w.transpose();
  if (b.size()) y.rowwise() += b.transpose();
  return y;
}

Mat xavier(int out, int in, Rng& rng) {
  const float bound = std::sqrt(6.0f / float(in + out));
  Mat w(out, in);
  for (int i = 0; i < out; ++i)
    for (int j = 0; j < in; ++j) w(i, j) = rng.uniform(-bound, bound);
  return w;
}

// Each row scaled to unit L2 norm (a zero row stays zero), as the delta rules read q and k.
void l2_normalise_rows(Mat& m) {
  for (Eigen::Index t = 0; t < m.rows(); ++t) {
    const double n = std::sqrt(m.row(t).cast<double>().squaredNorm());
    if (n > 0) m.row(t) = (m.row(t).cast<double>() / n).cast<float>();
  }
}

}  // namespace

const char* to_string(LinearLayerKind kind) {
  switch (kind) {
    case LinearLayerKind::linear: return "linear";
    case LinearLayerKind::retention: return "retention";
    case LinearLayerKind::mamba2: return "mamba2";
    case LinearLayerKind::deltanet: return "deltanet";
    case LinearLayerKind::gated_deltanet: return "gated-deltanet";
  }
  return "?";
}

LinearKind linear_kind_of(const LinearLayerSpec& spec) {
  switch (spec.kind) {
    case LinearLayerKind::linear: return spec.normalize ? LinearKind::linear_norm : LinearKind::linear;
    case LinearLayerKind::retention: return LinearKind::decayed;
    case LinearLayerKind::mamba2: return LinearKind::mamba2;
    case LinearLayerKind::deltanet: return LinearKind::delta;
    case LinearLayerKind::gated_deltanet: return LinearKind::gated_delta;
  }
  return LinearKind::linear;
}

double linear_decay_schedule(int head, int heads) {
  const double spread = heads > 1 ? 4.0 * head / (heads - 1) : 0.0;
  return 1.0 - std::exp2(-1.0 - spread);
}

LinearGates random_linear_gates(int d_model, int heads, uint64_t seed) {
  require(d_model >= 1 && heads >= 1, "the gates need d_model >= 1 and at least one head");
  LinearGates g;
  Rng rb(seed * 8 + 5), rs(seed * 8 + 6);
  g.w_beta = xavier(heads, d_model, rb);
  g.w_step = xavier(heads, d_model, rs);
  // softplus(b) = 1: b = log(e − 1).
  g.step_bias = Vec::Constant(heads, float(std::log(std::exp(1.0) - 1.0)));
  g.d_skip = Vec::Ones(heads);
  return g;
}

LinearLayerResult linear_layer(const Mat& x, const AttentionWeights& w, const LinearGates& gates,
                               const LinearLayerSpec& spec, const AttentionShape& shape,
                               const std::atomic<bool>* cancel) {
  validate_shape(shape);
  validate_weights(w, shape);
  const int T = int(x.rows()), C = shape.d_model, H = shape.heads;
  require(shape.groups == H, "attention without a softmax runs every head with its own keys and values (G = H = " +
                                 std::to_string(H) + "), got G = " + std::to_string(shape.groups));
  require(x.cols() == C, "the input has " + std::to_string(x.cols()) + " columns but d_model is " + std::to_string(C));
  require(T >= 1, "attention without a softmax needs at least one token");
  require(gates.w_beta.rows() == H && gates.w_beta.cols() == C && gates.w_step.rows() == H &&
              gates.w_step.cols() == C,
          "the gates' weights are not [H, C] = [" + std::to_string(H) + ", " + std::to_string(C) + "]");
  const Mat Q = project(x, w.wq, w.bq), K = project(x, w.wk, w.bk), V = project(x, w.wv, w.bv);
  const Mat beta_in = x * gates.w_beta.transpose(), step_in = x * gates.w_step.transpose();  // [T, H]
  LinearLayerResult r = linear_layer_heads(Q, K, V, beta_in, step_in, gates, spec, H, cancel);
  r.attention.output = project(r.attention.concat, w.wo, w.bo);
  return r;
}

LinearLayerResult linear_layer_heads(const Mat& Q, const Mat& K, const Mat& V, const Mat& beta_in, const Mat& step_in,
                                     const LinearGates& gates, const LinearLayerSpec& spec, int H,
                                     const std::atomic<bool>* cancel) {
  const int T = int(Q.rows());
  require(H >= 1 && Q.cols() % H == 0 && K.rows() == T && V.rows() == T && K.cols() == Q.cols() &&
              V.cols() == Q.cols() && beta_in.rows() == T && beta_in.cols() == H && step_in.rows() == T &&
              step_in.cols() == H,
          "the heads' inputs are not Q, K, V [T, H·d] and the gates' inputs [T, H] for H = " + std::to_string(H));
  require(gates.step_bias.size() == H && gates.d_skip.size() == H && (gates.a_log.size() == 0 || gates.a_log.size() == H),
          "the gates' vectors are not [H] = [" + std::to_string(H) + "]");
  require(spec.kind != LinearLayerKind::retention || spec.decay == 0 || (spec.decay > 0 && spec.decay <= 1),
          "the retention decay gamma must be in (0, 1] (0 = the per-head schedule from 0.5 to 0.97), got " +
              std::to_string(spec.decay));
  const int d = int(Q.cols()) / H;
  const LinearKind kind = linear_kind_of(spec);
  const bool delta = spec.kind == LinearLayerKind::deltanet || spec.kind == LinearLayerKind::gated_deltanet;
  const bool scaled = spec.scale_q && (delta || spec.kind == LinearLayerKind::retention);
  const double q_scale = scaled ? 1.0 / std::sqrt(double(d)) : 1.0;

  LinearLayerResult r;
  r.head_kind = kind;
  AttentionResult& a = r.attention;
  if (delta) r.beta.resize(H, T);
  if (spec.kind == LinearLayerKind::mamba2) r.step.resize(H, T);
  if (spec.kind != LinearLayerKind::linear && spec.kind != LinearLayerKind::deltanet) r.decay.resize(H, T);
  a.concat.resize(T, H * d);
  for (int h = 0; h < H; ++h) {
    check_cancel(cancel);
    LinearHeadInput in;
    in.q = Q.middleCols(h * d, d);
    in.k = K.middleCols(h * d, d);
    in.v = V.middleCols(h * d, d);
    if (delta) l2_normalise_rows(in.q), l2_normalise_rows(in.k);
    if (q_scale != 1.0) in.q *= float(q_scale);
    const double gamma = spec.kind == LinearLayerKind::retention && spec.decay > 0 ? spec.decay
                                                                                    : linear_decay_schedule(h, H);
    // A = −exp(A_log_h) where the gates carry a trained A_log, else log γ_h (exp(A_log) = −log γ_h)
    const double log_decay = gates.a_log.size() ? -std::exp(double(gates.a_log[h])) : std::log(gamma);
    for (int t = 0; t < T; ++t) {
      const double step = softplus(double(step_in(t, h)) + double(gates.step_bias[h]));
      switch (spec.kind) {
        case LinearLayerKind::linear: break;
        case LinearLayerKind::retention:
          in.log_decay.push_back(float(std::log(gamma)));
          r.decay(h, t) = float(gamma);
          break;
        case LinearLayerKind::mamba2: {
          const float A = float(log_decay);  // < 0
          in.log_decay.push_back(A);
          in.dt.push_back(float(step));
          r.step(h, t) = float(step);
          r.decay(h, t) = float(std::exp(double(float(step)) * double(A)));
          break;
        }
        case LinearLayerKind::deltanet:
        case LinearLayerKind::gated_deltanet: {
          const float b = float(sigmoid(double(beta_in(t, h))));
          in.beta.push_back(b);
          r.beta(h, t) = b;
          if (spec.kind == LinearLayerKind::gated_deltanet) {
            const double g = log_decay * step;  // −exp(A_log)·softplus(…)
            in.log_decay.push_back(float(g));
            r.decay(h, t) = float(std::exp(double(float(g))));
          }
          break;
        }
      }
    }
    if (spec.kind == LinearLayerKind::mamba2) in.d_skip = gates.d_skip[h];
    LinearHeadResult run = linear_head_recurrent(kind, in);
    a.probs.push_back(linear_head_matrix(kind, in));
    a.concat.middleCols(h * d, d) = run.output;
    a.head_out.push_back(std::move(run.output));
    r.state.push_back(std::move(run.state));
    a.q.push_back(in.q), a.k.push_back(in.k), a.v.push_back(in.v);
    r.inputs.push_back(std::move(in));
  }
  return r;
}

}  // namespace attnscope
