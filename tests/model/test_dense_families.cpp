// Tests of the dense families and multimodal containers of issue 36 (make_dense_fixtures.py): GPT-NeoX
// (Pythia), OLMo 2, and the gemma3 / mistral3 / ministral3 containers whose text tower attnscope opens.
// Each fixture is shrunk from the real config.json; its PyTorch reference (transformers 5.x formulas) is
// met on every layer's attentions and the logits, also on a longer input (past the windows and past
// Ministral 3's original context, where its query scale steps up). Every formula that differs from Llama
// moves the result when switched off, and bad input is refused with the file, the key and what is valid.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::model_fixture;

using attnscope::test::open_error;
namespace {

const std::vector<std::string> dense_fixtures{"pythia160m_parallel_f16", "olmo2_postnorm_f32", "gemma3_4b_container_bf16",
                                              "mistral_small31_container_bf16", "ministral3_3b_container_bf16"};

// max |a − b| ≤ tol · (relative ? max(1, max |b|) : 1)
void check_close(const float* a, const std::vector<float>& b, double tol, bool relative, const std::string& what) {
  double worst = 0, scale = 1;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, relative ? std::abs(double(b[i])) : 1.0);
    worst = std::max(worst, std::isfinite(a[i]) ? std::abs(double(a[i]) - double(b[i])) : INFINITY);
  }
  INFO(what << ": largest difference " << worst << " (scale " << scale << ")");
  CHECK(worst <= tol * scale);
}

std::vector<float> flat(const Tensor3& t) {
  std::vector<float> out;
  for (const Mat& m : t)
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j) out.push_back(m(i, j));
  return out;
}

// The largest change of the attentions or (relative) logits when `edit` changes the config.
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

nlohmann::json config_of(const std::filesystem::path& dir) {
  return nlohmann::json::parse(read_file(dir / "config.json", 1 << 20));
}

void write_config(const std::filesystem::path& dir, const nlohmann::json& j) { write_file_atomic(dir / "config.json", j.dump(2)); }

}  // namespace

TEST_CASE("dense families: every layer's attentions and the logits equal PyTorch's, on every input, fast and plain") {
  for (const std::string& name : dense_fixtures) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    std::vector<std::pair<std::string, std::vector<int32_t>>> inputs{{"", test::fixture_ids(name)}};
    const auto more = test::fixture_more_ids(name);
    REQUIRE(!more.empty());
    for (size_t n = 0; n < more.size(); ++n) inputs.emplace_back("more." + std::to_string(n) + ".", more[n]);
    for (const auto& input : inputs) {
      const auto& prefix = input.first;  // no structured binding: clang's CAPTURE cannot name one
      const auto& ids = input.second;
      CAPTURE(prefix);
      const auto attentions = test::fixture_reference(name, prefix + "attentions");
      const auto logits = test::fixture_reference(name, prefix + "logits");
      const int64_t T = int64_t(ids.size());
      REQUIRE(attentions.shape == std::vector<int64_t>{m->config.layers, m->config.heads, T, T});
      REQUIRE(logits.shape == std::vector<int64_t>{T, m->config.vocab});
      for (const bool fast : {true, false}) {
        ForwardOptions options;
        options.detail_layer = prefix.empty() ? m->config.layers - 1 : -1;
        const ForwardResult r = fast ? forward(*m, ids, options) : forward_reference(*m, ids, options);
        const std::string which = fast ? "fast" : "reference";
        check_close(r.attentions.data(), attentions.values, 1e-5, false, which + " attentions");
        check_close(r.logits.data(), logits.values, 1e-4, true, which + " logits");
        if (!prefix.empty()) continue;
        REQUIRE(r.detail.has_value());  // the last layer's q (after RoPE and any query scale), k, v, output
        check_close(flat(r.detail->q).data(), test::fixture_reference(name, "detail.q").values, 1e-4, true, which + " q");
        check_close(flat(r.detail->k).data(), test::fixture_reference(name, "detail.k").values, 1e-4, true, which + " k");
        check_close(flat(r.detail->v).data(), test::fixture_reference(name, "detail.v").values, 1e-4, true, which + " v");
        check_close(r.detail->output.data(), test::fixture_reference(name, "detail.output").values, 1e-4, true,
                    which + " output");
      }
    }
  }
}

TEST_CASE("dense families: the configs are read as the real files say") {
  const ModelConfig neox = model::open(model_fixture("pythia160m_parallel_f16"))->config;
  CHECK(neox.model_type == "gpt_neox");
  CHECK(neox.norm == NormKind::layernorm);
  CHECK(neox.mlp == MlpKind::gelu);
  CHECK(neox.parallel_residual);
  CHECK(neox.rotated_dim() == 4);  // rotary_pct 0.25 of 16
  CHECK((neox.qkv_bias && neox.o_bias && neox.mlp_bias));
  CHECK_FALSE(neox.tied_embeddings);
  const ModelConfig olmo = model::open(model_fixture("olmo2_postnorm_f32"))->config;
  CHECK((olmo.qk_norm_whole && !olmo.qk_norm && !olmo.pre_norms && olmo.sandwich_norms));
  CHECK(olmo.norm_eps == 1e-6);
  CHECK(olmo.rope_theta == 500000.0);
  const auto gemma = model::open(model_fixture("gemma3_4b_container_bf16"));
  CHECK(gemma->config.container == "gemma3");
  CHECK(gemma->config.model_type == "gemma3_text");
  CHECK(gemma->config.tied_embeddings);  // Gemma3TextConfig's default: the key is absent, as in the real file
  CHECK(gemma->config.rope_scaling.type == RopeType::linear);
  CHECK(gemma->config.layer_rope_scaled == std::vector<bool>{false, false, false, false, false, true});
  CHECK(gemma->config.layer_window[0] == 4);
  CHECK(gemma->skipped_tensors == 5);
  const auto small = model::open(model_fixture("mistral_small31_container_bf16"));
  CHECK(small->config.container == "mistral3");
  CHECK(small->config.model_type == "mistral");
  CHECK(small->config.max_positions == 131072);  // MistralConfig's default, absent from the text_config
  CHECK_FALSE(small->weights->lm_head.empty());  // language_model.lm_head.weight
  CHECK(small->skipped_tensors == 4);
  const auto mini = model::open(model_fixture("ministral3_3b_container_bf16"));
  CHECK(mini->config.container == "ministral3");
  CHECK(mini->config.model_type == "ministral3");
  CHECK(mini->config.query_scale_beta == 0.1);
  CHECK(mini->config.query_scale_length == 8);
  CHECK(mini->config.rope_scaling.type == RopeType::yarn);
  CHECK(mini->skipped_tensors == 3);
  // parameter_count is the text tower's, from the shapes: every tensor read, none of the vision tower
  for (const std::string& name : dense_fixtures) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const SafetensorsFile f(model_fixture(name) / "model.safetensors");
    int64_t read = 0;
    for (const SafetensorsTensor& t : f.header().tensors)
      if (t.name.find("vision_tower") == std::string::npos && t.name.find("multi_modal_projector") == std::string::npos)
        read += t.count();
    CHECK(m->parameter_count() == read);
  }
}

TEST_CASE("dense families: each formula that differs from Llama moves the result") {
  const auto ids = test::fixture_ids("pythia160m_parallel_f16");
  CHECK(moved("pythia160m_parallel_f16", ids, [](ModelConfig& c) { c.parallel_residual = false; }) > 1e-3);
  CHECK(moved("pythia160m_parallel_f16", ids, [](ModelConfig& c) { c.mlp = MlpKind::gelu_new; }) > 1e-5);
  CHECK(moved("pythia160m_parallel_f16", ids, [](ModelConfig& c) { c.rotary_dim = 0; }) > 1e-3);
  CHECK(moved("olmo2_postnorm_f32", ids, [](ModelConfig& c) { c.qk_norm_whole = false; }) > 1e-3);
  CHECK(moved("olmo2_postnorm_f32", ids, [](ModelConfig& c) { c.sandwich_norms = false; }) > 1e-3);
  CHECK(moved("gemma3_4b_container_bf16", ids, [](ModelConfig& c) { c.layer_rope_scaled.assign(c.layers, false); }) > 1e-3);
  // Ministral 3's query scale: 1 before its original context (8 here), so the 12-id input moves only
  // from position 8 on and the 20-id one more.
  const auto more = test::fixture_more_ids("ministral3_3b_container_bf16");
  CHECK(moved("ministral3_3b_container_bf16", more.at(0), [](ModelConfig& c) { c.query_scale_beta = 0; }) > 1e-3);
  const std::vector<int32_t> first8(ids.begin(), ids.begin() + 8);
  CHECK(moved("ministral3_3b_container_bf16", first8, [](ModelConfig& c) { c.query_scale_beta = 0; }) == 0.0);
}

TEST_CASE("dense families: the multimodal containers are refused without a text tower, with the file and the key") {
  // No text_config: the key and what is valid.
  auto dir = test::copy_fixture("gemma3_4b_container_bf16", "no_text_config");
  auto j = config_of(dir);
  j.erase("text_config");
  write_config(dir, j);
  std::string e = open_error(dir);
  CHECK(contains(e, (dir / "config.json").string()));
  CHECK(contains(e, "no \"text_config\""));
  CHECK(contains(e, "gemma3_text"));
  // A text_config of a family the container does not hold.
  j = config_of(test::model_fixture("mistral_small31_container_bf16"));
  j["text_config"]["model_type"] = "llama";
  e = error_of([&] { (void)parse_model_config(j.dump(), "m/config.json"); });
  CHECK(contains(e, "m/config.json"));
  CHECK(contains(e, "\"text_config.model_type\" = \"llama\""));
  CHECK(contains(e, "valid: mistral or ministral3"));
  j["text_config"] = "mistral";
  CHECK(contains(error_of([&] { (void)parse_model_config(j.dump(), "m/config.json"); }), "\"text_config\" must be an object"));
  // A missing key inside text_config is named with its place.
  j = config_of(test::model_fixture("ministral3_3b_container_bf16"));
  j["text_config"].erase("hidden_size");
  CHECK(contains(error_of([&] { (void)parse_model_config(j.dump(), "m/config.json"); }), "\"text_config.hidden_size\""));
  // llama_4_scaling_beta needs the context it steps by.
  j = config_of(test::model_fixture("ministral3_3b_container_bf16"));
  j["text_config"]["rope_parameters"].erase("original_max_position_embeddings");
  CHECK(contains(error_of([&] { (void)parse_model_config(j.dump(), "m/config.json"); }),
                 "\"llama_4_scaling_beta\" but no \"original_max_position_embeddings\""));
  // Files with the vision tower only: the prefixes that are valid.
  dir = test::copy_fixture("ministral3_3b_container_bf16", "no_text_tower");
  test::rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {  // renamed, so the data stays whole
    nlohmann::json out;
    for (auto it = h.begin(); it != h.end(); ++it)
      out[it.key().rfind("model.language_model.", 0) == 0 ? "model.audio_tower." + it.key().substr(21) : it.key()] =
          it.value();
    h = out;
  });
  e = open_error(dir);
  CHECK(contains(e, (dir / "model.safetensors").string()));
  CHECK(contains(e, "no text tower"));
  CHECK(contains(e, "'language_model.model.embed_tokens.weight' nor 'model.language_model.embed_tokens.weight'"));
  // The text tower present but one of its tensors missing: named as for any checkpoint.
  dir = test::copy_fixture("gemma3_4b_container_bf16", "missing_layer");
  test::rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["language_model.model.layers.5.self_attn.q_scale.weight"] = h["language_model.model.layers.5.self_attn.q_norm.weight"];
    h.erase("language_model.model.layers.5.self_attn.q_norm.weight");
  });
  CHECK(contains(open_error(dir), "language_model.model.layers.5.self_attn.q_norm.weight"));
}

TEST_CASE("dense families: GPT-NeoX and OLMo 2 refuse what they do not hold, naming the tensor or key") {
  std::string e;
  auto j = config_of(model_fixture("pythia160m_parallel_f16"));
  j["hidden_act"] = "gelu_new";
  CHECK(contains(error_of([&] { (void)parse_model_config(j.dump(), "p/config.json"); }),
                 "\"hidden_act\" = \"gelu_new\" is not supported for gpt_neox (supported: gelu"));
  j = config_of(model_fixture("pythia160m_parallel_f16"));
  j["num_attention_heads"] = 3;
  CHECK(contains(error_of([&] { (void)parse_model_config(j.dump(), "p/config.json"); }),
                 "\"num_attention_heads\" = 3 does not divide \"hidden_size\" = 32"));
  // A fused tensor with the rows of a different head count.
  auto dir = test::copy_fixture("pythia160m_parallel_f16", "neox_qkv");
  test::rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["gpt_neox.layers.1.attention.query_key_value.weight"]["shape"] = {48, 64};
  });
  e = open_error(dir);
  CHECK(contains(e, "gpt_neox.layers.1.attention.query_key_value.weight"));
  CHECK(contains(e, "[96, 32]"));
  CHECK(contains(e, "per head (2 heads), its q, k and v rows"));
  // OLMo 2's q_norm spans the whole projection: a per-head [D] norm is the wrong shape.
  dir = test::copy_fixture("olmo2_postnorm_f32", "olmo2_qnorm");
  test::rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.0.self_attn.q_norm.weight"]["shape"] = {4, 8};  // the same 32 values, as 4 heads of 8
  });
  e = open_error(dir);
  CHECK(contains(e, "model.layers.0.self_attn.q_norm.weight"));
  CHECK(contains(e, "[32]"));
  // Its whole-projection k_norm cannot follow pooled K/V heads.
  const auto olmo = model::open(model_fixture("olmo2_postnorm_f32"));
  CHECK(contains(error_of([&] { (void)convert_kv_heads(*olmo, 2); }), "normalises its keys over all 4 key heads together"));
  CHECK_NOTHROW((void)convert_kv_heads(*olmo, 4));
  // Attentions computed elsewhere from a container draw its text tower's groups (text_config's heads).
  const HeadCounts heads = parse_head_counts(read_file(model_fixture("gemma3_4b_container_bf16") / "config.json", 1 << 20), "c");
  CHECK((heads.heads == 4 && heads.kv_heads == 2));
  // Pythia has MHA: pooling its K/V heads works as for any MHA checkpoint.
  const auto neox = model::open(model_fixture("pythia160m_parallel_f16"));
  CHECK(convert_kv_heads(*neox, 1)->config.kv_heads == 1);
}
