// Inputs that mean what they say (issue 22, item 6), driven through the window as a user does: a value
// typed into a slider (Ctrl+click, the characters, Enter — the keyboard events ImGui gets from GLFW,
// queued by --keys) is the value, or the nearest allowed one with a note beside the slider; paths
// typed with "~" or relative are used and reported absolute; token chips tell the index from the id;
// and no screen of the window names one of attnscope's command-line flags.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "gui_run.h"
#include "test_paths.h"
#include "text/tokenizer_fixtures.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The rectangle of the first text `text` drawn in the window whose ImGui name ends with `window`.
const json* text_item(const json& layout, const std::string& window, const std::string& text) {
  for (const json& t : layout.at("texts")) {
    const std::string w = t.at("window").get<std::string>();
    if (t.at("text") == text && w.size() >= window.size() && w.compare(w.size() - window.size(), window.size(), window) == 0)
      return &t;
  }
  return nullptr;
}

// A point inside the slider whose label `label` is drawn in `window`: ImGui draws a slider's label to
// the right of its frame, so a little to the left of the label's start, on the label's middle line.
std::string slider_point(const json& layout, const std::string& window, const std::string& label) {
  const json* t = text_item(layout, window, label);
  REQUIRE_MESSAGE(t != nullptr, "no label '" << label << "' in " << window);
  const int x = int(t->at("x").get<double>()) - 40;
  const int y = int(t->at("y").get<double>() + t->at("h").get<double>() * 0.5);
  return std::to_string(x) + "," + std::to_string(y);
}

// Ctrl+click the slider labelled `label` at frame 4, type `typed` at frame 6, Enter at frame 7.
std::string type_into(const json& layout, const std::string& window, const std::string& label, const std::string& typed) {
  return " --frames 12 --pointer " + slider_point(layout, window, label) + " --clicks 4 --keys 4:ctrl,6:text=" + typed +
         ",7:enter";
}

bool any_text_contains(const json& layout, const std::string& part) {
  for (const json& t : layout.at("texts"))
    if (t.at("text").get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

// Every text drawn, one after another: a long path that a wrapped paragraph split over lines is whole
// again (a wrapped line leaves out the space it broke at: compare with no_spaces()).
std::string all_text(const json& layout) {
  std::string s;
  for (const json& t : layout.at("texts")) s += t.at("text").get<std::string>();
  return s;
}

std::string no_spaces(std::string s) {
  std::erase(s, ' ');
  return s;
}

json read_scene(const fs::path& p) { return read_json(p); }

// The scene without the fields named: what must not have changed.
json without(json scene, const std::vector<std::pair<std::string, std::string>>& fields) {
  for (const auto& [section, key] : fields) scene[section].erase(key);
  return scene;
}

}  // namespace

TEST_SUITE("gui_errors") {
  TEST_CASE("typed slider value: a divisor typed into heads H is the number of heads, nothing else changes") {
    const fs::path dir = fresh_dir("inputs_typed_heads");
    const std::string base = "--text " + shell_quote("The cat sat on the mat") + " --d-model 64 --heads 8";
    const WindowRun before = run_window("inputs_typed_heads_before", base + " --save-scene " + shell_quote((dir / "before.json").string()));
    CHECK(before.layout.at("heads").size() == 8);

    const WindowRun typed = run_window("inputs_typed_heads_16", base + type_into(before.layout, "###model", "heads H", "16") +
                                                                      " --save-scene " + shell_quote((dir / "after.json").string()));
    // 16 heads, not the 16th divisor (the old slider read the number as a position: 64 heads).
    CHECK(typed.layout.at("heads").size() == 16);
    const json a = read_scene(dir / "before.json"), b = read_scene(dir / "after.json");
    CHECK(b["model"]["heads"] == 16);
    CHECK(b["model"]["d_model"] == 64);
    CHECK(b["model"]["kind"] == "mha");
    // MHA: one K/V group per head, as before.
    std::set<int> groups;
    for (const json& h : typed.layout.at("heads")) groups.insert(h.at("kv_group").get<int>());
    CHECK(groups.size() == 16);
    CHECK(without(b, {{"model", "heads"}, {"model", "groups"}}) == without(a, {{"model", "heads"}, {"model", "groups"}}));
    CHECK_FALSE(any_text_contains(typed.layout, "taken"));  // a valid value: no note
  }

  TEST_CASE("typed slider value: a number that is not allowed takes the nearest allowed one, with a note") {
    const fs::path dir = fresh_dir("inputs_typed_seven");
    const std::string base = "--text " + shell_quote("The cat sat on the mat") + " --d-model 64 --heads 2";
    const WindowRun before = run_window("inputs_typed_seven_before", base);
    const WindowRun typed = run_window("inputs_typed_seven", base + type_into(before.layout, "###model", "heads H", "7") +
                                                                 " --save-scene " + shell_quote((dir / "after.json").string()));
    // The divisors of 64 around 7 are 4 and 8; 8 is nearer.
    CHECK(typed.layout.at("heads").size() == 8);
    CHECK(read_scene(dir / "after.json")["model"]["heads"] == 8);
    CHECK(read_scene(dir / "after.json")["model"]["d_model"] == 64);
    const std::vector<std::string> model = texts_of(typed, "###model");
    INFO(joined(model));
    CHECK(std::find(model.begin(), model.end(), "7 not allowed (4 or 8): 8 taken") != model.end());

    // Too large: the largest divisor, and the note says why; in Chinese too.
    const WindowRun big = run_window("inputs_typed_big", base + " --language zh" +
                                                             type_into(run_window("inputs_typed_big_before", base + " --language zh").layout,
                                                                       "###model", "头数 H", "100000"));
    CHECK(big.layout.at("heads").size() == 64);
    const std::vector<std::string> zh = texts_of(big, "###model");
    INFO(joined(zh));
    CHECK(std::find(zh.begin(), zh.end(), "100000 大于最大值：已取 64") != zh.end());
  }

  TEST_CASE("typed slider value: Escape keeps the value, and a range slider clamps with a note") {
    const std::string text = "--text " + shell_quote("The cat sat on the mat") + " --heads 4";
    const WindowRun before = run_window("inputs_escape_before", text);
    const WindowRun escaped =
        run_window("inputs_escape", text + " --frames 12 --pointer " + slider_point(before.layout, "###model", "heads H") +
                                        " --clicks 4 --keys 4:ctrl,6:text=16,7:escape");
    CHECK(escaped.layout.at("heads").size() == 4);
    CHECK_FALSE(any_text_contains(escaped.layout, "taken"));

    // The grid's rows: 2 … 64.
    const std::string grid = "--view relpos2d --grid 8x8";
    const WindowRun g0 = run_window("inputs_rows_before", grid);
    const WindowRun g = run_window("inputs_rows", grid + type_into(g0.layout, "###input", "rows", "100"));
    const std::vector<std::string> input = texts_of(g, "###input");
    INFO(joined(input));
    CHECK(std::find(input.begin(), input.end(), "100 is above the maximum: 64 taken") != input.end());
    CHECK(std::find(input.begin(), input.end(), "64") != input.end());  // the slider shows it
  }

  TEST_CASE("typed slider value: designed heads count 1 to 16, typed 5 is 5 heads, 20 is 16 with a note") {
    const fs::path dir = fresh_dir("inputs_typed_designed");
    const std::string base = "--text " + shell_quote("The cat sat on the mat") + " --designed previous,next";
    const WindowRun before = run_window("inputs_typed_designed_before", base + " --save-scene " + shell_quote((dir / "before.json").string()));
    REQUIRE(before.layout.at("heads").size() == 2);
    const WindowRun five = run_window("inputs_typed_designed_5", base + type_into(before.layout, "###model", "heads H", "5") +
                                                                   " --save-scene " + shell_quote((dir / "five.json").string()));
    CHECK(five.layout.at("heads").size() == 5);
    CHECK_FALSE(any_text_contains(five.layout, "taken"));
    const json a = read_scene(dir / "before.json"), b = read_scene(dir / "five.json");
    CHECK(b["model"]["designed"].size() == 5);
    // Nothing else changed: the first two patterns, the kind and the head width (designed heads are
    // 64 wide each: C = 64 H) are the ones before.
    CHECK(b["model"]["designed"][0] == a["model"]["designed"][0]);
    CHECK(b["model"]["designed"][1] == a["model"]["designed"][1]);
    CHECK(b["model"]["kind"] == a["model"]["kind"]);
    CHECK(b["model"]["d_model"].get<int>() / 5 == a["model"]["d_model"].get<int>() / 2);
    const WindowRun twenty = run_window("inputs_typed_designed_20", base + type_into(before.layout, "###model", "heads H", "20"));
    CHECK(twenty.layout.at("heads").size() == 16);
    const std::vector<std::string> model = texts_of(twenty, "###model");
    INFO(joined(model));
    CHECK(std::find(model.begin(), model.end(), "20 is above the maximum: 16 taken") != model.end());
  }

  TEST_CASE("typed slider value: Display → UI scale takes a typed percentage, or the nearest 5% step with a note") {
    const std::string base = "--size 1280x720";
    const WindowRun first = run_window("inputs_typed_scale_menu", base);
    const json& menu = first.layout.at("widgets").at("menu.display");
    const std::string at_menu = std::to_string(int(menu.at("x").get<double>() + menu.at("w").get<double>() / 2)) + "," +
                                std::to_string(int(menu.at("y").get<double>() + menu.at("h").get<double>() / 2));
    const WindowRun opened = run_window("inputs_typed_scale_open", base + " --frames 6 --clicks 3 --pointer " + at_menu);
    REQUIRE(opened.layout.at("widgets").contains("menu.display.scale"));
    const json& slider = opened.layout.at("widgets").at("menu.display.scale");
    const std::string at_slider = std::to_string(int(slider.at("x").get<double>() + slider.at("w").get<double>() / 2)) + "," +
                                  std::to_string(int(slider.at("y").get<double>() + slider.at("h").get<double>() / 2));
    auto typed = [&](const std::string& name, const std::string& text) {
      return run_window(name, base + " --frames 14 --clicks 3,6 --pointer \"" + at_menu + ";" + at_slider +
                                  "\" --keys 6:ctrl,8:text=" + text + ",9:enter");
    };
    // A step of the slider: taken as it is (150, not a position on the slider), no note.
    const WindowRun valid = typed("inputs_typed_scale_150", "150");
    CHECK(valid.layout.at("ui_scale").get<double>() == doctest::Approx(1.5));
    CHECK_FALSE(any_text_contains(valid.layout, "taken"));
    // Between two steps: the nearer one, said under the slider.
    const WindowRun between = typed("inputs_typed_scale_137", "137");
    CHECK(between.layout.at("ui_scale").get<double>() == doctest::Approx(1.35));
    CHECK(any_text_contains(between.layout, "137 not allowed (135 or 140): 135 taken"));
    // Above what a 1280×720 window holds (200%): 200%, with a note.
    const WindowRun above = typed("inputs_typed_scale_250", "250");
    CHECK(above.layout.at("ui_scale").get<double>() == doctest::Approx(2.0));
    CHECK(any_text_contains(above.layout, "250 is above the maximum: 200 taken"));
  }

  TEST_CASE("typed training settings: a valid number is taken as typed, one out of range the nearest with a note") {
    const std::string base = "--show-training --size 1920x1080";
    const WindowRun first = run_window("inputs_typed_training", base);
    // Click into the field (left of its label), type, Enter. Returns the run.
    auto typed = [&](const std::string& name, const std::string& label, const std::string& text) {
      return run_window(name, base + " --frames 12 --pointer " + slider_point(first.layout, "###training", label) +
                                  " --clicks 4 --keys 6:text=" + text + ",7:enter");
    };
    const json defaults = first.layout.at("training").at("form");
    const WindowRun steps = typed("inputs_typed_training_steps", "steps", "250");
    const json form = steps.layout.at("training").at("form");
    CHECK(form.at("steps") == 250);
    CHECK_FALSE(any_text_contains(steps.layout, "taken"));
    json rest = form, rest_before = defaults;  // nothing else changed
    rest.erase("steps");
    rest_before.erase("steps");
    CHECK(rest == rest_before);

    const WindowRun zero = typed("inputs_typed_training_steps0", "steps", "0");
    CHECK(zero.layout.at("training").at("form").at("steps") == 1);
    CHECK(any_text_contains(zero.layout, "0 is below the minimum: 1 taken"));

    const WindowRun batch = typed("inputs_typed_training_batch", "batch", "2.5");
    CHECK(batch.layout.at("training").at("form").at("batch") == 3);
    CHECK(any_text_contains(batch.layout, "2.5 is not a whole number: 3 taken"));

    const WindowRun lr = typed("inputs_typed_training_lr", "learning rate", "0.002");
    CHECK(lr.layout.at("training").at("form").at("lr").get<double>() == doctest::Approx(0.002));
    CHECK_FALSE(any_text_contains(lr.layout, "taken"));
    const WindowRun big_lr = typed("inputs_typed_training_lr5", "learning rate", "5");
    CHECK(big_lr.layout.at("training").at("form").at("lr").get<double>() == doctest::Approx(1.0));
    CHECK(any_text_contains(big_lr.layout, "5 is above the maximum: 1 taken"));

    const WindowRun seed = typed("inputs_typed_training_seed", "seed", "-3");
    CHECK(seed.layout.at("training").at("form").at("seed") == 0);
    CHECK(any_text_contains(seed.layout, "-3 is below the minimum: 0 taken"));
  }

  TEST_CASE("sentence box: a long sentence wraps inside the box, and editing it edits the sentence only") {
    const std::string sentence = "The quick brown fox jumps over the lazy dog. Attention lets every token look at every "
                                 "other token, and 注意力机制 wraps too.";
    const std::string args = "--heads 2 --text " + shell_quote(sentence);
    const WindowRun w = run_window("inputs_box", args);
    // The box's text: the sentence with soft breaks ("\r\n", drawn as nothing and a new line).
    const json* box = nullptr;
    for (const json& t : w.layout.at("texts"))
      if (t.at("window").get<std::string>().ends_with("###input") && t.at("text").get<std::string>().starts_with("The quick"))
        box = &t;
    REQUIRE(box != nullptr);
    std::string shown = box->at("text").get<std::string>();
    const size_t lines = 1 + size_t(std::count(shown.begin(), shown.end(), '\n'));
    CHECK(lines >= 3);
    // Every line inside what the box shows (the old box ran one long line off to the right).
    CHECK(box->at("x").get<double>() + box->at("w").get<double>() <= box->at("clip").at("x").get<double>() + box->at("clip").at("w").get<double>());
    const size_t first_break = shown.find("\r\n");  // where the first line ends, in the sentence too
    REQUIRE(first_break > 0);
    REQUIRE(sentence[first_break - 1] == ' ');  // English lines break after a space
    for (size_t at = shown.find("\r\n"); at != std::string::npos; at = shown.find("\r\n", at)) shown.erase(at, 2);
    CHECK(shown == sentence);

    // Backspace at the start of the second line takes the space before the break, as in any editor
    // that wraps; typing at the end appends. The sentence has no soft breaks in it.
    const double x = box->at("x").get<double>(), y = box->at("y").get<double>();
    const double line = box->at("h").get<double>() / double(lines);
    const fs::path dir = fresh_dir("inputs_box_edit");
    const std::string at_line_2 = std::to_string(int(x) + 1) + "," + std::to_string(int(y + line * 1.5));
    run_window("inputs_box_backspace", args + " --frames 10 --pointer " + at_line_2 + " --clicks 4 --keys 6:backspace --save-scene " +
                                           shell_quote((dir / "backspace.json").string()));
    const std::string joined_text = read_scene(dir / "backspace.json")["input"]["text"].get<std::string>();
    CHECK(joined_text == sentence.substr(0, first_break - 1) + sentence.substr(first_break));
    const std::string below = std::to_string(int(x) + 100) + "," + std::to_string(int(y + line * double(lines) + line));
    run_window("inputs_box_type", args + " --frames 10 --pointer " + below + " --clicks 4 --keys '6:text= Z 我' --save-scene " +
                                      shell_quote((dir / "typed.json").string()));
    CHECK(read_scene(dir / "typed.json")["input"]["text"] == sentence + " Z 我");
  }

  TEST_CASE("paths: ~ and relative paths typed in the window are used and reported absolute") {
    const fs::path home = fresh_dir("inputs_paths_home");
    const fs::path work = fresh_dir("inputs_paths_work");
    const std::string env = "HOME=" + shell_quote(home.string()) + " XDG_CONFIG_HOME=" + shell_quote((home / "config").string());
    // Save scene… and Open scene… with "~/…" (quoted: the window expands it, not the shell).
    fs::create_directories(home / "lesson");
    run_window("inputs_paths_save", "--heads 2 --save-scene '~/lesson/scene.json'", env, work.string());
    REQUIRE(fs::exists(home / "lesson" / "scene.json"));
    const WindowRun opened = run_window("inputs_paths_open", "--open-scene '~/lesson/scene.json'", env, work.string());
    const std::string shown = (home / "lesson" / "scene.json").string();
    CHECK(opened.layout.at("status").get<std::string>() == "scene read from " + shown);
    CHECK(any_text_contains(opened.layout, "scene read from " + shown));
    CHECK(opened.layout.at("heads").size() == 2);

    // A relative path is the current folder's, and reported so.
    run_window("inputs_paths_relative", "--heads 2 --save-scene 'here.json'", env, work.string());
    CHECK(fs::exists(work / "here.json"));
  }

  TEST_CASE("paths: a checkpoint saved from the Training window is reported with its absolute path") {
    const fs::path home = fresh_dir("inputs_ckpt_home");
    const fs::path work = fresh_dir("inputs_ckpt_work");
    const std::string env = "HOME=" + shell_quote(home.string()) + " XDG_CONFIG_HOME=" + shell_quote((home / "config").string());
    const std::string train = "--show-training --train-settings d_model=32,seq_len=16,batch=4,threads=1,snapshot_every=5,steps=4";
    const WindowRun w = run_window("inputs_ckpt", train + " --train-actions 'start,save:~/runs/window'", env, work.string());
    CHECK(fs::exists(home / "runs" / "window" / "model.safetensors"));
    CHECK(all_text(w.layout).find((home / "runs" / "window").string()) != std::string::npos);
    const WindowRun r = run_window("inputs_ckpt_relative", train + " --train-actions start,save:runs/window", env, work.string());
    CHECK(fs::exists(work / "runs" / "window" / "model.safetensors"));
    CHECK(all_text(r.layout).find((work / "runs" / "window").string()) != std::string::npos);
  }

  TEST_CASE("token chips: the index is apart from the token, and a model's id reads #id") {
    const WindowRun words = run_window("inputs_chips_words", "--heads 2 --text " + shell_quote("the cat sat"));
    const std::vector<std::string> input = texts_of(words, "###input");
    INFO(joined(input));
    for (const char* expected : {"0", "1", "2", "the", "cat", "sat"})
      CHECK(std::find(input.begin(), input.end(), expected) != input.end());
    CHECK(std::find(input.begin(), input.end(), "0 the") == input.end());
    // The index is small and low, beside its token: its text item is shorter than the token's line.
    const json* index = text_item(words.layout, "###input", "1");
    const json* token = text_item(words.layout, "###input", "cat");
    REQUIRE((index && token));
    CHECK(index->at("h").get<double>() < token->at("h").get<double>());
    CHECK(index->at("x").get<double>() < token->at("x").get<double>());

    // A real model's tokenizer: the id follows the token, as "#id".
    MiniVocab v = byte_level_vocab();
    v.merge("c", "a");
    v.merge("ca", "t");
    v.merge("Ġ", "cat");
    const int cat = v.vocab["Ġcat"].get<int>();
    const fs::path dir = fresh_dir("inputs_chips_tokenizer");
    std::ofstream(dir / "tokenizer.json") << byte_level_document(v).dump();
    const WindowRun ids = run_window("inputs_chips_ids", "--heads 1 --text " + shell_quote("a cat") + " --tokenizer " +
                                                             shell_quote((dir / "tokenizer.json").string()));
    const std::vector<std::string> with_ids = texts_of(ids, "###input");
    INFO(joined(with_ids));
    CHECK(std::find(with_ids.begin(), with_ids.end(), "#" + std::to_string(cat)) != with_ids.end());
    CHECK(std::find(with_ids.begin(), with_ids.end(), "#" + std::to_string(int('a'))) != with_ids.end());

    // A checkpoint without a tokenizer, given ids: each chip is its index and "#id" (not "0 5").
    const fs::path induction = fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "models" / "induction";
    const WindowRun typed_ids = run_window("inputs_chips_checkpoint", "--checkpoint " + shell_quote(induction.string()) +
                                                                          " --text " + shell_quote("ids: 5 9 12") + " --frames 6");
    const std::vector<std::string> chips = texts_of(typed_ids, "###input");
    INFO(joined(chips));
    for (const char* expected : {"#5", "#9", "#12", "0", "1", "2"})
      CHECK(std::find(chips.begin(), chips.end(), expected) != chips.end());
    CHECK(std::find(chips.begin(), chips.end(), "5") == chips.end());  // the id only once, marked as one
  }

  TEST_CASE("lesson 5 step 4: the caption gives the interior and the border error the Convolution view shows") {
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window("inputs_lesson5_" + language, "--lesson 5 --step 4 --frames 5 --language " + language);
      // The view's numbers: "interior: 1.44e-08", "border:   3.87" (内部：…, 边界：… in Chinese).
      std::string interior, border;
      for (const std::string& t : texts_of(w, "###conv")) {
        const size_t colon = t.find(language == "en" ? ":" : "：");
        if (colon == std::string::npos) continue;
        std::string number = t.substr(colon + (language == "en" ? 1 : std::string("：").size()));
        number.erase(0, number.find_first_not_of(' '));
        if (t.starts_with(language == "en" ? "interior" : "内部")) interior = number;
        if (t.starts_with(language == "en" ? "border" : "边界")) border = number;
      }
      REQUIRE_FALSE(interior.empty());
      REQUIRE_FALSE(border.empty());
      CHECK(std::stod(border) > 1.0);       // the border does not match without padding keys …
      CHECK(std::stod(interior) < 1e-4);    // … the interior does
      std::string caption;
      for (const std::string& t : texts_of(w, "###lessons")) caption += t;
      INFO(caption);
      CHECK(caption.find(interior) != std::string::npos);
      CHECK(caption.find(border) != std::string::npos);
      CHECK(caption.find("{conv.") == std::string::npos);
      CHECK(caption.find("almost exactly") == std::string::npos);
    }
  }

  TEST_CASE("window texts: an error that names a flag is shown in the window's words") {
    // The layout's "error" is the engine's message (shared with the command line); what is drawn says
    // it as the window does.
    const WindowRun alpha = run_window("inputs_flag_alpha", "--view relpos2d --grid 8x8 --alpha -1");
    CHECK(alpha.layout.at("error").get<std::string>().find("--alpha must be >= 0") != std::string::npos);
    CHECK(no_spaces(all_text(alpha.layout)).find(no_spaces("α must be >= 0")) != std::string::npos);
    CHECK(all_text(alpha.layout).find("--alpha") == std::string::npos);

    const fs::path empty = fresh_dir("inputs_flag_tokenizer");  // a folder with no tokenizer in it
    const WindowRun tok = run_window("inputs_flag_tokenizer", "--text hi --tokenizer " + shell_quote(empty.string()));
    CHECK_FALSE(tok.layout.at("error").get<std::string>().empty());
    const std::string drawn = all_text(tok.layout);
    INFO(drawn);
    CHECK(drawn.find("--tokenizer") == std::string::npos);
  }

  TEST_CASE("window texts: no screen of the sweep names one of attnscope's command-line flags") {
    // Every flag of the program and its subcommands, from their --help.
    std::set<std::string> flags;
    for (const std::string cmd : {"", "compute", "relpos", "conv", "export", "kv-cache", "train"}) {
      const CliRun help = run_app("", cmd + " --help");
      const std::regex flag("--[a-z][a-z0-9-]+");
      for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), flag); it != std::sregex_iterator(); ++it)
        flags.insert(it->str());
    }
    flags.erase("--help");
    REQUIRE(flags.count("--checkpoint") == 1);
    REQUIRE(flags.count("--tokenizer") == 1);
    const fs::path dir = fresh_dir("inputs_flag_sweep");
    for (const std::string language : {"en", "zh"}) {
      const fs::path out = dir / (language + ".json");
      const CliRun run = run_app("XDG_CONFIG_HOME=" + shell_quote((dir / ("config_" + language)).string()),
                                 "--language " + language + " --frames 3 --layout-sweep --layout-json " + shell_quote(out.string()));
      REQUIRE(run.exit_code == 0);
      const json layout = read_json(out);
      REQUIRE(layout.at("screens").size() > 10);
      std::set<std::string> reported;
      for (const json& screen : layout.at("screens"))
        for (const json& t : screen.at("texts")) {
          const std::string text = t.at("text").get<std::string>();
          const std::regex flag("(^|[^A-Za-z0-9-])(--[a-z][a-z0-9-]+)");
          for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
            if (flags.count((*it)[2].str()) && reported.insert(text).second)
              FAIL_CHECK(language << " · " << screen.at("name").get<std::string>() << ": \"" << text << "\" names "
                                  << (*it)[2].str());
        }
    }
  }
}

}  // namespace attnscope::test
