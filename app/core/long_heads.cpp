// long_heads.cpp — the Heads view's pictures of a long input (long_heads.h).
#include "core/long_heads.h"

#include <algorithm>

#include "attnscope/core/error.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/pooled_figure.h"

namespace attnscope::gui {

LongZoom long_zoom_around(int tokens, int head, int row, int col) {
  LongZoom z;
  z.head = head;
  z.size = std::min(tokens, long_zoom_cells);
  z.row0 = std::clamp(row - z.size / 2, 0, tokens - z.size);
  z.col0 = std::clamp(col - z.size / 2, 0, tokens - z.size);
  return z;
}

ExportRequest long_export_request(Colormap colormap) {
  ExportRequest r;
  r.colormap = colormap;
  return r;
}

void set_long_zoom(LongHeads& out, const model::HeadMaps& maps, const std::optional<LongZoom>& zoom) {
  out.zoom = zoom;
  out.zoom_values = Mat();
  out.zoom_picture = Picture{};
  if (!zoom) return;
  const LongZoom& z = *zoom;
  const int T = maps.tokens;
  // A zoom of another input or layer (a shorter text, fewer heads) is dropped: the view then closes it.
  if (z.head < 0 || z.head >= int(out.heads.size()) || z.size < 1 || z.row0 < 0 || z.col0 < 0 || z.row0 + z.size > T ||
      z.col0 + z.size > T) {
    out.zoom.reset();
    return;
  }
  const Mat map = maps.head(out.layer, z.head);  // one head's [T, T], dropped at the end
  out.zoom_values = map.block(z.row0, z.col0, z.size, z.size);
  // The cells on the head's own colour range (its pooled picture's), masked cells in the masked colour.
  const ValueRange range = out.pictures[size_t(z.head)].range;
  const model::MapMask mask = maps.mask(out.layer);
  Picture& p = out.zoom_picture;
  p.width = p.height = z.size;
  p.range = range;
  p.pixels.resize(size_t(z.size) * size_t(z.size));
  for (int r = 0; r < z.size; ++r)
    for (int c = 0; c < z.size; ++c)
      p.pixels[size_t(r) * size_t(z.size) + size_t(c)] =
          mask.masked(z.row0 + r, z.col0 + c) ? masked_color(out.colormap)
                                              : colormap_lookup(out.colormap, normalise(out.zoom_values(r, c), range));
}

LongHeads make_long_heads(const model::HeadMaps& maps, const std::string& model_name, int layer,
                          model::Pooling pooling, int pixels, Colormap colormap, const std::optional<LongZoom>& zoom,
                          const std::vector<std::string>& labels, const std::atomic<bool>* cancel) {
  LongHeads out;
  out.model_name = model_name;
  out.tokens = maps.tokens;
  out.layers = maps.layer_count();
  require(layer >= 0 && layer < out.layers, "layer " + std::to_string(layer) + " does not exist: the model has " +
                                                std::to_string(out.layers) + " layers (0–" +
                                                std::to_string(out.layers - 1) + ")");
  out.layer = layer;
  out.kv_heads = maps.layers[size_t(layer)].kv_heads;
  out.window = maps.mask(layer).window;
  out.kept_bytes = maps.kept_bytes();
  out.pooling = pooling;
  out.pixels = pixels;
  out.colormap = colormap;
  out.labels = labels;
  const ExportRequest request = long_export_request(colormap);
  const int H = maps.heads(layer);
  for (int h = 0; h < H; ++h) {
    if (cancel && cancel->load()) throw Cancelled();
    out.heads.push_back(model::pool_head(maps, layer, h, pooling, pixels));
    // Coloured as the export colours it: the same figure's panel.
    const FigureSpec f = pooled_figure(PooledFigureInput{&out.heads.back(), layer, h, model_name}, request);
    Picture p;
    p.width = f.panels[0].cols;
    p.height = f.panels[0].rows;
    p.range = f.colorbars[0].range;
    p.pixels = panel_colors(f, 0);
    out.pictures.push_back(std::move(p));
  }
  if (cancel && cancel->load()) throw Cancelled();
  set_long_zoom(out, maps, zoom);
  return out;
}

}  // namespace attnscope::gui
