// line_plot.h — line plots drawn with the draw list, readable on a projector: a framed area, five ticks
// on each axis with numbers in the UI font, the axis names, a legend under it that wraps, and a tooltip
// that names the nearest point of each series under the pointer. Used by the Training window (loss,
// induction scores, loss against KV bytes) and the Positions view (wavelengths, score against distance,
// ALiBi biases).
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

namespace attnscope::gui {

struct Series {
  std::string label;
  ImU32 color = 0;
  std::vector<float> x, y;  // [points]
};

struct LinePlotOptions {
  float y_lo = 0, y_hi = 0;     // a fixed y range when y_lo < y_hi, else the data's (padded)
  bool y_from_zero = true;      // with the data's range: a non-negative series starts at 0 (a loss)
  bool x_from_zero = true;      // the x axis starts at 0, else at the smallest x
  bool integer_x = true;        // x ticks are whole numbers (steps, distances, pairs)
  bool log_y = false;           // logarithmic y axis (every y > 0; others are not drawn)
  bool points = false;          // a dot on every point (few points: one per dimension pair)
  const char* hover_format = nullptr;  // printf of one series' point in the tooltip: label, x, y ("%s: %g → %g")
  bool zero_line = false;       // a stronger line at y = 0 when it is inside the range
};

// Colours of series: the kv-group palette, so run and head colours read the same everywhere.
ImU32 SeriesColor(int i);

// A tick's number: 3 significant figures, exponent form beyond 1e5 or below 1e-3.
std::string TickText(float v);

// Rows the legend of these series takes at this width (as SameLineIfFits wraps it).
int LegendRows(const std::vector<Series>& series, float width);

// Fills the available width; `total_height` holds the plot, its ticks, names and legend.
void DrawLinePlot(const char* id, const std::vector<Series>& series, const char* x_name, const char* y_name,
                  float total_height, const LinePlotOptions& options = {});

}  // namespace attnscope::gui
