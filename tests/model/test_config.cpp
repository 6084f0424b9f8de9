// Tests of config.json parsing: the families' fields and defaults, and every refusal naming its key.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "attnscope/model/config.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::error_of;

using attnscope::test::config_refusal;
namespace {

nlohmann::json gpt2() {
  return {{"model_type", "gpt2"}, {"n_layer", 12}, {"n_embd", 768}, {"n_head", 12}, {"vocab_size", 50257},
          {"n_positions", 1024}, {"layer_norm_epsilon", 1e-5}, {"activation_function", "gelu_new"}, {"n_inner", nullptr}};
}

nlohmann::json qwen() {  // Qwen2.5-0.5B's config.json, abridged
  return {{"model_type", "qwen2"}, {"hidden_size", 896}, {"num_hidden_layers", 24}, {"num_attention_heads", 14},
          {"num_key_value_heads", 2}, {"intermediate_size", 4864}, {"vocab_size", 151936},
          {"max_position_embeddings", 32768}, {"rms_norm_eps", 1e-6}, {"rope_theta", 1000000.0},
          {"tie_word_embeddings", true}, {"use_sliding_window", false}, {"sliding_window", 32768},
          {"hidden_act", "silu"}, {"rope_scaling", nullptr}};
}

nlohmann::json qwen3() {  // Qwen3-0.6B's config.json, abridged
  return {{"model_type", "qwen3"}, {"hidden_size", 1024}, {"num_hidden_layers", 28}, {"num_attention_heads", 16},
          {"num_key_value_heads", 8}, {"head_dim", 128}, {"intermediate_size", 3072}, {"vocab_size", 151936},
          {"max_position_embeddings", 40960}, {"rms_norm_eps", 1e-6}, {"rope_theta", 1000000},
          {"tie_word_embeddings", true}, {"attention_bias", false}, {"use_sliding_window", false},
          {"sliding_window", nullptr}, {"max_window_layers", 28}, {"hidden_act", "silu"}, {"rope_scaling", nullptr}};
}

nlohmann::json phi3() {  // Phi-3-mini-4k-instruct's config.json, abridged
  return {{"model_type", "phi3"}, {"hidden_size", 3072}, {"num_hidden_layers", 32}, {"num_attention_heads", 32},
          {"num_key_value_heads", 32}, {"intermediate_size", 8192}, {"vocab_size", 32064},
          {"max_position_embeddings", 4096}, {"original_max_position_embeddings", 4096}, {"rms_norm_eps", 1e-5},
          {"rope_theta", 10000.0}, {"rope_scaling", nullptr}, {"sliding_window", 2047},
          {"tie_word_embeddings", false}, {"hidden_act", "silu"}, {"embd_pdrop", 0.0}, {"resid_pdrop", 0.0}};
}

nlohmann::json gemma2() {  // gemma-2-2b's config.json, abridged
  return {{"model_type", "gemma2"}, {"hidden_size", 2304}, {"num_hidden_layers", 26}, {"num_attention_heads", 8},
          {"num_key_value_heads", 4}, {"head_dim", 256}, {"intermediate_size", 9216}, {"vocab_size", 256000},
          {"max_position_embeddings", 8192}, {"rms_norm_eps", 1e-6}, {"rope_theta", 10000.0},
          {"hidden_act", "gelu_pytorch_tanh"}, {"hidden_activation", "gelu_pytorch_tanh"},
          {"query_pre_attn_scalar", 256}, {"sliding_window", 4096}, {"attn_logit_softcapping", 50.0},
          {"final_logit_softcapping", 30.0}, {"attention_bias", false}, {"cache_implementation", "hybrid"}};
}

nlohmann::json gemma3() {  // gemma-3-1b-pt's config.json, abridged
  return {{"model_type", "gemma3_text"}, {"hidden_size", 1152}, {"num_hidden_layers", 26}, {"num_attention_heads", 4},
          {"num_key_value_heads", 1}, {"head_dim", 256}, {"intermediate_size", 6912}, {"vocab_size", 262144},
          {"max_position_embeddings", 32768}, {"rms_norm_eps", 1e-6}, {"rope_theta", 1000000},
          {"rope_local_base_freq", 10000}, {"rope_scaling", nullptr}, {"hidden_activation", "gelu_pytorch_tanh"},
          {"query_pre_attn_scalar", 256}, {"sliding_window", 512}, {"sliding_window_pattern", 6},
          {"attn_logit_softcapping", nullptr}, {"final_logit_softcapping", nullptr}, {"attention_bias", false}};
}

nlohmann::json smollm3() {  // SmolLM3-3B's config.json, abridged (no_rope_layers written out: every 4th is 0)
  nlohmann::json j = {{"model_type", "smollm3"}, {"hidden_size", 2048}, {"num_hidden_layers", 36},
                      {"num_attention_heads", 16}, {"num_key_value_heads", 4}, {"intermediate_size", 11008},
                      {"vocab_size", 128256}, {"max_position_embeddings", 65536}, {"rms_norm_eps", 1e-6},
                      {"rope_theta", 5000000.0}, {"hidden_act", "silu"}, {"tie_word_embeddings", true},
                      {"use_sliding_window", false}, {"sliding_window", nullptr}, {"no_rope_layer_interval", 4},
                      {"attention_bias", false}, {"mlp_bias", false}, {"rope_scaling", nullptr}};
  for (int i = 0; i < 36; ++i) j["no_rope_layers"].push_back((i + 1) % 4 != 0 ? 1 : 0);
  return j;
}

}  // namespace

TEST_CASE("model config: GPT-2 small reads with Hugging Face's defaults and its parameter count") {
  const ModelConfig c = parse_model_config(gpt2().dump(), "config.json");
  CHECK(c.family == Family::gpt2);
  CHECK(c.norm == NormKind::layernorm);
  CHECK(c.positions == PositionKind::learned);
  CHECK(c.mlp == MlpKind::gelu_new);
  CHECK(c.head_dim == 64);
  CHECK(c.ffn_dim == 3072);
  CHECK(c.kv_heads == 12);
  CHECK(c.tied_embeddings);
  CHECK(c.max_positions == 1024);
  CHECK(c.parameter_count() == 124439808);  // GPT-2 small, as published (tied head counted once)
}

TEST_CASE("model config: Qwen2.5-0.5B reads as GQA 14/2 with q/k/v biases, tied, no sliding window") {
  const ModelConfig c = parse_model_config(qwen().dump(), "config.json");
  CHECK(c.family == Family::llama);
  CHECK(c.heads == 14);
  CHECK(c.kv_heads == 2);
  CHECK(c.head_dim == 64);
  CHECK(c.qkv_bias);
  CHECK_FALSE(c.o_bias);
  CHECK(c.tied_embeddings);
  CHECK(c.sliding_window == 0);
  CHECK(c.rope_theta == 1000000.0);
  CHECK(c.parameter_count() == 494032768);  // Qwen2.5-0.5B's published count
}

TEST_CASE("model config: llama defaults, explicit head_dim, and Mistral's sliding window") {
  nlohmann::json j = {{"model_type", "llama"}, {"hidden_size", 24}, {"num_hidden_layers", 2}, {"num_attention_heads", 4},
                      {"intermediate_size", 40}, {"vocab_size", 64}, {"max_position_embeddings", 32}};
  ModelConfig c = parse_model_config(j.dump(), "config.json");
  CHECK(c.kv_heads == 4);  // MHA when num_key_value_heads is absent
  CHECK(c.head_dim == 6);
  CHECK(c.norm_eps == 1e-6);
  CHECK(c.rope_theta == 10000.0);
  CHECK_FALSE(c.tied_embeddings);
  CHECK_FALSE(c.qkv_bias);
  j["head_dim"] = 8;
  CHECK(parse_model_config(j.dump(), "config.json").head_dim == 8);
  j["model_type"] = "mistral";
  j["sliding_window"] = 4096;
  CHECK(parse_model_config(j.dump(), "config.json").sliding_window == 4096);
  CHECK(parse_model_config(j.dump(), "config.json").layer_window == std::vector<int>{4096, 4096});
  j["model_type"] = "qwen2";  // Qwen2's window holds from max_window_layers on
  j["use_sliding_window"] = true;
  j["max_window_layers"] = 1;
  CHECK(parse_model_config(j.dump(), "config.json").layer_window == std::vector<int>{0, 4096});
  j.erase("use_sliding_window");
  j.erase("max_window_layers");
  j["model_type"] = "mistral";
  j["sliding_window"] = nullptr;
  CHECK(parse_model_config(j.dump(), "config.json").sliding_window == 0);
}

TEST_CASE("model config: unknown model_type, rope_scaling and missing fields are refused naming the key") {
  nlohmann::json j = qwen();
  j["model_type"] = "bert";
  std::string e = config_refusal(j);
  CHECK(contains(e, "\"model_type\" = \"bert\" is not supported (supported: " + std::string(supported_model_types()) + ")"));
  CHECK(contains(supported_model_types(), "gpt2, llama, mistral, qwen2, qwen3, phi3, smollm3, gemma2, gemma3_text"));
  for (const char* type : {"deepseek_v3", "qwen3_moe", "olmoe", "granite", "granitemoe", "gpt_neox", "olmo2", "gemma3", "gpt_oss"})
    CHECK(contains(supported_model_types(), type));
  CHECK(contains(e, "cfg/config.json"));
  j.erase("model_type");
  CHECK(contains(config_refusal(j), "no \"model_type\""));

  j = qwen();
  j["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 32.0}};  // without its frequency bands
  CHECK(contains(config_refusal(j), "\"rope_scaling\" of rope type \"llama3\" has no \"low_freq_factor\" (required: factor, "
                             "low_freq_factor, high_freq_factor)"));
  j["rope_scaling"] = {{"rope_type", "ntk-by-parts"}, {"factor", 32.0}};
  CHECK(contains(config_refusal(j), "\"rope_scaling\" has rope type \"ntk-by-parts\", which attnscope does not implement "
                             "(supported: default, linear, dynamic, yarn, llama3, longrope)"));

  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size",
                          "max_position_embeddings"}) {
    j = qwen();
    j.erase(key);
    CAPTURE(key);
    CHECK(contains(config_refusal(j), "config.json has no \"" + std::string(key) + "\""));
  }
  for (const char* key : {"n_layer", "n_embd", "n_head", "vocab_size"}) {
    nlohmann::json g = gpt2();
    g.erase(key);
    CAPTURE(key);
    CHECK(contains(config_refusal(g), "config.json has no \"" + std::string(key) + "\""));
  }
  nlohmann::json g = gpt2();
  g.erase("n_positions");
  CHECK(contains(config_refusal(g), "no \"n_positions\""));
  g["n_ctx"] = 512;  // the older spelling
  CHECK(parse_model_config(g.dump(), "c").max_positions == 512);
}

TEST_CASE("model config: wrong types, impossible sizes and unsupported switches are refused") {
  nlohmann::json j = qwen();
  j["num_key_value_heads"] = 3;
  CHECK(contains(config_refusal(j), "key/value heads (3) must divide the attention heads (14)"));
  j = qwen();
  j["hidden_size"] = "896";
  CHECK(contains(config_refusal(j), "\"hidden_size\" must be a whole number"));
  j = qwen();
  j["num_attention_heads"] = 0;
  CHECK(contains(config_refusal(j), "\"num_attention_heads\" = 0 is outside what attnscope supports"));
  j = qwen();
  j["hidden_act"] = "gelu";
  CHECK(contains(config_refusal(j), "\"hidden_act\" = \"gelu\" is not supported"));
  j = qwen();
  j["tie_word_embeddings"] = "yes";
  CHECK(contains(config_refusal(j), "\"tie_word_embeddings\" must be true or false"));
  j = qwen();
  j["head_dim"] = 63;
  CHECK(contains(config_refusal(j), "head width 63 is odd"));
  j = qwen();
  j["num_attention_heads"] = 13;
  j["num_key_value_heads"] = 1;
  CHECK(contains(config_refusal(j), "does not divide \"hidden_size\""));
  nlohmann::json g = gpt2();
  g["activation_function"] = "relu";
  CHECK(contains(config_refusal(g), "\"activation_function\" = \"relu\" is not supported for gpt2"));
  g = gpt2();
  g["scale_attn_by_inverse_layer_idx"] = true;
  CHECK(contains(config_refusal(g), "scale_attn_by_inverse_layer_idx"));
  g = gpt2();
  g["n_head"] = 7;
  CHECK(contains(config_refusal(g), "\"n_head\" = 7 does not divide \"n_embd\" = 768"));
  CHECK(contains(error_of([] { (void)parse_model_config("{\"model_type\":", "c.json"); }), "not valid JSON"));
  CHECK(contains(error_of([] { (void)parse_model_config("[1]", "c.json"); }), "not a JSON object"));
}
TEST_CASE("model config: SmolLM3's no_rope_layers (1 = the layer uses RoPE) make every fourth layer NoPE") {
  const ModelConfig c = parse_model_config(smollm3().dump(), "config.json");
  CHECK(c.model_type == "smollm3");
  CHECK(c.mlp == MlpKind::swiglu);
  CHECK(c.head_dim == 128);
  REQUIRE(c.layer_rope_theta.size() == 36);
  for (int i = 0; i < 36; ++i) {
    CAPTURE(i);
    CHECK(c.nope_layer(i) == (i % 4 == 3));
    CHECK(c.layer_rope_theta[size_t(i)] == (i % 4 == 3 ? 0.0 : 5000000.0));
    CHECK(c.layer_window[size_t(i)] == 0);
  }
  // Without the list, SmolLM3Config derives the same one from no_rope_layer_interval.
  nlohmann::json j = smollm3();
  j.erase("no_rope_layers");
  CHECK(parse_model_config(j.dump(), "config.json").layer_rope_theta == c.layer_rope_theta);
  j["no_rope_layer_interval"] = 3;
  CHECK(parse_model_config(j.dump(), "config.json").nope_layer(2));
  CHECK_FALSE(parse_model_config(j.dump(), "config.json").nope_layer(3));
  // A list of its own: layer 0 NoPE only.
  j = smollm3();
  for (int i = 0; i < 36; ++i) j["no_rope_layers"][size_t(i)] = i == 0 ? 0 : 1;
  const ModelConfig own = parse_model_config(j.dump(), "config.json");
  CHECK(own.nope_layer(0));
  CHECK_FALSE(own.nope_layer(3));
  // use_sliding_window puts the window on the NoPE layers, as SmolLM3Config's layer_types does.
  j = smollm3();
  j["use_sliding_window"] = true;
  j["sliding_window"] = 4096;
  const ModelConfig windowed = parse_model_config(j.dump(), "config.json");
  CHECK(windowed.layer_window[3] == 4096);
  CHECK(windowed.layer_window[0] == 0);
  // The other families get constant per-layer vectors.
  const ModelConfig q = parse_model_config(qwen().dump(), "config.json");
  CHECK(q.layer_rope_theta == std::vector<double>(24, 1000000.0));
  CHECK(q.layer_window == std::vector<int>(24, 0));
  CHECK(q.attn_scale == doctest::Approx(1.0 / 8.0));
}

TEST_CASE("model config: gemma-2-2b reads as alternating local (4096) and global layers with soft-capping") {
  const ModelConfig c = parse_model_config(gemma2().dump(), "config.json");
  CHECK(c.mlp == MlpKind::geglu);
  CHECK(c.sandwich_norms);
  CHECK(c.norm_plus_one);
  CHECK_FALSE(c.qk_norm);
  CHECK(c.tied_embeddings);
  CHECK(c.attn_scale == doctest::Approx(1.0 / 16.0));
  CHECK(c.attn_softcap == 50.0);
  CHECK(c.final_softcap == 30.0);
  CHECK(c.embedding_scale == 48.0);
  for (int i = 0; i < 26; ++i) {
    CAPTURE(i);
    CHECK(c.layer_window[size_t(i)] == (i % 2 == 0 ? 4096 : 0));  // layer 0 sliding, layer 1 global, …
    CHECK(c.layer_rope_theta[size_t(i)] == 10000.0);
  }
  CHECK(c.parameter_count() == 2614341888);  // gemma-2-2b's published count
  // Gemma2Config's defaults (50 and 30) hold when the keys are absent; null turns them off.
  nlohmann::json j = gemma2();
  j.erase("attn_logit_softcapping");
  j["final_logit_softcapping"] = nullptr;
  const ModelConfig d = parse_model_config(j.dump(), "config.json");
  CHECK(d.attn_softcap == 50.0);
  CHECK(d.final_softcap == 0.0);
}

TEST_CASE("model config: gemma-3-1b reads as five local layers (window 512, RoPE 10000) then one global (1e6)") {
  const ModelConfig c = parse_model_config(gemma3().dump(), "config.json");
  CHECK(c.qk_norm);
  CHECK(c.attn_softcap == 0.0);
  CHECK(c.final_softcap == 0.0);
  CHECK(c.kv_heads == 1);
  CHECK(c.sliding_window == 512);
  for (int i = 0; i < 26; ++i) {
    CAPTURE(i);
    const bool global = (i + 1) % 6 == 0;
    CHECK(c.layer_window[size_t(i)] == (global ? 0 : 512));
    CHECK(c.layer_rope_theta[size_t(i)] == (global ? 1000000.0 : 10000.0));
  }
  CHECK(c.parameter_count() == 999885952);  // gemma-3-1b's published count
  // layer_types, as newer transformers write it, wins over the pattern.
  nlohmann::json j = gemma3();
  for (int i = 0; i < 26; ++i) j["layer_types"].push_back(i == 0 ? "full_attention" : "sliding_attention");
  const ModelConfig t = parse_model_config(j.dump(), "config.json");
  CHECK(t.layer_window[0] == 0);
  CHECK(t.layer_window[5] == 512);
  CHECK(t.layer_rope_theta[0] == 1000000.0);
}

TEST_CASE("model config: the new families' fields are refused by name when wrong or unsupported") {
  nlohmann::json j = gemma3();
  j["layer_types"] = std::vector<std::string>(25, "sliding_attention");
  CHECK(contains(config_refusal(j), "\"layer_types\" lists 25 layers but \"num_hidden_layers\" is 26"));
  j["layer_types"] = std::vector<std::string>(26, "chunked_attention");
  CHECK(contains(config_refusal(j), "\"layer_types\"[0] = \"chunked_attention\" is not supported"));
  j = gemma3();
  j["sliding_window_pattern"] = 0;
  CHECK(contains(config_refusal(j), "\"sliding_window_pattern\" = 0 is outside"));
  j = smollm3();
  j["no_rope_layers"].erase(0);
  CHECK(contains(config_refusal(j), "\"no_rope_layers\" lists 35 layers but \"num_hidden_layers\" is 36"));
  j = smollm3();
  j["no_rope_layers"][5] = 2;
  CHECK(contains(config_refusal(j), "\"no_rope_layers\"[5] = 2 must be 1"));
  j = smollm3();
  j["no_rope_layers"] = "all";
  CHECK(contains(config_refusal(j), "\"no_rope_layers\" must be a list"));
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"}) {
    CAPTURE(key);
    j = gemma2();
    j[key] = 0.0;
    CHECK(contains(config_refusal(j), "\"" + std::string(key) + "\" = 0.0 must be above 0"));
    j[key] = -5;
    CHECK(contains(config_refusal(j), "must be above 0"));
  }
  j = gemma2();
  j["hidden_activation"] = "gelu";
  CHECK(contains(config_refusal(j), "\"hidden_activation\" = \"gelu\" is not supported for gemma2"));
  j = gemma3();
  j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 8.0}, {"beta_fast", 32}};
  CHECK(contains(config_refusal(j), "\"rope_scaling\" has \"beta_fast\", which the rope type \"linear\" does not take (it "
                             "takes: factor, rope_theta)"));
  j = gemma3();
  j["use_bidirectional_attention"] = true;
  CHECK(contains(config_refusal(j), "\"use_bidirectional_attention\" = true is not supported"));
  j = gemma3();
  j["query_pre_attn_scalar"] = 0;
  CHECK(contains(config_refusal(j), "\"query_pre_attn_scalar\""));
  j = gemma2();
  j["head_dim"] = 255;
  CHECK(contains(config_refusal(j), "head width 255 is odd"));
  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size", "vocab_size"}) {
    CAPTURE(key);
    j = gemma2();
    j.erase(key);
    CHECK(contains(config_refusal(j), "config.json has no \"" + std::string(key) + "\""));
  }
  // The multimodal Gemma 3 reads its text_config as gemma3_text (its weights: test_dense_families.cpp).
  j = {{"model_type", "gemma3"}, {"text_config", gemma3()}};
  const ModelConfig container = parse_model_config(j.dump(), "config.json");
  CHECK(container.container == "gemma3");
  CHECK(container.model_type == "gemma3_text");
  CHECK(container.layers == parse_model_config(gemma3().dump(), "config.json").layers);
}

TEST_CASE("model config: Qwen3-0.6B reads as GQA 16/8 with head_dim 128, q/k norms, no biases, tied") {
  ModelConfig c = parse_model_config(qwen3().dump(), "config.json");
  CHECK(c.family == Family::llama);
  CHECK(c.heads == 16);
  CHECK(c.kv_heads == 8);
  CHECK(c.head_dim == 128);  // given, and not 1024 / 16
  CHECK(c.qk_norm);
  CHECK_FALSE(c.qkv_bias);
  CHECK_FALSE(c.o_bias);
  CHECK(c.tied_embeddings);
  CHECK(c.sliding_window == 0);
  CHECK(c.rope_theta == 1000000.0);
  // The model card's "0.44B non-embedding parameters": the layers and the final norm, q/k norms included.
  const int64_t embedding = int64_t(c.vocab) * c.d_model;
  CHECK(c.parameter_count() - embedding == 28 * (1024 * 2048 * 2 + 2 * 1024 * 1024 + 3 * 1024 * 3072 + 2 * 1024 + 2 * 128) + 1024);
  CHECK(std::llround((c.parameter_count() - embedding) / 1e7) == 44);
  nlohmann::json j = qwen3();
  j.erase("head_dim");
  CHECK(parse_model_config(j.dump(), "c").head_dim == 128);  // Qwen3Config's default, not hidden / heads
  j["attention_bias"] = true;
  c = parse_model_config(j.dump(), "c");
  CHECK(c.qkv_bias);
  CHECK(c.o_bias);
  j = qwen3();
  j["layer_types"] = std::vector<std::string>(28, "full_attention");
  CHECK(parse_model_config(j.dump(), "c").sliding_window == 0);
  j = qwen3();
  j["qk_norm"] = false;  // not a Qwen3Config key: the family's own switch decides
  CHECK(parse_model_config(j.dump(), "c").qk_norm);
  CHECK_FALSE(parse_model_config(qwen().dump(), "c").qk_norm);
}

TEST_CASE("model config: Phi-3-mini reads as MHA 32/32 with its 2047-token window, eps 1e-5, untied") {
  const ModelConfig c = parse_model_config(phi3().dump(), "config.json");
  CHECK(c.family == Family::llama);
  CHECK(c.heads == 32);
  CHECK(c.kv_heads == 32);
  CHECK(c.head_dim == 96);
  CHECK(c.ffn_dim == 8192);
  CHECK(c.sliding_window == 2047);
  CHECK(c.norm_eps == 1e-5);
  CHECK_FALSE(c.tied_embeddings);
  CHECK_FALSE(c.qkv_bias);
  CHECK_FALSE(c.qk_norm);
  CHECK(std::llround(c.parameter_count() / 1e8) == 38);  // "3.8B parameters"
  nlohmann::json j = phi3();
  j.erase("rms_norm_eps");
  CHECK(parse_model_config(j.dump(), "c").norm_eps == 1e-5);  // Phi3Config's default
  j["attention_bias"] = true;  // Phi3Attention's fused projections have no bias whatever this says
  CHECK_FALSE(parse_model_config(j.dump(), "c").qkv_bias);
  j["sliding_window"] = nullptr;
  CHECK(parse_model_config(j.dump(), "c").sliding_window == 0);
}

TEST_CASE("model config: the Qwen3 and Phi-3 fields attnscope does not implement are refused by name") {
  nlohmann::json j = qwen3();
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"original_max_position_embeddings", 32768}};
  std::string e = config_refusal(j);
  CHECK(contains(e, "\"rope_scaling\" of rope type \"yarn\" has no \"factor\" (required: factor)"));
  j = qwen3();
  j["use_sliding_window"] = true;
  CHECK(contains(config_refusal(j), "\"use_sliding_window\" = true is not supported for qwen3"));
  j = qwen3();
  j["layer_types"] = std::vector<std::string>(28, "full_attention");
  j["layer_types"][27] = "sliding_attention";
  CHECK(contains(config_refusal(j), "\"layer_types\"[27] = \"sliding_attention\" is not supported for qwen3"));
  j["layer_types"] = std::vector<std::string>(27, "full_attention");
  CHECK(contains(config_refusal(j), "\"layer_types\" must be a list of 28 entries"));
  j = qwen3();
  j["rope_parameters"] = {{"rope_type", "yarn"}, {"factor", 0.5}, {"rope_theta", 1000000}};
  CHECK(contains(config_refusal(j), "\"factor\" = 0.5 is outside the valid range"));
  j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5000}};
  j.erase("rope_theta");
  CHECK(parse_model_config(j.dump(), "c").rope_theta == 5000.0);  // transformers 5's place for rope_theta

  j = phi3();
  j["rope_scaling"] = {{"type", "longrope"}, {"short_factor", {1.0, 1.0}}, {"long_factor", {1.0, 2.0}}};
  CHECK(contains(config_refusal(j), "\"rope_scaling\": \"short_factor\" lists 2 factors; it must list one per rotated pair, "
                             "rotary width / 2 = 48"));
  j["rope_scaling"] = {{"type", "su"}, {"short_factor", {1.0, 1.0}}, {"long_factor", {1.0, 2.0}}};  // read as longrope
  CHECK(contains(config_refusal(j), "\"rope_scaling\": \"short_factor\" lists 2 factors"));
  j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  CHECK(contains(config_refusal(j), "\"rope_scaling\" has rope type \"linear\", which phi3 does not take (Phi3Config: default or "
                             "longrope; su and yarn are read as longrope)"));
  j = phi3();
  j["partial_rotary_factor"] = 0.75;  // Phi-4-mini's: 72 of the 96 values rotated
  CHECK(parse_model_config(j.dump(), "c").rotated_dim() == 72);
  j["partial_rotary_factor"] = 0.01;
  CHECK(contains(config_refusal(j), "\"partial_rotary_factor\" = 0.01 rotates 0 of the head's 96 values"));
  nlohmann::json l = qwen();
  l["partial_rotary_factor"] = 0.5;
  CHECK(contains(config_refusal(l), "\"partial_rotary_factor\" = 0.5 is not supported for qwen2 (its attention rotates the whole head"));
  j = phi3();
  j["hidden_act"] = "gelu";
  CHECK(contains(config_refusal(j), "\"hidden_act\" = \"gelu\" is not supported for phi3"));
  j = phi3();
  j["num_key_value_heads"] = 5;
  CHECK(contains(config_refusal(j), "key/value heads (5) must divide the attention heads (32)"));
  j = phi3();
  j.erase("intermediate_size");
  CHECK(contains(config_refusal(j), "config.json has no \"intermediate_size\" (needed to build the phi3 network)"));
}

TEST_CASE("model config: head counts from any decoder's config.json, for attentions computed elsewhere") {
  HeadCounts h = parse_head_counts(qwen().dump(), "c");
  CHECK(h.heads == 14);
  CHECK(h.kv_heads == 2);
  h = parse_head_counts(gpt2().dump(), "c");
  CHECK(h.heads == 12);
  CHECK(h.kv_heads == 12);
  h = parse_head_counts(R"({"model_type":"falcon","num_attention_heads":71,"multi_query":true})", "c");
  CHECK(h.kv_heads == 1);
  CHECK(contains(error_of([] { (void)parse_head_counts("{}", "c"); }), "neither \"num_attention_heads\" nor \"n_head\""));
  CHECK(contains(error_of([] { (void)parse_head_counts(R"({"num_attention_heads":8,"num_key_value_heads":3})", "c"); }),
                 "must divide"));
}
