// heatmap_layout.cpp — where every part of a figure goes, measured with the text rasteriser.
//
// Sections: validation · sizes at a scale · labels (shortening, thinning, dropping overlaps) ·
// one panel · one colour bar · ticks · the whole figure
//
// Each panel and colour bar is first laid out around its own origin (the matrix's / bar's top-left
// corner at (0, 0)); the figure then moves them into a grid where the matrices of one row share a
// top edge and those of one column a left edge, and finally shifts everything inside the margin.
#include "attnscope/figure/heatmap_layout.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnscope/core/error.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope {

// ---- validation ----------------------------------------------------------------------------------
std::vector<Rgba> panel_colors(const FigureSpec& spec, size_t panel) {
  const PanelSpec& p = spec.panels[panel];
  const ColorBarSpec& bar = spec.colorbars[size_t(p.colorbar)];
  if (p.blank) return {};
  std::vector<Rgba> colors(p.values.size());
  values_to_colors(p.values.data(), p.values.size(), bar.range, bar.colormap, colors.data());
  return colors;
}

void validate_figure(const FigureSpec& spec) {
  require(!spec.panels.empty(), "the figure has no panels to draw");
  require(!spec.colorbars.empty(), "the figure has no colour bar");
  for (size_t b = 0; b < spec.colorbars.size(); ++b) {
    const ValueRange r = spec.colorbars[b].range;
    require(std::isfinite(r.lo) && std::isfinite(r.hi) && r.lo <= r.hi,
            "colour bar " + std::to_string(b) + " has an invalid range [" + std::to_string(r.lo) + ", " +
                std::to_string(r.hi) + "]");
  }
  for (size_t i = 0; i < spec.panels.size(); ++i) {
    const PanelSpec& p = spec.panels[i];
    const std::string where = "panel " + std::to_string(i) + " ('" + p.title + "')";
    if (p.blank) {
      require(p.rows >= 1 && p.cols >= 1 && p.values.empty() && p.colorbar >= 0 && size_t(p.colorbar) < spec.colorbars.size(),
              where + " is blank: it has a size and no values");
      continue;
    }
    require(p.rows >= 1 && p.cols >= 1, where + " has no cells (" + std::to_string(p.rows) + "x" +
                                            std::to_string(p.cols) + ")");
    require(p.values.size() == size_t(p.rows) * size_t(p.cols),
            where + " has " + std::to_string(p.values.size()) + " values for " + std::to_string(p.rows) + "x" +
                std::to_string(p.cols) + " cells");
    require(p.row_labels.empty() || p.row_labels.size() == size_t(p.rows),
            where + " has " + std::to_string(p.row_labels.size()) + " row labels for " + std::to_string(p.rows) +
                " rows");
    require(p.col_labels.empty() || p.col_labels.size() == size_t(p.cols),
            where + " has " + std::to_string(p.col_labels.size()) + " column labels for " +
                std::to_string(p.cols) + " columns");
    require(p.cell_text.empty() || p.cell_text.size() == p.values.size(),
            where + " has " + std::to_string(p.cell_text.size()) + " cell texts for " + std::to_string(p.values.size()) +
                " cells");
    require(p.colorbar >= 0 && size_t(p.colorbar) < spec.colorbars.size(),
            where + " names colour bar " + std::to_string(p.colorbar) + " of " +
                std::to_string(spec.colorbars.size()));
    const bool unmarked = p.marked_row < 0 && p.marked_col < 0;
    const bool marked = p.marked_row >= 0 && p.marked_row < p.rows && p.marked_col >= 0 && p.marked_col < p.cols;
    require(unmarked || marked, where + " marks cell (" + std::to_string(p.marked_row) + ", " +
                                    std::to_string(p.marked_col) + "), outside its " + std::to_string(p.rows) +
                                    "x" + std::to_string(p.cols) + " cells");
  }
  require(spec.grid_columns >= 0, "grid columns must not be negative");
}

Rgba text_color_on(Rgba b) {
  // WCAG relative luminance; black text wins above about 0.18.
  const auto lin = [](uint8_t v) {
    const double c = v / 255.0;
    return c <= 0.03928 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  };
  const double y = 0.2126 * lin(b.r) + 0.7152 * lin(b.g) + 0.0722 * lin(b.b);
  return (y + 0.05) / 0.05 >= 1.05 / (y + 0.05) ? Rgba{0, 0, 0, 255} : Rgba{255, 255, 255, 255};
}

int automatic_grid_columns(int panels) {
  if (panels <= 4) return std::max(panels, 1);
  if (panels <= 8) return 4;
  return int(std::ceil(std::sqrt(double(panels)) - 1e-9));
}

Rgba kv_group_color(int group) {
  // Tableau 10 (distinct hues, readable on white), then six colours each chosen as far (CIEDE2000) from
  // all before it as possible among those of lightness 35–80, which show on a light and a dark
  // background. The closest pair (Tableau's red and pink) is 18 apart; tests hold every pair to ≥ 15.
  static const Rgba palette[kv_group_palette_size] = {
      {78, 121, 167, 255},  {242, 142, 43, 255}, {225, 87, 89, 255},   {118, 183, 178, 255},
      {89, 161, 79, 255},   {237, 201, 72, 255}, {176, 122, 161, 255}, {255, 157, 167, 255},
      {156, 117, 95, 255},  {186, 176, 172, 255}, {136, 0, 204, 255},  {0, 102, 85, 255},
      {102, 102, 0, 255},   {153, 34, 85, 255},  {170, 187, 255, 255}, {170, 0, 0, 255}};
  return palette[size_t(((group % kv_group_palette_size) + kv_group_palette_size) % kv_group_palette_size)];
}

bool label_stacks(std::string_view label) {
  for (const char32_t cp : decode_utf8_lenient(label))
    if (is_cjk_ideograph(cp) || (cp >= 0x3040 && cp <= 0x30FF) ||  // kana
        (cp >= 0xAC00 && cp <= 0xD7AF) ||                          // Hangul syllables
        (cp >= 0x3000 && cp <= 0x303F) ||                          // CJK punctuation
        (cp >= 0xFF01 && cp <= 0xFF60))                            // full-width forms
      return true;
  return false;
}

// ---- sizes at a scale ----------------------------------------------------------------------------
namespace {

struct Sizes {
  float scale;
  int px(float v) const { return std::max(1, int(std::lround(v * scale))); }
  float label_px() const { return 14.0f * scale; }
  float title_px() const { return 17.0f * scale; }
  float tick_px() const { return 13.0f * scale; }
  float caption_px() const { return 14.0f * scale; }
  int margin() const { return px(16); }
  int panel_spacing() const { return px(28); }
  int text_gap() const { return px(4); }      // between a label and the matrix (beyond the frame)
  int label_gap() const { return px(3); }     // between two neighbouring labels
  int frame() const { return px(3); }
  int bar_width() const { return px(16); }
  int bar_min_height() const { return px(140); }
  int bar_gap() const { return px(14); }      // matrix (or grid) to colour bar
  int tick_length() const { return px(5); }
  float max_label_width() const { return 10.0f * label_px(); }
};

// Base cell side at 1×: the largest matrix side fills about 384 px (or FigureSpec::matrix_side), cells
// between 1 and 36 px.
int base_cell_size(const FigureSpec& spec) {
  int largest = 1;
  for (const PanelSpec& p : spec.panels) largest = std::max({largest, p.rows, p.cols});
  const int side = spec.matrix_side > 0 ? spec.matrix_side : 384;
  return std::clamp(side / largest, 1, 36);
}

void shift(Rect& r, int dx, int dy) {
  r.x += dx;
  r.y += dy;
}
void shift(TextPlacement& t, int dx, int dy) { shift(t.rect, dx, dy); }

Rect unite(const Rect& a, const Rect& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  const int x0 = std::min(a.x, b.x), y0 = std::min(a.y, b.y);
  return {x0, y0, std::max(a.right(), b.right()) - x0, std::max(a.bottom(), b.bottom()) - y0};
}

// ---- labels --------------------------------------------------------------------------------------

// `text` shortened with "…" until it is at most max_width wide; control characters become spaces.
std::string shorten(const std::string& raw, float pixel_size, float max_width, const TextRasterizer& text) {
  std::u32string cps = decode_utf8_lenient(raw);
  for (char32_t& c : cps)
    if (c < 0x20 || c == 0x7F) c = U' ';
  auto encode = [](const std::u32string& s) {
    std::string out;
    for (char32_t c : s) out += encode_utf8(c);
    return out;
  };
  std::string s = encode(cps);
  if (text.text_box(s, pixel_size).width <= max_width) return s;
  while (!cps.empty()) {
    cps.pop_back();
    s = encode(cps) + "\u2026";
    if (text.text_box(s, pixel_size).width <= max_width) return s;
  }
  return "\u2026";
}

// A label turned along a column whose characters stack (label_stacks), cut to `max_height` pixels:
// whole characters, the last one "…" when some were left out.
std::string shorten_stacked(const std::string& s, float pixel_size, float max_height, const TextRasterizer& text) {
  if (text.stacked_box(s, pixel_size).height <= max_height) return s;
  std::u32string cps = decode_utf8_lenient(s);
  while (!cps.empty()) {
    cps.pop_back();
    std::string cut;
    for (char32_t c : cps) cut += encode_utf8(c);
    cut += "\u2026";
    if (text.stacked_box(cut, pixel_size).height <= max_height) return cut;
  }
  return "\u2026";
}

TextPlacement place(const std::string& s, float pixel_size, bool rotated, int index, const TextRasterizer& text,
                    bool stacked = false) {
  const TextBox box = stacked ? text.stacked_box(s, pixel_size) : text.text_box(s, pixel_size);
  TextPlacement t;
  t.text = s;
  t.pixel_size = pixel_size;
  t.rotated = rotated && !stacked;
  t.stacked = stacked;
  t.index = index;
  t.baseline = box.baseline;
  t.rect = t.rotated ? Rect{0, 0, box.height, box.width} : Rect{0, 0, box.width, box.height};
  return t;
}

// Keeps labels in order, dropping any that would come within `gap` of the last one kept.
void drop_overlaps(std::vector<TextPlacement>& labels, int gap) {
  std::vector<TextPlacement> kept;
  for (TextPlacement& t : labels) {
    if (t.rect.empty()) continue;
    if (!kept.empty()) {
      Rect grown = kept.back().rect;
      grown = {grown.x - gap, grown.y - gap, grown.w + 2 * gap, grown.h + 2 * gap};
      if (grown.overlaps(t.rect)) continue;
    }
    kept.push_back(std::move(t));
  }
  labels = std::move(kept);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// ---- one panel (matrix top-left at the origin) ---------------------------------------------------
PanelLayout layout_panel(const PanelSpec& p, int cell, const Sizes& z, const TextRasterizer& text) {
  PanelLayout L;
  L.cell_w = L.cell_h = cell;
  if (!p.cell_text.empty()) {  // one line of about six characters per cell
    const int line = text.text_box("Ag", z.label_px()).height;
    L.cell_h = std::max(cell, line + z.px(8));
    L.cell_w = std::max(cell, int(std::lround(5.5f * z.label_px())));
  }
  const int cw = L.cell_w, ch = L.cell_h;
  L.matrix = {0, 0, p.cols * cw, p.rows * ch};
  // Every matrix has an outline: the kv group's frame, or a thin line so pale cells keep an edge.
  const int frame = p.frame ? z.frame() : z.px(1);
  L.frame = {-frame, -frame, L.matrix.w + 2 * frame, L.matrix.h + 2 * frame};
  const int to_matrix = frame + z.text_gap();
  const float lpx = z.label_px();
  const int line_h = text.text_box("Ag", lpx).height;
  Rect bounds = L.frame;

  // Row labels, right-aligned left of the matrix, each centred on its row. They may reach past the
  // matrix's top or bottom edge by at most `to_matrix`, which keeps them clear of the column labels
  // (those end `to_matrix` above the matrix; row labels end `to_matrix` left of it).
  if (!p.row_labels.empty()) {
    L.row_label_stride = std::max(1, ceil_div(line_h + z.label_gap(), ch));
    for (int r = 0; r < p.rows; r += L.row_label_stride) {
      TextPlacement t = place(shorten(p.row_labels[size_t(r)], lpx, z.max_label_width(), text), lpx, false, r, text);
      const int cy = r * ch + ch / 2;
      t.rect.x = -to_matrix - t.rect.w;
      t.rect.y = std::clamp(cy - t.rect.h / 2, -to_matrix, std::max(-to_matrix, L.matrix.h + to_matrix - t.rect.h));
      L.row_labels.push_back(std::move(t));
    }
    drop_overlaps(L.row_labels, z.label_gap() / 2);
    for (const TextPlacement& t : L.row_labels) bounds = unite(bounds, t.rect);
  }

  // Column labels above the matrix: across when that keeps as many labels as turning them would,
  // else turned 90° (reading upwards, ending just above the matrix), CJK ones (label_stacks) one
  // character under the other.
  if (!p.col_labels.empty()) {
    std::vector<std::string> shown(size_t(p.cols));
    int widest = 0;
    for (int c = 0; c < p.cols; ++c) {
      shown[size_t(c)] = shorten(p.col_labels[size_t(c)], lpx, z.max_label_width(), text);
      widest = std::max(widest, text.text_box(shown[size_t(c)], lpx).width);
    }
    const int stride_across = std::max(1, ceil_div(widest + z.label_gap(), cw));
    int turned_width = line_h;  // a stacked label is as wide as its widest character
    for (int c = 0; c < p.cols; ++c)
      if (label_stacks(p.col_labels[size_t(c)]))
        turned_width = std::max(turned_width, text.stacked_box(p.col_labels[size_t(c)], lpx).width);
    const int stride_turned = std::max(1, ceil_div(turned_width + z.label_gap(), cw));
    const bool turned = stride_across > stride_turned;
    L.col_label_stride = turned ? stride_turned : stride_across;
    for (int c = 0; c < p.cols; c += L.col_label_stride) {
      const bool stacked = turned && label_stacks(p.col_labels[size_t(c)]);
      if (stacked)
        shown[size_t(c)] = shorten_stacked(shorten(p.col_labels[size_t(c)], lpx, 1e9f, text), lpx,
                                           z.max_label_width(), text);
      TextPlacement t = place(shown[size_t(c)], lpx, turned, c, text, stacked);
      const int cx = c * cw + cw / 2;
      t.rect.x = std::clamp(cx - t.rect.w / 2, -to_matrix, std::max(-to_matrix, L.matrix.w + to_matrix - t.rect.w));
      t.rect.y = -to_matrix - t.rect.h;
      L.col_labels.push_back(std::move(t));
    }
    drop_overlaps(L.col_labels, z.label_gap() / 2);
    for (const TextPlacement& t : L.col_labels) bounds = unite(bounds, t.rect);
  }

  // Cell texts, centred in their cells, cut to the cell's width less a margin.
  for (size_t i = 0; i < p.cell_text.size(); ++i) {
    if (p.cell_text[i].empty()) continue;
    const int r = int(i) / p.cols, c = int(i) % p.cols;
    TextPlacement t = place(shorten(p.cell_text[i], lpx, float(cw - z.px(6)), text), lpx, false, int(i), text);
    t.rect.x = c * cw + (cw - t.rect.w) / 2;
    t.rect.y = r * ch + (ch - t.rect.h) / 2;
    L.cell_texts.push_back(std::move(t));
  }

  // Title centred over the matrix, above everything else.
  L.title = place(shorten(p.title, z.title_px(), 40.0f * z.title_px(), text), z.title_px(), false, -1, text);
  L.title.rect.x = L.matrix.w / 2 - L.title.rect.w / 2;
  L.title.rect.y = bounds.y - z.px(6) - L.title.rect.h;
  if (!p.title.empty()) bounds = unite(bounds, L.title.rect);
  else L.title.rect = {};
  L.bounds = bounds;
  return L;
}

void shift(PanelLayout& L, int dx, int dy) {
  shift(L.bounds, dx, dy);
  shift(L.matrix, dx, dy);
  shift(L.frame, dx, dy);
  if (!L.title.rect.empty()) shift(L.title, dx, dy);
  for (auto& t : L.row_labels) shift(t, dx, dy);
  for (auto& t : L.col_labels) shift(t, dx, dy);
  for (auto& t : L.cell_texts) shift(t, dx, dy);
}

// ---- one colour bar (bar top-left at the origin) -------------------------------------------------
ColorBarLayout layout_colorbar(const ColorBarSpec& spec, int index, int height, const Sizes& z,
                               int line_width, const TextRasterizer& text) {
  ColorBarLayout L;
  L.colorbar = index;
  L.bar = {0, 0, z.bar_width(), height};
  Rect bounds{-line_width, -line_width, L.bar.w + 2 * line_width, L.bar.h + 2 * line_width};  // its outline
  const float tpx = z.tick_px();
  const int line_h = text.text_box("0", tpx).height;
  const int max_ticks = std::clamp(height / (line_h + z.px(10)) + 1, 2, 7);
  const std::vector<float> values = nice_ticks(spec.range, max_ticks);
  const float step = tick_step(values);
  for (float v : values) {
    ColorBarTick t;
    t.value = v;
    const float f = spec.range.hi > spec.range.lo ? normalise(v, spec.range) : 0.5f;
    const int y = int(std::lround((1.0f - f) * float(height - 1)));
    t.mark = {L.bar.w, y - line_width / 2, z.tick_length(), line_width};
    t.label = place(format_tick(v, step), tpx, false, int(L.ticks.size()), text);
    t.label.rect.x = L.bar.w + z.tick_length() + z.px(3);
    t.label.rect.y = y - t.label.rect.h / 2;
    L.ticks.push_back(std::move(t));
  }
  // Ticks are spaced for their text already; this only guards against rounding.
  std::vector<TextPlacement> labels;
  for (auto& t : L.ticks) labels.push_back(t.label);
  drop_overlaps(labels, 0);
  std::vector<ColorBarTick> kept;
  for (auto& t : L.ticks)
    for (const auto& l : labels)
      if (l.index == t.label.index) kept.push_back(t);
  L.ticks = std::move(kept);
  for (const auto& t : L.ticks) bounds = unite(bounds, unite(t.mark, t.label.rect));

  if (!spec.title.empty()) {
    TextPlacement title = place(spec.title, tpx, false, -1, text);
    title.rect.x = 0;
    title.rect.y = bounds.y - z.px(6) - title.rect.h;
    bounds = unite(bounds, title.rect);
    L.title = std::move(title);
  }
  if (spec.show_masked) {
    L.masked_swatch = {0, L.bar.bottom() + line_h, L.bar.w, L.bar.w};
    TextPlacement label = place(spec.masked_label, tpx, false, -1, text);
    label.rect.x = L.bar.w + z.tick_length() + z.px(3);
    label.rect.y = L.masked_swatch.centre_y() - label.rect.h / 2;
    bounds = unite(bounds, unite({L.masked_swatch.x - line_width, L.masked_swatch.y - line_width,
                                  L.masked_swatch.w + 2 * line_width, L.masked_swatch.h + 2 * line_width},
                                 label.rect));
    L.masked_label = std::move(label);
  }
  L.bounds = bounds;
  return L;
}

void shift(ColorBarLayout& L, int dx, int dy) {
  shift(L.bounds, dx, dy);
  shift(L.bar, dx, dy);
  for (auto& t : L.ticks) {
    shift(t.mark, dx, dy);
    shift(t.label, dx, dy);
  }
  if (L.title) shift(*L.title, dx, dy);
  if (!L.masked_swatch.empty()) shift(L.masked_swatch, dx, dy);
  if (L.masked_label) shift(*L.masked_label, dx, dy);
}

}  // namespace

// ---- ticks ---------------------------------------------------------------------------------------
std::vector<float> nice_ticks(ValueRange range, int max_ticks) {
  const double lo = range.lo, hi = range.hi;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {range.lo};
  max_ticks = std::max(max_ticks, 1);
  // The multiples of `step` in [lo, hi], counting stops past max_ticks. An end within a millionth of a
  // step of a multiple counts as that multiple (a probability bar from 9.7e-08 starts at the tick 0):
  // the tick keeps its round value, drawn at the end.
  auto multiples = [&](double step) {
    std::vector<float> ticks;
    const double tolerance = step * 1e-6;
    const double first = std::ceil((lo - tolerance) / step), last = std::floor((hi + tolerance) / step);
    for (double k = first; k <= last && ticks.size() <= size_t(max_ticks); k += 1)
      ticks.push_back(k == 0 ? 0.0f : float(k * step));  // no "-0"
    return ticks;
  };
  // Steps 5, 2, 1 × 10^k from one above the whole range downwards: the smallest that gives no more than
  // max_ticks ticks (the most ticks that fit), two or more when some such step gives two.
  std::vector<float> best;
  for (double magnitude = std::pow(10.0, std::ceil(std::log10(hi - lo))); magnitude > 0; magnitude /= 10)
    for (double m : {5.0, 2.0, 1.0}) {
      std::vector<float> ticks = multiples(m * magnitude);
      if (ticks.size() > size_t(max_ticks)) return best.empty() ? ticks : best;
      if (ticks.size() >= 2 || (ticks.size() == 1 && best.empty())) best = std::move(ticks);
    }
  return best.empty() ? std::vector<float>{range.lo} : best;  // not reached for a finite range
}

float tick_step(const std::vector<float>& ticks) {
  if (ticks.size() < 2) return 0.0f;
  // Float ticks differ by a hair from the step: snap to the 1-2-5 step.
  const double d = std::abs(double(ticks[1]) - double(ticks[0]));
  const double magnitude = std::pow(10.0, std::floor(std::log10(d)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (std::abs(d - m * magnitude) <= 1e-3 * d) return float(m * magnitude);
  return float(d);
}

std::string format_tick(float value, float step) {
  char buf[64];
  const double v = value, s = std::abs(double(step));
  if (v == 0) return "0";
  if (!(s > 0) || !std::isfinite(s)) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
  } else if (std::abs(v) >= 1e5 || s < 1e-4) {
    // Scientific, with as many digits as the step needs to tell neighbouring ticks apart.
    const int digits = int(std::floor(std::log10(std::abs(v)) + 1e-6) - std::floor(std::log10(s) + 1e-6)) + 1;
    std::snprintf(buf, sizeof buf, "%.*e", std::clamp(digits, 1, 9) - 1, v);
  } else {
    const double e = std::floor(std::log10(s) + 1e-6);  // a float step of 1e-5 is a hair below it
    int decimals = std::max(0, int(-e));
    // A step like 0.25 (lo/hi fall-back) needs one more decimal than its magnitude says.
    if (std::abs(s / std::pow(10.0, e) - std::round(s / std::pow(10.0, e))) > 1e-6) ++decimals;
    std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 6), v);
  }
  std::string out = buf;
  if (out.find_first_not_of("-0.") == std::string::npos) return "0";
  return out;
}

// ---- the whole figure ----------------------------------------------------------------------------
FigureLayout layout_figure(const FigureSpec& spec, float scale, const TextRasterizer& text) {
  require(std::isfinite(scale) && scale >= min_export_scale && scale <= max_export_scale,
          "scale must be between 1 and 4, got " + std::to_string(scale));
  validate_figure(spec);
  const Sizes z{scale};
  FigureLayout F;
  F.scale = scale;
  F.line_width = z.px(1);
  const int cell = std::max(1, int(std::lround(float(base_cell_size(spec)) * scale)));
  const int n = int(spec.panels.size());

  // Which colour bars are used, and by whom: one used by every panel goes right of the grid, the
  // others beside the last panel that uses them.
  std::vector<int> last_user(spec.colorbars.size(), -1);
  for (int i = 0; i < n; ++i) last_user[size_t(spec.panels[size_t(i)].colorbar)] = i;
  const int first_bar = spec.panels[0].colorbar;
  const bool one_shared_bar =
      std::all_of(spec.panels.begin(), spec.panels.end(), [&](const PanelSpec& p) { return p.colorbar == first_bar; });

  // 1. Each panel (and its attached bar) around its matrix origin.
  std::vector<Rect> slot(static_cast<size_t>(n));  // panel + attached bar, relative to the matrix origin
  std::vector<int> attached_bar(size_t(n), -1);
  for (int i = 0; i < n; ++i) {
    const PanelSpec& p = spec.panels[size_t(i)];
    F.panels.push_back(layout_panel(p, cell, z, text));
    slot[size_t(i)] = F.panels.back().bounds;
    if (!one_shared_bar && last_user[size_t(p.colorbar)] == i) {
      const PanelLayout& L = F.panels.back();
      ColorBarLayout bar = layout_colorbar(spec.colorbars[size_t(p.colorbar)], p.colorbar,
                                           std::max(L.matrix.h, z.bar_min_height()), z, F.line_width, text);
      const int right = L.frame.right();
      shift(bar, right + z.bar_gap() - bar.bounds.x, 0);
      slot[size_t(i)] = unite(slot[size_t(i)], bar.bounds);
      attached_bar[size_t(i)] = int(F.colorbars.size());
      F.colorbars.push_back(std::move(bar));
    }
  }

  // 2. The grid: matrices of one row share a top edge, of one column a left edge.
  const int columns = std::min(n, spec.grid_columns > 0 ? spec.grid_columns : automatic_grid_columns(n));
  const int rows = ceil_div(n, columns);
  std::vector<int> left(size_t(columns), 0), right(size_t(columns), 0), above(size_t(rows), 0), below(size_t(rows), 0);
  for (int i = 0; i < n; ++i) {
    const int c = i % columns, r = i / columns;
    left[size_t(c)] = std::max(left[size_t(c)], -slot[size_t(i)].x);
    right[size_t(c)] = std::max(right[size_t(c)], slot[size_t(i)].right());
    above[size_t(r)] = std::max(above[size_t(r)], -slot[size_t(i)].y);
    below[size_t(r)] = std::max(below[size_t(r)], slot[size_t(i)].bottom());
  }
  std::vector<int> origin_x(static_cast<size_t>(columns)), origin_y(static_cast<size_t>(rows));
  int x = 0;
  for (int c = 0; c < columns; ++c) {
    origin_x[size_t(c)] = x + left[size_t(c)];
    x += left[size_t(c)] + right[size_t(c)] + z.panel_spacing();
  }
  int y = 0;
  for (int r = 0; r < rows; ++r) {
    origin_y[size_t(r)] = y + above[size_t(r)];
    y += above[size_t(r)] + below[size_t(r)] + z.panel_spacing();
  }
  Rect content;
  for (int i = 0; i < n; ++i) {
    const int dx = origin_x[size_t(i % columns)], dy = origin_y[size_t(i / columns)];
    shift(F.panels[size_t(i)], dx, dy);
    if (attached_bar[size_t(i)] >= 0) shift(F.colorbars[size_t(attached_bar[size_t(i)])], dx, dy);
    content = unite(content, F.panels[size_t(i)].bounds);
    if (attached_bar[size_t(i)] >= 0) content = unite(content, F.colorbars[size_t(attached_bar[size_t(i)])].bounds);
  }

  // 3. One bar for all panels: right of the grid, level with the first row of matrices.
  if (one_shared_bar) {
    const PanelLayout& first = F.panels[0];
    ColorBarLayout bar = layout_colorbar(spec.colorbars[size_t(first_bar)], first_bar,
                                         std::max(first.matrix.h, z.bar_min_height()), z, F.line_width, text);
    shift(bar, content.right() + z.bar_gap() - bar.bounds.x, first.matrix.y);
    content = unite(content, bar.bounds);
    F.colorbars.push_back(std::move(bar));
  }

  // 4. The caption under everything.
  if (!spec.caption.empty()) {
    TextPlacement caption = place(shorten(spec.caption, z.caption_px(), 200.0f * z.caption_px(), text),
                                  z.caption_px(), false, -1, text);
    caption.rect.x = content.x;
    caption.rect.y = content.bottom() + z.px(14);
    content = unite(content, caption.rect);
    F.caption = std::move(caption);
  }

  // 5. Everything inside the margin.
  const int dx = z.margin() - content.x, dy = z.margin() - content.y;
  for (auto& p : F.panels) shift(p, dx, dy);
  for (auto& b : F.colorbars) shift(b, dx, dy);
  if (F.caption) shift(*F.caption, dx, dy);
  F.width = content.w + 2 * z.margin();
  F.height = content.h + 2 * z.margin();
  return F;
}

}  // namespace attnscope
