// Copy figure: a click on the view's Copy figure button puts the view's figure on the X clipboard
// (CLIPBOARD, target image/png), read back here with xclip and compared pixel for pixel with the same
// view exported separately by `attnscope export` — in Chinese, as the window's language is.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "gui/gui_run.h"
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

// The clipboard's image/png into `out` (exit status of xclip).
int read_clipboard_png(const fs::path& out) {
  const std::string cmd = "timeout 10 xclip -o -selection clipboard -t image/png > " + shell_quote(out.string()) + " 2>/dev/null";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

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
  const fs::path clip = dir / "clipboard.png";
  REQUIRE(read_clipboard_png(clip) == 0);
  const Png pasted = read_png(clip);

  // The same view exported separately from the saved scene, at the Export panel's scale (2).
  const fs::path exported = dir / "exported.png";
  const CliRun r = run_cli("export --scene " + shell_quote(scene.string()) + " --what " + what +
                           " --format png --scale 2 --language zh --out " + shell_quote(exported.string()));
  INFO("export stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const Png paper = read_png(exported);
  REQUIRE(pasted.width == paper.width);
  REQUIRE(pasted.height == paper.height);
  int differing = 0;
  for (int y = 0; y < paper.height; ++y)
    for (int x = 0; x < paper.width; ++x) differing += pasted.at(x, y) != paper.at(x, y);
  CHECK(differing == 0);
  // The status line says so, in Chinese, with the image's size.
  const std::string status = "已复制图（" + std::to_string(paper.width) + "×" + std::to_string(paper.height) + " PNG）";
  std::vector<std::string> texts;
  for (const auto& t : copied.layout.at("texts")) texts.push_back(t.at("text").get<std::string>());
  INFO(joined(texts));
  CHECK(has_text(texts, status));
}

}  // namespace

TEST_SUITE("gui_copy") {
  TEST_CASE("copy figure: the Heads view's button puts its Chinese figure on the X clipboard as the export's PNG") {
    check_copy("heads", "--language zh --text 'The cat sat on the mat.' --kind gqa --heads 4 --groups 2 --causal", "heads");
  }

  TEST_CASE("copy figure: the convolution view's button copies the conv figure") {
    check_copy("conv", "--language zh --view conv --grid 8x8", "conv");
  }
}
