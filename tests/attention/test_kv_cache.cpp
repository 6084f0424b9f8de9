// KV-cache calculator: the formula for every preset, the published configurations, memory fits,
// bad inputs, and `attnscope kv-cache` end to end.
#include <doctest/doctest.h>

#include <cstdlib>
#include <tuple>
#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/attention/kv_cache.h"
#include "attnscope/model/config.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

int64_t v_width(const ModelPreset& p) { return p.v_head_dim > 0 ? p.v_head_dim : p.head_dim; }

// The formula of the issue, written out independently of the engine: 2·L·G·d_head·bytes·seq·batch, or
// L·G·(d_k + d_v)·… when K and V differ in width (the MHA an MLA model replaces).
int64_t expected_bytes(const ModelPreset& p, int64_t kv_heads, int bytes, int64_t seq, int64_t batch) {
  if (p.v_head_dim == 0) return 2 * p.layers * kv_heads * p.head_dim * bytes * seq * batch;
  return p.layers * kv_heads * (p.head_dim + p.v_head_dim) * bytes * seq * batch;
}

// W_Q C·H·d_k, W_K C·G·d_k, W_V C·G·d_v, W_O H·d_v·C per layer; C = H·d_head unless the preset says.
int64_t expected_params(const ModelPreset& p, int64_t kv_heads) {
  const int64_t c = p.hidden > 0 ? p.hidden : p.heads * p.head_dim;
  if (p.hidden == 0 && p.v_head_dim == 0) return p.layers * (2 * c * p.heads * p.head_dim + 2 * c * kv_heads * p.head_dim);
  return p.layers * c * (p.heads * p.head_dim + kv_heads * p.head_dim + kv_heads * v_width(p) + p.heads * v_width(p));
}

}  // namespace

TEST_CASE("kv cache: the presets carry the configurations the issue lists") {
  const std::vector<ModelPreset> presets = load_model_presets();
  struct Published { const char* name; int64_t layers, heads, kv_heads, head_dim; };
  const Published published[] = {{"gpt2-small", 12, 12, 12, 64},
                                 {"llama-2-7b", 32, 32, 32, 128},
                                 {"llama-2-70b", 80, 64, 8, 128},
                                 {"mistral-7b", 32, 32, 8, 128},
                                 {"falcon-7b", 32, 71, 1, 64},
                                 {"deepseek-v2", 60, 128, 128, 192},
                                 {"deepseek-v3", 61, 128, 128, 192},
                                 {"gemma-2-9b", 42, 16, 8, 256},
                                 {"gemma-3-12b", 48, 16, 8, 256},
                                 {"gpt-oss-20b", 24, 64, 8, 64},
                                 {"qwen3-next-80b-a3b", 48, 16, 2, 256},
                                 {"granite-4.0-h-tiny", 40, 12, 4, 128}};
  REQUIRE(presets.size() == 12);
  for (const Published& want : published) {
    CAPTURE(want.name);
    const ModelPreset& p = find_model_preset(presets, want.name);
    CHECK(p.layers == want.layers);
    CHECK(p.heads == want.heads);
    CHECK(p.kv_heads == want.kv_heads);
    CHECK(p.head_dim == want.head_dim);
    CHECK_FALSE(p.source.empty());
    CHECK(p.context >= 1024);
  }
  CHECK(find_model_preset(presets, "Llama-2-70B").name == "llama-2-70b");  // case-insensitive
  CHECK_THROWS_WITH_AS(find_model_preset(presets, "gpt-5"),
                       doctest::Contains("unknown model 'gpt-5' (valid: gpt2-small, llama-2-7b, llama-2-70b, "
                                         "mistral-7b, falcon-7b, deepseek-v2, deepseek-v3, gemma-2-9b, gemma-3-12b, "
                                         "gpt-oss-20b, qwen3-next-80b-a3b, granite-4.0-h-tiny)"),
                       InputError);
}

TEST_CASE("kv cache: MHA, GQA and MQA bytes match 2·L·G·d_head·bytes·seq·batch for every preset and dtype") {
  for (const ModelPreset& p : load_model_presets())
    for (ElementType dtype : {ElementType::fp32, ElementType::fp16, ElementType::int8})
      for (int64_t seq : {int64_t(1), int64_t(1000), p.context})
        for (int64_t batch : {int64_t(1), int64_t(7)}) {
          CAPTURE(p.name);
          CAPTURE(to_string(dtype));
          KvCacheInput in = kv_cache_input(p);
          in.seq = seq;
          in.batch = batch;
          in.dtype = dtype;
          const KvCacheReport r = kv_cache_report(in);
          const int b = bytes_per_element(dtype);
          CHECK(r.mha.kv_heads == p.heads);
          const int64_t g = gqa_kv_heads(in);
          CHECK(r.gqa.kv_heads == g);
          if (p.kv_lora_rank == 0) CHECK(g == p.kv_heads);  // the model's own G
          CHECK(r.mqa.kv_heads == 1);
          CHECK(r.mha.bytes == expected_bytes(p, p.heads, b, seq, batch));
          CHECK(r.gqa.bytes == expected_bytes(p, g, b, seq, batch));
          CHECK(r.mqa.bytes == expected_bytes(p, 1, b, seq, batch));
          CHECK(r.gqa.bytes_per_token == expected_bytes(p, g, b, 1, 1));
          CHECK(r.gqa.gib == doctest::Approx(double(r.gqa.bytes) / (1 << 30)));
          CHECK(r.mha.attention_params == expected_params(p, p.heads));
          CHECK(r.gqa.attention_params == expected_params(p, g));
          CHECK(r.mqa.attention_params == expected_params(p, 1));
          CHECK(r.mha.fits);  // no memory given
        }
  CHECK(bytes_per_element(ElementType::fp32) == 4);
  CHECK(bytes_per_element(ElementType::fp16) == 2);
  CHECK(bytes_per_element(ElementType::int8) == 1);
}

TEST_CASE("kv cache: fits exactly at the memory size and not one byte over") {
  const ModelPreset p = find_model_preset(load_model_presets(), "llama-2-70b");
  KvCacheInput in = kv_cache_input(p);
  in.seq = 4096;
  in.batch = 16;
  const int64_t gqa = expected_bytes(p, 8, 2, 4096, 16);
  in.memory_gib = double(gqa) / (1 << 30);  // exactly the GQA cache
  KvCacheReport r = kv_cache_report(in);
  CHECK_FALSE(r.mha.fits);
  CHECK(r.gqa.fits);
  CHECK(r.mqa.fits);
  in.memory_gib = double(gqa - 1) / (1 << 30);
  r = kv_cache_report(in);
  CHECK_FALSE(r.gqa.fits);
  CHECK(r.mqa.fits);
}

TEST_CASE("kv cache: bad sizes, kv heads that do not divide heads, and overflow are refused clearly") {
  KvCacheInput ok;
  ok.layers = 2, ok.heads = 8, ok.kv_heads = 2, ok.head_dim = 16, ok.seq = 10;
  CHECK_NOTHROW(validate_kv_cache_input(ok));
  auto with = [&](auto change) {
    KvCacheInput in = ok;
    change(in);
    return in;
  };
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layers = 0; })),
                       doctest::Contains("layers must be a whole number of at least 1, got 0"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.seq = -5; })),
                       doctest::Contains("sequence length must be a whole number of at least 1, got -5"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.batch = 0; })), doctest::Contains("batch"),
                       InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.kv_heads = 3; })),
                       doctest::Contains("kv heads must divide heads: 8 heads cannot share 3 kv heads equally "
                                         "(valid kv heads for 8 heads: 1, 2, 4, 8)"),
                       InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.memory_gib = -1; })),
                       doctest::Contains("memory must be a finite number"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.seq = int64_t(1) << 58; })),
                       doctest::Contains("does not fit in 63 bits"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.heads = i.kv_heads = int64_t(1) << 40; })),
                       doctest::Contains("attention parameters of 2 layers of 1099511627776 heads × 16 do not fit in 63 bits"),
                       InputError);
  CHECK_THROWS_WITH_AS(parse_element_type("bf16"), doctest::Contains("valid: fp32, fp16, int8"), InputError);
}

TEST_CASE("kv cache: a malformed presets file names the file and the entry") {
  const fs::path dir = fresh_dir("kv_presets_bad");
  write_file_atomic(dir / "a.json", R"({"models": [{"name": "x", "label": "X", "layers": 2, "heads": 8, "kv_heads": 3,
                                        "head_dim": 4, "context": 10, "source": "s"}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "a.json"), doctest::Contains("model 1 (x): kv heads must divide heads"),
                       InputError);
  write_file_atomic(dir / "b.json", R"({"models": [{"name": "x", "label": "X", "layers": "2"}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "b.json"), doctest::Contains("\"layers\" must be a whole number"),
                       InputError);
  write_file_atomic(dir / "c.json", R"({"models": [)");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "c.json"), doctest::Contains("is not valid JSON"), InputError);
}

TEST_CASE("cli kv-cache: one JSON object whose numbers match the formula, for a preset and a custom model") {
  const ModelPreset p = find_model_preset(load_model_presets(), "mistral-7b");
  const CliRun r = run_cli("kv-cache --model mistral-7b --seq 8192 --batch 4 --dtype fp32 --memory-gib 16");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["model"]["name"] == "mistral-7b");
  CHECK(j["layers"] == p.layers);
  CHECK(j["kv_heads"] == p.kv_heads);
  CHECK(j["dtype"] == "fp32");
  CHECK(j["mha"]["bytes"] == expected_bytes(p, p.heads, 4, 8192, 4));
  CHECK(j["gqa"]["bytes"] == expected_bytes(p, p.kv_heads, 4, 8192, 4));
  CHECK(j["mqa"]["bytes"] == expected_bytes(p, 1, 4, 8192, 4));
  CHECK(j["mha"]["fits"] == (expected_bytes(p, p.heads, 4, 8192, 4) <= 16ll << 30));
  CHECK(j["gqa"]["fits"] == (expected_bytes(p, p.kv_heads, 4, 8192, 4) <= 16ll << 30));
  CHECK(j["mqa"]["fits"] == true);

  const CliRun c = run_cli("kv-cache --layers 6 --heads 12 --kv-heads 4 --head-dim 32 --seq 100 --dtype int8");
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  const auto k = nlohmann::json::parse(c.out);
  CHECK(k["model"].is_null());
  CHECK(k["memory_gib"].is_null());
  CHECK(k["gqa"]["fits"].is_null());
  CHECK(k["mha"]["bytes"] == 2 * 6 * 12 * 32 * 1 * 100);
  CHECK(k["gqa"]["bytes"] == 2 * 6 * 4 * 32 * 1 * 100);
  CHECK(k["mqa"]["bytes"] == 2 * 6 * 1 * 32 * 1 * 100);
  CHECK(k["batch"] == 1);
}

TEST_CASE("cli kv-cache: presets are found at run time through ATTNSCOPE_ASSETS") {
  const fs::path dir = fresh_dir("kv_assets");
  write_file_atomic(dir / "sentences.json", R"({"sentences": [{"lang": "en", "text": "hi"}]})");
  write_file_atomic(dir / "models.json", R"({"models": [{"name": "tiny", "label": "Tiny", "layers": 2, "heads": 4,
                                           "kv_heads": 2, "head_dim": 8, "context": 16, "source": "a test"}]})");
  setenv("ATTNSCOPE_ASSETS", dir.c_str(), 1);
  const CliRun r = run_cli("kv-cache --model tiny --seq 16");
  const CliRun bad = run_cli("kv-cache --model llama-2-7b --seq 16");
  setenv("ATTNSCOPE_ASSETS", (dir / "nowhere").c_str(), 1);
  const CliRun missing = run_cli("kv-cache --model tiny --seq 16");
  unsetenv("ATTNSCOPE_ASSETS");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["gqa"]["bytes"] == 2 * 2 * 2 * 8 * 2 * 16);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("unknown model 'llama-2-7b' (valid: tiny)") != std::string::npos);
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("ATTNSCOPE_ASSETS is") != std::string::npos);
}

// `attnscope kv-cache ARGS` exits 2 with one line "error: …" containing `message`, and prints nothing.
static void check_refused(const std::string& args, const char* message) {
  const CliRun r = run_cli("kv-cache " + args);
  CAPTURE(args);
  CAPTURE(r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.out.empty());
}

TEST_CASE("cli kv-cache: bad input exits 2 with one clear line") {
  struct Bad { std::string args; const char* message; };
  const Bad cases[] = {
      {"--model gpt5 --seq 10", "unknown model 'gpt5' (valid: gpt2-small, llama-2-7b, llama-2-70b, mistral-7b, falcon-7b, "
                                "deepseek-v2, deepseek-v3, gemma-2-9b, gemma-3-12b, gpt-oss-20b, qwen3-next-80b-a3b, "
                                "granite-4.0-h-tiny)"},
      {"--layers 0 --heads 8 --kv-heads 8 --head-dim 64 --seq 10", "layers must be a whole number of at least 1, got 0"},
      {"--layers 4 --heads -8 --kv-heads 8 --head-dim 64 --seq 10", "heads must be a whole number of at least 1, got -8"},
      {"--layers 4 --heads 8 --kv-heads 3 --head-dim 64 --seq 10", "kv heads must divide heads"},
      {"--layers 4 --heads 8 --kv-heads 8 --head-dim 0 --seq 10", "head dim must be a whole number of at least 1"},
      {"--model gpt2-small --seq 0", "sequence length must be a whole number of at least 1, got 0"},
      {"--model gpt2-small --seq 10 --batch -1", "batch must be a whole number of at least 1, got -1"},
      {"--model gpt2-small --seq 4611686018427387904", "does not fit in 63 bits"},
      {"--model gpt2-small --seq 99999999999999999999", "does not fit in 63 bits"},  // CLI11 saturates to 2^63 − 1
      {"--model gpt2-small --seq 10 --dtype bf16", "unknown element type 'bf16' (valid: fp32, fp16, int8)"},
      {"--model gpt2-small --seq 10 --memory-gib 0", "--memory-gib must be more than 0"},
      {"--model gpt2-small --seq 10 --memory-gib -3", "--memory-gib must be more than 0"},
      {"--model gpt2-small --layers 4 --seq 10", "--model and --layers are exclusive"},
      {"--layers 4 --heads 8 --seq 10", "--kv-heads is missing"},
      {"--model gpt2-small", "--seq is required"},
  };
  for (const Bad& b : cases) check_refused(b.args, b.message);
}

TEST_CASE("kv cache: a checkpoint's sliding-window layers keep at most their window's tokens") {
  // gemma-3-1b: 26 layers, 1 K/V head of 256, five local layers (window 512) then one global: 22 + 4.
  KvCacheInput in;
  in.layers = 26, in.heads = 4, in.kv_heads = 1, in.head_dim = 256, in.seq = 32768, in.batch = 1;
  in.dtype = ElementType::fp16;
  in.layer_types = {{LayerKind::sliding, 22, 512, 0, 0, 0, 0, 0, 0}, {LayerKind::full, 4, 0, 0, 0, 0, 0, 0, 0}};
  const KvCacheReport r = kv_cache_report(in);
  const int64_t per_layer_token = 2 * 1 * 256 * 2;  // K and V, G = 1, d_head 256, fp16
  CHECK(r.bytes == per_layer_token * (22 * 512 + 4 * 32768));
  CHECK(r.gqa.bytes == per_layer_token * 26 * 32768);  // the variants count every layer as full attention
  // Within the window every layer keeps every token: the plain formula.
  in.seq = 512;
  CHECK(kv_cache_report(in).bytes == kv_cache_bytes(26, 1, 256, 2, 512, 1));
  in.layer_types[0].layers = 21;
  CHECK_THROWS_AS(kv_cache_report(in), InputError);  // 21 + 4 layers for a model of 26
}

// ---- layer types: MLA, sliding windows, sinks -----------------------------------------------------

namespace {

const KvLayerTypeRow& row_of(const KvCacheReport& r, LayerKind kind) {
  for (const KvLayerTypeRow& row : r.layer_types)
    if (row.group.kind == kind) return row;
  FAIL("no " << to_string(kind) << " row");
  return r.layer_types.front();
}

KvCacheReport preset_report(const std::string& name, int64_t seq, int64_t batch = 1, ElementType dtype = ElementType::fp16) {
  KvCacheInput in = kv_cache_input(find_model_preset(load_model_presets(), name));
  in.seq = seq;
  in.batch = batch;
  in.dtype = dtype;
  return kv_cache_report(in);
}

}  // namespace

TEST_CASE("kv cache: the new presets carry their published layer types and MLA widths") {
  const std::vector<ModelPreset> presets = load_model_presets();
  // deepseek-ai/DeepSeek-V2 and -V3 config.json: kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128,
  // v_head_dim 128, 60 / 61 layers, hidden 5120 / 7168; every layer MLA.
  struct Mla { const char* name; int layers, hidden; };  // (not a structured binding: CAPTURE's lambda takes it)
  for (const Mla& model : {Mla{"deepseek-v2", 60, 5120}, Mla{"deepseek-v3", 61, 7168}}) {
    const char* name = model.name;
    const int layers = model.layers, hidden = model.hidden;
    CAPTURE(name);
    const ModelPreset& p = find_model_preset(presets, name);
    CHECK(p.kv_lora_rank == 512);
    CHECK(p.rope_dim == 64);
    CHECK(p.head_dim == 128 + 64);  // the K width of the MHA it replaces: qk_nope + qk_rope
    CHECK(p.v_head_dim == 128);
    CHECK(p.hidden == hidden);
    REQUIRE(p.layer_types.size() == 1);
    CHECK(p.layer_types[0].kind == LayerKind::mla);
    CHECK(p.layer_types[0].layers == layers);
  }
  struct Layout { const char* name; int64_t sliding, window, full, hidden; };
  const Layout layouts[] = {
      {"mistral-7b", 32, 4096, 0, 0},       // Mistral-7B-v0.1: sliding_window 4096 in all 32 layers
      {"gemma-2-9b", 21, 4096, 21, 3584},   // 42 layers alternating local 4096 / global
      {"gemma-3-12b", 40, 1024, 8, 3840},   // 48 layers, sliding_window_pattern 6: 5 local (1024) to 1 global
      {"gpt-oss-20b", 12, 128, 12, 2880}};  // 24 layers alternating sliding 128 / full
  for (const Layout& want : layouts) {
    CAPTURE(want.name);
    const ModelPreset& p = find_model_preset(presets, want.name);
    CHECK(p.hidden == want.hidden);
    CHECK(p.kv_lora_rank == 0);
    REQUIRE(p.layer_types.size() == (want.full > 0 ? 2u : 1u));
    CHECK(p.layer_types[0].kind == LayerKind::sliding);
    CHECK(p.layer_types[0].layers == want.sliding);
    CHECK(p.layer_types[0].window == want.window);
    CHECK(p.layer_types[0].sinks == 0);  // gpt-oss's sinks are learned logits, not cached tokens
    if (want.full > 0) {
      CHECK(p.layer_types[1].kind == LayerKind::full);
      CHECK(p.layer_types[1].layers == want.full);
    }
  }
  // The older presets: every layer full attention.
  CHECK(find_model_preset(presets, "llama-2-70b").layer_types.empty());
  CHECK(preset_report("llama-2-70b", 4096).bytes == preset_report("llama-2-70b", 4096).gqa.bytes);
}

TEST_CASE("kv cache: DeepSeek-V2 and V3 cache 512 + 64 = 576 elements per token per layer instead of MHA's 128 × (192 + 128)") {
  const KvCacheReport v2 = preset_report("deepseek-v2", 4096);  // fp16, batch 1
  REQUIRE(v2.layer_types.size() == 1);
  const KvLayerTypeRow& mla = v2.layer_types[0];
  CHECK(mla.elements_per_token == 512 + 64);
  CHECK(mla.bytes_per_token == 576 * 2 * 60);  // 69 120 B for one token in all 60 layers
  CHECK(mla.tokens == 4096);
  CHECK(mla.bytes == 576 * 2 * 60 * 4096);  // 283 115 520 B = 270 MiB
  CHECK(v2.bytes == 283115520);
  // The MHA it replaces: 128 heads of K (128 + 64) and V (128) per layer.
  CHECK(v2.mha.kv_heads == 128);
  CHECK(v2.mha.bytes_per_token == 128 * (192 + 128) * 2 * 60);  // 4 915 200 B
  CHECK(v2.mha.bytes == int64_t(128) * (192 + 128) * 2 * 60 * 4096);
  CHECK(double(v2.mha.bytes) / double(v2.bytes) == doctest::Approx(40960.0 / 576.0));  // 71.1 times as much
  // Parameters of that MHA: C = 5120; W_Q 5120·128·192, W_K the same, W_V 5120·128·128, W_O the same.
  CHECK(v2.mha.attention_params == int64_t(60) * 5120 * (128 * 192 * 2 + 128 * 128 * 2));
  // Its GQA row is not its MHA again (issue 40: "GQA (G = 128)"): the fewest groups that cache at least the
  // latent, G = 2 (2 × 320 = 640 ≥ 576 elements, G = 1 caches 320), the grouping MLA's cache compares with.
  CHECK(v2.gqa.kv_heads == 2);
  CHECK(v2.gqa.bytes < v2.mha.bytes);
  CHECK(v2.gqa.bytes >= v2.bytes);
  CHECK(v2.mqa.bytes < v2.bytes);
  const KvCacheReport v3 = preset_report("deepseek-v3", 1000, 3, ElementType::fp32);
  CHECK(v3.layer_types[0].bytes_per_token == 576 * 4 * 61);
  CHECK(v3.bytes == int64_t(576) * 4 * 61 * 1000 * 3);
}

TEST_CASE("kv cache: sliding-window layers stop growing at their window (Mistral, Gemma 2, Gemma 3, gpt-oss)") {
  // Mistral-7B-v0.1 at 8192 tokens: 32 layers × 2·8·128 = 2048 elements, each layer holding 4096 tokens.
  const KvCacheReport mistral = preset_report("mistral-7b", 8192);
  const KvLayerTypeRow& m = row_of(mistral, LayerKind::sliding);
  CHECK(m.elements_per_token == 2 * 8 * 128);
  CHECK(m.bytes_per_token == 2048 * 2 * 32);  // 131 072 B
  CHECK(m.tokens == 4096);
  CHECK(mistral.bytes == int64_t(131072) * 4096);   // 512 MiB
  CHECK(mistral.gqa.bytes == int64_t(131072) * 8192);  // every layer full: 1 GiB
  CHECK(preset_report("mistral-7b", 1000).bytes == int64_t(131072) * 1000);  // below the window, every token

  // Gemma-2-9B at 8192: 21 local layers hold 4096 tokens, 21 global ones all 8192; 2·8·256 = 4096 elements.
  const KvCacheReport g2 = preset_report("gemma-2-9b", 8192);
  CHECK(row_of(g2, LayerKind::sliding).bytes == int64_t(4096) * 2 * 21 * 4096);  // 704 643 072 B
  CHECK(row_of(g2, LayerKind::full).bytes == int64_t(4096) * 2 * 21 * 8192);     // 1 409 286 144 B
  CHECK(g2.bytes == int64_t(704643072) + 1409286144);

  // Gemma-3-12B at 32768: 40 local layers hold 1024 tokens, 8 global ones all 32768.
  const KvCacheReport g3 = preset_report("gemma-3-12b", 32768);
  const KvLayerTypeRow& local = row_of(g3, LayerKind::sliding);
  CHECK(local.bytes_per_token == 4096 * 2 * 40);  // 327 680 B
  CHECK(local.tokens == 1024);
  CHECK(local.bytes == int64_t(327680) * 1024);                             // 320 MiB
  CHECK(row_of(g3, LayerKind::full).bytes == int64_t(4096) * 2 * 8 * 32768);  // 2 GiB
  CHECK(g3.bytes == int64_t(335544320) + 2147483648);
  // The local layers hold the same at 1024 tokens and at 100 000; the global ones keep growing.
  CHECK(row_of(preset_report("gemma-3-12b", 1024), LayerKind::sliding).bytes ==
        row_of(preset_report("gemma-3-12b", 100000), LayerKind::sliding).bytes);
  CHECK(row_of(preset_report("gemma-3-12b", 1023), LayerKind::sliding).tokens == 1023);

  // gpt-oss-20b at its 131072 tokens, batch 2, fp32: 2·8·64 = 1024 elements; 12 layers of 128 tokens, 12 of all.
  const KvCacheReport oss = preset_report("gpt-oss-20b", 131072, 2, ElementType::fp32);
  CHECK(row_of(oss, LayerKind::sliding).bytes == int64_t(1024) * 4 * 12 * 128 * 2);
  CHECK(row_of(oss, LayerKind::full).bytes == int64_t(1024) * 4 * 12 * 131072 * 2);
  CHECK(oss.bytes == int64_t(1024) * 4 * 12 * (128 + 131072) * 2);
}

TEST_CASE("kv cache: sink tokens sit beside the window, min(seq, W + k) tokens per layer, and memory fits count the total") {
  KvCacheInput in;
  in.layers = 4, in.heads = 4, in.kv_heads = 2, in.head_dim = 8, in.seq = 100, in.dtype = ElementType::fp32;
  in.layer_types = {KvLayerGroup{LayerKind::sliding, 3, 16, 4, 0, 0, 0, 0, 0}, KvLayerGroup{LayerKind::full, 1, 0, 0, 0, 0, 0, 0, 0}};
  KvCacheReport r = kv_cache_report(in);
  const KvLayerTypeRow& s = r.layer_types[0];
  CHECK(s.elements_per_token == 2 * 2 * 8);
  CHECK(s.bytes_per_token == 32 * 4 * 3);  // 384 B
  CHECK(s.tokens == 16 + 4);
  CHECK(s.bytes == 384 * 20);
  CHECK(r.layer_types[1].bytes == 32 * 4 * 1 * 100);
  CHECK(r.bytes == 384 * 20 + 12800);
  in.seq = 10;  // fewer tokens than window + sinks: all of them
  CHECK(kv_cache_report(in).layer_types[0].tokens == 10);
  in.seq = 100;
  in.memory_gib = double(384 * 20 + 12800) / (1 << 30);
  CHECK(kv_cache_report(in).fits);
  in.memory_gib = double(384 * 20 + 12800 - 1) / (1 << 30);
  CHECK_FALSE(kv_cache_report(in).fits);
}

TEST_CASE("kv cache: bad windows, sinks, ranks and layer counts are refused clearly") {
  KvCacheInput ok;
  ok.layers = 4, ok.heads = 8, ok.kv_heads = 2, ok.head_dim = 16, ok.seq = 10;
  ok.layer_types = {KvLayerGroup{LayerKind::sliding, 3, 8, 0, 0, 0, 0, 0, 0}, KvLayerGroup{LayerKind::full, 1, 0, 0, 0, 0, 0, 0, 0}};
  CHECK_NOTHROW(validate_kv_cache_input(ok));
  auto with = [&](auto change) {
    KvCacheInput in = ok;
    change(in);
    return in;
  };
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].window = 0; })),
                       doctest::Contains("sliding-window layers need a window of at least 1 token, got 0"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].window = -3; })),
                       doctest::Contains("got -3"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].sinks = -1; })),
                       doctest::Contains("sink tokens must be 0 or more, got -1"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[1].sinks = 4; })),
                       doctest::Contains("full layers have no window and no sink tokens"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[1].layers = 2; })),
                       doctest::Contains("the layer types add up to 5 layers (3 sliding (window 8) + 2 full), not the "
                                         "model's 4 layers L"),
                       InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[1].layers = 0; })),
                       doctest::Contains("full layers: a layer type needs at least 1 layer, got 0"), InputError);
  auto mla = [](KvCacheInput& i) { i.layer_types = {KvLayerGroup{LayerKind::mla, 4, 0, 0, 0, 0, 0, 0, 0}}, i.kv_lora_rank = 32, i.rope_dim = 8; };
  CHECK_NOTHROW(kv_cache_report(with(mla)));
  CHECK(kv_cache_report(with(mla)).layer_types[0].elements_per_token == 32 + 8);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([&](KvCacheInput& i) { mla(i), i.kv_lora_rank = 0; })),
                       doctest::Contains("MLA layers need a kv_lora_rank (the latent c_KV's width) of at least 1, got 0"),
                       InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([&](KvCacheInput& i) { mla(i), i.rope_dim = -1; })),
                       doctest::Contains("qk_rope_head_dim) must be 0 or more, got -1"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([&](KvCacheInput& i) { mla(i), i.kv_lora_rank = int64_t(1) << 61; })),
                       doctest::Contains("does not fit in 63 bits"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].window = int64_t(1) << 62, i.layer_types[0].sinks = int64_t(1) << 62; })),
                       doctest::Contains("does not fit in 63 bits"), InputError);
  CHECK_THROWS_WITH_AS(parse_layer_kind("local"),
                       doctest::Contains("unknown layer type 'local' (valid: full, sliding, mla, linear, mamba2)"), InputError);
}

TEST_CASE("kv cache: a presets file whose layer types do not add up to L names the entry") {
  const fs::path dir = fresh_dir("kv_presets_layers");
  write_file_atomic(dir / "a.json", R"({"models": [{"name": "x", "label": "X", "layers": 6, "heads": 8, "kv_heads": 2,
      "head_dim": 4, "context": 10, "source": "s", "layer_types": [{"type": "sliding", "layers": 5, "window": 4}]}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "a.json"),
                       doctest::Contains("model 1 (x): the layer types add up to 5 layers (5 sliding (window 4)), not "
                                         "the model's 6 layers L"),
                       InputError);
  write_file_atomic(dir / "b.json", R"({"models": [{"name": "x", "label": "X", "layers": 6, "heads": 8, "kv_heads": 2,
      "head_dim": 4, "context": 10, "source": "s", "layer_types": [{"type": "local", "layers": 6}]}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "b.json"), doctest::Contains("unknown layer type 'local'"), InputError);
  write_file_atomic(dir / "c.json", R"({"models": [{"name": "x", "label": "X", "layers": 6, "heads": 8, "kv_heads": 8,
      "head_dim": 4, "context": 10, "source": "s", "layer_types": [{"type": "mla", "layers": 6}]}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "c.json"), doctest::Contains("MLA layers need a kv_lora_rank"), InputError);
  write_file_atomic(dir / "d.json", R"({"models": [{"name": "x", "label": "X", "layers": 6, "heads": 8, "kv_heads": 8,
      "head_dim": 4, "context": 10, "source": "s", "kv_lora_rank": 0}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "d.json"), doctest::Contains("\"kv_lora_rank\" must be a whole number of at least 1"),
                       InputError);
}

TEST_CASE("cli kv-cache: layer_types rows for a preset and for a custom window, sinks or MLA layout") {
  const CliRun r = run_cli("kv-cache --model gemma-3-12b --seq 32768");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["layer_types"].size() == 2);
  const auto& local = j["layer_types"][0];
  CHECK(local["type"] == "sliding");
  CHECK(local["layers"] == 40);
  CHECK(local["window"] == 1024);
  CHECK(local["sinks"] == 0);
  CHECK(local["elements_per_token_per_layer"] == 2 * 8 * 256);
  CHECK(local["bytes_per_token_per_layer"] == 2 * 8 * 256 * 2);
  CHECK(local["bytes_per_token"] == 2 * 8 * 256 * 2 * 40);
  CHECK(local["tokens_cached"] == 1024);
  CHECK(local["bytes"] == int64_t(327680) * 1024);
  CHECK(j["layer_types"][1]["type"] == "full");
  CHECK(j["layer_types"][1]["tokens_cached"] == 32768);
  CHECK(j["total"]["bytes"] == int64_t(327680) * 1024 + int64_t(65536) * 32768);
  CHECK(j["total"]["fits"].is_null());
  CHECK(j["gqa"]["bytes"] == int64_t(2) * 48 * 8 * 256 * 2 * 32768);  // the old keys: every layer full

  const CliRun v2 = run_cli("kv-cache --model deepseek-v2 --seq 1000 --memory-gib 1");
  INFO(v2.err);
  REQUIRE(v2.exit_code == 0);
  const auto d = nlohmann::json::parse(v2.out);
  CHECK(d["kv_lora_rank"] == 512);
  CHECK(d["qk_rope_head_dim"] == 64);
  CHECK(d["v_head_dim"] == 128);
  CHECK(d["layer_types"][0]["type"] == "mla");
  CHECK(d["layer_types"][0]["elements_per_token_per_layer"] == 576);
  CHECK(d["total"]["bytes"] == 576 * 2 * 60 * 1000);
  CHECK(d["total"]["fits"] == true);
  CHECK(d["mha"]["bytes"] == int64_t(128) * (192 + 128) * 2 * 60 * 1000);

  // Custom: 6 layers, 4 of them a window of 32 with 4 sinks; int8.
  const CliRun w = run_cli("kv-cache --layers 6 --heads 8 --kv-heads 2 --head-dim 16 --seq 100 --dtype int8 "
                           "--window 32 --window-layers 4 --sinks 4");
  INFO(w.err);
  REQUIRE(w.exit_code == 0);
  const auto c = nlohmann::json::parse(w.out);
  REQUIRE(c["layer_types"].size() == 2);
  CHECK(c["layer_types"][0]["tokens_cached"] == 32 + 4);
  CHECK(c["layer_types"][0]["bytes"] == 2 * 2 * 16 * 1 * 4 * 36);
  CHECK(c["layer_types"][1]["layers"] == 2);
  CHECK(c["total"]["bytes"] == 2 * 2 * 16 * 4 * 36 + 2 * 2 * 16 * 2 * 100);
  // --window alone: every layer windowed; --kv-rank: every layer MLA.
  const auto all = nlohmann::json::parse(run_cli("kv-cache --model llama-2-7b --seq 5000 --window 4096").out);
  CHECK(all["layer_types"].size() == 1);
  CHECK(all["layer_types"][0]["layers"] == 32);
  CHECK(all["total"]["bytes"] == int64_t(2) * 32 * 128 * 2 * 32 * 4096);
  const auto latent = nlohmann::json::parse(
      run_cli("kv-cache --layers 2 --heads 4 --kv-heads 4 --head-dim 8 --seq 10 --kv-rank 6 --rope-dim 2 --dtype fp32").out);
  CHECK(latent["layer_types"][0]["type"] == "mla");
  CHECK(latent["total"]["bytes"] == (6 + 2) * 4 * 2 * 10);
}

TEST_CASE("cli kv-cache: bad windows, sinks and ranks exit 2 with one clear line") {
  struct Bad { std::string args; const char* message; };
  const Bad cases[] = {
      {"--model gpt2-small --seq 10 --window 0", "--window must be at least 1 token, got 0"},
      {"--model gpt2-small --seq 10 --window -4", "--window must be at least 1 token, got -4"},
      {"--model gpt2-small --seq 10 --window 8 --sinks -1", "--sinks must be 0 or more tokens, got -1"},
      {"--model gpt2-small --seq 10 --sinks 4", "--sinks goes with a sliding window: give --window W too"},
      {"--model gpt2-small --seq 10 --window-layers 4", "--window-layers goes with a sliding window"},
      {"--model gpt2-small --seq 10 --window 8 --window-layers 0", "--window-layers must be at least 1, got 0"},
      {"--model gpt2-small --seq 10 --window 8 --window-layers 13",
       "the layer types add up to 13 layers (13 sliding (window 8)), not the model's 12 layers L"},
      {"--model gpt2-small --seq 10 --kv-rank 0", "--kv-rank must be a whole number of at least 1, got 0"},
      {"--model gpt2-small --seq 10 --kv-rank 8 --rope-dim -2", "--rope-dim must be 0 or more, got -2"},
      {"--model gpt2-small --seq 10 --rope-dim 8", "--rope-dim is the width of MLA's RoPE key: give --kv-rank R too"},
      {"--model gpt2-small --seq 10 --window 8 --kv-rank 8", "--window, --kv-rank, --linear-layers and --mamba-layers are exclusive"},
      {"--model gpt2-small --seq 10 --kv-rank 4611686018427387904", "does not fit in 63 bits"},
      {"--model gpt2-small --seq 10 --v-head-dim 0", "--v-head-dim must be a whole number of at least 1, got 0"},
  };
  for (const Bad& b : cases) check_refused(b.args, b.message);
  const CliRun help = run_cli("kv-cache --help");
  for (const char* flag : {"--window", "--window-layers", "--sinks", "--kv-rank", "--rope-dim", "--v-head-dim", "deepseek-v2"})
    CHECK(help.out.find(flag) != std::string::npos);
}

TEST_CASE("cli kv-cache: a window on an MLA preset replaces its layout and drops its latent widths") {
  const CliRun r = run_cli("kv-cache --model deepseek-v2 --seq 100 --window 64");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["kv_lora_rank"].is_null());
  REQUIRE(j["layer_types"].size() == 1);
  CHECK(j["layer_types"][0]["type"] == "sliding");
  // 128 kv heads of K 192 and V 128: 128 · (192 + 128) = 40 960 elements, 64 tokens, 60 layers, fp16.
  CHECK(j["layer_types"][0]["elements_per_token_per_layer"] == 128 * (192 + 128));
  CHECK(j["total"]["bytes"] == int64_t(40960) * 2 * 60 * 64);
}

// ---- layer types with a fixed-size state: linear attention / Gated DeltaNet, Mamba-2 ---------------

TEST_CASE("kv cache: Qwen3-Next's preset is its published config: 36 Gated DeltaNet + 12 full layers") {
  // tests/fixtures/real-configs/Qwen/Qwen3-Next-80B-A3B-Instruct.json: full_attention_interval 4, head_dim 256,
  // hidden_size 2048, num_attention_heads 16, num_key_value_heads 2, linear_num_value_heads 32,
  // linear_num_key_heads 16, linear_key_head_dim 128, linear_value_head_dim 128, linear_conv_kernel_dim 4,
  // max_position_embeddings 262144; num_hidden_layers is transformers' Qwen3NextConfig default, 48, and layer i
  // is full attention when (i + 1) % 4 == 0: layers 3, 7, …, 47, 12 of them.
  const nlohmann::json config =
      nlohmann::json::parse(read_file(
          fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/real-configs/Qwen/Qwen3-Next-80B-A3B-Instruct.json", 1 << 20));
  const std::vector<ModelPreset> presets = load_model_presets();
  const ModelPreset& p = find_model_preset(presets, "qwen3-next-80b-a3b");
  const int64_t layers = 48, interval = config["full_attention_interval"].get<int64_t>();
  int64_t full_layers = 0;
  for (int64_t i = 0; i < layers; ++i) full_layers += (i + 1) % interval == 0 ? 1 : 0;
  CHECK(full_layers == 12);
  CHECK(p.layers == layers);
  CHECK(p.heads == config["num_attention_heads"].get<int64_t>());
  CHECK(p.kv_heads == config["num_key_value_heads"].get<int64_t>());
  CHECK(p.head_dim == config["head_dim"].get<int64_t>());
  CHECK(p.hidden == config["hidden_size"].get<int64_t>());
  CHECK(p.context == config["max_position_embeddings"].get<int64_t>());
  REQUIRE(p.layer_types.size() == 2);
  const KvLayerGroup& gdn = p.layer_types[0];
  CHECK(gdn.kind == LayerKind::linear);
  CHECK(gdn.layers == layers - full_layers);
  CHECK(gdn.state_heads == config["linear_num_value_heads"].get<int64_t>());
  CHECK(gdn.key_heads == config["linear_num_key_heads"].get<int64_t>());
  CHECK(gdn.key_dim == config["linear_key_head_dim"].get<int64_t>());
  CHECK(gdn.value_dim == config["linear_value_head_dim"].get<int64_t>());
  CHECK(gdn.conv_kernel == config["linear_conv_kernel_dim"].get<int64_t>());
  CHECK(p.layer_types[1].kind == LayerKind::full);
  CHECK(p.layer_types[1].layers == full_layers);
}

TEST_CASE("kv cache: the Granite-4.0-H-Tiny preset is its config.json, read by the checkpoint loader") {
  // The preset against what model::parse_model_config reads from the real config (its Mamba-2 layers are the
  // layer_types entries "mamba"), and one Mamba-2 layer's state: ssm_states [48, 64, 128] = 393 216 elements,
  // conv_states [48 · 64 + 2 · 1 · 128 = 3328, 4] = 13 312; 406 528 elements = 813 056 B in fp16, at any length.
  const fs::path path = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/real-configs/ibm-granite/granite-4.0-h-tiny.json";
  const model::ModelConfig c = model::parse_model_config(read_file(path, 1 << 20), path.string());
  const std::vector<ModelPreset> presets = load_model_presets();
  const ModelPreset& p = find_model_preset(presets, "granite-4.0-h-tiny");
  int64_t mamba_layers = 0;
  for (int l = 0; l < c.layers; ++l) mamba_layers += c.is_linear_layer(l) ? 1 : 0;
  CHECK(mamba_layers == 36);
  CHECK(p.layers == c.layers);
  CHECK(p.heads == c.heads);
  CHECK(p.kv_heads == c.kv_heads);
  CHECK(p.head_dim == c.head_dim);
  CHECK(p.hidden == c.d_model);
  CHECK(p.context == c.max_positions);
  REQUIRE(p.layer_types.size() == 2);
  const KvLayerGroup& m = p.layer_types[0];
  CHECK(m.kind == LayerKind::mamba2);
  CHECK(m.layers == mamba_layers);
  CHECK(m.state_heads == c.mamba.heads);
  CHECK(m.key_heads == c.mamba.groups);
  CHECK(m.key_dim == c.mamba.state);
  CHECK(m.value_dim == c.mamba.head_dim);
  CHECK(m.conv_kernel == c.mamba.conv_kernel);
  CHECK(p.layer_types[1].kind == LayerKind::full);
  CHECK(p.layer_types[1].layers == c.layers - mamba_layers);
  for (int64_t seq : {int64_t(1), int64_t(131072)}) {
    const KvCacheReport report = preset_report("granite-4.0-h-tiny", seq);  // kept: row_of returns a row of it
    const KvLayerTypeRow& row = row_of(report, LayerKind::mamba2);
    CHECK(row.recurrent_elements == 393216);
    CHECK(row.conv_elements == 13312);
    CHECK(row.state_bytes_per_layer == 813056);
    CHECK(row.bytes == int64_t(813056) * 36);
  }
}

TEST_CASE("kv cache: a Gated DeltaNet layer of Qwen3-Next keeps 32 × 128 × 128 + 8192 × 4 elements at any length") {
  // One Gated DeltaNet layer, one sequence (modeling_qwen3_next.py): recurrent_states [32, 128, 128] =
  // 524 288 elements; conv_states [conv_dim, 4] with conv_dim = 2 · 16 · 128 + 32 · 128 = 4096 + 4096 = 8192,
  // 32 768 elements; together 557 056 elements = 1 114 112 B in fp16 (1.0625 MiB), × 36 layers = 40 108 032 B.
  // The 12 full layers: 2 kv heads × (256 + 256) = 1024 elements a token a layer, × 2 B × 12 = 24 576 B a token.
  const KvCacheReport at_context = preset_report("qwen3-next-80b-a3b", 262144);
  const KvLayerTypeRow& gdn = row_of(at_context, LayerKind::linear);
  CHECK(gdn.recurrent_elements == 524288);
  CHECK(gdn.conv_elements == 32768);
  CHECK(gdn.state_elements == 557056);
  CHECK(gdn.state_bytes_per_layer == 1114112);
  CHECK(gdn.bytes == 40108032);
  CHECK(gdn.elements_per_token == 0);  // no cache: one more token costs nothing
  CHECK(gdn.bytes_per_token == 0);
  CHECK(gdn.tokens == 0);
  const KvLayerTypeRow& full = row_of(at_context, LayerKind::full);
  CHECK(full.elements_per_token == 1024);
  CHECK(full.bytes_per_token == 24576);
  CHECK(full.bytes == int64_t(24576) * 262144);  // 6 442 450 944 B = 6 GiB
  CHECK(at_context.bytes == int64_t(6442450944) + 40108032);  // the total is the sum of the rows
  // Every one of the 48 layers full attention (the GQA bar): 48 × 1024 × 2 B = 98 304 B a token, 24 GiB.
  CHECK(at_context.gqa.bytes == int64_t(98304) * 262144);
  CHECK(at_context.gqa.bytes == int64_t(24) << 30);

  // Seq independence: the state row is the same at 1 token, 4096 and 262 144; only the full rows grow, by
  // 24 576 B a token.
  for (int64_t seq : {int64_t(1), int64_t(4096), int64_t(100000)}) {
    CAPTURE(seq);
    const KvCacheReport r = preset_report("qwen3-next-80b-a3b", seq);
    CHECK(row_of(r, LayerKind::linear).bytes == 40108032);
    CHECK(r.bytes == 40108032 + int64_t(24576) * seq);
  }
  // Batch multiplies the state (one per sequence); fp32 doubles it.
  CHECK(row_of(preset_report("qwen3-next-80b-a3b", 10, 3), LayerKind::linear).bytes == int64_t(40108032) * 3);
  CHECK(row_of(preset_report("qwen3-next-80b-a3b", 10, 1, ElementType::fp32), LayerKind::linear).bytes == int64_t(40108032) * 2);
}

TEST_CASE("kv cache: a Mamba-2 layer keeps heads × head_dim × d_state + (heads · head_dim + 2 · groups · d_state) × d_conv") {
  // Mamba-2's module defaults (d_state 128, d_conv 4, expand 2, headdim 64, ngroups 1) at a width of 2560:
  // 5120 / 64 = 80 heads. SSM state 80 · 64 · 128 = 655 360; conv_dim 80 · 64 + 2 · 1 · 128 = 5376, × 4 = 21 504;
  // 676 864 elements = 2 707 456 B in fp32 per layer. 6 of 8 layers Mamba-2, 2 full with 4 kv heads of 64.
  KvCacheInput in;
  in.layers = 8, in.heads = 8, in.kv_heads = 4, in.head_dim = 64, in.dtype = ElementType::fp32;
  KvLayerGroup m;
  m.kind = LayerKind::mamba2, m.layers = 6, m.state_heads = 80, m.key_heads = 1, m.key_dim = 128, m.value_dim = 64,
  m.conv_kernel = 4;
  in.layer_types = {m, KvLayerGroup{LayerKind::full, 2, 0, 0, 0, 0, 0, 0, 0}};
  for (int64_t seq : {int64_t(1), int64_t(5000)}) {
    in.seq = seq;
    const KvCacheReport r = kv_cache_report(in);
    const KvLayerTypeRow& ssm = row_of(r, LayerKind::mamba2);
    CHECK(ssm.recurrent_elements == 655360);
    CHECK(ssm.conv_elements == 21504);
    CHECK(ssm.state_elements == 676864);
    CHECK(ssm.state_bytes_per_layer == 2707456);
    CHECK(ssm.bytes == int64_t(2707456) * 6);  // 16 244 736 B whatever seq
    // Full: 4 · (64 + 64) = 512 elements × 4 B × 2 layers = 4096 B a token.
    CHECK(row_of(r, LayerKind::full).bytes == int64_t(4096) * seq);
    CHECK(r.bytes == int64_t(16244736) + 4096 * seq);
  }
  CHECK(is_state_kind(LayerKind::mamba2));
  CHECK(is_state_kind(LayerKind::linear));
  CHECK_FALSE(is_state_kind(LayerKind::sliding));
  CHECK(parse_layer_kind("mamba2") == LayerKind::mamba2);
  CHECK(parse_layer_kind("linear") == LayerKind::linear);
}

TEST_CASE("kv cache: state widths missing, negative or on a cached layer type are refused by name") {
  KvCacheInput ok;
  ok.layers = 4, ok.heads = 8, ok.kv_heads = 2, ok.head_dim = 16, ok.seq = 10;
  ok.layer_types = {KvLayerGroup{LayerKind::linear, 3, 0, 0, 4, 2, 8, 8, 4}, KvLayerGroup{LayerKind::full, 1, 0, 0, 0, 0, 0, 0, 0}};
  CHECK_NOTHROW(validate_kv_cache_input(ok));
  auto with = [&](auto change) {
    KvCacheInput in = ok;
    change(in);
    return in;
  };
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].state_heads = 0; })),
                       doctest::Contains("linear layers need value heads (linear_num_value_heads) of at least 1, got 0"),
                       InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].conv_kernel = -1; })),
                       doctest::Contains("linear layers need convolution width (linear_conv_kernel_dim) of at least 1, got -1"),
                       InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].kind = LayerKind::mamba2, i.layer_types[0].key_dim = 0; })),
                       doctest::Contains("mamba2 layers need state size d_state (mamba_d_state) of at least 1, got 0"),
                       InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[1].conv_kernel = 4; })),
                       doctest::Contains("full layers have no fixed-size state"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].window = 8; })),
                       doctest::Contains("linear layers have no window and no sink tokens"), InputError);
  CHECK_THROWS_WITH_AS(kv_cache_report(with([](KvCacheInput& i) { i.layer_types[0].key_dim = i.layer_types[0].value_dim = int64_t(1) << 32; })),
                       doctest::Contains("does not fit in 63 bits"), InputError);
  // A presets file: a linear type without its widths, and a key that is not one of its own.
  const fs::path dir = fresh_dir("kv_presets_states");
  write_file_atomic(dir / "a.json", R"({"models": [{"name": "x", "label": "X", "layers": 4, "heads": 8, "kv_heads": 2,
      "head_dim": 4, "context": 10, "source": "s", "layer_types": [{"type": "linear", "layers": 3, "heads": 4,
      "key_heads": 2, "value_dim": 8, "conv_kernel": 4}, {"type": "full", "layers": 1}]}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "a.json"),
                       doctest::Contains("model 1 (x): linear layers need key head width d_k (linear_key_head_dim) of at least 1, got 0"),
                       InputError);
  write_file_atomic(dir / "b.json", R"({"models": [{"name": "x", "label": "X", "layers": 4, "heads": 8, "kv_heads": 2,
      "head_dim": 4, "context": 10, "source": "s", "layer_types": [{"type": "mamba2", "layers": 4, "heads": 4,
      "groups": 1, "d_state": 16, "head_dim": 8, "conv_kernel": 4}]}]})");
  CHECK_THROWS_WITH_AS(load_model_presets(dir / "b.json"),
                       doctest::Contains("a mamba2 layer type has no key \"d_state\" (valid: conv_kernel, groups, head_dim, "
                                         "heads, layers, state, type)"),
                       InputError);
}

TEST_CASE("cli kv-cache: Qwen3-Next's Gated DeltaNet rows say state, not tokens, and the total is their sum") {
  const CliRun r = run_cli("kv-cache --model qwen3-next-80b-a3b --seq 262144");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["layer_types"].size() == 2);
  const auto& gdn = j["layer_types"][0];
  CHECK(gdn["type"] == "linear");
  CHECK(gdn["layers"] == 36);
  CHECK(gdn["tokens_cached"] == "state");
  CHECK(gdn["grows_with_seq"] == false);
  CHECK(gdn["value_heads"] == 32);
  CHECK(gdn["key_heads"] == 16);
  CHECK(gdn["key_dim"] == 128);
  CHECK(gdn["value_dim"] == 128);
  CHECK(gdn["conv_kernel"] == 4);
  CHECK(gdn["recurrent_state_elements_per_layer"] == 32 * 128 * 128);
  CHECK(gdn["conv_state_elements_per_layer"] == (2 * 16 * 128 + 32 * 128) * 4);
  CHECK(gdn["state_bytes_per_layer"] == 1114112);
  CHECK(gdn["bytes_per_token"] == 0);
  CHECK(gdn["bytes"] == 40108032);
  CHECK(j["layer_types"][1]["type"] == "full");
  CHECK(j["layer_types"][1]["tokens_cached"] == 262144);
  CHECK(j["layer_types"][1]["grows_with_seq"] == true);
  CHECK(j["total"]["bytes"] == int64_t(24576) * 262144 + 40108032);
  CHECK(j["gqa"]["bytes"] == int64_t(98304) * 262144);
  // The same state at 1000 tokens.
  const auto short_run = nlohmann::json::parse(run_cli("kv-cache --model qwen3-next-80b-a3b --seq 1000").out);
  CHECK(short_run["layer_types"][0]["bytes"] == 40108032);

  // Custom layouts: 6 of 8 layers Gated DeltaNet (4 value heads, key heads default 4, d_k = d_v = 32, kernel 4),
  // fp32: (4 · 32 · 32 + (2 · 4 · 32 + 4 · 32) · 4) = 4096 + 1536 = 5632 elements = 22 528 B a layer.
  const CliRun lin = run_cli("kv-cache --layers 8 --heads 8 --kv-heads 2 --head-dim 64 --seq 1000 --dtype fp32 "
                             "--linear-layers 6 --linear-heads 4 --linear-key-dim 32");
  INFO(lin.err);
  REQUIRE(lin.exit_code == 0);
  const auto l = nlohmann::json::parse(lin.out);
  REQUIRE(l["layer_types"].size() == 2);
  CHECK(l["layer_types"][0]["state_elements_per_layer"] == 5632);
  CHECK(l["layer_types"][0]["bytes"] == 22528 * 6);
  CHECK(l["layer_types"][1]["layers"] == 2);
  CHECK(l["total"]["bytes"] == 22528 * 6 + 2 * (2 * 2 * 64) * 4 * 1000);
  // Every layer Mamba-2 (heads 8, head_dim 16, d_state 32, groups 2, kernel 3), fp16:
  // 8 · 16 · 32 + (8 · 16 + 2 · 2 · 32) · 3 = 4096 + 768 = 4864 elements = 9728 B a layer, × 4 layers.
  const CliRun mam = run_cli("kv-cache --layers 4 --heads 4 --kv-heads 4 --head-dim 8 --seq 77 --mamba-layers 4 "
                             "--mamba-heads 8 --mamba-head-dim 16 --mamba-state 32 --mamba-groups 2 --conv-kernel 3");
  INFO(mam.err);
  REQUIRE(mam.exit_code == 0);
  const auto m = nlohmann::json::parse(mam.out);
  REQUIRE(m["layer_types"].size() == 1);
  CHECK(m["layer_types"][0]["type"] == "mamba2");
  CHECK(m["layer_types"][0]["heads"] == 8);
  CHECK(m["layer_types"][0]["groups"] == 2);
  CHECK(m["layer_types"][0]["state"] == 32);
  CHECK(m["layer_types"][0]["head_dim"] == 16);
  CHECK(m["layer_types"][0]["state_elements_per_layer"] == 4864);
  CHECK(m["total"]["bytes"] == 9728 * 4);
}

TEST_CASE("cli kv-cache: bad Gated DeltaNet and Mamba-2 values exit 2 naming what is valid") {
  struct Bad { std::string args; const char* message; };
  const Bad cases[] = {
      {"--model gpt2-small --seq 10 --linear-layers 6", "Gated DeltaNet layers need --linear-heads"},
      {"--model gpt2-small --seq 10 --linear-layers 6 --linear-heads 4", "Gated DeltaNet layers need --linear-key-dim"},
      {"--model gpt2-small --seq 10 --linear-layers 0 --linear-heads 4 --linear-key-dim 8",
       "--linear-layers must be from 1 to the model's 12 layers, got 0"},
      {"--model gpt2-small --seq 10 --linear-layers 13 --linear-heads 4 --linear-key-dim 8",
       "--linear-layers must be from 1 to the model's 12 layers, got 13"},
      {"--model gpt2-small --seq 10 --linear-layers 6 --linear-heads 0 --linear-key-dim 8",
       "--linear-heads must be a whole number of at least 1, got 0"},
      {"--model gpt2-small --seq 10 --linear-layers 6 --linear-heads 4 --linear-key-dim 8 --conv-kernel 0",
       "--conv-kernel must be a whole number of at least 1, got 0"},
      {"--model gpt2-small --seq 10 --linear-heads 4", "--linear-heads describes Gated DeltaNet layers: give --linear-layers N too"},
      {"--model gpt2-small --seq 10 --mamba-state 4", "--mamba-state describes Mamba-2 layers: give --mamba-layers N too"},
      {"--model gpt2-small --seq 10 --conv-kernel 4", "--conv-kernel is the width of a linear or Mamba-2 layer's convolution"},
      {"--model gpt2-small --seq 10 --mamba-layers 4 --mamba-heads 8", "Mamba-2 layers need --mamba-head-dim"},
      {"--model gpt2-small --seq 10 --mamba-layers 4 --mamba-heads 8 --mamba-head-dim 8 --mamba-state 16 --mamba-groups -1",
       "--mamba-groups must be a whole number of at least 1, got -1"},
      {"--model gpt2-small --seq 10 --window 8 --linear-layers 2 --linear-heads 4 --linear-key-dim 8",
       "--window, --kv-rank, --linear-layers and --mamba-layers are exclusive"},
  };
  for (const Bad& b : cases) check_refused(b.args, b.message);
  const CliRun help = run_cli("kv-cache --help");
  for (const char* flag : {"--linear-layers", "--linear-heads", "--linear-key-heads", "--linear-key-dim", "--linear-value-dim",
                           "--mamba-layers", "--mamba-heads", "--mamba-head-dim", "--mamba-state", "--mamba-groups",
                           "--conv-kernel", "qwen3-next-80b-a3b"})
    CHECK(help.out.find(flag) != std::string::npos);
}
