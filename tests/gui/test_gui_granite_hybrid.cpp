// A Granite 4.0-H checkpoint in the window (issue 39 item 3, the Mamba-2 hybrid): it opens; the Model view
// draws every layer — the Mamba-2 layers' heads as their signed matrices M in the engine's diverging colours,
// the attention layer's heads as probabilities — each layer labelled with its type, with two colour bars named
// for their values; the Heads view of a Mamba layer draws signed heads on the diverging scale with its bar
// named "Mamba-2 weight" and its values button "matrix M", of an attention layer probabilities; the Positions
// view refuses the Mamba layer by name; the Shapes view traces it (in_proj's parts, the short convolution, B and
// C per group, the state and the convolution's last inputs). In English and Chinese, at 1280×720 and 1920×1080,
// every text inside the window.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "attnscope/figure/export.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/model_input.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

const fs::path source_dir(ATTNSCOPE_SOURCE_DIR);
const std::string name = "granite_hybrid_f32";  // layers 0, 2, 3 Mamba-2, layer 1 attention (no positions)
const std::string input = "ids: 5 17 42 9 33 60 5 17 42 9";

fs::path fixture() { return source_dir / "tests/fixtures/models" / name; }

std::string in(const std::string& language, const std::string& english) {
  if (language == "en") return english;
  static const nlohmann::json zh = read_json(source_dir / "assets" / "i18n" / "zh.json");
  REQUIRE_MESSAGE(zh.at("strings").contains(english), "zh.json lacks \"" << english << "\"");
  return zh["strings"][english].get<std::string>();
}

// Every text of the view's window (its ImGui name ends with `title`) lies inside the screen, but for texts in a
// part that scrolls (they can be scrolled to).
void check_inside(const WindowRun& w, const std::string& title) {
  const double width = w.layout.at("width"), height = w.layout.at("height");
  int checked = 0;
  for (const auto& t : w.layout.at("texts")) {
    if (!t.at("window").get<std::string>().ends_with(title) || t.at("scroll_y").get<bool>() || t.at("scroll_x").get<bool>())
      continue;
    ++checked;
    CAPTURE(t.dump());
    CHECK(t["x"].get<double>() >= -0.5);
    CHECK(t["y"].get<double>() >= -0.5);
    CHECK(t["x"].get<double>() + t["w"].get<double>() <= width + 0.5);
    CHECK(t["y"].get<double>() + t["h"].get<double>() <= height + 0.5);
  }
  CHECK(checked > 0);
}

}  // namespace

TEST_SUITE("gui_granite_hybrid") {
  TEST_CASE("granite_hybrid: the Model view draws every layer as what it is, in both languages and sizes") {
    const auto m = model::open(fixture());
    const model::ModelConfig& c = m->config;
    const ModelTokens tokens = model_tokens_from_input(m->dir, input);
    const model::AttentionStack stack = attention_stack(model::forward(*m, tokens.ids), tokens, name, c.layer_window);
    ExportRequest request;
    request.what = ExportWhat::model;
    const FigureSpec figure = model_view_figure(stack, request);
    const int T = stack.tokens, columns = stack.most_heads();
    int linear_layers = 0;
    for (int l = 0; l < c.layers; ++l) linear_layers += c.is_linear_layer(l);
    REQUIRE(linear_layers == 3);
    for (const char* size : {"1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) {
        CAPTURE(size);
        CAPTURE(language);
        const WindowRun w = run_window(std::string("granite_hybrid_model_view_") + size + language,
                                       "--checkpoint " + shell_quote(fixture().string()) + " --show-model-view --size " +
                                           size + " --language " + language + " --text " + shell_quote(input));
        CHECK(w.layout.at("error") == "");
        CHECK(w.layout.at("untranslated").empty());
        const auto& thumbs = w.layout.at("thumbs");
        REQUIRE(int(thumbs.size()) == c.layers * c.heads);  // every layer, each with its own heads
        int mismatches = 0, signed_thumbs = 0;
        for (const auto& t : thumbs) {
          const int l = t.at("layer"), h = t.at("head");
          CHECK(t.at("kind") == (c.is_linear_layer(l) ? "Mamba-2" : ""));
          signed_thumbs += c.is_linear_layer(l);
          // every cell's centre in the engine's figure colour: the diverging one for a linear layer
          const std::vector<Rgba> colors = panel_colors(figure, size_t(l * columns + h));
          const double x = t.at("x"), y = t.at("y"), side = t.at("w");
          for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
              mismatches += channel_distance(w.png.at(int(x + (j + 0.5) * side / T), int(y + (i + 0.5) * side / T)),
                                             colors[size_t(i * T + j)]) > 2;
        }
        CHECK(mismatches == 0);
        CHECK(signed_thumbs == linear_layers * c.mamba.heads);
        const std::vector<std::string> texts = texts_of(w, "###model_view");
        INFO(joined(texts));
        // each layer labelled with its type, beside its number
        CHECK(std::count(texts.begin(), texts.end(), "Mamba-2") == linear_layers);
        // the attention layer has no positions either (position_embedding_type "nope"); the Mamba layers' tags do
        // not say NoPE (positions are an attention layer's question)
        CHECK(std::count(texts.begin(), texts.end(), in(language, "attention") + " " + in(language, "NoPE")) ==
              c.layers - linear_layers);
        // two colour bars, named for their values
        CHECK(shows(texts, in(language, "Mamba-2 weight")));
        CHECK(shows(texts, in(language, "probability")));
        CHECK(shows(texts, in(language, "masked")));
        check_inside(w, "###model_view");
      }
  }

  TEST_CASE("granite_hybrid: the Heads view of a Mamba-2 layer is signed, of an attention layer probabilities") {
    const auto m = model::open(fixture());
    for (const char* size : {"1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"})
        for (const int layer : {0, 1}) {
          CAPTURE(size);
          CAPTURE(language);
          CAPTURE(layer);
          const bool linear = m->config.is_linear_layer(layer);
          const WindowRun w = run_window("granite_hybrid_heads_" + std::to_string(layer) + size + language,
                                         "--checkpoint " + shell_quote(fixture().string()) + " --layer " +
                                             std::to_string(layer) + " --size " + size + " --language " + language +
                                             " --text " + shell_quote(input));
          CHECK(w.layout.at("error") == "");
          CHECK(w.layout.at("untranslated").empty());
          const auto& heads = w.layout.at("heads");
          REQUIRE(int(heads.size()) == (linear ? m->config.mamba.heads : m->config.heads));
          CHECK(w.layout.at("colormap") == (linear ? "diverging" : "viridis"));
          for (const auto& h : heads)
            if (linear) CHECK(h.at("range")[0].get<double>() == -h.at("range")[1].get<double>());
            else CHECK(h.at("range")[0].get<double>() >= 0.0);
          const std::vector<std::string> texts = texts_of(w, "###heads");
          INFO(joined(texts));
          CHECK(shows(texts, in(language, linear ? "Mamba-2 weight" : "probability")));
          // the values button: "matrix M" for a linear layer, "probabilities" for an attention layer
          CHECK((std::count(texts.begin(), texts.end(), in(language, "matrix M")) >= 1) == linear);
          CHECK((std::count(texts.begin(), texts.end(), in(language, "probabilities")) >= 1) == !linear);
          char note[256];
          std::snprintf(note, sizeof note, in(language, "layer %d of %d").c_str(), layer, m->config.layers);
          CHECK(shows(texts, name + " · " + note));
          check_inside(w, "###heads");
        }
  }

  TEST_CASE("granite_hybrid: the Positions view refuses a Mamba-2 layer by name, and shows the attention layer has no positions") {
    const WindowRun mamba = run_window("granite_hybrid_positions_0", "--checkpoint " + shell_quote(fixture().string()) +
                                                                         " --layer 0 --view positions --size 1280x720 --text " +
                                                                         shell_quote(input));
    const std::vector<std::string> texts = texts_of(mamba, "###positions");
    INFO(joined(texts));
    CHECK(shows(texts, "layer 0 is a Mamba-2 layer (a state-space layer): it has no RoPE"));
    check_inside(mamba, "###positions");
    const WindowRun soft = run_window("granite_hybrid_positions_1", "--checkpoint " + shell_quote(fixture().string()) +
                                                                        " --layer 1 --view positions --size 1280x720 --text " +
                                                                        shell_quote(input));
    const std::vector<std::string> nope = texts_of(soft, "###positions");
    INFO(joined(nope));
    CHECK(shows(nope, "NoPE"));  // position_embedding_type "nope": the attention layer has no positions either
    CHECK_FALSE(shows(nope, "Mamba-2 layer"));
    check_inside(soft, "###positions");
  }

  TEST_CASE("granite_hybrid: the Shapes view traces a Mamba-2 layer — in_proj, convolution, groups, state — in both languages and sizes") {
    const auto m = model::open(fixture());
    const model::ModelConfig& c = m->config;
    const model::Mamba2Config& mc = c.mamba;
    int mamba_layers = 0;
    for (int l = 0; l < c.layers; ++l) mamba_layers += c.is_linear_layer(l);
    const int T = int(model_tokens_from_input(fixture(), input).ids.size());
    for (const char* size : {"1920x2160", "1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) {
        const std::string where = std::string(size) + " " + language;
        CAPTURE(where);
        const bool whole = std::string(size) == "1920x2160";
        const WindowRun w = run_window(std::string("granite_hybrid_shapes_0_") + size + language,
                                       "--checkpoint " + shell_quote(fixture().string()) + " --layer 0 --view shapes " +
                                           "--size " + size + (whole ? " --ui-scale 1" : "") + " --language " + language +
                                           " --text " + shell_quote(input));
        CHECK(w.layout.at("error") == "");
        CHECK(w.layout.at("untranslated").empty());
        const std::vector<std::string> texts = texts_of(w, "###shapes");
        INFO(joined(texts));
        const bool zh = std::string(language) == "zh";
        char line[512];
        std::snprintf(line, sizeof line,
                      in(language, "L = %d · T = %d tokens · C = %d · H = %d Mamba heads · P = %d · G = %d groups of B, C · "
                                   "N = %d · K = %d").c_str(),
                      c.layers, T, c.d_model, mc.heads, mc.head_dim, mc.groups, mc.state, mc.conv_kernel);
        CHECK(shows(texts, line));
        CHECK(shows(texts, zh ? "投影 z、xBC、dt" : "project z, xBC, dt"));
        const double width = w.layout.at("width");
        for (const auto& t : w.layout.at("texts"))
          if (t.at("window").get<std::string>().ends_with("###shapes")) {
            CHECK(t["x"].get<double>() >= -0.5);
            CHECK(t["x"].get<double>() + t["w"].get<double>() <= width + 0.5);
          }
        if (!whole) continue;
        CHECK(shows(texts, zh ? "短卷积" : "short convolution"));
        CHECK(shows(texts, zh ? "每组的 B 和 C" : "B and C per group"));
        CHECK(shows(texts, zh ? "带门控的归一化" : "gated norm"));
        CHECK(shows(texts, zh ? "状态（固定大小）" : "state (fixed size)"));
        CHECK(shows(texts, "[" + std::to_string(mc.heads) + ", " + std::to_string(mc.head_dim) + ", " +
                               std::to_string(mc.state) + "]"));
        const int64_t numbers = int64_t(mc.heads) * mc.head_dim * mc.state + int64_t(mc.conv_kernel - 1) * mc.conv_dim();
        std::snprintf(line, sizeof line,
                      in(language, "H·P·N + (K − 1)·(H·P + 2·G·N) = %d·%d·%d + %d·%lld = %lld numbers, whatever the "
                                   "length").c_str(),
                      mc.heads, mc.head_dim, mc.state, mc.conv_kernel - 1, static_cast<long long>(mc.conv_dim()),
                      static_cast<long long>(numbers));
        CHECK(shows(texts, line));
        CHECK(shows(texts, zh ? "全部 " + std::to_string(mamba_layers) + " 个 Mamba-2 层"
                              : "All " + std::to_string(mamba_layers) + " Mamba-2 layers"));
        CHECK_FALSE(shows(texts, zh ? "每个词元、每层的 KV 缓存" : "KV cache per token, per layer"));
        check_inside(w, "###shapes");
      }
    // the attention layer of the same model: its KV cache, counted over the attention layers only
    const WindowRun soft = run_window("granite_hybrid_shapes_1", "--checkpoint " + shell_quote(fixture().string()) +
                                                                     " --layer 1 --view shapes --size 1920x2160 --ui-scale 1 --text " +
                                                                     shell_quote(input));
    const std::vector<std::string> texts = texts_of(soft, "###shapes");
    INFO(joined(texts));
    CHECK(shows(texts, "KV cache per token, per layer"));
    CHECK(shows(texts, "All " + std::to_string(c.layers - mamba_layers) + " softmax layers"));
  }
}

}  // namespace attnscope::test
