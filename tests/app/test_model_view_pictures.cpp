// test_model_view_pictures.cpp — the Model view window's pictures and numbers (core/model_view.h)
// without a window: every head's attention sink, previous-token score, mean distance and entropy
// against a direct computation (and head_stats.h's for the numbers both have), the atlas tile by tile
// against the engine's model_view_figure colours (nearest cells when T does not fit), cancelling, and
// the compute worker delivering it with a checkpoint's forward pass, made again for another colormap;
// the worker's head pattern scores (lesson 6's table) with every delivery of a pass, and the one
// attention sink that the Head analysis window, the Model view's tooltip and lesson 6 all show.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/core/error.h"
#include "attnscope/core/rng.h"
#include "attnscope/figure/export.h"
#include "core/compute_worker.h"
#include "core/model_view.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;
using namespace std::chrono_literals;

namespace {

// A stack [L, H, T, T] of random rows (causal: keys up to the query), with a strong first column in
// even heads so the numbers differ between heads.
model::AttentionStack random_stack(int L, int H, int G, int T, bool causal) {
  model::AttentionStack s;
  s.layers = L, s.heads = H, s.kv_heads = G, s.tokens = T;
  s.causal = causal;
  s.groups_from_config = true;
  s.source = "random";
  Rng rng(11);
  s.attentions.assign(size_t(L) * H * T * T, 0.0f);
  for (int lh = 0; lh < L * H; ++lh)
    for (int i = 0; i < T; ++i) {
      float* row = s.attentions.data() + (size_t(lh) * T + i) * T;
      const int n = causal ? i + 1 : T;
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += row[j] = float(rng.uniform(0.05, 1.0)) * (j == 0 && lh % 2 == 0 ? 8.0f : 1.0f);
      for (int j = 0; j < n; ++j) row[j] = float(row[j] / sum);
    }
  return s;
}

// The input box's form of token ids.
// The first delivery of the last submit (the heatmaps), taken before the statistics follow.
std::optional<ComputeResult> first_delivery(ComputeWorker& worker) {
  REQUIRE(worker.wait_for_result(60s));
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  return r;
}

}  // namespace

TEST_CASE("model view numbers: attention sink, previous-token score, mean distance and entropy of every head") {
  for (const bool causal : {true, false}) {
    CAPTURE(causal);
    const model::AttentionStack s = random_stack(3, 4, 2, 7, causal);
    const ModelViewPictures mv = make_model_view(s, Colormap::viridis);
    REQUIRE(mv.numbers.size() == 12);
    for (int l = 0; l < 3; ++l) {
      // head_stats.h's numbers of the same layer: the Head analysis window's definitions.
      Tensor3 probs;
      for (int h = 0; h < 4; ++h) probs.push_back(s.attention(l, h));
      const HeadStats stats = head_stats(probs, causal);
      for (int h = 0; h < 4; ++h) {
        CAPTURE(l);
        CAPTURE(h);
        const int T = s.tokens;
        const float* p = s.attentions.data() + (size_t(l) * 4 + size_t(h)) * size_t(T) * size_t(T);
        double sink = 0, previous = 0, distance = 0, entropy = 0;
        for (int i = 0; i < T; ++i) {
          if (i > 0) sink += p[i * T];  // queries after the first only
          if (i > 0) previous += p[i * T + i - 1];
          for (int j = 0; j < T; ++j) {
            const double v = p[i * T + j];
            distance += v * std::abs(i - j);
            if (v > 0) entropy -= v * std::log(v);
          }
        }
        const ModelHeadNumbers& n = mv.at(l, h);
        CHECK(n.attention_sink == doctest::Approx(sink / (T - 1)).epsilon(1e-6));
        CHECK(n.previous_token == doctest::Approx(previous / (T - 1)).epsilon(1e-6));
        CHECK(n.mean_distance == doctest::Approx(distance / T).epsilon(1e-6));
        CHECK(n.entropy == doctest::Approx(entropy / T).epsilon(1e-5));
        CHECK(n.attention_sink == stats.attention_sink[size_t(h)]);  // the same function
        CHECK(n.mean_distance == doctest::Approx(stats.mean_distance[size_t(h)]).epsilon(1e-6));
        CHECK(n.entropy == doctest::Approx(stats.entropy[size_t(h)]).epsilon(1e-5));
      }
    }
    // The strong first column of even heads shows as a larger attention sink.
    CHECK(mv.at(0, 0).attention_sink > mv.at(0, 1).attention_sink);
  }
  // One token: no query after the first, no previous token to attend to.
  const ModelViewPictures one = make_model_view(random_stack(1, 2, 1, 1, true), Colormap::viridis);
  CHECK(std::isnan(one.at(0, 1).attention_sink));
  CHECK(std::isnan(one.at(0, 1).previous_token));
  CHECK(one.at(0, 1).mean_distance == 0.0);
}

TEST_CASE("model view atlas: fixed and locked scales set its one bar; per head is drawn shared") {
  const model::AttentionStack s = random_stack(2, 4, 2, 6, false);
  const ModelViewPictures shared = make_model_view(s, Colormap::viridis);
  const ModelViewPictures fixed = make_model_view(s, Colormap::viridis, nullptr, {ScaleMode::fixed});
  const ModelViewPictures locked = make_model_view(s, Colormap::viridis, nullptr, {ScaleMode::locked, {0.1f, 0.3f}});
  const ModelViewPictures per_head = make_model_view(s, Colormap::viridis, nullptr, {ScaleMode::per_head});
  CHECK(fixed.range.lo == 0.0f);
  CHECK(fixed.range.hi == 1.0f);
  CHECK(locked.range.lo == 0.1f);
  CHECK(locked.range.hi == 0.3f);
  CHECK(locked.scale.mode == ScaleMode::locked);
  CHECK(per_head.scale.mode == ScaleMode::shared);
  CHECK(per_head.range.lo == shared.range.lo);
  CHECK(per_head.range.hi == shared.range.hi);
  CHECK(shared.range.hi < 1.0f);  // the data's own range is not 0–1, so fixed changed it
  // A cell's colour follows the bar: fixed puts p at p.
  const float p = s.attentions[1];
  CHECK(fixed.atlas.pixels[1] == colormap_lookup(Colormap::viridis, p));
}

TEST_CASE("model view atlas: tile (l, h) holds model_view_figure's colours of layer l's head h") {
  for (const Colormap map : {Colormap::viridis, Colormap::magma}) {
    const model::AttentionStack s = random_stack(3, 4, 2, 6, true);
    const ModelViewPictures mv = make_model_view(s, map);
    ExportRequest r;
    r.what = ExportWhat::model;
    r.colormap = map;
    const FigureSpec f = model_view_figure(s, r);
    REQUIRE(mv.tile == 6);
    REQUIRE(mv.atlas.width == 4 * 6);
    REQUIRE(mv.atlas.height == 3 * 6);
    CHECK(mv.range.lo == f.colorbars[0].range.lo);
    CHECK(mv.range.hi == f.colorbars[0].range.hi);
    CHECK(mv.colormap == map);
    CHECK(mv.causal);
    int mismatches = 0, masked = 0;
    for (int l = 0; l < 3; ++l)
      for (int h = 0; h < 4; ++h) {
        const std::vector<Rgba> colors = panel_colors(f, size_t(l * 4 + h));
        for (int y = 0; y < 6; ++y)
          for (int x = 0; x < 6; ++x) {
            const Rgba a = mv.atlas.pixels[size_t((l * 6 + y) * mv.atlas.width + h * 6 + x)];
            mismatches += !(a == colors[size_t(y * 6 + x)]);
            masked += a == masked_color(map);
          }
      }
    CHECK(mismatches == 0);
    CHECK(masked == 12 * 15);  // the upper triangle of every 6 × 6 head is masked
  }
}

TEST_CASE("model view token set: every thumbnail's strip is its heads' rows (columns) summed, in the figure's colours") {
  const model::AttentionStack s = random_stack(3, 4, 2, 6, true);
  for (const TokenSetAxis axis : {TokenSetAxis::queries, TokenSetAxis::keys})
    for (const SetReduce reduce : {SetReduce::sum, SetReduce::mean}) {
      CAPTURE(int(axis));
      CAPTURE(int(reduce));
      const TokenSet set{axis, {1, 4}, reduce};
      const ModelViewPictures mv = make_model_view(s, Colormap::viridis, nullptr, {}, set);
      ExportRequest r;
      r.what = ExportWhat::model;
      r.token_set = set;
      const FigureSpec f = model_view_figure(s, r);
      const bool queries = axis == TokenSetAxis::queries;
      CHECK(mv.token_set == set);
      REQUIRE(mv.strips.width == (queries ? 4 * 6 : 4));
      REQUIRE(mv.strips.height == (queries ? 3 : 3 * 6));
      REQUIRE(mv.strip_values.size() == 12);
      // The colour bar's range includes the strips (a sum of two rows reaches past 1).
      CHECK(mv.range.hi == f.colorbars[0].range.hi);
      int mismatches = 0, compared = 0;
      for (int l = 0; l < 3; ++l)
        for (int h = 0; h < 4; ++h) {
          const float* p = s.attentions.data() + (size_t(l) * 4 + size_t(h)) * 36;
          const std::vector<Rgba> colors = panel_colors(f, size_t(l * 4 + h));
          const size_t stride = queries ? 6 : 7;
          for (int k = 0; k < 6; ++k, ++compared) {
            // a plain sum over the probabilities: rows 1 and 4 (queries) or columns 1 and 4 (keys)
            const double sum = queries ? double(p[1 * 6 + k]) + double(p[4 * 6 + k]) : double(p[k * 6 + 1]) + double(p[k * 6 + 4]);
            CHECK(mv.strip_values[size_t(l * 4 + h)][size_t(k)] ==
                  doctest::Approx(reduce == SetReduce::mean ? sum / 2 : sum).epsilon(1e-6));
            const Rgba want = colors[queries ? 6 * stride + size_t(k) : size_t(k) * stride + 6];
            const Rgba got = queries ? mv.strips.pixels[size_t(l * mv.strips.width + h * 6 + k)]
                                     : mv.strips.pixels[size_t((l * 6 + k) * mv.strips.width + h)];
            mismatches += !(got == want);
          }
          // The thumbnail itself keeps the head's own cells.
          for (int y = 0; y < 6; ++y)
            for (int x = 0; x < 6; ++x)
              mismatches += !(mv.atlas.pixels[size_t((l * 6 + y) * mv.atlas.width + h * 6 + x)] == colors[size_t(y) * stride + size_t(x)]);
        }
      CHECK(compared == 12 * 6);
      CHECK(mismatches == 0);
    }
  // A set naming a token past the input draws nothing (the input changed under it).
  const ModelViewPictures past = make_model_view(s, Colormap::viridis, nullptr, {}, TokenSet{TokenSetAxis::queries, {2, 6}});
  CHECK_FALSE(past.token_set.active());
  CHECK(past.strips.width == 0);
  CHECK(past.strip_values.empty());
}

TEST_CASE("model view atlas: a long input is sampled at the nearest cell, the atlas within its limit") {
  // 64 layers × T = 80: 64·80 pixels would exceed the limit, so a tile has 4096/64 = 64 pixels.
  const model::AttentionStack s = random_stack(64, 1, 1, 80, false);
  const ModelViewPictures mv = make_model_view(s, Colormap::viridis);
  REQUIRE(mv.tile == model_view_atlas_max_side / 64);
  CHECK(mv.atlas.height == model_view_atlas_max_side);
  CHECK(mv.atlas.width == mv.tile);
  ExportRequest r;
  r.what = ExportWhat::model;
  const FigureSpec f = model_view_figure(s, r);
  int mismatches = 0;
  for (const int l : {0, 31, 63}) {
    const std::vector<Rgba> colors = panel_colors(f, size_t(l));
    for (int y = 0; y < mv.tile; ++y)
      for (int x = 0; x < mv.tile; ++x) {
        const int row = int((y + 0.5) * 80 / mv.tile), col = int((x + 0.5) * 80 / mv.tile);
        mismatches += !(mv.atlas.pixels[size_t((l * mv.tile + y) * mv.atlas.width + x)] == colors[size_t(row * 80 + col)]);
      }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("model view: a set cancel flag stops the atlas; a malformed stack is an InputError") {
  const model::AttentionStack s = random_stack(2, 2, 1, 4, true);
  std::atomic<bool> cancel{true};
  CHECK_THROWS_AS(make_model_view(s, Colormap::viridis, &cancel), Cancelled);
  model::AttentionStack bad = s;
  bad.attentions.pop_back();
  CHECK_THROWS_AS(make_model_view(bad, Colormap::viridis), InputError);
}

TEST_CASE("compute worker: a checkpoint's result carries the model view of every layer, remade for another colormap") {
  const std::string name = "llama_gqa_bf16_sharded";
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  // The second delivery waits for presented() (up to a minute here), so the first can be looked at.
  ComputeWorker worker([] {}, std::chrono::milliseconds(60000));
  Scene scene;
  const uint64_t generation = worker.submit(scene, ModelSource{m, ids_input(ids), 0});
  const std::optional<ComputeResult> heatmaps = first_delivery(worker);
  REQUIRE_MESSAGE(heatmaps->pictures, heatmaps->error);
  CHECK(heatmaps->model_run);
  CHECK(!heatmaps->model_view);  // the Heads view does not wait for the model view
  worker.presented(generation);
  worker.wait_until_idle();
  std::optional<ComputeResult> first = worker.take_result();
  REQUIRE(first.has_value());
  REQUIRE_MESSAGE(first->model_view, first->model_view_error);
  CHECK(first->model_view->stack == first->model_run->stack);
  const ModelViewPictures& mv = *first->model_view;
  CHECK(mv.layers == m->config.layers);
  CHECK(mv.heads == m->config.heads);
  CHECK(mv.kv_heads == m->config.kv_heads);
  CHECK(mv.tokens == int(ids.size()));
  // The same numbers as the stack the result's layer run holds.
  REQUIRE(first->model_run);
  const model::AttentionStack& stack = *first->model_run->stack;
  const ModelHeadNumbers direct = model_head_numbers(stack.attention(1, 2));
  CHECK(mv.at(1, 2).mean_distance == direct.mean_distance);
  CHECK(mv.at(1, 2).attention_sink == direct.attention_sink);

  // Another colormap: the same forward pass, a new atlas; the scene without a checkpoint: none.
  scene.view.colormap = "magma";
  worker.submit(scene, ModelSource{m, ids_input(ids), 0});
  worker.wait_until_idle();
  std::optional<ComputeResult> second = worker.take_result();
  REQUIRE(second.has_value());
  REQUIRE(second->model_view);
  CHECK(second->model_run == first->model_run);
  CHECK(second->model_view->colormap == Colormap::magma);
  CHECK(second->model_view->atlas.pixels != mv.atlas.pixels);
  // A token set: the same pass, the model view made again with its strips.
  scene.view.token_set = TokenSet{TokenSetAxis::keys, {0, 2}, SetReduce::sum};
  worker.submit(scene, ModelSource{m, ids_input(ids), 0});
  worker.wait_until_idle();
  std::optional<ComputeResult> with_set = worker.take_result();
  REQUIRE(with_set.has_value());
  REQUIRE(with_set->model_view);
  CHECK(with_set->model_run == first->model_run);
  CHECK(with_set->model_view->token_set == scene.view.token_set);
  CHECK(with_set->model_view->strips.height == mv.layers * mv.tile);
  scene.view.token_set = TokenSet{};
  worker.submit(scene);
  worker.wait_until_idle();
  std::optional<ComputeResult> seeded = worker.take_result();
  REQUIRE(seeded.has_value());
  CHECK(!seeded->model_view);
}

TEST_CASE("compute worker: a checkpoint's result carries head_pattern_scores of its stack, made once per pass") {
  const std::string name = "llama_gqa_bf16_sharded";
  const auto m = model::open(model_fixture(name));
  // 8 random ids of the model's vocabulary twice: the induction scores are measured too.
  const std::vector<int32_t> ids = repeated_random_ids(8, m->config.vocab, 7);
  ComputeWorker worker([] {}, std::chrono::milliseconds(60000));
  Scene scene;
  const uint64_t generation = worker.submit(scene, ModelSource{m, ids_input(ids), 1});
  // The first delivery (the heatmaps) already has them: lesson 6's table does not wait for statistics.
  const std::optional<ComputeResult> heatmaps = first_delivery(worker);
  REQUIRE_MESSAGE(heatmaps->model_run, heatmaps->error);
  REQUIRE_MESSAGE(heatmaps->head_patterns, heatmaps->head_patterns_error);
  CHECK(heatmaps->head_patterns_error.empty());
  const HeadPatternScores want = head_pattern_scores(*heatmaps->model_run->stack);
  const HeadPatternScores& got = *heatmaps->head_patterns;
  CHECK(got.layers == want.layers);
  CHECK(got.heads == want.heads);
  CHECK(got.sink == want.sink);
  CHECK(got.previous == want.previous);
  CHECK(got.induction == want.induction);
  REQUIRE(got.repeat.has_value());
  CHECK(got.repeat->start == want.repeat->start);
  CHECK(got.repeat->period == 8);
  CHECK(got.induction.size() == size_t(m->config.layers * m->config.heads));
  // The second delivery and a view-only change (another colormap) reuse the same scores, not new ones.
  worker.presented(generation);
  worker.wait_until_idle();
  std::optional<ComputeResult> second = worker.take_result();
  REQUIRE(second.has_value());
  CHECK(second->head_patterns == heatmaps->head_patterns);
  scene.view.colormap = "magma";
  worker.submit(scene, ModelSource{m, ids_input(ids), 1});
  worker.wait_until_idle();
  std::optional<ComputeResult> recoloured = worker.take_result();
  REQUIRE(recoloured.has_value());
  CHECK(recoloured->model_run == heatmaps->model_run);
  CHECK(recoloured->head_patterns == heatmaps->head_patterns);
  // Another input is another pass: new scores, of its own stack (no repeat: no induction scores).
  const std::vector<int32_t> plain{3, 9, 14, 27, 5, 40};
  worker.submit(scene, ModelSource{m, ids_input(plain), 1});
  worker.wait_until_idle();
  std::optional<ComputeResult> other = worker.take_result();
  REQUIRE(other.has_value());
  REQUIRE(other->head_patterns);
  CHECK(other->head_patterns->sink == head_pattern_scores(*other->model_run->stack).sink);
  CHECK(other->head_patterns->induction.empty());
  // One token: no query after the first. The run is there, the scores are not, and the message says why.
  worker.submit(scene, ModelSource{m, "ids: 5", 0});
  worker.wait_until_idle();
  std::optional<ComputeResult> one = worker.take_result();
  REQUIRE(one.has_value());
  CHECK(one->model_run);
  CHECK(!one->head_patterns);
  CHECK(one->head_patterns_error.find("at least 2 tokens") != std::string::npos);
  // The seeded layer (no checkpoint): none.
  worker.submit(scene);
  worker.wait_until_idle();
  std::optional<ComputeResult> seeded = worker.take_result();
  REQUIRE(seeded.has_value());
  CHECK(!seeded->head_patterns);
  CHECK(seeded->head_patterns_error.empty());
}

TEST_CASE("one attention sink: the Head analysis column, the Model view tooltip and lesson 6's score are one number") {
  // Every head of every layer of two real fixtures, as the window gets them from the worker: the Head
  // analysis window's column (the layer's HeadStats), the Model view's tooltip (ModelViewPictures) and
  // lesson 6's table (HeadPatternScores).
  for (const std::string name : {"gpt2_prefix_f32", "qwen2_gqa"}) {
    CAPTURE(name);
    const auto m = model::open(model_fixture(name));
    const std::string input = ids_input(fixture_ids(name));
    ComputeWorker worker([] {});
    for (int layer = 0; layer < m->config.layers; ++layer) {
      CAPTURE(layer);
      worker.submit(Scene{}, ModelSource{m, input, layer});
      worker.wait_until_idle();
      std::optional<ComputeResult> r = worker.take_result();
      REQUIRE(r.has_value());
      REQUIRE_MESSAGE(r->stats, r->stats_error);
      REQUIRE_MESSAGE(r->model_view, r->model_view_error);
      REQUIRE_MESSAGE(r->head_patterns, r->head_patterns_error);
      const model::AttentionStack& stack = *r->model_run->stack;
      REQUIRE(stack.tokens >= 2);
      REQUIRE(int(r->stats->attention_sink.size()) == m->config.heads);
      for (int h = 0; h < m->config.heads; ++h) {
        CAPTURE(h);
        const double column = r->stats->attention_sink[size_t(h)];
        const double tooltip = r->model_view->at(layer, h).attention_sink;
        const float lesson = r->head_patterns->at(HeadPattern::sink, layer, h);
        CHECK(tooltip == column);
        CHECK(lesson == float(column));
        // …and that number is the mean over the queries after the first of P[i, 0].
        double sum = 0;
        for (int i = 1; i < stack.tokens; ++i) sum += stack.attention(layer, h)(i, 0);
        CHECK(column == doctest::Approx(sum / (stack.tokens - 1)).epsilon(1e-12));
        CHECK(column >= 0.0);
        CHECK(column <= 1.0);
      }
    }
  }
}

TEST_CASE("compute worker: a Qwen3-Next checkpoint's model view draws its Gated DeltaNet layers signed, and lesson 6's "
          "scores leave them out") {
  const std::string name = "qwen3_next_f32";  // layers 0–2 Gated DeltaNet, layer 3 attention
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = repeated_random_ids(6, m->config.vocab, 3);
  ComputeWorker worker([] {}, std::chrono::milliseconds(0));
  Scene scene;
  worker.submit(scene, ModelSource{m, ids_input(ids), 0});
  worker.wait_until_idle();
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  REQUIRE_MESSAGE(r->model_view, r->model_view_error);
  REQUIRE(r->model_run);
  // the Heads view's layer 0: signed matrices on the diverging colormap
  REQUIRE(r->analysis);
  CHECK(r->analysis->attention->linear);
  REQUIRE(r->pictures);
  CHECK(r->pictures->colormap == Colormap::diverging);
  CHECK(r->pictures->heads_range.lo == -r->pictures->heads_range.hi);
  const ModelViewPictures& mv = *r->model_view;
  const model::AttentionStack& stack = *r->model_run->stack;
  CHECK(mv.layers == m->config.layers);
  CHECK(mv.heads == m->config.linear.value_heads);
  CHECK(mv.signed_word == "Gated DeltaNet weight");
  CHECK(mv.signed_range.lo == -mv.signed_range.hi);
  CHECK(mv.signed_range.hi > 0);
  CHECK(mv.has_softmax_layers());
  for (int l = 0; l < mv.layers; ++l) {
    CAPTURE(l);
    CHECK(mv.linear_layer(l) == m->config.is_linear_layer(l));
    CHECK(mv.layer_heads[size_t(l)] == (m->config.is_linear_layer(l) ? m->config.linear.value_heads : m->config.heads));
    // a linear head has no probability numbers; an attention head has them
    CHECK(std::isnan(mv.at(l, 1).entropy) == m->config.is_linear_layer(l));
    if (!m->config.is_linear_layer(l)) CHECK(mv.at(l, 1).mean_distance == model_head_numbers(stack.attention(l, 1)).mean_distance);
  }
  // Lesson 6's table: the attention layer's heads only.
  REQUIRE(r->head_patterns);
  const HeadPatternScores& scores = *r->head_patterns;
  REQUIRE(scores.skipped_layers.size() == size_t(m->config.layers));
  for (int l = 0; l < m->config.layers; ++l) CHECK(scores.skipped_layers[size_t(l)] == m->config.is_linear_layer(l));
  for (HeadPattern p : {HeadPattern::sink, HeadPattern::previous, HeadPattern::induction}) {
    const std::vector<TopHead> top = top_heads(scores, p, 100);
    CHECK(int(top.size()) == m->config.heads);  // layer 3's heads, and no other
    for (const TopHead& t : top) CHECK(t.layer == 3);
  }
}
