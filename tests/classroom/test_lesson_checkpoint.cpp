// Lesson 6 and the "checkpoint" of a lesson step: every step acts on the open checkpoint (the shipped
// model offered or opened, a repeated random sequence, a head by its pattern), what the captions claim of
// the shipped model holds on the very input the steps give it, and a bad "checkpoint" is refused naming
// the lesson, the step and the key.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/io/assets.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/model.h"
#include "check.h"
#include "attnscope/pipeline/model_input.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

const Lesson& lesson_number(const std::vector<Lesson>& lessons, int number) {
  const auto it = std::find_if(lessons.begin(), lessons.end(), [&](const Lesson& l) { return l.number == number; });
  REQUIRE(it != lessons.end());
  return *it;
}

}  // namespace

TEST_CASE("lessons: eleven, numbered 1 to 11; lesson 6 reads a real model, lesson 7 trains one, 8 to 10 go past GQA, 11 switches heads off") {
  const std::vector<Lesson> lessons = load_lessons();
  REQUIRE(lessons.size() == 11);
  CHECK(lesson_number(lessons, 6).id == "06_heads_of_a_real_model");
  CHECK(lesson_number(lessons, 7).id == "07_training_induction_heads");
  CHECK(lesson_number(lessons, 8).id == "08_after_gqa_mla_windows_sinks");
  CHECK(lesson_number(lessons, 9).id == "09_where_positions_come_from");
  CHECK(lesson_number(lessons, 10).id == "10_attention_without_a_softmax");
  CHECK(lesson_number(lessons, 11).id == "11_what_the_heads_do");
}

TEST_CASE("lesson 6: every step acts on the checkpoint; the first offers the shipped model, the others open it") {
  const std::vector<Lesson> lessons = load_lessons();
  const Lesson& l = lesson_number(lessons, 6);
  REQUIRE(l.steps.size() == 6);
  for (size_t k = 0; k < l.steps.size(); ++k) {
    CAPTURE(k);
    const LessonStep& step = l.steps[k];
    REQUIRE(step.checkpoint.has_value());
    CHECK(step.checkpoint->model == "models/induction");
    CHECK(fs::is_regular_file(step.checkpoint->model_dir / "model.safetensors"));
    CHECK(step.checkpoint->open == (k > 0));  // step 1 says how to download GPT-2 and only offers it
    CHECK(step.checkpoint->repeat_tokens == (k == 4 ? 20 : 32));  // step 5 changes the copies' length
    CHECK(step.scene.view.view == View::heads);
    CHECK_FALSE(step.training.has_value());
  }
  REQUIRE(l.steps[1].checkpoint->top_head.has_value());
  CHECK(*l.steps[1].checkpoint->top_head == HeadPattern::sink);
  CHECK(*l.steps[2].checkpoint->top_head == HeadPattern::previous);
  CHECK(*l.steps[3].checkpoint->top_head == HeadPattern::induction);
  CHECK(*l.steps[4].checkpoint->top_head == HeadPattern::induction);
  CHECK_FALSE(l.steps[5].checkpoint->top_head.has_value());
  // The stripes of steps 4 and 5 are p − 1 cells left of the diagonal.
  for (size_t k : {size_t(3), size_t(4)}) {
    const int stripe = l.steps[k].checkpoint->repeat_tokens - 1;
    CHECK(contains(l.steps[k].caption.en, std::to_string(stripe) + " cells left"));
    CHECK(contains(l.steps[k].caption.zh, "左侧 " + std::to_string(stripe) + " 格"));
  }
  // Step 6 names the GQA shapes of the models it cites.
  CHECK(contains(l.steps[5].caption.en, "Qwen2.5-0.5B has 14 query heads sharing 2 K/V heads"));
  CHECK(contains(l.steps[5].caption.en, "SmolLM2-135M 9 sharing 3"));
  // The panel tells how to get GPT-2 the way README does.
  CHECK(contains(read_file(fs::path(ATTNSCOPE_SOURCE_DIR) / "README.md", 1 << 22),
                 "hf download gpt2 config.json model.safetensors tokenizer.json vocab.json merges.txt"));
}

namespace {

// The shipped model's pattern scores on `ids` (`period` as head_pattern_scores takes it).
HeadPatternScores shipped_scores(const LessonCheckpoint& c, const std::vector<int32_t>& ids, int period = 0) {
  const std::shared_ptr<const model::Model> m = model::open(c.model_dir);
  const ModelLayerRun run = run_model_layer(*m, model_tokens_from_ids(c.model_dir, ids), 0);
  REQUIRE(run.stack);
  return head_pattern_scores(*run.stack, period);
}

float best(const HeadPatternScores& s, HeadPattern p) { return top_heads(s, p, 1).at(0).score; }

}  // namespace

TEST_CASE("lesson 6 on the shipped model: what the captions claim holds on the steps' own inputs") {
  const std::vector<Lesson> lessons = load_lessons();
  const Lesson& l = lesson_number(lessons, 6);
  const LessonCheckpoint& c4 = *l.steps[3].checkpoint;
  const LessonCheckpoint& c5 = *l.steps[4].checkpoint;
  const int vocab = model::open(c4.model_dir)->config.vocab;
  // Step 4: 32 tokens twice: a layer-1 head scores near 1.
  const HeadPatternScores at32 = shipped_scores(c4, repeated_random_ids(c4.repeat_tokens, vocab, c4.repeat_seed));
  REQUIRE(at32.repeat.has_value());
  CHECK(at32.repeat->period == 32);
  const TopHead induction = top_heads(at32, HeadPattern::induction, 1).at(0);
  const TopHead previous = top_heads(at32, HeadPattern::previous, 1).at(0);
  const TopHead sink = top_heads(at32, HeadPattern::sink, 1).at(0);
  MESSAGE("shipped model, 32 twice: induction " << induction.layer << "." << induction.head << " " << induction.score
                                                << ", previous " << previous.layer << "." << previous.head << " "
                                                << previous.score << ", sink " << sink.layer << "." << sink.head << " "
                                                << sink.score);
  CHECK(induction.layer == 1);  // "The shipped model's layer-1 heads score near 1 too"
  CHECK(induction.score > 0.8f);
  // step 3: "The shipped model has one in layer 0 … about half of its attention one token back"
  CHECK(previous.layer == 0);
  CHECK(previous.score > 0.4f);
  CHECK(previous.score < 0.7f);
  CHECK(sink.score < 0.3f);  // step 2: "The shipped model's best is far lower"
  // Step 5: 20 tokens twice: the layer-1 heads "still score high".
  const HeadPatternScores at20 = shipped_scores(c5, repeated_random_ids(c5.repeat_tokens, vocab, c5.repeat_seed));
  REQUIRE(at20.repeat.has_value());
  CHECK(at20.repeat->period == 20);
  MESSAGE("shipped model, 20 twice: best induction " << best(at20, HeadPattern::induction));
  CHECK(top_heads(at20, HeadPattern::induction, 1).at(0).layer == 1);
  CHECK(best(at20, HeadPattern::induction) > 0.8f);
  // "its heads still work on 8 tokens repeated"
  const HeadPatternScores at8 = shipped_scores(c5, repeated_random_ids(8, vocab, c5.repeat_seed));
  MESSAGE("shipped model, 8 twice: best induction " << best(at8, HeadPattern::induction));
  CHECK(top_heads(at8, HeadPattern::induction, 1).at(0).layer == 1);
  CHECK(best(at8, HeadPattern::induction) > 0.5f);
  // "and score about 0 on random tokens that do not repeat": 64 random ids, scored as if period 32.
  std::vector<int32_t> random = repeated_random_ids(64, vocab, 99);
  random.resize(64);
  REQUIRE_FALSE(find_repeat(random).has_value());
  const HeadPatternScores shifted = shipped_scores(c4, random, 32);
  MESSAGE("shipped model, 64 random ids, attention 31 back: " << best(shifted, HeadPattern::induction));
  CHECK(best(shifted, HeadPattern::induction) < 0.1f);
}

TEST_CASE("lessons: a step's bad \"checkpoint\" is refused naming the lesson, the step and the key") {
  const fs::path dir = fresh_dir("lesson_checkpoint");
  fs::copy(assets_dir(), dir, fs::copy_options::recursive);
  const fs::path file = dir / "lessons" / "06_heads_of_a_real_model.json";
  const nlohmann::json good = nlohmann::json::parse(read_file(file, 1 << 20));
  auto error_with = [&](const nlohmann::json& checkpoint) {
    nlohmann::json j = good;
    j["steps"][2]["checkpoint"] = checkpoint;
    write_file_atomic(file, j.dump());
    return error_of([&] { load_lessons(dir); });
  };
  CHECK(error_with({{"layer", 1}}).empty());
  std::string e = error_with({{"layer", 1}, {"colour", 3}});
  CHECK(contains(e, "06_heads_of_a_real_model"));
  CHECK(contains(e, "step 3, checkpoint"));
  CHECK(contains(e, "unknown key 'colour'"));
  CHECK(contains(error_with({{"layer", -1}}), "\"layer\" must be a whole number from 0"));
  CHECK(contains(error_with({{"open", true}}), "\"open\" needs the \"model\""));
  CHECK(contains(error_with({{"open", "yes"}, {"model", "models/induction"}}), "\"open\" must be true or false"));
  CHECK(contains(error_with({{"model", "models/gpt5"}}), "no checkpoint folder"));
  CHECK(contains(error_with({{"model", "../lessons"}}), "must be a folder inside assets/"));
  CHECK(contains(error_with({{"model", (dir / "models/induction").string()}}), "must be a folder inside assets/"));
  CHECK(contains(error_with({{"input", ""}}), "\"input\" must be a non-empty text"));
  CHECK(contains(error_with({{"input", "ids: 1 2"}, {"repeat", {{"tokens", 5}}}}), "give one"));
  CHECK(contains(error_with({{"repeat", {{"seed", 5}}}}), "step 3, checkpoint, repeat: \"tokens\""));
  CHECK(contains(error_with({{"repeat", {{"tokens", 1}}}}), "\"tokens\" must be a whole number from 2"));
  CHECK(contains(error_with({{"repeat", {{"tokens", 8}, {"sed", 1}}}}), "unknown key 'sed'"));
  CHECK(contains(error_with({{"head", "induktion"}}), "\"sink\", \"previous\" or \"induction\""));
  CHECK(contains(error_with({{"head", 2.5}}), "\"head\" must be a whole number"));
  CHECK(contains(error_with("layer 1"), "step 3, checkpoint must be an object"));
}

TEST_CASE("lessons: a step's checkpoint \"view\" opens the Model view, the Rollout or the Logit lens; a bad one is refused naming the key and the valid values") {
  const fs::path dir = fresh_dir("lesson_view");
  fs::copy(assets_dir(), dir, fs::copy_options::recursive);
  const fs::path file = dir / "lessons" / "06_heads_of_a_real_model.json";
  const nlohmann::json good = nlohmann::json::parse(read_file(file, 1 << 20));
  auto with = [&](const nlohmann::json& view, bool repeat = true) {
    nlohmann::json j = good;
    j["steps"][2]["checkpoint"] = {{"model", "models/induction"}, {"open", true}, {"view", view}};
    if (repeat) j["steps"][2]["checkpoint"]["repeat"] = {{"tokens", 8}, {"seed", 1}};
    write_file_atomic(file, j.dump());
  };
  auto error_with = [&](const nlohmann::json& view, bool repeat = true) {
    with(view, repeat);
    return error_of([&] { load_lessons(dir); });
  };
  auto view_of = [&](const nlohmann::json& view) {
    with(view);
    const std::vector<Lesson> lessons = load_lessons(dir);
    const std::optional<LessonView> v = lesson_number(lessons, 6).steps[2].checkpoint->view;
    REQUIRE(v.has_value());
    return *v;
  };
  const LessonView model = view_of({{"name", "model"}});
  CHECK(model.kind == LessonViewKind::model);
  CHECK_FALSE(model.position.has_value());
  const LessonView rollout = view_of({{"name", "rollout"}, {"position", 12}});
  CHECK(rollout.kind == LessonViewKind::rollout);
  CHECK(rollout.position == 12);
  const LessonView lens = view_of({{"name", "lens"}});
  CHECK(lens.kind == LessonViewKind::lens);
  CHECK_FALSE(lens.attribution);
  CHECK_FALSE(lens.target.has_value());
  const LessonView attribution = view_of({{"name", "lens"}, {"page", "attribution"}, {"position", 15}, {"target", 3}});
  CHECK(attribution.attribution);
  CHECK(attribution.position == 15);
  CHECK(attribution.target == 3);
  CHECK(std::string(to_string(LessonViewKind::rollout)) == "rollout");
  // Refusals: the lesson, the step, the key and what it may be.
  std::string e = error_with({{"name", "flow"}});
  CHECK(contains(e, "06_heads_of_a_real_model"));
  CHECK(contains(e, "step 3, checkpoint, view: \"name\" must be \"model\", \"rollout\" or \"lens\", not \"flow\""));
  CHECK(contains(error_with("lens"), "view must be an object with a \"name\": \"model\", \"rollout\" or \"lens\""));
  CHECK(contains(error_with({{"page", "lens"}}), "view must be an object with a \"name\""));
  CHECK(contains(error_with({{"name", "model"}, {"position", 3}}), "(the Model view): unknown key 'position'"));
  CHECK(contains(error_with({{"name", "rollout"}, {"page", "lens"}}), "(the Rollout view): unknown key 'page'"));
  CHECK(contains(error_with({{"name", "lens"}, {"query", 3}}), "(the Logit lens): unknown key 'query'"));
  CHECK(contains(error_with({{"name", "lens"}, {"page", "flow"}}), "\"page\" must be \"lens\" or \"attribution\""));
  CHECK(contains(error_with({{"name", "rollout"}, {"position", 16}}),
                 "\"position\" must be a whole number from 0 to 15 (the repeated sequence has 16 tokens)"));
  CHECK(error_with({{"name", "rollout"}, {"position", 15}}).empty());
  CHECK(contains(error_with({{"name", "rollout"}, {"position", -1}}), "\"position\" must be a whole number from 0 to 15"));
  CHECK(contains(error_with({{"name", "lens"}, {"position", 2048}}, false), "\"position\" must be a whole number from 0 to 2047"));
  CHECK(contains(error_with({{"name", "lens"}, {"target", 3}}), "\"target\" goes with \"page\": \"attribution\""));
  CHECK(contains(error_with({{"name", "lens"}, {"page", "attribution"}, {"target", "the"}}),
                 "\"target\" must be a token id, a whole number from 0"));
}
