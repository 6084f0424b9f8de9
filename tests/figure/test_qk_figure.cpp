// "Why a head attends" as a bar chart (figure/qk_figure.h): the bars are the table's largest entries and the rest
// summed, adding up to the table's sum; PNG and SVG draw one bar per entry, longest for the largest |value|, on
// the side of its sign; the soft-cap line; the Chinese words; refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "attnscope/figure/qk_figure.h"
#include "attnscope/figure/render_png.h"
#include "core/translations.h"
#include "test_paths.h"

using namespace attnscope;

namespace {

// A 3 × 3 table of a made-up cell: query parts embedding, L0.H1 attn, L0 MLP; key parts likewise.
model::QkAttribution made_up(bool capped = false) {
  model::QkAttribution a;
  a.cell = {1, 1, 4, 2};
  using K = model::QkPartKind;
  a.query_parts = {{K::embedding, -1, -1}, {K::head, 0, 1}, {K::mlp, 0, -1}};
  a.key_parts = a.query_parts;
  a.table = Mat(3, 3);
  a.table << 2.0f, -0.5f, 0.25f,  //
      -3.0f, 0.125f, 1.0f,        //
      0.0625f, 0.75f, -0.03125f;
  a.score = float(a.sum());
  a.drawn = capped ? float(20.0 * std::tanh(a.sum() / 20.0)) : a.score;
  a.before_softcap = capped;
  return a;
}

int count(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

struct SvgBar {
  int x = 0, w = 0;
};
std::vector<SvgBar> svg_bars(const std::string& svg) {
  std::vector<SvgBar> bars;
  const std::regex re("<rect class=\"bar\" x=\"(-?\\d+)\" y=\"-?\\d+\" width=\"(\\d+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator(); ++it)
    bars.push_back({std::stoi((*it)[1]), std::stoi((*it)[2])});
  return bars;
}
int svg_zero_x(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("<rect class=\"zero\" x=\"(\\d+)\"")));
  return std::stoi(m[1]);
}

}  // namespace

TEST_CASE("qk figure: the bars are the largest entries, then the rest summed, adding up to the table's sum") {
  const model::QkAttribution a = made_up();
  const std::vector<QkBar> bars = qk_bars(a, 3);
  REQUIRE(bars.size() == 4);
  CHECK(bars[0].label == "L0.H1 attn × embedding");
  CHECK(bars[0].value == doctest::Approx(-3.0));
  CHECK(bars[1].label == "embedding × embedding");
  CHECK(bars[2].label == "L0.H1 attn × L0 MLP");
  CHECK(bars[3].other_parts == 6);
  CHECK(bars[3].label.empty());
  double sum = 0, rest = a.sum();
  for (const QkBar& b : bars) sum += b.value;
  for (int i = 0; i < 3; ++i) rest -= bars[size_t(i)].value;
  CHECK(sum == doctest::Approx(a.sum()).epsilon(1e-12));
  CHECK(bars[3].value == doctest::Approx(rest).epsilon(1e-12));
  // as many bars as entries: no "other" bar
  for (const int n : {8, 9}) {  // as many bars as entries, or one fewer: no "other" bar
    const std::vector<QkBar> all = qk_bars(a, n);
    CHECK(all.size() == 9);
    CHECK(std::none_of(all.begin(), all.end(), [](const QkBar& b) { return b.other_parts > 0; }));
  }
  CHECK_THROWS_WITH_AS(qk_bars(a, 0), doctest::Contains("at least one bar"), InputError);
}

TEST_CASE("qk figure: SVG and PNG draw each bar on its sign's side, the largest |value| the longest") {
  const model::QkAttribution a = made_up();
  const QkFigureInput in{&a, {"The", " cat", " sat", " on", " the"}};
  ExportRequest request;
  request.format = ExportFormat::svg;
  const std::string svg = render_qk_figure(in, request).bytes;
  const std::vector<QkBar> bars = qk_bars(a, qk_figure_bars);
  const std::vector<SvgBar> drawn = svg_bars(svg);
  REQUIRE(drawn.size() == bars.size());
  const int zero = svg_zero_x(svg);
  double largest = 0;
  for (const QkBar& b : bars) largest = std::max(largest, std::abs(b.value));
  for (size_t i = 0; i < bars.size(); ++i) {
    CAPTURE(i);
    if (bars[i].value < 0) CHECK(drawn[i].x + drawn[i].w == zero);
    else CHECK(drawn[i].x == zero);
    if (std::abs(bars[i].value) == largest) {
      for (const SvgBar& other : drawn) CHECK(other.w <= drawn[i].w);
    }
  }
  CHECK(count(svg, "parts sum to ") == 1);
  CHECK(count(svg, "other (") == 0);  // 9 entries, 8 bars: the one left over is a bar of its own
  CHECK(count(svg, "query 4 « the» → key 2 « sat»") == 1);
  CHECK(count(svg, "before the soft-cap") == 0);

  request.format = ExportFormat::png;
  const ExportedFile png = render_qk_figure(in, request);
  REQUIRE(png.image);
  CHECK(png.bytes.substr(1, 3) == "PNG");
  // the PNG has the SVG's size at the same scale, and twice it at scale 2
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("width=\"(\\d+)\" height=\"(\\d+)\"")));
  CHECK(png.image->width == std::stoi(m[1]));
  CHECK(png.image->height == std::stoi(m[2]));
  // the zero line's column is drawn in the figure's line colour over the bars' rows
  const std::regex bar_y("<rect class=\"bar\" x=\"-?\\d+\" y=\"(\\d+)\"");
  std::smatch by;
  REQUIRE(std::regex_search(svg, by, bar_y));
  const Rgba line = png.image->pixel(zero, std::stoi(by[1]) + 2);
  CHECK(line == figure_lines);
  request.scale = 2;
  const ExportedFile twice = render_qk_figure(in, request);
  CHECK(twice.image->width > png.image->width * 3 / 2);
}

TEST_CASE("qk figure: a soft-capped score says both values; Chinese words; refusals") {
  const model::QkAttribution a = made_up(true);
  const QkFigureInput in{&a, {}};
  ExportRequest request;
  request.format = ExportFormat::svg;
  const std::string svg = render_qk_figure(in, request).bytes;
  CHECK(count(svg, "before the soft-cap") == 1);
  char drawn[32];
  std::snprintf(drawn, sizeof drawn, "%.5g", double(a.drawn));
  CHECK(count(svg, std::string(", ") + drawn + " after it") == 1);

  request.words = figure_words(load_translations(std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "assets/i18n/zh.json"));
  const std::string zh = render_qk_figure(in, request).bytes;
  CHECK(count(zh, "各部分之和") == 1);
  CHECK(count(zh, "封顶前分数") == 1);
  CHECK(count(zh, "parts sum to") == 0);

  request.format = ExportFormat::csv;
  CHECK_THROWS_WITH_AS(render_qk_figure(in, request), doctest::Contains("PNG or an SVG"), InputError);
  request.format = ExportFormat::png;
  request.scale = 5;
  CHECK_THROWS_WITH_AS(render_qk_figure(in, request), doctest::Contains("between 1 and 4"), InputError);
  request.scale = 1;
  CHECK_THROWS_AS(render_qk_figure(QkFigureInput{}, request), InputError);
}
