// pooled_figure.h — the overview of one head of a long input (model/head_maps.h PooledMap) as a figure and as
// numbers: `export --checkpoint … --long --what head:N --layer L` (and, next, the window's zoomable Heads view).
//   figure   one panel "layer l · head h", one cell per pooled block (no token labels: blocks of b tokens), masked
//            blocks in the masked colour, the colour bar titled with the pooling ("probability · max-pooled 4×4"
//            or "probability · exact cells")
//   numbers  [rows, cols] as pooled; masked blocks NaN in .npy and "nan" in CSV; CSV rows and columns are
//            labelled by their token ranges ("0–3")
#pragma once
#include <filesystem>
#include <string>

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

}  // namespace attnscope
