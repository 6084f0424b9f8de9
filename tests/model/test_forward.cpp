// Tests of the forward pass: against the PyTorch references of every fixture (attentions to 1e-5,
// logits to 1e-4 relative), the fast pass against the plain-loop reference, the layer detail, the
// SPEC invariants (rows sum to 1, causal zeros), the K/V conversion, the input limits and cancelling.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::check_flat;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::model_fixture;

namespace {

void check_same_result(const ForwardResult& a, const ForwardResult& b, double att_tol, double logit_tol,
                       const std::string& what) {
  REQUIRE(a.attentions.size() == b.attentions.size());
  check_flat(a.attentions.data(), b.attentions, att_tol, false, what + " attentions");
  REQUIRE(a.logits.size() == b.logits.size());
  const std::vector<float> logits(b.logits.data(), b.logits.data() + b.logits.size());
  check_flat(a.logits.data(), logits, logit_tol, true, what + " logits");
}

}  // namespace

TEST_CASE("model forward: every fixture matches the PyTorch reference (attentions 1e-5, logits 1e-4 relative)") {
  for (const std::string& name : test::checkpoint_fixtures()) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const auto ids = test::fixture_ids(name);
    const auto attentions = test::fixture_reference(name, "attentions");
    const auto logits = test::fixture_reference(name, "logits");
    const int T = int(ids.size());
    REQUIRE(attentions.shape == std::vector<int64_t>{m->config.layers, m->config.heads, T, T});
    REQUIRE(logits.shape == std::vector<int64_t>{T, m->config.vocab});
    for (const bool fast : {true, false}) {
      const ForwardResult r = fast ? forward(*m, ids) : forward_reference(*m, ids);
      const std::string which = fast ? "fast" : "reference";
      check_flat(r.attentions.data(), attentions.values, 1e-5, false, which + " attentions");
      check_flat(r.logits.data(), logits.values, 1e-4, true, which + " logits");
    }
  }
}

TEST_CASE("model forward: the fast pass equals the plain-loop reference, layer detail included") {
  for (const std::string& name : test::checkpoint_fixtures()) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const auto ids = test::fixture_ids(name);
    ForwardOptions options;
    options.detail_layer = m->config.layers - 1;
    const ForwardResult fast = forward(*m, ids, options), ref = forward_reference(*m, ids, options);
    // float32 sums over T keys against double ones: the rounding grows with T (40 in phi3_mha_long_f32).
    const double att_tol = 1e-6 * std::max(1.0, double(ids.size()) / 12);
    check_same_result(fast, ref, att_tol, 1e-5, name);
    REQUIRE(fast.detail.has_value());
    REQUIRE(ref.detail.has_value());
    const LayerDetail &a = *fast.detail, &b = *ref.detail;
    test::check_close(a.input, b.input, 1e-5, "input");
    test::check_close3(a.q, b.q, 1e-5, "q");
    test::check_close3(a.k, b.k, 1e-5, "k");
    test::check_close3(a.v, b.v, 1e-5, "v");
    test::check_close3(a.scores, b.scores, 1e-4, "scores");
    test::check_close3(a.probs, b.probs, att_tol, "probs");
    test::check_close3(a.head_out, b.head_out, 1e-5, "head_out");
    test::check_close(a.concat, b.concat, 1e-5, "concat");
    test::check_close(a.output, b.output, 1e-5, "output");
  }
}

TEST_CASE("model forward: the last layer's q (after RoPE), k, v and output match PyTorch") {
  for (const std::string& name : test::checkpoint_fixtures()) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    ForwardOptions options;
    options.detail_layer = m->config.layers - 1;
    const ForwardResult r = forward(*m, test::fixture_ids(name), options);
    auto flat = [](const Tensor3& t) {
      std::vector<float> v;
      for (const Mat& m : t) v.insert(v.end(), m.data(), m.data() + m.size());
      return v;
    };
    check_flat(flat(r.detail->q).data(), test::fixture_reference(name, "detail.q").values, 1e-4, true, "q");
    check_flat(flat(r.detail->k).data(), test::fixture_reference(name, "detail.k").values, 1e-4, true, "k");
    check_flat(flat(r.detail->v).data(), test::fixture_reference(name, "detail.v").values, 1e-4, true, "v");
    check_flat(r.detail->output.data(), test::fixture_reference(name, "detail.output").values, 1e-4, true, "output");
  }
}

TEST_CASE("model forward: rows sum to 1, the causal upper triangle is exactly 0, the top-5 is sorted") {
  const auto m = model::open(model_fixture("qwen2_gqa"));
  const ForwardResult r = forward(*m, test::fixture_ids("qwen2_gqa"));
  for (int l = 0; l < r.layers; ++l)
    for (int h = 0; h < r.heads; ++h) {
      const auto p = r.attention(l, h);
      for (int i = 0; i < r.tokens; ++i) {
        CHECK(std::abs(p.row(i).sum() - 1.0f) < 1e-5);
        for (int j = i + 1; j < r.tokens; ++j) REQUIRE(p(i, j) == 0.0f);
      }
    }
  REQUIRE(r.top.size() == size_t(r.tokens));
  for (int t = 0; t < r.tokens; ++t) {
    const auto& top = r.top[size_t(t)];
    REQUIRE(top.size() == 5);
    Eigen::Index best;
    r.logits.row(t).maxCoeff(&best);
    CHECK(top[0].id == int32_t(best));
    const double denom = (r.logits.row(t).cast<double>().array() - double(r.logits(t, best))).exp().sum();
    CHECK(std::abs(top[0].probability - 1.0 / denom) < 1e-6);
    for (size_t i = 1; i < top.size(); ++i) CHECK(top[i].probability <= top[i - 1].probability);
  }
}

TEST_CASE("model forward: converting to the model's own G is the identity, and MQA shares one K per layer") {
  const auto m = model::open(model_fixture("mistral_mha_f32"));  // H = G = 2
  const auto ids = test::fixture_ids("mistral_mha_f32");
  ForwardOptions options;
  options.detail_layer = 0;
  const ForwardResult base = forward(*m, ids, options);
  const ForwardResult same = forward(*convert_kv_heads(*m, 2), ids, options);
  CHECK(base.attentions == same.attentions);
  CHECK(base.logits == same.logits);
  const auto mqa = convert_kv_heads(*m, 1);
  const ForwardResult pooled = forward(*mqa, ids, options);
  CHECK(pooled.kv_heads == 1);
  REQUIRE(pooled.detail->k.size() == 1);
  check_same_result(pooled, forward_reference(*mqa, ids, options), 1e-6, 1e-5, "MQA fast vs reference");
  // The pooled K equals the mean of the two original K heads (both before RoPE and after, since RoPE is
  // linear and the same for every head).
  const Mat mean_k = (base.detail->k[0] + base.detail->k[1]) / 2;
  test::check_close(pooled.detail->k[0], mean_k, 1e-5, "pooled k");
}

TEST_CASE("model forward: inputs beyond the model's context or attnscope's limits are refused") {
  const auto m = model::open(model_fixture("mistral_mha_f32"));  // 32 positions, sliding window 16
  CHECK(contains(error_of([&] { (void)forward(*m, std::vector<int32_t>{}); }), "the input has no tokens"));
  CHECK(contains(error_of([&] { (void)forward(*m, std::vector<int32_t>{1, 64, 2}); }),
                 "token id 64 at position 1 is outside the vocabulary (0 to 63)"));
  CHECK(contains(error_of([&] { (void)forward_reference(*m, std::vector<int32_t>{-1}); }), "token id -1"));
  const auto g = model::open(model_fixture("gpt2_prefix_f32"));  // n_positions 32
  CHECK(contains(error_of([&] { (void)forward(*g, std::vector<int32_t>(33, 1)); }),
                 "33 tokens, more than this model's 32 positions (max_position_embeddings)"));
  CHECK_NOTHROW((void)forward(*g, std::vector<int32_t>(32, 1)));
  // attnscope's own limits, on a config that claims a long context.
  ModelConfig long_context = m->config;
  long_context.max_positions = 1 << 20;
  long_context.sliding_window = 0;
  CHECK(contains(error_of([&] { check_forward_input(long_context, std::vector<int32_t>(2049, 1)); }),
                 "2049 tokens; attnscope's limit is 2048"));
  long_context.layers = 200;
  CHECK(contains(error_of([&] { check_forward_input(long_context, std::vector<int32_t>(2048, 1)); }),
                 "exceed attnscope's limit"));
}

TEST_CASE("model forward: the fixtures match PyTorch on further inputs, past the windows and where RoPE scalings switch") {
  // SmolLM3 and Gemma: inputs longer and shorter than the windows; the RoPE fixtures: past
  // max_position_embeddings (dynamic) or original_max_position_embeddings (longrope), and longer ones.
  const std::vector<std::string> with_more{"smollm3_nope_bf16",         "gemma2_softcap_f32",
                                           "gemma3_local_global_bf16",  "llama32_1b_llama3rope_bf16",
                                           "llama_dynamic_f32",         "qwen3_yarn_bf16",
                                           "phi35_longrope_bf16",       "phi4mini_partial_longrope_bf16",
                                           "gemma3_linear_global_bf16"};
  for (const std::string& name : with_more) {
    const auto m = model::open(model_fixture(name));
    const auto more = test::fixture_more_ids(name);
    REQUIRE(!more.empty());
    for (size_t n = 0; n < more.size(); ++n) {
      CAPTURE(name);
      CAPTURE(n);
      const std::string key = "more." + std::to_string(n) + ".";
      const auto attentions = test::fixture_reference(name, key + "attentions");
      const auto logits = test::fixture_reference(name, key + "logits");
      const int64_t T = int64_t(more[n].size());
      REQUIRE(attentions.shape == std::vector<int64_t>{m->config.layers, m->config.heads, T, T});
      for (const bool fast : {true, false}) {
        const ForwardResult r = fast ? forward(*m, more[n]) : forward_reference(*m, more[n]);
        const std::string which = fast ? "fast" : "reference";
        check_flat(r.attentions.data(), attentions.values, 1e-5, false, which + " attentions");
        check_flat(r.logits.data(), logits.values, 1e-4, true, which + " logits");
      }
    }
  }
}

TEST_CASE("model forward: a sliding-window layer gives keys at or beyond the window exactly 0, a global one does not") {
  for (const std::string name : {"gemma2_softcap_f32", "gemma3_local_global_bf16", "mistral_mha_f32"}) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const ModelConfig& c = m->config;
    // Mistral's window is 16: an input of 24 tokens reaches past it (once refused, now masked).
    const int T = name == "mistral_mha_f32" ? 24 : 20;
    std::vector<int32_t> ids;
    for (int t = 0; t < T; ++t) ids.push_back(int32_t((t * 7 + 3) % c.vocab));
    const ForwardResult fast = forward(*m, ids), ref = forward_reference(*m, ids);
    check_same_result(fast, ref, 1e-6, 1e-5, name);
    bool saw_global_reach = false;
    for (int l = 0; l < c.layers; ++l) {
      const int W = c.layer_window[size_t(l)];
      REQUIRE(W < T);
      for (int h = 0; h < c.heads; ++h)
        for (int i = 0; i < T; ++i) {
          double sum = 0;
          for (int j = 0; j < T; ++j) {
            const float p = fast.attentions[size_t(((int64_t(l) * c.heads + h) * T + i) * T + j)];
            sum += p;
            if (j > i || (W > 0 && j <= i - W)) {
              INFO("layer " << l << " head " << h << " query " << i << " key " << j);
              REQUIRE(p == 0.0f);
            }
            if (W == 0 && j < i - 8 && p > 0) saw_global_reach = true;
          }
          CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
        }
    }
    if (name != "mistral_mha_f32") CHECK(saw_global_reach);
  }
}

TEST_CASE("model forward: each new formula changes the result (NoPE, window, soft-caps, scale, embedding factor)") {
  // The references are met only with each switch as config.json says: flipping one moves the logits
  // or attentions well beyond the tolerances, so none of them can be silently ignored.
  auto moved = [](const std::string& name, const std::function<void(ModelConfig&)>& edit) {
    const auto m = model::open(model_fixture(name));
    Model changed = *m;
    edit(changed.config);
    const auto ids = test::fixture_ids(name);
    const ForwardResult a = forward(*m, ids), b = forward(changed, ids);
    double att = 0, logit = 0;
    for (size_t i = 0; i < a.attentions.size(); ++i) att = std::max(att, double(std::abs(a.attentions[i] - b.attentions[i])));
    logit = (a.logits - b.logits).cwiseAbs().maxCoeff() / std::max(1.0f, a.logits.cwiseAbs().maxCoeff());
    return std::max(att, logit);
  };
  CHECK(moved("smollm3_nope_bf16", [](ModelConfig& c) { c.layer_rope_theta[3] = c.rope_theta; }) > 1e-3);
  CHECK(moved("gemma2_softcap_f32", [](ModelConfig& c) { c.layer_window[0] = 0; }) > 1e-3);
  CHECK(moved("gemma2_softcap_f32", [](ModelConfig& c) { c.attn_softcap = 0; }) > 1e-3);
  CHECK(moved("gemma2_softcap_f32", [](ModelConfig& c) { c.final_softcap = 0; }) > 1e-3);
  CHECK(moved("gemma2_softcap_f32", [](ModelConfig& c) { c.attn_scale = 1.0 / std::sqrt(double(c.head_dim)); }) > 1e-3);
  CHECK(moved("gemma3_local_global_bf16", [](ModelConfig& c) { c.layer_rope_theta[0] = c.rope_theta; }) > 1e-3);
  // √24 = 4.899 stays float32 in this BF16 checkpoint, as a float32-loaded transformers model keeps it
  // (the float32 contract, config.h); BF16's 4.90625 would move the result.
  const auto g3 = model::open(model_fixture("gemma3_local_global_bf16"));
  CHECK(g3->config.embedding_scale == double(std::sqrt(24.0f)));
  CHECK(moved("gemma3_local_global_bf16", [](ModelConfig& c) { c.embedding_scale = 4.90625; }) > 1e-4);
  CHECK(model::open(model_fixture("gemma2_softcap_f32"))->config.embedding_scale == double(std::sqrt(32.0f)));
}

TEST_CASE("model forward: a set cancel flag stops the pass between layers") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  std::atomic<bool> cancel{true};
  ForwardOptions options;
  options.cancel = &cancel;
  CHECK_THROWS_AS((void)forward(*m, test::fixture_ids("llama_gqa_bf16_sharded"), options), Cancelled);
  CHECK_THROWS_AS((void)forward_reference(*m, test::fixture_ids("llama_gqa_bf16_sharded"), options), Cancelled);
}

TEST_CASE("model forward: Qwen3's q/k norms make each head's q and k rows RMS-normalised before RoPE") {
  const auto m = model::open(model_fixture("qwen3_gqa_bf16_tied"));
  const auto ids = test::fixture_ids("qwen3_gqa_bf16_tied");
  ForwardOptions options;
  options.detail_layer = 0;
  const ForwardResult r = forward(*m, ids, options);
  // RoPE rotates pairs, so a row's length is the normalised one: ‖q_t‖² = Σ_d (w_d·q̂_d)², and at t = 0
  // (angle 0) q_t is exactly RMSNorm(q)·w, whose mean square without the weight is 1.
  const Vec& qw = m->weights->layers[0].q_norm;
  const int D = m->config.head_dim;
  for (int h = 0; h < m->config.heads; ++h) {
    const Mat& q = r.detail->q[size_t(h)];
    double mean_sq = 0;
    for (int d = 0; d < D; ++d) mean_sq += std::pow(double(q(0, d)) / double(qw[d]), 2);
    CHECK(std::abs(mean_sq / D - 1.0) < 1e-4);
  }
  // Without the norms the same weights give other attentions: the norms are applied, not ignored.
  auto plain = std::make_shared<Model>(*m);
  plain->config.qk_norm = false;
  const ForwardResult without = forward(*plain, ids);
  double largest = 0;
  for (size_t i = 0; i < r.attentions.size(); ++i)
    largest = std::max(largest, double(std::abs(without.attentions[i] - r.attentions[i])));
  CHECK(largest > 1e-3);
  // GQA 4/2 → MQA on a Qwen3 model: the fast pass still equals the plain-loop one.
  const auto mqa = convert_kv_heads(*m, 1);
  check_same_result(forward(*mqa, ids, options), forward_reference(*mqa, ids, options), 1e-6, 1e-5, "qwen3 MQA");
}

TEST_CASE("model forward: Phi-3's sliding_window masks keys more than 48 back; the long fixture fits inside it") {
  const auto m = model::open(model_fixture("phi3_mha_long_f32"));  // window 48, 64 positions
  CHECK(m->config.sliding_window == 48);
  CHECK(test::fixture_ids("phi3_mha_long_f32").size() == 40);
  // 60 tokens: query i sees keys i − 48 < j ≤ i in every layer, as the plain-loop pass computes it.
  std::vector<int32_t> ids(60);
  for (int t = 0; t < 60; ++t) ids[size_t(t)] = (7 * t + 3) % 50;
  const ForwardResult r = forward(*m, ids);
  check_same_result(r, forward_reference(*m, ids), 1e-6 * 5, 1e-5, "phi3 past its window");
  const int T = 60, L = r.layers, H = r.heads;
  int outside = 0;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      for (int i = 0; i < T; ++i)
        for (int j = 0; j <= i - 48; ++j, ++outside)
          CHECK(r.attentions[size_t(((int64_t(l) * H + h) * T + i) * T + j)] == 0.0f);
  CHECK(outside == L * H * (12 * 13 / 2));  // queries 48…59 each have i − 47 keys outside
}
