// Copy figure: a click on the view's Copy figure button, or Ctrl+C typed through the X server
// (xdotool), puts the view's figure on the X clipboard (CLIPBOARD, target image/png), read back here
// with xclip and compared pixel for pixel with the same view exported separately by `attnscope
// export` — in the window's language. Ctrl+C in a text field copies its text instead.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "attnscope/scene/scene_json.h"
#include "gui/clipboard.h"
#include "gui/gui_run.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

bool has_text(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& t : texts)
    if (t.find(part) != std::string::npos) return true;
  return false;
}

// "X,Y" at the centre of the layout record's widget `name`.
std::string centre_of(const WindowRun& w, const std::string& name) {
  REQUIRE_MESSAGE(w.layout.at("widgets").contains(name), "no widget " << name << " in the layout record");
  const auto& r = w.layout["widgets"][name];
  return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + "," +
         std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
}

// The clipboard's image against `attnscope export <export_args> --out DIR/exported.png`: the same size and
// pixels. Returns the export's image (its size is what the status line names).
Png check_clipboard_is_export(const fs::path& dir, const std::string& export_args) {
  const fs::path clip = dir / "clipboard.png";
  REQUIRE(read_clipboard_png(clip) == 0);
  const Png pasted = read_png(clip);
  const fs::path exported = dir / "exported.png";
  const CliRun r = run_cli("export " + export_args + " --out " + shell_quote(exported.string()));
  INFO("export stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const Png paper = read_png(exported);
  check_same_pixels(pasted, paper);
  return paper;
}

std::vector<std::string> all_texts(const nlohmann::json& layout);

void check_copy(const std::string& name, const std::string& args, const std::string& what) {
  REQUIRE_MESSAGE(std::system("command -v xclip >/dev/null 2>&1") == 0,
                  "the clipboard test reads the X selection with xclip (apt-get install xclip)");
  const fs::path dir = fresh_dir("copy_" + name);
  const WindowRun first = run_window("copy_" + name + "_find", args);
  const std::string pointer = centre_of(first, "copy_figure");
  const fs::path scene = dir / "scene.json";
  // Something else on the clipboard first, so an image found there afterwards is the window's.
  REQUIRE(std::system("printf old | timeout 10 xclip -selection clipboard -i >/dev/null 2>&1") == 0);
  const WindowRun copied = run_window("copy_" + name + "_click", args + " --pointer " + pointer +
                                                                    " --clicks 4 --frames 40 --save-scene " +
                                                                    shell_quote(scene.string()));
  // The same view exported separately from the saved scene, at the Export panel's scale (2).
  const Png paper = check_clipboard_is_export(dir, "--scene " + shell_quote(scene.string()) + " --what " + what +
                                                       " --format png --scale 2 --language zh");
  // The status line says so, in Chinese, with the image's size.
  const std::string status = "已复制图（" + std::to_string(paper.width) + "×" + std::to_string(paper.height) + " PNG）";
  const std::vector<std::string> texts = all_texts(copied.layout);
  INFO(joined(texts));
  CHECK(has_text(texts, status));
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Shell lines that press `keys` as a hand does: held for a few frames (ImGui 1.86 reads which keys are
// down once a frame, so a press and release within one frame would go unseen).
std::string press(const std::string& keys) {
  return "xdotool keydown " + keys + "\nsleep 0.3\nxdotool keyup " + keys + "\n";
}

// Runs `keys` (shell lines using $wid) in the window at 1280×720 as a user at the keyboard would, then
// saves the clipboard's targets, text and image into `dir` while the window still runs (a text copy is
// owned by the window itself).
void type_into_window(const fs::path& dir, const std::string& args, const std::string& keys) {
  const std::string q = shell_quote(dir.string());
  drive_window(dir, args + " --size 1280x720", keys, "printf old | xclip -selection clipboard -i >/dev/null 2>&1\n",
               "sleep 3\n"
               "timeout 10 xclip -o -selection clipboard -t TARGETS >" + q + "/targets.txt 2>/dev/null\n"
               "timeout 10 xclip -o -selection clipboard -t UTF8_STRING >" + q + "/text.txt 2>/dev/null\n" +
               clipboard_png_line(dir / "clipboard.png"));
}

std::vector<std::string> all_texts(const nlohmann::json& layout) {
  std::vector<std::string> texts;
  for (const auto& t : layout.at("texts")) texts.push_back(t.at("text").get<std::string>());
  return texts;
}

}  // namespace

TEST_SUITE("gui_copy") {
  TEST_CASE("copy figure: the Heads view's button puts its Chinese figure on the X clipboard as the export's PNG") {
    check_copy("heads", "--language zh --text 'The cat sat on the mat.' --kind gqa --heads 4 --groups 2 --causal", "heads");
  }

  TEST_CASE("copy figure: the convolution view's button copies the conv figure") {
    check_copy("conv", "--language zh --view conv --grid 8x8", "conv");
  }

  TEST_CASE("copy figure: in Compare A/B the button copies the comparison, as export --compare draws it") {
    REQUIRE(std::system("command -v xclip >/dev/null 2>&1") == 0);
    const fs::path dir = fresh_dir("copy_compare");
    const std::string text = "The cat sat on the mat.";
    Scene sa;
    sa.input.text = text;
    sa.model.kind = AttentionKind::mha;
    sa.model.heads = 4;
    sa.model.causal = true;
    save_scene(dir / "a.json", sa);
    const std::string args = "--text '" + text + "' --kind mqa --heads 4 --causal --compare-a " + shell_quote((dir / "a.json").string());
    const WindowRun first = run_window("copy_compare_find", args);
    const std::string pointer = centre_of(first, "compare.copy_figure");
    const fs::path scene = dir / "b.json";
    REQUIRE(std::system("printf old | timeout 10 xclip -selection clipboard -i >/dev/null 2>&1") == 0);
    const WindowRun copied = run_window("copy_compare_click", args + " --pointer " + pointer + " --clicks 4 --frames 40 --save-scene " +
                                                                  shell_quote(scene.string()));
    const Png paper = check_clipboard_is_export(dir, "--compare " + shell_quote((dir / "a.json").string()) + " " +
                                                         shell_quote(scene.string()) + " --format png --scale 2");
    CHECK(has_text(all_texts(copied.layout), "Figure copied (" + std::to_string(paper.width) + "×" + std::to_string(paper.height) + " PNG)"));
  }

  TEST_CASE("copy figure: the why-a-head-attends panel's button copies its bar chart, as export --what qk-attribution draws it") {
    REQUIRE(std::system("command -v xclip >/dev/null 2>&1") == 0);
    const fs::path dir = fresh_dir("copy_qk");
    const std::string name = "gpt2_prefix_f32";
    const fs::path model = model_fixture(name);
    const std::vector<int32_t> ids = fixture_ids(name);
    const std::string args = "--checkpoint " + shell_quote(model.string()) + " --layer 1 --text " + shell_quote(ids_input(ids)) +
                             " --why 1,4,2";
    REQUIRE(std::system("printf old | timeout 10 xclip -selection clipboard -i >/dev/null 2>&1") == 0);
    // The panel settles beside its cell over a few frames: the click aims where the live record shows the button.
    const nlohmann::json copied = drive_window(dir, args + " --layout-live", "click_on qk.copy_figure\nawait 'Figure copied'\n");
    const Png paper = check_clipboard_is_export(dir, "--checkpoint " + shell_quote(model.string()) + " --ids " + ids_arg(ids) +
                                                         " --what qk-attribution --layer 1 --head 1 --query 4 --key 2 --format png --scale 2");
    CHECK(copied.at("status") == "Figure copied (" + std::to_string(paper.width) + "×" + std::to_string(paper.height) + " PNG)");
  }

  TEST_CASE("copy figure: Ctrl+C on the window copies the English figure, the export's PNG") {
    const fs::path dir = fresh_dir("copy_key");
    const std::string scene = "--text 'The cat sat on the mat.' --kind mha --heads 2";
    type_into_window(dir, scene, "xdotool mousemove --window $wid 1200 700\n" + press("ctrl+c"));
    const std::string targets = slurp(dir / "targets.txt");
    INFO("targets: " << targets);
    REQUIRE(targets.find("image/png") != std::string::npos);
    const Png pasted = read_png(dir / "clipboard.png");
    const CliRun r = run_cli("export " + scene + " --what heads --format png --scale 2 --out " + shell_quote((dir / "exported.png").string()));
    INFO("export stderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    const Png paper = read_png(dir / "exported.png");
    check_same_pixels(pasted, paper);
    const std::string status = "Figure copied (" + std::to_string(paper.width) + "×" + std::to_string(paper.height) + " PNG)";
    CHECK(has_text(all_texts(read_json(dir / "layout.json")), status));
  }

  TEST_CASE("copy figure: Ctrl+C in a text field copies the selected text, not the figure") {
    const fs::path dir = fresh_dir("copy_text_field");
    // The Input window's sentence field: a click into it, select all, copy.
    const WindowRun first = run_window("copy_text_field_find", "--text 'The cat sat on the mat.' --size 1280x720");
    std::string field;
    for (const auto& t : first.layout.at("texts"))
      if (t.at("text").get<std::string>() == "The cat sat on the mat.")
        field = std::to_string(int(t["x"].get<double>() + 20)) + " " + std::to_string(int(t["y"].get<double>() + t["h"].get<double>() / 2));
    REQUIRE_MESSAGE(!field.empty(), "the sentence is not in the layout record");
    type_into_window(dir, "--text 'The cat sat on the mat.'",
                     "xdotool mousemove --window $wid " + field + " click 1\nsleep 1\n" +
                     press("ctrl+a") + "sleep 0.5\n" + press("ctrl+c"));
    const std::string targets = slurp(dir / "targets.txt");
    INFO("targets: " << targets);
    CHECK(targets.find("image/png") == std::string::npos);
    CHECK(slurp(dir / "text.txt") == "The cat sat on the mat.");
    for (const std::string& t : all_texts(read_json(dir / "layout.json"))) CHECK(t.find("Figure copied") == std::string::npos);
  }

  TEST_CASE("copy figure: Ctrl+C in the wrapped sentence box copies the sentence without the box's line breaks") {
    const fs::path dir = fresh_dir("copy_wrapped_text");
    // Long enough to wrap several times in the Input window at 1280×720.
    const std::string sentence =
        "The cat sat on the mat while the dog slept by the door and the bird sang in the old tree "
        "near the river, and nobody in the house heard the rain begin.";
    const std::string scene = "--text " + shell_quote(sentence);
    const WindowRun first = run_window("copy_wrapped_find", scene + " --size 1280x720");
    std::string field;
    for (const auto& t : first.layout.at("texts")) {
      const std::string text = t.at("text").get<std::string>();
      if (text.empty() || sentence.find(text.substr(0, std::min<size_t>(text.size(), 12))) == std::string::npos) continue;
      if (text.rfind("The cat", 0) == 0 && field.empty())
        field = std::to_string(int(t["x"].get<double>() + 20)) + " " + std::to_string(int(t["y"].get<double>() + t["h"].get<double>() / 2));
    }
    REQUIRE_MESSAGE(!field.empty(), "the sentence is not in the layout record");
    type_into_window(dir, scene,
                     "xdotool mousemove --window $wid " + field + " click 1\nsleep 1\n" +
                     press("ctrl+a") + "sleep 0.5\n" + press("ctrl+c"));
    const std::string copied = slurp(dir / "text.txt");
    CHECK(copied.find('\r') == std::string::npos);
    CHECK(copied.find('\n') == std::string::npos);
    CHECK(copied == sentence);
  }

  TEST_CASE("copy figure: without the clipboard tool the Chinese status line names it and its package") {
    const std::string args = "--language zh --text 'The cat sat on the mat.' --kind mha --heads 2";
    const WindowRun first = run_window("copy_no_tool_find", args);
    const fs::path empty = fresh_dir("copy_no_tool_path");  // PATH holds `timeout` (the run's watchdog), no xclip
    fs::create_symlink("/usr/bin/timeout", empty / "timeout");
    const std::string env = "XDG_CONFIG_HOME=" + shell_quote((empty / "config").string()) + " PATH=" + shell_quote(empty.string());
    const WindowRun w = run_window("copy_no_tool_click", args + " --pointer " + centre_of(first, "copy_figure") + " --clicks 4 --frames 40", env);
    const std::vector<std::string> texts = all_texts(w.layout);
    INFO(joined(texts));
    CHECK(has_text(texts, "图未复制：没有安装 xclip（请安装软件包 xclip）。"));
  }

  TEST_CASE("copy link: with --site-url, File → Copy link puts a link on the clipboard that --scene-link opens as the same scene") {
    REQUIRE(std::system("command -v xclip >/dev/null 2>&1") == 0);
    const fs::path dir = fresh_dir("copy_link");
    const std::string args = "--site-url https://example.org/attnscope/ --text 'The cat sat on the mat.' --kind gqa --heads 8 "
                             "--groups 2 --causal --view shapes";
    // The File menu, then (opened by a click) its Copy link item.
    const WindowRun bar = run_window("copy_link_bar", args);
    const std::string menu = centre_of(bar, "menu.file");
    const WindowRun open = run_window("copy_link_menu", args + " --pointer " + menu + " --clicks 4 --frames 10");
    const std::string item = centre_of(open, "menu.file.copy_link");
    REQUIRE(std::system("printf old | timeout 10 xclip -selection clipboard -i >/dev/null 2>&1") == 0);
    const fs::path scene = dir / "scene.json";
    const WindowRun copied = run_window("copy_link_click", args + " --pointer '" + menu + ";" + item +
                                                               "' --clicks 4,10 --frames 40 --save-scene " + shell_quote(scene.string()));
    const fs::path text = dir / "link.txt";
    REQUIRE(std::system(("timeout 10 xclip -o -selection clipboard -t UTF8_STRING > " + shell_quote(text.string())).c_str()) == 0);
    const std::string link = slurp(text);
    INFO("link: " << link);
    REQUIRE(link.rfind("https://example.org/attnscope/?scene=", 0) == 0);
    CHECK(has_text(all_texts(copied.layout), "Link copied (" + std::to_string(link.size()) + " characters)"));
    // The link opens exactly the scene that was copied.
    const fs::path again = dir / "again.json";
    const WindowRun opened = run_window("copy_link_open", "--scene-link " + shell_quote(link) + " --save-scene " + shell_quote(again.string()));
    CHECK(has_text(all_texts(opened.layout), "Opened the scene of the link."));
    CHECK(load_scene(again) == load_scene(scene));
    CHECK(load_scene(again).model.kind == AttentionKind::gqa);
  }

  TEST_CASE("copy link: a link that cannot be read opens the default scene and says why; without --site-url there is none to copy") {
    const WindowRun w = run_window("copy_link_bad", "--language zh --scene-link 'https://example.org/attnscope/?scene=eJyr*x'");
    const std::vector<std::string> texts = all_texts(w.layout);
    INFO(joined(texts));
    CHECK(has_text(texts, "无法打开链接中的场景（the link's scene has '*' at character 5"));
    CHECK(w.layout.at("scene") == scene_to_json(Scene{}));
    // The desktop without a site address: the item is there, disabled, and clicking it copies nothing.
    const WindowRun bar = run_window("copy_link_nosite_bar", "--text 'The cat sat on the mat.'");
    const std::string menu = centre_of(bar, "menu.file");
    const WindowRun open = run_window("copy_link_nosite_menu", "--text 'The cat sat on the mat.' --pointer " + menu + " --clicks 4 --frames 10");
    const std::string item = centre_of(open, "menu.file.copy_link");
    const WindowRun clicked = run_window("copy_link_nosite_click", "--text 'The cat sat on the mat.' --pointer '" + menu + ";" + item +
                                                                  "' --clicks 4,10 --frames 30");
    for (const std::string& t : all_texts(clicked.layout)) CHECK(t.find("Link copied") == std::string::npos);
  }
}
