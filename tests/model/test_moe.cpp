// Tests of the mixture-of-experts and Granite families (qwen3_moe, olmoe, granite, granitemoe): the real
// config.json files read as transformers 5.x reads them, the fixtures of make_moe_fixtures.py match their
// PyTorch references through the fast and the plain-loop pass, each setting moves the result, and every
// config or tensor that disagrees is refused naming the file, the key and what is valid.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/config.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "test_paths.h"

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

const char* const qwen3_moe_fixture = "qwen3_moe_30b_a3b_bf16";
const char* const sparse_step_fixture = "qwen3_moe_sparse_step_f32";
const char* const olmoe_fixture = "olmoe_1b_7b_bf16";
const char* const granitemoe_fixture = "granitemoe_31_1b_bf16";
const char* const granite_fixture = "granite_dense_f16";
const std::vector<std::string> fixtures{qwen3_moe_fixture, sparse_step_fixture, olmoe_fixture, granitemoe_fixture,
                                        granite_fixture};

nlohmann::json real_config(const std::string& id) {
  return nlohmann::json::parse(
      read_file(fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "real-configs" / (id + ".json"), 1 << 20));
}

nlohmann::json fixture_config(const std::string& name) {
  return nlohmann::json::parse(read_file(model_fixture(name) / "config.json", 1 << 20));
}

// Largest |a − b| ≤ tol · max(1, max |b|) when relative, else ≤ tol; returns the largest difference.
double check_flat(const float* a, const std::vector<float>& b, double tol, bool relative, const std::string& what) {
  double worst = 0, scale = 1;
  for (size_t i = 0; i < b.size(); ++i) {
    scale = std::max(scale, relative ? std::abs(double(b[i])) : 1.0);
    worst = std::max(worst, std::isfinite(a[i]) ? std::abs(double(a[i]) - double(b[i])) : INFINITY);
  }
  INFO(what << ": largest difference " << worst << " (scale " << scale << ")");
  CHECK(worst <= tol * scale);
  return worst / scale;
}

// The largest relative logit difference of a model (opened from `dir`) against the fixture's reference.
double logit_error(const fs::path& dir, const std::string& fixture) {
  const auto m = model::open(dir);
  const ForwardResult r = forward(*m, test::fixture_ids(fixture));
  const auto ref = test::fixture_reference(fixture, "logits");
  double worst = 0, scale = 1;
  for (size_t i = 0; i < ref.values.size(); ++i) {
    scale = std::max(scale, std::abs(double(ref.values[i])));
    worst = std::max(worst, std::abs(double(r.logits.data()[i]) - double(ref.values[i])));
  }
  return worst / scale;
}

// Appends a copy of tensor `from`'s bytes to a safetensors file under the name `to` (a tensor the
// file did not have, e.g. one more expert).
void append_copy(const fs::path& file, const std::string& from, const std::string& to) {
  const std::string bytes = read_file(file, 1 << 26);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[size_t(i)]);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, size_t(n)));
  std::string data = bytes.substr(size_t(8 + n));
  const int64_t begin = header[from]["data_offsets"][0], end = header[from]["data_offsets"][1];
  header[to] = header[from];
  header[to]["data_offsets"] = {int64_t(data.size()), int64_t(data.size()) + end - begin};
  data += data.substr(size_t(begin), size_t(end - begin));
  const std::string text = header.dump();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((uint64_t(text.size()) >> (8 * i)) & 0xFF);
  write_file_atomic(file, out + text + data);
}

std::vector<float> flat(const Tensor3& t) {
  std::vector<float> v;
  for (const Mat& m : t) v.insert(v.end(), m.data(), m.data() + m.size());
  return v;
}

}  // namespace

TEST_CASE("moe config: Qwen3-30B-A3B, OLMoE-1B-7B and Granite 3.1 MoE read as transformers 5 reads them") {
  const ModelConfig q = parse_model_config(real_config("Qwen/Qwen3-30B-A3B").dump(), "q");
  CHECK(q.model_type == "qwen3_moe");
  CHECK(q.head_dim == 128);  // the file's head_dim, not 2048 / 32
  CHECK(q.kv_heads == 4);
  CHECK(q.qk_norm);
  CHECK(!q.qk_norm_whole);
  CHECK(q.moe.experts == 128);
  CHECK(q.moe.top_k == 8);
  CHECK(q.moe.expert_ffn == 768);
  CHECK(q.moe.norm_topk);
  CHECK(!q.moe.softmax_over_topk);
  for (int l = 0; l < q.layers; ++l) CHECK(q.moe.is_moe_layer(l));
  CHECK(q.rope_theta == 1000000.0);
  CHECK(q.attn_scale == doctest::Approx(1 / std::sqrt(128.0)));
  CHECK(q.residual_scale == 1.0);
  CHECK(q.logits_divisor == 1.0);

  const ModelConfig o = parse_model_config(real_config("allenai/OLMoE-1B-7B-0924").dump(), "o");
  CHECK(o.kv_heads == 16);  // OlmoeConfig: num_key_value_heads = num_attention_heads
  CHECK(o.head_dim == 128);
  CHECK(o.norm_eps == 1e-5);
  CHECK(o.rope_theta == 10000.0);
  CHECK(!o.tied_embeddings);
  CHECK(o.qk_norm);
  CHECK(o.qk_norm_whole);
  CHECK(o.moe.experts == 64);
  CHECK(o.moe.top_k == 8);
  CHECK(o.moe.expert_ffn == 1024);  // intermediate_size: each expert's width
  CHECK(!o.moe.norm_topk);
  for (int l = 0; l < o.layers; ++l) CHECK(o.moe.is_moe_layer(l));

  const ModelConfig g = parse_model_config(real_config("ibm-granite/granite-3.1-1b-a400m-instruct").dump(), "g");
  CHECK(g.model_type == "granitemoe");
  CHECK(g.embedding_scale == 12.0);
  CHECK(g.residual_scale == 0.22);
  CHECK(g.attn_scale == 0.015625);  // attention_multiplier replaces 1/√D
  CHECK(g.logits_divisor == 6.0);
  CHECK(g.tied_embeddings);
  CHECK(g.kv_heads == 8);
  CHECK(g.moe.experts == 32);
  CHECK(g.moe.top_k == 8);
  CHECK(g.moe.expert_ffn == 512);
  CHECK(g.moe.softmax_over_topk);
  CHECK(g.rope_theta == 1500000.0);
  // The parameter count from the shapes: 24 layers of attention, router and 32 fused experts, tied.
  const int64_t C = 1024, QD = 16 * 64, KV = 8 * 64;
  const int64_t layer = C * QD + 2 * C * KV + QD * C + 2 * C + 32 * (C + 3 * C * 512);
  CHECK(g.parameter_count() == 49155 * C + 24 * layer + C);
}

TEST_CASE("moe config: decoder_sparse_step and mlp_only_layers choose Qwen3-MoE's mixture layers") {
  const ModelConfig c = parse_model_config(fixture_config(sparse_step_fixture).dump(), "c");
  REQUIRE(c.layers == 4);
  CHECK(c.moe.sparse_step == 2);
  CHECK(!c.moe.is_moe_layer(0));
  CHECK(c.moe.is_moe_layer(1));
  CHECK(!c.moe.is_moe_layer(2));
  CHECK(!c.moe.is_moe_layer(3));  // (3 + 1) % 2 == 0, but mlp_only_layers names it
  CHECK(!c.moe.norm_topk);
  const auto m = model::open(model_fixture(sparse_step_fixture));
  CHECK(m->weights->layers[0].w_down.rows() == c.d_model);
  CHECK(m->weights->layers[0].moe.experts.empty());
  CHECK(m->weights->layers[1].moe.experts.size() == 6);
  CHECK(m->weights->layers[1].w_down.empty());
  CHECK(m->weights->layers[3].w_gate.rows() == c.ffn_dim);
  CHECK(m->source_dtypes == "F32");
}

TEST_CASE("moe forward: every fixture matches the PyTorch reference, every layer's attentions and the logits") {
  for (const std::string& name : fixtures) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const auto ids = test::fixture_ids(name);
    const auto attentions = test::fixture_reference(name, "attentions");
    const auto logits = test::fixture_reference(name, "logits");
    const int T = int(ids.size());
    REQUIRE(attentions.shape == std::vector<int64_t>{m->config.layers, m->config.heads, T, T});
    REQUIRE(logits.shape == std::vector<int64_t>{T, m->config.vocab});
    ForwardOptions options;
    options.detail_layer = m->config.layers - 1;
    for (const bool fast : {true, false}) {
      const ForwardResult r = fast ? forward(*m, ids, options) : forward_reference(*m, ids, options);
      const std::string which = fast ? "fast" : "reference";
      check_flat(r.attentions.data(), attentions.values, 1e-5, false, which + " attentions");
      check_flat(r.logits.data(), logits.values, 1e-4, true, which + " logits");
      REQUIRE(r.detail.has_value());
      check_flat(flat(r.detail->q).data(), test::fixture_reference(name, "detail.q").values, 1e-4, true, which + " q");
      check_flat(flat(r.detail->k).data(), test::fixture_reference(name, "detail.k").values, 1e-4, true, which + " k");
      check_flat(flat(r.detail->v).data(), test::fixture_reference(name, "detail.v").values, 1e-4, true, which + " v");
      check_flat(r.detail->output.data(), test::fixture_reference(name, "detail.output").values, 1e-4, true,
                 which + " output");
    }
  }
}

TEST_CASE("moe forward: the fast pass equals the plain-loop one, layer detail included") {
  for (const std::string& name : fixtures) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    ForwardOptions options;
    options.detail_layer = m->config.layers - 1;
    const auto ids = test::fixture_ids(name);
    const ForwardResult fast = forward(*m, ids, options), ref = forward_reference(*m, ids, options);
    check_flat(fast.attentions.data(), ref.attentions, 2e-6, false, "attentions");
    check_flat(fast.logits.data(), std::vector<float>(ref.logits.data(), ref.logits.data() + ref.logits.size()), 1e-5,
               true, "logits");
    const LayerDetail &a = *fast.detail, &b = *ref.detail;
    test::check_close3(a.q, b.q, 1e-5, "q");
    test::check_close3(a.k, b.k, 1e-5, "k");
    test::check_close3(a.scores, b.scores, 1e-4, "scores");
    test::check_close(a.output, b.output, 1e-5, "output");
  }
}

TEST_CASE("moe forward: each family setting moves the logits beyond the tolerance (the fixtures test them)") {
  // Each edit makes config.json say something else about the same weights; the reference no longer holds.
  struct Edit {
    const char* fixture;
    const char* what;
    std::function<void(nlohmann::json&)> edit;
  };
  const std::vector<Edit> edits{
      {qwen3_moe_fixture, "norm_topk_prob", [](nlohmann::json& j) { j["norm_topk_prob"] = false; }},
      {sparse_step_fixture, "norm_topk_prob", [](nlohmann::json& j) { j["norm_topk_prob"] = true; }},
      {olmoe_fixture, "norm_topk_prob", [](nlohmann::json& j) { j["norm_topk_prob"] = true; }},
      {qwen3_moe_fixture, "num_experts_per_tok", [](nlohmann::json& j) { j["num_experts_per_tok"] = 2; }},
      {granitemoe_fixture, "num_experts_per_tok", [](nlohmann::json& j) { j["num_experts_per_tok"] = 2; }},
      {granitemoe_fixture, "embedding_multiplier", [](nlohmann::json& j) { j["embedding_multiplier"] = 1.0; }},
      {granitemoe_fixture, "residual_multiplier", [](nlohmann::json& j) { j["residual_multiplier"] = 1.0; }},
      {granitemoe_fixture, "attention_multiplier", [](nlohmann::json& j) { j["attention_multiplier"] = 0.125; }},
      {granitemoe_fixture, "logits_scaling", [](nlohmann::json& j) { j["logits_scaling"] = 1.0; }},
      {granite_fixture, "residual_multiplier", [](nlohmann::json& j) { j["residual_multiplier"] = 1.0; }},
      {granite_fixture, "logits_scaling", [](nlohmann::json& j) { j["logits_scaling"] = 1.0; }},
  };
  for (const Edit& e : edits) {
    CAPTURE(e.fixture);
    CAPTURE(e.what);
    CHECK(logit_error(model_fixture(e.fixture), e.fixture) <= 1e-4);
    const fs::path dir = copy_fixture(e.fixture, std::string("moe_setting_") + e.what);
    edit_config(dir, e.edit);
    CHECK(logit_error(dir, e.fixture) > 1e-3);
  }
}

TEST_CASE("moe open: the routers and experts load as the published files name them, GraniteMoE's fused ones split") {
  const auto q = model::open(model_fixture(qwen3_moe_fixture));
  CHECK(q->source_dtypes == "BF16");
  const LayerWeights& l = q->weights->layers[1];
  CHECK(l.moe.router.rows() == 8);
  REQUIRE(l.moe.experts.size() == 8);
  CHECK(l.moe.experts[7].gate.rows() == 12);
  CHECK(l.moe.experts[7].down.cols() == 12);
  CHECK(l.q_norm.size() == 16);  // per head

  const auto o = model::open(model_fixture(olmoe_fixture));
  CHECK(o->weights->layers[0].q_norm.size() == 4 * 8);  // the whole q projection
  CHECK(o->weights->layers[0].k_norm.size() == 4 * 8);

  // GraniteMoE: input_linear [E, 2F, C]: expert x's gate is rows [2F·x, 2F·x + F), its up the next F.
  const auto g = model::open(model_fixture(granitemoe_fixture));
  CHECK(g->source_dtypes == "BF16");
  const SafetensorsFile file(model_fixture(granitemoe_fixture) / "model.safetensors");
  const SafetensorsTensor* in = file.header().find("model.layers.1.block_sparse_moe.input_linear.weight");
  const SafetensorsTensor* out = file.header().find("model.layers.1.block_sparse_moe.output_linear.weight");
  REQUIRE(in != nullptr);
  REQUIRE(out != nullptr);
  CHECK(in->shape == std::vector<int64_t>{8, 24, 32});
  CHECK(out->shape == std::vector<int64_t>{8, 32, 12});
  std::vector<float> in_values(size_t(in->count())), out_values(size_t(out->count()));
  file.read_float32(*in, in_values.data(), false);
  file.read_float32(*out, out_values.data(), false);
  const MoeWeights& moe = g->weights->layers[1].moe;
  REQUIRE(moe.experts.size() == 8);
  for (int x : {0, 5, 7})
    for (int f : {0, 11})
      for (int c : {0, 31}) {
        CHECK(moe.experts[size_t(x)].gate(f, c) == in_values[size_t((x * 24 + f) * 32 + c)]);
        CHECK(moe.experts[size_t(x)].up(f, c) == in_values[size_t((x * 24 + 12 + f) * 32 + c)]);
        CHECK(moe.experts[size_t(x)].down(c, f) == out_values[size_t((x * 32 + c) * 12 + f)]);
      }
  CHECK(moe.router.rows() == 8);
  CHECK(g->weights->lm_head.empty());  // tied
}

TEST_CASE("moe open: an expert count that disagrees with the files is refused with the file, the key and the count") {
  // More experts in config.json than in the files, and fewer.
  for (const int experts : {10, 6}) {
    CAPTURE(experts);
    fs::path dir = copy_fixture(qwen3_moe_fixture, "qwen3_moe_experts_" + std::to_string(experts));
    edit_config(dir, [experts](nlohmann::json& j) { j["num_experts"] = experts; });
    std::string e = open_error(dir);
    CHECK(contains(e, (dir / "config.json").string()));
    CHECK(contains(e, "\"num_experts\" = " + std::to_string(experts) + ", but"));
    CHECK(contains(e, "holds 8 experts in layer 0"));
    CHECK(contains(e, "valid: \"num_experts\": 8"));

    dir = copy_fixture(granitemoe_fixture, "granitemoe_experts_" + std::to_string(experts));
    edit_config(dir, [experts](nlohmann::json& j) { j["num_local_experts"] = experts; });
    e = open_error(dir);
    CHECK(contains(e, (dir / "config.json").string()));
    CHECK(contains(e, "\"num_local_experts\" = " + std::to_string(experts) + ", but"));
    CHECK(contains(e, "router 'model.layers.0.block_sparse_moe.router.layer.weight' has shape [8, 32]"));
    CHECK(contains(e, "valid: \"num_local_experts\": 8"));
  }
  // A router that says 8 but a ninth expert's tensors in the file: 9 experts held.
  fs::path dir = copy_fixture(olmoe_fixture, "olmoe_ninth_expert");
  append_copy(dir / "model.safetensors", "model.layers.0.mlp.experts.7.gate_proj.weight",
              "model.layers.0.mlp.experts.8.gate_proj.weight");
  std::string e = open_error(dir);
  CHECK(contains(e, "\"num_experts\" = 8, but"));
  CHECK(contains(e, "holds 9 experts in layer 0"));
}

TEST_CASE("moe open: missing or misshapen expert tensors and q/k norms are named") {
  fs::path dir = copy_fixture(qwen3_moe_fixture, "qwen3_moe_no_expert");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.1.mlp.experts.3.up.weight"] = h["model.layers.1.mlp.experts.3.up_proj.weight"];
    h.erase("model.layers.1.mlp.experts.3.up_proj.weight");
  });
  CHECK(contains(open_error(dir), "missing tensor 'model.layers.1.mlp.experts.3.up_proj.weight'"));

  dir = copy_fixture(qwen3_moe_fixture, "qwen3_moe_expert_width");  // moe_intermediate_size disagrees
  edit_config(dir, [](nlohmann::json& j) { j["moe_intermediate_size"] = 10; });
  CHECK(contains(open_error(dir), "tensor 'model.layers.0.mlp.experts.0.gate_proj.weight' has shape [12, 32], but "
                                  "config.json implies [10, 32]"));

  dir = copy_fixture(granitemoe_fixture, "granitemoe_width");  // intermediate_size disagrees with input_linear
  edit_config(dir, [](nlohmann::json& j) { j["intermediate_size"] = 10; });
  std::string e = open_error(dir);
  CHECK(contains(e, "tensor 'model.layers.0.block_sparse_moe.input_linear.weight' has shape [8, 24, 32], but "
                    "config.json implies [8, 20, 32]"));
  CHECK(contains(e, "num_local_experts 8 × (gate, then up: intermediate_size 10 rows each)"));

  dir = copy_fixture(olmoe_fixture, "olmoe_head_norm");  // OLMoE's q_norm spans H·D = 32, not one head's 8
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    h["model.layers.0.self_attn.q_norm.weight"]["shape"] = {4, 8};
  });
  CHECK(contains(open_error(dir), "tensor 'model.layers.0.self_attn.q_norm.weight' has shape [4, 8], but config.json "
                                  "implies [32]"));
}

TEST_CASE("moe config: settings attnscope does not implement, and malformed ones, are refused by name") {
  nlohmann::json j = real_config("Qwen/Qwen3-30B-A3B");
  j["num_experts_per_tok"] = 200;
  std::string e = config_refusal(j);
  CHECK(contains(e, "cfg/config.json"));
  CHECK(contains(e, "\"num_experts_per_tok\" = 200 is more than the 128 experts (\"num_experts\"); valid: 1 to 128"));

  j = real_config("Qwen/Qwen3-30B-A3B");
  j["mlp_only_layers"] = {0, 48};
  CHECK(contains(config_refusal(j), "\"mlp_only_layers\"[1] = 48 is not a layer (valid: 0 to 47)"));
  j["mlp_only_layers"] = "all";
  CHECK(contains(config_refusal(j), "\"mlp_only_layers\" must be a list of layer numbers"));

  j = real_config("Qwen/Qwen3-30B-A3B");
  j["decoder_sparse_step"] = 0;
  CHECK(contains(config_refusal(j), "\"decoder_sparse_step\" = 0 is outside what attnscope supports (1 to"));

  j = real_config("Qwen/Qwen3-30B-A3B");
  j["use_sliding_window"] = true;
  CHECK(contains(config_refusal(j), "\"use_sliding_window\" = true is not supported for qwen3_moe"));

  j = real_config("Qwen/Qwen3-30B-A3B");
  j.erase("num_experts");
  CHECK(contains(config_refusal(j), "config.json has no \"num_experts\""));

  j = real_config("allenai/OLMoE-1B-7B-0924");
  j["clip_qkv"] = 8.0;
  CHECK(contains(config_refusal(j), "\"clip_qkv\" = 8.0 is not supported for olmoe (supported: null"));

  j = real_config("ibm-granite/granite-3.1-1b-a400m-instruct");
  j["logits_scaling"] = 0;
  CHECK(contains(config_refusal(j), "\"logits_scaling\" = 0 is outside the valid range"));
  j = real_config("ibm-granite/granite-3.1-1b-a400m-instruct");
  j["attention_multiplier"] = "1/64";
  CHECK(contains(config_refusal(j), "\"attention_multiplier\" must be a number"));

  nlohmann::json granite = fixture_config(granite_fixture);
  granite["mlp_bias"] = true;
  CHECK(contains(config_refusal(granite), "\"mlp_bias\" = true is not supported"));
}

TEST_CASE("moe convert: OLMoE's whole-projection k_norm refuses pooling K/V heads; Qwen3-MoE pools") {
  const auto o = model::open(model_fixture(olmoe_fixture));
  const std::string e = error_of([&] { (void)convert_kv_heads(*o, 2); });
  CHECK(contains(e, "olmoe normalises its keys over all 4 key heads together"));
  const auto q = model::open(model_fixture(qwen3_moe_fixture));
  const auto pooled = convert_kv_heads(*q, 1);
  const ForwardResult r = forward(*pooled, test::fixture_ids(qwen3_moe_fixture));
  CHECK(r.kv_heads == 1);
  for (int l = 0; l < r.layers; ++l)
    for (int h = 0; h < r.heads; ++h)
      CHECK(std::abs(r.attention(l, h).row(r.tokens - 1).sum() - 1.0f) < 1e-5);
}

namespace {

// The Shapes view's steps for layer 0 of a fixture, on its own token ids.
std::vector<TraceStep> layer0_trace(const std::string& name) {
  const auto m = model::open(model_fixture(name));
  ForwardOptions options;
  options.detail_layer = 0;
  const auto ids = test::fixture_ids(name);
  const ForwardResult r = forward(*m, ids, options);
  const Analysis a = layer_analysis(*m, r, std::vector<std::string>(ids.size(), "t"));
  return a.attention->trace.steps;
}

}  // namespace

TEST_CASE("moe trace: the Shapes view normalises OLMoE's whole projections before the split, Qwen3-MoE's heads after") {
  auto keys_of = [](const std::string& name) {
    std::vector<std::string> keys;
    for (const TraceStep& s : layer0_trace(name)) keys.push_back(s.key + " " + s.text());
    return keys;
  };
  auto index = [](const std::vector<std::string>& keys, const std::string& key) {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i].rfind(key + " ", 0) == 0) return int(i);
    return -1;
  };
  const std::vector<std::string> olmoe = keys_of(olmoe_fixture), qwen = keys_of(qwen3_moe_fixture);
  REQUIRE(index(olmoe, "qk_norm_whole") >= 0);
  CHECK(index(olmoe, "qk_norm") == -1);
  CHECK(index(olmoe, "qk_norm_whole") < index(olmoe, "split_heads"));
  CHECK(contains(olmoe[size_t(index(olmoe, "qk_norm_whole"))], "[T, H·d_k] = [20, 32]"));
  REQUIRE(index(qwen, "qk_norm") >= 0);
  CHECK(index(qwen, "qk_norm_whole") == -1);
  CHECK(index(qwen, "qk_norm") > index(qwen, "split_heads"));
  CHECK(index(qwen, "qk_norm") < index(qwen, "rope"));
}

TEST_CASE("moe trace: the scores step shows Granite's attention_multiplier, not 1/√d_k; Qwen3-MoE keeps 1/√d_k") {
  auto scores_of = [](const std::string& name) {
    for (const TraceStep& s : layer0_trace(name))
      if (s.key == "scores") return s.formula;
    return std::string("no scores step");
  };
  const auto granite = model::open(model_fixture(granite_fixture));
  const double scale = granite->config.attn_scale;
  CHECK(std::abs(scale * std::sqrt(double(granite->config.head_dim)) - 1.0) > 1e-3);  // the fixture sets its own
  char want[64];
  std::snprintf(want, sizeof want, "S = Q·Kᵀ · %.4g", scale);
  CHECK(scores_of(granite_fixture) == want);
  CHECK(scores_of(qwen3_moe_fixture) == "S = Q·Kᵀ / √d_k");
}
