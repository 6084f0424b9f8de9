// Screen and paper agree: the Heads window's cells against the exported PNG's, cell by cell, for
// causal probabilities (masked cells), scores, per-head scale and every colormap. Both come from the
// engine's figure layer (export_figure + panel_colors).
#include <string>

#include "attnscope/figure/export.h"
#include "attnscope/analysis/analysis.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

struct FigureCase {
  std::string name, flags;
  Colormap colormap;
  bool scores;
  ColorScale scale;
  bool causal;
};

void check_window_against_export(const FigureCase& c) {
  CAPTURE(c.name);
  const WindowRun w = run_window("figure_" + c.name, "--text 'The cat sat on the mat because it was tired.' --kind gqa "
                                                     "--heads 4 --groups 2 " + c.flags);
  Scene s;
  s.input.text = "The cat sat on the mat because it was tired.";
  s.model.kind = AttentionKind::gqa;
  s.model.heads = 4;
  s.model.groups = 2;
  s.model.causal = c.causal;
  const Analysis a = analyse(s);
  ExportRequest request;
  request.colormap = c.colormap;
  request.scores = c.scores;
  request.color_scale = c.scale;
  request.scale = 2;
  const ExportedFile paper = render_export(a, request);
  REQUIRE(paper.image);
  REQUIRE(paper.layout);
  REQUIRE(int(w.layout["heads"].size()) == 4);
  const int t = int(a.attention->result.probs[0].rows());
  int checked = 0, masked = 0, worst = 0;
  for (const auto& rec : w.layout["heads"]) {
    const int h = rec["head"].get<int>();
    const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), cell = rec["cell"].get<double>();
    REQUIRE(cell >= 3.0);
    const PanelLayout& panel = paper.layout->panels[size_t(h)];
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < t; ++j) {
        const Rect r = panel.cell(i, j);
        const Rgba on_paper = paper.image->pixel(r.centre_x(), r.centre_y());
        const Rgba on_screen = w.png.at(int(x + (j + 0.5) * cell), int(y + (i + 0.5) * cell));
        const int d = channel_distance(on_screen, on_paper);
        worst = std::max(worst, d);
        if (d > 2) {
          INFO("head " << h << " cell (" << i << ", " << j << ")");
          CHECK(d <= 2);
        }
        masked += c.causal && j > i && on_paper == masked_color(c.colormap);
        ++checked;
      }
  }
  MESSAGE(c.name << ": " << checked << " cells compared, largest channel difference " << worst);
  CHECK(checked == 4 * t * t);
  CHECK(masked == (c.causal ? 4 * t * (t - 1) / 2 : 0));  // every masked cell in the masked colour
}

}  // namespace

TEST_SUITE("gui_figure") {
  TEST_CASE("window and export agree cell by cell: causal probabilities, scores, every scale mode, every colormap") {
    const ColorScale shared, per_head{ScaleMode::per_head}, fixed{ScaleMode::fixed};
    const FigureCase cases[] = {
        {"causal_probs_viridis", "--causal", Colormap::viridis, false, shared, true},
        {"causal_probs_magma_per_head", "--causal --colormap magma --per-head-scale", Colormap::magma, false, per_head, true},
        {"causal_scores_diverging", "--causal --scores --colormap diverging", Colormap::diverging, true, shared, true},
        {"scores_grayscale_per_head", "--scores --colormap grayscale --scale-mode per-head", Colormap::grayscale, true,
         per_head, false},
        {"probs_diverging", "--colormap diverging", Colormap::diverging, false, shared, false},
        {"causal_probs_fixed", "--causal --scale-mode fixed", Colormap::viridis, false, fixed, true},
        // A range narrower than the values: the cells beyond it clamp to the colormap's ends on both.
        {"probs_magma_locked", "--colormap magma --scale-mode locked --scale-range 0.05,0.3", Colormap::magma, false,
         {ScaleMode::locked, {0.05f, 0.3f}}, false},
        {"scores_locked", "--scores --colormap diverging --scale-mode locked --scale-range=-1.5,2", Colormap::diverging, true,
         {ScaleMode::locked, {-1.5f, 2.0f}}, false},
    };
    for (const FigureCase& c : cases) check_window_against_export(c);
  }
}

}  // namespace attnscope::test
