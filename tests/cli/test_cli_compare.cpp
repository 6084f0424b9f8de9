// test_cli_compare.cpp — `attnscope export --compare SCENE_A SCENE_B`: its cells equal those of A's and B's
// own exports made separately with the same locked range, and bad input exits 2 with one clear line and
// no file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/compare.h"
#include "attnscope/scene/scene_json.h"
#include "png_decode.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

Scene scene_of(AttentionKind kind, int groups, bool causal) {
  Scene s;
  s.input.text = "The cat sat on the mat.";
  s.model.kind = kind;
  s.model.heads = 4;
  s.model.groups = groups;
  s.model.causal = causal;
  return s;
}

}  // namespace

TEST_CASE("cli compare: A/B's cells equal two exports made separately with the same locked range") {
  const fs::path dir = fresh_dir("cli_compare_cells");
  const Scene sa = scene_of(AttentionKind::mha, 4, true), sb = scene_of(AttentionKind::mqa, 1, true);
  save_scene(dir / "a.json", sa);
  save_scene(dir / "b.json", sb);
  const CliRun r = run_cli("export --compare " + shell_quote((dir / "a.json").string()) + " " +
                           shell_quote((dir / "b.json").string()) + " --format png --colormap magma --out " +
                           shell_quote((dir / "ab.png").string()));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  // The engine's lock, then A and B exported on their own with it.
  const Analysis a = analyse(sa), b = analyse(sb);
  CompareRequest request;
  request.colormap = Colormap::magma;
  const AbComparison cmp = compare_analyses(a, b);
  char range[64];
  std::snprintf(range, sizeof range, "%.9g,%.9g", double(cmp.locked.lo), double(cmp.locked.hi));
  for (const char* side : {"a", "b"}) {
    const CliRun e = run_cli("export --what heads --format png --colormap magma --scale-mode locked --scale-range " +
                                 std::string(range) + " --text " + shell_quote("The cat sat on the mat.") +
                                 " --heads 4 --causal " +
                                 (std::string(side) == "a" ? "--kind mha --groups 4" : "--kind mqa --groups 1") +
                                 " --out " + shell_quote((dir / (std::string(side) + ".png")).string()));
    INFO("stderr: " << e.err);
    REQUIRE(e.exit_code == 0);
  }
  const Image ab = load_png(dir / "ab.png"), pa = load_png(dir / "a.png"), pb = load_png(dir / "b.png");
  // Where the cells are: the layouts the engine makes of the same figures.
  const FigureSpec f = compare_figure(a, b, cmp, request);
  const FigureLayout lab = layout_figure(f, 1.0f, default_text_rasterizer());
  ExportRequest locked;
  locked.colormap = Colormap::magma;
  locked.color_scale = {ScaleMode::locked, cmp.locked};
  const FigureLayout la = layout_figure(export_figure(a, locked), 1.0f, default_text_rasterizer());
  const FigureLayout lb = layout_figure(export_figure(b, locked), 1.0f, default_text_rasterizer());
  REQUIRE(lab.width == ab.width);
  REQUIRE(la.width == pa.width);
  const int t = cmp.tokens;
  int checked = 0, differing = 0;
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < t; ++j) {
        const Rect ca = lab.panels[size_t(2 * h)].cell(i, j), cb = lab.panels[size_t(2 * h + 1)].cell(i, j);
        const Rect oa = la.panels[size_t(h)].cell(i, j), ob = lb.panels[size_t(h)].cell(i, j);
        CHECK(ab.pixel(ca.centre_x(), ca.centre_y()) == pa.pixel(oa.centre_x(), oa.centre_y()));
        CHECK(ab.pixel(cb.centre_x(), cb.centre_y()) == pb.pixel(ob.centre_x(), ob.centre_y()));
        differing += !(pa.pixel(oa.centre_x(), oa.centre_y()) == pb.pixel(ob.centre_x(), ob.centre_y()));
        checked += 2;
      }
  CHECK(checked == 8 * t * t);
  CHECK(differing > 0);  // MHA and MQA do draw different heads
}

TEST_CASE("cli compare: --token-range I-J draws only those queries and keys of A and B, on the whole input's scale") {
  const fs::path dir = fresh_dir("cli_compare_range");
  const Scene sa = scene_of(AttentionKind::mha, 4, true), sb = scene_of(AttentionKind::mqa, 1, true);
  save_scene(dir / "a.json", sa);
  save_scene(dir / "b.json", sb);
  const CliRun r = run_cli("export --compare " + shell_quote((dir / "a.json").string()) + " " +
                           shell_quote((dir / "b.json").string()) + " --compare-view difference --token-range 1-4 --format svg --out " +
                           shell_quote((dir / "ab.svg").string()));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  // The engine's figure of the same range, written to SVG, is the file byte for byte.
  const Analysis a = analyse(sa), b = analyse(sb);
  CompareRequest request;
  request.view = CompareView::difference;
  request.format = ExportFormat::svg;
  request.token_first = 1;
  request.token_last = 4;
  const ExportedFile same = render_compare(a, b, request);
  std::ifstream f(dir / "ab.svg", std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(written == same.bytes);
  CHECK(written.find("tokens 1–4 of 7") != std::string::npos);
}

TEST_CASE("cli compare: bad input exits 2 with one line and leaves no file") {
  const fs::path dir = fresh_dir("cli_compare_bad");
  save_scene(dir / "a.json", scene_of(AttentionKind::mha, 4, false));
  Scene eight = scene_of(AttentionKind::mha, 8, false);
  eight.model.heads = 8;
  save_scene(dir / "eight.json", eight);
  Scene grid;
  grid.input.source = InputSource::grid;
  save_scene(dir / "grid.json", grid);
  const std::string a = shell_quote((dir / "a.json").string());
  const std::string out = " --out " + shell_quote((dir / "x.png").string());
  struct Case {
    std::string args, says;
  };
  const Case cases[] = {
      {"--compare " + a + " " + shell_quote((dir / "missing.json").string()) + " --format png" + out, "scene B"},
      {"--compare " + a + " " + shell_quote((dir / "eight.json").string()) + " --format png" + out,
       "A has 4 heads and 7 tokens, B has 8 heads and 7 tokens"},
      {"--compare " + a + " " + shell_quote((dir / "grid.json").string()) + " --format png" + out, "grid input"},
      {"--compare " + a + " " + a + " --format csv --out " + shell_quote((dir / "x.csv").string()), "png or svg"},
      {"--compare " + a + " " + a + " --what heads --format png" + out, "leave out --what"},
      {"--compare " + a + " " + a + " --compare-view both --format png" + out, "side-by-side, difference"},
      {"--compare " + a + " " + a + " --format png --scores" + out, "probabilities"},
      {"--compare " + a + " --format png" + out, "--compare"},
      {"--compare " + a + " " + a + " --format png --token-range 3-7" + out, "0..6"},
      {"--compare " + a + " " + a + " --format png --token-range 5-2" + out, "token range"},
  };
  for (const Case& c : cases) {
    const CliRun r = run_cli("export " + c.args);
    INFO(c.args << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(!fs::exists(dir / "x.png"));
  CHECK(!fs::exists(dir / "x.csv"));
}

TEST_CASE("cli compare: --query-set / --key-set draw the set's row (column) on A, B and the difference; a bad set exits 2") {
  const fs::path dir = fresh_dir("cli_compare_token_set");
  const Scene sa = scene_of(AttentionKind::mha, 4, true), sb = scene_of(AttentionKind::mqa, 1, true);
  save_scene(dir / "a.json", sa);
  save_scene(dir / "b.json", sb);
  const std::string both = "export --compare " + shell_quote((dir / "a.json").string()) + " " + shell_quote((dir / "b.json").string());
  // The command line's figure is the engine's compare_figure with that set: the same SVG, byte for byte.
  const Analysis a = analyse(sa), b = analyse(sb);
  for (const std::string view : {"side-by-side", "difference"}) {
    CAPTURE(view);
    const fs::path svg = dir / (view + ".svg");
    const CliRun r = run_cli(both + " --compare-view " + view + " --key-set 0,2 --set-reduce mean --format svg --out " +
                             shell_quote(svg.string()));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CompareRequest request;
    request.view = parse_compare_view(view);
    request.format = ExportFormat::svg;
    request.token_set = TokenSet{TokenSetAxis::keys, {0, 2}, SetReduce::mean};
    const ExportedFile expected = render_compare(a, b, request);
    std::ifstream in(svg, std::ios::binary);
    const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(written == expected.bytes);
    CHECK(written.find("mean of 2 keys: 0, 2") != std::string::npos);  // the caption
    REQUIRE(expected.figure);
    CHECK(expected.figure->panels[0].cols == int(a.attention->labels.size()) + 1);
  }
  const fs::path bad = dir / "bad.png";
  const CliRun r = run_cli(both + " --query-set 3,99 --format png --out " + shell_quote(bad.string()));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--query-set: token 99 is outside this input of 7 tokens") != std::string::npos);
  CHECK_FALSE(fs::exists(bad));
}
