// model_view.h — what the Model view window draws for one forward pass of an open checkpoint: every
// layer's heads as one atlas image (L rows × H columns of thumbnails, one GL texture) and a few numbers
// per head for its tooltip. Made on the compute worker once per result (and again when the colormap
// changes), never in the frame.
//
//   AttentionStack [L, H, T, T] ──model_view_figure (engine figure/export.h)──► panel_colors per head
//                               ──► atlas [L·s, H·s] RGBA, tile (l, h) at (h·s, l·s), s = tile side
//                               ──► numbers [L·H] (layer-major): attention sink, previous-token score,
//                                   mean distance, entropy
// A Qwen3-Next stack's Gated DeltaNet layers: their signed matrices on the figure's second (diverging) bar,
// each layer with its own heads (the atlas has the most heads of any layer as columns; places past a layer's
// heads stay transparent), and NaN numbers (they are of probabilities).
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

#include "attnscope/attention/weights.h"
#include "attnscope/figure/color_scale.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/model/attention_file.h"
#include "core/pictures.h"

namespace attnscope::gui {

struct ModelHeadNumbers {
  double attention_sink = 0, previous_token = 0, mean_distance = 0, entropy = 0;
};

struct ModelViewPictures {
  // heads: the atlas's columns, the most heads of any layer; kv_heads the softmax layers' G.
  int layers = 0, heads = 0, kv_heads = 0, tokens = 0;  // L, H, G, T
  bool causal = false;
  int tile = 0;          // a thumbnail's side in atlas pixels (T, or less for a long input)
  Picture atlas;         // width H·tile, height L·tile
  Colormap colormap = Colormap::viridis;
  ValueRange range;      // the one colour bar's range (probability)
  ColorScale scale;      // how it was chosen: shared, fixed 0–1 or locked (one bar: never per head)
  std::vector<ModelHeadNumbers> numbers;  // [L·H], head (l, h) at l·H + h
  // Layers without a softmax (Qwen3-Next's Gated DeltaNet; AttentionStack::layer_kind): their kind per layer
  // ("" for softmax attention), each layer's own head count (places past it stay transparent), and the
  // second colour bar their signed matrices M are drawn with (the diverging colormap, symmetric about 0).
  // Their numbers are NaN: sink, previous-token score, distance and entropy are of probabilities.
  std::vector<std::string> layer_kind;  // [L] or empty
  std::vector<int> layer_heads;         // [L]
  ValueRange signed_range;
  std::string signed_word;              // "Gated DeltaNet weight" ("" without linear layers)
  int softmax_heads = 0;                // the softmax layers' H (= heads without linear layers)
  bool linear_layer(int l) const { return !layer_kind.empty() && !layer_kind[size_t(l)].empty(); }
  int kv_group(int head) const { return kv_group_of_head(head, softmax_heads, kv_heads); }
  bool has_softmax_layers() const {
    for (int l = 0; l < layers; ++l)
      if (!linear_layer(l)) return true;
    return false;
  }
  // A token set (ViewSettings::token_set, token_set.h; inactive when none, or when it names tokens past this
  // input): every thumbnail's reduced row (queries) or column (keys), coloured as `export --what model` colours
  // the panel's last row or column (the colour ranges include it). `strips` is one more small atlas: queries
  // [L rows, H·tile], thumbnail (l, h)'s row at (h·tile, l); keys [L·tile, H columns], its column at (h, l·tile).
  // strip_values [L·H] of [T] are the reduced values (tooltips).
  TokenSet token_set;
  Picture strips;
  std::vector<std::vector<float>> strip_values;
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
                                  const std::atomic<bool>* cancel = nullptr, ColorScale scale = {},
                                  const TokenSet& token_set = {});

// The set the model view draws for `set` on an input of `tokens` tokens: `set`, or an inactive one when it
// names tokens past the input (the input changed under it, the pictures not yet remade).
TokenSet model_view_token_set(const TokenSet& set, int tokens);

}  // namespace attnscope::gui
