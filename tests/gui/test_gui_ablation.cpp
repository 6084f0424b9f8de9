// Head ablation in the Model view through the X server (issue 38 item 3): the shipped induction model opens on
// its repeated input, a real click on "Click switches heads off" and then on the top induction head's thumbnail
// (xdotool) switches it off, the panel's loss on the input becomes what `compute --ablate` prints for the same
// ids, and Ctrl+Z switches the head on again. Compare A/B on an ablated model: A kept with every head on, a head
// switched off by real clicks, Compare with A shows the unablated layer as A and the ablated one as B (the engine's
// drift between the two passes, both top-1 next tokens, and which heads each side ran without).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/figure/compare.h"
#include "attnscope/model/model.h"
#include "attnscope/pipeline/model_input.h"
#include "attnscope/pipeline/pipeline.h"
#include "gui_run.h"
#include "test_paths.h"

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

  TEST_CASE("compare A/B on an ablated model: Keep as A, a real click switches a layer-0 head off, Compare with A shows unablated A against ablated B") {
    // The shipped model on its repeated input, the Heads view on layer 1; the head switched off is layer 0's top
    // previous-token head, which layer 1's induction heads read: layer 1's attention changes without it.
    const auto m = model::open(induction);
    const std::vector<int32_t> ids = repeated_random_ids(32, m->config.vocab, 7);
    const ModelTokens tokens = model_tokens_from_ids(induction, ids);
    const ModelLayerRun plain = run_model_layer(*m, tokens, 1);
    TopHead previous{};
    previous.layer = -1;
    for (const TopHead& t : top_heads(head_pattern_scores(*plain.stack), HeadPattern::previous, 8))
      if (t.layer == 0) {
        previous = t;
        break;
      }
    REQUIRE(previous.layer == 0);
    const std::string head = "0." + std::to_string(previous.head);
    // What A and B must be: layer 1 of the unablated and of the ablated pass, compared by the engine.
    pipeline::Request request;
    request.model = m;
    request.input.form = pipeline::TokenInput::Form::ids;
    request.input.ids = ids;
    request.layer = 1;
    request.ablation.heads = {{0, previous.head}};
    const pipeline::Result ablated = pipeline::run(request);
    REQUIRE(ablated.ablation);
    const AbComparison expected = compare_analyses(ablated.ablation->before->analysis, ablated.run->analysis);
    double expected_mean = 0;
    for (double d : expected.drift) expected_mean += d / double(expected.drift.size());
    CHECK(expected_mean > 0.01);  // the head mattered to layer 1

    const std::string args = "--checkpoint " + shell_quote(induction.string()) + " --layer 1 --size 1280x720 --text " +
                             shell_quote(ids_input(ids));
    // Where the Model view draws the head (a scripted run of the same window opened on it), so the click lands there.
    const WindowRun place = run_window("compare_ablation_place", args + " --show-model-view");
    std::string at;
    for (const json& t : place.layout.at("thumbs"))
      if (t.at("layer") == 0 && t.at("head") == previous.head)
        at = std::to_string(int(t.at("x").get<double>() + t.at("w").get<double>() / 2)) + " " +
             std::to_string(int(t.at("y").get<double>() + t.at("h").get<double>() / 2));
    REQUIRE_FALSE(at.empty());
    const fs::path dir = test_tmp() / "compare_ablation";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const json last = drive_window(dir, args + " --layout-live",
                                   "await '\"heads.keep_a\"'\n"
                                   "sleep 1\n"
                                   "click_on heads.keep_a\n"             // A: every head on
                                   "await '\"heads.compare\"'\n"
                                   "click_on menu.windows\n"
                                   "click_on menu.windows.model_view\n"  // Windows → Model view
                                   "await '\"thumbs\": \\[$'\n"
                                   "click_on model_view.ablate\n"
                                   "sleep 0.5\n"
                                   "xdotool mousemove --window $wid " + at + "\nsleep 0.3\nxdotool click 1\n"
                                   "await 'loss on the input'\n"
                                   "click_on menu.windows\n"
                                   "click_on menu.windows.model_view\n"  // closed again: the Heads view with B
                                   "click_on heads.compare\n"
                                   "await 'A → B: \\+ heads switched off'\n"
                                   "sleep 1\n");
    CHECK(last.at("ablated_heads") == head);
    CHECK(last.at("error") == "");
    REQUIRE(int(last.at("heads").size()) == 2 * m->config.heads);  // A and B of every head of layer 1
    std::string line;
    for (const json& t : last.at("texts"))
      if (t.at("window").get<std::string>().ends_with("###compare")) line += t.at("text").get<std::string>() + " ";
    INFO(line);
    // The caption's A → B names the heads B ran without (no scene setting differs), not "the same settings".
    CHECK(line.find("A → B: + heads switched off: " + head + " (set to 0)") != std::string::npos);
    CHECK(line.find("A and B have the same settings") == std::string::npos);
    // A's and B's top-1 next tokens after the last token: the unablated and the ablated pass's.
    const auto top1 = [](const ModelLayerRun& r) { return r.next.back().front(); };
    char probabilities[96];
    std::snprintf(probabilities, sizeof probabilities, "(%.3f) · B ", double(top1(*ablated.ablation->before).probability));
    CHECK(line.find(probabilities) != std::string::npos);
    std::snprintf(probabilities, sizeof probabilities, "(%.3f)", double(top1(*ablated.run).probability));
    CHECK(line.find(probabilities) != std::string::npos);
    // Every head's drift A → B is the engine's between the unablated and the ablated layer 1.
    const std::string lead = "Jensen–Shannon drift A → B per head (nats): ";
    const size_t found = line.find(lead);
    REQUIRE(found != std::string::npos);
    const char* p = line.c_str() + found + lead.size();
    for (int h = 0; h < m->config.heads; ++h) {
      int shown_head = -1, used = 0;
      double d = 0;
      REQUIRE(std::sscanf(p, " h%d %lf%n", &shown_head, &d, &used) == 2);
      CHECK(shown_head == h);
      CHECK(std::abs(d - expected.drift[size_t(h)]) <= 0.0006);
      p += used;
      while (*p == ' ' || *p == '\xc2' || *p == '\xb7') ++p;  // " · "
    }
  }
}

}  // namespace attnscope::test
