// model_view.h — what the Model view window draws for one forward pass of an open checkpoint: every
// layer's heads as one atlas image (L rows × H columns of thumbnails, one GL texture) and a few numbers
// per head for its tooltip. Made on the compute worker once per result (and again when the colormap
// changes), never in the frame.
//
//   AttentionStack [L, H, T, T] ──model_view_figure (engine figure/export.h)──► panel_colors per head
//                               ──► atlas [L·s, H·s] RGBA, tile (l, h) at (h·s, l·s), s = tile side
//                               ──► numbers [L·H] (layer-major): attention sink, previous-token score,
//                                   mean distance, entropy
// The colours are the engine's figure colours (the same as `export --what model`): when T fits the
// tile, tile pixel (x, y) is cell (query y, key x) of that head; a larger T is sampled at the nearest
// cell, as the GL texture's nearest filtering would.
//
// Numbers of one head, P [T, T] its probabilities (head_stats.h's legend):
//   attention sink     mean over rows i ≥ 1 of P[i, 0]         (attention_sink(); NaN when T = 1)
//   previous token     mean over rows i ≥ 1 of P[i, i − 1]     (NaN when T = 1)
//   mean distance      mean over rows of Σ_j P[i, j]·|i − j|   (tokens)
//   entropy            mean over rows of row_entropy(P[i, ·])  (nats)
// The sink is the Head analysis window's column and lesson 6's score too, and the previous-token score
// lesson 6's (head_patterns.h): one formula each, so a class sees one number per head.
#pragma once
#include <atomic>
#include <vector>

#include "attnscope/figure/color_scale.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/model/attention_file.h"
#include "core/pictures.h"

namespace attnscope::gui {

struct ModelHeadNumbers {
  double attention_sink = 0, previous_token = 0, mean_distance = 0, entropy = 0;
};

struct ModelViewPictures {
  int layers = 0, heads = 0, kv_heads = 0, tokens = 0;  // L, H, G, T
  bool causal = false;
  int tile = 0;          // a thumbnail's side in atlas pixels (T, or less for a long input)
  Picture atlas;         // width H·tile, height L·tile
  Colormap colormap = Colormap::viridis;
  ValueRange range;      // the one colour bar's range (probability)
  ColorScale scale;      // how it was chosen: shared, fixed 0–1 or locked (one bar: never per head)
  std::vector<ModelHeadNumbers> numbers;  // [L·H], head (l, h) at l·H + h
  // The forward pass's stack it was made from (set by the compute worker): the window tells a grid of an
  // older pass (kept on screen while the new one is made) by it.
  std::shared_ptr<const model::AttentionStack> stack;
  const ModelHeadNumbers& at(int layer, int head) const { return numbers[size_t(layer) * size_t(heads) + size_t(head)]; }
};

// The atlas stays within this many pixels a side (every GL 3.3 driver in use takes 4096).
inline constexpr int model_view_atlas_max_side = 4096;

// The numbers of one head (legend above). p [T, T] rows summing to 1.
ModelHeadNumbers model_head_numbers(const Eigen::Ref<const Mat>& p);

// The atlas and every head's numbers. Throws InputError for a malformed stack (model_view_figure's
// checks) and Cancelled soon after *cancel becomes true.
// The view's per-head scale is drawn shared: the model view has one colour bar for all its thumbnails.
ModelViewPictures make_model_view(const model::AttentionStack& stack, Colormap colormap,
                                  const std::atomic<bool>* cancel = nullptr, ColorScale scale = {});

}  // namespace attnscope::gui
