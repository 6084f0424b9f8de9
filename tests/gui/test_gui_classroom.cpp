// The classroom windows: every lesson opens at every step in English and Chinese and shows
// its step's scene; the head analysis draws the engine's JS matrix; the KV-cache calculator draws its
// three bars; the language switch changes the menu labels; Save/Open scene round-trip through the
// window's own code.
#include <cmath>
#include <filesystem>
#include <fstream>

#include "attnscope/analysis/analysis.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/attention/weights.h"
#include "gui_run.h"
#include "analysis_helpers.h"

namespace attnscope::test {
namespace {

const nlohmann::json& widget(const WindowRun& w, const std::string& name) {
  INFO("widget " << name);
  REQUIRE(w.layout["widgets"].contains(name));
  return w.layout["widgets"][name];
}

// Pixels of the rectangle unlike the top-left pixel (the background) by more than 60, as a bitmap.
std::vector<bool> ink(const Png& png, const nlohmann::json& r) {
  const int x0 = int(r["x"].get<double>()), y0 = int(r["y"].get<double>());
  const int w = int(r["w"].get<double>()), h = int(r["h"].get<double>());
  const Rgba bg = png.at(x0, y0);
  std::vector<bool> out;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) out.push_back(channel_distance(png.at(x0 + x, y0 + y), bg) > 60);
  return out;
}
int count(const std::vector<bool>& v) { return int(std::count(v.begin(), v.end(), true)); }

}  // namespace

TEST_SUITE("gui_classroom") {
  // issue 40: the lesson chooser listed 8 of the 9 lessons (ImGui's combo shows 8 rows unless told).
  TEST_CASE("lessons: the chooser lists every lesson whole, none cut or behind a scrollbar, at 1280x720") {
    const size_t lessons = load_lessons().size();
    REQUIRE(lessons > 8);
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const std::string args = std::string("--size 1280x720 --lesson 1 --language ") + language;
      const WindowRun first = run_window(std::string("lessons_chooser_closed_") + language, args);
      REQUIRE(first.layout.at("widgets").contains("lesson.chooser"));
      const nlohmann::json& chooser = first.layout["widgets"]["lesson.chooser"];
      const std::string at = std::to_string(int(chooser["x"].get<double>() + chooser["w"].get<double>() / 2)) + "," +
                             std::to_string(int(chooser["y"].get<double>() + chooser["h"].get<double>() / 2));
      const WindowRun open = run_window(std::string("lessons_chooser_open_") + language,
                                        args + " --pointer " + at + " --clicks 4 --frames 10");
      size_t whole = 0;
      for (const auto& t : open.layout.at("texts")) {
        if (t.at("window").get<std::string>().rfind("##Combo", 0) != 0) continue;
        const auto& clip = t.at("clip");
        const double x = t.at("x"), y = t.at("y"), w = t.at("w"), h = t.at("h");
        CAPTURE(t.at("text").get<std::string>());
        CHECK(y >= clip.at("y").get<double>() - 1);
        CHECK(y + h <= clip.at("y").get<double>() + clip.at("h").get<double>() + 1);
        CHECK(x + w <= clip.at("x").get<double>() + clip.at("w").get<double>() + 1);
        ++whole;
      }
      CHECK(whole == lessons);
      for (const auto& c : open.layout.at("controls"))
        if (c.at("window").get<std::string>().rfind("##Combo", 0) == 0) CHECK_FALSE(c.at("scroll_y").get<bool>());
    }
  }

  TEST_CASE("lessons panel: every step of every lesson opens in both languages and shows its scene") {
    const std::vector<Lesson> lessons = load_lessons();
    REQUIRE(lessons.size() >= 5);
    for (const Lesson& lesson : lessons)
      for (int step = 1; step <= int(lesson.steps.size()); ++step) {
        const Scene& scene = lesson.steps[size_t(step - 1)].scene;
        std::vector<bool> caption_en;
        for (const std::string language : {"en", "zh"}) {
          CAPTURE(lesson.number);
          CAPTURE(step);
          CAPTURE(language);
          const WindowRun w = run_window("lesson", "--lesson " + std::to_string(lesson.number) + " --step " +
                                                       std::to_string(step) + " --language " + language);
          CHECK(w.layout["error"] == "");
          CHECK(w.layout["lesson"] == lesson.number);
          CHECK(w.layout["lesson_step"] == step);
          CHECK(w.layout["language"] == language);
          // A step that opens the Training window shows it in the view's place (the view is not drawn).
          // A checkpoint step's view (the Model view of a step that switches heads off, the Logit lens, the
          // Rollout: lesson 11) shows there too.
          const bool training = lesson.steps[size_t(step - 1)].training.has_value();
          const bool model_view = step_view(lesson.steps[size_t(step - 1)]).has_value();
          CHECK(w.layout["view"] == (training || model_view ? std::string() : std::string(to_string(scene.view.view))));
          // The heads shown are the step's: H heads, each framed in its kv group (lesson 6's steps that
          // open the shipped checkpoint show its heads instead: test_gui_lesson_model.cpp).
          const auto& checkpoint = lesson.steps[size_t(step - 1)].checkpoint;
          if (scene.view.view == View::heads && !(checkpoint && checkpoint->open) && !training) {
            const int heads = effective_heads(scene.model), groups = effective_groups(scene.model);
            REQUIRE(int(w.layout["heads"].size()) == heads);
            for (const auto& h : w.layout["heads"])
              CHECK(h["kv_group"] == kv_group_of_head(h["head"].get<int>(), heads, groups));
          }
          // The caption is drawn, and differently in the two languages.
          const std::vector<bool> caption = ink(w.png, widget(w, "lesson.caption"));
          CHECK(count(caption) > 100);
          if (language == std::string("en")) caption_en = caption;
          else CHECK(caption != caption_en);
          // Lesson 4 shows the KV-cache bars.
          CHECK(w.layout["widgets"].contains("kv.mha") == lesson.kv_cache.has_value());
        }
      }
  }

  TEST_CASE("lessons panel: a lesson or step that does not exist is named in the window") {
    const int past = int(load_lessons().size()) + 1;
    const WindowRun w = run_window("no_lesson", "--lesson " + std::to_string(past));
    CHECK(w.layout["status"].get<std::string>().find("no lesson " + std::to_string(past)) != std::string::npos);
    const WindowRun s = run_window("no_step", "--lesson 1 --step 99");
    CHECK(s.layout["status"].get<std::string>().find("not 99") != std::string::npos);
  }

  TEST_CASE("head analysis: the similarity map shows the engine's JS divergence of every head pair") {
    const Lesson lesson = load_lessons()[3];  // lesson 4: designed heads pooled from MHA to 2 groups
    const Scene& scene = lesson.steps[1].scene;
    const Analysis analysis = analyse(scene);
    const MatD& js = stats_of(analysis).js_divergence;
    REQUIRE(!stats_of(analysis).drift_from_mha.empty());
    const WindowRun w = run_window("analysis", "--lesson 4 --step 2 --show-analysis");
    const auto& r = widget(w, "analysis.similarity");
    const int heads = int(js.rows());
    const double cell = r["w"].get<double>() / heads;
    REQUIRE(cell >= 4);
    for (int a = 0; a < heads; ++a)
      for (int b = 0; b < heads; ++b) {
        CAPTURE(a);
        CAPTURE(b);
        // A corner of the cell: the number is written in its middle.
        const int x = int(r["x"].get<double>() + (b + 0.15) * cell), y = int(r["y"].get<double>() + (a + 0.15) * cell);
        const Rgba want = value_to_color(float(js(a, b)), ValueRange{0.0f, float(std::log(2.0))}, Colormap::viridis);
        CHECK(channel_distance(w.png.at(x, y), want) <= 3);
      }
  }

  TEST_CASE("kv-cache calculator: the window draws MHA, GQA and MQA in both languages") {
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window("kv_cache", "--show-kv-cache --language " + language);
      for (const char* name : {"kv.mha", "kv.gqa", "kv.mqa", "kv.seq"}) CHECK(count(ink(w.png, widget(w, name))) > 50);
    }
  }

  TEST_CASE("language switch: the menu bar's labels change to Chinese glyphs") {
    const WindowRun en = run_window("menu_en", "--language en");
    const WindowRun zh = run_window("menu_zh", "--language zh");
    REQUIRE(zh.layout["font_notice"] == "");
    for (const char* name : {"menu.file", "menu.windows", "menu.classroom"}) {
      CAPTURE(name);
      const std::vector<bool> a = ink(en.png, widget(en, name)), b = ink(zh.png, widget(zh, name));
      CHECK(count(b) > 30);
      CHECK(a != b);
    }
    // "文件" is two ideographs: a square, denser label than "File".
    CHECK(widget(zh, "menu.file")["w"] != widget(en, "menu.file")["w"]);
  }

  TEST_CASE("language switch: the choice is remembered between interactive runs") {
    const auto config = attnscope::test::test_tmp() / "language_config";
    std::filesystem::remove_all(config);
    const std::string env = "XDG_CONFIG_HOME=" + shell_quote(config.string());
    const CliRun first = run_app(env, "--language zh --frames 3");
    REQUIRE(first.exit_code == 0);
    const auto saved = read_json(config / "attnscope" / "window.json");
    CHECK(saved["language"] == "zh");
  }

  TEST_CASE("scene files: Save scene and Open scene round-trip through the window") {
    const auto dir = attnscope::test::test_tmp() / "scene_files";
    std::filesystem::create_directories(dir);
    const auto a = dir / "a.json", b = dir / "b.json";
    std::filesystem::remove(a);
    std::filesystem::remove(b);
    const Scene want = load_lessons()[3].steps[2].scene;
    run_window("save_scene", "--lesson 4 --step 3 --save-scene " + shell_quote(a.string()));
    REQUIRE(std::filesystem::exists(a));
    CHECK(scene_to_json(load_scene(a)) == scene_to_json(want));
    const WindowRun opened = run_window("open_scene", "--open-scene " + shell_quote(a.string()) + " --save-scene " +
                                                          shell_quote(b.string()));
    CHECK(opened.layout["status"].get<std::string>().find("scene saved to") != std::string::npos);
    CHECK(scene_to_json(load_scene(b)) == scene_to_json(want));
    // The heads on screen are the opened scene's (MQA: every head in kv group 0).
    for (const auto& h : opened.layout["heads"]) CHECK(h["kv_group"] == 0);

    const WindowRun missing = run_window("open_missing", "--open-scene " + shell_quote((dir / "missing.json").string()));
    CHECK(missing.layout["status"].get<std::string>().find("could not open the scene") != std::string::npos);
    CHECK(missing.run.err.find("could not open the scene") != std::string::npos);
  }
}

}  // namespace attnscope::test
