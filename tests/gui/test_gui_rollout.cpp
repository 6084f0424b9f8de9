// The Rollout view (issue 38 item 1) through the X server: real clicks (xdotool) open Windows → Rollout on the
// GPT-2 fixture, press "Compute flow", wait for the flow panel, press "Save CSV"; the file the view wrote is
// byte for byte the one `attnscope export --what rollout --flow` writes for the same checkpoint and ids. A
// scripted run of the view in both languages shows the figure's panels and the seeded scene's sentence.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/io/file_io.h"
#include "csv_close.h"
#include "gui_run.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += (s.empty() ? "" : " ") + std::to_string(id);
  return s;
}

std::vector<std::string> captions_of(const json& layout) {
  std::vector<std::string> out;
  for (const json& c : layout.at("captions")) out.push_back(c.at("text"));
  return out;
}

bool has(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& t : texts)
    if (t.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_SUITE("gui_rollout") {
  TEST_CASE("rollout through the X server: the menu opens the view, Compute flow adds the flow, Save CSV equals the CLI's") {
    const std::string name = "gpt2_prefix_f32";
    const std::vector<int32_t> ids = fixture_ids(name);
    const fs::path model = model_fixture(name);
    const auto dir = test_tmp() / "rollout_click";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string args = "--checkpoint " + shell_quote(model.string()) + " --size 1280x720 --text " +
                             shell_quote("ids: " + ids_text(ids)) + " --layout-live";
    const json shown = drive_window(dir, args,
                                    "await '\"menu.windows\"'\n"
                                    "click_on menu.windows\n"
                                    "click_on menu.windows.rollout\n"
                                    "click_on rollout.flow\n"
                                    "await 'flow \\(share\\)'\n"
                                    "click_on rollout.save_csv\n"
                                    "await '\"status\": \"wrote '\n",
                                    "cd " + shell_quote(dir.string()) + "\n");
    CHECK(shown.at("error") == "");
    const std::vector<std::string> captions = captions_of(shown);
    CHECK(has(captions, "attention (head mean)"));
    CHECK(has(captions, "rollout"));
    CHECK(has(captions, "flow (share)"));
    const std::string status = shown.at("status");
    REQUIRE(status.rfind("wrote ", 0) == 0);
    const fs::path written = status.substr(6);
    REQUIRE(fs::exists(written));
    CHECK(written.extension() == ".csv");
    // The command line's CSV of the same checkpoint, ids and query (the last token, as the view starts).
    const fs::path cli = dir / "cli.csv";
    const CliRun r = run_cli("export --checkpoint " + quoted(model) + " --ids " + ids_arg(ids) +
                             " --what rollout --flow --format csv --out " + quoted(cli));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string view_csv = read_file(written, 1 << 24), cli_csv = read_file(cli, 1 << 24);
    CHECK(view_csv.substr(0, view_csv.find('\n')) == cli_csv.substr(0, cli_csv.find('\n')));  // the same tokens
    CHECK(csv_difference(view_csv, cli_csv, 1e-6) == "");  // the same numbers (two processes' forward passes)
  }

  TEST_CASE("rollout view: a checkpoint's panels in English and Chinese; the seeded scene says why it needs a model") {
    const fs::path model = model_fixture("gpt2_prefix_f32");
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = std::string(language) == "zh";
      const WindowRun w = run_window(std::string("rollout_view_") + language,
                                     "--checkpoint " + shell_quote(model.string()) + " --show-rollout --size 1280x720 --language " +
                                         language);
      CHECK(w.layout.at("error") == "");
      const std::vector<std::string> texts = texts_of(w, "###rollout");
      CHECK(shows(texts, zh ? "查询位置" : "query position"));
      const std::vector<std::string> captions = captions_of(w.layout);
      CHECK(has(captions, zh ? "注意力（头平均）" : "attention (head mean)"));
      CHECK_FALSE(has(captions, zh ? "注意力流（占比）" : "flow (share)"));  // only when asked
      // The seeded scene: one layer, nothing to roll out.
      const WindowRun seeded = run_window(std::string("rollout_seeded_") + language,
                                          "--show-rollout --size 1280x720 --language " + std::string(language));
      CHECK(shows(texts_of(seeded, "###rollout"), zh ? "注意力展开需要一个模型的多层" : "Rollout needs a model's layers"));
    }
  }
}

}  // namespace attnscope::test
