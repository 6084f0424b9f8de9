// The model view of a real model (export.h, ExportWhat::model): L × H thumbnails in layer-major order,
// each framed by the colour of its K/V group g(h), causal cells masked, one shared probability bar;
// and the refusals of formats and settings it cannot honour.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "attnscope/attention/weights.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/figure/export.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;

namespace {

// A causal stack [L, H, T, T] whose rows are distributions over the keys up to the query.
model::AttentionStack causal_stack(int L, int H, int G, int T) {
  model::AttentionStack s;
  s.layers = L, s.heads = H, s.kv_heads = G, s.tokens = T;
  s.causal = true;
  s.groups_from_config = true;
  s.source = "tiny";
  Rng rng(7);
  s.attentions.assign(size_t(L) * H * T * T, 0.0f);
  for (int lh = 0; lh < L * H; ++lh)
    for (int i = 0; i < T; ++i) {
      float* row = s.attentions.data() + (size_t(lh) * T + i) * T;
      double sum = 0;
      for (int j = 0; j <= i; ++j) sum += row[j] = float(rng.uniform(0.1, 1.0));
      for (int j = 0; j <= i; ++j) row[j] = float(row[j] / sum);
    }
  for (int i = 0; i < T; ++i) s.labels.push_back("t" + std::to_string(i));
  return s;
}

}  // namespace

TEST_CASE("model view: one thumbnail per layer and head, layer-major, framed by the head's kv group") {
  const model::AttentionStack s = causal_stack(3, 6, 2, 5);
  ExportRequest r;
  r.what = ExportWhat::model;
  const FigureSpec f = model_view_figure(s, r);
  REQUIRE(f.panels.size() == 18);
  CHECK(f.grid_columns == 6);
  CHECK(f.colorbars.size() == 1);
  CHECK(f.colorbars[0].show_masked);
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 6; ++h) {
      CAPTURE(l);
      CAPTURE(h);
      const PanelSpec& p = f.panels[size_t(l * 6 + h)];
      CHECK(p.title == std::to_string(l) + "." + std::to_string(h));
      REQUIRE(p.frame.has_value());
      CHECK(*p.frame == kv_group_color(kv_group_of_head(h, 6, 2)));
      const auto head = s.attention(l, h);
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
          const float v = p.values[size_t(i * 5 + j)];
          if (j > i) CHECK(std::isinf(v));  // masked, drawn in the masked colour
          else CHECK(v == head(i, j));
        }
    }
  CHECK(model_view_caption(s).find("3 layers × 6 heads") != std::string::npos);
  CHECK(model_view_caption(s).find("GQA, 3 heads per K/V head") != std::string::npos);
  // Thumbnails: the figure fits a slide's width however many heads there are.
  const FigureLayout layout = layout_figure(f, 1.0f, default_text_rasterizer());
  CHECK(layout.width <= 1700);
}

TEST_CASE("model view: past the 16 kv-group colours every title names its group") {
  const model::AttentionStack s = causal_stack(1, 32, 32, 3);
  ExportRequest r;
  r.what = ExportWhat::model;
  const FigureSpec f = model_view_figure(s, r);
  REQUIRE(f.panels.size() == 32);
  for (int h = 0; h < 32; ++h) {
    CAPTURE(h);
    CHECK(f.panels[size_t(h)].title == "0." + std::to_string(h) + " · g" + std::to_string(h));
  }
  // Groups 0 and 16 share a frame colour: only the title tells them apart.
  CHECK(*f.panels[0].frame == *f.panels[16].frame);
}

TEST_CASE("model view: PNG, SVG and .npy files; CSV, scores and a bad scale are refused") {
  const model::AttentionStack s = causal_stack(2, 4, 1, 6);
  const auto dir = attnscope::test::fresh_dir("model_view_export");
  ExportRequest r;
  r.what = ExportWhat::model;
  r.format = ExportFormat::npy;
  const ExportedFile npy = export_model_view(s, r, dir / "stack.npy");
  CHECK(npy.shape == std::vector<int64_t>{2, 4, 6, 6});
  CHECK(read_npy(dir / "stack.npy", 4).data == s.attentions);
  r.format = ExportFormat::png;
  const ExportedFile png = export_model_view(s, r, dir / "view.png");
  REQUIRE(png.layout.has_value());
  CHECK(png.layout->panels.size() == 8);
  CHECK(std::filesystem::file_size(dir / "view.png") > 1000);
  r.format = ExportFormat::svg;
  export_model_view(s, r, dir / "view.svg");
  CHECK(std::filesystem::exists(dir / "view.svg"));

  r.format = ExportFormat::csv;
  CHECK_THROWS_WITH_AS(export_model_view(s, r, dir / "view.csv"), doctest::Contains("no CSV"), InputError);
  r.format = ExportFormat::png;
  r.scores = true;
  CHECK_THROWS_WITH_AS(export_model_view(s, r, dir / "scores.png"), doctest::Contains("probabilities"), InputError);
  r.scores = false;
  r.scale = 9;
  CHECK_THROWS_WITH_AS(export_model_view(s, r, dir / "big.png"), doctest::Contains("scale"), InputError);
  CHECK(!std::filesystem::exists(dir / "view.csv"));
  CHECK(!std::filesystem::exists(dir / "big.png"));
}
