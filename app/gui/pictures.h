// heatmap_colors.h — the RGBA pixels of every head's heatmap for one Analysis and view setting.
//
// Made on the compute worker (T = 512 with 16 heads is 4 M cells, too many to colour on the UI
// thread), uploaded by the UI thread as one texture per head. Colours come from the engine's
// colormap.h, so a cell has the same colour on screen and in an exported PNG.
#pragma once
#include <vector>

#include "attnscope/analysis.h"
#include "attnscope/colormap.h"
#include "attnscope/scene.h"

namespace attnscope::gui {

struct HeadPixels {
  int size = 0;              // T: the texture is T × T, row = query, column = key
  std::vector<Rgba> pixels;  // [T·T] row-major
  ValueRange range;          // the range this head's colours were normalised with
};

struct HeadsPixels {
  Colormap colormap = Colormap::viridis;
  bool scores = false;        // raw scores instead of probabilities
  bool shared_scale = true;   // one range for all heads
  ValueRange shared_range;    // used by every head when shared_scale
  std::vector<HeadPixels> heads;
};

// The range rule (the same for every head picture): probabilities and scores use the finite
// min/max of the values shown (all heads when the scale is shared, else the head's own); the
// diverging map uses a range symmetric around 0 so that white means 0.
ValueRange heads_value_range(const Tensor3& values, int head, bool shared, Colormap map);

HeadsPixels make_heads_pixels(const AttentionAnalysis& attention, const ViewSettings& view);

}  // namespace attnscope::gui
