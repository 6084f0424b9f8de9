// test_gui_labels.cpp — labels that read, in the window, in English and Chinese (issue 22, item 5):
// through the layout record, the sentence demos (T ≤ 16, H ≤ 4) at 1280×720 and 1920×1080 draw every
// key label whole; multi-character CJK tokens of a real tokenizer stand upright when they fit, one
// character under the other when turned; every caption of a grid has one form; past 16 kv groups the
// caption names the group; the colour bar's numbers are round. And a sweep (one start per size, language
// and checkpoint open or not, --layout-sweep) over every view and lesson step: no key label of a sentence
// demo shortened, one caption format per grid, one layer number for the heads shown.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gui_run.h"
#include "test_paths.h"
#include "text/tokenizer_fixtures.h"

namespace attnscope::test {
namespace {

struct Demo {
  std::string name, text, language;
  int heads = 0, tokens = 0;
};

// The sentence demos of a lecture: the issue's own, and sentences of assets/sentences.json of at most
// 16 tokens, in both languages.
const std::vector<Demo> demos = {
    {"cat", "The cat sat on the mat", "en", 2, 6},
    {"tired", "The cat sat on the mat because it was tired.", "en", 4, 11},
    {"mary", "When Mary and John went to the store, John gave a drink to Mary.", "en", 4, 16},
    {"basketball", "我喜欢打篮球，也喜欢看篮球比赛。", "zh", 4, 16},
    {"kitten", "小猫坐在垫子上，因为它累了。", "zh", 2, 14},
};

// The key labels over the first heatmap (each heatmap of the top row has its own): centred over it.
std::vector<nlohmann::json> key_labels(const WindowRun& w) {
  std::vector<nlohmann::json> out;
  const auto& first = w.layout["heads"].at(0);
  const double left = first["x"].get<double>(), right = left + first["w"].get<double>();
  for (const auto& l : w.layout["labels"]) {
    const double centre = l["x"].get<double>() + l["w"].get<double>() / 2;
    if (l["axis"] == "key" && centre >= left && centre <= right) out.push_back(l);
  }
  return out;
}

std::vector<nlohmann::json> captions_of_grid(const WindowRun& w, int grid) {
  std::vector<nlohmann::json> out;
  for (const auto& c : w.layout["captions"])
    if (c["grid"] == grid) out.push_back(c);
  return out;
}

// A caption with its numbers replaced by "#": the same for every caption of a grid in one format.
std::string shape_of(const std::string& caption) { return std::regex_replace(caption, std::regex("[0-9]+"), "#"); }

bool round_tick(double value, double step) {
  if (!(step > 0)) return false;
  const double m = step / std::pow(10.0, std::floor(std::log10(step) + 1e-6));
  const bool nice = std::abs(m - 1) < 1e-4 || std::abs(m - 2) < 1e-4 || std::abs(m - 5) < 1e-4;
  return nice && std::abs(value / step - std::round(value / step)) < 1e-3;
}

// Every caption of every grid: one form, one shape.
void check_one_caption_format(const WindowRun& w) {
  std::set<int> grids;
  for (const auto& c : w.layout["captions"]) grids.insert(c["grid"].get<int>());
  for (const int g : grids) {
    const std::vector<nlohmann::json> captions = captions_of_grid(w, g);
    for (const auto& c : captions) {
      CAPTURE(c.dump());
      CHECK(c["form"] == captions.front()["form"]);
      CHECK(shape_of(c["text"]) == shape_of(captions.front()["text"]));
    }
  }
}

// A GPT-2-style byte-level tokenizer whose merges make "我喜欢", "打" and "篮球" one token each, as a
// real Chinese vocabulary does.
std::filesystem::path write_chinese_tokenizer(const std::string& name) {
  MiniVocab v = byte_level_vocab();
  for (const std::string word : {"我喜欢", "打", "篮球"}) {
    std::vector<std::string> pieces;
    for (const unsigned char b : word) pieces.push_back(encode_utf8(byte_to_unicode(b)));
    std::string joined = pieces[0];
    for (size_t i = 1; i < pieces.size(); ++i) {
      v.merge(joined, pieces[i]);
      joined += pieces[i];
    }
  }
  const auto dir = fresh_dir(name);
  std::ofstream(dir / "tokenizer.json") << byte_level_document(v).dump();
  return dir / "tokenizer.json";
}

}  // namespace

TEST_SUITE("gui_labels") {
  TEST_CASE("heads labels: the sentence demos draw every key label whole, at 1280x720 and 1920x1080") {
    for (const char* size : {"1280x720", "1920x1080"})
      for (const Demo& d : demos) {
        CAPTURE(size);
        CAPTURE(d.text);
        const WindowRun w = run_window(std::string("labels_demo_") + d.name + "_" + size,
                                       "--size " + std::string(size) + " --language " + d.language + " --heads " +
                                           std::to_string(d.heads) + " --text " + shell_quote(d.text));
        REQUIRE(w.layout["heads"].size() == size_t(d.heads));
        const std::vector<nlohmann::json> keys = key_labels(w);
        // Every key drawn (the columns are wide enough: nothing thinned) …
        CHECK(keys.size() == size_t(d.tokens));
        std::set<int> indices;
        for (const auto& k : keys) {
          CAPTURE(k.dump());
          indices.insert(k["index"].get<int>());
          // … and whole.
          CHECK_FALSE(k["shortened"].get<bool>());
          CHECK(k["text"] == k["full"]);
          CHECK(k["text"].get<std::string>().find("…") == std::string::npos);
          CHECK(k["y"].get<double>() + k["h"].get<double>() <= w.layout["heads"][0]["y"].get<double>());  // above the heatmaps
        }
        CHECK(indices.size() == size_t(d.tokens));
        // Neighbouring labels do not run into each other: upright ones are never wider than their column;
        // a turned one's line box may reach a tenth of a line into its neighbour's (ink is shorter than a line).
        for (size_t i = 1; i < keys.size(); ++i) {
          const auto& a = keys[i - 1];
          const double slack = a["orientation"] == "upright" ? 0.0 : 0.1 * a["w"].get<double>();
          CHECK(keys[i]["x"].get<double>() >= a["x"].get<double>() + a["w"].get<double>() - slack);
        }
        check_one_caption_format(w);
      }
  }

  TEST_CASE("heads labels: the issue's demo reads its words upright over 60 px columns") {
    const WindowRun w = run_window("labels_cat_upright", "--size 1280x720 --heads 2 --text 'The cat sat on the mat'");
    std::vector<std::string> drawn;
    for (const auto& k : key_labels(w)) {
      CHECK(k["orientation"] == "upright");
      drawn.push_back(k["text"]);
    }
    CHECK(drawn == std::vector<std::string>{"The", "cat", "sat", "on", "the", "mat"});
  }

  TEST_CASE("heads labels: a token too long even turned is shortened, and shows whole in a tooltip") {
    const std::string word = "pneumonoultramicroscopicsilicovolcanoconiosis";
    const std::string args = "--size 1280x720 --heads 4 --text " + shell_quote("The " + word + " was tired .");
    const WindowRun w = run_window("labels_long_word", args);
    nlohmann::json long_label;
    for (const auto& k : key_labels(w)) {
      CAPTURE(k.dump());
      if (k["full"] == word) long_label = k;
      else CHECK_FALSE(k["shortened"].get<bool>());  // the band grew for the longest that fits; short ones whole
    }
    REQUIRE(long_label.is_object());
    CHECK(long_label["shortened"].get<bool>());
    CHECK(long_label["orientation"] == "turned");
    const std::string shown = long_label["text"];
    CHECK(shown.size() > 12);                        // cut, but still most of a word
    CHECK(shown.find("…") != std::string::npos);
    // Hovering it shows the whole token.
    const int x = int(long_label["x"].get<double>() + long_label["w"].get<double>() / 2);
    const int y = int(long_label["y"].get<double>() + long_label["h"].get<double>() / 2);
    const WindowRun hover = run_window("labels_long_word_hover", args + " --frames 4 --pointer " + std::to_string(x) + "," + std::to_string(y));
    bool whole = false;
    for (const auto& t : hover.layout["texts"]) whole = whole || t["text"] == word;
    CHECK(whole);
  }

  TEST_CASE("heads labels: multi-character CJK tokens stand upright, or one character under the other") {
    const auto tokenizer = write_chinese_tokenizer("labels_cjk_tokenizer");
    // Three tokens, wide columns: upright, whole.
    const WindowRun wide = run_window("labels_cjk_upright", "--size 1280x720 --language zh --heads 2 --tokenizer " +
                                                                shell_quote(tokenizer.string()) + " --text 我喜欢打篮球");
    std::vector<std::string> drawn;
    for (const auto& k : key_labels(wide)) {
      CAPTURE(k.dump());
      CHECK(k["orientation"] == "upright");
      CHECK_FALSE(k["shortened"].get<bool>());
      drawn.push_back(k["text"]);
    }
    CHECK(drawn == std::vector<std::string>{"我喜欢", "打", "篮球"});
    // Many tokens, narrow columns: the labels turn, the CJK ones stacked (taller than wide), still whole.
    std::string text;
    for (int i = 0; i < 10; ++i) text += "我喜欢打篮球";
    const WindowRun narrow = run_window("labels_cjk_stacked", "--size 1280x720 --language zh --heads 8 --tokenizer " +
                                                                  shell_quote(tokenizer.string()) + " --text " + text);
    int stacked = 0;
    for (const auto& k : key_labels(narrow)) {
      CAPTURE(k.dump());
      CHECK(k["orientation"] != "turned");  // never on its side
      CHECK_FALSE(k["shortened"].get<bool>());
      if (k["orientation"] == "stacked" && k["full"] == "我喜欢") {
        ++stacked;
        CHECK(k["h"].get<double>() > 2.5 * k["w"].get<double>());
      }
    }
    CHECK(stacked > 0);
  }

  TEST_CASE("heads captions: one format for every tile, 16 and 32 heads, both languages") {
    for (const char* language : {"en", "zh"})
      for (const char* size : {"1280x720", "1920x1080"})
        for (const int heads : {8, 16, 32}) {
          CAPTURE(language);
          CAPTURE(size);
          CAPTURE(heads);
          const WindowRun w = run_window("labels_captions_" + std::string(language) + "_" + size + "_" + std::to_string(heads),
                                         "--size " + std::string(size) + " --language " + language + " --heads " +
                                             std::to_string(heads) + " --d-model 128");
          REQUIRE(captions_of_grid(w, 0).size() == size_t(heads));
          check_one_caption_format(w);
        }
  }

  TEST_CASE("heads captions: past 16 kv groups every caption names its group") {
    const WindowRun w = run_window("labels_captions_32_groups", "--size 1280x720 --kind gqa --heads 32 --groups 32 --d-model 128");
    const std::vector<nlohmann::json> captions = captions_of_grid(w, 0);
    REQUIRE(captions.size() == 32);
    for (const auto& c : captions) {
      CAPTURE(c.dump());
      const int head = c["tile"].get<int>();
      const std::string text = c["text"];
      const bool names_group = text.find("kv group " + std::to_string(head)) != std::string::npos ||
                               text.find("g" + std::to_string(head)) != std::string::npos;
      CHECK(names_group);
    }
    // 16 groups: each group its own colour, different from every other's.
    const WindowRun sixteen = run_window("labels_colours_16_groups", "--size 1920x1080 --kind gqa --heads 16 --groups 16 --d-model 128");
    std::set<std::vector<int>> colours;
    for (const auto& h : sixteen.layout["heads"]) colours.insert(h["frame_color"].get<std::vector<int>>());
    CHECK(colours.size() == 16);
  }

  TEST_CASE("heads colour bar: the numbers are round, shared or per head, probabilities or scores") {
    for (const char* flags : {"--heads 4", "--heads 4 --causal", "--heads 8 --scores --colormap diverging",
                              "--heads 4 --per-head-scale", "--heads 2 --text 'The cat sat on the mat'"}) {
      CAPTURE(flags);
      const WindowRun w = run_window("labels_ticks", std::string("--size 1280x720 ") + flags);
      const auto& ticks = w.layout["ticks"];
      REQUIRE(ticks.size() >= 2);
      for (const auto& t : ticks) {
        CAPTURE(t.dump());
        const double value = t["value"], step = t["step"];
        CHECK(round_tick(value, step));
        const std::string text = t["text"];
        CHECK(text.find('e') == std::string::npos);  // "0.2", never "9.68e-08"
        CHECK(std::stod(text) == doctest::Approx(value).epsilon(1e-4));
      }
    }
  }
}

}  // namespace attnscope::test

namespace attnscope::test {
namespace {

// A caption's format: its numbers (with their signs: "Δ −2" and "Δ 2" read alike) as "#", and what
// follows its second " · " (a designed head's pattern name, a score's words) as "*": every tile of a
// grid has the same one.
std::string format_of(const std::string& caption) {
  std::string shape = std::regex_replace(caption, std::regex("(−|-)?[0-9]+(\\.[0-9]+)?"), "#");
  size_t second = shape.find(" · ");
  if (second != std::string::npos) second = shape.find(" · ", second + 1);
  return second == std::string::npos ? shape : shape.substr(0, second) + " · *";
}

// Every layer number a text names: "layer 1", "Layer 1", "L1 h0", "第 1 层", "层1".
std::vector<int> layers_named(const std::string& text) {
  static const std::regex english("(?:[Ll]ayer |\\bL)([0-9]+)\\b"), chinese("(?:第 ?([0-9]+) ?层|层 ?([0-9]+))");
  std::vector<int> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), english); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi((*it)[1].str()));
  for (auto it = std::sregex_iterator(text.begin(), text.end(), chinese); it != std::sregex_iterator(); ++it)
    out.push_back(std::stoi((*it)[1].matched ? (*it)[1].str() : (*it)[2].str()));
  return out;
}

struct SweepProblems {
  int count = 0;
  std::set<std::string> reported;  // one message per distinct problem
  void add(const std::string& message) {
    ++count;
    if (reported.size() < 25 && reported.insert(message).second) FAIL_CHECK(message);
  }
};

// One screen of a sweep: key labels of a sentence demo whole, one caption format per grid, and the
// layer numbers of the checkpoint's heads within its layers and the same in every window that shows them.
// Returns true when a layer of the shown heads was named.
bool check_labels_screen(const nlohmann::json& screen, const std::string& where, int checkpoint_layers,
                         SweepProblems& problems) {
  const nlohmann::json& heads = screen.at("heads");
  bool sentence_demo = !heads.empty() && heads.size() <= 4;
  for (const auto& h : heads) sentence_demo = sentence_demo && h.at("tokens").get<int>() <= 16;
  if (sentence_demo)
    for (const auto& l : screen.at("labels"))
      if (l.at("axis") == "key" && l.at("shortened").get<bool>())
        problems.add(where + ": the key label \"" + l.at("full").get<std::string>() + "\" is drawn shortened (\"" +
                     l.at("text").get<std::string>() + "\")");
  std::map<int, std::string> format;  // grid → the format of its first caption
  std::map<int, int> form;
  // Compare A/B's panels alternate A's caption and B's, which adds the head's drift: one format for each side.
  const bool compare = where.find(", window compare") != std::string::npos;
  for (const auto& c : screen.at("captions")) {
    const int grid = 2 * c.at("grid").get<int>() + (compare && c.at("text").get<std::string>().rfind("B", 0) == 0 ? 1 : 0);
    const std::string f = format_of(c.at("text"));
    if (!format.count(grid)) {
      format[grid] = f;
      form[grid] = c.at("form");
    } else if (format[grid] != f || form[grid] != c.at("form").get<int>()) {
      problems.add(where + ": grid " + std::to_string(grid / 2) + " mixes caption formats: \"" + format[grid] + "\" and \"" + f +
                   "\" (\"" + c.at("text").get<std::string>() + "\")");
    }
  }
  if (checkpoint_layers <= 0) return false;
  // The checkpoint's layer as its card and the Heads view name it: one number on the screen.
  std::set<int> shown;
  for (const auto& t : screen.at("texts")) {
    const std::string window = t.at("window");
    const bool about_shown_heads = window.ends_with("###heads") || window.ends_with("###checkpoint") ||
                                   window.ends_with("###model") || window.ends_with("###large_head");
    for (const int layer : layers_named(t.at("text"))) {
      if (layer < 0 || layer >= checkpoint_layers)
        problems.add(where + ": \"" + t.at("text").get<std::string>() + "\" names layer " + std::to_string(layer) +
                     " of a model with layers 0 to " + std::to_string(checkpoint_layers - 1));
      if (about_shown_heads) shown.insert(layer);
    }
  }
  if (shown.size() > 1) {
    std::string list;
    for (const int l : shown) list += (list.empty() ? "" : ", ") + std::to_string(l);
    problems.add(where + ": the heads shown are named with layers " + list);
  }
  return !shown.empty();
}

// One start of a labels sweep: the window at `size` in `language` with `flags`, every screen recorded
// (--layout-sweep) into a scratch folder of its own named `name`. Its layout record.
nlohmann::json run_labels_sweep(const std::string& name, const std::string& size, const std::string& language,
                                const std::string& flags) {
  const auto dir = test_tmp() / "gui" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto out = dir / "layout.json";
  const CliRun run = run_app("XDG_CONFIG_HOME=" + shell_quote((dir / "config").string()),
                             "--size " + size + " --language " + language + flags +
                                 " --frames 3 --layout-sweep --layout-json " + shell_quote(out.string()));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  return read_json(out);
}

}  // namespace

TEST_SUITE("gui_labels") {
  TEST_CASE("labels sweep: every view and lesson step, windowed and presenting, 1280x720 and 1920x1080, English and Chinese") {
    // One start per (size, language, checkpoint or not) that shows every view, every panel beside the
    // view and every lesson step (--layout-sweep) and records each screen's labels, captions and texts.
    const std::string model = shell_quote((std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "assets/models/induction").string());
    // A third start: the heads without a softmax (Gated DeltaNet's signed maps), at the crowded size; a fourth:
    // a Granite 4.0-H checkpoint (Mamba-2 layers beside an attention layer, 4 layers), at the crowded size.
    const std::string granite =
        shell_quote((std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/granite_hybrid_f32").string());
    for (const int start : {0, 1, 2, 3})
      for (const char* language : {"en", "zh"})
        for (const char* size : {"1280x720", "1920x1080"}) {
          const bool checkpoint = start == 1 || start == 3, linear = start == 2, hybrid = start == 3;
          if (start > 0 && std::string(size) == "1920x1080") continue;  // the crowded size is the one that shortens
          const std::string name = std::string("labels_sweep_") + language + "_" + size + (checkpoint ? "_checkpoint" : "") +
                                   (linear ? "_linear" : "") + (hybrid ? "_granite" : "");
          CAPTURE(name);
          const nlohmann::json layout = run_labels_sweep(name, size, language,
                                                         (checkpoint ? " --checkpoint " + (hybrid ? granite : model) : "") +
                                                             (linear ? " --kind gated-deltanet" : ""));
          SweepProblems problems;
          int screens = 0, with_captions = 0, demos = 0, layer_screens = 0, presented = 0;
          for (const auto& s : layout.at("screens")) {
            const std::string screen = s.at("name");
            // The views, the lessons' steps windowed and in presentation mode (F11: every step, issue 40).
            if (screen != "start" && screen.rfind("window rollout", 0) != 0 && screen.rfind("window model view", 0) != 0 &&
                screen != "window compare token set" && screen != "token set conv view" && screen != "panel why a head attends" &&
                screen.rfind("view ", 0) != 0 && screen.rfind("lesson ", 0) != 0 &&
                screen.rfind("presentation lesson ", 0) != 0)
              continue;
            presented += screen.rfind("presentation lesson ", 0) == 0;
            ++screens;
            with_captions += !s.at("captions").empty();
            demos += !s.at("heads").empty() && s.at("heads").size() <= 4;
            layer_screens += check_labels_screen(s, name + ", " + screen, hybrid ? 4 : checkpoint ? 2 : 0, problems);
          }
          CHECK(screens > 20);       // the views and the lessons' steps
          CHECK(presented > 20);     // every lesson step in presentation mode too
          CHECK(with_captions > 5);  // the sweep did see grids with captions
          CHECK(demos > 0);          // … and small sentence demos
          if (checkpoint) CHECK(layer_screens > 3);  // … and the checkpoint's layer named beside its heads
          CHECK_MESSAGE(problems.count == 0, name << ": " << problems.count << " problems");
        }
  }

  TEST_CASE("labels sweep: a long input (heads computed on demand), 1280x720 and 1920x1080, English and Chinese") {
    // gpt-oss's fixture on 2100 ids, past the stack's 2048: the pooled heads' captions one format per grid, the
    // layer they are of named once, on every view, the exact cells' window, the Model view's pooled thumbnails and
    // every lesson step.
    const std::string long_input = long_input_flags();
    for (const char* language : {"en", "zh"})
      for (const char* size : {"1280x720", "1920x1080"}) {
        const std::string name = std::string("labels_sweep_long_") + language + "_" + size;
        CAPTURE(name);
        const nlohmann::json layout = run_labels_sweep(name, size, language, " " + long_input);
        SweepProblems problems;
        int screens = 0, layer_screens = 0, long_captions = 0, model_view_lines = 0;
        for (const auto& s : layout.at("screens")) {
          const std::string screen = s.at("name");
          if (screen == "window model view")  // the Model view's pooled grid, its line in the window's language
            for (const auto& t : s.at("texts"))
              model_view_lines += t.at("window").get<std::string>().ends_with("###model_view") &&
                                  t.at("text").get<std::string>().rfind(std::string(language) == "zh" ? "已缓存的概览：" : "overviews cached: ", 0) == 0;
          if (screen != "start" && screen.rfind("window ", 0) != 0 && screen.rfind("view ", 0) != 0 &&
              screen.rfind("lesson ", 0) != 0)
            continue;
          ++screens;
          for (const auto& c : s.at("captions"))
            long_captions += c.at("text").get<std::string>().find(std::string(language) == "zh" ? "头 3" : "head 3") == 0;
          layer_screens += check_labels_screen(s, name + ", " + screen, 2, problems);
        }
        CHECK(screens > 20);
        CHECK(long_captions > 0);  // the pooled heads were drawn with their captions
        CHECK(model_view_lines == 1);
        CHECK(layer_screens > 3);
        CHECK_MESSAGE(problems.count == 0, name << ": " << problems.count << " problems");
      }
  }
}

}  // namespace attnscope::test
