// The Training window in scripted runs (--show-training --train-settings … --train-actions …): the loss
// curve holds one point per step, the probe heads refresh as it trains and are drawn as textures, the
// induction scores are recorded per head over time, Step / Pause / Reset do what they say, Compare
// trains MHA, GQA, MQA and MLA (and a windowed GQA) with their KV bytes per token, Save writes a checkpoint that model::open
// reads back to the logits of the same training done here, and bad settings are named on screen.
// Small models and few steps, one thread: fast and deterministic.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <set>
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

// warmup=50: `train`'s default, which small_settings() trains with (the window's own default is 300).
const std::string small = "--show-training --train-settings d_model=32,seq_len=16,batch=4,lr=0.003,warmup=50,threads=1,snapshot_every=5";

bool any_text(const json& layout, const std::string& part) {
  for (const json& t : layout["texts"])
    if (t["text"].get<std::string>().find(part) != std::string::npos) return true;
  return false;
}

// "X,Y" of the middle of a recorded widget, for --pointer.
std::string middle_of(const json& layout, const std::string& widget) {
  REQUIRE_MESSAGE(layout.at("widgets").contains(widget), widget);
  const json& r = layout["widgets"][widget];
  return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() / 2)) + "," +
         std::to_string(int(r["y"].get<double>() + r["h"].get<double>() / 2));
}

// The Training window's rectangle in the layout record.
json training_window(const json& layout) {
  for (const json& w : layout.at("windows"))
    if (w["title"].get<std::string>().find("###training") != std::string::npos) return w;
  FAIL("no Training window in the layout record");
  return {};
}

bool inside(const json& r, const json& window) {
  return r["x"].get<double>() >= window["x"].get<double>() - 0.5 && r["y"].get<double>() >= window["y"].get<double>() - 0.5 &&
         r["x"].get<double>() + r["w"].get<double>() <= window["x"].get<double>() + window["w"].get<double>() + 0.5 &&
         r["y"].get<double>() + r["h"].get<double>() <= window["y"].get<double>() + window["h"].get<double>() + 0.5;
}

bool overlap(const json& a, const json& b) {
  return a["x"].get<double>() < b["x"].get<double>() + b["w"].get<double>() &&
         b["x"].get<double>() < a["x"].get<double>() + a["w"].get<double>() &&
         a["y"].get<double>() < b["y"].get<double>() + b["h"].get<double>() &&
         b["y"].get<double>() < a["y"].get<double>() + a["h"].get<double>();
}

// Checks that no text of the Training window passes an edge of its clip rectangle that cannot be scrolled
// past (as gui_layout checks every window); returns how many texts it checked.
int training_texts_uncut(const WindowRun& w) {
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
  return texts;
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

  TEST_CASE("training window: Compare trains MHA, GQA, MQA and MLA on the same data with their KV bytes per token") {
    const WindowRun w = run_window("training_compare", small + ",heads=4,groups=2,steps=10 --train-actions compare");
    const json& t = w.layout["training"];
    CHECK(t["comparing"] == true);
    REQUIRE(t["runs"].size() == 4);  // the button gave four runs, no window set
    const int groups[] = {4, 2, 1, 4};  // MLA: every head its own keys (G = H), made from one latent
    // grouped: 2 (K and V) · L · G · d_head · 4 bytes, d_head = 32 / 4; MLA: L · (r_kv + d_rope) · 4 = 2 · (16 + 8) · 4
    const int64_t bytes[] = {2 * 2 * 4 * 8 * 4, 2 * 2 * 2 * 8 * 4, 2 * 2 * 1 * 8 * 4, 2 * (16 + 8) * 4};
    for (size_t i = 0; i < 4; ++i) {
      const json& run = t["runs"][i];
      CAPTURE(i);
      CHECK(run["groups"] == groups[i]);
      CHECK(run["mla"] == (i == 3));
      CHECK(run["state"] == "finished");
      CHECK(run["losses"].size() == 10);
      CHECK(run["kv_cache_bytes_per_token"] == bytes[i]);
      CHECK(run["kv_cache_bytes_per_token_at_T"].get<double>() == doctest::Approx(double(bytes[i])));
    }
    // Same seed and data: every curve is the one training that variant here gives.
    train::TrainSettings s = small_settings(10);
    const std::vector<train::TrainSettings> variants = train::attention_variants(s, false);
    REQUIRE(variants.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      train::Trainer trainer(variants[i]);
      CHECK(t["runs"][i]["losses"][0].get<float>() == trainer.step());
    }
    CHECK(any_text(w.layout, "MQA (G = 1)"));
    CHECK(any_text(w.layout, "MLA (r_kv = 16, d_rope = 8)"));
    CHECK(any_text(w.layout, "KV cache 192 B per token"));
    CHECK(any_text(w.layout, "Loss against KV cache"));
    REQUIRE(w.layout["widgets"].contains("training.loss_vs_cache"));
    CHECK(inside(w.layout["widgets"]["training.loss_vs_cache"], training_window(w.layout)));
  }

  TEST_CASE("training window: a click on the Compare button starts four runs: MHA, GQA, MQA and MLA") {
    const WindowRun first = run_window("training_compare_click_place", small + ",steps=6");
    const std::string compare = middle_of(first.layout, "training.compare");
    const WindowRun w = run_window("training_compare_click",
                                   small + ",steps=6 --pointer '" + compare + "' --clicks 4 --frames 40");
    const json& runs = w.layout["training"]["runs"];
    REQUIRE(runs.size() == 4);
    const char* labels[] = {"MHA (G = 4)", "GQA (G = 2)", "MQA (G = 1)", "MLA (r_kv = 16, d_rope = 8)"};
    for (size_t i = 0; i < 4; ++i) CHECK(runs[i]["label"] == labels[i]);
    CHECK(runs[3]["mla"] == true);
    CHECK(w.layout["training"]["comparing"] == true);
  }

  TEST_CASE("training window: with a window set, Compare adds a fifth run, GQA with the window, and counts its cache") {
    const WindowRun w = run_window("training_compare_window",
                                   small + ",heads=4,groups=2,steps=5,window=4,window_pattern=local/global "
                                           "--train-actions compare");
    const json& t = w.layout["training"];
    REQUIRE(t["runs"].size() == 5);
    const json& run = t["runs"][4];
    CHECK(run["groups"] == 2);
    CHECK(run["state"] == "finished");
    // layer 0 keeps 4 of the 16 tokens, layer 1 all of them: 2 · 2 · 8 · 4 · (4/16 + 1)
    CHECK(run["kv_cache_bytes_per_token_at_T"].get<double>() == doctest::Approx(2.0 * 2 * 8 * 4 * (4.0 / 16 + 1)));
    CHECK(run["kv_cache_bytes_per_token"] == 2 * 2 * 2 * 8 * 4);
    CHECK(any_text(w.layout, "GQA (G = 2), window 4 on local,global"));
  }

  TEST_CASE("training window: Compare without a softmax trains MHA, linear, retention, Mamba-2, Gated DeltaNet and a "
            "hybrid; memory per token") {
    const WindowRun w = run_window("training_compare_no_softmax",
                                   small + ",heads=4,groups=2,steps=10 --train-actions compare-no-softmax");
    const json& t = w.layout["training"];
    CHECK(t["comparing"] == true);
    REQUIRE(t["runs"].size() == 6);
    const char* kinds[] = {"grouped", "linear", "retention", "mamba2", "gated-deltanet", "gated-deltanet"};
    // MHA: 2 (K and V) · L 2 · H 4 · d_head 8 · 4 bytes per token; the others their state ÷ T 16:
    // L 2 · H 4 · 8·8 floats (linear attention + its normaliser of 8 per head) · 4 bytes; the hybrid one
    // layer of each: half MHA's cache plus half Gated DeltaNet's state ÷ T
    const double memory[] = {2 * 2 * 4 * 8 * 4, 2 * 4 * (64 + 8) * 4 / 16.0, 2 * 4 * 64 * 4 / 16.0,
                             2 * 4 * 64 * 4 / 16.0, 2 * 4 * 64 * 4 / 16.0, 2 * 4 * 8 * 4 + 4 * 64 * 4 / 16.0};
    train::TrainSettings s = small_settings(10);
    s.model.groups = 2;  // the form's G: MHA's run takes G = H whatever it says
    const std::vector<train::TrainSettings> variants = train::no_softmax_variants(s);
    REQUIRE(variants.size() == 6);
    CHECK(t["runs"][5]["layer_kinds"] == "gated-deltanet,grouped");
    CHECK(t["runs"][4]["layer_kinds"] == "");
    for (size_t i = 0; i < 6; ++i) {
      const json& run = t["runs"][i];
      CAPTURE(i);
      CHECK(run["attention"] == kinds[i]);
      CHECK(run["groups"] == 4);
      CHECK(run["state"] == "finished");
      REQUIRE(run["losses"].size() == 10);
      CHECK(run["memory_bytes_per_token_at_T"].get<double>() == doctest::Approx(memory[i]));
      // everything else equal: each curve is the one training that kind alone gives, same seed and data
      train::Trainer trainer(variants[i]);
      for (int k = 0; k < 10; ++k) CHECK(run["losses"][size_t(k)].get<float>() == trainer.step());
    }
    CHECK(any_text(w.layout, "MHA (G = 4)"));
    CHECK(any_text(w.layout, "Gated DeltaNet (state 2.00 KiB)"));
    CHECK(any_text(w.layout, "Gated DeltaNet + softmax (softmax in layer 1, state 1.00 KiB)"));
    CHECK(any_text(w.layout, "KV cache + state ÷ T: 320 B"));  // 256 B + 1 KiB ÷ 16 (the line may wrap after it)
    CHECK(any_text(w.layout, "state ÷ T: 144 B per token"));  // linear attention: 2304 B ÷ 16
    CHECK(any_text(w.layout, "Loss against memory"));
    CHECK(any_text(w.layout, "KV or state ÷ T per token"));
    CHECK(any_text(w.layout, "M ÷ max|M|"));  // the signed runs' shared bar beside the probability one
    REQUIRE(w.layout["widgets"].contains("training.loss_vs_cache"));
    CHECK(inside(w.layout["widgets"]["training.loss_vs_cache"], training_window(w.layout)));
    CHECK(w.layout["untranslated"].empty());
  }

  TEST_CASE("training window: with the six runs of Compare without a softmax no text is cut, EN and ZH, 1280x720 and 1920x1080") {
    for (const std::string language : {"en", "zh"})
      for (const std::string size : {"1280x720", "1920x1080"}) {
        CAPTURE(language);
        CAPTURE(size);
        const WindowRun w = run_window("training_layout_no_softmax_" + language + "_" + size,
                                       small + ",steps=5 --train-actions compare-no-softmax --language " + language +
                                           " --size " + size);
        REQUIRE(w.layout["training"]["runs"].size() == 6);
        CHECK(training_texts_uncut(w) > 50);
        // every band of heads and the plots inside the window, none over another
        const json window = training_window(w.layout);
        std::vector<std::string> parts = {"training.loss", "training.loss_vs_cache", "training.induction"};
        for (int i = 0; i < 6; ++i) parts.push_back("training.heads." + std::to_string(i));
        for (size_t a = 0; a < parts.size(); ++a) {
          REQUIRE_MESSAGE(w.layout["widgets"].contains(parts[a]), parts[a]);
          CHECK_MESSAGE(inside(w.layout["widgets"][parts[a]], window), parts[a]);
          for (size_t b = a + 1; b < parts.size(); ++b) {
            const std::string pair = parts[a] + " / " + parts[b];
            CHECK_MESSAGE(!overlap(w.layout["widgets"][parts[a]], w.layout["widgets"][parts[b]]), pair);
          }
        }
        CHECK(w.layout["untranslated"].empty());
      }
  }

  TEST_CASE("training window through the X server: a real click on Compare without a softmax trains the five kinds and "
            "the hybrid") {
    const std::string base = small + ",steps=6 --size 1280x720";
    const auto dir = test_tmp() / "training_no_softmax_click";
    fs::remove_all(dir);
    fs::create_directories(dir);
    // a real click where the window drew the button, then a wait until the five runs have all finished
    const json shown = drive_window(
        dir, base + " --layout-live",
        "click_on training.compare_no_softmax\n"
        "await '\"attention\": \"gated-deltanet\"'\n"
        "n=0; until [ \"$(grep -o '\"state\": \"finished\"' " + shell_quote((dir / "layout.json").string()) +
            " | wc -l)\" -ge 6 ]; do n=$((n+1)); [ $n -ge 300 ] && break; sleep 0.2; done\n");
    CHECK(shown.at("error") == "");
    const json& runs = shown.at("training").at("runs");
    REQUIRE(runs.size() == 6);
    const char* labels[] = {"MHA (G = 4)", "linear attention (state 2.25 KiB)", "retention (state 2.00 KiB)",
                            "Mamba-2 (state 2.00 KiB)", "Gated DeltaNet (state 2.00 KiB)",
                            "Gated DeltaNet + softmax (softmax in layer 1, state 1.00 KiB)"};
    for (size_t i = 0; i < 6; ++i) CHECK(runs[i]["label"] == labels[i]);
    CHECK(shown.at("training").at("comparing") == true);
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

  TEST_CASE("training window: Save with a blank folder saves nothing and the run stays idle (no endless training)") {
    // A path of spaces is no folder: nothing is asked of the worker, which used to take the pending save
    // for a step and train on past its last step forever (the scripted run then never finished).
    const WindowRun w = run_window("training_save_blank", small + ",steps=8 --train-actions step,save:" + shell_quote("   "));
    const json& run = w.layout["training"]["runs"][0];
    CHECK(run["step"].get<int>() == 1);
    CHECK_FALSE(any_text(w.layout, "model.safetensors"));
  }

  TEST_CASE("training window: with four runs on screen no text is cut, EN and ZH, 1280x720 to 1920x1080") {
    // As gui_layout checks every window: a text may only pass an edge its window (or the window its
    // child sits in) can scroll past.
    for (const std::string language : {"en", "zh"})
      for (const std::string size : {"1280x720", "1600x900", "1920x1080"}) {
        CAPTURE(language);
        CAPTURE(size);
        const WindowRun w = run_window("training_layout", small + ",steps=5 --train-actions compare --language " + language +
                                                              " --size " + size);
        REQUIRE(w.layout["training"]["runs"].size() == 4);
        CHECK(training_texts_uncut(w) > 50);
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
    for (const Case& c : {Case{"induction", "induction", "归纳"}, Case{"sort", "sort", "排序"},
                         Case{"recall", "recall", "联想回忆"}}) {
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

  TEST_CASE("training window: Reset after Step, after a finished Start and after Compare clears the runs, no crash") {
    // The buttons as a user presses them: each click lands on the button's place in the record of a
    // first run (the buttons stay put whatever the window shows under them). Before the fix, Reset
    // pressed while a run existed read the emptied list of runs in the same frame (SIGSEGV).
    const WindowRun first = run_window("training_reset_places", small + ",steps=20");
    const std::string step = middle_of(first.layout, "training.step"), reset = middle_of(first.layout, "training.reset"),
                      start = middle_of(first.layout, "training.start"), compare = middle_of(first.layout, "training.compare");
    struct Case {
      std::string name, pointer, clicks;
    };
    for (const Case& c : {Case{"step", step + ";" + reset, "4,12"}, Case{"start", start + ";" + reset, "4,40"},
                          Case{"compare", compare + ";" + reset, "4,40"}}) {
      CAPTURE(c.name);
      const WindowRun w = run_window("training_reset_click_" + c.name,
                                     small + ",steps=20 --pointer '" + c.pointer + "' --clicks " + c.clicks + " --frames 48");
      const json& t = w.layout["training"];
      CHECK(t["shown"] == true);
      CHECK(t["runs"].empty());
      CHECK(t["heads_textures"] == 0);
      CHECK(any_text(w.layout, "Start trains one model"));  // the window is back to its first state
    }
    // Reset, then Step again: a fresh run of one step.
    const WindowRun again = run_window("training_reset_click_again", small + ",steps=20 --pointer '" + step + ";" + reset +
                                                                      ";" + step + "' --clicks 4,12,20 --frames 30");
    REQUIRE(again.layout["training"]["runs"].size() == 1);
    CHECK(again.layout["training"]["runs"][0]["losses"].size() == 1);

    // The scripted actions go through the same code as the buttons.
    for (const std::string actions : {"step,reset", "start,reset", "compare,reset", "compare,show:2,reset,step"}) {
      CAPTURE(actions);
      const WindowRun w = run_window("training_reset_actions", small + ",steps=10 --train-actions " + actions);
      const json& t = w.layout["training"];
      CHECK(t["runs"].size() == (actions.back() == 'p' ? 1u : 0u));
      CHECK(t["shown_run"] == 0);
    }
  }

  TEST_CASE("training window: the loss curve, the chosen layer's heads and its induction score show together") {
    // At 1280x720 and 1920x1080, English and Chinese, one run and a comparison: the three rectangles
    // lie inside the Training window, which has nothing to scroll, and do not overlap one another.
    for (const std::string size : {"1280x720", "1920x1080"})
      for (const std::string language : {"en", "zh"})
        for (const std::string action : {"start", "compare"}) {
          CAPTURE(size);
          CAPTURE(language);
          CAPTURE(action);
          const WindowRun w = run_window("training_together", small + ",steps=10 --train-actions " + action + " --size " +
                                                                  size + " --language " + language);
          const json window = training_window(w.layout);
          CHECK_FALSE(window["scroll_y"].get<bool>());
          const json& widgets = w.layout["widgets"];
          for (const char* name : {"training.loss", "training.heads", "training.induction"}) {
            CAPTURE(name);
            REQUIRE(widgets.contains(name));
            CHECK(inside(widgets[name], window));
            CHECK(widgets[name]["w"].get<double>() > 100);
            CHECK(widgets[name]["h"].get<double>() > 60);
          }
          CHECK_FALSE(overlap(widgets["training.loss"], widgets["training.heads"]));
          CHECK_FALSE(overlap(widgets["training.induction"], widgets["training.heads"]));
          CHECK_FALSE(overlap(widgets["training.loss"], widgets["training.induction"]));
          // A comparison: each run's heads in a band of its own, under the run's name.
          const int runs = action == "compare" ? 4 : 1;
          for (int i = 0; i < runs; ++i) {
            const std::string band = "training.heads." + std::to_string(i);
            REQUIRE(widgets.contains(band));
            CHECK(inside(widgets[band], window));
            if (i > 0) CHECK_FALSE(overlap(widgets[band], widgets["training.heads." + std::to_string(i - 1)]));
          }
          if (action == "compare") {  // the loss-against-cache dots between the curves and the induction scores
            REQUIRE(widgets.contains("training.loss_vs_cache"));
            CHECK(inside(widgets["training.loss_vs_cache"], window));
            CHECK(widgets["training.loss_vs_cache"]["h"].get<double>() > 60);
            for (const char* name : {"training.loss", "training.induction", "training.heads"})
              CHECK_FALSE(overlap(widgets["training.loss_vs_cache"], widgets[name]));
          }
          if (language == "en" && action == "compare")
            for (const char* name : {"MHA (G = 4) · step 10", "GQA (G = 2) · step 10", "MQA (G = 1) · step 10",
                                     "MLA (r_kv = 16, d_rope = 8): finished · step 10 / 10"})
              CHECK(any_text(w.layout, name));
          CHECK(w.layout["untranslated"].empty());
        }
  }

  TEST_CASE("training window: layers are counted from 0, as in the Heads view, lesson 6 and lesson 7") {
    // A 2-layer model: the induction heads form in layer 1, which the window shows first; no "layer 2".
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(language);
      const WindowRun w = run_window("training_numbering", small + ",steps=5 --train-actions start --language " + language);
      CHECK(w.layout["training"]["layer"] == 1);
      const std::vector<std::string> texts = texts_of(w, "###training");
      INFO(joined(texts));
      auto has = [&](const std::string& part) {
        return std::any_of(texts.begin(), texts.end(), [&](const std::string& t) { return t.find(part) != std::string::npos; });
      };
      if (language == "en") {
        CHECK(has("Heads of layer 1 on the probe sequence"));
        CHECK(has("Induction score of layer 1, per head"));
        CHECK_FALSE(has("layer 2"));
        CHECK_FALSE(has("Layer 2"));
      } else {
        CHECK(has("第 1 层的各头"));
        CHECK(has("第 1 层各头的归纳分数"));
        CHECK_FALSE(has("第 2 层"));
      }
      // Heads and groups from 0 too: h0 · G0 is the first caption.
      CHECK(has(language == "en" ? "h0 · G0" : "头0 · 组0"));
    }
    // The layer slider picks layer 0 (a click at its left end).
    const WindowRun first = run_window("training_numbering_places", small + ",steps=5 --train-actions start");
    const json& slider = first.layout["widgets"].at("training.layer");
    const std::string left = std::to_string(int(slider["x"].get<double>() + 3)) + "," +
                             std::to_string(int(slider["y"].get<double>() + slider["h"].get<double>() / 2));
    const WindowRun zero = run_window("training_numbering_layer0",
                                      small + ",steps=5 --train-actions start --pointer " + left + " --clicks 20 --frames 30");
    CHECK(zero.layout["training"]["layer"] == 0);
    CHECK(any_text(zero.layout, "Heads of layer 0 on the probe sequence"));
  }

  TEST_CASE("training window: every head caption of a comparison names its layer and head, in one format, and the runs' names in the cache plot stay apart") {
    // 1280×720, four runs of 4 heads side by side (five with a window): the tiles are small, and Chinese
    // captions once fell to "头0", later to "层1·…". Every form names the layer and the head (the
    // narrowest in the Latin "L1 h0" of papers), and all tiles show the same form.
    for (const int runs : {4, 5})
    for (const std::string language : {"en", "zh"}) {
      CAPTURE(runs);
      CAPTURE(language);
      const WindowRun w = run_window("training_captions_" + language + std::to_string(runs),
                                     small + ",heads=4,groups=2,steps=5" + (runs == 5 ? ",window=4" : "") +
                                         " --size 1280x720 --train-actions compare --language " + language);
      REQUIRE(w.layout["training"]["runs"].size() == size_t(runs));
      const int layer = w.layout["training"]["layer"];
      // groups: 1 or 2 the layer, 3 the head
      const std::regex caption(language == "en" ? "^L([0-9]+) h()([0-9]+)( · .*)?$"
                                                : "^(?:层([0-9]+)(?:·| )头|L([0-9]+) h)([0-9]+)( · .*)?$");
      std::vector<std::string> captions;
      std::set<std::string> formats;
      for (const std::string& t : texts_of(w, "###training")) {
        std::smatch m;
        if (!std::regex_match(t, m, caption)) continue;
        captions.push_back(t);
        CHECK(std::stoi(m[1].length() ? m[1].str() : m[2].str()) == layer);
        CHECK(std::stoi(m[3].str()) < 4);
        formats.insert(std::regex_replace(t, std::regex("[0-9]+"), "#"));
      }
      INFO(joined(texts_of(w, "###training")));
      CHECK(captions.size() == size_t(4 * runs));
      CHECK(formats.size() == 1);
      // The runs end at nearly the same loss: their names in the loss-against-cache plot (the only texts
      // inside its frame) must not cover one another.
      const json& plot = w.layout["widgets"].at("training.loss_vs_cache");
      std::vector<json> names;
      for (const json& t : w.layout["texts"])
        if (inside(t, plot)) names.push_back(t);
      CHECK(names.size() == size_t(runs));
      for (size_t a = 0; a < names.size(); ++a)
        for (size_t b = a + 1; b < names.size(); ++b) {
          CAPTURE(names[a]["text"].get<std::string>());
          CAPTURE(names[b]["text"].get<std::string>());
          CHECK_FALSE(overlap(names[a], names[b]));
        }
    }
  }

  TEST_CASE("training window: the speed control reaches the runs and shows its value") {
    const WindowRun w = run_window("training_speed", small + ",steps=5,speed=25 --train-actions start");
    CHECK(w.layout["training"]["speed"] == 25);
    CHECK(w.layout["training"]["runs"][0]["state"] == "finished");
    const json& slider = w.layout["widgets"].at("training.speed");
    bool shown = false;  // the slider's value, inside the slider
    for (const json& t : w.layout["texts"])
      shown = shown || (t["text"] == "25" && inside(t, slider));
    CHECK(shown);
    const WindowRun none = run_window("training_speed_none", small + ",steps=5 --language zh");
    CHECK(any_text(none.layout, "不限速"));
  }

  // issue 40: the Training window's "heads H" sat beside the Model window's "heads H", which is another
  // model's. The trained model's field says so, in both languages.
  TEST_CASE("training window: its heads field is named for the trained model, not the Model window's heads H") {
    for (const bool zh : {false, true}) {
      CAPTURE(zh);
      const WindowRun w = run_window(zh ? "training_heads_name_zh" : "training_heads_name",
                                     std::string("--size 1280x720 --show-training --language ") + (zh ? "zh" : "en"));
      const std::vector<std::string> training = texts_of(w, "###training"), model = texts_of(w, "###model");
      INFO(joined(training));
      const std::string models = zh ? "头数 H" : "heads H";
      CHECK(std::find(model.begin(), model.end(), models) != model.end());        // the Model window's field
      CHECK(std::find(training.begin(), training.end(), models) == training.end());  // not named alike here
      CHECK(shows(training, zh ? "训练模型的头数 H" : "trained heads H"));
    }
  }

  // issue 40: ImGui's MarkItemEdited assertion (imgui.cpp:3248 'g.ActiveId == id || g.ActiveId == 0 ||
  // g.DragDropActive') aborted the window. The seed field took its typed text in the frame the sentence
  // box (drawn earlier in the frame, in the Input window) had become the active item. Debian's libimgui
  // keeps its assert() on, so this build aborts as the sanitized one did. Real input through the X server,
  // the smallest sequence the monkey found: click the seed field, type 16, press and drag in the sentence box.
  TEST_CASE("training window: typing a seed and then dragging in the sentence box takes the seed, no ImGui assertion") {
    const std::string base = "--size 1280x720 --show-training";
    const WindowRun first = run_window("training_seed_drag_first", base);
    REQUIRE(first.layout.at("widgets").contains("training.seed"));
    REQUIRE(first.layout.at("widgets").contains("input.sentence"));
    REQUIRE(first.layout.at("training").at("form").at("seed") != 16);
    auto at = [](const json& r, double fx, double fy) {
      return std::to_string(int(r["x"].get<double>() + r["w"].get<double>() * fx)) + " " +
             std::to_string(int(r["y"].get<double>() + r["h"].get<double>() * fy));
    };
    const json& seed = first.layout["widgets"]["training.seed"];
    const json& sentence = first.layout["widgets"]["input.sentence"];
    // The field's box is its left part (its label is on its right).
    const std::string events = "xdotool mousemove --window $wid " + at(seed, 0.2, 0.5) +
                               "\nsleep 0.3\nxdotool click 1\nsleep 0.5\nxdotool type --delay 80 16\nsleep 0.5\n"
                               "xdotool mousemove --window $wid " + at(sentence, 0.3, 0.3) +
                               "\nsleep 0.3\nxdotool mousedown 1\nsleep 0.3\n"
                               "xdotool mousemove --window $wid " + at(sentence, 0.6, 0.4) + "\nsleep 0.3\n"
                               "xdotool mousemove --window $wid " + at(sentence, 0.8, 0.5) + "\nsleep 0.3\n"
                               "xdotool mouseup 1\nsleep 1\n";
    const auto dir = test_tmp() / "training_seed_drag";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const json shown = drive_window(dir, base, events);  // exits 0: no assertion, no crash
    CHECK(shown.at("error") == "");
    CHECK(shown.at("training").at("form").at("seed") == 16);  // the typed seed was taken
  }

  TEST_CASE("training window: each kind without a softmax trains from the form and draws its signed M") {
    // The same kinds and words as `attnscope train --attention` (one engine table); every head its own state.
    const std::pair<const char*, const char*> kinds[] = {{"linear", "linear attention"}, {"retention", "retention"},
                                                         {"mamba2", "Mamba-2"}, {"deltanet", "DeltaNet"},
                                                         {"gated-deltanet", "Gated DeltaNet"}};
    for (const auto& [word, title] : kinds) {
      CAPTURE(word);
      const WindowRun w = run_window(std::string("training_kind_") + word,
                                     small + ",steps=6,attention=" + word + " --train-actions start");
      const json& t = w.layout["training"];
      CHECK(t["error"] == "");
      CHECK(t["form"]["attention"] == word);
      REQUIRE(t["runs"].size() == 1);
      const json& run = t["runs"][0];
      CHECK(run["state"] == "finished");
      CHECK(run["attention"] == word);
      CHECK(run["groups"] == 4);  // G = H: the form's kv heads G (2) is not read
      // L 2 · H 4 · d 8·8 floats (linear attention: + its normaliser of 8 per head)
      const std::string state = std::string(word) == "linear" ? "2.25 KiB" : "2.00 KiB";
      CHECK(run["label"] == std::string(title) + " (state " + state + ")");
      // signed: the colour range symmetric about 0, on the diverging colormap's bar
      CHECK(run["probe_range"][0].get<double>() < 0);
      CHECK(run["probe_range"][0].get<double>() == -run["probe_range"][1].get<double>());
      CHECK(any_text(w.layout, "M, signed (no softmax)"));
      CHECK(t["heads_textures"] == 2 * 4);
      // the curve is this kind's training here, bit for bit (one thread)
      train::TrainSettings s = small_settings(6);
      s.model.attention = train::parse_attention_kind(word), s.model.groups = s.model.heads;
      train::Trainer trainer(s);
      REQUIRE(run["losses"].size() == 6);
      for (int i = 0; i < 6; ++i) CHECK(run["losses"][size_t(i)].get<float>() == trainer.step());
      CHECK(w.layout["untranslated"].empty());
    }
    // A word the engine does not know is refused, naming every kind.
    const CliRun bad = run_app("", "--show-training --train-settings attention=softmax --screenshot " +
                                     shell_quote((test_tmp() / "training_bad_kind.png").string()));
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("must be one of grouped | mla | linear | retention | mamba2 | deltanet | gated-deltanet, got "
                       "'softmax'") != std::string::npos);
  }

  TEST_CASE("training window through the X server: a real click on the attention combo picks Mamba-2; Start trains it") {
    const std::string base = small + ",steps=8 --size 1280x720";
    // Where the open combo lists the kinds: a scripted click on it, as the real one below.
    const WindowRun first = run_window("training_kind_place", base);
    const std::string combo = middle_of(first.layout, "training.attention");
    const WindowRun open = run_window("training_kind_open", base + " --pointer '" + combo + "' --clicks 4 --frames 10");
    for (const char* word : {"grouped", "mla", "linear", "retention", "mamba2", "deltanet", "gated-deltanet"})
      CHECK(open.layout["widgets"].contains(std::string("training.attention.") + word));
    auto xy = [](const std::string& comma) { return comma.substr(0, comma.find(',')) + " " + comma.substr(comma.find(',') + 1); };
    const std::string item = middle_of(open.layout, "training.attention.mamba2");
    const std::string start = middle_of(first.layout, "training.start");
    const auto dir = test_tmp() / "training_kind_click";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const json shown = drive_window(
        dir, base + " --layout-live",
        "xdotool mousemove --window $wid " + xy(combo) + "\nsleep 0.3\nxdotool click 1\n"
        "await '\"training.attention.mamba2\": '\n"
        "xdotool mousemove --window $wid " + xy(item) + "\nsleep 0.3\nxdotool click 1\n"
        "await '\"attention\": \"mamba2\"'\n"
        "xdotool mousemove --window $wid " + xy(start) + "\nsleep 0.3\nxdotool click 1\n"
        "await '\"state\": \"finished\"'\n");
    CHECK(shown.at("error") == "");
    const json& t = shown.at("training");
    CHECK(t.at("form").at("attention") == "mamba2");
    REQUIRE(t.at("runs").size() == 1);
    CHECK(t["runs"][0]["attention"] == "mamba2");
    CHECK(t["runs"][0]["label"] == "Mamba-2 (state 2.00 KiB)");
    CHECK(t["runs"][0]["step"] == 8);
  }

}

}  // namespace attnscope::test
