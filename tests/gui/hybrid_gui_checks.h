// Window checks every hybrid checkpoint family owes (softmax layers among layers without a softmax: Qwen3-Next's
// Gated DeltaNet, Granite 4.0-H's Mamba-2), shared by test_gui_qwen3_next.cpp and test_gui_granite_hybrid.cpp.
// `kind` is the family's linear-layer word as the window shows it ("Gated DeltaNet", "Mamba-2").
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "attnscope/figure/export.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "core/model_input.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {

// `english` as the window shows it in `language` (zh.json's translation for "zh").
inline std::string in_language(const std::string& language, const std::string& english) {
  if (language == "en") return english;
  static const nlohmann::json zh = read_json(std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "i18n" / "zh.json");
  REQUIRE_MESSAGE(zh.at("strings").contains(english), "zh.json lacks \"" << english << "\"");
  return zh["strings"][english].get<std::string>();
}

// Every text of the view's window (its ImGui name ends with `title`) lies inside the screen, but for texts in a
// part that scrolls (they can be scrolled to).
inline void check_texts_inside(const WindowRun& w, const std::string& title) {
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

// The Model view of checkpoint `name` on `input` draws every layer as what it is, in both languages at 1280×720
// and 1920×1080: each thumbnail's cells in the engine's figure colours (diverging for a linear layer), each layer
// labelled with its type (`attention_tag(language)` names a softmax layer), two colour bars named for their
// values, every text inside the window. `linear_heads`: heads of a linear layer.
inline void check_model_view_draws_every_layer(const std::string& name, const std::string& input, const std::string& kind,
                                               int linear_heads,
                                               const std::function<std::string(const std::string&)>& attention_tag) {
  const auto m = model::open(model_fixture(name));
  const model::ModelConfig& c = m->config;
  const ModelTokens tokens = model_tokens_from_input(m->dir, input);
  const model::AttentionStack stack = attention_stack(model::forward(*m, tokens.ids), tokens, name, c.layer_window);
  ExportRequest request;
  request.what = ExportWhat::model;
  const FigureSpec figure = model_view_figure(stack, request);
  const int T = stack.tokens, columns = stack.most_heads();
  int linear_layers = 0;
  for (int l = 0; l < c.layers; ++l) linear_layers += c.is_linear_layer(l);
  REQUIRE(linear_layers > 0);
  REQUIRE(linear_layers < c.layers);
  for (const char* size : {"1280x720", "1920x1080"})
    for (const char* language : {"en", "zh"}) {
      CAPTURE(size);
      CAPTURE(language);
      const WindowRun w = run_window(name + "_model_view_" + size + language,
                                     "--checkpoint " + shell_quote(model_fixture(name).string()) + " --show-model-view --size " +
                                         size + " --language " + language + " --text " + shell_quote(input));
      CHECK(w.layout.at("error") == "");
      CHECK(w.layout.at("untranslated").empty());
      const auto& thumbs = w.layout.at("thumbs");
      REQUIRE(int(thumbs.size()) == c.layers * c.heads);  // every layer, each with its own heads
      int mismatches = 0, signed_thumbs = 0;
      for (const auto& t : thumbs) {
        const int l = t.at("layer"), h = t.at("head");
        CHECK(t.at("kind") == (c.is_linear_layer(l) ? kind : ""));
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
      CHECK(signed_thumbs == linear_layers * linear_heads);
      const std::vector<std::string> texts = texts_of(w, "###model_view");
      INFO(joined(texts));
      // each layer labelled with its type, beside its number
      CHECK(std::count(texts.begin(), texts.end(), kind) == linear_layers);
      CHECK(std::count(texts.begin(), texts.end(), attention_tag(language)) == c.layers - linear_layers);
      // two colour bars, named for their values
      CHECK(shows(texts, in_language(language, kind + " weight")));
      CHECK(shows(texts, in_language(language, "probability")));
      CHECK(shows(texts, in_language(language, "masked")));
      check_texts_inside(w, "###model_view");
    }
}

// The Heads view of linear layer `linear_layer` draws signed heads on the diverging scale (bar "<kind> weight",
// values button "matrix M"), of softmax layer `soft_layer` probabilities; in both languages and sizes.
inline void check_heads_view_of_each_kind(const std::string& name, const std::string& input, const std::string& kind,
                                          int linear_heads, int linear_layer, int soft_layer) {
  const auto m = model::open(model_fixture(name));
  REQUIRE(m->config.is_linear_layer(linear_layer));
  REQUIRE_FALSE(m->config.is_linear_layer(soft_layer));
  for (const char* size : {"1280x720", "1920x1080"})
    for (const char* language : {"en", "zh"})
      for (const int layer : {linear_layer, soft_layer}) {
        CAPTURE(size);
        CAPTURE(language);
        CAPTURE(layer);
        const bool linear = layer == linear_layer;
        const WindowRun w = run_window(name + "_heads_" + std::to_string(layer) + size + language,
                                       "--checkpoint " + shell_quote(model_fixture(name).string()) + " --layer " +
                                           std::to_string(layer) + " --size " + size + " --language " + language +
                                           " --text " + shell_quote(input));
        CHECK(w.layout.at("error") == "");
        CHECK(w.layout.at("untranslated").empty());
        const auto& heads = w.layout.at("heads");
        REQUIRE(int(heads.size()) == (linear ? linear_heads : m->config.heads));
        CHECK(w.layout.at("colormap") == (linear ? "diverging" : "viridis"));
        for (const auto& h : heads)
          if (linear) CHECK(h.at("range")[0].get<double>() == -h.at("range")[1].get<double>());
          else CHECK(h.at("range")[0].get<double>() >= 0.0);
        const std::vector<std::string> texts = texts_of(w, "###heads");
        INFO(joined(texts));
        CHECK(shows(texts, in_language(language, linear ? kind + " weight" : "probability")));
        // the values button: "matrix M" for a linear layer, "probabilities" for an attention layer
        CHECK((std::count(texts.begin(), texts.end(), in_language(language, "matrix M")) >= 1) == linear);
        CHECK((std::count(texts.begin(), texts.end(), in_language(language, "probabilities")) >= 1) == !linear);
        char note[256];
        std::snprintf(note, sizeof note, in_language(language, "layer %d of %d").c_str(), layer, m->config.layers);
        CHECK(shows(texts, name + " · " + note));
        check_texts_inside(w, "###heads");
      }
}

}  // namespace attnscope::test
