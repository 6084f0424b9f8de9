// Lesson 11 "What the heads do": its steps switch heads of the shipped induction model off, and the numbers
// its captions state (induction scores, the loss on the repeated half) are recomputed here through the same
// pipeline the window runs (pipeline::Request::ablation) and must appear in the captions as written.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/model/model.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

struct Measured {
  HeadPatternScores before, after;  // every head's scores without and with the step's heads off
  double repeated_before = 0, repeated_after = 0;  // mean loss on the second copy, nats
};

// The mean of −ln P over the positions whose next token the first copy already showed: t = p … 2p − 2.
double repeated_half(const model::InputLoss& loss, int period) {
  double sum = 0;
  for (int t = period; t <= 2 * period - 2; ++t) sum += loss.per_token[size_t(t)];
  return sum / double(period - 1);
}

Measured measure(const LessonCheckpoint& c, const model::HeadAblation& ablation) {
  const auto m = model::open(c.model_dir);
  pipeline::Request r;
  r.model = m;
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = repeated_random_ids(c.repeat_tokens, m->config.vocab, c.repeat_seed);
  r.layer = 1;
  r.ablation = ablation;
  r.steps = {pipeline::Step::head_patterns};
  const pipeline::Result result = pipeline::run(r);
  REQUIRE(result.ablation);
  REQUIRE(result.head_patterns);
  Measured out;
  out.after = *result.head_patterns;
  out.before = head_pattern_scores(*result.ablation->before->stack);
  out.repeated_before = repeated_half(result.ablation->loss_before, c.repeat_tokens);
  out.repeated_after = repeated_half(result.ablation->loss_after, c.repeat_tokens);
  return out;
}

float score(const HeadPatternScores& s, const std::vector<float>& v, int layer, int head) {
  return v[size_t(layer) * size_t(s.heads) + size_t(head)];
}

std::string two(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", v);
  return text;
}

// Positions t = p … 2p − 2 whose top next token is the input's next id.
int right_guesses(const ModelLayerRun& run, const std::vector<int32_t>& ids, int period) {
  int right = 0;
  for (int t = period; t <= 2 * period - 2; ++t) right += run.next[size_t(t)].front().id == ids[size_t(t) + 1];
  return right;
}

const Lesson& lesson_11() {
  static const std::vector<Lesson> lessons = load_lessons();
  const auto it = std::find_if(lessons.begin(), lessons.end(), [](const Lesson& l) { return l.number == 11; });
  REQUIRE(it != lessons.end());
  return *it;
}

}  // namespace

TEST_CASE("lesson 11: six steps on the shipped model; the induction heads, the lens, the attribution, the rollout, then heads off") {
  const Lesson& l = lesson_11();
  CHECK(l.id == "11_what_the_heads_do");
  REQUIRE(l.steps.size() == 6);
  for (const LessonStep& step : l.steps) {
    REQUIRE(step.checkpoint.has_value());
    CHECK(step.checkpoint->model == "models/induction");
    CHECK(step.checkpoint->open);
    CHECK(step.checkpoint->repeat_tokens == 32);
  }
  CHECK(l.steps[0].checkpoint->ablation.heads.empty());
  CHECK(*l.steps[0].checkpoint->top_head == HeadPattern::induction);
  CHECK_FALSE(step_view(l.steps[0]).has_value());  // the Heads view
  // Steps 2–4 open the Logit lens, its attribution page and the Rollout, every head on.
  for (int k : {1, 2, 3}) {
    CAPTURE(k);
    CHECK(l.steps[size_t(k)].checkpoint->ablation.heads.empty());
    REQUIRE(l.steps[size_t(k)].checkpoint->view.has_value());
  }
  CHECK(l.steps[1].checkpoint->view->kind == LessonViewKind::lens);
  CHECK_FALSE(l.steps[1].checkpoint->view->attribution);
  CHECK(l.steps[2].checkpoint->view->kind == LessonViewKind::lens);
  CHECK(l.steps[2].checkpoint->view->attribution);
  CHECK(l.steps[3].checkpoint->view->kind == LessonViewKind::rollout);
  const std::vector<model::HeadRef> layer1{{1, 0}, {1, 1}, {1, 2}, {1, 3}}, layer0{{0, 0}, {0, 1}, {0, 2}, {0, 3}};
  CHECK(l.steps[4].checkpoint->ablation.heads == layer1);
  CHECK(l.steps[5].checkpoint->ablation.heads == layer0);
  CHECK(l.steps[4].checkpoint->ablation.mode == model::AblationMode::zero);
  CHECK(step_view(l.steps[4]) == LessonViewKind::model);  // switched-off heads show in the Model view
  CHECK(step_view(l.steps[5]) == LessonViewKind::model);
}

TEST_CASE("lesson 11 claims: the induction scores and the loss on the repeated half, measured, are the captions'") {
  const Lesson& l = lesson_11();
  const LessonCheckpoint& c1 = *l.steps[4].checkpoint;
  const LessonCheckpoint& c2 = *l.steps[5].checkpoint;
  const auto m = model::open(c1.model_dir);
  const std::vector<int32_t> ids = repeated_random_ids(32, m->config.vocab, 7);
  const int p = 32;
  const Measured off1 = measure(c1, c1.ablation);
  const Measured off0 = measure(c2, c2.ablation);
  const HeadPatternScores& s = off1.before;
  const TopHead top = top_heads(s, HeadPattern::induction, 1).at(0);
  MESSAGE("top induction head " << top.layer << "." << top.head << " " << top.score << "; repeated half "
                                << off1.repeated_before << " -> " << off1.repeated_after << " (layer 1 off), -> "
                                << off0.repeated_after << " (layer 0 off); its score with layer 0 off "
                                << score(off0.after, off0.after.induction, top.layer, top.head));
  // Step 1: head 1.2 scores 0.92, the weakest of layer 1 (1.1) 0.72; loss 0.03; 31 of 31 right.
  const std::string& step1 = l.steps[0].caption.en;
  CHECK(top.layer == 1);
  CHECK(contains(step1, "head 1." + std::to_string(top.head) + ", shown large, scores " + two(top.score)));
  int weakest = 0;
  for (int h = 1; h < s.heads; ++h)
    if (score(s, s.induction, 1, h) < score(s, s.induction, 1, weakest)) weakest = h;
  CHECK(contains(step1, "the weakest, 1." + std::to_string(weakest) + ", scores " + two(score(s, s.induction, 1, weakest))));
  CHECK(contains(step1, "the loss on the repeated half is " + two(off1.repeated_before) + " nats"));
  const pipeline::Request plain_request = [&] {
    pipeline::Request r;
    r.model = m;
    r.input.form = pipeline::TokenInput::Form::ids;
    r.input.ids = ids;
    r.layer = 1;
    r.ablation = c1.ablation;
    return r;
  }();
  const pipeline::Result layer1_off = pipeline::run(plain_request);
  const int right_before = right_guesses(*layer1_off.ablation->before, ids, p);
  const int right_after = right_guesses(*layer1_off.run, ids, p);
  CHECK(contains(step1, "right at " + std::to_string(right_before) + " of its 31 positions"));
  // Step 2: the loss on the repeated half before → after, against ln 32; the guesses right after.
  const std::string& step2 = l.steps[4].caption.en;
  CHECK(contains(step2, "rises from " + two(off1.repeated_before) + " to " + two(off1.repeated_after) + " nats"));
  CHECK(contains(step2, "(ln 32 = " + two(std::log(32.0)) + " nats)"));
  CHECK(off1.repeated_after > std::log(32.0));
  CHECK(contains(step2, "right at " + std::to_string(right_after) + " of the 31 positions"));
  for (int h = 0; h < s.heads; ++h)  // "Their own attention maps do not change"
    CHECK(score(off1.after, off1.after.induction, 1, h) == score(s, s.induction, 1, h));
  // Step 3: head 1.2's induction score with layer 0 off, and the loss.
  const std::string& step3 = l.steps[5].caption.en;
  CHECK(contains(step3, "head 1." + std::to_string(top.head) + "'s induction score falls from " + two(top.score) + " to " +
                            two(score(off0.after, off0.after.induction, top.layer, top.head))));
  CHECK(contains(step3, "rises from " + two(off0.repeated_before) + " to " + two(off0.repeated_after) + " nats"));
  // The Chinese captions carry the same numbers.
  CHECK(contains(l.steps[0].caption.zh, two(top.score)));
  CHECK(contains(l.steps[0].caption.zh, two(off1.repeated_before) + " 奈特"));
  CHECK(contains(l.steps[4].caption.zh, "从 " + two(off1.repeated_before) + " 升到 " + two(off1.repeated_after) + " 奈特"));
  CHECK(contains(l.steps[4].caption.zh, "对了 " + std::to_string(right_after) + " 个"));
  CHECK(contains(l.steps[5].caption.zh, "从 " + two(top.score) + " 降到 " +
                                            two(score(off0.after, off0.after.induction, top.layer, top.head))));
  CHECK(contains(l.steps[5].caption.zh, "从 " + two(off0.repeated_before) + " 升到 " + two(off0.repeated_after) + " 奈特"));
}
