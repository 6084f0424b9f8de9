// The variants after GQA together: MLA and differential attention under a sliding window with sink tokens
// (fast paths against their plain-loop references and against the explicit mask), MLA's rotary part under
// the scene's RoPE base, layout and scaling, the combinations refused by name, and the position schemes'
// embeddings (absolute adds the sinusoids, every other scheme leaves them out).
#include <doctest/doctest.h>

#include <cmath>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/differential_attention.h"
#include "attnscope/attention/latent_attention.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/text/embeddings.h"
#include "attnscope/text/tokenizer.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

// Every probability outside the window (and its sink keys) is exactly 0, every one inside is positive.
void check_window(const Tensor3& probs, int window, int sinks) {
  for (const Mat& p : probs)
    for (int i = 0; i < p.rows(); ++i)
      for (int j = 0; j < p.cols(); ++j) {
        const bool visible = j <= i && (j > i - window || j < sinks);
        CAPTURE(i);
        CAPTURE(j);
        if (visible) CHECK(p(i, j) != 0.0f);
        else CHECK(p(i, j) == 0.0f);
      }
}

Scene sentence_scene() {
  Scene s;
  s.input.text = "The cat sat on the mat because it was tired, so it slept.";
  s.model.d_model = 64;
  s.model.heads = 4;
  s.model.groups = 4;
  s.model.causal = true;
  return s;
}

}  // namespace

TEST_CASE("variants: MLA under a window with sink tokens, fast paths (both forms) against the reference and the mask") {
  const LatentShape s{32, 4, 12, 16, 4};
  const LatentWeights w = random_latent_weights(s, 4);
  const int T = attention_row_block + 9;  // two blocks of rows
  const Mat x = random_x(T, 32, 6);
  AttentionOptions o{true, true};
  o.window = 5;
  o.sinks = 2;
  const LatentRope rope{500, true};
  const AttentionResult ref = latent_attention_reference(x, w, s, rope, o);
  check_window(ref.probs, 5, 2);
  for (const AttentionResult& r : {latent_attention(x, w, s, rope, o), latent_attention_absorbed(x, w, s, rope, o)}) {
    check_close3(r.probs, ref.probs, 1e-6, "probs");
    check_close(r.output, ref.output, 1e-5, "output");
  }
}

TEST_CASE("variants: differential attention under a window with sink tokens, fast path against the reference") {
  const AttentionShape shape{32, 4, 2};
  const AttentionWeights w = random_weights(shape, 3);
  const DifferentialParams p = random_differential_params(shape, 3);
  const Mat x = random_x(23, 32, 2);
  AttentionOptions o{false, true};  // the window implies the causal mask
  o.window = 4;
  o.sinks = 1;
  const AttentionResult fast = differential_attention(x, w, p, shape, o);
  const AttentionResult ref = differential_attention_reference(x, w, p, shape, o);
  check_window(ref.probs_1, 4, 1);
  check_window(ref.probs_2, 4, 1);
  check_close3(fast.probs_1, ref.probs_1, 1e-6, "probs_1");
  check_close3(fast.probs_2, ref.probs_2, 1e-6, "probs_2");
  check_close3(fast.probs, ref.probs, 1e-6, "probs");
  check_close(fast.output, ref.output, 1e-5, "output");
}

TEST_CASE("variants: MLA's rotary part takes the scene's RoPE scaling (YaRN) and base, as positions.h computes them") {
  // The rotary key of token t is RoPE(x_t·W_KRᵀ) with the scaled frequencies and YaRN's attention factor.
  const LatentShape s{32, 4, 8, 0, 8};
  const LatentWeights w = random_latent_weights(s, 1);
  const Mat x = random_x(40, 32, 1);
  LatentRope rope{1000, false, RopeScaling::yarn, 4, 16};
  const AttentionResult r = latent_attention(x, w, s, rope, {true, true});
  Mat k = x * w.wkr.transpose();  // [T, d_R] before the rotation
  const std::vector<double> inv = rope_scaled_inv_freq(rope.params(), 8);
  const double factor = rope_attention_factor(rope.params());
  CHECK(factor > 1.0);
  for (int t = 0; t < 40; ++t)
    for (int i = 0; i < 4; ++i) {
      const double a = t * inv[size_t(i)], xa = k(t, i), xb = k(t, i + 4);
      CHECK(r.k_rope(t, i) == doctest::Approx(factor * (xa * std::cos(a) - xb * std::sin(a))).epsilon(1e-5));
      CHECK(r.k_rope(t, i + 4) == doctest::Approx(factor * (xb * std::cos(a) + xa * std::sin(a))).epsilon(1e-5));
    }
  // The scene passes its settings through: a YaRN scene differs from the plain one only in the rotary part.
  Scene scene = sentence_scene();
  scene.model.kind = AttentionKind::mla;
  const Analysis plain = analyse(scene);
  scene.model.rope_scaling = RopeScaling::yarn, scene.model.rope_factor = 4, scene.model.rope_original_context = 8;
  const Analysis yarn = analyse(scene);
  CHECK((plain.attention->result.c_kv == yarn.attention->result.c_kv));
  CHECK_FALSE((plain.attention->result.k_rope == yarn.attention->result.k_rope));
  CHECK(yarn.attention->positions.head_dim == scene.model.rope_dim);
}

TEST_CASE("variants: a window on an MLA or differential scene masks every head; refused combinations name the rule") {
  Scene s = sentence_scene();
  s.model.window = 3;
  s.model.sinks = 1;
  s.model.kind = AttentionKind::mla;
  const Analysis mla = analyse(s);
  check_window(mla.attention->result.probs, 3, 1);
  s.model.kind = AttentionKind::mha;
  s.model.differential = true;
  const Analysis diff = analyse(s);
  check_window(diff.attention->result.probs_1, 3, 1);
  // Learned sink logits and score-side positions stay with the grouped kinds.
  Scene bad = s;
  bad.model.sink_logits = true;
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("learned sink logits"), InputError);
  bad = s;
  bad.model.positions = PositionScheme::alibi;
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("absolute positions or none"), InputError);
  bad = s;
  bad.model.differential = false;
  bad.model.kind = AttentionKind::mla;
  bad.model.positions = PositionScheme::relpos;
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("decoupled rotary part"), InputError);
  bad.model.positions = PositionScheme::rope;
  bad.model.rope_scaling = RopeScaling::yarn;
  bad.model.rope_factor = 0.5;
  CHECK_THROWS_AS(analyse(bad), InputError);
}

TEST_CASE("variants: absolute positions add the sinusoids to the embeddings; NoPE, RoPE and ALiBi leave them out") {
  Scene s = sentence_scene();
  const std::vector<Token> tokens = tokenize(s.input.text);
  const int T = int(tokens.size());
  const Mat with = embed_tokens(tokens, 64, s.model.seed, true);
  const Mat without = embed_tokens(tokens, 64, s.model.seed, false);
  check_close(Mat(with - without), sinusoidal_positions(T, 64), 1e-6, "sinusoids");
  CHECK(s.model.positions == PositionScheme::absolute);  // the default, as SPEC's embeddings
  CHECK((analyse(s).attention->x == with));
  for (PositionScheme p : {PositionScheme::nope, PositionScheme::rope, PositionScheme::alibi}) {
    s.model.positions = p;
    CHECK((analyse(s).attention->x == without));
  }
}
