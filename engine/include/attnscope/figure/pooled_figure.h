// pooled_figure.h — the overview of one head of a long input (model/head_maps.h PooledMap) as a figure and as
// numbers: `export --checkpoint … --long --what head:N --layer L` (and, next, the window's zoomable Heads view).
//   figure   one panel "layer l · head h", one cell per pooled block (no token labels: blocks of b tokens), masked
//            blocks in the masked colour, the colour bar titled with the pooling ("probability · max-pooled 4×4"
//            or "probability · exact cells")
//   numbers  [rows, cols] as pooled; masked blocks NaN in .npy and "nan" in CSV; CSV rows and columns are
//            labelled by their token ranges ("0–3")
// And many heads pooled alike (`export --long --what heads`: one layer's; `--what model`: every layer's), laid out
// as the stack's heads figure and Model view figure lay out theirs (see pooled_heads_figure).
#pragma once
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/figure/export.h"
#include "attnscope/model/head_maps.h"

namespace attnscope {

struct PooledFigureInput {
  const model::PooledMap* map = nullptr;
  int layer = 0, head = 0;
  std::string source;  // the model's name, for the caption
};

// The colour bar's title: "probability · max-pooled 4×4" (mean-pooled …, exact cells), in `words`' language.
std::string pooled_scale_title(const model::PooledMap& map, const FigureWords& words = {});
FigureSpec pooled_figure(const PooledFigureInput& in, const ExportRequest& request);
std::string pooled_caption(const PooledFigureInput& in, const FigureWords& words = {});
ExportArray pooled_array(const PooledFigureInput& in);
// PNG/SVG: the figure; CSV/.npy: pooled_array. Throws InputError for a scale outside 1–4.
ExportedFile render_pooled(const PooledFigureInput& in, const ExportRequest& request,
                           const TextRasterizer& text = default_text_rasterizer());
// check_export_path, render_pooled, then write_file_atomic.
ExportedFile export_pooled(const PooledFigureInput& in, const ExportRequest& request, const std::filesystem::path& path,
                           const TextRasterizer& text = default_text_rasterizer());

// ---- many heads: a layer's (ExportWhat::heads) or every layer's (ExportWhat::model) --------------------------
// One layer's heads, pooled alike (the same T, pooling and block).
struct PooledLayer {
  int layer = 0;
  int kv_heads = 1;  // the layer's K/V heads (MLA: one per head), for the panels' group frames
  std::vector<model::PooledMap> heads;
};
struct PooledHeadsInput {
  std::vector<PooledLayer> layers;  // heads: the one layer; model: every layer from 0
  std::string source;               // the model's name, for the caption
};

// The most blocks a side of an export of pooled heads: the on-demand mode's longest input (more is exact cells).
inline constexpr int max_pooled_pixels = model::max_on_demand_tokens;
// The blocks a side of each thumbnail of the pooled model figure unless asked otherwise (the command line's and
// the window's default): 16 layers × 32 heads of 128×128 blocks are 8.4 M values, and a thumbnail is drawn at about
// 44 pixels (model_view_matrix_side).
inline constexpr int default_model_pixels = 128;
// Throws InputError when `heads` heads of `tokens` tokens pooled to at most `pixels` blocks a side would hold more
// than limits::max_attention_cells values in all (naming the most blocks a side that fit), or for pixels outside
// 1…max_pooled_pixels. Words without the command line's flags: the window shows them too.
void check_pooled_heads_size(int heads, int tokens, int pixels);
// Every head of `layer` (−1: of every layer) pooled, one [T, T] map made and dropped at a time (pool_head).
// Throws InputError for a layer outside the model and as check_pooled_heads_size (before any map is made);
// Cancelled once *cancel is set (checked between heads).
PooledHeadsInput pool_heads(const model::HeadMaps& maps, int layer, model::Pooling pooling, int pixels,
                            const std::string& source, const std::atomic<bool>* cancel = nullptr);

// request.what == heads: the heads figure's layout (export_figure's): panels "head h · kv group g" framed in their
//   group's colour, in the automatic grid, coloured by request.color_scale as that figure is (shared: one bar over
//   every head, the default; per head: a bar each; fixed; locked), the bar titled with the pooling
//   ("probability · max-pooled 4×4"); no token labels (a cell is a block of tokens); masked blocks masked.
// request.what == model: the Model view figure's layout (model_view_figure's): row l = layer l, panels "l.h", one
//   colour bar for every thumbnail (per head is refused), titled with the pooling.
// Throws InputError for another `what`, no heads, or a per-head scale of the model figure.
FigureSpec pooled_heads_figure(const PooledHeadsInput& in, const ExportRequest& request);
std::string pooled_heads_caption(const PooledHeadsInput& in, const ExportRequest& request);
// heads: [H, rows, cols], blocks "head h (kv group g)", rows and columns labelled by their token ranges;
// model: [L, H, rows, cols] (a layer with fewer heads than the widest: NaN blocks). Masked blocks NaN.
ExportArray pooled_heads_array(const PooledHeadsInput& in, const ExportRequest& request);
// PNG/SVG: the figure; CSV/.npy: the array (the model has no CSV, as `--what model` has none). Throws InputError for
// a scale outside 1–4 or a colour scale that does not fit.
ExportedFile render_pooled_heads(const PooledHeadsInput& in, const ExportRequest& request,
                                 const TextRasterizer& text = default_text_rasterizer());
// check_export_path, render_pooled_heads, then write_file_atomic.
ExportedFile export_pooled_heads(const PooledHeadsInput& in, const ExportRequest& request,
                                 const std::filesystem::path& path,
                                 const TextRasterizer& text = default_text_rasterizer());

}  // namespace attnscope
