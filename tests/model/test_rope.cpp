// Tests of RoPE as each config.json says it (rope_scaling / rope_parameters of every transformers 5 rope
// type, partial_rotary_factor), the float32 contract's Gemma embedding scale, and the real config.json
// files of tests/fixtures/real-configs: which open and which are refused by name.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/attention/positions.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/config.h"
#include "attnscope/model/forward.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::model_fixture;

namespace {

namespace fs = std::filesystem;

fs::path real_configs() { return fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "real-configs"; }

nlohmann::json real_config(const std::string& id) {
  return nlohmann::json::parse(read_file(real_configs() / (id + ".json"), 1 << 20));
}

std::string refusal(const nlohmann::json& j) {
  return error_of([&] { (void)parse_model_config(j.dump(), "cfg/config.json"); });
}

// The largest change of the attentions or (relative) logits when `edit` changes the opened model's
// config, on `ids`.
double moved(const std::string& name, const std::vector<int32_t>& ids, const std::function<void(ModelConfig&)>& edit) {
  const auto m = model::open(model_fixture(name));
  Model changed = *m;
  edit(changed.config);
  const ForwardResult a = forward(*m, ids), b = forward(changed, ids);
  double att = 0;
  for (size_t i = 0; i < a.attentions.size(); ++i) att = std::max(att, double(std::abs(a.attentions[i] - b.attentions[i])));
  const double logit = (a.logits - b.logits).cwiseAbs().maxCoeff() / std::max(1.0f, a.logits.cwiseAbs().maxCoeff());
  return std::max(att, logit);
}

}  // namespace

TEST_CASE("model rope: each fixture's scaling is what its reference needs: without it the results move") {
  // The RoPE fixtures match PyTorch (test_forward.cpp runs them with the others); here, dropping each
  // setting moves the result far beyond the tolerances, so none of them passes by being ignored.
  auto plain = [](ModelConfig& c) { c.rope_scaling = RopeScalingConfig{}; };
  const auto ids12 = test::fixture_ids("qwen3_yarn_bf16");
  for (const std::string name : {"llama32_1b_llama3rope_bf16", "qwen3_yarn_bf16", "qwen2_yarn_notrunc_f16",
                                 "phi35_longrope_bf16", "phi4mini_partial_longrope_bf16", "gemma3_linear_global_bf16"}) {
    CAPTURE(name);
    CHECK(moved(name, test::fixture_ids(name), plain) > 1e-3);
  }
  // Dynamic NTK: the 12-token input is within max_position_embeddings (16), where the frequencies are
  // the plain ones exactly; the 20-token one is past it, where the base grows.
  const auto dyn_more = test::fixture_more_ids("llama_dynamic_f32");
  REQUIRE(dyn_more.size() == 1);
  CHECK(dyn_more[0].size() > 16);
  CHECK(moved("llama_dynamic_f32", test::fixture_ids("llama_dynamic_f32"), plain) == 0.0);
  CHECK(moved("llama_dynamic_f32", dyn_more[0], [](ModelConfig& c) {
          c.rope_scaling = RopeScalingConfig{};
          c.max_positions = 64;  // plain RoPE would refuse 20 tokens here
        }) > 1e-3);
  // LongRoPE: up to original_max_position_embeddings (16) the short factors, beyond it the long ones.
  auto long_is_short = [](ModelConfig& c) { c.rope_scaling.long_factor = c.rope_scaling.short_factor; };
  auto short_is_long = [](ModelConfig& c) { c.rope_scaling.short_factor = c.rope_scaling.long_factor; };
  const auto phi_more = test::fixture_more_ids("phi35_longrope_bf16");
  CHECK(moved("phi35_longrope_bf16", ids12, long_is_short) == 0.0);
  CHECK(moved("phi35_longrope_bf16", ids12, short_is_long) > 1e-3);
  CHECK(moved("phi35_longrope_bf16", phi_more[0], long_is_short) > 1e-3);
  CHECK(moved("phi35_longrope_bf16", phi_more[0], short_is_long) == 0.0);
  // Phi-4-mini's partial rotary: rotating the whole head moves it.
  CHECK(moved("phi4mini_partial_longrope_bf16", ids12, [](ModelConfig& c) {
          c.rotary_dim = 0;
          c.rope_scaling.short_factor.resize(size_t(c.head_dim / 2), 1.0);
          c.rope_scaling.long_factor.resize(size_t(c.head_dim / 2), 1.0);
        }) > 1e-3);
  // Gemma 3 scales its global layers only: scaling the sliding ones too moves the result.
  CHECK(moved("gemma3_linear_global_bf16", ids12, [](ModelConfig& c) {
          c.layer_rope_scaled.assign(size_t(c.layers), true);
        }) > 1e-3);
}

TEST_CASE("model rope: the fixtures open with the settings their config.json gives") {
  auto c = model::open(model_fixture("llama32_1b_llama3rope_bf16"))->config;
  CHECK(c.rope_scaling.type == RopeType::llama3);
  CHECK(c.rope_scaling.factor == 32.0);
  CHECK(c.rope_scaling.original_max == 64);
  CHECK(c.rope_theta == 500000.0);
  CHECK(c.tied_embeddings);
  c = model::open(model_fixture("phi4mini_partial_longrope_bf16"))->config;
  CHECK(c.rope_scaling.type == RopeType::longrope);
  CHECK(c.head_dim == 16);
  CHECK(c.rotated_dim() == 12);
  CHECK(c.rope_scaling.short_factor.size() == 6);
  CHECK(c.rope_scaling.original_max == 16);  // the top-level key, as Phi writes it
  CHECK(c.rope_scaling.attention_factor == doctest::Approx(std::sqrt(1 + std::log(4.0) / std::log(16.0))));
  c = model::open(model_fixture("qwen2_yarn_notrunc_f16"))->config;
  CHECK(c.rope_scaling.type == RopeType::yarn);
  CHECK_FALSE(c.rope_scaling.truncate);
  CHECK(c.rope_scaling.attention_factor == doctest::Approx(yarn_mscale(8, 1.0) / yarn_mscale(8, 0.5)));
  c = model::open(model_fixture("qwen3_yarn_bf16"))->config;
  CHECK(c.rope_scaling.attention_factor == doctest::Approx(0.1 * std::log(4.0) + 1));
  c = model::open(model_fixture("gemma3_linear_global_bf16"))->config;
  CHECK(c.rope_scaling.type == RopeType::linear);
  CHECK(c.layer_rope_scaled == std::vector<bool>{false, false, true});
  CHECK(c.layer_rope_theta == std::vector<double>{10000.0, 10000.0, 1000000.0});
}

TEST_CASE("model rope: Llama 3's bands: short wavelengths kept, long ones divided by the factor, blended between") {
  const ModelConfig c = parse_model_config(real_config("meta-llama/Llama-3.2-1B-Instruct").dump(), "Llama-3.2-1B");
  REQUIRE(c.rope_scaling.type == RopeType::llama3);
  const RopeFrequencies f = c.layer_rope(0, 10);
  const std::vector<float> plain = rope_inv_freq_float32(500000.0, 64);
  REQUIRE(f.inv_freq.size() == 32);
  CHECK(f.attention_factor == 1.0f);
  int kept = 0, divided = 0, blended = 0;
  for (size_t k = 0; k < plain.size(); ++k) {
    CAPTURE(k);
    const double wavelen = 2 * M_PI / plain[k];
    if (wavelen < 8192.0 / 4) {
      CHECK(f.inv_freq[k] == plain[k]);
      ++kept;
    } else if (wavelen > 8192.0 / 1) {
      CHECK(f.inv_freq[k] == plain[k] / 32.0f);
      ++divided;
    } else {
      CHECK(f.inv_freq[k] < plain[k]);
      CHECK(f.inv_freq[k] > plain[k] / 32.0f);
      ++blended;
    }
  }
  CHECK(kept > 0);
  CHECK(divided > 0);
  CHECK(blended > 0);
}

TEST_CASE("model rope: transformers 5's rope_parameters, nested by layer type for Gemma 3, read like rope_scaling") {
  nlohmann::json j = real_config("google/gemma-3-1b-it");
  const ModelConfig plain = parse_model_config(j.dump(), "c");
  j.erase("rope_theta");
  j.erase("rope_local_base_freq");
  j["rope_parameters"] = {{"full_attention", {{"rope_type", "linear"}, {"factor", 8.0}, {"rope_theta", 1000000.0}}},
                          {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}}};
  const ModelConfig c = parse_model_config(j.dump(), "c");
  CHECK(c.layer_rope_theta == plain.layer_rope_theta);
  CHECK(c.rope_scaling.type == RopeType::linear);
  for (int l = 0; l < c.layers; ++l) CHECK(c.layer_rope_scaled[size_t(l)] == (c.layer_window[size_t(l)] == 0));
  j["rope_parameters"]["sliding_attention"] = {{"rope_type", "linear"}, {"factor", 2.0}};
  CHECK(contains(refusal(j), "\"rope_parameters.sliding_attention\" has rope type \"linear\"; attnscope scales the "
                             "global layers only (supported: default)"));
  nlohmann::json l = real_config("meta-llama/Llama-3.2-1B-Instruct");
  l["rope_parameters"] = {{"full_attention", l["rope_scaling"]}};
  l.erase("rope_scaling");
  CHECK(contains(refusal(l), "is given per layer type"));
  // A flat rope_parameters is rope_scaling under transformers 5's name, its rope_theta the base.
  l = real_config("meta-llama/Llama-3.2-1B-Instruct");
  l["rope_parameters"] = l["rope_scaling"];
  l["rope_parameters"]["rope_theta"] = 250000.0;
  l.erase("rope_scaling");
  l.erase("rope_theta");
  const ModelConfig p = parse_model_config(l.dump(), "c");
  CHECK(p.rope_scaling.type == RopeType::llama3);
  CHECK(p.rope_theta == 250000.0);
}

TEST_CASE("model rope: bad rope settings are refused naming the file, the key and what is valid") {
  nlohmann::json j = real_config("microsoft/Phi-3.5-mini-instruct");
  j["rope_scaling"]["long_factor"].erase(0);
  std::string e = refusal(j);
  CHECK(contains(e, "cfg/config.json"));
  CHECK(contains(e, "\"rope_scaling\": \"long_factor\" lists 47 factors; it must list one per rotated pair, rotary width / 2 = 48"));
  j = real_config("microsoft/Phi-4-mini-instruct");  // partial rotary: 0.75 × 128 = 96 rotated, 48 pairs
  j["partial_rotary_factor"] = 1.0;
  CHECK(contains(refusal(j), "\"rope_scaling\": \"short_factor\" lists 48 factors; it must list one per rotated pair, "
                             "rotary width / 2 = 64"));
  j = real_config("microsoft/Phi-4-mini-instruct");
  j["rope_scaling"]["short_factor"][3] = "big";
  CHECK(contains(refusal(j), "\"rope_scaling\": \"short_factor\"[3] = \"big\" must be a number from 1e-6 to 1e6"));
  j = real_config("meta-llama/Llama-3.1-8B");
  j["rope_scaling"].erase("high_freq_factor");
  CHECK(contains(refusal(j), "of rope type \"llama3\" has no \"high_freq_factor\""));
  j = real_config("meta-llama/Llama-3.1-8B");
  j["rope_scaling"]["high_freq_factor"] = 0.5;
  CHECK(contains(refusal(j), "\"high_freq_factor\" = 0.5 must be above \"low_freq_factor\" = 1.0"));
  j = real_config("meta-llama/Llama-3.1-8B");
  j["rope_scaling"]["rope_type"] = "llama4";
  CHECK(contains(refusal(j), "rope type \"llama4\", which attnscope does not implement (supported: default, linear, "
                             "dynamic, yarn, llama3, longrope)"));
  j = real_config("Qwen/Qwen3-8B");
  j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768},
                       {"short_factor", {1.0}}};
  CHECK(contains(refusal(j), "\"rope_scaling\" has \"short_factor\", which the rope type \"yarn\" does not take"));
  j["rope_scaling"] = {{"rope_type", "dynamic"}};
  CHECK(contains(refusal(j), "\"rope_scaling\" of rope type \"dynamic\" has no \"factor\" (required: factor)"));
  j["rope_scaling"] = "yarn";
  CHECK(contains(refusal(j), "\"rope_scaling\" must be an object or null"));
}

TEST_CASE("model rope: dynamic scaling takes inputs beyond max_position_embeddings; the other types do not") {
  const auto m = model::open(model_fixture("llama_dynamic_f32"));
  CHECK_NOTHROW(check_forward_input(m->config, std::vector<int32_t>(40, 3)));
  const auto l = model::open(model_fixture("llama32_1b_llama3rope_bf16"));
  CHECK(contains(error_of([&] { check_forward_input(l->config, std::vector<int32_t>(1025, 3)); }),
                 "more than this model's 1024 positions"));
}

TEST_CASE("model rope: Gemma's √hidden_size stays float32 in a BF16 checkpoint (the float32 contract)") {
  // transformers casts the scale to the hidden states' dtype, float32 in a float32-loaded model: √18 =
  // 4.2426… stays, it does not become BF16's 4.25 (nor √24 = 4.899 become 4.90625). The references of
  // these BF16 fixtures are the float32-loaded model's, and rounding the scale moves the result.
  for (const auto& entry : std::map<std::string, int>{{"gemma3_linear_global_bf16", 18}, {"gemma3_local_global_bf16", 24}}) {
    const std::string& name = entry.first;  // no structured binding: clang's CAPTURE cannot name one
    const int width = entry.second;
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    REQUIRE(m->config.d_model == width);
    CHECK(m->source_dtypes == "BF16");
    CHECK(m->config.embedding_scale == double(float(std::sqrt(double(width)))));
  }
  CHECK(moved("gemma3_linear_global_bf16", test::fixture_ids("gemma3_linear_global_bf16"),
              [](ModelConfig& c) { c.embedding_scale = 4.25; }) > 1e-4);
}

TEST_CASE("model rope: the 50 real config.json files: the supported families open, the others are refused by name") {
  // Accepted: every Llama 3.x (llama3 RoPE), Phi-3.5/4-mini (longrope, partial rotary), Qwen2.5/Qwen3
  // dense, Mistral, SmolLM2/3, TinyLlama, Gemma 2, Gemma 3 text, GPT-2, DeepSeek-V2-Lite, Qwen3-30B-A3B,
  // OLMoE-1B-7B, Granite 3.1 MoE, Pythia, OLMo 2, and the text towers of Gemma 3 4B+, Mistral Small 3.1 and
  // Ministral 3, gpt-oss-20b, Qwen3-Next, Granite 4.0-H.
  const std::map<std::string, RopeType> accepted{
      {"openai-community/gpt2", RopeType::plain},
      {"distilbert/distilgpt2", RopeType::plain},
      {"meta-llama/Llama-3.1-8B", RopeType::llama3},
      {"meta-llama/Llama-3.1-8B-Instruct", RopeType::llama3},
      {"meta-llama/Llama-3.1-70B-Instruct", RopeType::llama3},
      {"meta-llama/Llama-3.2-1B-Instruct", RopeType::llama3},
      {"meta-llama/Llama-3.2-3B", RopeType::llama3},
      {"meta-llama/Llama-3.3-70B-Instruct", RopeType::llama3},
      {"deepseek-ai/DeepSeek-R1-Distill-Llama-8B", RopeType::llama3},
      {"TinyLlama/TinyLlama-1.1B-Chat-v1.0", RopeType::plain},
      {"HuggingFaceTB/SmolLM2-135M-Instruct", RopeType::plain},
      {"HuggingFaceTB/SmolLM2-360M-Instruct", RopeType::plain},
      {"HuggingFaceTB/SmolLM2-1.7B-Instruct", RopeType::plain},
      {"HuggingFaceTB/SmolLM3-3B", RopeType::plain},
      {"mistralai/Mistral-7B-Instruct-v0.3", RopeType::plain},
      {"mistralai/Mistral-Nemo-Instruct-2407", RopeType::plain},
      {"Qwen/Qwen2.5-0.5B", RopeType::plain},
      {"Qwen/Qwen2.5-1.5B-Instruct", RopeType::plain},
      {"Qwen/Qwen2.5-3B", RopeType::plain},
      {"Qwen/Qwen2.5-3B-Instruct", RopeType::plain},
      {"Qwen/Qwen2.5-7B", RopeType::plain},
      {"Qwen/Qwen2.5-14B", RopeType::plain},
      {"Qwen/Qwen2.5-32B", RopeType::plain},
      {"Qwen/Qwen2.5-Coder-7B-Instruct", RopeType::plain},
      {"deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B", RopeType::plain},
      {"Qwen/Qwen3-0.6B", RopeType::plain},
      {"Qwen/Qwen3-1.7B", RopeType::plain},
      {"Qwen/Qwen3-4B", RopeType::plain},
      {"Qwen/Qwen3-8B", RopeType::plain},
      {"Qwen/Qwen3-14B", RopeType::plain},
      {"Qwen/Qwen3-32B", RopeType::plain},
      {"microsoft/Phi-3-mini-4k-instruct", RopeType::plain},
      {"microsoft/Phi-3.5-mini-instruct", RopeType::longrope},
      {"microsoft/Phi-4-mini-instruct", RopeType::longrope},
      {"microsoft/phi-4", RopeType::plain},
      {"google/gemma-2-2b-it", RopeType::plain},
      {"google/gemma-3-1b-it", RopeType::plain},
      {"google/gemma-3-270m", RopeType::plain},
      {"deepseek-ai/DeepSeek-V2-Lite", RopeType::plain},  // its YaRN lives in the MLA settings
      {"Qwen/Qwen3-30B-A3B", RopeType::plain},
      {"allenai/OLMoE-1B-7B-0924", RopeType::plain},
      {"ibm-granite/granite-3.1-1b-a400m-instruct", RopeType::plain},
      {"EleutherAI/pythia-160m", RopeType::plain},          // rotary_pct 0.25: 16 of each head's 64 values
      {"allenai/OLMo-2-1124-7B", RopeType::plain},
      // multimodal containers: their text_config
      {"google/gemma-3-4b-it", RopeType::linear},  // ×8 on the global layers
      {"mistralai/Mistral-Small-3.1-24B-Instruct-2503", RopeType::plain},
      {"mistralai/Ministral-3-3B-Instruct-2512", RopeType::yarn},  // with llama_4_scaling_beta
      {"openai/gpt-oss-20b", RopeType::yarn},
      {"Qwen/Qwen3-Next-80B-A3B-Instruct", RopeType::plain},  // partial_rotary_factor 0.25 in its softmax layers
      {"ibm-granite/granite-4.0-h-tiny", RopeType::plain},  // position_embedding_type "nope": no layer rotates
  };
  // Refused, each naming its model_type: new families not implemented yet (none today).
  const std::map<std::string, std::string> refused{};
  CHECK(accepted.size() == 50);
  CHECK(refused.empty());
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(real_configs())) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    std::string id = fs::relative(entry.path(), real_configs()).replace_extension().generic_string();
    CAPTURE(id);
    const std::string text = read_file(entry.path(), 1 << 20);
    if (const auto a = accepted.find(id); a != accepted.end()) {
      ModelConfig c;
      REQUIRE_NOTHROW(c = parse_model_config(text, entry.path().string()));
      CHECK(c.rope_scaling.type == a->second);
      CHECK(c.layer_rope_scaled.size() == size_t(c.layers));
    } else {
      const auto r = refused.find(id);
      REQUIRE_MESSAGE(r != refused.end(), "a real config in neither list");
      const std::string e = error_of([&] { (void)parse_model_config(text, entry.path().string()); });
      CHECK(contains(e, r->second));
      CHECK(contains(e, entry.path().string()));
    }
  }
  CHECK(files == 50);
  // Phi-4-mini rotates 96 of its 128 head values, Pythia 16 of its 64.
  CHECK(parse_model_config(real_config("microsoft/Phi-4-mini-instruct").dump(), "c").rotated_dim() == 96);
  CHECK(parse_model_config(real_config("EleutherAI/pythia-160m").dump(), "c").rotated_dim() == 16);
  CHECK(parse_model_config(real_config("Qwen/Qwen3-Next-80B-A3B-Instruct").dump(), "c").rotated_dim() == 64);
}

TEST_CASE("model rope: the Positions view's data follows the config: rotated width, linear and YaRN scalings") {
  const auto g = model::open(model_fixture("gemma3_linear_global_bf16"))->config;
  CHECK(layer_positions(g, 0).rope.scaling == RopeScaling::none);  // a sliding layer: unscaled
  const LayerPositions global = layer_positions(g, 2);
  CHECK(global.rope.scaling == RopeScaling::linear);
  CHECK(global.rope.factor == 8.0);
  CHECK(layer_positions(model::open(model_fixture("phi4mini_partial_longrope_bf16"))->config, 0).rotated_dim == 12);
  const LayerPositions y = layer_positions(model::open(model_fixture("qwen3_yarn_bf16"))->config, 1);
  CHECK(y.rope.scaling == RopeScaling::yarn);
  CHECK(y.rope.original_context == 2048);
  CHECK(y.rope.attention_factor == doctest::Approx(0.1 * std::log(4.0) + 1));
}

TEST_CASE("model rope: every layer's frequencies and attention factor equal PyTorch's float32 ones") {
  // make_model_fixtures.py writes transformers' float32 inv_freq [L, d/2] and attention factor [L] for
  // each input of the RoPE fixtures (the length chooses dynamic's base and longrope's factors).
  double worst = 0;
  for (const std::string name : {"llama32_1b_llama3rope_bf16", "llama_dynamic_f32", "qwen3_yarn_bf16",
                                 "qwen2_yarn_notrunc_f16", "phi35_longrope_bf16", "phi4mini_partial_longrope_bf16",
                                 "gemma3_linear_global_bf16"}) {
    const ModelConfig c = model::open(model_fixture(name))->config;
    std::vector<std::pair<std::string, size_t>> inputs{{"", test::fixture_ids(name).size()}};
    const auto more = test::fixture_more_ids(name);
    for (size_t n = 0; n < more.size(); ++n) inputs.emplace_back("more." + std::to_string(n) + ".", more[n].size());
    for (const auto& input : inputs) {
      const auto& prefix = input.first;  // no structured binding: clang's CAPTURE cannot name one
      const auto& T = input.second;
      CAPTURE(name);
      CAPTURE(T);
      const auto inv = test::fixture_reference(name, prefix + "rope.inv_freq");
      const auto factor = test::fixture_reference(name, prefix + "rope.attention_factor");
      const int half = c.rotated_dim() / 2;
      REQUIRE(inv.shape == std::vector<int64_t>{c.layers, half});
      for (int l = 0; l < c.layers; ++l) {
        const RopeFrequencies f = c.layer_rope(l, int(T));
        REQUIRE(int(f.inv_freq.size()) == half);
        CHECK(f.attention_factor == doctest::Approx(factor.values[size_t(l)]).epsilon(1e-7));
        for (int k = 0; k < half; ++k) {
          const float ref = inv.values[size_t(l * half + k)];
          const double rel = std::abs(double(f.inv_freq[size_t(k)]) - ref) / ref;
          worst = std::max(worst, rel);
          INFO("layer " << l << " pair " << k << ": " << f.inv_freq[size_t(k)] << " vs " << ref);
          CHECK(rel <= 2.5e-7);  // at most two float32 ulps
        }
      }
    }
  }
  MESSAGE("largest relative difference from PyTorch's float32 frequencies: " << worst);
}
