// Head ablation in the Model view through the X server (issue 38 item 3): the shipped induction model opens on
// its repeated input, a real click on "Click switches heads off" and then on the top induction head's thumbnail
// (xdotool) switches it off, the panel's loss on the input becomes what `compute --ablate` prints for the same
// ids, and Ctrl+Z switches the head on again.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/model/model.h"
#include "attnscope/pipeline/model_input.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path induction = fs::path(ATTNSCOPE_SOURCE_DIR) / "assets/models/induction";

bool has_text(const json& layout, const std::string& part) {
  for (const json& t : layout.at("texts"))
    if (t.at("text").get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_SUITE("gui_ablation") {
  TEST_CASE("a real click switches the top induction head off: the panel's loss is compute --ablate's; Ctrl+Z restores") {
    const auto m = model::open(induction);
    const std::vector<int32_t> ids = repeated_random_ids(32, m->config.vocab, 7);
    const std::string input = ids_input(ids);
    // The head to switch off: layer 1's best induction head on this input.
    const ModelLayerRun run = run_model_layer(*m, model_tokens_from_ids(induction, ids), 1);
    const TopHead top = top_heads(head_pattern_scores(*run.stack), HeadPattern::induction, 1).at(0);
    REQUIRE(top.layer == 1);
    const std::string head = std::to_string(top.layer) + "." + std::to_string(top.head);
    // The command line's loss before and after, for the same ids.
    std::string list;
    for (int32_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
    const fs::path out = test_tmp() / "ablation_cli";
    fs::remove_all(out);
    const CliRun cli = run_app("", "compute --checkpoint " + shell_quote(induction.string()) + " --ids " + list +
                                       " --ablate " + head + " --out " + shell_quote(out.string()));
    INFO(cli.err);
    REQUIRE(cli.exit_code == 0);
    std::smatch match;
    REQUIRE(std::regex_search(cli.out, match, std::regex("loss on the input ([0-9.]+) -> ([0-9.]+) nats")));
    const std::string panel_loss = "loss on the input " + match[1].str() + " → " + match[2].str() + " nats";
    CHECK(std::abs(std::stod(match[2].str()) - std::stod(match[1].str())) > 0.05);  // the head mattered

    const std::string args = "--checkpoint " + shell_quote(induction.string()) + " --show-model-view --size 1280x720 --text " +
                             shell_quote(input);
    // Where the Model view draws the head (a scripted run of the same window), so the real click lands there.
    const WindowRun first = run_window("ablation_place", args);
    std::string at;
    for (const json& t : first.layout.at("thumbs"))
      if (t.at("layer") == top.layer && t.at("head") == top.head)
        at = std::to_string(int(t.at("x").get<double>() + t.at("w").get<double>() / 2)) + " " +
             std::to_string(int(t.at("y").get<double>() + t.at("h").get<double>() / 2));
    REQUIRE_FALSE(at.empty());
    CHECK(first.layout.at("widgets").contains("model_view.ablate"));
    const fs::path dir = test_tmp() / "ablation_click";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string q = shell_quote(dir.string());
    const json last = drive_window(dir, args + " --layout-live",
                                   "await '\"thumbs\"'\n"
                                   "sleep 1\n"
                                   "click_on model_view.ablate\n"
                                   "sleep 0.5\n"
                                   "xdotool mousemove --window $wid " + at + "\nsleep 0.3\nxdotool click 1\n"
                                   "await 'loss on the input'\n"
                                   "sleep 1\n"
                                   "cp " + q + "/layout.json " + q + "/switched_off.json\n"
                                   // held for a few frames: a press and release within one frame is no key press to ImGui 1.86
                                   "xdotool keydown ctrl+z\nsleep 0.3\nxdotool keyup ctrl+z\n"
                                   "await '\"ablated_heads\": \"\"'\n");
    const json off = read_json(dir / "switched_off.json");
    CHECK(off.at("ablated_heads") == head);
    CHECK(off.at("error") == "");
    INFO(panel_loss);
    CHECK(has_text(off, panel_loss));  // the panel says what the command line says
    CHECK(last.at("ablated_heads") == "");  // Ctrl+Z switched it on again
    CHECK_FALSE(has_text(last, "loss on the input"));
  }

  TEST_CASE("a Mamba-2 layer's heads cannot be switched off: the tooltip says so, the window's --ablate names why") {
    const fs::path granite = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/granite_hybrid_f32";
    const auto m = model::open(granite);
    REQUIRE(m->config.is_linear_layer(0));
    const std::string args = "--checkpoint " + shell_quote(granite.string()) + " --show-model-view --size 1280x720 --text " +
                             shell_quote("ids: 5 17 42 9 33 60 5 17 42 9");
    const WindowRun first = run_window("ablation_granite_place", args);
    std::string at;
    for (const json& t : first.layout.at("thumbs"))
      if (t.at("layer") == 0 && t.at("head") == 0)
        at = std::to_string(int(t.at("x").get<double>() + t.at("w").get<double>() / 2)) + "," +
             std::to_string(int(t.at("y").get<double>() + t.at("h").get<double>() / 2));
    REQUIRE_FALSE(at.empty());
    const WindowRun hover = run_window("ablation_granite_hover", args + " --pointer " + at + " --frames 20");
    CHECK(has_text(hover.layout, "A Mamba-2 layer has no softmax heads: it cannot be switched off."));
    // The window's --ablate on that layer: refused in words, nothing switched off, no crash.
    const WindowRun refused = run_window("ablation_granite_refused", args + " --ablate 0.0");
    CHECK(refused.layout.at("ablated_heads") == "");
    CHECK(refused.run.err.find("linear (mixer) layer without softmax heads") != std::string::npos);
    // Its attention layer's head can.
    int attention = 0;
    while (m->config.is_linear_layer(attention)) ++attention;
    const std::string head = std::to_string(attention) + ".0";
    const WindowRun off = run_window("ablation_granite_off", args + " --ablate " + head);
    CHECK(off.layout.at("ablated_heads") == head);
    CHECK(off.layout.at("error") == "");
    CHECK(has_text(off.layout, "loss on the input"));
  }
}

}  // namespace attnscope::test
