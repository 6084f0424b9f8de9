// export.h — heatmap images and raw numbers from an Analysis, the same for the window and the CLI.
//
//   Analysis + ExportRequest ──export_figure──► FigureSpec ──layout_figure──► FigureLayout
//                                                   └── render_figure → PNG  |  render_svg → SVG
//   Analysis + ExportRequest ──────────────────────────────────────────────► CSV | .npy (raw numbers)
//
// What can be exported (ExportWhat):
//   heads    every head of the grouped attention, one panel per head titled "head h · kv group g",
//            framed in its kv group's colour; causal-masked cells in the masked colour
//   head     one head (ExportRequest::head)
//   relpos   relative-position heads: on a grid each head's map for the query (query cell marked) and
//            the combined map; on a sentence each head's T × T map (the query's own cell marked) and
//            the combined 1 × T map
//   model    a real model's every layer (model view): an L × H grid of thumbnails titled "layer.head",
//            each framed in its kv group's colour, one shared colour bar (model_view_figure; the
//            layer's heads alone are `heads` with --layer)
//   conv     convolution as attention: input | MHSA | true convolution | difference, with the error
//            figures in the caption; gray images (the input on its own scale, MHSA and convolution
//            on one shared scale) and the difference on a symmetric diverging scale
// Raw numbers (CSV with token headers, .npy float32):
//   heads [H, T, T] · head [T, T] — probabilities or scores as the engine computed them (masked
//   scores are −inf); relpos grid [H, R, C] query maps, sentence [H, T, T] (or [H, T] query rows
//   beyond relpos_full_probs_max_positions); conv [4, R, C] = input, mhsa, conv, difference.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/color_scale.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/model/attention_file.h"

namespace attnscope {

// The words of a figure — panel titles, captions, colour-bar titles — in the interface's language. The
// engine has no language of its own: the caller fills `strings` (English key → translation; the keys
// are figure_word_keys(), printf formats where numbers go) from its translation file, and an empty
// map draws English. A translation whose % conversions differ from its key's is not used.
struct FigureWords {
  std::map<std::string, std::string> strings;
  std::string word(const std::string& english) const;            // the translation, else `english`
  std::string format(const char* english_format, ...) const;     // printf with the translated format
};
// Every English key the figures and captions look up (a translation file should translate each).
const std::vector<std::string>& figure_word_keys();

enum class ExportWhat { heads, head, relpos, conv, model };
enum class ExportFormat { png, svg, csv, npy };

struct ExportRequest {
  ExportWhat what = ExportWhat::heads;
  int head = 0;                        // the head for ExportWhat::head
  ExportFormat format = ExportFormat::png;
  float scale = 1.0f;                  // 1–4 (PNG pixels and SVG size); ignored by CSV and .npy
  Colormap colormap = Colormap::viridis;
  bool scores = false;                 // heads/head: raw scores instead of probabilities
  ColorScale color_scale;              // shared (one bar for all heads), per head (one bar each), fixed
                                       // 0–1 (probabilities only) or locked at color_scale.locked
  bool caption = true;                 // the one-line settings caption under the figure
  FigureWords words;                   // titles and captions in the interface's language (empty: English)
  // heads/head: only queries and keys token_first..token_last (tokens from 0; −1: every token). The colour
  // ranges stay those of the whole input, so a cell has the colour it has in the whole figure.
  int token_first = -1, token_last = -1;
  // heads/head with learned sinks: a first column titled "sink" holding the sink's share of each row (its
  // logit s_h when drawing scores). The window's live heads leave it out (their cells are the tokens').
  bool sink_column = true;
  // heads/head: a token set (token_set.h) drawn as one more row under each panel (its queries' sum or mean,
  // titled "Σ of 3 queries") or one more column after it (its keys'); in CSV/.npy one more row or column
  // of each block ([H, T+1, T] or [H, T, T+1]). The colour ranges include it.
  TokenSet token_set;
};

// "heads", "head:N" (N a whole number ≥ 0), "relpos", "conv", "model". Sets what (and head). Throws
// InputError listing the valid forms.
void parse_export_what(const std::string& text, ExportRequest& request);
// "png", "svg", "csv", "npy" (any case). Throws InputError listing them.
ExportFormat parse_export_format(const std::string& text);
// "I-J" (whole numbers, 0 ≤ I ≤ J): sets token_first and token_last. Throws InputError naming the form;
// whether J < T is checked against the analysis by validate_export.
void parse_token_range(const std::string& text, ExportRequest& request);
const char* to_string(ExportFormat format);   // "png" …, also the file extension
std::string to_string(const ExportRequest& request_what);  // "heads", "head:3", "relpos", "conv"

// Colormap, scores and colour scale from a scene's view; `what` from the view (heads and shapes →
// heads, relpos1d/relpos2d → relpos, conv → conv). The convolution's figure has scales of its own
// (input, output, difference), so conv keeps the shared mode; scores asked for on the fixed 0–1 scale
// get the shared one (0–1 is for probabilities; the window offers fixed only for them).
ExportRequest export_request_for_view(const ViewSettings& view);

// A colour bar's title: what the values are ("probability") and, but for the shared scale, how the
// colours span them: "probability · per head", "probability · fixed 0–1", "score · locked −2–3.5".
std::string scale_bar_title(const std::string& values, const ColorScale& scale, const FigureWords& words);

// Colour bars for f's panels from `first_panel` on under `scale` (color_scale.h), as the heads figure gets them:
// one bar they all use, or, per head, one each. `title` names the values; the bar's title adds the scale mode.
// `adjust` may widen the ranges computed from the data (shared and per head only: fixed and locked ranges are as
// given). The long input's pooled heads and model figures (pooled_figure.h) share it.
void assign_colorbars(FigureSpec& f, const ColorScale& scale, Colormap map, const std::string& title, bool show_masked,
                      const FigureWords& words, ValueRange (*adjust)(ValueRange) = nullptr, size_t first_panel = 0);

// Throws InputError when this analysis cannot give what the request asks: a head that does not exist
// ("head 9 does not exist: this MHA has 8 heads, 0–7"), heads of a grid input, relpos/conv data the
// analysis does not hold, a scale outside 1–4, or a colour scale that does not fit (validate_color_scale;
// conv takes the shared mode only, its three bars being fixed by design).
void validate_export(const Analysis& analysis, const ExportRequest& request);

// The figure for PNG/SVG (validate_export first).
FigureSpec export_figure(const Analysis& analysis, const ExportRequest& request);

// The caption: kind, H, G, d_model, causal, seed, values shown and scale — or, for relpos/conv, the
// grid, α, Δ and the error figures.
std::string export_caption(const Analysis& analysis, const ExportRequest& request);

// Raw numbers of the export: shape and C-order values, with the axis labels of the CSV.
struct ExportArray {
  std::vector<int64_t> shape;                       // 2 or 3 dimensions
  std::vector<float> values;                        // C order
  std::vector<std::string> block_names;             // [shape[0]] for 3D ("head 0 (kv group 0)", "input")
  std::vector<std::string> row_labels, col_labels;  // [rows], [cols] of each 2D block
};
ExportArray export_array(const Analysis& analysis, const ExportRequest& request);
// CSV: a header "block,row,<column labels…>" (or "row,<column labels…>" for 2D), then one line per
// row; fields quoted per RFC 4180 when needed; numbers with 9 significant digits; −inf as "-inf".
std::string export_csv(const ExportArray& array);

struct ExportedFile {
  std::string bytes;                  // the file's content
  std::optional<FigureSpec> figure;   // PNG/SVG: what was drawn
  std::optional<FigureLayout> layout; // PNG/SVG: where (cell rectangles for tests and the GUI)
  std::optional<Image> image;         // PNG: the pixels (the GUI can preview them)
  std::vector<int64_t> shape;         // CSV/.npy: the array's shape
};

// A figure laid out at `scale` and encoded as `format` (PNG or SVG) into `out` (figure, layout, image, bytes).
void encode_figure(ExportedFile& out, FigureSpec figure, ExportFormat format, float scale,
                   const TextRasterizer& text = default_text_rasterizer());

// The file's content in `request.format`: CSV or .npy of the array `array` makes (its shape in `shape`), or PNG or
// SVG of the figure `figure` makes, encoded at `request.scale` (encode_figure). Only the one the format needs is
// made. What each render_* does after its own checks (render_export, render_pooled, render_rollout, …).
ExportedFile encode_export(const ExportRequest& request, const std::function<ExportArray()>& array,
                           const std::function<FigureSpec()>& figure, const TextRasterizer& text);

// The file's content in memory (validate_export first, then figure/array, then encoding).
ExportedFile render_export(const Analysis& analysis, const ExportRequest& request,
                           const TextRasterizer& text = default_text_rasterizer());

// Checks the output path before anything is computed: not empty, not a folder, its folder exists,
// and an extension of png/svg/csv/npy matches the format. Throws InputError saying what is wrong.
void check_export_path(const std::filesystem::path& path, ExportFormat format);

// check_export_path, then `render` (the file's content), then write_file_atomic: on any failure no file is left
// behind. What every export_* to a file does (export_to_file, export_pooled, export_rollout, …).
ExportedFile write_export(const std::filesystem::path& path, ExportFormat format,
                          const std::function<ExportedFile()>& render);

// check_export_path, render_export, then write_file_atomic: on any failure no file is left behind.
ExportedFile export_to_file(const Analysis& analysis, const ExportRequest& request, const std::filesystem::path& path,
                            const TextRasterizer& text = default_text_rasterizer());

// "attnscope-heads-20261122-011500.png" for the window's default exports/ folder; `stamp` is the
// caller's local time as YYYYMMDD-HHMMSS.
std::string default_export_file_name(const ExportRequest& request, const std::string& stamp);

// ---- the model view (ExportWhat::model) ------------------------------------------------------------
// Every layer's heads of a real model, L rows × H columns of thumbnails (BertViz's model view, with the
// K/V groups): panel l·H + h is layer l's head h, titled "l.h" (GPT-2's 5.1 is layer 5, head 1),
// framed in the colour of its kv group g(h); causal-masked cells in the masked colour; one colour bar
// (probability) for all. Thumbnails are about 1400/H pixels wide at 1×, at least 48.
// A stack with layers without a softmax (AttentionStack::layer_kind, Qwen3-Next): those layers' panels are their
// signed matrices M, unframed, under a second bar ("Gated DeltaNet weight", the diverging colormap over a range
// symmetric about 0, shared whatever the scale mode; colorbars[1], or [0] when no layer has a softmax); the grid
// has the most heads of any layer as columns and a layer with fewer leaves its last places blank
// (PanelSpec::blank).
FigureSpec model_view_figure(const model::AttentionStack& stack, const ExportRequest& request);
// Its layout's parts, shared with the long input's pooled model figure (pooled_figure.h): the thumbnails' side at
// 1× for `columns` heads a row, and panel (l, h)'s title ("5.1", "5.1 · g3" when groups share a frame colour).
int model_view_matrix_side(int columns);
std::string model_view_panel_title(int layer, int head, int heads, int kv_heads);
std::string model_view_caption(const model::AttentionStack& stack, const FigureWords& words = {});
// PNG/SVG: the figure; .npy: the attentions [L, H, T, T] (refused for a stack with linear layers, whose
// matrices it would leave out: `compute --checkpoint` writes both); CSV is refused (one file of L·H blocks helps
// nobody: export a layer with --what heads --layer N). Checks the path first, writes atomically.
ExportedFile export_model_view(const model::AttentionStack& stack, const ExportRequest& request,
                               const std::filesystem::path& path, const TextRasterizer& text = default_text_rasterizer());

}  // namespace attnscope
