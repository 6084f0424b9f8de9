// Attention without a softmax (engine/include/attnscope/attention/linear_attention.h): for every kind the
// recurrence, the chunked form at several chunk sizes and the explicit T×T matrix agree (output = M·V,
// + D·x for Mamba-2; the chunked form ends in the recurrence's state); each kind's defining property
// holds (linear_norm's rows sum to 1, a decay of 1 is plain linear attention, a gate of 1 is the plain
// delta rule, the delta rule overwrites where linear attention adds, Mamba-2 with a fast decay only sees
// itself); a two-token case by hand; and bad input is refused saying what is valid.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "attnscope/attention/linear_attention.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

constexpr LinearKind all_kinds[] = {LinearKind::linear, LinearKind::linear_norm, LinearKind::decayed,
                                    LinearKind::mamba2, LinearKind::delta,       LinearKind::gated_delta};

// Rows scaled to unit length, as Gated DeltaNet's L2-normalised q and k (the delta rule is stable then).
Mat unit_rows(Mat m) {
  for (Eigen::Index i = 0; i < m.rows(); ++i) m.row(i) /= m.row(i).norm();
  return m;
}

// A head's inputs for `kind`, T tokens, widths dk and dv, from `seed`.
LinearHeadInput random_head(LinearKind kind, int T, int dk, int dv, uint64_t seed) {
  LinearHeadInput in;
  const bool delta = kind == LinearKind::delta || kind == LinearKind::gated_delta;
  in.q = delta ? unit_rows(random_x(T, dk, seed)) : random_x(T, dk, seed);
  in.k = delta ? unit_rows(random_x(T, dk, seed + 1)) : random_x(T, dk, seed + 1);
  in.v = random_x(T, dv, seed + 2);
  Rng rng(seed + 3);
  for (int t = 0; t < T; ++t) {
    in.beta.push_back(rng.uniform(0.1f, 0.95f));
    in.dt.push_back(rng.uniform(0.05f, 0.8f));
  }
  if (kind == LinearKind::decayed) in.log_decay.assign(size_t(T), std::log(0.85f));
  if (kind == LinearKind::mamba2) in.log_decay.assign(size_t(T), -1.3f), in.d_skip = 0.7f;
  if (kind == LinearKind::gated_delta)
    for (int t = 0; t < T; ++t) in.log_decay.push_back(rng.uniform(-0.6f, -0.01f));
  return in;
}

const std::filesystem::path fixtures = std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/linear";

std::vector<float> npy_values(const std::filesystem::path& p) { return read_npy(p).data; }

Mat matrix_output(LinearKind kind, const LinearHeadInput& in) {
  Mat out = linear_head_matrix(kind, in) * in.v;
  if (kind == LinearKind::mamba2) out += in.d_skip * in.v;
  return out;
}

}  // namespace

TEST_CASE("linear attention: the recurrence, the chunked form and the explicit matrix agree for every kind") {
  for (const LinearKind kind : all_kinds) {
    const std::string name = linear_kind_name(kind);
    CAPTURE(name);
    CHECK(parse_linear_kind(name) == kind);
    for (const int T : {1, 7, 23}) {
      CAPTURE(T);
      const LinearHeadInput in = random_head(kind, T, 5, 4, 11 + uint64_t(T));
      const LinearHeadResult rec = linear_head_recurrent(kind, in);
      REQUIRE(rec.output.rows() == T);
      REQUIRE(rec.output.cols() == 4);
      CHECK(rec.state.rows() == 5);  // constant in T: d_k × d_v
      CHECK(rec.state.cols() == 4);
      check_close(matrix_output(kind, in), rec.output, 2e-5, name + ": M·V against the recurrence");
      for (const int chunk : {1, 3, 8, 64}) {
        const LinearHeadResult ch = linear_head_chunked(kind, in, chunk);
        check_close(ch.output, rec.output, 2e-5, name + ": chunked (" + std::to_string(chunk) + ") output");
        check_close(ch.state, rec.state, 2e-5, name + ": chunked (" + std::to_string(chunk) + ") final state");
      }
      const Mat M = linear_head_matrix(kind, in);
      for (int t = 0; t < T; ++t)
        for (int s = t + 1; s < T; ++s) CHECK(M(t, s) == 0.0f);  // causal: nothing from later tokens
    }
  }
}

// max |a − b| ≤ tol·max |b|: agreement relative to the output's scale (linear attention's outputs grow with T).
void check_relative(const Mat& a, const Mat& b, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  const double scale = b.cwiseAbs().maxCoeff(), diff = max_abs_diff(a, b).value;
  INFO("largest difference " << diff << " against the largest value " << scale);
  CHECK(scale > 0);
  CHECK(diff <= tol * scale);
}

// The recurrence written out plainly in double (linear_attention.h's legend), the reference at long T where
// the explicit matrix is too large: output [T, d_v] and the final state.
std::pair<MatD, MatD> double_recurrence(LinearKind kind, const LinearHeadInput& in) {
  const Eigen::Index T = in.q.rows(), dk = in.q.cols(), dv = in.v.cols();
  const bool fm = kind == LinearKind::linear || kind == LinearKind::linear_norm;
  auto phi = [fm](double x) { return !fm ? x : x > 0 ? x + 1 : std::exp(x); };
  Eigen::MatrixXd S = Eigen::MatrixXd::Zero(dk, dv);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(dk);
  MatD out(T, dv);
  for (Eigen::Index t = 0; t < T; ++t) {
    const Eigen::VectorXd q = in.q.row(t).cast<double>().transpose().unaryExpr(phi);
    const Eigen::VectorXd k = in.k.row(t).cast<double>().transpose().unaryExpr(phi);
    const Eigen::VectorXd v = in.v.row(t).cast<double>().transpose();
    const size_t i = size_t(t);
    switch (kind) {
      case LinearKind::linear:
      case LinearKind::linear_norm: S += k * v.transpose(); break;
      case LinearKind::decayed: S = std::exp(double(in.log_decay[i])) * S + k * v.transpose(); break;
      case LinearKind::mamba2:
        S = std::exp(double(in.dt[i]) * in.log_decay[i]) * S + double(in.dt[i]) * k * v.transpose();
        break;
      case LinearKind::delta:
      case LinearKind::gated_delta: {
        if (kind == LinearKind::gated_delta) S *= std::exp(double(in.log_decay[i]));
        const Eigen::VectorXd delta = double(in.beta[i]) * (v - S.transpose() * k);
        S += k * delta.transpose();
        break;
      }
    }
    out.row(t) = (S.transpose() * q).transpose();
    if (kind == LinearKind::linear_norm) z += k, out.row(t) /= z.dot(q);
    if (kind == LinearKind::mamba2) out.row(t) += in.d_skip * v.transpose();
  }
  return {out, S};
}

TEST_CASE("linear attention: at T = 4096 the float32 recurrence and chunked form stay within 1e-5 of double") {
  // 4096 tokens through a float32 state, and 64 chunks of 64 in float32 products, against the recurrence
  // in double: rounding must not build up over a long input.
  for (const LinearKind kind : all_kinds) {
    const std::string name = linear_kind_name(kind);
    CAPTURE(name);
    const LinearHeadInput in = random_head(kind, 4096, 32, 32, 41);
    const auto [out, state] = double_recurrence(kind, in);
    const LinearHeadResult rec = linear_head_recurrent(kind, in), ch = linear_head_chunked(kind, in, 64);
    check_relative(rec.output, out.cast<float>(), 1e-5, name + ": recurrence output at T = 4096");
    check_relative(rec.state, state.cast<float>(), 1e-5, name + ": recurrence final state at T = 4096");
    check_relative(ch.output, out.cast<float>(), 1e-5, name + ": chunked output at T = 4096");
    check_relative(ch.state, state.cast<float>(), 1e-5, name + ": chunked final state at T = 4096");
  }
  // And both against the explicit matrix over eight chunks.
  for (const LinearKind kind : all_kinds) {
    const std::string name = linear_kind_name(kind);
    CAPTURE(name);
    const LinearHeadInput in = random_head(kind, 512, 16, 8, 42);
    const Mat mv = matrix_output(kind, in);
    check_relative(linear_head_recurrent(kind, in).output, mv, 1e-5, name + ": recurrence against M·V at T = 512");
    check_relative(linear_head_chunked(kind, in, 64).output, mv, 1e-5, name + ": chunked against M·V at T = 512");
  }
}

TEST_CASE("linear attention: a layer's heads at once give each head's own result; a bad head is named") {
  for (const LinearKind kind : all_kinds) {
    const std::string name = linear_kind_name(kind);
    CAPTURE(name);
    std::vector<LinearHeadInput> heads;
    for (int h = 0; h < 3; ++h) heads.push_back(random_head(kind, 70, 6, 5, 50 + uint64_t(h)));
    const std::vector<LinearHeadResult> rec = linear_heads_recurrent(kind, heads);
    const std::vector<LinearHeadResult> ch = linear_heads_chunked(kind, heads, 16);
    REQUIRE(rec.size() == 3);
    REQUIRE(ch.size() == 3);
    for (size_t h = 0; h < 3; ++h) {
      const LinearHeadResult one = linear_head_recurrent(kind, heads[h]);
      check_close(rec[h].output, one.output, 0.0, name + ": head " + std::to_string(h) + " recurrence");
      check_close(rec[h].state, one.state, 0.0, name + ": head " + std::to_string(h) + " state");
      check_close(ch[h].output, linear_head_chunked(kind, heads[h], 16).output, 1e-6,
                  name + ": head " + std::to_string(h) + " chunked");
    }
  }
  std::vector<LinearHeadInput> heads;
  for (int h = 0; h < 3; ++h) heads.push_back(random_head(LinearKind::gated_delta, 8, 4, 4, 60 + uint64_t(h)));
  heads[2].beta.pop_back();
  CHECK(contains(error_of([&] { (void)linear_heads_recurrent(LinearKind::gated_delta, heads); }),
                 "head 2: gated_delta: beta has 7 values; it needs one per token (8)"));
  CHECK(contains(error_of([&] { (void)linear_heads_chunked(LinearKind::gated_delta, heads, 4); }), "head 2: "));
  CHECK(contains(error_of([&] { (void)linear_heads_chunked(LinearKind::linear, {}, 0); }), "at least 1 token"));
  CHECK(linear_heads_recurrent(LinearKind::linear, {}).empty());
}

TEST_CASE("linear attention: each kind's defining property") {
  const int T = 9;
  // linear_norm: φ > 0, so the rows are weights ≥ 0 that sum to 1; plain linear's do not.
  const LinearHeadInput lin = random_head(LinearKind::linear, T, 4, 3, 5);
  const Mat norm = linear_head_matrix(LinearKind::linear_norm, lin), raw = linear_head_matrix(LinearKind::linear, lin);
  for (int t = 0; t < T; ++t) {
    CHECK(norm.row(t).sum() == doctest::Approx(1.0).epsilon(1e-6));
    CHECK(norm.row(t).minCoeff() >= 0.0f);
    CHECK(raw.row(t).sum() > 1.5f);  // φ(q)·φ(k) ≥ … summed over t + 1 keys: not a distribution
  }
  // decayed with γ = 1 is q·k on the lower triangle; γ < 1 multiplies each entry by γ^(t−s).
  LinearHeadInput dec = random_head(LinearKind::decayed, T, 4, 3, 6);
  const Mat with_decay = linear_head_matrix(LinearKind::decayed, dec);
  dec.log_decay.assign(size_t(T), 0.0f);
  const Mat no_decay = linear_head_matrix(LinearKind::decayed, dec);
  for (int t = 0; t < T; ++t)
    for (int s = 0; s <= t; ++s) {
      CHECK(no_decay(t, s) == doctest::Approx(dec.q.row(t).dot(dec.k.row(s))).epsilon(1e-5));
      CHECK(with_decay(t, s) == doctest::Approx(no_decay(t, s) * std::pow(0.85, t - s)).epsilon(1e-4));
    }
  // A gate of 1 (g = 0) is the plain delta rule.
  LinearHeadInput gated = random_head(LinearKind::gated_delta, T, 4, 3, 7);
  gated.log_decay.assign(size_t(T), 0.0f);
  check_close(linear_head_matrix(LinearKind::gated_delta, gated), linear_head_matrix(LinearKind::delta, gated), 1e-6,
              "gated delta with α = 1 against the delta rule");
  // The delta rule overwrites: the same key written twice (β = 1) recalls the second value only, where
  // linear attention (no decay) recalls their sum.
  LinearHeadInput twice;
  twice.q = Mat::Zero(3, 2), twice.k = Mat::Zero(3, 2), twice.v = Mat::Zero(3, 1);
  twice.k.row(0) << 1, 0;
  twice.k.row(1) << 1, 0;
  twice.k.row(2) << 0, 1;
  twice.q.row(2) << 1, 0;  // the third token asks for the first key
  twice.v << 2, 5, 9;
  twice.beta = {1, 1, 1};
  CHECK(linear_head_recurrent(LinearKind::delta, twice).output(2, 0) == doctest::Approx(5));
  twice.log_decay.assign(3, 0.0f);
  CHECK(linear_head_recurrent(LinearKind::decayed, twice).output(2, 0) == doctest::Approx(7));
  // Mamba-2 with a very fast decay (A·Δ ≪ 0) forgets at once: M is diagonal, Δ_t·C_t·B_t.
  LinearHeadInput fast = random_head(LinearKind::mamba2, T, 4, 3, 8);
  fast.log_decay.assign(size_t(T), -200.0f);
  const Mat m = linear_head_matrix(LinearKind::mamba2, fast);
  for (int t = 0; t < T; ++t) {
    CHECK(m(t, t) == doctest::Approx(fast.dt[size_t(t)] * fast.q.row(t).dot(fast.k.row(t))).epsilon(1e-5));
    for (int s = 0; s < t; ++s) CHECK(std::abs(m(t, s)) < 1e-20f);
  }
}

TEST_CASE("linear attention: two tokens of the gated delta rule by hand") {
  // d_k = d_v = 1. S₀ = β₀k₀v₀; S₁ = α₁(1 − β₁k₁²)S₀ + β₁k₁v₁; o_t = q_t·S_t.
  LinearHeadInput in;
  in.q = Mat(2, 1), in.k = Mat(2, 1), in.v = Mat(2, 1);
  in.q << 0.5f, -1.5f;
  in.k << 0.8f, 0.6f;
  in.v << 3.0f, -2.0f;
  in.beta = {0.5f, 0.25f};
  in.log_decay = {-0.1f, std::log(0.5f)};
  const double s0 = 0.5 * 0.8 * 3.0;  // S starts at 0, so α₀ has nothing to scale
  const double s1 = 0.5 * (1 - 0.25 * 0.36) * s0 + 0.25 * 0.6 * -2.0;
  const LinearHeadResult r = linear_head_recurrent(LinearKind::gated_delta, in);
  CHECK(r.output(0, 0) == doctest::Approx(0.5 * s0));
  CHECK(r.output(1, 0) == doctest::Approx(-1.5 * s1));
  CHECK(r.state(0, 0) == doctest::Approx(s1));
  const Mat M = linear_head_matrix(LinearKind::gated_delta, in);
  CHECK(M(1, 0) == doctest::Approx(-1.5 * 0.5 * (1 - 0.25 * 0.36) * 0.5 * 0.8));
  CHECK(M(1, 1) == doctest::Approx(-1.5 * 0.25 * 0.6));
}

TEST_CASE("linear attention: transformers' reference loops — Qwen3-Next's gated delta rule and Mamba-2's step") {
  {
    const auto d = fixtures / "gated_delta";
    LinearHeadInput in;
    in.q = read_npy_matrix(d / "q.npy"), in.k = read_npy_matrix(d / "k.npy"), in.v = read_npy_matrix(d / "v.npy");
    in.beta = npy_values(d / "beta.npy"), in.log_decay = npy_values(d / "g.npy");
    const LinearHeadResult r = linear_head_recurrent(LinearKind::gated_delta, in);
    check_close(r.output, read_npy_matrix(d / "out.npy"), 1e-5, "gated delta output");
    check_close(r.state, read_npy_matrix(d / "state.npy"), 1e-5, "gated delta state [d_k, d_v]");
    check_close(matrix_output(LinearKind::gated_delta, in), read_npy_matrix(d / "out.npy"), 1e-5, "gated delta M·V");
    check_close(linear_head_chunked(LinearKind::gated_delta, in, 8).output, read_npy_matrix(d / "out.npy"), 1e-5,
                "gated delta chunked");
  }
  {
    const auto d = fixtures / "mamba2";
    LinearHeadInput in;
    in.q = read_npy_matrix(d / "C.npy"), in.k = read_npy_matrix(d / "B.npy"), in.v = read_npy_matrix(d / "x.npy");
    in.dt = npy_values(d / "dt.npy");
    in.log_decay.assign(in.dt.size(), npy_values(d / "A.npy").at(0));
    in.d_skip = npy_values(d / "D.npy").at(0);
    const LinearHeadResult r = linear_head_recurrent(LinearKind::mamba2, in);
    check_close(r.output, read_npy_matrix(d / "out.npy"), 1e-5, "Mamba-2 output");
    check_close(r.state, read_npy_matrix(d / "state.npy"), 1e-5, "Mamba-2 state [N, P]");
    check_close(matrix_output(LinearKind::mamba2, in), read_npy_matrix(d / "out.npy"), 1e-5, "Mamba-2 M·x + D·x");
    check_close(linear_head_chunked(LinearKind::mamba2, in, 4).output, read_npy_matrix(d / "out.npy"), 1e-5,
                "Mamba-2 chunked");
  }
}

TEST_CASE("linear attention: bad input is refused saying what is valid") {
  const LinearHeadInput good = random_head(LinearKind::mamba2, 4, 3, 2, 9);
  auto refused = [](LinearKind kind, const LinearHeadInput& in) {
    return error_of([&] { (void)linear_head_recurrent(kind, in); });
  };
  CHECK(contains(error_of([] { (void)parse_linear_kind("mamba"); }), "valid: linear, linear_norm, decayed, mamba2"));
  LinearHeadInput bad = good;
  bad.v = Mat::Zero(3, 2);
  CHECK(contains(refused(LinearKind::mamba2, bad), "one row per token"));
  bad = good;
  bad.k = Mat::Zero(4, 2);
  CHECK(contains(refused(LinearKind::mamba2, bad), "must share their width"));
  bad = good;
  bad.q(1, 1) = NAN;
  CHECK(contains(refused(LinearKind::mamba2, bad), "NaN or infinite"));
  bad = good;
  bad.dt[2] = 0;
  CHECK(contains(refused(LinearKind::mamba2, bad), "must be > 0"));
  bad = good;
  bad.log_decay[0] = 0.5f;
  CHECK(contains(refused(LinearKind::mamba2, bad), "A must be < 0"));
  bad = good;
  bad.dt.pop_back();
  CHECK(contains(refused(LinearKind::mamba2, bad), "needs one per token (4)"));
  LinearHeadInput d = random_head(LinearKind::gated_delta, 4, 3, 2, 10);
  d.beta.clear();
  CHECK(contains(refused(LinearKind::gated_delta, d), "beta has 0 values"));
  d = random_head(LinearKind::gated_delta, 4, 3, 2, 10);
  d.log_decay[1] = 0.2f;
  CHECK(contains(refused(LinearKind::gated_delta, d), "at most 1"));
  CHECK(contains(error_of([&] { (void)linear_head_chunked(LinearKind::linear, good, 0); }), "at least 1 token"));
  LinearHeadInput empty;
  CHECK(contains(refused(LinearKind::linear, empty), "T must be at least 1"));
}
