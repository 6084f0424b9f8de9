// test_pipeline.cpp — one request → one engine pipeline → one result (attnscope/pipeline/pipeline.h):
// the tokens are made once and the forward runs once per request, whatever steps follow (needs_on_demand's check
// included); a seeded scene and open_source are the engine's; the steps run
// in the table's order, each once; cancellation between steps leaves no part of the cancelled steps; a
// cache reuses the conversion, the unconverted run and the tokens; and the result is the forward pass's.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <set>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/text/tokenizer_interface.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

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
  REQUIRE(steps.size() == 7);
  std::set<std::string> names;
  for (size_t i = 0; i < steps.size(); ++i) {
    CHECK(size_t(steps[i].step) == i);
    CHECK(static_cast<bool>(steps[i].run));
    names.insert(steps[i].name);
  }
  CHECK(names == std::set<std::string>{"head_patterns", "head_statistics", "qk_attribution", "rollout", "flow",
                                       "logit_lens", "logit_attribution"});
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
  // analyse_scene, what the command line and the window's scene files ask: the same analysis through run().
  Scene grid;
  grid.input.source = InputSource::grid;
  for (const Scene& s : {scene, grid}) {
    const AnalysisRequest what = request_for(s);
    const std::shared_ptr<const Analysis> seeded = pipeline::analyse_scene(s, what);
    const Analysis direct = analyse(s, what);
    REQUIRE(seeded);
    CHECK(seeded->request == what);
    CHECK(static_cast<bool>(seeded->attention) == static_cast<bool>(direct.attention));
    if (direct.attention) CHECK(seeded->attention->result.probs == direct.attention->result.probs);
    REQUIRE(static_cast<bool>(seeded->relpos) == static_cast<bool>(direct.relpos));
    if (direct.relpos) CHECK(seeded->relpos->probs == direct.relpos->probs);
  }
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

namespace {

pipeline::Request ids_request(std::shared_ptr<const model::Model> m, std::vector<int32_t> ids, int layer) {
  pipeline::Request r;
  r.model = std::move(m);
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = std::move(ids);
  r.layer = layer;
  return r;
}

void check_same_lens(const model::LogitLens& a, const model::LogitLens& b) {
  REQUIRE(a.layers == b.layers);
  REQUIRE(a.tokens == b.tokens);
  CHECK(a.top_k == b.top_k);
  CHECK(a.final_top == b.final_top);
  CHECK(a.rank == b.rank);
  CHECK(a.kl == b.kl);
  for (int l = 0; l < a.layers; ++l)
    for (int t = 0; t < a.tokens; ++t)
      for (int k = 0; k < a.top_k; ++k) {
        CHECK(a.top[size_t(l)][size_t(t)][size_t(k)].id == b.top[size_t(l)][size_t(t)][size_t(k)].id);
        CHECK(a.top[size_t(l)][size_t(t)][size_t(k)].probability == b.top[size_t(l)][size_t(t)][size_t(k)].probability);
      }
}

void check_same_attribution(const model::LogitAttribution& a, const model::LogitAttribution& b) {
  CHECK(a.target == b.target);
  CHECK(a.logit == b.logit);
  CHECK(a.before_softcap == b.before_softcap);
  REQUIRE(a.parts.size() == b.parts.size());
  for (size_t p = 0; p < a.parts.size(); ++p) CHECK(model::part_label(a.parts[p]) == model::part_label(b.parts[p]));
  CHECK(a.values == b.values);
}

}  // namespace

TEST_CASE("pipeline: the logit lens and attribution steps are lens.h's, from one forward that keeps the taps") {
  // Dense with learned positions, GQA, MLA with experts, a soft-capped model, a hybrid with Mamba-2 layers.
  for (const std::string name : {"gpt2_prefix_f32", "qwen2_gqa", "deepseek_v2_mla_moe_bf16", "gemma2_softcap_f32",
                                 "granite_hybrid_f32"}) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const std::vector<int32_t> ids = fixture_ids(name);
    pipeline::Request request = ids_request(m, ids, 0);
    request.steps = {pipeline::Step::logit_attribution, pipeline::Step::head_patterns, pipeline::Step::logit_lens};
    request.lens_top_k = 3;
    const pipeline::Result r = pipeline::run(request);
    CHECK(r.counters.forwards == 1);  // both steps read the same pass
    CHECK(r.counters.traced_forwards == 1);
    CHECK(r.counters.original_forwards == 0);
    CHECK(r.counters.steps_run == std::vector<pipeline::Step>{pipeline::Step::head_patterns, pipeline::Step::logit_lens,
                                                              pipeline::Step::logit_attribution});
    REQUIRE(r.lens);
    REQUIRE(r.attribution);
    CHECK(r.lens_error.empty());
    CHECK(r.attribution_error.empty());
    const model::ForwardResult direct = model::forward(*m, ids, model::lens_forward_options());
    check_same_lens(*r.lens, model::logit_lens(*m, direct, 3));
    check_same_attribution(*r.attribution, model::direct_logit_attribution(*m, direct));
    // The run's attentions are the same pass's.
    CHECK(r.run->stack->attentions == direct.attentions);
    CHECK(r.lens->top_k == 3);

    // A chosen token: the request's attribute_token at every position, as lens.h's targets.
    pipeline::Request chosen = request;
    chosen.attribute_token = 1;
    const pipeline::Result c = pipeline::run(chosen);
    CHECK(c.counters.forwards == 1);
    REQUIRE(c.attribution);
    check_same_attribution(*c.attribution,
                           model::direct_logit_attribution(*m, direct, std::vector<int32_t>(ids.size(), 1)));
  }
}

TEST_CASE("pipeline: a request without the lens steps keeps no taps; run_steps adds them only from a traced pass") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  const std::vector<int32_t> ids = fixture_ids("llama_gqa_bf16_sharded");
  for (const bool keep : {false, true}) {  // the window's plain run and the command line's kept logits
    CAPTURE(keep);
    pipeline::Request request = ids_request(m, ids, 1);
    request.keep_logits = keep;
    request.steps = {pipeline::Step::head_patterns, pipeline::Step::head_statistics};
    pipeline::Result r = pipeline::run(request);
    CHECK(r.counters.forwards == 1);
    CHECK(r.counters.traced_forwards == 0);
    CHECK(!r.traced);
    CHECK(!r.lens);
    // Asked later of a pass that kept no residual stream: each step says why instead of running a second forward.
    pipeline::run_steps(r, {pipeline::Step::logit_lens, pipeline::Step::logit_attribution});
    CHECK(r.counters.forwards == 1);
    CHECK(!r.lens);
    CHECK(!r.attribution);
    CHECK(r.lens_error.find("needs a checkpoint's forward pass") != std::string::npos);
    CHECK(r.attribution_error.find("needs a checkpoint's forward pass") != std::string::npos);
  }
}

TEST_CASE("pipeline: a target outside the vocabulary is the attribution's error, the lens still made") {
  const auto m = model::open(model_fixture("qwen2_gqa"));
  pipeline::Request request = ids_request(m, fixture_ids("qwen2_gqa"), 0);
  request.steps = {pipeline::Step::logit_lens, pipeline::Step::logit_attribution};
  request.attribute_token = m->config.vocab;
  const pipeline::Result r = pipeline::run(request);
  CHECK(r.lens);
  CHECK(!r.attribution);
  CHECK(r.attribution_error.find("outside the vocabulary") != std::string::npos);
}

TEST_CASE("pipeline: a seeded scene skips the lens steps; an attentions file says the lens needs a checkpoint") {
  pipeline::Request seeded;
  seeded.scene = Scene{};
  seeded.what = AnalysisRequest{};
  seeded.steps = {pipeline::Step::logit_lens, pipeline::Step::logit_attribution};
  const pipeline::Result s = pipeline::run(seeded);
  CHECK(!s.lens);
  CHECK(s.lens_error.empty());  // skipped: a seeded layer has no unembedding (the window says so itself)

  const auto m = model::open(model_fixture("qwen2_gqa"));
  pipeline::Request file;
  file.attentions = pipeline::run(ids_request(m, fixture_ids("qwen2_gqa"), 0)).run->stack;
  file.layer = 0;
  file.steps = {pipeline::Step::logit_lens};
  const pipeline::Result a = pipeline::run(file);
  CHECK(!a.lens);
  CHECK(a.lens_error.find("attentions file") != std::string::npos);
}

TEST_CASE("pipeline: needs_on_demand makes the request's tokens once, and the run that follows takes and counts them") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));  // with a tokenizer
  pipeline::Cache cache;
  const pipeline::Request request = text_request(m, "the cat sat on the mat", 1);
  CHECK_FALSE(pipeline::needs_on_demand(request, cache));  // a short input: the whole stack fits
  REQUIRE(cache.tokens);
  const pipeline::Result r = pipeline::run(request, nullptr, &cache);
  CHECK(r.tokens == cache.tokens);  // the check's tokens, not made again
  CHECK(r.counters.tokenizer_loads == 1);  // and counted as this request's
  CHECK(r.counters.tokenizations == 1);
  // Asked again for the same input: nothing is made, and the next run counts nothing it did not make.
  CHECK_FALSE(pipeline::needs_on_demand(request, cache));
  const pipeline::Result again = pipeline::run(request, nullptr, &cache);
  CHECK(again.counters.tokenizer_loads == 0);
  CHECK(again.counters.tokenizations == 0);
  // A scene and an attentions file never need it; bad input is the run's own message.
  pipeline::Request seeded;
  seeded.scene = Scene{};
  CHECK_FALSE(pipeline::needs_on_demand(seeded, cache));
  pipeline::Request ids = request;
  ids.input = pipeline::TokenInput{};
  ids.input.text = "ids: 1 x";
  const std::string refused = error_of([&] { (void)pipeline::needs_on_demand(ids, cache); });
  CHECK_FALSE(refused.empty());
  CHECK(refused == error_of([&] { pipeline::run(ids); }));
}

TEST_CASE("pipeline: needs_on_demand says when the stack is beyond the limit; the long run takes its tokens") {
  const auto m = model::open(model_fixture("gpt_oss_dequantized_bf16"));
  for (const int T : {limits::max_tokens, limits::max_tokens + 20}) {
    CAPTURE(T);
    pipeline::Request request;
    request.model = m;
    request.input.text = "ids:";  // the window's input box
    for (int32_t id : long_fixture_ids(T)) request.input.text += " " + std::to_string(id);
    request.layer = -1;
    pipeline::Cache cache;
    const bool long_input = pipeline::needs_on_demand(request, cache);
    CHECK(long_input == !model::stack_fits(m->config, T));
    if (long_input) request.attention = model::AttentionKeep::on_demand;
    const pipeline::Result r = pipeline::run(request, nullptr, &cache);
    CHECK(r.tokens == cache.tokens);
    CHECK(int(r.tokens->ids.size()) == T);
    CHECK(r.counters.tokenizer_loads == 1);  // for the ids' labels, once
    CHECK(static_cast<bool>(r.head_maps) == long_input);
  }
}

TEST_CASE("pipeline: open_source opens a checkpoint with its tokenizer, a file in it, and an attentions folder") {
  const fs::path llama = model_fixture("llama_gqa_bf16_sharded");
  for (const fs::path& path : {llama, llama / "config.json"}) {
    CAPTURE(path);
    const pipeline::Opened o = pipeline::open_source(path);
    CHECK(o.dir == llama);
    CHECK(pipeline::source_dir(path) == llama);
    REQUIRE(o.model);
    CHECK(o.model->dir == llama);
    CHECK_FALSE(o.attentions);
    CHECK(o.tokenizer_error.empty());
    CHECK(o.tokenizer == load_tokenizer_cached(llama));  // the one every run() of the folder takes
  }
  // The window's input, checked against the model as it opens: a sentence that fits, ids beyond the vocabulary.
  const pipeline::Opened fits = pipeline::open_source(llama, {}, nullptr, std::string("the cat sat"));
  CHECK(fits.input == std::optional<std::string>("the cat sat"));
  CHECK(fits.input_problem.empty());
  CHECK(fits.default_input == default_model_input(*fits.model));
  const pipeline::Opened beyond = pipeline::open_source(llama, {}, nullptr, std::string("ids: 1 999999"));
  CHECK(beyond.input_problem == model_input_problem(*beyond.model, "ids: 1 999999"));
  CHECK(contains(beyond.input_problem, "outside the model's vocabulary"));
  CHECK_FALSE(pipeline::open_source(llama).input.has_value());  // nothing asked, nothing checked
  // A folder without a tokenizer opens, and says why its text cannot be tokenized.
  const pipeline::Opened bare = pipeline::open_source(model_fixture("mistral_mha_f32"));
  CHECK(bare.model);
  CHECK_FALSE(bare.tokenizer);
  CHECK_FALSE(bare.tokenizer_error.empty());
  const pipeline::Opened words = pipeline::open_source(model_fixture("mistral_mha_f32"), {}, nullptr, std::string("The cat"));
  CHECK(contains(words.input_problem, "ids: 1 2 3"));  // text needs a tokenizer: type ids
  CHECK(contains(words.default_input, "ids:"));       // the model opens on its own ids
  // Attentions computed elsewhere: the file named, or its folder.
  const fs::path dir = fresh_dir("pipeline_open_source");
  for (const char* f : {"attentions.npy", "tokens.json", "config.json"})
    fs::copy_file(model_fixture("precomputed") / f, dir / f);
  for (const fs::path& path : {dir, dir / "tokens.json", dir / "attentions.npy"}) {
    CAPTURE(path);
    const pipeline::Opened o = pipeline::open_source(path);
    CHECK(o.dir == pipeline::source_dir(path));
    CHECK(o.dir == (path == dir / "attentions.npy" ? path : dir));
    CHECK_FALSE(o.model);
    REQUIRE(o.attentions);
    CHECK(o.attentions->layers > 0);
  }
  // A broken folder is an InputError naming it; cancelled, nothing is returned.
  const fs::path broken = fresh_dir("pipeline_open_broken");
  write_file_atomic(broken / "config.json", "{");
  CHECK(contains(error_of([&] { (void)pipeline::open_source(broken); }), "config.json"));
  std::atomic<bool> cancel{true};
  CHECK_THROWS_AS((void)pipeline::open_source(llama, {}, &cancel), Cancelled);
}
