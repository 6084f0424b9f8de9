// Exports in the interface's language: the figure words (export.h FigureWords) the app fills from its
// translation file reach every title, colour-bar title and caption, and nothing else of the figure
// changes.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/export.h"
#include "core/translations.h"
#include "test_paths.h"

using namespace attnscope;

namespace {

Translations chinese() { return load_translations(std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "assets/i18n/zh.json"); }

Analysis gqa_sentence() {
  Scene s;
  s.input.text = "The cat sat on the mat.";
  s.model.kind = AttentionKind::gqa;
  s.model.heads = 4;
  s.model.groups = 2;
  s.model.causal = true;
  return analyse(s);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("figure words: every key the figures use has a Chinese translation") {
  const Translations zh = chinese();
  const FigureWords words = figure_words(zh);
  for (const std::string& key : figure_word_keys()) {
    CAPTURE(key);
    CHECK(words.strings.count(key) == 1);
  }
}

TEST_CASE("figure words: a translation whose % conversions differ from the key's is not used") {
  FigureWords w;
  w.strings["head %d · kv group %d"] = "头 %s";  // would read an int as a string
  w.strings["causal"] = "因果";
  CHECK(w.format("head %d · kv group %d", 3, 1) == "head 3 · kv group 1");
  // As many conversions, of other kinds or in another order: still not used.
  w.strings["MHSA (%d heads, α=%s)"] = "MHSA（α=%s，%d 个头）";
  CHECK(w.format("MHSA (%d heads, α=%s)", 4, "0.5") == "MHSA (4 heads, α=0.5)");
  w.strings["query cell (%d,%d)"] = "查询格 (%d,%s)";
  CHECK(w.format("query cell (%d,%d)", 1, 2) == "query cell (1,2)");
  // The same conversions with other words and a literal percent sign: used.
  w.strings["%d heads"] = "%d 个头（100%%）";
  CHECK(w.format("%d heads", 8) == "8 个头（100%）");
  CHECK(w.word("causal") == "因果");
  CHECK(w.word("not causal") == "not causal");
}

TEST_CASE("export language: a Chinese SVG has the Chinese titles, colour-bar title and caption") {
  const Analysis a = gqa_sentence();
  ExportRequest request;
  request.format = ExportFormat::svg;
  const std::string english = render_export(a, request).bytes;
  request.words = figure_words(chinese());
  const std::string svg = render_export(a, request).bytes;
  CHECK(has(english, "head 3 · kv group 1"));
  CHECK(has(english, ">probability<"));
  for (const char* part : {"头 0 · KV 组 0", "头 3 · KV 组 1", ">概率<", ">已掩码<", "因果", "种子 42", "行：查询，列：键",
                           "统一刻度"}) {
    CAPTURE(part);
    CHECK(has(svg, part));
  }
  for (const char* part : {"kv group", ">probability<", ">masked<", "rows: queries", "seed 42", "shared scale"}) {
    CAPTURE(part);
    CHECK_FALSE(has(svg, part));
  }
}

TEST_CASE("export language: relpos and conv figures are drawn in Chinese too") {
  Scene s;
  s.input.source = InputSource::grid;
  s.input.grid.rows = s.input.grid.cols = 8;
  s.relpos.alpha = 2.0;
  s.view.view = View::conv;
  const Analysis a = analyse(s, AnalysisRequest{.attention = false, .relpos = true, .conv = true});
  REQUIRE(a.conv != nullptr);
  REQUIRE(a.relpos != nullptr);
  ExportRequest request;
  request.format = ExportFormat::svg;
  request.words = figure_words(chinese());
  request.what = ExportWhat::conv;
  const std::string conv = render_export(a, request).bytes;
  for (const char* part : {">输入<", "差值 MHSA − 卷积", "卷积即注意力", "真实的 ", "圆环图案，8×8 个单元"}) {
    CAPTURE(part);
    CHECK(has(conv, part));
  }
  CHECK_FALSE(has(conv, "convolution as attention"));
  request.what = ExportWhat::relpos;
  const std::string relpos = render_export(a, request).bytes;
  for (const char* part : {"合并（各头的平均）", "相对位置注意力", "查询格 ("}) {
    CAPTURE(part);
    CHECK(has(relpos, part));
  }
  CHECK_FALSE(has(relpos, "combined (mean"));
}

TEST_CASE("export language: a Chinese PNG differs from the English one only in its texts") {
  const Analysis a = gqa_sentence();
  ExportRequest request;
  request.scale = 2;
  const ExportedFile en = render_export(a, request);
  request.words = figure_words(chinese());
  const ExportedFile zh = render_export(a, request);
  REQUIRE(en.layout);
  REQUIRE(zh.layout);
  REQUIRE(zh.layout->panels.size() == en.layout->panels.size());
  CHECK(zh.bytes != en.bytes);
  // The same cells in the same colours; the titles, the bar's title and the caption in Chinese.
  for (size_t p = 0; p < en.layout->panels.size(); ++p) {
    CAPTURE(p);
    const PanelLayout& e = en.layout->panels[p];
    const PanelLayout& z = zh.layout->panels[p];
    REQUIRE(z.cell_w == e.cell_w);
    REQUIRE(z.cell_h == e.cell_h);
    int differing = 0;
    for (int y = 0; y < e.matrix.h; ++y)
      for (int x = 0; x < e.matrix.w; ++x)
        differing += en.image->pixel(e.matrix.x + x, e.matrix.y + y) != zh.image->pixel(z.matrix.x + x, z.matrix.y + y);
    CHECK(differing == 0);
    CHECK(z.title.text == "头 " + std::to_string(p) + " · KV 组 " + std::to_string(p / 2));
    CHECK(e.title.text == "head " + std::to_string(p) + " · kv group " + std::to_string(p / 2));
    // Row and column labels are the tokens, in any language.
    REQUIRE(z.col_labels.size() == e.col_labels.size());
    for (size_t i = 0; i < e.col_labels.size(); ++i) CHECK(z.col_labels[i].text == e.col_labels[i].text);
  }
  REQUIRE(zh.layout->colorbars.size() == 1);
  REQUIRE(zh.layout->colorbars[0].title);
  CHECK(zh.layout->colorbars[0].title->text == "概率");
  REQUIRE(zh.layout->colorbars[0].masked_label);
  CHECK(zh.layout->colorbars[0].masked_label->text == "已掩码");
  REQUIRE(zh.layout->caption);
  CHECK(has(zh.layout->caption->text, "行：查询，列：键"));
  // The colour bar's gradient is the same: the same number of rows, the same colours.
  const ColorBarLayout& eb = en.layout->colorbars[0];
  const ColorBarLayout& zb = zh.layout->colorbars[0];
  REQUIRE(zb.bar.w == eb.bar.w);
  REQUIRE(zb.bar.h == eb.bar.h);
  for (int y = 0; y < eb.bar.h; ++y)
    CHECK(en.image->pixel(eb.bar.x + eb.bar.w / 2, eb.bar.y + y) == zh.image->pixel(zb.bar.x + zb.bar.w / 2, zb.bar.y + y));
}
