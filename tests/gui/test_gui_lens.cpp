// Windows → Logit lens through the X server (issue 38 item 2): real clicks (xdotool) open the view from the menu on a
// checkpoint fixture, a hover over a cell shows its top tokens, a click chooses its position, and the view's Save CSV
// of the lens and of the attribution at that position are byte for byte what `attnscope export --what lens|attribution`
// writes for the same input. Without a checkpoint the view says the lens needs one.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/io/file_io.h"
#include "gui_run.h"
#include "model/checkpoint_fixtures.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The one file of `folder` whose name starts with `prefix` (empty when none or several).
fs::path only_file(const fs::path& folder, const std::string& prefix) {
  fs::path found;
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().filename().string().rfind(prefix, 0) == 0) found = e.path(), ++n;
  return n == 1 ? found : fs::path();
}

}  // namespace

TEST_SUITE("gui_lens") {
  TEST_CASE("Logit lens through the X server: open from the menu, hover and click a cell in sight, Save CSV equals the CLI's") {
    const std::string name = "qwen2_gqa";  // 2 layers, 4 heads, 12 tokens
    const fs::path fixture = model_fixture(name);
    const std::vector<int32_t> ids = fixture_ids(name);
    std::string input = "ids:";
    for (int32_t id : ids) input += " " + std::to_string(id);
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
}

}  // namespace attnscope::test
