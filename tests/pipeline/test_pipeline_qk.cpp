// Step qk_attribution of the pipeline (pipeline.h): the cell of Request::layer/head/query/key attributed over the
// request's own tokens, the same table as model::qk_attribution over a forward of the same ids; another cell of
// the same model, input and layer reuses the Cache's forward; refusals are the step's error, not a throw.
#include <doctest/doctest.h>

#include "attnscope/core/error.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/qk_attribution.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

pipeline::Request ids_request(std::shared_ptr<const model::Model> m, std::vector<int32_t> ids, int layer) {
  pipeline::Request r;
  r.model = std::move(m);
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = std::move(ids);
  r.layer = layer;
  r.steps = {pipeline::Step::qk_attribution};
  return r;
}

}  // namespace

TEST_CASE("pipeline qk_attribution: the step's table is the engine's for the request's cell") {
  for (const std::string name : {"qwen2_gqa", "deepseek_v2_mla_moe_bf16", "gemma2_softcap_f32", "gpt2_prefix_f32"}) {
    INFO(name);
    const auto m = model::open(model_fixture(name));
    const auto ids = fixture_ids(name);
    const int T = int(ids.size()), layer = m->config.layers - 1;
    pipeline::Request request = ids_request(m, ids, layer);
    request.head = m->config.heads - 1, request.query = T - 1, request.key = T - 2;
    const pipeline::Result r = pipeline::run(request);
    INFO(r.qk_attribution_error);
    REQUIRE(r.qk_attribution);
    CHECK(r.done(pipeline::Step::qk_attribution));
    CHECK(r.counters.forwards == 2);  // the heatmaps' forward and the attribution's (with the trace's parts)
    const model::ForwardResult f = model::forward(*m, ids, model::qk_forward_options(layer));
    const model::QkAttribution direct = model::qk_attribution(*m, f, {layer, m->config.heads - 1, T - 1, T - 2});
    CHECK(r.qk_attribution->cell == direct.cell);
    CHECK(r.qk_attribution->table == direct.table);
    CHECK(r.qk_attribution->score == direct.score);
    // what the Heads view draws at that cell: the head's probability comes from the same score
    CHECK(std::abs(r.qk_attribution->sum() - r.qk_attribution->score) <= 1e-4 * std::max(1e-2, std::abs(double(r.qk_attribution->score))));
  }
}

TEST_CASE("pipeline qk_attribution: another cell of the same input and layer reuses the cached forward") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  const auto ids = fixture_ids("llama_gqa_bf16_sharded");
  pipeline::Cache cache;
  pipeline::Request request = ids_request(m, ids, 1);
  request.head = 1, request.query = 5, request.key = 2;
  const pipeline::Result first = pipeline::run(request, nullptr, &cache);
  REQUIRE(first.qk_attribution);
  // the window's way: the first result's copy with another cell, its step run again
  pipeline::Result copy = first;
  copy.counters = {};
  copy.request.head = 3, copy.request.query = 6, copy.request.key = 6;
  pipeline::run_steps(copy, {pipeline::Step::qk_attribution}, nullptr, &cache);
  REQUIRE(copy.qk_attribution);
  CHECK(copy.counters.forwards == 0);
  CHECK(copy.qk_attribution->cell == model::QkCell{1, 3, 6, 6});
  CHECK(std::abs(copy.qk_attribution->sum() - copy.qk_attribution->score) <= 1e-4 * std::max(1e-2, std::abs(double(copy.qk_attribution->score))));
  // another layer: a new forward
  request.layer = 0;
  const pipeline::Result other = pipeline::run(request, nullptr, &cache);
  CHECK(other.counters.forwards == 2);
  CHECK(other.qk_attribution->cell.layer == 0);
}

TEST_CASE("pipeline qk_attribution: a refused cell is the step's error, with the valid range") {
  const auto m = model::open(model_fixture("qwen3_next_f32"));  // Gated DeltaNet layers and softmax layers
  const auto ids = fixture_ids("qwen3_next_f32");
  const int T = int(ids.size());
  int softmax = -1, linear = -1;
  for (int l = 0; l < m->config.layers; ++l) (m->config.is_linear_layer(l) ? linear : softmax) = l;
  REQUIRE(softmax >= 0);
  REQUIRE(linear >= 0);
  pipeline::Request request = ids_request(m, ids, softmax);
  request.query = T;
  pipeline::Result r = pipeline::run(request);
  CHECK_FALSE(r.qk_attribution);
  CHECK(contains(r.qk_attribution_error, "query " + std::to_string(T) + " is outside the input: its positions are 0 to " + std::to_string(T - 1)));
  request.layer = linear, request.query = 3, request.key = 1;
  r = pipeline::run(request);
  CHECK_FALSE(r.qk_attribution);
  CHECK(contains(r.qk_attribution_error, "layer " + std::to_string(linear) + " is a Gated DeltaNet layer: it has no softmax scores"));
  request.layer = softmax;
  r = pipeline::run(request);
  CHECK(r.qk_attribution);
  CHECK(r.qk_attribution_error.empty());
  // an attentions file has no weights
  const auto stack = std::make_shared<const model::AttentionStack>(attention_stack(
      model::forward(*m, ids), tokens_from_ids(nullptr, ids), "qwen3_next_f32", m->config.layer_window));
  pipeline::Request file;
  file.attentions = stack;
  file.layer = softmax;
  file.steps = {pipeline::Step::qk_attribution};
  const pipeline::Result fr = pipeline::run(file);
  CHECK_FALSE(fr.qk_attribution);
  CHECK(contains(fr.qk_attribution_error, "needs a checkpoint"));
}

TEST_CASE("pipeline qk_attribution: a K/V-converted model's cell sums to its own score") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));  // H = 4, G = 2
  const auto ids = fixture_ids("llama_gqa_bf16_sharded");
  const int T = int(ids.size());
  pipeline::Request request = ids_request(m, ids, 1);
  request.kv_heads = 1;  // MQA: every head reads the pooled K
  request.head = 3, request.query = T - 1, request.key = 1;
  const pipeline::Result r = pipeline::run(request);
  INFO(r.qk_attribution_error);
  REQUIRE(r.qk_attribution);
  CHECK(r.ran_model->config.kv_heads == 1);
  const model::ForwardResult f = model::forward(*r.ran_model, ids, model::qk_forward_options(1));
  CHECK(std::abs(r.qk_attribution->score - f.detail->scores[3](T - 1, 1)) <= 1e-5 * std::max(1.0, std::abs(double(r.qk_attribution->score))));
  CHECK(std::abs(r.qk_attribution->sum() - r.qk_attribution->score) <= 1e-4 * std::max(1e-2, std::abs(double(r.qk_attribution->score))));
}

TEST_CASE("pipeline qk_attribution: with heads switched off it splits the ablated pass's score") {
  const auto m = model::open(model_fixture("gpt2_prefix_f32"));  // 2 layers of 4 heads
  const auto ids = fixture_ids("gpt2_prefix_f32");
  const int T = int(ids.size());
  for (const model::AblationMode mode : {model::AblationMode::zero, model::AblationMode::mean}) {
    INFO(int(mode));
    pipeline::Request request = ids_request(m, ids, 1);
    request.head = 2, request.query = T - 1, request.key = 1;
    request.ablation.mode = mode;
    request.ablation.heads = {{0, 1}, {0, 3}};
    const pipeline::Result r = pipeline::run(request);
    INFO(r.qk_attribution_error);
    REQUIRE(r.qk_attribution);
    model::ForwardOptions options = model::qk_forward_options(1);
    options.ablation = &request.ablation;
    const model::ForwardResult ablated = model::forward(*m, ids, options);
    const model::ForwardResult intact = model::forward(*m, ids, model::qk_forward_options(1));
    const float score = ablated.detail->scores[2](T - 1, 1);
    // the score split is the ablated pass's (the one the views draw), not the intact model's
    CHECK(std::abs(r.qk_attribution->score - score) <= 1e-5 * std::max(1.0f, std::abs(score)));
    CHECK(std::abs(score - intact.detail->scores[2](T - 1, 1)) > 1e-4);
    CHECK(std::abs(r.qk_attribution->sum() - r.qk_attribution->score) <= 1e-4 * std::max(1e-2, std::abs(double(r.qk_attribution->score))));
    // a head switched off to zeros contributes nothing, on either side
    double switched_off = 0;
    for (size_t p = 0; p < r.qk_attribution->query_parts.size(); ++p)
      for (size_t k = 0; k < r.qk_attribution->key_parts.size(); ++k) {
        const model::QkPart& qp = r.qk_attribution->query_parts[p];
        const model::QkPart& kp = r.qk_attribution->key_parts[k];
        const bool off = (qp.kind == model::QkPartKind::head && qp.layer == 0 && (qp.head == 1 || qp.head == 3)) ||
                         (kp.kind == model::QkPartKind::head && kp.layer == 0 && (kp.head == 1 || kp.head == 3));
        if (off) switched_off += std::abs(double(r.qk_attribution->table(Eigen::Index(p), Eigen::Index(k))));
      }
    if (mode == model::AblationMode::zero) CHECK(switched_off == 0.0);
    else CHECK(switched_off > 0.0);
  }
}
