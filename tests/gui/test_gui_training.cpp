// The Training window in scripted runs (--show-training --train-settings … --train-actions …): the loss
// curve holds one point per step, the probe heads refresh as it trains and are drawn as textures, the
// induction scores are recorded per head over time, Step / Pause / Reset do what they say, Compare
// trains MHA, GQA and MQA with their KV bytes per token, Save writes a checkpoint that model::open
// reads back to the logits of the same training done here, and bad settings are named on screen.
// Small models and few steps, one thread: fast and deterministic.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "attnscope/io/file_io.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "attnscope/train/trainer.h"
#include "check.h"
#include "gui_run.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string small = "--show-training --train-settings d_model=32,seq_len=16,batch=4,threads=1,snapshot_every=5";

bool any_text(const json& layout, const std::string& part) {
  for (const json& t : layout["texts"])
    if (t["text"].get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

train::TrainSettings small_settings(int steps) {
  train::TrainSettings s = train::default_train_settings();
  s.model.d_model = 32, s.task.seq_len = 16, s.batch = 4, s.threads = 1, s.snapshot_every = 5, s.steps = steps;
  s.optimizer.lr = 3e-3f, s.seed = 1;
  return s;
}

}  // namespace

TEST_SUITE("gui_training") {
  TEST_CASE("training window: Start trains on a worker; the curve, heads, induction scores and speed follow") {
    const WindowRun w = run_window("training_start", small + ",steps=20 --train-actions start");
    const json& t = w.layout["training"];
    REQUIRE(t["runs"].size() == 1);
    const json& run = t["runs"][0];
    CHECK(run["state"] == "finished");
    CHECK(run["step"] == 20);
    // The curve: one loss per step, finite, the same as training in this thread (one thread: bit for bit).
    REQUIRE(run["losses"].size() == 20);
    train::Trainer trainer(small_settings(20));
    for (int i = 0; i < 20; ++i) CHECK(run["losses"][size_t(i)].get<float>() == trainer.step());
    // Heads: refreshed at steps 0, 5, 10, 15, 20; every head of every layer drawn as a texture.
    CHECK(t["heads_step"] == 20);
    CHECK(t["heads_refreshes"].get<int>() >= 2);
    CHECK(t["heads_textures"] == 2 * 4);
    // Induction scores per head over time: one point per snapshot, [L][H] each, within [0, 1].
    const json& history = run["induction_history"];
    REQUIRE(history.size() >= 4);
    CHECK(history.back()["step"] == 20);
    for (const json& p : history) {
      REQUIRE(p["scores"].size() == 2);
      for (const json& layer : p["scores"]) {
        REQUIRE(layer.size() == 4);
        for (const json& v : layer) CHECK((v.get<double>() >= 0 && v.get<double>() <= 1));
      }
    }
    CHECK(run["steps_per_second"].get<double>() > 0);
    CHECK(any_text(w.layout, "steps/s"));
    CHECK(w.layout["untranslated"].empty());
  }

  TEST_CASE("training window: Step steps once, Pause stops between steps, Reset clears the runs") {
    const WindowRun steps = run_window("training_step", small + ",steps=50 --train-actions step,step,step");
    REQUIRE(steps.layout["training"]["runs"].size() == 1);
    CHECK(steps.layout["training"]["runs"][0]["state"] == "paused");
    CHECK(steps.layout["training"]["runs"][0]["losses"].size() == 3);
    CHECK(steps.layout["training"]["heads_step"] == 3);

    const WindowRun paused = run_window("training_pause", small + ",steps=100000 --train-actions start,pause");
    const json& run = paused.layout["training"]["runs"][0];
    CHECK(run["state"] == "paused");
    CHECK(run["step"].get<int>() < 100000);
    CHECK(run["losses"].size() == run["step"].get<size_t>());

    const WindowRun reset = run_window("training_reset", small + ",steps=50 --train-actions step,step,reset");
    CHECK(reset.layout["training"]["runs"].empty());
    CHECK(reset.layout["training"]["error"] == "");
  }

  TEST_CASE("training window: Compare trains MHA, GQA and MQA on the same data with their KV bytes per token") {
    const WindowRun w = run_window("training_compare", small + ",heads=4,groups=2,steps=10 --train-actions compare");
    const json& t = w.layout["training"];
    CHECK(t["comparing"] == true);
    REQUIRE(t["runs"].size() == 3);
    const int groups[] = {4, 2, 1};
    for (size_t i = 0; i < 3; ++i) {
      const json& run = t["runs"][i];
      CAPTURE(i);
      CHECK(run["groups"] == groups[i]);
      CHECK(run["state"] == "finished");
      CHECK(run["losses"].size() == 10);
      // 2 (K and V) · L · G · d_head · 4 bytes, d_head = 32 / 4
      CHECK(run["kv_cache_bytes_per_token"] == 2 * 2 * groups[i] * 8 * 4);
    }
    // Same seed and data: the first loss (before any update) differs only through the initial K/V widths,
    // and every curve is the one training that variant here gives.
    train::TrainSettings s = small_settings(10);
    const std::vector<train::TrainSettings> variants = train::group_variants(s);
    for (size_t i = 0; i < 3; ++i) {
      train::Trainer trainer(variants[i]);
      CHECK(t["runs"][i]["losses"][0].get<float>() == trainer.step());
    }
    CHECK(any_text(w.layout, "d_head"));
    CHECK(any_text(w.layout, "MQA (G = 1)"));
  }

  TEST_CASE("training window: Save writes a checkpoint that model::open reads to the same logits") {
    const fs::path dir = attnscope::test::test_tmp() / "gui" / "training_ckpt";
    fs::remove_all(dir);
    const WindowRun w = run_window("training_save", small + ",steps=8 --train-actions start,save:" + dir.string());
    const json& run = w.layout["training"]["runs"][0];
    CHECK(run["save_ok"] == true);
    CHECK(any_text(w.layout, "model.safetensors"));
    train::Trainer trainer(small_settings(8));
    while (!trainer.finished()) trainer.step();
    const std::vector<int32_t> ids = trainer.task().probe();
    const int T = int(ids.size()), V = trainer.model().config().vocab_size;
    train::Activations a = trainer.model().make_activations(1, T);
    trainer.model().forward(a, ids.data(), nullptr);
    const model::ForwardResult r = model::forward(*model::open(dir), ids);
    const Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> trained(a.logits, T, V);
    check_close(r.logits, trained, 1e-4, "logits of the checkpoint the window saved");
  }

  TEST_CASE("training window: with three runs on screen no text is cut, EN and ZH, 1280x720 to 1920x1080") {
    // As gui_layout checks every window: a text may only pass an edge its window (or the window its
    // child sits in) can scroll past.
    for (const std::string language : {"en", "zh"})
      for (const std::string size : {"1280x720", "1600x900", "1920x1080"}) {
        CAPTURE(language);
        CAPTURE(size);
        const WindowRun w = run_window("training_layout", small + ",steps=5 --train-actions compare --language " + language +
                                                              " --size " + size);
        REQUIRE(w.layout["training"]["runs"].size() == 3);
        int texts = 0;
        for (const json& t : w.layout["texts"]) {
          if (t["window"].get<std::string>().find("###training") == std::string::npos) continue;
          ++texts;
          const json& c = t["clip"];
          const double x = t["x"], y = t["y"], tw = t["w"], th = t["h"];
          const double cx = c["x"], cy = c["y"], cw = c["w"], ch = c["h"];
          const bool cut_x = x < cx - 1 || x + tw > cx + cw + 1, cut_y = y < cy - 1 || y + th > cy + ch + 1;
          INFO("text '" << t["text"].get<std::string>() << "' at " << x << ", " << y);
          CHECK_FALSE((cut_x && !t["scroll_x"].get<bool>()));
          CHECK_FALSE((cut_y && !t["scroll_y"].get<bool>()));
        }
        CHECK(texts > 50);
        CHECK(w.layout["untranslated"].empty());
      }
  }

  TEST_CASE("training window: the text task trains on a UTF-8 file, Chinese included") {
    const fs::path text = attnscope::test::test_tmp() / "gui" / "training_poem.txt";
    fs::create_directories(text.parent_path());
    std::string poem;
    for (int i = 0; i < 8; ++i) poem += "床前明月光，疑是地上霜。举头望明月，低头思故乡。The moon is bright tonight.\n";
    write_file_atomic(text, poem);
    const WindowRun w = run_window("training_text", small + ",task=text,text=" + text.string() + ",steps=3 --train-actions start");
    REQUIRE(w.layout["training"]["runs"].size() == 1);
    const json& run = w.layout["training"]["runs"][0];
    CHECK(run["state"] == "finished");
    CHECK(run["losses"].size() == 3);
    CHECK(run["probe_tokens"][0] == "床");  // the probe is the text's first T characters
  }

  TEST_CASE("training window: bad settings are named on screen and nothing starts, in both languages") {
    struct Bad {
      std::string settings, message, on_screen;  // on_screen: a part short enough not to be wrapped
    };
    const Bad bad[] = {{"groups=3", "groups (3) must divide heads (4)", "groups (3)"},
                       {"d_model=30", "30", "30"},
                       {"lr=nan", "learning rate must be a number above 0", "learning rate"},
                       {"steps=0", "steps must be 1", "steps"},
                       {"task=text", "needs a text file", "text"},
                       {"task=text,text=/nonexistent/poem.txt", "/nonexistent/poem.txt", "poem.txt"}};
    for (const Bad& b : bad)
      for (const std::string language : {"en", "zh"}) {
        CAPTURE(b.settings);
        CAPTURE(language);
        const WindowRun w =
            run_window("training_bad", small + "," + b.settings + " --language " + language + " --train-actions start");
        const json& t = w.layout["training"];
        CHECK(t["runs"].empty());
        CHECK(t["error"].get<std::string>().find(b.message) != std::string::npos);
        CHECK(any_text(w.layout, b.on_screen));
        CHECK(w.layout["untranslated"].empty());
      }
    // A key the window does not have is a usage error of the command line.
    const CliRun run = run_app("", "--show-training --train-settings colour=red --screenshot " +
                                     shell_quote((test_tmp() / "training_bad_key.png").string()));
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("unknown training setting 'colour'") != std::string::npos);
  }

  TEST_CASE("training window: the task combo shows the task in the window's language; the ids stay the engine's") {
    struct Case {
      std::string task, english, chinese;
    };
    for (const Case& c : {Case{"induction", "induction", "归纳"}, Case{"sort", "sort", "排序"}}) {
      CAPTURE(c.task);
      const WindowRun en = run_window("training_task_en_" + c.task, small + ",task=" + c.task + " --language en");
      bool shown = false;  // the combo's preview, exactly
      for (const json& t : en.layout["texts"]) shown = shown || t["text"].get<std::string>() == c.english;
      CHECK(shown);
      const WindowRun zh = run_window("training_task_zh_" + c.task, small + ",task=" + c.task + " --language zh");
      CHECK(any_text(zh.layout, c.chinese));
      CHECK(zh.layout["untranslated"].empty());
    }
  }
}

}  // namespace attnscope::test
