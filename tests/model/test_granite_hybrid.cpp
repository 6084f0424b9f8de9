// Tests of Granite 4.0-H (transformers 5.x models/granitemoehybrid): granite-4.0-h-tiny's config read as
// GraniteMoeHybridConfig reads it, the three fixture checkpoints (F32 and F16 in one file with experts and no positions; BF16 in
// two shards with RoPE, two B/C groups and the shared MLP alone) equal to their PyTorch reference
// (make_granite_hybrid_fixtures.py) on every layer's maps — softmax probabilities, and the Mamba-2 layers' signed
// matrices M with M·x + D·x = the SSD's output — and on the logits, the plain-loop reference pass equal to the
// fast one, and malformed checkpoints (a missing conv weight, an A_log of the wrong length, a layer_types list of
// the wrong length) refused naming the file, the key or tensor and what is valid.
#include <doctest/doctest.h>

#include <cmath>

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
using attnscope::test::config_refusal;
using attnscope::test::contains;
using attnscope::test::copy_fixture;
using attnscope::test::edit_config;
using attnscope::test::error_of;
using attnscope::test::fixture_ids;
using attnscope::test::fixture_reference;
using attnscope::test::ReferenceTensor;
using attnscope::test::rewrite_header;
namespace fs = std::filesystem;

namespace {

const char* const fixtures[] = {"granite_hybrid_f32", "granite_hybrid_f16", "granite_hybrid_bf16_sharded"};

nlohmann::json granite_h_tiny() {
  return nlohmann::json::parse(
      read_file(fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/real-configs/ibm-granite/granite-4.0-h-tiny.json", 1 << 20));
}

// Matrix `index` [rows, cols] of a reference tensor [n, rows, cols].
}  // namespace

TEST_CASE("granite_hybrid: granite-4.0-h-tiny's config is read as GraniteMoeHybridConfig reads it") {
  const ModelConfig c = parse_model_config(granite_h_tiny().dump(), "granite-4.0-h-tiny/config.json");
  CHECK(c.model_type == "granitemoehybrid");
  REQUIRE(c.layers == 40);
  REQUIRE(c.layer_linear.size() == 40);
  int attention = 0;
  for (int l = 0; l < 40; ++l) {
    const bool is_attention = l == 5 || l == 15 || l == 25 || l == 35;  // its layer_types
    CHECK(c.is_linear_layer(l) == !is_attention);
    attention += is_attention;
    CHECK(c.nope_layer(l));  // position_embedding_type "nope": no RoPE anywhere
  }
  CHECK(attention == 4);
  CHECK(c.mamba.heads == 48);
  CHECK(c.mamba.head_dim == 64);
  CHECK(c.mamba.inner() == 2 * 1536);  // mamba_expand × hidden_size
  CHECK(c.mamba.groups == 1);
  CHECK(c.mamba.state == 128);
  CHECK(c.mamba.conv_kernel == 4);
  CHECK(c.mamba.conv_dim() == 3072 + 2 * 128);
  CHECK(c.mamba.conv_bias);
  CHECK(c.heads == 12);
  CHECK(c.kv_heads == 4);
  CHECK(c.head_dim == 128);
  CHECK(c.attn_scale == 0.0078125);
  CHECK(c.embedding_scale == 12);
  CHECK(c.residual_scale == 0.22);
  CHECK(c.logits_divisor == 6);
  CHECK(c.tied_embeddings);
  CHECK(c.moe.experts == 64);
  CHECK(c.moe.top_k == 6);
  CHECK(c.moe.expert_ffn == 512);
  CHECK(c.moe.softmax_over_topk);
  CHECK(c.moe.shared == 1);
  CHECK(c.moe.shared_ffn == 1024);
  for (int l = 0; l < 40; ++l) CHECK(c.moe.is_moe_layer(l));
  // About 7 billion parameters, as IBM says of Granite-4.0-H-Tiny.
  CHECK(c.parameter_count() > int64_t(6.5e9));
  CHECK(c.parameter_count() < int64_t(7.5e9));
}

TEST_CASE("granite_hybrid: layer_types, its alias and every refusal name the key and what is valid") {
  nlohmann::json j = granite_h_tiny();
  j["num_hidden_layers"] = 4;
  j["layer_types"] = {"attention", "mamba", "mamba", "attention"};
  ModelConfig c = parse_model_config(j.dump(), "cfg/config.json");
  CHECK(!c.is_linear_layer(0));
  CHECK(c.is_linear_layer(1));
  CHECK(!c.is_linear_layer(3));
  j.erase("layer_types");
  j["layers_block_type"] = {"mamba", "attention", "mamba", "mamba"};  // the attribute_map alias
  c = parse_model_config(j.dump(), "cfg/config.json");
  CHECK(c.is_linear_layer(0));
  CHECK(!c.is_linear_layer(1));
  j.erase("layers_block_type");
  c = parse_model_config(j.dump(), "cfg/config.json");  // GraniteMoeHybridConfig: every layer Mamba without it
  for (int l = 0; l < 4; ++l) CHECK(c.is_linear_layer(l));
  j["layer_types"] = {"mamba", "attention", "mamba"};
  std::string e = config_refusal(j);
  CHECK(contains(e, "cfg/config.json"));
  CHECK(contains(e, "\"layer_types\" must be a list of 4 entries"));
  CHECK(contains(e, "got 3 entries"));
  j["layer_types"] = {"mamba", "attention", "linear_attention", "mamba"};
  e = config_refusal(j);
  CHECK(contains(e, "\"layer_types\"[2] = \"linear_attention\""));
  CHECK(contains(e, "supported: \"mamba\", \"attention\""));
  j = granite_h_tiny();
  j["mamba_n_heads"] = 50;
  CHECK(contains(config_refusal(j), "\"mamba_n_heads\" = 50 does not divide mamba_expand × hidden_size = 3072"));
  j = granite_h_tiny();
  j["mamba_d_head"] = 32;
  CHECK(contains(config_refusal(j), "(valid: \"mamba_d_head\": 64)"));
  j = granite_h_tiny();
  j["mamba_n_groups"] = 5;
  CHECK(contains(config_refusal(j), "\"mamba_n_groups\" = 5 does not divide \"mamba_n_heads\" = 48"));
  j = granite_h_tiny();
  j["position_embedding_type"] = "alibi";
  CHECK(contains(config_refusal(j), "\"position_embedding_type\" = \"alibi\" is not supported for granitemoehybrid"));
  j = granite_h_tiny();
  j["mamba_proj_bias"] = true;
  CHECK(contains(config_refusal(j), "\"mamba_proj_bias\" = true is not supported for granitemoehybrid"));
  j = granite_h_tiny();
  j["num_experts_per_tok"] = 65;
  CHECK(contains(config_refusal(j), "\"num_experts_per_tok\" = 65 is more than the 64 experts"));
  j = granite_h_tiny();
  j["position_embedding_type"] = "rope";
  c = parse_model_config(j.dump(), "cfg/config.json");
  CHECK(!c.nope_layer(5));
  CHECK(c.layer_rope_theta[5] == 10000.0);
}

TEST_CASE("granite_hybrid fixtures: every layer's maps and the logits equal transformers', F32, F16 and BF16 sharded") {
  for (const char* name : fixtures) {
    CAPTURE(name);
    const ModelConfig c = model::open(attnscope::test::model_fixture(name))->config;
    REQUIRE(int(fixture_ids(name).size()) > 2 * 8);  // longer than two of the reference's SSD chunks (mamba_chunk_size 8)
    // Signed (C·B of either sign) and lower triangular, rows not probabilities.
    const int mamba_layers = attnscope::test::check_layers_against_reference(name, "Mamba-2", c.mamba.heads, [](const Mat& m0, int) {
      CHECK(m0.maxCoeff() > 0);
      CHECK(m0.triangularView<Eigen::StrictlyUpper>().toDenseMatrix().cwiseAbs().maxCoeff() == 0.0f);
    });
    CHECK(mamba_layers == 3);
    CHECK(c.layers - mamba_layers == 1);
  }
}

TEST_CASE("granite_hybrid fixtures: what they exercise (nope with experts; rope, groups and the shared MLP alone)") {
  const auto f32 = model::open(attnscope::test::model_fixture("granite_hybrid_f32"));
  CHECK(f32->config.moe.experts == 4);
  CHECK(f32->config.nope_layer(1));
  CHECK(f32->config.mamba.groups == 1);
  const auto bf16 = model::open(attnscope::test::model_fixture("granite_hybrid_bf16_sharded"));
  CHECK(bf16->config.moe.experts == 0);
  CHECK(bf16->config.ffn_dim == 12);  // shared_intermediate_size: the shared MLP is the layer's MLP
  CHECK(!bf16->config.nope_layer(2));
  CHECK(bf16->config.mamba.groups == 2);
}

TEST_CASE("granite_hybrid: a Mamba layer's detail — M·x + D·x is the SSD's output, both as transformers computes them") {
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
      REQUIRE(d.probs.size() == size_t(c.mamba.heads));
      const ReferenceTensor v = fixture_reference(name, "linear." + std::to_string(l) + ".v");
      const ReferenceTensor core = fixture_reference(name, "linear." + std::to_string(l) + ".core");
      const Vec& D = model->weights->layers[size_t(l)].mamba.d_skip;
      for (int h = 0; h < c.mamba.heads; ++h) {
        CAPTURE(h);
        const Mat v_ref = ref_slice(v, h), core_ref = ref_slice(core, h);
        check_close(d.v[size_t(h)], v_ref, 1e-5 * std::max(1.0f, v_ref.cwiseAbs().maxCoeff()), "x after the convolution");
        check_close(d.head_out[size_t(h)], core_ref, 1e-5 * std::max(1.0f, core_ref.cwiseAbs().maxCoeff()),
                    "the SSD's output with the D skip");
        // the drawn matrix applied to x, plus the skip, is the recurrence's output
        check_close(Mat(d.probs[size_t(h)] * d.v[size_t(h)] + D[h] * d.v[size_t(h)]), d.head_out[size_t(h)],
                    1e-5 * std::max(1.0f, core_ref.cwiseAbs().maxCoeff()), "M·x + D·x");
        check_close(d.probs[size_t(h)], Mat(r.linear_map(l, h)), 0, "the detail's M is the stack's");
        CHECK(d.beta.size() == 0);               // no write strength β: Mamba-2 writes with its step Δ
        CHECK(d.step.row(h).minCoeff() > 0);     // Δ > 0 (softplus)
        CHECK(d.decay.row(h).maxCoeff() < 0);    // Δ·A < 0: a decay below 1
      }
    }
  }
}

TEST_CASE("granite_hybrid: the plain-loop reference pass equals the fast one") {
  for (const char* name : fixtures) {
    CAPTURE(name);
    ForwardOptions o;
    o.detail_layer = 0;  // a Mamba layer: the SSD's output too
    attnscope::test::check_reference_pass_equals_fast(name, o);
  }
}

TEST_CASE("granite_hybrid: malformed checkpoints are refused naming the file, the tensor or key and what is valid") {
  SUBCASE("a missing conv weight") {
    const fs::path dir = copy_fixture("granite_hybrid_f32", "granite_hybrid_no_conv");
    rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {  // renamed: the data area still tiles
      h["model.layers.2.mamba.conv.weight"] = h["model.layers.2.mamba.conv1d.weight"];
      h.erase("model.layers.2.mamba.conv1d.weight");
    });
    CHECK(contains(error_of([&] { (void)model::open(dir); }), "missing tensor 'model.layers.2.mamba.conv1d.weight'"));
  }
  SUBCASE("a missing conv bias when mamba_conv_bias is true") {
    const fs::path dir = copy_fixture("granite_hybrid_f32", "granite_hybrid_no_conv_bias");
    rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
      h["model.layers.0.mamba.conv1d.b"] = h["model.layers.0.mamba.conv1d.bias"];
      h.erase("model.layers.0.mamba.conv1d.bias");
    });
    CHECK(contains(error_of([&] { (void)model::open(dir); }), "missing tensor 'model.layers.0.mamba.conv1d.bias'"));
  }
  SUBCASE("an A_log of the wrong length (a head count the tensors do not have)") {
    const fs::path dir = copy_fixture("granite_hybrid_f32", "granite_hybrid_heads");
    edit_config(dir, [](nlohmann::json& j) {
      j["mamba_n_heads"] = 8;  // 8 heads of 4 values: the same width, so in_proj's rows change by the dt rows
      j["mamba_d_head"] = 4;
    });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, "model.layers.0.mamba.in_proj.weight"));
    CHECK(contains(e, "mamba_n_heads 8"));
  }
  SUBCASE("an A_log tensor of the wrong length") {
    const fs::path dir = copy_fixture("granite_hybrid_f32", "granite_hybrid_alog");
    rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
      // the two tensors trade places (the data area still tiles): A_log now holds norm.weight's 32 values
      std::swap(h["model.layers.0.mamba.A_log"], h["model.layers.0.mamba.norm.weight"]);
    });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, "model.layers.0.mamba.A_log"));
    CHECK(contains(e, "[32]"));
    CHECK(contains(e, "[4]"));
  }
  SUBCASE("a state size the tensors do not have") {
    const fs::path dir = copy_fixture("granite_hybrid_f32", "granite_hybrid_state");
    edit_config(dir, [](nlohmann::json& j) { j["mamba_d_state"] = 5; });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, "model.layers.0.mamba.in_proj.weight"));
    CHECK(contains(e, "mamba_d_state"));
  }
  SUBCASE("a layer_types list of the wrong length") {
    const fs::path dir = copy_fixture("granite_hybrid_bf16_sharded", "granite_hybrid_types");
    edit_config(dir, [](nlohmann::json& j) { j["layer_types"] = {"mamba", "attention"}; });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, (dir / "config.json").string()));
    CHECK(contains(e, "\"layer_types\" must be a list of 4 entries"));
  }
  SUBCASE("layer_types that put attention where the files hold a Mamba layer") {
    const fs::path dir = copy_fixture("granite_hybrid_f32", "granite_hybrid_swapped");
    edit_config(dir, [](nlohmann::json& j) { j["layer_types"] = {"attention", "mamba", "mamba", "mamba"}; });
    CHECK(contains(error_of([&] { (void)model::open(dir); }), "model.layers.0.self_attn.q_proj.weight"));
  }
  SUBCASE("an expert count the files do not hold") {
    const fs::path dir = copy_fixture("granite_hybrid_f32", "granite_hybrid_experts");
    edit_config(dir, [](nlohmann::json& j) { j["num_local_experts"] = 3; });
    const std::string e = error_of([&] { (void)model::open(dir); });
    CHECK(contains(e, "\"num_local_experts\" = 3"));
    CHECK(contains(e, "valid: \"num_local_experts\": 4"));
  }
}

TEST_CASE("granite_hybrid: a layer as the views draw it — a Mamba-2 layer signed, an attention layer probabilities") {
  const auto model = model::open(attnscope::test::model_fixture("granite_hybrid_f32"));
  const ModelConfig& c = model->config;
  const std::vector<int32_t> ids = fixture_ids("granite_hybrid_f32");
  std::vector<std::string> labels;
  for (int32_t id : ids) labels.push_back(std::to_string(id));
  for (int layer : {0, 1}) {
    CAPTURE(layer);
    ForwardOptions options;
    options.detail_layer = layer;
    const ForwardResult r = forward(*model, ids, options);
    const Analysis a = layer_analysis(*model, r, labels);
    const AttentionAnalysis& att = *a.attention;
    ExportRequest request;
    request.what = ExportWhat::heads;
    if (c.is_linear_layer(layer)) {
      CHECK(signed_maps(att));
      CHECK(std::string(map_value_word(att)) == "Mamba-2 weight");
      REQUIRE(int(att.result.probs.size()) == c.mamba.heads);
      for (int h = 0; h < c.mamba.heads; ++h) CHECK(att.result.probs[size_t(h)] == Mat(r.linear_map(layer, h)));
      const FigureSpec f = export_figure(a, request);
      REQUIRE(f.colorbars.size() == 1);
      CHECK(f.colorbars[0].colormap == Colormap::diverging);
      CHECK(f.colorbars[0].range.lo == -f.colorbars[0].range.hi);
      CHECK(f.colorbars[0].title == "Mamba-2 weight");
      const std::string e = error_of([&] { (void)layer_positions(c, layer, int(ids.size())); });
      CHECK(contains(e, "layer 0 is a Mamba-2 layer"));
    } else {
      CHECK_FALSE(signed_maps(att));
      CHECK(std::string(map_value_word(att)) == "probability");
      REQUIRE(int(att.result.probs.size()) == c.heads);
      for (int h = 0; h < c.heads; ++h) CHECK(att.result.probs[size_t(h)] == Mat(r.attention(layer, h)));
      CHECK(export_figure(a, request).colorbars[0].colormap == Colormap::viridis);
    }
  }
}

TEST_CASE("granite_hybrid: a Mamba-2 layer's shape trace — each step's shape is its tensor's, the parameters the file's") {
  // What the Shapes view and compute's trace.json show for a Mamba layer: in_proj's three parts, the short
  // convolution over x, B and C, B and C per group, the state [H, P, N]; the parameters counted from the formulas
  // equal the layer's tensors in the checkpoint, the state is S and the convolution's last K − 1 inputs.
  const fs::path dir = attnscope::test::model_fixture("granite_hybrid_f32");
  const auto model = model::open(dir);
  const ModelConfig& c = model->config;
  const Mamba2Config& mc = c.mamba;
  const std::vector<int32_t> ids = fixture_ids("granite_hybrid_f32");
  const int T = int(ids.size());
  ForwardOptions options;
  options.detail_layer = 0;
  const ForwardResult r = forward(*model, ids, options);
  const Analysis a = layer_analysis(*model, r, std::vector<std::string>(ids.size(), "x"));
  const AttentionAnalysis& att = *a.attention;
  const Trace& t = att.trace;
  auto shape_of = [&](const std::string& key) {
    for (const TraceStep& s : t.steps)
      if (s.key == key) return s.shape;
    FAIL("no step " << key);
    return std::vector<int64_t>{};  // not reached: FAIL ends the case
  };
  CHECK(shape_of("input") == std::vector<int64_t>{T, c.d_model});
  CHECK(shape_of("project_z_xbc_dt") == std::vector<int64_t>{T, mc.inner() + mc.conv_dim() + mc.heads});
  CHECK(shape_of("short_conv") == std::vector<int64_t>{T, mc.conv_dim()});
  CHECK(shape_of("split_heads_x") == std::vector<int64_t>{mc.heads, att.result.v[0].rows(), att.result.v[0].cols()});
  CHECK(shape_of("split_groups_bc") == std::vector<int64_t>{mc.groups, T, att.result.k[0].cols()});
  CHECK(shape_of("state") == std::vector<int64_t>{mc.heads, mc.head_dim, mc.state});
  CHECK(shape_of("implicit_matrix") == std::vector<int64_t>{int64_t(att.result.probs.size()), T, T});
  CHECK(shape_of("weighted_sum_linear") == std::vector<int64_t>{mc.heads, T, att.result.head_out[0].cols()});
  CHECK(shape_of("concat_heads") == std::vector<int64_t>{T, att.result.concat.cols()});
  CHECK(shape_of("output") == std::vector<int64_t>{att.result.output.rows(), att.result.output.cols()});
  const SafetensorsFile file(dir / "model.safetensors");
  int64_t stored = 0;
  for (const SafetensorsTensor& tensor : file.header().tensors)
    if (tensor.name.rfind("model.layers.0.mamba.", 0) == 0) stored += tensor.count();
  CHECK(stored > 0);
  CHECK(t.params.total() == stored);
  CHECK(t.state_bytes_fp32 == 4 * (int64_t(mc.heads) * mc.head_dim * mc.state + int64_t(mc.conv_kernel - 1) * mc.conv_dim()));
  CHECK(t.kv_bytes_per_token_fp32 == 0);
  // Δ at each key and the decay factor a_t = exp(Δ_t·A) in (0, 1) at each query, as the Heads view's tooltip says
  REQUIRE(att.linear_layer.step.rows() == mc.heads);
  CHECK(att.linear_layer.step.minCoeff() > 0);
  CHECK(att.linear_layer.decay.minCoeff() > 0);
  CHECK(att.linear_layer.decay.maxCoeff() < 1);
  CHECK(att.linear_layer.beta.size() == 0);
}
