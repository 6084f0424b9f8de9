// compare_state.h — compare A/B's window state (window_compare.cpp). A is UI state, not part of the Scene:
// Edit → Undo walks the scene's history (history.h) and leaves the kept A alone, so a teacher can undo a
// slider slip on B without losing A.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/figure/compare.h"
#include "attnscope/pipeline/model_input.h"
#include "gui/app_state.h"
#include "gui/gl_texture.h"
#include "gui/heatmap_grid.h"

namespace attnscope::gui {

struct CompareState {
  std::shared_ptr<const Analysis> a;           // the kept A (null: none kept)
  std::shared_ptr<const ModelLayerRun> a_run;  // A's checkpoint layer run (its top-1 next tokens), else null
  model::HeadAblation a_ablation;              // the heads switched off in A's run (the Model view's; none: empty)
  bool open = false;                           // the Compare window is shown over the Heads view
  CompareView view = CompareView::side_by_side;
  // What is on screen, made from (a, b, view, language); remade when one of them changes.
  const Analysis* made_a = nullptr;
  const Analysis* made_b = nullptr;
  std::shared_ptr<const Analysis> made_b_held;  // keeps made_b's address from being reused by a new analysis
  CompareView made_view = CompareView::side_by_side;
  int made_language = -1;
  std::string made_view_settings;         // the colormap and colour scale it was made with
  std::string error;                      // why A and B cannot be compared (on screen), else empty
  std::optional<AbComparison> comparison;
  std::optional<FigureSpec> figure;
  std::vector<GlTexture> textures;        // one per panel
  std::vector<std::vector<Rgba>> colors;  // their pixels (numbers in cells read against them)
  // A token set (token_sets.h): each panel's strip, the figure's last row (queries) or column (keys), apart from
  // the T × T cells the textures hold; its colours and values. Empty without a set.
  TokenSetAxis strip_axis = TokenSetAxis::none;
  std::vector<std::vector<Rgba>> strips;
  std::vector<std::vector<float>> strip_values;
  ColorBarCache bar;
  LabelCache labels;                      // B's token labels (the axes)
};

}  // namespace attnscope::gui
