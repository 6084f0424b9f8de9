// Tests of DeepSeek-V2/V3 (multi-head latent attention and the mixture of experts): the published
// configs read as Hugging Face reads them, the fixtures match their PyTorch references through the fast
// and the plain-loop pass, every malformed config or tensor is named, and the K/V conversion is refused.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/config.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::copy_fixture;
using attnscope::test::error_of;
using attnscope::test::model_fixture;
using attnscope::test::rewrite_header;
namespace fs = std::filesystem;

using attnscope::test::config_refusal;
using attnscope::test::open_error;
using attnscope::test::edit_config;
namespace {

const char* const v2_fixture = "deepseek_v2_mla_moe_bf16";
const char* const v3_fixture = "deepseek_v3_mla_noaux_f32_sharded";
const char* const v2_grouped_fixture = "deepseek_v2_grouped_f16";  // group_limited_greedy, no YaRN, no shared expert

nlohmann::json v2_lite() {  // DeepSeek-V2-Lite's config.json, abridged
  return {{"model_type", "deepseek_v2"}, {"hidden_size", 2048}, {"num_hidden_layers", 27}, {"num_attention_heads", 16},
          {"num_key_value_heads", 16}, {"intermediate_size", 10944}, {"vocab_size", 102400},
          {"max_position_embeddings", 163840}, {"rms_norm_eps", 1e-6}, {"rope_theta", 10000},
          {"tie_word_embeddings", false}, {"attention_bias", false}, {"hidden_act", "silu"},
          {"q_lora_rank", nullptr}, {"kv_lora_rank", 512}, {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64},
          {"v_head_dim", 128}, {"n_routed_experts", 64}, {"n_shared_experts", 2}, {"num_experts_per_tok", 6},
          {"moe_intermediate_size", 1408}, {"first_k_dense_replace", 1}, {"moe_layer_freq", 1},
          {"routed_scaling_factor", 1.0}, {"topk_method", "greedy"}, {"n_group", 1}, {"topk_group", 1},
          {"norm_topk_prob", false}, {"scoring_func", "softmax"}, {"aux_loss_alpha", 0.001}, {"seq_aux", true},
          {"ep_size", 1},
          {"rope_scaling", {{"type", "yarn"}, {"factor", 40}, {"original_max_position_embeddings", 4096},
                            {"beta_fast", 32}, {"beta_slow", 1}, {"mscale", 0.707}, {"mscale_all_dim", 0.707}}}};
}

// DeepSeek-V3's config.json, abridged (without its FP8 quantization_config), with 64 heads instead of
// its 128: attnscope draws at most 64 heads per layer.
nlohmann::json v3() {
  return {{"model_type", "deepseek_v3"}, {"hidden_size", 7168}, {"num_hidden_layers", 61}, {"num_attention_heads", 64},
          {"num_key_value_heads", 64}, {"intermediate_size", 18432}, {"vocab_size", 129280},
          {"max_position_embeddings", 163840}, {"rms_norm_eps", 1e-6}, {"rope_theta", 10000},
          {"tie_word_embeddings", false}, {"hidden_act", "silu"}, {"q_lora_rank", 1536}, {"kv_lora_rank", 512},
          {"qk_nope_head_dim", 128}, {"qk_rope_head_dim", 64}, {"v_head_dim", 128}, {"n_routed_experts", 256},
          {"n_shared_experts", 1}, {"num_experts_per_tok", 8}, {"moe_intermediate_size", 2048},
          {"first_k_dense_replace", 3}, {"moe_layer_freq", 1}, {"routed_scaling_factor", 2.5},
          {"topk_method", "noaux_tc"}, {"n_group", 8}, {"topk_group", 4}, {"norm_topk_prob", true},
          {"scoring_func", "sigmoid"}, {"num_nextn_predict_layers", 1},
          {"rope_scaling", {{"type", "yarn"}, {"factor", 40}, {"original_max_position_embeddings", 4096},
                            {"beta_fast", 32}, {"beta_slow", 1}, {"mscale", 1.0}, {"mscale_all_dim", 1.0}}}};
}

// Largest |a − b| ≤ tol · max(1, max |b|) when relative, else ≤ tol.
void check_flat(const float* a, const std::vector<float>& b, double tol, bool relative, const std::string& what) {
  double worst = 0, scale = 1;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, relative ? std::abs(double(b[i])) : 1.0);
    worst = std::max(worst, std::isfinite(a[i]) ? std::abs(double(a[i]) - double(b[i])) : INFINITY);
  }
  INFO(what << ": largest difference " << worst << " (scale " << scale << ")");
  CHECK(worst <= tol * scale);
}

std::vector<float> flat(const Tensor3& t) {
  std::vector<float> v;
  for (const Mat& m : t) v.insert(v.end(), m.data(), m.data() + m.size());
  return v;
}

}  // namespace

TEST_CASE("deepseek config: DeepSeek-V2-Lite reads as MLA 16 heads over a 512 + 64 latent, YaRN, 64 experts top-6") {
  const ModelConfig c = parse_model_config(v2_lite().dump(), "c");
  CHECK(c.model_type == "deepseek_v2");
  CHECK(c.is_mla());
  CHECK(c.heads == 16);
  CHECK(c.kv_heads == 16);  // every head its own keys
  CHECK(c.head_dim == 192);  // 128 + 64: the q·k width
  CHECK(c.mla.q_lora_rank == 0);
  CHECK(c.mla.kv_lora_rank == 512);
  CHECK(c.mla.rope_dim == 64);
  CHECK(c.mla.v_dim == 128);
  CHECK(c.mla.yarn);
  // mscale = mscale_all_dim: the cos/sin factor is 1; the softmax scale is 1/√192 × (0.1·0.707·ln 40 + 1)².
  CHECK(c.mla.attention_factor == doctest::Approx(1.0));
  const double m = 0.1 * 0.707 * std::log(40.0) + 1.0;
  CHECK(c.mla.softmax_scale == doctest::Approx(m * m / std::sqrt(192.0)));
  CHECK(c.moe.experts == 64);
  CHECK(c.moe.top_k == 6);
  CHECK(c.moe.shared == 2);
  CHECK(c.moe.expert_ffn == 1408);
  CHECK(c.moe.method == TopkMethod::greedy);
  CHECK(!c.moe.sigmoid);
  CHECK(!c.moe.is_moe_layer(0));
  CHECK(c.moe.is_moe_layer(1));
  // 15.7 billion parameters, as the model card says (15.7B total, 2.4B active)
  CHECK(c.parameter_count() > 15'600'000'000);
  CHECK(c.parameter_count() < 15'800'000'000);
}

TEST_CASE("deepseek config: DeepSeek-V3 reads as MLA with q_lora_rank, sigmoid noaux_tc routing in 8 groups") {
  const ModelConfig c = parse_model_config(v3().dump(), "c");
  CHECK(c.mla.q_lora_rank == 1536);
  CHECK(c.moe.method == TopkMethod::noaux_tc);
  CHECK(c.moe.sigmoid);
  CHECK(c.moe.correction_bias);
  CHECK(c.moe.norm_topk);
  CHECK(c.moe.groups == 8);
  CHECK(c.moe.topk_groups == 4);
  CHECK(c.moe.routed_scale == 2.5);
  CHECK(!c.moe.is_moe_layer(2));
  CHECK(c.moe.is_moe_layer(3));
  // With its 128 heads: 671B parameters in the main model (the multi-token-prediction layer aside)
  ModelConfig full = c;
  full.heads = full.kv_heads = 128;
  CHECK(full.parameter_count() > 670'000'000'000);
  CHECK(full.parameter_count() < 672'000'000'000);
  nlohmann::json published = v3();
  published["num_attention_heads"] = published["num_key_value_heads"] = 128;
  CHECK(contains(config_refusal(published), "\"num_attention_heads\" = 128 is outside what attnscope supports (1 to 64)"));
  // transformers 5's rope_parameters holds the same YaRN
  nlohmann::json j = v2_lite();
  j["rope_parameters"] = j["rope_scaling"];
  j["rope_parameters"]["rope_theta"] = 10000;
  j.erase("rope_scaling");
  const ModelConfig p = parse_model_config(j.dump(), "c");
  CHECK(p.mla.softmax_scale == parse_model_config(v2_lite().dump(), "c").mla.softmax_scale);
}

TEST_CASE("deepseek config: malformed sizes and the fields attnscope does not implement are refused by name") {
  auto with = [](nlohmann::json j, const char* key, nlohmann::json value) {
    j[key] = std::move(value);
    return config_refusal(j);
  };
  CHECK(contains(with(v2_lite(), "n_routed_experts", 0), "\"n_routed_experts\" = 0: a mixture-of-experts layer needs at least one expert"));
  CHECK(contains(with(v2_lite(), "num_experts_per_tok", 65), "\"num_experts_per_tok\" = 65 is more than the 64 routed experts"));
  CHECK(contains(with(v2_lite(), "topk_method", "random"), "\"topk_method\" = \"random\" is not supported for deepseek_v2 (supported: greedy, group_limited_greedy)"));
  CHECK(contains(with(v2_lite(), "scoring_func", "sigmoid"), "\"scoring_func\" = \"sigmoid\" is not supported for deepseek_v2 (supported: softmax)"));
  CHECK(contains(with(v3(), "scoring_func", "softmax"), "\"scoring_func\" = \"softmax\" is not supported for deepseek_v3 (supported: sigmoid)"));
  CHECK(contains(with(v3(), "topk_method", "greedy"), "\"topk_method\" = \"greedy\" is not supported for deepseek_v3 (supported: noaux_tc)"));
  CHECK(contains(with(v2_lite(), "norm_topk_prob", true), "\"norm_topk_prob\" = true is not supported for deepseek_v2"));
  CHECK(contains(with(v2_lite(), "moe_layer_freq", 2), "\"moe_layer_freq\" = 2 is not supported"));
  CHECK(contains(with(v2_lite(), "kv_lora_rank", 0), "\"kv_lora_rank\" = 0 is outside what attnscope supports"));
  CHECK(contains(with(v2_lite(), "kv_lora_rank", "512"), "\"kv_lora_rank\" must be a whole number"));
  CHECK(contains(with(v2_lite(), "qk_rope_head_dim", 63), "\"qk_rope_head_dim\" = 63 is odd"));
  CHECK(contains(with(v2_lite(), "num_key_value_heads", 4), "in multi-head latent attention every head has its own keys"));
  CHECK(contains(with(v2_lite(), "attention_bias", true), "\"attention_bias\" = true is not supported for deepseek_v2"));
  CHECK(contains(with(v3(), "quantization_config", {{"quant_method", "fp8"}}), "\"quantization_config\" is not supported"));
  CHECK(contains(with(v3(), "rope_interleave", false), "\"rope_interleave\" = false is not supported"));
  nlohmann::json three = v3();
  three["topk_group"] = 2;
  CHECK(contains(with(three, "n_group", 3), "\"n_group\" = 3 does not divide \"n_routed_experts\" = 256"));
  CHECK(contains(with(v3(), "topk_group", 9), "\"topk_group\" = 9 is outside what attnscope supports (1 to 8)"));
  CHECK(contains(with(v3(), "n_group", 256), "leaves 1 expert per group"));
  CHECK(contains(with(v2_lite(), "rope_scaling", {{"type", "linear"}, {"factor", 4}}),
                 "\"rope_scaling\" type \"linear\" is not supported for deepseek_v2 (supported: null, or \"yarn\""));
  nlohmann::json j = v2_lite();
  j["rope_scaling"]["extrapolation_factor"] = 1;
  CHECK(contains(config_refusal(j), "\"rope_scaling\" has \"extrapolation_factor\", which attnscope does not implement for YaRN"));
  j = v2_lite();
  j["rope_scaling"].erase("factor");
  CHECK(contains(config_refusal(j), "\"rope_scaling\" of type yarn has no \"factor\""));
  for (const char* key : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "q_lora_rank",
                          "num_experts_per_tok", "moe_intermediate_size"}) {
    j = v2_lite();
    j.erase(key);
    CAPTURE(key);
    CHECK(contains(config_refusal(j), "config.json has no \"" + std::string(key) + "\""));
  }
  j = v3();
  j.erase("n_group");
  CHECK(contains(config_refusal(j), "config.json has no \"n_group\""));
  // n_routed_experts null: every layer dense, as Hugging Face's DeepseekV2 reads it
  j = v2_lite();
  j["n_routed_experts"] = nullptr;
  const ModelConfig dense = parse_model_config(j.dump(), "c");
  CHECK(dense.moe.experts == 0);
  CHECK(!dense.moe.is_moe_layer(5));
}

TEST_CASE("deepseek forward: every fixture matches the PyTorch reference (attentions 1e-5, logits 1e-4 relative)") {
  for (const std::string name : {v2_fixture, v2_grouped_fixture, v3_fixture}) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const auto ids = test::fixture_ids(name);
    const auto attentions = test::fixture_reference(name, "attentions");
    const auto logits = test::fixture_reference(name, "logits");
    const int T = int(ids.size());
    REQUIRE(attentions.shape == std::vector<int64_t>{m->config.layers, m->config.heads, T, T});
    ForwardOptions options;
    options.detail_layer = m->config.layers - 1;
    for (const bool fast : {true, false}) {
      const ForwardResult r = fast ? forward(*m, ids, options) : forward_reference(*m, ids, options);
      const std::string which = fast ? "fast" : "reference";
      CHECK(r.kv_heads == m->config.heads);
      check_flat(r.attentions.data(), attentions.values, 1e-5, false, which + " attentions");
      check_flat(r.logits.data(), logits.values, 1e-4, true, which + " logits");
      REQUIRE(r.detail.has_value());
      check_flat(flat(r.detail->q).data(), test::fixture_reference(name, "detail.q").values, 1e-4, true, which + " q");
      check_flat(flat(r.detail->k).data(), test::fixture_reference(name, "detail.k").values, 1e-4, true, which + " k");
      check_flat(flat(r.detail->v).data(), test::fixture_reference(name, "detail.v").values, 1e-4, true, which + " v");
      check_flat(r.detail->output.data(), test::fixture_reference(name, "detail.output").values, 1e-4, true,
                 which + " output");
      // What every head shares: the latent [T, r] and the rotary key [T, d_rope].
      REQUIRE(r.detail->latent.rows() == T);
      REQUIRE(r.detail->latent.cols() == m->config.mla.kv_lora_rank);
      REQUIRE(r.detail->rope_key.cols() == m->config.mla.rope_dim);
      check_flat(r.detail->latent.data(), test::fixture_reference(name, "detail.latent").values, 1e-4, true, which + " latent");
      check_flat(r.detail->rope_key.data(), test::fixture_reference(name, "detail.rope_key").values, 1e-4, true,
                 which + " rope key");
    }
  }
}

TEST_CASE("deepseek forward: the fast pass equals the plain-loop one, and every head's keys share the rotary part") {
  const auto m = model::open(model_fixture(v2_fixture));
  const auto ids = test::fixture_ids(v2_fixture);
  ForwardOptions options;
  options.detail_layer = 1;
  const ForwardResult fast = forward(*m, ids, options), ref = forward_reference(*m, ids, options);
  check_flat(fast.attentions.data(), ref.attentions, 1e-6, false, "attentions");
  const LayerDetail &a = *fast.detail, &b = *ref.detail;
  test::check_close3(a.scores, b.scores, 1e-4, "scores");
  test::check_close3(a.head_out, b.head_out, 1e-5, "head_out");
  test::check_close(a.concat, b.concat, 1e-5, "concat");
  const MlaConfig& mla = m->config.mla;
  REQUIRE(a.k.size() == size_t(m->config.heads));
  CHECK(a.k[0].cols() == mla.nope_dim + mla.rope_dim);
  CHECK(a.v[0].cols() == mla.v_dim);
  CHECK(a.concat.cols() == m->config.heads * mla.v_dim);
  // The rope part of K is one tensor for all heads; the nope parts differ head by head.
  for (size_t h = 1; h < a.k.size(); ++h) {
    CHECK(a.k[h].rightCols(mla.rope_dim) == a.k[0].rightCols(mla.rope_dim));
    CHECK(a.k[h].leftCols(mla.nope_dim) != a.k[0].leftCols(mla.nope_dim));
  }
  for (int l = 0; l < fast.layers; ++l)
    for (int h = 0; h < fast.heads; ++h)
      for (int i = 0; i < fast.tokens; ++i) {
        CHECK(std::abs(fast.attention(l, h).row(i).sum() - 1.0f) < 1e-5);
        for (int j = i + 1; j < fast.tokens; ++j) REQUIRE(fast.attention(l, h)(i, j) == 0.0f);
      }
}

TEST_CASE("deepseek open: the fixtures load MLA's and the experts' tensors, V3's correction bias, in their dtypes") {
  const auto v2 = model::open(model_fixture(v2_fixture));
  CHECK(v2->source_dtypes == "BF16");
  const LayerWeights& dense = v2->weights->layers[0];
  const LayerWeights& moe = v2->weights->layers[1];
  CHECK(dense.moe.experts.empty());
  CHECK(dense.w_gate.rows() == v2->config.ffn_dim);
  CHECK(moe.w_gate.empty());
  CHECK(moe.moe.experts.size() == 4);
  CHECK(moe.moe.router.rows() == 4);
  CHECK(moe.moe.shared.gate.rows() == 12);
  CHECK(moe.moe.correction_bias.size() == 0);
  CHECK(moe.wq.rows() == 4 * 16);
  CHECK(moe.mla.kv_a.rows() == 16 + 8);
  CHECK(moe.mla.kv_b.rows() == 4 * (8 + 6));
  CHECK(moe.wo.cols() == 4 * 6);
  const auto v3m = model::open(model_fixture(v3_fixture));
  CHECK(v3m->source_dtypes == "F32");
  const LayerWeights& l = v3m->weights->layers[2];
  CHECK(l.wq.empty());
  CHECK(l.mla.q_a.rows() == 12);
  CHECK(l.mla.q_b.cols() == 12);
  CHECK(l.moe.correction_bias.size() == 8);
  CHECK(l.moe.experts.size() == 8);
  const auto grouped = model::open(model_fixture(v2_grouped_fixture));
  CHECK(grouped->source_dtypes == "F16");
  CHECK(grouped->config.moe.method == TopkMethod::group_limited_greedy);
  CHECK(!grouped->config.mla.yarn);
  CHECK(grouped->weights->layers[0].moe.experts.size() == 6);  // first_k_dense_replace 0
  CHECK(grouped->weights->layers[0].moe.shared.gate.empty());
}

TEST_CASE("deepseek open: missing or misshapen MLA and expert tensors are named") {
  fs::path dir = copy_fixture(v2_fixture, "deepseek_no_kv_a_norm");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.1.self_attn.kv_a_norm.weight"] = h["model.layers.1.self_attn.kv_a_layernorm.weight"];
    h.erase("model.layers.1.self_attn.kv_a_layernorm.weight");
  });
  CHECK(contains(open_error(dir), "missing tensor 'model.layers.1.self_attn.kv_a_layernorm.weight'"));

  dir = copy_fixture(v2_fixture, "deepseek_kv_b_shape");  // [56, 16] → [16, 56]: the same bytes
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.0.self_attn.kv_b_proj.weight"]["shape"] = {16, 56};
  });
  std::string e = open_error(dir);
  CHECK(contains(e, "tensor 'model.layers.0.self_attn.kv_b_proj.weight' has shape [16, 56], but config.json implies [56, 16]"));
  CHECK(contains(e, "4 heads × (qk_nope_head_dim 8 + v_head_dim 6) rows over the kv_lora_rank 16 latent columns"));

  dir = copy_fixture(v2_fixture, "deepseek_kv_lora_rank");  // the config's latent disagrees with the file
  edit_config(dir, [](nlohmann::json& j) { j["kv_lora_rank"] = 12; });
  e = open_error(dir);
  CHECK(contains(e, "tensor 'model.layers.0.self_attn.kv_a_proj_with_mqa.weight' has shape [24, 32], but config.json implies [20, 32]"));
  CHECK(contains(e, "the latent c_KV (kv_lora_rank 12), then of the shared rotary key (qk_rope_head_dim 8)"));

  dir = copy_fixture(v2_fixture, "deepseek_no_expert");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.1.mlp.experts.3.up.weight"] = h["model.layers.1.mlp.experts.3.up_proj.weight"];
    h.erase("model.layers.1.mlp.experts.3.up_proj.weight");
  });
  CHECK(contains(open_error(dir), "missing tensor 'model.layers.1.mlp.experts.3.up_proj.weight'"));

  dir = copy_fixture(v2_fixture, "deepseek_more_experts");  // the file has 4 experts, config.json says 5
  edit_config(dir, [](nlohmann::json& j) { j["n_routed_experts"] = 5; });
  e = open_error(dir);
  CHECK(contains(e, "\"n_routed_experts\" = 5, but"));
  CHECK(contains(e, "holds 4 experts in layer 1 (router 'model.layers.1.mlp.gate.weight' has shape [4, 32]); "
                    "valid: \"n_routed_experts\": 4"));
  CHECK(contains(e, "config.json'"));

  dir = copy_fixture(v2_fixture, "deepseek_q_lora");  // q_lora_rank given, but the file has q_proj
  edit_config(dir, [](nlohmann::json& j) { j["q_lora_rank"] = 12; });
  CHECK(contains(open_error(dir), "missing tensor 'model.layers.0.self_attn.q_a_proj.weight'"));

  dir = copy_fixture(v3_fixture, "deepseek_no_bias");
  for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
    rewrite_header(dir / shard, [](nlohmann::json& h) {
      const std::string name = "model.layers.2.mlp.gate.e_score_correction_bias";
      if (!h.contains(name)) return;
      h[name + "es"] = h[name];
      h.erase(name);
    });
  nlohmann::json index = nlohmann::json::parse(read_file(dir / "model.safetensors.index.json", 1 << 20));
  index["weight_map"]["model.layers.2.mlp.gate.e_score_correction_biases"] =
      index["weight_map"]["model.layers.2.mlp.gate.e_score_correction_bias"];
  index["weight_map"].erase("model.layers.2.mlp.gate.e_score_correction_bias");
  write_file_atomic(dir / "model.safetensors.index.json", index.dump(2));
  const std::string no_bias = open_error(dir);
  INFO(no_bias);
  CHECK(contains(no_bias, "missing tensor 'model.layers.2.mlp.gate.e_score_correction_bias'"));

  dir = copy_fixture(v2_fixture, "deepseek_zero_experts");
  edit_config(dir, [](nlohmann::json& j) { j["n_routed_experts"] = 0; });
  e = open_error(dir);
  CHECK(contains(e, "\"n_routed_experts\" = 0"));
  CHECK(contains(e, "config.json'"));
}

TEST_CASE("deepseek convert: pooling K/V heads is refused, naming the shared latent") {
  const auto m = model::open(model_fixture(v2_fixture));
  const std::string e = error_of([&] { (void)convert_kv_heads(*m, 2); });
  CHECK(contains(e, "deepseek_v2 uses multi-head latent attention: it has no K/V heads to pool"));
  CHECK(contains(e, "one shared latent"));
}
