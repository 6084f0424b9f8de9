// Presentation mode as a presenter uses it: F11 (or Display → Presentation) hides the menu bar and the
// side panels and the view fills the window; with a lesson open the step is a banner under the view
// with a "3 / 7" counter; PageDown / → / Space, PageUp / ← / Backspace and Home / End move through the
// steps (also with the Lessons panel open outside presentation); Esc or F11 leaves with the teacher's
// panels and scale back. At 1024×768, 1280×720 and 1920×1080, in English and Chinese.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gui/gui_run.h"

using namespace attnscope::test;
using json = nlohmann::json;

namespace {

struct Box {
  double x0, y0, x1, y1;
  explicit Box(const json& r)
      : x0(r.at("x")), y0(r.at("y")), x1(r.at("x").get<double>() + r.at("w").get<double>()),
        y1(r.at("y").get<double>() + r.at("h").get<double>()) {}
  bool inside(const Box& o) const { return x0 >= o.x0 - 0.5 && y0 >= o.y0 - 0.5 && x1 <= o.x1 + 0.5 && y1 <= o.y1 + 0.5; }
};

std::vector<std::string> all_texts(const json& layout) {
  std::vector<std::string> out;
  for (const json& t : layout.at("texts")) out.push_back(t.at("text").get<std::string>());
  return out;
}

bool shown(const std::vector<std::string>& texts, const std::string& t) {
  for (const std::string& s : texts)
    if (s == t) return true;
  return false;
}

// The size's width and height.
std::pair<int, int> size_of(const std::string& size) {
  const size_t x = size.find('x');
  return {std::stoi(size.substr(0, x)), std::stoi(size.substr(x + 1))};
}

}  // namespace

TEST_SUITE("gui_presentation") {
  TEST_CASE("presentation: F11 hides the menu bar and the panels, the view fills the window above the step banner") {
    for (const char* size : {"1024x768", "1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) {
        CAPTURE(size);
        CAPTURE(language);
        const auto [w, h] = size_of(size);
        const std::string args = std::string("--size ") + size + " --language " + language + " --lesson 3";
        const WindowRun before = run_window(std::string("presentation_before_") + size + language, args);
        REQUIRE(before.layout.at("slots").contains("lessons"));
        const WindowRun on = run_window(std::string("presentation_on_") + size + language, args + " --frames 8 --keys 3:f11");
        const json& slots = on.layout.at("slots");
        INFO(slots.dump());
        // Only the view and the banner; the view spans the window's width from its top.
        for (const auto& [name, r] : slots.items()) CHECK_MESSAGE((name == "view" || name == "banner"), name << " is shown");
        const Box view(slots.at("view")), banner(slots.at("banner"));
        CHECK(view.x0 == doctest::Approx(0));
        CHECK(view.y0 == doctest::Approx(0));
        CHECK(view.x1 == doctest::Approx(w));
        CHECK(banner.y0 == doctest::Approx(view.y1));
        CHECK(banner.y1 == doctest::Approx(h));
        CHECK(banner.x1 == doctest::Approx(w));
        CHECK(view.y1 - view.y0 >= 0.6 * h);
        // No menu bar, no side window: every window drawn is the view's or the banner's.
        for (const json& win : on.layout.at("windows")) {
          const std::string title = win.at("title").get<std::string>();
          CHECK_MESSAGE((title.find("##lesson_banner") != std::string::npos || Box(win).inside(view)), title << " is not the view's");
        }
        // Each heatmap lies in the view; the step's caption and the counter "1 / 2" are in the banner.
        for (const json& hm : on.layout.at("heads")) CHECK(Box(hm).inside(view));
        REQUIRE(on.layout.at("widgets").contains("banner.counter"));
        CHECK(Box(on.layout.at("widgets").at("banner.counter")).inside(banner));
        CHECK(Box(on.layout.at("widgets").at("banner.caption")).inside(banner));
        CHECK(shown(all_texts(on.layout), "1 / " + std::to_string(on.layout.at("lesson_steps").get<int>())));
        // The type is larger than the teacher's.
        CHECK(on.layout.at("ui_scale").get<double>() > before.layout.at("ui_scale").get<double>());
        // F11 again, or Esc: the panels and the scale come back.
        for (const char* leave : {"6:f11", "6:escape"}) {
          const WindowRun off = run_window(std::string("presentation_off_") + size + language + leave,
                                           args + " --frames 10 --keys 3:f11," + leave);
          CHECK(off.layout.at("slots").contains("lessons"));
          CHECK(off.layout.at("ui_scale") == before.layout.at("ui_scale"));
        }
      }
  }

  TEST_CASE("presentation: PageDown, →, Space, PageUp, ←, Backspace, Home and End move through the lesson's steps") {
    const std::string args = "--size 1280x720 --lesson 5";  // 4 steps
    auto step_after = [&](const std::string& name, const std::string& keys, int frames) {
      const WindowRun r = run_window("presentation_keys_" + name, args + " --frames " + std::to_string(frames) + " --keys 2:f11," + keys);
      return r.layout.at("lesson_step").get<int>();
    };
    CHECK(step_after("pagedown", "4:pagedown", 8) == 2);
    CHECK(step_after("right", "4:right", 8) == 2);
    CHECK(step_after("space", "4:space", 8) == 2);
    CHECK(step_after("twice", "4:pagedown,6:pagedown", 10) == 3);
    CHECK(step_after("back", "4:pagedown,6:pagedown,8:pageup", 12) == 2);
    CHECK(step_after("left", "4:pagedown,6:left", 10) == 1);
    CHECK(step_after("backspace", "4:pagedown,6:backspace", 10) == 1);
    CHECK(step_after("end", "4:end", 8) == 4);
    CHECK(step_after("home", "4:end,6:home", 10) == 1);
    CHECK(step_after("past_end", "4:end,6:pagedown", 10) == 4);  // the last step stays
    // The counter follows.
    const WindowRun r = run_window("presentation_keys_counter", args + " --frames 10 --keys 2:f11,4:pagedown,6:pagedown");
    CHECK(shown(all_texts(r.layout), "3 / 4"));
  }

  TEST_CASE("presentation: the step keys also work with the Lessons panel open, and Display → Presentation enters the mode") {
    const WindowRun r = run_window("presentation_panel_keys", "--size 1280x720 --lesson 3 --frames 8 --keys 4:pagedown");
    CHECK(r.layout.at("lesson_step") == 2);
    CHECK(r.layout.at("slots").contains("lessons"));
    // Without a lesson, the arrows do nothing to the scene and nothing breaks.
    const WindowRun none = run_window("presentation_no_lesson", "--size 1280x720 --frames 8 --keys 4:pagedown,5:right");
    CHECK(none.layout.at("lesson") == 0);
    // The menu: Display, then Presentation.
    const WindowRun start = run_window("presentation_menu_start", "--size 1280x720");
    const json& display = start.layout.at("widgets").at("menu.display");
    const std::string at_display = std::to_string(int(display.at("x").get<double>() + 10)) + "," + std::to_string(int(display.at("y").get<double>() + 8));
    const WindowRun menu = run_window("presentation_menu_open", "--size 1280x720 --frames 6 --clicks 3 --pointer " + at_display);
    REQUIRE(menu.layout.at("widgets").contains("menu.display.presentation"));
    const json& item = menu.layout.at("widgets").at("menu.display.presentation");
    const std::string at_item = std::to_string(int(item.at("x").get<double>() + item.at("w").get<double>() / 2)) + "," +
                                std::to_string(int(item.at("y").get<double>() + item.at("h").get<double>() / 2));
    const WindowRun on = run_window("presentation_menu_on", "--size 1280x720 --frames 10 --clicks 3,6 --pointer '" + at_display + ";" + at_item + "'");
    CHECK(!on.layout.at("slots").contains("input"));
    CHECK(on.layout.at("slots").at("view").at("w") == 1280);
  }
}
