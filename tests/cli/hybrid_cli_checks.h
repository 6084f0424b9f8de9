// Checks the command line owes every hybrid checkpoint family (a softmax layer every few layers, the others
// without a softmax: Qwen3-Next's Gated DeltaNet, Granite 4.0-H's Mamba-2), shared by test_cli_qwen3_next.cpp
// and test_cli_granite_hybrid.cpp. `kind` is the family's linear-layer word as files and figures say it
// ("Gated DeltaNet", "Mamba-2"); `linear_heads` its heads per linear layer.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

namespace attnscope::test {

inline double max_abs_diff(const float* a, const float* b, size_t n) {
  double d = 0;
  for (size_t i = 0; i < n; ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

// `compute --checkpoint` writes each layer as what it is: softmax layers' probabilities in attentions.npy, the
// linear layers' signed matrices M in linear_maps.npy, model.json's "layer_maps" naming type, heads and file —
// equal to the engine's forward and to the fixture's PyTorch reference; the folder opens again with its linear
// layers. Returns the number of linear layers written.
inline int check_compute_writes_every_layer(const std::string& name, const std::string& kind, int linear_heads) {
  namespace fs = std::filesystem;
  const fs::path out = fresh_dir("cli_hybrid_compute_" + name);
  const std::vector<int32_t> ids = fixture_ids(name);
  const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids) + " --out " + quoted(out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto m = model::open(model_fixture(name));
  const model::ModelConfig& c = m->config;
  const model::ForwardResult f = model::forward(*m, ids);
  const int T = int(ids.size());
  const size_t cells = size_t(T) * size_t(T);
  const nlohmann::json model_json = nlohmann::json::parse(read_file(out / "model.json", 1 << 20));
  const auto& layers = model_json.at("layer_maps");
  REQUIRE(int(layers.size()) == c.layers);
  const NpyArray att = read_npy(out / "attentions.npy", 4);
  REQUIRE(att.shape == std::vector<int64_t>{c.layers, c.heads, T, T});
  const NpyArray lin = read_npy(out / "linear_maps.npy", 4);
  int linear = 0;
  for (int l = 0; l < c.layers; ++l) {
    CAPTURE(l);
    const auto& e = layers[size_t(l)];
    CHECK(e.at("layer") == l);
    if (c.is_linear_layer(l)) {
      CHECK(e.at("type") == kind);
      CHECK(e.at("heads") == linear_heads);
      CHECK(e.at("file") == "linear_maps.npy");
      CHECK(e.at("values") == "signed matrices M");
      REQUIRE(e.at("linear_index") == linear);
      const float* written = lin.data.data() + size_t(linear) * size_t(linear_heads) * cells;
      CHECK(max_abs_diff(written, f.linear_maps[size_t(l)].data(), size_t(linear_heads) * cells) == 0.0);
      // and the PyTorch reference of the transformers code
      const ReferenceTensor ref = fixture_reference(name, "linear." + std::to_string(l) + ".maps");
      CHECK(max_abs_diff(written, ref.values.data(), ref.values.size()) <= 1e-5);
      // signed: not probabilities
      CHECK(*std::min_element(written, written + size_t(linear_heads) * cells) < 0.0f);
      ++linear;
    } else {
      CHECK(e.at("type") == "attention");
      CHECK(e.at("heads") == c.heads);
      CHECK(e.at("file") == "attentions.npy");
      const float* written = att.data.data() + size_t(l) * size_t(c.heads) * cells;
      CHECK(max_abs_diff(written, f.attentions.data() + size_t(l) * size_t(c.heads) * cells, size_t(c.heads) * cells) == 0.0);
      const ReferenceTensor ref = fixture_reference(name, "attention." + std::to_string(l));
      CHECK(max_abs_diff(written, ref.values.data(), ref.values.size()) <= 1e-5);
    }
  }
  CHECK(lin.shape == std::vector<int64_t>{linear, linear_heads, T, T});

  // The folder opens again as attentions computed elsewhere, its linear layers with their matrices.
  const model::AttentionStack s = model::open_attentions(out / "attentions.npy", out / "tokens.json", out / "model.json");
  for (int l = 0; l < c.layers; ++l) {
    CAPTURE(l);
    CHECK(s.linear_layer(l) == c.is_linear_layer(l));
    CHECK(s.layer_heads(l) == (c.is_linear_layer(l) ? linear_heads : c.heads));
    CHECK(Mat(s.map(l, 1)) == Mat(c.is_linear_layer(l) ? f.linear_map(l, 1) : f.attention(l, 1)));
  }
  return linear;
}

// `compute --layer N` of a linear layer writes matrix.npy ([heads, T, T], the forward's M) and the layer's
// `files`, never probabilities; `--layer soft` (a softmax layer) writes probabilities, not matrix.npy.
// Returns the folder of the linear layer's run for the family's own checks.
inline std::filesystem::path check_compute_layer_writes_matrices(const std::string& name, int linear_layer, int soft_layer,
                                                                 int linear_heads, std::initializer_list<const char*> files) {
  namespace fs = std::filesystem;
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  model::ForwardOptions options;
  options.detail_layer = linear_layer;
  const model::ForwardResult f = model::forward(*m, ids, options);
  REQUIRE(m->config.is_linear_layer(linear_layer));
  REQUIRE_FALSE(m->config.is_linear_layer(soft_layer));
  const fs::path out = fresh_dir("cli_hybrid_layer_" + name + "_" + std::to_string(linear_layer));
  const std::string base = "compute --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids);
  const CliRun r = run_cli(base + " --layer " + std::to_string(linear_layer) + " --out " + quoted(out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(out / "matrix.npy"));
  CHECK_FALSE(fs::exists(out / "probs.npy"));
  CHECK_FALSE(fs::exists(out / "scores.npy"));
  const NpyArray matrix = read_npy(out / "matrix.npy", 3);
  const int64_t T = int64_t(ids.size());
  REQUIRE(matrix.shape == std::vector<int64_t>{linear_heads, T, T});
  for (int h = 0; h < linear_heads; ++h) {
    const Eigen::Map<const Mat> written(matrix.data.data() + size_t(h * T * T), Eigen::Index(T), Eigen::Index(T));
    CHECK(Mat(written) == Mat(f.linear_map(linear_layer, h)));
  }
  for (const char* file : files) {
    CAPTURE(file);
    CHECK(fs::exists(out / file));
  }
  const fs::path soft = fresh_dir("cli_hybrid_layer_" + name + "_" + std::to_string(soft_layer));
  REQUIRE(run_cli(base + " --layer " + std::to_string(soft_layer) + " --out " + quoted(soft)).exit_code == 0);
  CHECK(fs::exists(soft / "probs.npy"));
  CHECK_FALSE(fs::exists(soft / "matrix.npy"));
  return out;
}

// `export` draws a linear layer on the diverging colormap named "<kind> weight", a softmax layer as probabilities,
// refuses --scores of a linear layer by name, and the model view carries both bars (`model_caption` is the
// linear layers' caption) and refuses its probabilities-only .npy.
inline void check_export_draws_linear_layers(const std::string& name, const std::string& kind, int linear_layer,
                                             int soft_layer, const std::string& model_caption) {
  namespace fs = std::filesystem;
  const std::string ids = ids_arg(fixture_ids(name));
  const fs::path out = fresh_dir("cli_hybrid_export_" + name);
  const std::string base = "export --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids;
  const std::string lin = " --what heads --layer " + std::to_string(linear_layer);
  // a linear layer: the figure's colour bar is the diverging one, named for its weights (the SVG says it)
  const CliRun linear = run_cli(base + lin + " --format svg --out " + quoted(out / "linear.svg"));
  INFO(linear.err);
  REQUIRE(linear.exit_code == 0);
  const std::string svg_linear = read_file(out / "linear.svg", 1 << 24);
  CHECK(contains(svg_linear, kind + " weight"));
  CHECK(contains(svg_linear, "M, signed (no softmax)"));
  CHECK_FALSE(contains(svg_linear, ">probability<"));
  // a softmax layer of the same model: probabilities
  const CliRun soft = run_cli(base + " --what heads --layer " + std::to_string(soft_layer) + " --format svg --out " +
                              quoted(out / "soft.svg"));
  REQUIRE(soft.exit_code == 0);
  const std::string svg_soft = read_file(out / "soft.svg", 1 << 24);
  CHECK(contains(svg_soft, "probability"));
  CHECK_FALSE(contains(svg_soft, kind + " weight"));
  REQUIRE(run_cli(base + lin + " --format png --out " + quoted(out / "linear.png")).exit_code == 0);
  CHECK(fs::file_size(out / "linear.png") > 0);
  // --scores has nothing to show in a layer without a softmax
  const CliRun scores = run_cli(base + lin + " --scores --format png --out " + quoted(out / "scores.png"));
  CHECK(scores.exit_code == 2);
  CHECK(contains(scores.err, "heads without a softmax have no scores"));
  CHECK_FALSE(fs::exists(out / "scores.png"));
  // the model view: both bars, every layer's panels
  const CliRun model_view = run_cli(base + " --what model --format svg --out " + quoted(out / "model.svg"));
  INFO(model_view.err);
  REQUIRE(model_view.exit_code == 0);
  const std::string svg = read_file(out / "model.svg", 1 << 24);
  CHECK(contains(svg, kind + " weight"));
  CHECK(contains(svg, "probability"));
  CHECK(contains(svg, model_caption));
  // its .npy would be probabilities only: refused by name
  const CliRun npy = run_cli(base + " --what model --format npy --out " + quoted(out / "model.npy"));
  CHECK(npy.exit_code == 2);
  CHECK(contains(npy.err, kind + " layers have signed matrices"));
  CHECK_FALSE(fs::exists(out / "model.npy"));
}

}  // namespace attnscope::test
