// The scene's seeded layer without a softmax (engine/include/attnscope/attention/linear_layer.h) and the
// kinds linear, retention, mamba2, deltanet and gated-deltanet of a Scene: for every kind the drawn matrix
// times the values is the recurrence's output, the chunked form on the same numbers agrees across several
// chunks, the gates are what the legend says (computed here again from X and the seeded gate weights), the
// layer is causal with G = H, its trace holds a state of fixed size and no KV cache; the scene rules (kind
// names, JSON, causal by nature) and the settings it refuses, each saying what is valid.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/linear_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/scene/scene_rules.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

constexpr AttentionKind linear_kinds[] = {AttentionKind::linear, AttentionKind::retention, AttentionKind::mamba2,
                                          AttentionKind::deltanet, AttentionKind::gated_deltanet};

// A sentence long enough (38 tokens) to span several chunks of 8.
const char* long_text =
    "The cat sat on the mat because it was tired, and the dog that had chased it all morning lay down by the door "
    "while the rain fell on the roof of the old house.";

Scene scene_of(AttentionKind kind) {
  Scene s;
  s.input.text = long_text;
  s.model.kind = kind;
  return s;
}

double relative_error(const Mat& a, const Mat& b) {
  return double((a - b).cwiseAbs().maxCoeff()) / std::max(1e-30, double(b.cwiseAbs().maxCoeff()));
}

}  // namespace

TEST_CASE("linear layer: every kind's matrix times V is its recurrence, and the chunked form agrees over several chunks") {
  for (AttentionKind kind : linear_kinds)
    for (bool normalize : {true, false}) {
      if (!normalize && kind != AttentionKind::linear) continue;
      CAPTURE(to_string(kind));
      CAPTURE(normalize);
      Scene s = scene_of(kind);
      s.model.linear_normalize = normalize;
      const Analysis a = analyse(s);
      const AttentionAnalysis& att = *a.attention;
      REQUIRE(att.linear);
      const int T = int(att.x.rows()), H = att.shape.heads, d = att.shape.head_dim();
      REQUIRE(T > 3 * 8);
      CHECK(att.shape.groups == H);
      CHECK(a.scene.model.causal);  // causal by nature
      CHECK(att.result.scores.empty());
      REQUIRE(int(att.result.probs.size()) == H);
      REQUIRE(int(att.linear_layer.state.size()) == H);
      for (int h = 0; h < H; ++h) {
        CAPTURE(h);
        const Mat& M = att.result.probs[size_t(h)];
        // Lower triangular: no token reads a later one.
        for (int t = 0; t < T; ++t)
          for (int u = t + 1; u < T; ++u) REQUIRE(M(t, u) == 0.0f);
        Mat mv = M * att.result.v[size_t(h)];
        if (kind == AttentionKind::mamba2) mv += att.linear_gates.d_skip[h] * att.result.v[size_t(h)];
        CHECK(relative_error(mv, att.result.head_out[size_t(h)]) <= 1e-5);
        const LinearHeadInput& in = att.linear_layer.inputs[size_t(h)];
        const LinearHeadResult chunked = linear_head_chunked(att.linear_layer.head_kind, in, 8);
        CHECK(relative_error(chunked.output, att.result.head_out[size_t(h)]) <= 1e-5);
        CHECK(relative_error(chunked.state, att.linear_layer.state[size_t(h)]) <= 1e-5);
        CHECK(att.linear_layer.state[size_t(h)].rows() == d);
        CHECK(att.linear_layer.state[size_t(h)].cols() == d);
        if (kind == AttentionKind::linear && normalize)
          for (int t = 0; t < T; ++t) CHECK(std::abs(M.row(t).sum() - 1.0f) <= 1e-5f);
      }
      // The output projection of the heads side by side.
      const Mat out = att.result.concat * att.weights.wo.transpose();
      CHECK(relative_error(out, att.result.output) <= 1e-6);
    }
}

TEST_CASE("linear layer: the gates are the legend's, computed again from X and the seeded gate weights") {
  const int H = 8;
  const auto softplus = [](double x) { return std::log1p(std::exp(x)); };
  for (AttentionKind kind : linear_kinds) {
    CAPTURE(to_string(kind));
    const Analysis a = analyse(scene_of(kind));
    const AttentionAnalysis& att = *a.attention;
    const LinearLayerResult& l = att.linear_layer;
    const LinearGates& g = att.linear_gates;
    const int T = int(att.x.rows()), d = att.shape.head_dim();
    REQUIRE(att.shape.heads == H);
    for (int h = 0; h < H; ++h) {
      const double gamma = linear_decay_schedule(h, H);
      for (int t = 0; t < T; ++t) {
        const double beta_in = double(att.x.row(t).dot(g.w_beta.row(h)));
        const double step = softplus(double(att.x.row(t).dot(g.w_step.row(h))) + double(g.step_bias[h]));
        switch (kind) {
          case AttentionKind::retention: CHECK(l.decay(h, t) == doctest::Approx(gamma).epsilon(1e-6)); break;
          case AttentionKind::mamba2:
            CHECK(l.step(h, t) == doctest::Approx(step).epsilon(1e-5));
            CHECK(l.decay(h, t) == doctest::Approx(std::pow(gamma, step)).epsilon(1e-5));
            break;
          case AttentionKind::deltanet:
          case AttentionKind::gated_deltanet:
            CHECK(l.beta(h, t) == doctest::Approx(1 / (1 + std::exp(-beta_in))).epsilon(1e-5));
            // q and k of unit length, q then scaled by 1/√d.
            CHECK(att.result.k[size_t(h)].row(t).norm() == doctest::Approx(1).epsilon(1e-5));
            CHECK(att.result.q[size_t(h)].row(t).norm() == doctest::Approx(1 / std::sqrt(double(d))).epsilon(1e-5));
            if (kind == AttentionKind::gated_deltanet)
              CHECK(l.decay(h, t) == doctest::Approx(std::pow(gamma, step)).epsilon(1e-5));
            break;
          default: break;
        }
      }
    }
  }
  // The schedule's ends: 0.5 for head 0, 1 − 2⁻⁵ for the last; one head: 0.5.
  CHECK(linear_decay_schedule(0, 8) == 0.5);
  CHECK(linear_decay_schedule(7, 8) == 1 - 1.0 / 32);
  CHECK(linear_decay_schedule(0, 1) == 0.5);
}

TEST_CASE("linear layer: retention with one decay for every head, and a decay of 1 is linear attention without φ") {
  Scene s = scene_of(AttentionKind::retention);
  s.model.decay = 1.0;
  s.model.scale_scores = false;
  const Analysis a = analyse(s);
  const AttentionAnalysis& att = *a.attention;
  for (int h = 0; h < att.shape.heads; ++h) {
    // M = tril(Q·Kᵀ) exactly when nothing decays.
    Mat expected = att.result.q[size_t(h)] * att.result.k[size_t(h)].transpose();
    expected = expected.triangularView<Eigen::Lower>().toDenseMatrix();
    check_close(att.result.probs[size_t(h)], expected, 1e-4, "retention γ = 1");
  }
}

TEST_CASE("linear layer: the trace keeps a state of fixed size instead of a cache") {
  for (AttentionKind kind : linear_kinds) {
    CAPTURE(to_string(kind));
    const Analysis a = analyse(scene_of(kind));
    const Trace& t = a.attention->trace;
    const int H = 8, d = 8, C = 64;
    CHECK(t.kv_bytes_per_token_fp32 == 0);
    CHECK(t.state_bytes_fp32 == int64_t(H) * d * d * 4);
    CHECK(t.state_bytes_fp16 == int64_t(H) * d * d * 2);
    bool state = false, matrix = false;
    for (const TraceStep& step : t.steps) {
      if (step.key == "state") state = step.shape == std::vector<int64_t>{H, d, d};
      if (step.key == "implicit_matrix") matrix = step.shape.size() == 3 && step.shape[1] == a.attention->x.rows();
      CHECK(step.key != "softmax");
    }
    CHECK(state);
    CHECK(matrix);
    // W_Q, W_K, W_V, W_O of C·H·d each, plus the gates' weights of the kind.
    CHECK(t.params.wq == int64_t(C) * H * d);
    const int64_t gates = kind == AttentionKind::deltanet         ? H * C
                          : kind == AttentionKind::gated_deltanet ? 2 * H * C + H
                          : kind == AttentionKind::mamba2         ? H * C + 2 * H
                                                                  : 0;
    CHECK(t.params.other == gates);
    // The same layer as MHA caches 2·H·d floats per token and grows with T.
    Scene mha = scene_of(AttentionKind::mha);
    CHECK(analyse(mha).attention->trace.kv_bytes_per_token_fp32 == 2 * H * d * 4);
  }
}

TEST_CASE("linear kinds: names, JSON, G = H and causal by nature") {
  CHECK(parse_attention_kind("gated-deltanet") == AttentionKind::gated_deltanet);
  CHECK(std::string(to_string(AttentionKind::mamba2)) == "mamba2");
  CHECK(contains(error_of([] { parse_attention_kind("mamba"); }), "mamba2, deltanet, gated-deltanet"));
  for (AttentionKind kind : linear_kinds) {
    CHECK(is_linear_kind(kind));
    Scene s = scene_of(kind);
    s.model.groups = 2;
    s.model.decay = kind == AttentionKind::retention ? 0.8 : 0;
    s.model.linear_normalize = false;
    const Scene n = normalise_scene(s);
    CHECK(n.model.groups == n.model.heads);
    CHECK(n.model.causal);
    const Scene back = scene_from_json(scene_to_json(s));
    CHECK(back.model.kind == kind);
    CHECK(back.model.decay == s.model.decay);
    CHECK_FALSE(back.model.linear_normalize);
  }
  for (AttentionKind kind : {AttentionKind::single, AttentionKind::mha, AttentionKind::gqa, AttentionKind::mla})
    CHECK_FALSE(is_linear_kind(kind));
}

TEST_CASE("linear kinds: settings a layer without a softmax has no use for are refused, saying what is valid") {
  auto refusal = [](const std::function<void(Scene&)>& edit) {
    Scene s = scene_of(AttentionKind::gated_deltanet);
    edit(s);
    return error_of([&] { analyse(s); });
  };
  CHECK(contains(refusal([](Scene& s) { s.model.window = 4; }), "no window or sink tokens"));
  CHECK(contains(refusal([](Scene& s) { s.model.sink_logits = true; }), "turn sink logits off"));
  CHECK(contains(refusal([](Scene& s) { s.model.differential = true; }), "choose single, mha, mqa or gqa"));
  CHECK(contains(refusal([](Scene& s) { s.model.positions = PositionScheme::rope; }), "choose positions absolute or nope"));
  CHECK(contains(refusal([](Scene& s) { s.relpos.mixed = true; }), "turn mixed mode off"));
  CHECK(contains(refusal([](Scene& s) { use_designed_heads(s.model, {"previous", "self"}); }),
                 "valid weight sources: converted, independent, loaded"));
  for (double bad : {-0.5, 1.5, double(NAN)}) {
    CAPTURE(bad);
    CHECK(contains(refusal([bad](Scene& s) {
                     s.model.kind = AttentionKind::retention;
                     s.model.decay = bad;
                   }),
                   "must be in (0, 1]"));
  }
  // The layer itself refuses K/V groups: every head keeps its own state.
  const AttentionShape shape{16, 4, 2};
  const Mat x = random_x(5, 16, 3);
  CHECK(contains(error_of([&] {
                   linear_layer(x, random_weights(shape, 1), random_linear_gates(16, 4, 1), LinearLayerSpec{}, shape);
                 }),
                 "every head with its own keys and values"));
}

TEST_CASE("linear kinds: the statistics describe where each row's weight goes, as for differential attention") {
  const Analysis a = analyse(scene_of(AttentionKind::deltanet));
  CHECK(signed_maps(*a.attention));
  CHECK(std::string(map_value_word(*a.attention)) == "DeltaNet weight");
  const HeadStats stats = attention_statistics(*a.attention, a.scene.model);
  REQUIRE(stats.entropy.size() == 8);
  for (double e : stats.entropy) CHECK(std::isfinite(e));
  CHECK(stats.drift_from_mha.empty());  // no pooled K/V to drift from
}
