// Differential attention (differential_attention.h): the fast path against its plain-loop reference, λ and
// λ_init, the signed map's rows, K/V sharing across a group, refusals; analyse() of a differential scene,
// its head statistics, and the colour-scale rule for signed maps in exports.
#include <doctest/doctest.h>

#include <cmath>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/differential_attention.h"
#include "attnscope/core/rng.h"
#include "attnscope/figure/compare.h"
#include "attnscope/figure/export.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

Scene differential_scene(AttentionKind kind, int heads, int groups) {
  Scene s;
  s.input.text = "The cat sat on the mat because it was tired.";
  s.model.kind = kind;
  s.model.heads = heads, s.model.groups = groups, s.model.d_model = 32;
  s.model.causal = true;
  s.model.differential = true;
  return s;
}

}  // namespace

TEST_CASE("differential attention: the fast path equals the plain-loop reference for MHA, GQA and MQA") {
  for (const AttentionShape& shape : {AttentionShape{32, 4, 4}, AttentionShape{48, 6, 2}, AttentionShape{16, 2, 1}})
    for (bool causal : {false, true}) {
      const AttentionWeights w = random_weights(shape, 3);
      DifferentialParams p = random_differential_params(shape, 4);
      p.norm = Vec::LinSpaced(shape.head_dim(), 0.5f, 1.5f);  // a weight that is not all ones
      const Mat x = random_x(10, shape.d_model, 5);
      const AttentionResult fast = differential_attention(x, w, p, shape, {causal, true});
      const AttentionResult ref = differential_attention_reference(x, w, p, shape, {causal, true});
      CHECK(fast.lambda == doctest::Approx(ref.lambda).epsilon(1e-12));
      check_close3(fast.q, ref.q, 1e-5, "q");
      check_close3(fast.k, ref.k, 1e-5, "k");
      check_close3(fast.v, ref.v, 1e-5, "v");
      check_close3(fast.scores, ref.scores, 1e-5, "scores");
      check_close3(fast.probs, ref.probs, 1e-6, "A");
      check_close3(fast.probs_1, ref.probs_1, 1e-6, "probs_1");
      check_close3(fast.probs_2, ref.probs_2, 1e-6, "probs_2");
      check_close3(fast.head_out, ref.head_out, 1e-5, "head_out");
      check_close(fast.output, ref.output, 1e-5, "output");
    }
}

TEST_CASE("differential attention: the fast path matches the reference across blocks of query rows") {
  const AttentionShape shape{16, 2, 1};
  const int T = attention_row_block + 9;
  const AttentionWeights w = random_weights(shape, 7);
  const DifferentialParams p = random_differential_params(shape, 7);
  const Mat x = random_x(T, 16, 8);
  const AttentionResult fast = differential_attention(x, w, p, shape, {true, true});
  const AttentionResult ref = differential_attention_reference(x, w, p, shape, {true, true});
  check_close3(fast.probs, ref.probs, 1e-6, "A");
  check_close3(fast.scores, ref.scores, 1e-5, "scores");
  check_close(fast.output, ref.output, 1e-5, "output");
}

TEST_CASE("differential attention: λ_init, λ from its vectors, and A's rows summing to 1 − λ") {
  CHECK(differential_lambda_init(0) == doctest::Approx(0.2));
  CHECK(differential_lambda_init(1) == doctest::Approx(0.8 - 0.6 * std::exp(-0.3)));
  CHECK(differential_lambda_init(40) == doctest::Approx(0.8).epsilon(1e-5));
  const AttentionShape shape{32, 4, 2};
  DifferentialParams p = random_differential_params(shape, 9);
  REQUIRE(p.lambda_q1.size() == 4);  // d = C / (2H)
  CHECK(p.norm.size() == 8);
  // Vectors of zeros: exp(0) − exp(0) cancels and λ = λ_init.
  for (Vec* v : {&p.lambda_q1, &p.lambda_k1, &p.lambda_q2, &p.lambda_k2}) v->setZero();
  CHECK(differential_lambda(p) == doctest::Approx(0.2));
  p.lambda_q1.setConstant(0.5f), p.lambda_k1.setConstant(0.5f);  // λ_q1·λ_k1 = 1
  CHECK(differential_lambda(p) == doctest::Approx(std::exp(1.0) - 1 + 0.2));
  const AttentionResult r = differential_attention(random_x(6, 32, 2), random_weights(shape, 1), p, shape, {true, true});
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 6; ++i) {
      CHECK(r.probs_1[h].row(i).sum() == doctest::Approx(1).epsilon(1e-6));
      CHECK(r.probs[h].row(i).sum() == doctest::Approx(1 - r.lambda).epsilon(1e-5));
      for (int j = i + 1; j < 6; ++j) CHECK(r.probs[h](i, j) == 0.0f);
    }
  CHECK(r.probs[0].minCoeff() < 0);  // λ > 1 here: the map subtracts more than it adds somewhere
}

TEST_CASE("differential attention: heads of one K/V group read the same two key halves and value") {
  const AttentionShape shape{48, 6, 2};
  const Mat x = random_x(5, 48, 6);
  const AttentionResult r = differential_attention(x, random_weights(shape, 2), random_differential_params(shape, 2), shape, {});
  REQUIRE(r.q.size() == 12);  // 2H halves of d = 4
  REQUIRE(r.k.size() == 4);   // 2G
  REQUIRE(r.v.size() == 2);
  CHECK(r.v[0].cols() == 8);  // 2d
  CHECK(r.scores.size() == 12);
  // head 4 is in group 1 (heads 3, 4, 5): its second map is softmax(Q[9]·K[3]ᵀ/√d).
  Mat s = r.q[9] * r.k[3].transpose() / 2.0f;
  softmax_rows(s);
  check_close(r.probs_2[4], s, 1e-6, "probs_2 of head 4");
}

TEST_CASE("differential attention: shapes it cannot split are refused saying what is valid") {
  CHECK(contains(error_of([] { validate_differential_shape({12, 4, 4}); }),
                 "d_model / heads must be even: 12 / 4 = 3 (choose d_model a multiple of 2 x heads)"));
  Scene s = differential_scene(AttentionKind::mha, 4, 4);
  s.model.d_model = 12;
  CHECK(contains(error_of([&] { analyse(s); }), "d_model / heads must be even"));
  s = differential_scene(AttentionKind::mha, 4, 4);
  s.model.weights = WeightSource::designed;
  s.model.designed = {"previous", "next", "self", "first"};
  CHECK(contains(error_of([&] { analyse(s); }), "differential attention cannot use designed heads"));
}

TEST_CASE("analyse: a differential GQA scene keeps both maps, λ, a trace of them and finite head statistics") {
  const Scene s = differential_scene(AttentionKind::gqa, 4, 2);
  const Analysis a = analyse(s);
  const AttentionAnalysis& att = *a.attention;
  const int T = int(att.x.rows());
  CHECK(att.result.probs.size() == 4);
  CHECK(att.result.probs_1.size() == 4);
  CHECK(att.result.lambda == doctest::Approx(differential_lambda(att.differential)));
  bool saw_lambda = false, saw_map = false;
  for (const TraceStep& st : att.trace.steps) {
    saw_lambda |= st.key == "diff_lambda" && contains(st.formula, "λ_init = 0.2");
    saw_map |= st.key == "diff_map" && st.shape == std::vector<int64_t>{4, T, T};
  }
  CHECK(saw_lambda);
  CHECK(saw_map);
  CHECK(att.trace.params.other == 6 * 4);  // four λ vectors of d = 4 and a norm of 2d
  // Statistics of the signed maps: those of |A| per row, so finite and within their ranges.
  Tensor3 mha;
  const HeadStats stats = attention_statistics(att, a.scene.model, nullptr, &mha);
  for (int h = 0; h < 4; ++h) {
    CHECK(std::isfinite(stats.entropy[size_t(h)]));
    CHECK(stats.normalised_entropy[size_t(h)] >= 0);
    CHECK(stats.normalised_entropy[size_t(h)] <= 1 + 1e-9);
    CHECK(std::isfinite(stats.attention_sink[size_t(h)]));
  }
  // The MHA base it drifted from is differential too (converted weights, G = H).
  REQUIRE(stats.drift_from_mha.size() == 4);
  REQUIRE(mha.size() == 4);
  CHECK(mha[0].minCoeff() < 0.5f);
  for (double d : stats.drift_from_mha) CHECK(std::isfinite(d));
  const Tensor3 dist = weight_distribution(att.result.probs);
  CHECK(dist[1].row(3).sum() == doctest::Approx(1).epsilon(1e-5));
  CHECK(dist[1].minCoeff() >= 0);
}

TEST_CASE("export: differential maps on the diverging colormap over a range symmetric about 0; fixed 0-1 refused") {
  const Analysis a = analyse(differential_scene(AttentionKind::mha, 4, 4));
  ExportRequest r;
  r.colormap = Colormap::viridis;  // asked for, but a signed map is drawn diverging
  const FigureSpec f = export_figure(a, r);
  REQUIRE(!f.colorbars.empty());
  CHECK(f.colorbars[0].colormap == Colormap::diverging);
  CHECK(f.colorbars[0].range.lo == -f.colorbars[0].range.hi);
  CHECK(f.colorbars[0].range.lo < 0);
  CHECK(contains(export_caption(a, r), "λ="));
  r.color_scale.mode = ScaleMode::fixed;
  CHECK(contains(error_of([&] { validate_export(a, r); }), "differential attention's map A = P1 - lambda*P2 is signed"));
  r.color_scale.mode = ScaleMode::per_head;
  CHECK(error_of([&] { validate_export(a, r); }).empty());
  r.scores = true;
  r.color_scale.mode = ScaleMode::shared;
  CHECK(contains(error_of([&] { validate_export(a, r); }), "two score maps per head"));
  // Ordinary heads keep fixed 0–1.
  Scene plain = differential_scene(AttentionKind::mha, 4, 4);
  plain.model.differential = false;
  ExportRequest fixed;
  fixed.color_scale.mode = ScaleMode::fixed;
  CHECK(error_of([&] { validate_export(analyse(plain), fixed); }).empty());
}

TEST_CASE("compare A/B: a differential side drifts by its weight distribution, a finite JS in [0, ln 2]") {
  Scene plain = differential_scene(AttentionKind::mha, 4, 4);
  plain.model.differential = false;
  const Analysis a = analyse(plain), b = analyse(differential_scene(AttentionKind::mha, 4, 4));
  const AbComparison cmp = compare_analyses(a, b, {});
  REQUIRE(cmp.drift.size() == 4);
  for (double d : cmp.drift) {
    CHECK(std::isfinite(d));
    CHECK(d >= 0);
    CHECK(d <= std::log(2.0) + 1e-9);
  }
  CHECK(compare_analyses(b, b, {}).drift[0] == doctest::Approx(0).epsilon(1e-9));
}
