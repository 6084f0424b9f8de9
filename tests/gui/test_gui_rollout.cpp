// The Rollout view (issue 38 item 1) through the X server: real clicks (xdotool) open Windows → Rollout on the
// GPT-2 fixture, press "Compute flow", wait for the flow panel, press "Save CSV"; the file the view wrote is
// byte for byte the one `attnscope export --what rollout --flow` writes for the same checkpoint and ids. A
// scripted run of the view in both languages shows the figure's panels and the seeded scene's sentence. A real
// click on "every query" and a real drag over the Input window's tokens (a set of queries) each give a Save CSV
// byte for byte the command line's `--every-query` and `--query-set` export.
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
    const fs::path written = wrote_path(status);
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

  TEST_CASE("rollout through the X server: every query and a dragged set of queries save the CLI's CSV") {
    const std::string name = "gpt2_prefix_f32";
    const std::vector<int32_t> ids = fixture_ids(name);
    REQUIRE(ids.size() > 4);
    const fs::path model = model_fixture(name);
    const std::string args = "--checkpoint " + shell_quote(model.string()) + " --show-rollout --size 1920x1080 --text " +
                             shell_quote("ids: " + ids_text(ids)) + " --layout-live";
    auto saved = [](const json& shown) {
      const std::string status = shown.at("status");
      REQUIRE(status.rfind("wrote ", 0) == 0);
      return wrote_path(status);
    };
    auto cli_csv = [&](const fs::path& dir, const std::string& flags) {
      const fs::path cli = dir / "cli.csv";
      const CliRun r = run_cli("export --checkpoint " + quoted(model) + " --ids " + ids_arg(ids) + " --what rollout " + flags +
                               " --format csv --out " + quoted(cli));
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      return read_file(cli, 1 << 24);
    };
    // Every query: a click on the toggle, then Save CSV; the last layer's [T, T] matrices.
    const auto every_dir = test_tmp() / "rollout_every_query";
    fs::remove_all(every_dir);
    fs::create_directories(every_dir);
    const json every = drive_window(every_dir, args,
                                    "click_on rollout.every_query\n"
                                    "await 'rollout.layer'\nawait 'rollout · layer'\n"
                                    "click_on rollout.save_csv\n"
                                    "await '\"status\": \"wrote '\n",
                                    "cd " + shell_quote(every_dir.string()) + "\n");
    CHECK(every.at("error") == "");
    CHECK(has(captions_of(every), "rollout · layer"));
    CHECK(csv_difference(read_file(saved(every), 1 << 24), cli_csv(every_dir, "--every-query"), 1e-6) == "");

    // A drag from token 1 to token 3 of the Input window's strip: the set of queries 1, 2, 3; each layer's row their sum.
    const auto set_dir = test_tmp() / "rollout_query_set";
    fs::remove_all(set_dir);
    fs::create_directories(set_dir);
    const json set = drive_window(set_dir, args,
                                  "await 'input.token.3'\nawait 'rollout.save_csv'\nmove_to input.token.1\nxdotool mousedown 1\nsleep 0.3\n"
                                  "move_to input.token.2\nmove_to input.token.3\nxdotool mouseup 1\n"
                                      "await 'rollout.query_set'\nawait 'Σ of 3 queries \\(1, 2, 3\\)'\n"
                                      "click_on rollout.save_csv\n"
                                      "await '\"status\": \"wrote '\n",
                                  "cd " + shell_quote(set_dir.string()) + "\n");
    CHECK(set.at("error") == "");
    CHECK(set.at("token_set").at("tokens") == json::array({1, 2, 3}));
    CHECK(has(captions_of(set), "rollout · Σ of 3 queries (1, 2, 3)"));
    CHECK(csv_difference(read_file(saved(set), 1 << 24), cli_csv(set_dir, "--query-set 1,2,3"), 1e-6) == "");
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
