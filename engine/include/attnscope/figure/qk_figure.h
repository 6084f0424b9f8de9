// qk_figure.h — "why a head attends" (model/qk_attribution.h) as a horizontal bar chart: the Heads view's panel
// draws these bars, and its Save PNG / SVG and `export --what qk-attribution --format png|svg` write this figure
// (the same bytes for the same cell, words and scale).
//
//   title    layer ℓ · head h · query i «token» → key j «token»
//   a line   the score the head draws, and (Gemma 2) that the parts are attributed before the soft-cap
//   bars     the n entries of the query-part × key-part table of largest |value| ("L2.H3 attn × embedding"),
//            largest first, signed about one zero line on the diverging colours (blue below 0, red above), each
//            with its value; then "other (N parts)", the sum of every other entry (when there are any)
//   a line   "parts sum to s" with the table's sum
// Layers, heads and positions from 0.
#pragma once
#include <string>
#include <vector>

#include "attnscope/figure/export.h"
#include "attnscope/figure/image.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/model/qk_attribution.h"

namespace attnscope {

// One bar: a query part × key part entry, or the rest summed (other_parts > 0).
struct QkBar {
  std::string label;     // "L2.H3 attn × embedding", or "" for the rest (the caller words it: other (N parts))
  double value = 0;
  int other_parts = 0;   // > 0: this bar is the sum of that many entries
};

// The `n` entries of largest |value| (largest_entries), then one bar summing all the others when there are two or
// more (a single one left over is a bar of its own).
// The bars' values sum to the table's sum. n ≥ 1 (else InputError).
std::vector<QkBar> qk_bars(const model::QkAttribution& a, int n);

// The bars the panel and the figure show.
inline constexpr int qk_figure_bars = 8;

struct QkFigureInput {
  const model::QkAttribution* attribution = nullptr;
  std::vector<std::string> labels;  // the input's token labels ([T]; may be empty: the positions alone)
};

// PNG or SVG of the bar chart at request.scale (1–4), words in request.words; InputError for another format, a
// scale outside 1–4 or a missing attribution.
ExportedFile render_qk_figure(const QkFigureInput& in, const ExportRequest& request,
                              const TextRasterizer& text = default_text_rasterizer());

// The figure's lines of text (also the panel's): the title, the score line and the sum line.
std::string qk_figure_title(const QkFigureInput& in, const FigureWords& words = {});
std::string qk_score_line(const model::QkAttribution& a, const FigureWords& words = {});
std::string qk_sum_line(const model::QkAttribution& a, const FigureWords& words = {});
// "other (N parts)" in the figure's words.
std::string qk_other_label(int parts, const FigureWords& words = {});

}  // namespace attnscope
