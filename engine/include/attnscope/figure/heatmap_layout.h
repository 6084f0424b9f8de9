// heatmap_layout.h — a figure of heatmaps described as data, and where every part of it goes.
//
//   FigureSpec (what to show) ──layout_figure(spec, scale, text)──► FigureLayout (pixel rectangles)
//        └──────────────── render_png.h / render_svg.h draw the pair ────────────────┘
// layout_figure draws nothing: tests and the GUI use it to find cell centres and label boxes. Text is
// measured with the same TextRasterizer that draws it, so labels never overlap or get clipped:
// labels are thinned (every k-th one kept) when cells are smaller than the text, and any label that
// would still touch its neighbour is dropped.
//
// A figure: panels on a grid (left to right, top to bottom), each panel a titled matrix with row
// labels on the left (queries) and column labels on top (keys, turned 90° when they do not fit
// across); colour bars with tick numbers; a one-line caption at the bottom.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "attnscope/figure/image.h"
#include "attnscope/figure/text_raster.h"

namespace attnscope {

// ---- the description ---------------------------------------------------------------------------
struct ColorBarSpec {
  ValueRange range;                       // the values at the bar's bottom (lo) and top (hi)
  Colormap colormap = Colormap::viridis;
  std::string title;                      // above the bar, e.g. "probability"
  bool show_masked = false;               // add a "masked" swatch below the bar
  std::string masked_label = "masked";    // the swatch's label (in the figure's language)
};

struct PanelSpec {
  std::string title;                      // e.g. "head 3 · kv group 1"
  int rows = 0, cols = 0;                 // the matrix is rows × cols cells
  std::vector<float> values;              // [rows, cols] row-major; non-finite → the masked colour
  std::vector<std::string> row_labels;    // [rows] (query tokens), or empty for none
  std::vector<std::string> col_labels;    // [cols] (key tokens), or empty for none
  std::optional<Rgba> frame;              // a thick frame around the matrix (the kv group's colour);
                                          // without one the matrix gets a thin gray outline
  int marked_row = -1, marked_col = -1;   // a cell outlined in black and white (the relpos query)
  int colorbar = 0;                       // index into FigureSpec::colorbars
  // An empty place in the grid (the model view's layer with fewer heads than the widest): laid out as a
  // rows × cols matrix, nothing drawn, no values.
  bool blank = false;
  // Text in every cell ([rows, cols] row-major, "" for none; empty: no cell text), e.g. the logit lens's top
  // token: the cells are then wide enough for about six characters and one line, each text cut with "…"
  // to its cell and drawn in black or white, whichever reads on the cell's colour (text_color_on).
  std::vector<std::string> cell_text;
};

struct FigureSpec {
  std::vector<PanelSpec> panels;
  std::vector<ColorBarSpec> colorbars;    // every panel names one; a bar used by every panel is
                                          // drawn once right of the grid, others beside their last panel
  int grid_columns = 0;                   // panels per row; 0 → automatic (about square)
  int matrix_side = 0;                    // pixels at 1× for the largest matrix side; 0 → 384 (thumbnails
                                          // of a model view use less)
  std::string caption;                    // one line under the figure; empty → none
};

// The colours of a panel's cells, [rows, cols] row-major: its values through its colour bar's range and
// colormap, non-finite values (masked cells) in the masked colour. The PNG and SVG renderers and the
// window's textures all colour cells with this, so a cell has the same colour on screen and on paper.
std::vector<Rgba> panel_colors(const FigureSpec& spec, size_t panel);

// Throws InputError (what is wrong and where) for a panel whose values/labels disagree with its size,
// an empty panel, or a colour bar index out of range.
void validate_figure(const FigureSpec& spec);

// Panels per row when FigureSpec::grid_columns is 0: 1–4 panels in one row, then ⌈√n⌉ (8 → 4 × 2).
int automatic_grid_columns(int panels);

// A kv group's frame colour: a categorical palette of kv_group_palette_size colours, pairwise at least
// 15 apart in CIEDE2000 (Tableau 10, then six more chosen to stay as far from all others as possible),
// that repeats after that many groups. The window and every export colour frames with it; beyond the
// palette two groups share a colour, so captions then name the group.
inline constexpr int kv_group_palette_size = 16;
Rgba kv_group_color(int group);
// True when groups 0 … groups−1 have colours of their own (captions may leave the group out).
inline bool kv_groups_have_own_colors(int groups) { return groups <= kv_group_palette_size; }

// Black or white, whichever has the larger contrast on `background` (text over a cell's colour).
Rgba text_color_on(Rgba background);

// A token label that, turned along a column, is set one character under the other instead of on its
// side: one with a CJK character (ideographs, kana, Hangul, full-width forms), as vertical CJK text is.
bool label_stacks(std::string_view label);

// ---- the layout --------------------------------------------------------------------------------
struct TextPlacement {
  std::string text;      // possibly shortened with "…" to a maximum width
  Rect rect;             // the box the text fills (for rotated text: box.height wide, box.width tall)
  int baseline = 0;      // pixels from the top of the unrotated box to the baseline
  float pixel_size = 0;  // text size (TextRasterizer pixel size)
  bool rotated = false;  // turned 90° counter-clockwise (reads bottom to top)
  bool stacked = false;  // one character under the other (CJK along a column; TextRasterizer::stacked_box)
  int index = -1;        // which row/column/tick this labels (−1 for titles and captions)
};

struct PanelLayout {
  Rect bounds;                            // everything below, including title and labels
  Rect matrix;                            // all cells
  int cell_w = 0, cell_h = 0;             // every cell is cell_w × cell_h pixels
  Rect frame;                             // the frame (or thin outline) around the matrix
  TextPlacement title;
  std::vector<TextPlacement> row_labels;  // the labels kept after thinning, top to bottom
  std::vector<TextPlacement> col_labels;  // left to right
  std::vector<TextPlacement> cell_texts;  // PanelSpec::cell_text as placed (index = row·cols + col)
  int row_label_stride = 1, col_label_stride = 1;  // every k-th label was kept
  Rect cell(int row, int col) const {
    return {matrix.x + col * cell_w, matrix.y + row * cell_h, cell_w, cell_h};
  }
};

struct ColorBarTick {
  float value = 0;
  Rect mark;             // the tick line beside the bar
  TextPlacement label;   // the number
};

struct ColorBarLayout {
  int colorbar = 0;      // index into FigureSpec::colorbars
  Rect bounds;           // bar, ticks, title and swatch
  Rect bar;              // the gradient: hi at the top row, lo at the bottom row
  std::vector<ColorBarTick> ticks;
  std::optional<TextPlacement> title;
  Rect masked_swatch;    // empty unless show_masked
  std::optional<TextPlacement> masked_label;
};

struct FigureLayout {
  int width = 0, height = 0;  // pixels of the whole image
  float scale = 1;            // 1–4
  int line_width = 1;         // tick and outline thickness
  std::vector<PanelLayout> panels;        // one per FigureSpec::panels, same order
  std::vector<ColorBarLayout> colorbars;  // one per FigureSpec::colorbars that some panel uses
  std::optional<TextPlacement> caption;
};

// The smallest and largest scale an export accepts.
inline constexpr float min_export_scale = 1.0f;
inline constexpr float max_export_scale = 4.0f;

// Lays the figure out at `scale` (1 → labels 14 px, titles 17 px, cells up to 36 px; everything
// ×scale, so 2× suits a 4K slide). Pure: no
// drawing. Throws InputError for an invalid spec (validate_figure) or a scale outside 1–4.
FigureLayout layout_figure(const FigureSpec& spec, float scale, const TextRasterizer& text);

// Round tick values inside [lo, hi]: multiples of one step of 1, 2 or 5 × 10^k, never the range's
// own ends unless they are such multiples (or within a millionth of a step of one: then the multiple). The smallest step that gives no more than max_ticks ticks,
// with two or more when some step does (always for max_ticks ≥ 5); else the one round value it has.
// lo == hi gives the single value lo. The window's colour bars and every export use this.
std::vector<float> nice_ticks(ValueRange range, int max_ticks);
// The step between the ticks nice_ticks chose (0 for fewer than two).
float tick_step(const std::vector<float>& ticks);
// A tick number with as many decimals as the tick step needs ("0.25", "-1", "1e-05").
std::string format_tick(float value, float step);

}  // namespace attnscope
