// A long input's exports from the window (issue 38 item 6, core/long_export.h): on gpt-oss's fixture past the stack's
// limit (gui_run.h long_input_flags), real clicks (xdotool) on the Export panel write "all heads" and "the model
// view" as `export --long --what heads|model` writes them for the same options (the Heads view's pooling and blocks a
// side, the panel's scale, the interface's language) — byte for byte — and the panel says what it writes; the Heads
// view's Copy figure puts that layer's figure on the clipboard, pixel for pixel the CLI's PNG. In English and 中文.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "attnscope/figure/pooled_figure.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/head_maps.h"
#include "clipboard.h"
#include "gui_run.h"
#include "model/checkpoint_fixtures.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Without its spaces: a wrapped line is recorded as its pieces (an English one broken at a space).
std::string unspaced(const std::string& text) {
  std::string out;
  for (const char c : text)
    if (c != ' ' && c != '\n') out += c;
  return out;
}

// Every text the record says the window drew, in order, without spaces.
std::string record_texts(const json& layout) {
  std::string all;
  for (const json& t : layout.at("texts")) all += unspaced(t.at("text").get<std::string>());
  return all;
}

int side_of(int tokens, int pixels) {
  const int block = model::pool_block(tokens, pixels);
  return (tokens + block - 1) / block;
}

}  // namespace

TEST_SUITE("gui_long_export") {
  TEST_CASE("a long input through the X server: Export writes all heads and the model view as the CLI does, Copy figure too") {
    REQUIRE_MESSAGE(std::system("command -v xclip >/dev/null 2>&1") == 0,
                    "the clipboard check reads the X selection with xclip (apt-get install xclip)");
    const int T = int(long_input_ids().size());
    for (const char* language : {"en", "zh"}) {
      CAPTURE(language);
      const bool zh = std::string(language) == "zh";
      const fs::path dir = test_tmp() / (std::string("gui_long_export_") + language);
      fs::remove_all(dir);
      fs::create_directories(dir / "run");
      const std::string q = shell_quote(dir.string());
      const json shown = drive_window(
          dir, long_input_flags() + " --layer 1 --size 1280x720 --show-export --language " + language + " --layout-live",
          "await '\"heads.long_head.0\"'\n"
          "click_on export.what.2\n"
          "sleep 0.5\n"
          "click_on export.button\n"
          "await '\"export_message\": \"[^\"]*attnscope-heads-[^\"]*png'\n"
          "cp " + q + "/layout.json " + q + "/heads_chosen.json\n"
          "click_on export.what.3\n"
          "sleep 0.5\n"
          "click_on export.button\n"
          "await '\"export_message\": \"[^\"]*attnscope-model-[^\"]*png'\n"
          "click_on copy_figure\n" +
              std::string(zh ? "await '已复制图'\n" : "await 'Figure copied'\n"),
          "cd " + shell_quote((dir / "run").string()) + "\nprintf old | timeout 10 xclip -selection clipboard -i >/dev/null 2>&1\n",
          clipboard_png_line(dir / "clipboard.png") + "sleep 1\n");
      CHECK(shown.at("error") == "");
      // The Heads view's blocks a side (the layout record's "pixels=P …" of a head) and the pooling (max).
      const std::string tile = shown.at("widgets").at("heads.long_head.0").at("text");
      int pixels = 0;
      REQUIRE(std::sscanf(tile.c_str(), "pixels=%d", &pixels) == 1);
      // The panel says what it writes: with all heads chosen the Heads view's pooling, with the model view the default.
      const auto said = [&](int pixels_asked) {
        const std::string side = std::to_string(side_of(T, pixels_asked)), tokens = std::to_string(T);
        return zh ? "每个头最大池化为 " + side + "×" + side + " 块，来自 " + tokens + " 个词元的长输入"
                  : "each head max-pooled to " + side + "×" + side + " blocks, from a long input of " + tokens + " tokens";
      };
      const std::string said_heads = said(pixels), said_model = said(default_model_pixels);
      {
        const std::string all = record_texts(read_json(dir / "heads_chosen.json"));
        INFO(all);
        CHECK(contains(all, unspaced(said_heads)));
      }
      CHECK(contains(record_texts(shown), unspaced(said_model)));
      // The files against the CLI's, same options.
      const std::string base = "export --checkpoint " + shell_quote(model_fixture("gpt_oss_dequantized_bf16").string()) +
                               " --ids " + ids_arg(long_input_ids()) + " --long --pool max --scale 2 --format png --language " + language;
      const fs::path cli_heads = dir / "cli_heads.png", cli_model = dir / "cli_model.png";
      const CliRun h = run_cli(base + " --what heads --layer 1 --pixels " + std::to_string(pixels) + " --out " +
                               shell_quote(cli_heads.string()));
      INFO(h.err);
      REQUIRE(h.exit_code == 0);
      const CliRun m = run_cli(base + " --what model --out " + shell_quote(cli_model.string()));
      INFO(m.err);
      REQUIRE(m.exit_code == 0);
      const fs::path saved_heads = only_file(dir / "run" / "exports", "attnscope-heads-", ".png");
      const fs::path saved_model = only_file(dir / "run" / "exports", "attnscope-model-", ".png");
      REQUIRE_FALSE(saved_heads.empty());
      REQUIRE_FALSE(saved_model.empty());
      CHECK(read_file(saved_heads, 1 << 26) == read_file(cli_heads, 1 << 26));
      CHECK(read_file(saved_model, 1 << 26) == read_file(cli_model, 1 << 26));
      // Copy figure: the layer's heads, pixel for pixel the CLI's PNG.
      REQUIRE(fs::exists(dir / "clipboard.png"));
      REQUIRE(fs::file_size(dir / "clipboard.png") > 0);
      check_same_pixels(read_png(dir / "clipboard.png"), read_png(cli_heads));
    }
  }
}

}  // namespace attnscope::test
