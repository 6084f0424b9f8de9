// The Checkpoint window through scripted runs with --checkpoint on the tiny fixtures: what it shows of
// the model, the Heads view's layer slider choosing the layer drawn, the top-5 next tokens matching
// `attnscope compute --checkpoint` (tokens.json "next"), bad folders shown on screen, never a crash, and
// Convert to GQA/MQA (the K/V heads slider: new group frames, the converted G, the drift per head), and
// attentions computed elsewhere (README's snippet format, and compute --checkpoint's own output) opened
// from their folder or file.
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "attnscope/attention/head_stats.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& name) { return fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models" / name; }


bool has_text(const std::vector<std::string>& texts, const std::string& text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}

// The value cell after a key cell of an info table ("" when the key is not shown).
std::string value_of(const std::vector<std::string>& texts, const std::string& key) {
  const auto it = std::find(texts.begin(), texts.end(), key);
  return it == texts.end() || it + 1 == texts.end() ? std::string() : *(it + 1);
}


std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

const std::string ids = "5 17 42 9 33 60 5 17 42";  // within every fixture's vocabulary (64)

}  // namespace

TEST_SUITE("gui_checkpoint") {
  TEST_CASE("checkpoint window: --checkpoint shows the model's name, family, L, H, G, d_head and parameters") {
    const std::string name = "llama_gqa_bf16_sharded";
    const auto m = model::open(fixture(name));
    const WindowRun w = run_window("checkpoint_info", "--checkpoint " + shell_quote(fixture(name).string()) +
                                                          " --text " + shell_quote("ids: " + ids));
    const std::vector<std::string> texts = texts_of(w, "###checkpoint");
    INFO(joined(texts));
    CHECK(has_text(texts, name));
    CHECK(has_text(texts, "llama (Llama)"));
    CHECK(has_text(texts, std::to_string(m->config.layers)));
    CHECK(has_text(texts, std::to_string(m->config.heads)));
    CHECK(has_text(texts, std::to_string(m->config.kv_heads) + "  (GQA)"));
    CHECK(has_text(texts, std::to_string(m->config.head_dim)));
    CHECK(has_text(texts, with_commas(m->parameter_count())));
    CHECK(joined(texts).find(" s\n") != std::string::npos);  // the load time
    // The Heads view draws the model's heads in its real K/V groups.
    const auto& heads = w.layout.at("heads");
    REQUIRE(int(heads.size()) == m->config.heads);
    const int per_group = m->config.heads / m->config.kv_heads;
    for (int h = 0; h < m->config.heads; ++h) {
      CHECK(heads[size_t(h)].at("kv_group").get<int>() == h / per_group);
      CHECK(heads[size_t(h)].at("tokens").get<int>() == 9);
    }
    CHECK(has_text(texts_of(w, "###heads"), name + " · layer 0 of 2"));
  }

  TEST_CASE("checkpoint window: a Qwen3 checkpoint shows its K/V groups, head width, q/k norm step and KV-cache row; Phi-3 its groups") {
    const std::string name = "qwen3_gqa_bf16_tied";  // H = 4, G = 2, head_dim 12 ≠ 32 / 4
    const auto m = model::open(fixture(name));
    const std::string args = "--checkpoint " + shell_quote(fixture(name).string()) + " --text " + shell_quote("ids: " + ids);
    const WindowRun w = run_window("checkpoint_qwen3", args + " --show-kv-cache");
    const std::vector<std::string> card = texts_of(w, "###checkpoint");
    INFO(joined(card));
    CHECK(has_text(card, name));
    CHECK(has_text(card, "qwen3 (Llama)"));
    CHECK(has_text(card, "2  (GQA)"));
    CHECK(has_text(card, "12"));
    CHECK(has_text(card, with_commas(m->parameter_count())));
    CHECK(has_text(card, "BF16"));
    const auto& heads = w.layout.at("heads");
    REQUIRE(heads.size() == 4);
    for (int h = 0; h < 4; ++h) {
      CHECK(heads[size_t(h)].at("kv_group").get<int>() == h / 2);
      CHECK(heads[size_t(h)].at("tokens").get<int>() == 9);
    }
    CHECK(has_text(texts_of(w, "###heads"), name + " · layer 0 of 2"));
    // The KV-cache calculator starts from this model's own L, H, G and d_head.
    const std::vector<std::string> kv = texts_of(w, "###kv_cache");
    INFO(joined(kv));
    CHECK(shows(kv, "L = 2 layers, H = 4 heads, G = 2 kv heads, d_head = 12"));
    // The model combo names the checkpoint, shortened with "…" where the folder name is longer than the frame.
    bool named = false;
    const std::string full = "Checkpoint: " + name, ellipsis = "…";
    for (const std::string& t : kv)
      if (t == full || (t.size() > ellipsis.size() + 12 && t.compare(t.size() - ellipsis.size(), ellipsis.size(), ellipsis) == 0 &&
                        full.rfind(t.substr(0, t.size() - ellipsis.size()), 0) == 0))
        named = true;
    CHECK(named);
    // The Shapes view traces the q/k norm between the split and RoPE, on [H, T, d_head].
    REQUIRE(w.layout.at("widgets").contains("menu.view.shapes"));
    const WindowRun shapes = run_window("checkpoint_qwen3_shapes", args + " --pointer " +
                                                                       centre_of(w.layout["widgets"]["menu.view.shapes"]) +
                                                                       " --clicks 4 --frames 10");
    const std::vector<std::string> trace = texts_of(shapes, "###shapes");
    INFO(joined(trace));
    CHECK(shows(trace, "normalise Q, K per head"));
    CHECK(has_text(trace, "[4, 9, 12]"));
    const auto norm_at = std::find_if(trace.begin(), trace.end(), [](const std::string& t) { return t.find("normalise Q, K") != std::string::npos; });
    const auto rope_at = std::find_if(trace.begin(), trace.end(), [](const std::string& t) { return t.find("rotate Q, K") != std::string::npos; });
    CHECK(norm_at < rope_at);
    // Phi-3 (fused projections split at load): its two K/V groups of two.
    const WindowRun phi = run_window("checkpoint_phi3", "--checkpoint " + shell_quote(fixture("phi3_gqa_f16_sharded").string()) +
                                                            " --text " + shell_quote("ids: " + ids));
    CHECK(has_text(texts_of(phi, "###checkpoint"), "phi3 (Llama)"));
    const auto& phi_heads = phi.layout.at("heads");
    REQUIRE(phi_heads.size() == 4);
    for (int h = 0; h < 4; ++h) CHECK(phi_heads[size_t(h)].at("kv_group").get<int>() == h / 2);
  }

  TEST_CASE("checkpoint window: a GraniteMoE checkpoint (fused experts, multipliers) opens as Llama + MoE with its GQA groups") {
    const std::string name = "granitemoe_31_1b_bf16";  // H = 4, G = 2, 8 experts top-3, BF16
    const auto m = model::open(fixture(name));
    const WindowRun w = run_window("checkpoint_granitemoe", "--checkpoint " + shell_quote(fixture(name).string()) +
                                                                " --text " + shell_quote("ids: " + ids) + " --layer 1");
    const std::vector<std::string> card = texts_of(w, "###checkpoint");
    INFO(joined(card));
    CHECK(has_text(card, "granitemoe (Llama + MoE)"));
    CHECK(has_text(card, with_commas(m->parameter_count())));
    CHECK(has_text(card, "BF16"));
    const auto& heads = w.layout.at("heads");
    REQUIRE(heads.size() == 4);
    for (int h = 0; h < 4; ++h) CHECK(heads[size_t(h)].at("kv_group").get<int>() == h / 2);
    CHECK(has_text(texts_of(w, "###heads"), name + " · layer 1 of 2"));
    // OLMoE's whole-projection k_norm: the Model window says why its K/V heads are not pooled.
    const WindowRun olmoe = run_window("checkpoint_olmoe", "--checkpoint " + shell_quote(fixture("olmoe_1b_7b_bf16").string()) +
                                                               " --text " + shell_quote("ids: " + ids));
    const std::vector<std::string> model_card = texts_of(olmoe, "###model");
    INFO(joined(model_card));
    CHECK(shows(model_card, "Not for this model: its k_norm normalises all K/V heads together"));
    CHECK(!olmoe.layout.at("widgets").contains("checkpoint.kv_heads"));
    CHECK(!shows(texts_of(olmoe, "###checkpoint"), "The Model window's K/V heads slider converts it"));
  }

  TEST_CASE("checkpoint window: a DeepSeek-V2 checkpoint shows H groups of one head, the shared latent, its own latent cache, and no conversion") {
    const std::string name = "deepseek_v2_mla_moe_bf16";  // H = 4, latent 16 + rotary key 8, q·k width 16, v 6
    const auto m = model::open(fixture(name));
    const std::string args = "--checkpoint " + shell_quote(fixture(name).string()) + " --text " + shell_quote("ids: " + ids);
    const WindowRun w = run_window("checkpoint_deepseek", args + " --show-kv-cache --size 1920x1400 --ui-scale 0.8");
    const std::vector<std::string> card = texts_of(w, "###checkpoint");
    INFO(joined(card));
    CHECK(has_text(card, "deepseek_v2 (MLA + MoE)"));
    // The kv-heads row says what MLA caches (issue 40: not "kv heads G 4 (MHA)").
    CHECK(has_text(card, "cached per token"));
    CHECK(shows(card, "latent c_KV 16 + rotary key 8 values (MLA: no K/V heads are cached)"));
    CHECK(!has_text(card, "4  (MHA)"));
    CHECK(!has_text(card, "kv heads G"));
    CHECK(has_text(card, with_commas(m->parameter_count())));
    CHECK(has_text(card, "BF16"));
    CHECK(shows(card, "all of them are made from one shared latent c_KV of 16 values and one shared rotary key of 8 values"));
    CHECK(shows(card, "KV cache per token, per layer: 16 + 8 = 24 values"));
    CHECK(!shows(card, "K/V heads slider"));
    const auto& heads = w.layout.at("heads");
    REQUIRE(heads.size() == 4);
    for (int h = 0; h < 4; ++h) {
      CHECK(heads[size_t(h)].at("kv_group").get<int>() == h);  // every head its own keys
      CHECK(heads[size_t(h)].at("tokens").get<int>() == 9);
    }
    CHECK(has_text(texts_of(w, "###heads"), name + " · layer 0 of 2"));
    // Above the heads, what they all share: the latent c_KV [T × 16] and the rotary key [T × 8], drawn as
    // two strips of colours (on a diverging scale, so not the window's gray background).
    const std::vector<std::string> heads_texts = texts_of(w, "###heads");
    CHECK(shows(heads_texts, "Shared by all 4 heads (multi-head latent attention)"));
    CHECK(has_text(heads_texts, "c_KV [9 × 16]"));
    CHECK(has_text(heads_texts, "rotary key [9 × 8]"));
    REQUIRE(w.layout.at("widgets").contains("heads.shared_latent"));
    const auto& strip = w.layout["widgets"]["heads.shared_latent"];
    std::set<uint32_t> colours;
    const int y = int(strip["y"].get<double>() + 4);
    for (int x = int(strip["x"].get<double>()) + 2; x < int(strip["x"].get<double>() + strip["w"].get<double>()) - 2; x += 3) {
      const Rgba p = w.png.at(x, y);
      colours.insert(uint32_t(p.r) << 16 | uint32_t(p.g) << 8 | p.b);
    }
    CHECK(colours.size() >= 8);  // the strips' cells, not one flat colour
    // A checkpoint without latent attention draws no such strip.
    const WindowRun plain = run_window("checkpoint_deepseek_plain", "--checkpoint " + shell_quote(fixture("qwen2_gqa").string()) +
                                                                        " --text " + shell_quote("ids: " + ids));
    CHECK(!plain.layout.at("widgets").contains("heads.shared_latent"));
    // The Model window's card says why there is no GQA/MQA conversion.
    const std::vector<std::string> model_card = texts_of(w, "###model");
    INFO(joined(model_card));
    CHECK(shows(model_card, "Not for multi-head latent attention: there are no K/V heads to pool."));
    // The KV-cache calculator gives the open model's latent cache: 2 layers × 24 values × 2 bytes (fp16).
    const std::vector<std::string> kv = texts_of(w, "###kv_cache");
    INFO(joined(kv));
    CHECK(shows(kv, "it caches 16 + 8 = 24 values per token per layer"));
    CHECK(shows(kv, "96 B per token for all 2 layers"));
    // The Shapes view traces the latent: compress, expand per head, the shared rotary key; its cache row.
    REQUIRE(w.layout.at("widgets").contains("menu.view.shapes"));
    const WindowRun shapes = run_window("checkpoint_deepseek_shapes", args + " --pointer " +
                                                                          centre_of(w.layout["widgets"]["menu.view.shapes"]) +
                                                                          " --clicks 4 --frames 10 --size 1920x1400 --ui-scale 0.8");
    const std::vector<std::string> trace = texts_of(shapes, "###shapes");
    INFO(joined(trace));
    CHECK(shows(trace, "compress K, V (cached)"));
    CHECK(has_text(trace, "[9, 24]"));
    CHECK(shows(trace, "append the shared rotary key"));
    CHECK(has_text(trace, "[4, 9, 6]"));  // O = P·V: the value width 6
    CHECK(shows(trace, "r + d_R = 16 + 8 = 24 numbers"));
  }

  TEST_CASE("checkpoint window: --layer and a click on the Heads view's layer slider choose the layer drawn") {
    const std::string dir = shell_quote(fixture("qwen2_gqa").string());
    const std::string args = "--checkpoint " + dir + " --text " + shell_quote("ids: " + ids);
    const WindowRun first = run_window("checkpoint_layer0", args);
    CHECK(has_text(texts_of(first, "###heads"), "qwen2_gqa · layer 0 of 2"));
    const WindowRun flag = run_window("checkpoint_layer1", args + " --layer 1");
    CHECK(has_text(texts_of(flag, "###heads"), "qwen2_gqa · layer 1 of 2"));
    // A click at the slider's right end picks the last layer, which the Heads view then draws.
    REQUIRE(first.layout.at("widgets").contains("heads.layer"));
    const auto& slider = first.layout["widgets"]["heads.layer"];
    char pointer[64];
    std::snprintf(pointer, sizeof pointer, "%d,%d", int(slider["x"].get<double>() + slider["w"].get<double>() - 3),
                  int(slider["y"].get<double>() + slider["h"].get<double>() / 2));
    const WindowRun clicked = run_window("checkpoint_layer_click", args + " --pointer " + pointer + " --clicks 4 --frames 8");
    CHECK(has_text(texts_of(clicked, "###heads"), "qwen2_gqa · layer 1 of 2"));
  }

  TEST_CASE("checkpoint window: the top-5 next tokens are compute --checkpoint's tokens.json \"next\"") {
    std::string comma_ids = ids;
    std::replace(comma_ids.begin(), comma_ids.end(), ' ', ',');
    struct Case {
      std::string name, cli_input, window_text;
    };
    // Ids on a checkpoint without a tokenizer, and text through the checkpoint's own tokenizer.json.
    const std::string sentence = "the cat sat on the mat";
    for (const Case& c : {Case{"gpt2_prefix_f32", "--ids " + comma_ids, "ids: " + ids},
                          Case{"llama_gqa_bf16_sharded", "--ids " + comma_ids, "ids: " + ids},
                          Case{"llama_gqa_bf16_sharded", "--text " + shell_quote(sentence), sentence},
                          Case{"qwen3_gqa_bf16_tied", "--text " + shell_quote(sentence), sentence},
                          Case{"phi3_gqa_f16_sharded", "--ids " + comma_ids, "ids: " + ids}}) {
      const std::string& name = c.name;
      CAPTURE(name);
      CAPTURE(c.window_text);
      const fs::path out = fresh_dir("checkpoint_next_" + name);
      const CliRun cli = run_cli("compute --checkpoint " + shell_quote(fixture(name).string()) + " " + c.cli_input +
                                 " --out " + shell_quote(out.string()));
      REQUIRE_MESSAGE(cli.exit_code == 0, cli.err);
      const auto tokens = read_json(out / "tokens.json");
      const auto& last = tokens.at("next").back();
      // A screen tall enough for the whole Checkpoint panel, table included (at 720p it scrolls).
      const WindowRun w = run_window("checkpoint_next_" + name, "--checkpoint " + shell_quote(fixture(name).string()) +
                                                                    " --text " + shell_quote(c.window_text) +
                                                                    " --size 1920x1400 --ui-scale 0.8");
      // The heads are over the checkpoint's tokens (with its BOS for the text), not the seeded layer's words.
      CHECK(w.layout.at("heads").at(0).at("tokens").get<size_t>() == tokens.at("ids").size());
      const std::vector<std::string> texts = texts_of(w, "###checkpoint");
      INFO(joined(texts));
      // The table's rows in order: token, id, probability (the last position: no query selected).
      std::vector<std::string> shown;
      for (const std::string& t : texts) shown.push_back(t);
      size_t at = 0;
      REQUIRE(last.size() == 5);
      for (const auto& n : last) {
        char probability[32];
        std::snprintf(probability, sizeof probability, "%.4f", n.at("probability").get<double>());
        const std::string id = std::to_string(n.at("id").get<int>());
        const auto found = std::find(shown.begin() + long(at), shown.end(), id);
        REQUIRE_MESSAGE(found != shown.end(), "id " << id);
        REQUIRE(found + 1 != shown.end());
        CHECK(*(found + 1) == probability);
        at = size_t(found - shown.begin()) + 2;
      }
    }
  }

  TEST_CASE("checkpoint window: a truncated safetensors or a missing config.json is an error on screen") {
    const fs::path d = fresh_dir("checkpoint_bad");
    fs::copy(fixture("mistral_mha_f32"), d / "truncated", fs::copy_options::recursive);
    fs::resize_file(d / "truncated/model.safetensors", fs::file_size(d / "truncated/model.safetensors") - 100);
    fs::copy(fixture("mistral_mha_f32"), d / "no_config", fs::copy_options::recursive);
    fs::remove(d / "no_config/config.json");
    struct Bad {
      std::string folder, message;
    };
    for (const Bad& c : {Bad{"truncated", "model.safetensors' is not a valid safetensors file"},
                         Bad{"no_config", "config.json"}, Bad{"missing", "missing"}}) {
      CAPTURE(c.folder);
      const WindowRun w = run_window("checkpoint_bad_" + c.folder, "--checkpoint " + shell_quote((d / c.folder).string()));
      const std::vector<std::string> shown = texts_of(w, "###checkpoint");
      INFO(joined(shown));
      CHECK(shows(shown, "Error:"));
      CHECK(shows(shown, c.message));
      // The checkpoint asked for is the current model: its error stands where its heads would be, and no
      // heads of the seeded layer are drawn under its name.
      CHECK_FALSE(shows(shown, "No checkpoint open"));
      CHECK(shows(texts_of(w, "###heads"), c.message));
      CHECK(w.layout.at("heads").empty());
    }
  }

  TEST_CASE("checkpoint window: without a tokenizer, the model opens on a repeated sequence of its own ids") {
    const WindowRun w = run_window("checkpoint_no_tokenizer", "--checkpoint " + shell_quote(fixture("mistral_mha_f32").string()) +
                                                                  " --text " + shell_quote("The cat sat"));
    const std::vector<std::string> shown = texts_of(w, "###checkpoint");
    INFO(joined(shown));
    CHECK(shows(shown, "This checkpoint has no tokenizer"));
    CHECK(shows(shown, "ids: 1 2 3"));
    CHECK_FALSE(shows(shown, "Error:"));
    CHECK_FALSE(shows(texts_of(w, "###heads"), "Error:"));
    CHECK(shows(texts_of(w, "###model"), "It opened on a random sequence repeated once"));
    // 16 ids and the same 16 again: the fixture's 32 positions (its sliding window of 16 masks keys, it
    // does not shorten the input); the next tokens show their ids.
    CHECK(w.layout.at("heads").at(0).at("tokens").get<int>() == 32);
    CHECK(shows(shown, "#"));
  }

  TEST_CASE("checkpoint window: an interactive run remembers the checkpoints opened") {
    const fs::path config = fresh_dir("checkpoint_recent");
    const std::string env = "XDG_CONFIG_HOME=" + shell_quote(config.string());
    const std::string dir = fixture("qwen2_gqa").string();
    const CliRun first = run_app(env, "--checkpoint " + shell_quote(dir) + " --frames 4");
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    const fs::path saved = config / "attnscope" / "window.json";
    auto recent = read_json(saved).at("recent_checkpoints");
    REQUIRE(recent.size() == 1);
    CHECK(recent[0] == dir);
    // A run that opens nothing reads the list back and saves it again.
    const CliRun second = run_app(env, "--frames 4");
    REQUIRE_MESSAGE(second.exit_code == 0, second.err);
    recent = read_json(saved).at("recent_checkpoints");
    REQUIRE(recent.size() == 1);
    CHECK(recent[0] == dir);
  }

  TEST_CASE("checkpoint window: the K/V heads slider converts to MQA; the Heads view regroups, Head analysis shows the drift") {
    const std::string name = "llama_gqa_bf16_sharded";  // H = 4, G = 2
    const auto m = model::open(fixture(name));
    REQUIRE(m->config.heads == 4);
    REQUIRE(m->config.kv_heads == 2);
    const std::string args = "--checkpoint " + shell_quote(fixture(name).string()) + " --text " + shell_quote("ids: " + ids) +
                             // The Checkpoint window and Head analysis share the right column: both whole on screen,
                             // the drift at the end of the analysis.
                             " --size 1920x1400 --ui-scale 0.8";
    const WindowRun before = run_window("checkpoint_kv_before", args);
    // As trained: two K/V groups of two heads, no drift column.
    const auto& heads_before = before.layout.at("heads");
    REQUIRE(heads_before.size() == 4);
    for (int h = 0; h < 4; ++h) CHECK(heads_before[size_t(h)].at("kv_group").get<int>() == h / 2);
    CHECK(has_text(texts_of(before, "###model"), "2  (GQA, as trained)"));  // the Model window is the card
    CHECK_FALSE(shows(texts_of(before, "###analysis"), "Drift from the original model"));
    // A click at the slider's left end picks 1 K/V head (MQA).
    REQUIRE(before.layout.at("widgets").contains("checkpoint.kv_heads"));
    const auto& slider = before.layout["widgets"]["checkpoint.kv_heads"];
    char pointer[64];
    std::snprintf(pointer, sizeof pointer, "%d,%d", int(slider["x"].get<double>() + 3),
                  int(slider["y"].get<double>() + slider["h"].get<double>() / 2));
    // Then the card's "Show each head's drift" button opens Head analysis (it would cover the card).
    const WindowRun converted = run_window("checkpoint_kv_mqa_first", args + " --pointer " + pointer + " --clicks 4 --frames 10");
    REQUIRE(converted.layout.at("widgets").contains("model.show_drift"));
    const auto& drift_button = converted.layout["widgets"]["model.show_drift"];
    const std::string both = std::string(pointer) + ";" + centre_of(drift_button);
    const WindowRun after = run_window("checkpoint_kv_mqa", args + " --pointer " + shell_quote(both) + " --clicks 4,10 --frames 16");
    const std::vector<std::string> shown = texts_of(after, "###model");
    INFO(joined(shown));
    CHECK(has_text(texts_of(after, "###checkpoint"), "1  (MQA, converted from 2)"));
    const auto& heads_after = after.layout.at("heads");
    REQUIRE(heads_after.size() == 4);
    for (int h = 0; h < 4; ++h) CHECK(heads_after[size_t(h)].at("kv_group").get<int>() == 0);  // one frame colour
    CHECK(has_text(shown, "1  (MQA)"));
    CHECK(has_text(shown, "1  (MQA, converted from 2)"));
    CHECK(has_text(texts_of(after, "###heads"), name + " · layer 0 of 2 · K/V pooled from 2 heads"));
    // The drift the window shows is the engine's: layer 0 of the MQA model against the checkpoint's.
    std::vector<int32_t> id_list;
    for (int id : {5, 17, 42, 9, 33, 60, 5, 17, 42}) id_list.push_back(id);
    const model::ForwardResult original = model::forward(*m, id_list);
    const model::ForwardResult mqa = model::forward(*model::convert_kv_heads(*m, 1), id_list);
    Tensor3 a, b;
    for (int h = 0; h < 4; ++h) {
      a.push_back(mqa.attention(0, h));
      b.push_back(original.attention(0, h));
    }
    const std::vector<double> drift = head_drift(a, b);
    const std::vector<std::string> analysis = texts_of(after, "###analysis");
    INFO(joined(analysis));
    CHECK(shows(analysis, "Drift from the original model"));
    CHECK(has_text(analysis, "drift"));  // the table's column
    double mean = 0;
    for (int h = 0; h < 4; ++h) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3f", drift[size_t(h)]);
      CAPTURE(h);
      CHECK(has_text(analysis, text));
      mean += drift[size_t(h)] / 4;
    }
    char summary[96];
    std::snprintf(summary, sizeof summary, "Mean drift over the 4 heads of layer 0: %.3f nats.", mean);
    CHECK(shows(shown, summary));
    CHECK(shows(shown, "Top-1 next token after query 8"));
    // In Chinese: the slider's line and the summary are translated, nothing drawn untranslated.
    const WindowRun zh_before = run_window("checkpoint_kv_zh_before", "--language zh " + args);
    const auto& zh_slider = zh_before.layout.at("widgets").at("checkpoint.kv_heads");
    std::snprintf(pointer, sizeof pointer, "%d,%d", int(zh_slider["x"].get<double>() + 3),
                  int(zh_slider["y"].get<double>() + zh_slider["h"].get<double>() / 2));
    const WindowRun zh_first = run_window("checkpoint_kv_zh_first", "--language zh " + args + " --pointer " + pointer + " --clicks 4 --frames 10");
    REQUIRE(zh_first.layout.at("widgets").contains("model.show_drift"));
    const std::string zh_both = std::string(pointer) + ";" + centre_of(zh_first.layout["widgets"]["model.show_drift"]);
    const WindowRun zh = run_window("checkpoint_kv_zh", "--language zh " + args + " --pointer " + shell_quote(zh_both) +
                                                            " --clicks 4,10 --frames 16");
    CHECK(has_text(texts_of(zh, "###model"), "1（MQA，由 2 个合并而来）"));
    CHECK(shows(texts_of(zh, "###analysis"), "相对原始模型的偏移"));
    CHECK(zh.layout.at("untranslated").empty());
    CHECK(has_text(texts_of(zh, "###heads"), name + " · 第 0 层，共 2 层 · K/V 由 2 个头合并"));
  }

  TEST_CASE("checkpoint window: attentions computed elsewhere open from their folder or file, with the file's tokens and groups") {
    const fs::path precomputed = fixture("precomputed");
    const model::AttentionStack stack =
        model::open_attentions(precomputed / "attentions.npy", precomputed / "tokens.json", precomputed / "config.json");
    REQUIRE(stack.kv_heads < stack.heads);
    struct Case {
      fs::path path;
      int layer;
      std::string file;
    };
    for (const Case& c : {Case{precomputed, 0, "attentions.npy"}, Case{precomputed / "attentions.safetensors", 1,
                                                                         "attentions.safetensors"}}) {
      CAPTURE(c.path);
      // The Input window's text is a sentence: the file's own tokens are drawn instead.
      const WindowRun w = run_window("attentions_" + c.file, "--checkpoint " + shell_quote(c.path.string()) + " --layer " +
                                                                 std::to_string(c.layer) + " --text " +
                                                                 shell_quote("The cat sat on the mat"));
      const std::vector<std::string> texts = texts_of(w, "###checkpoint");
      INFO(joined(texts));
      CHECK(has_text(texts, "Open attentions"));
      CHECK(value_of(texts, "name") == "precomputed");
      CHECK(value_of(texts, "file") == c.file);
      CHECK(value_of(texts, "layers L") == std::to_string(stack.layers));
      CHECK(value_of(texts, "query heads H") == std::to_string(stack.heads));
      CHECK(value_of(texts, "kv heads G") == std::to_string(stack.kv_heads) + "  (GQA)");
      CHECK(value_of(texts, "tokens T") == std::to_string(stack.tokens));
      CHECK(value_of(texts, "mask") == "causal (every upper triangle is 0)");
      CHECK_FALSE(shows(texts, "Error:"));
      CHECK_FALSE(shows(texts, "Next tokens"));  // no logits in the file
      CHECK_FALSE(shows(texts, "K/V heads"));    // no weights to pool
      const auto& heads = w.layout.at("heads");
      REQUIRE(int(heads.size()) == stack.heads);
      const int per_group = stack.heads / stack.kv_heads;
      for (int h = 0; h < stack.heads; ++h) {
        CHECK(heads[size_t(h)].at("kv_group").get<int>() == h / per_group);
        CHECK(heads[size_t(h)].at("tokens").get<int>() == stack.tokens);
      }
      const std::vector<std::string> heads_texts = texts_of(w, "###heads");
      CHECK(has_text(heads_texts, "precomputed · layer " + std::to_string(c.layer) + " of 2"));
      CHECK(has_text(heads_texts, stack.labels.front()));  // "The", the file's label of token 0
      CHECK(shows(texts_of(w, "###input"), "An attentions file is open: the Heads view draws the file's own tokens"));
    }
  }

  TEST_CASE("checkpoint window: compute --checkpoint's output opens as attentions, its model.json giving the groups") {
    const fs::path out = fresh_dir("attentions_from_compute");
    std::string comma_ids = ids;
    std::replace(comma_ids.begin(), comma_ids.end(), ' ', ',');
    const CliRun cli = run_cli("compute --checkpoint " + shell_quote(fixture("llama_gqa_bf16_sharded").string()) +
                               " --ids " + comma_ids + " --out " + shell_quote(out.string()));
    REQUIRE_MESSAGE(cli.exit_code == 0, cli.err);
    const auto m = model::open(fixture("llama_gqa_bf16_sharded"));
    const WindowRun w = run_window("attentions_from_compute", "--checkpoint " + shell_quote((out / "tokens.json").string()));
    const std::vector<std::string> texts = texts_of(w, "###checkpoint");
    INFO(joined(texts));
    CHECK(has_text(texts, "Open attentions"));
    CHECK(value_of(texts, "name") == "attentions_from_compute");  // the folder, though tokens.json was named
    CHECK(value_of(texts, "kv heads G") == std::to_string(m->config.kv_heads) + "  (GQA)");
    CHECK(value_of(texts, "tokens T") == "9");
    const auto& heads = w.layout.at("heads");
    REQUIRE(int(heads.size()) == m->config.heads);
    for (int h = 0; h < m->config.heads; ++h)
      CHECK(heads[size_t(h)].at("kv_group").get<int>() == h / (m->config.heads / m->config.kv_heads));
  }

  TEST_CASE("checkpoint window: attentions without a config are drawn one group per head, and bad files are errors on screen") {
    const fs::path precomputed = fixture("precomputed");
    const fs::path d = fresh_dir("attentions_bad");
    // No config.json: every head its own group, and the window says the groups are not known.
    fs::create_directories(d / "no_config");
    for (const char* f : {"attentions.npy", "tokens.json"}) fs::copy_file(precomputed / f, d / "no_config" / f);
    {
      const WindowRun w = run_window("attentions_no_config", "--checkpoint " + shell_quote((d / "no_config").string()));
      const std::vector<std::string> texts = texts_of(w, "###checkpoint");
      INFO(joined(texts));
      CHECK(shows(texts, "not given (no config.json): each head is drawn as its own group"));
      const auto& heads = w.layout.at("heads");
      REQUIRE(heads.size() == 4);
      for (int h = 0; h < 4; ++h) CHECK(heads[size_t(h)].at("kv_group").get<int>() == h);
      // The Model view takes the Heads view's place.
      const WindowRun mv = run_window("attentions_no_config_mv", "--checkpoint " + shell_quote((d / "no_config").string()) +
                                                                     " --show-model-view");
      CHECK(shows(texts_of(mv, "###model_view"), "no_config · 2 layers × 4 heads · K/V groups unknown · 12 tokens"));
    }
    // Scores instead of probabilities, no tokens.json, a truncated .npy: each named on screen, in place of the heads.
    const auto a = read_npy(precomputed / "attentions.npy", 4);
    fs::create_directories(d / "scores");
    std::vector<float> scores = a.data;
    scores[5] = 3.5f;
    write_npy(d / "scores" / "attentions.npy", scores.data(), {2, 4, 12, 12});
    fs::copy_file(precomputed / "tokens.json", d / "scores" / "tokens.json");
    fs::create_directories(d / "no_tokens");
    fs::copy_file(precomputed / "attentions.npy", d / "no_tokens" / "attentions.npy");
    fs::create_directories(d / "truncated");
    fs::copy_file(precomputed / "attentions.npy", d / "truncated" / "attentions.npy");
    fs::copy_file(precomputed / "tokens.json", d / "truncated" / "tokens.json");
    fs::resize_file(d / "truncated" / "attentions.npy", fs::file_size(d / "truncated" / "attentions.npy") - 64);
    struct Bad {
      std::string folder, message;
    };
    for (const Bad& c : {Bad{"scores", "which is not a probability"}, Bad{"no_tokens", "tokens.json"},
                         Bad{"truncated", "attentions.npy"}}) {
      CAPTURE(c.folder);
      const WindowRun w = run_window("attentions_bad_" + c.folder, "--checkpoint " + shell_quote((d / c.folder).string()));
      const std::vector<std::string> shown = texts_of(w, "###checkpoint");
      INFO(joined(shown));
      CHECK(shows(shown, "Error:"));
      CHECK(shows(shown, c.message));
      CHECK(shows(texts_of(w, "###heads"), c.message));
      CHECK(w.layout.at("heads").empty());
    }
  }

  TEST_CASE("checkpoint window: labels with control characters (U+0000 too) are spelled out, not drawn") {
    const fs::path d = fresh_dir("attentions_control_labels");
    fs::copy_file(fixture("precomputed") / "attentions.npy", d / "attentions.npy");
    std::string labels = "[\"a\\u0000b\", \"tab\\there\", \"\\u007f\"";
    for (int i = 3; i < 12; ++i) labels += ", \"t" + std::to_string(i) + "\"";
    write_file_atomic(d / "tokens.json", "{\"labels\": " + labels + "]}");
    const WindowRun w = run_window("attentions_control_labels", "--checkpoint " + shell_quote(d.string()));
    REQUIRE_MESSAGE(w.run.exit_code == 0, w.run.err);
    CHECK(has_text(texts_of(w, "###checkpoint"), "Open attentions"));
    const std::vector<std::string> heads = texts_of(w, "###heads");
    INFO(joined(heads));
    CHECK(shows(heads, "aU+0000b"));
    CHECK(shows(heads, "U+007F"));
  }

  TEST_CASE("checkpoint window: a file named relative to the current folder opens; recent keeps the folder") {
    const fs::path config = fresh_dir("attentions_recent");
    const std::string env = "XDG_CONFIG_HOME=" + shell_quote(config.string());
    // Started inside the folder with only a file name: the folder is absolute in the recent list, once.
    const CliRun first = run_app(env, "--checkpoint tokens.json --frames 4", fixture("precomputed").string());
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    const CliRun second = run_app(env, "--checkpoint " + shell_quote(fixture("precomputed").string()) + " --frames 4");
    REQUIRE_MESSAGE(second.exit_code == 0, second.err);
    const auto recent = read_json(config / "attnscope" / "window.json").at("recent_checkpoints");
    REQUIRE(recent.size() == 1);
    CHECK(fs::path(recent[0].get<std::string>()) == fs::canonical(fixture("precomputed")));
    // The file named directly is its own entry.
    const CliRun third = run_app(env, "--checkpoint " + shell_quote((fixture("precomputed") / "attentions.npy").string()) +
                                          " --frames 4");
    REQUIRE_MESSAGE(third.exit_code == 0, third.err);
    const auto after = read_json(config / "attnscope" / "window.json").at("recent_checkpoints");
    REQUIRE(after.size() == 2);
    CHECK(fs::path(after[0].get<std::string>()) == fs::canonical(fixture("precomputed") / "attentions.npy"));
  }

  TEST_CASE("checkpoint window: Close on attentions returns to the seeded layer; lesson 6 leaves an open file open") {
    const std::string open = "--checkpoint " + shell_quote(fixture("precomputed").string());
    const WindowRun first = run_window("attentions_close_layout", open);
    REQUIRE(first.layout.at("widgets").contains("checkpoint.close"));
    const WindowRun closed = run_window("attentions_close", open + " --frames 8 --clicks 4 --pointer " +
                                                               centre_of(first.layout["widgets"]["checkpoint.close"]));
    const std::vector<std::string> texts = texts_of(closed, "###checkpoint");
    INFO(joined(texts));
    CHECK(shows(texts, "No checkpoint open"));
    CHECK_FALSE(shows(texts_of(closed, "###heads"), "precomputed"));
    CHECK(closed.layout.at("heads").at(0).at("tokens").get<int>() != 12);  // the Input window's sentence again
    // Lesson 6 opens its shipped model only when nothing is open: the file stays, and the panel says so.
    const WindowRun lesson = run_window("attentions_lesson6", open + " --lesson 6 --step 2");
    CHECK(has_text(texts_of(lesson, "###checkpoint"), "Open attentions"));
    CHECK(shows(texts_of(lesson, "###lessons"), "An attentions file is open: the table ranks its heads on the file's own tokens"));
  }

  TEST_CASE("checkpoint window: the same in Chinese") {
    const WindowRun w = run_window("checkpoint_zh", "--language zh --checkpoint " +
                                                        shell_quote(fixture("qwen2_gqa").string()) + " --text " +
                                                        shell_quote("ids: " + ids));
    const std::vector<std::string> texts = texts_of(w, "###checkpoint");
    INFO(joined(texts));
    CHECK(has_text(texts, "qwen2_gqa"));
    CHECK(has_text(texts, "下一个词元"));
    CHECK(has_text(texts_of(w, "###heads"), "qwen2_gqa · 第 0 层，共 2 层"));
    const WindowRun file = run_window("attentions_zh", "--language zh --checkpoint " +
                                                           shell_quote(fixture("precomputed").string()));
    const std::vector<std::string> file_texts = texts_of(file, "###checkpoint");
    INFO(joined(file_texts));
    CHECK(has_text(file_texts, "已打开的注意力"));
    CHECK(has_text(file_texts, "因果（每个上三角都是 0）"));
    CHECK(shows(texts_of(file, "###input"), "已打开注意力文件"));
  }
}

}  // namespace attnscope::test
