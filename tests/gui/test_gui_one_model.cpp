// One model at a time, and every checkpoint ready to look at (issue 22, items 2 and 3), through scripted
// runs: the shipped induction model opens on its own repeated sequence with its heads and its card in the
// Model window; a checkpoint that fails to open shows its error where the heads were, and Close brings the
// synthetic model back; a model made by `attnscope train` reads text in its own vocabulary; a d_model that
// the heads do not divide lowers them only while it must, and says so.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/model.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

const fs::path shipped = fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "models" / "induction";

// `part` among the texts, wherever the window wrapped them (a long path breaks mid-word): white space
// and line ends are left out of both.
bool has_text(const std::vector<std::string>& texts, const std::string& text) {
  return std::find(texts.begin(), texts.end(), text) != texts.end();
}
std::string end_of(const nlohmann::json& item, bool right) {
  const double x = right ? item["x"].get<double>() + item["w"].get<double>() - 3 : item["x"].get<double>() + 3;
  return std::to_string(int(x)) + "," + std::to_string(int(item["y"].get<double>() + item["h"].get<double>() * 0.5));
}
// Every text of the window's panels but the menu bar and the Lessons panel (they name models too).
std::vector<std::string> model_texts(const WindowRun& w) {
  std::vector<std::string> all;
  for (const char* id : {"###heads", "###model", "###checkpoint", "###input"})
    for (const std::string& t : texts_of(w, id)) all.push_back(t);
  return all;
}

}  // namespace

TEST_SUITE("gui_checkpoint") {
  TEST_CASE("one model: the shipped induction model opens on its own repeated sequence, its heads and its card") {
    const auto m = model::open(shipped);
    for (const char* size : {"1280x720", "1920x1080"})
      for (const char* language : {"en", "zh"}) {
        CAPTURE(size);
        CAPTURE(language);
        const std::string name = std::string("one_model_shipped_") + size + "_" + language;
        const WindowRun w = run_window(name, "--checkpoint " + shell_quote(shipped.string()) + " --size " + size +
                                                 " --language " + language);
        const std::vector<std::string> texts = model_texts(w);
        INFO(joined(texts));
        CHECK_FALSE(shows(texts, language == std::string("en") ? "Error" : "错误"));
        CHECK(w.layout.at("untranslated").empty());
        // The Heads view draws the checkpoint's H heads of layer 0 in its K/V groups, over 16 + 16 tokens.
        const auto& heads = w.layout.at("heads");
        REQUIRE(int(heads.size()) == m->config.heads);
        for (int h = 0; h < m->config.heads; ++h) {
          CHECK(heads[size_t(h)].at("head").get<int>() == h);
          CHECK(heads[size_t(h)].at("kv_group").get<int>() == h / (m->config.heads / m->config.kv_heads));
          CHECK(heads[size_t(h)].at("tokens").get<int>() == 32);
        }
        if (language == std::string("en")) {
          CHECK(has_text(texts_of(w, "###heads"), "induction · layer 0 of 2"));
          // The Model window is the checkpoint's card, without the synthetic settings.
          const std::vector<std::string> card = texts_of(w, "###model");
          CHECK(shows(card, "Checkpoint: induction"));
          CHECK(has_text(card, "layers L"));
          CHECK(has_text(card, std::to_string(m->config.layers)));
          CHECK(has_text(card, "2  (GQA)"));
          CHECK_FALSE(shows(card, "d_model C"));
          CHECK_FALSE(shows(card, "seed"));
          CHECK(w.layout.at("widgets").contains("model.layer"));
          CHECK(w.layout.at("widgets").contains("checkpoint.kv_heads"));
          CHECK_FALSE(w.layout.at("widgets").contains("model.d_model"));
          // The Next tokens table names pieces of the model's vocabulary (A … Z, a … f), not "—".
          const std::vector<std::string> checkpoint = texts_of(w, "###checkpoint");
          CHECK(shows(checkpoint, "Next tokens"));
          CHECK_FALSE(has_text(checkpoint, "—"));
          const auto header = std::find(checkpoint.begin(), checkpoint.end(), "probability");
          REQUIRE(header != checkpoint.end());
          REQUIRE(header + 1 != checkpoint.end());
          const std::string top = *(header + 1);
          CHECK(top.size() == 1);
          CHECK(((top[0] >= 'A' && top[0] <= 'Z') || (top[0] >= 'a' && top[0] <= 'f')));
        }
      }
  }

  TEST_CASE("one model: a checkpoint that fails to open shows its error in place of the heads; Close brings the synthetic model back") {
    const fs::path d = fresh_dir("one_model_broken");
    fs::copy(shipped, d / "broken", fs::copy_options::recursive);
    fs::resize_file(d / "broken/model.safetensors", fs::file_size(d / "broken/model.safetensors") - 100);
    const std::string args = "--checkpoint " + shell_quote((d / "broken").string());
    const WindowRun w = run_window("one_model_broken", args);
    const std::vector<std::string> heads = texts_of(w, "###heads");
    INFO(joined(model_texts(w)));
    CHECK(shows(heads, "Error: "));
    CHECK(shows(heads, "model.safetensors"));
    CHECK(w.layout.at("heads").empty());  // no heatmap: nothing of another model under the checkpoint's name
    CHECK(shows(texts_of(w, "###model"), "Error:"));
    CHECK_FALSE(shows(texts_of(w, "###model"), "d_model C"));
    // The Model view says the same, not that no checkpoint is open.
    const WindowRun view = run_window("one_model_broken_view", args + " --show-model-view");
    CHECK(shows(texts_of(view, "###model_view"), "model.safetensors"));
    CHECK_FALSE(shows(texts_of(view, "###model_view"), "No checkpoint open"));
    CHECK(view.layout.at("thumbs").empty());
    // Close (in place of the heads): the synthetic model's 8 heads and its settings again.
    REQUIRE(w.layout.at("widgets").contains("heads.close_checkpoint"));
    const WindowRun closed = run_window("one_model_broken_closed", args + " --pointer " +
                                                                         centre_of(w.layout["widgets"]["heads.close_checkpoint"]) +
                                                                         " --clicks 4 --frames 10");
    INFO(joined(model_texts(closed)));
    CHECK(closed.layout.at("heads").size() == 8);
    CHECK_FALSE(shows(texts_of(closed, "###heads"), "Error"));
    CHECK(shows(texts_of(closed, "###model"), "d_model C"));
  }

  TEST_CASE("one model: closing the shipped model restores the synthetic model and its sentence") {
    const std::string args = "--checkpoint " + shell_quote(shipped.string()) + " --text " + shell_quote("The cat sat on the mat");
    const WindowRun open = run_window("one_model_close_open", args);
    REQUIRE(open.layout.at("widgets").contains("model.close_checkpoint"));
    const WindowRun closed = run_window("one_model_close", args + " --pointer " +
                                                               centre_of(open.layout["widgets"]["model.close_checkpoint"]) +
                                                               " --clicks 4 --frames 10");
    INFO(joined(model_texts(closed)));
    const auto& heads = closed.layout.at("heads");
    REQUIRE(heads.size() == 8);
    CHECK(heads[0].at("tokens").get<int>() == 6);  // The cat sat on the mat
    CHECK(shows(texts_of(closed, "###model"), "d_model C"));
  }

  TEST_CASE("one model: a model made by attnscope train reads text typed in its own characters") {
    const fs::path d = fresh_dir("one_model_train");
    write_file_atomic(d / "text.txt", "the cat sat on the mat. the dog sat on the log.\n");
    const CliRun train = run_cli("train --task text --text-file " + shell_quote((d / "text.txt").string()) +
                                 " --seq-len 8 --batch 4 --d-model 32 --steps 5 --out " + shell_quote((d / "run").string()));
    REQUIRE_MESSAGE(train.exit_code == 0, train.err);
    const std::string model = shell_quote((d / "run").string());
    const WindowRun w = run_window("one_model_train_text", "--checkpoint " + model + " --text " + shell_quote("the cat sat"));
    INFO(joined(model_texts(w)));
    CHECK_FALSE(shows(model_texts(w), "Error"));
    const auto& heads = w.layout.at("heads");
    REQUIRE(heads.size() == 4);
    CHECK(heads[0].at("tokens").get<int>() == 11);  // one token per character, spaces included
    CHECK_FALSE(shows(texts_of(w, "###model"), "It opened on a random sequence"));  // the text was taken
    // A character the model never saw: it opens on its own repeated sequence and says why.
    const WindowRun z = run_window("one_model_train_unknown", "--checkpoint " + model + " --text " + shell_quote("zebra"));
    INFO(joined(model_texts(z)));
    CHECK(z.layout.at("heads").size() == 4);
    CHECK(shows(texts_of(z, "###model"), "It opened on a random sequence"));
  }

  TEST_CASE("one model: a d_model the heads do not divide lowers them and says so; one they divide keeps them") {
    const std::string args = "--d-model 64 --heads 64 --kind mha";
    const WindowRun w = run_window("one_model_d_model", args);
    REQUIRE(w.layout.at("heads").size() == 64);
    REQUIRE(w.layout.at("widgets").contains("model.d_model"));
    const auto& slider = w.layout["widgets"]["model.d_model"];
    // The left end (d_model 8): 8 heads, and a line saying why, not a silent change.
    const WindowRun low = run_window("one_model_d_model_low", args + " --pointer " + end_of(slider, false) + " --clicks 4 --frames 10");
    INFO(joined(texts_of(low, "###model")));
    CHECK(low.layout.at("heads").size() == 8);
    CHECK(shows(texts_of(low, "###model"), "heads H = 8, not the 64 chosen: H must divide"));
    // The right end (d_model 4096): the 64 heads stay, and nothing needs saying.
    const WindowRun high = run_window("one_model_d_model_high", args + " --pointer " + end_of(slider, true) + " --clicks 4 --frames 10");
    INFO(joined(texts_of(high, "###model")));
    CHECK(high.layout.at("heads").size() == 64);
    CHECK_FALSE(shows(texts_of(high, "###model"), "chosen"));
  }
}

}  // namespace attnscope::test
