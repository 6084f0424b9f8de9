// Attention without a softmax in the window, reached as a user reaches it: real clicks (xdotool, through the
// X server) on the Model window's "without a softmax…" combo and each kind in it draws that kind's signed
// matrices on the diverging colormap, its colour bar naming the weight and the values button calling
// them matrices; the Model window states the state's fixed size against MHA's cache; the Shapes view
// traces the state; in English and Chinese, at 1280×720 and 1920×1080, with every text inside the window.
#include <doctest/doctest.h>

#include <string>

#include "gui_run.h"

namespace attnscope::test {
namespace {

struct Kind {
  const char* id;    // the scene's name, in the control's id "model.kind.<id>"
  const char* word;  // the colour bar's title
};
constexpr Kind kinds[] = {{"linear", "linear attention weight"},
                          {"retention", "retention weight"},
                          {"mamba2", "Mamba-2 weight"},
                          {"deltanet", "DeltaNet weight"},
                          {"gated-deltanet", "Gated DeltaNet weight"}};

}  // namespace

TEST_SUITE("gui_linear") {
  TEST_CASE("model window through the X server: a real click on each kind without a softmax draws its signed matrices") {
    // A scene flag: a returning user's start (a first start opens lesson 1 in place of the Model window).
    const std::string base = "--size 1280x720 --kind mha";
    const WindowRun first = run_window("linear_first", base);
    CHECK(first.layout.at("colormap") == "viridis");
    REQUIRE(first.layout.at("widgets").contains("model.kind.without_softmax"));
    const auto& combo = first.layout["widgets"]["model.kind.without_softmax"];
    REQUIRE(combo["y"].get<double>() + combo["h"].get<double>() / 2 < first.layout.at("height").get<double>());
    // Where the open combo lists the kinds: a scripted click on it, as the real one below.
    const WindowRun open = run_window("linear_open", base + " --pointer " + centre_of(combo) + " --clicks 4 --frames 10");
    for (const Kind& k : kinds) {
      const std::string kind = k.id;
      CAPTURE(kind);
      const std::string id = "model.kind." + kind;
      REQUIRE(open.layout.at("widgets").contains(id));
      const auto dir = test_tmp() / ("linear_click_" + kind);
      std::filesystem::create_directories(dir);
      // Each click waits for the live record to show what the one before it opened, and aims at the control
      // where the window draws it then (click_on): first the window's first result on screen.
      const nlohmann::json shown =
          drive_window(dir, base + " --layout-live",
                       "await '\"settled\": true'\nclick_on model.kind.without_softmax\nclick_on " + id + "\n"
                       "await '\"colormap\": \"diverging\"'\nawait '\"settled\": true'\n");
      CHECK(shown.at("error") == "");
      CHECK(shown.at("colormap") == "diverging");
      // The heads' colour range is symmetric about 0 (white = 0).
      REQUIRE_FALSE(shown.at("heads").empty());
      for (const auto& h : shown.at("heads")) CHECK(h.at("range")[0].get<double>() == -h.at("range")[1].get<double>());
      bool bar = false, button = false;
      for (const auto& t : shown.at("texts")) {
        bar |= t.at("text") == k.word;
        button |= t.at("text") == "matrix M";
      }
      CHECK(bar);
      CHECK(button);
    }
  }

  TEST_CASE("model and shapes views of each kind: the state against the cache, in both languages and sizes") {
    for (const char* size : {"1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) {
        const bool zh = std::string(language) == "zh";
        for (const Kind& k : kinds) {
          const std::string where = std::string(k.id) + " " + size + " " + language;
          CAPTURE(where);
          const std::string args = std::string("--kind ") + k.id + " --size " + size + " --language " + language;
          const WindowRun heads = run_window(std::string("linear_heads_") + k.id + size + language, args);
          CHECK(heads.layout.at("error") == "");
          const std::vector<std::string> model = texts_of(heads, "###model");
          INFO(joined(model));
          // 8 heads of d = 8: 8·8·8 floats, against MHA's 2·8·8 floats a token.
          CHECK(shows(model, zh ? "每层状态 2048 B，与长度无关（MHA 的 KV 缓存：512 B/词元）"
                                : "State 2048 B per layer at any length (MHA's KV cache: 512 B/token)"));
          const WindowRun shapes = run_window(std::string("linear_shapes_") + k.id + size + language, args + " --view shapes");
          const std::vector<std::string> steps = texts_of(shapes, "###shapes");
          INFO(joined(steps));
          CHECK(shows(steps, zh ? "状态（固定大小）" : "state (fixed size)"));
          CHECK(shows(steps, zh ? "矩阵 M（有正有负）" : "matrix M (signed)"));
          // The state instead of the KV cache: 8·8·8 numbers per layer, against MHA's 512 B a token.
          CHECK(shows(steps, zh ? "每层状态（固定大小）" : "State per layer (fixed size)"));
          CHECK(shows(steps, zh ? "H·d_k·d_v = 8·8·8 = 512 个数，与长度无关" : "H·d_k·d_v = 8·8·8 = 512 numbers, whatever the length"));
          CHECK_FALSE(shows(steps, zh ? "每个词元、每层的 KV 缓存" : "KV cache per token, per layer"));
          // Every text of both views lies inside the window.
          for (const auto& [w, title] : {std::pair{&heads, "###heads"}, std::pair{&shapes, "###shapes"}}) {
            const double width = w->layout.at("width"), height = w->layout.at("height");
            for (const auto& t : w->layout.at("texts")) {
              if (t.at("window").get<std::string>().find(title) == std::string::npos) continue;
              CHECK(t["x"].get<double>() >= -0.5);
              CHECK(t["x"].get<double>() + t["w"].get<double>() <= width + 0.5);
              CHECK(t["y"].get<double>() + t["h"].get<double>() <= height + 0.5);
            }
          }
        }
      }
  }

  TEST_CASE("retention's decay slider and linear attention's normaliser are drawn with their kinds only") {
    const WindowRun retention = run_window("linear_retention", "--kind retention --size 1280x720");
    CHECK(retention.layout.at("widgets").contains("model.decay"));
    CHECK_FALSE(retention.layout.at("widgets").contains("model.linear_normalize"));
    const WindowRun linear = run_window("linear_linear", "--kind linear --size 1280x720");
    CHECK(linear.layout.at("widgets").contains("model.linear_normalize"));
    CHECK_FALSE(linear.layout.at("widgets").contains("model.decay"));
    const WindowRun mha = run_window("linear_mha", "--size 1280x720");
    CHECK_FALSE(mha.layout.at("widgets").contains("model.decay"));
  }
}

}  // namespace attnscope::test
