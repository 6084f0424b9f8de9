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

#include "gui_run.h"

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

}  // namespace attnscope::test
