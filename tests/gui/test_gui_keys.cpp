// Help → Keys, opened as a user does (a click on Help, a click on Keys): it lists the window's
// shortcuts in the interface's language, whole, and the menus name the same keys.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gui/gui_run.h"

using namespace attnscope::test;
using json = nlohmann::json;

namespace {

std::string centre(const json& r) {
  return std::to_string(int(r.at("x").get<double>() + r.at("w").get<double>() / 2)) + "," +
         std::to_string(int(r.at("y").get<double>() + r.at("h").get<double>() / 2));
}

bool shown(const std::vector<std::string>& texts, const std::string& t) {
  for (const std::string& s : texts)
    if (s == t) return true;
  return false;
}

// The Keys window's texts after clicking Help, then Keys.
WindowRun open_keys(const std::string& name, const std::string& args) {
  const WindowRun start = run_window(name + "_start", args);
  const std::string help = centre(start.layout.at("widgets").at("menu.help"));
  const WindowRun menu = run_window(name + "_menu", args + " --frames 6 --clicks 3 --pointer " + help);
  REQUIRE_MESSAGE(menu.layout.at("widgets").contains("menu.help.keys"), "Help has no Keys item");
  const std::string keys = centre(menu.layout.at("widgets").at("menu.help.keys"));
  return run_window(name, args + " --frames 12 --clicks 3,6 --pointer \"" + help + ";" + keys + "\"");
}

}  // namespace

TEST_SUITE("gui_keys") {
  TEST_CASE("help keys: Help → Keys lists the shortcuts in English, each row whole inside the window") {
    const WindowRun w = open_keys("keys_en", "--size 1280x720");
    const std::vector<std::string> texts = texts_of(w, "###keys");
    INFO(joined(texts));
    REQUIRE(!texts.empty());
    for (const char* t : {"Ctrl + · Ctrl − · Ctrl 0", "Ctrl+Z", "Ctrl+Shift+Z · Ctrl+Y", "F11", "PageDown · → · Space",
                          "Ctrl+E", "Ctrl+S", "Ctrl+C", "Ctrl+click", "double-click",
                          "Show or hide the Export panel", "Copy the current view's figure as a PNG image, for slides",
                          "Open the head large in the view's place"})
      CHECK_MESSAGE(shown(texts, t), "not listed: " << t);
    // Every row's key cell lies inside the window (none cut off at its bottom).
    json window;
    for (const json& win : w.layout.at("windows"))
      if (win.at("title").get<std::string>().find("###keys") != std::string::npos) window = win;
    REQUIRE(!window.is_null());
    int rows = 0;
    for (const auto& [name, r] : w.layout.at("widgets").items()) {
      if (name.rfind("keys.", 0) != 0) continue;
      ++rows;
      CHECK_MESSAGE(r.at("y").get<double>() + r.at("h").get<double>() <= window.at("y").get<double>() + window.at("h").get<double>() + 0.5,
                    name << " is below the window's bottom");
    }
    CHECK(rows >= 10);
  }

  TEST_CASE("help keys: in Chinese the pointer actions and what each key does are translated; the menu's shortcuts are the listed ones") {
    const WindowRun w = open_keys("keys_zh", "--size 1920x1080 --language zh");
    const std::vector<std::string> texts = texts_of(w, "###keys");
    INFO(joined(texts));
    for (const char* t : {"快捷键", "Ctrl+E", "显示或隐藏导出面板", "双击", "在视图的位置放大显示这个头", "Ctrl+单击"})
      CHECK_MESSAGE(shown(texts, t), "not listed: " << t);
    CHECK_FALSE(shown(texts, "double-click"));
    // File/Windows menu items show the same keys as the list.
    const WindowRun start = run_window("keys_zh_windows_start", "--size 1920x1080 --language zh");
    const WindowRun menu = run_window("keys_zh_windows", "--size 1920x1080 --language zh --frames 6 --clicks 3 --pointer " +
                                                         centre(start.layout.at("widgets").at("menu.windows")));
    std::vector<std::string> all;
    for (const json& t : menu.layout.at("texts")) all.push_back(t.at("text").get<std::string>());
    INFO(joined(all));
    CHECK(shown(all, "Ctrl+E"));
    CHECK(shown(all, "Ctrl+S"));
  }

  // A key pressed and released between two frames (xdotool's `key` with no delay, a clicker, a remote
  // desktop, a slow frame) is seen once, as a key held for a while is (app/gui/key_queue.h). ImGui 1.86
  // alone reads keys as "down at the start of a frame" and lost these presses.
  TEST_CASE("instant keys: PageDown, PageDown and Ctrl+Z pressed and released within a frame each act once") {
    const auto dir = test_tmp() / "keys_instant";
    std::filesystem::create_directories(dir);
    // The window is stopped while the keys go in, so that each press and its release wait in one batch of
    // events, as they do behind a slow frame.
    auto key = [](const std::string& k) {
      return "kill -STOP $pid\nxdotool key --delay 0 " + k + "\nsleep 0.3\nkill -CONT $pid\nsleep 1\n";
    };
    const json after = drive_window(dir, "--size 1280x720 --lesson 1", key("Next") + key("Next") + key("ctrl+z"));
    CHECK(after.at("lesson") == 1);
    CHECK(after.at("lesson_steps") == 3);
    // Step 1 → 2 → 3, and Ctrl+Z takes the last step back.
    CHECK(after.at("lesson_step") == 2);
    CHECK(after.at("error") == "");
  }
}
