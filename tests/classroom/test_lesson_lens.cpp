// Lesson 11 "What the heads do", its steps before the heads are switched off: the logit lens of the repeated
// sequence, the direct logit attribution at a position of the repeated half, and the rollout into that
// position. The numbers their captions state are measured here through the pipeline the window runs (steps
// logit_lens, logit_attribution, rollout) and must appear in the captions as written.
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

const Lesson& lesson_11() {
  static const std::vector<Lesson> lessons = load_lessons();
  const auto it = std::find_if(lessons.begin(), lessons.end(), [](const Lesson& l) { return l.number == 11; });
  REQUIRE(it != lessons.end());
  return *it;
}

std::string fixed(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

// The shipped model on the lesson's repeated sequence (32 ids twice, seed 7), with the lens steps and the rollout.
pipeline::Result lens_run(const LessonCheckpoint& c) {
  pipeline::Request r;
  r.model = model::open(c.model_dir);
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = repeated_random_ids(c.repeat_tokens, r.model->config.vocab, c.repeat_seed);
  r.layer = 1;
  r.steps = {pipeline::Step::logit_lens, pipeline::Step::logit_attribution, pipeline::Step::rollout};
  return pipeline::run(r);
}

}  // namespace

std::string two(double v) { return fixed(v, 2); }

std::string ordinal(int n) {
  const char* suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

TEST_CASE("lesson 11 claims: the logit lens, the attribution and the rollout of the repeated sequence, measured, are the captions'") {
  const Lesson& l = lesson_11();
  REQUIRE(l.steps.size() >= 4);
  const LessonStep& lens_step = l.steps[1];
  const LessonStep& attribution_step = l.steps[2];
  const LessonStep& rollout_step = l.steps[3];
  for (const LessonStep* step : {&lens_step, &attribution_step, &rollout_step}) {
    REQUIRE(step->checkpoint.has_value());
    REQUIRE(step->checkpoint->view.has_value());
    REQUIRE(step->checkpoint->view->position.has_value());
    CHECK(step->checkpoint->repeat_tokens == 32);
    CHECK(step->checkpoint->repeat_seed == 7);
  }
  const LessonCheckpoint& c = *lens_step.checkpoint;
  const pipeline::Result r = lens_run(c);
  REQUIRE(r.lens);
  REQUIRE(r.attribution);
  REQUIRE(r.rollout);
  const std::vector<int32_t>& ids = r.request.input.ids;
  const int p = c.repeat_tokens;  // positions p … 2p − 2: the second copy, whose next token the first copy showed

  // Step 2, the lens: right guesses after each layer on the second copy, the mean top probability after the last,
  // and the rank of the token to predict at the outlined position.
  const int position = *c.view->position;
  REQUIRE(position >= p);
  REQUIRE(position <= 2 * p - 2);
  REQUIRE(r.lens->layers == 2);
  int right[2] = {0, 0};
  double top_probability = 0;
  for (int t = p; t <= 2 * p - 2; ++t) {
    for (int layer = 0; layer < 2; ++layer) right[layer] += r.lens->top[size_t(layer)][size_t(t)].front().id == ids[size_t(t) + 1];
    top_probability += r.lens->top[1][size_t(t)].front().probability / double(p - 1);
  }
  REQUIRE(r.lens->final_top[size_t(position)] == ids[size_t(position) + 1]);  // the model's top-1 is the token to predict
  const int rank0 = r.lens->final_rank(0, position), rank1 = r.lens->final_rank(1, position);
  MESSAGE("lens: right " << right[0] << ", " << right[1] << "; mean top probability " << top_probability << "; ranks at "
                         << position << ": " << rank0 << ", " << rank1);
  const std::string& lens_en = lens_step.caption.en;
  const std::string& lens_zh = lens_step.caption.zh;
  CHECK(contains(lens_en, "After layer 0 the top guess is right at " + std::to_string(right[0]) + " of the 31 positions"));
  CHECK(contains(lens_en, "after layer 1 at " + std::to_string(right[1]) + ", with a mean probability of " + two(top_probability)));
  CHECK(contains(lens_en, "At position " + std::to_string(position) + " (outlined), the token to predict ranks " + ordinal(rank0) +
                              " after layer 0 and " + ordinal(rank1) + " after layer 1"));
  CHECK(right[0] < right[1]);  // "knows the next token … only after layer 1"
  CHECK(rank1 == 1);
  CHECK(contains(lens_zh, "第 0 层之后，首选在第二遍的 31 个位置中对了 " + std::to_string(right[0]) + " 个"));
  CHECK(contains(lens_zh, "第 1 层之后对了 " + std::to_string(right[1]) + " 个，平均概率 " + two(top_probability)));
  CHECK(contains(lens_zh, "在框出的位置 " + std::to_string(position) + "，要预测的词元在第 0 层之后排第 " + std::to_string(rank0) +
                              "，在第 1 层之后排第 " + std::to_string(rank1)));

  // Step 3, the attribution at its position (the model's top-1, the default target): layer 1's heads, its largest
  // head, layer 0's heads and the embedding.
  const int at = *attribution_step.checkpoint->view->position;
  CHECK(attribution_step.checkpoint->view->attribution);
  CHECK_FALSE(attribution_step.checkpoint->view->target.has_value());
  const model::LogitAttribution& a = *r.attribution;
  double layer_sum[2] = {0, 0}, embedding = 0;
  int top_head = -1;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    const model::LogitPart& part = a.parts[i];
    const double v = a.values(int(i), at);
    if (part.kind == model::PartKind::head) layer_sum[part.layer] += v;
    if (part.kind == model::PartKind::embedding) embedding = v;
    if (part.kind == model::PartKind::head && part.layer == 1 &&
        (top_head < 0 || v > a.values(a.head_part(1, top_head), at)))
      top_head = part.head;
  }
  REQUIRE(top_head >= 0);
  const double top_value = a.values(a.head_part(1, top_head), at);
  MESSAGE("attribution at " << at << ": logit " << a.logit[size_t(at)] << ", layer 1 " << layer_sum[1] << " (head 1." << top_head
                            << " " << top_value << "), layer 0 " << layer_sum[0] << ", embedding " << embedding);
  CHECK(a.target[size_t(at)] == ids[size_t(at) + 1]);
  const std::string& attr_en = attribution_step.caption.en;
  const std::string& attr_zh = attribution_step.caption.zh;
  CHECK(contains(attr_en, "at position " + std::to_string(at) + " (" + two(a.logit[size_t(at)]) + ")"));
  CHECK(contains(attr_en, "the four heads of layer 1 add " + two(layer_sum[1]) + ", head 1." + std::to_string(top_head) +
                              " the most (" + two(top_value) + ")"));
  CHECK(contains(attr_en, "the four heads of layer 0 add only " + two(layer_sum[0]) + ", the embedding " + two(embedding)));
  CHECK(std::abs(layer_sum[0]) < 0.1 * layer_sum[1]);  // "hardly push the prediction themselves"
  CHECK(contains(attr_zh, "位置 " + std::to_string(at) + " 上模型首选词元的 logit（" + two(a.logit[size_t(at)]) + "）"));
  CHECK(contains(attr_zh, "第 1 层的四个头加了 " + two(layer_sum[1]) + "，其中头 1." + std::to_string(top_head) + " 最多（" +
                              two(top_value) + "）"));
  CHECK(contains(attr_zh, "第 0 层的四个头只加了 " + two(layer_sum[0]) + "，嵌入加了 " + two(embedding)));

  // Step 4, the rollout into its position after layer 1: the token after the first occurrence of its own token
  // (the token it predicts), itself, and the token before it.
  const int q = *rollout_step.checkpoint->view->position;
  const int source = q - (p - 1), before = q - 1;
  REQUIRE(ids[size_t(source)] == ids[size_t(q) + 1]);  // the token it predicts
  REQUIRE(ids[size_t(source) - 1] == ids[size_t(q)]);  // after the first occurrence of its own token
  const auto share = [&](int j) { return double(r.rollout->rollout(1)(q, j)); };
  int largest = 0;
  for (int j = 0; j < q; ++j)
    if (share(j) > share(largest)) largest = j;
  MESSAGE("rollout into " << q << ": " << source << " " << share(source) << ", itself " << share(q) << ", " << before << " "
                          << share(before) << "; the largest earlier token " << largest);
  CHECK(largest == source);  // "more than from any other earlier token"
  CHECK(std::abs(share(source) - share(q)) < 0.05);  // "about as much as from itself"
  const std::string& roll_en = rollout_step.caption.en;
  const std::string& roll_zh = rollout_step.caption.zh;
  CHECK(contains(roll_en, "Which earlier tokens feed position " + std::to_string(q) + "?"));
  CHECK(contains(roll_en, "position " + std::to_string(q) + " draws " + two(share(source)) + " of its input from token " +
                              std::to_string(source) + ", the token after"));
  CHECK(contains(roll_en, "from itself (" + two(share(q)) + "), and " + two(share(before)) + " from token " +
                              std::to_string(before) + " just before it"));
  CHECK(contains(roll_zh, "位置 " + std::to_string(q) + " 的输入有 " + two(share(source)) + " 来自词元 " + std::to_string(source)));
  CHECK(contains(roll_zh, "来自它自身的（" + two(share(q)) + "）差不多，另有 " + two(share(before)) + " 来自紧挨在它前面的词元 " +
                              std::to_string(before)));
}
