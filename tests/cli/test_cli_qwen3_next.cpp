// Qwen3-Next on the command line (issue 39 item 3): `compute --checkpoint` writes every layer as what it is —
// the softmax layers' probabilities in attentions.npy, the Gated DeltaNet layers' signed matrices M in
// linear_maps.npy, model.json's "layer_maps" naming each layer's type, heads and file — equal to the engine's
// forward pass and to the PyTorch reference of the fixtures; `--layer N` of a linear layer writes matrix.npy as
// `compute --kind gated-deltanet` does; `export` draws a linear layer on the diverging colormap (the Heads
// figure and the model view), refuses --scores there by name, and the compute folder opens again as
// attentions with its linear layers.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "attnscope/figure/colormap.h"
#include "attnscope/figure/export.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/image.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/analysis/model_layer.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "cli/hybrid_cli_checks.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("cli qwen3_next: compute --checkpoint writes each layer's maps as the forward pass gives them") {
  for (const std::string name : {"qwen3_next_f32", "qwen3_next_bf16_sharded"}) {
    CAPTURE(name);
    const int linear_heads = model::open(model_fixture(name))->config.linear.value_heads;
    CHECK(check_compute_writes_every_layer(name, "Gated DeltaNet", linear_heads) >= 2);
  }
}

TEST_CASE("cli qwen3_next: compute --layer N of a Gated DeltaNet layer writes its matrices, not probabilities") {
  const std::string name = "qwen3_next_f32";
  const int linear_heads = model::open(model_fixture(name))->config.linear.value_heads;
  // layer 3 is softmax attention
  check_compute_layer_writes_matrices(name, 0, 3, linear_heads,
                                      {"beta.npy", "decay.npy", "head_out.npy", "q.npy", "k.npy", "v.npy", "output.npy"});
}

TEST_CASE("cli qwen3_next: compute --layer N writes that layer's trace.json, a Gated DeltaNet layer's and a softmax layer's") {
  // The Shapes view's trace of the layer: every step's shape as the engine traces it, its settings from the
  // file's config and its parameters equal to the layer's tensors in the file.
  const std::string name = "qwen3_next_f32";
  const fs::path dir = model_fixture(name);
  const auto m = model::open(dir);
  const model::ModelConfig& c = m->config;
  const std::vector<int32_t> ids = fixture_ids(name);
  const SafetensorsFile file(dir / "model.safetensors");
  auto stored = [&](const std::string& prefix) {
    int64_t n = 0;
    for (const SafetensorsTensor& t : file.header().tensors)
      if (t.name.rfind(prefix, 0) == 0) n += t.count();
    return n;
  };
  for (const int layer : {0, 3}) {
    CAPTURE(layer);
    const bool linear = c.is_linear_layer(layer);
    const fs::path out = fresh_dir("cli_qwen3_next_trace" + std::to_string(layer));
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const CliRun r = run_cli("compute --checkpoint " + quoted(dir) + " --ids " + ids_arg(ids) + " --layer " +
                               std::to_string(layer) + " --language " + language + " --out " + quoted(out / language));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
    auto read_json = [](const fs::path& p) { return nlohmann::json::parse(read_file(p, 1 << 24)); };
    const nlohmann::json en = read_json(out / "en" / "trace.json"), zh = read_json(out / "zh" / "trace.json");
    const nlohmann::json& settings = en.at("settings");
    CHECK(settings.at("source").get<std::string>().find("layer " + std::to_string(layer)) != std::string::npos);
    CHECK(settings.at("tokens") == ids.size());
    CHECK(settings.at("d_model") == c.d_model);
    model::ForwardOptions options;
    options.detail_layer = layer;
    const model::ForwardResult f = model::forward(*m, ids, options);
    const Trace t = layer_analysis(*m, f, std::vector<std::string>(ids.size(), "x")).attention->trace;
    REQUIRE(en.at("steps").size() == t.steps.size());
    REQUIRE(zh.at("steps").size() == t.steps.size());
    bool translated = false;
    for (size_t i = 0; i < t.steps.size(); ++i) {
      CHECK(en["steps"][i].at("shape").get<std::vector<int64_t>>() == t.steps[i].shape);
      CHECK(zh["steps"][i].at("shape").get<std::vector<int64_t>>() == t.steps[i].shape);
      translated |= zh["steps"][i].at("name") != en["steps"][i].at("name");
    }
    CHECK(translated);
    if (linear) {
      CHECK(settings.at("kind") == "gated-deltanet");
      CHECK(settings.at("heads") == c.linear.value_heads);
      CHECK(settings.at("groups") == c.linear.key_heads);
      CHECK(settings.at("head_dim") == c.linear.key_dim);
      CHECK(settings.at("v_head_dim") == c.linear.value_dim);
      CHECK(settings.at("conv_kernel") == c.linear.conv_kernel);
      CHECK(en.at("parameters").at("total") == stored("model.layers.0.linear_attn."));
      CHECK(en.at("kv_cache_bytes_per_token_per_layer").at("fp32") == 0);
      CHECK(en.at("state_bytes_per_layer").at("fp32").get<int64_t>() > 0);
    } else {
      CHECK(settings.at("heads") == c.heads);
      CHECK(settings.at("groups") == c.kv_heads);
      CHECK(settings.at("head_dim") == c.head_dim);
      // 2 · G · d_k floats a token, 4 bytes each
      CHECK(en.at("kv_cache_bytes_per_token_per_layer").at("fp32") == 2 * c.kv_heads * c.head_dim * 4);
      CHECK(en.at("state_bytes_per_layer").at("fp32") == 0);
    }
  }
}

TEST_CASE("cli qwen3_next: export draws a Gated DeltaNet layer on the diverging colormap, an attention layer as "
          "probabilities") {
  check_export_draws_linear_layers("qwen3_next_f32", "Gated DeltaNet", 0, 3,
                                   "3 Gated DeltaNet layers × 4 heads: M, signed (no softmax)");
}

TEST_CASE("cli qwen3_next: the model view figure colours each linear layer on the diverging scale, symmetric about 0") {
  const std::string name = "qwen3_next_bf16_sharded";
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  model::ForwardResult f = model::forward(*m, ids);
  const model::ModelConfig& c = m->config;
  model::AttentionStack s;
  s.layers = f.layers, s.heads = f.heads, s.kv_heads = f.kv_heads, s.tokens = f.tokens, s.causal = true;
  s.groups_from_config = true;
  s.source = name;
  s.attentions = f.attentions;
  for (const model::LayerMaps& lm : f.layer_maps) s.layer_kind.push_back(lm.signed_weights ? lm.kind : "");
  s.linear_maps = f.linear_maps;
  ExportRequest request;
  request.what = ExportWhat::model;
  const FigureSpec figure = model_view_figure(s, request);
  REQUIRE(figure.colorbars.size() == 2);
  CHECK(figure.colorbars[0].colormap == Colormap::viridis);
  CHECK(figure.colorbars[0].title == "probability");
  CHECK(figure.colorbars[1].colormap == Colormap::diverging);
  CHECK(figure.colorbars[1].title == "Gated DeltaNet weight");
  CHECK(figure.colorbars[1].range.lo == -figure.colorbars[1].range.hi);
  CHECK(figure.colorbars[1].range.hi > 0);
  REQUIRE(int(figure.panels.size()) == c.layers * s.most_heads());
  const int T = f.tokens;
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < s.most_heads(); ++h) {
      CAPTURE(l);
      CAPTURE(h);
      const PanelSpec& p = figure.panels[size_t(l * s.most_heads() + h)];
      CHECK(p.colorbar == (c.is_linear_layer(l) ? 1 : 0));
      CHECK(p.title == std::to_string(l) + "." + std::to_string(h));
      const Mat expected = c.is_linear_layer(l) ? Mat(f.linear_map(l, h)) : Mat(f.attention(l, h));
      for (int i = 0; i < T; ++i)
        for (int j = 0; j <= i; ++j) CHECK(p.values[size_t(i * T + j)] == expected(i, j));
      CHECK(std::isinf(p.values[size_t(1)]));  // query 0, key 1: masked
    }

  // A layer with fewer heads than the widest leaves blank places, drawn as nothing.
  model::AttentionStack fewer = s;
  const size_t cells = size_t(T) * size_t(T);
  for (int l = 0; l < s.layers; ++l)
    if (s.linear_layer(l)) fewer.linear_maps[size_t(l)].resize(2 * cells);
  CHECK(fewer.layer_heads(0) == 2);
  CHECK(fewer.most_heads() == c.heads);
  const FigureSpec narrow = model_view_figure(fewer, request);
  REQUIRE(int(narrow.panels.size()) == c.layers * c.heads);
  for (int l = 0; l < c.layers; ++l)
    for (int h = 0; h < c.heads; ++h)
      CHECK(narrow.panels[size_t(l * c.heads + h)].blank == (fewer.linear_layer(l) && h >= 2));
  // rendered: a blank place's square is the background, a drawn one's is not
  const FigureLayout layout = layout_figure(narrow, 1.0f, default_text_rasterizer());
  const Image image = render_figure(narrow, layout, default_text_rasterizer());
  for (size_t i = 0; i < narrow.panels.size(); ++i) {
    CAPTURE(i);
    CHECK((count_pixels_unlike(image, layout.panels[i].matrix, figure_background) == 0) == narrow.panels[i].blank);
  }
}
