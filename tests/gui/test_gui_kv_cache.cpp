// The KV-cache calculator's layer types: picking DeepSeek-V2 in the model combo shows its MLA row
// (512 + 64 elements per token per layer) and the MHA cache it replaces, and picking Qwen3-Next its Gated
// DeltaNet state row (the same bytes at any length) beside its full-attention row and the plot of bytes
// against the length, in English and Chinese.
#include <algorithm>

#include "attnscope/attention/kv_cache.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

std::string centre(const nlohmann::json& r) {
  return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + "," +
         std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
}

bool has_text(const std::vector<std::string>& texts, const std::string& text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

}  // namespace

TEST_SUITE("gui_kv_cache") {
  TEST_CASE("kv-cache window: picking DeepSeek-V2 shows its MLA row and the MHA it replaces") {
    const ModelPreset v2 = find_model_preset(load_model_presets(), "deepseek-v2");
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = language == "zh";
      const std::string base = "--show-kv-cache --size 1280x720 --language " + language;
      const WindowRun first = run_window("kv_cache_mla_" + language + "_first", base);
      REQUIRE(first.layout.at("widgets").contains("kv.model"));
      const std::string combo = centre(first.layout["widgets"]["kv.model"]);
      const WindowRun open = run_window("kv_cache_mla_" + language + "_open", base + " --pointer " + combo + " --clicks 4 --frames 8");
      std::string item;
      for (const auto& t : open.layout["texts"])
        if (t["text"] == v2.label && t["window"].get<std::string>().rfind("##Combo", 0) == 0) item = centre(t);
      REQUIRE_FALSE(item.empty());
      const WindowRun picked = run_window("kv_cache_mla_" + language,
                                          base + " --pointer '" + combo + ";" + item + "' --clicks 4,8 --frames 14");
      const std::vector<std::string> kv = texts_of(picked, "###kv_cache");
      INFO(joined(kv));
      CHECK(shows(kv, v2.label));
      // The MLA row: its name, 60 layers, 576 = 512 + 64 elements, 8.44 GiB.
      CHECK(shows(kv, zh ? "MLA 潜向量" : "MLA latent"));
      CHECK(has_text(kv, "60"));
      CHECK(has_text(kv, "576"));
      CHECK(has_text(kv, "512 + 64"));
      // 576 elements × 2 bytes × 60 layers × 131072 tokens = 9 059 696 640 B = 8.44 GiB; MHA 71.1 times as much.
      KvCacheInput in = kv_cache_input(v2);
      in.seq = v2.context;
      const KvCacheReport r = kv_cache_report(in);
      REQUIRE(r.bytes == int64_t(576) * 2 * 60 * 131072);
      CHECK(has_text(kv, "8.44 GiB"));
      CHECK(shows(kv, zh ? "此模型缓存 8.44 GiB（131072 个词元" : "This model holds 8.44 GiB at 131072 tokens"));
      CHECK(shows(kv, zh ? "是它的 71.1 倍" : "71.1 times as much"));
      CHECK(picked.layout.at("widgets").contains("kv.layer_types"));
    }
  }

  TEST_CASE("kv-cache window: picking Qwen3-Next shows its Gated DeltaNet state row, flat at any length, and the plot") {
    const ModelPreset qwen = find_model_preset(load_model_presets(), "qwen3-next-80b-a3b");
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = language == "zh";
      const std::string base = "--show-kv-cache --size 1920x1080 --language " + language;
      const WindowRun first = run_window("kv_cache_state_" + language + "_first", base);
      REQUIRE(first.layout.at("widgets").contains("kv.model"));
      CHECK_FALSE(first.layout["widgets"].contains("kv.state.linear"));  // the first GQA preset has no state
      const std::string combo = centre(first.layout["widgets"]["kv.model"]);
      const WindowRun open = run_window("kv_cache_state_" + language + "_open", base + " --pointer " + combo + " --clicks 4 --frames 8");
      std::string item;
      for (const auto& t : open.layout["texts"])
        if (t["text"] == qwen.label && t["window"].get<std::string>().rfind("##Combo", 0) == 0) item = centre(t);
      REQUIRE_FALSE(item.empty());
      const WindowRun picked = run_window("kv_cache_state_" + language,
                                          base + " --pointer '" + combo + ";" + item + "' --clicks 4,8 --frames 14");
      const std::vector<std::string> kv = texts_of(picked, "###kv_cache");
      INFO(joined(kv));
      CHECK(shows(kv, qwen.label));
      // The Gated DeltaNet row: 36 layers, 32 × 128 × 128 + 8192 × 4 = 557 056 elements of state per layer,
      // 557 056 × 2 B = 1 114 112 B = 1.06 MiB per layer, × 36 = 40 108 032 B = 38.2 MiB, at any length.
      KvCacheInput in = kv_cache_input(qwen);
      in.seq = qwen.context;
      const KvCacheReport r = kv_cache_report(in);
      REQUIRE(r.layer_types.size() == 2);
      REQUIRE(r.layer_types[0].state_bytes_per_layer == 1114112);
      REQUIRE(r.layer_types[0].bytes == 40108032);
      CHECK(shows(kv, zh ? "Gated DeltaNet 状态" : "Gated DeltaNet state"));
      CHECK(has_text(kv, "36"));
      CHECK(shows(kv, zh ? "状态：每层 557056" : "state: 557056 per layer"));
      CHECK(shows(kv, "32 × 128 × 128 + 8192 × 4"));
      CHECK(shows(kv, "38.2 MiB"));
      CHECK(shows(kv, zh ? "任意长度都一样" : "at any length"));
      CHECK(shows(kv, zh ? "Gated DeltaNet 状态：每层 1.06 MiB，任意长度都一样（36 层：每个序列 38.2 MiB）"
                         : "Gated DeltaNet state: 1.06 MiB per layer at any length (36 layers: 38.2 MiB per sequence)"));
      // The 12 full layers at 262 144 tokens: 12 × 2 × 2 × 256 × 2 B × 262 144 = 6 GiB; the total 6.04 GiB; every
      // layer full attention 24 GiB, 3.98 → "4.0" times as much.
      REQUIRE(r.bytes == int64_t(6442450944) + 40108032);
      CHECK(has_text(kv, "12"));
      CHECK(has_text(kv, "6.00 GiB"));
      CHECK(shows(kv, zh ? "此模型缓存 6.04 GiB（262144 个词元" : "This model holds 6.04 GiB at 262144 tokens"));
      CHECK(shows(kv, zh ? "若每层都是全注意力，要缓存 24.0 GiB，是它的 4.0 倍" : "With every layer full attention it would hold 24.0 GiB: 4.0 times as much"));
      // The layout records of the new rows and the plot.
      const auto& widgets = picked.layout.at("widgets");
      CHECK(widgets.contains("kv.layer_types"));
      CHECK(widgets.contains("kv.state.linear"));
      REQUIRE(widgets.contains("kv.growth_plot"));
      CHECK(widgets["kv.growth_plot"]["h"].get<double>() > 100);  // a plot, not a line of text
      CHECK(shows(kv, zh ? "每层都是全注意力" : "every layer full attention"));
      CHECK(shows(kv, zh ? "其中固定大小的状态：38.2 MiB" : "its fixed-size states: 38.2 MiB"));
    }
  }

  TEST_CASE("kv-cache window: the custom row's Mamba-2 + full layout, picked with real clicks, shows its state row") {
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = language == "zh";
      const std::string base = "--show-kv-cache --size 1920x1080 --language " + language;
      // The text of `label` in an open combo list of `run`, as a pointer position.
      auto item_of = [](const WindowRun& run, const std::string& label) {
        for (const auto& t : run.layout["texts"])
          if (t["text"] == label && t["window"].get<std::string>().rfind("##Combo", 0) == 0) return centre(t);
        return std::string();
      };
      const WindowRun first = run_window("kv_cache_custom_" + language + "_first", base);
      const std::string combo = centre(first.layout.at("widgets").at("kv.model"));
      const WindowRun open = run_window("kv_cache_custom_" + language + "_open", base + " --pointer " + combo + " --clicks 4 --frames 8");
      const std::string custom = item_of(open, zh ? "自定义" : "custom");
      REQUIRE_FALSE(custom.empty());
      const std::string to_custom = " --pointer '" + combo + ";" + custom;
      const WindowRun custom_run = run_window("kv_cache_custom_" + language + "_row", base + to_custom + "' --clicks 4,8 --frames 14");
      REQUIRE(custom_run.layout.at("widgets").contains("kv.layout"));
      const std::string layout = centre(custom_run.layout["widgets"]["kv.layout"]);
      const WindowRun layouts = run_window("kv_cache_custom_" + language + "_layouts",
                                           base + to_custom + ";" + layout + "' --clicks 4,8,12 --frames 16");
      const std::string mamba = item_of(layouts, zh ? "Mamba-2 + 全注意力" : "Mamba-2 + full");
      REQUIRE_FALSE(mamba.empty());
      const WindowRun picked = run_window("kv_cache_custom_" + language,
                                          base + to_custom + ";" + layout + ";" + mamba + "' --clicks 4,8,12,16 --frames 22");
      const std::vector<std::string> kv = texts_of(picked, "###kv_cache");
      INFO(joined(kv));
      // The custom row keeps the last preset's sizes (the first GQA preset, Llama-2-70B: 80 layers); the Mamba-2
      // layout starts at 9 of 10 layers, 72, with 128 heads of 64, d_state 128, 1 group, a convolution of 4:
      // 128 · 64 · 128 + (128 · 64 + 2 · 1 · 128) · 4 = 1 048 576 + 33 792 = 1 082 368 elements, 2 164 736 B in fp16
      // = 2.06 MiB per layer, × 72 = 155 860 992 B = 149 MiB.
      CHECK(shows(kv, zh ? "Mamba-2 状态" : "Mamba-2 state"));
      CHECK(shows(kv, zh ? "状态：每层 1082368" : "state: 1082368 per layer"));
      CHECK(shows(kv, "128×64×128 + 8448×4"));  // heads × head_dim × d_state + conv_dim × d_conv
      CHECK(shows(kv, zh ? "Mamba-2 状态：每层 2.06 MiB，任意长度都一样（72 层：每个序列 149 MiB）"
                         : "Mamba-2 state: 2.06 MiB per layer at any length (72 layers: 149 MiB per sequence)"));
      CHECK(shows(kv, zh ? "状态层数" : "state layers"));
      CHECK(shows(kv, zh ? "状态维 d_state" : "d_state"));
      CHECK(picked.layout.at("widgets").contains("kv.state.mamba2"));
      CHECK(picked.layout["widgets"].contains("kv.growth_plot"));
    }
  }
}

}  // namespace attnscope::test
