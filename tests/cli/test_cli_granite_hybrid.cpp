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
#include "cli/hybrid_cli_checks.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("cli granite_hybrid: compute --checkpoint writes each layer's maps as the forward pass gives them") {
  for (const std::string name : {"granite_hybrid_f32", "granite_hybrid_bf16_sharded"}) {
    CAPTURE(name);
    const int linear_heads = model::open(model_fixture(name))->config.mamba.heads;
    CHECK(check_compute_writes_every_layer(name, "Mamba-2", linear_heads) == 3);
  }
}

TEST_CASE("cli granite_hybrid: compute --layer N of a Mamba-2 layer writes its matrices, not probabilities") {
  const std::string name = "granite_hybrid_f32";
  const auto m = model::open(model_fixture(name));
  const int heads = m->config.mamba.heads;
  // layer 1 is softmax attention
  const fs::path out = check_compute_layer_writes_matrices(
      name, 0, 1, heads, {"step.npy", "decay.npy", "head_out.npy", "q.npy", "k.npy", "v.npy", "output.npy"});
  CHECK_FALSE(fs::exists(out / "beta.npy"));  // Mamba-2 writes with its step Δ, not a β
  const NpyArray step = read_npy(out / "step.npy", 2);
  REQUIRE(step.shape == std::vector<int64_t>{heads, int64_t(fixture_ids(name).size())});
  CHECK(*std::min_element(step.data.begin(), step.data.end()) > 0.0f);  // Δ = softplus(…) > 0
}

TEST_CASE("cli granite_hybrid: export draws a Mamba-2 layer on the diverging colormap, an attention layer as "
          "probabilities") {
  check_export_draws_linear_layers("granite_hybrid_f32", "Mamba-2", 0, 1, "3 Mamba-2 layers × 4 heads: M, signed (no softmax)");
}

