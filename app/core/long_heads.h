// long_heads.h — the Heads view of a long input (issue 38 item 6; model/head_maps.h): the pictures the compute
// worker makes from a pass that kept no [L, H, T, T] stack.
//
//   the layer's heads   each head's map recomputed (HeadMaps::head) and pooled to at most `pixels` blocks a
//                       side (pool_head, max or mean), coloured as `export --long --what head:N` colours it
//                       (pooled_figure.h: its own colour range, the masked colour for blocks with no unmasked
//                       cell), so that a saved figure of the window's pooled map is that export's
//   the zoom            the exact cells [row0, row0 + size) × [col0, col0 + size) of one head, for its tooltip's
//                       exact values and its token labels
// Only the layer on screen is made: a layer change re-pools its heads alone. One head's map is held at a time.
#pragma once
#include <atomic>
#include <cstdint>
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

// The export request the pictures are coloured with (and the window's Save writes): the CLI's defaults but the
// colormap.
ExportRequest long_export_request(Colormap colormap);

// Pools every head of `layer` to at most `pixels` blocks a side; with `zoom`, also that head's exact cells.
// Throws InputError for a layer or head outside the model; Cancelled once *cancel is set (checked between heads).
LongHeads make_long_heads(const model::HeadMaps& maps, const std::string& model_name, int layer,
                          model::Pooling pooling, int pixels, Colormap colormap, const std::optional<LongZoom>& zoom,
                          const std::vector<std::string>& labels, const std::atomic<bool>* cancel);
// `heads` with another zoom (its pooled heads kept).
void set_long_zoom(LongHeads& heads, const model::HeadMaps& maps, const std::optional<LongZoom>& zoom);

}  // namespace attnscope::gui
