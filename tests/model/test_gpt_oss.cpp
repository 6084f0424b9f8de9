// Tests of gpt-oss (transformers 5.x models/gpt_oss, integrations/mxfp4.py): the published config read as
// transformers reads it, the MXFP4 widening exact, both fixture layouts (MXFP4 blocks/scales as
// published, and the dequantised BF16 tensors) equal to their PyTorch reference on every layer's
// attentions, sink shares and the logits, the sink column every head of a layer shows, the memory check
// at the experts' 4.25 bits, and every malformed tensor or config refused with the file, the key and
// what is valid.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
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
#include "attnscope/model/mxfp4.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::copy_fixture;
using attnscope::test::error_of;
using attnscope::test::fixture_ids;
using attnscope::test::fixture_reference;
using attnscope::test::model_fixture;
using attnscope::test::ReferenceTensor;
using attnscope::test::rewrite_header;
namespace fs = std::filesystem;

using attnscope::test::config_refusal;
using attnscope::test::open_error;
using attnscope::test::edit_config;
namespace {

const char* const mxfp4_fixture = "gpt_oss_mxfp4_bf16";
const char* const dequantized_fixture = "gpt_oss_dequantized_bf16";

nlohmann::json gpt_oss_20b() {
  return nlohmann::json::parse(read_file(fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/real-configs/openai/gpt-oss-20b.json", 1 << 20));
}

// The shard of a fixture copy that holds `tensor`.
fs::path shard_of(const fs::path& dir, const std::string& tensor) {
  const auto index = nlohmann::json::parse(read_file(dir / "model.safetensors.index.json", 1 << 20));
  return dir / index["weight_map"][tensor].get<std::string>();
}

}  // namespace

TEST_CASE("gpt-oss config: gpt-oss-20b reads as 24 layers alternating a 128-token window, YaRN, sinks, 32 MXFP4 experts top-4") {
  const ModelConfig c = parse_model_config(gpt_oss_20b().dump(), "c");
  CHECK(c.model_type == "gpt_oss");
  CHECK(c.layers == 24);
  CHECK(c.heads == 64);
  CHECK(c.kv_heads == 8);
  CHECK(c.head_dim == 64);
  CHECK(c.ffn_dim == 2880);
  CHECK(c.attention_sinks);
  CHECK(c.qkv_bias);
  CHECK(c.o_bias);
  CHECK(!c.tied_embeddings);
  CHECK(c.norm_eps == 1e-5);  // GptOssConfig's default: the file has no rms_norm_eps
  for (int l = 0; l < c.layers; ++l) CHECK(c.layer_window[size_t(l)] == (l % 2 == 0 ? 128 : 0));
  CHECK(c.rope_theta == 150000);
  CHECK(c.rope_scaling.type == RopeType::yarn);
  CHECK(c.rope_scaling.factor == 32);
  CHECK(c.rope_scaling.original_max == 4096);
  CHECK(!c.rope_scaling.truncate);
  CHECK(c.rope_scaling.attention_factor == doctest::Approx(0.1 * std::log(32.0) + 1));
  CHECK(c.oss.experts == 32);
  CHECK(c.oss.top_k == 4);
  CHECK(c.oss.limit == 7.0);
  CHECK(c.oss.alpha == 1.702);
  CHECK(c.oss.mxfp4);
  // 20.9 billion parameters (the model card: 21B, 3.6B active)
  CHECK(c.parameter_count() > 20'800'000'000);
  CHECK(c.parameter_count() < 21'000'000'000);
  // Without rope_scaling GptOssConfig makes the same YaRN; without layer_types it alternates, sliding first.
  nlohmann::json j = gpt_oss_20b();
  j.erase("rope_scaling");
  j.erase("layer_types");
  const ModelConfig d = parse_model_config(j.dump(), "c");
  CHECK(d.rope_scaling.type == RopeType::yarn);
  CHECK(d.rope_scaling.factor == 32);
  CHECK(!d.rope_scaling.truncate);
  CHECK(d.layer_window == c.layer_window);
  // head_dim: GptOssConfig's 64 when absent, hidden_size / heads when null.
  j = gpt_oss_20b();
  j["hidden_size"] = 4096;
  j.erase("head_dim");
  CHECK(parse_model_config(j.dump(), "c").head_dim == 64);
  j["head_dim"] = nullptr;
  CHECK(parse_model_config(j.dump(), "c").head_dim == 64);  // 4096 / 64 heads
  j["num_attention_heads"] = 32;
  CHECK(parse_model_config(j.dump(), "c").head_dim == 128);
  // Without quantization_config the experts are the dequantised tensors.
  j = gpt_oss_20b();
  j.erase("quantization_config");
  CHECK(!parse_model_config(j.dump(), "c").oss.mxfp4);
}

TEST_CASE("gpt-oss config: what the modeling file does not do is refused by name") {
  auto with = [](const char* key, nlohmann::json value) {
    nlohmann::json j = gpt_oss_20b();
    j[key] = std::move(value);
    return config_refusal(j);
  };
  CHECK(contains(with("num_experts_per_tok", 33), "\"num_experts_per_tok\" = 33 is more than the 32 experts (\"num_local_experts\")"));
  CHECK(contains(with("quantization_config", {{"quant_method", "fp8"}}),
                 "\"quantization_config\" has quant_method \"fp8\", which attnscope does not read for gpt_oss (supported: \"mxfp4\""));
  CHECK(contains(with("hidden_act", "gelu"), "\"hidden_act\" = \"gelu\" is not supported for gpt_oss"));
  CHECK(contains(with("layer_types", {"sliding_attention"}), "\"layer_types\" lists 1 layers but \"num_hidden_layers\" is 24"));
  CHECK(contains(with("rope_scaling", {{"rope_type", "su"}, {"factor", 2}}), "has rope type \"su\", which attnscope does not implement"));
  nlohmann::json j = gpt_oss_20b();
  j.erase("num_local_experts");
  CHECK(contains(config_refusal(j), "config.json has no \"num_local_experts\""));
}

TEST_CASE("mxfp4: widening is exact: every byte, every exponent, as fp4 · 2^(scale − 127)") {
  // Two rows of 256 values each: row r's block g holds the bytes 16g … 16g + 15 (all 256 bytes once),
  // its exponents 0, 1, 100, 127, 128, 200, 251, 252 (row 0) and their mirror (row 1).
  const int64_t rows = 2, cols = 256;
  std::vector<uint8_t> blocks(size_t(rows * cols / 2)), scales(size_t(rows * cols / 32));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < cols / 2; ++i) blocks[size_t(r * cols / 2 + i)] = uint8_t(r == 0 ? i : 255 - i);
  const uint8_t exps[8] = {0, 1, 100, 127, 128, 200, 251, 252};
  for (int g = 0; g < 8; ++g) scales[size_t(g)] = exps[g], scales[size_t(8 + g)] = exps[7 - g];
  const Mxfp4Matrix m(blocks.data(), scales.data(), rows, cols, nullptr);
  std::vector<float> wide(size_t(rows * cols));
  m.widen_rows(0, rows, wide.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const uint8_t byte = blocks[size_t((r * cols + c) / 2)];
      const int code = c % 2 ? byte >> 4 : byte & 0xF;
      const double expected = double(fp4_e2m1_values[code]) * std::pow(2.0, int(scales[size_t(r * 8 + c / 32)]) - 127);
      CAPTURE(r);
      CAPTURE(c);
      CHECK(double(m(r, c)) == expected);
      CHECK(double(wide[size_t(r * cols + c)]) == expected);
      CHECK(std::signbit(wide[size_t(r * cols + c)]) == std::signbit(fp4_e2m1_values[code]));
    }
  // The product equals the plain sum over the widened values.
  std::vector<float> x(size_t(3 * cols)), out(size_t(3 * rows));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i))) * 1e-30f;  // keeps the 2^125 blocks finite
  const float bias[2] = {0.5f, -0.25f};
  mxfp4_linear(out.data(), x.data(), m, bias, 3);
  for (int i = 0; i < 3; ++i)
    for (int64_t r = 0; r < rows; ++r) {
      double s = bias[r];
      for (int64_t c = 0; c < cols; ++c) s += double(x[size_t(i * cols + c)]) * double(m(r, c));
      CHECK(double(out[size_t(i * rows + r)]) == doctest::Approx(s).epsilon(1e-5));
    }
}

TEST_CASE("gpt-oss fixtures: every layer's attentions, sink shares and the logits equal transformers', MXFP4 and dequantised") {
  for (const char* name : {mxfp4_fixture, dequantized_fixture}) {
    CAPTURE(name);
    const auto model = model::open(model_fixture(name));
    const ModelConfig& c = model->config;
    REQUIRE(c.oss.active());
    CHECK(c.oss.mxfp4 == (std::string(name) == mxfp4_fixture));
    // The MXFP4 experts stay 4-bit views of the mapped file; the dequantised ones are packed matrices.
    const GptOssMoeWeights& e = model->weights->layers[0].oss;
    CHECK(e.gate_up[0].mxfp4.empty() == !c.oss.mxfp4);
    CHECK(model->source_dtypes == (c.oss.mxfp4 ? "BF16, MXFP4 (U8)" : "BF16"));
    const std::vector<int32_t> ids = fixture_ids(name);
    const int T = int(ids.size()), L = c.layers, H = c.heads;
    REQUIRE(T > c.sliding_window);  // the window masks keys
    const ReferenceTensor attentions = fixture_reference(name, "attentions");
    const ReferenceTensor logits = fixture_reference(name, "logits");
    const ReferenceTensor share = fixture_reference(name, "sink_share");
    REQUIRE(attentions.shape == std::vector<int64_t>{L, H, T, T});
    REQUIRE(share.shape == std::vector<int64_t>{L, H, T});
    for (const bool fast : {true, false}) {
      CAPTURE(fast);
      for (int detail = 0; detail < L; ++detail) {
        ForwardOptions o;
        o.detail_layer = detail;
        const ForwardResult r = fast ? forward(*model, ids, o) : forward_reference(*model, ids, o);
        if (detail == 0) {
          double worst = 0, scale = 1;
          for (size_t i = 0; i < attentions.values.size(); ++i)
            worst = std::max(worst, std::abs(double(r.attentions[i]) - double(attentions.values[i])));
          CHECK(worst <= 1e-5);
          worst = 0;
          for (size_t i = 0; i < logits.values.size(); ++i) {
            scale = std::max(scale, std::abs(double(logits.values[i])));
            worst = std::max(worst, std::abs(double(r.logits.data()[i]) - double(logits.values[i])));
          }
          CHECK(worst <= 1e-4 * scale);
        }
        // The detail layer's sink share: the reference's, and exactly what each row misses of 1.
        REQUIRE(r.detail.has_value());
        REQUIRE(r.detail->sink_share.rows() == H);
        REQUIRE(r.detail->sink_share.cols() == T);
        for (int h = 0; h < H; ++h)
          for (int i = 0; i < T; ++i) {
            const float s = r.detail->sink_share(h, i);
            CHECK(std::abs(s - share.values[size_t((int64_t(detail) * H + h) * T + i)]) <= 1e-5);
            const double row = r.attention(detail, h).row(i).cast<double>().sum();
            CHECK(row < 1.0);
            CHECK(std::abs(row + s - 1.0) <= 1e-5);
            // the window: keys at or before i − W get nothing
            for (int j = 0; j <= i - std::max(1, c.layer_window[size_t(detail)]) && c.layer_window[size_t(detail)] > 0; ++j)
              CHECK(r.attention(detail, h)(i, j) == 0.0f);
          }
      }
    }
  }
}

TEST_CASE("gpt-oss: every head of a layer shows its sink column (the synthetic model's sink logits and shares)") {
  const auto model = model::open(model_fixture(mxfp4_fixture));
  const std::vector<int32_t> ids = fixture_ids(mxfp4_fixture);
  for (int layer = 0; layer < model->config.layers; ++layer) {
    ForwardOptions o;
    o.detail_layer = layer;
    const ForwardResult r = forward(*model, ids, o);
    std::vector<std::string> labels;
    for (int32_t id : ids) labels.push_back(std::to_string(id));
    const Analysis a = layer_analysis(*model, r, labels);
    const AttentionAnalysis& att = *a.attention;
    const Vec& sinks = model->weights->layers[size_t(layer)].sinks;
    REQUIRE(att.options.sink_logits.size() == size_t(model->config.heads));
    REQUIRE(att.result.sink_share.rows() == model->config.heads);
    for (int h = 0; h < model->config.heads; ++h) {
      CHECK(att.options.sink_logits[size_t(h)] == double(sinks[h]));
      CHECK(att.result.sink_share.row(h).maxCoeff() > 0.0f);
      for (int i = 0; i < r.tokens; ++i)
        CHECK(att.result.sink_share(h, i) == doctest::Approx(1.0 - att.result.probs[size_t(h)].row(i).sum()).epsilon(1e-5));
    }
    CHECK(att.window == model->config.layer_window[size_t(layer)]);
    // The exported heads figure: every head's first column is "sink", its share of each query's row.
    const FigureSpec f = export_figure(a, ExportRequest{});
    const std::string caption = export_caption(a, ExportRequest{});
    CHECK(contains(caption, "sink logits"));
    CHECK(contains(caption, "window 8") == (layer == 0));  // layer 0 slides, layer 1 is full
    REQUIRE(f.panels.size() == size_t(model->config.heads));
    const int T = r.tokens;
    for (int h = 0; h < model->config.heads; ++h) {
      const PanelSpec& p = f.panels[size_t(h)];
      REQUIRE(p.cols == T + 1);
      CHECK(p.col_labels[0] == "sink");
      for (int i = 0; i < T; ++i) CHECK(p.values[size_t(i * (T + 1))] == att.result.sink_share(h, i));
    }
  }
}

TEST_CASE("gpt-oss: the memory check counts MXFP4 experts at 4.25 bits: gpt-oss-20b's shape fits 16 GB, not 12") {
  const ModelConfig c = parse_model_config(gpt_oss_20b().dump(), "c");
  const double C = c.d_model, F = c.ffn_dim, E = c.oss.experts, V = c.vocab, L = c.layers;
  const double Q = double(c.heads) * c.head_dim, KV = double(c.kv_heads) * c.head_dim;
  // As the published files hold it: BF16 matrices read in place at 2 bytes, vectors as float32 copies,
  // the experts' blocks (half a byte a value) and scales (a byte per 32 values).
  const double resident = 2 * V * C * 2 + L * (2 * (2 * Q * C + 2 * KV * C + E * C) +
                                               4 * (Q + 2 * KV + C + c.heads + 2 * C + E + E * 2 * F + E * C));
  const double routed = L * E * (2 * F * C + C * F) * (0.5 + 1.0 / 32);
  CHECK((resident + routed) / 1e9 == doctest::Approx(13.8).epsilon(0.01));  // the published 13.8 GB
  const double gib = 1024.0 * 1024 * 1024;
  CHECK(weights_fit({resident, routed}, 16 * gib));
  CHECK(weights_fit({resident, routed}, 15.5 * gib));  // what a 16 GB laptop reports
  CHECK(!weights_fit({resident, routed}, 12 * gib));
  // The same bytes all counted as resident (the rule of the dense families) would not fit 16 GB.
  CHECK(!weights_fit({resident + routed, 0}, 16 * gib));
}

TEST_CASE("gpt-oss: malformed MXFP4 blocks or scales, a missing sink, a wrong expert count are refused by name") {
  const std::string blocks = "model.layers.1.mlp.experts.gate_up_proj_blocks";
  const std::string scales = "model.layers.1.mlp.experts.down_proj_scales";
  SUBCASE("blocks of the wrong shape") {
    const fs::path dir = copy_fixture(mxfp4_fixture, "oss_blocks_shape");
    const fs::path shard = shard_of(dir, blocks);
    rewrite_header(shard, [&](nlohmann::json& h) { h[blocks]["shape"] = {4, 64, 2, 8}; });  // the same bytes
    const std::string e = open_error(dir);
    CHECK(contains(e, shard.string()));
    CHECK(contains(e, "tensor '" + blocks + "' has shape [4, 64, 2, 8], but config.json implies [4, 64, 1, 16]"));
  }
  SUBCASE("scales of the wrong dtype") {
    const fs::path dir = copy_fixture(mxfp4_fixture, "oss_scales_dtype");
    const fs::path shard = shard_of(dir, scales);
    rewrite_header(shard, [&](nlohmann::json& h) { h[scales]["dtype"] = "I8"; });
    const std::string e = open_error(dir);
    CHECK(contains(e, shard.string()));
    CHECK(contains(e, "tensor '" + scales + "' has dtype I8, but MXFP4 scales are U8"));
  }
  SUBCASE("an exponent above 252") {
    const fs::path dir = copy_fixture(mxfp4_fixture, "oss_scale_overflow");
    const fs::path shard = shard_of(dir, scales);
    std::string bytes = read_file(shard, 1 << 26);
    const SafetensorsHeader h = parse_safetensors_header(bytes, bytes.size(), shard.string());
    const SafetensorsTensor* t = h.find(scales);
    REQUIRE(t != nullptr);
    bytes[size_t(h.data_start + t->begin + 5)] = char(253);
    write_file_atomic(shard, bytes);
    const std::string e = open_error(dir);
    CHECK(contains(e, shard.string()));
    CHECK(contains(e, "tensor '" + scales + "' has the exponent 253 at expert 0, row 5, block 0; valid exponents are 0 to 252"));
  }
  SUBCASE("an expert count that disagrees with the tensors") {
    const fs::path dir = copy_fixture(mxfp4_fixture, "oss_experts");
    edit_config(dir, [](nlohmann::json& j) { j["num_local_experts"] = 5; });
    const std::string e = open_error(dir);
    CHECK(contains(e, "tensor 'model.layers.0.mlp.router.weight' has shape [4, 32], but config.json implies [5, 32]"));
    CHECK(contains(e, "one per expert (num_local_experts 5)"));
  }
  SUBCASE("a missing sink") {
    const fs::path dir = copy_fixture(mxfp4_fixture, "oss_no_sink");
    const std::string sink = "model.layers.0.self_attn.sinks";
    const fs::path shard = shard_of(dir, sink);
    rewrite_header(shard, [&](nlohmann::json& h) { h["model.layers.0.self_attn.sinkz"] = h[sink]; h.erase(sink); });
    auto index = nlohmann::json::parse(read_file(dir / "model.safetensors.index.json", 1 << 20));
    index["weight_map"]["model.layers.0.self_attn.sinkz"] = index["weight_map"][sink];
    index["weight_map"].erase(sink);
    write_file_atomic(dir / "model.safetensors.index.json", index.dump());
    CHECK(contains(open_error(dir), "'" + sink + "'"));
  }
  SUBCASE("the dequantised layout under an MXFP4 config, and MXFP4 rows not a multiple of 32") {
    const fs::path dir = copy_fixture(dequantized_fixture, "oss_layout");
    edit_config(dir, [](nlohmann::json& j) { j["quantization_config"] = {{"quant_method", "mxfp4"}}; });
    CHECK(contains(open_error(dir), "'model.layers.0.mlp.experts.gate_up_proj_blocks'"));
    // Rows of 48 values cannot be blocks of 32.
    SafetensorsTensor b, sc;
    b.name = "w_blocks", b.dtype = TensorDtype::u8, b.shape = {1, 2, 1, 16};
    sc.name = "w_scales", sc.dtype = TensorDtype::u8, sc.shape = {1, 2, 1};
    const std::vector<uint8_t> bytes(64, 0);
    CHECK(contains(error_of([&] { (void)mxfp4_experts("'f.safetensors'", "w", b, bytes.data(), sc, bytes.data(), 1, 2, 48, nullptr); }),
                   "'f.safetensors': 'w_blocks' holds MXFP4 values in blocks of 32, but its rows are 48 values long"));
    CHECK(mxfp4_experts("'f.safetensors'", "w", b, bytes.data(), sc, bytes.data(), 1, 2, 32, nullptr).size() == 1);
  }
}
