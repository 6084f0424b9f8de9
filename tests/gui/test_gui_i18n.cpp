// The Chinese translation file (assets/i18n/zh.json) against the window's sources: every English key the
// sources pass to tr(), trf(), TrKey() or WindowTitle() as a literal has a translation, so a new
// English label without its Chinese fails here instead of showing English in the 中文 UI. The file
// is read with the window's own reader (core/translations.h), which also refuses translations whose
// printf conversions differ from the English. Strings the window looks up at run time without a
// translation are caught by the layout sweep (test_gui_layout.cpp, "untranslated").
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attnscope/attention/trace.h"
#include "core/translations.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

const std::filesystem::path source_dir(ATTNSCOPE_SOURCE_DIR);
const std::filesystem::path zh_file = source_dir / "assets" / "i18n" / "zh.json";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Use {
  std::string key, where;
};

// Every literal first argument of tr( / trf( / TrKey( / WindowTitle( in the window's sources: a
// string literal, or adjacent literals on following lines. C's escapes \" \\ \n \t are JSON's, so
// JSON decodes each literal. A variable argument is skipped: its keys are marked with TrKey where
// they are defined.
std::vector<Use> literal_keys() {
  static const std::regex call(R"re(\b(tr|trf|TrKey|WindowTitle)\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+))re");
  static const std::regex literal(R"re("(?:[^"\\]|\\.)*")re");
  std::vector<Use> uses;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir / "app" / "gui")) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".h") continue;
    const std::string text = read_text(entry.path());
    for (auto m = std::sregex_iterator(text.begin(), text.end(), call); m != std::sregex_iterator(); ++m) {
      const std::string literals = (*m)[2].str();
      std::string key;
      for (auto l = std::sregex_iterator(literals.begin(), literals.end(), literal); l != std::sregex_iterator(); ++l)
        key += nlohmann::json::parse(l->str()).get<std::string>();
      const auto line = 1 + std::count(text.begin(), text.begin() + m->position(), '\n');
      uses.push_back({key, entry.path().filename().string() + ":" + std::to_string(line)});
    }
  }
  return uses;
}

}  // namespace

TEST_SUITE("gui_chinese") {
  TEST_CASE("i18n zh.json: every tr()/trf()/TrKey()/WindowTitle() literal in app/gui has a translation") {
    const Translations zh = load_translations(zh_file);
    const std::vector<Use> uses = literal_keys();
    // The scan finds the window's labels (a broken scan would pass vacuously).
    REQUIRE(uses.size() > 200);
    REQUIRE(zh.strings.size() > 200);
    int missing = 0;
    std::set<std::string> used;
    for (const Use& u : uses) {
      used.insert(u.key);
      if (zh.strings.count(u.key)) continue;
      ++missing;
      FAIL_CHECK(u.where << ": \"" << u.key << "\" has no entry in assets/i18n/zh.json");
    }
    CHECK(missing == 0);
    // The exported figures' words (export.h figure_word_keys) are looked up by the engine's figures.
    for (const std::string& key : figure_word_keys()) used.insert(key);
    // And the file holds no stale entry that the sources no longer use.
    for (const auto& [english, chinese] : zh.strings)
      CHECK_MESSAGE(used.count(english), "zh.json translates \"" << english << "\", which no source passes to tr()");
  }

  TEST_CASE("i18n zh.json: read without warnings: conversions match the English, no key twice, none empty") {
    const Translations zh = load_translations(zh_file);
    CHECK(zh.language == "zh");
    for (const std::string& w : zh.warnings) FAIL_CHECK(w);
  }

  TEST_CASE("i18n zh.json: every step of the engine's shape trace is translated by its key") {
    const Translations zh = load_translations(zh_file);
    // GQA with the causal mask and biases: the trace with every step there is.
    AttentionShape shape;
    shape.d_model = 64;
    shape.heads = 4;
    shape.groups = 2;
    std::set<std::string> keys;
    std::vector<TraceStep> steps = shape_trace(shape, 6, true, true).steps;
    TraceShape checkpoint{6, 64, 4, 2, 16, true, true, true, true};
    checkpoint.qk_norm = true;  // a checkpoint's layer adds RoPE, and Qwen3's / Gemma 3's q/k norms
    for (const TraceStep& step : shape_trace(checkpoint).steps) steps.push_back(step);
    checkpoint.qk_norm_whole = true;  // OLMoE's q/k norms over the whole projection
    for (const TraceStep& step : shape_trace(checkpoint).steps) steps.push_back(step);
    TraceShape mla{6, 64, 4, 4, 24, false, false, true, true};  // DeepSeek's latent attention, both query paths
    mla.kv_latent = 16, mla.rope_dim = 8, mla.v_dim = 16, mla.softmax_scale = 0.2;
    for (const int64_t q_latent : {int64_t(0), int64_t(12)}) {
      mla.q_latent = q_latent;
      for (const TraceStep& step : mla_shape_trace(mla).steps) steps.push_back(step);
    }
    // The scene model's windows, sinks and positions: RoPE's angles, ALiBi's and relpos's biases, the masks.
    TraceShape variants{6, 64, 4, 2, 16, false, false, true, true};
    variants.rope_angles = variants.alibi = variants.relpos = variants.sink_logits = true;
    for (const int64_t sinks : {int64_t(0), int64_t(2)}) {
      variants.window = 3, variants.sinks = sinks;
      for (const TraceStep& step : shape_trace(variants).steps) steps.push_back(step);
    }
    // The scene model's MLA (both query paths) and differential attention.
    TraceShape latent{6, 64, 4, 4, 24, false, false, true, true};
    latent.kv_latent = 16, latent.rope_dim = 8, latent.v_dim = 16, latent.softmax_scale = 0.2;
    for (const int64_t q_latent : {int64_t(0), int64_t(12)}) {
      latent.q_latent = q_latent;
      for (const TraceStep& step : latent_attention_trace(latent).steps) steps.push_back(step);
    }
    TraceShape differential{6, 64, 4, 2, 16, true, true, false, true};
    differential.differential = true, differential.lambda = 0.3, differential.lambda_init = 0.2;
    for (const TraceStep& step : differential_trace(differential).steps) steps.push_back(step);
    // The seeded layer without a softmax, every kind (linear with and without its normaliser).
    for (const char* kind : {"linear", "retention", "mamba2", "deltanet", "gated-deltanet"})
      for (const bool normalize : {true, false}) {
        TraceShape linear{6, 64, 4, 4, 16, false, false, false, true};
        linear.linear = kind, linear.linear_normalize = normalize;
        for (const TraceStep& step : linear_layer_trace(linear).steps) steps.push_back(step);
      }
    // A checkpoint's Gated DeltaNet layer (Qwen3-Next): key and value heads, the short convolution, the gated norm.
    TraceShape deltanet{6, 64, 4, 2, 16, false, false, false, true};
    deltanet.linear = "gated-deltanet", deltanet.v_dim = 12, deltanet.conv_kernel = 4;
    for (const TraceStep& step : gated_deltanet_layer_trace(deltanet).steps) steps.push_back(step);
    // A checkpoint's Mamba-2 layer (Granite 4.0-H): in_proj's three parts, B and C per group, the gated norm.
    TraceShape mamba{6, 64, 4, 2, 16, false, false, false, true};
    mamba.linear = "mamba2", mamba.v_dim = 12, mamba.conv_kernel = 4;
    for (const TraceStep& step : granite_mamba2_layer_trace(mamba, true).steps) steps.push_back(step);
    for (const TraceStep& step : steps) {
      keys.insert(step.key);
      CHECK_MESSAGE(zh.trace_steps.count(step.key), "trace step \"" << step.key << "\" (" << step.name << ") has no translation");
    }
    REQUIRE(keys.size() >= 14);
    for (const auto& [key, step] : zh.trace_steps)
      CHECK_MESSAGE(keys.count(key), "zh.json translates trace step \"" << key << "\", which the engine no longer has");
  }

  TEST_CASE("i18n zh.json: an entry that is not a pure formula or name has some Chinese in it") {
    // Keys with an English word of four or more letters (outside printf conversions) must translate it.
    const std::regex word("[A-Za-z]{4,}");
    const std::regex technical("softmax|Ctrl|KiB|MiB|GiB|float32|PyTorch|Linear|Ainslie|npy|attnscope|JPEG|MHSA|d_model|d_head");
    for (const auto& [en, zh] : load_translations(zh_file).strings) {
      const std::string words = std::regex_replace(en, technical, "");
      if (!std::regex_search(words, word)) continue;
      bool cjk = false;
      for (unsigned char c : zh) cjk = cjk || c >= 0xE3;  // UTF-8 lead bytes of U+3000 and above (CJK, fullwidth)
      CHECK_MESSAGE(cjk, "entry \"" << en << "\" → \"" << zh << "\" has no Chinese");
    }
  }

  TEST_CASE("i18n: a missing or broken translation file shows English and says why, never a crash") {
    // A copy of assets/ whose zh.json is missing, then not JSON, then with a wrong conversion.
    const auto assets = attnscope::test::test_tmp() / "gui" / "assets_i18n";
    std::filesystem::remove_all(assets);
    std::filesystem::create_directories(assets);
    std::filesystem::copy(source_dir / "assets", assets, std::filesystem::copy_options::recursive);
    const auto zh_copy = assets / "i18n" / "zh.json";
    const std::string good = read_text(zh_copy);
    const std::string env = "ATTNSCOPE_ASSETS=" + shell_quote(assets.string()) + " XDG_CONFIG_HOME=" +
                            shell_quote((assets / "config").string());
    struct Case {
      const char* name;
      std::string contents;  // empty: no file
      const char* says;
    };
    std::string wrong_conversion = good;
    const std::string from = "\"result in %.0f ms\": \"结果用时 %.0f 毫秒\"";
    REQUIRE(wrong_conversion.find(from) != std::string::npos);
    wrong_conversion.replace(wrong_conversion.find(from), from.size(), "\"result in %.0f ms\": \"结果用时 %s 毫秒\"");
    for (const Case& c : {Case{"missing", "", "zh.json"}, Case{"broken", "{\"language\": \"zh\", \"strings\": {", "not valid JSON"},
                          Case{"not_strings", "{\"language\": \"zh\", \"strings\": [1, 2]}", "\"strings\" is missing or not an object"}}) {
      INFO(c.name);
      std::filesystem::remove(zh_copy);
      if (!c.contents.empty()) std::ofstream(zh_copy) << c.contents;
      const WindowRun w = run_window(std::string("i18n_") + c.name, "--language zh", env);
      const std::string problem = w.layout.at("translation_problem").get<std::string>();
      CHECK(problem.find(c.says) != std::string::npos);
      CHECK(problem.find("English") != std::string::npos);
      CHECK(w.layout.at("language") == "zh");  // the lessons stay in Chinese; the window's words in English
      CHECK(w.run.err.find(c.says) != std::string::npos);
      bool english_menu = false;  // the menu bar's first menu, in the fallback language
      for (const auto& t : w.layout.at("texts")) english_menu = english_menu || t.at("text") == "File";
      CHECK(english_menu);
    }
    // One bad entry costs only that entry: the rest of the file is used, the entry shows English.
    std::ofstream(zh_copy) << wrong_conversion;
    const WindowRun w = run_window("i18n_wrong_conversion", "--language zh", env);
    CHECK(w.layout.at("translation_problem") == "");
    CHECK(w.run.err.find("\"result in %.0f ms\": the translation's printf conversions differ") != std::string::npos);
  }
}

}  // namespace attnscope::test
