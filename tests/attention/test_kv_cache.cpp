// KV-cache calculator: the formula for every preset, the published configurations, memory fits,
// bad inputs, and `attnscope kv-cache` end to end.
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/attention/kv_cache.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

// The formula of the issue, written out independently of the engine.
int64_t expected_bytes(const ModelPreset& p, int64_t kv_heads, int bytes, int64_t seq, int64_t batch) {
  return 2 * p.layers * kv_heads * p.head_dim * bytes * seq * batch;
}

int64_t expected_params(const ModelPreset& p, int64_t kv_heads) {
  const int64_t c = p.heads * p.head_dim;
  return p.layers * (2 * c * p.heads * p.head_dim + 2 * c * kv_heads * p.head_dim);
}

}  // namespace

TEST_CASE("kv cache: the presets carry the configurations the issue lists") {
  const std::vector<ModelPreset> presets = load_model_presets();
  struct Published { const char* name; int64_t layers, heads, kv_heads, head_dim; };
  const Published published[] = {{"gpt2-small", 12, 12, 12, 64},
                                 {"llama-2-7b", 32, 32, 32, 128},
                                 {"llama-2-70b", 80, 64, 8, 128},
                                 {"mistral-7b", 32, 32, 8, 128},
                                 {"falcon-7b", 32, 71, 1, 64}};
  REQUIRE(presets.size() == 5);
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
                                         "mistral-7b, falcon-7b)"),
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
          CHECK(r.gqa.kv_heads == p.kv_heads);
          CHECK(r.mqa.kv_heads == 1);
          CHECK(r.mha.bytes == expected_bytes(p, p.heads, b, seq, batch));
          CHECK(r.gqa.bytes == expected_bytes(p, p.kv_heads, b, seq, batch));
          CHECK(r.mqa.bytes == expected_bytes(p, 1, b, seq, batch));
          CHECK(r.gqa.bytes_per_token == expected_bytes(p, p.kv_heads, b, 1, 1));
          CHECK(r.gqa.gib == doctest::Approx(double(r.gqa.bytes) / (1 << 30)));
          CHECK(r.mha.attention_params == expected_params(p, p.heads));
          CHECK(r.gqa.attention_params == expected_params(p, p.kv_heads));
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

TEST_CASE("cli kv-cache: bad input exits 2 with one clear line") {
  struct Bad { std::string args; const char* message; };
  const Bad cases[] = {
      {"--model gpt5 --seq 10", "unknown model 'gpt5' (valid: gpt2-small, llama-2-7b, llama-2-70b, mistral-7b, falcon-7b)"},
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
  for (const Bad& b : cases) {
    const CliRun r = run_cli("kv-cache " + b.args);
    CAPTURE(b.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(b.message) != std::string::npos);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  }
}

TEST_CASE("kv cache: an open checkpoint's sliding-window layers keep at most their window's tokens") {
  // gemma-3-1b: 26 layers, 1 K/V head of 256, five local layers (window 512) then one global.
  KvCacheInput in;
  in.layers = 26, in.heads = 4, in.kv_heads = 1, in.head_dim = 256, in.seq = 32768, in.batch = 1;
  in.dtype = ElementType::fp16;
  for (int l = 0; l < 26; ++l) in.layer_window.push_back((l + 1) % 6 == 0 ? 0 : 512);
  const KvCacheReport r = kv_cache_report(in);
  const int64_t per_layer_token = 2 * 1 * 256 * 2;  // K and V, G = 1, d_head 256, fp16
  CHECK(r.gqa.bytes == per_layer_token * (22 * 512 + 4 * 32768));
  CHECK(r.gqa.bytes_per_token == per_layer_token * 26);  // one token: every layer keeps it
  CHECK(r.mha.bytes == 4 * r.gqa.bytes);
  // Within the window every layer keeps every token: the plain formula.
  in.seq = 512;
  CHECK(kv_cache_report(in).gqa.bytes == kv_cache_bytes(26, 1, 256, 2, 512, 1));
  in.layer_window.pop_back();
  CHECK_THROWS_WITH_AS(kv_cache_report(in), doctest::Contains("the sliding windows list 25 layers, not the model's 26"),
                       InputError);
}
