// "Why does this head attend here?" through the X server (issue 38 item 4): on the GPT-2 fixture, a real right-click
// (xdotool) on a cell of the Heads view opens its menu, the menu's item opens the panel beside the cell, the panel's
// parts sum to the score it shows (≤ 1e-4 relative), and its Save CSV and Save SVG are byte for byte what
// `attnscope export --what qk-attribution` writes for the same cell — in English and in 中文. Without a click
// (--why): a Gemma 2 cell says it is attributed before the soft-cap and shows both values, an MLA cell sums to
// its score, and a masked key, a seeded scene and an attentions file each get one clear sentence.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "attnscope/io/file_io.h"
#include "gui_run.h"
#include "model/checkpoint_fixtures.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The panel's numbers (the layout record's "qk"): its cell is the one asked about and its parts sum to its score.
void check_panel_sums(const json& layout, int layer, int head, int query, int key) {
  const json& q = layout.at("qk");
  INFO(q.dump());
  CHECK(q.at("open") == true);
  REQUIRE(q.contains("sum"));
  CHECK(q.at("cell") == json::array({layer, head, query, key}));
  const double sum = q.at("sum"), score = q.at("score");
  CHECK(std::abs(sum - score) <= 1e-4 * std::max(1e-2, std::abs(score)));
}

}  // namespace

TEST_SUITE("gui_qk_attribution") {
  TEST_CASE("right-click a cell of GPT-2's heads, ask why: the panel's parts sum to its score, Save CSV and SVG equal the CLI's") {
    const std::string name = "gpt2_prefix_f32";
    const fs::path fixture = model_fixture(name);
    const std::vector<int32_t> ids = fixture_ids(name);
    const int T = int(ids.size()), layer = 1, head = 1, query = T - 1, key = T - 3;
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const auto dir = test_tmp() / (std::string("gui_qk_click_") + language);
      fs::remove_all(dir);
      fs::create_directories(dir / "run");
      const std::string q = shell_quote(dir.string());
      // The cell's centre from the layout record's heads (image rectangle, cell side, first token shown).
      std::ofstream(dir / "cell_xy.py") << R"(import json, sys, time
path, head, query, key = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for _ in range(600):
    try:
        heads = json.load(open(path)).get("heads", [])
    except (OSError, ValueError):
        heads = []
    if len(heads) > head:
        h = heads[head]
        print(int(h["x"] + (key - h["first_key"] + 0.5) * h["cell"]), int(h["y"] + (query - h["first_query"] + 0.5) * h["cell"]))
        sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
)";
      const std::string right_click = "xy=$(python3 " + q + "/cell_xy.py " + q + "/layout.json " + std::to_string(head) + " " +
                                      std::to_string(query) + " " + std::to_string(key) +
                                      ") && xdotool mousemove --window $wid $xy && sleep 0.5 && xdotool click 3\n";
      const json shown = drive_window(
          dir,
          "--checkpoint " + shell_quote(fixture.string()) + " --layer " + std::to_string(layer) +
              " --size 1280x720 --language " + language + " --text " + shell_quote(ids_input(ids)) + " --layout-live",
          "await '\"first_query\"'\n"
          "sleep 1\n" + right_click +
          "click_on heads.why\n"
          "await '\"sum\": '\n"
          "click_on qk.save_csv\n"
          "await 'attnscope-qk-L1-H1-[^\"]*\\.csv'\n"
          "click_on qk.save_svg\n"
          "await 'attnscope-qk-L1-H1-[^\"]*\\.svg'\n",
          "cd " + shell_quote((dir / "run").string()) + "\n");
      CHECK(shown.at("error") == "");
      check_panel_sums(shown, layer, head, query, key);
      bool panel = false;
      for (const json& w : shown.at("windows")) panel = panel || w.at("title").get<std::string>().ends_with("###qk_panel");
      CHECK(panel);
      // the sum line as drawn, in the window's language
      std::vector<std::string> texts;
      for (const json& t : shown.at("texts")) texts.push_back(t.at("text"));
      INFO(joined(texts));
      CHECK(shows(texts, std::string(language) == "zh" ? "各部分之和" : "parts sum to"));
      CHECK(shows(texts, std::string(language) == "zh" ? "其余（" : "other ("));
      for (int bar = 0; bar < 8; ++bar) CHECK(shown.at("widgets").contains("qk.bar." + std::to_string(bar)));

      const fs::path csv = only_file(dir / "run" / "exports", "attnscope-qk-", ".csv");
      const fs::path svg = only_file(dir / "run" / "exports", "attnscope-qk-", ".svg");
      REQUIRE_FALSE(csv.empty());
      REQUIRE_FALSE(svg.empty());
      const std::string cell = " --what qk-attribution --layer " + std::to_string(layer) + " --head " + std::to_string(head) +
                               " --query " + std::to_string(query) + " --key " + std::to_string(key);
      const std::string args = "export --checkpoint " + shell_quote(fixture.string()) + " --ids " + ids_arg(ids) + cell;
      REQUIRE(run_cli(args + " --format csv --out " + shell_quote((dir / "cli.csv").string())).exit_code == 0);
      REQUIRE(run_cli(args + " --format svg --language " + language + " --out " + shell_quote((dir / "cli.svg").string()))
                  .exit_code == 0);
      CHECK(read_file(csv, 1 << 24) == read_file(dir / "cli.csv", 1 << 24));
      CHECK(read_file(svg, 1 << 24) == read_file(dir / "cli.svg", 1 << 24));
    }
  }

  TEST_CASE("why, without a click: Gemma 2 before its soft-cap, MLA through its latent, and the sentences of a refusal") {
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = std::string(language) == "zh";
      const std::string common = std::string(" --size 1280x720 --language ") + language;
      {  // Gemma 2: the parts sum to the score before the cap, and the panel says so with both values
        const std::string name = "gemma2_softcap_f32";
        const std::vector<int32_t> ids = fixture_ids(name);
        const int T = int(ids.size());
        const WindowRun w = run_window(std::string("qk_gemma2_") + language,
                                       "--checkpoint " + shell_quote(model_fixture(name).string()) + " --layer 1 --text " +
                                           shell_quote(ids_input(ids)) + " --why 0," + std::to_string(T - 1) + "," + std::to_string(T - 3) + common);
        CHECK(w.layout.at("error") == "");
        check_panel_sums(w.layout, 1, 0, T - 1, T - 3);
        CHECK(w.layout.at("qk").at("before_softcap") == true);
        const std::vector<std::string> texts = texts_of(w, "###qk_panel");
        INFO(joined(texts));
        CHECK(shows(texts, zh ? "封顶前分数" : "before the soft-cap"));
      }
      {  // DeepSeek-V2's multi-head latent attention
        const std::string name = "deepseek_v2_mla_moe_bf16";
        const std::vector<int32_t> ids = fixture_ids(name);
        const int T = int(ids.size());
        const WindowRun w = run_window(std::string("qk_mla_") + language,
                                       "--checkpoint " + shell_quote(model_fixture(name).string()) + " --layer 1 --text " +
                                           shell_quote(ids_input(ids)) + " --why 0," + std::to_string(T - 1) + ",0" + common);
        CHECK(w.layout.at("error") == "");
        check_panel_sums(w.layout, 1, 0, T - 1, 0);
      }
      {  // a masked key (after the query): a sentence, no numbers
        const std::string name = "gpt2_prefix_f32";
        const WindowRun w = run_window(std::string("qk_masked_") + language,
                                       "--checkpoint " + shell_quote(model_fixture(name).string()) + " --text " +
                                           shell_quote(ids_input(fixture_ids(name))) + " --why 0,1,3" + common);
        const std::vector<std::string> texts = texts_of(w, "###qk_panel");
        INFO(joined(texts));
        CHECK(shows(texts, zh ? "这个键被遮蔽了" : "This key is masked for this query"));
        CHECK_FALSE(w.layout.at("qk").contains("sum"));
      }
      {  // an attentions file: no weights to attribute through
        const fs::path dir = model_fixture("precomputed");
        const WindowRun w = run_window(std::string("qk_attentions_") + language,
                                       "--checkpoint " + shell_quote((dir / "attentions.npy").string()) + " --why 0,1,0" + common);
        const std::vector<std::string> texts = texts_of(w, "###qk_panel");
        INFO(joined(texts));
        CHECK(shows(texts, zh ? "注意力文件只有注意力图" : "an attentions file has only the maps"));
      }
    }
  }

  TEST_CASE("--why: a cell not of three whole numbers, or without --checkpoint, exits 2 with the form") {
    const CliRun bad = run_app("", "--why 1,2 --checkpoint " + shell_quote(model_fixture("gpt2_prefix_f32").string()) +
                                       " --screenshot " + shell_quote((test_tmp() / "qk_bad.png").string()));
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("--why takes HEAD,QUERY,KEY") != std::string::npos);
    const CliRun alone = run_app("", "--why 0,1,0 --screenshot " + shell_quote((test_tmp() / "qk_alone.png").string()));
    CHECK(alone.exit_code == 2);
    CHECK(alone.err.find("--why needs --checkpoint DIR") != std::string::npos);
  }
}

}  // namespace attnscope::test
