// heatmap_grid.h — a grid of equally sized heatmaps (one per head), drawn as GL textures: each in a
// coloured frame with a caption under it (one caption form for the whole grid), row labels down the
// left of the first column, column labels along the top of the first row (thinned when cells are
// small; upright when every one fits its column, else turned along it — CJK one character under the
// other — in a band as tall as the longest, within reason), and a colour bar with round numbers (one
// shared, or a thin one per heatmap). Used by the Heads window and
// the relative-position windows; the caller draws its own tooltip from the returned hit.
#pragma once
#include <imgui.h>

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "gui/gl_texture.h"

namespace attnscope::gui {

struct LayoutRecord;

struct ColorBarCache {
  GlTexture strip;  // 1 × 256 of `map`
  int map = -1;
};

// A strip of one more row under every heatmap or one more column right of it (a token set's reduced row
// or column, token_set.h).
enum class GridStrip { none, row, column };

struct HeatmapGridSpec {
  int count = 0;               // heatmaps
  int rows = 0, cols = 0;      // cells in each: queries × keys, or grid rows × columns
  std::function<ImTextureID(int)> texture;
  std::function<ImTextureID(int)> background;       // drawn under each heatmap (overlays); may be empty
  // Heatmap i's caption in form f: 0 the longest, each next one shorter, caption_forms of them. Every
  // caption of the grid is drawn in one form, the longest in which all of them fit their tiles (the
  // last one, cut with "…", when none does). Empty: no captions.
  std::function<std::string(int i, int f)> captions;
  int caption_forms = 1;
  std::function<ImU32(int)> frame_color;
  const std::vector<std::string>* row_labels = nullptr;  // [rows] or null
  const std::vector<std::string>* col_labels = nullptr;  // [cols] or null
  float labels_extent = 0;     // widest label in pixels
  bool shared_scale = true;
  bool color_bar = true;       // shared scale: draw its bar (false: the caller draws one for several grids)
  ValueRange shared_range;
  std::function<ValueRange(int)> range;  // per heatmap, for per-heatmap colour bars
  Colormap colormap = Colormap::viridis;
  const char* value_name = "probability";  // an English key (TrKey): drawn through tr()
  std::string scale_note;      // after the bar's title: how the colours span the values (ScaleNote, scale_control.h)
  bool masked = false;         // the shared bar gets a swatch of the masked colour (causal maps)
  int selected_row = -1;       // outlined row in every heatmap
  int marked_cell = -1;        // outlined cell (row-major) in every heatmap, e.g. a grid query
  // Cells a lesson step's caption names, {row, col} of the whole pictures (first_row, first_col are
  // subtracted; cells outside what is drawn are left out): outlined in every heatmap in a colour that
  // stands out on every colormap.
  std::vector<std::array<int, 2>> outlined_cells;
  float max_cell = 0;          // cap on the cell size in pixels (0: none)
  int columns = 0;             // heatmaps per row (0: whatever makes them largest)
  // A part of larger pictures (zoom, token range): the textures (and backgrounds) hold texture_rows ×
  // texture_cols cells and rows × cols of them are drawn from (first_row, first_col); the labels are those
  // rows' and columns' and are recorded with their token indices. texture_rows 0: the textures are rows × cols.
  int first_row = 0, first_col = 0, texture_rows = 0, texture_cols = 0;
  bool drag_pans = false;      // a click is a press and release without a drag (a drag pans)
  // The key labels' band takes a drag (a token range picked on the key axis); the columns [highlight_first,
  // highlight_last] (as drawn) are shaded in every heatmap and in the band while one is dragged (−1: none).
  bool key_axis_drag = false;
  int highlight_first = -1, highlight_last = -1;
  // Numbers in cells: the text and its colour for cell (row, col) of heatmap i (rows and columns as
  // drawn); drawn when cells are at least min_number_cell pixels and every text fits its cell.
  std::function<bool(int i, int row, int col, std::string& text, ImU32& color)> cell_number;
  float min_number_cell = 28;
  // A token set: its rows (queries) or columns (keys), as drawn, outlined in every heatmap; `strip` one more
  // row under each heatmap (its cells the columns as drawn) or column right of it (its cells the rows), cell k
  // of heatmap i coloured strip_color(i, k), named strip_label left of the first column's row strips (or
  // strip_symbol when the label does not fit) and strip_symbol above the first row's column strips.
  std::vector<int> set_rows, set_cols;
  GridStrip strip = GridStrip::none;
  std::function<ImU32(int i, int k)> strip_color;
  std::string strip_label, strip_symbol;
};

struct HeatmapGridResult {
  std::vector<ImVec2> image_min;  // top-left of each heatmap image
  ImVec2 image_size;              // width, height of every image
  float cell = 0;                 // cell side in pixels
  float frame = 0;                // frame width around each image
  int hovered = -1, row = -1, col = -1;  // the cell under the pointer
  bool clicked = false, double_clicked = false;
  int selected_row_clicked = -1;  // row of a click, else −1
  float wheel = 0;                // mouse wheel over a heatmap
  ImVec2 pointer_cells;           // the pointer in cells from the hovered heatmap's top-left (fractional)
  bool pressed = false, held = false;  // the left button went down on / is held on a heatmap
  bool numbers = false;           // numbers were drawn in the cells
  int label_step = 1;             // the labels name every label_step-th token (1: every one)
  struct Outline {                // an outlined cell (spec.outlined_cells) as drawn
    int tile = 0, row = 0, col = 0;
    ImVec2 min, max;
  };
  std::vector<Outline> outlines;
  // The key labels' band (spec.key_axis_drag): the column under the pointer while it is over the band or
  // a drag that began there is held (−1: neither), and that drag's press, hold and release.
  int axis_col = -1;
  bool axis_pressed = false, axis_held = false, axis_released = false;
  ImVec2 axis_min, axis_max;      // the first heatmap's band (screen pixels), for the layout record
  // The token label under the pointer (whole-picture index: first_row/first_col added; −1: none) and a
  // Ctrl+click on it this frame (a token set's selection).
  int label_row = -1, label_col = -1;
  bool label_ctrl_clicked = false;
  // The strip cell under the pointer: heatmap and cell as drawn (−1: none).
  int strip_hovered = -1, strip_cell = -1;
  std::vector<ImVec2> strip_min, strip_max;  // each heatmap's strip (screen pixels), for the layout record
};

// Fills the available region from the cursor. Records drawn labels in `labels` when not null.
HeatmapGridResult DrawHeatmapGrid(const HeatmapGridSpec& spec, ColorBarCache& bar, float ui_scale,
                                  LayoutRecord* labels);

}  // namespace attnscope::gui
