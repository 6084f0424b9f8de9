// Lesson 6, "Heads of a real model", in the window: with the shipped induction model open, the Lessons
// panel's table ranks the heads by the scores the engine gives for the very run on screen (a layer-1
// induction head near 1 on the repeated sequence), shows the top head large in its layer; a step with
// "open" opens the shipped model itself; and with no checkpoint the panel says how to get GPT-2.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/io/assets.h"
#include "attnscope/model/model.h"
#include "attnscope/pipeline/model_input.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

struct Drawn {
  std::string text;
  double x = 0, y = 0;
};

// Every text drawn in the window whose ImGui name ends with `title` ("###lessons").
std::vector<Drawn> drawn_in(const WindowRun& w, const std::string& title) {
  std::vector<Drawn> out;
  for (const auto& t : w.layout.at("texts")) {
    const std::string window = t.at("window").get<std::string>();
    if (window.size() >= title.size() && window.compare(window.size() - title.size(), title.size(), title) == 0)
      out.push_back({t.at("text").get<std::string>(), t.at("x").get<double>(), t.at("y").get<double>()});
  }
  return out;
}

// All of it without white space (wrapped text is drawn line by line).
std::string flat(const std::vector<Drawn>& texts) {
  std::string s;
  for (const Drawn& t : texts)
    for (char c : t.text)
      if (c != ' ' && c != '\n') s += c;
  return s;
}
std::string flat(const std::string& text) { return flat(std::vector<Drawn>{{text}}); }

// The entries "layer.head  0.87" of the table column under `header`, top to bottom.
struct Entry {
  int layer = 0, head = 0;
  double score = 0;
};
std::vector<Entry> column(const std::vector<Drawn>& texts, const std::string& header) {
  const auto h = std::find_if(texts.begin(), texts.end(), [&](const Drawn& t) { return t.text == header; });
  REQUIRE_MESSAGE(h != texts.end(), "no table header \"" << header << "\"");
  static const std::regex entry(R"(^(\d+)\.(\d+)\s+([0-9.]+)$)");
  std::vector<Entry> out;
  for (const Drawn& t : texts) {
    std::smatch m;
    if (std::abs(t.x - h->x) < 2 && t.y > h->y && std::regex_match(t.text, m, entry))
      out.push_back({std::stoi(m[1]), std::stoi(m[2]), std::stod(m[3])});
  }
  return out;
}

const Lesson& lesson6() {
  static const std::vector<Lesson> lessons = load_lessons();
  return lessons.at(5);
}

// The scores the engine gives the step's input on the shipped model (what the window must show).
HeadPatternScores shipped_scores(const LessonCheckpoint& c) {
  const std::shared_ptr<const model::Model> m = model::open(c.model_dir);
  const std::vector<int32_t> ids = repeated_random_ids(c.repeat_tokens, m->config.vocab, c.repeat_seed);
  return head_pattern_scores(*run_model_layer(*m, model_tokens_from_ids(c.model_dir, ids), 0).stack);
}

std::string two_decimals(float v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", double(v));
  return s;
}

}  // namespace

TEST_SUITE("gui_classroom") {
  TEST_CASE("lesson 6 with the shipped model: the table ranks this run's heads; a layer-1 induction head is shown large") {
    REQUIRE(lesson6().number == 6);
    const LessonCheckpoint& c = *lesson6().steps[3].checkpoint;
    const HeadPatternScores want = shipped_scores(c);
    const WindowRun w = run_window("lesson6_induction", "--lesson 6 --step 4 --checkpoint " + shell_quote(c.model_dir.string()));
    CHECK(w.layout["error"] == "");
    const std::vector<Drawn> texts = drawn_in(w, "###lessons");
    const std::vector<Entry> induction = column(texts, "induction");
    REQUIRE(induction.size() == 3);
    MESSAGE("induction column: " << induction[0].layer << "." << induction[0].head << " " << induction[0].score << ", "
                                 << induction[1].layer << "." << induction[1].head << " " << induction[1].score);
    CHECK(induction[0].layer == 1);
    CHECK(induction[0].score > 0.5);
    CHECK(induction[0].score >= induction[1].score);
    // The engine's ranking of the same input, to the two decimals shown.
    const std::vector<TopHead> top = top_heads(want, HeadPattern::induction, 3);
    for (size_t r = 0; r < 3; ++r) {
      CAPTURE(r);
      CHECK(induction[r].layer == top[r].layer);
      CHECK(induction[r].head == top[r].head);
      CHECK(two_decimals(float(induction[r].score)) == two_decimals(top[r].score));
    }
    const std::vector<Entry> sink = column(texts, "attention sink"), previous = column(texts, "previous");
    REQUIRE(sink.size() == 3);
    REQUIRE(previous.size() == 3);
    CHECK(previous[0].layer == top_heads(want, HeadPattern::previous, 1)[0].layer);
    CHECK(previous[0].head == top_heads(want, HeadPattern::previous, 1)[0].head);
    CHECK(sink[0].head == top_heads(want, HeadPattern::sink, 1)[0].head);
    // The step shows its top induction head large, in its layer.
    CHECK(w.layout["large_head"] == induction[0].head);
    bool layer_shown = false;
    for (const Drawn& t : drawn_in(w, "###heads")) layer_shown |= t.text == "induction · layer 1 of 2";
    CHECK(layer_shown);
    CHECK(flat(texts).find(flat("induction: 2 layers, 4 query heads sharing 2 K/V heads (GQA).")) != std::string::npos);
  }

  TEST_CASE("lesson 6: a step with \"open\" opens the shipped model itself and shows its top sink head") {
    const HeadPatternScores want = shipped_scores(*lesson6().steps[1].checkpoint);
    const TopHead sink = top_heads(want, HeadPattern::sink, 1).at(0);
    const WindowRun w = run_window("lesson6_sink", "--lesson 6 --step 2");
    CHECK(w.layout["error"] == "");
    CHECK(w.layout["large_head"] == sink.head);
    const std::vector<Entry> shown = column(drawn_in(w, "###lessons"), "attention sink");
    REQUIRE(!shown.empty());
    CHECK(shown[0].layer == sink.layer);
    CHECK(two_decimals(float(shown[0].score)) == two_decimals(sink.score));
    REQUIRE(w.layout["heads"].size() == 4);  // the model's 4 heads in its 2 K/V groups
    CHECK(w.layout["heads"][1]["kv_group"] == 0);
    CHECK(w.layout["heads"][2]["kv_group"] == 1);
  }

  TEST_CASE("lesson 6 presented: the table the captions point at sits beside the head shown large, which it marks") {
    // Presentation mode hides the Lessons panel; the table is drawn in the large head's window instead,
    // right of the head and its colour bar, at a projector's sizes and in both languages.
    const HeadPatternScores want = shipped_scores(*lesson6().steps[2].checkpoint);
    const TopHead previous = top_heads(want, HeadPattern::previous, 1).at(0);
    for (const char* args : {"--size 1280x720", "--size 1920x1080 --language zh"}) {
      CAPTURE(args);
      const std::string size = std::string(args).substr(7, 9);
      const WindowRun w = run_window("lesson6_presented_" + size, std::string(args) + " --lesson 6 --step 3 --keys 2:f11 --frames 30");
      CHECK(w.layout["error"] == "");
      CHECK(w.layout["presenting"] == true);
      CHECK(w.layout["large_head"] == previous.head);
      REQUIRE(w.layout["widgets"].contains("lesson.top_heads"));
      const auto& table = w.layout["widgets"]["lesson.top_heads"];
      const std::vector<Drawn> texts = drawn_in(w, "###large_head");
      const std::string header = std::string(args).find("zh") != std::string::npos ? "前一个词元" : "previous";
      const std::vector<Entry> shown = column(texts, header);
      REQUIRE(!shown.empty());
      CHECK(shown[0].layer == previous.layer);
      CHECK(shown[0].head == previous.head);
      // Right of the head's picture and of its colour bar (whose legend says "masked"), inside the screen.
      const std::string masked = std::string(args).find("zh") != std::string::npos ? "已掩码" : "masked";
      double bar_right = -1;
      for (const auto& t : w.layout.at("texts"))
        if (t.at("text") == masked && t.at("window").get<std::string>().find("###large_head") != std::string::npos)
          bar_right = t.at("x").get<double>() + t.at("w").get<double>();
      REQUIRE(bar_right > 0);
      CHECK(table["x"].get<double>() > bar_right);
      CHECK(table["x"].get<double>() + table["w"].get<double>() <= w.layout["width"].get<double>());
    }
  }

  TEST_CASE("a lesson step about the synthetic model, presented while the user's checkpoint is open: the banner says so and closes it") {
    const fs::path shipped = lesson6().steps[1].checkpoint->model_dir;
    const std::string args = "--size 1280x720 --checkpoint " + shell_quote(shipped.string()) + " --lesson 1 --keys 2:f11";
    const WindowRun w = run_window("lesson_banner_checkpoint", args + " --frames 20");
    CHECK(w.layout["presenting"] == true);
    CHECK(w.layout["checkpoint_current"] == true);
    CHECK(flat(drawn_in(w, "##lesson_banner")).find(flat("a checkpoint is open: the views show the checkpoint")) != std::string::npos);
    REQUIRE(w.layout["widgets"].contains("banner.close_checkpoint"));
    const WindowRun closed = run_window("lesson_banner_checkpoint_closed", args + " --frames 30 --clicks 24 --pointer " +
                                                                               centre_of(w.layout["widgets"]["banner.close_checkpoint"]));
    CHECK(closed.layout["checkpoint_current"] == false);
    CHECK(closed.layout["heads"].size() == 1);  // lesson 1 step 1: one head
    CHECK_FALSE(closed.layout["widgets"].contains("banner.close_checkpoint"));
  }

  TEST_CASE("lesson 6 without a checkpoint: how to download GPT-2, where to point attnscope, the shipped model") {
    const WindowRun en = run_window("lesson6_none", "--lesson 6 --step 1 --size 1600x900");
    const std::string texts = flat(drawn_in(en, "###lessons"));
    CHECK(texts.find(flat("No checkpoint is open.")) != std::string::npos);
    CHECK(texts.find(flat("hf download gpt2 config.json model.safetensors tokenizer.json vocab.json "
                          "merges.txt --local-dir ~/models/gpt2")) != std::string::npos);
    CHECK(texts.find(flat("Then open that folder (~/models/gpt2) in Windows → Checkpoint.")) != std::string::npos);
    CHECK(texts.find(flat("Look at the model attnscope's own trainer made")) != std::string::npos);
    CHECK(en.layout["widgets"].contains("lesson.open_shipped"));
    CHECK_FALSE(en.layout["widgets"].contains("lesson.top_heads"));
    const WindowRun zh = run_window("lesson6_none_zh", "--lesson 6 --step 1 --language zh --size 1600x900");
    CHECK(zh.layout["untranslated"].empty());
    const std::string zh_texts = flat(drawn_in(zh, "###lessons"));
    CHECK(zh_texts.find(flat("还没有打开检查点。")) != std::string::npos);
    CHECK(zh_texts.find(flat("（~/models/gpt2）")) != std::string::npos);
  }
}

}  // namespace attnscope::test
