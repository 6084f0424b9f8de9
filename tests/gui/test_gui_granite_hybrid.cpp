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
#include "hybrid_gui_checks.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

const std::string name = "granite_hybrid_f32";  // layers 0, 2, 3 Mamba-2, layer 1 attention (no positions)
const std::string input = "ids: 5 17 42 9 33 60 5 17 42 9";

fs::path fixture() { return model_fixture(name); }

}  // namespace

TEST_SUITE("gui_granite_hybrid") {
  TEST_CASE("granite_hybrid: the Model view draws every layer as what it is, in both languages and sizes") {
    const model::ModelConfig c = model::open(fixture())->config;
    // the attention layer has no positions either (position_embedding_type "nope"): its tag says NoPE, the Mamba
    // layers' tags do not (positions are an attention layer's question)
    check_model_view_draws_every_layer(name, input, "Mamba-2", c.mamba.heads, [](const std::string& language) {
      return in_language(language, "attention") + " " + in_language(language, "NoPE");
    });
  }

  TEST_CASE("granite_hybrid: the Heads view of a Mamba-2 layer is signed, of an attention layer probabilities") {
    const model::ModelConfig c = model::open(fixture())->config;
    check_heads_view_of_each_kind(name, input, "Mamba-2", c.mamba.heads, 0, 1);
  }

  TEST_CASE("granite_hybrid: the Positions view refuses a Mamba-2 layer by name, and shows the attention layer has no positions") {
    const WindowRun mamba = run_window("granite_hybrid_positions_0", "--checkpoint " + shell_quote(fixture().string()) +
                                                                         " --layer 0 --view positions --size 1280x720 --text " +
                                                                         shell_quote(input));
    const std::vector<std::string> texts = texts_of(mamba, "###positions");
    INFO(joined(texts));
    CHECK(shows(texts, "layer 0 is a Mamba-2 layer (a state-space layer): it has no RoPE"));
    check_texts_inside(mamba, "###positions");
    const WindowRun soft = run_window("granite_hybrid_positions_1", "--checkpoint " + shell_quote(fixture().string()) +
                                                                        " --layer 1 --view positions --size 1280x720 --text " +
                                                                        shell_quote(input));
    const std::vector<std::string> nope = texts_of(soft, "###positions");
    INFO(joined(nope));
    CHECK(shows(nope, "NoPE"));  // position_embedding_type "nope": the attention layer has no positions either
    CHECK_FALSE(shows(nope, "Mamba-2 layer"));
    check_texts_inside(soft, "###positions");
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
                      in_language(language, "L = %d · T = %d tokens · C = %d · H = %d Mamba heads · P = %d · G = %d groups of B, C · "
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
                      in_language(language, "H·P·N + (K − 1)·(H·P + 2·G·N) = %d·%d·%d + %d·%lld = %lld numbers, whatever the "
                                   "length").c_str(),
                      mc.heads, mc.head_dim, mc.state, mc.conv_kernel - 1, static_cast<long long>(mc.conv_dim()),
                      static_cast<long long>(numbers));
        CHECK(shows(texts, line));
        CHECK(shows(texts, zh ? "全部 " + std::to_string(mamba_layers) + " 个 Mamba-2 层"
                              : "All " + std::to_string(mamba_layers) + " Mamba-2 layers"));
        CHECK_FALSE(shows(texts, zh ? "每个词元、每层的 KV 缓存" : "KV cache per token, per layer"));
        check_texts_inside(w, "###shapes");
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
