// gui_run.h — helpers for the GUI tests: run the window in scripted mode, read back its screenshot
// (png_decode.h) and its layout JSON, and sample pixels.
#pragma once
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "attnscope/core/limits.h"
#include "attnscope/figure/colormap.h"
#include "model/checkpoint_fixtures.h"
#include "png_decode.h"
#include "run_cli.h"
#include "test_paths.h"

namespace attnscope::test {

struct Png {
  int width = 0, height = 0;
  std::vector<unsigned char> rgba;  // [height, width, 4]
  Rgba at(int x, int y) const {
    const unsigned char* p = &rgba[(size_t(y) * size_t(width) + size_t(x)) * 4];
    return {p[0], p[1], p[2], p[3]};
  }
};

inline Png read_png(const std::filesystem::path& path) {
  Image image = load_png(path);
  return Png{image.width, image.height, std::move(image.rgba)};
}

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream f(path);
  REQUIRE_MESSAGE(f.good(), "cannot open " << path);
  return nlohmann::json::parse(f);
}

// Runs `env attnscope <args>` (env: assignments such as "XDG_CONFIG_HOME=/x", or empty).
inline CliRun run_app(const std::string& env, const std::string& args, const std::string& cwd = "") {
  return run_cli(args, env, cwd);
}

struct WindowRun {
  CliRun run;
  Png png;
  nlohmann::json layout;
};

// Runs `attnscope <args> --screenshot <dir>/<name>.png --layout-json <dir>/<name>.json` (with `env`
// in front) and reads both files back. Every run gets an empty config folder unless `env` names
// one, so no saved state of the machine's user can leak in.
inline WindowRun run_window(const std::string& name, const std::string& args, const std::string& env = "",
                            const std::string& cwd = "") {
  const auto dir = attnscope::test::test_tmp() / "gui";
  std::filesystem::create_directories(dir);
  const auto png = dir / (name + ".png");
  const auto json = dir / (name + ".json");
  std::filesystem::remove(png);
  std::filesystem::remove(json);
  WindowRun w;
  const std::string full = args + " --screenshot " + shell_quote(png.string()) + " --layout-json " + shell_quote(json.string());
  w.run = run_app(env.empty() ? "XDG_CONFIG_HOME=" + shell_quote((dir / "no_config").string()) : env, full, cwd);
  INFO("attnscope " << full << "\nstderr: " << w.run.err);
  REQUIRE(w.run.exit_code == 0);
  w.png = read_png(png);
  w.layout = read_json(json);
  return w;
}

// Every text drawn in the window whose ImGui name ends with `title` ("###checkpoint").
// "x,y" of a layout record rectangle's centre, for --pointer.
inline std::string centre_of(const nlohmann::json& item) {
  return std::to_string(int(item["x"].get<double>() + item["w"].get<double>() * 0.5)) + "," +
         std::to_string(int(item["y"].get<double>() + item["h"].get<double>() * 0.5));
}

inline std::vector<std::string> texts_of(const WindowRun& w, const std::string& title) {
  std::vector<std::string> out;
  for (const auto& t : w.layout.at("texts")) {
    const std::string window = t.at("window").get<std::string>();
    if (window.size() >= title.size() && window.compare(window.size() - title.size(), title.size(), title) == 0)
      out.push_back(t.at("text").get<std::string>());
  }
  return out;
}

// Texts one per line (for INFO).
inline std::string joined(const std::vector<std::string>& texts) {
  std::string s;
  for (const std::string& t : texts) s += t + "\n";
  return s;
}

// `part` among the texts, wherever the window wrapped them: spaces and line ends are left out of both.
inline bool shows(const std::vector<std::string>& texts, const std::string& part) {
  auto squeezed = [](const std::string& s) {
    std::string out;
    for (char c : s)
      if (c != ' ' && c != '\n') out += c;
    return out;
  };
  return squeezed(joined(texts)).find(squeezed(part)) != std::string::npos;
}

inline int channel_distance(Rgba a, Rgba b) {
  return std::max({std::abs(int(a.r) - int(b.r)), std::abs(int(a.g) - int(b.g)), std::abs(int(a.b) - int(b.b))});
}

// The token indices the layout record labels on one axis ("query" or "key"; each heatmap on the grid's
// edge records its own), as a set.
inline std::set<int> label_indices(const WindowRun& w, const std::string& axis) {
  std::set<int> out;
  for (const auto& l : w.layout.at("labels"))
    if (l["axis"] == axis) out.insert(l["index"].get<int>());
  return out;
}

// {from, from + 1, …, from + count − 1}.
inline std::set<int> iota(int from, int count) {
  std::set<int> v;
  for (int i = 0; i < count; ++i) v.insert(from + i);
  return v;
}

// The one file of `folder` whose name starts with `prefix` and ends with `suffix` (empty when none or several):
// what a Save button wrote into exports/.
inline std::filesystem::path only_file(const std::filesystem::path& folder, const std::string& prefix,
                                       const std::string& suffix = "") {
  std::filesystem::path found;
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.ends_with(suffix)) found = e.path(), ++n;
  }
  return n == 1 ? found : std::filesystem::path();
}

// The file a status line "wrote PATH (2.8 KiB)" names (empty when it says something else).
inline std::filesystem::path wrote_path(const std::string& status) {
  if (status.rfind("wrote ", 0) != 0) return {};
  const size_t size = status.rfind(" (");
  return status.substr(6, size == std::string::npos ? std::string::npos : size - 6);
}

// "ids: 3 17 5": the Input window's text that gives these token ids, no tokenizer.
inline std::string ids_input(const std::vector<int32_t>& ids) {
  std::string input = "ids:";
  for (int32_t id : ids) input += " " + std::to_string(id);
  return input;
}

// A long input (issue 38 item 6): 2100 ids, 52 past the stack's limit (limits::max_tokens, 2048), so each head of
// gpt-oss's fixture is computed on demand.
inline std::vector<int32_t> long_input_ids() { return long_fixture_ids(limits::max_tokens + 52); }

// The window's flags for the long input: gpt-oss's fixture on long_input_ids() (the sweeps' long start).
inline std::string long_input_flags() {
  return "--checkpoint " + shell_quote(model_fixture("gpt_oss_dequantized_bf16").string()) + " --text " +
         shell_quote(ids_input(long_input_ids()));
}

// Starts the window (interactive, --layout-json), runs `events` (shell lines using $wid) through the X
// server as a hand on the mouse or keyboard would, then `after` (say, reading the clipboard the window
// still owns), then closes it as its close button does (SIGTERM writes the layout): not after a count of
// frames, which a fast machine runs through before the events arrive. `before` runs first.
inline nlohmann::json drive_window(const std::filesystem::path& dir, const std::string& args, const std::string& events,
                                   const std::string& before = "", const std::string& after = "sleep 2\n") {
  REQUIRE_MESSAGE(std::system("command -v xdotool >/dev/null 2>&1") == 0,
                  "the real-pointer test moves the mouse through the X server with xdotool (apt-get install xdotool)");
  const std::string q = shell_quote(dir.string());
  // `await PATTERN` (for a run with --layout-live): waits, up to 60 s, until the live record matches the
  // extended regular expression, so a click lands on what the previous one opened however slow a frame
  // is (a sanitised build on a loaded machine); a wait that times out says so and the test's checks fail.
  const std::string await =
      "await() { n=0; until grep -Eq \"$1\" " + q + "/layout.json 2>/dev/null; do n=$((n+1)); "
      "if [ $n -ge 300 ]; then echo \"timed out waiting for the window to show $1\" >&2; return 1; fi; sleep 0.2; done; }\n"
      // `click_on ID` (with --layout-live): waits until the live record shows the control at the same
      // rectangle in two different frames, then clicks its centre (where the window draws it at that moment,
      // not where an earlier run did: a status line shown while a result is computed moves what is below it,
      // and a popup may open in one place and settle in another).
      "click_on() { xy=$(python3 " + q + "/steady_rect.py " + q + "/layout.json \"$1\") || "
      "{ echo \"timed out waiting for the window to show $1 steadily\" >&2; return 1; }; "
      "xdotool mousemove --window $wid $xy; sleep 0.3; xdotool click 1; }\n"
      // `move_to ID` (with --layout-live): moves the pointer, no click, to the centre of ID where the live record
      // shows it now (one reading: during a drag, the frame the button is held in).
      "move_to() { xy=$(python3 -c \"import json, sys; w = json.load(open(sys.argv[1]))['widgets'][sys.argv[2]]; "
      "print(int(w['x'] + w['w'] / 2), int(w['y'] + w['h'] / 2))\" " + q + "/layout.json \"$1\") || return 1; "
      "xdotool mousemove --window $wid $xy; sleep 0.3; }\n";
  // Every run starts as on a clean machine (CI's): no record of an earlier run to satisfy `await`, and no
  // settings saved by one, which would make a first start (lesson 1 over the view) a returning user's.
  std::filesystem::remove(dir / "layout.json");
  std::filesystem::remove_all(dir / "config");
  // steady_rect.py RECORD ID: prints the centre of widget ID once two records of different frames agree on
  // its rectangle (up to 60 s; exit 1 after that).
  std::ofstream(dir / "steady_rect.py") << R"(import json, sys, time
path, name = sys.argv[1], sys.argv[2]
seen = None
for _ in range(600):
    try:
        record = json.load(open(path))
    except (OSError, ValueError):
        time.sleep(0.1)
        continue
    r = record.get("widgets", {}).get(name)
    now = (record.get("frame"), None if r is None else (r["x"], r["y"], r["w"], r["h"]))
    if r is not None and seen is not None and seen[1] == now[1] and seen[0] != now[0]:
        print(int(r["x"] + r["w"] / 2), int(r["y"] + r["h"] / 2))
        sys.exit(0)
    seen = now
    time.sleep(0.1)
sys.exit(1)
)";
  const std::string script =
      await + before + "XDG_CONFIG_HOME=" + q + "/config " + shell_quote(ATTNSCOPE_BIN) + " " + args + " --layout-json " + q +
      "/layout.json >" + q + "/out.txt 2>&1 &\n"
      "pid=$!\n"
      "(sleep 300; kill $pid) >/dev/null 2>&1 &\n"  // a window that hangs fails the test, not the suite
      "watchdog=$!\n"
      "wid=$(timeout 60 xdotool search --sync --onlyvisible --pid $pid | head -1)\n"
      "sleep 4\n"  // mapped, and the first result on screen
      "xdotool windowfocus --sync $wid\n"
      "sleep 0.5\n" + events + after +
      "kill -TERM $pid\n"
      "wait $pid\n"
      "status=$?\n"
      "kill $watchdog >/dev/null 2>&1\n"
      "exit $status\n";
  std::ofstream(dir / "run.sh") << script;
  const int status = std::system(("sh " + shell_quote((dir / "run.sh").string())).c_str());
  std::ostringstream out;
  out << std::ifstream(dir / "out.txt").rdbuf();
  INFO(out.str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return read_json(dir / "layout.json");
}


}  // namespace attnscope::test
