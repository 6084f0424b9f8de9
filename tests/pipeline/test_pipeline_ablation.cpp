// test_pipeline_ablation.cpp — a request with heads switched off (pipeline::Request::ablation): its forward is
// the ablated one (model/lens.h ablate_heads' pass), its comparison holds the unablated run, the loss on the
// input before and after, and each head's attention change; the unablated run comes from the Cache when it is
// there; a linear/mixer layer's heads are refused in words.
#include <doctest/doctest.h>

#include <algorithm>

#include "attnscope/core/error.h"
#include "attnscope/model/lens.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

pipeline::Request ids_request(std::shared_ptr<const model::Model> m, std::vector<int32_t> ids, int layer,
                              model::HeadAblation ablation) {
  pipeline::Request r;
  r.model = std::move(m);
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = std::move(ids);
  r.layer = layer;
  r.ablation = std::move(ablation);
  return r;
}

}  // namespace

TEST_CASE("pipeline ablation: the run is the ablated forward, the comparison the engine's, on every family kind") {
  // dense, GQA, MLA with MoE, windowed, MoE, a hybrid's softmax layer
  const std::vector<std::string> names{"gpt2_prefix_f32", "llama_gqa_bf16_sharded", "deepseek_v2_mla_moe_bf16",
                                       "gemma3_local_global_bf16", "qwen3_moe_sparse_step_f32", "qwen3_next_f32"};
  for (const model::AblationMode mode : {model::AblationMode::zero, model::AblationMode::mean})
    for (const std::string& name : names) {
      CAPTURE(name);
      const auto m = model::open(model_fixture(name));
      const std::vector<int32_t> ids = fixture_ids(name);
      int layer = 0;  // the first softmax layer
      while (m->config.is_linear_layer(layer)) ++layer;
      const model::HeadAblation ablation{mode, {{layer, 0}, {layer, m->config.heads - 1}}};
      const pipeline::Result r = pipeline::run(ids_request(m, ids, m->config.layers - 1, ablation));
      CHECK(r.counters.forwards == 1);
      CHECK(r.counters.unablated_forwards == 1);
      const model::ForwardResult base = model::forward(*m, ids);
      const model::AblationEffect effect = model::ablate_heads(*m, ids, base, ablation);
      REQUIRE(r.run);
      REQUIRE(r.ablation);
      const pipeline::AblationComparison& c = *r.ablation;
      CHECK(r.run->stack->attentions == effect.ablated.attentions);
      CHECK(c.before->stack->attentions == base.attentions);
      CHECK(r.run->next.size() == effect.ablated.top.size());
      CHECK(r.run->next.back().front().id == effect.ablated.top.back().front().id);
      CHECK(c.before->next.back().front().id == base.top.back().front().id);
      CHECK(c.loss_before.mean == doctest::Approx(effect.loss_before.mean).epsilon(1e-12));
      CHECK(c.loss_after.mean == doctest::Approx(effect.loss_after.mean).epsilon(1e-12));
      CHECK(c.loss_after.per_token == effect.loss_after.per_token);
      CHECK(c.first_changed_layer == effect.first_changed_layer);
      REQUIRE(int(c.layer_change.size()) == m->config.layers);
      for (int l = 0; l < m->config.layers; ++l) {
        CAPTURE(l);
        CHECK(c.layer_change[size_t(l)] == doctest::Approx(effect.attention_change[size_t(l)]));
        if (l <= layer) CHECK(c.layer_change[size_t(l)] == 0.0f);  // a head's own map is computed before W_O
      }
      // something after the ablated layer moved (when a layer follows it), and the loss is no longer the same
      if (layer + 1 < m->config.layers) CHECK(*std::max_element(c.layer_change.begin(), c.layer_change.end()) > 1e-5f);
      CHECK(c.loss_after.mean != c.loss_before.mean);
    }
}

TEST_CASE("pipeline ablation: the unablated run comes from the Cache; another set of heads runs one forward") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  const std::vector<int32_t> ids = fixture_ids("llama_gqa_bf16_sharded");
  pipeline::Cache cache;
  const pipeline::Result first =
      pipeline::run(ids_request(m, ids, 1, {model::AblationMode::zero, {{0, 1}}}), nullptr, &cache);
  CHECK(first.counters.unablated_forwards == 1);
  const pipeline::Result second =
      pipeline::run(ids_request(m, ids, 1, {model::AblationMode::mean, {{0, 0}, {0, 3}}}), nullptr, &cache);
  CHECK(second.counters.forwards == 1);
  CHECK(second.counters.unablated_forwards == 0);
  CHECK(second.ablation->before == first.ablation->before);
  CHECK(second.ablation->loss_before.mean == first.ablation->loss_before.mean);
  CHECK(second.run->stack->attentions != first.run->stack->attentions);
  // no heads: no comparison, the plain run
  const pipeline::Result plain = pipeline::run(ids_request(m, ids, 1, {}), nullptr, &cache);
  CHECK(!plain.ablation);
  CHECK(plain.counters.unablated_forwards == 0);
  CHECK(plain.run->stack->attentions == first.ablation->before->stack->attentions);
  // another input is another unablated run
  std::vector<int32_t> other = ids;
  std::reverse(other.begin(), other.end());
  const pipeline::Result third =
      pipeline::run(ids_request(m, other, 1, {model::AblationMode::zero, {{0, 1}}}), nullptr, &cache);
  CHECK(third.counters.unablated_forwards == 1);
}

TEST_CASE("pipeline ablation: bad heads and a linear/mixer layer's heads are refused before any forward pass") {
  const auto m = model::open(model_fixture("qwen3_next_f32"));
  const std::vector<int32_t> ids = fixture_ids("qwen3_next_f32");
  int linear = 0;
  while (!m->config.is_linear_layer(linear)) ++linear;
  const auto refusal = [&](model::HeadAblation a) { return error_of([&] { (void)pipeline::run(ids_request(m, ids, 0, a)); }); };
  CHECK(contains(refusal({model::AblationMode::zero, {{linear, 0}}}), "linear (mixer) layer without softmax heads"));
  CHECK(contains(refusal({model::AblationMode::zero, {{m->config.layers, 0}}}),
                 "the model's layers are 0 to " + std::to_string(m->config.layers - 1)));
  CHECK(contains(refusal({model::AblationMode::zero, {{0, m->config.heads}}}),
                 "its heads are 0 to " + std::to_string(m->config.heads - 1)));
}
