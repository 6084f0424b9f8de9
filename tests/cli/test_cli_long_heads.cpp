// export --checkpoint --long --what heads|model (issue 38 item 6, pooled_figure.h): a long input's layer of heads
// and its whole model as figures, each head pooled as --what head:N pools it. The .npy holds pool_head of the
// engine's HeadMaps::head for every head (masked blocks NaN); the PNG's cells are those numbers coloured; bad
// values exit 2 naming the problem and write nothing.
#include <doctest/doctest.h>

#include <cmath>

#include "attnscope/core/limits.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/forward.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "png_decode.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

std::vector<int32_t> ids_of(int T, int vocab) {
  std::vector<int32_t> ids;
  for (int t = 0; t < T; ++t) ids.push_back(int32_t((t * 7 + t / 13) % vocab));
  return ids;
}

struct Fixture {
  std::string name;
  int tokens, pixels;
};

// Gemma 2's fixture slides over 5 keys on its local layer and takes 32 positions; gpt-oss's has sinks and a window
// of 8 on layer 0.
const Fixture fixtures[] = {{"gemma2_softcap_f32", 32, 8}, {"gpt_oss_dequantized_bf16", 300, 64}};

// The .npy's blocks [.., rows, cols] against pool_head of every head, in order (layer-major); masked blocks NaN.
int npy_differences(const NpyArray& a, const std::vector<model::PooledMap>& maps) {
  int differing = 0;
  size_t at = 0;
  for (const model::PooledMap& p : maps)
    for (int i = 0; i < p.rows; ++i)
      for (int j = 0; j < p.cols; ++j, ++at) {
        const float v = a.data[at];
        if (p.is_masked(i, j) ? !std::isnan(v) : v != p.values(i, j)) ++differing;
      }
  return differing + (at == a.data.size() ? 0 : 1);
}

}  // namespace

TEST_CASE("cli long heads: --what heads and --what model hold pool_head of every head; the PNG is those numbers coloured") {
  for (const Fixture& fx : fixtures) {
    CAPTURE(fx.name);
    const auto m = model::open(model_fixture(fx.name));
    const std::vector<int32_t> ids = ids_of(fx.tokens, m->config.vocab);
    model::ForwardOptions o;
    o.keep = model::AttentionKeep::on_demand;
    const model::ForwardResult f = model::forward(*m, ids, o);
    const model::HeadMaps& maps = *f.head_maps;
    const std::string base = "export --checkpoint " + quoted(model_fixture(fx.name)) + " --ids " + ids_arg(ids) +
                             " --long --pixels " + std::to_string(fx.pixels);
    const fs::path dir = fresh_dir("cli_long_heads_" + fx.name);
    for (const char* pool : {"max", "mean"}) {
      CAPTURE(pool);
      const model::Pooling pooling = model::parse_pooling(pool, "pool");
      // every layer's heads, one .npy each, and the model's [L, H, rows, cols]
      std::vector<model::PooledMap> all;
      for (int l = 0; l < maps.layer_count(); ++l) {
        CAPTURE(l);
        std::vector<model::PooledMap> layer;
        for (int h = 0; h < maps.heads(l); ++h) layer.push_back(model::pool_head(maps, l, h, pooling, fx.pixels));
        const fs::path file = dir / ("heads" + std::to_string(l) + pool + ".npy");
        const CliRun r = run_cli(base + " --pool " + pool + " --what heads --layer " + std::to_string(l) +
                                 " --format npy --out " + quoted(file));
        INFO(r.err);
        REQUIRE(r.exit_code == 0);
        CHECK(contains(r.out, layer[0].label()));
        const NpyArray a = read_npy(file);
        CHECK(a.shape == std::vector<int64_t>{maps.heads(l), layer[0].rows, layer[0].cols});
        CHECK(npy_differences(a, layer) == 0);
        all.insert(all.end(), layer.begin(), layer.end());
      }
      const fs::path file = dir / (std::string("model") + pool + ".npy");
      const CliRun r = run_cli(base + " --pool " + pool + " --what model --format npy --out " + quoted(file));
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
      const NpyArray a = read_npy(file, 4);
      CHECK(a.shape == std::vector<int64_t>{maps.layer_count(), maps.heads(0), all[0].rows, all[0].cols});
      CHECK(npy_differences(a, all) == 0);
      // a masked block exists (causal; Gemma's window of 5 and gpt-oss's of 8 mask more) and is NaN
      CHECK(std::count_if(a.data.begin(), a.data.end(), [](float v) { return std::isnan(v); }) > 0);
    }
    // The PNG: the engine's figure of these pooled heads, byte for byte, and each cell's centre its value coloured.
    for (const char* what : {"heads", "model"}) {
      CAPTURE(what);
      const bool model = std::string(what) == "model";
      const fs::path png = dir / (std::string(what) + ".png"), npy = dir / (std::string(what) + ".npy");
      const std::string args = base + " --what " + what + (model ? "" : " --layer 1");
      REQUIRE(run_cli(args + " --format png --out " + quoted(png)).exit_code == 0);
      REQUIRE(run_cli(args + " --format npy --out " + quoted(npy)).exit_code == 0);
      ExportRequest request;
      request.what = model ? ExportWhat::model : ExportWhat::heads;
      const PooledHeadsInput in = pool_heads(maps, model ? -1 : 1, model::Pooling::max, fx.pixels, m->name);
      const ExportedFile file = render_pooled_heads(in, request);
      const std::string bytes = read_file(png, 1 << 26);
      CHECK(bytes == file.bytes);
      const Image img = decode_png(bytes);
      REQUIRE(file.layout);
      REQUIRE(img.width == file.layout->width);
      const NpyArray values = read_npy(npy, 4);
      const FigureSpec& spec = *file.figure;
      size_t at = 0;
      int wrong_value = 0, wrong_colour = 0, masked = 0;
      for (size_t p = 0; p < spec.panels.size(); ++p) {
        const std::vector<Rgba> colours = panel_colors(spec, p);
        const PanelLayout& pl = file.layout->panels[p];
        REQUIRE(pl.cell_w >= 1);
        for (int i = 0; i < spec.panels[p].rows; ++i)
          for (int j = 0; j < spec.panels[p].cols; ++j, ++at) {
            const float v = values.data[at], shown = spec.panels[p].values[size_t(i) * size_t(spec.panels[p].cols) + size_t(j)];
            if (std::isnan(v) ? !std::isnan(shown) : v != shown) ++wrong_value;
            masked += std::isnan(v) ? 1 : 0;
            const Rect c = pl.cell(i, j);
            const Rgba px = img.pixel(c.x + c.w / 2, c.y + c.h / 2);
            const Rgba want = colours[size_t(i) * size_t(spec.panels[p].cols) + size_t(j)];
            if (px.r != want.r || px.g != want.g || px.b != want.b) ++wrong_colour;
          }
      }
      CHECK(at == values.data.size());
      CHECK(wrong_value == 0);
      CHECK(wrong_colour == 0);
      CHECK(masked > 0);
      // the colour bar names the pooling
      REQUIRE(!spec.colorbars.empty());
      CHECK(spec.colorbars[0].title == "probability \u00b7 " + in.layers[0].heads[0].label());
    }
  }
}

TEST_CASE("cli long heads: the heads figure's panels and titles, the model figure's grid, SVG, CSV and Chinese") {
  const Fixture& fx = fixtures[1];
  const auto m = model::open(model_fixture(fx.name));
  const std::string base = "export --checkpoint " + quoted(model_fixture(fx.name)) + " --ids " +
                           ids_arg(ids_of(fx.tokens, m->config.vocab)) + " --long --pixels 32";
  const fs::path dir = fresh_dir("cli_long_heads_formats");
  const CliRun svg = run_cli(base + " --what heads --layer 0 --format svg --out " + quoted(dir / "h.svg"));
  INFO(svg.err);
  REQUIRE(svg.exit_code == 0);
  const std::string text = read_file(dir / "h.svg", 1 << 26);
  const int block = model::pool_block(fx.tokens, 32);
  for (int h = 0; h < m->config.heads; ++h) {
    const std::string title = "head " + std::to_string(h) + " · kv group " + std::to_string(h / (m->config.heads / m->config.kv_heads));
    CHECK(contains(text, title));
  }
  CHECK(contains(text, "max-pooled " + std::to_string(block) + "\u00d7" + std::to_string(block)));
  CHECK(contains(text, "layer 0"));
  // per head: a colour bar each
  const CliRun per = run_cli(base + " --what heads --layer 0 --scale-mode per-head --format png --out " + quoted(dir / "p.png"));
  INFO(per.err);
  CHECK(per.exit_code == 0);
  const CliRun csv = run_cli(base + " --what heads --layer 1 --pool mean --format csv --out " + quoted(dir / "h.csv"));
  INFO(csv.err);
  REQUIRE(csv.exit_code == 0);
  CHECK(contains(read_file(dir / "h.csv", 1 << 26), "head 3 (kv group 1)"));
  const CliRun model_svg = run_cli(base + " --what model --format svg --out " + quoted(dir / "m.svg"));
  INFO(model_svg.err);
  REQUIRE(model_svg.exit_code == 0);
  const std::string ms = read_file(dir / "m.svg", 1 << 26);
  for (const char* title : {">0.0<", ">1.3<", "panel l.h = layer l, head h"}) CHECK(contains(ms, title));
  const CliRun zh = run_cli(base + " --what model --language zh --format svg --out " + quoted(dir / "zh.svg"));
  REQUIRE(zh.exit_code == 0);
  CHECK(contains(read_file(dir / "zh.svg", 1 << 26), std::to_string(block) + "×" + std::to_string(block) + " 最大池化"));
  // --what model without --pixels: the stated default
  const CliRun plain = run_cli("export --checkpoint " + quoted(model_fixture(fx.name)) + " --ids " +
                               ids_arg(ids_of(1000, m->config.vocab)) + " --long --what model --format npy --out " +
                               quoted(dir / "d.npy"));
  INFO(plain.err);
  REQUIRE(plain.exit_code == 0);
  const int side = (1000 + model::pool_block(1000, default_model_pixels) - 1) / model::pool_block(1000, default_model_pixels);
  CHECK(read_npy(dir / "d.npy", 4).shape == std::vector<int64_t>{2, 4, side, side});
}

TEST_CASE("cli long heads: bad values exit 2 naming the problem and write nothing") {
  const fs::path dir = fresh_dir("cli_long_heads_bad");
  const std::string ck = "--checkpoint " + quoted(model_fixture("gpt_oss_dequantized_bf16")) + " --ids 1,2,3,4,5";
  const std::string ex = "export " + ck + " --long --format npy --out " + quoted(dir / "o.npy");
  struct Bad {
    std::string args, message;
  };
  // 8 heads of 4200 tokens at exact cells would be 141 M values, more than 2²⁶: the most blocks a side that fit is named
  std::string many = "export --checkpoint " + quoted(model_fixture("gpt_oss_dequantized_bf16")) + " --ids 1";
  for (int i = 1; i < 4200; ++i) many += "," + std::to_string(i % 64);
  many += " --long --what model --pixels 8192 --format npy --out " + quoted(dir / "o.npy");
  const std::vector<Bad> bad{
      {ex + " --what heads --layer 2", "--layer 2 does not exist: the model has 2 layers (0–1)"},
      {ex + " --what heads", "give the layer of the heads with --layer N"},
      {ex + " --what model --layer 0", "--what model draws every layer: leave out --layer"},
      {ex + " --what heads --layer 0 --pixels 0", "--pixels must be between 1 and 8192, got 0"},
      {ex + " --what model --pixels 100000", "--pixels must be between 1 and 8192, got 100000"},
      {ex + " --what heads --layer 0 --pool median", "--pool takes max or mean, got 'median'"},
      {ex + " --what model --scale-mode per-head", "has one colour bar"},
      {"export " + ck + " --long --what model --format csv --out " + quoted(dir / "o.csv"), "--what model has no CSV"},
      {ex + " --what relpos", "with --long, --what is head:N or heads"},
      {"export --checkpoint " + quoted(model_fixture("qwen3_next_f32")) + " --ids 1,2,3 --long --what model --format npy "
       "--out " + quoted(dir / "o.npy"),
       "need softmax layers"},
      // 2 layers × 4 heads: 4199 blocks a side are blocks of 2 tokens, 2100² each, within 2²⁶ values in all
      {many, "ask for at most 4199 blocks a side"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.args.substr(0, 300));
    const CliRun r = run_cli(b.args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, b.message));
  }
  CHECK(count_files(dir) == 0);
}
