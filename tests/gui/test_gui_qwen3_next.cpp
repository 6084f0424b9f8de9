// A Qwen3-Next checkpoint in the window (issue 39 item 3): it opens (no refusal); the Model view draws every
// layer — the Gated DeltaNet layers' heads as their signed matrices M in the engine's diverging colours, the
// attention layers' heads as probabilities — each layer labelled with its type, with two colour bars named
// for their values; the Heads view of a linear layer draws signed heads on the diverging scale with its bar
// named "Gated DeltaNet weight" and its values button "matrix M", of an attention layer probabilities; the
// Positions view refuses the linear layer by name; the Shapes view traces it (short convolution, key heads shared
// by value heads, the state and the convolution's last inputs). In English and Chinese, at 1280×720 and
// 1920×1080, every text inside the window.
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
#include "hybrid_gui_checks.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

const std::string name = "qwen3_next_f32";  // layers 0–2 Gated DeltaNet, layer 3 attention
const std::string input = "ids: 5 17 42 9 33 60 5 17 42 9";

fs::path fixture() { return model_fixture(name); }

}  // namespace

TEST_SUITE("gui_qwen3_next") {
  TEST_CASE("qwen3_next: the Model view draws every layer as what it is, in both languages and sizes") {
    const model::ModelConfig c = model::open(fixture())->config;
    check_model_view_draws_every_layer(name, input, "Gated DeltaNet", c.linear.value_heads,
                                       [](const std::string& language) { return in_language(language, "attention"); });
  }

  TEST_CASE("qwen3_next: the Heads view of a Gated DeltaNet layer is signed, of an attention layer probabilities") {
    const model::ModelConfig c = model::open(fixture())->config;
    check_heads_view_of_each_kind(name, input, "Gated DeltaNet", c.linear.value_heads, 0, 3);
  }

  TEST_CASE("qwen3_next: the Positions view refuses a Gated DeltaNet layer by name, and draws an attention layer's RoPE") {
    const WindowRun linear = run_window("qwen3_next_positions_0", "--checkpoint " + shell_quote(fixture().string()) +
                                                                      " --layer 0 --view positions --size 1280x720 --text " +
                                                                      shell_quote(input));
    const std::vector<std::string> texts = texts_of(linear, "###positions");
    INFO(joined(texts));
    CHECK(shows(texts, "layer 0 is a Gated DeltaNet layer (linear attention): it has no RoPE"));
    check_texts_inside(linear, "###positions");
    const WindowRun soft = run_window("qwen3_next_positions_3", "--checkpoint " + shell_quote(fixture().string()) +
                                                                    " --layer 3 --view positions --size 1280x720 --text " +
                                                                    shell_quote(input));
    const std::vector<std::string> rope = texts_of(soft, "###positions");
    INFO(joined(rope));
    CHECK(shows(rope, "RoPE"));
    CHECK_FALSE(shows(rope, "Gated DeltaNet"));
  }

  TEST_CASE("qwen3_next: the Shapes view traces a Gated DeltaNet layer — convolution, key and value heads, state — in both languages and sizes") {
    const auto m = model::open(fixture());
    const model::ModelConfig& c = m->config;
    const model::LinearAttentionConfig& la = c.linear;
    int linear_layers = 0;
    for (int l = 0; l < c.layers; ++l) linear_layers += c.is_linear_layer(l);
    const int T = int(model_tokens_from_input(fixture(), input).ids.size());
    // The whole trace on one screen (a tall window at scale 1), then the window as a class sees it: at
    // 1280×720 and 1920×1080 (the table scrolls) its first lines, and no text wider than the window.
    for (const char* size : {"1920x2160", "1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) {
        const std::string where = std::string(size) + " " + language;
        CAPTURE(where);
        const bool whole = std::string(size) == "1920x2160";
        const WindowRun w = run_window(std::string("qwen3_next_shapes_0_") + size + language,
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
                      in_language(language, "L = %d · T = %d tokens · C = %d · Hk = %d key heads · Hv = %d value heads · d_k = %d · "
                                   "d_v = %d · K = %d").c_str(),
                      c.layers, T, c.d_model, la.key_heads, la.value_heads, la.key_dim, la.value_dim, la.conv_kernel);
        CHECK(shows(texts, line));
        CHECK(shows(texts, zh ? "短卷积" : "short convolution"));
        const double width = w.layout.at("width");
        for (const auto& t : w.layout.at("texts"))
          if (t.at("window").get<std::string>().ends_with("###shapes")) {
            CHECK(t["x"].get<double>() >= -0.5);
            CHECK(t["x"].get<double>() + t["w"].get<double>() <= width + 0.5);
          }
        if (!whole) continue;
        CHECK(shows(texts, zh ? "带门控的归一化" : "gated norm"));
        CHECK(shows(texts, zh ? "状态（固定大小）" : "state (fixed size)"));
        CHECK(shows(texts, "[" + std::to_string(la.value_heads) + ", " + std::to_string(la.key_dim) + ", " +
                               std::to_string(la.value_dim) + "]"));
        const int64_t numbers = int64_t(la.value_heads) * la.key_dim * la.value_dim + int64_t(la.conv_kernel - 1) * la.conv_dim();
        std::snprintf(line, sizeof line,
                      in_language(language, "Hv·d_k·d_v + (K − 1)·(2·Hk·d_k + Hv·d_v) = %d·%d·%d + %d·%lld = %lld numbers, whatever "
                                   "the length").c_str(),
                      la.value_heads, la.key_dim, la.value_dim, la.conv_kernel - 1, static_cast<long long>(la.conv_dim()),
                      static_cast<long long>(numbers));
        CHECK(shows(texts, line));
        CHECK(shows(texts, zh ? "全部 " + std::to_string(linear_layers) + " 个 Gated DeltaNet 层"
                              : "All " + std::to_string(linear_layers) + " Gated DeltaNet layers"));
        CHECK_FALSE(shows(texts, zh ? "每个词元、每层的 KV 缓存" : "KV cache per token, per layer"));
        check_texts_inside(w, "###shapes");
      }
    // the attention layer of the same model: its KV cache, counted over the softmax layers only
    const WindowRun soft = run_window("qwen3_next_shapes_3", "--checkpoint " + shell_quote(fixture().string()) +
                                                                 " --layer 3 --view shapes --size 1920x2160 --ui-scale 1 --text " +
                                                                 shell_quote(input));
    const std::vector<std::string> texts = texts_of(soft, "###shapes");
    INFO(joined(texts));
    CHECK(shows(texts, "KV cache per token, per layer"));
    CHECK(shows(texts, "All " + std::to_string(c.layers - linear_layers) + " softmax layers"));
  }
}

}  // namespace attnscope::test
