// The layout record's controls (app/gui/layout_record.h), which the monkey test (tests/gui/monkey/) aims
// at: every button, slider, field, menu and checkbox shown is listed with its rectangle, inside its
// window; --layout-live keeps the record of an interactive run current, with the frame number.
#include <doctest/doctest.h>

#include <string>

#include "gui_run.h"

namespace attnscope::test {
namespace {

using nlohmann::json;

double right(const json& r) { return r.at("x").get<double>() + r.at("w").get<double>(); }
double bottom(const json& r) { return r.at("y").get<double>() + r.at("h").get<double>(); }

TEST_SUITE("gui_layout") {
  TEST_CASE("layout record: every control shown is listed inside its window, the widgets tests click among them") {
    const WindowRun w = run_window("controls_training", "--show-training --size 1280x720");
    const json& controls = w.layout.at("controls");
    REQUIRE(controls.size() > 20);
    int menu_bar = 0, typed_in_training = 0;
    for (const json& c : controls) {
      INFO(c.dump());
      CHECK(c.at("id").get<unsigned>() != 0);
      CHECK(c.at("w").get<double>() > 0);
      CHECK(c.at("h").get<double>() > 0);
      const std::string window = c.at("window");
      if (window == "##MainMenuBar") {
        ++menu_bar;
        CHECK(bottom(c) <= bottom(w.layout.at("menu_bar")) + 0.5);
        continue;
      }
      for (const json& win : w.layout.at("windows")) {
        if (win.at("title") != window) continue;
        CHECK(c.at("x").get<double>() >= win.at("x").get<double>() - 0.5);
        CHECK(c.at("y").get<double>() >= win.at("y").get<double>() - 0.5);
        CHECK(right(c) <= right(win) + 0.5);
        CHECK(bottom(c) <= bottom(win) + 0.5);
      }
      if (window.ends_with("###training") && c.at("typed").get<bool>()) ++typed_in_training;
    }
    CHECK(menu_bar >= 6 + 5);  // File … Help and the five views
    CHECK(typed_in_training >= 5);  // the settings' sliders
    // The Training window's Start button, which tests click (RecordLastItem), is one of the controls.
    const json& start = w.layout.at("widgets").at("training.start");
    bool found = false;
    for (const json& c : controls)
      found = found || (std::abs(c.at("x").get<double>() - start.at("x").get<double>()) < 1 &&
                        std::abs(c.at("y").get<double>() - start.at("y").get<double>()) < 1 &&
                        std::abs(right(c) - right(start)) < 1 && !c.at("typed").get<bool>());
    CHECK_MESSAGE(found, "training.start " << start.dump() << " is not among the controls");
  }

  // issue 40: "(MLA: G = H)" was drawn over the groups slider's grab (at the slider's right end, as G = H
  // is the last choice). A slider of ours records its grab: no text drawn in it may cover the grab.
  TEST_CASE("slider notes: the value and its note stay off the slider's grab (MLA, MHA, MQA; both languages)") {
    for (const char* kind : {"mla", "mha", "mqa"})
      for (const char* language : {"en", "zh"}) {
        CAPTURE(kind);
        CAPTURE(language);
        const WindowRun w = run_window(std::string("controls_grab_") + kind + "_" + language,
                                       std::string("--size 1280x720 --kind ") + kind + " --language " + language);
        int sliders = 0, texts_in = 0;
        bool note = false;
        for (const json& c : w.layout.at("controls")) {
          if (!c.contains("grab")) continue;
          ++sliders;
          const json& grab = c.at("grab");
          for (const json& t : w.layout.at("texts")) {
            if (t.at("window") != c.at("window")) continue;
            const double cx = t.at("x").get<double>() + t.at("w").get<double>() / 2;
            const double cy = t.at("y").get<double>() + t.at("h").get<double>() / 2;
            if (cx < c.at("x").get<double>() || cx > right(c) || cy < c.at("y").get<double>() || cy > bottom(c)) continue;
            ++texts_in;
            const std::string text = t.at("text");
            note = note || text.find("G = ") != std::string::npos;
            CAPTURE(text);
            CAPTURE(grab.dump());
            CHECK_FALSE((t.at("x").get<double>() < right(grab) - 0.5 && right(t) > grab.at("x").get<double>() + 0.5 &&
                         t.at("y").get<double>() < bottom(grab) - 0.5 && bottom(t) > grab.at("y").get<double>() + 0.5));
          }
        }
        CHECK(sliders >= 1);   // groups G at least
        CHECK(texts_in >= 1);  // its value
        CHECK(note);           // "(MLA: G = H)": the note still shows, beside the grab
      }
  }

  TEST_CASE("--layout-live: an interactive run's layout record carries its frame number and its controls") {
    const auto dir = fresh_dir("controls_live");
    const auto out = dir / "layout.json";
    const CliRun run = run_app("XDG_CONFIG_HOME=" + shell_quote((dir / "config").string()),
                               "--frames 12 --size 1280x720 --layout-live --layout-json " + shell_quote(out.string()));
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    const json layout = read_json(out);
    CHECK(layout.at("frame").get<int>() >= 12);
    CHECK(layout.at("controls").size() > 10);
  }

  TEST_CASE("--layout-live without --layout-json is a usage error") {
    const CliRun run = run_app("", "--layout-live --frames 3");
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("--layout-live needs --layout-json") != std::string::npos);
  }
}

}  // namespace
}  // namespace attnscope::test
