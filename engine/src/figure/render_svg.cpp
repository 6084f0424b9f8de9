// render_svg.cpp — a laid-out figure as an SVG document.
//
// Sections: escaping · numbers and colours · text elements · panels · colour bars · the document
#include "attnscope/figure/render_svg.h"

#include <cstdio>

#include "attnscope/core/error.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope {

// ---- escaping ------------------------------------------------------------------------------------
std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : decode_utf8_lenient(text)) {
    switch (c) {
      case U'&': out += "&amp;"; break;
      case U'<': out += "&lt;"; break;
      case U'>': out += "&gt;"; break;
      case U'"': out += "&quot;"; break;
      case U'\'': out += "&apos;"; break;
      default:
        // XML 1.0 allows only tab, newline and carriage return below U+0020, and not U+FFFE/U+FFFF.
        if ((c < 0x20 && c != U'\t' && c != U'\n' && c != U'\r') || c == 0xFFFE || c == 0xFFFF) out += ' ';
        else out += encode_utf8(c);
    }
  }
  return out;
}

// ---- numbers and colours -------------------------------------------------------------------------
namespace {

std::string hex(Rgba c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

void append_rect(std::string& out, const Rect& r, const char* cls, const std::string& fill) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", cls,
                r.x, r.y, r.w, r.h, fill.c_str());
  out += buf;
}

// An outline drawn inside `r` (`width` thick), as the PNG's stroke_rect does.
void append_outline(std::string& out, const Rect& r, int width, Rgba color, const char* cls) {
  char buf[200];
  const double half = width / 2.0;
  std::snprintf(buf, sizeof buf,
                "<rect class=\"%s\" x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"%s\" "
                "stroke-width=\"%d\"/>\n",
                cls, r.x + half, r.y + half, r.w - 2 * half, r.h - 2 * half, hex(color).c_str(), width);
  out += buf;
}

// ---- text elements -------------------------------------------------------------------------------
void append_text(std::string& out, const TextPlacement& t, const char* cls, const TextRasterizer& text) {
  if (t.text.empty() || t.rect.empty()) return;
  char buf[200];
  const float size = text.css_font_size(t.pixel_size);
  if (t.stacked) {
    // One character under the other, each centred on the column (as TextRasterizer::draw_stacked).
    std::snprintf(buf, sizeof buf, "<text class=\"%s\" font-size=\"%.2f\" text-anchor=\"middle\">", cls, size);
    out += buf;
    int y = t.rect.y;
    for (char32_t c : decode_utf8_lenient(t.text)) {
      const std::string one = encode_utf8(c);
      std::snprintf(buf, sizeof buf, "<tspan x=\"%.1f\" y=\"%d\">", t.rect.x + t.rect.w / 2.0, y + t.baseline);
      out += buf;
      out += escape_xml(one) + "</tspan>";
      y += text.text_box(one, t.pixel_size).height;
    }
    out += "</text>\n";
    return;
  }
  if (t.rotated) {
    // The unrotated line's top faces left: its baseline runs up the column rect.x + baseline.
    std::snprintf(buf, sizeof buf, "<text class=\"%s\" transform=\"translate(%d %d) rotate(-90)\" font-size=\"%.2f\">",
                  cls, t.rect.x + t.baseline, t.rect.bottom(), size);
  } else {
    std::snprintf(buf, sizeof buf, "<text class=\"%s\" x=\"%d\" y=\"%d\" font-size=\"%.2f\">", cls, t.rect.x,
                  t.rect.y + t.baseline, size);
  }
  out += buf;
  out += escape_xml(t.text);
  out += "</text>\n";
}

// ---- panels --------------------------------------------------------------------------------------
void append_panel(std::string& out, const PanelSpec& p, const PanelLayout& L, const std::vector<Rgba>& colors,
                  const TextRasterizer& text) {
  out += "<g class=\"panel\">\n<title>" + escape_xml(p.title) + "</title>\n";
  append_rect(out, L.frame, "frame", hex(p.frame.value_or(figure_lines)));
  out += "<g class=\"cells\" shape-rendering=\"crispEdges\">\n";
  for (int r = 0; r < p.rows; ++r)
    for (int c = 0; c < p.cols; ++c)
      append_rect(out, L.cell(r, c), "cell", hex(colors[size_t(r) * size_t(p.cols) + size_t(c)]));
  out += "</g>\n";
  if (p.marked_row >= 0) {
    const Rect cell = L.cell(p.marked_row, p.marked_col);
    const int ring = std::max(1, cell.w / 8);
    append_outline(out, cell, ring, {0, 0, 0, 255}, "marker");
    append_outline(out, {cell.x + ring, cell.y + ring, cell.w - 2 * ring, cell.h - 2 * ring}, ring,
                   {255, 255, 255, 255}, "marker");
  }
  append_text(out, L.title, "title", text);
  for (const auto& t : L.row_labels) append_text(out, t, "row-label", text);
  for (const auto& t : L.col_labels) append_text(out, t, "col-label", text);
  for (const auto& t : L.cell_texts) {  // black or white on the cell's colour
    out += "<g fill=\"" + hex(text_color_on(colors[size_t(t.index)])) + "\">";
    append_text(out, t, "cell-text", text);
    out += "</g>\n";
  }
  out += "</g>\n";
}

// ---- colour bars ---------------------------------------------------------------------------------
void append_colorbar(std::string& out, const ColorBarSpec& spec, const ColorBarLayout& L, int index, int line_width,
                     const TextRasterizer& text) {
  const std::string id = "colorbar" + std::to_string(index);
  out += "<g class=\"colorbar\">\n<defs><linearGradient id=\"" + id + "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  constexpr int stops = 33;
  for (int i = 0; i < stops; ++i) {
    const float t = float(i) / float(stops - 1);
    char buf[96];
    std::snprintf(buf, sizeof buf, "<stop offset=\"%.4f\" stop-color=\"%s\"/>\n", t,
                  hex(colormap_lookup(spec.colormap, t)).c_str());
    out += buf;
  }
  out += "</linearGradient></defs>\n";
  append_rect(out, L.bar, "bar", "url(#" + id + ")");
  const Rect& b = L.bar;
  append_outline(out, {b.x - line_width, b.y - line_width, b.w + 2 * line_width, b.h + 2 * line_width}, line_width,
                 figure_lines, "outline");
  for (const auto& tick : L.ticks) {
    append_rect(out, tick.mark, "tick", hex(figure_lines));
    append_text(out, tick.label, "tick-label", text);
  }
  if (L.title) append_text(out, *L.title, "colorbar-title", text);
  if (!L.masked_swatch.empty()) {
    append_rect(out, L.masked_swatch, "masked", hex(masked_color(spec.colormap)));
    const Rect& s = L.masked_swatch;
    append_outline(out, {s.x - line_width, s.y - line_width, s.w + 2 * line_width, s.h + 2 * line_width}, line_width,
                   figure_lines, "outline");
    if (L.masked_label) append_text(out, *L.masked_label, "tick-label", text);
  }
  out += "</g>\n";
}

}  // namespace

// ---- the document --------------------------------------------------------------------------------
std::string render_svg(const FigureSpec& spec, const FigureLayout& layout, const TextRasterizer& text) {
  require(layout.panels.size() == spec.panels.size(), "the layout was made for another figure");
  int64_t cells = 0;
  for (const auto& p : spec.panels) cells += int64_t(p.rows) * p.cols;
  require(cells <= svg_max_cells, "an SVG of " + std::to_string(cells) + " cells would be too large to open (limit " +
                                      std::to_string(svg_max_cells) +
                                      "); export PNG instead, or one head (--what head:N)");
  std::string out;
  out.reserve(size_t(cells) * 90 + 4096);
  char head[512];
  std::snprintf(head, sizeof head,
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                "viewBox=\"0 0 %d %d\" font-family=\"%s\" fill=\"%s\">\n",
                layout.width, layout.height, layout.width, layout.height,
                escape_xml(text.css_font_families()).c_str(), hex(figure_text).c_str());
  out += head;
  append_rect(out, {0, 0, layout.width, layout.height}, "background", hex(figure_background));
  for (size_t i = 0; i < spec.panels.size(); ++i) {
    if (spec.panels[i].blank) continue;  // an empty place in the grid
    append_panel(out, spec.panels[i], layout.panels[i], panel_colors(spec, i), text);
  }
  for (size_t i = 0; i < layout.colorbars.size(); ++i) {
    const ColorBarLayout& bar = layout.colorbars[i];
    append_colorbar(out, spec.colorbars[size_t(bar.colorbar)], bar, int(i), layout.line_width, text);
  }
  if (layout.caption) append_text(out, *layout.caption, "caption", text);
  out += "</svg>\n";
  return out;
}

}  // namespace attnscope
