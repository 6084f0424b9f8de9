// test_pipeline.cpp — one request → one engine pipeline → one result (attnscope/pipeline/pipeline.h):
// the tokens are made once and the forward runs once per request, whatever steps follow; the steps run
// in the table's order, each once; cancellation between steps leaves no part of the cancelled steps; a
// cache reuses the conversion, the unconverted run and the tokens; and the result is the forward pass's.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <set>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/core/error.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

Tensor3 layer_probs(const model::ForwardResult& f, int layer) {
  Tensor3 out;
  for (int h = 0; h < f.heads; ++h) out.push_back(f.attention(layer, h));
  return out;
}

pipeline::Request text_request(std::shared_ptr<const model::Model> m, const std::string& text, int layer) {
  pipeline::Request r;
  r.model = std::move(m);
  r.input.form = pipeline::TokenInput::Form::text;
  r.input.text = text;
  r.layer = layer;
  return r;
}

}  // namespace

TEST_CASE("pipeline: every step has one entry, in the enum's order, with a name of its own") {
  const std::vector<pipeline::StepInfo>& steps = pipeline::pipeline_steps();
  REQUIRE(steps.size() == 5);
  std::set<std::string> names;
  for (size_t i = 0; i < steps.size(); ++i) {
    CHECK(size_t(steps[i].step) == i);
    CHECK(static_cast<bool>(steps[i].run));
    names.insert(steps[i].name);
  }
  CHECK(names == std::set<std::string>{"head_patterns", "head_statistics", "qk_attribution", "rollout", "flow"});
}

TEST_CASE("pipeline: a converted checkpoint's request loads the tokenizer once, tokenizes once, runs each forward once") {
  const std::string name = "llama_gqa_bf16_sharded";  // H = 4, G = 2, with a tokenizer
  const auto m = model::open(model_fixture(name));
  pipeline::Request request = text_request(m, "the cat sat on the mat", 1);
  request.kv_heads = 1;
  request.steps = {pipeline::Step::head_statistics, pipeline::Step::head_patterns};  // any order: the table's runs
  const pipeline::Result r = pipeline::run(request);
  // The old worker tokenized the input for the converted pass and again for the original's (two loads
  // each): one request now makes its tokens once and hands them to both passes.
  CHECK(r.counters.tokenizer_loads == 1);
  CHECK(r.counters.tokenizations == 1);
  CHECK(r.counters.forwards == 1);           // the converted model
  CHECK(r.counters.original_forwards == 1);  // the drift's reference
  CHECK(r.counters.conversions == 1);
  CHECK(r.counters.steps_run == std::vector<pipeline::Step>{pipeline::Step::head_patterns, pipeline::Step::head_statistics});

  // The result is the forward passes' own.
  const ModelTokens tokens = model_tokens_from_text(m->dir, "the cat sat on the mat", true);
  REQUIRE(r.tokens);
  CHECK(r.tokens->ids == tokens.ids);
  CHECK(r.tokens->labels == tokens.labels);
  const model::ForwardResult mqa = model::forward(*model::convert_kv_heads(*m, 1), tokens.ids);
  const model::ForwardResult original = model::forward(*m, tokens.ids);
  REQUIRE(r.analysis);
  CHECK(r.analysis->attention->result.probs == layer_probs(mqa, 1));
  CHECK(r.run->stack->attentions == mqa.attentions);
  REQUIRE(r.original_run);
  CHECK(r.original_run->analysis.attention->result.probs == layer_probs(original, 1));
  REQUIRE_MESSAGE(r.head_stats, r.head_stats_error);
  CHECK(r.head_stats->drift_from_mha == head_drift(layer_probs(mqa, 1), layer_probs(original, 1)));
  REQUIRE_MESSAGE(r.head_patterns, r.head_patterns_error);
  const HeadPatternScores want = head_pattern_scores(*r.run->stack);
  CHECK(r.head_patterns->sink == want.sink);
  CHECK(r.head_patterns->previous == want.previous);
}

TEST_CASE("pipeline: ids need no tokenization; a folder without a tokenizer labels them by number") {
  const auto m = model::open(model_fixture("mistral_mha_f32"));
  pipeline::Request request;
  request.model = m;
  request.input.text = "ids: 3 7 11";  // the window's rule
  request.layer = 0;
  const pipeline::Result r = pipeline::run(request);
  CHECK(r.counters.tokenizations == 0);
  CHECK(r.counters.tokenizer_loads == 1);  // tried once, for the labels
  CHECK(r.counters.forwards == 1);
  CHECK(r.tokens->labels == std::vector<std::string>{"3", "7", "11"});
  // Text without a tokenizer: the request's own message, with the loader's reason.
  request.input.text = "The cat sat";
  CHECK(contains(error_of([&] { pipeline::run(request); }), "ids: 1 2 3"));
  request.input.no_tokenizer = "--text needs the checkpoint's own tokenizer files (or give --ids): {}";
  request.input.form = pipeline::TokenInput::Form::text;
  CHECK(contains(error_of([&] { pipeline::run(request); }), "--text needs the checkpoint's own tokenizer"));
}

TEST_CASE("pipeline: cancelled between steps, a run gives no result and run_steps adds no part") {
  const auto m = model::open(model_fixture("qwen2_gqa"));
  const std::vector<int32_t> ids = fixture_ids("qwen2_gqa");
  pipeline::Request request;
  request.model = m;
  request.input.form = pipeline::TokenInput::Form::ids;
  request.input.ids = ids;
  request.layer = 0;
  std::atomic<bool> cancel{false};
  pipeline::Result r = pipeline::run(request, &cancel);
  CHECK(r.counters.steps_run.empty());
  cancel = true;
  const pipeline::Result before = r;
  CHECK_THROWS_AS(pipeline::run_steps(r, {pipeline::Step::head_patterns, pipeline::Step::head_statistics}, &cancel),
                  Cancelled);
  CHECK_FALSE(r.head_patterns);
  CHECK_FALSE(r.head_stats);
  CHECK(r.counters.steps_run.empty());
  CHECK(r.analysis == before.analysis);
  // A whole run once cancelled: nothing comes back (the forward stops between layers).
  request.steps = {pipeline::Step::head_patterns};
  CHECK_THROWS_AS(pipeline::run(request, &cancel), Cancelled);
  // Not cancelled, the steps run once each: a second run_steps adds nothing.
  cancel = false;
  pipeline::run_steps(r, {pipeline::Step::head_patterns, pipeline::Step::head_statistics}, &cancel);
  REQUIRE(r.head_patterns);
  REQUIRE(r.head_stats);
  const auto patterns = r.head_patterns;
  pipeline::run_steps(r, {pipeline::Step::head_patterns}, &cancel);
  CHECK(r.head_patterns == patterns);
  CHECK(r.counters.steps_run.size() == 2);
}

TEST_CASE("pipeline: a cache reuses the conversion, the unconverted run and the tokens across requests") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  pipeline::Cache cache;
  pipeline::Request request = text_request(m, "the cat sat", 1);
  request.kv_heads = 1;
  request.steps = {pipeline::Step::head_statistics};
  const pipeline::Result first = pipeline::run(request, nullptr, &cache);
  CHECK(first.counters.forwards == 1);
  CHECK(first.counters.original_forwards == 1);
  // The checkpoint's own K/V count: its run is the cached original one, and its drift exactly 0.
  request.kv_heads = 2;
  const pipeline::Result own = pipeline::run(request, nullptr, &cache);
  CHECK(own.counters.forwards == 0);
  CHECK(own.counters.original_forwards == 0);
  CHECK(own.counters.tokenizations == 0);
  CHECK(own.run == first.original_run);
  REQUIRE(own.head_stats);
  CHECK(own.head_stats->drift_from_mha == std::vector<double>(4, 0.0));
  // Back to MQA: the conversion is the cached one; only its forward runs.
  request.kv_heads = 1;
  const pipeline::Result again = pipeline::run(request, nullptr, &cache);
  CHECK(again.counters.conversions == 0);
  CHECK(again.counters.forwards == 1);
  CHECK(again.counters.original_forwards == 0);
  CHECK(again.original_run == first.original_run);
  CHECK(again.head_stats->drift_from_mha == first.head_stats->drift_from_mha);
  // Without a cache every request makes its own pieces, the same numbers.
  const pipeline::Result fresh = pipeline::run(request);
  CHECK(fresh.counters.forwards == 1);
  CHECK(fresh.counters.original_forwards == 1);
  CHECK(fresh.head_stats->drift_from_mha == first.head_stats->drift_from_mha);
}

TEST_CASE("pipeline: a seeded scene's request is analyse()'s, with its statistics as a step") {
  pipeline::Request request;
  Scene scene;
  request.scene = scene;
  request.steps = {pipeline::Step::head_patterns, pipeline::Step::head_statistics};
  const pipeline::Result r = pipeline::run(request);
  const Analysis want = analyse(scene);
  REQUIRE(r.analysis);
  CHECK(r.analysis->attention->result.probs == want.attention->result.probs);
  CHECK_FALSE(r.head_patterns);  // needs a model's stack
  CHECK(r.head_patterns_error.empty());
  REQUIRE(r.head_stats);
  const HeadStats stats = attention_statistics(*want.attention, want.scene.model);
  CHECK(r.head_stats->entropy == stats.entropy);
  CHECK(r.counters.forwards == 0);
  CHECK(r.counters.tokenizations == 0);
  // One source per request.
  request.model = model::open(model_fixture("qwen2_gqa"));
  CHECK(contains(error_of([&] { pipeline::run(request); }), "one source"));
}

TEST_CASE("pipeline: without a detail layer the request gives every layer's stack and no analysis") {
  const std::string name = "qwen2_gqa";
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  pipeline::Request request;
  request.model = m;
  request.input.form = pipeline::TokenInput::Form::ids;
  request.input.ids = ids;
  request.layer = -1;
  request.keep_logits = true;
  const pipeline::Result r = pipeline::run(request);
  const model::ForwardResult f = model::forward(*m, ids);
  CHECK_FALSE(r.analysis);
  CHECK_FALSE(r.detail);
  CHECK(r.run->stack->attentions == f.attentions);
  REQUIRE(r.logits);
  CHECK(*r.logits == f.logits);
  CHECK(r.layer_maps.size() == size_t(m->config.layers));
  // A layer the model lacks is refused before any forward.
  request.layer = 9;
  CHECK(contains(error_of([&] { pipeline::run(request); }), "layer 9"));
}
