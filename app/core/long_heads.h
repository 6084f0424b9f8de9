// long_heads.h — the Heads view of a long input (issue 38 item 6; model/head_maps.h): the pictures the compute
// worker makes from a pass that kept no [L, H, T, T] stack.
//
//   the layer's heads   each head's map recomputed (HeadMaps::head) and pooled to at most `pixels` blocks a
//                       side (pool_head, max or mean), coloured as `export --long --what head:N` colours it
//                       (pooled_figure.h: its own colour range, the masked colour for blocks with no unmasked
//                       cell), so that a saved figure of the window's pooled map is that export's
//   the zoom            the exact cells [row0, row0 + size) × [col0, col0 + size) of one head, for its tooltip's
//                       exact values and its token labels
//   the cache           every head's map, when made, is pooled at once by max AND mean to each size a view asks
//                       (the Heads view's tiles, the Model view's thumbnails): the map is the costly part (a [T, T]
//                       product and softmax), pooling it again is cheap. A layer change or a max|mean switch whose
//                       heads are cached only colours them. Bounded: at most long_cache_ceiling bytes of pooled
//                       maps, the least recently used evicted first.
//   the overview        every head of every layer pooled to the Model view's thumbnail size (as far as cached), each
//                       coloured as the Heads view colours it; the prefetch's progress.
// One head's map is held at a time.
#pragma once
#include <atomic>
#include <compare>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "attnscope/figure/export.h"
#include "attnscope/model/head_maps.h"
#include "core/pictures.h"

namespace attnscope::gui {

// A window of exact cells of one head: rows (queries) row0…row0+size−1, columns (keys) col0…col0+size−1.
struct LongZoom {
  int head = 0, row0 = 0, col0 = 0, size = 0;
  bool operator==(const LongZoom&) const = default;
};

// The side of the zoom's window of exact cells (or T when shorter).
inline constexpr int long_zoom_cells = 48;

// The zoom centred on (row, col) of a T-token map, moved inside the map.
LongZoom long_zoom_around(int tokens, int head, int row, int col);

struct LongHeads {
  std::string model_name;
  int tokens = 0, layer = 0, layers = 0, kv_heads = 0;
  int window = 0;            // the layer's sliding window (0: global)
  int64_t kept_bytes = 0;    // the q and k the pass kept (HeadMaps::kept_bytes)
  model::Pooling pooling = model::Pooling::max;
  int pixels = 0;            // the blocks a side asked for
  Colormap colormap = Colormap::viridis;
  std::vector<model::PooledMap> heads;  // [H] of `layer`
  std::vector<Picture> pictures;        // [H] their colours
  std::vector<std::string> labels;      // [T] the tokens
  std::optional<LongZoom> zoom;         // with its exact cells and their picture
  Mat zoom_values;
  Picture zoom_picture;
};

// A pooled head coloured as `export --long --what head:N` colours it (its own range, masked blocks in the masked
// colour).
Picture long_head_picture(const model::PooledMap& pooled, int layer, int head, const std::string& model_name,
                          Colormap colormap);

// The bytes of pooled maps the cache keeps at most (512 MiB): 16 layers × 32 heads of Llama-3.2-1B at 256 blocks a
// side by max and mean, with 64-block thumbnails, take 348 MiB.
inline constexpr int64_t long_cache_ceiling = int64_t(512) << 20;

// Pooled heads of one forward pass, by (layer, head, pooling, blocks a side); least recently used evicted first.
// Not thread-safe: the compute worker's alone.
class LongHeadCache {
 public:
  explicit LongHeadCache(int64_t ceiling = long_cache_ceiling) : ceiling_(ceiling) {}
  // Forgets every head (another pass); the counters stay.
  void clear();
  // The sizes each head's map is pooled to when made (both poolings at each; duplicates and ≤ 0 dropped).
  void set_sizes(std::vector<int> pixels);
  const std::vector<int>& sizes() const { return sizes_; }
  // The head pooled so, if cached (marks it used), else null.
  std::shared_ptr<const model::PooledMap> find(int layer, int head, model::Pooling pooling, int pixels);
  // The same without marking it used.
  std::shared_ptr<const model::PooledMap> peek(int layer, int head, model::Pooling pooling, int pixels) const;
  // True when the head is cached by both poolings at every size of set_sizes().
  bool has(int layer, int head) const;
  // Makes the head's map once (HeadMaps::head) and pools it by max and mean to every size of set_sizes() and to
  // `pixels` (pool_map: pool_head's pooling of the same map), keeping each; then evicts beyond the ceiling (never
  // what this call made). Returns the one asked for.
  std::shared_ptr<const model::PooledMap> make(const model::HeadMaps& maps, int layer, int head, model::Pooling pooling,
                                               int pixels);
  // find(), else make().
  std::shared_ptr<const model::PooledMap> get(const model::HeadMaps& maps, int layer, int head, model::Pooling pooling,
                                              int pixels);
  // The bytes a head takes cached at every size of set_sizes() by both poolings, for a T-token map.
  int64_t head_bytes(int tokens) const;
  int64_t bytes() const { return bytes_; }
  int64_t ceiling() const { return ceiling_; }
  size_t entries() const { return entries_.size(); }
  int64_t maps_made() const { return maps_made_; }  // HeadMaps::head calls, for the tests and the bench
  int64_t evicted() const { return evicted_; }

 private:
  struct Key {
    int layer = 0, head = 0;
    model::Pooling pooling = model::Pooling::max;
    int pixels = 0;
    auto operator<=>(const Key&) const = default;
  };
  struct Entry {
    std::shared_ptr<const model::PooledMap> pooled;
    std::list<Key>::iterator used;  // its place in used_
    int64_t bytes = 0;
  };
  void keep(const Key& key, model::PooledMap pooled);
  void evict(int keep_newest);
  int64_t ceiling_;
  std::vector<int> sizes_;
  std::map<Key, Entry> entries_;
  std::list<Key> used_;  // front: most recently used
  int64_t bytes_ = 0, maps_made_ = 0, evicted_ = 0;
};

// The bytes one pooled map takes (its values and its mask).
int64_t pooled_bytes(const model::PooledMap& pooled);

// Every layer's heads as far as cached, pooled to the Model view's thumbnails (`pixels` blocks a side, 0: no
// thumbnails asked) by `pooling`, and how far the prefetch went.
struct LongOverview {
  int layers = 0, heads = 0, tokens = 0;
  int pixels = 0;
  model::Pooling pooling = model::Pooling::max;
  Colormap colormap = Colormap::viridis;
  std::vector<std::shared_ptr<const model::PooledMap>> pooled;  // [L·H] layer-major; null: not made yet
  std::vector<std::shared_ptr<const Picture>> pictures;         // [L·H] their colours
  int heads_cached = 0;   // heads cached at the Heads view's and the thumbnails' sizes, both poolings
  int layers_cached = 0;  // layers whose every head is
  int64_t cache_bytes = 0, cache_ceiling = 0;
  bool cache_full = false;  // heads are left and one more would pass the ceiling: the prefetch stops there
  const model::PooledMap* at(int layer, int head) const { return pooled[size_t(layer) * size_t(heads) + size_t(head)].get(); }
};

// The overview of `maps` from what `cache` holds (no map made): thumbnails at `pixels` (0: none) by `pooling`,
// pictures of `previous` reused where the same pooled map is drawn in the same colormap.
LongOverview make_long_overview(const model::HeadMaps& maps, const LongHeadCache& cache, const std::string& model_name,
                                model::Pooling pooling, int pixels, Colormap colormap, const LongOverview* previous);

// The export request the pictures are coloured with (and the window's Save writes): the CLI's defaults but the
// colormap.
ExportRequest long_export_request(Colormap colormap);

// Pools every head of `layer` to at most `pixels` blocks a side; with `zoom`, also that head's exact cells.
// Throws InputError for a layer or head outside the model; Cancelled once *cancel is set (checked between heads).
// Heads are taken from `cache` (made there when missing).
LongHeads make_long_heads(const model::HeadMaps& maps, const std::string& model_name, int layer,
                          model::Pooling pooling, int pixels, Colormap colormap, const std::optional<LongZoom>& zoom,
                          const std::vector<std::string>& labels, const std::atomic<bool>* cancel,
                          LongHeadCache& cache);
// `heads` with another zoom (its pooled heads kept).
void set_long_zoom(LongHeads& heads, const model::HeadMaps& maps, const std::optional<LongZoom>& zoom);

}  // namespace attnscope::gui
