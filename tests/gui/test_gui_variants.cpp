// The variants after GQA in the window, reached as a user reaches them: a real click on the Model window's
// MLA kind draws the latent strips above the heads and counts r_kv + d_rope in the KV line; a click on
// learned sink logits draws the sink strip; the Positions view's own RoPE and ALiBi buttons draw their curves beside the heads, in English and Chinese,
// at 1280×720 and 1920×1080, with every text inside the window.
#include <doctest/doctest.h>

#include <string>

#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

std::string centre(const WindowRun& w, const std::string& widget) {
  const nlohmann::json& r = w.layout.at("widgets").at(widget);
  return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + "," +
         std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
}

// Clicks `widget` of the window `before` shows, on frame 4 of a run with `args`.
WindowRun click(const std::string& name, const std::string& args, const WindowRun& before, const std::string& widget) {
  REQUIRE_MESSAGE(before.layout.at("widgets").contains(widget), widget << " is not on screen");
  // Its middle inside the screen: a control below a panel's fold is recorded where it would be, and a
  // click there would hit nothing (or something else).
  const nlohmann::json& r = before.layout["widgets"][widget];
  REQUIRE_MESSAGE(r["y"].get<double>() + r["h"].get<double>() / 2 < before.layout.at("height").get<double>(),
                  widget << " is below the fold: " << r.dump());
  return run_window(name, args + " --pointer " + centre(before, widget) + " --clicks 4 --frames 10");
}

}  // namespace

TEST_SUITE("gui_variants") {
  TEST_CASE("model window: a click on MLA draws the latent and the rotary key above the heads and counts their bytes") {
    const std::string args = "--size 1280x720 --causal";
    const WindowRun before = run_window("variants_mla_before", args);
    CHECK_FALSE(before.layout.at("widgets").contains("heads.shared_latent"));
    const WindowRun mla = click("variants_mla", args, before, "model.kind.mla");
    CHECK(mla.layout.at("error") == "");
    CHECK(mla.layout.at("widgets").contains("heads.shared_latent"));
    CHECK(mla.layout.at("widgets").contains("model.kv_rank"));
    CHECK(mla.layout.at("widgets").contains("model.rope_dim"));
    // Defaults: r_kv 16 + d_rope 8 = 24 floats a token; MHA with 8 heads of d_k 8 caches 2·8·8 floats.
    const std::vector<std::string> model = texts_of(mla, "###model");
    INFO(joined(model));
    CHECK(shows(model, "KV cache 96 B/token (MHA 512 B)"));
    CHECK(mla.layout.at("heads").size() == 8);
  }

  TEST_CASE("model window: a click on learned sink logits draws the sink's share above the heads") {
    const std::string args = "--size 1280x720 --causal";
    const WindowRun before = run_window("variants_sinks_before", args);
    CHECK_FALSE(before.layout.at("widgets").contains("heads.sink_share"));
    const WindowRun sinks = click("variants_sinks", args, before, "model.sink_logits");
    CHECK(sinks.layout.at("error") == "");
    CHECK(sinks.layout.at("widgets").contains("heads.sink_share"));
  }

  TEST_CASE("heads view: a click on differential attention draws the signed maps on the diverging colormap") {
    // 800 px tall: at 720 the checkbox is below the Model panel's fold since the Positions choices come
    // first (issue 40), and is reached by scrolling the panel.
    const std::string args = "--size 1280x800 --causal";
    const WindowRun before = run_window("variants_diff_before", args);
    CHECK(before.layout.at("colormap") == "viridis");
    const WindowRun diff = click("variants_diff", args, before, "model.differential");
    CHECK(diff.layout.at("error") == "");
    CHECK(diff.layout.at("colormap") == "diverging");  // the heads and their colour bar alike
    CHECK(shows(texts_of(diff, "###heads"), "differential weight"));
  }

  TEST_CASE("positions view of a checkpoint: its own layer's scheme, reached by a click on the view's tab") {
    struct Case {
      const char* fixture;
      int layer;
      const char* says;
    };
    const Case cases[] = {
        {"deepseek_v2_mla_moe_bf16", 1, "RoPE, base 10000, over 8 dimensions, interleaved pairs"},  // its YaRN: gui_rope_scaling
        {"smollm3_nope_bf16", 3, "a NoPE layer"},
        {"gpt2_prefix_f32", 0, "learns one position vector per position"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.fixture);
      const std::string dir = std::string(ATTNSCOPE_SOURCE_DIR) + "/tests/fixtures/models/" + c.fixture;
      const std::string args = "--size 1280x720 --checkpoint " + dir + " --layer " + std::to_string(c.layer);
      const WindowRun heads = run_window(std::string("variants_ckpt_heads_") + c.fixture, args);
      REQUIRE(heads.layout.at("widgets").contains("menu.view.positions"));
      const WindowRun w = run_window(std::string("variants_ckpt_positions_") + c.fixture,
                                     args + " --pointer " + centre(heads, "menu.view.positions") + " --clicks 10 --frames 16");
      CHECK(w.layout.at("view") == "positions");
      const std::vector<std::string> texts = texts_of(w, "###positions");
      INFO(joined(texts));
      CHECK(shows(texts, c.says));
      CHECK_FALSE(w.layout.at("widgets").contains("model.positions.rope"));  // a checkpoint's scheme is its config's
      CHECK(w.layout.at("heads").size() > 0);
    }
  }

  // issue 40: the Model panel's Positions controls sat below its fold at 1280×720 (under the mask, sinks,
  // differential attention and window): reachable only by scrolling past everything.
  TEST_CASE("model window: its Positions choices are on screen without scrolling at 1280x720, both languages") {
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window(std::string("variants_positions_fold_") + language,
                                     std::string("--size 1280x720 --language ") + language);
      nlohmann::json model;
      for (const auto& win : w.layout.at("windows"))
        if (win.at("title").get<std::string>().ends_with("###model")) model = win;
      REQUIRE(model.is_object());
      const double bottom = model["y"].get<double>() + model["h"].get<double>();
      for (const char* scheme : {"absolute", "nope", "rope", "alibi", "relpos"}) {
        const std::string name = std::string("model.positions.") + scheme;
        CAPTURE(name);
        REQUIRE(w.layout.at("widgets").contains(name));
        const auto& r = w.layout["widgets"][name];
        CHECK(r["y"].get<double>() >= model["y"].get<double>());
        CHECK(r["y"].get<double>() + r["h"].get<double>() <= bottom);
      }
    }
  }

  TEST_CASE("positions view through the X server: a real click on its tab, then on RoPE, shows RoPE's base slider") {
    const std::string base = "--size 1280x720 --causal";
    const WindowRun first = run_window("variants_xdotool_first", base);
    REQUIRE(first.layout.at("widgets").contains("menu.view.positions"));
    const auto& tab = first.layout["widgets"]["menu.view.positions"];
    auto at = [](const nlohmann::json& r) {
      return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + " " +
             std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
    };
    // The view's own RoPE button, where the scripted run of the same start draws it.
    const WindowRun positions = run_window("variants_xdotool_positions", base + " --view positions");
    REQUIRE(positions.layout.at("widgets").contains("model.positions.rope"));
    const auto& rope = positions.layout["widgets"]["model.positions.rope"];
    const std::string events = "xdotool mousemove --window $wid " + at(tab) + "\nsleep 0.3\nxdotool click 1\nsleep 1.5\n"
                               "xdotool mousemove --window $wid " + at(rope) + "\nsleep 0.3\nxdotool click 1\nsleep 1.5\n";
    const auto dir = test_tmp() / "variants_xdotool";
    std::filesystem::create_directories(dir);
    const nlohmann::json shown = drive_window(dir, base, events);
    CHECK(shown.at("view") == "positions");
    CHECK(shown.at("widgets").contains("model.rope_base"));  // RoPE is on: its base slider is drawn
    CHECK(shown.at("error") == "");
  }

  TEST_CASE("positions view: its RoPE and ALiBi buttons draw their curves beside the heads, in both languages and sizes") {
    for (const char* size : {"1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) {
        CAPTURE(size);
        CAPTURE(language);
        const bool zh = std::string(language) == "zh";
        const std::string args = std::string("--view positions --causal --size ") + size + " --language " + language;
        const WindowRun before = run_window(std::string("variants_positions_") + size + language, args);
        CHECK(before.layout.at("view") == "positions");
        CHECK(before.layout.at("heads").size() == 8);  // the heads beside the curves
        const WindowRun rope = click(std::string("variants_rope_") + size + language, args, before, "model.positions.rope");
        const std::vector<std::string> texts = texts_of(rope, "###positions");
        INFO(joined(texts));
        CHECK(rope.layout.at("error") == "");
        CHECK(shows(texts, zh ? "每一对维度的波长" : "Wavelength of each dimension pair"));
        CHECK(shows(texts, zh ? "固定查询和键的分数" : "Score of a fixed query and key"));
        CHECK(rope.layout.at("widgets").contains("model.rope_base"));
        const WindowRun alibi = click(std::string("variants_alibi_") + size + language, args, before, "model.positions.alibi");
        const std::vector<std::string> alibi_texts = texts_of(alibi, "###positions");
        INFO(joined(alibi_texts));
        CHECK(shows(alibi_texts, zh ? "加到每个分数上的偏置" : "Bias added to every score"));
        CHECK(shows(alibi_texts, zh ? "头 0：m = 0.5" : "head 0: m = 0.5"));  // 2^(−8·1/8) for the 8 heads
        // Every text of the view lies inside the window.
        const double width = alibi.layout.at("width"), height = alibi.layout.at("height");
        for (const auto& t : alibi.layout.at("texts")) {
          if (t.at("window").get<std::string>().find("###positions") == std::string::npos) continue;
          CHECK(t["x"].get<double>() >= 0);
          CHECK(t["x"].get<double>() + t["w"].get<double>() <= width + 0.5);
          CHECK(t["y"].get<double>() + t["h"].get<double>() <= height + 0.5);
        }
      }
  }
}

}  // namespace attnscope::test
