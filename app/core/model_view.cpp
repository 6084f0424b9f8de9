// model_view.cpp — the Model view's atlas (the engine's model_view_figure colours, tile by tile) and
// every head's numbers (model_view.h's legend).
#include "core/model_view.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "attnscope/attention/head_stats.h"
#include "attnscope/analysis/head_patterns.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/export.h"

namespace attnscope::gui {

ModelHeadNumbers model_head_numbers(const Eigen::Ref<const Mat>& p) {
  const int t = int(p.rows());
  ModelHeadNumbers out;
  if (t == 0) return out;
  double distance = 0, entropy = 0;
  for (int i = 0; i < t; ++i) {
    for (int j = 0; j < t; ++j) distance += double(p(i, j)) * std::abs(i - j);
    entropy += row_entropy(p.row(i).data(), t);
  }
  out.attention_sink = attention_sink(p);  // head_stats.h: the Head analysis window's and lesson 6's sink
  out.previous_token = t >= 2 ? previous_token_score(p) : std::numeric_limits<double>::quiet_NaN();  // lesson 6's score
  out.mean_distance = distance / t;
  out.entropy = entropy / t;
  return out;
}

TokenSet model_view_token_set(const TokenSet& set, int tokens) {
  if (!set.active() || std::any_of(set.tokens.begin(), set.tokens.end(), [tokens](int t) { return t < 0 || t >= tokens; }))
    return TokenSet{};
  return set;
}

ModelViewPictures make_model_view(const model::AttentionStack& stack, Colormap colormap,
                                  const std::atomic<bool>* cancel, ColorScale scale, const TokenSet& token_set) {
  if (scale.mode == ScaleMode::per_head) scale.mode = ScaleMode::shared;
  ExportRequest request;
  request.what = ExportWhat::model;
  request.colormap = colormap;
  request.color_scale = scale;
  request.caption = false;
  request.token_set = model_view_token_set(token_set, stack.tokens);
  FigureSpec figure = model_view_figure(stack, request);  // checks the stack's shape

  ModelViewPictures out;
  out.layers = stack.layers;
  out.heads = stack.heads;
  out.kv_heads = stack.kv_heads;
  out.tokens = stack.tokens;
  out.causal = stack.causal;
  out.colormap = colormap;
  out.scale = scale;
  out.layer_kind = stack.layer_kind;
  for (int l = 0; l < stack.layers; ++l) out.layer_heads.push_back(stack.layer_heads(l));
  out.heads = stack.most_heads();
  out.softmax_heads = stack.heads;
  // The probability bar first (when a layer has one), then the signed matrices' (model_view_figure's order).
  const bool soft = out.has_softmax_layers();
  out.range = soft ? figure.colorbars.front().range : ValueRange{0.0f, 1.0f};
  if (stack.has_linear_layers()) {
    out.signed_range = figure.colorbars.back().range;
    for (int l = 0; l < stack.layers && out.signed_word.empty(); ++l)
      if (stack.linear_layer(l)) out.signed_word = stack.layer_kind[size_t(l)] + " weight";
  }
  const int most = std::max(stack.layers, out.heads);
  if (most > model_view_atlas_max_side / 2)
    throw InputError("the model view draws at most " + std::to_string(model_view_atlas_max_side / 2) +
                     " layers and heads (2 pixels a head); this one has " + std::to_string(stack.layers) + " layers × " +
                     std::to_string(out.heads) + " heads: look at one layer in the Heads view");
  out.tile = std::min(stack.tokens, model_view_atlas_max_side / most);
  const int s = out.tile, t = stack.tokens;
  Picture& atlas = out.atlas;
  atlas.width = out.heads * s;
  atlas.height = stack.layers * s;
  atlas.range = out.range;
  atlas.pixels.resize(size_t(atlas.width) * size_t(atlas.height));
  out.numbers.resize(figure.panels.size());
  out.token_set = request.token_set;
  const bool query_set = out.token_set.active() && out.token_set.axis == TokenSetAxis::queries;
  const bool key_set = out.token_set.active() && out.token_set.axis == TokenSetAxis::keys;
  if (query_set || key_set) {
    out.strips.width = query_set ? out.heads * s : out.heads;
    out.strips.height = query_set ? stack.layers : stack.layers * s;
    out.strips.range = out.range;
    out.strips.pixels.resize(size_t(out.strips.width) * size_t(out.strips.height));  // blank places stay transparent
    out.strip_values.resize(figure.panels.size());
  }

  // Tile pixel k of s shows cell ⌊(k + ½)·T / s⌋: every cell when s = T, else the nearest one.
  std::vector<int> cell_of(static_cast<size_t>(s));
  for (int k = 0; k < s; ++k) cell_of[size_t(k)] = std::min(t - 1, int((int64_t(2 * k + 1) * t) / (2 * s)));
  const int panels = int(figure.panels.size());
  const bool big = int64_t(panels) * int64_t(t) * int64_t(t) >= (int64_t(1) << 20);
  std::atomic<bool> cancelled{false};
#pragma omp parallel for schedule(dynamic) if (big)
  for (int n = 0; n < panels; ++n) {
    if (cancel && cancel->load()) {
      cancelled = true;
      continue;
    }
    const int l = n / out.heads, h = n % out.heads;
    if (figure.panels[size_t(n)].blank) {  // past this layer's heads: transparent, no numbers
      constexpr double nan = std::numeric_limits<double>::quiet_NaN();
      out.numbers[size_t(n)] = {nan, nan, nan, nan};
      continue;
    }
    const std::vector<Rgba> colors = panel_colors(figure, size_t(n));
    const size_t stride = size_t(figure.panels[size_t(n)].cols);  // T, or T + 1 with a set of keys' column
    for (int y = 0; y < s; ++y) {
      const Rgba* row = colors.data() + size_t(cell_of[size_t(y)]) * stride;
      Rgba* dst = atlas.pixels.data() + (size_t(l) * size_t(s) + size_t(y)) * size_t(atlas.width) + size_t(h) * size_t(s);
      for (int x = 0; x < s; ++x) dst[x] = row[cell_of[size_t(x)]];
    }
    // The set's strip: the panel's last row (queries) or column (keys), sampled as the thumbnail is.
    if (query_set || key_set) {
      const std::vector<float>& values = figure.panels[size_t(n)].values;
      std::vector<float>& strip = out.strip_values[size_t(n)];
      for (int k = 0; k < t; ++k) strip.push_back(values[query_set ? size_t(t) * stride + size_t(k) : size_t(k) * stride + size_t(t)]);
      for (int k = 0; k < s; ++k) {
        const size_t cell = size_t(cell_of[size_t(k)]);
        const Rgba c = colors[query_set ? size_t(t) * stride + cell : cell * stride + size_t(t)];
        if (query_set) out.strips.pixels[size_t(l) * size_t(out.strips.width) + size_t(h) * size_t(s) + size_t(k)] = c;
        else out.strips.pixels[(size_t(l) * size_t(s) + size_t(k)) * size_t(out.strips.width) + size_t(h)] = c;
      }
    }
    if (stack.linear_layer(l)) {  // signed matrices: no probability numbers to give
      constexpr double nan = std::numeric_limits<double>::quiet_NaN();
      out.numbers[size_t(n)] = {nan, nan, nan, nan};
    } else {
      out.numbers[size_t(n)] = model_head_numbers(stack.attention(l, h));
    }
    std::vector<float>().swap(figure.panels[size_t(n)].values);  // a long input's copy goes as soon as it is drawn
  }
  if (cancelled) throw Cancelled();
  return out;
}

}  // namespace attnscope::gui
