// test_render_layout.cpp — heatmap_layout.h: panels, cells, labels and colour bars never overlap or
// leave the image, labels thin out when cells are small, scale multiplies sizes, ticks are nice.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/text_raster.h"

using namespace attnscope;

namespace {

// A figure of `panels` panels of T × T cells with token labels, one shared bar or one per panel.
FigureSpec make_spec(int panels, int tokens, bool shared, const std::vector<std::string>& words) {
  FigureSpec f;
  for (int p = 0; p < panels; ++p) {
    PanelSpec s;
    s.title = "head " + std::to_string(p) + " · kv group " + std::to_string(p / 2);
    s.rows = s.cols = tokens;
    for (int i = 0; i < tokens * tokens; ++i) s.values.push_back(float((i * 7 + p) % 13) / 12.0f);
    for (int t = 0; t < tokens; ++t) s.row_labels.push_back(words[size_t(t) % words.size()]);
    s.col_labels = s.row_labels;
    s.frame = kv_group_color(p / 2);
    s.colorbar = shared ? 0 : p;
    f.panels.push_back(s);
    if (!shared || p == 0) f.colorbars.push_back({{0.0f, 1.0f}, Colormap::viridis, "probability", true});
  }
  f.caption = "MHA · H=" + std::to_string(panels) + " · a caption that is one line long";
  return f;
}

std::vector<Rect> text_rects(const FigureLayout& L) {
  std::vector<Rect> rects;
  for (const auto& p : L.panels) {
    if (!p.title.rect.empty()) rects.push_back(p.title.rect);
    for (const auto& t : p.row_labels) rects.push_back(t.rect);
    for (const auto& t : p.col_labels) rects.push_back(t.rect);
  }
  for (const auto& b : L.colorbars) {
    for (const auto& t : b.ticks) rects.push_back(t.label.rect);
    if (b.title) rects.push_back(b.title->rect);
    if (b.masked_label) rects.push_back(b.masked_label->rect);
  }
  if (L.caption) rects.push_back(L.caption->rect);
  return rects;
}

// Everything inside the image; no text over text, over a matrix, a frame or a colour bar; no two
// panels over each other.
void check_no_overlap(const FigureLayout& L) {
  const Rect image{0, 0, L.width, L.height};
  const std::vector<Rect> texts = text_rects(L);
  std::vector<Rect> shapes;
  for (const auto& p : L.panels) shapes.push_back(p.frame);
  for (const auto& b : L.colorbars) {
    shapes.push_back(b.bar);
    if (!b.masked_swatch.empty()) shapes.push_back(b.masked_swatch);
  }
  for (size_t i = 0; i < texts.size(); ++i) {
    INFO("text rect " << i << " at " << texts[i].x << "," << texts[i].y << " " << texts[i].w << "x" << texts[i].h);
    CHECK(texts[i].inside(image));
    for (size_t j = i + 1; j < texts.size(); ++j) CHECK_FALSE(texts[i].overlaps(texts[j]));
    for (const Rect& s : shapes) CHECK_FALSE(texts[i].overlaps(s));
  }
  for (const Rect& s : shapes) CHECK(s.inside(image));
  for (size_t i = 0; i < L.panels.size(); ++i) {
    CHECK(L.panels[i].bounds.inside(image));
    for (size_t j = i + 1; j < L.panels.size(); ++j) CHECK_FALSE(L.panels[i].bounds.overlaps(L.panels[j].bounds));
    for (const auto& b : L.colorbars) CHECK_FALSE(L.panels[i].bounds.overlaps(b.bar));
  }
}

const std::vector<std::string> english = {"The", "cat", "sat", "on", "the", "mat", "because", "it", "was", "tired", "."};
const std::vector<std::string> chinese = {"我", "喜", "欢", "打", "篮", "球", "。"};

}  // namespace

TEST_CASE("heatmap layout: nothing overlaps or leaves the image, at every scale and size") {
  const TextRasterizer& text = default_text_rasterizer();
  struct Case {
    int panels, tokens;
    bool shared;
    const std::vector<std::string>* words;
  };
  for (const Case& c : {Case{8, 11, true, &english}, Case{8, 11, false, &english}, Case{1, 7, true, &chinese},
                        Case{16, 128, true, &english}, Case{3, 40, false, &chinese}, Case{1, 1, true, &english}}) {
    for (float scale : {1.0f, 1.5f, 2.0f, 4.0f}) {
      if (c.tokens == 128 && scale > 2) continue;  // 16 heads of 128 tokens at 4× exceed the image limit
      INFO(c.panels << " panels of " << c.tokens << " tokens at " << scale << "x");
      const FigureSpec spec = make_spec(c.panels, c.tokens, c.shared, *c.words);
      const FigureLayout L = layout_figure(spec, scale, text);
      REQUIRE(L.panels.size() == size_t(c.panels));
      CHECK(L.colorbars.size() == (c.shared ? 1u : size_t(c.panels)));
      check_no_overlap(L);
      for (const auto& p : L.panels) {
        CHECK(p.matrix.w == c.tokens * p.cell_w);
        CHECK(p.matrix.h == c.tokens * p.cell_h);
        CHECK(p.cell(c.tokens - 1, c.tokens - 1).inside(p.matrix));
        CHECK(p.matrix.inside(p.frame));
      }
    }
  }
}

TEST_CASE("heatmap layout: labels thin out when cells are smaller than the text, and keep order") {
  const TextRasterizer& text = default_text_rasterizer();
  const FigureLayout small = layout_figure(make_spec(1, 128, true, english), 1.0f, text);
  const PanelLayout& p = small.panels[0];
  CHECK(p.cell_h == 3);
  CHECK(p.row_label_stride > 1);
  CHECK(p.row_labels.size() < 128);
  CHECK(p.row_labels.size() >= 128 / size_t(p.row_label_stride) - 1);
  for (size_t i = 1; i < p.row_labels.size(); ++i) CHECK(p.row_labels[i].index > p.row_labels[i - 1].index);
  for (size_t i = 1; i < p.col_labels.size(); ++i) CHECK(p.col_labels[i].index > p.col_labels[i - 1].index);
  // Each kept row label sits beside its own row (within the matrix's height).
  for (const auto& t : p.row_labels) {
    CHECK(t.rect.right() <= p.matrix.x);
    const int row_centre = p.cell(t.index, 0).centre_y();
    CHECK(std::abs(t.rect.centre_y() - row_centre) <= t.rect.h);
  }
  // Big cells keep every label.
  const FigureLayout big = layout_figure(make_spec(1, 11, true, english), 1.0f, text);
  CHECK(big.panels[0].row_labels.size() == 11);
  CHECK(big.panels[0].col_labels.size() == 11);
}

TEST_CASE("heatmap layout: column labels turn when words are wider than cells, not for Chinese") {
  const TextRasterizer& text = default_text_rasterizer();
  const FigureLayout en = layout_figure(make_spec(1, 11, true, english), 1.0f, text);
  bool any_turned = false;
  for (const auto& t : en.panels[0].col_labels) any_turned = any_turned || t.rotated;
  CHECK(any_turned);
  const FigureLayout zh = layout_figure(make_spec(1, 7, true, chinese), 1.0f, text);
  for (const auto& t : zh.panels[0].col_labels) CHECK_FALSE(t.rotated);
}

TEST_CASE("heatmap layout: scale multiplies cells, text and the image") {
  const TextRasterizer& text = default_text_rasterizer();
  const FigureSpec spec = make_spec(4, 11, true, english);
  const FigureLayout one = layout_figure(spec, 1.0f, text);
  const FigureLayout two = layout_figure(spec, 2.0f, text);
  CHECK(two.panels[0].cell_w == 2 * one.panels[0].cell_w);
  CHECK(two.panels[0].title.pixel_size == doctest::Approx(2 * one.panels[0].title.pixel_size));
  CHECK(two.width == doctest::Approx(2.0 * one.width).epsilon(0.05));
  CHECK(two.height == doctest::Approx(2.0 * one.height).epsilon(0.05));
}

TEST_CASE("heatmap layout: long labels are shortened with an ellipsis, never clipped") {
  const TextRasterizer& text = default_text_rasterizer();
  FigureSpec spec = make_spec(1, 3, true, {"supercalifragilisticexpialidocious-and-then-some-more", "a", "b"});
  const FigureLayout L = layout_figure(spec, 1.0f, text);
  const TextPlacement& first = L.panels[0].row_labels[0];
  CHECK(first.text.find("\u2026") != std::string::npos);
  CHECK(first.rect.w == text.text_box(first.text, first.pixel_size).width);
  CHECK(first.rect.w <= int(10 * first.pixel_size));
  check_no_overlap(L);
}

TEST_CASE("heatmap layout: automatic grid, kv colours and the bar placement") {
  CHECK(automatic_grid_columns(1) == 1);
  CHECK(automatic_grid_columns(4) == 4);
  CHECK(automatic_grid_columns(8) == 4);
  CHECK(automatic_grid_columns(9) == 3);
  CHECK(automatic_grid_columns(16) == 4);
  CHECK(automatic_grid_columns(64) == 8);
  CHECK_FALSE(kv_group_color(0) == kv_group_color(1));
  CHECK_FALSE(kv_group_color(0) == kv_group_color(10));
  CHECK(kv_group_color(0) == kv_group_color(kv_group_palette_size));
  const TextRasterizer& text = default_text_rasterizer();
  const FigureLayout L = layout_figure(make_spec(8, 11, true, english), 1.0f, text);
  // 8 panels → 4 × 2, matrices aligned by row and column; the shared bar right of all of them.
  CHECK(L.panels[0].matrix.y == L.panels[3].matrix.y);
  CHECK(L.panels[0].matrix.x == L.panels[4].matrix.x);
  CHECK(L.panels[4].matrix.y > L.panels[0].matrix.bottom());
  for (const auto& p : L.panels) CHECK(L.colorbars[0].bar.x > p.bounds.right());
  CHECK(L.colorbars[0].bar.y == L.panels[0].matrix.y);
  // Per-panel bars sit right of their own panel.
  const FigureLayout per = layout_figure(make_spec(2, 11, false, english), 1.0f, text);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(per.colorbars[i].bar.x > per.panels[i].frame.right());
    CHECK(per.colorbars[i].bar.y == per.panels[i].matrix.y);
  }
}

TEST_CASE("heatmap layout: colour bar ticks are nice numbers inside the range, top = high") {
  const TextRasterizer& text = default_text_rasterizer();
  FigureSpec spec = make_spec(1, 11, true, english);
  spec.colorbars[0].range = {-2.3f, 3.1f};
  const FigureLayout L = layout_figure(spec, 1.0f, text);
  const ColorBarLayout& bar = L.colorbars[0];
  REQUIRE(bar.ticks.size() >= 3);
  for (size_t i = 1; i < bar.ticks.size(); ++i) {
    CHECK(bar.ticks[i].value > bar.ticks[i - 1].value);
    CHECK(bar.ticks[i].mark.y < bar.ticks[i - 1].mark.y);  // higher values further up
  }
  for (const auto& t : bar.ticks) {
    CHECK(t.value >= -2.3f);
    CHECK(t.value <= 3.1f);
    CHECK(std::stod(t.label.text) == doctest::Approx(t.value));
  }
  CHECK(bar.masked_label.has_value());
  CHECK(bar.masked_swatch.y > bar.bar.bottom());
}

TEST_CASE("heatmap layout: nice ticks and their numbers") {
  CHECK(nice_ticks({0.0f, 1.0f}, 6) == std::vector<float>{0.0f, 0.2f, 0.4f, 0.6f, 0.8f, 1.0f});
  CHECK(nice_ticks({-1.0f, 1.0f}, 5) == std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f});
  CHECK(nice_ticks({3.0f, 3.0f}, 5) == std::vector<float>{3.0f});  // min == max: the one value
  const auto odd = nice_ticks({0.013f, 0.0172f}, 3);
  REQUIRE(odd.size() >= 2);
  CHECK(odd.front() >= 0.013f);
  CHECK(odd.back() <= 0.0172f);
  CHECK(format_tick(0.25f, 0.25f) == "0.25");
  CHECK(format_tick(0.4f, 0.2f) == "0.4");
  CHECK(format_tick(-2.0f, 1.0f) == "-2");
  CHECK(format_tick(1e-7f, 1e-7f) == "1e-07");
  CHECK(format_tick(-1e-9f, 0.5f) == "0");
  CHECK(format_tick(250000.0f, 50000.0f) == "2.5e+05");
}

TEST_CASE("heatmap layout: invalid figures and scales are refused with the reason") {
  const TextRasterizer& text = default_text_rasterizer();
  const FigureSpec good = make_spec(1, 3, true, english);
  for (float scale : {0.5f, 4.5f, NAN, 0.0f}) CHECK_THROWS_AS(layout_figure(good, scale, text), InputError);
  FigureSpec bad = good;
  bad.panels[0].values.pop_back();
  CHECK_THROWS_WITH_AS(layout_figure(bad, 1.0f, text), doctest::Contains("8 values for 3x3 cells"), InputError);
  bad = good;
  bad.panels[0].row_labels.push_back("extra");
  CHECK_THROWS_AS(layout_figure(bad, 1.0f, text), InputError);
  bad = good;
  bad.panels[0].colorbar = 3;
  CHECK_THROWS_AS(layout_figure(bad, 1.0f, text), InputError);
  bad = good;
  bad.panels[0].marked_row = 3;
  bad.panels[0].marked_col = 0;
  CHECK_THROWS_AS(layout_figure(bad, 1.0f, text), InputError);
  bad = good;
  bad.panels.clear();
  CHECK_THROWS_AS(layout_figure(bad, 1.0f, text), InputError);
  bad = good;
  bad.colorbars[0].range = {1.0f, NAN};
  CHECK_THROWS_AS(layout_figure(bad, 1.0f, text), InputError);
}

namespace {

// CIEDE2000 colour difference of two sRGB colours (Sharma, Wu & Dalal 2005): about 1 is the least a
// person notices side by side; categorical palettes aim for 15 or more.
double ciede2000(Rgba c1, Rgba c2) {
  auto lab = [](Rgba c) {
    auto lin = [](int v) {
      const double x = v / 255.0;
      return x <= 0.04045 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
    };
    const double r = lin(c.r), g = lin(c.g), b = lin(c.b);
    const double X = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, Y = 0.2126 * r + 0.7152 * g + 0.0722 * b,
                 Z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
    return std::array<double, 3>{116 * f(Y) - 16, 500 * (f(X) - f(Y)), 200 * (f(Y) - f(Z))};
  };
  const auto [L1, a1, b1] = lab(c1);
  const auto [L2, a2, b2] = lab(c2);
  const double deg = M_PI / 180.0;
  const double Cb = (std::hypot(a1, b1) + std::hypot(a2, b2)) / 2;
  const double G = 0.5 * (1 - std::sqrt(std::pow(Cb, 7) / (std::pow(Cb, 7) + std::pow(25.0, 7))));
  const double a1p = (1 + G) * a1, a2p = (1 + G) * a2;
  const double C1p = std::hypot(a1p, b1), C2p = std::hypot(a2p, b2);
  auto hue = [](double b, double a) {
    const double h = std::atan2(b, a) * 180.0 / M_PI;
    return h < 0 ? h + 360 : h;
  };
  const double h1p = hue(b1, a1p), h2p = hue(b2, a2p);
  double dhp = 0;
  if (C1p * C2p != 0) dhp = std::abs(h2p - h1p) <= 180 ? h2p - h1p : (h2p - h1p > 180 ? h2p - h1p - 360 : h2p - h1p + 360);
  const double dLp = L2 - L1, dCp = C2p - C1p, dHp = 2 * std::sqrt(C1p * C2p) * std::sin(dhp / 2 * deg);
  const double Lbp = (L1 + L2) / 2, Cbp = (C1p + C2p) / 2;
  double hbp = h1p + h2p;
  if (C1p * C2p != 0) hbp = std::abs(h1p - h2p) <= 180 ? (h1p + h2p) / 2 : (h1p + h2p < 360 ? (h1p + h2p + 360) / 2 : (h1p + h2p - 360) / 2);
  const double T = 1 - 0.17 * std::cos((hbp - 30) * deg) + 0.24 * std::cos(2 * hbp * deg) +
                   0.32 * std::cos((3 * hbp + 6) * deg) - 0.20 * std::cos((4 * hbp - 63) * deg);
  const double dth = 30 * std::exp(-std::pow((hbp - 275) / 25, 2));
  const double RC = 2 * std::sqrt(std::pow(Cbp, 7) / (std::pow(Cbp, 7) + std::pow(25.0, 7)));
  const double SL = 1 + 0.015 * (Lbp - 50) * (Lbp - 50) / std::sqrt(20 + (Lbp - 50) * (Lbp - 50));
  const double SC = 1 + 0.045 * Cbp, SH = 1 + 0.015 * Cbp * T, RT = -std::sin(2 * dth * deg) * RC;
  return std::sqrt(std::pow(dLp / SL, 2) + std::pow(dCp / SC, 2) + std::pow(dHp / SH, 2) + RT * (dCp / SC) * (dHp / SH));
}

// True when `value` is a whole multiple of `step` and `step` is 1, 2 or 5 × 10^k.
bool round_tick(float value, float step) {
  if (!(step > 0)) return false;
  const double m = step / std::pow(10.0, std::floor(std::log10(double(step)) + 1e-6));
  const bool nice = std::abs(m - 1) < 1e-4 || std::abs(m - 2) < 1e-4 || std::abs(m - 5) < 1e-4;
  const double k = double(value) / double(step);
  return nice && std::abs(k - std::round(k)) < 1e-3;
}

}  // namespace

TEST_CASE("heatmap layout: the kv group colours are pairwise distinguishable for 16 groups") {
  REQUIRE(kv_group_palette_size >= 16);
  double closest = 1e9;
  for (int a = 0; a < kv_group_palette_size; ++a)
    for (int b = a + 1; b < kv_group_palette_size; ++b) {
      CAPTURE(a);
      CAPTURE(b);
      const double d = ciede2000(kv_group_color(a), kv_group_color(b));
      CHECK(d >= 15.0);
      closest = std::min(closest, d);
    }
  MESSAGE("closest pair of kv group colours: ΔE2000 = " << closest);
  // The check itself tells colours apart: two Tableau blues a shade apart are close, black and white far.
  CHECK(ciede2000({78, 121, 167, 255}, {82, 125, 170, 255}) < 3.0);
  CHECK(ciede2000({0, 0, 0, 255}, {255, 255, 255, 255}) > 99.0);
  // Past the palette the colours repeat, so a grid of more groups names them in captions.
  CHECK(kv_groups_have_own_colors(16));
  CHECK_FALSE(kv_groups_have_own_colors(17));
  CHECK(kv_group_color(3) == kv_group_color(3 + kv_group_palette_size));
  CHECK(kv_group_color(-1) == kv_group_color(kv_group_palette_size - 1));
}

TEST_CASE("heatmap layout: colour bar ticks are round numbers for any range, never the raw ends") {
  // The window's probability bars: the smallest probability is a raw number, never a tick; so close
  // to 0 it is the tick 0.
  const std::vector<float> probs = nice_ticks({9.68e-08f, 0.43f}, 5);
  CHECK(probs == std::vector<float>{0.0f, 0.1f, 0.2f, 0.3f, 0.4f});
  CHECK(format_tick(probs[0], tick_step(probs)) == "0");
  CHECK(format_tick(probs[1], tick_step(probs)) == "0.1");
  CHECK(nice_ticks({0.0123f, 0.43f}, 5) == std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  // A narrow range between two round numbers still gets round ticks.
  CHECK(nice_ticks({0.31f, 0.39f}, 5) == std::vector<float>{0.32f, 0.34f, 0.36f, 0.38f});
  CHECK(nice_ticks({0.31f, 0.39f}, 2).size() == 1);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-9.0f, 5.0f), unit(-1.0f, 1.0f);
  for (int trial = 0; trial < 3000; ++trial) {
    const float scale = std::pow(10.0f, exponent(rng));
    float lo = unit(rng) * scale, hi = unit(rng) * scale;
    if (lo > hi) std::swap(lo, hi);
    if (!(hi > lo)) continue;
    const int most = 2 + trial % 6;
    CAPTURE(lo);
    CAPTURE(hi);
    CAPTURE(most);
    const std::vector<float> ticks = nice_ticks({lo, hi}, most);
    REQUIRE(!ticks.empty());
    CHECK(int(ticks.size()) <= most);
    if (most >= 5) CHECK(ticks.size() >= 2);  // 1-2-5 steps are at most 2.5 apart
    const float step = tick_step(ticks);
    for (size_t i = 0; i < ticks.size(); ++i) {
      CHECK(ticks[i] >= lo - 1e-5f * step);
      CHECK(ticks[i] <= hi + 1e-5f * step);
      if (i > 0) CHECK(ticks[i] > ticks[i - 1]);
      if (ticks.size() >= 2) CHECK(round_tick(ticks[i], step));
      // The number reads as the tick: no more digits than the step needs.
      if (ticks.size() >= 2) CHECK(std::stod(format_tick(ticks[i], step)) == doctest::Approx(ticks[i]).epsilon(1e-3));
    }
  }
}

TEST_CASE("heatmap layout: turned CJK column labels stand one character under the other") {
  const TextRasterizer& text = default_text_rasterizer();
  REQUIRE(text.has_cjk());
  CHECK(label_stacks("我喜欢"));
  CHECK(label_stacks("3个"));
  CHECK_FALSE(label_stacks("because"));
  CHECK_FALSE(label_stacks("·"));
  // Tokens of a real tokenizer: several characters each. Three tokens get 36 px cells at 1×, where
  // "篮球" fits across but "我喜欢" does not: the labels turn, the CJK ones stacked.
  FigureSpec spec = make_spec(1, 3, true, {"我喜欢", "打", "篮球"});
  const FigureLayout L = layout_figure(spec, 1.0f, text);
  const PanelLayout& p = L.panels[0];
  REQUIRE(p.col_labels.size() == 3);
  const int line = text.text_box("Ag", 14.0f).height;
  for (const TextPlacement& t : p.col_labels) {
    CAPTURE(t.text);
    CHECK(t.stacked);
    CHECK_FALSE(t.rotated);
    CHECK(t.text == spec.panels[0].col_labels[size_t(t.index)]);  // whole
    CHECK(t.rect.h == line * int(decode_utf8_lenient(t.text).size()));
    CHECK(t.rect.w <= p.cell_w);
    CHECK(std::abs(t.rect.centre_x() - p.cell(0, t.index).centre_x()) <= 1);
  }
  check_no_overlap(L);
  // Wide cells (one token): upright, as before.
  const FigureLayout one = layout_figure(make_spec(1, 1, true, {"篮球"}), 1.0f, text);
  CHECK_FALSE(one.panels[0].col_labels[0].stacked);
  CHECK_FALSE(one.panels[0].col_labels[0].rotated);
  // Latin words still turn on their side.
  const FigureLayout en = layout_figure(make_spec(1, 3, true, {"because", "it", "was"}), 1.0f, text);
  CHECK(en.panels[0].col_labels[0].rotated);
  CHECK_FALSE(en.panels[0].col_labels[0].stacked);
}
