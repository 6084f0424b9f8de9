// Tests of Qwen3-Next (transformers 5.x models/qwen3_next): the published config read as Qwen3NextConfig
// reads it, the three fixture checkpoints (F32 and F16 in one file; BF16 in two shards with an explicit layer_types and a
// dense layer) equal to their PyTorch reference (make_qwen3_next_fixtures.py) on every layer's maps —
// softmax probabilities, and the Gated DeltaNet layers' signed matrices M with M·v = the recurrence's
// output — and on the logits, the plain-loop reference pass equal to the fast one, and malformed
// checkpoints (a missing conv weight, wrong state or conv sizes, a layer_types list of the wrong length)
// refused naming the file, the key or tensor and what is valid.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/export.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/config.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "model/hybrid_checks.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::check_close;
using attnscope::test::contains;
using attnscope::test::copy_fixture;
using attnscope::test::error_of;
using attnscope::test::fixture_ids;
using attnscope::test::fixture_reference;
using attnscope::test::ReferenceTensor;
using attnscope::test::rewrite_header;
namespace fs = std::filesystem;

using attnscope::test::config_refusal;
using attnscope::test::edit_config;
namespace {

const char* const fixtures[] = {"qwen3_next_f32", "qwen3_next_f16", "qwen3_next_bf16_sharded"};

nlohmann::json qwen3_next_80b() {
  return nlohmann::json::parse(read_file(
      fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/real-configs/Qwen/Qwen3-Next-80B-A3B-Instruct.json", 1 << 20));
}

// Matrix `index` [rows, cols] of a reference tensor [n, rows, cols].
}  // namespace

TEST_CASE("qwen3_next: the published config is read as Qwen3NextConfig reads it") {
  const ModelConfig c = parse_model_config(qwen3_next_80b().dump(), "Qwen3-Next-80B-A3B-Instruct/config.json");
  CHECK(c.model_type == "qwen3_next");
  CHECK(c.layers == 48);  // Qwen3NextConfig's default: the published file leaves num_hidden_layers out
  REQUIRE(c.layer_linear.size() == 48);
  for (int l = 0; l < 48; ++l) CHECK(c.is_linear_layer(l) == ((l + 1) % 4 != 0));  // full_attention_interval 4
  CHECK(c.linear.key_heads == 16);
  CHECK(c.linear.value_heads == 32);
  CHECK(c.linear.key_dim == 128);
  CHECK(c.linear.value_dim == 128);
  CHECK(c.linear.conv_kernel == 4);
  CHECK(c.linear.conv_dim() == 2 * 16 * 128 + 32 * 128);
  CHECK(c.heads == 16);
  CHECK(c.kv_heads == 2);
  CHECK(c.head_dim == 256);
  CHECK(c.rotated_dim() == 64);  // partial_rotary_factor 0.25
  CHECK(c.rope_theta == 10000000.0);
  CHECK(c.qk_norm);
  CHECK(c.attn_output_gate);
  CHECK(c.norm_plus_one);
  CHECK(!c.tied_embeddings);
  CHECK(c.moe.experts == 512);
  CHECK(c.moe.top_k == 10);
  CHECK(c.moe.expert_ffn == 512);
  CHECK(c.moe.shared_ffn == 512);  // shared_expert_intermediate_size's default
  CHECK(c.moe.shared_gate);
  CHECK(c.moe.norm_topk);
  for (int l = 0; l < 48; ++l) CHECK(c.moe.is_moe_layer(l));
  // About 80 billion parameters, as the name says.
  CHECK(c.parameter_count() > int64_t(79e9));
  CHECK(c.parameter_count() < int64_t(82e9));
}

TEST_CASE("qwen3_next: layer_types, its legacy names and every refusal name the key and what is valid") {
  nlohmann::json j = qwen3_next_80b();
  j["num_hidden_layers"] = 4;
  j["layer_types"] = {"full_attention", "linear_attention", "attention", "mamba"};
  ModelConfig c = parse_model_config(j.dump(), "cfg/config.json");
  CHECK(!c.is_linear_layer(0));
  CHECK(c.is_linear_layer(1));
  CHECK(!c.is_linear_layer(2));  // "attention" is read as "full_attention" (remap_legacy_layer_types)
  CHECK(c.is_linear_layer(3));   // "mamba" as "linear_attention"
  j["layer_types"] = {"linear_attention", "full_attention", "linear_attention"};
  std::string e = config_refusal(j);
  CHECK(contains(e, "cfg/config.json"));
  CHECK(contains(e, "\"layer_types\" must be a list of 4 entries"));
  CHECK(contains(e, "got 3 entries"));
  j["layer_types"] = {"linear_attention", "full_attention", "sliding_attention", "full_attention"};
  e = config_refusal(j);
  CHECK(contains(e, "\"layer_types\"[2] = \"sliding_attention\""));
  CHECK(contains(e, "supported: \"linear_attention\", \"full_attention\""));
  j.erase("layer_types");
  j["full_attention_interval"] = 2;
  c = parse_model_config(j.dump(), "cfg/config.json");
  CHECK(c.is_linear_layer(0));
  CHECK(!c.is_linear_layer(1));
  j["linear_num_value_heads"] = 24;
  j["linear_num_key_heads"] = 16;
  e = config_refusal(j);
  CHECK(contains(e, "\"linear_num_key_heads\" = 16 does not divide \"linear_num_value_heads\" = 24"));
  j = qwen3_next_80b();
  j["attention_bias"] = true;
  CHECK(contains(config_refusal(j), "\"attention_bias\" = true is not supported for qwen3_next"));
  j = qwen3_next_80b();
  j["hidden_act"] = "gelu";
  CHECK(contains(config_refusal(j), "\"hidden_act\" = \"gelu\" is not supported for qwen3_next"));
}

TEST_CASE("qwen3_next fixtures: every layer's maps and the logits equal transformers', F32, F16 and BF16 sharded") {
  for (const char* name : fixtures) {
    CAPTURE(name);
    const ModelConfig c = model::open(attnscope::test::model_fixture(name))->config;
    // Rows that are not probabilities: a row sum away from 1.
    const int linear = attnscope::test::check_layers_against_reference(
        name, "Gated DeltaNet", c.linear.value_heads,
        [](const Mat& m0, int T) { CHECK(std::abs(m0.row(T - 1).sum() - 1.0f) > 0.05f); });
    CHECK(linear == 2 + (std::string(name) != "qwen3_next_bf16_sharded" ? 1 : 0));  // the F32 and F16 ones: 3 of 4
    CHECK(linear < c.layers);
  }
}

TEST_CASE("qwen3_next: a linear layer's detail — M·v is the recurrence's output, both as transformers computes them") {
  for (const char* name : fixtures) {
    CAPTURE(name);
    const auto model = model::open(attnscope::test::model_fixture(name));
    const ModelConfig& c = model->config;
    const std::vector<int32_t> ids = fixture_ids(name);
    for (int l = 0; l < c.layers; ++l) {
      if (!c.is_linear_layer(l)) continue;
      CAPTURE(l);
      ForwardOptions o;
      o.detail_layer = l;
      const ForwardResult r = forward(*model, ids, o);
      REQUIRE(r.detail);
      const LayerDetail& d = *r.detail;
      CHECK(d.linear);
      REQUIRE(d.probs.size() == size_t(c.linear.value_heads));
      CHECK(d.scores.empty());
      const ReferenceTensor v = fixture_reference(name, "linear." + std::to_string(l) + ".v");
      const ReferenceTensor core = fixture_reference(name, "linear." + std::to_string(l) + ".core");
      for (int h = 0; h < c.linear.value_heads; ++h) {
        CAPTURE(h);
        // Relative to the values' size: the layers before this one run their recurrences in float32, as the
        // model does, and their rounding reaches this layer's input.
        const Mat v_ref = ref_slice(v, h), core_ref = ref_slice(core, h);
        check_close(d.v[size_t(h)], v_ref, 1e-5 * std::max(1.0f, v_ref.cwiseAbs().maxCoeff()), "v after the convolution");
        check_close(d.head_out[size_t(h)], core_ref, 1e-5 * std::max(1.0f, core_ref.cwiseAbs().maxCoeff()),
                    "the recurrence's output");
        check_close(Mat(d.probs[size_t(h)] * d.v[size_t(h)]), d.head_out[size_t(h)], 1e-5, "M·v");
        check_close(d.probs[size_t(h)], Mat(r.linear_map(l, h)), 0, "the detail's M is the stack's");
        // β in (0, 1) and a decay log α = g < 0 on every token.
        CHECK(d.beta.row(h).minCoeff() > 0);
        CHECK(d.beta.row(h).maxCoeff() < 1);
        CHECK(d.decay.row(h).maxCoeff() < 0);
      }
    }
  }
}

TEST_CASE("qwen3_next: the plain-loop reference pass equals the fast one") {
  for (const char* name : fixtures) {
    CAPTURE(name);
    attnscope::test::check_reference_pass_equals_fast(name, {});
  }
}

TEST_CASE("qwen3_next: malformed checkpoints are refused naming the file, the tensor or key and what is valid") {
  SUBCASE("a missing conv weight") {
    const fs::path dir = copy_fixture("qwen3_next_f32", "qwen3_next_no_conv");
    rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {  // renamed: the data area still tiles
      h["model.layers.1.linear_attn.conv.weight"] = h["model.layers.1.linear_attn.conv1d.weight"];
      h.erase("model.layers.1.linear_attn.conv1d.weight");
    });
    CHECK(contains(error_of([&] { (void)model::open(dir); }), "missing tensor 'model.layers.1.linear_attn.conv1d.weight'"));
  }
  SUBCASE("a missing A_log") {
    const fs::path dir = copy_fixture("qwen3_next_f32", "qwen3_next_no_alog");
    rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
      h["model.layers.0.linear_attn.A"] = h["model.layers.0.linear_attn.A_log"];
      h.erase("model.layers.0.linear_attn.A_log");
    });
    CHECK(contains(error_of([&] { (void)model::open(dir); }), "missing tensor 'model.layers.0.linear_attn.A_log'"));
  }
  SUBCASE("a conv width the tensors do not have") {
    const fs::path dir = copy_fixture("qwen3_next_f32", "qwen3_next_conv3");
    edit_config(dir, [](nlohmann::json& j) { j["linear_conv_kernel_dim"] = 3; });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, "model.layers.0.linear_attn.conv1d.weight"));
    CHECK(contains(e, "has shape [56, 1, 4]"));
    CHECK(contains(e, "[56, 1, 3]"));
    CHECK(contains(e, "linear_conv_kernel_dim 3"));
  }
  SUBCASE("a state size (key head width) the tensors do not have") {
    const fs::path dir = copy_fixture("qwen3_next_f32", "qwen3_next_dk");
    edit_config(dir, [](nlohmann::json& j) { j["linear_key_head_dim"] = 6; });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, "model.layers.0.linear_attn.in_proj_qkvz.weight"));
    CHECK(contains(e, "linear_key_head_dim 6"));
  }
  SUBCASE("a value head count the tensors do not have") {
    const fs::path dir = copy_fixture("qwen3_next_f32", "qwen3_next_hv");
    edit_config(dir, [](nlohmann::json& j) { j["linear_num_value_heads"] = 2; });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, "model.layers.0.linear_attn.in_proj_qkvz.weight"));
    CHECK(contains(e, "value heads"));
  }
  SUBCASE("a layer_types list of the wrong length") {
    const fs::path dir = copy_fixture("qwen3_next_bf16_sharded", "qwen3_next_types");
    edit_config(dir, [](nlohmann::json& j) { j["layer_types"] = {"linear_attention", "full_attention"}; });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, (dir / "config.json").string()));
    CHECK(contains(e, "\"layer_types\" must be a list of 4 entries"));
  }
  SUBCASE("layer_types that put softmax attention where the files hold a Gated DeltaNet") {
    const fs::path dir = copy_fixture("qwen3_next_f32", "qwen3_next_swapped");
    edit_config(dir, [](nlohmann::json& j) {
      j["layer_types"] = {"full_attention", "linear_attention", "linear_attention", "full_attention"};
    });
    CHECK(contains(error_of([&] { (void)model::open(dir); }), "model.layers.0.self_attn.q_proj.weight"));
  }
}

TEST_CASE("qwen3_next: a layer as the views draw it — a Gated DeltaNet layer signed, an attention layer probabilities") {
  // analysis/model_layer.h: what the Heads view, export and compute's --layer read; the Positions view's
  // layer_positions refuses a linear layer by name (it has no RoPE).
  const auto model = model::open(attnscope::test::model_fixture("qwen3_next_f32"));
  const ModelConfig& c = model->config;
  const std::vector<int32_t> ids = fixture_ids("qwen3_next_f32");
  std::vector<std::string> labels;
  for (int32_t id : ids) labels.push_back(std::to_string(id));
  for (int layer : {0, 3}) {
    CAPTURE(layer);
    ForwardOptions options;
    options.detail_layer = layer;
    const ForwardResult r = forward(*model, ids, options);
    const Analysis a = layer_analysis(*model, r, labels);
    const AttentionAnalysis& att = *a.attention;
    if (c.is_linear_layer(layer)) {
      CHECK(signed_maps(att));
      CHECK(std::string(map_value_word(att)) == "Gated DeltaNet weight");
      REQUIRE(int(att.result.probs.size()) == c.linear.value_heads);
      for (int h = 0; h < c.linear.value_heads; ++h) CHECK(att.result.probs[size_t(h)] == Mat(r.linear_map(layer, h)));
      CHECK(att.result.scores.empty());
      // what export and the Heads view draw: the diverging colormap over a range symmetric about 0
      ExportRequest request;
      request.what = ExportWhat::heads;
      const FigureSpec f = export_figure(a, request);
      REQUIRE(f.colorbars.size() == 1);
      CHECK(f.colorbars[0].colormap == Colormap::diverging);
      CHECK(f.colorbars[0].range.lo == -f.colorbars[0].range.hi);
      CHECK(f.colorbars[0].title == "Gated DeltaNet weight");
      CHECK(contains(export_caption(a, request), "M, signed (no softmax)"));
      const std::string e = error_of([&] { (void)layer_positions(c, layer, int(ids.size())); });
      CHECK(contains(e, "layer 0 is a Gated DeltaNet layer (linear attention): it has no RoPE"));
    } else {
      CHECK_FALSE(signed_maps(att));
      CHECK(std::string(map_value_word(att)) == "probability");
      REQUIRE(int(att.result.probs.size()) == c.heads);
      for (int h = 0; h < c.heads; ++h) CHECK(att.result.probs[size_t(h)] == Mat(r.attention(layer, h)));
      CHECK(layer_positions(c, layer, int(ids.size())).scheme == PositionScheme::rope);
      ExportRequest request;
      request.what = ExportWhat::heads;
      CHECK(export_figure(a, request).colorbars[0].colormap == Colormap::viridis);
    }
  }
}

TEST_CASE("qwen3_next: a Gated DeltaNet layer's shape trace — each step's shape is its tensor's, the parameters the file's") {
  // What the Shapes view and compute's trace.json show for a linear layer: the short convolution, the key heads
  // shared by value heads, d_k ≠ d_v, the gated norm; the parameters counted from the formulas equal the
  // layer's tensors in the checkpoint, the state is S and the convolution's last K − 1 inputs.
  const fs::path dir = attnscope::test::model_fixture("qwen3_next_f32");
  const auto model = model::open(dir);
  const ModelConfig& c = model->config;
  const LinearAttentionConfig& la = c.linear;
  REQUIRE(la.value_heads > la.key_heads);  // the fixture shares key heads, as the real model does
  const std::vector<int32_t> ids = fixture_ids("qwen3_next_f32");
  const int T = int(ids.size());
  std::vector<std::string> labels(ids.size(), "x");
  ForwardOptions options;
  options.detail_layer = 0;
  const ForwardResult r = forward(*model, ids, options);
  const Analysis a = layer_analysis(*model, r, labels);
  const AttentionAnalysis& att = *a.attention;
  const Trace& t = att.trace;
  auto shape_of = [&](const std::string& key) {
    for (const TraceStep& s : t.steps)
      if (s.key == key) return s.shape;
    FAIL("no step " << key);
    return std::vector<int64_t>{};  // not reached: FAIL ends the case
  };
  CHECK(shape_of("input") == std::vector<int64_t>{T, c.d_model});
  CHECK(shape_of("short_conv") == std::vector<int64_t>{T, la.conv_dim()});
  CHECK(shape_of("split_heads_v") == std::vector<int64_t>{la.value_heads, att.result.v[0].rows(), att.result.v[0].cols()});
  CHECK(shape_of("l2_norm_qk") == std::vector<int64_t>{la.key_heads, T, att.result.q[0].cols()});
  CHECK(shape_of("implicit_matrix") == std::vector<int64_t>{int64_t(att.result.probs.size()), T, T});
  CHECK(shape_of("weighted_sum_linear") == std::vector<int64_t>{la.value_heads, T, att.result.head_out[0].cols()});
  CHECK(shape_of("gated_norm") == std::vector<int64_t>{la.value_heads, T, la.value_dim});
  CHECK(shape_of("concat_heads") == std::vector<int64_t>{T, att.result.concat.cols()});
  CHECK(shape_of("output") == std::vector<int64_t>{att.result.output.rows(), att.result.output.cols()});
  // the parameters: every tensor of layer 0's linear_attn in the file
  const SafetensorsFile file(dir / "model.safetensors");
  int64_t stored = 0;
  for (const SafetensorsTensor& tensor : file.header().tensors)
    if (tensor.name.rfind("model.layers.0.linear_attn.", 0) == 0) stored += tensor.count();
  CHECK(stored > 0);
  CHECK(t.params.total() == stored);
  // the state: S per value head and the convolution's last K − 1 inputs, 4 bytes each, at any length
  CHECK(t.state_bytes_fp32 == 4 * (int64_t(la.value_heads) * la.key_dim * la.value_dim + int64_t(la.conv_kernel - 1) * la.conv_dim()));
  CHECK(t.kv_bytes_per_token_fp32 == 0);
}
