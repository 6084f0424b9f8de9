// A Granite 4.0-H checkpoint (issue 39 item 3) through the X server: the window opens the fixture with its Model
// view, and a real click (xdotool) on a Mamba-2 layer's head opens that layer in the Heads view, drawn as its
// signed matrices M on the diverging scale, with the layer named.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/model/model.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path fixture = fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models/granite_hybrid_f32";
const std::string input = "ids: 5 17 42 9 33 60 5 17 42 9";

}  // namespace

TEST_SUITE("gui_granite_click") {
  TEST_CASE("granite_hybrid through the X server: a real click on a Mamba-2 layer's head in the Model view opens it") {
    const auto m = model::open(fixture);
    const model::ModelConfig& c = m->config;
    REQUIRE(c.is_linear_layer(0));  // layers 0, 2, 3 Mamba-2, layer 1 attention
    REQUIRE_FALSE(c.is_linear_layer(1));
    const std::string args = "--checkpoint " + shell_quote(fixture.string()) + " --show-model-view --size 1280x720 --text " +
                             shell_quote(input);
    // Where the Model view draws layer 0's head 1 (a scripted run of the same window), so the real click lands there.
    const WindowRun first = run_window("granite_click_place", args);
    std::string at;
    for (const json& t : first.layout.at("thumbs"))
      if (t.at("layer") == 0 && t.at("head") == 1) {
        CHECK(t.at("kind") == "Mamba-2");
        at = centre_of(t);
        at[at.find(',')] = ' ';  // xdotool mousemove takes "x y"
      }
    REQUIRE_FALSE(at.empty());
    const auto dir = test_tmp() / "granite_click";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const json shown = drive_window(dir, args + " --layout-live",
                                    "await '\"kind\": \"Mamba-2\"'\n"
                                    "sleep 1\n"
                                    "xdotool mousemove --window $wid " + at + "\nsleep 0.3\nxdotool click 1\n"
                                    "await '\"large_head\": 1,'\n"
                                    "await 'layer 0 of 4'\n");
    CHECK(shown.at("error") == "");
    CHECK(shown.at("view") == "heads");
    CHECK(shown.at("large_head") == 1);
    CHECK(shown.at("colormap") == "diverging");  // the Mamba-2 layer's signed M
    const json& heads = shown.at("heads");
    REQUIRE(int(heads.size()) == c.mamba.heads);
    for (const json& h : heads) CHECK(h.at("range")[0].get<double>() == -h.at("range")[1].get<double>());
    bool named = false;
    for (const json& t : shown.at("texts"))
      if (t.at("window").get<std::string>().ends_with("###heads"))
        named = named || t.at("text").get<std::string>().find("layer 0 of 4") != std::string::npos;
    CHECK(named);
  }
}

}  // namespace attnscope::test
