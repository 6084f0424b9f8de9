// test_pipeline_long.cpp — a long-input request (Request::attention = on_demand, model/head_maps.h): one forward
// pass keeping q and k, Result::head_maps giving any head (the stack request's bits), the logit lens still made,
// and the steps that need every layer's attention at once recording an error that names the stack's limit.
#include <doctest/doctest.h>

#include <cstring>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

pipeline::Request long_request(const std::string& name) {
  pipeline::Request r;
  r.model = model::open(model_fixture(name));
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = fixture_ids(name);
  r.layer = -1;
  r.attention = model::AttentionKeep::on_demand;
  return r;
}

}  // namespace

TEST_CASE("pipeline long: one forward, heads on demand equal the stack request's, stack steps refused by the limit") {
  for (const char* name : {"llama_gqa_bf16_sharded", "gpt_oss_dequantized_bf16", "deepseek_v2_mla_moe_bf16"}) {
    CAPTURE(name);
    pipeline::Request request = long_request(name);
    request.steps = {pipeline::Step::head_patterns, pipeline::Step::head_statistics, pipeline::Step::rollout,
                     pipeline::Step::flow, pipeline::Step::logit_lens};
    const pipeline::Result r = pipeline::run(request);
    REQUIRE(r.head_maps);
    CHECK(r.counters.forwards == 1);
    CHECK(r.run->stack == nullptr);
    CHECK(r.analysis == nullptr);
    CHECK(r.run->next.size() == request.input.ids.size());
    const std::string limit = "the whole stack's limit is " + std::to_string(limits::max_tokens) + " tokens";
    CHECK(contains(r.head_patterns_error, limit));
    CHECK(contains(r.head_stats_error, limit));
    CHECK(contains(r.rollout_error, limit));
    CHECK(contains(r.flow_error, limit));
    CHECK(r.lens != nullptr);  // the lens reads the residual stream, not the stack
    pipeline::Request stack_request = request;
    stack_request.attention = model::AttentionKeep::stack;
    stack_request.steps.clear();
    const pipeline::Result s = pipeline::run(stack_request);
    const model::AttentionStack& stack = *s.run->stack;
    for (int l = 0; l < stack.layers; ++l)
      for (int h = 0; h < stack.heads; ++h) {
        const Mat a = r.head_maps->head(l, h);
        const Mat b = stack.map(l, h);
        CHECK(std::memcmp(a.data(), b.data(), size_t(a.size()) * sizeof(float)) == 0);
      }
    // The next tokens are the same pass's.
    CHECK(r.run->next[0][0].id == s.run->next[0][0].id);
    CHECK(r.run->next[0][0].probability == s.run->next[0][0].probability);
  }
}

TEST_CASE("pipeline long: detail, an ablation and a source without a checkpoint are refused") {
  pipeline::Request detail = long_request("llama_gqa_bf16_sharded");
  detail.keep_detail = true;
  CHECK(contains(error_of([&] { (void)pipeline::run(detail); }), "long inputs keep no layer's detail"));
  pipeline::Request ablated = long_request("llama_gqa_bf16_sharded");
  ablated.ablation.heads = {{0, 1}};
  CHECK(contains(error_of([&] { (void)pipeline::run(ablated); }), "switching heads off compares two whole attention stacks"));
  pipeline::Request scene;
  scene.scene = Scene{};
  scene.attention = model::AttentionKeep::on_demand;
  CHECK(contains(error_of([&] { (void)pipeline::run(scene); }), "long inputs (attention per head on demand) need a checkpoint"));
  pipeline::Request hybrid = long_request("qwen3_next_f32");
  CHECK(contains(error_of([&] { (void)pipeline::run(hybrid); }), "need softmax layers"));
}
