// render_png.cpp — drawing a laid-out figure into an Image, and PNG encoding (stb_image_write).
//
// Drawing order: background · per panel (frame, cells, marked cell, title, labels) · colour bars
// (gradient, outline, ticks, numbers, title, masked swatch) · caption.
#include "attnscope/figure/render_png.h"

#include <algorithm>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"

// libstb (Debian) compiles stb_image_write; its tuning knobs are plain globals.
extern "C" {
int stbi_write_png_to_func(void (*func)(void* context, void* data, int size), void* context, int w, int h, int comp,
                           const void* data, int stride_in_bytes);
extern int stbi_write_png_compression_level;
extern int stbi_write_force_png_filter;
}

namespace attnscope {
namespace {

void draw_text(Image& image, const TextPlacement& t, Rgba color, const TextRasterizer& text) {
  if (t.text.empty() || t.rect.empty()) return;
  if (t.stacked) text.draw_stacked(image, t.text, t.rect.x, t.rect.y, t.pixel_size, color);
  else if (t.rotated) text.draw_rotated(image, t.text, t.rect.x, t.rect.y, t.pixel_size, color);
  else text.draw(image, t.text, t.rect.x, t.rect.y, t.pixel_size, color);
}

// Black then white rings inside the cell, so the mark shows on any colour and the cell's centre
// keeps its colour; cells too small for that get one black ring just outside.
void mark_cell(Image& image, const Rect& cell) {
  const int ring = std::max(1, cell.w / 8);
  if (cell.w >= 4 * ring + 1 && cell.h >= 4 * ring + 1) {
    stroke_rect(image, cell, ring, {0, 0, 0, 255});
    stroke_rect(image, {cell.x + ring, cell.y + ring, cell.w - 2 * ring, cell.h - 2 * ring}, ring,
                {255, 255, 255, 255});
  } else {
    stroke_rect(image, {cell.x - 1, cell.y - 1, cell.w + 2, cell.h + 2}, 1, {0, 0, 0, 255});
  }
}

void draw_panel(Image& image, const PanelSpec& p, const PanelLayout& L, const std::vector<Rgba>& colors,
                const TextRasterizer& text) {
  fill_rect(image, L.frame, p.frame.value_or(figure_lines));
  for (int r = 0; r < p.rows; ++r)
    for (int c = 0; c < p.cols; ++c) fill_rect(image, L.cell(r, c), colors[size_t(r) * size_t(p.cols) + size_t(c)]);
  if (p.marked_row >= 0) mark_cell(image, L.cell(p.marked_row, p.marked_col));
  draw_text(image, L.title, figure_text, text);
  for (const auto& t : L.row_labels) draw_text(image, t, figure_text, text);
  for (const auto& t : L.col_labels) draw_text(image, t, figure_text, text);
  for (const auto& t : L.cell_texts) draw_text(image, t, text_color_on(colors[size_t(t.index)]), text);
}

void draw_colorbar(Image& image, const ColorBarSpec& spec, const ColorBarLayout& L, int line_width,
                   const TextRasterizer& text) {
  const Rect& b = L.bar;
  for (int y = 0; y < b.h; ++y) {
    const float t = b.h > 1 ? float(b.h - 1 - y) / float(b.h - 1) : 0.5f;  // hi at the top
    fill_rect(image, {b.x, b.y + y, b.w, 1}, colormap_lookup(spec.colormap, t));
  }
  stroke_rect(image, {b.x - line_width, b.y - line_width, b.w + 2 * line_width, b.h + 2 * line_width}, line_width,
              figure_lines);
  for (const auto& tick : L.ticks) {
    fill_rect(image, tick.mark, figure_lines);
    draw_text(image, tick.label, figure_text, text);
  }
  if (L.title) draw_text(image, *L.title, figure_text, text);
  if (!L.masked_swatch.empty()) {
    fill_rect(image, L.masked_swatch, masked_color(spec.colormap));
    const Rect& s = L.masked_swatch;
    stroke_rect(image, {s.x - line_width, s.y - line_width, s.w + 2 * line_width, s.h + 2 * line_width}, line_width,
                figure_lines);
    if (L.masked_label) draw_text(image, *L.masked_label, figure_text, text);
  }
}

}  // namespace

Image render_figure(const FigureSpec& spec, const FigureLayout& layout, const TextRasterizer& text) {
  require(layout.panels.size() == spec.panels.size(), "the layout was made for another figure");
  Image image(layout.width, layout.height, figure_background);
  for (size_t i = 0; i < spec.panels.size(); ++i) {
    if (spec.panels[i].blank) continue;  // an empty place in the grid
    draw_panel(image, spec.panels[i], layout.panels[i], panel_colors(spec, i), text);
  }
  for (const auto& bar : layout.colorbars)
    draw_colorbar(image, spec.colorbars[size_t(bar.colorbar)], bar, layout.line_width, text);
  if (layout.caption) draw_text(image, *layout.caption, figure_text, text);
  return image;
}

std::string encode_png(const Image& image) {
  require(image.width > 0 && image.height > 0, "cannot encode an empty image as PNG");
  require(image.rgba.size() == size_t(image.width) * size_t(image.height) * 4, "the image buffer has the wrong size");
  // Figures are flat colour: the "none" row filter and a light zlib level keep a 2× heads figure
  // well under the 200 ms export target (stb's defaults, which try every filter at level 8, take
  // several times longer for files barely smaller). Every caller sets the same values.
  stbi_write_force_png_filter = 0;
  stbi_write_png_compression_level = 2;
  // Opaque images (every figure) are written as RGB: a quarter less to compress.
  const bool opaque = [&] {
    for (size_t i = 3; i < image.rgba.size(); i += 4)
      if (image.rgba[i] != 255) return false;
    return true;
  }();
  std::vector<uint8_t> rgb;
  if (opaque) {
    rgb.resize(size_t(image.width) * size_t(image.height) * 3);
    for (size_t p = 0, n = rgb.size() / 3; p < n; ++p)
      for (int c = 0; c < 3; ++c) rgb[p * 3 + size_t(c)] = image.rgba[p * 4 + size_t(c)];
  }
  std::string png;
  const int ok = stbi_write_png_to_func(
      [](void* context, void* data, int size) { static_cast<std::string*>(context)->append(static_cast<char*>(data), size_t(size)); },
      &png, image.width, image.height, opaque ? 3 : 4, opaque ? static_cast<const void*>(rgb.data()) : image.rgba.data(),
      image.width * (opaque ? 3 : 4));
  require(ok != 0 && !png.empty(), "PNG encoding failed (out of memory?)");
  return png;
}

void write_png(const std::filesystem::path& path, const Image& image) { write_file_atomic(path, encode_png(image)); }

}  // namespace attnscope
