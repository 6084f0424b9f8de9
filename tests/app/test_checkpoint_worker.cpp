// test_checkpoint_worker.cpp — the window's real-model path without a window: the CheckpointLoader
// (open off the UI thread, progress — polled while a 30 MB checkpoint loads, and model::open's own
// callback — errors, cancel during a load, newest wins), the compute worker's ModelSource
// (a checkpoint's layer instead of the seeded one, the newest layer winning) and the input box's
// "ids: 1 2 3" / text rule (core/model_input.h), and Convert to GQA/MQA on the worker (ModelSource::kv_heads:
// the converted model's layer, each head's drift from the original, the original's pass cached).
#include <atomic>
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <unistd.h>

#include "attnscope/attention/head_stats.h"
#include "attnscope/analysis/model_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/model_input.h"
#include "check.h"
#include "core/checkpoint_loader.h"
#include "core/compute_worker.h"
#include "model/checkpoint_fixtures.h"
#include "test_tmp.h"
#include "worker_results.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;
using namespace std::chrono_literals;

namespace {

// The loader's answer to its newest open(), waiting up to 60 s.
CheckpointResult loaded(CheckpointLoader& loader) {
  loader.wait_until_idle();
  std::optional<CheckpointResult> r = loader.take_result();
  REQUIRE(r.has_value());
  return std::move(*r);
}

ComputeResult next_result(ComputeWorker& worker) {
  REQUIRE(worker.wait_for_result(60s));
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  return std::move(*r);
}

// Layer `layer`'s probabilities of a forward pass, [H, T, T].
Tensor3 layer_probs(const model::ForwardResult& f, int layer) {
  Tensor3 out;
  for (int h = 0; h < f.heads; ++h) out.push_back(f.attention(layer, h));
  return out;
}

// A GPT-2-family checkpoint of random F32 weights, big enough that opening it takes a while (8 layers,
// d_model 256, vocabulary 4096: 100 tensors, about 30 MB), written once per test process into a folder
// of its own (test runs side by side do not share it) and removed at exit.
struct BigCheckpoint {
  std::filesystem::path dir;
  int tensors = 0;  // in its model.safetensors
  ~BigCheckpoint() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};
const BigCheckpoint& big_checkpoint() {
  static BigCheckpoint out;
  if (out.tensors == 0) {
    constexpr int64_t layers = 8, C = 256, F = 4 * C, vocab = 4096, positions = 128;
    out.dir = attnscope::test::test_tmp() / ("loader_big_checkpoint_" + std::to_string(::getpid()));
    std::filesystem::remove_all(out.dir);
    std::filesystem::create_directories(out.dir);
    write_file_atomic(out.dir / "config.json", nlohmann::json{{"model_type", "gpt2"},
                                                              {"n_layer", layers},
                                                              {"n_embd", C},
                                                              {"n_head", 8},
                                                              {"vocab_size", vocab},
                                                              {"n_positions", positions},
                                                              {"layer_norm_epsilon", 1e-5}}
                                                   .dump());
    std::map<std::string, std::vector<int64_t>> shapes{{"wte.weight", {vocab, C}}, {"wpe.weight", {positions, C}},
                                                       {"ln_f.weight", {C}},       {"ln_f.bias", {C}}};
    for (int64_t i = 0; i < layers; ++i) {
      const std::string h = "h." + std::to_string(i) + ".";
      for (const char* norm : {"ln_1", "ln_2"}) shapes[h + norm + ".weight"] = shapes[h + norm + ".bias"] = {C};
      shapes[h + "attn.c_attn.weight"] = {C, 3 * C};  // Conv1D: [in, out]
      shapes[h + "attn.c_attn.bias"] = {3 * C};
      shapes[h + "attn.c_proj.weight"] = {C, C};
      shapes[h + "attn.c_proj.bias"] = {C};
      shapes[h + "mlp.c_fc.weight"] = {C, F};
      shapes[h + "mlp.c_fc.bias"] = {F};
      shapes[h + "mlp.c_proj.weight"] = {F, C};
      shapes[h + "mlp.c_proj.bias"] = {C};
    }
    Rng rng(17);
    std::vector<std::vector<float>> values;  // kept alive until the file is written
    values.reserve(shapes.size());
    std::vector<SafetensorsOutput> tensors;
    for (const auto& [name, shape] : shapes) {
      int64_t count = 1;
      for (int64_t d : shape) count *= d;
      std::vector<float>& v = values.emplace_back(size_t(count));
      for (float& x : v) x = rng.uniform(-0.05f, 0.05f);
      tensors.push_back({name, shape, v.data()});
    }
    write_file_atomic(out.dir / "model.safetensors", serialize_safetensors(tensors, {{"format", "pt"}}));
    out.tensors = int(tensors.size());
  }
  return out;
}

void check_same_top(const std::vector<std::vector<model::NextToken>>& shown, const std::vector<std::vector<model::NextToken>>& want) {
  REQUIRE(shown.size() == want.size());
  for (size_t p = 0; p < want.size(); ++p) {
    REQUIRE(shown[p].size() == want[p].size());
    for (size_t k = 0; k < want[p].size(); ++k) {
      CHECK(shown[p][k].id == want[p][k].id);
      CHECK(shown[p][k].probability == want[p][k].probability);
    }
  }
}

}  // namespace

TEST_CASE("checkpoint loader: opens a fixture off the calling thread with progress up to 1") {
  CheckpointLoader loader;
  const uint64_t generation = loader.open(model_fixture("llama_gqa_bf16_sharded"));
  const CheckpointResult r = loaded(loader);
  CHECK(r.generation == generation);
  REQUIRE_MESSAGE(r.model, r.error);
  CHECK(r.error.empty());
  const auto direct = model::open(model_fixture("llama_gqa_bf16_sharded"));
  CHECK(r.model->config.layers == direct->config.layers);
  CHECK(r.model->config.heads == direct->config.heads);
  CHECK(r.model->config.kv_heads == direct->config.kv_heads);
  CHECK(r.model->parameter_count() == direct->parameter_count());
  CHECK(loader.progress() == 1.0);
  CHECK(r.tokenizer_error.empty());  // this fixture has a tokenizer.json
  CHECK_FALSE(loader.loading());
}

TEST_CASE("checkpoint loader: the sentence on screen is checked against the model as it opens, off the UI thread") {
  CheckpointLoader loader;
  loader.open(model_fixture("llama_gqa_bf16_sharded"), std::string("ids: 1 999999"));
  const CheckpointResult r = loaded(loader);
  REQUIRE_MESSAGE(r.model, r.error);
  CHECK(r.input == std::optional<std::string>("ids: 1 999999"));
  CHECK(r.input_problem == model_input_problem(*r.model, "ids: 1 999999"));
  CHECK_FALSE(r.input_problem.empty());
  CHECK(r.default_input == default_model_input(*r.model));  // what the window puts in its place
  loader.open(model_fixture("llama_gqa_bf16_sharded"));  // no sentence: nothing checked
  const CheckpointResult plain = loaded(loader);
  CHECK_FALSE(plain.input.has_value());
  CHECK(plain.input_problem.empty());
  CHECK(plain.default_input.empty());
}

TEST_CASE("checkpoint loader: a Qwen3-Next checkpoint opens (the views draw its Gated DeltaNet layers signed)") {
  CheckpointLoader loader;
  loader.open(model_fixture("qwen3_next_f32"));
  const CheckpointResult r = loaded(loader);
  CHECK(r.error.empty());
  REQUIRE(r.model != nullptr);
  CHECK(r.model->config.model_type == "qwen3_next");
  CHECK(r.model->config.is_linear_layer(0));
}

TEST_CASE("model::open reports progress once per tensor, increasing, ending at exactly 1") {
  const BigCheckpoint& big = big_checkpoint();
  std::vector<double> calls;
  const auto m = model::open(big.dir, [&](double fraction) { calls.push_back(fraction); });
  REQUIRE(m);
  CHECK(m->config.layers == 8);
  // One call after each tensor is read (model.cpp's loop) and a closing 1.
  REQUIRE(int(calls.size()) == big.tensors + 1);
  CHECK(calls.back() == 1.0);
  CHECK(calls[calls.size() - 2] == 1.0);  // the last tensor completes the bytes exactly
  for (size_t k = 0; k + 2 < calls.size(); ++k) {
    CAPTURE(k);
    CHECK(calls[k] > 0.0);
    CHECK(calls[k] < calls[k + 1]);  // every tensor adds its bytes: strictly increasing up to 1
  }
}

TEST_CASE("checkpoint loader: progress polled during a 30 MB load never decreases, stays in [0, 1] and ends at 1") {
  const BigCheckpoint& big = big_checkpoint();
  CheckpointLoader loader;
  loader.open(big.dir);
  std::vector<double> seen;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (loader.loading() && std::chrono::steady_clock::now() < deadline) {
    seen.push_back(loader.progress());
    std::this_thread::yield();
  }
  REQUIRE_FALSE(loader.loading());
  std::optional<CheckpointResult> r = loader.take_result();
  REQUIRE(r.has_value());
  REQUIRE_MESSAGE(r->model, r->error);
  seen.push_back(loader.progress());  // once the result is there
  CHECK(seen.back() == 1.0);
  const size_t decrease = size_t(std::is_sorted_until(seen.begin(), seen.end()) - seen.begin());
  CHECK_MESSAGE(decrease == seen.size(), "poll " << decrease << " saw less than the poll before it");
  CHECK(*std::min_element(seen.begin(), seen.end()) >= 0.0);
  CHECK(*std::max_element(seen.begin(), seen.end()) <= 1.0);
  // Whether a poll lands strictly between 0 and 1 is left to chance: the weights are used in place, so
  // the 100 tensors take a few milliseconds, which the finiteness scan spends on both cores while the
  // polling thread may wait (CI once saw 8,859 polls, none under way). The callback test above pins each
  // intermediate fraction; this one pins what a frame reads from another thread.
  const auto between = std::count_if(seen.begin(), seen.end(), [](double v) { return v > 0.0 && v < 1.0; });
  MESSAGE("progress polled " << seen.size() << " times, " << between << " of them strictly between 0 and 1");
}

TEST_CASE("model::open stops between tensors once its cancel flag is set") {
  const BigCheckpoint& big = big_checkpoint();
  std::atomic<bool> cancel{false};
  int calls = 0;
  // The flag is set from the progress callback after the third tensor: no timing involved.
  CHECK_THROWS_AS((void)model::open(big.dir, [&](double) { if (++calls == 3) cancel = true; }, &cancel), Cancelled);
  CHECK(calls >= 3);
  CHECK(calls < big.tensors);  // it stopped before the end
}

TEST_CASE("checkpoint loader: cancel() during a load gives no result, loading() false, and the loader goes on") {
  const BigCheckpoint& big = big_checkpoint();
  CheckpointLoader loader;
  loader.open(big.dir);
  // Wait until the first tensors are in (or, on a slow poll, the load is done), then cancel.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  while (loader.progress() == 0.0 && loader.loading() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  loader.cancel();
  const double at_cancel = loader.progress();
  loader.wait_until_idle();
  CHECK_FALSE(loader.loading());
  CHECK_FALSE(loader.take_result().has_value());
  // Where it stopped depends on the scheduler (a late cancel finds the load done, and its result is
  // dropped all the same); the stop between tensors is checked without threads below.
  MESSAGE("cancelled at progress " << at_cancel << "; the load stopped at " << loader.progress());
  // The same loader opens the folder afterwards, to the end.
  loader.open(big.dir);
  const CheckpointResult again = loaded(loader);
  REQUIRE_MESSAGE(again.model, again.error);
  CHECK(loader.progress() == 1.0);
}

TEST_CASE("checkpoint loader: a bad folder gives the engine's message, and the loader goes on") {
  CheckpointLoader loader;
  const auto no_config = copy_fixture("mistral_mha_f32", "loader_no_config");
  std::filesystem::remove(no_config / "config.json");
  loader.open(no_config);
  CheckpointResult r = loaded(loader);
  CHECK_FALSE(r.model);
  CHECK(contains(r.error, "config.json"));

  const auto truncated = copy_fixture("mistral_mha_f32", "loader_truncated");
  std::filesystem::resize_file(truncated / "model.safetensors", std::filesystem::file_size(truncated / "model.safetensors") / 2);
  loader.open(truncated);
  r = loaded(loader);
  CHECK_FALSE(r.model);
  CHECK(contains(r.error, "model.safetensors"));

  loader.open(model_fixture("mistral_mha_f32"));  // the same loader still opens a good one
  r = loaded(loader);
  CHECK(r.model);
  CHECK(!r.tokenizer_error.empty());  // no tokenizer files: the window asks for ids
}

TEST_CASE("checkpoint loader: only the newest open is answered, and cancel leaves no result") {
  CheckpointLoader loader;
  loader.open(model_fixture("gpt2_prefix_f32"));
  const uint64_t newest = loader.open(model_fixture("qwen2_gqa"));
  const CheckpointResult r = loaded(loader);
  CHECK(r.generation == newest);
  REQUIRE(r.model);
  CHECK(r.model->config.model_type == "qwen2");
  CHECK_FALSE(loader.take_result().has_value());

  loader.open(model_fixture("gpt2_prefix_f32"));
  loader.cancel();
  loader.wait_until_idle();
  CHECK_FALSE(loader.take_result().has_value());
}

TEST_CASE("model input: \"ids:\" gives ids; text needs the checkpoint's tokenizer") {
  const auto no_tokenizer = model_fixture("mistral_mha_f32");
  const ModelTokens t = model_tokens_from_input(no_tokenizer, " ids: 3, 7 11");
  CHECK(t.ids == std::vector<int32_t>{3, 7, 11});
  CHECK(t.labels == std::vector<std::string>{"3", "7", "11"});
  CHECK(contains(error_of([&] { model_tokens_from_input(no_tokenizer, "The cat sat"); }), "ids: 1 2 3"));
  CHECK(contains(error_of([&] { model_tokens_from_input(no_tokenizer, "ids: 3 x"); }), "'x' is not a token id"));
  CHECK(contains(error_of([&] { model_tokens_from_input(no_tokenizer, "ids:"); }), "holds no token id"));
}

TEST_CASE("compute worker: a model source gives the checkpoint's layer and its top-5, as the forward pass") {
  const std::string name = "llama_gqa_bf16_sharded";
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  ComputeWorker worker([] {});
  Scene scene;
  worker.submit(scene, ModelSource{m, ids_input(ids), 1});
  const ComputeResult r = next_result(worker);
  REQUIRE_MESSAGE(r.analysis, r.error);
  REQUIRE(r.model_run);
  REQUIRE(r.analysis->attention);
  const AttentionAnalysis& att = *r.analysis->attention;
  CHECK(contains(att.source_note, "layer 1"));
  CHECK(att.shape.heads == m->config.heads);
  CHECK(att.shape.groups == m->config.kv_heads);

  const model::ForwardResult f = model::forward(*m, ids);
  // The probabilities drawn are layer 1's of the full forward pass.
  const int T = int(ids.size());
  float largest = 0;
  for (int h = 0; h < m->config.heads; ++h)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j)
        largest = std::max(largest, std::abs(att.result.probs[size_t(h)](i, j) - f.attention(1, h)(i, j)));
  CHECK(largest <= 1e-6f);
  // Every layer's attentions come with it (the model view), exactly the forward pass's.
  REQUIRE(r.model_run->stack);
  const model::AttentionStack& stack = *r.model_run->stack;
  CHECK(stack.layers == m->config.layers);
  CHECK(stack.heads == m->config.heads);
  CHECK(stack.kv_heads == m->config.kv_heads);
  CHECK(stack.tokens == T);
  CHECK(stack.causal);
  CHECK(stack.ids == ids);
  CHECK(stack.attentions == f.attentions);
  REQUIRE(r.model_run->next.size() == f.top.size());
  for (size_t p = 0; p < f.top.size(); ++p) {
    REQUIRE(r.model_run->next[p].size() == f.top[p].size());
    for (size_t k = 0; k < f.top[p].size(); ++k) {
      CHECK(r.model_run->next[p][k].id == f.top[p][k].id);
      CHECK(r.model_run->next[p][k].probability == f.top[p][k].probability);
    }
  }
  worker.wait_until_idle();
}

TEST_CASE("compute worker: a newer layer wins over an older one still running") {
  const std::string name = "qwen2_gqa";
  const auto m = model::open(model_fixture(name));
  const std::string input = ids_input(fixture_ids(name));
  ComputeWorker worker([] {});
  Scene scene;
  worker.submit(scene, ModelSource{m, input, 0});
  const uint64_t newest = worker.submit(scene, ModelSource{m, input, 1});
  worker.wait_until_idle();
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  CHECK(r->generation == newest);
  REQUIRE_MESSAGE(r->analysis, r->error);
  CHECK(contains(r->analysis->attention->source_note, "layer 1"));
  CHECK(r->model_run->layer == 1);

  // Settings of the seeded layer (the Model window, the colormap) do not rerun the model's forward pass.
  const std::shared_ptr<const Analysis> before = r->analysis;
  Scene other = scene;
  other.model.d_model = 32;
  other.view.colormap = "magma";
  worker.submit(other, ModelSource{m, input, 1});
  worker.wait_until_idle();
  r = worker.take_result();
  REQUIRE(r.has_value());
  CHECK(r->analysis == before);
  CHECK(r->pictures->colormap == Colormap::magma);

  // A layer the model lacks is the engine's message, not a crash.
  worker.submit(scene, ModelSource{m, input, 7});
  worker.wait_until_idle();
  r = worker.take_result();
  REQUIRE(r.has_value());
  CHECK_FALSE(r->analysis);
  CHECK(contains(r->error, "layer 7"));
}

TEST_CASE("compute worker: Convert to GQA/MQA gives the converted model's layer and each head's drift from the original") {
  const std::string name = "llama_gqa_bf16_sharded";  // H = 4, G = 2
  const auto m = model::open(model_fixture(name));
  REQUIRE(m->config.heads == 4);
  REQUIRE(m->config.kv_heads == 2);
  const std::vector<int32_t> ids = fixture_ids(name);
  const std::string input = ids_input(ids);
  const int layer = 1;
  const model::ForwardResult original = model::forward(*m, ids);
  const model::ForwardResult mqa = model::forward(*model::convert_kv_heads(*m, 1), ids);
  ComputeWorker worker([] {});

  // Pooled to MQA: the probabilities, every layer's stack and the next tokens are the converted model's.
  ComputeResult r = settled(worker, ModelSource{m, input, layer, 1});
  REQUIRE_MESSAGE(r.analysis, r.error);
  REQUIRE(r.model_run);
  const AttentionAnalysis& att = *r.analysis->attention;
  CHECK(att.shape.groups == 1);
  CHECK(contains(att.source_note, "K/V pooled from 2 heads"));
  CHECK(att.result.probs == layer_probs(mqa, layer));
  REQUIRE(r.model_run->stack);
  CHECK(r.model_run->stack->kv_heads == 1);
  CHECK(r.model_run->stack->attentions == mqa.attentions);
  check_same_top(r.model_run->next, mqa.top);
  CHECK(att.result.probs != layer_probs(original, layer));  // pooling moved something
  // The original's run of the same layer comes with it, and the drift is measured against it.
  REQUIRE(r.original_run);
  CHECK(r.original_run->analysis.attention->shape.groups == 2);
  CHECK(r.original_run->analysis.attention->result.probs == layer_probs(original, layer));
  check_same_top(r.original_run->next, original.top);
  REQUIRE_MESSAGE(r.stats, r.stats_error);
  const std::vector<double> drift = head_drift(layer_probs(mqa, layer), layer_probs(original, layer));
  CHECK(r.stats->drift_from_mha == drift);
  CHECK(*std::max_element(drift.begin(), drift.end()) > 0);
  CHECK(worker.forward_passes() == 2);  // the converted model and the original

  // At the checkpoint's own G nothing is pooled: the original's layer, drift exactly 0, no new pass.
  r = settled(worker, ModelSource{m, input, layer, 2});
  REQUIRE_MESSAGE(r.analysis, r.error);
  CHECK(r.analysis->attention->shape.groups == 2);
  CHECK(r.analysis->attention->result.probs == layer_probs(original, layer));
  REQUIRE_MESSAGE(r.stats, r.stats_error);
  CHECK(r.stats->drift_from_mha == std::vector<double>(4, 0.0));
  CHECK(worker.forward_passes() == 2);

  // Back to MQA: only the converted model runs again; the original's pass is the cached one.
  const std::shared_ptr<const ModelLayerRun> cached = r.original_run;
  r = settled(worker, ModelSource{m, input, layer, 1});
  REQUIRE_MESSAGE(r.stats, r.stats_error);
  CHECK(r.stats->drift_from_mha == drift);
  CHECK(r.original_run == cached);
  CHECK(worker.forward_passes() == 3);

  // As trained (0): no drift to show, and still no new pass.
  r = settled(worker, ModelSource{m, input, layer, 0});
  REQUIRE_MESSAGE(r.stats, r.stats_error);
  CHECK(r.stats->drift_from_mha.empty());
  CHECK_FALSE(r.original_run);
  CHECK(r.analysis->attention->result.probs == layer_probs(original, layer));
  CHECK(worker.forward_passes() == 3);

  // Another layer needs the original's pass again (and the converted one).
  r = settled(worker, ModelSource{m, input, 0, 1});
  REQUIRE_MESSAGE(r.stats, r.stats_error);
  CHECK(r.stats->drift_from_mha == head_drift(layer_probs(mqa, 0), layer_probs(original, 0)));
  CHECK(worker.forward_passes() == 5);

  // A K/V count that does not divide the checkpoint's G is the engine's message, not a crash.
  r = settled(worker, ModelSource{m, input, layer, 4});
  CHECK_FALSE(r.analysis);
  CHECK(contains(r.error, "divisor"));
}

TEST_CASE("compute worker: an attentions file's layer is drawn from the file, its model view kept across layers") {
  const std::filesystem::path dir = model_fixture("precomputed");
  CheckpointLoader loader;
  loader.open(dir / "tokens.json");  // any file of the folder: the folder's attentions
  const CheckpointResult opened = loaded(loader);
  REQUIRE_MESSAGE(opened.attentions, opened.error);
  CHECK_FALSE(opened.model);
  CHECK(opened.dir == std::filesystem::canonical(dir));  // the folder, absolute
  const std::shared_ptr<const model::AttentionStack> stack = opened.attentions;
  ComputeWorker worker([] {});
  ModelSource source;
  source.attentions = stack;
  source.layer = 1;
  const ComputeResult first = settled(worker, source);
  REQUIRE_MESSAGE(first.analysis, first.error);
  CHECK(worker.forward_passes() == 0);  // no model runs
  REQUIRE(first.model_run);
  CHECK(first.model_run->stack == stack);
  CHECK(first.model_run->next.empty());
  const Analysis expected = layer_analysis(*stack, 1);
  REQUIRE(first.analysis->attention);
  REQUIRE(first.analysis->attention->result.probs.size() == expected.attention->result.probs.size());
  for (size_t h = 0; h < expected.attention->result.probs.size(); ++h)
    CHECK(first.analysis->attention->result.probs[h] == expected.attention->result.probs[h]);
  REQUIRE(first.model_view);
  REQUIRE(first.head_patterns);
  // Layer 0 of the same file: a new layer, the same stack, so the same model view and scores.
  source.layer = 0;
  const ComputeResult second = settled(worker, source);
  REQUIRE_MESSAGE(second.analysis, second.error);
  CHECK(second.model_run->layer == 0);
  CHECK(second.model_view == first.model_view);
  CHECK(second.head_patterns == first.head_patterns);
  // A layer the file does not have is the engine's message.
  source.layer = 2;
  worker.submit(Scene{}, source);
  const ComputeResult bad = next_result(worker);
  CHECK(contains(bad.error, "layer 2 does not exist: this model has 2 layers"));
}
