// Multi-head latent attention (latent_attention.h): the absorbed form equals the naive one, the fast path
// its plain-loop reference, the rotary part behaves as RoPE, bad ranks are refused, and analyse() of a
// scene with kind mla fills the result, the cache tensors and the trace.
#include <doctest/doctest.h>

#include <cmath>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/latent_attention.h"
#include "attnscope/core/rng.h"
#include "attnscope/scene/scene_json.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

struct Case {
  LatentShape shape;
  LatentRope rope;
  bool causal;
};

const Case cases[] = {
    {{64, 8, 16, 0, 8}, {10000, false}, false},  // the scene's defaults
    {{48, 4, 20, 24, 6}, {500, true}, true},    // query latent, interleaved pairs, causal
    {{32, 2, 32, 32, 0}, {10000, false}, true},  // full ranks, no rotary part
    {{36, 3, 1, 5, 12}, {10000, true}, false},   // rank 1, d_R = d_N
};

}  // namespace

TEST_CASE("latent attention: the absorbed form gives the naive form's scores, probabilities and output") {
  for (const Case& c : cases) {
    const LatentWeights w = random_latent_weights(c.shape, 5);
    const Mat x = random_x(11, c.shape.d_model, 3);
    const AttentionOptions options{c.causal, true};
    const AttentionResult naive = latent_attention(x, w, c.shape, c.rope, options);
    const AttentionResult absorbed = latent_attention_absorbed(x, w, c.shape, c.rope, options);
    check_close3(absorbed.scores, naive.scores, 1e-5, "scores");
    check_close3(absorbed.probs, naive.probs, 1e-5, "probs");
    check_close(absorbed.output, naive.output, 1e-5, "output");
    // The absorbed form reads only the cache: one key [c_KV, k_R] and the latent as the value.
    REQUIRE(absorbed.k.size() == 1);
    CHECK(absorbed.k[0].cols() == c.shape.kv_rank + c.shape.rope_dim);
    CHECK((absorbed.v[0] == naive.c_kv));
    CHECK(absorbed.q[0].cols() == c.shape.kv_rank + c.shape.rope_dim);
    CHECK(absorbed.concat.cols() == c.shape.heads * c.shape.kv_rank);
  }
}

TEST_CASE("latent attention: the fast path equals the plain-loop reference") {
  for (const Case& c : cases) {
    const LatentWeights w = random_latent_weights(c.shape, 8);
    const Mat x = random_x(9, c.shape.d_model, 4);
    const AttentionOptions options{c.causal, true};
    const AttentionResult fast = latent_attention(x, w, c.shape, c.rope, options);
    const AttentionResult ref = latent_attention_reference(x, w, c.shape, c.rope, options);
    check_close3(fast.q, ref.q, 1e-5, "q");
    check_close3(fast.k, ref.k, 1e-5, "k");
    check_close3(fast.v, ref.v, 1e-5, "v");
    check_close3(fast.scores, ref.scores, 1e-5, "scores");
    check_close3(fast.probs, ref.probs, 1e-6, "probs");
    check_close(fast.output, ref.output, 1e-5, "output");
    check_close(fast.c_kv, ref.c_kv, 1e-6, "c_kv");
    if (c.shape.q_rank > 0) check_close(fast.c_q, ref.c_q, 1e-6, "c_q");
  }
}

TEST_CASE("latent attention: both forms match the reference across blocks of query rows (T not a multiple)") {
  const LatentShape s{32, 4, 12, 16, 4};
  const int T = attention_row_block + 23;
  const LatentWeights w = random_latent_weights(s, 4);
  const Mat x = random_x(T, 32, 6);
  for (bool causal : {false, true}) {
    const AttentionResult ref = latent_attention_reference(x, w, s, {500, true}, {causal, true});
    for (const AttentionResult& r : {latent_attention(x, w, s, {500, true}, {causal, true}),
                                     latent_attention_absorbed(x, w, s, {500, true}, {causal, true})}) {
      check_close3(r.probs, ref.probs, 1e-6, "probs");
      check_close(r.output, ref.output, 1e-5, "output");
      check_close(r.c_kv, ref.c_kv, 1e-6, "c_kv");
      check_close(r.k_rope, ref.k_rope, 1e-5, "k_rope");
    }
  }
}

TEST_CASE("latent attention: shapes, the shared rotary key, rows summing to 1 and the causal triangle") {
  const LatentShape s{48, 4, 20, 24, 6};
  const int T = 7, dN = 12;
  const AttentionResult r = latent_attention(random_x(T, 48, 1), random_latent_weights(s, 2), s, {}, {true, true});
  REQUIRE(r.q.size() == 4);
  REQUIRE(r.k.size() == 4);
  CHECK(r.q[0].rows() == T);
  CHECK(r.q[0].cols() == dN + 6);
  CHECK(r.v[3].cols() == dN);
  CHECK(r.c_kv.rows() == T);
  CHECK(r.c_kv.cols() == 20);
  CHECK(r.c_q.cols() == 24);
  CHECK(r.k_rope.cols() == 6);
  CHECK(r.concat.cols() == 4 * dN);
  CHECK(r.output.cols() == 48);
  for (int h = 0; h < 4; ++h) {
    CHECK((r.k[h].rightCols(6) == r.k_rope));  // every head's key ends in the same rotary key
    for (int i = 0; i < T; ++i) {
      CHECK(r.probs[h].row(i).sum() == doctest::Approx(1).epsilon(1e-6));
      for (int j = i + 1; j < T; ++j) CHECK(r.probs[h](i, j) == 0.0f);
    }
  }
  // RMSNorm with weight 1: every latent row has mean square 1 (up to eps).
  for (int t = 0; t < T; ++t) CHECK(r.c_kv.row(t).squaredNorm() / 20 == doctest::Approx(1).epsilon(1e-4));
}

TEST_CASE("rotate positions: position 0 unchanged, norms kept, a dot product depends only on the distance") {
  for (bool interleaved : {false, true}) {
    const LatentRope rope{100, interleaved};
    Mat q = random_x(1, 8, 7), k = random_x(1, 8, 8);
    Mat qs = q.replicate(12, 1), ks = k.replicate(12, 1);  // the same q and k at positions 0 … 11
    const Mat before = qs;
    rotate_positions(qs, rope);
    rotate_positions(ks, rope);
    CHECK((qs.row(0) == before.row(0)));
    for (int t = 0; t < 12; ++t) CHECK(qs.row(t).norm() == doctest::Approx(q.norm()).epsilon(1e-5));
    // q at i, k at j: the score is a function of i − j (RoPE's relative property).
    CHECK(qs.row(5).dot(ks.row(2)) == doctest::Approx(qs.row(9).dot(ks.row(6))).epsilon(1e-4));
    CHECK(qs.row(3).dot(ks.row(3)) == doctest::Approx(q.row(0).dot(k.row(0))).epsilon(1e-4));
  }
  // The two layouts pair different dimensions: they agree only where nothing turns.
  Mat a = random_x(3, 8, 9), b = a;
  rotate_positions(a, {10000, false});
  rotate_positions(b, {10000, true});
  CHECK((a.row(0) == b.row(0)));
  CHECK(max_abs_diff(a, b).value > 1e-3);
}

TEST_CASE("latent attention: bad ranks and rotary widths are refused saying what is valid") {
  CHECK(contains(error_of([] { validate_latent_shape({64, 8, 65, 0, 8}); }), "kv_rank) must be between 1 and the width d_model = 64"));
  CHECK(contains(error_of([] { validate_latent_shape({64, 8, 0, 0, 8}); }), "kv_rank"));
  CHECK(contains(error_of([] { validate_latent_shape({64, 8, 16, 80, 8}); }), "q_rank) must be 0 (no query compression) or between 1"));
  CHECK(contains(error_of([] { validate_latent_shape({64, 8, 16, 0, 3}); }), "must be an even number from 0 to the head width d_model/heads = 8"));
  CHECK(contains(error_of([] { validate_latent_shape({64, 8, 16, 0, 10}); }), "even number from 0 to the head width"));
  CHECK(contains(error_of([] { validate_latent_shape({64, 7, 16, 0, 2}); }), "heads must divide d_model"));
  CHECK(error_of([] { validate_latent_shape({64, 8, 64, 64, 8}); }).empty());
  LatentWeights w = random_latent_weights({32, 4, 8, 0, 4}, 1);
  w.wuk.resize(32, 9);
  CHECK(contains(error_of([&] { latent_attention(random_x(3, 32, 1), w, {32, 4, 8, 0, 4}, {}, {}); }), "W_UK has shape [32, 9]"));
}

TEST_CASE("analyse: kind mla fills the result, the latent and the rotary key, and traces every tensor") {
  Scene s;
  s.input.text = "The cat sat on the mat.";  // 7 tokens
  s.model.kind = AttentionKind::mla;
  s.model.d_model = 32, s.model.heads = 4, s.model.kv_rank = 10, s.model.q_rank = 12, s.model.rope_dim = 4;
  s.model.causal = true;
  const Analysis a = analyse(s);
  const AttentionAnalysis& att = *a.attention;
  CHECK(a.scene.model.groups == 4);  // H K/V groups of one head each
  CHECK(att.shape.groups == 4);
  CHECK(att.result.c_kv.rows() == 7);
  CHECK(att.result.c_kv.cols() == 10);
  CHECK(att.result.c_q.cols() == 12);
  CHECK(att.result.k_rope.cols() == 4);
  CHECK(att.result.q[0].cols() == 8 + 4);
  CHECK((att.shared_latent == att.result.c_kv));  // what the Heads view draws above the heads
  CHECK((att.shared_rope_key == att.result.k_rope));
  // The seeded layer is the engine's function of its seeded weights.
  const AttentionResult direct = latent_attention(att.x, random_latent_weights({32, 4, 10, 12, 4}, 42), {32, 4, 10, 12, 4},
                                                  {}, {true, true});
  check_close3(att.result.probs, direct.probs, 0, "probs");
  // Trace: the cache tensors and the absorbed query with their live shapes; the cache is r_kv + d_R.
  auto shape_of = [&](const std::string& key) {
    for (const TraceStep& st : att.trace.steps)
      if (st.key == key) return st.shape;
    return std::vector<int64_t>{};
  };
  CHECK(shape_of("latent_compress_q") == std::vector<int64_t>{7, 12});
  CHECK(shape_of("latent_compress_kv") == std::vector<int64_t>{7, 10});
  CHECK(shape_of("latent_rope_key") == std::vector<int64_t>{7, 4});
  CHECK(shape_of("absorb_query") == std::vector<int64_t>{4, 7, 14});
  CHECK(shape_of("scores") == std::vector<int64_t>{4, 7, 7});
  CHECK(att.trace.kv_bytes_per_token_fp32 == (10 + 4) * 4);
  CHECK(att.trace.params.wk == 32 * (10 + 4) + 10);  // W_DKV, W_KR, the latent's norm (as a checkpoint's counts)
  CHECK(att.trace.params.wv == 10 * 4 * (8 + 8));     // W_UK, W_UV
  CHECK(att.trace.params.total() == 32 * 12 + 12 + 12 * 4 * 12 + 32 * 14 + 10 + 10 * 4 * 16 + 4 * 8 * 32);
  // Head statistics work as for any softmax heads.
  const HeadStats stats = attention_statistics(att, a.scene.model);
  CHECK(stats.entropy.size() == 4);
  CHECK(stats.drift_from_mha.empty());
}

TEST_CASE("analyse: kind mla refuses what it cannot be, by name") {
  Scene s;
  s.model.kind = AttentionKind::mla;
  s.model.kv_rank = 65;  // d_model 64
  CHECK(contains(error_of([&] { analyse(s); }), "kv_rank) must be between 1 and the width d_model = 64"));
  s.model.kv_rank = 16;
  s.model.rope_dim = 9;
  CHECK(contains(error_of([&] { analyse(s); }), "rope_dim) must be an even number"));
  s.model.rope_dim = 8;
  s.model.differential = true;
  CHECK(contains(error_of([&] { analyse(s); }), "differential attention works with the kinds single, mha, mqa and gqa, not mla"));
  s.model.differential = false;
  s.model.weights = WeightSource::loaded;
  s.model.weights_dir = ".";
  CHECK(contains(error_of([&] { analyse(s); }), "multi-head latent attention (kind mla) uses its own seeded weights"));
  s.model.weights = WeightSource::independent;
  CHECK(error_of([&] { analyse(s); }).empty());
}

TEST_CASE("scene json: the MLA and differential settings round-trip") {
  Scene s;
  s.model.kind = AttentionKind::mla;
  s.model.kv_rank = 24, s.model.q_rank = 32, s.model.rope_dim = 6, s.model.differential = true;
  const nlohmann::json j = scene_to_json(s);
  CHECK(j["model"]["kind"] == "mla");
  CHECK(j["model"]["kv_rank"] == 24);
  CHECK(scene_from_json(j) == s);
  CHECK(parse_attention_kind("mla") == AttentionKind::mla);
  CHECK(contains(error_of([] { parse_attention_kind("mlx"); }), "valid: single, mha, mqa, gqa, mla"));
}
