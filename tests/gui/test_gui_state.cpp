// What the window remembers between runs (only interactive runs), and how it reports bad input.
#include <filesystem>
#include <fstream>

#include "attnscope/io/file_io.h"
#include "attnscope/scene/scene_json.h"
#include "gui_run.h"
#include "model/checkpoint_fixtures.h"
#include "test_paths.h"

namespace attnscope::test {
using nlohmann::json;
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

TEST_SUITE("gui_state") {
  TEST_CASE("window: scripted runs neither read nor write the saved state") {
    const auto config = fresh_dir("state_scripted");
    // A saved scene that a scripted run must ignore.
    Scene saved;
    saved.input.text = "zebra zebra zebra";
    std::filesystem::create_directories(config / "attnscope");
    save_scene(config / "attnscope" / "scene.json", saved);
    const std::string before = slurp(config / "attnscope" / "scene.json");
    const WindowRun w = run_window("state_scripted", "", "XDG_CONFIG_HOME=" + shell_quote(config.string()));
    for (const auto& l : w.layout["labels"]) CHECK(l["text"] != "zebra");
    CHECK(count_files(config) == 1);  // nothing written beside it
    CHECK(slurp(config / "attnscope" / "scene.json") == before);
  }

  TEST_CASE("window: an interactive run remembers the scene, the layout and the UI scale") {
    const auto config = fresh_dir("state_interactive");
    const std::string env = "XDG_CONFIG_HOME=" + shell_quote(config.string());
    const CliRun first = run_app(env, "--text 'hello brave new world' --heads 4 --ui-scale 1.5 --frames 4");
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    const auto folder = config / "attnscope";
    REQUIRE(std::filesystem::exists(folder / "scene.json"));
    CHECK(std::filesystem::exists(folder / "imgui.ini"));
    CHECK(slurp(folder / "imgui.ini").find("[Window][") != std::string::npos);
    CHECK(load_scene(folder / "scene.json").input.text == "hello brave new world");
    CHECK(slurp(folder / "window.json").find("1.5") != std::string::npos);

    // A second run without scene flags starts from the remembered scene (and saves it again).
    std::filesystem::remove(folder / "window.json");
    const CliRun second = run_app(env, "--frames 4");
    REQUIRE(second.exit_code == 0);
    const Scene again = load_scene(folder / "scene.json");
    CHECK(again.input.text == "hello brave new world");
    CHECK(again.model.heads == 4);

    // A damaged saved scene only means starting afresh.
    {
      std::ofstream f(folder / "scene.json");
      f << "{ not json";
    }
    const CliRun third = run_app(env, "--frames 4");
    CHECK(third.exit_code == 0);
    CHECK(load_scene(folder / "scene.json").input.text == Scene{}.input.text);
  }
}

TEST_SUITE("gui_state") {
  TEST_CASE("typing with a checkpoint open and no worker threads (the page's way): the forward waits for a pause in typing") {
    const std::string name = "gpt2_prefix_f32";
    const auto dir = fresh_dir("typing_pause");
    const std::string args = "--checkpoint " + shell_quote(model_fixture(name).string()) + " --text " +
                             shell_quote("ids: 1 2") + " --size 1280x720 --layout-live";
    // 26 keys, 40 ms apart: no pause of 0.4 s between them. The field is clicked, given a second to become the
    // one being edited (a loaded machine's frames are slow), then Ctrl+A held as a hand holds it selects its text.
    const std::string typed = "ids: 5 9 13 17 21 25 29 33";
    const json shown = drive_window(dir, args,
                                    "await '\"settled\": true'\n"
                                    "click_on input.sentence\nsleep 1\nxdotool keydown ctrl+a\nsleep 0.3\nxdotool keyup ctrl+a\nsleep 0.5\n"
                                    "await '\"settled\": true'\ncp " + shell_quote((dir / "layout.json").string()) + " " +
                                        shell_quote((dir / "before.json").string()) + "\n"
                                    "xdotool type --delay 40 " + shell_quote(typed) + "\nsleep 0.5\n"
                                    "await '\"settled\": true'\n",
                                    "export ATTNSCOPE_THREADS=0\n");
    CHECK(shown.at("error") == "");
    const json before = read_json(dir / "before.json");
    // The tokens typed are on screen, sent in a few requests, not one per key.
    int keys = 0;
    for (const json& l : shown.at("labels")) keys += l.at("axis") == "key" && l.at("index").get<int>() == 7;
    CHECK(keys > 0);
    const int requests = shown.at("requests").get<int>() - before.at("requests").get<int>();
    CHECK(requests >= 1);
    CHECK(requests <= 8);  // without the pause, one per key: 26 (a loaded machine may see a pause or two)
  }

  TEST_CASE("export panel: the Export button writes the current view as a PNG under exports/") {
    const WindowRun first = run_window("export_layout", "--show-export");
    REQUIRE(first.layout["widgets"].contains("export.button"));
    const auto& button = first.layout["widgets"]["export.button"];
    const int x = int(button["x"].get<double>() + button["w"].get<double>() * 0.5);
    const int y = int(button["y"].get<double>() + button["h"].get<double>() * 0.5);
    const auto cwd = fresh_dir("export_cwd");
    const WindowRun w = run_window("export_click",
                                   "--show-export --frames 8 --clicks 3 --pointer " + std::to_string(x) + "," + std::to_string(y),
                                   "", cwd.string());
    REQUIRE(std::filesystem::exists(cwd / "exports"));
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(cwd / "exports")) files.push_back(e.path());
    REQUIRE(files.size() == 1);
    CHECK(files[0].filename().string().rfind("attnscope-heads-", 0) == 0);
    CHECK(files[0].extension() == ".png");
    const Png png = read_png(files[0]);
    CHECK(png.width > 400);
    // The panel names the full path it wrote.
    const std::string message = w.layout["export_message"].get<std::string>();
    CHECK(message.find("wrote ") == 0);
    CHECK(message.find(std::filesystem::canonical(files[0]).string()) != std::string::npos);
  }
}

TEST_SUITE("gui_state") {
  TEST_CASE("export panel: with attentions open, \"the model view\" writes every layer's heads, as export --what model") {
    const std::string open = "--checkpoint " +
                             shell_quote((std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/precomputed").string()) +
                             " --show-export --size 1600x900";
    auto centre = [](const nlohmann::json& item) {
      return std::to_string(int(item["x"].get<double>() + item["w"].get<double>() * 0.5)) + "," +
             std::to_string(int(item["y"].get<double>() + item["h"].get<double>() * 0.5));
    };
    const WindowRun first = run_window("export_model_layout", open);
    REQUIRE(first.layout["widgets"].contains("export.what.3"));  // offered only with a model open
    const std::string radio = centre(first.layout["widgets"]["export.what.3"]);
    // The hint below the choice moves the button: find it with the model view chosen.
    const WindowRun chosen = run_window("export_model_chosen", open + " --frames 8 --clicks 3 --pointer " + radio);
    REQUIRE(chosen.layout["widgets"].contains("export.button"));
    const std::string button = centre(chosen.layout["widgets"]["export.button"]);
    const auto cwd = fresh_dir("export_model_cwd");
    const WindowRun w = run_window("export_model_click", open + " --frames 12 --clicks 3,7 --pointer " +
                                                             shell_quote(radio + ";" + button), "", cwd.string());
    std::vector<std::filesystem::path> files;
    if (std::filesystem::exists(cwd / "exports"))
      for (const auto& e : std::filesystem::directory_iterator(cwd / "exports")) files.push_back(e.path());
    REQUIRE(files.size() == 1);
    CHECK(files[0].filename().string().rfind("attnscope-model-", 0) == 0);
    // The same figure as the command line's export --what model of the same file, byte for byte.
    const auto out = fresh_dir("export_model_cli");
    const std::filesystem::path dir = std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/precomputed";
    const CliRun cli = run_cli("export --attentions " + shell_quote((dir / "attentions.npy").string()) + " --tokens " +
                               shell_quote((dir / "tokens.json").string()) + " --config " +
                               shell_quote((dir / "config.json").string()) + " --what model --format png --scale 2 --out " +
                               shell_quote((out / "model.png").string()));
    REQUIRE_MESSAGE(cli.exit_code == 0, cli.err);
    CHECK(read_file(files[0], int64_t(64) << 20) == read_file(out / "model.png", int64_t(64) << 20));
    CHECK(w.layout["export_message"].get<std::string>().find("wrote ") == 0);
  }
}

TEST_SUITE("gui_errors") {
  TEST_CASE("window: a bad scene flag shows in the window, on stderr, and the screenshot is still written") {
    const WindowRun w = run_window("bad_kind", "--kind transformer");
    CHECK(w.run.err.find("error:") != std::string::npos);
    CHECK(w.layout["error"].get<std::string>().find("transformer") != std::string::npos);
  }

  TEST_CASE("window: settings the engine refuses show as a message, not a crash") {
    // 7 heads do not divide d_model 64.
    const WindowRun w = run_window("bad_heads", "--heads 7");
    CHECK(w.layout["error"].get<std::string>().find("7") != std::string::npos);
    CHECK(w.run.err.find("error:") != std::string::npos);
    CHECK(w.layout["heads"].size() == 0);
    // Invalid UTF-8 in the sentence.
    const WindowRun u = run_window("bad_utf8", "--text \"$(printf 'ab\\377 cd')\"");
    CHECK(u.layout["error"].get<std::string>().find("UTF-8") != std::string::npos);
  }

  TEST_CASE("window: bad window flags are usage errors (exit 2, no file)") {
    const auto dir = fresh_dir("bad_window_flags");
    const std::string png = shell_quote((dir / "x.png").string());
    // --layout-sweep is for interactive runs with --layout-json: with --screenshot it is refused too.
    const std::vector<std::string> bad = {"--size 10x10", "--size big", "--frames 0", "--ui-scale 9", "--theme neon",
                                          "--layout-sweep --layout-json " + shell_quote((dir / "x.json").string())};
    for (const std::string& args : bad) {
      CAPTURE(args);
      const CliRun r = run_app("", args + " --screenshot " + png);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("error:") != std::string::npos);
    }
    CHECK(count_files(dir) == 0);
  }
}

}  // namespace attnscope::test
