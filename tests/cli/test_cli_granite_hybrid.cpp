// Granite 4.0-H on the command line (issue 39 item 3, the Mamba-2 hybrid): `compute --checkpoint` writes every
// layer as what it is — the attention layers' probabilities in attentions.npy, the Mamba-2 layers' signed
// matrices M in linear_maps.npy, model.json's "layer_maps" naming each layer's type ("Mamba-2"), heads and file —
// equal to the engine's forward pass and to the PyTorch reference of the fixtures; `--layer N` of a Mamba layer
// writes matrix.npy, step.npy and decay.npy as `compute --kind mamba2` does; `export` draws a Mamba layer on the
// diverging colormap named "Mamba-2 weight" (the Heads figure and the model view), and the compute folder opens
// again as attentions with its Mamba layers.
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
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

double max_diff(const float* a, const float* b, size_t n) {
  double d = 0;
  for (size_t i = 0; i < n; ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

}  // namespace

TEST_CASE("cli granite_hybrid: compute --checkpoint writes each layer's maps as the forward pass gives them") {
  for (const std::string name : {"granite_hybrid_f32", "granite_hybrid_bf16_sharded"}) {
    CAPTURE(name);
    const fs::path out = fresh_dir("cli_granite_hybrid_" + name);
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
        CHECK(e.at("type") == "Mamba-2");
        CHECK(e.at("heads") == c.mamba.heads);
        CHECK(e.at("file") == "linear_maps.npy");
        CHECK(e.at("values") == "signed matrices M");
        REQUIRE(e.at("linear_index") == linear);
        const float* written = lin.data.data() + size_t(linear) * size_t(c.mamba.heads) * cells;
        CHECK(max_diff(written, f.linear_maps[size_t(l)].data(), size_t(c.mamba.heads) * cells) == 0.0);
        // and the PyTorch reference of the transformers code
        const ReferenceTensor ref = fixture_reference(name, "linear." + std::to_string(l) + ".maps");
        CHECK(max_diff(written, ref.values.data(), ref.values.size()) <= 1e-5);
        // signed: not probabilities
        CHECK(*std::min_element(written, written + size_t(c.mamba.heads) * cells) < 0.0f);
        ++linear;
      } else {
        CHECK(e.at("type") == "attention");
        CHECK(e.at("heads") == c.heads);
        CHECK(e.at("file") == "attentions.npy");
        const float* written = att.data.data() + size_t(l) * size_t(c.heads) * cells;
        CHECK(max_diff(written, f.attentions.data() + size_t(l) * size_t(c.heads) * cells, size_t(c.heads) * cells) == 0.0);
        const ReferenceTensor ref = fixture_reference(name, "attention." + std::to_string(l));
        CHECK(max_diff(written, ref.values.data(), ref.values.size()) <= 1e-5);
      }
    }
    CHECK(linear == 3);
    CHECK(lin.shape == std::vector<int64_t>{linear, c.mamba.heads, T, T});

    // The folder opens again as attentions computed elsewhere, its linear layers with their matrices.
    const model::AttentionStack s = model::open_attentions(out / "attentions.npy", out / "tokens.json", out / "model.json");
    for (int l = 0; l < c.layers; ++l) {
      CAPTURE(l);
      CHECK(s.linear_layer(l) == c.is_linear_layer(l));
      CHECK(s.layer_heads(l) == (c.is_linear_layer(l) ? c.mamba.heads : c.heads));
      CHECK(Mat(s.map(l, 1)) == Mat(c.is_linear_layer(l) ? f.linear_map(l, 1) : f.attention(l, 1)));
    }
  }
}

TEST_CASE("cli granite_hybrid: compute --layer N of a Mamba-2 layer writes its matrices, not probabilities") {
  const std::string name = "granite_hybrid_f32";
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  model::ForwardOptions options;
  options.detail_layer = 0;
  const model::ForwardResult f = model::forward(*m, ids, options);
  REQUIRE(m->config.is_linear_layer(0));
  const fs::path out = fresh_dir("cli_granite_hybrid_layer0");
  const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids) + " --layer 0 --out " + quoted(out));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(out / "matrix.npy"));
  CHECK_FALSE(fs::exists(out / "probs.npy"));
  CHECK_FALSE(fs::exists(out / "scores.npy"));
  const NpyArray matrix = read_npy(out / "matrix.npy", 3);
  REQUIRE(matrix.shape == std::vector<int64_t>{m->config.mamba.heads, int64_t(ids.size()), int64_t(ids.size())});
  for (int h = 0; h < m->config.mamba.heads; ++h) {
    const Eigen::Map<const Mat> written(matrix.data.data() + size_t(h) * ids.size() * ids.size(), Eigen::Index(ids.size()),
                                        Eigen::Index(ids.size()));
    CHECK(Mat(written) == Mat(f.linear_map(0, h)));
  }
  for (const char* file : {"step.npy", "decay.npy", "head_out.npy", "q.npy", "k.npy", "v.npy", "output.npy"})
    CHECK(fs::exists(out / file));
  CHECK_FALSE(fs::exists(out / "beta.npy"));  // Mamba-2 writes with its step Δ, not a β
  const NpyArray step = read_npy(out / "step.npy", 2);
  REQUIRE(step.shape == std::vector<int64_t>{m->config.mamba.heads, int64_t(ids.size())});
  CHECK(*std::min_element(step.data.begin(), step.data.end()) > 0.0f);  // Δ = softplus(…) > 0
  // layer 1 is softmax attention: probabilities and scores as for any model
  const fs::path soft = fresh_dir("cli_granite_hybrid_layer1");
  REQUIRE(run_cli("compute --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids) + " --layer 1 --out " + quoted(soft)).exit_code == 0);
  CHECK(fs::exists(soft / "probs.npy"));
  CHECK_FALSE(fs::exists(soft / "matrix.npy"));
}

TEST_CASE("cli granite_hybrid: export draws a Mamba-2 layer on the diverging colormap, an attention layer as "
          "probabilities") {
  const std::string name = "granite_hybrid_f32";
  const std::string ids = ids_arg(fixture_ids(name));
  const fs::path out = fresh_dir("cli_granite_hybrid_export");
  const std::string base = "export --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids;
  // a linear layer: the figure's colour bar is the diverging one, named for its weights (the SVG says it)
  const CliRun linear = run_cli(base + " --what heads --layer 0 --format svg --out " + quoted(out / "layer0.svg"));
  INFO(linear.err);
  REQUIRE(linear.exit_code == 0);
  const std::string svg0 = read_file(out / "layer0.svg", 1 << 24);
  CHECK(contains(svg0, "Mamba-2 weight"));
  CHECK(contains(svg0, "M, signed (no softmax)"));
  CHECK_FALSE(contains(svg0, ">probability<"));
  // an attention layer of the same model: probabilities
  const CliRun soft = run_cli(base + " --what heads --layer 1 --format svg --out " + quoted(out / "layer1.svg"));
  REQUIRE(soft.exit_code == 0);
  const std::string svg3 = read_file(out / "layer1.svg", 1 << 24);
  CHECK(contains(svg3, "probability"));
  CHECK_FALSE(contains(svg3, "Mamba-2 weight"));
  REQUIRE(run_cli(base + " --what heads --layer 0 --format png --out " + quoted(out / "layer0.png")).exit_code == 0);
  CHECK(fs::file_size(out / "layer0.png") > 0);
  // --scores has nothing to show in a layer without a softmax
  const CliRun scores = run_cli(base + " --what heads --layer 0 --scores --format png --out " + quoted(out / "scores.png"));
  CHECK(scores.exit_code == 2);
  CHECK(contains(scores.err, "heads without a softmax have no scores"));
  CHECK_FALSE(fs::exists(out / "scores.png"));
  // the model view: both bars, every layer's panels
  const CliRun model_view = run_cli(base + " --what model --format svg --out " + quoted(out / "model.svg"));
  INFO(model_view.err);
  REQUIRE(model_view.exit_code == 0);
  const std::string svg = read_file(out / "model.svg", 1 << 24);
  CHECK(contains(svg, "Mamba-2 weight"));
  CHECK(contains(svg, "probability"));
  CHECK(contains(svg, "3 Mamba-2 layers × 4 heads: M, signed (no softmax)"));
  // its .npy would be probabilities only: refused by name
  const CliRun npy = run_cli(base + " --what model --format npy --out " + quoted(out / "model.npy"));
  CHECK(npy.exit_code == 2);
  CHECK(contains(npy.err, "Mamba-2 layers have signed matrices"));
  CHECK_FALSE(fs::exists(out / "model.npy"));
}

