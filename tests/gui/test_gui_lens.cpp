// Windows → Logit lens through the X server (issue 38 item 2): real clicks (xdotool) open the view from the menu on a
// checkpoint fixture, a hover over a cell shows its top tokens, a click chooses its position, and the view's Save CSV
// of the lens and of the attribution at that position are byte for byte what `attnscope export --what lens|attribution`
// writes for the same input. Without a checkpoint the view says the lens needs one. A Chinese sentence's lens draws
// its Chinese tokens' glyphs in the cells.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "attnscope/io/file_io.h"
#include "attnscope/model/model.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/text/tokenizer.h"
#include "core/lens_export.h"
#include "gui_run.h"
#include "model/checkpoint_fixtures.h"

namespace attnscope::test {

namespace fs = std::filesystem;
using nlohmann::json;

TEST_SUITE("gui_lens") {
  TEST_CASE("Logit lens through the X server: open from the menu, hover and click a cell in sight, Save CSV equals the CLI's") {
    const std::string name = "qwen2_gqa";  // 2 layers, 4 heads, 12 tokens
    const fs::path fixture = model_fixture(name);
    const std::vector<int32_t> ids = fixture_ids(name);
    const std::string input = ids_input(ids);
    const auto dir = test_tmp() / "gui_lens_click";
    fs::remove_all(dir);
    fs::create_directories(dir / "run");
    const std::string q = shell_quote(dir.string());
    const std::string hover = "xy=$(python3 " + q + "/steady_rect.py " + q + "/layout.json lens.cell.1.10) && "
                              "xdotool mousemove --window $wid $xy\n";
    const json shown = drive_window(
        dir, "--checkpoint " + shell_quote(fixture.string()) + " --size 1280x720 --text " + shell_quote(input) + " --layout-live",
        "click_on menu.windows\n"
        "click_on menu.windows.lens\n"
        "await 'lens\\.cell\\.1\\.10'\n" + hover +
        "sleep 0.5\n"
        "await 'most probable next tokens after this layer'\n"
        "await 'layer 1 . position 10'\n"
        "xdotool click 1\n"
        "await '\"lens_position\": 10'\n"
        "click_on lens.save_csv\n"
        "await 'attnscope-lens-[0-9-]+\\.csv'\n"
        "click_on lens.tab.attribution\n"
        "await 'lens\\.head\\.1\\.3'\n"
        "click_on lens.save_csv\n"
        "await 'attnscope-attribution-[0-9-]+\\.csv'\n",
        "cd " + shell_quote((dir / "run").string()) + "\n");
    CHECK(shown.at("error") == "");
    CHECK(shown.at("lens_position") == 10);
    bool lens_window = false;
    for (const json& w : shown.at("windows")) lens_window = lens_window || w.at("title").get<std::string>().ends_with("###lens");
    CHECK(lens_window);
    const fs::path lens_csv = only_file(dir / "run" / "exports", "attnscope-lens-");
    const fs::path attribution_csv = only_file(dir / "run" / "exports", "attnscope-attribution-");
    REQUIRE_FALSE(lens_csv.empty());
    REQUIRE_FALSE(attribution_csv.empty());

    // The command line's export of the same input.
    const std::string args = "export --checkpoint " + shell_quote(fixture.string()) + " --ids " + ids_arg(ids);
    const CliRun l = run_cli(args + " --what lens --format csv --out " + shell_quote((dir / "cli_lens.csv").string()));
    REQUIRE(l.exit_code == 0);
    const CliRun a = run_cli(args + " --what attribution --attribute-position 10 --format csv --out " +
                             shell_quote((dir / "cli_attribution.csv").string()));
    REQUIRE(a.exit_code == 0);
    CHECK(read_file(lens_csv, 1 << 24) == read_file(dir / "cli_lens.csv", 1 << 24));
    CHECK(read_file(attribution_csv, 1 << 24) == read_file(dir / "cli_attribution.csv", 1 << 24));
    // The attribution of position 10 (the clicked column, in sight beside the last one the view opens on).
    CHECK(read_file(attribution_csv, 1 << 24).find("\n10,") != std::string::npos);
  }

  TEST_CASE("Logit lens without a checkpoint: one sentence says the lens needs one, with the ways to open one") {
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window(std::string("lens_no_checkpoint_") + language,
                                     std::string("--show-lens --size 1280x720 --language ") + language);
      const std::vector<std::string> texts = texts_of(w, "###lens");
      INFO(joined(texts));
      CHECK(w.layout.at("error") == "");
      if (std::string(language) == "en") {
        CHECK(shows(texts, "The synthetic seeded layer has no unembedding, so the lens needs a checkpoint"));
        CHECK(shows(texts, "Open the shipped induction model"));
      } else {
        CHECK(shows(texts, "合成的种子层没有反嵌入"));
      }
    }
  }

  TEST_CASE("Logit lens of a Mamba-2 hybrid: every layer has its lens row, in both languages") {
    const fs::path fixture = model_fixture("granite_hybrid_f32");
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window(std::string("lens_granite_") + language,
                                     "--checkpoint " + shell_quote(fixture.string()) +
                                         " --show-lens --size 1920x1080 --text 'ids: 5 17 42 9 33 60 5 17 42 9' --language " +
                                         language);
      CHECK(w.layout.at("error") == "");
      const json& widgets = w.layout.at("widgets");
      for (int l = 0; l < 4; ++l) CHECK(widgets.contains("lens.cell." + std::to_string(l) + ".9"));
      CHECK(widgets.contains("lens.kl_plot"));
      CHECK(widgets.contains("lens.rank_plot"));
    }
  }

  TEST_CASE("Logit lens of a Chinese sentence: every cell draws its Chinese token's own glyphs, EN and 中文 interface") {
    // The qwen2_gqa fixture's weights (vocabulary of 64) with a tokenizer whose every token is Chinese: the lens's
    // most probable next tokens, whatever they are, are Chinese words, and the cells must draw their ideographs
    // (the fonts' display_label would give "U+XXXX" for a code point no font has; "?" or a box is never right).
    const fs::path dir = test_tmp() / "gui" / "lens_cjk_model";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path fixture = model_fixture("qwen2_gqa");
    fs::copy_file(fixture / "config.json", dir / "config.json");
    fs::copy_file(fixture / "model.safetensors", dir / "model.safetensors");
    const std::vector<std::string> words = {
        "我", "你", "他", "喜欢", "打", "篮球", "足球", "今天", "明天", "天气", "很", "好", "学生", "老师", "学校", "中国",
        "北京", "上海", "吃", "饭", "喝", "茶", "水", "书", "看", "写", "字", "山", "河", "花", "猫", "狗",
        "的", "了", "是", "在", "有", "和", "一", "二", "三", "大", "小", "人", "家", "车", "路", "门",
        "风", "雨", "雪", "春", "夏", "秋", "冬", "红", "绿", "蓝", "白", "黑", "早", "晚", "我们", "朋友"};
    REQUIRE(words.size() == 64);
    json vocab = json::object();
    for (size_t i = 0; i < words.size(); ++i) vocab[words[i]] = int(i);
    json merges = json::array({json::array({"喜", "欢"}), json::array({"篮", "球"})});
    // Single characters of the merged words are not tokens of their own: the merges need them as pieces only.
    vocab["喜"] = 64, vocab["欢"] = 65, vocab["篮"] = 66, vocab["球"] = 67;
    const json tokenizer = {{"version", "1.0"},    {"truncation", nullptr}, {"padding", nullptr},
                            {"added_tokens", json::array()},                {"normalizer", nullptr},
                            {"pre_tokenizer", nullptr},                     {"post_processor", nullptr},
                            {"decoder", nullptr},
                            {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"vocab", vocab}, {"merges", merges}}}};
    std::ofstream(dir / "tokenizer.json") << tokenizer.dump();
    const std::string sentence = "我喜欢打篮球";
    // The engine's lens of the same input: each cell's top token and its label.
    pipeline::Request request;
    request.model = model::open(dir);
    request.input.form = pipeline::TokenInput::Form::text;
    request.input.text = sentence;
    request.steps = {pipeline::Step::logit_lens};
    const pipeline::Result r = pipeline::run(request);
    REQUIRE(r.lens);
    REQUIRE(r.tokens->labels == std::vector<std::string>{"我", "喜欢", "打", "篮球"});
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window(std::string("lens_cjk_") + language,
                                     "--checkpoint " + shell_quote(dir.string()) + " --show-lens --size 1280x720 --text " +
                                         shell_quote(sentence) + " --language " + language);
      INFO(w.run.err);
      CHECK(w.layout.at("error") == "");
      const json& widgets = w.layout.at("widgets");
      int cjk = 0;
      for (int l = 0; l < r.lens->layers; ++l)
        for (int t = 0; t < r.lens->tokens; ++t) {
          const std::string name = "lens.cell." + std::to_string(l) + "." + std::to_string(t);
          CAPTURE(name);
          REQUIRE(widgets.contains(name));
          const std::string want = lens_token_label(r, r.lens->top[size_t(l)][size_t(t)].front().id);
          const std::string drawn = widgets.at(name).value("text", "");
          CHECK(drawn == want);  // the token's own characters, not "U+XXXX", "?" or a box
          CHECK(drawn.find("U+") == std::string::npos);
          for (char32_t c : decode_utf8(drawn)) cjk += c >= 0x4E00 && c <= 0x9FFF;
        }
      CHECK(cjk >= r.lens->layers * r.lens->tokens);  // every cell at least one ideograph
      // The picture: each cell's glyphs have ink (pixels far from the cell's fill, its corner's colour); an
      // ideograph has many strokes, so a cell drawing one has far more than the few of a "?".
      for (int l = 0; l < r.lens->layers; ++l)
        for (int t = 0; t < r.lens->tokens; ++t) {
          const json& cell = widgets.at("lens.cell." + std::to_string(l) + "." + std::to_string(t));
          const int x0 = int(cell.at("x").get<double>()), y0 = int(cell.at("y").get<double>());
          const int x1 = x0 + int(cell.at("w").get<double>()), y1 = y0 + int(cell.at("h").get<double>());
          const Rgba fill = w.png.at(x0 + 5, y0 + 5);  // inside the chosen column's outline
          int inked = 0;
          for (int y = y0 + 5; y < y1 - 5; ++y)
            for (int x = x0 + 5; x < x1 - 5; ++x) inked += channel_distance(w.png.at(x, y), fill) > 80;
          CAPTURE(l);
          CAPTURE(t);
          CHECK(inked > 40);
        }
    }
  }
}

}  // namespace attnscope::test
