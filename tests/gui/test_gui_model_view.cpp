// The Model view window (window_model_view.cpp) through scripted runs on the tiny checkpoint fixtures:
// one thumbnail per layer and head in rows of layers and columns of heads, framed in the head's K/V group
// colour, its pixels the engine's model_view_figure colours of the same forward pass (what `export
// --what model` draws); a click landing on that head in the Heads view; without a checkpoint, the offer to
// open the shipped induction model, which a click opens; and the same in Chinese.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/attention/weights.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/figure/export.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/model_input.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& name) { return fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models" / name; }

const std::string ids = "5 17 42 9 33 60 5 17 42";  // within every fixture's vocabulary (64)

bool has_window(const WindowRun& w, const std::string& title) {
  for (const auto& win : w.layout.at("windows"))
    if (win.at("title").get<std::string>() == title) return true;
  return false;
}

// The stack of every layer's attentions the window's worker makes for `ids` (core/model_input.h).
model::AttentionStack stack_of(const std::string& name, const std::string& input) {
  const auto m = model::open(fixture(name));
  const ModelTokens tokens = model_tokens_from_input(m->dir, input);
  return attention_stack(model::forward(*m, tokens.ids), tokens, name, m->config.layer_window);
}

std::string pointer_at(double x, double y) {
  char text[64];
  std::snprintf(text, sizeof text, "%d,%d", int(x), int(y));
  return text;
}

// The window's grid against the engine's model view figure of `stack`: thumbnails in rows of layers and
// columns of heads, framed in the K/V group's colour, every cell's centre in the figure's colour.
void check_thumbnails(const WindowRun& w, const model::AttentionStack& stack) {
  const int L = stack.layers, H = stack.heads, T = stack.tokens;
  REQUIRE(has_window(w, "Model view###model_view"));
  const auto& thumbs = w.layout.at("thumbs");
  REQUIRE(int(thumbs.size()) == L * H);
  ExportRequest request;
  request.what = ExportWhat::model;
  const FigureSpec figure = model_view_figure(stack, request);
  const double side = thumbs[0].at("w").get<double>();
  CHECK(side >= 2.0 * T);  // at least 2 pixels a cell in a 1600 × 900 window
  int mismatches = 0, compared = 0;
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      CAPTURE(l);
      CAPTURE(h);
      const auto& t = thumbs[size_t(l * H + h)];
      CHECK(t.at("layer").get<int>() == l);
      CHECK(t.at("head").get<int>() == h);
      const int g = kv_group_of_head(h, H, stack.kv_heads);
      CHECK(t.at("kv_group").get<int>() == g);
      const double x = t.at("x").get<double>(), y = t.at("y").get<double>(), frame = t.at("frame").get<double>();
      CHECK(t.at("w").get<double>() == side);
      CHECK(t.at("h").get<double>() == side);
      // Rows of layers, columns of heads, in order, apart.
      if (h > 0) {
        const auto& left = thumbs[size_t(l * H + h - 1)];
        CHECK(y == left.at("y").get<double>());
        CHECK(x >= left.at("x").get<double>() + side + 2 * frame);
      }
      if (l > 0) {
        const auto& above = thumbs[size_t((l - 1) * H + h)];
        CHECK(x == above.at("x").get<double>());
        CHECK(y >= above.at("y").get<double>() + side + 2 * frame);
      }
      // The frame: the K/V group's colour, as the Heads view and the export draw it.
      const Rgba group = kv_group_color(g);
      CHECK(t.at("frame_color") == nlohmann::json{group.r, group.g, group.b});
      CHECK(channel_distance(w.png.at(int(x - frame / 2), int(y + side / 2)), group) <= 2);
      // Every cell's centre against the figure's colour of that cell.
      const std::vector<Rgba> colors = panel_colors(figure, size_t(l * H + h));
      for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
          const Rgba shown = w.png.at(int(x + (j + 0.5) * side / T), int(y + (i + 0.5) * side / T));
          mismatches += channel_distance(shown, colors[size_t(i * T + j)]) > 2;
          ++compared;
        }
    }
  CHECK(compared == L * H * T * T);
  CHECK(mismatches == 0);
}

}  // namespace

TEST_SUITE("gui_model_view") {
  TEST_CASE("model view: an L × H grid of thumbnails, framed by K/V group, in model_view_figure's colours") {
    for (const std::string name : {"llama_gqa_bf16_sharded", "gpt2_prefix_f32"}) {
      CAPTURE(name);
      const model::AttentionStack stack = stack_of(name, "ids: " + ids);
      const int L = stack.layers, H = stack.heads;
      const WindowRun w = run_window("model_view_" + name, "--checkpoint " + shell_quote(fixture(name).string()) +
                                                               " --show-model-view --text " + shell_quote("ids: " + ids));
      check_thumbnails(w, stack);
      CHECK(texts_of(w, "###model_view").size() > 0);
      CHECK(joined(texts_of(w, "###model_view")).find(name + " · " + std::to_string(L) + " layers × " +
                                                      std::to_string(H) + " heads") != std::string::npos);
    }
  }

  TEST_CASE("model view: attentions computed elsewhere are drawn from the file, in the config's K/V groups") {
    const fs::path dir = fixture("precomputed");
    const model::AttentionStack stack =
        model::open_attentions(dir / "attentions.safetensors", dir / "tokens.json", dir / "config.json");
    const WindowRun w = run_window("model_view_attentions", "--checkpoint " + shell_quote((dir / "attentions.safetensors").string()) +
                                                                " --show-model-view");
    check_thumbnails(w, stack);
    CHECK(joined(texts_of(w, "###model_view")).find("precomputed · 2 layers × 4 heads · 2 K/V heads · 12 tokens") !=
          std::string::npos);
  }

  TEST_CASE("model view: clicking thumbnail l.h shows layer l in the Heads view with head h large") {
    const std::string name = "llama_gqa_bf16_sharded";
    const std::string args = "--checkpoint " + shell_quote(fixture(name).string()) + " --show-model-view --text " +
                             shell_quote("ids: " + ids);
    const WindowRun first = run_window("model_view_before_click", args);
    const auto& thumbs = first.layout.at("thumbs");
    REQUIRE(thumbs.size() >= 2);
    const auto& target = thumbs.back();  // the last layer's last head
    const int layer = target.at("layer").get<int>(), head = target.at("head").get<int>();
    REQUIRE(layer >= 1);
    CHECK(first.layout.at("large_head").get<int>() == -1);
    const std::string pointer = pointer_at(target.at("x").get<double>() + target.at("w").get<double>() / 2,
                                           target.at("y").get<double>() + target.at("h").get<double>() / 2);
    const WindowRun clicked = run_window("model_view_click", args + " --pointer " + pointer + " --clicks 4 --frames 8");
    CHECK(clicked.layout.at("view") == "heads");
    CHECK(clicked.layout.at("large_head").get<int>() == head);
    const std::vector<std::string> heads = texts_of(clicked, "###heads");
    INFO(joined(heads));
    CHECK(std::find(heads.begin(), heads.end(), name + " · layer " + std::to_string(layer) + " of " +
                                                    std::to_string(layer + 1)) != heads.end());
    const auto m = model::open(fixture(name));
    const int group = kv_group_of_head(head, m->config.heads, m->config.kv_heads);
    CHECK(has_window(clicked, "Head " + std::to_string(head) + " · kv group " + std::to_string(group) + "###large_head"));
    CHECK_FALSE(has_window(clicked, "Model view###model_view"));  // it made way for the Heads view
  }

  TEST_CASE("model view: without a checkpoint it says so and opens the shipped induction model on a click") {
    const WindowRun empty = run_window("model_view_empty", "--show-model-view");
    const std::vector<std::string> texts = texts_of(empty, "###model_view");
    INFO(joined(texts));
    CHECK(joined(texts).find("No checkpoint open") != std::string::npos);
    CHECK(empty.layout.at("thumbs").empty());
    REQUIRE(empty.layout.at("widgets").contains("model_view.open_induction"));
    const auto& button = empty.layout["widgets"]["model_view.open_induction"];
    const std::string pointer = pointer_at(button["x"].get<double>() + button["w"].get<double>() / 2,
                                           button["y"].get<double>() + button["h"].get<double>() / 2);
    const WindowRun opened = run_window("model_view_open_induction", "--show-model-view --text " +
                                                                         shell_quote("ids: 1 2 3 4 1 2 3 4") +
                                                                         " --pointer " + pointer + " --clicks 3 --frames 10");
    const std::vector<std::string> shown = texts_of(opened, "###model_view");
    INFO(joined(shown));
    const auto m = model::open(fs::path(ATTNSCOPE_SOURCE_DIR) / "assets/models/induction");
    CHECK(int(opened.layout.at("thumbs").size()) == m->config.layers * m->config.heads);
    CHECK(joined(shown).find("induction · " + std::to_string(m->config.layers) + " layers") != std::string::npos);
    CHECK_FALSE(has_window(opened, "Checkpoint###checkpoint"));  // not opened over the grid
  }

  TEST_CASE("training window: after Save, \"Open in the Checkpoint window\" opens the saved model like any other") {
    const fs::path dir = attnscope::test::test_tmp() / "gui" / "model_view_trained";
    fs::remove_all(dir);
    const std::string args = "--show-training --train-settings d_model=32,seq_len=16,batch=4,threads=1,snapshot_every=5,steps=8 "
                             "--text " + shell_quote("ids: 1 2 3 4 1 2 3 4") + " --train-actions start,save:";
    // Two folder names of one length: the "Saved <folder>" line wraps alike in both runs, so the button
    // found in the first run is where the second run draws it.
    const WindowRun saved = run_window("model_view_trained_saved", args + shell_quote((dir / "run_a").string()));
    REQUIRE(saved.layout.at("widgets").contains("training.open_saved"));
    CHECK_FALSE(has_window(saved, "Checkpoint###checkpoint"));
    const auto& button = saved.layout["widgets"]["training.open_saved"];
    const std::string pointer = pointer_at(button["x"].get<double>() + button["w"].get<double>() / 2,
                                           button["y"].get<double>() + button["h"].get<double>() / 2);
    // Clicks on every other frame: the button appears once the save is done (what lies there before is
    // text, which a click does not change).
    const WindowRun opened = run_window("model_view_trained_open", args + shell_quote((dir / "run_b").string()) +
                                                                       " --pointer " + pointer +
                                                                       " --clicks 10,12,14,16,18,20,22,24,26,28 --frames 40");
    REQUIRE(has_window(opened, "Checkpoint###checkpoint"));
    const std::vector<std::string> info = texts_of(opened, "###checkpoint");
    INFO(joined(info));
    CHECK(std::find(info.begin(), info.end(), "run_b") != info.end());  // the model's name: its folder's
    CHECK(opened.layout.at("error").get<std::string>().empty());
    // The Heads view draws the saved model's heads for the text.
    CHECK(int(opened.layout.at("heads").size()) == model::open(dir / "run_b")->config.heads);
  }

  TEST_CASE("training window: a model trained without a softmax opens in the Checkpoint window, drawn as its signed M") {
    const fs::path dir = attnscope::test::test_tmp() / "gui" / "model_view_trained_linear";
    fs::remove_all(dir);
    const std::string args = "--show-training --train-settings attention=gated-deltanet,d_model=32,seq_len=16,batch=4,"
                             "threads=1,snapshot_every=5,steps=8 --text " + shell_quote("ids: 1 2 3 4 1 2 3 4") +
                             " --train-actions start,save:";
    const WindowRun saved = run_window("model_view_trained_linear_saved", args + shell_quote((dir / "run_a").string()));
    REQUIRE(saved.layout.at("widgets").contains("training.open_saved"));
    const auto& button = saved.layout["widgets"]["training.open_saved"];
    const std::string pointer = pointer_at(button["x"].get<double>() + button["w"].get<double>() / 2,
                                           button["y"].get<double>() + button["h"].get<double>() / 2);
    const WindowRun opened = run_window("model_view_trained_linear_open", args + shell_quote((dir / "run_b").string()) +
                                                                              " --pointer " + pointer +
                                                                              " --clicks 10,12,14,16,18,20,22,24,26,28 --frames 40");
    REQUIRE(has_window(opened, "Checkpoint###checkpoint"));
    CHECK(opened.layout.at("error").get<std::string>().empty());
    const auto m = model::open(dir / "run_b");
    CHECK(m->config.model_type == "attnscope_linear");
    // The Heads view draws the saved model's heads as signed matrices: the diverging colormap, each head's
    // range symmetric about 0.
    REQUIRE(int(opened.layout.at("heads").size()) == m->config.heads);
    CHECK(opened.layout.at("colormap") == "diverging");
    for (const auto& h : opened.layout.at("heads")) CHECK(h.at("range")[0].get<double>() == -h.at("range")[1].get<double>());
  }

  TEST_CASE("model view: a Gemma 3 checkpoint marks its local layers, whose heads never look past the window") {
    const std::string name = "gemma3_local_global_bf16";  // layers 0, 1 local (window 4), layer 2 global
    const std::string input = "ids: 5 17 42 9 33 60 5 17 42 9 33 60 5 17 42 9";  // 16 tokens > 4
    const model::AttentionStack stack = stack_of(name, input);
    const WindowRun w = run_window("model_view_gemma3", "--checkpoint " + shell_quote(fixture(name).string()) +
                                                            " --show-model-view --text " + shell_quote(input));
    check_thumbnails(w, stack);
    const std::vector<std::string> texts = texts_of(w, "###model_view");
    INFO(joined(texts));
    CHECK(std::count(texts.begin(), texts.end(), "local") == 2);
    CHECK(shows(texts, "local: a sliding-window layer, each token sees only the last 4 tokens"));
    // The tags sit on the rows of layers 0 and 1, left of their numbers.
    const auto& thumbs = w.layout.at("thumbs");
    int tagged = 0;
    for (const auto& t : w.layout.at("texts")) {
      if (t.at("text") != "local") continue;
      const double y = t.at("y").get<double>();
      for (int l = 0; l < stack.layers; ++l) {
        const auto& row = thumbs[size_t(l * stack.heads)];
        if (y >= row.at("y").get<double>() && y < row.at("y").get<double>() + row.at("h").get<double>()) {
          CHECK(l < 2);
          CHECK(t.at("x").get<double>() < row.at("x").get<double>());
          ++tagged;
        }
      }
    }
    CHECK(tagged == 2);
    // The Heads view of layer 0: every key at or beyond the window back is masked (the masked colour, as
    // keys after the query), leaving a band along the diagonal; layer 2's heads reach further back.
    for (const int layer : {0, 2}) {
      CAPTURE(layer);
      const WindowRun heads = run_window("model_view_gemma3_heads" + std::to_string(layer),
                                         "--checkpoint " + shell_quote(fixture(name).string()) + " --layer " +
                                             std::to_string(layer) + " --text " + shell_quote(input));
      const auto& panels = heads.layout.at("heads");
      REQUIRE(int(panels.size()) == stack.heads);
      const Rgba masked = masked_color(Colormap::viridis);
      int outside = 0, masked_cells = 0;
      for (const auto& p : panels) {
        const double x = p.at("x").get<double>(), y = p.at("y").get<double>(), cell = p.at("cell").get<double>();
        for (int i = 0; i < stack.tokens; ++i)
          for (int j = 0; j + 4 <= i; ++j) {
            ++outside;
            masked_cells += channel_distance(heads.png.at(int(x + (j + 0.5) * cell), int(y + (i + 0.5) * cell)), masked) <= 2;
          }
      }
      if (layer == 0) CHECK(masked_cells == outside);
      else CHECK(masked_cells == 0);
    }
  }

  TEST_CASE("model view: the same in Chinese") {
    const WindowRun w = run_window("model_view_zh", "--language zh --checkpoint " + shell_quote(fixture("qwen2_gqa").string()) +
                                                        " --show-model-view --text " + shell_quote("ids: " + ids));
    CHECK(has_window(w, "模型视图###model_view"));
    CHECK(w.layout.at("untranslated").empty());
    CHECK(w.layout.at("thumbs").size() > 0);
    const std::vector<std::string> texts = texts_of(w, "###model_view");
    INFO(joined(texts));
    CHECK(joined(texts).find("层") != std::string::npos);
  }
}

}  // namespace attnscope::test
