// Zoom, pan and token range in every heatmap view (zoom.h): a drag along the Heads view's key labels picks
// a token range; the wheel zooms the relative-position views, the convolution view, Compare A/B and the
// Model view, each of which then draws exactly the cells of the whole pictures it claims (its layout record
// names them, and their colours equal the whole view's at the same tokens); a double-click resets.
#include <algorithm>
#include <filesystem>
#include <sys/wait.h>
#include <fstream>
#include <cstdlib>
#include <set>
#include <string>

#include "attnscope/scene/scene_json.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

const char* const sentence = "The cat sat on the mat because it was tired.";
const std::string scene_flags = std::string("--text '") + sentence + "' --kind gqa --heads 4 --groups 2 --causal";

std::string point(double x, double y) { return std::to_string(int(x)) + "," + std::to_string(int(y)); }

// The centre of cell (row, col) of a map's layout record, as drawn.
std::string cell_point(const nlohmann::json& map, double row, double col) {
  const double cell = map.at("cell").get<double>();
  return point(map.at("x").get<double>() + (col + 0.5) * cell, map.at("y").get<double>() + (row + 0.5) * cell);
}

// The box around the texts of the run's tooltip (the pointer rests on a heatmap), with room for its padding.
struct Box {
  double x0 = 0, y0 = 0, x1 = -1, y1 = -1;
  bool holds(double x, double y) const { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};
Box tooltip_box(const WindowRun& w) {
  Box b{1e9, 1e9, -1e9, -1e9};
  for (const auto& t : w.layout.at("texts"))
    if (t["window"].get<std::string>().rfind("##Tooltip", 0) == 0) {
      b.x0 = std::min(b.x0, t["x"].get<double>() - 24);
      b.y0 = std::min(b.y0, t["y"].get<double>() - 24);
      b.x1 = std::max(b.x1, t["x"].get<double>() + t["w"].get<double>() + 24);
      b.y1 = std::max(b.y1, t["y"].get<double>() + t["h"].get<double>() + 24);
    }
  return b;
}

// Every cell of `zoomed` (a map's record in a zoomed run: first_query, first_key, shown) has the colour of
// the same cell of `whole` (the record of the same map unzoomed), but for cells under the zoomed run's
// tooltip. Returns the cells compared.
int same_cells(const WindowRun& zoomed_run, const nlohmann::json& zoomed, const WindowRun& whole_run,
               const nlohmann::json& whole, int rows_shown) {
  const Box tooltip = tooltip_box(zoomed_run);
  const int fq = zoomed.at("first_query").get<int>(), fk = zoomed.at("first_key").get<int>(),
            n = zoomed.at("shown").get<int>();
  const double zc = zoomed.at("cell").get<double>(), wc = whole.at("cell").get<double>();
  int checked = 0, worst = 0;
  for (int i = 0; i < rows_shown; ++i)
    for (int j = 0; j < n; ++j) {
      const double x = zoomed.at("x").get<double>() + (j + 0.5) * zc, y = zoomed.at("y").get<double>() + (i + 0.5) * zc;
      if (tooltip.holds(x, y)) continue;
      const Rgba a = zoomed_run.png.at(int(x), int(y));
      const Rgba b = whole_run.png.at(int(whole.at("x").get<double>() + (fk + j + 0.5) * wc),
                                      int(whole.at("y").get<double>() + (fq + i + 0.5) * wc));
      worst = std::max(worst, channel_distance(a, b));
      ++checked;
    }
  INFO("largest channel difference " << worst << " over " << checked << " cells");
  CHECK(worst <= 2);
  return checked;
}

// A drag with the left button held over frames 8–11 along `from` → `to` (the pointer moves on after each
// pressed frame, so frames 8–9 are at `from` and 11 at `to`).
std::string drag(const std::string& from, const std::string& mid, const std::string& to) {
  return " --pointer '" + from + ";" + mid + ";" + to + ";" + to + ";" + to + "' --clicks 8,9,10,11";
}

}  // namespace

TEST_SUITE("gui_zoom_views") {
  TEST_CASE("heads key axis and wheel through the X server: a real drag picks tokens 2-5, a real wheel step zooms in") {
    const std::string base = scene_flags + " --size 1280x720";
    const WindowRun whole = run_window("zoom_views_xdotool_whole", base);
    REQUIRE(whole.layout.at("widgets").contains("heads.key_axis"));
    const auto& band = whole.layout["widgets"]["heads.key_axis"];
    const auto& h0 = whole.layout["heads"][0];
    const double x = h0["x"].get<double>(), cell = h0["cell"].get<double>();
    const int y = int(band["y"].get<double>() + band["h"].get<double>() / 2);
    auto at = [](double px, double py) { return std::to_string(int(px)) + " " + std::to_string(int(py)); };
    // Press on key 2's label, move through key 4 to key 5, release; then one wheel step over a cell of head 0
    // (button 4: the wheel turned away from the user).
    const std::string events = "xdotool mousemove --window $wid " + at(x + 2.5 * cell, y) + "\nsleep 0.3\n"
                               "xdotool mousedown 1\nsleep 0.3\n"
                               "xdotool mousemove --window $wid " + at(x + 4.5 * cell, y) + "\nsleep 0.3\n"
                               "xdotool mousemove --window $wid " + at(x + 5.5 * cell, y) + "\nsleep 0.3\n"
                               "xdotool mouseup 1\nsleep 1\n";
    const auto dir = test_tmp() / "zoom_views_xdotool";
    std::filesystem::create_directories(dir);
    const nlohmann::json picked = drive_window(dir, base, events);
    INFO(picked.dump().substr(0, 400));
    REQUIRE(picked.at("heads").size() == 4);
    for (const auto& rec : picked["heads"]) {
      CHECK(rec["first_key"].get<int>() == 2);
      CHECK(rec["first_query"].get<int>() == 2);
      CHECK(rec["shown"].get<int>() == 4);
    }
    // The wheel over the picked range's head 0: from 4 tokens across to 3.
    const auto& p0 = picked["heads"][0];
    const double px = p0["x"].get<double>() + p0["w"].get<double>() / 2, py = p0["y"].get<double>() + p0["h"].get<double>() / 2;
    const auto dir2 = test_tmp() / "zoom_views_xdotool_wheel";
    std::filesystem::create_directories(dir2);
    const nlohmann::json wheeled =
        drive_window(dir2, base, events + "xdotool mousemove --window $wid " + at(px, py) + "\nsleep 0.3\nxdotool click 4\nsleep 1\n");
    REQUIRE(wheeled.at("heads").size() == 4);
    CHECK(wheeled["heads"][0]["shown"].get<int>() == 3);
    CHECK(wheeled["heads"][0]["first_key"].get<int>() >= 2);
  }

  TEST_CASE("heads key axis: a drag along the key labels from token i to j shows tokens i-j in every head") {
    const std::string base = scene_flags + " --size 1920x1080";
    const WindowRun whole = run_window("zoom_views_axis_whole", base);
    const auto& widgets = whole.layout.at("widgets");
    REQUIRE(widgets.contains("heads.key_axis"));
    const auto& band = widgets["heads.key_axis"];
    const auto& h0 = whole.layout["heads"][0];
    const double x = h0["x"].get<double>(), cell = h0["cell"].get<double>();
    const double y = band["y"].get<double>() + band["h"].get<double>() / 2;
    // From key 5 back to key 2: the order of the ends does not matter.
    const WindowRun w = run_window("zoom_views_axis_drag", base + drag(point(x + 5.5 * cell, y), point(x + 4.2 * cell, y),
                                                                      point(x + 2.5 * cell, y)) +
                                                               " --frames 16");
    INFO("stderr: " << w.run.err);
    REQUIRE(w.layout["heads"].size() == 4);
    for (const auto& rec : w.layout["heads"]) {
      CHECK(rec["first_query"].get<int>() == 2);
      CHECK(rec["first_key"].get<int>() == 2);
      CHECK(rec["shown"].get<int>() == 4);
    }
    CHECK(label_indices(w, "key") == iota(2, 4));
    CHECK(label_indices(w, "query") == iota(2, 4));
    CHECK(same_cells(w, w.layout["heads"][1], whole, whole.layout["heads"][1], 4) >= 4);
    // The toolbar names the range, and a click on one label (no drag) picks nothing.
    CHECK(shows(texts_of(w, "###heads"), "tokens 2–5…"));
    const WindowRun click = run_window("zoom_views_axis_click", base + " --pointer " + point(x + 5.5 * cell, y) +
                                                                    " --clicks 8 --frames 12");
    CHECK(click.layout["heads"][0]["shown"].get<int>() == whole.layout["heads"][0]["tokens"].get<int>());
  }

  TEST_CASE("relative position 1D: the wheel zooms every head, the key axis picks a range, each shows the cells it claims") {
    const std::string base = std::string("--text '") + sentence + "' --view relpos1d --size 1920x1080";
    const WindowRun whole = run_window("zoom_views_rel1_whole", base);
    REQUIRE(whole.layout["heads"].size() >= 2);
    const auto& h0 = whole.layout["heads"][0];
    const int t = h0["tokens"].get<int>();
    const WindowRun zoomed = run_window("zoom_views_rel1_wheel", base + " --pointer " + cell_point(h0, 6, 6) +
                                                                     " --keys 4:wheel=3 --frames 10");
    const auto& z = zoomed.layout["heads"][0];
    const int n = z["shown"].get<int>();
    REQUIRE(n < t);
    CHECK(label_indices(zoomed, "key") == iota(z["first_key"].get<int>(), n));
    for (size_t h = 0; h < zoomed.layout["heads"].size(); ++h) {
      CHECK(zoomed.layout["heads"][h]["shown"].get<int>() == n);
      CHECK(zoomed.layout["heads"][h]["first_key"] == z["first_key"]);
    }
    CHECK(same_cells(zoomed, zoomed.layout["heads"][1], whole, whole.layout["heads"][1], n) >= 4);
    // A double-click resets the zoom.
    const WindowRun reset = run_window("zoom_views_rel1_reset", base + " --pointer " + cell_point(h0, 6, 6) +
                                                                     " --keys 4:wheel=3 --clicks 8,10 --frames 16");
    CHECK(reset.layout["heads"][0]["shown"].get<int>() == t);
    // The key axis: tokens 3–6.
    REQUIRE(whole.layout.at("widgets").contains("relpos.key_axis"));
    const auto& band = whole.layout["widgets"]["relpos.key_axis"];
    const double y = band["y"].get<double>() + band["h"].get<double>() / 2, x = h0["x"].get<double>(),
                 cell = h0["cell"].get<double>();
    const WindowRun picked = run_window("zoom_views_rel1_axis", base + drag(point(x + 3.5 * cell, y), point(x + 5 * cell, y),
                                                                             point(x + 6.5 * cell, y)) +
                                                                    " --frames 16");
    CHECK(picked.layout["heads"][0]["first_key"].get<int>() == 3);
    CHECK(picked.layout["heads"][0]["shown"].get<int>() == 4);
    CHECK(same_cells(picked, picked.layout["heads"][0], whole, whole.layout["heads"][0], 4) >= 4);
  }

  TEST_CASE("relative position 2D and convolution: the wheel zooms every map of the view alike; numbers in cells") {
    for (const char* view : {"relpos2d", "conv"}) {
      CAPTURE(view);
      const std::string base = std::string("--view ") + view + " --size 1920x1080";
      const WindowRun whole = run_window(std::string("zoom_views_") + view + "_whole", base);
      const auto& maps = whole.layout["heads"];
      REQUIRE(maps.size() >= 2);
      const auto& m0 = maps[0];
      const int side = m0["tokens"].get<int>();
      const WindowRun zoomed = run_window(std::string("zoom_views_") + view + "_wheel",
                                          base + " --pointer " + cell_point(m0, 7, 7) + " --keys 4:wheel=4 --frames 10");
      const auto& zm = zoomed.layout["heads"];
      REQUIRE(zm.size() == maps.size());
      const int n = zm[0]["shown"].get<int>();
      REQUIRE(n < side);
      int checked = 0;
      for (size_t i = 0; i < zm.size(); ++i) {
        CHECK(zm[i]["shown"].get<int>() == n);
        CHECK(zm[i]["first_query"] == zm[0]["first_query"]);
        CHECK(zm[i]["first_key"] == zm[0]["first_key"]);
        checked += same_cells(zoomed, zm[i], whole, maps[i], n);
      }
      CHECK(checked >= 4 * n);  // most maps are clear of the tooltip
      // Zoomed far in with "numbers in cells" ticked: two decimals drawn in the cells.
      const std::string box = std::string(view) + ".numbers";
      REQUIRE(whole.layout["widgets"].contains(box));
      const auto& b = whole.layout["widgets"][box];
      const WindowRun numbers = run_window(std::string("zoom_views_") + view + "_numbers",
                                           base + " --pointer '" + point(b["x"].get<double>() + 8, b["y"].get<double>() + b["h"].get<double>() / 2) +
                                               ";" + cell_point(m0, 7, 7) + "' --clicks 4 --keys 8:wheel=12 --frames 16");
      int drawn = 0;
      for (const auto& text : numbers.layout.at("texts")) {
        const std::string s = text["text"].get<std::string>();
        if (s.size() >= 4 && s[s.size() - 3] == '.' && s.find_first_not_of("-0123456789.") == std::string::npos) ++drawn;
      }
      CHECK(numbers.layout["heads"][0]["shown"].get<int>() <= 8);
      CHECK(drawn >= 4);
    }
  }

  TEST_CASE("compare A/B and the Model view follow the Heads view's token range; the wheel zooms them") {
    // Compare: A is MHA, B is MQA; the range typed in the Heads view is the one compared.
    const std::filesystem::path a_file = test_tmp() / "zoom_views_compare_a.json";
    Scene sa;
    sa.input.text = sentence;
    sa.model.kind = AttentionKind::mha;
    sa.model.heads = 4;
    sa.model.causal = true;
    save_scene(a_file, sa);
    const std::string base = std::string("--text '") + sentence + "' --kind mqa --heads 4 --causal --size 1920x1080 --compare-a '" +
                             a_file.string() + "'";
    const WindowRun whole = run_window("zoom_views_compare_whole", base);
    INFO("stderr: " << whole.run.err);
    REQUIRE(whole.layout["heads"].size() == 8);
    const auto& p0 = whole.layout["heads"][0];
    const int t = p0["tokens"].get<int>();
    const WindowRun zoomed = run_window("zoom_views_compare_wheel", base + " --pointer " + cell_point(p0, 5, 5) +
                                                                        " --keys 4:wheel=3 --frames 10");
    const auto& zp = zoomed.layout["heads"];
    REQUIRE(zp.size() == 8);
    const int n = zp[0]["shown"].get<int>();
    REQUIRE(n < t);
    int checked = 0;
    for (size_t i = 0; i < zp.size(); ++i) checked += same_cells(zoomed, zp[i], whole, whole.layout["heads"][i], n);
    CHECK(checked >= 4 * n);
    CHECK(label_indices(zoomed, "key") == iota(zp[0]["first_key"].get<int>(), n));

    // The Model view of a checkpoint: every thumbnail shows the same tokens; the wheel over one zooms all.
    const std::string model = "--checkpoint " +
                              shell_quote((std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/qwen2_gqa").string()) +
                              " --show-model-view --size 1920x1080";
    const WindowRun mv = run_window("zoom_views_model_whole", model);
    INFO("stderr: " << mv.run.err);
    REQUIRE(mv.layout["thumbs"].size() >= 4);
    // Thumbnails as maps: their cell is their width over the tokens shown.
    auto as_map = [](nlohmann::json thumb) {
      thumb["cell"] = thumb["w"].get<double>() / thumb["shown"].get<double>();
      return thumb;
    };
    const nlohmann::json m0 = as_map(mv.layout["thumbs"][0]);
    const int tokens = m0["shown"].get<int>();
    REQUIRE(tokens >= 6);
    const WindowRun mz = run_window("zoom_views_model_wheel", model + " --pointer " + cell_point(m0, 3, 3) +
                                                                   " --keys 4:wheel=3 --frames 10");
    const auto& thumbs = mz.layout["thumbs"];
    REQUIRE(thumbs.size() == mv.layout["thumbs"].size());
    const int shown = thumbs[0]["shown"].get<int>();
    REQUIRE(shown < tokens);
    int compared = 0;
    for (size_t i = 0; i < thumbs.size(); ++i) {
      CHECK(thumbs[i]["shown"].get<int>() == shown);
      CHECK(thumbs[i]["first_key"] == thumbs[0]["first_key"]);
      compared += same_cells(mz, as_map(thumbs[i]), mv, as_map(mv.layout["thumbs"][i]), shown);
    }
    CHECK(compared >= 4 * shown);
  }
}

}  // namespace attnscope::test
