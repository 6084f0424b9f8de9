// The heatmaps' colour scales in the window (scale_control.h): fixed 0–1 colours a probability p as the
// colormap at p, a locked range stays while a slider moves, per head gives every tile its own head's
// range, the bar's title names the mode (in Chinese too), and the choice is remembered between runs.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/color_scale.h"
#include "attnscope/scene/scene_json.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

const char* const sentence = "The cat sat on the mat because it was tired.";
const std::string scene_flags = std::string("--text '") + sentence + "' --kind gqa --heads 4 --groups 2";

Analysis same_analysis() {
  Scene s;
  s.input.text = sentence;
  s.model.kind = AttentionKind::gqa;
  s.model.heads = 4;
  s.model.groups = 2;
  return analyse(s);
}

// The Heads grid's bar records (tile −1: the shared bar; 0…: a head's own thin bar).
std::vector<nlohmann::json> bars_of(const WindowRun& w) {
  std::vector<nlohmann::json> out;
  for (const auto& b : w.layout.at("bars")) out.push_back(b);
  return out;
}

const nlohmann::json* shared_bar(const WindowRun& w) {
  for (const auto& b : w.layout.at("bars"))
    if (b.at("tile").get<int>() == -1) return &b;
  return nullptr;
}

}  // namespace

TEST_SUITE("gui_scale") {
  TEST_CASE("heads scale: fixed 0-1 colours a probability p as the colormap at p (pixels of the screenshot)") {
    const WindowRun w = run_window("scale_fixed", scene_flags + " --scale-mode fixed");
    const Analysis a = same_analysis();
    const nlohmann::json* bar = shared_bar(w);
    REQUIRE(bar != nullptr);
    CHECK((*bar)["lo"].get<double>() == 0.0);
    CHECK((*bar)["hi"].get<double>() == 1.0);
    CHECK((*bar)["title"].get<std::string>() == "probability · fixed 0–1");
    REQUIRE(w.layout["heads"].size() == 4);
    const int t = int(a.attention->result.probs[0].rows());
    int checked = 0, worst = 0, unlike_own_range = 0;
    for (const auto& rec : w.layout["heads"]) {
      const int h = rec["head"].get<int>();
      const double x = rec["x"].get<double>(), y = rec["y"].get<double>(), cell = rec["cell"].get<double>();
      REQUIRE(cell >= 3.0);
      const Mat& p = a.attention->result.probs[size_t(h)];
      const ValueRange own{p.minCoeff(), p.maxCoeff()};
      for (int i = 0; i < t; ++i)
        for (int j = 0; j < t; ++j) {
          const Rgba expected = colormap_lookup(Colormap::viridis, p(i, j));
          const Rgba on_screen = w.png.at(int(x + (j + 0.5) * cell), int(y + (i + 0.5) * cell));
          const int d = channel_distance(on_screen, expected);
          worst = std::max(worst, d);
          if (d > 2) {
            INFO("head " << h << " cell (" << i << ", " << j << ") p = " << p(i, j));
            CHECK(d <= 2);
          }
          unlike_own_range += channel_distance(value_to_color(p(i, j), own, Colormap::viridis), expected) > 2;
          ++checked;
        }
    }
    MESSAGE(checked << " cells compared with the colormap at p, largest channel difference " << worst);
    CHECK(checked == 4 * t * t);
    CHECK(unlike_own_range > 0);  // the data's own range would have coloured these cells otherwise
    // Round ticks over 0–1.
    std::vector<double> ticks;
    for (const auto& tick : w.layout["ticks"])
      if (tick["tile"].get<int>() == -1) ticks.push_back(tick["value"].get<double>());
    REQUIRE(ticks.size() >= 3);
    CHECK(ticks.front() == doctest::Approx(0.0));
    CHECK(ticks.back() == doctest::Approx(1.0));
  }

  TEST_CASE("heads scale: a locked range stays while a slider moves; the shared one follows the heads") {
    const std::string locked = scene_flags + " --scale-mode locked --scale-range 0.05,0.4";
    const WindowRun before = run_window("scale_locked_before", locked);
    REQUIRE(before.layout.at("widgets").contains("model.d_model"));
    const auto& slider = before.layout["widgets"]["model.d_model"];
    char pointer[64];
    std::snprintf(pointer, sizeof pointer, "%d,%d", int(slider["x"].get<double>() + 3),
                  int(slider["y"].get<double>() + slider["h"].get<double>() / 2));
    const std::string click = std::string(" --pointer ") + pointer + " --clicks 4 --frames 10";
    const WindowRun after = run_window("scale_locked_after", locked + click);
    const WindowRun shared_before = run_window("scale_shared_before", scene_flags);
    const WindowRun shared_after = run_window("scale_shared_after", scene_flags + click);
    for (const WindowRun* w : {&before, &after}) {
      const nlohmann::json* bar = shared_bar(*w);
      REQUIRE(bar != nullptr);
      CHECK((*bar)["lo"].get<double>() == doctest::Approx(0.05));
      CHECK((*bar)["hi"].get<double>() == doctest::Approx(0.4));
      CHECK((*bar)["title"].get<std::string>() == "probability · locked 0.05–0.4");
    }
    // The slider did change the heads: the shared range moved with them, and the locked picture changed.
    const nlohmann::json *sb = shared_bar(shared_before), *sa = shared_bar(shared_after);
    REQUIRE(sb != nullptr);
    REQUIRE(sa != nullptr);
    CHECK((*sb)["hi"].get<double>() != (*sa)["hi"].get<double>());
    const auto& h0 = before.layout["heads"][0];
    const auto& h1 = after.layout["heads"][0];
    int changed = 0;
    for (int k = 0; k < 8; ++k) {
      const int x0 = int(h0["x"].get<double>() + (k + 0.5) * h0["cell"].get<double>());
      const int y0 = int(h0["y"].get<double>() + (k + 0.5) * h0["cell"].get<double>());
      const int x1 = int(h1["x"].get<double>() + (k + 0.5) * h1["cell"].get<double>());
      const int y1 = int(h1["y"].get<double>() + (k + 0.5) * h1["cell"].get<double>());
      changed += channel_distance(before.png.at(x0, y0), after.png.at(x1, y1)) > 2;
    }
    CHECK(changed > 0);
  }

  TEST_CASE("heads scale: choosing locked in the toolbar freezes the range on screen, and a slider then leaves it") {
    const std::string base = scene_flags + " --size 1280x720";
    const WindowRun shared = run_window("scale_pick_shared", base);
    const nlohmann::json* shown = shared_bar(shared);
    REQUIRE(shown != nullptr);
    const double lo = (*shown)["lo"].get<double>(), hi = (*shown)["hi"].get<double>();
    REQUIRE(shared.layout.at("widgets").contains("scale_mode"));
    REQUIRE(shared.layout.at("widgets").contains("model.d_model"));
    auto centre = [](const nlohmann::json& r) {
      return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + "," +
             std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
    };
    const std::string combo = centre(shared.layout["widgets"]["scale_mode"]);
    // Where the open combo lists "locked".
    const WindowRun open = run_window("scale_pick_open", base + " --pointer " + combo + " --clicks 4 --frames 8");
    std::string item;
    for (const auto& t : open.layout["texts"])
      if (t["text"] == "locked" && t["window"].get<std::string>().rfind("##Combo", 0) == 0) item = centre(t);
    REQUIRE_FALSE(item.empty());
    const auto& slider = shared.layout["widgets"]["model.d_model"];
    const std::string left_end = std::to_string(int(slider["x"].get<double>() + 3)) + "," +
                                 std::to_string(int(slider["y"].get<double>() + slider["h"].get<double>() / 2));
    const WindowRun picked = run_window("scale_pick_locked", base + " --pointer '" + combo + ";" + item + ";" + left_end +
                                                                 "' --clicks 4,8,12 --frames 18");
    const nlohmann::json* bar = shared_bar(picked);
    REQUIRE(bar != nullptr);
    CHECK((*bar)["lo"].get<double>() == doctest::Approx(lo));
    CHECK((*bar)["hi"].get<double>() == doctest::Approx(hi));
    // The title in round numbers, as the bar's ticks (range_text).
    CHECK((*bar)["title"].get<std::string>() == "probability · locked " + range_text({float(lo), float(hi)}));
    // The slider moved: with the shared scale the same click changes the range.
    const WindowRun moved = run_window("scale_pick_moved", base + " --pointer " + left_end + " --clicks 4 --frames 10");
    REQUIRE(shared_bar(moved) != nullptr);
    CHECK((*shared_bar(moved))["hi"].get<double>() != doctest::Approx(hi));
  }

  TEST_CASE("heads scale: the Display menu chooses fixed 0-1 for probabilities, and offers it not for scores") {
    auto centre = [](const nlohmann::json& r) {
      return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + "," +
             std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
    };
    for (const bool scores : {false, true}) {
      CAPTURE(scores);
      const std::string base = scene_flags + " --size 1280x720" + (scores ? " --scores --colormap diverging" : "");
      const std::string name = scores ? "scale_menu_scores" : "scale_menu_probs";
      const WindowRun first = run_window(name + "_open", base);
      REQUIRE(first.layout.at("widgets").contains("menu.display"));
      const std::string menu = centre(first.layout["widgets"]["menu.display"]);
      const WindowRun open = run_window(name + "_menu", base + " --pointer " + menu + " --clicks 4 --frames 8");
      std::string item;
      for (const auto& t : open.layout["texts"])
        if (t["text"] == "fixed 0–1" && t["window"].get<std::string>().rfind("##Menu", 0) == 0) item = centre(t);
      REQUIRE_FALSE(item.empty());
      const WindowRun chosen =
          run_window(name + "_chosen", base + " --pointer '" + menu + ";" + item + "' --clicks 4,8 --frames 14");
      const nlohmann::json* bar = shared_bar(chosen);
      REQUIRE(bar != nullptr);
      if (scores) {  // greyed out: the click changes nothing
        CHECK((*bar)["title"].get<std::string>() == "score");
      } else {
        CHECK((*bar)["title"].get<std::string>() == "probability · fixed 0–1");
        CHECK((*bar)["hi"].get<double>() == 1.0);
      }
    }
  }

  TEST_CASE("heads scale: per head, each tile's bar has its own head's range") {
    const WindowRun w = run_window("scale_per_head", scene_flags + " --scale-mode per-head");
    const Analysis a = same_analysis();
    CHECK(shared_bar(w) == nullptr);
    int tiles = 0;
    for (const auto& b : bars_of(w)) {
      const int h = b["tile"].get<int>();
      REQUIRE(h >= 0);
      REQUIRE(h < 4);
      const Mat& p = a.attention->result.probs[size_t(h)];
      CHECK(b["lo"].get<double>() == doctest::Approx(p.minCoeff()).epsilon(1e-5));
      CHECK(b["hi"].get<double>() == doctest::Approx(p.maxCoeff()).epsilon(1e-5));
      ++tiles;
    }
    CHECK(tiles == 4);
  }

  // issue 40: the tick marks touched their numbers, so on the diverging scale of differential attention
  // "0.5" read "-0.5" and "−0.5" read "- −0.5". Measured on the screenshot: in the rows of each number, the
  // background between the mark's last pixel and the number's first is at least a quarter of the font.
  TEST_CASE("colour bars: a gap between each tick mark and its number, so a mark never reads as a minus sign") {
    for (const char* mode : {"shared", "per-head"}) {
      CAPTURE(mode);
      const WindowRun w = run_window(std::string("scale_tick_gap_") + mode,
                                     std::string("--size 1280x720 --causal --differential --scale-mode ") + mode);
      REQUIRE(w.layout.at("colormap") == "diverging");
      std::set<std::string> numbers;  // as drawn: with a real minus sign
      for (const auto& t : w.layout.at("ticks")) {
        std::string s = t.at("text").get<std::string>();
        if (!s.empty() && s[0] == '-') s = "−" + s.substr(1);
        numbers.insert(s);
      }
      REQUIRE(numbers.size() >= 2);
      bool negative = false;
      int measured = 0;
      for (const auto& t : w.layout.at("texts")) {
        const std::string text = t.at("text").get<std::string>();
        if (t.at("window").get<std::string>().find("###heads") == std::string::npos || !numbers.count(text)) continue;
        const int x0 = int(std::lround(t.at("x").get<double>())), y0 = int(std::lround(t.at("y").get<double>()));
        const int x1 = x0 + int(std::lround(t.at("w").get<double>())), y1 = y0 + int(std::lround(t.at("h").get<double>()));
        const double font = y1 - y0;
        REQUIRE(x0 - 2 * font >= 0);
        REQUIRE(y1 <= w.png.height);
        // The background: the commonest colour inside the number's rectangle.
        std::map<std::tuple<int, int, int>, int> counts;
        for (int y = y0; y < y1; ++y)
          for (int x = x0; x < x1; ++x) {
            const Rgba c = w.png.at(x, y);
            ++counts[{c.r, c.g, c.b}];
          }
        const auto mode_it = std::max_element(counts.begin(), counts.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
        const Rgba bg{uint8_t(std::get<0>(mode_it->first)), uint8_t(std::get<1>(mode_it->first)),
                      uint8_t(std::get<2>(mode_it->first)), 255};
        auto ink = [&](int x, int y) { return channel_distance(w.png.at(x, y), bg) > 60; };
        int first = -1;  // the number's first inked column
        for (int x = x0; x < x1 && first < 0; ++x)
          for (int y = y0; y < y1; ++y)
            if (ink(x, y)) {
              first = x;
              break;
            }
        REQUIRE(first >= 0);
        int mark = -1;  // the last inked column before it: the tick mark's end
        for (int x = first - 1; x >= x0 - int(2 * font) && mark < 0; --x)
          for (int y = y0; y < y1; ++y)
            if (ink(x, y)) {
              mark = x;
              break;
            }
        if (mark < 0) continue;  // a number whose mark lies outside its rows (clamped at a bar's end)
        CAPTURE(text);
        CAPTURE(font);
        CHECK(first - mark - 1 >= 0.25 * font);
        negative = negative || text.rfind("−", 0) == 0;
        ++measured;
      }
      CHECK(measured >= 2);
      CHECK(negative);  // the diverging scale's negative numbers were among them
    }
  }

  TEST_CASE("heads scale: the colour bar's title names the mode in Chinese") {
    const WindowRun fixed = run_window("scale_zh_fixed", "--language zh " + scene_flags + " --scale-mode fixed");
    REQUIRE(shared_bar(fixed) != nullptr);
    CHECK((*shared_bar(fixed))["title"].get<std::string>() == "概率 · 固定 0–1");
    const WindowRun locked =
        run_window("scale_zh_locked", "--language zh " + scene_flags + " --scale-mode locked --scale-range 0,0.5");
    REQUIRE(shared_bar(locked) != nullptr);
    CHECK((*shared_bar(locked))["title"].get<std::string>() == "概率 · 锁定 0–0.5");
  }

  TEST_CASE("heads scale: the chosen scale is remembered by the next interactive run") {
    const auto config = fresh_dir("scale_persist");
    const std::string env = "XDG_CONFIG_HOME=" + shell_quote(config.string());
    const CliRun first = run_app(env, scene_flags + " --scale-mode locked --scale-range 0.05,0.4 --frames 4");
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    const auto saved = config / "attnscope" / "scene.json";
    REQUIRE(std::filesystem::exists(saved));
    CHECK(load_scene(saved).view.scale == ScaleMode::locked);
    // A run without scale flags starts from the remembered scene and saves it again unchanged.
    const CliRun second = run_app(env, "--frames 4");
    REQUIRE(second.exit_code == 0);
    const Scene again = load_scene(saved);
    CHECK(again.view.scale == ScaleMode::locked);
    CHECK(again.view.locked_lo == doctest::Approx(0.05));
    CHECK(again.view.locked_hi == doctest::Approx(0.4));
    const CliRun third = run_app(env, "--scale-mode per-head --frames 4");
    REQUIRE(third.exit_code == 0);
    CHECK(load_scene(saved).view.scale == ScaleMode::per_head);
  }
}

}  // namespace attnscope::test
