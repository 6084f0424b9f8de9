// qk_figure.cpp — the bar chart of "why a head attends" (qk_figure.h), drawn into an Image (PNG) or written as
// SVG from one layout, so that both show the same bars at the same places.
//
// Sections: bars · words · layout · PNG · SVG · render
#include "attnscope/figure/qk_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnscope/core/error.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/figure/render_svg.h"

namespace attnscope {

// ---- bars --------------------------------------------------------------------------------------------

std::vector<QkBar> qk_bars(const model::QkAttribution& a, int n) {
  require(n >= 1, "a QK attribution chart needs at least one bar, got " + std::to_string(n));
  // One entry left over is drawn as itself, not as "other (1 parts)".
  const int entries = int(a.table.size());
  const std::vector<model::QkEntry> top = model::largest_entries(a, entries == n + 1 ? entries : n);
  std::vector<QkBar> bars;
  double shown = 0;
  for (const model::QkEntry& e : top) {
    bars.push_back({model::qk_part_label(a.query_parts[size_t(e.query_part)], true) + " × " +
                        model::qk_part_label(a.key_parts[size_t(e.key_part)], false),
                    e.value, 0});
    shown += e.value;
  }
  const int rest = entries - int(top.size());
  if (rest > 0) bars.push_back({"", a.sum() - shown, rest});
  return bars;
}

// ---- words -------------------------------------------------------------------------------------------
namespace {

std::string number(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string token_of(const QkFigureInput& in, int t) {
  return size_t(t) < in.labels.size() ? in.labels[size_t(t)] : std::string();
}

}  // namespace

std::string qk_figure_title(const QkFigureInput& in, const FigureWords& words) {
  const model::QkCell& c = in.attribution->cell;
  return words.format("layer %d · head %d · query %d «%s» → key %d «%s»", c.layer, c.head, c.query,
                      token_of(in, c.query).c_str(), c.key, token_of(in, c.key).c_str());
}

std::string qk_score_line(const model::QkAttribution& a, const FigureWords& words) {
  if (a.before_softcap)
    return words.format("score %s before the soft-cap, %s after it (drawn); the parts are attributed before the cap",
                        number(a.score, 5).c_str(), number(a.drawn, 5).c_str());
  return words.format("score %s = scale·q·k", number(a.score, 5).c_str());
}

std::string qk_sum_line(const model::QkAttribution& a, const FigureWords& words) {
  return words.format("parts sum to %s (score %s)", number(a.sum(), 7).c_str(), number(a.score, 7).c_str());
}

std::string qk_other_label(int parts, const FigureWords& words) { return words.format("other (%d parts)", parts); }

// ---- layout ------------------------------------------------------------------------------------------
namespace {

struct Line {
  std::string text;
  int x = 0, y = 0;  // the box's top-left
  float px = 0;
  TextBox box;
};

struct BarPlace {
  Rect rect;
  Rgba color;
};

struct QkLayout {
  int width = 0, height = 0, line_width = 1;
  std::vector<Line> lines;  // every text
  std::vector<BarPlace> bars;
  Rect zero;                // the zero line
};

// A bar's colour: the diverging map, kept away from its white middle so that a small bar still shows.
Rgba bar_color(double value, double largest) {
  const double t = std::min(1.0, std::abs(value) / std::max(largest, 1e-30));
  const double shift = 0.2 + 0.3 * t;
  return colormap_lookup(Colormap::diverging, float(value < 0 ? 0.5 - shift : 0.5 + shift));
}

QkLayout layout_qk(const QkFigureInput& in, const ExportRequest& request, const TextRasterizer& text) {
  const model::QkAttribution& a = *in.attribution;
  const float s = request.scale;
  const float label_px = 14 * s, title_px = 17 * s;
  const int pad = int(std::lround(12 * s)), gap = int(std::lround(8 * s));
  const int row_h = int(std::lround(22 * s)), bar_h = int(std::lround(16 * s)), area_w = int(std::lround(320 * s));
  QkLayout out;
  out.line_width = std::max(1, int(std::lround(s)));
  const std::vector<QkBar> bars = qk_bars(a, qk_figure_bars);
  std::vector<std::string> labels, values;
  int label_w = 0, value_w = 0;
  double neg = 0, pos = 0, largest = 0;
  for (const QkBar& b : bars) {
    labels.push_back(b.other_parts > 0 ? qk_other_label(b.other_parts, request.words) : b.label);
    values.push_back(number(b.value, 4));
    label_w = std::max(label_w, text.text_box(labels.back(), label_px).width);
    value_w = std::max(value_w, text.text_box(values.back(), label_px).width);
    neg = std::max(neg, -b.value);
    pos = std::max(pos, b.value);
    largest = std::max(largest, std::abs(b.value));
  }
  const std::string title = qk_figure_title(in, request.words);
  const std::string score = qk_score_line(a, request.words);
  const std::string sum = qk_sum_line(a, request.words);
  const TextBox title_box = text.text_box(title, title_px), score_box = text.text_box(score, label_px),
                sum_box = text.text_box(sum, label_px);
  const int chart_w = label_w + gap + area_w + gap + value_w;
  out.width = pad * 2 + std::max({chart_w, title_box.width, score_box.width, sum_box.width});
  int y = pad;
  out.lines.push_back({title, pad, y, title_px, title_box});
  y += title_box.height + gap;
  out.lines.push_back({score, pad, y, label_px, score_box});
  y += score_box.height + gap;
  const int top = y;
  const int area_x = pad + label_w + gap;
  const double span = neg + pos > 0 ? neg + pos : 1.0;
  const int zero_x = area_x + int(std::lround(double(area_w) * neg / span));
  for (size_t i = 0; i < bars.size(); ++i) {
    const TextBox lb = text.text_box(labels[i], label_px), vb = text.text_box(values[i], label_px);
    out.lines.push_back({labels[i], area_x - gap - lb.width, y + (row_h - lb.height) / 2, label_px, lb});
    out.lines.push_back({values[i], area_x + area_w + gap, y + (row_h - vb.height) / 2, label_px, vb});
    const int length = int(std::lround(double(area_w) * std::abs(bars[i].value) / span));
    const int x0 = bars[i].value < 0 ? zero_x - length : zero_x;
    out.bars.push_back({{x0, y + (row_h - bar_h) / 2, std::max(length, 1), bar_h}, bar_color(bars[i].value, largest)});
    y += row_h;
  }
  out.zero = {zero_x, top, out.line_width, y - top};
  y += gap;
  out.lines.push_back({sum, pad, y, label_px, sum_box});
  y += sum_box.height + pad;
  out.height = y;
  return out;
}

// ---- PNG ---------------------------------------------------------------------------------------------

Image draw_qk(const QkLayout& l, const TextRasterizer& text) {
  Image image(l.width, l.height, figure_background);
  for (const BarPlace& b : l.bars) fill_rect(image, b.rect, b.color);
  fill_rect(image, l.zero, figure_lines);
  for (const Line& t : l.lines) text.draw(image, t.text, t.x, t.y, t.px, figure_text);
  return image;
}

// ---- SVG ---------------------------------------------------------------------------------------------

std::string hex(Rgba c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string svg_qk(const QkLayout& l, const TextRasterizer& text) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
                "viewBox=\"0 0 %d %d\" font-family=\"",
                l.width, l.height, l.width, l.height);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += buf + escape_xml(text.css_font_families()) + "\" fill=\"" + hex(figure_text) + "\">\n";
  std::snprintf(buf, sizeof buf, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n", l.width, l.height,
                hex(figure_background).c_str());
  out += buf;
  for (const BarPlace& b : l.bars) {
    std::snprintf(buf, sizeof buf, "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
                  b.rect.x, b.rect.y, b.rect.w, b.rect.h, hex(b.color).c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof buf, "<rect class=\"zero\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
                l.zero.x, l.zero.y, l.zero.w, l.zero.h, hex(figure_lines).c_str());
  out += buf;
  for (const Line& t : l.lines) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\" font-size=\"%.2f\">", t.x, t.y + t.box.baseline,
                  text.css_font_size(t.px));
    out += buf + escape_xml(t.text) + "</text>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace

// ---- render ------------------------------------------------------------------------------------------

ExportedFile render_qk_figure(const QkFigureInput& in, const ExportRequest& request, const TextRasterizer& text) {
  require(in.attribution != nullptr, "no QK attribution to draw");
  require(request.format == ExportFormat::png || request.format == ExportFormat::svg,
          std::string("the QK attribution's chart is a PNG or an SVG (its table is the CSV), not ") +
              to_string(request.format));
  require(request.scale >= min_export_scale && request.scale <= max_export_scale,
          "the scale must be between 1 and 4, got " + number(request.scale, 4));
  const QkLayout l = layout_qk(in, request, text);
  ExportedFile out;
  if (request.format == ExportFormat::png) {
    out.image = draw_qk(l, text);
    out.bytes = encode_png(*out.image);
  } else {
    out.bytes = svg_qk(l, text);
  }
  return out;
}

}  // namespace attnscope
