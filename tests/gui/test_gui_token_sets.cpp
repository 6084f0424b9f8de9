// Token sets through the X server (issue 38 item 5): a real Ctrl+click (xdotool) on two query labels of the
// Heads view makes a token set of those queries; every head then draws their summed row as a strip under its
// heatmap, labelled "Σ of 2 queries", and the Export panel's CSV (a real click on csv, then on Export) carries
// one more row per head that equals the sum of those two rows of the command line's plain export of the same
// scene. A Ctrl+click on a key label then starts a set of keys; undo and redo move between the two sets. A drag
// over the Input window's token chips (press, move, release) makes the range of tokens the set.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "attnscope/io/file_io.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string scene = "--kind gqa --heads 4 --groups 2 --causal --text " + shell_quote("The cat sat on the mat.");

// RFC 4180 fields of one CSV line.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

struct CsvRow {
  std::string block, label;
  std::vector<double> values;
};

// The rows of an export's CSV, in order.
std::vector<CsvRow> csv_rows(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the header
  std::vector<CsvRow> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = csv_fields(line);
    REQUIRE(f.size() > 2);
    CsvRow r{f[0], f[1], {}};
    for (size_t i = 2; i < f.size(); ++i) r.values.push_back(f[i] == "-inf" ? -INFINITY : std::stod(f[i]));
    rows.push_back(std::move(r));
  }
  return rows;
}

// The centre of the first query (or key) label of token `index` in a layout record, "x y".
std::string label_at(const json& layout, const std::string& axis, int index) {
  for (const json& l : layout.at("labels"))
    if (l.at("axis") == axis && l.at("index") == index)
      return std::to_string(int(l.at("x").get<double>() + l.at("w").get<double>() / 2)) + " " +
             std::to_string(int(l.at("y").get<double>() + l.at("h").get<double>() / 2));
  return "";
}

// A key press through the X server, as tests/gui/test_gui_keys.cpp sends it.
std::string key(const std::string& k) {
  return "kill -STOP $pid\nxdotool key --delay 0 " + k + "\nsleep 0.3\nkill -CONT $pid\nsleep 1\n";
}

std::string ctrl_click(const std::string& at) {
  return "xdotool mousemove --window $wid " + at + "\nsleep 0.3\nxdotool keydown ctrl\nsleep 0.1\nxdotool click 1\n"
         "sleep 0.1\nxdotool keyup ctrl\n";
}

// A Ctrl+click on the label of token `index` on `axis` where the live record (drive_window's layout.json in
// `dir`) shows it now: the token set's toolbar line, shown from the first click on, moves the heads down.
std::string ctrl_click_label(const fs::path& dir, const std::string& axis, int index) {
  const std::string script = "import json; r = json.load(open('" + (dir / "layout.json").string() + "')); l = [x for x in r['labels'] if "
                             "x['axis'] == '" + axis + "' and x['index'] == " + std::to_string(index) +
                             "][0]; print(int(l['x'] + l['w'] / 2), int(l['y'] + l['h'] / 2))";
  return "sleep 1\nxy=$(python3 -c " + shell_quote(script) + ")\n" + ctrl_click("$xy");
}

}  // namespace

TEST_SUITE("gui_token_sets") {
  TEST_CASE("token sets through the X server: Ctrl+click two query labels, export CSV: its extra row is their rows' sum") {
    const std::string args = "--size 1280x720 --show-export " + scene;
    const WindowRun first = run_window("token_sets_place", args);  // where the labels are drawn
    // The first click's place (before any set the heads stay where this run draws them); the later ones are
    // read from the live record.
    const std::string q1 = label_at(first.layout, "query", 1);
    REQUIRE_FALSE(q1.empty());
    CHECK(first.layout.at("token_set").at("axis") == "none");
    const auto dir = test_tmp() / "token_sets_click";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const json shown = drive_window(dir, args + " --layout-live",
                                    "await '\"settled\": true'\n" + ctrl_click(q1) + "await 'heads.token_set_strip.0'\n" +
                                        ctrl_click_label(dir, "query", 3) + "await 'Σ of 2 queries'\nawait '\"settled\": true'\n"
                                        "click_on export.format.2\nsleep 0.5\nclick_on export.button\n"
                                        "await '\"export_message\": \"wrote '\n");
    CHECK(shown.at("error") == "");
    const json& set = shown.at("token_set");
    CHECK(set.at("axis") == "queries");
    CHECK(set.at("tokens") == json::array({1, 3}));
    CHECK(set.at("reduce") == "sum");
    // Every head draws the strip, under its heatmap, as wide as it.
    for (int h = 0; h < 4; ++h) {
      const std::string id = "heads.token_set_strip." + std::to_string(h);
      REQUIRE(shown.at("widgets").contains(id));
      const json& strip = shown.at("widgets").at(id);
      const json& head = shown.at("heads").at(h);
      CHECK(strip.at("y").get<double>() > head.at("y").get<double>() + head.at("h").get<double>());
      CHECK(std::abs(strip.at("w").get<double>() - head.at("w").get<double>()) <= 1.0);
    }
    bool labelled = false;
    for (const json& t : shown.at("texts")) labelled = labelled || t.at("text") == "Σ of 2 queries: 1, 3";  // the toolbar
    CHECK(labelled);

    // The window's CSV against the command line's plain export of the same scene.
    const std::string message = shown.at("export_message").get<std::string>();
    REQUIRE(message.rfind("wrote ", 0) == 0);
    const fs::path window_csv = wrote_path(message);
    REQUIRE(fs::exists(window_csv));
    const fs::path plain_csv = dir / "plain.csv";
    const CliRun cli = run_cli("export --what heads --format csv " + scene + " --out " + shell_quote(plain_csv.string()));
    REQUIRE_MESSAGE(cli.exit_code == 0, cli.err);
    const std::vector<CsvRow> window = csv_rows(window_csv), plain = csv_rows(plain_csv);
    REQUIRE(plain.size() == 4 * 7);
    REQUIRE(window.size() == 4 * 8);  // one more row per head, after its 7
    int compared = 0;
    for (int h = 0; h < 4; ++h) {
      for (int t = 0; t < 7; ++t) {
        const CsvRow& w = window[size_t(h * 8 + t)];
        const CsvRow& p = plain[size_t(h * 7 + t)];
        CHECK(w.block == p.block);
        CHECK(w.label == p.label);
        CHECK(w.values == p.values);  // the heads themselves are unchanged
      }
      const CsvRow& strip = window[size_t(h * 8 + 7)];
      CHECK(strip.block == plain[size_t(h * 7)].block);
      CHECK(strip.label == "Σ of 2 queries (1, 3)");
      const std::vector<double>& a = plain[size_t(h * 7 + 1)].values;  // queries 1 and 3
      const std::vector<double>& b = plain[size_t(h * 7 + 3)].values;
      REQUIRE(strip.values.size() == a.size());
      for (size_t j = 0; j < a.size(); ++j, ++compared)
        CHECK(strip.values[j] == doctest::Approx(a[j] + b[j]).epsilon(1e-6));
    }
    CHECK(compared == 4 * 7);

    // A Ctrl+click on a key label starts a set of keys in place of the queries'; Ctrl+Z brings the set of queries
    // back (the set is the scene's: one undo step), Ctrl+Shift+Z the keys' again.
    const auto keys_dir = test_tmp() / "token_sets_keys";
    fs::remove_all(keys_dir);
    fs::create_directories(keys_dir);
    const json keys = drive_window(keys_dir, args + " --layout-live",
                                   "await '\"settled\": true'\n" + ctrl_click(q1) + "await 'heads.token_set_strip.0'\n" +
                                       ctrl_click_label(keys_dir, "key", 2) + "await 'Σ of 1 key: 2'\nawait '\"settled\": true'\n" +
                                       key("ctrl+z") + "await 'Σ of 1 query: 1'\ncp " + shell_quote((keys_dir / "layout.json").string()) + " " +
                                       shell_quote((keys_dir / "undone.json").string()) + "\n" + key("ctrl+shift+z") +
                                       "await 'Σ of 1 key: 2'\nawait '\"settled\": true'\n");
    const json undone = read_json(keys_dir / "undone.json");  // the record right after Ctrl+Z
    CHECK(undone.at("token_set").at("axis") == "queries");
    CHECK(undone.at("token_set").at("tokens") == json::array({1}));
    CHECK(keys.at("token_set").at("axis") == "keys");
    CHECK(keys.at("token_set").at("tokens") == json::array({2}));
    const json& strip = keys.at("widgets").at("heads.token_set_strip.0");
    const json& head = keys.at("heads").at(0);
    CHECK(strip.at("x").get<double>() > head.at("x").get<double>() + head.at("w").get<double>());
  }

  TEST_CASE("token sets through the X server: a drag over the Input window's token chips makes their range the set") {
    const std::string args = "--size 1280x720 " + scene;
    const auto dir = test_tmp() / "token_sets_drag";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string record = shell_quote((dir / "layout.json").string());
    // Press on chip 4, move over chip 3 to chip 1 (a drag backwards), hold: the record of that moment; release.
    const json dragged = drive_window(dir, args + " --layout-live",
                                      "await '\"settled\": true'\nawait 'input.token.5'\nmove_to input.token.4\nxdotool mousedown 1\nsleep 0.3\n"
                                      "move_to input.token.3\nmove_to input.token.1\nawait '\"token_drag\": \"1-4\"'\ncp " + record + " " +
                                          shell_quote((dir / "held.json").string()) + "\nxdotool mouseup 1\nsleep 0.3\n"
                                          "await '\"token_drag\": \"\"'\nawait '\"settled\": true'\n");
    CHECK(dragged.at("error") == "");
    const json held = read_json(dir / "held.json");  // while the button was held: lit, not yet the set
    CHECK(held.at("token_drag") == "1-4");
    CHECK(held.at("token_set").at("axis") == "none");
    CHECK(dragged.at("token_drag") == "");
    CHECK(dragged.at("token_set").at("axis") == "queries");
    CHECK(dragged.at("token_set").at("tokens") == json::array({1, 2, 3, 4}));
    CHECK(dragged.at("selected_query") == held.at("selected_query"));  // a drag is not a click: the query stays
    // The Heads view draws the set: every head its strip, labelled with the four queries.
    CHECK(dragged.at("widgets").contains("heads.token_set_strip.0"));
    bool labelled = false;
    for (const json& t : dragged.at("texts")) labelled = labelled || t.at("text") == "Σ of 4 queries: 1, 2, 3, 4";
    CHECK(labelled);
  }
}

TEST_SUITE("gui_token_sets") {
  TEST_CASE("token sets through the X server: Ctrl+click two queries, the Model view draws their row under every "
            "thumbnail, its Save is export --what model --query-set byte for byte, and another layer keeps the set") {
    const fs::path fixture = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/precomputed";
    const std::string args = "--checkpoint " + shell_quote(fixture.string()) + " --size 1600x900 --show-export";
    const auto dir = test_tmp() / "token_sets_model_view";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string record = shell_quote((dir / "layout.json").string());
    // The centre of layer 1's head 0 where the live record shows it now.
    const std::string thumb = "import json; t = [x for x in json.load(open(" + record + "))['thumbs'] if x['layer'] == 1 and "
                              "x['head'] == 0][0]; print(int(t['x'] + t['w'] / 2), int(t['y'] + t['h'] / 2))";
    const json last = drive_window(
        dir, args + " --layout-live",
        "await '\"settled\": true'\n" + ctrl_click_label(dir, "query", 1) + "await 'heads.token_set_strip.0'\n" +
            ctrl_click_label(dir, "query", 3) + "await 'Σ of 2 queries'\nawait '\"settled\": true'\n"
            "click_on menu.windows\nclick_on menu.windows.model_view\n"
            "await '\"strip\": \\['\nawait '\"settled\": true'\n"
            "click_on export.what.3\nsleep 0.5\nclick_on export.button\nawait '\"export_message\": \"wrote '\n"
            "cp " + record + " " + shell_quote((dir / "model_view.json").string()) + "\n"
            "sleep 1\nxy=$(python3 -c " + shell_quote(thumb) + ")\nxdotool mousemove --window $wid $xy\nsleep 0.3\nxdotool click 1\n"
            "await 'heads.token_set_strip.0'\nawait '\"settled\": true'\n");
    const json shown = read_json(dir / "model_view.json");
    CHECK(shown.at("error") == "");
    CHECK(shown.at("token_set").at("axis") == "queries");
    CHECK(shown.at("token_set").at("tokens") == json::array({1, 3}));
    // Every thumbnail (2 layers × 4 heads) has its strip right under it, as wide as it.
    const json& thumbs = shown.at("thumbs");
    REQUIRE(thumbs.size() == 8);
    for (const json& t : thumbs) {
      CAPTURE(t.dump());
      REQUIRE(t.contains("strip"));
      const json& strip = t.at("strip");
      const double bottom = t.at("y").get<double>() + t.at("h").get<double>();
      CHECK(strip[1].get<double>() > bottom + t.at("frame").get<double>());
      CHECK(strip[1].get<double>() < bottom + 20);
      CHECK(strip[0].get<double>() == t.at("x").get<double>());
      CHECK(strip[2].get<double>() == t.at("w").get<double>());
      CHECK(strip[3].get<double>() >= 3);
    }
    bool named = false;  // the set's line above the grid
    for (const json& t : shown.at("texts"))
      named = named || (t.at("window").get<std::string>().ends_with("###model_view") && t.at("text") == "Σ of 2 queries: 1, 3");
    CHECK(named);
    // The Export panel's "the model view" with the set: the command line's figure, byte for byte.
    const std::string message = shown.at("export_message").get<std::string>();
    REQUIRE(message.rfind("wrote ", 0) == 0);
    const fs::path window_png = wrote_path(message);
    REQUIRE(fs::exists(window_png));
    const fs::path cli_png = dir / "cli.png";
    const CliRun cli = run_cli("export --attentions " + shell_quote((fixture / "attentions.npy").string()) + " --tokens " +
                               shell_quote((fixture / "tokens.json").string()) + " --config " +
                               shell_quote((fixture / "config.json").string()) +
                               " --what model --query-set 1,3 --format png --scale 2 --out " + shell_quote(cli_png.string()));
    REQUIRE_MESSAGE(cli.exit_code == 0, cli.err);
    CHECK(read_file(window_png, int64_t(64) << 20) == read_file(cli_png, int64_t(64) << 20));
    // A click on layer 1's head 0 opens that layer in the Heads view: the set stays, every head draws it.
    CHECK(last.at("qk").at("layer") == 1);
    CHECK(last.at("token_set").at("axis") == "queries");
    CHECK(last.at("token_set").at("tokens") == json::array({1, 3}));
    for (int h = 0; h < 4; ++h) CHECK(last.at("widgets").contains("heads.token_set_strip." + std::to_string(h)));
  }
}

TEST_SUITE("gui_token_sets") {
  TEST_CASE("token sets through the X server: Ctrl+click two queries, keep A, change B, Compare A/B draws the set's "
            "row on A, B and the difference, and its Save PNG is export --compare --query-set byte for byte") {
    const fs::path dir = test_tmp() / "token_sets_compare";
    fs::remove_all(dir);
    fs::create_directories(dir);
    // A: MHA; B: the same sentence with MQA (the Model window's kind radio), as scene files for the command line.
    const std::string text = "The cat sat on the mat.";
    std::ofstream(dir / "a.json") << R"({"attnscope_scene": 1, "input": {"text": ")" << text
                                  << R"("}, "model": {"kind": "mha", "heads": 4, "groups": 4, "causal": true}})";
    std::ofstream(dir / "b.json") << R"({"attnscope_scene": 1, "input": {"text": ")" << text
                                  << R"("}, "model": {"kind": "mqa", "heads": 4, "groups": 1, "causal": true}})";
    const std::string args = "--size 1600x900 --scene " + shell_quote((dir / "b.json").string()) + " --compare-a " +
                             shell_quote((dir / "a.json").string());
    const json last = drive_window(dir, args + " --layout-live",
                                   "await '\"settled\": true'\nclick_on compare.close\nawait '\"settled\": true'\n" +
                                       ctrl_click_label(dir, "query", 1) + "await 'heads.token_set_strip.0'\n" +
                                       ctrl_click_label(dir, "query", 3) + "await 'Σ of 2 queries'\nawait '\"settled\": true'\n"
                                       "click_on heads.compare\nawait 'compare.token_set_strip.7'\nawait '\"settled\": true'\n"
                                       "cp " + shell_quote((dir / "layout.json").string()) + " " +
                                       shell_quote((dir / "side.json").string()) + "\n"
                                       "click_on compare.save_png\nawait '\"status\": \"wrote '\n"
                                       "click_on compare.difference\nawait 'compare.token_set_strip.3'\nawait '\"settled\": true'\n");
    const json side = read_json(dir / "side.json");
    CHECK(side.at("error") == "");
    CHECK(side.at("token_set").at("tokens") == json::array({1, 3}));
    // Side by side: A and B of every head (8 panels), each with its strip right under it, as wide as it.
    REQUIRE(side.at("heads").size() == 8);
    for (int i = 0; i < 8; ++i) {
      const json& strip = side.at("widgets").at("compare.token_set_strip." + std::to_string(i));
      const json& panel = side.at("heads").at(i);
      CHECK(strip.at("y").get<double>() > panel.at("y").get<double>() + panel.at("h").get<double>());
      CHECK(std::abs(strip.at("w").get<double>() - panel.at("w").get<double>()) <= 1.0);
    }
    // The difference: one panel a head, each with its strip.
    CHECK(last.at("heads").size() == 4);
    CHECK_FALSE(last.at("widgets").contains("compare.token_set_strip.4"));
    // Save PNG against the command line's export --compare of the same two scenes and set.
    const std::string status = last.at("status").get<std::string>();
    REQUIRE(status.rfind("wrote ", 0) == 0);
    const fs::path window_png = wrote_path(status);
    REQUIRE(fs::exists(window_png));
    const fs::path cli_png = dir / "cli.png";
    const CliRun cli = run_cli("export --compare " + shell_quote((dir / "a.json").string()) + " " +
                               shell_quote((dir / "b.json").string()) + " --query-set 1,3 --format png --scale 2 --out " +
                               shell_quote(cli_png.string()));
    REQUIRE_MESSAGE(cli.exit_code == 0, cli.err);
    CHECK(read_file(window_png, int64_t(64) << 20) == read_file(cli_png, int64_t(64) << 20));
  }
}

}  // namespace attnscope::test
