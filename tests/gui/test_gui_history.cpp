// Edit → Undo / Redo, driven as a user does: a typed slider value, a lesson step and leaving a lesson
// are each one step; undo puts back the scene exactly (the saved scene JSON), redo the change again.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/io/file_io.h"
#include "gui/gui_run.h"
#include "run_cli.h"

using namespace attnscope::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string point(double x, double y) { return std::to_string(int(x)) + "," + std::to_string(int(y)); }

// The middle of the first text `text` drawn in a window whose name ends with `window` ("" any).
std::string at_text(const json& layout, const std::string& text, const std::string& window = "", double dx = 0) {
  for (const json& t : layout.at("texts")) {
    const std::string w = t.at("window").get<std::string>();
    if (t.at("text") != text) continue;
    if (!window.empty() && (w.size() < window.size() || w.compare(w.size() - window.size(), window.size(), window) != 0)) continue;
    return point(t.at("x").get<double>() + t.at("w").get<double>() / 2 + dx, t.at("y").get<double>() + t.at("h").get<double>() / 2);
  }
  FAIL("no text '" << text << "' in " << (window.empty() ? "the window" : window));
  return "";
}

std::string at_widget(const json& layout, const std::string& name) {
  REQUIRE_MESSAGE(layout.at("widgets").contains(name), "no widget " << name);
  const json& r = layout.at("widgets").at(name);
  return point(r.at("x").get<double>() + r.at("w").get<double>() / 2, r.at("y").get<double>() + r.at("h").get<double>() / 2);
}

// Runs the window with `args` and returns the scene it saves at the end (the Save scene file's JSON).
struct SceneRun {
  WindowRun window;
  json scene;
};
SceneRun scene_after(const std::string& name, const std::string& args) {
  const fs::path file = fresh_dir("history_" + name) / "scene.json";
  SceneRun r{run_window("history_" + name, args + " --save-scene " + shell_quote(file.string())), {}};
  r.scene = json::parse(attnscope::read_file(file, 1 << 20));
  return r;
}

}  // namespace

TEST_SUITE("gui_history") {
  TEST_CASE("undo: a typed heads value is one step; Ctrl+Z restores the scene exactly, Ctrl+Shift+Z and Ctrl+Y redo it") {
    const std::string base = "--size 1280x720 --text 'The cat sat on the mat.'";
    const SceneRun before = scene_after("slider_before", base);
    // Ctrl+click the heads slider (left of its label), type 4, Enter.
    const std::string heads = at_text(before.window.layout, "heads H", "###model", -60);
    const std::string typed = base + " --pointer " + heads + " --clicks 4 --keys 4:ctrl,6:text=4,7:enter";
    const SceneRun changed = scene_after("slider_changed", typed + " --frames 12");
    REQUIRE(changed.scene != before.scene);
    CHECK(changed.scene.at("model").at("heads") == 4);
    const SceneRun undone = scene_after("slider_undone", typed + ",12:ctrl+z --frames 18");
    CHECK(undone.scene == before.scene);
    const SceneRun redone = scene_after("slider_redone", typed + ",12:ctrl+z,15:ctrl+shift+z --frames 20");
    CHECK(redone.scene == changed.scene);
    const SceneRun redone_y = scene_after("slider_redone_y", typed + ",12:ctrl+z,15:ctrl+y --frames 20");
    CHECK(redone_y.scene == changed.scene);
    // Nothing more to undo: a second Ctrl+Z keeps the first state (the start is not a step).
    const SceneRun twice = scene_after("slider_twice", typed + ",12:ctrl+z,15:ctrl+z --frames 20");
    CHECK(twice.scene == before.scene);
  }

  TEST_CASE("undo: a lesson step is one step, through Edit → Undo in the menu") {
    const SceneRun step1 = scene_after("lesson_step1", "--size 1280x720 --lesson 2");
    const std::string next = at_widget(step1.window.layout, "lesson.next");
    const SceneRun step2 = scene_after("lesson_step2", "--size 1280x720 --lesson 2 --frames 10 --clicks 4 --pointer " + next);
    REQUIRE(step2.window.layout.at("lesson_step") == 2);
    REQUIRE(step2.scene != step1.scene);
    const std::string edit = at_widget(step1.window.layout, "menu.edit");
    const SceneRun menu = scene_after("lesson_menu", "--size 1280x720 --lesson 2 --frames 12 --clicks 4,8 --pointer '" + next + ";" + edit + "'");
    const std::string undo = at_widget(menu.window.layout, "menu.edit.undo");
    const SceneRun undone = scene_after("lesson_undone", "--size 1280x720 --lesson 2 --frames 16 --clicks 4,8,11 --pointer '" +
                                                             next + ";" + edit + ";" + undo + "'");
    CHECK(undone.window.layout.at("lesson_step") == 1);
    CHECK(undone.scene == step1.scene);
  }

  TEST_CASE("undo: leaving a lesson returns the teacher's own scene; Ctrl+Z goes back into the lesson") {
    const std::string base = "--size 1280x720 --text 'My own sentence for the class.' --heads 4 --kind gqa --groups 2";
    const SceneRun teacher = scene_after("leave_teacher", base);
    // Classroom → Lessons, then the lesson chooser, then lesson 3.
    const std::string classroom = at_widget(teacher.window.layout, "menu.classroom");
    const WindowRun m1 = run_window("history_leave_m1", base + " --frames 6 --clicks 3 --pointer " + classroom);
    const std::string lessons = at_widget(m1.layout, "menu.classroom.lessons");
    const std::string p2 = classroom + ";" + lessons;
    const WindowRun m2 = run_window("history_leave_m2", base + " --frames 9 --clicks 3,6 --pointer '" + p2 + "'");
    const std::string chooser = at_text(m2.layout, "Choose a lesson…", "###lessons");
    const std::string p3 = p2 + ";" + chooser;
    const WindowRun m3 = run_window("history_leave_m3", base + " --frames 12 --clicks 3,6,9 --pointer '" + p3 + "'");
    std::string lesson3;
    for (const json& t : m3.layout.at("texts"))
      if (t.at("text").get<std::string>().rfind("3. ", 0) == 0)
        lesson3 = point(t.at("x").get<double>() + 20, t.at("y").get<double>() + t.at("h").get<double>() / 2);
    REQUIRE_MESSAGE(!lesson3.empty(), "lesson 3 is not in the chooser");
    const std::string p4 = p3 + ";" + lesson3;
    const SceneRun in_lesson = scene_after("leave_in", base + " --frames 16 --clicks 3,6,9,12 --pointer '" + p4 + "'");
    REQUIRE(in_lesson.window.layout.at("lesson") == 3);
    REQUIRE(in_lesson.scene != teacher.scene);
    // The Lessons panel's close button (top right of its title bar).
    const json& slot = in_lesson.window.layout.at("slots").at("lessons");
    const std::string close = point(slot.at("x").get<double>() + slot.at("w").get<double>() - 12, slot.at("y").get<double>() + 11);
    const std::string p5 = p4 + ";" + close;
    const SceneRun left = scene_after("leave_left", base + " --frames 22 --clicks 3,6,9,12,16 --pointer '" + p5 + "'");
    CHECK(!left.window.layout.at("slots").contains("lessons"));
    CHECK(left.scene == teacher.scene);
    const SceneRun back = scene_after("leave_back", base + " --frames 26 --clicks 3,6,9,12,16 --keys 20:ctrl+z --pointer '" + p5 + "'");
    CHECK(back.scene == in_lesson.scene);
    CHECK(back.window.layout.at("lesson") == 3);
  }
}
