// zoom.h — zoom, pan and a token range for a heatmap view (SPEC-free: a way of looking at one result).
//
// Every heatmap view keeps one ZoomState: the Heads view (with its head opened large), the Model view
// and Compare A/B share one, as they draw the same input's tokens; the relative-position views and the
// convolution view each have their own. None of it is in the scene or the undo history: it changes with
// every wheel step and stops fitting when the input changes length (then it returns to every token).
//
//   wheel over a heatmap     zooms every heatmap of the view about the pointer (the cell under it stays)
//   drag in a zoomed view    pans by the cells dragged (a press and release without a drag is a click)
//   double-click             resets the zoom (the Heads grid opens a head large instead)
//   drag on the key labels   restricts queries and keys to the tokens dragged over (token views)
//   "tokens i–j…"            the same range typed; "numbers in cells" beside it
//
// Pictures stay whole (their colours keep the whole input's range); a view draws the shown part of each
// texture (HeatmapGridSpec::first_row/first_col/texture_rows/texture_cols).
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "gui/heatmap_grid.h"

namespace attnscope::gui {

struct AppState;

struct ZoomState {
  int token_first = 0, token_last = -1;  // token views: the range, both ends included (−1: every token)
  int zoom_cols = 0;                     // columns across a zoomed view (0: not zoomed)
  int zoom_row = 0, zoom_col = 0;        // its first row and column
  ImVec2 drag_from;                      // pointer when a pan began, and the first row and column then
  int drag_row = 0, drag_col = 0;
  int axis_from = -1;                    // a drag on the key labels: the token where it began (−1: none)
  int axis_to = -1;                      // and the one under the pointer now
  bool numbers = false;                  // numbers in cells (when cells are big enough)
  int edit_first = 0, edit_last = 0;     // the range fields while typed in
  bool editing_first = false, editing_last = false;
  std::string range_error;               // a refused range, shown under the toolbar
};

// What a view draws of pictures of rows × cols cells: the range on each axis and, within it, the
// window shown.
struct Shown {
  int row_lo = 0, row_hi = 0, col_lo = 0, col_hi = 0;  // the range (every cell without one)
  int rows = 0, cols = 0;                              // cells shown down and across
  int row = 0, col = 0;                                // the first shown
  int texture_rows = 0, texture_cols = 0;              // the whole pictures
  bool zoomed = false;
  bool token_axes = false;                             // the columns (and square rows) are tokens
  // The range as the toolbar names it (the key axis's).
  int lo() const { return col_lo; }
  int hi() const { return col_hi; }
};

// Token pictures: rows × tokens, where rows is tokens (queries) or 1 (one query's row). The range applies
// to the keys, and to the queries when rows == tokens. A range that no longer fits is dropped.
Shown ShownTokens(ZoomState& z, int tokens, int rows = -1);
// 2D pictures (grids, images): no range, zoom only.
Shown ShownCells(ZoomState& z, int rows, int cols);

// Puts the shown part into the spec: the texture window, the labels (copied into row_labels and
// col_labels), the selected row and marked cell moved into the window, panning and the key-axis drag.
void ApplyShown(HeatmapGridSpec& spec, const Shown& shown, const ZoomState& z, std::vector<std::string>& row_labels,
                std::vector<std::string>& col_labels);

// After the grid is drawn: the wheel zooms, a drag pans, a drag on the key labels picks a range, and —
// when double_click_resets — a double-click resets the zoom. Returns true when the range changed.
bool ZoomAndPan(ZoomState& z, const Shown& shown, const HeatmapGridResult& hit, bool double_click_resets);

// A hit's row and column in the whole pictures (they come in as drawn).
void ToWholePicture(HeatmapGridResult& hit, const Shown& shown);

// On the toolbar's line: for token views (tokens > 0) a button naming the tokens shown ("tokens 0–15…")
// that opens the range popup (first and last typed, "every token", "numbers in cells"); for 2D views a
// "numbers in cells" box; then "reset zoom", greyed out until the wheel zooms. Control ids in the layout
// record: "<id>.tokens", "<id>.token_first", "<id>.token_last", "<id>.every_token", "<id>.numbers",
// "<id>.reset_zoom".
void DrawZoomBar(AppState& state, ZoomState& z, const Shown& shown, const std::string& id);

// Records the key labels' band (a drag there picks a range) as control "<id>.key_axis".
void RecordKeyAxis(AppState& state, const HeatmapGridResult& hit, const std::string& id);

// A cell's number as drawn in it: two decimals ("-0.00" as "0.00"), in black or white, whichever reads on
// `under` (the cell's colour). False for a value with no number (masked, NaN).
bool CellNumber(float value, Rgba under, std::string& text, ImU32& color);

// The tooltip's line for the pointer actions of a zoomable view.
const char* ZoomHint(bool token_axes);

}  // namespace attnscope::gui
