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

Picture long_head_picture(const model::PooledMap& pooled, int layer, int head, const std::string& model_name,
                          Colormap colormap) {
  // Coloured as the export colours it: the same figure's panel.
  const FigureSpec f = pooled_figure(PooledFigureInput{&pooled, layer, head, model_name}, long_export_request(colormap));
  Picture p;
  p.width = f.panels[0].cols;
  p.height = f.panels[0].rows;
  p.range = f.colorbars[0].range;
  p.pixels = panel_colors(f, 0);
  return p;
}

int64_t pooled_bytes(const model::PooledMap& pooled) {
  return int64_t(pooled.values.size()) * int64_t(sizeof(float)) + int64_t(pooled.masked.size()) + int64_t(sizeof pooled);
}

void LongHeadCache::clear() {
  entries_.clear();
  used_.clear();
  bytes_ = 0;
}

void LongHeadCache::set_sizes(std::vector<int> pixels) {
  std::erase_if(pixels, [](int p) { return p <= 0; });
  std::sort(pixels.begin(), pixels.end());
  pixels.erase(std::unique(pixels.begin(), pixels.end()), pixels.end());
  sizes_ = std::move(pixels);
}

std::shared_ptr<const model::PooledMap> LongHeadCache::find(int layer, int head, model::Pooling pooling, int pixels) {
  const auto it = entries_.find(Key{layer, head, pooling, pixels});
  if (it == entries_.end()) return nullptr;
  used_.splice(used_.begin(), used_, it->second.used);  // most recently used
  return it->second.pooled;
}

std::shared_ptr<const model::PooledMap> LongHeadCache::peek(int layer, int head, model::Pooling pooling,
                                                            int pixels) const {
  const auto it = entries_.find(Key{layer, head, pooling, pixels});
  return it == entries_.end() ? nullptr : it->second.pooled;
}

bool LongHeadCache::has(int layer, int head) const {
  for (const int p : sizes_)
    for (const model::Pooling pooling : {model::Pooling::max, model::Pooling::mean})
      if (!entries_.contains(Key{layer, head, pooling, p})) return false;
  return true;
}

int64_t LongHeadCache::head_bytes(int tokens) const {
  int64_t bytes = 0;
  for (const int p : sizes_) {
    const int64_t b = model::pool_block(tokens, p), side = (tokens + b - 1) / b;
    bytes += 2 * (side * side * int64_t(sizeof(float) + 1) + int64_t(sizeof(model::PooledMap)));
  }
  return bytes;
}

void LongHeadCache::keep(const Key& key, model::PooledMap pooled) {
  if (const auto it = entries_.find(key); it != entries_.end()) {  // made again: the new one replaces it
    bytes_ -= it->second.bytes;
    used_.erase(it->second.used);
    entries_.erase(it);
  }
  used_.push_front(key);
  Entry e;
  e.bytes = pooled_bytes(pooled);
  e.pooled = std::make_shared<const model::PooledMap>(std::move(pooled));
  e.used = used_.begin();
  bytes_ += e.bytes;
  entries_.emplace(key, std::move(e));
}

void LongHeadCache::evict(int keep_newest) {
  // The least recently used first, never the newest `keep_newest` (what the caller just made).
  while (bytes_ > ceiling_ && int(used_.size()) > keep_newest) {
    const auto it = entries_.find(used_.back());
    bytes_ -= it->second.bytes;
    entries_.erase(it);
    used_.pop_back();
    ++evicted_;
  }
}

std::shared_ptr<const model::PooledMap> LongHeadCache::make(const model::HeadMaps& maps, int layer, int head,
                                                            model::Pooling pooling, int pixels) {
  std::vector<int> sizes = sizes_;
  if (std::find(sizes.begin(), sizes.end(), pixels) == sizes.end()) sizes.push_back(pixels);
  const Mat map = maps.head(layer, head);  // the costly part, once for every pooling
  ++maps_made_;
  const model::MapMask mask = maps.mask(layer);
  int made = 0;
  for (const int p : sizes)
    for (const model::Pooling pool : {model::Pooling::max, model::Pooling::mean}) {
      keep(Key{layer, head, pool, p}, model::pool_map(map, mask, pool, p));
      ++made;
    }
  // The one asked for is the newest: what this call made is never evicted by it.
  used_.splice(used_.begin(), used_, entries_.at(Key{layer, head, pooling, pixels}).used);
  evict(made);
  return entries_.at(Key{layer, head, pooling, pixels}).pooled;
}

std::shared_ptr<const model::PooledMap> LongHeadCache::get(const model::HeadMaps& maps, int layer, int head,
                                                           model::Pooling pooling, int pixels) {
  if (auto found = find(layer, head, pooling, pixels)) return found;
  return make(maps, layer, head, pooling, pixels);
}

LongOverview make_long_overview(const model::HeadMaps& maps, const LongHeadCache& cache, const std::string& model_name,
                                model::Pooling pooling, int pixels, Colormap colormap, const LongOverview* previous) {
  LongOverview o;
  o.layers = maps.layer_count();
  o.heads = o.layers > 0 ? maps.heads(0) : 0;
  for (int l = 1; l < o.layers; ++l) o.heads = std::max(o.heads, maps.heads(l));
  o.tokens = maps.tokens;
  o.pixels = pixels;
  o.pooling = pooling;
  o.colormap = colormap;
  const size_t n = size_t(o.layers) * size_t(o.heads);
  o.pooled.resize(n);
  o.pictures.resize(n);
  const bool reuse = previous && previous->layers == o.layers && previous->heads == o.heads &&
                     previous->colormap == colormap;
  for (int l = 0; l < o.layers; ++l) {
    bool every = true;
    for (int h = 0; h < maps.heads(l); ++h) {
      const bool has = cache.has(l, h);
      o.heads_cached += has;
      every = every && has;
      if (pixels <= 0) continue;
      const size_t i = size_t(l) * size_t(o.heads) + size_t(h);
      // peek, not find: drawing the overview is not a reason to keep a head longer.
      o.pooled[i] = cache.peek(l, h, pooling, pixels);
      if (!o.pooled[i]) continue;
      if (reuse && previous->pooled[i] == o.pooled[i]) o.pictures[i] = previous->pictures[i];
      else o.pictures[i] = std::make_shared<const Picture>(long_head_picture(*o.pooled[i], l, h, model_name, colormap));
    }
    o.layers_cached += every;
  }
  o.cache_bytes = cache.bytes();
  o.cache_ceiling = cache.ceiling();
  int total = 0;
  for (int l = 0; l < o.layers; ++l) total += maps.heads(l);
  o.cache_full = o.heads_cached < total && cache.bytes() + cache.head_bytes(maps.tokens) > cache.ceiling();
  return o;
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
                          const std::vector<std::string>& labels, const std::atomic<bool>* cancel,
                          LongHeadCache& cache) {
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
  const int H = maps.heads(layer);
  for (int h = 0; h < H; ++h) {
    if (cancel && cancel->load()) throw Cancelled();
    out.heads.push_back(*cache.get(maps, layer, h, pooling, pixels));
    out.pictures.push_back(long_head_picture(out.heads.back(), layer, h, model_name, colormap));
  }
  if (cancel && cancel->load()) throw Cancelled();
  set_long_zoom(out, maps, zoom);
  return out;
}

}  // namespace attnscope::gui
