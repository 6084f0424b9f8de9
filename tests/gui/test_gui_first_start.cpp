// A first start, as a newcomer types `attnscope` with nothing saved: it opens on lesson 1's first step
// (the Lessons panel in the left column) with Help → Getting started over it, which says where the
// lessons are (Classroom → Lessons), how to present them (F11, PageDown / PageUp) and how to open a real
// model, in English and Chinese, nothing cut. The next start (its state saved) and scripted runs open as
// before. Help → Getting started is in the menu, clicked as a user does, and its button opens lesson 1.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gui_run.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

double right(const json& r) { return r.at("x").get<double>() + r.at("w").get<double>(); }
double bottom(const json& r) { return r.at("y").get<double>() + r.at("h").get<double>(); }

std::string centre(const json& r) {
  return std::to_string(int(r.at("x").get<double>() + r.at("w").get<double>() / 2)) + "," +
         std::to_string(int(r.at("y").get<double>() + r.at("h").get<double>() / 2));
}

bool has_window(const json& layout, const std::string& id) {
  for (const json& w : layout.at("windows"))
    if (w.at("title").get<std::string>().find("###" + id) != std::string::npos) return true;
  return false;
}

// An interactive start in `config` that closes itself after a few frames; its layout record.
json start(const fs::path& config, const std::string& args) {
  const fs::path out = config.parent_path() / (config.filename().string() + ".json");
  fs::remove(out);
  const CliRun run = run_app("XDG_CONFIG_HOME=" + shell_quote(config.string()),
                             args + " --frames 4 --layout-json " + shell_quote(out.string()));
  INFO("attnscope " << args << "\nstderr: " << run.err);
  REQUIRE(run.exit_code == 0);
  return read_json(out);
}

fs::path fresh(const std::string& name) {
  const fs::path dir = test_tmp() / "gui" / "first_start" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

TEST_SUITE("gui_first_start") {
  TEST_CASE("first start: lesson 1, step 1 in the Lessons panel, and Getting started saying where the lessons are") {
    for (const char* language : {"en", "zh"})
      for (const char* size : {"1280x720", "1920x1080"}) {
        const std::string name = std::string(language) + "_" + size;
        CAPTURE(name);
        const fs::path config = fresh(name);
        const json first = start(config, std::string("--size ") + size + " --language " + language);
        CHECK(first.at("error") == "");
        CHECK(first.at("lesson") == 1);
        CHECK(first.at("lesson_step") == 1);
        CHECK(first.at("lesson_shown") == true);
        CHECK(first.at("slots").contains("lessons"));
        CHECK_FALSE(first.at("slots").contains("input"));
        REQUIRE(has_window(first, "getting_started"));
        std::vector<std::string> texts;
        for (const json& t : first.at("texts"))
          if (t.at("window").get<std::string>().find("###getting_started") != std::string::npos)
            texts.push_back(t.at("text").get<std::string>());
        INFO(joined(texts));
        const bool zh = std::string(language) == "zh";
        CHECK(shows(texts, zh ? "课堂 → 课程" : "Classroom → Lessons"));
        CHECK(shows(texts, "F11"));
        CHECK(shows(texts, "PageDown"));
        CHECK(shows(texts, zh ? "窗口 → 检查点" : "Windows → Checkpoint"));
        CHECK(first.at("widgets").contains("getting_started.lesson1"));
        CHECK(first.at("translation_problem") == "");
        CHECK_MESSAGE(first.at("untranslated").empty(), first.at("untranslated").dump());
        // Nothing of it cut: every text inside what its window shows.
        for (const json& t : first.at("texts")) {
          if (t.at("window").get<std::string>().find("###getting_started") == std::string::npos) continue;
          const json& clip = t.at("clip");
          CHECK_MESSAGE(right(t) <= right(clip) + 1, t.at("text"));
          CHECK_MESSAGE(bottom(t) <= bottom(clip) + 1, t.at("text"));
        }
        // The next start has a saved state: no welcome, the teacher's own panels.
        const json second = start(config, std::string("--size ") + size + " --language " + language);
        CHECK_FALSE(has_window(second, "getting_started"));
        CHECK(second.at("lesson") == 0);
        CHECK(second.at("slots").contains("input"));
      }
  }

  TEST_CASE("first start: a start that names what to show, and a scripted run, open on that instead") {
    const json lesson = start(fresh("lesson") / "config", "--size 1280x720 --lesson 3");
    CHECK(lesson.at("lesson") == 3);
    CHECK_FALSE(has_window(lesson, "getting_started"));
    const json scene = start(fresh("scene") / "config", "--size 1280x720 --heads 2");
    CHECK(scene.at("lesson") == 0);
    CHECK(scene.at("heads").size() == 2);
    CHECK_FALSE(has_window(scene, "getting_started"));
    const WindowRun scripted = run_window("first_start_scripted", "--size 1280x720");
    CHECK(scripted.layout.at("lesson") == 0);
    CHECK_FALSE(has_window(scripted.layout, "getting_started"));
  }

  TEST_CASE("help: Getting started is in the Help menu (clicked), and its button opens lesson 1") {
    const std::string args = "--size 1280x720";
    const WindowRun plain = run_window("getting_started_start", args);
    CHECK_FALSE(has_window(plain.layout, "getting_started"));
    const std::string help = centre(plain.layout.at("widgets").at("menu.help"));
    const WindowRun menu = run_window("getting_started_menu", args + " --frames 6 --clicks 3 --pointer " + help);
    REQUIRE_MESSAGE(menu.layout.at("widgets").contains("menu.help.getting_started"), "Help has no Getting started item");
    const std::string item = centre(menu.layout.at("widgets").at("menu.help.getting_started"));
    const WindowRun open = run_window("getting_started_open", args + " --frames 10 --clicks 3,6 --pointer \"" + help + ";" + item + "\"");
    REQUIRE(has_window(open.layout, "getting_started"));
    CHECK(open.layout.at("lesson") == 0);
    const std::string button = centre(open.layout.at("widgets").at("getting_started.lesson1"));
    const WindowRun lesson =
        run_window("getting_started_lesson1", args + " --frames 14 --clicks 3,6,10 --pointer \"" + help + ";" + item + ";" + button + "\"");
    CHECK_FALSE(has_window(lesson.layout, "getting_started"));
    CHECK(lesson.layout.at("lesson") == 1);
    CHECK(lesson.layout.at("lesson_step") == 1);
    CHECK(lesson.layout.at("slots").contains("lessons"));
  }
}

}  // namespace attnscope::test
