// Zoom, pan and token range in the Heads view (window_heads.cpp): a range typed in the toolbar gives every
// head (j−i+1)² cells coloured as `attnscope export --token-range i-j` colours them; the mouse wheel zooms
// about the pointer and the layout record then lists exactly the tokens drawn; numbers in cells appear
// only when the cells are big enough.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/export.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

const char* const sentence = "The cat sat on the mat because it was tired.";
const std::string scene_flags = std::string("--text '") + sentence + "' --kind gqa --heads 4 --groups 2 --causal";

Analysis same_analysis(int heads = 4) {
  Scene s;
  s.input.text = sentence;
  s.model.kind = AttentionKind::gqa;
  s.model.heads = heads;
  s.model.groups = 2;
  s.model.causal = true;
  return analyse(s);
}

std::string centre(const nlohmann::json& r) {
  return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + "," +
         std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
}

// Where the toolbar's "tokens i–j" button is, and, in a run that clicked it, the range popup's controls.
struct RangeControls {
  std::string button, first, last, numbers;
  std::string away;  // the Heads window's title bar: a click there closes the popup and changes nothing
};

RangeControls range_controls(const std::string& name, const std::string& base) {
  const WindowRun closed = run_window(name + "_closed", base);
  REQUIRE(closed.layout.at("widgets").contains("heads.tokens"));
  RangeControls c;
  c.button = centre(closed.layout["widgets"]["heads.tokens"]);
  for (const auto& win : closed.layout.at("windows"))
    if (win["title"] == "Heads###heads")
      c.away = std::to_string(int(win["x"].get<double>() + 40)) + "," + std::to_string(int(win["y"].get<double>() + 6));
  REQUIRE_FALSE(c.away.empty());
  const WindowRun open = run_window(name + "_popup", base + " --pointer " + c.button + " --clicks 4 --frames 8");
  for (const char* id : {"heads.token_first", "heads.token_last", "heads.numbers"})
    REQUIRE(open.layout.at("widgets").contains(id));
  c.first = centre(open.layout["widgets"]["heads.token_first"]);
  c.last = centre(open.layout["widgets"]["heads.token_last"]);
  c.numbers = centre(open.layout["widgets"]["heads.numbers"]);
  return c;
}

// Opens the popup, ticks "numbers in cells" when asked, types the first and last token (Enter after each)
// and, when asked, closes the popup with a click on the window's title bar.
std::string typed_range(const RangeControls& c, int first, int last, bool numbers = false, bool close = true) {
  const std::string points = c.button + (numbers ? ";" + c.numbers : "") + ";" + c.first + ";" + c.last + ";" + c.away;
  const int f = numbers ? 10 : 4;  // the first field is clicked at f + 4 (the popup shows from frame 6 on)
  auto at = [f](int k) { return std::to_string(f + k); };
  return " --pointer '" + points + "' --clicks 4," + (numbers ? std::string("8,") : "") + at(4) + "," + at(10) +
         (close ? "," + at(16) : "") + " --keys " + at(6) + ":text=" + std::to_string(first) + "," + at(7) + ":enter," +
         at(12) + ":text=" + std::to_string(last) + "," + at(13) + ":enter --frames " + at(22);
}

// The texts drawn in the Heads window that read as a number with two decimals.
std::vector<std::string> cell_numbers(const WindowRun& w) {
  static const std::regex number("-?[0-9]+\\.[0-9][0-9]");
  std::vector<std::string> out;
  for (const std::string& t : texts_of(w, "###heads"))
    if (std::regex_match(t, number)) out.push_back(t);
  return out;
}

}  // namespace

TEST_SUITE("gui_zoom") {
  TEST_CASE("heads token range: i-j gives (j-i+1)^2 cells per head, coloured as export --token-range i-j") {
    const Analysis a = same_analysis();
    const int t = int(a.attention->labels.size());
    REQUIRE(t >= 8);
    const int first = 2, last = 5, n = last - first + 1;
    const std::string base = scene_flags + " --size 1280x720";
    const RangeControls controls = range_controls("zoom_range", base);
    const WindowRun w = run_window("zoom_range_typed", base + typed_range(controls, first, last));
    REQUIRE(w.layout["heads"].size() == 4);
    // The export of the same range: the engine's figure, and the command line's PNG of it.
    ExportRequest request;
    request.token_first = first;
    request.token_last = last;
    const ExportedFile paper = render_export(a, request);
    REQUIRE(paper.layout);
    REQUIRE(paper.image);
    const auto dir = test_tmp() / "zoom_range_cli";
    std::filesystem::create_directories(dir);
    const auto png = dir / "range.png";
    const CliRun cli = run_cli("export --what heads --format png " + scene_flags + " --token-range " + std::to_string(first) +
                               "-" + std::to_string(last) + " --out " + shell_quote(png.string()));
    INFO(cli.err);
    REQUIRE(cli.exit_code == 0);
    const Png printed = read_png(png);
    REQUIRE(printed.width == paper.image->width);
    int checked = 0, worst = 0;
    for (const auto& rec : w.layout["heads"]) {
      const int h = rec["head"].get<int>();
      CHECK(rec["tokens"].get<int>() == t);  // the shapes stay the whole input's
      CHECK(rec["shown"].get<int>() == n);
      CHECK(rec["first_query"].get<int>() == first);
      CHECK(rec["first_key"].get<int>() == first);
      const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), cell = rec["cell"].get<double>();
      CHECK(rec["w"].get<double>() == doctest::Approx(n * cell).epsilon(0.02));
      REQUIRE(paper.figure->panels[size_t(h)].rows == n);
      REQUIRE(paper.figure->panels[size_t(h)].values.size() == size_t(n * n));
      const PanelLayout& panel = paper.layout->panels[size_t(h)];
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const Rect r = panel.cell(i, j);
          const Rgba on_paper = paper.image->pixel(r.centre_x(), r.centre_y());
          const Rgba on_screen = w.png.at(int(x + (j + 0.5) * cell), int(y + (i + 0.5) * cell));
          const int d = std::max(channel_distance(on_screen, on_paper),
                                 channel_distance(printed.at(r.centre_x(), r.centre_y()), on_paper));
          worst = std::max(worst, d);
          if (d > 2) {
            INFO("head " << h << " cell (" << i << ", " << j << ")");
            CHECK(d <= 2);
          }
          ++checked;
        }
    }
    MESSAGE(checked << " cells compared, largest channel difference " << worst);
    CHECK(checked == 4 * n * n);
    // A label for every token in the range, on both axes, and none other.
    CHECK(label_indices(w, "query") == iota(first, n));
    CHECK(label_indices(w, "key") == iota(first, n));
    // A range that does not fit is refused on screen and the heads keep every token.
    // (The popup stays open here: its message is in the screenshot.)
    const WindowRun bad = run_window("zoom_range_bad", base + typed_range(controls, t, t + 1, false, false));
    CHECK(bad.layout["heads"][0]["shown"].get<int>() == t);
    bool said = false;
    for (const auto& text : bad.layout.at("texts"))
      said = said || text["text"].get<std::string>().find("0 to " + std::to_string(t - 1)) != std::string::npos;
    CHECK(said);
  }

  TEST_CASE("heads zoom: the wheel zooms about the pointer, and the layout record lists exactly the tokens drawn") {
    const Analysis a = same_analysis();
    const int t = int(a.attention->labels.size());
    const std::string base = scene_flags + " --size 1920x1080";
    const WindowRun whole = run_window("zoom_wheel_whole", base);
    const auto& h0 = whole.layout["heads"][0];
    CHECK(h0["shown"].get<int>() == t);
    const double x = h0["x"].get<double>(), y = h0["y"].get<double>(), cell = h0["cell"].get<double>();
    const int key = t - 3, query = t - 2;  // the pointer on this cell
    const std::string at = std::to_string(int(x + (key + 0.5) * cell)) + "," + std::to_string(int(y + (query + 0.5) * cell));
    // After the wheel, a click on that cell (selecting its query: an outline, the cell centres unchanged) lets
    // the pointer move off to the window's title, so no tooltip covers the cells in the screenshot.
    std::string title;
    for (const auto& win : whole.layout.at("windows"))
      if (win["title"] == "Heads###heads")
        title = std::to_string(int(win["x"].get<double>() + 40)) + "," + std::to_string(int(win["y"].get<double>() + 6));
    REQUIRE_FALSE(title.empty());
    const WindowRun zoomed =
        run_window("zoom_wheel_in", base + " --pointer '" + at + ";" + title + "' --keys 4:wheel=3 --clicks 8 --frames 14");
    const auto& z0 = zoomed.layout["heads"][0];
    const int shown = z0["shown"].get<int>(), fq = z0["first_query"].get<int>(), fk = z0["first_key"].get<int>();
    CHECK(shown < t);
    CHECK(shown >= 2);
    CHECK(fq + shown <= t);
    CHECK(fk + shown <= t);
    const double zcell = z0["cell"].get<double>();
    CHECK(zcell > cell * 1.5);
    // The cell under the pointer is still the one it was on.
    const double px = x + (key + 0.5) * cell, py = y + (query + 0.5) * cell;
    CHECK(fk + int((px - z0["x"].get<double>()) / zcell) == key);
    CHECK(fq + int((py - z0["y"].get<double>()) / zcell) == query);
    // Exactly the tokens drawn are labelled, each one.
    CHECK(label_indices(zoomed, "query") == iota(fq, shown));
    CHECK(label_indices(zoomed, "key") == iota(fk, shown));
    // And the cells drawn are those tokens' cells: the zoomed view's corner is the whole view's (fq, fk).
    for (int i = 0; i < shown; i += std::max(1, shown - 1))
      for (int j = 0; j < shown; j += std::max(1, shown - 1)) {
        const Rgba near = zoomed.png.at(int(z0["x"].get<double>() + (j + 0.5) * zcell), int(z0["y"].get<double>() + (i + 0.5) * zcell));
        const Rgba far = whole.png.at(int(x + (fk + j + 0.5) * cell), int(y + (fq + i + 0.5) * cell));
        INFO("cell (" << fq + i << ", " << fk + j << ")");
        CHECK(channel_distance(near, far) <= 2);
      }
    // Wheeling back out past the whole input shows every token again.
    const WindowRun out = run_window("zoom_wheel_out", base + " --pointer " + at + " --keys 4:wheel=3,7:wheel=-20 --frames 12");
    CHECK(out.layout["heads"][0]["shown"].get<int>() == t);
    CHECK(label_indices(out, "key") == iota(0, t));
  }

  TEST_CASE("heads pan: dragging a zoomed head moves the view by the cells dragged, without selecting a query") {
    const Analysis a = same_analysis();
    const int t = int(a.attention->labels.size());
    const std::string base = scene_flags + " --size 1920x1080";
    const WindowRun whole = run_window("zoom_pan_whole", base);
    const auto& h0 = whole.layout["heads"][0];
    const double x = h0["x"].get<double>(), y = h0["y"].get<double>(), cell = h0["cell"].get<double>();
    const int at_x = int(x + 5.5 * cell), at_y = int(y + 5.5 * cell);
    const std::string at = std::to_string(at_x) + "," + std::to_string(at_y);
    const WindowRun zoomed = run_window("zoom_pan_zoomed", base + " --pointer " + at + " --keys 4:wheel=3 --frames 10");
    const auto& z = zoomed.layout["heads"][0];
    const int shown = z["shown"].get<int>(), fq = z["first_query"].get<int>(), fk = z["first_key"].get<int>();
    const double zcell = z["cell"].get<double>();
    REQUIRE(shown < t);
    REQUIRE(fk + 2 <= t - shown);  // room to move two keys on
    REQUIRE(fq + 1 <= t - shown);
    // The button held over frames 8–11 (pressed at `at`) while the pointer goes two cells left and one up: a
    // pointer moves on once a click's frame is past, so frames 8–9 have `at`, 10 the next point, 11 the last.
    auto point = [&](double dx, double dy) {
      return std::to_string(int(at_x + dx * zcell)) + "," + std::to_string(int(at_y + dy * zcell));
    };
    const std::string path = at + ";" + point(-1, -0.4) + ";" + point(-2, -1) + ";" + point(-2, -1) + ";" + point(-2, -1);
    const WindowRun panned = run_window("zoom_pan_dragged", base + " --pointer '" + path +
                                                              "' --keys 4:wheel=3 --clicks 8,9,10,11 --frames 16");
    const auto& p = panned.layout["heads"][0];
    CHECK(p["shown"].get<int>() == shown);
    CHECK(p["first_key"].get<int>() == fk + 2);
    CHECK(p["first_query"].get<int>() == fq + 1);
    std::set<int> keys;
    for (int k = fk + 2; k < fk + 2 + shown; ++k) keys.insert(k);
    CHECK(label_indices(panned, "key") == keys);
    // A drag is no click: no query was selected (the toolbar would name it).
    for (const std::string& s : texts_of(panned, "###heads")) CHECK(s.rfind("query ", 0) != 0);
  }

  TEST_CASE("heads numbers in cells: two decimals, only when the cells are big enough") {
    const std::string base = std::string("--text '") + sentence + "' --kind gqa --heads 16 --groups 2 --causal --size 1280x720";
    Scene s;
    s.input.text = sentence;
    s.model.kind = AttentionKind::gqa;
    s.model.heads = 16;
    s.model.groups = 2;
    s.model.causal = true;
    const Analysis a = analyse(s);
    const RangeControls controls = range_controls("zoom_numbers", base);
    // Sixteen heads of the whole sentence: cells too small for numbers, though the box is ticked.
    const WindowRun small = run_window("zoom_numbers_small", base + " --pointer '" + controls.button + ";" + controls.numbers +
                                                                 ";" + controls.away + "' --clicks 4,8,12 --frames 18");
    REQUIRE(small.layout["heads"][0]["cell"].get<double>() < 28.0);
    CHECK(cell_numbers(small).empty());
    // Tokens 3–5: big cells, one number per unmasked cell in every head, each its probability.
    const int first = 3, last = 5, n = last - first + 1;
    const WindowRun big = run_window("zoom_numbers_big", base + typed_range(controls, first, last, true));
    REQUIRE(big.layout["heads"][0]["shown"].get<int>() == n);
    REQUIRE(big.layout["heads"][0]["cell"].get<double>() >= 28.0);
    std::multiset<std::string> expected;
    for (int h = 0; h < 16; ++h)
      for (int i = first; i <= last; ++i)
        for (int j = first; j <= i; ++j) {
          char buf[32];
          std::snprintf(buf, sizeof buf, "%.2f", double(a.attention->result.probs[size_t(h)](i, j)));
          expected.insert(buf);
        }
    const std::vector<std::string> drawn = cell_numbers(big);
    CHECK(drawn.size() == expected.size());
    CHECK(std::multiset<std::string>(drawn.begin(), drawn.end()) == expected);
    // Without the box ticked, the same big cells show no numbers.
    const WindowRun unticked = run_window("zoom_numbers_unticked", base + typed_range(controls, first, last));
    REQUIRE(unticked.layout["heads"][0]["cell"].get<double>() >= 28.0);
    CHECK(cell_numbers(unticked).empty());
  }
}

}  // namespace attnscope::test
