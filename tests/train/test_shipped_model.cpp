// The model attnscope ships in assets/models/induction (made by its own trainer, assets/models/README.md):
// it opens through model::open like any Hugging Face checkpoint, is small, and has a real induction
// head in layer 1 on a repeated random sequence (and none in layer 0, which cannot form one alone).
// "Real": the same head finds the earlier occurrence at every period, not a fixed look-back, and a
// random sequence that does not repeat, scored as if it did, gets next to nothing from it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/core/rng.h"
#include "attnscope/io/assets.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "attnscope/train/tasks.h"

using namespace attnscope;

TEST_CASE("shipped model: assets/models/induction has a layer-1 induction head above 0.5 on the probe") {
  const std::filesystem::path dir = assets_dir() / "models" / "induction";
  uintmax_t bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) bytes += e.file_size();
  CHECK(bytes < 2u * 1024u * 1024u);
  const std::shared_ptr<const model::Model> m = model::open(dir);
  // The probe the trainer measures induction on: a random half of n tokens from the task's 32 symbols, repeated.
  train::TaskSettings ts;
  ts.kind = train::TaskKind::induction;
  const train::Task task(ts);
  const int n = 32;
  const std::vector<int32_t> ids = task.induction_probe(n);
  REQUIRE(ids.size() == size_t(2 * n));
  const model::ForwardResult r = model::forward(*m, ids);
  REQUIRE(r.layers == 2);
  const int H = r.heads, T = r.tokens;
  std::vector<float> best(2, 0.0f);
  for (int l = 0; l < 2; ++l) {
    const std::vector<float> scores = train::induction_scores(r.attentions.data() + size_t(l) * H * T * T, H, T, n);
    best[size_t(l)] = *std::max_element(scores.begin(), scores.end());
  }
  INFO("best induction score: layer 0 " << best[0] << ", layer 1 " << best[1]);
  CHECK(best[1] > 0.5f);
  CHECK(best[0] < 0.3f);
  // And it predicts the second copy: the most probable next token is the one the first copy had.
  int right = 0;
  for (int i = n; i + 1 < T; ++i) right += r.top[size_t(i)][0].id == ids[size_t(i + 1)] ? 1 : 0;
  CHECK(right >= (T - n - 1) * 9 / 10);
}

namespace {
// Layer `layer`'s induction scores [H] on the forward pass of ids, measured as if ids were a half of
// n tokens repeated.
std::vector<float> layer_induction(const model::Model& m, const std::vector<int32_t>& ids, int layer, int n) {
  const model::ForwardResult r = model::forward(m, ids);
  const int H = r.heads, T = r.tokens;
  return train::induction_scores(r.attentions.data() + size_t(layer) * H * T * T, H, T, n);
}
}  // namespace

TEST_CASE("shipped model: its layer-1 induction head works at every period and not on tokens that do not repeat") {
  const std::shared_ptr<const model::Model> m = model::open(assets_dir() / "models" / "induction");
  train::TaskSettings ts;
  const train::Task task(ts);
  const int H = m->config.heads;
  // A head that scores > 0.5 on repeats of 8, 12, 20 and 32 tokens (the training periods are 21–32:
  // 8 and 12 are shorter than any it saw) — a fixed look-back could score at one of them only.
  std::vector<float> worst(size_t(H), 1.0f);
  for (int n : {8, 12, 20, 32}) {
    const std::vector<float> s = layer_induction(*m, task.induction_probe(n), 1, n);
    for (int h = 0; h < H; ++h) worst[size_t(h)] = std::min(worst[size_t(h)], s[size_t(h)]);
  }
  const int head = int(std::max_element(worst.begin(), worst.end()) - worst.begin());
  INFO("layer 1 head " << head << ": lowest induction score over periods 8, 12, 20, 32 = " << worst[size_t(head)]);
  CHECK(worst[size_t(head)] > 0.5f);
  // 64 random tokens that are not a repeat, scored as if the second 32 repeated the first: the position
  // 31 back holds nothing the head looks for, so it scores low (a fixed 31-back head scored 0.97 here).
  Rng rng(7);
  std::vector<int32_t> noise(64);
  for (int32_t& id : noise) id = int32_t(rng.next_u64() % 32u);
  const std::vector<float> s = layer_induction(*m, noise, 1, 32);
  INFO("the same head on 64 random tokens: " << s[size_t(head)]);
  CHECK(s[size_t(head)] < 0.2f);
}

TEST_CASE("shipped model: layer 0 has a previous-token head, which layer 1's induction head reads") {
  const std::shared_ptr<const model::Model> m = model::open(assets_dir() / "models" / "induction");
  const std::vector<int32_t> ids = repeated_random_ids(32, 32, 3);
  const model::ForwardResult r = model::forward(*m, ids);
  model::AttentionStack stack;
  stack.layers = r.layers, stack.heads = r.heads, stack.kv_heads = r.kv_heads, stack.tokens = r.tokens;
  stack.causal = true;
  stack.ids = ids;
  stack.attentions = r.attentions;
  const HeadPatternScores scores = head_pattern_scores(stack);
  const std::vector<TopHead> prev = top_heads(scores, HeadPattern::previous, 1);
  REQUIRE(prev.size() == 1);
  INFO("best previous-token head " << prev[0].layer << "." << prev[0].head << ": " << prev[0].score);
  CHECK(prev[0].layer == 0);
  CHECK(prev[0].score > 0.4f);
}
