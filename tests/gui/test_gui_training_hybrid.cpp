// The Training window's hybrid pattern (issue 39 item 4): real clicks (xdotool) choose Gated DeltaNet and
// "softmax layers: every 2nd layer", Start trains that hybrid; its heads are drawn per layer as their kind
// (the softmax layer's probabilities, the Gated DeltaNet layer's signed M); the saved hybrid opens with "Open
// in the Checkpoint window", and the Model view draws every layer as its kind, labelled.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "attnscope/model/model.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string small = "--show-training --train-settings d_model=32,seq_len=16,batch=4,lr=0.003,warmup=50,threads=1,"
                          "snapshot_every=5";

}  // namespace

TEST_SUITE("gui_training_hybrid") {
  TEST_CASE("training window through the X server: real clicks choose Gated DeltaNet with a softmax layer every 2nd "
            "layer; Start trains that hybrid") {
    const auto dir = test_tmp() / "training_hybrid_click";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const json shown = drive_window(dir, small + ",steps=8 --size 1280x720 --layout-live",
                                    "click_on training.attention\n"
                                    "click_on training.attention.gated-deltanet\n"
                                    "await '\"attention\": \"gated-deltanet\"'\n"
                                    "click_on training.softmax_every\n"
                                    "click_on training.softmax_every.2\n"
                                    "await '\"softmax_every\": 2'\n"
                                    "click_on training.start\n"
                                    "await '\"state\": \"finished\"'\n");
    CHECK(shown.at("error") == "");
    const json& t = shown.at("training");
    CHECK(t.at("form").at("attention") == "gated-deltanet");
    CHECK(t.at("form").at("softmax_every") == 2);
    REQUIRE(t.at("runs").size() == 1);
    const json& run = t["runs"][0];
    CHECK(run["layer_kinds"] == "gated-deltanet,grouped");
    CHECK(run["label"] == "Gated DeltaNet + softmax (softmax in layer 1, state 1.00 KiB)");
    CHECK(run["step"] == 8);
    // the softmax layer's cache: 2 · H 4 · d_head 8 · 4 bytes per token, the other layer none
    CHECK(run["kv_cache_bytes_per_token"] == 2 * 4 * 8 * 4);
    CHECK(run["probe_range"][0].get<double>() < 0);  // the Gated DeltaNet layer's signed M sets the range
  }

  TEST_CASE("training window: the hybrid's layers are drawn as their kinds; a bad pattern is named on screen") {
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      // the heads of the last layer (shown by default): with 2 layers the softmax one (probabilities), with 3
      // layers Gated DeltaNet (its signed M)
      for (const int layers : {2, 3}) {
        CAPTURE(layers);
        const WindowRun w = run_window("training_hybrid_layers" + std::to_string(layers) + language,
                                       small + ",attention=gated-deltanet,softmax_every=2,steps=6,layers=" +
                                           std::to_string(layers) + " --train-actions start --size 1280x720 --language " +
                                           language);
        CHECK(w.layout.at("untranslated").empty());
        REQUIRE(w.layout["training"]["runs"].size() == 1);
        const std::vector<std::string> texts = texts_of(w, "###training");
        INFO(joined(texts));
        const bool zh = language == "zh";
        const std::string state = layers == 2 ? "1.00 KiB" : "2.00 KiB";
        CHECK(shows(texts, zh ? "Gated DeltaNet + softmax（softmax 在第 1 层，状态 " + state + "）"
                              : "Gated DeltaNet + softmax (softmax in layer 1, state " + state + ")"));
        CHECK(shows(texts, layers == 3 ? (zh ? "M，有正有负（无 softmax）" : "M, signed (no softmax)")
                                       : (zh ? "概率" : "probability")));
        if (layers == 2) CHECK_FALSE(shows(texts, zh ? "M，有正有负（无 softmax）" : "M, signed (no softmax)"));
      }
    }
    // a hybrid needs a kind without a softmax between its softmax layers, and enough layers for the pattern
    const WindowRun bad = run_window("training_hybrid_bad", small + ",attention=grouped,softmax_every=2 --train-actions start");
    CHECK(bad.layout["training"]["runs"].empty());
    CHECK(bad.layout["training"]["error"].get<std::string>().find("a hybrid puts a kind without a softmax") !=
          std::string::npos);
    const WindowRun few = run_window("training_hybrid_few", small + ",attention=mamba2,softmax_every=4 --train-actions start");
    CHECK(few.layout["training"]["error"].get<std::string>().find("needs at least 4 layers, got 2") != std::string::npos);
  }

  TEST_CASE("training window: the saved hybrid opens in the Checkpoint window; the Model view draws each layer as its kind") {
    const fs::path dir = test_tmp() / "gui" / "training_hybrid_open";
    fs::remove_all(dir);
    const std::string args = small + ",attention=gated-deltanet,softmax_every=2,steps=8 --text " +
                             shell_quote("ids: 1 2 3 4 1 2 3 4") + " --train-actions start,save:";
    const WindowRun saved = run_window("training_hybrid_saved", args + shell_quote((dir / "run_a").string()));
    REQUIRE(saved.layout.at("widgets").contains("training.open_saved"));
    const WindowRun opened =
        run_window("training_hybrid_opened", args + shell_quote((dir / "run_b").string()) + " --pointer " +
                                                 centre_of(saved.layout["widgets"]["training.open_saved"]) +
                                                 " --clicks 10,12,14,16,18,20,22,24,26,28 --frames 40");
    CHECK(opened.layout.at("error").get<std::string>().empty());
    const auto m = model::open(dir / "run_b");
    CHECK(m->config.model_type == "attnscope_linear");
    REQUIRE(m->config.layers == 2);
    CHECK(m->config.is_linear_layer(0));
    CHECK_FALSE(m->config.is_linear_layer(1));
    REQUIRE(texts_of(opened, "###checkpoint").size() > 0);  // the Checkpoint window is open
    CHECK(shows(texts_of(opened, "###model"), "Not for a trained hybrid"));  // the card's Convert to GQA / MQA says why not
    // the Heads view draws layer 0, Gated DeltaNet's: signed, each head's range symmetric about 0
    CHECK(opened.layout.at("colormap") == "diverging");
    for (const json& h : opened.layout.at("heads")) CHECK(h.at("range")[0].get<double>() == -h.at("range")[1].get<double>());
    // the Model view: every layer, Gated DeltaNet's heads labelled and signed, the softmax layer's not
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window("training_hybrid_model_view_" + language,
                                     "--checkpoint " + shell_quote((dir / "run_b").string()) +
                                         " --show-model-view --size 1280x720 --language " + language +
                                         " --text " + shell_quote("ids: 1 2 3 4 1 2 3 4"));
      CHECK(w.layout.at("error") == "");
      CHECK(w.layout.at("untranslated").empty());
      const json& thumbs = w.layout.at("thumbs");
      REQUIRE(int(thumbs.size()) == m->config.layers * m->config.heads);
      for (const json& t : thumbs) CHECK(t.at("kind") == (t.at("layer") == 0 ? "Gated DeltaNet" : ""));
      const std::vector<std::string> texts = texts_of(w, "###model_view");
      INFO(joined(texts));
      CHECK(std::count(texts.begin(), texts.end(), "Gated DeltaNet") == 1);
      CHECK(shows(texts, language == "zh" ? "Gated DeltaNet 权重" : "Gated DeltaNet weight"));
      CHECK(shows(texts, language == "zh" ? "概率" : "probability"));  // the softmax layer's bar beside it
    }
  }
}

}  // namespace attnscope::test
