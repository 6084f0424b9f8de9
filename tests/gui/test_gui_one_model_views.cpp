// One model at a time in every view and panel (issue 22, item 2): with a checkpoint current, the Shapes view
// traces its layer, Head analysis shows only its statistics (from the frame it becomes current on), the Input
// window names its own tokenizer, and the KV-cache calculator starts from its L, G and d_head — never the
// synthetic model's settings (MHA, d_model 64, 8 heads). Scripted runs, read back through the layout record
// (its "earlier_frames" for the frames before the settled one).
#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "attnscope/attention/trace.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/model.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

const fs::path shipped = fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "models" / "induction";

bool has_text(const std::vector<std::string>& texts, const std::string& text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}
// A frame's texts drawn in the window whose name ends with `title`.
std::vector<std::string> frame_texts(const nlohmann::json& frame, const std::string& title) {
  std::vector<std::string> out;
  for (const auto& t : frame.at("texts")) {
    const std::string window = t.at("window").get<std::string>();
    if (window.size() >= title.size() && window.compare(window.size() - title.size(), title.size(), title) == 0)
      out.push_back(t.at("text").get<std::string>());
  }
  return out;
}
// "[32, 4, 16]": a live shape of the trace table.
bool is_shape(const std::string& text) {
  static const std::regex shape(R"(\[\d+(, \d+)*\])");
  return std::regex_match(text, shape);
}
// "2.07": a statistic of the Head analysis table (entropy, distance, sink …).
bool is_statistic(const std::string& text) {
  static const std::regex number(R"(\d+\.\d\d\d?)");
  return std::regex_match(text, number);
}

// The shipped model's layer as the engine traces it: every live shape, and the header line.
struct Expected {
  std::set<std::string> shapes;
  std::string header;
};
Expected expected_trace(const model::ModelConfig& c, int tokens, bool zh) {
  const Trace t = shape_trace(TraceShape{tokens, c.d_model, c.heads, c.kv_heads, c.head_dim, c.qkv_bias, c.o_bias,
                                         c.positions == model::PositionKind::rotary, true});
  Expected e;
  for (const TraceStep& step : t.steps) e.shapes.insert(format_shape(step.shape));
  e.header = "L = " + std::to_string(c.layers) + " · T = " + std::to_string(tokens) + (zh ? " 个词元" : " tokens") +
             " · C = " + std::to_string(c.d_model) + " · H = " + std::to_string(c.heads) + " · G = " +
             std::to_string(c.kv_heads) + " · d_k = " + std::to_string(c.head_dim);
  return e;
}

}  // namespace

TEST_SUITE("gui_one_model") {
  // issue 40: `--view positions|shapes` with `--checkpoint` opened the Heads view (opening a checkpoint
  // switched to it whatever the view was).
  TEST_CASE("one model: --view shapes or positions with --checkpoint opens that view with the checkpoint current") {
    for (const std::string view : {"shapes", "positions"}) {
      CAPTURE(view);
      const WindowRun w = run_window("one_model_view_flag_" + view,
                                     "--size 1280x720 --view " + view + " --checkpoint " + shell_quote(shipped.string()));
      CHECK(w.layout.at("view") == view);
      CHECK(w.layout.at("checkpoint_current").get<bool>());
      CHECK(w.layout.at("error") == "");
    }
    // A view that does not draw the model still gives way to the Heads view.
    const WindowRun conv = run_window("one_model_view_flag_conv",
                                      "--size 1280x720 --view conv --checkpoint " + shell_quote(shipped.string()));
    CHECK(conv.layout.at("view") == "heads");
  }

  TEST_CASE("one model: the Shapes view with the shipped model open traces its layer, not the synthetic model") {
    const auto m = model::open(shipped);
    const model::ModelConfig& c = m->config;
    REQUIRE(c.heads != 8);  // the synthetic model's 8 heads would not tell the two apart
    for (const std::string size : {"1280x720", "1920x1080"})
      for (const std::string language : {"en", "zh"}) {
        CAPTURE(size);
        CAPTURE(language);
        const bool zh = language == "zh";
        const std::string args = "--checkpoint " + shell_quote(shipped.string()) + " --size " + size + " --language " + language +
                                 " --show-analysis --show-kv-cache";
        const std::string name = "one_model_views_shapes_" + size + "_" + language;
        const WindowRun heads = run_window(name + "_heads", args);
        REQUIRE(heads.layout.at("widgets").contains("menu.view.shapes"));
        // Shapes, as a user picks it from the menu bar.
        const WindowRun w = run_window(name, args + " --pointer " + centre_of(heads.layout["widgets"]["menu.view.shapes"]) +
                                                 " --clicks 4 --frames 10");
        CHECK(w.layout.at("view") == "shapes");
        CHECK(w.layout.at("checkpoint_current").get<bool>());
        CHECK(w.layout.at("untranslated").empty());
        const std::vector<std::string> shapes = texts_of(w, "###shapes");
        INFO(joined(shapes));
        // The default input of 16 + 16 tokens (as the Heads view draws it).
        const Expected e = expected_trace(c, 32, zh);
        CHECK(has_text(shapes, e.header));
        CHECK(has_text(shapes, "induction · " + std::string(zh ? "第 0 层，共 2 层" : "layer 0 of 2")));
        std::set<std::string> drawn;
        for (const std::string& t : shapes)
          if (is_shape(t)) drawn.insert(t);
        CHECK(drawn == e.shapes);  // every shape the checkpoint's, and all of them
        CHECK(shows(shapes, zh ? "旋转 Q、K（RoPE）" : "rotate Q, K (RoPE)"));
        CHECK_FALSE(shows(shapes, "H = 8"));
        CHECK_FALSE(shows(shapes, "C = 64 · H = 8"));
        // Head analysis: the checkpoint's H heads in its table, never a ninth row or the synthetic model's.
        const std::vector<std::string> analysis = texts_of(w, "###analysis");
        INFO(joined(analysis));
        CHECK(has_text(analysis, std::to_string(c.heads - 1)));
        CHECK_FALSE(has_text(analysis, std::to_string(c.heads)));
        CHECK_FALSE(has_text(analysis, "7"));
        // The KV-cache calculator starts from the checkpoint's own L, H, G and d_head.
        const std::vector<std::string> kv = texts_of(w, "###kv_cache");
        INFO(joined(kv));
        const std::string row = zh ? "L = 2 层，H = 4 个头，G = 2 个 KV 头，d_head = 16" : "L = 2 layers, H = 4 heads, G = 2 kv heads, d_head = 16";
        CHECK(shows(kv, row));
        CHECK(shows(kv, zh ? "检查点：induction" : "Checkpoint: induction"));
      }
  }

  TEST_CASE("one model: an attentions file's Shapes view traces what the file holds and says what it cannot") {
    const fs::path precomputed = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "models" / "precomputed";
    const model::AttentionStack stack =
        model::open_attentions(precomputed / "attentions.npy", precomputed / "tokens.json", precomputed / "config.json");
    const std::string args = "--checkpoint " + shell_quote((precomputed / "attentions.npy").string());
    const WindowRun heads = run_window("one_model_views_attentions_heads", args);
    REQUIRE(heads.layout.at("widgets").contains("menu.view.shapes"));
    const WindowRun w = run_window("one_model_views_attentions", args + " --pointer " +
                                                                   centre_of(heads.layout["widgets"]["menu.view.shapes"]) +
                                                                   " --clicks 4 --frames 10");
    const std::vector<std::string> shapes = texts_of(w, "###shapes");
    INFO(joined(shapes));
    CHECK(has_text(shapes, "L = " + std::to_string(stack.layers) + " · T = " + std::to_string(stack.tokens) + " tokens · H = " +
                               std::to_string(stack.heads) + " · G = " + std::to_string(stack.kv_heads)));
    CHECK(shows(shapes, "An attentions file holds only the attention probabilities"));
    const std::string probs = "[" + std::to_string(stack.heads) + ", " + std::to_string(stack.tokens) + ", " + std::to_string(stack.tokens) + "]";
    for (const std::string& t : shapes)
      if (is_shape(t)) CHECK(t == probs);  // only what the file holds: no projection, no made-up d_k or C
    CHECK(has_text(shapes, probs));
    CHECK_FALSE(shows(shapes, "W_Q"));
    CHECK_FALSE(shows(shapes, "C = 64"));
    // The Input window says its sentence is not what is drawn, in this view as in Heads.
    CHECK(shows(texts_of(w, "###input"), "An attentions file is open"));
  }

  TEST_CASE("one model: closing the checkpoint takes its numbers out of the KV-cache calculator") {
    const std::string args = "--checkpoint " + shell_quote(shipped.string()) + " --show-kv-cache";
    const WindowRun open = run_window("one_model_views_kv_open", args);
    CHECK(shows(texts_of(open, "###kv_cache"), "Checkpoint: induction"));
    REQUIRE(open.layout.at("widgets").contains("model.close_checkpoint"));
    const WindowRun closed = run_window("one_model_views_kv_closed", args + " --pointer " +
                                                                         centre_of(open.layout["widgets"]["model.close_checkpoint"]) +
                                                                         " --clicks 4 --frames 10");
    CHECK_FALSE(closed.layout.at("checkpoint_current").get<bool>());
    const std::vector<std::string> kv = texts_of(closed, "###kv_cache");
    INFO(joined(kv));
    CHECK_FALSE(shows(kv, "Checkpoint: induction"));
    CHECK_FALSE(shows(kv, "L = 2 layers, H = 4 heads, G = 2 kv heads, d_head = 16"));
    CHECK(shows(kv, "kv heads, d_head ="));  // a published model's row again
  }

  TEST_CASE("one model: Head analysis never shows the synthetic model's statistics once a checkpoint is current") {
    // The synthetic model first, with its statistics on screen; then the shipped model opens on a click
    // (every frame of a run with clicks waits for the worker, so each frame is one step of the story).
    const WindowRun before = run_window("one_model_views_analysis_before", "--show-model-view --show-analysis");
    REQUIRE(before.layout.at("widgets").contains("model_view.open_induction"));
    std::set<std::string> synthetic;
    for (const std::string& t : texts_of(before, "###analysis"))
      if (is_statistic(t)) synthetic.insert(t);
    REQUIRE(synthetic.size() >= 8);
    const WindowRun w = run_window("one_model_views_analysis", "--show-model-view --show-analysis --pointer " +
                                                                   centre_of(before.layout["widgets"]["model_view.open_induction"]) +
                                                                   " --clicks 4 --frames 12");
    REQUIRE(w.layout.at("checkpoint_current").get<bool>());
    std::set<std::string> final_stats;
    for (const std::string& t : texts_of(w, "###analysis"))
      if (is_statistic(t)) final_stats.insert(t);
    INFO(joined(texts_of(w, "###analysis")));
    REQUIRE_FALSE(final_stats.empty());  // the checkpoint's statistics once its pass is there
    int current_frames = 0, synthetic_frames = 0;
    for (const auto& frame : w.layout.at("earlier_frames")) {
      const std::vector<std::string> texts = frame_texts(frame, "###analysis");
      std::set<std::string> stats;
      for (const std::string& t : texts)
        if (is_statistic(t)) stats.insert(t);
      if (!frame.at("checkpoint_current").get<bool>()) {
        synthetic_frames += stats.empty() ? 0 : 1;
        continue;
      }
      ++current_frames;
      CAPTURE(frame.at("frame").get<int>());
      INFO(joined(texts));
      // Either no statistics yet ("computing…") or the checkpoint's own: never a number of the synthetic table.
      CHECK(std::includes(final_stats.begin(), final_stats.end(), stats.begin(), stats.end()));
      CHECK_FALSE(has_text(texts, "7"));  // the synthetic model's eighth head
    }
    CHECK(synthetic_frames >= 1);  // the story began with the synthetic model's statistics on screen
    CHECK(current_frames >= 2);    // and the checkpoint's first frames are among the ones checked
  }

  TEST_CASE("one model: a lesson step about the synthetic model says a checkpoint is open; the relative-position view shows its heads only after Close") {
    const std::string args = "--checkpoint " + shell_quote(shipped.string());
    const WindowRun lesson = run_window("one_model_views_lesson", args + " --lesson 1");
    INFO(joined(texts_of(lesson, "###lessons")));
    CHECK(shows(texts_of(lesson, "###lessons"), "This step is about the synthetic model, but a checkpoint is open"));
    CHECK(lesson.layout.at("widgets").contains("lesson.close_checkpoint"));
    const WindowRun heads = run_window("one_model_views_relpos_heads", args);
    REQUIRE(heads.layout.at("widgets").contains("menu.view.relpos1d"));
    const WindowRun relpos = run_window("one_model_views_relpos", args + " --pointer " +
                                                                      centre_of(heads.layout["widgets"]["menu.view.relpos1d"]) +
                                                                      " --clicks 4 --frames 10");
    CHECK(relpos.layout.at("view") == "relpos1d");
    INFO(joined(texts_of(relpos, "###relpos1d")));
    // One model on screen: the view's own (position-only) heads give way to a notice with Close.
    CHECK(shows(texts_of(relpos, "###relpos1d"), "A checkpoint (induction)"));
    CHECK(relpos.layout.at("heads").empty());
    CHECK_FALSE(relpos.layout.at("widgets").contains("copy_figure"));
    REQUIRE(relpos.layout.at("widgets").contains("view.close_checkpoint"));
    const WindowRun closed = run_window("one_model_views_relpos_close",
                                        args + " --pointer '" + centre_of(heads.layout["widgets"]["menu.view.relpos1d"]) + ";" +
                                            centre_of(relpos.layout["widgets"]["view.close_checkpoint"]) + "' --clicks 4,8 --frames 20");
    CHECK(closed.layout.at("view") == "relpos1d");
    CHECK_FALSE(closed.layout.at("heads").empty());
    CHECK(closed.layout.at("widgets").contains("copy_figure"));
    // Without a checkpoint neither says anything of the kind.
    const WindowRun plain = run_window("one_model_views_lesson_plain", "--lesson 1");
    CHECK_FALSE(shows(texts_of(plain, "###lessons"), "checkpoint is open"));
  }

  TEST_CASE("one model: the Input window names the checkpoint's own tokenizer, in English and Chinese") {
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = language == "zh";
      const WindowRun w = run_window("one_model_views_input_shipped_" + language,
                                     "--checkpoint " + shell_quote(shipped.string()) + " --language " + language);
      const std::vector<std::string> input = texts_of(w, "###input");
      INFO(joined(input));
      CHECK(shows(input, zh ? "训练时生成的 vocab.json：按符号，32 个词元" : "vocab.json from training: symbols, 32 tokens"));
      CHECK_FALSE(shows(input, zh ? "按词切分（无模型）" : "words (no model)"));
      // None of the synthetic model's tokenizer choices, nor its other inputs.
      CHECK_FALSE(has_text(input, zh ? "按词" : "Words"));
      CHECK_FALSE(has_text(input, zh ? "加载" : "Load"));
      CHECK_FALSE(shows(input, "X.npy"));
      CHECK(w.layout.at("untranslated").empty());
    }
    // A model trained on text: its vocab.json of characters.
    const fs::path d = fresh_dir("one_model_views_input_train");
    write_file_atomic(d / "text.txt", "the cat sat on the mat. the dog sat on the log.\n");
    const CliRun train = run_cli("train --task text --text-file " + shell_quote((d / "text.txt").string()) +
                                 " --seq-len 8 --batch 4 --d-model 32 --steps 5 --out " + shell_quote((d / "run").string()));
    REQUIRE_MESSAGE(train.exit_code == 0, train.err);
    const WindowRun text = run_window("one_model_views_input_train", "--checkpoint " + shell_quote((d / "run").string()) +
                                                                          " --text " + shell_quote("the cat sat"));
    INFO(joined(texts_of(text, "###input")));
    CHECK(shows(texts_of(text, "###input"), "vocab.json from training: characters,"));
    // A checkpoint without tokenizer files opens on its default ids and says so.
    fs::create_directories(d / "bare");
    for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(shipped / f, d / "bare" / f);
    const WindowRun bare = run_window("one_model_views_input_bare", "--checkpoint " + shell_quote((d / "bare").string()));
    INFO(joined(texts_of(bare, "###input")));
    CHECK(bare.layout.at("heads").size() == 4);
    CHECK(has_text(texts_of(bare, "###input"), "ids (no tokenizer)"));
    CHECK_FALSE(shows(texts_of(bare, "###input"), "words (no model)"));
  }
}

}  // namespace attnscope::test
