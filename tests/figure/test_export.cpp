// test_export.cpp — export.h end to end in memory: PNG cells carry the engine's colours, labels and
// colour bars are drawn, Chinese labels are real glyphs, SVG is well-formed with one rect per cell,
// CSV and .npy round-trip, and failures leave no file.
//
// Sections: helpers · heads PNG · Chinese labels · relpos and conv PNG · SVG · CSV and .npy ·
// requests and failures
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/export.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/figure/render_svg.h"
#include "png_decode.h"
#include "run_cli.h"

using namespace attnscope;
using attnscope::test::decode_png;
namespace fs = std::filesystem;

// ---- helpers -------------------------------------------------------------------------------------
namespace {

const char* const sentence = "The cat sat on the mat because it was tired.";
const char* const chinese_sentence = "我喜欢打篮球。";

Analysis analyse_text(const std::string& text, AttentionKind kind, int heads, int groups, bool causal) {
  Scene s;
  s.input.text = text;
  s.model.kind = kind;
  s.model.heads = heads;
  s.model.groups = groups;
  s.model.causal = causal;
  return analyse(s);
}

Analysis analyse_grid(const std::string& view, int side) {
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.rows = s.input.grid.cols = side;
  s.relpos.alpha = 2.0;
  s.relpos.query_row = 2;
  s.relpos.query_col = side - 2;
  s.conv.kernel = "sobel_x";
  s.view.view = parse_view(view);
  return analyse(s);
}

bool near(Rgba a, Rgba b, int tol = 2) {
  return std::abs(a.r - b.r) <= tol && std::abs(a.g - b.g) <= tol && std::abs(a.b - b.b) <= tol;
}

std::string show(Rgba c) {
  return "(" + std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b) + ")";
}

// The expected colour of every cell, computed from the engine's numbers and the documented range
// rules, independently of the exporter: [panel][row·cols + col].
using Expected = std::vector<std::vector<Rgba>>;

ValueRange rule_range(const std::vector<float>& values, Colormap map) {
  return map == Colormap::diverging ? symmetric_range(values.data(), values.size())
                                    : auto_range(values.data(), values.size());
}

Expected expected_heads(const Analysis& a, const ExportRequest& r) {
  const Tensor3& v = r.scores ? a.attention->result.scores : a.attention->result.probs;
  const bool causal = a.scene.model.causal;
  std::vector<int> heads;
  if (r.what == ExportWhat::head) heads = {r.head};
  else
    for (int h = 0; h < int(v.size()); ++h) heads.push_back(h);
  auto unmasked = [&](int h) {
    std::vector<float> out;
    for (Eigen::Index i = 0; i < v[size_t(h)].rows(); ++i)
      for (Eigen::Index j = 0; j < v[size_t(h)].cols(); ++j)
        if (!(causal && j > i)) out.push_back(v[size_t(h)](i, j));
    return out;
  };
  std::vector<float> all;
  for (int h : heads) {
    const auto u = unmasked(h);
    all.insert(all.end(), u.begin(), u.end());
  }
  // Shared: one range over the exported heads (a symmetric one for the diverging map).
  Expected e;
  for (int h : heads) {
    const bool shared = r.color_scale.mode != ScaleMode::per_head || r.what == ExportWhat::head;
    const ValueRange range = rule_range(shared ? all : unmasked(h), r.colormap);
    std::vector<Rgba> cells;
    for (Eigen::Index i = 0; i < v[size_t(h)].rows(); ++i)
      for (Eigen::Index j = 0; j < v[size_t(h)].cols(); ++j)
        cells.push_back(causal && j > i ? masked_color(r.colormap) : value_to_color(v[size_t(h)](i, j), range, r.colormap));
    e.push_back(cells);
  }
  return e;
}

// Checks the centre pixel of every cell of every panel against `expected`; reports the first miss.
void check_cells(const Image& img, const FigureLayout& layout, const Expected& expected) {
  REQUIRE(layout.panels.size() == expected.size());
  int checked = 0, wrong = 0;
  std::string first_miss;
  for (size_t p = 0; p < expected.size(); ++p) {
    const PanelLayout& L = layout.panels[p];
    const int cols = L.matrix.w / L.cell_w, rows = L.matrix.h / L.cell_h;
    REQUIRE(size_t(rows) * size_t(cols) == expected[p].size());
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const Rect cell = L.cell(r, c);
        const Rgba got = img.pixel(cell.centre_x(), cell.centre_y());
        const Rgba want = expected[p][size_t(r) * size_t(cols) + size_t(c)];
        ++checked;
        if (!near(got, want)) {
          if (wrong++ == 0)
            first_miss = "panel " + std::to_string(p) + " cell (" + std::to_string(r) + "," + std::to_string(c) +
                         "): got " + show(got) + ", want " + show(want);
        }
      }
  }
  INFO(first_miss);
  CHECK(wrong == 0);
  CHECK(checked > 0);
}

const Rgba white{255, 255, 255, 255};

// Label, title, colour-bar and caption regions all hold drawn pixels.
void check_text_drawn(const Image& img, const FigureLayout& layout) {
  for (const auto& p : layout.panels) {
    CHECK(count_pixels_unlike(img, p.title.rect, white) > 0);
    for (const auto& t : p.row_labels) CHECK(count_pixels_unlike(img, t.rect, white) > 0);
    for (const auto& t : p.col_labels) CHECK(count_pixels_unlike(img, t.rect, white) > 0);
  }
  REQUIRE(!layout.colorbars.empty());
  for (const auto& b : layout.colorbars) {
    CHECK(count_pixels_unlike(img, b.bar, white) > b.bar.w * b.bar.h / 2);
    REQUIRE(!b.ticks.empty());
    for (const auto& t : b.ticks) CHECK(count_pixels_unlike(img, t.label.rect, white) > 0);
  }
  if (layout.caption) CHECK(count_pixels_unlike(img, layout.caption->rect, white) > 0);
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path scratch(const std::string& name) { return attnscope::test::fresh_dir("export_" + name); }

}  // namespace

// ---- heads PNG -----------------------------------------------------------------------------------
TEST_CASE("export: every heads PNG cell has the colour of the engine's value (kinds × colormaps × views)") {
  struct Case {
    AttentionKind kind;
    int heads, groups;
    bool causal;
  };
  const Case cases[] = {{AttentionKind::single, 1, 1, false},
                        {AttentionKind::mha, 8, 8, false},
                        {AttentionKind::mqa, 4, 1, true},
                        {AttentionKind::gqa, 8, 2, true}};
  int combination = 0;
  for (const Case& c : cases) {
    const Analysis a = analyse_text(sentence, c.kind, c.heads, c.groups, c.causal);
    for (Colormap map : {Colormap::viridis, Colormap::magma, Colormap::grayscale, Colormap::diverging}) {
      ExportRequest r;
      r.colormap = map;
      // Vary the view with the combination so every kind meets scores, per-head scale and one head.
      r.scores = combination % 2 == 1;
      if (combination % 3 == 2) r.color_scale.mode = ScaleMode::per_head;
      if (combination % 4 == 3) {
        r.what = ExportWhat::head;
        r.head = c.heads - 1;
      }
      r.scale = combination % 5 == 4 ? 2.0f : 1.0f;
      ++combination;
      INFO(to_string(c.kind) << " " << to_string(map) << " " << to_string(r) << (r.scores ? " scores" : " probs")
                             << " " << to_string(r.color_scale.mode) << " scale " << r.scale);
      const ExportedFile f = render_export(a, r);
      REQUIRE(f.layout.has_value());
      const Image img = decode_png(f.bytes);
      CHECK(img.width == f.layout->width);
      CHECK(img.height == f.layout->height);
      check_cells(img, *f.layout, expected_heads(a, r));
      check_text_drawn(img, *f.layout);
    }
  }
}

TEST_CASE("export: heads are titled by kv group, framed in its colour, and the caption names the settings") {
  const Analysis a = analyse_text(sentence, AttentionKind::gqa, 8, 2, true);
  ExportRequest r;
  const ExportedFile f = render_export(a, r);
  const Image img = decode_png(f.bytes);
  REQUIRE(f.figure->panels.size() == 8);
  for (int h = 0; h < 8; ++h) {
    const int g = h / 4;
    CHECK(f.figure->panels[size_t(h)].title == "head " + std::to_string(h) + " · kv group " + std::to_string(g));
    const Rect frame = f.layout->panels[size_t(h)].frame;
    CHECK(near(img.pixel(frame.x + 1, frame.centre_y()), kv_group_color(g), 0));
  }
  const std::string caption = export_caption(a, r);
  for (const char* part : {"GQA", "H=8", "G=2", "d_model=64", "causal", "seed 42", "probabilities"})
    CHECK(caption.find(part) != std::string::npos);
  // Turned off, there is no caption and the image is shorter.
  r.caption = false;
  const ExportedFile without = render_export(a, r);
  CHECK_FALSE(without.layout->caption.has_value());
  CHECK(without.layout->height < f.layout->height);
  // The masked swatch appears for a causal model.
  CHECK_FALSE(f.layout->colorbars[0].masked_swatch.empty());
}

// ---- Chinese labels ------------------------------------------------------------------------------
TEST_CASE("export: a Chinese sentence's labels are drawn glyphs from the CJK font") {
  const Analysis a = analyse_text(chinese_sentence, AttentionKind::mha, 4, 4, false);
  REQUIRE(a.attention->labels.size() == 7);
  const TextRasterizer& text = default_text_rasterizer();
  REQUIRE(text.has_cjk());
  for (const auto& label : a.attention->labels)
    for (char32_t cp : decode_utf8_lenient(label)) CHECK(text.has_glyph(cp));
  ExportRequest r;
  r.what = ExportWhat::head;
  r.head = 1;
  r.scale = 2;
  const ExportedFile f = render_export(a, r);
  const Image img = decode_png(f.bytes);
  const PanelLayout& p = f.layout->panels[0];
  REQUIRE(p.row_labels.size() == 7);
  REQUIRE(p.col_labels.size() == 7);
  for (const auto& t : p.row_labels) CHECK(count_pixels_unlike(img, t.rect, white) > 20);
  for (const auto& t : p.col_labels) CHECK(count_pixels_unlike(img, t.rect, white) > 20);
  // Distinct ideographs give distinct ink (a missing-glyph box would be the same for each): compare
  // 我 (label 0) with 喜 (label 1), both horizontal and the same size.
  auto crop = [&](const Rect& r) {
    std::vector<uint8_t> v;
    for (int y = r.y; y < r.bottom(); ++y)
      for (int x = r.x; x < r.right(); ++x) v.push_back(img.pixel(x, y).r);
    return v;
  };
  const Rect a0 = p.col_labels[0].rect, a1 = p.col_labels[1].rect;
  CHECK(a0.w == a1.w);
  CHECK(crop(a0) != crop(a1));
  check_cells(img, *f.layout, expected_heads(a, r));
}

// ---- relpos and conv PNG -------------------------------------------------------------------------
TEST_CASE("export: relpos grid maps carry the engine's probabilities and mark the query") {
  const Analysis a = analyse_grid("relpos2d", 8);
  REQUIRE(a.relpos != nullptr);
  const RelposAnalysis& rp = *a.relpos;
  for (bool shared : {true, false}) {
    ExportRequest r;
    r.what = ExportWhat::relpos;
    r.colormap = Colormap::magma;
    r.color_scale.mode = shared ? ScaleMode::shared : ScaleMode::per_head;
    const ExportedFile f = render_export(a, r);
    const Image img = decode_png(f.bytes);
    const int heads = int(rp.heads.size());
    REQUIRE(f.layout->panels.size() == size_t(heads + 1));
    // Probabilities from 0 to the largest one shown (shared) or the panel's own largest.
    float shared_max = 0;
    for (Eigen::Index k = 0; k < rp.probs_query.size(); ++k) shared_max = std::max(shared_max, rp.probs_query.data()[k]);
    Expected e;
    for (int p = 0; p <= heads; ++p) {
      std::vector<float> v;
      if (p < heads)
        for (Eigen::Index k = 0; k < rp.probs_query.cols(); ++k) v.push_back(rp.probs_query(p, k));
      else
        v.assign(rp.combined.data(), rp.combined.data() + rp.combined.size());
      const ValueRange range{0.0f, shared ? shared_max : auto_range(v.data(), v.size()).hi};
      std::vector<Rgba> cells;
      for (float x : v) cells.push_back(value_to_color(x, range, r.colormap));
      e.push_back(cells);
    }
    check_cells(img, *f.layout, e);
    check_text_drawn(img, *f.layout);
    // The query cell is outlined: its corner pixel is black, its centre keeps the colour.
    const Rect q = f.layout->panels[0].cell(rp.query_row, rp.query_col);
    CHECK(near(img.pixel(q.x, q.y), {0, 0, 0, 255}, 0));
    // 9 conv3x3 heads are laid out as the kernel: three per row.
    CHECK(f.layout->panels[3].matrix.x == f.layout->panels[0].matrix.x);
    CHECK(f.layout->panels[3].matrix.y > f.layout->panels[0].matrix.bottom());
  }
}

TEST_CASE("export: relpos on a sentence shows each head's T x T map with the tokens") {
  Scene s;
  s.input.text = "The cat sat on the mat.";
  s.view.view = View::relpos1d;
  s.relpos.heads = 3;
  s.relpos.delta_preset = "line";
  const Analysis a = analyse(s);
  REQUIRE(a.relpos != nullptr);
  ExportRequest r;
  r.what = ExportWhat::relpos;
  const ExportedFile f = render_export(a, r);
  const Image img = decode_png(f.bytes);
  const RelposAnalysis& rp = *a.relpos;
  REQUIRE(!rp.probs.empty());
  float shared_max = 0;
  for (const Mat& m : rp.probs) shared_max = std::max(shared_max, m.maxCoeff());
  Expected e;
  for (const Mat& m : rp.probs) {
    std::vector<Rgba> cells;
    for (Eigen::Index k = 0; k < m.size(); ++k) cells.push_back(value_to_color(m.data()[k], {0, shared_max}, r.colormap));
    e.push_back(cells);
  }
  std::vector<Rgba> combined;
  for (Eigen::Index k = 0; k < rp.combined.size(); ++k)
    combined.push_back(value_to_color(rp.combined.data()[k], {0, shared_max}, r.colormap));
  e.push_back(combined);
  check_cells(img, *f.layout, e);
  CHECK(f.figure->panels[0].col_labels == rp.labels);
}

TEST_CASE("export: conv figure is input | MHSA | convolution | difference with the error in the caption") {
  const Analysis a = analyse_grid("conv", 12);
  REQUIRE(a.conv != nullptr);
  const ConvAnalysis& cv = *a.conv;
  ExportRequest r;
  r.what = ExportWhat::conv;
  const ExportedFile f = render_export(a, r);
  const Image img = decode_png(f.bytes);
  auto values = [](const Mat& m) { return std::vector<float>(m.data(), m.data() + m.size()); };
  std::vector<float> outputs = values(cv.mhsa);
  const auto conv_values = values(cv.conv);
  outputs.insert(outputs.end(), conv_values.begin(), conv_values.end());
  const ValueRange input_range = auto_range(cv.input.data(), size_t(cv.input.size()));
  const ValueRange output_range = auto_range(outputs.data(), outputs.size());
  const ValueRange diff_range = symmetric_range(cv.difference.data(), size_t(cv.difference.size()));
  Expected e(4);
  for (Eigen::Index k = 0; k < cv.input.size(); ++k) {
    e[0].push_back(value_to_color(cv.input.data()[k], input_range, Colormap::grayscale));
    e[1].push_back(value_to_color(cv.mhsa.data()[k], output_range, Colormap::grayscale));
    e[2].push_back(value_to_color(cv.conv.data()[k], output_range, Colormap::grayscale));
    e[3].push_back(value_to_color(cv.difference.data()[k], diff_range, Colormap::diverging));
  }
  check_cells(img, *f.layout, e);
  check_text_drawn(img, *f.layout);
  CHECK(f.layout->colorbars.size() == 3);
  const std::string caption = f.layout->caption->text;
  CHECK(caption.find("sobel_x") != std::string::npos);
  CHECK(caption.find("border") != std::string::npos);
  char border[32];
  std::snprintf(border, sizeof border, "%.2g", cv.max_abs_border);
  CHECK(caption.find(border) != std::string::npos);
}

// ---- SVG -----------------------------------------------------------------------------------------
TEST_CASE("export: SVG parses as XML, has one rect per cell in the PNG's colours and the tokens as text") {
  const Analysis a = analyse_text("The <cat> & \"dog\" sat.", AttentionKind::gqa, 4, 2, true);
  ExportRequest r;
  r.format = ExportFormat::svg;
  r.colormap = Colormap::magma;
  const ExportedFile f = render_export(a, r);
  const fs::path dir = scratch("svg");
  const fs::path svg = dir / "heads.svg", report = dir / "report.txt";
  write_file_atomic(svg, f.bytes);
  // Python's XML parser is strict: it rejects any unescaped & or <, and mismatched tags.
  const std::string script =
      "import sys, xml.etree.ElementTree as ET\n"
      "root = ET.parse(sys.argv[1]).getroot()\n"
      "ns = '{http://www.w3.org/2000/svg}'\n"
      "assert root.tag == ns + 'svg', root.tag\n"
      "out = open(sys.argv[2], 'w', encoding='utf-8')\n"
      "cells = [e.get('fill') for e in root.iter(ns + 'rect') if e.get('class') == 'cell']\n"
      "out.write(str(len(cells)) + '\\n' + ' '.join(cells) + '\\n')\n"
      "for t in root.iter(ns + 'text'): out.write((t.text or '') + '\\n')\n";
  const fs::path py = dir / "check_svg.py";
  write_file_atomic(py, script);
  const std::string cmd = "/usr/bin/python3 " + test::shell_quote(py.string()) + " " + test::shell_quote(svg.string()) +
                          " " + test::shell_quote(report.string());
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::istringstream in(slurp(report));
  size_t cells = 0;
  in >> cells;
  const Expected e = expected_heads(a, r);
  size_t total = 0;
  for (const auto& p : e) total += p.size();
  CHECK(cells == total);
  size_t wrong = 0;
  for (const auto& panel : e)
    for (Rgba want : panel) {
      std::string fill;
      in >> fill;
      char hex[8];
      std::snprintf(hex, sizeof hex, "#%02x%02x%02x", want.r, want.g, want.b);
      wrong += fill != hex;
    }
  CHECK(wrong == 0);
  std::vector<std::string> texts;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) texts.push_back(line);
  for (const auto& label : a.attention->labels) CHECK(std::count(texts.begin(), texts.end(), label) >= 2 * 4);
  CHECK(std::count(texts.begin(), texts.end(), "head 3 · kv group 1") == 1);
  CHECK(std::count(texts.begin(), texts.end(), "<") >= 1);  // escaped on the way out, back after parsing
}

TEST_CASE("export: SVG escaping") {
  CHECK(escape_xml("a<b>&\"'") == "a&lt;b&gt;&amp;&quot;&apos;");
  CHECK(escape_xml("x\x01y") == "x y");
  CHECK(escape_xml("\xFF") == "\uFFFD");
  CHECK(escape_xml("球") == "球");
}

// ---- CSV and .npy --------------------------------------------------------------------------------
namespace {

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') quoted = true;
    else if (c == ',') out.push_back(field), field.clear();
    else field += c;
  }
  out.push_back(field);
  return out;
}

float csv_float(const std::string& s) {
  if (s == "-inf") return -INFINITY;
  if (s == "inf") return INFINITY;
  return std::stof(s);
}

}  // namespace

TEST_CASE("export: CSV and .npy round-trip to the engine's numbers, with token headers") {
  const Analysis a = analyse_text("Hello, \"world\" said the cat.", AttentionKind::gqa, 4, 2, true);
  const AttentionAnalysis& att = *a.attention;
  const int T = int(att.labels.size());
  for (bool scores : {false, true}) {
    ExportRequest r;
    r.scores = scores;
    const Tensor3& v = scores ? att.result.scores : att.result.probs;
    // .npy: [H, T, T] exactly (masked scores stay −inf).
    r.format = ExportFormat::npy;
    const NpyArray npy = parse_npy(render_export(a, r).bytes, "heads.npy");
    REQUIRE(npy.shape == std::vector<int64_t>{4, T, T});
    size_t k = 0, wrong = 0;
    for (int h = 0; h < 4; ++h)
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
          const float want = v[size_t(h)](i, j), got = npy.data[k++];
          wrong += !(got == want || (std::isinf(got) && std::isinf(want) && (got < 0) == (want < 0)));
        }
    CHECK(wrong == 0);
    // CSV: header "block,row,<tokens>", then H·T rows of "head h (kv group g),<token>,<numbers>".
    r.format = ExportFormat::csv;
    std::istringstream csv(render_export(a, r).bytes);
    std::string line;
    std::getline(csv, line);
    const auto header = csv_fields(line);
    REQUIRE(header.size() == size_t(T) + 2);
    CHECK(header[0] == "block");
    for (int j = 0; j < T; ++j) CHECK(header[size_t(j) + 2] == att.labels[size_t(j)]);
    wrong = 0;
    int rows = 0;
    for (int h = 0; h < 4; ++h)
      for (int i = 0; i < T; ++i) {
        REQUIRE(std::getline(csv, line));
        const auto fields = csv_fields(line);
        REQUIRE(fields.size() == size_t(T) + 2);
        CHECK(fields[0] == "head " + std::to_string(h) + " (kv group " + std::to_string(h / 2) + ")");
        CHECK(fields[1] == att.labels[size_t(i)]);
        for (int j = 0; j < T; ++j) {
          const float got = csv_float(fields[size_t(j) + 2]), want = v[size_t(h)](i, j);
          wrong += !(got == want || (std::isinf(got) && std::isinf(want)));
        }
        ++rows;
      }
    CHECK(rows == 4 * T);
    CHECK(wrong == 0);
    CHECK_FALSE(std::getline(csv, line));
  }
  // One head: [T, T] and "row,<tokens>".
  ExportRequest one;
  one.what = ExportWhat::head;
  one.head = 3;
  one.format = ExportFormat::npy;
  const NpyArray head = parse_npy(render_export(a, one).bytes, "head.npy");
  REQUIRE(head.shape == std::vector<int64_t>{T, T});
  CHECK(std::equal(head.data.begin(), head.data.end(), att.result.probs[3].data()));
  one.format = ExportFormat::csv;
  const std::string csv = render_export(a, one).bytes;
  CHECK(csv.rfind("row,Hello,\",\",\"\"\"\",world", 0) == 0);  // the comma and quote tokens are quoted
}

TEST_CASE("export: relpos and conv numbers keep their shapes") {
  const Analysis grid = analyse_grid("relpos2d", 8);
  ExportRequest r;
  r.what = ExportWhat::relpos;
  r.format = ExportFormat::npy;
  const NpyArray rp = parse_npy(render_export(grid, r).bytes, "relpos.npy");
  CHECK(rp.shape == std::vector<int64_t>{9, 8, 8});
  CHECK(std::equal(rp.data.begin(), rp.data.end(), grid.relpos->probs_query.data()));
  const Analysis conv = analyse_grid("conv", 8);
  r.what = ExportWhat::conv;
  const NpyArray cv = parse_npy(render_export(conv, r).bytes, "conv.npy");
  REQUIRE(cv.shape == std::vector<int64_t>{4, 8, 8});
  CHECK(std::equal(cv.data.begin(), cv.data.begin() + 64, conv.conv->input.data()));
  CHECK(std::equal(cv.data.begin() + 192, cv.data.end(), conv.conv->difference.data()));
  r.format = ExportFormat::csv;
  const std::string csv = render_export(conv, r).bytes;
  CHECK(csv.rfind("block,row,0,1,2,3,4,5,6,7\ninput,0,", 0) == 0);
}

// ---- requests and failures -----------------------------------------------------------------------
TEST_CASE("export: request parsing names what is valid") {
  ExportRequest r;
  parse_export_what("head:12", r);
  CHECK(r.what == ExportWhat::head);
  CHECK(r.head == 12);
  CHECK(to_string(r) == "head:12");
  parse_export_what("RELPOS", r);
  CHECK(r.what == ExportWhat::relpos);
  for (const char* bad : {"head:", "head:-1", "head:x", "heads:2", "picture", ""})
    CHECK_THROWS_WITH_AS(parse_export_what(bad, r), doctest::Contains("heads, head:N"), InputError);
  CHECK(parse_export_format("SVG") == ExportFormat::svg);
  CHECK_THROWS_WITH_AS(parse_export_format("jpg"), doctest::Contains("png, svg, csv, npy"), InputError);
  ViewSettings view;
  view.view = View::relpos2d;
  view.colormap = "magma";
  view.scale = ScaleMode::per_head;
  const ExportRequest from_view = export_request_for_view(view);
  CHECK(from_view.what == ExportWhat::relpos);
  CHECK(from_view.colormap == Colormap::magma);
  CHECK(from_view.color_scale.mode == ScaleMode::per_head);
  CHECK(default_export_file_name(r, "20261122-011500") == "attnscope-relpos-20261122-011500.png");
}

TEST_CASE("export: impossible requests and bad paths raise InputError and leave no file") {
  const Analysis a = analyse_text(sentence, AttentionKind::mha, 8, 8, false);
  const fs::path dir = scratch("failures");
  ExportRequest r;
  r.what = ExportWhat::head;
  r.head = 8;
  CHECK_THROWS_WITH_AS(export_to_file(a, r, dir / "h.png"), doctest::Contains("head 8 does not exist"), InputError);
  r.head = 0;
  r.scale = 5;
  CHECK_THROWS_WITH_AS(export_to_file(a, r, dir / "h.png"), doctest::Contains("between 1 and 4"), InputError);
  r.scale = 1;
  r.what = ExportWhat::relpos;
  CHECK_THROWS_AS(export_to_file(a, r, dir / "r.png"), InputError);
  r.what = ExportWhat::heads;
  CHECK_THROWS_WITH_AS(export_to_file(a, r, dir), doctest::Contains("is a folder"), InputError);
  CHECK_THROWS_WITH_AS(export_to_file(a, r, dir / "missing" / "h.png"), doctest::Contains("does not exist"), InputError);
  CHECK_THROWS_WITH_AS(export_to_file(a, r, dir / "h.svg"), doctest::Contains("format is png"), InputError);
  CHECK_THROWS_AS(export_to_file(a, r, "/proc/attnscope_export_test.png"), InputError);  // the write fails
  CHECK_THROWS_AS(parse_colormap("rainbow"), InputError);
  // A grid has no token heads.
  const Analysis grid = analyse_grid("relpos2d", 8);
  CHECK_THROWS_WITH_AS(export_to_file(grid, r, dir / "g.png"), doctest::Contains("grid"), InputError);
  CHECK(test::count_files(dir) == 0);
  // A successful export next to them is the only file.
  export_to_file(a, r, dir / "ok.png");
  CHECK(test::count_files(dir) == 1);
}

TEST_CASE("export: a figure beyond the image limit is refused before writing") {
  const Analysis a = analyse_text(std::string(sentence) + " " + sentence + " " + sentence + " " + sentence,
                                  AttentionKind::mha, 64, 64, false);
  const fs::path dir = scratch("too_big");
  ExportRequest r;
  r.scale = 4;
  try {
    export_to_file(a, r, dir / "huge.png");
    FAIL("a figure over the image limit was written");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("limit") != std::string::npos);
  }
  CHECK(test::count_files(dir) == 0);
}
