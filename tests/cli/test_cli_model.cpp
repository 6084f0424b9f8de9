// End-to-end tests of the real-model command line: compute --checkpoint (ids and text), export of a
// checkpoint layer and of attentions computed elsewhere (README's snippet format), and bad input
// (exit 2, one "error:" line naming the problem, no file left behind).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p, 1 << 24)); }

// Runs a command that must fail: exit 2, one "error:" line containing `message`, nothing in `out`.
void check_refused(const std::string& args, const std::string& message, const fs::path& out) {
  CAPTURE(args);
  const CliRun r = run_cli(args);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "error: "));
  CHECK(contains(r.err, message));
  CHECK(count_files(out) == 0);
}

}  // namespace

TEST_CASE("cli model: compute --checkpoint --ids writes the attentions, logits and tokens PyTorch gives") {
  const fs::path out = fresh_dir("cli_model_compute");
  const auto ids = fixture_ids("llama_gqa_bf16_sharded");
  const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture("llama_gqa_bf16_sharded")) + " --ids " +
                           ids_arg(ids) + " --out " + quoted(out));
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "llama_gqa_bf16_sharded (llama, 2 layers, 4 heads, 2 kv heads): 12 tokens"));
  const NpyArray att = read_npy(out / "attentions.npy", 4);
  CHECK(att.shape == std::vector<int64_t>{2, 4, 12, 12});
  CHECK(max_diff(att.data, fixture_reference("llama_gqa_bf16_sharded", "attentions").values) <= 1e-5);
  const NpyArray logits = read_npy(out / "logits.npy");
  CHECK(logits.shape == std::vector<int64_t>{12, 64});
  CHECK(max_diff(logits.data, fixture_reference("llama_gqa_bf16_sharded", "logits").values) <= 1e-4);
  const auto tokens = read_json(out / "tokens.json");
  CHECK(tokens["ids"].get<std::vector<int32_t>>() == ids);
  CHECK(tokens["labels"].size() == ids.size());
  REQUIRE(tokens["next"].size() == ids.size());
  CHECK(tokens["next"][0].size() == 5);
  const auto model = read_json(out / "model.json");
  CHECK(model["kv_heads"] == 2);
  CHECK(model["weights_dtype"] == "BF16");
  // how the weights are held (model.h WeightPacking): read in place, packed by the second forward
  const auto opened = attnscope::model::open(model_fixture("llama_gqa_bf16_sharded"));
  CHECK(model["weights_in_memory"] == attnscope::model::packing_text(opened->weights->packing));
  CHECK(contains(model["weights_in_memory"].get<std::string>(),
                 attnscope::model::PackedMatrix::fast_in_place ? "made by the second forward" : "made at load"));
  CHECK(!fs::exists(out / "probs.npy"));
}

// `compute --checkpoint` on a fixture's ids with --layer 1 into out/<fixture>: exit 0, the summary line,
// and every layer's attentions (≤ 1e-5) and the logits (≤ 1e-4 relative) equal to its PyTorch reference.
static void check_compute_matches_reference(const fs::path& out, const char* fixture, const char* summary) {
  CAPTURE(fixture);
  const auto ids = fixture_ids(fixture);
  const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture(fixture)) + " --ids " + ids_arg(ids) +
                           " --layer 1 --out " + quoted(out / fixture));
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, summary));
  CHECK(max_diff(read_npy(out / fixture / "attentions.npy", 4).data, fixture_reference(fixture, "attentions").values) <= 1e-5);
  const auto ref_logits = fixture_reference(fixture, "logits").values;
  double scale = 1;
  for (float v : ref_logits) scale = std::max(scale, double(std::abs(v)));
  CHECK(max_diff(read_npy(out / fixture / "logits.npy").data, ref_logits) <= 1e-4 * scale);
}

TEST_CASE("cli model: compute --checkpoint on Qwen3 and Phi-3 gives PyTorch's attentions and logits") {
  const fs::path out = fresh_dir("cli_model_qwen3_phi3");
  struct Case {
    const char* fixture;
    const char* summary;
    const char* dtype;
    const char* type;
  };
  for (const Case& c : {Case{"qwen3_gqa_bf16_tied", "qwen3_gqa_bf16_tied (qwen3, 2 layers, 4 heads, 2 kv heads): 12 tokens", "BF16", "qwen3"},
                        Case{"phi3_gqa_f16_sharded", "phi3_gqa_f16_sharded (phi3, 2 layers, 4 heads, 2 kv heads): 10 tokens", "F16", "phi3"},
                        Case{"phi3_mha_long_f32", "phi3_mha_long_f32 (phi3, 3 layers, 4 heads, 4 kv heads): 40 tokens", "F32", "phi3"}}) {
    check_compute_matches_reference(out, c.fixture, c.summary);
    const auto model = read_json(out / c.fixture / "model.json");
    CHECK(model["model_type"] == c.type);
    CHECK(model["weights_dtype"] == c.dtype);
  }
  // Qwen3's q after its norm and RoPE, as the layer's q.npy.
  const NpyArray q3 = read_npy(out / "qwen3_gqa_bf16_tied" / "q.npy");
  CHECK(q3.shape == std::vector<int64_t>{4, 12, 12});  // [H, T, head_dim 12]
  // The checkpoint's own tokenizer: Qwen-style adds nothing, Phi-3's (Llama-2 style) puts <s> first.
  REQUIRE(run_cli("compute --checkpoint " + quoted(model_fixture("qwen3_gqa_bf16_tied")) + " --text 'the cat' --out " +
                  quoted(out / "qwen3_text")).exit_code == 0);
  CHECK(read_json(out / "qwen3_text" / "tokens.json")["labels"].size() == 2);
  REQUIRE(run_cli("compute --checkpoint " + quoted(model_fixture("phi3_gqa_f16_sharded")) + " --text 'the cat' --out " +
                  quoted(out / "phi3_text")).exit_code == 0);
  CHECK(read_json(out / "phi3_text" / "tokens.json")["ids"][0] == 1);
  // Export: the model view of every layer, and Qwen3's layer pooled to MQA (framed as one group).
  const std::string base = "export --checkpoint " + quoted(model_fixture("qwen3_gqa_bf16_tied")) + " --ids " +
                           ids_arg(fixture_ids("qwen3_gqa_bf16_tied"));
  CliRun r = run_cli(base + " --what model --format npy --out " + quoted(out / "qwen3_model.npy"));
  REQUIRE(r.exit_code == 0);
  CHECK(max_diff(read_npy(out / "qwen3_model.npy", 4).data, fixture_reference("qwen3_gqa_bf16_tied", "attentions").values) <= 1e-5);
  r = run_cli(base + " --layer 1 --kv-heads 1 --what heads --format svg --out " + quoted(out / "qwen3_mqa.svg"));
  REQUIRE(r.exit_code == 0);
  const std::string svg = read_file(out / "qwen3_mqa.svg", 1 << 24);
  CHECK(contains(svg, "K/V pooled from 2 heads"));
  CHECK(contains(svg, "head 3 · kv group 0"));
}

TEST_CASE("cli model: compute --checkpoint opens smollm3, gemma2 and gemma3_text and matches PyTorch past the window") {
  for (const std::string name : {"smollm3_nope_bf16", "gemma2_softcap_f32", "gemma3_local_global_bf16"}) {
    CAPTURE(name);
    const fs::path out = fresh_dir("cli_model_families") / name;
    const auto ids = fixture_ids(name);  // 12 tokens: longer than the Gemma fixtures' windows (5 and 4)
    const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids) +
                             " --layer 0 --out " + quoted(out));
    REQUIRE(r.exit_code == 0);
    const NpyArray att = read_npy(out / "attentions.npy", 4);
    CHECK(max_diff(att.data, fixture_reference(name, "attentions").values) <= 1e-5);
    const auto ref_logits = fixture_reference(name, "logits").values;
    double scale = 1;
    for (float v : ref_logits) scale = std::max(scale, double(std::abs(v)));
    CHECK(max_diff(read_npy(out / "logits.npy").data, ref_logits) <= 1e-4 * scale);
    // The scores the file holds are the masked, soft-capped ones: −inf outside a sliding window.
    if (name != "smollm3_nope_bf16") CHECK(std::isinf(read_npy(out / "scores.npy").data[size_t(11 * 12 + 0)]));
    // And through the checkpoint's own tokenizer.
    REQUIRE(run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --text 'the cat sat on the mat' --out " +
                    quoted(out / "text")).exit_code == 0);
    CHECK(read_json(out / "text" / "tokens.json")["labels"].size() >= 6);
  }
}

TEST_CASE("cli model: compute --checkpoint opens Llama 3's and Phi-4-mini's RoPE, and bad rope settings exit 2") {
  const fs::path out = fresh_dir("cli_model_rope");
  for (const std::string name : {"llama32_1b_llama3rope_bf16", "phi4mini_partial_longrope_bf16"}) {
    CAPTURE(name);
    const auto more = fixture_more_ids(name);  // 20 tokens: past Phi's original_max_position_embeddings (16)
    REQUIRE(!more.empty());
    const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(more[0]) +
                             " --layer 0 --out " + quoted(out / name));
    REQUIRE(r.exit_code == 0);
    CHECK(max_diff(read_npy(out / name / "attentions.npy", 4).data, fixture_reference(name, "more.0.attentions").values) <= 1e-5);
  }
  const fs::path bad_out = fresh_dir("cli_model_rope_bad");
  auto refused_with = [&](const std::string& fixture, const std::function<void(nlohmann::json&)>& edit,
                          const std::string& message) {
    const fs::path dir = copy_fixture(fixture, "cli_rope_bad");
    nlohmann::json cfg = read_json(dir / "config.json");
    edit(cfg);
    write_file_atomic(dir / "config.json", cfg.dump());
    check_refused("compute --checkpoint " + quoted(dir) + " --ids 1,2 --out " + quoted(bad_out / "x"), message, bad_out);
    check_refused("compute --checkpoint " + quoted(dir) + " --ids 1,2 --out " + quoted(bad_out / "x"), "config.json", bad_out);
  };
  refused_with("phi35_longrope_bf16", [](nlohmann::json& c) { c["rope_scaling"]["long_factor"].erase(0); },
               "\"long_factor\" lists 7 factors; it must list one per rotated pair, rotary width / 2 = 8");
  refused_with("llama32_1b_llama3rope_bf16", [](nlohmann::json& c) { c["rope_scaling"]["rope_type"] = "llama4"; },
               "rope type \"llama4\", which attnscope does not implement (supported: default, linear, dynamic, yarn, "
               "llama3, longrope)");
  refused_with("llama32_1b_llama3rope_bf16", [](nlohmann::json& c) { c["rope_scaling"].erase("low_freq_factor"); },
               "\"rope_scaling\" of rope type \"llama3\" has no \"low_freq_factor\"");
}

TEST_CASE("cli model: compute --checkpoint on DeepSeek-V2 and V3 (MLA, experts) gives PyTorch's attentions and logits") {
  const fs::path out = fresh_dir("cli_model_deepseek");
  struct Case {
    const char* fixture;
    const char* summary;
    const char* dtype;
  };
  for (const Case& c : {Case{"deepseek_v2_mla_moe_bf16", "deepseek_v2_mla_moe_bf16 (deepseek_v2, 2 layers, 4 heads, 4 kv heads): 12 tokens", "BF16"},
                        Case{"deepseek_v3_mla_noaux_f32_sharded", "deepseek_v3_mla_noaux_f32_sharded (deepseek_v3, 3 layers, 4 heads, 4 kv heads): 40 tokens", "F32"}}) {
    check_compute_matches_reference(out, c.fixture, c.summary);
    CHECK(read_json(out / c.fixture / "model.json")["weights_dtype"] == c.dtype);
  }
  // Every head's own keys: q and k are [H, T, nope + rope], v is [H, T, v_head_dim].
  CHECK(read_npy(out / "deepseek_v2_mla_moe_bf16" / "q.npy").shape == std::vector<int64_t>{4, 12, 16});
  CHECK(read_npy(out / "deepseek_v2_mla_moe_bf16" / "k.npy").shape == std::vector<int64_t>{4, 12, 16});
  CHECK(read_npy(out / "deepseek_v2_mla_moe_bf16" / "v.npy").shape == std::vector<int64_t>{4, 12, 6});
  // The checkpoint's own tokenizer (BOS first, as DeepSeek's adds it).
  REQUIRE(run_cli("compute --checkpoint " + quoted(model_fixture("deepseek_v2_mla_moe_bf16")) + " --text 'the cat' --out " +
                  quoted(out / "v2_text")).exit_code == 0);
  CHECK(read_json(out / "v2_text" / "tokens.json")["ids"][0] == 1);
  // MLA has no K/V heads to pool.
  check_refused("compute --checkpoint " + quoted(model_fixture("deepseek_v2_mla_moe_bf16")) + " --ids 1,2 --kv-heads 2 --out " +
                    quoted(out / "pooled" / "x"),
                "uses multi-head latent attention: it has no K/V heads to pool", out / "pooled");
}

TEST_CASE("cli model: compute --checkpoint on Qwen3-MoE, OLMoE, Granite and GraniteMoE gives PyTorch's attentions and logits") {
  const fs::path out = fresh_dir("cli_model_moe");
  for (const auto& [fixture, summary] :
       std::vector<std::pair<const char*, const char*>>{
           {"qwen3_moe_30b_a3b_bf16", "qwen3_moe_30b_a3b_bf16 (qwen3_moe, 2 layers, 4 heads, 2 kv heads): 20 tokens"},
           {"qwen3_moe_sparse_step_f32", "qwen3_moe_sparse_step_f32 (qwen3_moe, 4 layers, 4 heads, 1 kv heads): 20 tokens"},
           {"olmoe_1b_7b_bf16", "olmoe_1b_7b_bf16 (olmoe, 2 layers, 4 heads, 4 kv heads): 20 tokens"},
           {"granitemoe_31_1b_bf16", "granitemoe_31_1b_bf16 (granitemoe, 2 layers, 4 heads, 2 kv heads): 20 tokens"},
           {"granite_dense_f16", "granite_dense_f16 (granite, 2 layers, 4 heads, 1 kv heads): 20 tokens"}})
    check_compute_matches_reference(out, fixture, summary);
  // OLMoE's k_norm spans every key head together: no pooling.
  check_refused("compute --checkpoint " + quoted(model_fixture("olmoe_1b_7b_bf16")) + " --ids 1,2 --kv-heads 2 --out " +
                    quoted(out / "pooled" / "x"),
                "olmoe normalises its keys over all 4 key heads together", out / "pooled");
}

TEST_CASE("cli model: --layer N adds that layer's probs, scores, q, k, v and output") {
  const fs::path out = fresh_dir("cli_model_layer");
  const auto ids = fixture_ids("gpt2_prefix_f32");
  const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture("gpt2_prefix_f32")) + " --ids " + ids_arg(ids) +
                           " --layer 1 --out " + quoted(out));
  REQUIRE(r.exit_code == 0);
  CHECK(read_npy(out / "probs.npy").shape == std::vector<int64_t>{4, 12, 12});
  CHECK(read_npy(out / "scores.npy").shape == std::vector<int64_t>{4, 12, 12});
  CHECK(read_npy(out / "q.npy").shape == std::vector<int64_t>{4, 12, 4});
  CHECK(read_npy(out / "k.npy").shape == std::vector<int64_t>{4, 12, 4});
  CHECK(read_npy(out / "v.npy").shape == std::vector<int64_t>{4, 12, 4});
  CHECK(max_diff(read_npy(out / "output.npy").data, fixture_reference("gpt2_prefix_f32", "detail.output").values) <=
        1e-4);
  // Layer 1's probs are the second block of the attention stack.
  const NpyArray att = read_npy(out / "attentions.npy", 4);
  const std::vector<float> layer1(att.data.begin() + 4 * 144, att.data.end());
  CHECK(read_npy(out / "probs.npy").data == layer1);
  // and the layer's trace, as the Shapes view draws it: its heads, width and length, a probabilities step
  // of [H, T, T], and 2·G·d_k floats of cache a token
  const auto trace = read_json(out / "trace.json");
  CHECK(trace.at("settings").at("heads") == 4);
  CHECK(trace.at("settings").at("tokens") == 12);
  bool probs_step = false;
  for (const auto& step : trace.at("steps")) probs_step |= step.at("shape") == std::vector<int64_t>{4, 12, 12};
  CHECK(probs_step);
  CHECK(trace.at("kv_cache_bytes_per_token_per_layer").at("fp32") == 2 * 4 * 4 * 4);
}

TEST_CASE("cli model: --text runs the checkpoint's own tokenizer, with its special tokens unless told not to") {
  const fs::path out = fresh_dir("cli_model_text");
  const std::string dir = quoted(model_fixture("llama_gqa_bf16_sharded"));
  REQUIRE(run_cli("compute --checkpoint " + dir + " --text 'the cat sat on the mat.' --out " + quoted(out / "bos")).exit_code == 0);
  REQUIRE(run_cli("compute --checkpoint " + dir + " --text 'the cat sat on the mat.' --no-special-tokens --out " +
                  quoted(out / "plain")).exit_code == 0);
  const auto bos = read_json(out / "bos" / "tokens.json"), plain = read_json(out / "plain" / "tokens.json");
  const auto bos_ids = bos["ids"].get<std::vector<int32_t>>(), plain_ids = plain["ids"].get<std::vector<int32_t>>();
  REQUIRE(bos_ids.size() == plain_ids.size() + 1);
  CHECK(bos_ids.front() == 1);  // <s>, from the files' TemplateProcessing
  CHECK(std::vector<int32_t>(bos_ids.begin() + 1, bos_ids.end()) == plain_ids);
  CHECK(plain["labels"][0] == "the");
  // The same ids through --ids give the same attentions.
  REQUIRE(run_cli("compute --checkpoint " + dir + " --ids " + ids_arg(plain_ids) + " --out " + quoted(out / "ids")).exit_code == 0);
  CHECK(read_npy(out / "ids" / "attentions.npy", 4).data == read_npy(out / "plain" / "attentions.npy", 4).data);
  // Qwen2-style files add nothing.
  REQUIRE(run_cli("compute --checkpoint " + quoted(model_fixture("qwen2_gqa")) + " --text 'the cat' --out " +
                  quoted(out / "qwen")).exit_code == 0);
  CHECK(read_json(out / "qwen" / "tokens.json")["labels"].size() == 2);  // "the", " cat"
}

TEST_CASE("cli model: export a checkpoint layer's heads, and a converted model's") {
  const fs::path out = fresh_dir("cli_model_export");
  const auto ids = fixture_ids("qwen2_gqa");
  const std::string base = "export --checkpoint " + quoted(model_fixture("qwen2_gqa")) + " --ids " + ids_arg(ids);
  CliRun r = run_cli(base + " --layer 1 --what heads --format npy --out " + quoted(out / "l1.npy"));
  REQUIRE(r.exit_code == 0);
  const auto ref = fixture_reference("qwen2_gqa", "attentions").values;
  CHECK(max_diff(read_npy(out / "l1.npy").data, std::vector<float>(ref.begin() + 4 * 144, ref.end())) <= 1e-5);
  r = run_cli(base + " --layer 0 --what heads --format png --scale 2 --out " + quoted(out / "l0.png"));
  REQUIRE(r.exit_code == 0);
  CHECK(fs::file_size(out / "l0.png") > 1000);
  r = run_cli(base + " --layer 0 --what head:2 --scores --format csv --out " + quoted(out / "h2.csv"));
  REQUIRE(r.exit_code == 0);
  CHECK(contains(read_file(out / "h2.csv", 1 << 20), "-inf"));  // masked scores
  r = run_cli(base + " --layer 0 --kv-heads 1 --what heads --format svg --out " + quoted(out / "mqa.svg"));
  REQUIRE(r.exit_code == 0);
  const std::string svg = read_file(out / "mqa.svg", 1 << 24);
  CHECK(contains(svg, "K/V pooled from 2 heads"));
  CHECK(contains(svg, "head 3 · kv group 0"));
}

TEST_CASE("cli model: export --what model draws every layer's heads, and its .npy is compute's attentions") {
  const fs::path out = fresh_dir("cli_model_view");
  const auto ids = fixture_ids("qwen2_gqa");
  const std::string base = "export --checkpoint " + quoted(model_fixture("qwen2_gqa")) + " --ids " + ids_arg(ids) + " --what model";
  CliRun r = run_cli(base + " --format npy --out " + quoted(out / "all.npy"));
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "model view of qwen2_gqa: 2 layers x 4 heads"));
  const NpyArray all = read_npy(out / "all.npy", 4);
  CHECK(all.shape == std::vector<int64_t>{2, 4, 12, 12});
  CHECK(max_diff(all.data, fixture_reference("qwen2_gqa", "attentions").values) <= 1e-5);
  r = run_cli(base + " --format svg --out " + quoted(out / "view.svg"));
  REQUIRE(r.exit_code == 0);
  const std::string svg = read_file(out / "view.svg", 1 << 24);
  for (const char* title : {">0.0<", ">0.3<", ">1.0<", ">1.3<"}) CHECK(contains(svg, title));
  CHECK(contains(svg, "2 K/V heads (GQA, 2 heads per K/V head)"));
  r = run_cli(base + " --format png --scale 2 --out " + quoted(out / "view.png"));
  REQUIRE(r.exit_code == 0);
  CHECK(fs::file_size(out / "view.png") > 1000);
  // The precomputed format gives the same view.
  const fs::path dir = model_fixture("precomputed");
  r = run_cli("export --attentions " + quoted(dir / "attentions.npy") + " --tokens " + quoted(dir / "tokens.json") + " --config " +
              quoted(dir / "config.json") + " --what model --format npy --out " + quoted(out / "file.npy"));
  REQUIRE(r.exit_code == 0);
  CHECK(read_npy(out / "file.npy", 4).shape == std::vector<int64_t>{2, 4, 12, 12});

  const fs::path none = fresh_dir("cli_model_view_refused");
  check_refused("export --what model --format png --text hi --out " + quoted(none / "a.png"), "give --checkpoint DIR", none);
  check_refused(base + " --layer 1 --format png --out " + quoted(none / "b.png"), "leave out --layer", none);
  check_refused(base + " --format csv --out " + quoted(none / "c.csv"), "no CSV", none);
}

TEST_CASE("cli model: attentions computed elsewhere (README's snippet format) export end to end") {
  const fs::path out = fresh_dir("cli_model_precomputed");
  const fs::path dir = model_fixture("precomputed");
  const std::string base = "export --attentions " + quoted(dir / "attentions.npy") + " --tokens " + quoted(dir / "tokens.json");
  CliRun r = run_cli(base + " --config " + quoted(dir / "config.json") + " --layer 1 --what heads --format csv --out " +
                     quoted(out / "l1.csv"));
  REQUIRE(r.exit_code == 0);
  const std::string csv = read_file(out / "l1.csv", 1 << 20);
  CHECK(contains(csv, "head 3 (kv group 1)"));
  CHECK(contains(csv, "The"));
  r = run_cli("export --attentions " + quoted(dir / "attentions.safetensors") + " --tokens " + quoted(dir / "tokens.json") +
              " --config " + quoted(dir / "config.json") + " --layer 0 --what heads --format npy --out " + quoted(out / "l0.npy"));
  REQUIRE(r.exit_code == 0);
  const auto ref = fixture_reference("qwen2_gqa", "attentions").values;
  CHECK(read_npy(out / "l0.npy").data == std::vector<float>(ref.begin(), ref.begin() + 4 * 144));
  r = run_cli(base + " --layer 0 --what heads --format png --out " + quoted(out / "l0.png"));
  REQUIRE(r.exit_code == 0);
  // compute --checkpoint's own output opens the same way.
  const fs::path computed = out / "computed";
  REQUIRE(run_cli("compute --checkpoint " + quoted(model_fixture("qwen2_gqa")) + " --ids " + ids_arg(fixture_ids("qwen2_gqa")) +
                  " --out " + quoted(computed)).exit_code == 0);
  r = run_cli("export --attentions " + quoted(computed / "attentions.npy") + " --tokens " + quoted(computed / "tokens.json") +
              " --layer 1 --what heads --format npy --out " + quoted(out / "again.npy"));
  REQUIRE(r.exit_code == 0);
  CHECK(max_diff(read_npy(out / "again.npy").data, std::vector<float>(ref.begin() + 4 * 144, ref.end())) <= 1e-5);
}

TEST_CASE("cli model: bad checkpoints, inputs and flag combinations exit 2 naming the problem") {
  const fs::path out = fresh_dir("cli_model_bad");
  const std::string qwen = quoted(model_fixture("qwen2_gqa")), gpt2 = quoted(model_fixture("gpt2_prefix_f32"));
  const std::string o = " --out " + quoted(out / "x");
  check_refused("compute --checkpoint " + quoted(model_fixture("none")) + " --ids 1" + o, "does not exist", out);
  check_refused("compute --checkpoint " + qwen + " --ids 1,64" + o, "token id 64 at position 1 is outside the vocabulary", out);
  check_refused("compute --checkpoint " + qwen + " --ids 1,x" + o, "'x' is not a token id", out);
  std::vector<int32_t> long_ids(33, 3);
  check_refused("compute --checkpoint " + gpt2 + " --ids " + ids_arg(long_ids) + o,
                "33 tokens, more than this model's 32 positions", out);
  check_refused("compute --checkpoint " + qwen + o, "needs the input as --text", out);
  check_refused("compute --checkpoint " + qwen + " --ids 1 --text hi" + o, "(one of them)", out);
  check_refused("compute --checkpoint " + qwen + " --ids 1 --heads 4" + o, "--heads does not apply with --checkpoint", out);
  check_refused("compute --checkpoint " + qwen + " --ids 1,2 --layer 2" + o, "layer 2 does not exist", out);
  check_refused("compute --checkpoint " + qwen + " --ids 1,2 --kv-heads 3" + o, "must divide the 4 query heads", out);
  check_refused("compute --checkpoint " + gpt2 + " --text 'the cat'" + o, "gpt2_prefix_f32", out);  // no tokenizer files
  check_refused("export --checkpoint " + qwen + " --ids 1,2 --what heads --format png --out " + quoted(out / "x.png"),
                "give the model layer to export with --layer N", out);
  check_refused("export --checkpoint " + qwen + " --ids 1,2 --layer 0 --what relpos --format png --out " +
                    quoted(out / "x.png"),
                "--what is heads or head:N", out);
  const fs::path pre = model_fixture("precomputed");
  check_refused("export --attentions " + quoted(pre / "attentions.npy") + " --layer 0 --what heads --format png --out " +
                    quoted(out / "x.png"),
                "--attentions needs --tokens", out);
  check_refused("export --attentions " + quoted(pre / "attentions.npy") + " --tokens " + quoted(pre / "tokens.json") +
                    " --layer 0 --scores --what heads --format png --out " + quoted(out / "x.png"),
                "leave out --scores", out);
  check_refused("export --attentions " + quoted(pre / "attentions.npy") + " --tokens " + quoted(pre / "tokens.json") +
                    " --ids 1 --layer 0 --what heads --format png --out " + quoted(out / "x.png"),
                "--ids applies to --checkpoint", out);
}

