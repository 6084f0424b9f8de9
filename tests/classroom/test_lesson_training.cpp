// Lesson 7 and the "training" of a lesson step: every step sets up the Training window with settings
// the trainer accepts, the comparison's KV bytes are the ones its caption names, and a bad "training"
// object is refused naming the lesson, the step and the key.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attnscope/classroom/lessons.h"
#include "attnscope/io/assets.h"
#include "attnscope/io/file_io.h"
#include "attnscope/train/trainer.h"
#include "core/training_worker.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("lesson 7: every step sets up the Training window; the comparison's KV bytes are the caption's") {
  const std::vector<Lesson> lessons = load_lessons();
  const auto it = std::find_if(lessons.begin(), lessons.end(), [](const Lesson& l) { return l.number == 7; });
  REQUIRE(it != lessons.end());
  const Lesson& l = *it;
  CHECK(l.id == "07_training_induction_heads");
  REQUIRE(l.steps.size() == 5);
  for (const LessonStep& step : l.steps) {
    REQUIRE(step.training.has_value());
    CHECK_NOTHROW(train::validate_train_settings(*step.training));
    CHECK(step.training->task.kind == train::TaskKind::induction);
    CHECK(step.training->model.layers == 2);  // an induction head needs two layers
  }
  // Step 4: Compare MHA / GQA / MQA / MLA — 2 · L · G · d_head · 4 bytes for G = 4, 2, 1.
  const std::vector<train::TrainSettings> variants = train::group_variants(*l.steps[3].training);
  REQUIRE(variants.size() == 3);
  CHECK(train::kv_cache_bytes_per_token(variants[0].model) == 1024);
  CHECK(train::kv_cache_bytes_per_token(variants[1].model) == 512);
  CHECK(train::kv_cache_bytes_per_token(variants[2].model) == 256);
  CHECK(contains(l.steps[3].caption.en, "1 KiB, 512 B and 256 B"));
  CHECK(contains(l.steps[3].caption.zh, "1 KiB、512 B 和 256 B"));
  // ... and the comparison's fourth run, MLA: L · (r_kv + d_rope) · 4 bytes = 2 · (16 + 8) · 4
  const std::vector<train::TrainSettings> runs = train::attention_variants(*l.steps[3].training, false);
  REQUIRE(runs.size() == 4);
  CHECK(runs[3].model.mla());
  CHECK(train::kv_cache_bytes_per_token(runs[3].model) == 192);
  CHECK(contains(l.steps[3].caption.en, "MLA's L · (r_kv + d_rope) · 4 = 192 B"));
  CHECK(contains(l.steps[3].caption.zh, "MLA 为 L · (r_kv + d_rope) · 4 = 192 B"));
  // ... at the window's own defaults, under which all three runs learn (README "The Training window").
  const gui::TrainingForm defaults;
  CHECK(l.steps[3].training->steps == defaults.steps);
  CHECK(l.steps[3].training->optimizer.lr == defaults.lr);
  CHECK(l.steps[3].training->optimizer.warmup == defaults.warmup);
  CHECK(gui::training_settings(defaults).optimizer.warmup == defaults.warmup);
  // The other steps train as `attnscope train` does by default (the single run's 50 warm-up steps).
  CHECK(l.steps[0].training->optimizer.warmup == train::default_train_settings().optimizer.warmup);
  CHECK(int(l.steps[3].training->seed) == defaults.seed);
  // Step 5 names the shipped model's recipe: 1000 steps from seed 1 (assets/models/README.md).
  CHECK(l.steps[4].training->steps == 1000);
  CHECK(l.steps[4].training->seed == 1);
  CHECK(contains(read_file(assets_dir() / "models" / "README.md", 1 << 20), "--steps 1000 --seed 1"));
}

TEST_CASE("lesson 7: layers are counted from 0, so its induction heads are layer 1, as in lesson 6") {
  const std::vector<Lesson> lessons = load_lessons();
  const auto it = std::find_if(lessons.begin(), lessons.end(), [](const Lesson& l) { return l.number == 7; });
  REQUIRE(it != lessons.end());
  std::string en = it->title.en + "\n" + it->explanation.en, zh = it->title.zh + "\n" + it->explanation.zh;
  for (const LessonStep& step : it->steps) en += "\n" + step.caption.en, zh += "\n" + step.caption.zh;
  // Every step trains 2 layers: layer 0 and layer 1; the induction heads are the second layer's.
  CHECK(contains(en, "a head in layer 1 then looks"));
  CHECK(contains(en, "a previous-token head in layer 0"));
  CHECK(contains(zh, "第 1 层的头再去寻找"));
  CHECK(contains(zh, "第 0 层的“前一个词元”头"));
  for (const char* two : {"layer 2", "Layer 2", "layer-2"}) CHECK_FALSE(contains(en, two));
  CHECK_FALSE(contains(zh, "第 2 层"));
}

TEST_CASE("lessons: a step's bad \"training\" is refused naming the lesson, the step and the problem") {
  const fs::path dir = fresh_dir("lesson_training");
  fs::copy(assets_dir(), dir, fs::copy_options::recursive);
  const fs::path file = dir / "lessons" / "07_training_induction_heads.json";
  const nlohmann::json good = nlohmann::json::parse(read_file(file, 1 << 20));
  auto error_with = [&](const nlohmann::json& training) {
    nlohmann::json j = good;
    j["steps"][1]["training"] = training;
    write_file_atomic(file, j.dump());
    return error_of([&] { load_lessons(dir); });
  };
  std::string e = error_with({{"task", "induction"}, {"colour", 3}});
  CHECK(contains(e, "07_training_induction_heads"));
  CHECK(contains(e, "step 2"));
  CHECK(contains(e, "colour"));
  e = error_with({{"heads", 4}, {"groups", 3}});
  CHECK(contains(e, "step 2, training"));
  CHECK(contains(e, "groups (3) must divide heads (4)"));
  CHECK(contains(error_with({{"task", "text"}}), "built-in task"));
  CHECK(contains(error_with({{"lr", "fast"}}), "\"lr\" must be a number"));
  CHECK(contains(error_with({{"steps", -5}}), "\"steps\" must be a whole number"));
  CHECK(contains(error_with({{"warmup", 2.5}}), "\"warmup\" must be a whole number"));
  CHECK(contains(error_with({{"task", "poetry"}}), "induction"));
}
