// The Positions view of a checkpoint draws its own RoPE scaling (issue 36): for every rope type the engine
// implements — linear, dynamic NTK by the input's length, YaRN, llama3's bands, longrope's short and long
// factors by the input's length, partial rotary — the window says what the scaling did with the numbers
// of the engine's layer_positions (the frequencies the forward pass used on that input), draws the
// wavelengths before and after it, the bands or factor lists that changed them and the attention factor,
// in English and Chinese, with every text inside the window at 1280×720 and 1920×1080.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/config.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

const fs::path source_dir(ATTNSCOPE_SOURCE_DIR);

model::ModelConfig config_of(const std::string& fixture) {
  const fs::path file = source_dir / "tests" / "fixtures" / "models" / fixture / "config.json";
  return model::parse_model_config(read_file(file, 1 << 20), file.string());
}

// The English key in `language` (zh.json's translation), so the test reads what the window shows.
std::string in(const std::string& language, const std::string& english) {
  if (language == "en") return english;
  static const nlohmann::json zh = read_json(source_dir / "assets" / "i18n" / "zh.json");
  REQUIRE_MESSAGE(zh.at("strings").contains(english), "zh.json lacks \"" << english << "\"");
  return zh["strings"][english].get<std::string>();
}

template <class... Args> std::string format(const std::string& f, Args... args) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, f.c_str(), args...);
  return buf;
}

std::string g(double v) { return format("%g", v); }
std::string g3(double v) { return format("%.3g", v); }  // a computed ratio, as the window rounds it

int count_band(const LayerPositions& p, RopeBand band) { return int(std::count(p.band.begin(), p.band.end(), band)); }

// "ids: 1 2 … T": T tokens of the fixtures' 64-token vocabulary, no tokenizer.
std::string ids_text(int tokens) {
  std::string s = "ids:";
  for (int t = 0; t < tokens; ++t) s += " " + std::to_string(1 + t % 63);
  return s;
}

struct Case {
  const char* fixture;
  int layer;
  int tokens;
};

// What the caption of `c`'s layer must say in `language`, from the engine's numbers.
std::vector<std::string> expected(const Case& c, const std::string& language) {
  const model::ModelConfig config = config_of(c.fixture);
  const LayerPositions p = layer_positions(config, c.layer, c.tokens);
  const std::string f = g(p.factor);
  const double lo = *std::min_element(p.stretch.begin(), p.stretch.end());
  const double hi = *std::max_element(p.stretch.begin(), p.stretch.end());
  std::vector<std::string> says;
  if (p.rope_type != model::RopeType::plain) {
    says.push_back(in(language, "before scaling"));
    says.push_back(in(language, "after scaling"));
    says.push_back(in(language, "How many times longer each pair's wavelength became"));
    says.push_back(format(in(language, "Attention factor: cos and sin × %s"), g(p.attention_factor).c_str()));
  }
  switch (p.rope_type) {
    case model::RopeType::plain:  // the unscaled layer's curves, as for the scene model
      says.push_back(in(language, "Wavelength of each dimension pair: tokens for one full turn"));
      break;
    case model::RopeType::linear:
      says.push_back(format(in(language, "Linear scaling ×%s: every pair turns %s times slower, so every wavelength is %s "
                                         "times longer (positions interpolated)."), f.c_str(), f.c_str(), f.c_str()));
      break;
    case model::RopeType::dynamic:
      if (c.tokens <= p.max_positions)
        says.push_back(format(in(language, "Dynamic NTK ×%s: this input of %d tokens fits the %d positions the model was "
                                           "trained on, so the wavelengths are unchanged; a longer input would raise the base."),
                              f.c_str(), c.tokens, p.max_positions));
      else
        says.push_back(format(in(language, "Dynamic NTK ×%s: this input of %d tokens is longer than the %d trained "
                                           "positions, so the base rises from %s to %s: the slowest pair's wavelength grows "
                                           "×%s, pair 0's not at all."),
                              f.c_str(), c.tokens, p.max_positions, g(p.rope.base).c_str(), g(p.dynamic_base).c_str(),
                              g3(hi).c_str()));
      break;
    case model::RopeType::yarn:
      says.push_back(format(in(language, "YaRN ×%s, trained on %d tokens: the fast pairs keep their wavelengths, the slow "
                                         "ones turn %s times slower, and those between blend the two (kept %d, blended %d, "
                                         "slowed %d of %d pairs)."),
                            f.c_str(), p.original_context, f.c_str(), count_band(p, RopeBand::kept),
                            count_band(p, RopeBand::blended), count_band(p, RopeBand::scaled), int(p.band.size())));
      says.push_back(in(language, "kept (fast pairs)"));
      says.push_back(in(language, "blended"));
      break;
    case model::RopeType::llama3:
      says.push_back(format(in(language, "Llama 3 scaling ×%s, trained on %d tokens: pairs with a wavelength under %s "
                                         "tokens keep it, those over %s tokens turn %s times slower, and those between blend "
                                         "the two (kept %d, blended %d, slowed %d of %d pairs)."),
                            f.c_str(), p.original_context, g(p.high_freq_wavelength).c_str(),
                            g(p.low_freq_wavelength).c_str(), f.c_str(), count_band(p, RopeBand::kept),
                            count_band(p, RopeBand::blended), count_band(p, RopeBand::scaled), int(p.band.size())));
      says.push_back(format(in(language, "L/high_freq_factor = %s tokens"), g(p.high_freq_wavelength).c_str()));
      says.push_back(format(in(language, "L/low_freq_factor = %s tokens"), g(p.low_freq_wavelength).c_str()));
      says.push_back(format(in(language, "%s (slow pairs)"), ("×" + f).c_str()));
      break;
    case model::RopeType::longrope:
      says.push_back(format(in(language, p.long_factors
                                             ? "LongRoPE: this input of %d tokens is longer than the %d trained tokens, so "
                                               "each pair's wavelength is stretched by its own long_factor, ×%s to ×%s."
                                             : "LongRoPE: this input of %d tokens fits the %d trained tokens, so each "
                                               "pair's wavelength is stretched by its own short_factor, ×%s to ×%s."),
                            c.tokens, p.original_context, g3(lo).c_str(), g3(hi).c_str()));
      says.push_back(in(language, p.long_factors ? "long_factor (in use)" : "short_factor (in use)"));
      says.push_back(in(language, p.long_factors ? "short_factor (for shorter inputs)" : "long_factor (for longer inputs)"));
      break;
  }
  if (!config.is_mla() && p.rotated_dim < p.head_dim)
    says.push_back(format(in(language, " (partial rotary: the other %d of the head's %d pass unturned)"),
                          p.head_dim - p.rotated_dim, p.head_dim));
  return says;
}

void check_view(const Case& c, const std::string& size, const std::string& language) {
  CAPTURE(c.fixture);
  CAPTURE(c.layer);
  CAPTURE(c.tokens);
  CAPTURE(size);
  CAPTURE(language);
  const std::string dir = (source_dir / "tests" / "fixtures" / "models" / c.fixture).string();
  const std::string args = "--checkpoint " + dir + " --layer " + std::to_string(c.layer) + " --view positions --size " +
                           size + " --language " + language + " --text '" + ids_text(c.tokens) + "'";
  const WindowRun w = run_window(std::string("rope_scaling_") + c.fixture + "_" + std::to_string(c.layer) + "_" +
                                     std::to_string(c.tokens) + "_" + size + language,
                                 args);
  CHECK(w.layout.at("view") == "positions");
  CHECK(w.layout.at("error") == "");
  const std::vector<std::string> texts = texts_of(w, "###positions");
  INFO(joined(texts));
  CHECK(shows(texts, format(in(language, "this sentence: %d tokens"), c.tokens)));
  for (const std::string& s : expected(c, language)) {
    CAPTURE(s);
    CHECK(shows(texts, s));
  }
  // An unscaled layer draws no before/after: there is nothing to compare.
  const bool scaled = layer_positions(config_of(c.fixture), c.layer, c.tokens).rope_type != model::RopeType::plain;
  CHECK(shows(texts, in(language, "before scaling")) == scaled);
  // Every text of the view lies inside the Positions window.
  nlohmann::json window;
  for (const auto& win : w.layout.at("windows"))
    if (win.at("title").get<std::string>().ends_with("###positions")) window = win;
  REQUIRE(window.is_object());
  const double x0 = window["x"], y0 = window["y"], x1 = x0 + window["w"].get<double>(), y1 = y0 + window["h"].get<double>();
  for (const auto& t : w.layout.at("texts")) {
    if (!t.at("window").get<std::string>().ends_with("###positions")) continue;
    CAPTURE(t.dump());
    CHECK(t["x"].get<double>() >= x0 - 0.5);
    CHECK(t["x"].get<double>() + t["w"].get<double>() <= x1 + 0.5);
    CHECK(t["y"].get<double>() >= y0 - 0.5);
    CHECK(t["y"].get<double>() + t["h"].get<double>() <= y1 + 0.5);
  }
  CHECK(w.layout.at("heads").size() == size_t(config_of(c.fixture).heads));  // the heads beside the curves
}

}  // namespace

TEST_SUITE("gui_rope_scaling") {
  TEST_CASE("positions view of a checkpoint: Llama 3's bands, in both languages and sizes") {
    for (const char* size : {"1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) check_view({"llama32_1b_llama3rope_bf16", 0, 12}, size, language);
  }

  TEST_CASE("positions view of a checkpoint: longrope's short and long factors chosen by the input's length") {
    // original_max_position_embeddings 16: 12 tokens use short_factor, 20 use long_factor
    check_view({"phi35_longrope_bf16", 0, 12}, "1280x720", "en");
    check_view({"phi35_longrope_bf16", 1, 20}, "1280x720", "zh");
    check_view({"phi35_longrope_bf16", 1, 20}, "1920x1080", "en");
    check_view({"phi4mini_partial_longrope_bf16", 0, 20}, "1280x720", "en");  // and partial rotary
  }

  TEST_CASE("positions view of a checkpoint: dynamic NTK by the input's length, YaRN, linear on global layers only") {
    check_view({"llama_dynamic_f32", 0, 12}, "1280x720", "en");  // within max_position_embeddings 16
    check_view({"llama_dynamic_f32", 1, 20}, "1280x720", "zh");  // beyond: a larger base
    check_view({"qwen3_yarn_bf16", 1, 12}, "1280x720", "en");
    check_view({"qwen3_yarn_bf16", 0, 12}, "1920x1080", "zh");
    check_view({"gemma3_linear_global_bf16", 2, 12}, "1280x720", "en");  // the global layer: linear ×8
    check_view({"gemma3_linear_global_bf16", 0, 12}, "1280x720", "en");  // a sliding layer: unscaled
    check_view({"deepseek_v2_mla_moe_bf16", 1, 12}, "1280x720", "en");  // MLA's rotary part with its YaRN
  }
}

}  // namespace attnscope::test
