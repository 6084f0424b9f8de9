// test_pipeline_rollout.cpp — the pipeline's rollout and flow steps (pipeline.h): each equals calling
// analysis/rollout.h on the same forward pass's stack, a request that does not ask for them does not run them,
// masked keys stay exactly 0, the flow reports its progress, and an input above flow_max_tokens is refused
// by a message naming the limit.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "attnscope/analysis/rollout.h"
#include "attnscope/core/error.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

pipeline::Request ids_request(std::shared_ptr<const model::Model> m, const std::vector<int32_t>& ids) {
  pipeline::Request r;
  r.model = std::move(m);
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = ids;
  r.layer = 0;
  return r;
}

}  // namespace

TEST_CASE("pipeline rollout/flow: the steps equal rollout.h on the forward's stack (dense, GQA, windowed, MLA+MoE, hybrid)") {
  for (const std::string name : {"gpt2_prefix_f32", "llama_gqa_bf16_sharded", "gemma2_softcap_f32",
                                 "deepseek_v2_mla_moe_bf16", "qwen3_next_f32"}) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const std::vector<int32_t> ids = fixture_ids(name);
    pipeline::Request request = ids_request(m, ids);
    request.steps = {pipeline::Step::flow, pipeline::Step::rollout};  // any order: the table's runs
    const int T = int(ids.size());
    const int target = T / 2;  // keys after it are masked
    request.flow_position = target;
    std::vector<double> progress;
    request.progress = [&](double f) { progress.push_back(f); };
    const pipeline::Result r = pipeline::run(request);
    CHECK(r.counters.forwards == 1);
    CHECK(r.counters.steps_run == std::vector<pipeline::Step>{pipeline::Step::rollout, pipeline::Step::flow});
    REQUIRE_MESSAGE(r.rollout, r.rollout_error);
    REQUIRE_MESSAGE(r.flow, r.flow_error);

    // The same numbers from rollout.h called directly on the request's forward pass (its stack), and that stack
    // is the model's forward of the same ids.
    REQUIRE(r.run->stack);
    const Rollout direct = attention_rollout(*r.run->stack);
    CHECK(max_abs_diff(r.run->stack->attentions, model::forward(*m, ids).attentions) <= 1e-6);
    CHECK(r.rollout->means == direct.means);
    CHECK(r.rollout->capacities == direct.capacities);
    CHECK(r.rollout->joint == direct.joint);
    CHECK(r.rollout->absolute_layers == direct.absolute_layers);
    FlowOptions options;
    options.position = target;
    const AttentionFlow flow = attention_flow(direct, options);
    CHECK(r.flow->layers == flow.layers);
    CHECK(r.flow->positions == flow.positions);
    CHECK(r.flow->flow == flow.flow);
    CHECK(r.flow->share == flow.share);
    REQUIRE_FALSE(progress.empty());
    CHECK(progress.back() == 1.0);

    // Masked keys stay masked: a causal model's rollout and flow are exactly 0 after the query.
    for (int l = 0; l < r.rollout->layers; ++l)
      for (int i = 0; i < T; ++i)
        for (int j = i + 1; j < T; ++j) CHECK(r.rollout->rollout(l)(i, j) == 0.0f);
    for (size_t a = 0; a < r.flow->layers.size(); ++a)
      for (int j = target + 1; j < T; ++j) CHECK(r.flow->flows(int(a), 0)(j) == 0.0f);
  }
}

TEST_CASE("pipeline rollout/flow: a sliding window's masked keys have exactly 0 in the head mean") {
  const std::string name = "gemma2_softcap_f32";  // sliding_window 5 on its local layers
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  const int T = int(ids.size());
  REQUIRE(T > 6);
  pipeline::Request request = ids_request(m, ids);
  request.steps = {pipeline::Step::rollout};
  const pipeline::Result r = pipeline::run(request);
  REQUIRE(r.rollout);
  int local = 0;
  for (int l = 0; l < r.rollout->layers; ++l) {
    const int window = m->config.layer_window[size_t(l)];
    if (window <= 0) continue;
    ++local;
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        if (j > i || j <= i - window) CHECK(r.rollout->mean(l)(i, j) == 0.0f);
  }
  CHECK(local > 0);
}

TEST_CASE("pipeline rollout/flow: a request that does not ask for them runs neither") {
  const auto m = model::open(model_fixture("gpt2_prefix_f32"));
  pipeline::Request request = ids_request(m, fixture_ids("gpt2_prefix_f32"));
  request.steps = {pipeline::Step::head_patterns};
  pipeline::Result r = pipeline::run(request);
  CHECK_FALSE(r.done(pipeline::Step::rollout));
  CHECK_FALSE(r.done(pipeline::Step::flow));
  CHECK_FALSE(r.rollout);
  CHECK_FALSE(r.flow);
  // Asked later on the same result: the rollout alone, with no second forward and no flow.
  pipeline::run_steps(r, {pipeline::Step::rollout});
  CHECK(r.done(pipeline::Step::rollout));
  CHECK(r.rollout);
  CHECK_FALSE(r.flow);
  CHECK_FALSE(r.done(pipeline::Step::flow));
  CHECK(r.counters.forwards == 1);
  // A seeded scene has no stack: both steps are skipped, nothing made.
  pipeline::Request seeded;
  seeded.scene = Scene{};
  seeded.what = AnalysisRequest{};
  seeded.steps = {pipeline::Step::rollout, pipeline::Step::flow};
  const pipeline::Result s = pipeline::run(seeded);
  CHECK_FALSE(s.rollout);
  CHECK_FALSE(s.flow);
}

TEST_CASE("pipeline rollout/flow: flow refuses an input above flow_max_tokens, naming the limit; a set flag cancels it") {
  // A stack of flow_max_tokens + 1 tokens from an attentions "file": the rollout runs, the flow says why not.
  auto stack = std::make_shared<model::AttentionStack>();
  const int T = pipeline::flow_max_tokens + 1;
  stack->layers = 2, stack->heads = stack->kv_heads = 1, stack->tokens = T, stack->causal = true;
  stack->attentions.assign(size_t(2) * T * T, 0.0f);
  for (int j = 0; j < T; ++j) stack->labels.push_back("t" + std::to_string(j));
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j <= i; ++j) stack->attentions[(size_t(l) * T + i) * T + j] = 1.0f / float(i + 1);
  pipeline::Request request;
  request.attentions = stack;
  request.layer = 0;
  request.steps = {pipeline::Step::rollout, pipeline::Step::flow};
  const pipeline::Result r = pipeline::run(request);
  CHECK(r.rollout);
  CHECK_FALSE(r.flow);
  CHECK(r.flow_error.find("limited to " + std::to_string(pipeline::flow_max_tokens) + " tokens") != std::string::npos);
  CHECK(r.flow_error.find(std::to_string(T)) != std::string::npos);

  // At the limit it runs; a set cancel flag stops it with Cancelled and no flow.
  auto at_limit = std::make_shared<model::AttentionStack>(*stack);
  const int U = pipeline::flow_max_tokens;
  at_limit->tokens = U;
  at_limit->labels.resize(size_t(U));
  at_limit->attentions.assign(size_t(2) * U * U, 0.0f);
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < U; ++i)
      for (int j = 0; j <= i; ++j) at_limit->attentions[(size_t(l) * U + i) * U + j] = 1.0f / float(i + 1);
  request.attentions = at_limit;
  request.flow_position = U - 1;
  const pipeline::Result ok = pipeline::run(request);
  REQUIRE_MESSAGE(ok.flow, ok.flow_error);
  CHECK(ok.flow->layers == std::vector<int>{0, 1});
  request.steps = {pipeline::Step::rollout};
  pipeline::Result partial = pipeline::run(request);
  std::atomic<bool> cancel{true};
  CHECK_THROWS_AS(pipeline::run_steps(partial, {pipeline::Step::flow}, &cancel), Cancelled);
  CHECK_FALSE(partial.flow);
}
