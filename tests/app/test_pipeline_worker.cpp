// test_pipeline_worker.cpp — the window's worker and the command line run the same engine pipeline
// (attnscope/pipeline/pipeline.h): one request of the worker makes its tokens once and each forward once
// over both deliveries, and `attnscope compute --checkpoint` writes exactly what the worker shows for the
// same checkpoint, text, layer and K/V count.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/forward.h"
#include "check.h"
#include "core/compute_worker.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

ComputeResult settled_result(ComputeWorker& worker, const ModelSource& source) {
  worker.submit(Scene{}, source);
  worker.wait_until_idle();
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  return std::move(*r);
}

std::vector<float> flat(const Tensor3& t) {
  std::vector<float> out;
  for (const Mat& m : t)
    for (int i = 0; i < m.rows(); ++i)
      for (int j = 0; j < m.cols(); ++j) out.push_back(m(i, j));
  return out;
}

}  // namespace

TEST_CASE("compute worker: one request makes its tokens once and each forward once, over both deliveries") {
  const auto m = model::open(model_fixture("llama_gqa_bf16_sharded"));
  ComputeWorker worker([] {});
  const ComputeResult r = settled_result(worker, ModelSource{m, "the cat sat on the mat", 1, 1});
  REQUIRE_MESSAGE(r.analysis, r.error);
  REQUIRE_MESSAGE(r.stats, r.stats_error);
  REQUIRE(r.pipeline_result);
  const pipeline::Counters& c = r.pipeline_result->counters;
  // Before the pipeline the worker tokenized this text for the converted pass and again for the
  // original's, loading the tokenizer twice each time.
  CHECK(c.tokenizer_loads == 1);
  CHECK(c.tokenizations == 1);
  CHECK(c.forwards == 1);
  CHECK(c.original_forwards == 1);
  CHECK(c.steps_run == std::vector<pipeline::Step>{pipeline::Step::head_patterns, pipeline::Step::head_statistics});
  CHECK(worker.forward_passes() == 2);
  // Every view reads the one result.
  CHECK(r.analysis == r.pipeline_result->analysis);
  CHECK(r.model_run == r.pipeline_result->run);
  CHECK(r.original_run == r.pipeline_result->original_run);
  CHECK(r.head_patterns == r.pipeline_result->head_patterns);
  CHECK(r.stats == r.pipeline_result->head_stats);
  // A view-only change reuses the whole result: nothing is tokenized or run again.
  Scene magma;
  magma.view.colormap = "magma";
  worker.submit(magma, ModelSource{m, "the cat sat on the mat", 1, 1});
  worker.wait_until_idle();
  const std::optional<ComputeResult> again = worker.take_result();
  REQUIRE(again.has_value());
  CHECK(again->pipeline_result == r.pipeline_result);
  CHECK(worker.forward_passes() == 2);
}

TEST_CASE("compute worker and `attnscope compute --checkpoint` give the same result for the same request") {
  const std::string name = "llama_gqa_bf16_sharded";
  const auto m = model::open(model_fixture(name));
  const std::string text = "the cat sat on the mat";
  for (const int kv_heads : {0, 1}) {
    CAPTURE(kv_heads);
    ComputeWorker worker([] {});
    const ComputeResult r = settled_result(worker, ModelSource{m, text, 1, kv_heads});
    REQUIRE_MESSAGE(r.analysis, r.error);
    const fs::path out = fresh_dir("pipeline_cli_" + std::to_string(kv_heads));
    const CliRun cli = run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --text " + shell_quote(text) +
                               " --layer 1" + (kv_heads > 0 ? " --kv-heads " + std::to_string(kv_heads) : "") +
                               " --out " + quoted(out));
    REQUIRE_MESSAGE(cli.exit_code == 0, cli.err);
    const nlohmann::json tokens = nlohmann::json::parse(read_file(out / "tokens.json", 1 << 20));
    CHECK(tokens["ids"].get<std::vector<int32_t>>() == r.pipeline_result->tokens->ids);
    CHECK(tokens["labels"].get<std::vector<std::string>>() == r.pipeline_result->tokens->labels);
    const model::AttentionStack& stack = *r.model_run->stack;
    const NpyArray attentions = read_npy(out / "attentions.npy", 4);
    CHECK(attentions.shape == std::vector<int64_t>{stack.layers, stack.heads, stack.tokens, stack.tokens});
    CHECK(attentions.data == stack.attentions);
    const NpyArray probs = read_npy(out / "probs.npy");
    CHECK(probs.data == flat(r.analysis->attention->result.probs));
    REQUIRE(tokens["next"].size() == r.model_run->next.size());
    for (size_t p = 0; p < r.model_run->next.size(); ++p)
      for (size_t k = 0; k < r.model_run->next[p].size(); ++k) {
        CHECK(tokens["next"][p][k]["id"].get<int32_t>() == r.model_run->next[p][k].id);
        CHECK(tokens["next"][p][k]["probability"].get<float>() == r.model_run->next[p][k].probability);
      }
  }
}

TEST_CASE("compute worker: text for a checkpoint without a tokenizer is refused in the words the window gives") {
  // The window passes its translation of the message (app_state.cpp); "{}" becomes the loader's reason.
  const auto m = model::open(model_fixture("mistral_mha_f32"));  // no tokenizer files in the folder
  ComputeWorker worker([] {});
  ModelSource source{m, "the cat sat", 0, 0};
  const ComputeResult english = settled_result(worker, source);
  CHECK(english.error.find("this checkpoint has no tokenizer") != std::string::npos);
  source.no_tokenizer = "此检查点没有分词器（{}）";
  const ComputeResult chinese = settled_result(worker, source);
  CHECK(chinese.error.find("此检查点没有分词器（") == 0);
  CHECK(chinese.error.find("{}") == std::string::npos);
  CHECK(chinese.error.find("tokenizer.json") != std::string::npos);  // the reason names the files looked for
  CHECK_FALSE(chinese.analysis);
}

TEST_CASE("compute worker: the Heads view's \"why\" cell runs the qk_attribution step; another cell costs no forward") {
  const std::string name = "gpt2_prefix_f32";
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  std::string input = "ids:";
  for (int32_t id : ids) input += " " + std::to_string(id);
  const int T = int(ids.size());
  ComputeWorker worker([] {});
  ModelSource source{m, input, 1, 0};
  const ComputeResult plain = settled_result(worker, source);
  REQUIRE_MESSAGE(plain.pipeline_result, plain.error);
  CHECK_FALSE(plain.pipeline_result->qk_attribution);
  const int before = worker.forward_passes();
  // The panel opens on a cell: the same pass, the attribution's own traced forward once.
  source.qk = model::QkCell{1, 2, T - 1, T - 3};
  const ComputeResult first = settled_result(worker, source);
  REQUIRE(first.pipeline_result);
  REQUIRE_MESSAGE(first.pipeline_result->qk_attribution, first.pipeline_result->qk_attribution_error);
  const model::QkAttribution& a = *first.pipeline_result->qk_attribution;
  CHECK(a.cell == *source.qk);
  CHECK(std::abs(a.sum() - double(a.score)) <= 1e-4 * std::max(1e-2, std::abs(double(a.score))));
  CHECK(first.model_run == plain.model_run);  // the heads' pass is not run again
  CHECK(worker.forward_passes() == before + 1);
  // Another cell of the same layer: the step alone, from the kept forward.
  source.qk = model::QkCell{1, 0, T - 2, 0};
  const ComputeResult second = settled_result(worker, source);
  REQUIRE(second.pipeline_result);
  REQUIRE(second.pipeline_result->qk_attribution);
  CHECK(second.pipeline_result->qk_attribution->cell == *source.qk);
  CHECK(worker.forward_passes() == before + 1);
  // A masked key: the engine's reason, no attribution, the heatmaps as before.
  source.qk = model::QkCell{1, 0, 1, 3};
  const ComputeResult masked = settled_result(worker, source);
  REQUIRE(masked.pipeline_result);
  CHECK_FALSE(masked.pipeline_result->qk_attribution);
  CHECK(contains(masked.pipeline_result->qk_attribution_error, "key 3 is not seen by query 1"));
  CHECK(masked.analysis == plain.analysis);
  // The panel closed: the last pass as it was, nothing run.
  source.qk.reset();
  const ComputeResult closed = settled_result(worker, source);
  CHECK(closed.model_run == plain.model_run);
  CHECK(worker.forward_passes() == before + 1);
}
