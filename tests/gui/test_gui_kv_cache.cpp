// The KV-cache calculator's layer types: picking DeepSeek-V2 in the model combo shows its MLA row
// (512 + 64 elements per token per layer) and the MHA cache it replaces, in English and Chinese.
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
}

}  // namespace attnscope::test
