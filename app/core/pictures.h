// pictures.h — the RGBA pixels of every picture a view draws, for one Analysis and view setting.
//
// Made on the compute worker (T = 512 with 16 heads is 4 M cells, too many to colour on the UI
// thread), uploaded by the UI thread as one texture per picture, and only when its pixels changed.
// Colours come from the engine's colormap.h, so a cell has the same colour on screen and in an
// exported PNG.
//
// Every picture comes from the engine's figure layer (export_figure → panel_colors), the function
// that draws exported PNG and SVG figures, so values, masked cells, ranges and colours are the same on
// screen and on paper. On a grid the relative-position maps are overlays: the figure's colours with
// an opacity that grows with the value, so the grid shows through.
#pragma once
#include <cstdint>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/color_scale.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/scene/scene.h"

namespace attnscope::gui {

struct Picture {
  int width = 0, height = 0;  // cells: columns (keys) × rows (queries)
  std::vector<Rgba> pixels;   // [height, width] row-major
  ValueRange range;           // the values the colours were normalised with
  // Cell (row, col)'s colour, or null outside the picture (a view reading pictures of another size).
  const Rgba* cell(int64_t row, int64_t col) const {
    if (row < 0 || col < 0 || row >= height || col >= width || size_t(row * width + col) >= pixels.size()) return nullptr;
    return &pixels[size_t(row * width + col)];
  }
};

struct Pictures {
  Colormap colormap = Colormap::viridis;
  bool scores = false;       // attention heads show raw scores instead of probabilities
  ColorScale scale;          // how the heads' colours span their values (the view's, as exports draw it)
  bool shared_scale = true;  // one colour bar for all heads (every mode but per head)

  // Attention heads: [H] pictures of T × T.
  ValueRange heads_range;  // the shared range
  bool masked = false;     // causal: cells after the query are masked (the colour bar shows the swatch)
  std::vector<Picture> heads;
  // A token set (ViewSettings::token_set, token_set.h): per head its reduced row (queries: [T] over the keys)
  // or column (keys: [T] over the queries), coloured as the exported figure colours it (the heads' colour
  // ranges include it); empty without one.
  TokenSetAxis strip_axis = TokenSetAxis::none;
  std::vector<std::vector<Rgba>> strips;
  std::vector<std::vector<float>> strip_values;

  // Relative position. Sentence: [H] T × T probabilities (1 × T, the query's row, when the engine
  // kept no full tensor). Grid: [H] R × C overlays of the query's attention, and their mean.
  ValueRange relpos_range;
  std::vector<Picture> relpos_heads;
  Picture relpos_combined;
  Picture grid;  // the input grid in its own colours (gray or RGB)

  // Convolution as attention: [R, C] each.
  Picture conv_input, conv_mhsa, conv_true, conv_difference;
};

Pictures make_pictures(const Analysis& analysis, const ViewSettings& view);

}  // namespace attnscope::gui
