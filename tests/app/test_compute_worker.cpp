// test_compute_worker.cpp — the window's compute worker (app/gui/compute_worker.h) without a window:
// heatmaps first, head statistics in a second delivery, the newest scene winning, view-only changes
// reusing the analysis.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>

#include "attnscope/analysis/analysis.h"
#include "core/compute_worker.h"
#include "analysis_helpers.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;
using namespace std::chrono_literals;

namespace {

Scene gqa_scene() {
  Scene s;
  s.model.d_model = 64;
  s.model.heads = 8;
  s.model.kind = AttentionKind::gqa;
  s.model.groups = 2;
  s.input.text = "The cat sat on the mat because it was tired.";
  return s;
}

// The newest result, waiting up to 60 s for one.
ComputeResult next_result(ComputeWorker& worker) {
  REQUIRE(worker.wait_for_result(60s));
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  return std::move(*r);
}

void check_same_stats(const HeadStats& a, const HeadStats& b) {
  CHECK(a.entropy == b.entropy);
  CHECK(a.mean_distance == b.mean_distance);
  CHECK(a.attention_sink == b.attention_sink);
  CHECK(a.js_divergence == b.js_divergence);
  CHECK(a.drift_from_mha == b.drift_from_mha);
}

}  // namespace

TEST_CASE("compute worker: heatmaps first, then the head statistics of the same generation") {
  std::atomic<int> deliveries{0};
  // The statistics wait for presented() (no time limit that a slow machine could reach).
  ComputeWorker worker([&] { ++deliveries; }, 3600s);
  const Scene scene = gqa_scene();
  const uint64_t generation = worker.submit(scene);

  const ComputeResult first = next_result(worker);
  CHECK(first.generation == generation);
  REQUIRE(first.error.empty());
  REQUIRE(first.analysis);
  REQUIRE(first.pictures);
  CHECK(first.pictures->heads.size() == 8);
  CHECK(first.stats == nullptr);                          // not yet
  CHECK_FALSE(worker.busy());  // the heatmaps are done: no spinner for the statistics
  CHECK_FALSE(worker.idle());  // but the worker is not finished

  worker.presented(generation);  // the UI has drawn the heatmaps: the statistics may start
  worker.wait_until_idle();
  const ComputeResult second = next_result(worker);
  CHECK(second.generation == generation);
  CHECK(second.analysis == first.analysis);
  CHECK(second.pictures == first.pictures);
  REQUIRE(second.stats != nullptr);
  CHECK(second.stats_error.empty());
  CHECK(deliveries == 2);
  check_same_stats(*second.stats, stats_of(analyse(scene)));
  REQUIRE(second.stats->drift_from_mha.size() == 8);  // pooled from the MHA base: drift is there
}

TEST_CASE("compute worker: a newer scene goes before the statistics of an older one") {
  std::atomic<int> deliveries{0};
  ComputeWorker worker([&] { ++deliveries; }, 3600s);
  Scene scene = gqa_scene();
  worker.submit(scene);
  const ComputeResult a = next_result(worker);
  CHECK(a.stats == nullptr);

  scene.model.seed += 1;  // new numbers: the old statistics are of no use now
  const uint64_t b_generation = worker.submit(scene);
  const ComputeResult b = next_result(worker);
  CHECK(b.generation == b_generation);
  CHECK(b.analysis != a.analysis);
  worker.wait_until_idle();  // a blocked UI draws nothing: the statistics of b start at once
  const ComputeResult b_stats = next_result(worker);
  CHECK(b_stats.generation == b_generation);
  REQUIRE(b_stats.stats != nullptr);
  check_same_stats(*b_stats.stats, stats_of(analyse(scene)));
  CHECK(deliveries == 3);  // a's heatmaps, b's heatmaps, b's statistics; never a's statistics
}

TEST_CASE("compute worker: a view-only change reuses the analysis and its statistics") {
  std::atomic<int> deliveries{0};
  ComputeWorker worker([&] { ++deliveries; }, 3600s);
  Scene scene = gqa_scene();
  worker.submit(scene);
  worker.wait_until_idle();
  const ComputeResult full = next_result(worker);
  REQUIRE(full.stats != nullptr);

  scene.view.colormap = "magma";
  scene.view.show_scores = true;
  worker.submit(scene);
  worker.wait_until_idle();
  const ComputeResult recoloured = next_result(worker);
  CHECK(recoloured.analysis == full.analysis);  // not recomputed
  CHECK(recoloured.stats == full.stats);        // delivered with the heatmaps, in one go
  CHECK(recoloured.pictures != full.pictures);
  CHECK(recoloured.pictures->colormap == Colormap::magma);
  CHECK(recoloured.pictures->scores);
  CHECK(deliveries == 3);
}

TEST_CASE("compute worker: refused settings give an error and no statistics") {
  std::atomic<int> deliveries{0};
  ComputeWorker worker([&] { ++deliveries; }, 3600s);
  Scene scene = gqa_scene();
  scene.model.groups = 3;  // 8 heads do not split into 3 groups
  worker.submit(scene);
  worker.wait_until_idle();
  const ComputeResult r = next_result(worker);
  CHECK_FALSE(r.error.empty());
  CHECK(r.error.find("groups") != std::string::npos);
  CHECK(r.analysis == nullptr);
  CHECK(r.stats == nullptr);
  CHECK(deliveries == 1);
  CHECK(worker.idle());
}
