// test_long_worker.cpp — the window's worker on a long input (issue 38 item 6; core/long_heads.h): past the stack's
// limit it runs the forward pass on demand and delivers the layer's heads pooled as `export --long` pools and colours
// them; the layer, the pooling, the pixels and the zoom rerun no forward pass; the zoom's cells are the engine's exact
// map; an input whose stack fits keeps the stack's path. The cache of pooled heads: after the prefetch a layer change
// and max|mean make no map (long_maps_made) and equal pool_head bit for bit; the cache stays under its ceiling, the
// least recently used evicted; pumped, the prefetch makes one head a slice and a new request goes first.
#include <doctest/doctest.h>

#include "attnscope/core/limits.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/pooled_figure.h"
#include "attnscope/model/forward.h"
#include "core/compute_worker.h"
#include "model/checkpoint_fixtures.h"
#include "worker_results.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;

namespace {

// The Input window's text of long_fixture_ids(T).
std::string long_input(int T) {
  std::string input = "ids:";
  for (int32_t id : long_fixture_ids(T)) input += " " + std::to_string(id);
  return input;
}

// gpt-oss's fixture on an input past the stack's limit (long_fixture_ids(T)) and the forward pass the worker runs on
// it, keeping q and k for each head's map on demand: what the worker's pooled heads are checked against.
struct LongRun {
  std::shared_ptr<const model::Model> m;
  int T = 0;
  model::ForwardResult f;
};

LongRun long_run() {
  LongRun run;
  run.m = model::open(model_fixture("gpt_oss_dequantized_bf16"));
  run.T = limits::max_tokens + 20;
  REQUIRE_FALSE(model::stack_fits(run.m->config, run.T));
  model::ForwardOptions o;
  o.keep = model::AttentionKeep::on_demand;
  run.f = model::forward(*run.m, long_fixture_ids(run.T), o);
  return run;
}

// How many of the worker's colours `a` differ from the export's `b` (pooled_figure's panel); -1: not as many.
int differing_pixels(const Picture& a, const std::vector<Rgba>& b) {
  if (a.pixels.size() != b.size()) return -1;
  int n = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const Rgba x = a.pixels[i], y = b[i];
    n += x.r != y.r || x.g != y.g || x.b != y.b || x.a != y.a;
  }
  return n;
}

}  // namespace

TEST_CASE("long worker: past the stack's limit, the layer's heads pooled as the export pools and colours them") {
  const LongRun run = long_run();
  const auto& m = run.m;
  const int T = run.T;
  const model::ForwardResult& f = run.f;

  ComputeWorker worker([] {});
  ModelSource source{m, long_input(T), 1};
  source.pixels = 96;
  const ComputeResult r = settled(worker, source);
  REQUIRE_MESSAGE(r.long_heads, r.error);
  CHECK(r.error.empty());
  CHECK_FALSE(r.analysis);  // no stack, no layer analysis
  const LongHeads& l = *r.long_heads;
  CHECK(l.tokens == T);
  CHECK(l.layer == 1);
  CHECK(l.kept_bytes == f.head_maps->kept_bytes());
  REQUIRE(int(l.heads.size()) == m->config.heads);
  for (int h = 0; h < m->config.heads; ++h) {
    CAPTURE(h);
    const model::PooledMap p = model::pool_head(*f.head_maps, 1, h, model::Pooling::max, 96);
    CHECK(l.heads[size_t(h)].block == p.block);
    CHECK(l.heads[size_t(h)].values == p.values);
    CHECK(l.heads[size_t(h)].masked == p.masked);
    const FigureSpec fig = pooled_figure(PooledFigureInput{&p, 1, h, m->name}, long_export_request(Colormap::viridis));
    CHECK(differing_pixels(l.pictures[size_t(h)], panel_colors(fig, 0)) == 0);
  }
  CHECK(r.head_patterns_error.find(std::to_string(limits::max_tokens)) != std::string::npos);  // says why
  const int forwards = worker.forward_passes();
  CHECK(forwards == 1);

  // Another layer, the mean, other pixels, a zoom: no forward pass again.
  source.layer = 0;
  source.pooling = model::Pooling::mean;
  source.pixels = 64;
  source.long_zoom = long_zoom_around(T, 2, T - 10, T - 30);
  const ComputeResult z = settled(worker, source);
  REQUIRE_MESSAGE(z.long_heads, z.error);
  CHECK(worker.forward_passes() == forwards);
  CHECK(z.long_heads->layer == 0);
  const model::PooledMap mean = model::pool_head(*f.head_maps, 0, 3, model::Pooling::mean, 64);
  CHECK(z.long_heads->heads[3].values == mean.values);
  REQUIRE(z.long_heads->zoom.has_value());
  const LongZoom zoom = *z.long_heads->zoom;
  CHECK(zoom.size == long_zoom_cells);
  CHECK(zoom.row0 + zoom.size == T);  // moved inside the map
  const Mat exact = f.head_maps->head(0, 2);
  CHECK(z.long_heads->zoom_values == exact.block(zoom.row0, zoom.col0, zoom.size, zoom.size));

  // A zoom outside the input (of a longer one) is dropped, not an error.
  source.long_zoom = LongZoom{2, T, 0, long_zoom_cells};
  const ComputeResult dropped = settled(worker, source);
  REQUIRE(dropped.long_heads);
  CHECK(dropped.error.empty());
  CHECK_FALSE(dropped.long_heads->zoom.has_value());

  // An input whose stack fits: the stack's path (an analysis, no pooled heads).
  const ComputeResult short_input = settled(worker, ModelSource{m, long_input(40), 1});
  CHECK(short_input.analysis);
  CHECK_FALSE(short_input.long_heads);
}

TEST_CASE("long worker: past the on-demand limit, the engine's message") {
  const auto m = model::open(model_fixture("gpt_oss_dequantized_bf16"));
  ComputeWorker worker([] {});
  const ComputeResult r = settled(worker, ModelSource{m, long_input(model::max_on_demand_tokens + 1), 0});
  CHECK_FALSE(r.long_heads);
  CHECK(r.error.find(std::to_string(model::max_on_demand_tokens)) != std::string::npos);
}

TEST_CASE("long worker: the prefetch caches every head; a layer change and max|mean then make no map, bit for bit") {
  const LongRun run = long_run();
  const auto& m = run.m;
  const int T = run.T;
  const model::ForwardResult& f = run.f;
  const int L = m->config.layers, H = m->config.heads;

  ComputeWorker worker([] {});
  ModelSource source{m, long_input(T), 1};
  source.pixels = 96;
  source.thumb_pixels = 32;
  worker.submit(Scene{}, source);
  worker.wait_until_prefetched();
  CHECK_FALSE(worker.prefetching());
  // Every head's map made once: the layer on screen by the request, the others by the prefetch.
  CHECK(worker.long_maps_made() == int64_t(L) * H);
  std::optional<ComputeResult> first = worker.take_result();
  REQUIRE(first.has_value());
  REQUIRE(first->long_overview);
  const LongOverview& ov = *first->long_overview;
  CHECK(ov.heads_cached == L * H);
  CHECK(ov.layers_cached == L);
  CHECK_FALSE(ov.cache_full);
  CHECK(ov.cache_bytes <= ov.cache_ceiling);
  // The thumbnails: each head pooled to 32 blocks a side as pool_head pools it, coloured as the export colours it.
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h) {
      CAPTURE(l);
      CAPTURE(h);
      const model::PooledMap* t = ov.at(l, h);
      REQUIRE(t);
      const model::PooledMap p = model::pool_head(*f.head_maps, l, h, model::Pooling::max, 32);
      CHECK(t->values == p.values);
      CHECK(t->masked == p.masked);
      const FigureSpec fig = pooled_figure(PooledFigureInput{&p, l, h, m->name}, long_export_request(Colormap::viridis));
      CHECK(differing_pixels(*ov.pictures[size_t(l) * size_t(H) + size_t(h)], panel_colors(fig, 0)) == 0);
    }

  // A layer change, then mean, then max again: every picture from the cache, no map made; equal to pool_head's,
  // coloured as the export colours them.
  const int64_t made = worker.long_maps_made();
  for (const model::Pooling pooling : {model::Pooling::max, model::Pooling::mean, model::Pooling::max}) {
    CAPTURE(int(pooling));
    source.layer = 0;
    source.pooling = pooling;
    const ComputeResult r = settled(worker, source);
    REQUIRE_MESSAGE(r.long_heads, r.error);
    CHECK(worker.long_maps_made() == made);
    CHECK(worker.forward_passes() == 1);
    for (int h = 0; h < H; ++h) {
      CAPTURE(h);
      const model::PooledMap p = model::pool_head(*f.head_maps, 0, h, pooling, 96);
      CHECK(r.long_heads->heads[size_t(h)].values == p.values);
      CHECK(r.long_heads->heads[size_t(h)].masked == p.masked);
      CHECK(r.long_heads->heads[size_t(h)].pooling == pooling);
      const FigureSpec fig = pooled_figure(PooledFigureInput{&p, 0, h, m->name}, long_export_request(Colormap::viridis));
      CHECK(differing_pixels(r.long_heads->pictures[size_t(h)], panel_colors(fig, 0)) == 0);
    }
    REQUIRE(r.long_overview);
    CHECK(r.long_overview->pooling == pooling);
    const model::PooledMap t = model::pool_head(*f.head_maps, 1, 2, pooling, 32);
    REQUIRE(r.long_overview->at(1, 2));
    CHECK(r.long_overview->at(1, 2)->values == t.values);
  }
  // Pixels the cache has not: the layer's maps made again (and nothing else).
  source.pixels = 64;
  const ComputeResult other = settled(worker, source);
  REQUIRE(other.long_heads);
  CHECK(worker.long_maps_made() == made + H);
}

TEST_CASE("long worker: the cache of pooled heads stays under its ceiling, least recently used evicted first") {
  const LongRun run = long_run();
  const int T = run.T;
  const model::HeadMaps& maps = *run.f.head_maps;
  LongHeadCache probe;
  probe.set_sizes({64});
  const int64_t per_head = probe.head_bytes(T);
  {  // head_bytes is what a head takes
    probe.make(maps, 0, 0, model::Pooling::max, 64);
    CHECK(probe.bytes() == per_head);
    CHECK(probe.entries() == 2);  // max and mean
    CHECK(probe.peek(0, 0, model::Pooling::mean, 64)->values == model::pool_head(maps, 0, 0, model::Pooling::mean, 64).values);
  }
  LongHeadCache cache(per_head * 3 + per_head / 2);  // three heads and a half
  cache.set_sizes({64});
  cache.make(maps, 0, 0, model::Pooling::max, 64);
  cache.make(maps, 0, 1, model::Pooling::max, 64);
  cache.make(maps, 0, 2, model::Pooling::max, 64);
  CHECK(cache.bytes() == 3 * per_head);
  CHECK(cache.evicted() == 0);
  CHECK(cache.find(0, 0, model::Pooling::max, 64));  // used: now head 1 is the least recently used
  CHECK(cache.find(0, 0, model::Pooling::mean, 64));
  cache.make(maps, 0, 3, model::Pooling::max, 64);
  CHECK(cache.bytes() <= cache.ceiling());
  CHECK(cache.evicted() == 1);  // half a head over: one pooled map (head 1's mean, the least recently used)
  CHECK_FALSE(cache.has(0, 1));
  CHECK(cache.find(0, 1, model::Pooling::max, 64));
  CHECK(cache.has(0, 3));
  CHECK(cache.find(0, 0, model::Pooling::max, 64));
  CHECK(cache.maps_made() == 4);
  // get() of an evicted head makes its map again.
  CHECK(cache.get(maps, 0, 1, model::Pooling::mean, 64)->values == model::pool_head(maps, 0, 1, model::Pooling::mean, 64).values);
  CHECK(cache.maps_made() == 5);
  CHECK(cache.bytes() <= cache.ceiling());
}

TEST_CASE("long worker: pumped, the prefetch makes one head a slice and a new request goes before it") {
  const auto m = model::open(model_fixture("gpt_oss_dequantized_bf16"));
  const int T = limits::max_tokens + 20;
  const int L = m->config.layers, H = m->config.heads;
  REQUIRE(L >= 2);
  ComputeWorker worker([] {}, std::chrono::milliseconds(100), false);
  ModelSource source{m, long_input(T), 0};
  source.pixels = 64;
  worker.submit(Scene{}, source);
  worker.wait_until_idle();  // the request alone: the layer's heads
  CHECK(worker.long_maps_made() == H);
  CHECK(worker.prefetching());
  REQUIRE(worker.take_result());
  pump_workers(std::chrono::milliseconds(0));  // one slice: one head of the next layer
  CHECK(worker.long_maps_made() == H + 1);
  // A request for a layer not cached: served before the prefetch's next head (its heads made, and the one the
  // prefetch made not again).
  source.layer = 1;
  worker.submit(Scene{}, source);
  worker.wait_until_idle();
  CHECK(worker.long_maps_made() == 2 * H);
  std::optional<ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  REQUIRE(r->long_heads);
  CHECK(r->long_heads->layer == 1);
  worker.wait_until_prefetched();
  CHECK(worker.long_maps_made() == int64_t(L) * H);
}
